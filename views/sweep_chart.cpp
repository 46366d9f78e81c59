#include "sweep_chart.h"

#include "chart_style.h"
#include "chart_tools.h"

#include <QFileInfo>
#include <QResizeEvent>
#include <algorithm>
#include <cmath>
#include <map>

namespace kairos::views {

SweepChart::SweepChart(QWidget* parent) : QCustomPlot(parent) {
    applyPalette(this, QPalette::Base);
    // The legend in its own row above the axis rect: never over the data.
    auto* sub = new QCPLayoutGrid;
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, sub);
    sub->setMargins(QMargins(5, 5, 5, 0));
    sub->addElement(0, 0, legend);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    plotLayout()->setRowStretchFactor(0, 0.001);
    legend->setBorderPen(Qt::NoPen);
    marker_ = new QCPItemStraightLine(this);
    marker_->setPen(QPen(palette().color(QPalette::Text), 1.5, Qt::DashLine));
    marker_->setVisible(false);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setMinimumHeight(180);
}

void SweepChart::setCurves(const QString& x_label, const QString& y_label, bool log_x,
                           const std::vector<SweepCurve>& curves) {
    clearPlottables();
    legend->clearItems();
    tradeoff_ = false;
    spread_ = false;
    // Cleared with the plottables; the panel places it again. Its value is the last
    // metric's: kept, it stretched the next metric's axis to it (TTFT p99's 34,000 ms over
    // a mean of 2,000).
    shown_ = nullptr;
    shown_y_ = std::numeric_limits<double>::quiet_NaN();
    capacity_graphs_.clear();
    xAxis->setLabel(x_label);
    yAxis->setLabel(y_label);
    if (log_x) {
        xAxis->setScaleType(QCPAxis::stLogarithmic);
        // Base 2: a sweep spans a decade or two, where base-10 ticks leave most points
        // unlabelled (0.5, 1, 2, 4, 8 rather than 1, 10).
        QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
        ticker->setLogBase(2);
        ticker->setSubTickCount(1);
        xAxis->setTicker(ticker);
    } else {
        xAxis->setScaleType(QCPAxis::stLinear);
        xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (const SweepCurve& c : curves) {
        QVector<double> x, m, lo, hi;
        for (std::size_t i = 0; i < c.x.size(); ++i) {
            if (!std::isfinite(c.mean[i])) continue;
            x.push_back(c.x[i]);
            m.push_back(c.mean[i]);
            lo.push_back(std::isfinite(c.lo[i]) ? c.lo[i] : c.mean[i]);
            hi.push_back(std::isfinite(c.hi[i]) ? c.hi[i] : c.mean[i]);
            xlo = std::min(xlo, c.x[i]);
            xhi = std::max(xhi, c.x[i]);
            ylo = std::min(ylo, lo.back());
            yhi = std::max(yhi, hi.back());
        }
        // The band: the upper bound filled down to the lower one.
        QCPGraph* lower = addGraph();
        lower->setData(x, lo, true);
        lower->setPen(Qt::NoPen);
        lower->removeFromLegend();
        QCPGraph* upper = addGraph();
        upper->setData(x, hi, true);
        upper->setPen(Qt::NoPen);
        QColor band = c.color;
        band.setAlpha(50);
        upper->setBrush(band);
        upper->setChannelFillGraph(lower);
        // Named only where it has a width: seeds that all gave the same run leave none.
        bool spread = false;
        for (qsizetype i = 0; i < x.size(); ++i) spread = spread || hi[i] > lo[i];
        spread_ = spread_ || spread;
        if (curves.size() == 1 && spread)
            upper->setName(tr("95 % interval over seeds"));
        else
            upper->removeFromLegend();
        QCPGraph* mean = addGraph();
        mean->setName(c.name);
        mean->setData(x, m, true);
        mean->setPen(QPen(c.color, 2));
        mean->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    }
    curves_ = static_cast<int>(curves.size());
    if (std::isfinite(xlo)) {
        if (xhi <= xlo) xhi = xlo + 1;
        const double pad = log_x ? 0 : 0.03 * (xhi - xlo);
        xAxis->setRange(log_x ? xlo / 1.1 : xlo - pad, log_x ? xhi * 1.1 : xhi + pad);
        if (yhi <= ylo) yhi = ylo + 1;
        const double ypad = 0.06 * (yhi - ylo);
        yAxis->setRange(ylo - ypad, yhi + ypad);
    }
    setMarker(marker_x_);
    fitLegend(width());
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::setTradeoff(const QString& x_label, const QString& y_label,
                             const std::vector<SweepCurve>& curves,
                             const std::vector<std::pair<double, double>>& front) {
    clearPlottables();
    legend->clearItems();
    tradeoff_ = true;
    spread_ = false;
    shown_ = nullptr;
    shown_y_ = std::numeric_limits<double>::quiet_NaN();
    capacity_graphs_.clear();
    xAxis->setLabel(x_label);
    yAxis->setLabel(y_label);
    xAxis->setScaleType(QCPAxis::stLinear);
    xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    auto extend = [&](double x, double y) {
        xlo = std::min(xlo, x);
        xhi = std::max(xhi, x);
        ylo = std::min(ylo, y);
        yhi = std::max(yhi, y);
    };
    for (const SweepCurve& c : curves) {
        // x and mean hold the two metrics, in the sweep's order (a parametric curve).
        auto* curve = new QCPCurve(xAxis, yAxis);
        curve->setName(c.name);
        curve->setPen(QPen(c.color, 2));
        curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        QVector<double> t, x, y;
        for (std::size_t i = 0; i < c.x.size(); ++i) {
            if (!std::isfinite(c.x[i]) || !std::isfinite(c.mean[i])) continue;
            t.push_back(double(t.size()));
            x.push_back(c.x[i]);
            y.push_back(c.mean[i]);
            extend(c.x[i], c.mean[i]);
        }
        curve->setData(t, x, y, true);
    }
    if (!front.empty()) {
        auto* f = new QCPCurve(xAxis, yAxis);
        f->setName(tr("Pareto front"));
        f->setPen(QPen(QColor(110, 110, 110), 1.5, Qt::DashLine));
        f->setScatterStyle(
            QCPScatterStyle(QCPScatterStyle::ssDiamond, QColor(60, 60, 60), Qt::NoBrush, 9));
        QVector<double> t, x, y;
        for (const auto& [fx, fy] : front) {
            t.push_back(double(t.size()));
            x.push_back(fx);
            y.push_back(fy);
        }
        f->setData(t, x, y, true);
    }
    curves_ = static_cast<int>(curves.size());
    if (std::isfinite(xlo)) {
        if (xhi <= xlo) xhi = xlo + 1;
        if (yhi <= ylo) yhi = ylo + 1;
        xAxis->setRange(xlo - 0.05 * (xhi - xlo), xhi + 0.05 * (xhi - xlo));
        yAxis->setRange(ylo - 0.06 * (yhi - ylo), yhi + 0.06 * (yhi - ylo));
    }
    marker_->setVisible(false);
    fitLegend(width());
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::setCapacityMarks(const std::vector<CapacityMark>& marks) {
    for (auto* item : capacity_items_) removeItem(item);
    capacity_items_.clear();
    for (auto* g : capacity_graphs_) removeGraph(g);
    capacity_graphs_.clear();
    // A dotted line per mark, named in the legend: labels in the plot ran over the curves
    // and each other's lines wherever they were put (four policies' labels take most of a
    // 340-pixel plot's width).
    for (const auto& m : marks) {
        auto* line = new QCPItemStraightLine(this);
        line->setPen(QPen(m.color, 1.5, Qt::DotLine));
        line->point1->setCoords(m.x, 0);
        line->point2->setCoords(m.x, 1);
        capacity_items_.push_back(line);
        if (m.label.isEmpty()) continue; // named with another mark at its rate
        QCPGraph* entry = addGraph();    // no data: its legend entry only
        entry->setPen(line->pen());
        entry->setName(m.label);
        capacity_graphs_.push_back(entry);
    }
    fitLegend(width());
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::saveAs(const QString& path, int width, int height) {
    fitLegend(width);
    saveChart(this, path, width, height);
    fitLegend(this->width());
}

void SweepChart::resizeEvent(QResizeEvent* e) {
    fitLegend(e->size().width());
    QCustomPlot::resizeEvent(e);
}

void SweepChart::fitLegend(int width) {
    wrapLegend(legend, width - 20); // the legend row's margins and the plot's
}

void SweepChart::setMarker(double x) {
    marker_x_ = x;
    marker_->setVisible(std::isfinite(x) && graphCount() > 0 && !tradeoff_);
    if (std::isfinite(x)) {
        marker_->point1->setCoords(x, 0);
        marker_->point2->setCoords(x, 1);
    }
    placeShownRun();
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::setShownRun(double y, const QString& name) {
    shown_y_ = y;
    shown_name_ = name;
    placeShownRun();
    replot(QCustomPlot::rpQueuedReplot);
}

void SweepChart::placeShownRun() {
    const bool on =
        std::isfinite(shown_y_) && std::isfinite(marker_x_) && curves_ > 0 && !tradeoff_;
    if (!on) {
        if (shown_) removeGraph(shown_);
        shown_ = nullptr;
        return;
    }
    if (!shown_) {
        shown_ = addGraph();
        shown_->setLineStyle(QCPGraph::lsNone);
        shown_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond,
                                                palette().color(QPalette::Text),
                                                palette().color(QPalette::Base), 10));
        fitLegend(width());
    }
    shown_->setName(shown_name_);
    shown_->setData(QVector<double>{marker_x_}, QVector<double>{shown_y_}, true);
    // On the chart even where it lies off the curves' range.
    const QCPRange r = yAxis->range();
    if (shown_y_ < r.lower || shown_y_ > r.upper) {
        const double pad = 0.06 * std::max(r.size(), std::abs(shown_y_) * 0.1);
        yAxis->setRange(std::min(r.lower, shown_y_ - pad), std::max(r.upper, shown_y_ + pad));
    }
}

std::vector<SweepCurve> sweepCurves(const sweep::Table& t, const std::vector<double>& x,
                                    std::size_t metric, const std::size_t* against) {
    static const QColor colors[] = {QColor(31, 119, 180),  QColor(214, 39, 40),
                                    QColor(44, 160, 44),   QColor(255, 127, 14),
                                    QColor(148, 103, 189), QColor(140, 86, 75)};
    const std::size_t others = t.axes.empty() ? 0 : t.axes.size() - 1;
    std::vector<SweepCurve> curves;
    std::map<std::string, std::size_t> index;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        std::string key;
        for (std::size_t a = 0; a < others; ++a)
            key += (key.empty() ? "" : ", ") + (others > 1 ? t.axes[a] + "=" : std::string()) +
                   row.values[a];
        auto [pos, added] = index.emplace(key, curves.size());
        if (added) {
            SweepCurve cv;
            cv.name = key.empty() ? QObject::tr("mean over seeds") : QString::fromStdString(key);
            cv.color = colors[curves.size() % 6];
            curves.push_back(cv);
        }
        SweepCurve& cv = curves[pos->second];
        cv.x.push_back(against ? row.mean[*against] : x[r]);
        cv.mean.push_back(row.mean[metric]);
        cv.lo.push_back(t.lo(r, metric));
        cv.hi.push_back(t.hi(r, metric));
    }
    return curves;
}

QString sweepReportHtml(const QString& title, const std::vector<QString>& settings,
                        const sweep::Table& t, const std::vector<double>& x,
                        const std::string& x_name, bool log_x,
                        const std::vector<std::string>& charted) {
    QString h;
    h += QStringLiteral("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>%1</title>"
                        "<style>body{font-family:DejaVu Sans,sans-serif;margin:24px;max-width:"
                        "1100px}table{border-collapse:collapse;font-size:13px}td,th{border:1px "
                        "solid #ccc;padding:3px 6px;text-align:right}th{background:#f2f2f2}"
                        "figure{margin:12px 0}figcaption{font-size:13px;color:#444}</style>"
                        "</head><body>")
             .arg(title.toHtmlEscaped());
    h += QStringLiteral("<h1>%1</h1><ul>").arg(title.toHtmlEscaped());
    for (const auto& line : settings) h += "<li>" + line.toHtmlEscaped() + "</li>";
    h += QStringLiteral("</ul>");
    for (const auto& m : charted) {
        const auto it = std::find(t.metrics.begin(), t.metrics.end(), m);
        if (it == t.metrics.end()) continue;
        const auto curves = sweepCurves(t, x, static_cast<std::size_t>(it - t.metrics.begin()));
        SweepChart chart;
        chart.resize(900, 420);
        chart.setCurves(QString::fromStdString(x_name), QString::fromStdString(m), log_x, curves);
        chart.setMarker(std::nan(""));
        QString body = QString::fromUtf8(
            drawSvg(QSize(900, 420), QString::fromStdString(m),
                    [&](QCPPainter& p, const QRect&) { chart.toPainter(&p, 900, 420); }));
        const int start = body.indexOf(QStringLiteral("<svg"));
        if (start > 0) body = body.mid(start); // inline: no XML declaration
        h += QStringLiteral("<figure>%1<figcaption>%2 against %3: the mean over seeds, its 95 % "
                            "interval shaded</figcaption></figure>")
                 .arg(body, QString::fromStdString(m).toHtmlEscaped(),
                      QString::fromStdString(x_name).toHtmlEscaped());
    }
    // The table, as the CSV has it.
    h += QStringLiteral("<h2>Table</h2><table>");
    bool head = true;
    for (const QString& line : QString::fromStdString(t.csv()).split('\n', Qt::SkipEmptyParts)) {
        h += QStringLiteral("<tr>");
        for (const QString& cell : line.split(','))
            h += (head ? "<th>" : "<td>") + cell.toHtmlEscaped() + (head ? "</th>" : "</td>");
        h += QStringLiteral("</tr>");
        head = false;
    }
    h += QStringLiteral("</table></body></html>\n");
    return h;
}

} // namespace kairos::views
