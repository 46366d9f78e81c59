#pragma once
// The one zoom/pan state every time-based view listens to (hotspot's shared filter): the
// visible time window inside the run's extent. Views map it to their own pixel widths
// with lod::TimeAxis.
#include <QObject>

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

Q_SIGNALS:
    void changed(double from, double to);

private:
    double lo_ = 0, hi_ = 1, from_ = 0, to_ = 1;
};

} // namespace kairos::views
