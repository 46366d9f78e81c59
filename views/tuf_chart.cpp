#include "tuf_chart.h"

#include "chart_style.h"

#include <algorithm>
#include <cmath>

namespace kairos::views {

TufChart::TufChart(QWidget* parent) : QCustomPlot(parent) {
    applyPalette(this, QPalette::Base);
    xAxis->setLabel(tr("response time W(s0) (s)"));
    yAxis->setLabel(tr("first-response utility"));
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
}

QColor TufChart::classColor(std::size_t i) {
    static const QColor c[] = {QColor(0xe0, 0x3e, 0x3e), QColor(0x2f, 0x80, 0xed),
                               QColor(0x27, 0xae, 0x60), QColor(0x9b, 0x59, 0xb6),
                               QColor(0xf5, 0xa6, 0x23)};
    return c[i % std::size(c)];
}

void TufChart::setClasses(const std::vector<TufClass>& classes) {
    clearGraphs();
    clearItems();
    double xmax = 0, ymax = 0, ymin = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const TufClass& k = classes[i];
        const QColor col = classColor(i);
        const double zero = std::isfinite(k.tuf.zeroTime()) ? k.tuf.zeroTime() : k.tuf.ert * 2 + 1;
        double tmax = zero * 1.4;
        for (const auto& p : k.tasks) tmax = std::max(tmax, std::min(p.first, zero * 4));
        xmax = std::max(xmax, tmax);
        ymax = std::max(ymax, k.tuf.beta);
        QCPGraph* curve = addGraph();
        curve->setName(tr("%1: %2 % of max (first response)")
                           .arg(QString::fromStdString(k.cls))
                           .arg(k.utility_pct, 0, 'f', 1));
        curve->setPen(QPen(col, 2));
        QVector<double> x, y;
        for (int s = 0; s <= 200; ++s) {
            const double t = tmax * s / 200.0;
            x.push_back(t);
            y.push_back(k.tuf.signedValue(t)); // negative past the cut-off, as scored
        }
        // Show the curve down to where the late tasks are, but not past -3 beta (a task
        // seconds late would flatten the rest; its point sits at the lower edge).
        ymin = std::min(ymin, std::max(-3 * k.tuf.beta, k.tuf.signedValue(tmax)));
        curve->setData(x, y, true);
        QCPGraph* pts = addGraph();
        pts->removeFromLegend();
        pts->setLineStyle(QCPGraph::lsNone);
        QColor fill = col;
        fill.setAlpha(90);
        pts->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, col, fill, 5));
        QVector<double> px, py;
        for (const auto& [t, u] : k.tasks) {
            px.push_back(t);
            py.push_back(std::max(u, -3 * k.tuf.beta));
            ymin = std::min(ymin, py.back());
        }
        pts->setData(px, py);
    }
    if (classes.empty()) {
        auto* text = new QCPItemText(this);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.5);
        text->setText(
            tr("This workload has no time-utility functions (robot or TUF workloads have)"));
        text->setColor(palette().color(QPalette::Text));
    }
    xAxis->setRange(0, std::max(1.0, xmax));
    const double top = std::max(1.0, ymax);
    yAxis->setRange(std::min(ymin, 0.0) - 0.05 * top, top * 1.1);
    replot(QCustomPlot::rpQueuedReplot);
}

} // namespace kairos::views
