#pragma once
// The request timeline: one row per request (or per agent lane, lod::agentRows), time
// across, a colour per phase; with a pinned run, each request's row shows the pinned
// run's phases in a lower lane, faded, for comparison. A model
// plus painting, no item per event (hotspot): each paint cuts the visible rows by index
// and the visible time with two binary searches per row, folds spans narrower than 3 px
// (core/lod), and fills rectangles with antialiasing off. The same render() paints the
// screen, images and PDF pages.
#include "lod/time_axis.h"
#include "lod/timeline.h"
#include "time_range.h"

#include <QAbstractScrollArea>
#include <cstdint>
#include <memory>
#include <vector>

namespace kairos::views {

class TimelineView : public QAbstractScrollArea {
    Q_OBJECT
public:
    explicit TimelineView(TimeRange* range, QWidget* parent = nullptr);

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
    // Pixels per row (vertical zoom); below 1 several requests share a pixel line, drawn
    // as a density row: the most telling phase, its shade by how many of the line's
    // requests are in the system at that moment.
    void setRowHeight(double px);
    double rowHeight() const { return row_h_; }

    // Paints rows [first pixel line = `scroll_px`] into `area` of `p` for the range's window.
    void render(QPainter& p, const QRect& area, double scroll_px) const;
    // The request under a viewport point, -1 if none; `what` describes it (tooltip text)
    // and `t` receives the time under the point.
    int requestAt(const QPoint& pos, QString* what = nullptr, double* t = nullptr) const;
    // A request's row as text: the phase at time t (if inside), arrival, end, outcome,
    // lengths, preemptions; with `pinned`, the same request in the pinned run.
    static QString describe(const lod::Row& r, double t, const lod::Row* pinned = nullptr);

    static QColor colorOf(lod::SpanKind k);
    // Left gutter (request ids) and header (legend and time ruler) in pixels: the chart
    // under the timeline uses the same left margin so that both share one time axis.
    static constexpr int kGutter = 72;
    static constexpr int kHeader = 36;
    // Rectangles filled by the last render() (level-of-detail benchmark figure).
    long lastDrawCount() const { return draws_; }

Q_SIGNALS:
    void requestClicked(int id, double t);

protected:
    void paintEvent(QPaintEvent*) override;
    void resizeEvent(QResizeEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void mouseReleaseEvent(QMouseEvent*) override;
    bool viewportEvent(QEvent*) override;

private:
    void updateScrollBar();
    void paintHeader(QPainter& p, const QRect& area) const;
    void paintMarks(QPainter& p, const QRect& plot, long first, long last, double scroll_px) const;
    void renderDense(QPainter& p, const QRect& plot, const lod::TimeAxis& axis, long first,
                     long last, double scroll_px) const;

    TimeRange* range_;
    std::shared_ptr<const std::vector<lod::Row>> rows_, requests_, pinned_;
    std::shared_ptr<const std::vector<bool>> marked_;
    int current_ = -1;
    double row_h_ = 8.0;
    QPoint press_;
    bool dragging_ = false, moved_ = false, has_robot_ = false;
    mutable long draws_ = 0;
    mutable std::vector<lod::Draw> scratch_;
    mutable std::vector<int> diff_; // renderDense: per phase, +1/-1 at span ends per column
};

} // namespace kairos::views
