#include "model_chart.h"

#include "chart_style.h"

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
    points_ = curves_ = 0;
    setLogAxes(true);
    setLegendBelow(false);
    xAxis->setLabel(x_label.isEmpty() ? tr("measured (s)") : x_label);
    yAxis->setLabel(y_label.isEmpty() ? tr("predicted (s)") : y_label);
    legend->setVisible(true);
    const auto j = nlohmann::json::parse(accuracy, nullptr, false);
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
    points_ = curves_ = 0;
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
    double x_hi = 1, y_hi = 0;
    for (const Curve& c : curves) {
        if (c.batch.isEmpty() || c.batch.size() != c.throughput.size()) continue;
        QCPGraph* g = addGraph();
        QPen pen(colors[curves_ % 6], c.measured ? 2.0 : 1.6);
        if (!c.measured) pen.setStyle(Qt::DashLine);
        g->setPen(pen);
        g->setData(c.batch, c.throughput);
        g->setName(c.name);
        ++curves_;
        x_hi = std::max(x_hi, c.batch.back());
        for (double y : c.throughput) y_hi = std::max(y_hi, y);
    }
    legend->setVisible(curves_ > 0);
    xAxis->setRange(0, x_hi);
    yAxis->setRange(0, y_hi > 0 ? y_hi * 1.08 : 1);
    title_->setText(note.isEmpty() ? title : title + QLatin1Char('\n') + note);
    replot(QCustomPlot::rpQueuedReplot);
}

QStringList ModelChart::curveNames() const {
    QStringList names;
    for (int i = 0; i < curves_ && i < graphCount(); ++i) names << graph(i)->name();
    return names;
}

} // namespace kairos::views
