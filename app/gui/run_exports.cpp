#include "run_exports.h"

#include "chart_tools.h"
#include "export/perfetto.h"
#include "export/requests_csv.h"
#include "export/runlog_jsonl.h"
#include "workbench_state.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>
#include <QWidget>

namespace kairos::app {

RunExports::RunExports(QWidget* window, WorkbenchState* state, JobTracker* jobs, Describe describe)
    : QObject(window), window_(window), state_(state), jobs_(jobs), describe_(std::move(describe)) {
}

std::function<void()> RunExports::exporter(const QString& title, const QString& filter,
                                           Writer write, bool background) {
    return [this, title, filter, write, background] {
        if (!state_->run()) return;
        const QString f =
            QFileDialog::getSaveFileName(window_, title, suggestedName(filter), filter);
        if (f.isEmpty()) return;
        views::rememberDialogChoice(QStringLiteral("export"), f);
        auto done = [this, title, f](const QString& error) {
            if (error.isEmpty())
                Q_EMIT message(tr("wrote %1").arg(f));
            else
                QMessageBox::warning(window_, title, error);
        };
        if (!background) {
            try {
                write(*state_->run(), f.toStdString());
                done({});
            } catch (const std::exception& e) {
                done(QString::fromStdString(e.what()));
            }
            return;
        }
        Q_EMIT message(tr("writing %1…").arg(f));
        jobs_->start(
            QStringLiteral("export"), this,
            [run = state_->run(), write, f, done](JobTracker::Job&) {
                QString error;
                try {
                    write(*run, f.toStdString());
                } catch (const std::exception& e) {
                    error = QString::fromStdString(e.what());
                }
                return std::function<void()>([done, error] { done(error); });
            },
            JobTracker::Keep::All);
    };
}

QString RunExports::suggestedName(const QString& filter) const {
    // "wid1_like-timely_code.pdf": the workload and the policy shown, the filter's extension
    // (the dialog offered no name at all).
    const QRegularExpressionMatch ext =
        QRegularExpression(QStringLiteral("\\*\\.([A-Za-z0-9]+)")).match(filter);
    QString base = QFileInfo(state_->workloadName()).completeBaseName();
    if (state_->run()) {
        const QString policy =
            QString::fromStdString(state_->run()->summary.policy).section(QLatin1Char('('), 0, 0);
        if (!policy.isEmpty()) base += (base.isEmpty() ? QString() : QStringLiteral("-")) + policy;
    }
    if (base.isEmpty()) base = QStringLiteral("kairos");
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
    return views::dialogPath(QStringLiteral("export"),
                             ext.hasMatch() ? base + QLatin1Char('.') + ext.captured(1) : base);
}

void RunExports::writeReport(const RunView& r, const std::string& f, bool pdf) const {
    views::ReportData d;
    d.workload = r.workload.get();
    d.log = r.log.get();
    d.summary = &r.summary;
    d.pinned =
        state_->pinned() && state_->pinned().get() != &r ? &state_->pinned()->summary : nullptr;
    d.pinned_log = d.pinned ? state_->pinned()->log.get() : nullptr;
    d.name = QStringLiteral("%1 on %2")
                 .arg(QString::fromStdString(r.summary.policy), state_->workloadName());
    d.goodput = r.summary_options.goodput;
    d.title = tr("Kairos report: %1").arg(QString::fromStdString(r.workload->name));
    describe_(d, r);
    if (pdf)
        views::writeReportPdf(d, QString::fromStdString(f));
    else
        views::writeReportHtml(d, QString::fromStdString(f));
}

void RunExports::fill(QMenu* exp) {
    // Reports draw their charts with widgets, which live on the GUI thread; the others run
    // on the job tracker.
    auto report = [this](bool pdf) {
        return [this, pdf](const RunView& r, const std::string& f) { writeReport(r, f, pdf); };
    };
    exp->addAction(tr("Report (&HTML)…"), this,
                   exporter(tr("Export report"), tr("HTML (*.html)"), report(false), false));
    exp->addAction(tr("Report (P&DF)…"), this,
                   exporter(tr("Export report"), tr("PDF (*.pdf)"), report(true), false));
    exp->addAction(tr("&Perfetto trace…"), this,
                   exporter(tr("Export Perfetto trace"), tr("Chrome trace (*.json)"),
                            [](const RunView& r, const std::string& f) {
                                writePerfettoFile(*r.log, r.workload.get(), f);
                            }));
    exp->addAction(tr("Per-request &CSV…"), this,
                   exporter(tr("Export per-request metrics"), tr("CSV (*.csv)"),
                            [](const RunView& r, const std::string& f) {
                                writeRequestsCsvFile(*r.log, r.workload.get(), f);
                            }));
    exp->addAction(tr("&Run log…"), this,
                   exporter(tr("Export run log"), tr("Run log (*.jsonl)"),
                            [](const RunView& r, const std::string& f) {
                                writeRunLogJsonlFile(*r.log, f, RunLogWriteOptions{});
                            }));
}

} // namespace kairos::app
