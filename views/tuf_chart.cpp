#include "tuf_chart.h"

#include "chart_style.h"
#include "chart_tools.h"
#include "metrics/robot_metrics.h"

#include <algorithm>
#include <cmath>

namespace kairos::views {

std::vector<TufClass> tufClasses(const RunLog& log, const Workload& w, const Summary& s) {
    std::vector<TufClass> out;
    for (const RobotTask& t : robotTasks(log, w)) {
        const Request& q = w.requests[static_cast<std::size_t>(t.id)];
        if (!q.tuf || std::isnan(t.response)) continue;
        auto it =
            std::find_if(out.begin(), out.end(), [&](const TufClass& k) { return k.cls == t.cls; });
        if (it == out.end()) {
            out.push_back({t.cls, *q.tuf, {}, 0});
            for (const auto& k : s.robot)
                if (k.cls == t.cls) out.back().utility_pct = k.utilityPercent();
            it = std::prev(out.end());
        }
        it->tasks.emplace_back(t.response, q.tuf->signedValue(t.response));
    }
    return out;
}

TufChart::TufChart(QWidget* parent) : QCustomPlot(parent) {
    applyPalette(this, QPalette::Base);
    xAxis->setLabel(tr("response time W(s0) (s)"));
    yAxis->setLabel(tr("utility")); // the legend says of what: a longer label was cut at 1366x768
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    // Placed at every replot, against the plot's size then (a resize or a drag moves it).
    connect(this, &QCustomPlot::beforeReplot, this, &TufChart::placeLegend);
    sayWhenEmpty(this, QString()); // its own message says why it is empty; no empty legend
}

QColor TufChart::classColor(const std::string& cls) {
    // By the class's name, not its place in a workload: "urgent" is red and "normal" blue in
    // every workload (they swapped between workloads whose first class differed); another
    // name takes a palette colour by its hash (FNV-1a), the same in every run.
    static const QColor c[] = {QColor(0xe0, 0x3e, 0x3e), QColor(0x2f, 0x80, 0xed),
                               QColor(0x27, 0xae, 0x60), QColor(0x9b, 0x59, 0xb6),
                               QColor(0xf5, 0xa6, 0x23)};
    if (cls == "urgent") return c[0];
    if (cls == "normal") return c[1];
    std::uint32_t h = 2166136261u;
    for (unsigned char ch : cls) h = (h ^ ch) * 16777619u;
    return c[2 + h % 3];
}

void TufChart::setClasses(const std::vector<TufClass>& classes) {
    clearGraphs();
    clearItems();
    // The x range: every curve to 1.4x its zero-utility time, and the tasks to their 99th
    // percentile response time.
    double xmax = 0, ymax = 0, ymin = 0;
    std::vector<double> times;
    for (const TufClass& k : classes) {
        const double zero = std::isfinite(k.tuf.zeroTime()) ? k.tuf.zeroTime() : k.tuf.ert * 2 + 1;
        xmax = std::max(xmax, zero * 1.4);
        for (const auto& p : k.tasks) times.push_back(p.first);
    }
    double latest = 0;
    if (!times.empty()) {
        std::sort(times.begin(), times.end());
        latest = times.back();
        const std::size_t at = (times.size() - 1) * 99 / 100;
        xmax = std::max(xmax, times[at] * 1.05);
    }
    xmax = std::max(1.0, xmax);
    beyond_ = below_ = 0;
    for (std::size_t i = 0; i < classes.size(); ++i) {
        const TufClass& k = classes[i];
        const QColor col = classColor(k.cls);
        ymax = std::max(ymax, k.tuf.beta);
        QCPGraph* curve = addGraph();
        curve->setName(tr("%1: %2 % of max (first response)")
                           .arg(QString::fromStdString(k.cls))
                           .arg(k.utility_pct, 0, 'f', 1));
        curve->setPen(QPen(col, 2));
        QVector<double> x, y;
        for (int s = 0; s <= 200; ++s) {
            const double t = xmax * s / 200.0;
            x.push_back(t);
            y.push_back(k.tuf.signedValue(t)); // negative past the cut-off, as scored
        }
        // Show the curve down to where the late tasks are, but not past -3 beta (a task
        // seconds late would flatten the rest; its point sits at the lower edge).
        const double floor = -3 * k.tuf.beta;
        ymin = std::min(ymin, std::max(floor, k.tuf.signedValue(xmax)));
        curve->setData(x, y, true);
        QCPGraph* pts = addGraph();
        pts->removeFromLegend();
        pts->setLineStyle(QCPGraph::lsNone);
        QColor fill = col;
        fill.setAlpha(90);
        pts->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, col, fill, 5));
        QVector<double> px, py;
        for (const auto& [t, u] : k.tasks) {
            if (t > xmax) {
                ++beyond_;
                continue;
            }
            if (u < floor) ++below_;
            px.push_back(t);
            py.push_back(std::max(u, floor));
            ymin = std::min(ymin, py.back());
        }
        pts->setData(px, py);
    }
    note_.clear();
    if (beyond_ > 0)
        note_ = tr("%n task(s) beyond %1 s (the latest at %2 s)", nullptr, beyond_)
                    .arg(xmax, 0, 'g', 3)
                    .arg(latest, 0, 'g', 3);
    if (below_ > 0)
        note_ += (note_.isEmpty() ? QString() : QStringLiteral("; ")) +
                 tr("%n task(s) below -3x the utility, drawn at that floor", nullptr, below_);
    xAxis->setRange(0, xmax);
    const double top = std::max(1.0, ymax);
    yAxis->setRange(std::min(ymin, 0.0) - 0.05 * top, top * 1.1);
    // The note in a row of its own above the plot: on the plot it would hide what it counts.
    if (note_.isEmpty() && note_element_) {
        plotLayout()->remove(note_element_);
        plotLayout()->simplify();
        note_element_ = nullptr;
    } else if (!note_.isEmpty()) {
        if (!note_element_) {
            plotLayout()->insertRow(0);
            note_element_ = new QCPTextElement(this, note_);
            note_element_->setTextColor(palette().color(QPalette::Text));
            note_element_->setTextFlags(Qt::AlignRight | Qt::AlignVCenter);
            note_element_->setMargins(QMargins(0, 4, 10, 0));
            plotLayout()->addElement(0, 0, note_element_);
        }
        note_element_->setText(note_);
    }
    if (classes.empty()) {
        auto* text = new QCPItemText(this);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.5);
        text->setText(
            tr("This workload has no time-utility functions (robot or TUF workloads have)"));
        text->setColor(palette().color(QPalette::Text));
    }
    replot(QCustomPlot::rpQueuedReplot);
}

void TufChart::placeLegend() {
    // Below the plot, where it hides nothing: in a corner it sat on the urgent curve, or on
    // tasks at some window sizes.
    legend_corner_ = views::placeLegend(this, nullptr, true);
}

} // namespace kairos::views
