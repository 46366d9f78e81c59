#pragma once
// The one zoom/pan state every time-based view listens to (hotspot's shared filter): the
// visible time window inside the run's extent. Views map it to their own pixel widths
// with lod::TimeAxis.
#include <QObject>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

class QKeyEvent;

namespace kairos::views {

class TimeRange : public QObject {
    Q_OBJECT
public:
    explicit TimeRange(QObject* parent = nullptr) : QObject(parent) {}
    double from() const { return from_; }
    double to() const { return to_; }
    double extentFrom() const { return lo_; }
    double extentTo() const { return hi_; }

    // A new run: its extent, and show all of it.
    void setExtent(double lo, double hi);
    // The visible window, clamped to the extent (a span of at least 1 µs).
    void setRange(double from, double to);
    // Zoom by `factor` (> 1 in) around time `anchor`; pan by `dt` seconds.
    void zoom(double anchor, double factor);
    void pan(double dt);
    void reset() { setRange(lo_, hi_); }

    // A selected stretch of time (a drag on the timeline's ruler), inside the extent; every
    // time track shades it and the window summarises it. None until one is made.
    bool hasSelection() const { return !std::isnan(sel_from_); }
    double selectionFrom() const { return sel_from_; }
    double selectionTo() const { return sel_to_; }
    // [a, b] in either order, clamped to the extent; an empty one clears.
    void select(double a, double b);
    void clearSelection();

    // What M zooms to when no stretch is selected (the selected request's life, set by
    // the window); an empty one (from >= to) clears it.
    void setFocusSpan(double from, double to);
    // Zoom to the selected stretch (else the focus span), a twentieth of its length spare
    // either side, remembering the view it left; back to that view. False when there is
    // nothing to zoom to, or to go back to.
    bool zoomToSelection();
    bool zoomBack();
    // A re-run of the same workload ends elsewhere: the extent becomes [lo, hi], the view
    // following it when it showed the whole run, else staying (clamped); the selected
    // stretch and the zoom history are kept. (setExtent is for another workload.)
    void followExtent(double lo, double hi);
    // The window followExtent(lo, hi) leads to from this one (`from`, `to` in the extent
    // [`old_lo`, `old_hi`]), or setExtent when `whole`: for a frame built before the run is
    // shown (TimelineView::prebuildFrame).
    static std::pair<double, double> followed(double from, double to, double old_lo, double old_hi,
                                              double lo, double hi, bool whole);
    // Zoom to [a, b] (a twentieth spare either side), remembering the view for zoomBack.
    bool zoomTo(double a, double b);

    // Perfetto's keys over a time track: W zooms in and S out around `anchor` (the time
    // under the mouse, else the window's middle), A and D pan by a tenth of the window,
    // M (and F) zoom to the selection or the selected request, Shift+M back to the view
    // before, Esc clears the selection. True when the key was one of them.
    bool handleKey(const QKeyEvent* e, double anchor);
    static constexpr double kKeyZoom = 1.25; // one W or S press
    static constexpr double kKeyPan = 0.1;   // one A or D press, of the window's width

Q_SIGNALS:
    void changed(double from, double to);
    void selectionChanged();

private:
    double lo_ = 0, hi_ = 1, from_ = 0, to_ = 1;
    double sel_from_ = std::numeric_limits<double>::quiet_NaN();
    double sel_to_ = std::numeric_limits<double>::quiet_NaN();
    double focus_from_ = 0, focus_to_ = 0;
    std::vector<std::pair<double, double>> before_zoom_; // views M left, latest last
};

} // namespace kairos::views
