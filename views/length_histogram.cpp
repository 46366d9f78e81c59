#include "length_histogram.h"

#include "chart_style.h"
#include "chart_tools.h"
#include "metrics/cdf.h"

#include <algorithm>

namespace kairos::views {

LengthHistogram::LengthHistogram(QWidget* parent) : QCustomPlot(parent) {
    setMinimumHeight(150);
    applyPalette(this, QPalette::Window);
    xAxis->setScaleType(QCPAxis::stLogarithmic);
    xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    // Within one decade the log ticker steps linearly; on a log axis five such labels crowd
    // its upper end ("250 500 7501000 1250" on a robot workload's lengths): three.
    xAxis->ticker()->setTickCount(3);
    xAxis->setLabel(tr("tokens"));
    yAxis->setLabel(tr("requests"));
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    legend->setFont(small);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    xAxis->setTickLabelFont(small);
    yAxis->setTickLabelFont(small);
    // Below the plot at every workload: in a corner it was judged on the size it had below
    // (one row) and drawn in two, over the bars of a 600-request workload.
    keepLegendBelow(this);
    // Before a workload (or with no requests): a line saying so, not a log axis's default
    // 0.001-1 tokens.
    sayWhenEmpty(this, tr("No requests yet: their prompt and output lengths show here"));
}

void LengthHistogram::setWorkload(const Workload& w) {
    clearGraphs();
    std::vector<double> prompt, output;
    for (const auto& r : w.requests) {
        prompt.push_back(r.prompt_tokens);
        output.push_back(r.output_tokens);
    }
    double lo = INFINITY, hi = 0, top = 0;
    auto add = [&](const std::vector<double>& v, const QString& name, QColor c) {
        const auto h = lod::logHistogram(v, 30);
        QCPGraph* g = addGraph();
        g->setName(name);
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setPen(QPen(c, 1.5));
        c.setAlpha(60);
        g->setBrush(c);
        QVector<double> x, y;
        for (std::size_t i = 0; i < h.counts.size(); ++i) {
            x.push_back(h.edges[i]);
            y.push_back(double(h.counts[i]));
            top = std::max(top, double(h.counts[i]));
        }
        if (!h.edges.empty()) {
            x.push_back(h.edges.back());
            y.push_back(0);
            lo = std::min(lo, h.edges.front());
            hi = std::max(hi, h.edges.back());
        }
        g->setData(x, y, true);
    };
    add(prompt, tr("prompt"), QColor(0xf5, 0xa6, 0x23));
    add(output, tr("output"), QColor(0x2f, 0x80, 0xed));
    if (hi > 0) xAxis->setRange(lo / 1.2, hi * 1.2);
    yAxis->setRange(0, std::max(1.0, top * 1.1));
    replot(QCustomPlot::rpQueuedReplot);
}

} // namespace kairos::views
