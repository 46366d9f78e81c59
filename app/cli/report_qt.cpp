// The report writer of kairos-cli report, in builds with the GUI libraries: the charts
// are painted by the workbench's widgets on an offscreen QApplication.
#include "commands.h"
#include "report.h"
#include "run/sweep.h"
#include "sweep_chart.h"

#include <QApplication>
#include <algorithm>
#include <cstdlib>
#include <memory>

namespace kairos::cli {

namespace {
std::unique_ptr<QApplication> offscreenApp() {
    std::unique_ptr<QApplication> app;
    if (!QApplication::instance()) {
        if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        static int argc = 1;
        static char name[] = "kairos-cli";
        static char* argv[] = {name, nullptr};
        app = std::make_unique<QApplication>(argc, argv);
    }
    return app;
}
} // namespace

void installReportWriter() {
    sweepReportWriter() = [](const sweep::Definition& d, const sweep::Table& t) {
        auto app = offscreenApp();
        std::vector<QString> settings;
        const RunSpec& b = d.base;
        settings.push_back(
            QStringLiteral("workload: %1").arg(QString::fromStdString(b.workload.path)));
        settings.push_back(QStringLiteral("policy: %1, predictor %2")
                               .arg(QString::fromStdString(b.policy.name),
                                    QString::fromStdString(b.policy.predictor)));
        settings.push_back(
            QStringLiteral("profile: %1").arg(QString::fromStdString(b.exec.profile)));
        for (const auto& ax : d.axes)
            settings.push_back(QStringLiteral("axis %1: %2 values (%3)")
                                   .arg(QString::fromStdString(ax.name))
                                   .arg(ax.values.size())
                                   .arg(QString::fromStdString(ax.arg)));
        settings.push_back(QStringLiteral("seeds per point: %1 (the band: the 95 % interval of "
                                          "the mean, t-based)")
                               .arg(d.seeds));
        bool numeric = false;
        const std::vector<double> x = t.lastAxisNumbers(&numeric);
        // Rate-like axes read best on a log scale.
        const bool log_x = !d.axes.empty() && numeric &&
                           (d.axes.back().kind == sweep::AxisKind::Rate ||
                            d.axes.back().kind == sweep::AxisKind::RateScale ||
                            d.axes.back().kind == sweep::AxisKind::KvCapacity) &&
                           *std::min_element(x.begin(), x.end()) > 0;
        const QString html =
            views::sweepReportHtml(QStringLiteral("Kairos sweep"), settings, t, x,
                                   t.axes.empty() ? "" : t.axes.back(), log_x, t.metrics);
        return html.toUtf8().toStdString();
    };
    reportWriter() = [](const RunOutputs& o, const RunOutputs* pinned, bool html, bool pdf) {
        // Widgets need an application; without a display, paint offscreen.
        auto app = offscreenApp();
        views::ReportData d;
        d.workload = o.workload.get();
        d.log = &o.log;
        d.summary = &o.summary;
        d.config = o.config;
        d.spec_json = QString::fromStdString(o.spec_json);
        d.profile_json = QString::fromStdString(o.profile_json);
        d.goodput = o.goodput;
        d.name = QString::fromStdString(o.log.policy);
        if (pinned) {
            d.pinned = &pinned->summary;
            d.pinned_log = &pinned->log;
            d.pinned_name = QString::fromStdString(pinned->log.policy).section('(', 0, 0);
        }
        d.title = QStringLiteral("Kairos report: %1").arg(QString::fromStdString(o.workload->name));
        std::pair<std::string, std::string> docs;
        if (html) docs.first = views::reportHtml(d).toUtf8().toStdString();
        if (pdf) {
            const QByteArray b = views::reportPdfBytes(d);
            docs.second.assign(b.constData(), std::size_t(b.size()));
        }
        return docs;
    };
}

} // namespace kairos::cli
