#include "kv_chart.h"

#include "chart_style.h"
#include "chart_tools.h"
#include "lod/timeline.h"

#include <QCursor>
#include <QKeyEvent>
#include <algorithm>
#include <cmath>
#include <limits>

namespace kairos::views {

namespace {
// A band sampled once per pixel column (KvChart::resample), drawn as one vertical line per
// column from the lower graph's value to this one's, then its upper edge. QCustomPlot's
// channel fill makes one polygon of both edges: for an overloaded run, whose min and max
// swap places at nearly every column, the raster engine filled a polygon of thousands of
// crossing edges (3.5 ms of every 6.6 ms replot, on the GUI thread after every slider
// move). Hand-written: QCustomPlot has no per-column band; this overrides only its draw.
class ColumnBand : public QCPGraph {
public:
    ColumnBand(QCPAxis* key, QCPAxis* value, QCPGraph* lower)
        : QCPGraph(key, value), lower_(lower) {}

protected:
    void draw(QCPPainter* p) override {
        const QCPAxis* kx = keyAxis();
        const QCPAxis* vy = valueAxis();
        if (!kx || !vy || data()->isEmpty()) return;
        const QCPGraphDataContainer& up = *data();
        const QCPGraphDataContainer& low = *lower_->data();
        columns_.clear();
        edge_.clear();
        auto l = low.constBegin();
        for (auto u = up.constBegin(); u != up.constEnd(); ++u) {
            while (l != low.constEnd() && l->key < u->key) ++l; // the same buckets' times
            const double x = kx->coordToPixel(u->key), y = vy->coordToPixel(u->value);
            if (l != low.constEnd() && l->key == u->key)
                columns_.append(QLineF(x, vy->coordToPixel(l->value), x, y));
            edge_.append(QPointF(x, y));
        }
        applyFillAntialiasingHint(p);
        p->setPen(QPen(brush().color(), 1));
        p->drawLines(columns_);
        applyDefaultAntialiasingHint(p);
        p->setPen(pen());
        p->drawPolyline(edge_.constData(), int(edge_.size()));
    }

private:
    QCPGraph* lower_;
    QVector<QLineF> columns_;
    QVector<QPointF> edge_;
};
} // namespace

KvChart::KvChart(TimeRange* range, QWidget* parent) : QCustomPlot(parent), range_(range) {
    setMinimumHeight(110);
    applyPalette(this, QPalette::Base);
    xAxis->setLabel(QStringLiteral("time (s)"));
    yAxis->setLabel(QStringLiteral("KV tokens"));
    // Drawn in the order added: the pinned run's line under this run's band.
    pinned_hi_ = addGraph();
    pinned_hi_->setPen(QPen(QColor(0x6b, 0x72, 0x80), 1.5));
    pinned_hi_->setAdaptiveSampling(false);
    pinned_hi_->setName(QStringLiteral("pinned run"));
    pinned_hi_->setVisible(false);
    pinned_hi_->removeFromLegend();
    // Tokens in use: the band of each column's min (lo_) and max (hi_, drawn as columns);
    // then the cached blocks' band above it, from hi_ up (drawn in the order made).
    lo_ = new QCPGraph(xAxis, yAxis);
    hi_ = new ColumnBand(xAxis, yAxis, lo_);
    // Cached blocks nobody references, above the tokens in use (filled down to them).
    held_hi_ = new ColumnBand(xAxis, yAxis, hi_);
    held_hi_->setPen(QPen(QColor(0xd8, 0x9b, 0x2b), 1));
    held_hi_->setBrush(QColor(0xfb, 0xe3, 0xb0, 200));
    held_hi_->setAdaptiveSampling(false);
    held_hi_->setName(QStringLiteral("cached, unreferenced"));
    held_hi_->setVisible(false);
    held_hi_->removeFromLegend();
    const QColor blue(0x2f, 0x80, 0xed);
    for (QCPGraph* g : {lo_, hi_}) {
        g->setPen(QPen(blue, 1));
        g->setLineStyle(QCPGraph::lsLine);
        g->setAdaptiveSampling(false); // we downsample ourselves, keeping min and max
    }
    QColor fill = blue;
    fill.setAlpha(110);
    hi_->setBrush(fill); // the columns' colour, and the legend's swatch
    hi_->setName(QStringLiteral("in use"));
    // A disaggregated run's prefill pool, inside the band of both pools.
    prefill_hi_ = addGraph();
    prefill_hi_->setPen(QPen(QColor(0xf5, 0xa6, 0x23), 1.5));
    prefill_hi_->setAdaptiveSampling(false);
    prefill_hi_->setName(QStringLiteral("prefill pool (of the total)"));
    prefill_hi_->setVisible(false);
    prefill_hi_->removeFromLegend();
    cap_ = addGraph();
    cap_->setPen(QPen(QColor(0xe0, 0x3e, 0x3e), 1, Qt::DashLine));
    cap_->setName(QStringLiteral("capacity"));
    marks_ = addGraph();
    marks_->setLineStyle(QCPGraph::lsNone);
    marks_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssTriangleInverted,
                                            QColor(0xe0, 0x3e, 0x3e), QColor(0xe0, 0x3e, 0x3e), 6));
    marks_->setName(QStringLiteral("preemption"));
    lo_->removeFromLegend();
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setRowSpacing(0);
    legend->setColumnSpacing(8);
    // The series are sampled once per pixel column (resample): antialiasing them blends
    // nothing a column does not already show, and it cost most of the chart's replot (an
    // overloaded 20,000-request run: a band of min and max that changes sign at every
    // column, 6.6 ms a replot antialiased on the GUI thread after every slider move).
    setNotAntialiasedElements(QCP::aePlottables | QCP::aeFills);
    setPlottingHints(plottingHints() | QCP::phFastPolylines);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    keepLegendBelow(this); // the same place at every run (in a corner, it moved as runs changed)
    // Two-way: the shared range moves the axis; dragging or zooming here moves the range.
    connect(range_, &TimeRange::changed, this, [this](double from, double to) {
        syncing_ = true;
        xAxis->setRange(from, to);
        syncing_ = false;
        resample();
    });
    connect(xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange& r) {
                if (!syncing_) range_->setRange(r.lower, r.upper);
            });
    // The range selection: its time in plot coordinates, the plot's full height.
    selection_ = new QCPItemRect(this);
    for (QCPItemPosition* c : {selection_->topLeft, selection_->bottomRight}) {
        c->setTypeX(QCPItemPosition::ptPlotCoords);
        c->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    {
        QColor shade = palette().color(QPalette::Highlight);
        shade.setAlpha(40);
        selection_->setBrush(shade);
        selection_->setPen(QPen(palette().color(QPalette::Highlight), 1));
    }
    selection_->setVisible(false);
    connect(range_, &TimeRange::selectionChanged, this, [this] {
        selection_->setVisible(range_->hasSelection());
        if (range_->hasSelection()) {
            selection_->topLeft->setCoords(range_->selectionFrom(), 0);
            selection_->bottomRight->setCoords(range_->selectionTo(), 1);
        }
        replot(QCustomPlot::rpQueuedReplot);
    });
    setFocusPolicy(Qt::ClickFocus);
    inspected_ = new QCPItemStraightLine(this);
    inspected_->setProperty(kTransientItem, true);
    inspected_->setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
    inspected_->setVisible(false);
    setMouseTracking(true);
    connect(this, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { press_ = e->pos(); });
    connect(this, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if (e->button() != Qt::LeftButton || (e->pos() - press_).manhattanLength() > 2) return;
        if (!axisRect()->rect().contains(e->pos())) return;
        Q_EMIT timeClicked(xAxis->pixelToCoord(e->pos().x()));
    });
    connect(this, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        if (e->buttons() == Qt::NoButton && axisRect()->rect().contains(e->pos()))
            Q_EMIT cursorMoved(xAxis->pixelToCoord(e->pos().x()));
    });
}

void KvChart::mousePressEvent(QMouseEvent* e) {
    if (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier) &&
        axisRect()->rect().contains(e->pos())) {
        selecting_ = true; // not passed on: QCustomPlot would start a pan
        select_from_ = xAxis->pixelToCoord(e->pos().x());
        press_ = e->pos();
        return;
    }
    QCustomPlot::mousePressEvent(e);
}

void KvChart::mouseMoveEvent(QMouseEvent* e) {
    if (selecting_) {
        if (std::abs(e->pos().x() - press_.x()) > 2)
            range_->select(select_from_, xAxis->pixelToCoord(e->pos().x()));
        return;
    }
    QCustomPlot::mouseMoveEvent(e);
}

void KvChart::mouseReleaseEvent(QMouseEvent* e) {
    if (selecting_) {
        selecting_ = false;
        if (std::abs(e->pos().x() - press_.x()) > 2)
            range_->select(select_from_, xAxis->pixelToCoord(e->pos().x()));
        else
            range_->clearSelection(); // a Shift+click clears it, as a click on the ruler does
        return;
    }
    QCustomPlot::mouseReleaseEvent(e);
}

void KvChart::setInspectedTime(double t) {
    const bool show = !std::isnan(t);
    if (!show && !inspected_->visible()) return;
    inspected_->setVisible(show);
    if (show) {
        inspected_->point1->setCoords(t, 0);
        inspected_->point2->setCoords(t, 1);
    }
    replot(QCustomPlot::rpQueuedReplot);
}

void KvChart::setRun(std::shared_ptr<const std::vector<std::pair<double, double>>> kv,
                     double capacity, std::vector<double> preemptions,
                     std::shared_ptr<const std::vector<std::pair<double, double>>> held,
                     std::shared_ptr<const std::vector<std::pair<double, double>>> prefill) {
    kv_ = std::move(kv);
    prefill_ = std::move(prefill);
    prefill_hi_->setVisible(bool(prefill_));
    if (prefill_)
        prefill_hi_->addToLegend();
    else
        prefill_hi_->removeFromLegend();
    held_ = std::move(held);
    held_hi_->setVisible(bool(held_));
    if (held_)
        held_hi_->addToLegend();
    else
        held_hi_->removeFromLegend();
    capacity_ = capacity;
    preemptions_ = std::move(preemptions);
    std::sort(preemptions_.begin(), preemptions_.end());
    updateYRange();
    syncing_ = true;
    xAxis->setRange(range_->from(), range_->to());
    syncing_ = false;
    resample();
}

void KvChart::setPinned(std::shared_ptr<const std::vector<std::pair<double, double>>> kv) {
    pinned_ = std::move(kv);
    pinned_hi_->setVisible(bool(pinned_));
    updateYRange();
    if (pinned_)
        pinned_hi_->addToLegend();
    else
        pinned_hi_->removeFromLegend();
    resample();
}

void KvChart::updateYRange() {
    // Show the capacity line when usage (of this run or the pinned one) reaches a third of
    // it; otherwise scale to the usage (a mostly idle cache would be a flat line) and name
    // the capacity in the legend.
    double peak = 0;
    for (const auto* kv : {kv_.get(), pinned_.get(), held_.get()})
        if (kv)
            for (const auto& pt : *kv) peak = std::max(peak, pt.second);
    // Up to the highest of them too: a pinned run on a larger capacity ran off the top
    // (its line cut from 30 s to 238 s under a halved KV slider).
    const bool cap_on_scale = peak >= capacity_ / 3;
    yAxis->setRange(0, std::max({1.0, cap_on_scale ? capacity_ * 1.08 : peak * 1.25, peak * 1.05}));
    cap_->setName(cap_on_scale
                      ? tr("capacity")
                      : tr("capacity %L1 (off scale)").arg(static_cast<qlonglong>(capacity_)));
}

void KvChart::setPlotMargins(int left, int right) {
    if (left == margin_l_ && right == margin_r_) return;
    margin_l_ = left;
    margin_r_ = right;
    margin_lr_ = left + right;
    axisRect()->setAutoMargins(QCP::msTop | QCP::msBottom);
    axisRect()->setMargins(QMargins(left, 0, right, 0));
    resample();
}

void KvChart::resizeEvent(QResizeEvent* e) {
    QCustomPlot::resizeEvent(e);
    resample();
}

void KvChart::resample() {
    const double from = range_->from(), to = range_->to();
    cap_->setData(QVector<double>{from, to}, QVector<double>{capacity_, capacity_}, true);
    // One bucket per pixel of the plot (known before the first layout when the margins
    // are fixed).
    buckets_ = std::max(1, margin_lr_ >= 0 ? width() - margin_lr_ : axisRect()->width());
    auto series = [&](const std::vector<std::pair<double, double>>* kv, QCPGraph* lo_graph,
                      QCPGraph* hi_graph) {
        QVector<double> t, lo, hi;
        if (kv) {
            const auto b = lod::downsample(*kv, from, to, buckets_);
            t.reserve(int(b.size()));
            for (const auto& x : b) {
                t.push_back(x.t);
                lo.push_back(x.lo);
                hi.push_back(x.hi);
            }
        }
        if (lo_graph) lo_graph->setData(t, lo, true);
        hi_graph->setData(t, hi, true);
    };
    series(kv_.get(), lo_, hi_);
    series(held_.get(), nullptr, held_hi_);
    series(prefill_.get(), nullptr, prefill_hi_);
    series(pinned_.get(), nullptr, pinned_hi_);
    // Preemption marks in view, one per pixel column: marks in one column are drawn on
    // top of each other, and an overloaded 20,000-request run has thousands (drawing each
    // triangle took a third of the window's repaint after every slider move).
    QVector<double> mx, my;
    const double per_px = (to - from) / buckets_;
    long last_col = std::numeric_limits<long>::min();
    for (auto it = std::lower_bound(preemptions_.begin(), preemptions_.end(), from);
         per_px > 0 && it != preemptions_.end() && *it <= to; ++it) {
        const auto col = static_cast<long>(std::floor((*it - from) / per_px));
        if (col == last_col) continue;
        last_col = col;
        mx.push_back(*it);
        my.push_back(capacity_);
    }
    marks_->setData(mx, my, true);
    replot(QCustomPlot::rpQueuedReplot);
}

void KvChart::keyPressEvent(QKeyEvent* e) {
    const QPoint at = mapFromGlobal(QCursor::pos());
    const double anchor =
        axisRect()->rect().contains(at) ? xAxis->pixelToCoord(at.x()) : std::nan("");
    if (range_->handleKey(e, anchor))
        e->accept();
    else
        QCustomPlot::keyPressEvent(e);
}

} // namespace kairos::views
