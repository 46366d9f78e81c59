#pragma once
// The timeline's rows as pixel rectangles: what TimelineView fills, computed without a
// painter so that it can run on a worker thread (the window paints the last finished
// frame; a vector export fills the same rectangles itself). Rows taller than a pixel get
// their folded spans, lanes (generation, robot, the pinned run) and kill marks; rows
// thinner than a pixel share pixel lines as density rows (the most telling phase present
// at each column, shaded by how many of the line's requests are in the system).
// Coordinates are pixels relative to the plot's top-left corner.
#include "lod/time_axis.h"
#include "lod/timeline.h"

#include <atomic>
#include <cstdint>
#include <vector>

namespace kairos::lod {

enum class Ink : std::uint8_t {
    Phase,     // the colour of `kind`, at `alpha`
    Kill,      // a kill mark (the text colour)
    Separator, // the line above an agent's first lane (the mid colour)
};

struct Fill {
    std::int32_t x = 0, y = 0, w = 0, h = 0;
    Ink ink = Ink::Phase;
    SpanKind kind = SpanKind::Queued;
    std::uint8_t alpha = 255;
    bool operator==(const Fill& o) const {
        return x == o.x && y == o.y && w == o.w && h == o.h && ink == o.ink && kind == o.kind &&
               alpha == o.alpha;
    }
};

struct RasterView {
    TimeAxis axis;          // the visible window over `axis.width` pixel columns
    int height = 0;         // pixel lines of the plot
    double row_h = 8.0;     // pixels per row (below 1: density rows)
    double scroll_px = 0.0; // first pixel line shown, in row pixels from row 0
};

// Rows taller than this (px) get lanes: robot execution and the pinned run under the
// generation lane.
constexpr double kLanePx = 6.0;
// Spans narrower than this (px) fold into one draw (Tracy).
constexpr double kFoldPx = 3.0;
// Alpha of the pinned run's lane.
constexpr std::uint8_t kPinnedAlpha = 110;
// Density rows: shade steps from one request of the line in the system to all of them.
constexpr int kShades = 6;

// The rectangles for `rows` in the window `v`. `requests` (one row per request, by id;
// may be null) gives agent lanes' members their kill times; `pinned` (may be null: no
// comparison; else one row per row of `rows`) fills the lower lane. Returns early with
// what it has when `cancel` (may be null) becomes true. Safe to call from any thread.
std::vector<Fill> rasterize(const std::vector<Row>& rows, const std::vector<Row>* requests,
                            const std::vector<Row>* pinned, const RasterView& v,
                            const std::atomic<bool>* cancel = nullptr);

// Rows [first, last) that meet the window's pixel lines.
std::pair<long, long> visibleRows(std::size_t n, const RasterView& v);

} // namespace kairos::lod
