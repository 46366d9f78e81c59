#include "time_range.h"

#include "lod/time_axis.h"

#include <algorithm>

namespace kairos::views {

void TimeRange::setExtent(double lo, double hi) {
    lo_ = lo;
    hi_ = std::max(hi, lo + 1e-6);
    setRange(lo_, hi_);
}

void TimeRange::setRange(double from, double to) {
    lod::TimeAxis a{from, std::max(to, from + 1e-6), 1.0};
    a.clampTo(lo_, hi_);
    if (a.t0 == from_ && a.t1 == to_) return;
    from_ = a.t0;
    to_ = a.t1;
    Q_EMIT changed(from_, to_);
}

void TimeRange::zoom(double anchor, double factor) {
    lod::TimeAxis a{from_, to_, 1.0};
    a.zoom(a.toX(anchor), factor);
    setRange(a.t0, a.t1);
}

void TimeRange::pan(double dt) {
    setRange(from_ + dt, to_ + dt);
}

} // namespace kairos::views
