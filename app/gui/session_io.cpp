#include "session_io.h"

#include "chart_area.h"
#include "chart_tools.h"
#include "device_choice.h"
#include "main_window.h"
#include "policy_panel.h"
#include "profiles.h"
#include "util/atomic_file.h"
#include "window_words.h"
#include "workload/readers.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <sstream>

namespace kairos::app {

SessionIO::SessionIO(MainWindow* window) : QObject(window), w_(window) {}

void SessionIO::addActions(QMenu* menu) {
    const QString filter = tr("Kairos session (*.kairos.json *.json)");
    menu->addAction(
        tr("Save s&ession…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this, [this, filter] {
            const QString f = QFileDialog::getSaveFileName(
                w_, tr("Save session"),
                views::dialogPath(QStringLiteral("session"), QStringLiteral("session.kairos.json")),
                filter);
            if (f.isEmpty()) return;
            views::rememberDialogChoice(QStringLiteral("session"), f);
            QString error;
            if (!save(f, &error)) QMessageBox::warning(w_, tr("Save session"), error);
        });
    menu->addAction(
        tr("Open sess&ion…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this, filter] {
            const QString f = QFileDialog::getOpenFileName(
                w_, tr("Open session"), views::dialogPath(QStringLiteral("session")), filter);
            views::rememberDialogChoice(QStringLiteral("session"), f);
            if (!f.isEmpty()) open(f);
        });
}

bool SessionIO::save(const QString& path, QString* error) {
    // Everything to come back to this view: the shown run's RunSpec (with the workload
    // itself when it lives in the window only), the pinned run, and the view.
    if (!w_->state()->workload()) {
        if (error) *error = tr("No workload to save a session of.");
        return false;
    }
    SessionFile f;
    f.run = w_->shownSpec();
    f.label = w_->state()->workloadName().toStdString();
    if (w_->workloadFile().isEmpty()) {
        std::ostringstream out;
        writeKairos(*w_->state()->workload(), out);
        f.embedded = out.str();
        f.embedded_name = w_->state()->workload()->name;
    }
    if (w_->state()->pinned() && w_->state()->pinnedStoredId() >= 0) {
        f.pinned_stored = w_->state()->pinnedStoredId();
        f.pinned_db = w_->databasePath().toStdString();
    } else if (w_->state()->pinned()) {
        f.pinned_spec = w_->state()->pinned()->spec;
    }
    f.view = w_->charts()->viewJson();
    try {
        writeFileAtomically(path.toStdString(),
                            [&](std::ostream& out) { out << f.toJson().dump(2) << "\n"; });
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    Q_EMIT message(tr("session saved to %1").arg(path));
    return true;
}

void SessionIO::open(const QString& path) {
    // Read and parse (an embedded workload can be large) and resolve its device off the GUI
    // thread; then set everything, simulate once, pin, and restore the view when the run is
    // shown.
    Q_EMIT message(tr("opening session %1…").arg(path));
    w_->jobs().start(QStringLiteral("load"), this, [this, path](JobTracker::Job& job) {
        auto read = std::make_shared<OpenedSession>();
        QString error;
        try {
            *read = readSession(path.toStdString(), runContext(), &job.progress, &job.cancel);
        } catch (const ReadCancelled&) {
            error = tr("cancelled");
        } catch (const std::exception& e) {
            error = views::windowWords(QString::fromStdString(e.what()));
        }
        return std::function<void()>([this, path, read, error] {
            if (!error.isEmpty()) {
                Q_EMIT message(tr("cannot open session %1: %2").arg(path, error));
                auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open session"), error,
                                            QMessageBox::Ok, w_);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
                Q_EMIT opened(false);
                return;
            }
            apply(*read);
        });
    });
}

void SessionIO::apply(const OpenedSession& s) {
    // The device and the workload with no run per setting; then the session's spec is the
    // window's (every part of it, what no panel shows too), with a new undo history, and runs.
    RunSpec spec = s.file.run;
    w_->quietly([&] {
        if (s.device) {
            w_->device()->set(s.file.run.exec, s.device);
        } else {
            Q_EMIT message(tr("the session's device cannot be used (%1); %2 is")
                               .arg(QString::fromStdString(s.device_error))
                               .arg(QString::fromStdString(w_->device()->profile().name)));
        }
        const std::string& name =
            s.file.label.empty()
                ? (s.workload->name.empty() ? std::string("session") : s.workload->name)
                : s.file.label;
        const QString label = QString::fromStdString(name);
        w_->setWorkload(
            s.workload, label.section(QStringLiteral("</b>"), 0, 0).remove(QStringLiteral("<b>")),
            s.file.embedded.empty()
                ? QFileInfo(QString::fromStdString(s.file.run.workload.path)).absoluteFilePath()
                : QString());
    });
    spec.exec = w_->device()->exec();
    spec.workload.path = w_->shownSpec().workload.path; // the workload as opened
    pending_view_ = s.file.view;
    w_->adoptSpec(spec);
    // The pinned run: a stored one read again, or this window's re-run from its spec.
    if (s.file.pinned_stored >= 0) {
        w_->pinStoredRun(s.file.pinned_stored);
    } else if (s.file.pinned_spec) {
        RunSpec pinned = *s.file.pinned_spec;
        pinned.workload.path = w_->shownSpec().workload.path; // the workload shown, as it was
        w_->jobs().start(
            QStringLiteral("pin"), this,
            [this, pinned, ctx = w_->windowContext()](JobTracker::Job& job) {
                RunContext c = ctx;
                c.cancel = &job.cancel;
                c.progress = &job.progress;
                auto r = std::make_shared<const RunView>(SimRunner::run(pinned, c, job.id));
                return std::function<void()>([this, r] {
                    if (!r->error.isEmpty()) {
                        Q_EMIT message(tr("the session's pinned run failed: %1").arg(r->error));
                        return;
                    }
                    w_->state()->setPinned(r);
                    w_->refreshComparison();
                });
            });
    }
}

void SessionIO::runShown() {
    if (!pending_view_.is_object()) return;
    // After the session's first run is shown: the view as it was saved.
    const nlohmann::json v = std::move(pending_view_);
    pending_view_ = nullptr;
    w_->charts()->restoreView(v);
    Q_EMIT opened(true);
}

} // namespace kairos::app
