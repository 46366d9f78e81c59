#include "latency_chart.h"

#include "chart_style.h"
#include "chart_tools.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>

namespace kairos::views {

namespace {
// Ticks at powers of ten of milliseconds, labelled as durations in their own unit (10 ms,
// 1 s, 16.7 min): QCustomPlot's own labels switched from "100000" to "10⁶" mid-axis.
class DurationLogTicker : public QCPAxisTickerLog {
protected:
    QString getTickLabel(double tick, const QLocale&, QChar, int) override {
        return QString::fromStdString(text::durationTick(tick / 1e3));
    }
};
} // namespace

LatencyChart::LatencyChart(QWidget* parent) : QCustomPlot(parent) {
    applyPalette(this, QPalette::Base);
    xAxis->setScaleType(QCPAxis::stLogarithmic);
    xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new DurationLogTicker));
    xAxis->setLabel(tr("latency (log scale)"));
    yAxis->setLabel(tr("fraction ≤ x")); // short: the chart is 150 px high at 1366x768
    yAxis->setRange(0, 1.02);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    keepLegendBelow(this); // a corner still hid the E2EL curve at some sizes
    // Where the plot is short (75 px at 1366x768 with the timeline tall), six fractions
    // crowd its axis: 0, 0.5 and 1 then (a hint of 2). The layout of the last replot decides.
    connect(this, &QCustomPlot::beforeReplot, this, [this] {
        const int ticks = axisRect()->height() > 0 && axisRect()->height() < 110 ? 2 : 5;
        if (yAxis->ticker()->tickCount() != ticks) yAxis->ticker()->setTickCount(ticks);
    });
}

void LatencyChart::setSeries(const std::vector<CdfSeries>& series) {
    clearGraphs();
    slo_lines_.clear(); // cleared with the graphs; setSlos draws them again
    double lo = INFINITY, hi = 0;
    for (const CdfSeries& s : series) {
        QCPGraph* g = addGraph();
        g->setName(s.name);
        g->setPen(QPen(s.color, 2, s.dashed ? Qt::DashLine : Qt::SolidLine));
        g->setLineStyle(QCPGraph::lsStepLeft);
        QVector<double> x, y;
        for (const auto& [v, f] : s.points)
            if (v > 0) {
                x.push_back(v);
                y.push_back(f);
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
        g->setData(x, y, true);
    }
    lo_ = lo;
    hi_ = hi;
    fitRange();
    replot(QCustomPlot::rpQueuedReplot);
}

void LatencyChart::fitRange() {
    double lo = lo_, hi = hi_;
    for (const Slo& s : slos_)
        if (s.ms > 0) {
            lo = std::min(lo, s.ms);
            hi = std::max(hi, s.ms);
        }
    if (hi > 0 && std::isfinite(lo)) xAxis->setRange(lo / 1.3, hi * 1.3);
}

void LatencyChart::setSlos(const std::vector<Slo>& slos) {
    // Vertical dotted lines, named in the legend (a label on the line did not fit the
    // chart's height at 1366x768).
    for (QCPGraph* g : slo_lines_) removeGraph(g);
    slo_lines_.clear();
    slos_ = slos;
    for (const Slo& s : slos) {
        if (!(s.ms > 0)) continue;
        QCPGraph* g = addGraph();
        // In the axis' own units (2 s beside ticks of 1 s and 10 s, not 2000 ms).
        g->setName(tr("%1 %2").arg(s.name, QString::fromStdString(text::durationTick(s.ms / 1e3))));
        g->setPen(QPen(s.color, 1.5, Qt::DotLine));
        g->setData(QVector<double>{s.ms, s.ms}, QVector<double>{0.0, 1.0}, true);
        slo_lines_.push_back(g);
    }
    fitRange();
    replot(QCustomPlot::rpQueuedReplot);
}

} // namespace kairos::views
