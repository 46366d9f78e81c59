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
    case Qt::Key_Escape: // passed on when there is nothing to clear
        if (!hasSelection()) return false;
        clearSelection();
        return true;
    default:
        return false;
    }
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
