// The report writer of kairos-cli report, in builds with the GUI libraries: the charts
// are painted by the workbench's widgets on an offscreen QApplication.
#include "commands.h"
#include "report.h"

#include <QApplication>
#include <cstdlib>
#include <memory>

namespace kairos::cli {

void installReportWriter() {
    reportWriter() = [](const RunOutputs& o, const RunOutputs* pinned, bool html, bool pdf) {
        // Widgets need an application; without a display, paint offscreen.
        std::unique_ptr<QApplication> app;
        if (!QApplication::instance()) {
            if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY"))
                qputenv("QT_QPA_PLATFORM", "offscreen");
            static int argc = 1;
            static char name[] = "kairos-cli";
            static char* argv[] = {name, nullptr};
            app = std::make_unique<QApplication>(argc, argv);
        }
        views::ReportData d;
        d.workload = &o.workload;
        d.log = &o.log;
        d.summary = &o.summary;
        d.config = o.config;
        if (pinned) {
            d.pinned = &pinned->summary;
            d.pinned_log = &pinned->log;
        }
        d.title = QStringLiteral("Kairos report: %1").arg(QString::fromStdString(o.workload.name));
        std::pair<std::string, std::string> docs;
        if (html) docs.first = views::reportHtml(d, true).toUtf8().toStdString();
        if (pdf) {
            const QByteArray b = views::reportPdfBytes(d);
            docs.second.assign(b.constData(), std::size_t(b.size()));
        }
        return docs;
    };
}

} // namespace kairos::cli
