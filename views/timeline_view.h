#pragma once
// The request timeline: one row per request, time across, a colour per phase. A model
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

    void setRows(std::shared_ptr<const std::vector<lod::Row>> rows);
    const std::vector<lod::Row>* rows() const { return rows_.get(); }
    // Pixels per row (vertical zoom); below 1 several requests share a pixel line.
    void setRowHeight(double px);
    double rowHeight() const { return row_h_; }

    // Paints rows [first pixel line = `scroll_px`] into `area` of `p` for the range's window.
    void render(QPainter& p, const QRect& area, double scroll_px) const;
    // The request under a viewport point, -1 if none; `what` describes it (tooltip text).
    int requestAt(const QPoint& pos, QString* what = nullptr) const;

    static QColor colorOf(lod::SpanKind k);
    // Left gutter (request ids) and header (legend and time ruler) in pixels: the chart
    // under the timeline uses the same left margin so that both share one time axis.
    static constexpr int kGutter = 72;
    static constexpr int kHeader = 36;
    // Rectangles filled by the last render() (level-of-detail benchmark figure).
    long lastDrawCount() const { return draws_; }

Q_SIGNALS:
    void requestClicked(int id);

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
    void renderDense(QPainter& p, const QRect& plot, const lod::TimeAxis& axis, long first,
                     long last, double scroll_px) const;

    TimeRange* range_;
    std::shared_ptr<const std::vector<lod::Row>> rows_;
    double row_h_ = 8.0;
    QPoint press_;
    bool dragging_ = false, moved_ = false;
    mutable long draws_ = 0;
    mutable std::vector<lod::Draw> scratch_;
    mutable std::vector<int> diff_; // renderDense: per phase, +1/-1 at span ends per column
};

} // namespace kairos::views
