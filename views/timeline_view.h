#pragma once
// The request timeline: one row per request (or per agent lane, lod::agentRows), time
// across, a colour per phase; with a pinned run, each request's row shows the pinned
// run's phases in a lower lane, faded, for comparison. A model
// plus painting, no item per event (hotspot): the visible rows are cut by index and the
// visible time with two binary searches per row, spans narrower than 3 px fold, and the
// result is a list of rectangles (core lod::rasterize). render() fills them directly
// (images, PDF pages, small views); the window, when many rows are visible, builds its
// frame as an image on a worker thread and meanwhile shows the last frame moved and
// scaled to the new window, so no paint on the GUI thread does the per-row work.
#include "lod/raster.h"
#include "lod/time_axis.h"
#include "lod/timeline.h"
#include "time_range.h"

#include <QAbstractScrollArea>
#include <QImage>
#include <QThreadPool>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace kairos::views {

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit TimelineView(TimeRange* range, QWidget* parent = nullptr);
    ~TimelineView() override;

    // `rows`: one per request, or agent lanes; then `requests` (one row per request, by
    // id) describes the request under the cursor.
    void setRows(std::shared_ptr<const std::vector<lod::Row>> rows,
                 std::shared_ptr<const std::vector<lod::Row>> requests = nullptr);
    const std::vector<lod::Row>* rows() const { return rows_.get(); }
    bool agentLanes() const { return rows_ && !rows_->empty() && !rows_->front().members.empty(); }
    // Compare: the pinned run's rows, one per request (nullptr: none). Shown on request
    // rows of the same workload (same count); not on agent lanes, whose packing differs
    // between runs.
    void setPinnedRows(std::shared_ptr<const std::vector<lod::Row>> pinned);
    bool showsPinned() const;
    // Requests found by the search (by request id; empty: none) get a mark in the gutter;
    // the current one an outline across its row.
    void setMarked(std::shared_ptr<const std::vector<bool>> marked_by_id, int current = -1);
    int currentMark() const { return current_; }
    std::shared_ptr<const std::vector<bool>> marked() const { return marked_; }
    // Scrolls to the row of request `id` (centred) and brings its lifetime into the time
    // window; false when no row shows it.
    bool scrollToRequest(int id);
    // The row showing request `id` (a request row, or the agent lane holding it); -1 if none.
    long rowOf(int id) const;
    // Pixels per row (vertical zoom; from then on kept through resizes, where new rows
    // otherwise fit the view); below 1 several requests share a pixel line, drawn
    // as a density row: the most telling phase, its shade by how many of the line's
    // requests are in the system at that moment.
    void setRowHeight(double px);
    double rowHeight() const { return row_h_; }

    // Paints rows [first pixel line = `scroll_px`] into `area` of `p` for the range's window;
    // `transient`: with the Inspector's instant (an export leaves it out).
    void render(QPainter& p, const QRect& area, double scroll_px, bool transient = true) const;
    // The request under a viewport point, -1 if none; `what` describes it (tooltip text)
    // and `t` receives the time under the point.
    int requestAt(const QPoint& pos, QString* what = nullptr, double* t = nullptr) const;
    // A request's row as text: the phase at time t (if inside), arrival, end, outcome,
    // lengths, preemptions; with `pinned`, the same request in the pinned run.
    static QString describe(const lod::Row& r, double t, const lod::Row* pinned = nullptr);

    static QColor colorOf(lod::SpanKind k);
    // A fleet's replica (its rows' stripe in the gutter).
    static QColor replicaColor(int replica);
    // Left gutter (request ids) and header (legend and time ruler) in pixels: the chart
    // under the timeline uses the same left margin so that both share one time axis.
    static constexpr int kGutter = 72;
    static constexpr int kHeader = 36; // with the legend on one line
    static constexpr int kLegendLine = 16;
    // The header's height at `width` pixels: kHeader, and kLegendLine more for each line the
    // legend flows onto (it wraps, never cutting an entry off at the right edge).
    int headerHeight(int width) const;
    // The legend's entries, in order: the phases this run shows (a run without preemptions
    // has no "preempted"), the cached part, folded draws, killed, the pinned lane.
    QStringList legendEntries() const;
    // Rectangles filled by the last render() or frame (level-of-detail benchmark figure).
    long lastDrawCount() const { return draws_; }

    // Frames built off the GUI thread: when more than this many rows are visible (the
    // density overview of a large trace), paintEvent shows the last frame, moved to the
    // current window, while a worker builds the new one. 0: always; a huge value: never.
    void setAsyncRows(long rows) { async_rows_ = rows; }
    // True when the frame on screen is the current window's (no build pending).
    bool frameReady() const;
    // Builds the current window's frame now, on this thread (before a grab or screenshot).
    void finishFrame();
    // Frames finished by a worker so far (tests and the benchmark).
    long framesBuilt() const { return frames_built_; }
    // One frame as the worker builds it: the rectangles painted into a transparent image of
    // `size` logical pixels at `dpr`. Thread-safe; used by the benchmark too.
    static QImage buildFrame(const std::vector<lod::Row>& rows,
                             const std::vector<lod::Row>* requests,
                             const std::vector<lod::Row>* pinned, const lod::RasterView& v,
                             QSize size, double dpr, QColor text, QColor mid,
                             const std::atomic<bool>* cancel = nullptr, long* fills = nullptr);

    // What a frame depends on: the window, the rows shown, the colours and the pixel ratio.
    struct FrameKey {
        lod::RasterView v;
        const void *rows = nullptr, *requests = nullptr, *pinned = nullptr;
        QRgb text = 0, mid = 0;
        double dpr = 1;
        QSize size;
        bool operator==(const FrameKey& o) const;
    };
    // A frame built before its rows reach the view: the simulation's worker builds the next
    // run's overview beside its summary, so that the window shows the new run's picture as
    // it shows the run, not a worker's build later (a slider move on 20,000 overloaded
    // requests waited 13 ms more for it). planFrame() is the view as it is now (GUI
    // thread); prebuildFrame() builds, on any thread, the frame the view will ask for once
    // given `rows` of a run whose time extent is [lo, hi] (the window followed to it as
    // TimeRange::followExtent does; `whole`: as setExtent, another workload), or nothing
    // where the view would paint them on its own thread or the plan cannot tell (lanes,
    // rows fitted anew); offerFrame() takes it when its key is the view's then.
    struct FramePlan {
        bool valid = false;
        FrameKey key;              // as now (its rows: the run shown now)
        bool fit_rows = false;     // rows are fitted to the height: row_h follows their count
        int rows_height = 0;       // the height rows are fitted to
        std::size_t row_count = 0; // rows shown now
        double extent_lo = 0, extent_hi = 0;                 // the time range's extent now
        long async_rows = 0;                                 // setAsyncRows
        std::shared_ptr<const std::vector<lod::Row>> pinned; // the pinned run's rows, if any
    };
    struct PrebuiltFrame {
        FrameKey key;
        QImage image;
        long fills = 0;
    };
    FramePlan planFrame() const;
    static std::optional<PrebuiltFrame>
    prebuildFrame(const FramePlan& plan, const std::shared_ptr<const std::vector<lod::Row>>& rows,
                  double lo, double hi, bool whole, const std::atomic<bool>* cancel = nullptr);
    // True when `f` is the frame the view would ask for now (it is shown from then on).
    bool offerFrame(PrebuiltFrame f);
    // Frames taken from offerFrame (tests and the benchmark).
    long framesOffered() const { return frames_offered_; }

    // The inspector's instant, drawn as a dashed line across the rows (NaN: none).
    void setInspectedTime(double t);
    double inspectedTime() const { return inspected_t_; }
    // A note over the rows, greyed: while they belong to another workload than the one
    // named (a new one simulating), or why nothing could be opened when no run is shown;
    // empty: none. New rows clear it.
    void setStale(const QString& note);
    QString staleNote() const { return stale_; }

    // Where time is drawn, in viewport coordinates: right of the gutter, below the header.
    // Its width does not depend on how many rows there are: the vertical scroll bar is
    // always there (disabled when every row fits), so the time axis never moves when it
    // would appear, and the charts under the timeline line their plots up with it.
    QRect plotRect() const;
    // The time at viewport x (inside the plot or not).
    double timeAtX(double x) const;
    // The viewport x of time t (rounded to the pixel, as spans are drawn).
    int xOfTime(double t) const;

Q_SIGNALS:
    void requestClicked(int id, double t);
    // The plot's place or size changed (a resize): charts sharing its time axis follow.
    void plotGeometryChanged();
    // The time under the mouse while it moves over the rows without a button held.
    void cursorMoved(double t);

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    // Nsight Systems' habit: a double-click on a request zooms to its life (Shift+M back).
    void mouseDoubleClickEvent(QMouseEvent*) override;
    void keyPressEvent(QKeyEvent*) override;
    bool viewportEvent(QEvent*) override;

private:
    // The window's time across the plot's width (plotRect), its x 0 at the plot's left.
    lod::TimeAxis plotAxis() const;
    void updateScrollBar();
    void fitRows();
    // Every one of `rows` rows in `height` pixels (at least 40): whole pixels up to 16 px,
    // below a pixel density rows (fitRows, and prebuildFrame for rows not given yet).
    static double fittedRowHeight(int height, std::size_t rows);
    void paintHeader(QPainter& p, const QRect& area) const;
    // The search's marks and, unless NaN, the Inspector's instant `inspected`.
    void paintMarks(QPainter& p, const QRect& plot, long first, long last, double scroll_px,
                    double inspected) const;
    void paintGutter(QPainter& p, const QRect& rows_area, const QRect& plot, long first, long last,
                     double scroll_px) const;
    // The range selection shaded over the ruler and the rows of `column` (the plot's
    // columns, header included).
    void paintSelection(QPainter& p, const QRect& column) const;
    static void paintFills(QPainter& p, const std::vector<lod::Fill>& fills, QPoint origin,
                           QColor text, QColor mid);
    struct Frame {
        FrameKey key;
        QImage image;
        long fills = 0;
    };
    // The key for the viewport as it is now (plot area and scroll position).
    FrameKey currentKey(QRect* plot = nullptr) const;
    void requestFrame(const FrameKey& key);
    // Cancels the frame being built or queued: a frame of this thread replaces it.
    void dropPendingFrame();
    bool asyncFor(const FrameKey& key) const;

    TimeRange* range_;
    std::shared_ptr<const std::vector<lod::Row>> rows_, requests_, pinned_;
    std::shared_ptr<const std::vector<bool>> marked_;
    int current_ = -1;
    double inspected_t_ = std::numeric_limits<double>::quiet_NaN();
    QString stale_;
    void paintStale(QPainter& p);
    double row_h_ = 8.0;
    bool fit_rows_ = false; // every row fits the view until the user zooms vertically
    QPoint press_;
    bool dragging_ = false, moved_ = false, has_robot_ = false;
    bool ruler_drag_ = false; // a drag on the ruler selects a stretch of time
    double ruler_from_ = 0;
    bool has_cached_ = false; // some prefill found part of its context cached
    bool has_killed_ = false; // some request was killed
    std::uint32_t kinds_ = 0; // bit k: some span of lod::SpanKind k
    enum class Swatch { Phase, CachedPart, Killed, PinnedLane };
    struct LegendEntry {
        QString name;
        Swatch swatch;
        lod::SpanKind kind;
    };
    std::vector<LegendEntry> legend() const;
    static std::vector<QPoint> flowLegend(const std::vector<LegendEntry>& entries, int width,
                                          const QFontMetrics& fm);
    bool has_replicas_ = false; // request rows of a fleet
    mutable long draws_ = 0;
    long async_rows_ = 4000;
    // The worker's frames: the last finished one, and the generation of the one wanted.
    std::optional<Frame> frame_;
    std::optional<FrameKey> wanted_;
    std::uint64_t generation_ = 0;
    std::shared_ptr<std::atomic<bool>> cancel_;
    long frames_built_ = 0, frames_offered_ = 0;
    QThreadPool pool_; // one thread: a newer frame cancels and replaces a queued one
};

} // namespace kairos::views
