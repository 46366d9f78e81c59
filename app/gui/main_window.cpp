#include "main_window.h"

#include "chart_area.h"
#include "chart_tools.h"
#include "device_choice.h"
#include "export/runlog_jsonl.h"
#include "find_bar.h"
#include "generate_dialog.h"
#include "help_menu.h"
#include "in_view.h"
#include "inspector_panel.h"
#include "job_progress.h"
#include "length_histogram.h"
#include "live_panel.h"
#include "metrics/waits.h"
#include "metrics_panel.h"
#include "model_chart.h"
#include "models_panel.h"
#include "param_slider.h"
#include "policy_panel.h"
#include "profiles.h"
#include "recent_files.h"
#include "report.h"
#include "requests_panel.h"
#include "run/knobs.h"
#include "run/pipeline.h"
#include "run_exports.h"
#include "runs_panel.h"
#include "scrolling.h"
#include "session_io.h"
#include "spec_undo.h"
#include "store/store.h"
#include "stored_runs.h"
#include "sweep_panel.h"
#include "time_range.h"
#include "timeline_view.h"
#include "trace_formats.h"
#include "util/atomic_file.h"
#include "util/heap_reuse.h"
#include "util/input_file.h"
#include "view_history.h"
#include "wheel_guard.h"
#include "window_words.h"
#include "workload/readers.h"

#include <QChildEvent>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QScopedValueRollback>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTableView>
#include <QThreadPool>
#include <QTimer>
#include <QUndoStack>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

namespace kairos::app {

namespace {
// "cannot open PATH: ERROR", the path once: the readers' errors name their file already
// ("cannot open x.jsonl: x.jsonl: no such file" said it twice).
QString cannotOpen(const QString& path, const QString& error) {
    return error.contains(path) || error.contains(QFileInfo(path).fileName())
               ? QObject::tr("cannot open: %1").arg(error)
               : QObject::tr("cannot open %1: %2").arg(path, error);
}
// The docks' arrangement as QMainWindow::saveState writes it, versioned: a layout saved
// before a dock existed (the Requests panel came in 2) is not restored over one that has it
// (it left the new dock squeezed beside the Inspector's group).
constexpr int kLayoutVersion = 2;
} // namespace

MainWindow::MainWindow(const StartOptions& opt, QWidget* parent)
    : QMainWindow(parent), start_(opt), state_(new WorkbenchState(this)), runner_(&jobs_) {
    setWindowTitle(QStringLiteral("Kairos"));
    keepFreedMemoryForReuse(); // a re-run reuses the last one's pages (util/heap_reuse.h)
    installWheelGuard();       // the wheel scrolls the panels; it edits only a focused control
    // The window's files (charts, reports, sessions, exports) are files: a device or a pipe
    // chosen in a Save dialog is refused, never written into or replaced (util/atomic_file.h).
    outputsFilesOnly(true);
    // Nor a file the window has read (a workload, the drone traces beside a TimelyLLM one, a
    // profile, measurements, a database), but the session it opened, which Save writes
    // over (SessionIO::open forgets it as an input).
    guardProcessInputs(true);
    device_ = new DeviceChoice(
        &jobs_, opt.profile.isEmpty() ? std::string(kAutoProfile) : opt.profile.toStdString(),
        this);
    cache_.keepTransformed(2); // the shown rate and the pinned run's
    for (const auto& [k, v] : parsePolicyParams([&] {
             std::vector<std::string> items;
             for (const QString& p : opt.params) items.push_back(p.toStdString());
             return items;
         }()))
        extra_params_[k] = v;
    for (const auto& [k, v] : extra_params_) policy_params_[start_.policy.toStdString()][k] = v;
    buildUi();
    for (const QString& p : {start_.policy, start_.compare})
        if (!p.isEmpty() && !policy_panel_->knowsPolicy(p))
            throw std::invalid_argument("unknown policy: " + p.toStdString());
    connect(&runner_, &SimRunner::finished, this, &MainWindow::showResult);
    if (!opt.open.isEmpty())
        openFile(opt.open);
    else if (!opt.workload.isEmpty())
        openWorkload(opt.workload);
}

MainWindow::FileKind MainWindow::fileKind(const QString& path) {
    // The first 4 KiB: a run log's header is its first line; a session is a JSON object
    // whose first key is kairos_session (SessionFile::toJson writes it first).
    // Only a regular file is looked into (a FIFO would block the window here); anything
    // else goes to the workload reader, which refuses it naming the path.
    if (!QFileInfo(path).isFile()) return FileKind::Workload;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return FileKind::Workload; // its reader says why
    const QByteArray head = f.read(4096);
    const QByteArray first = head.left(head.indexOf('\n') < 0 ? head.size() : head.indexOf('\n'));
    if (first.contains("\"kairos_runlog\"")) return FileKind::RunLog;
    if (head.trimmed().startsWith('{') && head.contains("\"kairos_session\""))
        return FileKind::Session;
    return FileKind::Workload;
}

void MainWindow::openFile(const QString& path) {
    switch (fileKind(path)) {
    case FileKind::Session:
        sessions_->open(path);
        return;
    case FileKind::RunLog:
        openRunLog(path);
        return;
    case FileKind::Workload:
        openWorkload(path);
        return;
    }
}

void MainWindow::openRunLog(const QString& path) {
    progress_->started();
    say(tr("reading run log %1…").arg(path));
    const SummaryOptions so = windowSummary();
    jobs_.start(QStringLiteral("load"), this, [this, path, so](JobTracker::Job& job) {
        std::shared_ptr<const RunView> view;
        QString error;
        try {
            std::istringstream in(readInputFile(path.toStdString(), limits::kRunLog));
            auto log = std::make_shared<RunLog>(readRunLogJsonl(in, path.toStdString()));
            auto w = std::make_shared<const Workload>(workloadOfRunLog(*log));
            auto r = std::make_shared<RunView>(SimRunner::fromLog(std::move(log), w, so, job.id));
            if (!r->error.isEmpty()) throw std::runtime_error(r->error.toStdString());
            view = std::move(r);
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, path, view, error] {
            if (!error.isEmpty()) {
                progress_->done();
                showOpenError(cannotOpen(path, error));
                if (!state_->run()) start_error_ = error;
                auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open run log"), error,
                                            QMessageBox::Ok, this);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
                Q_EMIT workloadLoaded(false);
                if (!state_->run()) Q_EMIT ready();
                return;
            }
            // Its requests as the workload, its policy in the panel, no simulation: the run
            // is shown as recorded.
            quietly([&] {
                setWorkload(view->workload, QFileInfo(path).fileName());
                const QString policy = QString::fromStdString(view->policy.name);
                if (policy_panel_->knowsPolicy(policy)) policy_panel_->setPolicy(policy);
                policy_panel_->setReplicas(view->log->replicas);
                if (view->log->fleet())
                    policy_panel_->setRouter(QString::fromStdString(view->log->router));
                policy_panel_->setPrefixCaching(view->log->prefix_caching);
            });
            undo_->reset(panelSpec()); // the log's settings, a new undo history
            recent_->remember(path);
            showResult(view);
            say(tr("run log %1 shown as recorded (%2, %3 requests; not re-simulated: a control "
                   "moved now simulates its requests under the window's settings)")
                    .arg(QFileInfo(path).fileName(), QString::fromStdString(view->log->policy))
                    .arg(view->log->num_requests));
            Q_EMIT workloadLoaded(true);
        });
    });
}

void MainWindow::showOpenError(const QString& message) {
    // Whole over the empty timeline too when no run is shown: a reader's error (its line,
    // column and what it expected) is longer than the status bar.
    say(message);
    if (!state_->run()) charts_->timeline()->setStale(message);
}

void MainWindow::say(const QString& message, int timeout_ms) {
    // Drawn left of the permanent widgets (the device label first): cut there with an
    // ellipsis (it cut mid-word: "predictor=trail(bins=10, ev", "...parsing o"), whole on
    // hover.
    const QWidget* device = device_ ? device_->label() : nullptr;
    const int room = (device && device->isVisible() && device->x() > 0 ? device->x()
                                                                       : statusBar()->width() / 2) -
                     16;
    statusBar()->setToolTip(message);
    QString shown = message;
    if (room > 80 && statusBar()->fontMetrics().horizontalAdvance(message) > room) {
        // Cut between words, not inside a value ("bins=1…" read as bins=1 where it was 10).
        shown = statusBar()->fontMetrics().elidedText(message, Qt::ElideRight, room);
        shown.chop(1); // the ellipsis
        const int space = shown.lastIndexOf(QLatin1Char(' '));
        if (space > shown.size() / 2) shown.truncate(space);
        while (shown.endsWith(QLatin1Char(',')) || shown.endsWith(QLatin1Char(';')) ||
               shown.endsWith(QLatin1Char(':')))
            shown.chop(1);
        shown += QStringLiteral(" …");
    }
    statusBar()->showMessage(shown, timeout_ms);
}

MainWindow::~MainWindow() {
    jobs_.shutdown(); // cancels every job and waits: nothing runs past the window
}

SweepBase MainWindow::sweepBase() const {
    SweepBase b;
    b.spec = shownSpec();
    b.workload = state_->workload();
    b.profile = device_->profile();
    b.params =
        sweepParams([this](const QString& name) { return policy_panel_->slider(name)->value(); });
    return b;
}

RunSpec MainWindow::panelSpec() const {
    RunSpec s = state_->spec(); // what no panel sets stays as it is (a session's, a spec's)
    const std::string path =
        workload_file_.isEmpty() ? std::string(kMemoryWorkload) : workload_file_.toStdString();
    if (s.workload.path != path) { // another workload: its own part, from its defaults
        s.workload = {};
        s.workload.path = path;
    }
    s.exec = device_->exec();
    // Values without a slider go to the policy they were given for (--param, the parameter
    // table, a session); the sliders' are specInto's.
    s.policy.params.clear();
    if (auto it = policy_params_.find(policy_panel_->policy().toStdString());
        it != policy_params_.end())
        for (const auto& [k, v] : it->second)
            if (!policy_panel_->sliderSets(it->first, k)) s.policy.params[k] = v;
    policy_panel_->specInto(&s, device_->profile().kvCapacityTokens());
    return s;
}

void MainWindow::panelEdited(const QString& what) {
    if (restoring_ || !state_->workload()) return; // a workload opened takes the panels' spec
    const RunSpec next = panelSpec();
    try {
        next.validate(); // the window's domains are the spec's: no second list
    } catch (const std::exception& e) {
        say(tr("%1 not changed: %2")
                .arg(what, views::windowWords(QString::fromStdString(e.what()))),
            10000);
        showSpec(state_->spec());
        return;
    }
    undo_->edit(next, what); // specChanged(Edit): it runs
}

namespace {
bool sameExec(const RunSpec::ExecPart& a, const RunSpec::ExecPart& b) {
    return std::tie(a.profile, a.gpu_mem_gib, a.mem_fraction, a.model_id, a.model_config, a.db) ==
           std::tie(b.profile, b.gpu_mem_gib, b.mem_fraction, b.model_id, b.model_config, b.db);
}
} // namespace

void MainWindow::showSpec(const RunSpec& spec) {
    quietly([&] {
        // The parameters without a slider are the policy's from now on (its table shows them).
        PolicyParams& extra = policy_params_[spec.policy.name];
        extra.clear();
        for (const auto& [k, v] : spec.policy.params)
            if (!policy_panel_->sliderSets(spec.policy.name, k)) extra[k] = v;
        policy_panel_->applySpec(spec, device_->profile().kvCapacityTokens());
        policy_panel_->showOtherParams(extra);
    });
    if (!sameExec(spec.exec, device_->exec())) {
        device_pending_ = true; // resolved off the GUI thread; it runs then
        device_->use(spec.exec);
    }
}

void MainWindow::adoptSpec(const RunSpec& spec) {
    showSpec(spec);
    undo_->reset(spec);
    resimulate();
}

void MainWindow::quietly(const std::function<void()>& change) {
    const QScopedValueRollback<bool> quiet(restoring_, true);
    change();
}

RunContext MainWindow::windowContext() const {
    RunContext c = runContext();
    c.cache = &cache_;
    c.exec = device_->resolved();
    return c;
}

void MainWindow::showInspector() {
    inspector_dock_->show();
    inspector_dock_->raise();
    // Its table and reasons want width, but the timeline keeps at least 60 % of the
    // window: the right column gets what the left one leaves of the other 40 %, the first
    // time and whenever it has grown past that, but never less than the Inspector's table
    // needs to show every column whole (TimeBill's, the widest, needs about 470 px). At
    // 1920 px the timeline keeps 60 %; at 1366 the right column's panels' own minimums
    // (Metrics, Sweep: 360 px) and that table leave it about half.
    inspector_widened_ = true;
    QTimer::singleShot(0, this, [this] { keepTimelineWide(); });
}

int MainWindow::leftDockWidth() const {
    int left = 0;
    for (QDockWidget* d : findChildren<QDockWidget*>())
        if (d->isVisible() && !d->isFloating() && dockWidgetArea(d) == Qt::LeftDockWidgetArea)
            left = std::max(left, d->width());
    return left;
}

int MainWindow::rightColumnRoom(const QDockWidget* dock) const {
    // The width beside the docks that is neither (separators, the central widget's margins),
    // as laid out now with `dock` in the right column: the timeline keeps 60 % exactly.
    const int left = leftDockWidth();
    const int other = std::max(0, width() - left - dock->width() - charts_->timeline()->width());
    return width() - left - other - (width() * 3 + 4) / 5;
}

void MainWindow::fitDockTo(QDockWidget* dock, const QWidget* content, int width, int least,
                           int room, bool widen_only) {
    // The content's width and what the dock puts around it (its frame, the panel's scroll
    // area): fitted to the table alone, a pinned Metrics table's change column was cut.
    const int chrome = std::max(0, dock->width() - content->width());
    // The size given is the column's, the group's tab bar on its edge included (without it
    // the Metrics dock came out 26 px short).
    int tabs = 0;
    for (const QTabBar* bar : findChildren<QTabBar*>())
        if (bar->isVisible() && bar->shape() == QTabBar::RoundedEast)
            for (int i = 0; i < bar->count(); ++i)
                if (bar->tabText(i) == dock->windowTitle()) tabs = bar->width();
    const int want = std::max(std::min(width + chrome, room), least + chrome) + tabs;
    if (!widen_only || want > dock->width() + tabs) resizeDocks({dock}, {want}, Qt::Horizontal);
}

void MainWindow::fitMetricsDock() {
    // Only while it is the panel in view: another of its tab group (the Inspector, the
    // Requests table the user widened) keeps its width.
    if (!metrics_dock_ || !inView(metrics_dock_)) return;
    // A pinned run's two more columns (pinned, change) get up to 38 % of the window.
    const int room = metrics_->columns() > 2 ? int(width() * 0.38) : rightColumnRoom(metrics_dock_);
    fitDockTo(metrics_dock_, metrics_->table(), metrics_->wantedWidth(),
              metrics_->minimumTableWidth(), room);
}

void MainWindow::keepTimelineWide() {
    // The Inspector in view only: behind another tab of its group Qt still counts it
    // visible, and sizing the column for it took a pinned Metrics table's change column.
    if (!inView(inspector_dock_) || inspector_dock_->isFloating()) return;
    const int room = std::max(inspector_->neededWidth(), rightColumnRoom(inspector_dock_));
    if (inspector_dock_->width() > room || inspector_dock_->width() < inspector_->neededWidth() ||
        (inspector_dock_->width() < std::min(room, int(width() * 0.36)) && !inspector_sized_)) {
        resizeDocks({inspector_dock_}, {room}, Qt::Horizontal);
        inspector_sized_ = true;
    }
}

QDockWidget* MainWindow::addPanel(const QString& title, const char* name, QWidget* panel,
                                  Qt::DockWidgetArea area, QDockWidget* tab_with, bool scrolls) {
    auto* dock = new QDockWidget(title, this);
    dock->setObjectName(QString::fromLatin1(name)); // kairos --dock NAME raises it
    if (scrolls) {
        // A panel of the right column's tab group holds the column at its own width only
        // while it is the one in view: the widest of them (Sweep, 356 px) kept the timeline
        // at 52 % of a 1366-pixel window whichever panel was in view. In view, its least
        // width is its own again (dragged narrower, Sweep's controls ran off the edge).
        QScrollArea* scroll = scrolling(panel);
        dock->setWidget(scroll);
        connect(dock, &QDockWidget::visibilityChanged, this, [dock, scroll, panel](bool shown) {
            scroll->setMinimumWidth(
                shown && !dock->isFloating() ? panel->minimumSizeHint().width() + 4 : 0);
        });
    } else {
        dock->setWidget(panel);
    }
    addDockWidget(area, dock);
    if (tab_with) tabifyDockWidget(tab_with, dock);
    return dock;
}

void MainWindow::buildUi() {
    // The timeline under the find bar, over the KV, CDF and utility charts (chart_area.h),
    // with Back / Forward through the views before the search field.
    charts_ = new ChartArea(state_);
    setCentralWidget(charts_);
    history_ = new ViewHistory(state_, state_->range(), charts_->findBar(), this);
    charts_->findBar()->addLeading(history_->backButton());
    charts_->findBar()->addLeading(history_->forwardButton());

    // Policy panel (policy_panel.h): the workload, the policy, predictor and device, the
    // sliders, the TUF sliders and the request card. The window reacts to its controls.
    policy_panel_ =
        new PolicyPanel(start_.compare.isEmpty() ? start_.policy : start_.compare, start_.predictor,
                        QString::fromStdString(device_->profile().name), extra_params_);
    auto* panel = policy_panel_;
    // Serving as the command line asked (before any signal is connected: no re-run).
    policy_panel_->setPrefixCaching(start_.prefix_caching);
    policy_panel_->setReplicas(start_.replicas);
    policy_panel_->setRouter(start_.router);
    policy_panel_->attach(state_);
    undo_ = new SpecUndo(state_, this);
    // The spec changed: by the user (it runs), or by Undo and Redo (the panels show it, and
    // it runs once its device is resolved). A workload, session or run log opened runs itself.
    connect(state_, &WorkbenchState::specChanged, this, [this](SpecChange why) {
        if (why == SpecChange::Undo) {
            showSpec(state_->spec());
            if (device_pending_) return;
        }
        if (why != SpecChange::Reset) resimulate();
    });
    connect(policy_panel_, &PolicyPanel::openRequested, this, [this] {
        const QString f = QFileDialog::getOpenFileName(
            this, tr("Open workload"), views::dialogPath(QStringLiteral("workload")),
            traceFileFilter());
        views::rememberDialogChoice(QStringLiteral("workload"), f);
        if (!f.isEmpty()) openWorkload(f);
    });
    connect(policy_panel_, &PolicyPanel::generateRequested, this, &MainWindow::generateWorkload);
    charts_->addChart(QStringLiteral("lengths"), [this](const QString& path) {
        views::saveChart(policy_panel_->histogram(), path);
    });
    connect(policy_panel_, &PolicyPanel::deviceChosen, this, [this](const QString& name) {
        RunSpec::ExecPart e;
        e.profile = name.toStdString();
        useExecution(e);
    });
    connect(policy_panel_, &PolicyPanel::paramMoved, this,
            [this](const QString& name, double moved) {
                // Named as the panel labels it ("max running", not "seqs") in the Edit menu.
                QString label = name;
                for (const SliderSpec& sp : sliderSpecs())
                    if (QString::fromStdString(sp.name) == name &&
                        appliesTo(sp, policy_panel_->policy().toStdString()))
                        label = QString::fromStdString(sp.label);
                panelEdited(label);
                if (sweep_) sweep_->sliderMoved(name, moved);
            });
    connect(policy_panel_, &PolicyPanel::tufMoved, this, &MainWindow::panelEdited);
    connect(policy_panel_, &PolicyPanel::sweepRequested, this, [this](const QString& name) {
        sweep_dock_->show();
        sweep_dock_->raise();
        sweep_->sweep(name);
    });
    QScrollArea* scroll = scrolling(panel); // many TUF classes or a small screen: never clip
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Labels, sliders and spin boxes whole, whatever the other docks want (no horizontal
    // scroll bar: a narrower dock clipped the spin boxes).
    const int policy_min = std::max(250, panel->minimumSizeHint().width() +
                                             scroll->verticalScrollBar()->sizeHint().width());
    scroll->setMinimumWidth(policy_min);
    // A policy whose parameter table needs more (long names such as gain_admission): the
    // panel widens to show every word of it whole, once, not on every re-run.
    connect(panel, &PolicyPanel::tableWidthNeeded, this, [scroll, policy_min](int need) {
        const int want =
            std::max(policy_min, need + scroll->verticalScrollBar()->sizeHint().width());
        if (want > scroll->minimumWidth()) scroll->setMinimumWidth(want);
    });
    // Another policy: a panel widened for the last one's table narrows again (the next
    // table asks for what it needs): it stayed 28 px wider after TimeBill at 1366x768.
    connect(panel, &PolicyPanel::policyChanged, this, [this, scroll, policy_min] {
        if (scroll->minimumWidth() <= policy_min) return;
        scroll->setMinimumWidth(policy_min);
        QTimer::singleShot(0, this, [this] { fitPolicyDock(true); });
    });
    policy_dock_ = addPanel(tr("Policy"), "policy", scroll, Qt::LeftDockWidgetArea);

    metrics_ = new MetricsPanel;
    metrics_->setObjectName(QStringLiteral("metricsPanel"));
    connect(metrics_, &MetricsPanel::pinRequested, this, &MainWindow::pin);
    connect(metrics_, &MetricsPanel::unpinRequested, this, &MainWindow::unpin);
    metrics_->attach(state_, [this] { return charts_->pinnedName(); });
    // Fit the metrics dock to its columns when they change (the pinned and change columns
    // come with a pin and go with it), within what leaves the timeline 60 % of the window
    // beside the Policy panel (a metric's long name is elided, whole in its tooltip): it
    // once widened on every re-run, never shrank, and squeezed the Policy panel to a sliver
    // at 1366x768; at 38 % of the window it left the timeline 44 % there.
    connect(metrics_, &MetricsPanel::columnsChanged, this, &MainWindow::fitMetricsDock);
    metrics_dock_ = addPanel(tr("Metrics"), "metrics", metrics_);

    // Runs browser: the database's runs, newest first; double-click pins one.
    db_path_ =
        start_.db.isEmpty() ? QString::fromStdString(store::Store::defaultPath()) : start_.db;
    runs_ = new RunsPanel(&jobs_, db_path_);
    runs_->setObjectName(QStringLiteral("runsPanel"));
    connect(runs_, &RunsPanel::saveRequested, this, &MainWindow::saveRun);
    connect(runs_, &RunsPanel::compareRequested, this, &MainWindow::pinStoredRun);
    connect(runs_, &RunsPanel::sweepsRequested, this, [this] {
        sweep_dock_->show();
        sweep_dock_->raise();
        sweep_->chooseStored();
    });
    connect(runs_, &RunsPanel::modelsRead, this,
            [this](const std::vector<store::ModelInfo>& m) { models_->setModels(m); });
    connect(runs_, &RunsPanel::refreshed, this, &MainWindow::runsRefreshed);
    stored_ = new StoredRuns(&jobs_, state_, runs_, db_path_, this);
    sessions_ = new SessionIO(this);
    connect(sessions_, &SessionIO::opened, this, &MainWindow::sessionOpened);
    // --open of a session that cannot be read: nothing to show (a script's error).
    connect(sessions_, &SessionIO::opened, this, [this](bool ok) {
        if (ok || state_->run() || start_.open.isEmpty()) return;
        start_error_ = tr("cannot open session %1").arg(start_.open);
        Q_EMIT ready();
    });
    connect(sessions_, &SessionIO::message, this, [this](const QString& m) { say(m); });
    connect(stored_, &StoredRuns::saved, this, &MainWindow::runSaved);
    connect(stored_, &StoredRuns::pinned, this, [this](qint64 id, bool ok) {
        if (ok) refreshComparison();
        Q_EMIT storedRunPinned(id, ok);
    });
    connect(stored_, &StoredRuns::message, statusBar(), [this](const QString& m) { say(m); });
    auto* runs_dock =
        addPanel(tr("Runs"), "runs", runs_, Qt::RightDockWidgetArea, metrics_dock_, true);
    // Raised, the Runs table gets the width of its columns, up to 30 % of the window (or the
    // timeline's 60 % rule where that leaves more): at 1920x1080 it stood at 380 px with its
    // columns cut ("requ...") beside a 900-pixel timeline.
    connect(runs_dock, &QDockWidget::visibilityChanged, this, [this, runs_dock](bool shown) {
        if (!shown) return;
        QTimer::singleShot(0, this, [this, runs_dock] {
            if (!inView(runs_dock) || runs_dock->isFloating()) return;
            const QTableView* view = runs_->view();
            int columns = 2 * view->frameWidth() + view->verticalScrollBar()->sizeHint().width();
            for (int c = 0; c < view->model()->columnCount(); ++c)
                if (!view->isColumnHidden(c)) columns += view->columnWidth(c);
            fitDockTo(runs_dock, view, columns, 0,
                      std::max(rightColumnRoom(runs_dock), int(width() * 0.3)), true);
        });
    });
    // Models: the fitted models in the database, the selected one plotted (models_panel.h).
    models_ = new ModelsPanel(&jobs_, db_path_);
    models_->setObjectName(QStringLiteral("modelsPanel"));
    charts_->addChart(QStringLiteral("model"),
                      [this](const QString& path) { views::saveChart(models_->chart(), path); });
    connect(models_, &ModelsPanel::modelShown, this, &MainWindow::modelShown);
    connect(models_, &ModelsPanel::message, this, [this](const QString& m) { say(m); });
    connect(models_, &ModelsPanel::useModel, this, [this](qint64 id, const QString& config) {
        RunSpec::ExecPart e;
        e.profile = device_->profile().name;
        e.model_id = id;
        e.model_config = config.toStdString();
        e.db = db_path_.toStdString();
        useExecution(e);
    });
    auto* models_dock =
        addPanel(tr("Models"), "models", models_, Qt::RightDockWidgetArea, runs_dock, true);
    // Live: profile the live engine here and run the workload on it (kairos-cli children).
    live_ = new LivePanel(&jobs_);
    live_->setObjectName(QStringLiteral("livePanel"));
    live_->setDatabase(db_path_);
    live_->setPolicy(policy_panel_->policy());
    auto* live_dock =
        addPanel(tr("Live"), "live", live_, Qt::RightDockWidgetArea, models_dock, true);
    // Sweep: a slider's whole range as a curve (run/sweep.h in the background).
    sweep_ = new SweepPanel(&jobs_, [this] { return sweepBase(); });
    sweep_->setDatabase(db_path_);
    sweep_->setObjectName(QStringLiteral("sweepPanel"));
    sweep_dock_ = addPanel(tr("Sweep"), "sweep", sweep_, Qt::RightDockWidgetArea, live_dock, true);
    // Inspector: why the scheduler did that (inspector_panel.h). It follows the cursor over
    // the timeline and the KV chart; a click on either shows that instant and raises it.
    inspector_ = new InspectorPanel;
    inspector_->setObjectName(QStringLiteral("inspectorPanel"));
    inspector_->attach(state_);
    inspector_dock_ =
        addPanel(tr("Inspector"), "inspector", inspector_, Qt::RightDockWidgetArea, sweep_dock_);
    // The right column's seven tabs stand on its outer edge, their labels read downwards (as
    // an IDE's tool windows): along the bottom a 1366-pixel window showed three and a half of
    // them, the rest behind scroll arrows.
    setTabPosition(Qt::RightDockWidgetArea, QTabWidget::East);
    // Raised again after a wider panel of the group (Runs, Sweep), the Metrics panel and the
    // Inspector give the timeline its 60 % back (it went from 820 to 680 px at 1366x768
    // over a few tab switches, the tabs moving under the pointer).
    connect(metrics_dock_, &QDockWidget::visibilityChanged, this, [this](bool shown) {
        if (shown) QTimer::singleShot(0, this, &MainWindow::fitMetricsDock);
    });
    connect(inspector_dock_, &QDockWidget::visibilityChanged, this, [this](bool shown) {
        if (shown) QTimer::singleShot(0, this, &MainWindow::keepTimelineWide);
    });
    charts_->followInspector(inspector_);
    // Requests: every request of the run in a sortable table, linked with the timeline, Find
    // and the Inspector (requests_panel.h).
    // A row picked outlines the request's row on the timeline (as F3 does) and scrolls to it.
    requests_ = new RequestsPanel(state_, charts_->findBar(), [this](int id) {
        views::TimelineView* tl = charts_->timeline();
        tl->setMarked(tl->marked(), id);
        tl->scrollToRequest(id);
    });
    requests_->setObjectName(QStringLiteral("requestsPanel"));
    connect(requests_, &RequestsPanel::inspectRequested, this, &MainWindow::showInspector);
    requests_dock_ =
        addPanel(tr("Requests"), "requests", requests_, Qt::RightDockWidgetArea, inspector_dock_);
    // Raised, the table gets the right column's share of the window (up to 40 % with the
    // timeline's 60 %), as the Inspector does: at its narrowest it showed two columns.
    connect(requests_dock_, &QDockWidget::visibilityChanged, this, [this](bool shown) {
        if (shown) requests_->catchUp(); // runs shown while its tab was behind another
        if (!shown || requests_dock_->isFloating()) return;
        QTimer::singleShot(0, this, [this] {
            const int room = std::max(360, rightColumnRoom(requests_dock_));
            if (requests_dock_->width() < room)
                resizeDocks({requests_dock_}, {room}, Qt::Horizontal);
        });
    });
    connect(inspector_, &InspectorPanel::widthWanted, this, [this] { keepTimelineWide(); });
    // The Inspector in view tells a picked request's story: the Policy panel stays where the
    // user has it (it scrolled to its own card, the sliders out of view).
    // Nor does it when the request was picked in the Requests table: the table is where the
    // user works (the panel scrolled to its bottom under a click on a row).
    policy_panel_->setRevealCardWhen(
        [this] { return !inView(inspector_dock_) && !inView(requests_dock_); });
    // A request picked (its story in the Inspector) never narrows the timeline below 60 %.
    connect(state_, &WorkbenchState::selectionChanged, this,
            [this] { QTimer::singleShot(0, this, [this] { keepTimelineWide(); }); });
    // A request clicked shows its story in the Inspector, unless the Requests table is the
    // panel in view: it follows the click there (raising the Inspector hid it).
    // Nor when a pinned run's comparison is the panel in view: the click's request shows on
    // its card, the comparison stays (raising the Inspector took it away).
    connect(charts_, &ChartArea::inspectorWanted, this, [this] {
        if (inView(requests_dock_) || (state_->pinned() && inView(metrics_dock_))) return;
        showInspector();
    });
    metrics_dock_->raise();
    runs_->refresh();

    // The parameter table: the shown policy's values without a slider; an edit is the
    // policy's value from now on (kept per policy, as --param's are).
    auto showParams = [this] {
        const auto it = policy_params_.find(policy_panel_->policy().toStdString());
        policy_panel_->showOtherParams(it == policy_params_.end() ? PolicyParams{} : it->second);
    };
    showParams();
    connect(policy_panel_, &PolicyPanel::paramEdited, this, [this](const QString& name, double v) {
        policy_params_[policy_panel_->policy().toStdString()][name.toStdString()] = v;
        panelEdited(name);
    });
    connect(policy_panel_, &PolicyPanel::message, this,
            [this](const QString& text) { say(text, 10000); });
    connect(policy_panel_, &PolicyPanel::policyChanged, this, showParams);
    connect(policy_panel_, &PolicyPanel::policyChanged, this, [this](const QString& p) {
        live_->setPolicy(p);
        panelEdited(tr("policy"));
        sweep_->refreshParams();
    });
    connect(policy_panel_, &PolicyPanel::predictorChanged, this,
            [this] { panelEdited(tr("predictor")); });
    connect(policy_panel_, &PolicyPanel::servingChanged, this, &MainWindow::panelEdited);
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open workload…"), QKeySequence::Open, policy_panel_,
                    &PolicyPanel::openRequested);
    file->addAction(tr("&Generate workload…"), QKeySequence(Qt::CTRL | Qt::Key_G), this,
                    &MainWindow::generateWorkload);
    recent_ = new RecentFiles(
        file->addMenu(tr("Open &recent")), [this](const QString& f) { openWorkload(f); }, this);
    auto* exp = file->addMenu(tr("&Export"));
    // Exports of the shown run (run_exports.h); a report names the device and carries the
    // run's RunSpec and the device profile.
    exports_ = new RunExports(this, state_, &jobs_, [this](views::ReportData& d, const RunView& r) {
        // The report has the policy, execution model and KV capacity from the run's log.
        d.config = {{"profile", device_->profile().name}, {"predictor", r.policy.predictor}};
        if (d.pinned) d.pinned_name = charts_->pinnedName();
        d.spec_json = QString::fromStdString(runSpecJson(r, 2));
        if (d.spec_json.isEmpty())
            d.spec_json = tr("(none: a workload generated in the window is not a file; "
                             "File › Save session keeps it)");
        d.profile_json = QString::fromStdString(device_->profile().toJson().dump(2));
    });
    connect(exports_, &RunExports::message, this, [this](const QString& m) { say(m); });
    exports_->fill(exp);
    file->addAction(tr("&Save run to database"), QKeySequence::Save, this, &MainWindow::saveRun);
    file->addSeparator();
    sessions_->addActions(file);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    auto* run = menuBar()->addMenu(tr("&Run"));
    run->addAction(tr("&Pin this run"), QKeySequence(Qt::CTRL | Qt::Key_P), this, &MainWindow::pin);
    run->addAction(tr("U&npin"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), this,
                   &MainWindow::unpin);
    run->addAction(tr("&Re-simulate"), QKeySequence(Qt::Key_F5), this, &MainWindow::resimulate);
    // Edit: undo and redo of parameter changes (sliders, policy, predictor).
    auto* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undo_->stack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setProperty("helpText", tr("Undo the last change to the run"));
    QAction* redo = undo_->stack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
    redo->setProperty("helpText", tr("Redo the change undone"));
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(tr("&Find requests…"), QKeySequence::Find, charts_->findBar(),
                    &FindBar::focusField);
    auto* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Reset zoom"), QKeySequence(Qt::Key_Home), state_->range(),
                    &views::TimeRange::reset);
    view->addAction(tr("&Back"), QKeySequence(Qt::ALT | Qt::Key_Left), history_,
                    &ViewHistory::back);
    view->addAction(tr("&Forward"), QKeySequence(Qt::ALT | Qt::Key_Right), history_,
                    &ViewHistory::forward);
    // The Inspector's steps, here so that Help's shortcut list names them.
    view->addAction(tr("Inspector: &next decision"), QKeySequence(Qt::CTRL | Qt::Key_Period), this,
                    [this] {
                        showInspector();
                        inspector_->step(+1);
                    });
    view->addAction(tr("Inspector: &previous decision"), QKeySequence(Qt::CTRL | Qt::Key_Comma),
                    this, [this] {
                        showInspector();
                        inspector_->step(-1);
                    });
    view->addAction(charts_->agentRowsAction());
    // Every panel, shown or hidden: a closed panel comes back from here.
    view->addSeparator();
    view->addSection(tr("Panels"));
    // A panel open behind another's tab is raised, not closed (Qt's toggle closed it: it
    // counts as shown); one in view is closed; a closed one opens in front.
    for (auto* d : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        QAction* toggle = d->toggleViewAction();
        auto* a = view->addAction(toggle->text());
        a->setCheckable(true);
        a->setChecked(toggle->isChecked());
        connect(toggle, &QAction::toggled, a, &QAction::setChecked);
        connect(a, &QAction::triggered, this, [d, a] {
            const bool behind = d->isVisible() && d->visibleRegion().isEmpty();
            if (behind || !d->isVisible()) {
                d->show();
                d->raise();
                a->setChecked(true);
            } else {
                d->close();
            }
        });
    }
    addHelpMenu(this);
    // Progress and cancel of a workload read or a simulation that takes a while.
    progress_ = new JobProgress(&jobs_, {QStringLiteral("load"), SimRunner::kChannel});
    statusBar()->addPermanentWidget(device_->label());
    statusBar()->addPermanentWidget(progress_);
    policy_panel_->showDevice(QString::fromStdString(device_->profile().name));
    connect(device_, &DeviceChoice::message, this, [this](const QString& m) { say(m); });
    connect(device_, &DeviceChoice::changed, this, [this](bool ok) {
        policy_panel_->showDevice(QString::fromStdString(device_->profile().name),
                                  device_->exec().model_id);
        // The user's choice is a step; a device Undo asked for is the spec's already.
        if (ok && device_pending_)
            resimulate();
        else if (ok)
            panelEdited(tr("device"));
        device_pending_ = false;
        Q_EMIT executionChanged(ok);
    });
    say(tr("Open a workload to begin"));
    resize(1400, 850);
    // Window layout as the user left it.
    QSettings settings;
    charts_->setAgentRows(start_.agent_rows ||
                          settings.value(QStringLiteral("view/agentRows")).toBool());
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    layout_restored_ =
        restoreState(settings.value(QStringLiteral("window/state")).toByteArray(), kLayoutVersion);
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    if (shown_once_) return;
    shown_once_ = true;
    // A first layout (none saved): the Policy panel gets 17 % of a wide window, so that its
    // parameter table shows its accepted values whole at 1920x1080 (at its narrowest it cut
    // them), and its narrowest at 1366x768, where the timeline needs the room.
    if (!layout_restored_)
        QTimer::singleShot(0, this, [this] {
            fitPolicyDock(false);
            // The Metrics panel within what is left once that is laid out (its first run may
            // have been shown before the window was: the timeline had 58 % at 1920x1080).
            QTimer::singleShot(0, this, &MainWindow::fitMetricsDock);
        });
}

void MainWindow::fitPolicyDock(bool shrink) {
    if (!policy_dock_ || policy_dock_->isFloating() || !policy_dock_->isVisible()) return;
    const int want = std::max(policy_dock_->minimumSizeHint().width(), int(width() * 0.17));
    if (policy_dock_->width() < want || (shrink && policy_dock_->width() > want))
        resizeDocks({policy_dock_}, {want}, Qt::Horizontal);
}

void MainWindow::fitToScreen() {
    const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
    if (!s) return;
    const QRect avail = s->availableGeometry();
    // The frame's own size, where a window manager has already given one.
    const QSize frame = frameGeometry().size() - size();
    const QSize fit = size().boundedTo(avail.size() - frame.expandedTo(QSize(0, 0)));
    if (fit != size()) resize(fit);
    QRect g = frameGeometry();
    if (!avail.contains(g)) {
        g.moveLeft(std::clamp(g.left(), avail.left(),
                              std::max(avail.left(), avail.right() - g.width() + 1)));
        g.moveTop(std::clamp(g.top(), avail.top(),
                             std::max(avail.top(), avail.bottom() - g.height() + 1)));
        move(g.topLeft());
    }
}

bool MainWindow::event(QEvent* e) {
    if (e->type() == QEvent::ChildPolished)
        if (auto* bar = qobject_cast<QTabBar*>(static_cast<QChildEvent*>(e)->child())) {
            bar->setElideMode(Qt::ElideNone);
            bar->setUsesScrollButtons(true);
        }
    return QMainWindow::event(e);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState(kLayoutVersion));
    settings.setValue(QStringLiteral("view/agentRows"), charts_->agentRows());
    jobs_.cancelAll(); // closing: stop spending the CPU on what nobody will see
    QMainWindow::closeEvent(e);
}

bool MainWindow::loading() const {
    return jobs_.busy(QStringLiteral("load"));
}

void MainWindow::openWorkload(const QString& path) {
    progress_->started();
    say(tr("reading %1…").arg(path));
    // A newer open wins: the tracker cancels this one and drops its result.
    jobs_.start(QStringLiteral("load"), this, [this, path](JobTracker::Job& job) {
        std::shared_ptr<Workload> w;
        QString error;
        bool cancelled = false;
        try {
            ReadOptions o;
            o.progress = &job.progress;
            o.cancel = &job.cancel;
            w = std::make_shared<Workload>(readWorkload(path.toStdString(), o));
        } catch (const ReadCancelled&) {
            cancelled = true;
        } catch (const std::exception& e) {
            error = views::windowWords(QString::fromStdString(e.what()));
        }
        return std::function<void()>([this, path, w, error, cancelled] {
            if (cancelled) {
                say(tr("reading %1 cancelled").arg(path));
            } else if (!error.isEmpty()) {
                showOpenError(cannotOpen(path, error));
                if (!state_->run() && (path == start_.workload || path == start_.open))
                    start_error_ = error;
                // Not modal: automation (--screenshot --quit) must not hang on it.
                auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open workload"), error,
                                            QMessageBox::Ok, this);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
            } else {
                setWorkload(w, QFileInfo(path).fileName(), QFileInfo(path).absoluteFilePath());
                recent_->remember(path);
            }
            const bool ok = !cancelled && error.isEmpty();
            Q_EMIT workloadLoaded(ok);
            if (!ok && (!start_.workload.isEmpty() || !start_.open.isEmpty()) && !state_->run())
                Q_EMIT ready(); // nothing to show
        });
    });
}

bool MainWindow::generateWorkload() {
    GenerateDialog dlg(this);
    if (dlg.exec() != QDialog::Accepted) return false;
    auto w = std::make_shared<Workload>(dlg.takeResult()); // generated and checked by accept()
    const QString name = QString::fromStdString(w->name);
    setWorkload(std::move(w), name);
    return true;
}

void MainWindow::setWorkload(std::shared_ptr<const Workload> w, const QString& label,
                             const QString& file) {
    workload_file_ = file;
    // The runs' specs name it: the file's path, or the window's memory.
    cache_.clear();
    cache_.put(file.isEmpty() ? std::string(kMemoryWorkload) : file.toStdString(), "auto", 0, w);
    // The pinned run and the selection go with the old one; the Policy panel shows it.
    state_->setWorkload(std::move(w), label);
    history_->clear();
    setWindowTitle(tr("Kairos — %1").arg(label));
    // Robot plans on TimelyLLM's device, the rest on MC-SF's, until a device is chosen.
    if (device_->followWorkload(*state_->workload()))
        policy_panel_->showDevice(QString::fromStdString(device_->profile().name));
    // Robot plans with prefix caching (the system TimelyLLM models caches its system
    // prompt: without it every urgent response pays a 1,300-token prefill), until the user
    // or --prefix-caching sets it. One run below, not one for the checkbox as well.
    if (!start_.prefix_caching_given && !policy_panel_->cachingChosen()) {
        quietly([this] { policy_panel_->setPrefixCaching(hasRobotPlans(*state_->workload())); });
    }
    // Without --policy: TimelyLLM as its authors' code runs it for robot plans (timely_code
    // with their harness's max_num_seqs 8; docs/upstream/timelyllm.md), until the user picks
    // a policy; the start policy with vLLM's 256 seats for the rest.
    // With --compare, the first run is the reference policy's whichever policy follows.
    if (start_.policy_follows_workload && !policy_panel_->policyChosen()) {
        const bool robot = hasRobotPlans(*state_->workload());
        quietly([&] {
            policy_panel_->setPolicy(!start_.compare.isEmpty() && !startup_compare_done_
                                         ? start_.compare
                                         : startPolicy());
            if (views::ParamSlider* seats = policy_panel_->slider(QStringLiteral("seqs")))
                seats->setValue(robot ? 8 : 256);
        });
    }
    // The spec of this workload as the panels set it: a new undo history.
    undo_->reset(panelSpec());
    resimulate();
}

QString MainWindow::startPolicy() const {
    // Without --policy: TimelyLLM as its authors' code runs it for robot plans, the start
    // policy (sprpt_lp) for the rest.
    const auto& w = state_->workload();
    return w && hasRobotPlans(*w) ? QStringLiteral("timely_code") : start_.policy;
}

SummaryOptions MainWindow::windowSummary() const {
    // What the window's runs measure: the SLO sliders' goodput, no inter-token latency
    // (not shown here; the costliest statistic).
    SummaryOptions so;
    so.itl = false;
    so.goodput = GoodputSlo::parse(shownSpec().summary.goodput);
    return so;
}

void MainWindow::resimulate() {
    if (!state_->workload() || restoring_) return;
    const RunSpec& spec = state_->spec();
    {
        // What this run reads may not be replaced by anything the window writes (a chart,
        // a report, a session saved over the workload): util/atomic_file.h.
        std::vector<std::string> inputs;
        if (!workload_file_.isEmpty()) inputs.push_back(workload_file_.toStdString());
        if (!db_path_.isEmpty()) inputs.push_back(db_path_.toStdString());
        std::error_code ec;
        if (std::filesystem::is_regular_file(spec.exec.profile, ec))
            inputs.push_back(spec.exec.profile);
        protectFromOutputs(std::move(inputs));
    }
    FrameJob frame;
    frame.plan = charts_->framePlan();
    frame.shown = state_->run() ? state_->run()->workload.get() : nullptr;
    // Another setting of the workload being simulated (a slider dragged): the run in flight
    // is shown before the newest setting runs (SimRunner::submit).
    const bool coalesce = state_->workload() == submitted_workload_;
    submitted_workload_ = state_->workload();
    const long job = runner_.submit(spec, windowContext(), std::move(frame), coalesce);
    progress_->started();
    say(job > 0 ? tr("simulating (job %1)…").arg(job) : tr("simulating after the run in flight…"));
}

void MainWindow::showResult(std::shared_ptr<const RunView> r) {
    progress_->done();
    if (!r->error.isEmpty()) {
        const QString error = views::windowWords(r->error);
        say(tr("error: %1").arg(error));
        state_->reportFailure(error);
        if (!state_->run()) start_error_ = r->error;
        Q_EMIT ready();
        return;
    }
    // The run shown until now is released on a pool thread, not this one: freeing 20,000
    // requests' rows, log and metrics took 10 ms before every repaint, and 2 ms of the GUI
    // thread after it. Releasing it waits for its Inspector index when that is still being
    // built (a quick slider move). Nothing in a RunView belongs to the GUI thread (its frame
    // is a QImage).
    struct ReleaseLater {
        std::shared_ptr<const RunView> old;
        ~ReleaseLater() {
            if (old)
                QThreadPool::globalInstance()->start([o = std::move(old)]() mutable { o.reset(); });
        }
    } release{state_->run()};
    const bool first = !state_->run() || state_->run()->workload != r->workload;
    state_->setRun(r);
    const auto [lo, hi] = r->extent; // lod::timeExtent of its rows (SimRunner::present)
    if (first) {
        // The new extent is the history's first step, not a move.
        history_->quietly([&] { state_->range()->setExtent(lo, hi); });
        state_->setSelection(-1, 0.0); // another workload: another request with that id
    } else {
        // The same workload run again may end later or sooner (a smaller KV): the axes reach
        // the new end (they stayed at the old run's, its queued bars running off the edge).
        history_->quietly([&] { state_->range()->followExtent(lo, hi); });
    }
    // The search's matches in this run (its rows: refreshComparison below); not a new step.
    history_->quietly([this] { charts_->findBar()->apply(false); });
    if (history_->size() == 0) history_->record();
    live_->setWorkload(r->workload); // a live run uses the workload as shown
    device_->showRunCapacity(r->log ? r->log->kv_capacity_tokens : 0, r->log ? r->log->replicas : 1,
                             r->log ? r->log->decode_kv_capacity_tokens : 0,
                             r->log ? r->log->prefill_replicas : 0);
    charts_->showRun(*r);
    // The timeline's frame built beside the summary, if the view still looks as planned.
    if (r->frame) charts_->timeline()->offerFrame(*r->frame);
    charts_->setHint(sliderHint(*r));
    // What happened first, the policy's settings after.
    say(tr("%1 requests simulated in %2 ms (job %3): %4")
            .arg(r->summary.num_requests)
            .arg(r->wall_ms, 0, 'f', 1)
            .arg(r->job)
            .arg(QString::fromStdString(r->summary.policy)));
    if (sweep_) { // a finished sweep says what changed since, and shows this run on it
        sweep_->checkSettings();
        sweep_->setShownRun(r);
    }
    Q_EMIT resultShown(r->job);
    sessions_->runShown();
    // --compare: the first run shown is the reference; pin it and run the chosen policy.
    if (!start_.compare.isEmpty() && !startup_compare_done_) {
        startup_compare_done_ = true;
        pin();
        quietly([this] {
            policy_panel_->setPolicy(start_.policy_follows_workload ? startPolicy()
                                                                    : start_.policy);
        });
        undo_->reset(panelSpec()); // the start-up setting, not a step to undo
        resimulate();
        return;
    }
    Q_EMIT ready();
}

QString MainWindow::sliderHint(const RunView& r) {
    // The two knobs the product is built around: Trail's preemption C and TimeBill's
    // pessimism k. Each says what to try where it can act, and why it cannot where it can't.
    views::ParamSlider* c = policy_panel_->slider(QStringLiteral("C"));
    views::ParamSlider* k = policy_panel_->slider(QStringLiteral("k"));
    const bool c_on = c && c->isEnabled(), k_on = k && k->isEnabled();
    if (c_on && r.log) {
        const RoomUse& u = r.room; // SimRunner::present
        const QString why =
            u.binds ? QString()
                    : tr("Preemption C cannot change this run: room never binds (KV peaked at "
                         "%L1 of %L2 tokens, at most %3 of %4 seats taken), so no request waits "
                         "for a running one to give way. Raise the arrival rate or lower the KV "
                         "capacity to see it act.")
                          .arg(u.kv_peak)
                          .arg(r.log->kv_capacity_tokens)
                          .arg(u.peak_running)
                          .arg(u.seats);
        policy_panel_->setSliderNote(QStringLiteral("C"), why);
        if (!why.isEmpty()) return why;
        // Say which room binds (roomUse): "KV peaked at 22 %" alone read as a contradiction
        // where the seats bound.
        const QString kv =
            tr("KV peaked at %L1 of %L2 tokens").arg(u.kv_peak).arg(r.log->kv_capacity_tokens);
        const QString what = !u.seats_bound ? kv
                             : u.kv_bound
                                 ? tr("all %1 seats taken and %2").arg(u.seats).arg(kv)
                                 : tr("all %1 seats taken at once; %2").arg(u.seats).arg(kv);
        return tr("Try: drag preemption C from 0 (never preempt: SJF) to 1 (SPRPT) and watch "
                  "mean TTFT: room binds here (%1).")
            .arg(what);
    }
    // A robot workload opens as the system TimelyLLM's code serves it: with prefix caching
    // (it caches its system prompt), until the user or --prefix-caching sets it; whether it
    // saves anything here is the workload's (prompts with a shared prefix span).
    if (r.workload && hasRobotPlans(*r.workload) && r.limits.prefix_caching &&
        !start_.prefix_caching_given && !policy_panel_->cachingChosen())
        return r.summary.prefix_cache_hit_rate > 0
                   ? tr("Prefix caching is on, as in the system TimelyLLM's code serves: %1 % of "
                        "prompt tokens came from the cache. The Caching box turns it off.")
                         .arg(100 * r.summary.prefix_cache_hit_rate, 0, 'f', 1)
               : r.summary.prefix_recompute_cached_tokens > 0
                   // Segmented generation: a request resumed for its next segment finds its
                   // own context cached (the timeline's "cached part").
                   ? tr("Prefix caching is on, as in the system TimelyLLM's code serves: prompts "
                        "share no prefix here, but %L1 context tokens came from the cache when "
                        "requests resumed. The Caching box turns it off.")
                         .arg(r.summary.prefix_recompute_cached_tokens)
                   : tr("Prefix caching is on, as in the system TimelyLLM's code serves, but this "
                        "workload's prompts share no prefix span, so it saves nothing here.");
    if (k_on) {
        // k decides only for requests whose budget is within reach: when most run out of it
        // whatever k is, the budget is the knob to move first.
        const LoadReport& load = r.summary.load;
        if (load.arrivals > 0 && 2 * load.killed > load.arrivals)
            return tr("%1 of %2 requests run out of their time budget whatever pessimism k is: "
                      "raise budget (s) first, then k decides which requests are admitted, "
                      "skipped or run with KV evicted.")
                .arg(load.killed)
                .arg(load.arrivals);
        // Which way k moves what (an outside test measured killed 27 -> 24 from k = 1 to 8,
        // where the hint said "more are killed"): a request plans for k x its predicted
        // decode time, so more of its KV is evicted to finish in its budget; only one that
        // cannot fit even then is killed or skipped. Where nearly every request already
        // finishes in its budget, k buys no fewer misses, only more KV evicted (an outside
        // test raised k from 1 to 100 at 99 % within budget: the misses never moved): say so,
        // with the run's own figures.
        const Summary& sum = r.summary;
        // Between the two ends, the run's figures first, where a narrow banner cuts the rest
        // (an outside test read "Try: raise pessimism k" at every k while the quality proxy
        // fell 0.93 -> 0.28 for 27 -> 23 killed, the cost only in the tooltip).
        if (sum.budget_requests > 0)
            return (sum.completion_rate >= 0.95
                        ? tr("Pessimism k has few misses left to remove here: %1 of %2 "
                             "requests finish within their budget (now mean KV evicted %3, "
                             "quality proxy %4). It still moves latency and quality: pin this "
                             "run and move k to see by how much; lower the budget to see it "
                             "trade misses.")
                        : tr("Pessimism k trades answer quality for misses: now %1 of %2 "
                             "within budget, mean KV evicted %3, quality proxy %4. A higher k "
                             "plans each request for k x its predicted decode time and evicts "
                             "more of its KV to finish in its budget; one that cannot fit even "
                             "then is killed or skipped."))
                .arg(sum.in_budget)
                .arg(sum.budget_requests)
                .arg(sum.mean_alpha, 0, 'f', 2)
                .arg(sum.mean_quality, 0, 'f', 2);
        return tr("Try: raise pessimism k: each request plans for k x its predicted decode "
                  "time, so more of its KV is evicted (the Inspector's alpha) to finish within "
                  "its budget: fewer misses and a smaller KV peak, at a cost in answer "
                  "quality; one that cannot fit even then is killed or skipped.");
    }
    if (c && k)
        return tr("Preemption C is Trail's (sprpt_lp) and pessimism k is TimeBill's (timebill): "
                  "pick either policy to use them.");
    return {};
}

std::string MainWindow::runSpecJson(const RunView& r, int indent) const {
    // A workload generated in the window is not a file a spec can name (a session keeps it).
    if (r.spec.workload.path == kMemoryWorkload) return {};
    try {
        r.spec.validate();
        return r.spec.toJson().dump(indent);
    } catch (const std::exception&) {
        return {}; // not expressible: stored without a spec
    }
}

void MainWindow::saveRun() {
    if (!state_->run() || !state_->run()->log) {
        say(tr("no run to save"));
        return;
    }
    stored_->save(state_->run(), runSpecJson(*state_->run()));
}

void MainWindow::pinStoredRun(qint64 id) {
    stored_->pin(id, windowSummary());
}

void MainWindow::useExecution(const RunSpec::ExecPart& exec) {
    device_->use(exec);
}

bool MainWindow::saveSession(const QString& path, QString* error) {
    return sessions_->save(path, error);
}

void MainWindow::openSession(const QString& path) {
    sessions_->open(path);
}

void MainWindow::pin() {
    if (!state_->run()) return;
    state_->setPinned(state_->run());
    refreshComparison();
    say(tr("pinned: %1").arg(QString::fromStdString(state_->pinned()->summary.policy)));
}

void MainWindow::unpin() {
    state_->setPinned(nullptr);
    refreshComparison();
}

void MainWindow::refreshComparison() {
    charts_->refreshComparison();
}

} // namespace kairos::app
