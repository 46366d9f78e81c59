#include "time_range.h"

#include "lod/time_axis.h"

#include <QKeyEvent>
#include <algorithm>

namespace kairos::views {

void TimeRange::setExtent(double lo, double hi) {
    lo_ = lo;
    hi_ = std::max(hi, lo + 1e-6);
    setRange(lo_, hi_);
    clearSelection(); // another run: a stretch of the last one means nothing here
    before_zoom_.clear();
    focus_from_ = focus_to_ = 0;
}

void TimeRange::followExtent(double lo, double hi) {
    hi = std::max(hi, lo + 1e-6);
    if (lo == lo_ && hi == hi_) return;
    const auto [from, to] = followed(from_, to_, lo_, hi_, lo, hi, false);
    lo_ = lo;
    hi_ = hi;
    setRange(from, to);
    if (hasSelection()) select(sel_from_, sel_to_); // clamped to the new extent
}

std::pair<double, double> TimeRange::followed(double from, double to, double old_lo, double old_hi,
                                              double lo, double hi, bool whole) {
    hi = std::max(hi, lo + 1e-6);
    // The whole run was in view: the whole new one is. Else the view stays where it was,
    // inside the new extent (a longer run reaches further; a shorter one clamps it), as
    // setRange clamps it.
    if (whole || (from <= old_lo && to >= old_hi)) return {lo, hi};
    lod::TimeAxis a{from, std::max(to, from + 1e-6), 1.0};
    a.clampTo(lo, hi);
    return {a.t0, a.t1};
}

void TimeRange::select(double a, double b) {
    a = std::clamp(a, lo_, hi_);
    b = std::clamp(b, lo_, hi_);
    if (a > b) std::swap(a, b);
    if (!(b > a)) {
        clearSelection();
        return;
    }
    if (a == sel_from_ && b == sel_to_) return;
    sel_from_ = a;
    sel_to_ = b;
    Q_EMIT selectionChanged();
}

void TimeRange::clearSelection() {
    if (!hasSelection()) return;
    sel_from_ = sel_to_ = std::numeric_limits<double>::quiet_NaN();
    Q_EMIT selectionChanged();
}

bool TimeRange::handleKey(const QKeyEvent* e, double anchor) {
    if (e->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier)) return false;
    if (!(anchor >= from_ && anchor <= to_)) anchor = (from_ + to_) / 2;
    switch (e->key()) {
    case Qt::Key_W:
        zoom(anchor, kKeyZoom);
        return true;
    case Qt::Key_S:
        zoom(anchor, 1 / kKeyZoom);
        return true;
    case Qt::Key_A:
        pan(-kKeyPan * (to_ - from_));
        return true;
    case Qt::Key_D:
        pan(kKeyPan * (to_ - from_));
        return true;
    case Qt::Key_M:
    case Qt::Key_F:
        if (e->key() == Qt::Key_M && (e->modifiers() & Qt::ShiftModifier)) return zoomBack();
        return zoomToSelection();
    case Qt::Key_Escape: // passed on when there is nothing to clear
        if (!hasSelection()) return false;
        clearSelection();
        return true;
    default:
        return false;
    }
}

void TimeRange::setFocusSpan(double from, double to) {
    focus_from_ = from;
    focus_to_ = to;
}

bool TimeRange::zoomToSelection() {
    double a = sel_from_, b = sel_to_;
    if (!hasSelection()) {
        if (!(focus_to_ > focus_from_)) return false;
        a = focus_from_;
        b = focus_to_;
    }
    return zoomTo(a, b);
}

bool TimeRange::zoomTo(double a, double b) {
    if (!(b > a) || !std::isfinite(a) || !std::isfinite(b)) return false;
    const double spare = (b - a) / 20;
    before_zoom_.emplace_back(from_, to_);
    if (before_zoom_.size() > 64) before_zoom_.erase(before_zoom_.begin());
    setRange(a - spare, b + spare);
    return true;
}

bool TimeRange::zoomBack() {
    if (before_zoom_.empty()) return false;
    const auto [a, b] = before_zoom_.back();
    before_zoom_.pop_back();
    setRange(a, b);
    return true;
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
