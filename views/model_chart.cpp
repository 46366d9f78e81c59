#include "model_chart.h"

#include "chart_style.h"
#include "util/json_line.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace kairos::views {

void ModelChart::setLogAxes(bool log) {
    for (QCPAxis* a : {xAxis, yAxis}) {
        a->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
        a->setTicker(log ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog)
                         : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
}

void ModelChart::setLegendBelow(bool below) {
    QCPLayoutInset* inset = axisRect()->insetLayout();
    const bool is_below = legend->layout() == plotLayout();
    if (below == is_below) return;
    if (below) {
        inset->take(legend);
        plotLayout()->addElement(2, 0, legend);
        plotLayout()->setRowStretchFactor(2, 0.001);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
        legend->setWrap(2);
        legend->setMargins(QMargins(4, 2, 4, 2));
    } else {
        plotLayout()->take(legend);
        plotLayout()->simplify();
        legend->setFillOrder(QCPLayoutGrid::foRowsFirst);
        legend->setWrap(0);
        inset->addElement(legend, Qt::AlignTop | Qt::AlignLeft);
    }
}

ModelChart::ModelChart(QWidget* parent) : QCustomPlot(parent) {
    applyPalette(this, QPalette::Base);
    setLogAxes(true);
    xAxis->setLabel(tr("measured (s)"));
    yAxis->setLabel(tr("predicted (s)"));
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    setMinimumHeight(220);
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    legend->setFont(small);
    plotLayout()->insertRow(0);
    title_ = new QCPTextElement(this, QString(), QFont(font().family(), 10, QFont::Bold));
    title_->setTextColor(palette().color(QPalette::Text));
    plotLayout()->addElement(0, 0, title_);
}

bool ModelChart::setModel(const QString& title, const std::string& accuracy, const QString& x_label,
                          const QString& y_label) {
    clearGraphs();
    points_ = curves_ = bands_ = 0;
    curve_graphs_.clear();
    setLogAxes(true);
    setLegendBelow(false);
    xAxis->setLabel(x_label.isEmpty() ? tr("measured (s)") : x_label);
    yAxis->setLabel(y_label.isEmpty() ? tr("predicted (s)") : y_label);
    legend->setVisible(true);
    const auto j = parseJsonLenient(accuracy);
    static const QColor colors[] = {QColor(0xf5, 0xa6, 0x23), QColor(0x2f, 0x80, 0xed),
                                    QColor(0xe0, 0x3e, 0x3e), QColor(0x27, 0xae, 0x60)};
    double lo = INFINITY, hi = 0;
    int k = 0;
    if (j.is_array())
        for (const auto& f : j) {
            if (!f.is_object() || !f.contains("points")) continue;
            const QColor c = colors[k++ % 4];
            auto num = [&](const char* key) {
                return f.contains(key) && f[key].is_number() ? f[key].get<double>() : NAN;
            };
            // The fit's name up to its formula ("prefill, batch 1: a*N^2 ..." -> "prefill,
            // batch 1"): the formula is in the fit tool's output, the legend stays narrow.
            const QString name = QString::fromStdString(f.value("fit", std::string()))
                                     .section(QLatin1Char(':'), 0, 0);
            for (const char* which : {"points", "held_out_points"}) {
                const bool held = which[0] == 'h';
                QVector<double> x, y;
                if (f.contains(which) && f[which].is_array())
                    for (const auto& p : f[which])
                        if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number() &&
                            p[0].get<double>() > 0 && p[1].get<double>() > 0) {
                            x.push_back(p[0].get<double>());
                            y.push_back(p[1].get<double>());
                            lo = std::min({lo, x.back(), y.back()});
                            hi = std::max({hi, x.back(), y.back()});
                        }
                if (x.isEmpty()) continue;
                points_ += int(x.size());
                QCPGraph* g = addGraph();
                g->setLineStyle(QCPGraph::lsNone);
                g->setScatterStyle(
                    QCPScatterStyle(held ? QCPScatterStyle::ssCircle : QCPScatterStyle::ssDisc, c,
                                    held ? Qt::transparent : c, held ? 7 : 5));
                g->setData(x, y);
                if (!held && f.contains("label") && f["label"].is_string())
                    g->setName(QString::fromStdString(f["label"].get<std::string>()));
                else
                    g->setName(held
                                   ? tr("  held out: %1 %").arg(num("held_out_mape_pct"), 0, 'f', 1)
                                   : tr("%1: MAPE %2 %").arg(name).arg(num("mape_pct"), 0, 'f', 1));
            }
        }
    if (points_ > 0) {
        QCPGraph* diag = addGraph(); // perfect prediction
        diag->setPen(QPen(palette().color(QPalette::Mid), 1, Qt::DashLine));
        diag->setData(QVector<double>{lo / 1.5, hi * 1.5}, QVector<double>{lo / 1.5, hi * 1.5});
        diag->setName(
            x_label.isEmpty() || y_label.isEmpty()
                ? tr("predicted = measured")
                : QStringLiteral("%1 = %2").arg(y_label.section(QStringLiteral(" ("), 0, 0),
                                                x_label.section(QStringLiteral(" ("), 0, 0)));
        xAxis->setRange(lo / 1.5, hi * 1.5);
        yAxis->setRange(lo / 1.5, hi * 1.5);
    }
    title_->setText(title);
    replot(QCustomPlot::rpQueuedReplot);
    return points_ > 0;
}

void ModelChart::setCurves(const QString& title, const QString& note,
                           const std::vector<Curve>& curves) {
    clearGraphs();
    points_ = curves_ = bands_ = 0;
    curve_graphs_.clear();
    setLogAxes(false);
    setLegendBelow(true);
    xAxis->setLabel(tr("batch size"));
    yAxis->setLabel(tr("throughput (tokens/s)"));
    static const QColor colors[] = {QColor(0xf5, 0xa6, 0x23), QColor(0x2f, 0x80, 0xed),
                                    QColor(0xe0, 0x3e, 0x3e), QColor(0x27, 0xae, 0x60),
                                    QColor(0x8e, 0x44, 0xad), QColor(0x16, 0xa0, 0x85)};
    // Two columns while the names are short; long ones (with the predicted error and the
    // confidence) get a line each. Set before the graphs add their legend items.
    int longest = 0;
    for (const Curve& c : curves) longest = std::max(longest, int(c.name.size()));
    legend->setWrap(longest > 28 ? 1 : 2);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    double x_hi = 1, y_hi = 0, band_hi = 0;
    for (const Curve& c : curves) {
        if (c.batch.isEmpty() || c.batch.size() != c.throughput.size()) continue;
        const QColor color = colors[curves_ % 6];
        if (c.lo.size() == c.batch.size() && c.hi.size() == c.batch.size()) {
            // The band: the area between two unnamed graphs, under the curve (drawn first).
            // An unbounded top (inf) is drawn to the top of the axis.
            QVector<double> hi = c.hi;
            for (double& y : hi)
                if (!std::isfinite(y))
                    y = 1e300;
                else
                    band_hi = std::max(band_hi, y);
            QCPGraph* lo_g = addGraph();
            lo_g->setPen(Qt::NoPen);
            lo_g->setData(c.batch, c.lo);
            QCPGraph* hi_g = addGraph();
            hi_g->setPen(Qt::NoPen);
            QColor fill = color;
            fill.setAlpha(38);
            hi_g->setBrush(fill);
            hi_g->setChannelFillGraph(lo_g);
            hi_g->setData(c.batch, hi);
            for (QCPGraph* b : {lo_g, hi_g}) b->removeFromLegend();
            ++bands_;
        }
        QCPGraph* g = addGraph();
        QPen pen(color, c.measured ? 2.0 : 1.6);
        if (!c.measured) pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->setData(c.batch, c.throughput);
        g->setName(c.name);
        curve_graphs_.push_back(g);
        ++curves_;
        x_hi = std::max(x_hi, c.batch.back());
        for (double y : c.throughput) y_hi = std::max(y_hi, y);
        if (!c.points_batch.isEmpty() && c.points_batch.size() == c.points_throughput.size()) {
            QCPGraph* p = addGraph();
            p->setLineStyle(QCPGraph::lsNone);
            p->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 7));
            p->setData(c.points_batch, c.points_throughput);
            p->removeFromLegend();
            points_ += int(c.points_batch.size());
            for (double x : c.points_batch) x_hi = std::max(x_hi, x);
            for (double y : c.points_throughput) y_hi = std::max(y_hi, y);
        }
    }
    legend->setVisible(curves_ > 0);
    xAxis->setRange(0, x_hi * (points_ > 0 ? 1.03 : 1.0)); // a dot at the last batch whole
    // The curves set the scale; a band may reach past them, but not beyond twice their top
    // (an unbounded or very wide range would flatten every curve to the axis).
    const double top = std::max(y_hi, std::min(band_hi, 2 * y_hi));
    yAxis->setRange(0, top > 0 ? top * 1.08 : 1);
    title_->setText(note.isEmpty() ? title : title + QLatin1Char('\n') + note);
    replot(QCustomPlot::rpQueuedReplot);
}

QStringList ModelChart::curveNames() const {
    QStringList names;
    for (const QCPGraph* g : curve_graphs_) names << g->name();
    return names;
}

} // namespace kairos::views
