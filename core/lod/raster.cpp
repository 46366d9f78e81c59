#include "lod/raster.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>

namespace kairos::lod {

namespace {

bool cancelled(const std::atomic<bool>* cancel) {
    return cancel && cancel->load(std::memory_order_relaxed);
}

int lineOf(long i, const RasterView& v) {
    return static_cast<int>(std::floor(double(i) * v.row_h - v.scroll_px));
}

// Rows of a pixel or more: folded spans per lane, kill marks, agent separators.
void rowsMode(const std::vector<Row>& rows, const std::vector<Row>* requests,
              const std::vector<Row>* pinned, const RasterView& v, long first, long last,
              const std::atomic<bool>* cancel, std::vector<Fill>& out) {
    const TimeAxis& axis = v.axis;
    const int width = static_cast<int>(axis.width);
    const double fold_len = kFoldPx * axis.secondsPerPixel();
    // Rows thinner than 4 px get no gap; rows under kLanePx no robot or pinned lane.
    const int bar_h = std::max(1, static_cast<int>(v.row_h >= 4 ? v.row_h - 1 : v.row_h));
    const bool lanes = v.row_h >= kLanePx;
    const bool agents = !rows.empty() && !rows.front().members.empty();
    const bool compare = pinned && !agents && pinned->size() == rows.size();
    std::vector<Draw> draws;
    auto lane = [&](const std::vector<Span>& spans, int y, int h, std::uint8_t alpha,
                    bool robot_colour) {
        if (h <= 0) return;
        draws.clear();
        fold(spans, axis.t0, axis.t1, fold_len, draws);
        for (const Draw& d : draws) {
            const int x0 = std::max(0, static_cast<int>(std::floor(axis.toX(d.t0))));
            const int x1 = std::min(width, static_cast<int>(std::ceil(axis.toX(d.t1))));
            out.push_back({x0, y, std::max(1, x1 - x0), h, Ink::Phase,
                           robot_colour ? SpanKind::Robot : d.kind, alpha});
            // A prefill that found part of its context cached: that fraction of the bar's
            // height, from its bottom, in the cached colour (bars of 3 px or more).
            if (d.kind == SpanKind::Prefill && d.cached > 0 && h >= 3 && !robot_colour) {
                const int hc =
                    std::clamp(static_cast<int>(std::lround(h * double(d.cached))), 1, h - 1);
                out.push_back({x0, y + h - hc, std::max(1, x1 - x0), hc, Ink::Phase,
                               SpanKind::Cached, alpha});
            }
        }
    };
    auto killMark = [&](double t, int y) {
        if (t < axis.t0 || t > axis.t1) return;
        out.push_back(
            {static_cast<int>(axis.toX(t)), y, 2, bar_h, Ink::Kill, SpanKind::Queued, 255});
    };
    for (long i = first; i < last; ++i) {
        if ((i & 255) == 0 && cancelled(cancel)) return;
        const Row& r = rows[static_cast<std::size_t>(i)];
        const int y = lineOf(i, v);
        if (agents && r.lane == 0 && i > first && v.row_h >= 3)
            out.push_back({0, y - 1, width, 1, Ink::Separator, SpanKind::Queued, 255});
        if (r.lastTime() < axis.t0 || r.arrival > axis.t1) continue;
        // Lanes of a row: generation on top, then the robot executing (if any), then the
        // pinned run's generation (compare).
        const bool robot = lanes && !r.robot.empty(), pin = lanes && compare;
        const int h_gen = robot && pin ? bar_h / 2 : (robot || pin ? bar_h * 2 / 3 : bar_h);
        const int h_robot = robot ? (pin ? (bar_h - h_gen) / 2 : bar_h - h_gen) : 0;
        lane(r.spans, y, h_gen, 255, false);
        if (robot) lane(r.robot, y + h_gen, h_robot, 255, true);
        if (pin)
            lane((*pinned)[static_cast<std::size_t>(i)].spans, y + h_gen + h_robot,
                 bar_h - h_gen - h_robot, kPinnedAlpha, false);
        if (!r.members.empty()) {
            for (const Member& m : r.members)
                if (m.killed && requests && std::size_t(m.id) < requests->size())
                    killMark((*requests)[std::size_t(m.id)].end, y);
        } else if (r.killed) {
            killMark(r.end, y);
        }
    }
}

// Several requests per pixel line: each span of a line's rows is an event pair (+1 where
// it starts, -1 where it ends, per phase); sorted by column, one sweep finds between
// events the most telling phase present and its shade, and one rectangle fills each run
// of equal phase and shade. O(e log e) per line for its e events, whatever the width: a
// line of 26 rows has ~200 events where the plot has 1,400 columns x 7 phases (sweeping
// every column of every line took 12 ms of a 20,000-request overview).
void denseMode(const std::vector<Row>& rows, const RasterView& v, long first, long last,
               const std::atomic<bool>* cancel, std::vector<Fill>& out) {
    // Phases by how telling they are when rows of one line disagree (last wins).
    static constexpr SpanKind kOrder[] = {
        SpanKind::Queued, SpanKind::Robot,     SpanKind::Folded,  SpanKind::Transfer,
        SpanKind::Decode, SpanKind::Suspended, SpanKind::Prefill, SpanKind::Preempted};
    constexpr int kPhases = int(std::size(kOrder));
    static const auto kRankOf = [] {
        std::array<int, 9> r{};
        for (int i = 0; i < kPhases; ++i) r[std::size_t(kOrder[i])] = i;
        return r;
    }();
    const TimeAxis& axis = v.axis;
    const int w = static_cast<int>(axis.width);
    if (w <= 0) return;
    struct Event {
        int x, rank, delta;
        bool operator<(const Event& o) const { return x < o.x; }
    };
    std::vector<Event> events;
    std::vector<Draw> draws;
    const double fold_len = axis.secondsPerPixel(); // one pixel: finer cannot show
    int line_y = std::numeric_limits<int>::min();
    int line_rows = 0;
    auto flush = [&] {
        if (events.empty()) return;
        std::sort(events.begin(), events.end());
        int cnt[kPhases] = {};
        int run_start = 0, run_key = -1;
        // The key from column x on (x < w: after the events at x; x = w: nothing).
        auto keyAt = [&](int x) {
            if (x >= w) return -1;
            int top = -1, total = 0;
            for (int k = kPhases - 1; k >= 0; --k) {
                total += cnt[k];
                if (top < 0 && cnt[k] > 0) top = k;
            }
            if (top < 0) return -1;
            const int shade =
                std::clamp((total * kShades + line_rows - 1) / std::max(1, line_rows), 1, kShades);
            return top * (kShades + 1) + shade;
        };
        auto at = [&](int x, int key) {
            if (key == run_key) return;
            if (run_key >= 0)
                out.push_back({run_start, line_y, x - run_start, 1, Ink::Phase,
                               kOrder[run_key / (kShades + 1)],
                               static_cast<std::uint8_t>(255 * (run_key % (kShades + 1) + 1) /
                                                         (kShades + 1))});
            run_start = x;
            run_key = key;
        };
        for (std::size_t i = 0; i < events.size();) {
            const int x = events[i].x;
            for (; i < events.size() && events[i].x == x; ++i)
                cnt[events[i].rank] += events[i].delta;
            at(x, keyAt(x));
        }
        at(w, -1);
        events.clear();
    };
    for (long i = first; i < last; ++i) {
        if ((i & 1023) == 0 && cancelled(cancel)) return;
        const int y = lineOf(i, v);
        if (y != line_y) {
            flush();
            line_y = y;
            line_rows = 0;
        }
        ++line_rows;
        const Row& r = rows[static_cast<std::size_t>(i)];
        if (r.end < axis.t0 || r.arrival > axis.t1) continue;
        draws.clear();
        fold(r.spans, axis.t0, axis.t1, fold_len, draws);
        for (const Draw& d : draws) {
            const int x0 = std::clamp(static_cast<int>(std::floor(axis.toX(d.t0))), 0, w - 1);
            const int x1 = std::clamp(static_cast<int>(std::ceil(axis.toX(d.t1))), x0 + 1, w);
            const int rank = kRankOf[std::size_t(d.kind)];
            events.push_back({x0, rank, +1});
            events.push_back({x1, rank, -1});
        }
    }
    flush();
}

} // namespace

std::pair<long, long> visibleRows(std::size_t n, const RasterView& v) {
    if (!(v.row_h > 0)) return {0, 0};
    const long first = std::max(0L, static_cast<long>(std::floor(v.scroll_px / v.row_h)));
    const long last = std::min(static_cast<long>(n),
                               static_cast<long>(std::ceil((v.scroll_px + v.height) / v.row_h)));
    return {first, std::max(first, last)};
}

std::vector<Fill> rasterize(const std::vector<Row>& rows, const std::vector<Row>* requests,
                            const std::vector<Row>* pinned, const RasterView& v,
                            const std::atomic<bool>* cancel) {
    std::vector<Fill> out;
    if (rows.empty() || v.axis.width < 1 || v.height <= 0 || !(v.axis.t1 > v.axis.t0) ||
        cancelled(cancel))
        return out;
    const auto [first, last] = visibleRows(rows.size(), v);
    if (v.row_h < 1.0)
        denseMode(rows, v, first, last, cancel, out);
    else
        rowsMode(rows, requests, pinned, v, first, last, cancel, out);
    return out;
}

} // namespace kairos::lod
