#include "latency_chart.h"

#include "chart_style.h"

#include <algorithm>
#include <cmath>

namespace kairos::views {

LatencyChart::LatencyChart(QWidget* parent) : QCustomPlot(parent) {
    applyPalette(this, QPalette::Base);
    xAxis->setScaleType(QCPAxis::stLogarithmic);
    xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    xAxis->setLabel(tr("latency (ms, log scale)"));
    yAxis->setLabel(tr("fraction of requests ≤"));
    yAxis->setRange(0, 1.02);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
}

void LatencyChart::setSeries(const std::vector<CdfSeries>& series) {
    clearGraphs();
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
    if (hi > 0) xAxis->setRange(lo / 1.3, hi * 1.3);
    replot(QCustomPlot::rpQueuedReplot);
}

} // namespace kairos::views
