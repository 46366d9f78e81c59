#include "main_window.h"

#include "chart_area.h"
#include "chart_tools.h"
#include "device_choice.h"
#include "export/perfetto.h"
#include "export/requests_csv.h"
#include "export/runlog_jsonl.h"
#include "find_bar.h"
#include "generate_dialog.h"
#include "help_menu.h"
#include "inspector_panel.h"
#include "job_progress.h"
#include "kv_chart.h"
#include "latency_chart.h"
#include "length_histogram.h"
#include "live_panel.h"
#include "metrics/cdf.h"
#include "metrics/request_filter.h"
#include "metrics/request_metrics.h"
#include "metrics_model.h"
#include "metrics_panel.h"
#include "model_chart.h"
#include "models_panel.h"
#include "param_slider.h"
#include "param_undo.h"
#include "policy_panel.h"
#include "profiles.h"
#include "recent_files.h"
#include "report.h"
#include "run/knobs.h"
#include "run/pipeline.h"
#include "run/run_spec.h"
#include "run_exports.h"
#include "runs_model.h"
#include "runs_panel.h"
#include "store/store.h"
#include "stored_runs.h"
#include "sweep_panel.h"
#include "time_range.h"
#include "timeline_view.h"
#include "trace_formats.h"
#include "tuf_chart.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "view_history.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QThreadPool>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace kairos::app {

QUndoStack* MainWindow::undoStack() const {
    return undo_->stack();
}

void MainWindow::setParam(const QString& name, const QVariant& value) {
    undo_->set(name, value);
}

QString MainWindow::shortcutsHelp() const {
    return app::shortcutsHelp(menuBar());
}

MainWindow::MainWindow(const StartOptions& opt, QWidget* parent)
    : QMainWindow(parent), start_(opt), state_(new WorkbenchState(this)), runner_(&jobs_) {
    setWindowTitle(QStringLiteral("Kairos"));
    device_ = new DeviceChoice(
        &jobs_, opt.profile.isEmpty() ? std::string(kDefaultProfile) : opt.profile.toStdString(),
        this);
    cache_.keepTransformed(2); // the shown rate and the pinned run's
    for (const auto& [k, v] : parsePolicyParams([&] {
             std::vector<std::string> items;
             for (const QString& p : opt.params) items.push_back(p.toStdString());
             return items;
         }()))
        extra_params_[k] = v;
    buildUi();
    for (const QString& p : {start_.policy, start_.compare})
        if (!p.isEmpty() && !policy_panel_->knowsPolicy(p))
            throw std::invalid_argument("unknown policy: " + p.toStdString());
    connect(&runner_, &SimRunner::finished, this, &MainWindow::showResult);
    if (!opt.workload.isEmpty()) openWorkload(opt.workload);
}

MainWindow::~MainWindow() {
    jobs_.shutdown(); // cancels every job and waits: nothing runs past the window
}

SweepBase MainWindow::sweepBase() const {
    SweepBase b;
    b.spec = shownSpec();
    b.workload = state_->workload();
    b.profile = device_->profile();
    b.profile_kv = b.profile.kvCapacityTokens();
    for (const SliderSpec& sp : sliderSpecs()) {
        if (const RunKnob* k = findRunKnob(sp.name); k && !k->axis) continue; // an SLO
        SweepParam p;
        p.name = QString::fromStdString(sp.name);
        p.label = QString::fromStdString(sp.label);
        p.lo = sp.lo;
        p.hi = sp.hi;
        p.log = sp.log;
        p.whole = sp.decimals == 0;
        p.value = slider(p.name)->value();
        p.policies = sp.policies;
        b.params.push_back(p);
    }
    return b;
}

RunSpec MainWindow::shownSpec() const {
    RunSpec s;
    s.workload.path = workload_file_.isEmpty() ? kMemoryWorkload : workload_file_.toStdString();
    s.exec = device_->exec();
    // --param values without a slider go to the policy they were given for.
    if (policy_panel_->policy() == start_.policy)
        for (const auto& [k, v] : extra_params_)
            if (!slider(QString::fromStdString(k))) s.policy.params[k] = v;
    policy_panel_->specInto(&s, device_->profile().kvCapacityTokens());
    return s;
}

RunContext MainWindow::windowContext() const {
    RunContext c = runContext();
    c.cache = const_cast<WorkloadCache*>(&cache_); // thread-safe; its own lock
    c.exec = device_->resolved();
    return c;
}

void MainWindow::showInspector() {
    inspector_dock_->show();
    inspector_dock_->raise();
    // Its table and reasons want width: about 40 % of the window the first time, as the
    // user leaves it after (once the dock is laid out in its tab).
    if (!inspector_widened_) {
        inspector_widened_ = true;
        QTimer::singleShot(0, this, [this] {
            if (inspector_dock_->width() < int(width() * 0.36))
                resizeDocks({inspector_dock_}, {std::min(760, int(width() * 0.40))},
                            Qt::Horizontal);
        });
    }
}

QComboBox* MainWindow::policyBox() const {
    return policy_panel_->policyBox();
}

views::ParamSlider* MainWindow::slider(const QString& name) const {
    return policy_panel_->slider(name);
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
    undo_ = new ParamUndo(policy_panel_, this);
    connect(policy_panel_, &PolicyPanel::openRequested, this, [this] {
        const QString f =
            QFileDialog::getOpenFileName(this, tr("Open workload"), QString(), traceFileFilter());
        if (!f.isEmpty()) openWorkload(f);
    });
    connect(policy_panel_, &PolicyPanel::generateRequested, this, &MainWindow::generateWorkload);
    charts_->addChart(QStringLiteral("lengths"), [this](const QString& path) {
        return views::saveChart(policy_panel_->histogram(), path);
    });
    connect(policy_panel_, &PolicyPanel::deviceChosen, this, [this](const QString& name) {
        RunSpec::ExecPart e;
        e.profile = name.toStdString();
        useExecution(e);
    });
    connect(policy_panel_, &PolicyPanel::paramMoved, this,
            [this](const QString& name, double moved) {
                undo_->note(name, moved);
                resimulate();
                if (sweep_) sweep_->sliderMoved(name, moved);
            });
    connect(policy_panel_, &PolicyPanel::tufMoved, this, &MainWindow::resimulate);
    connect(policy_panel_, &PolicyPanel::sweepRequested, this, [this](const QString& name) {
        sweep_dock_->show();
        sweep_dock_->raise();
        sweep_->sweep(name);
    });
    auto* dock = new QDockWidget(tr("Policy"), this);
    dock->setObjectName(QStringLiteral("policy"));
    auto* scroll = new QScrollArea; // many TUF classes or a small screen: scroll, never clip
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Labels, sliders and spin boxes whole, whatever the other docks want (no horizontal
    // scroll bar: a narrower dock clipped the spin boxes).
    scroll->setMinimumWidth(std::max(250, panel->minimumSizeHint().width() +
                                              scroll->verticalScrollBar()->sizeHint().width()));
    dock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    metrics_ = new MetricsPanel;
    metrics_->setObjectName(QStringLiteral("metricsPanel"));
    connect(metrics_, &MetricsPanel::pinRequested, this, &MainWindow::pin);
    connect(metrics_, &MetricsPanel::unpinRequested, this, &MainWindow::unpin);
    metrics_->attach(state_);
    // Fit the metrics dock to its columns when they change (the pinned and change columns
    // come with a pin and go with it), at most 38 % of the window: it once widened on
    // every re-run, never shrank, and squeezed the Policy panel to a sliver at 1366x768.
    connect(metrics_, &MetricsPanel::columnsChanged, this, [this] {
        // Not while the Inspector, tabbed in the same area, is the one shown (it is wider).
        if (inspector_dock_ && !inspector_dock_->visibleRegion().isEmpty()) return;
        const int want = std::min(metrics_->wantedWidth(), int(width() * 0.38));
        resizeDocks({metrics_dock_}, {std::max(want, metrics_->minimumTableWidth())},
                    Qt::Horizontal);
    });
    metrics_dock_ = new QDockWidget(tr("Metrics"), this);
    metrics_dock_->setObjectName(QStringLiteral("metrics"));
    metrics_dock_->setWidget(metrics_);
    addDockWidget(Qt::RightDockWidgetArea, metrics_dock_);

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
    connect(stored_, &StoredRuns::saved, this, &MainWindow::runSaved);
    connect(stored_, &StoredRuns::pinned, this, [this](qint64 id, bool ok) {
        if (ok) refreshComparison();
        Q_EMIT storedRunPinned(id, ok);
    });
    connect(stored_, &StoredRuns::message, statusBar(),
            [this](const QString& m) { statusBar()->showMessage(m); });
    auto* runs_dock = new QDockWidget(tr("Runs"), this);
    runs_dock->setObjectName(QStringLiteral("runs"));
    runs_dock->setWidget(runs_);
    addDockWidget(Qt::RightDockWidgetArea, runs_dock);
    tabifyDockWidget(metrics_dock_, runs_dock);
    metrics_dock_->raise();
    // Models: the fitted models in the database, the selected one plotted (models_panel.h).
    models_ = new ModelsPanel(&jobs_, db_path_);
    models_->setObjectName(QStringLiteral("modelsPanel"));
    charts_->addChart(QStringLiteral("model"), [this](const QString& path) {
        return views::saveChart(models_->chart(), path);
    });
    connect(models_, &ModelsPanel::modelShown, this, &MainWindow::modelShown);
    connect(models_, &ModelsPanel::message, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    connect(models_, &ModelsPanel::useModel, this, [this](qint64 id, const QString& config) {
        RunSpec::ExecPart e;
        e.profile = device_->profile().name;
        e.model_id = id;
        e.model_config = config.toStdString();
        e.db = db_path_.toStdString();
        useExecution(e);
    });
    auto* models_dock = new QDockWidget(tr("Models"), this);
    models_dock->setObjectName(QStringLiteral("models"));
    models_dock->setWidget(models_);
    addDockWidget(Qt::RightDockWidgetArea, models_dock);
    tabifyDockWidget(runs_dock, models_dock);
    // Live: profile the live engine here and run the workload on it (kairos-cli children).
    live_ = new LivePanel;
    live_->setObjectName(QStringLiteral("livePanel"));
    live_->setDatabase(db_path_);
    live_->setPolicy(policy_panel_->policy());
    auto* live_dock = new QDockWidget(tr("Live"), this);
    live_dock->setObjectName(QStringLiteral("live"));
    live_dock->setWidget(live_);
    addDockWidget(Qt::RightDockWidgetArea, live_dock);
    tabifyDockWidget(models_dock, live_dock);
    // Sweep: a slider's whole range as a curve (run/sweep.h in the background).
    sweep_ = new SweepPanel(&jobs_, [this] { return sweepBase(); });
    sweep_->setDatabase(db_path_);
    sweep_->setObjectName(QStringLiteral("sweepPanel"));
    sweep_dock_ = new QDockWidget(tr("Sweep"), this);
    sweep_dock_->setObjectName(QStringLiteral("sweep"));
    sweep_dock_->setWidget(sweep_);
    addDockWidget(Qt::RightDockWidgetArea, sweep_dock_);
    tabifyDockWidget(live_dock, sweep_dock_);
    // Inspector: why the scheduler did that (inspector_panel.h). It follows the cursor over
    // the timeline and the KV chart; a click on either shows that instant and raises it.
    inspector_ = new InspectorPanel;
    inspector_->setObjectName(QStringLiteral("inspectorPanel"));
    inspector_->attach(state_);
    inspector_dock_ = new QDockWidget(tr("Inspector"), this);
    inspector_dock_->setObjectName(QStringLiteral("inspector"));
    inspector_dock_->setWidget(inspector_);
    addDockWidget(Qt::RightDockWidgetArea, inspector_dock_);
    tabifyDockWidget(sweep_dock_, inspector_dock_);
    connect(charts_->timeline(), &views::TimelineView::cursorMoved, inspector_,
            &InspectorPanel::followCursor);
    connect(charts_->kvChart(), &views::KvChart::cursorMoved, inspector_,
            &InspectorPanel::followCursor);
    connect(charts_->kvChart(), &views::KvChart::timeClicked, this, [this](double t) {
        inspector_->inspectAt(t);
        showInspector();
    });
    connect(inspector_, &InspectorPanel::timeChanged, this, [this](double t) {
        charts_->timeline()->setInspectedTime(t);
        charts_->kvChart()->setInspectedTime(t);
    });
    connect(inspector_, &InspectorPanel::requestPicked, this, [this](int id, double t) {
        if (id < 0) return;
        state_->setSelection(id, t);
        charts_->timeline()->scrollToRequest(id);
    });
    connect(charts_->timeline(), &views::TimelineView::requestClicked, this,
            [this] { showInspector(); });
    metrics_dock_->raise();
    runs_->refresh();

    connect(policy_panel_, &PolicyPanel::policyChanged, this, [this](const QString& p) {
        undo_->note(QStringLiteral("policy"), p);
        live_->setPolicy(p);
        resimulate();
    });
    connect(policy_panel_, &PolicyPanel::predictorChanged, this, [this](const QString& p) {
        undo_->note(QStringLiteral("predictor"), p);
        resimulate();
    });
    connect(policy_panel_, &PolicyPanel::servingChanged, this, &MainWindow::resimulate);
    connect(charts_->timeline(), &views::TimelineView::requestClicked, state_,
            &WorkbenchState::setSelection);
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
        d.config = {{"profile", device_->profile().name},
                    {"execution model", r.log->exec_model},
                    {"predictor", r.policy.predictor}};
        if (d.pinned) d.pinned_name = pinnedName();
        d.spec_json = QString::fromStdString(runSpecJson(r, 2));
        if (d.spec_json.isEmpty())
            d.spec_json = tr("(none: a workload generated in the window is not a file; "
                             "File › Save session keeps it)");
        d.profile_json = QString::fromStdString(device_->profile().toJson().dump(2));
    });
    connect(exports_, &RunExports::message, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    exports_->fill(exp);
    file->addAction(tr("&Save run to database"), QKeySequence::Save, this, &MainWindow::saveRun);
    file->addSeparator();
    file->addAction(tr("Save s&ession…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), this,
                    [this] {
                        const QString f = QFileDialog::getSaveFileName(
                            this, tr("Save session"), QStringLiteral("session.kairos.json"),
                            tr("Kairos session (*.kairos.json *.json)"));
                        if (f.isEmpty()) return;
                        QString error;
                        if (!saveSession(f, &error))
                            QMessageBox::warning(this, tr("Save session"), error);
                    });
    file->addAction(
        tr("Open sess&ion…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
            const QString f = QFileDialog::getOpenFileName(
                this, tr("Open session"), QString(), tr("Kairos session (*.kairos.json *.json)"));
            if (!f.isEmpty()) openSession(f);
        });
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
    QAction* redo = undo_->stack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
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
    for (auto* d : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly))
        view->addAction(d->toggleViewAction());
    addHelpMenu(this);
    // Progress and cancel of a workload read or a simulation that takes a while.
    progress_ = new JobProgress(&jobs_, {QStringLiteral("load"), SimRunner::kChannel});
    statusBar()->addPermanentWidget(device_->label());
    statusBar()->addPermanentWidget(progress_);
    policy_panel_->showDevice(QString::fromStdString(device_->profile().name));
    connect(device_, &DeviceChoice::message, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    connect(device_, &DeviceChoice::changed, this, [this](bool ok) {
        policy_panel_->showDevice(QString::fromStdString(device_->profile().name),
                                  device_->exec().model_id);
        if (ok) resimulate();
        Q_EMIT executionChanged(ok);
    });
    statusBar()->showMessage(tr("Open a workload to begin"));
    resize(1400, 850);
    // Window layout as the user left it.
    QSettings settings;
    charts_->setAgentRows(start_.agent_rows ||
                          settings.value(QStringLiteral("view/agentRows")).toBool());
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("view/agentRows"), charts_->agentRows());
    jobs_.cancelAll(); // closing: stop spending the CPU on what nobody will see
    QMainWindow::closeEvent(e);
}

std::pair<views::ParamSlider*, views::ParamSlider*>
MainWindow::tufSliders(const std::string& cls) const {
    return policy_panel_->tufSliders(cls);
}

bool MainWindow::loading() const {
    return jobs_.busy(QStringLiteral("load"));
}

void MainWindow::openWorkload(const QString& path) {
    progress_->started();
    statusBar()->showMessage(tr("reading %1…").arg(path));
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
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, path, w, error, cancelled] {
            if (cancelled) {
                statusBar()->showMessage(tr("reading %1 cancelled").arg(path));
            } else if (!error.isEmpty()) {
                statusBar()->showMessage(tr("cannot open %1: %2").arg(path, error));
                if (!state_->run() && path == start_.workload) start_error_ = error;
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
            if (!ok && !start_.workload.isEmpty() && !state_->run())
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
    resimulate();
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
    const long job = runner_.submit(shownSpec(), windowContext());
    progress_->started();
    statusBar()->showMessage(tr("simulating (job %1)…").arg(job));
}

void MainWindow::showResult(std::shared_ptr<const RunView> r) {
    progress_->done();
    if (!r->error.isEmpty()) {
        statusBar()->showMessage(tr("error: %1").arg(r->error));
        state_->reportFailure(r->error);
        if (!state_->run()) start_error_ = r->error;
        Q_EMIT ready();
        return;
    }
    const bool first = !state_->run() || state_->run()->workload != r->workload;
    state_->setRun(r);
    if (first) {
        const auto [lo, hi] = lod::timeExtent(*r->rows);
        // The new extent is the history's first step, not a move.
        history_->quietly([&] { state_->range()->setExtent(lo, hi); });
        state_->setSelection(-1, 0.0); // another workload: another request with that id
    }
    // The search's matches in this run (its rows: refreshComparison below); not a new step.
    history_->quietly([this] { charts_->findBar()->apply(false); });
    if (history_->size() == 0) history_->record();
    live_->setWorkload(r->workload); // a live run uses the workload as shown
    charts_->showRun(*r);
    statusBar()->showMessage(tr("%1: %2 requests simulated in %3 ms (job %4)")
                                 .arg(QString::fromStdString(r->summary.policy))
                                 .arg(r->summary.num_requests)
                                 .arg(r->wall_ms, 0, 'f', 1)
                                 .arg(r->job));
    Q_EMIT resultShown(r->job);
    if (session_view_.is_object()) applySessionView();
    // --compare: the first run shown is the reference; pin it and run the chosen policy.
    if (!start_.compare.isEmpty() && !startup_compare_done_) {
        startup_compare_done_ = true;
        pin();
        if (policy_panel_->policy() != start_.policy)
            policy_panel_->setPolicy(start_.policy); // re-simulates
        else
            resimulate();
        return;
    }
    Q_EMIT ready();
}

views::MetricsModel* MainWindow::metricsModel() const {
    return metrics_->model();
}

void MainWindow::refreshRuns() {
    runs_->refresh();
}

views::RunsModel* MainWindow::runsModel() const {
    return runs_->model();
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
        statusBar()->showMessage(tr("no run to save"));
        return;
    }
    stored_->save(state_->run(), runSpecJson(*state_->run()));
}

void MainWindow::pinStoredRun(qint64 id) {
    stored_->pin(id, windowSummary());
}

QString MainWindow::requestCard() const {
    return policy_panel_->cardText();
}

void MainWindow::useExecution(const RunSpec::ExecPart& exec) {
    device_->use(exec);
}

const RunSpec::ExecPart& MainWindow::execution() const {
    return device_->exec();
}

void MainWindow::showModel(qint64 id) {
    models_->showModel(id);
}

QComboBox* MainWindow::alaConfigBox() const {
    return models_->configBox();
}

views::ModelChart* MainWindow::modelChart() const {
    return models_->chart();
}

QTableWidget* MainWindow::modelsTable() const {
    return models_->table();
}

QString MainWindow::executionLabel() const {
    return device_->label()->text();
}

bool MainWindow::saveSession(const QString& path, QString* error) {
    // Everything to come back to this view: the shown run's RunSpec (with the workload
    // itself when it lives in the window only), the pinned run, and the view.
    if (!state_->workload()) {
        if (error) *error = tr("No workload to save a session of.");
        return false;
    }
    SessionFile f;
    f.run = shownSpec();
    f.label = state_->workloadName().toStdString();
    if (workload_file_.isEmpty()) {
        std::ostringstream out;
        writeKairos(*state_->workload(), out);
        f.embedded = out.str();
        f.embedded_name = state_->workload()->name;
    }
    if (state_->pinned() && state_->pinnedStoredId() >= 0) {
        f.pinned_stored = state_->pinnedStoredId();
        f.pinned_db = db_path_.toStdString();
    } else if (state_->pinned()) {
        f.pinned_spec = state_->pinned()->spec;
    }
    f.view = charts_->viewJson();
    try {
        writeFileAtomically(path.toStdString(),
                            [&](std::ostream& out) { out << f.toJson().dump(2) << "\n"; });
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    statusBar()->showMessage(tr("session saved to %1").arg(path));
    return true;
}

void MainWindow::openSession(const QString& path) {
    // Read and parse (an embedded workload can be large) and resolve its device off the GUI
    // thread; then set everything, simulate once, pin, and restore the view when the run is
    // shown.
    statusBar()->showMessage(tr("opening session %1…").arg(path));
    jobs_.start(QStringLiteral("load"), this, [this, path](JobTracker::Job& job) {
        auto opened = std::make_shared<OpenedSession>();
        QString error;
        try {
            *opened = readSession(path.toStdString(), runContext(), &job.progress, &job.cancel);
        } catch (const ReadCancelled&) {
            error = tr("cancelled");
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, path, opened, error] {
            if (!error.isEmpty()) {
                statusBar()->showMessage(tr("cannot open session %1: %2").arg(path, error));
                auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open session"), error,
                                            QMessageBox::Ok, this);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
                Q_EMIT sessionOpened(false);
                return;
            }
            applySession(*opened);
        });
    });
}

void MainWindow::applySession(const OpenedSession& s) {
    restoring_ = true; // one simulation at the end, not one per setting
    if (s.device) {
        device_->set(s.file.run.exec, s.device);
    } else {
        statusBar()->showMessage(tr("the session's device cannot be used (%1); %2 is")
                                     .arg(QString::fromStdString(s.device_error))
                                     .arg(QString::fromStdString(device_->profile().name)));
    }
    const std::string& name =
        s.file.label.empty()
            ? (s.workload->name.empty() ? std::string("session") : s.workload->name)
            : s.file.label;
    const QString label = QString::fromStdString(name);
    setWorkload(s.workload,
                label.section(QStringLiteral("</b>"), 0, 0).remove(QStringLiteral("<b>")),
                s.file.embedded.empty()
                    ? QFileInfo(QString::fromStdString(s.file.run.workload.path)).absoluteFilePath()
                    : QString());
    undo_->replaceAll(
        [&] { policy_panel_->applySpec(s.file.run, device_->profile().kvCapacityTokens()); });
    restoring_ = false;
    session_view_ = s.file.view;
    resimulate();
    // The pinned run: a stored one read again, or this window's re-run from its spec.
    if (s.file.pinned_stored >= 0) {
        pinStoredRun(s.file.pinned_stored);
    } else if (s.file.pinned_spec) {
        RunSpec spec = *s.file.pinned_spec;
        spec.workload.path = shownSpec().workload.path; // the workload shown, as it was
        jobs_.start(QStringLiteral("pin"), this,
                    [this, spec, ctx = windowContext()](JobTracker::Job& job) {
                        RunContext c = ctx;
                        c.cancel = &job.cancel;
                        c.progress = &job.progress;
                        auto r = std::make_shared<const RunView>(SimRunner::run(spec, c, job.id));
                        return std::function<void()>([this, r] {
                            if (!r->error.isEmpty()) {
                                statusBar()->showMessage(
                                    tr("the session's pinned run failed: %1").arg(r->error));
                                return;
                            }
                            state_->setPinned(r);
                            refreshComparison();
                        });
                    });
    }
}

void MainWindow::applySessionView() {
    // After the session's first run is shown: the view as it was saved.
    const nlohmann::json v = std::move(session_view_);
    session_view_ = nullptr;
    charts_->restoreView(v);
    Q_EMIT sessionOpened(true);
}

void MainWindow::pin() {
    if (!state_->run()) return;
    state_->setPinned(state_->run());
    refreshComparison();
    statusBar()->showMessage(
        tr("pinned: %1").arg(QString::fromStdString(state_->pinned()->summary.policy)));
}

void MainWindow::unpin() {
    state_->setPinned(nullptr);
    refreshComparison();
}

void MainWindow::refreshComparison() {
    charts_->refreshComparison();
}

QString MainWindow::pinnedName() const {
    return charts_->pinnedName();
}

views::TimelineView* MainWindow::timeline() const {
    return charts_->timeline();
}

views::KvChart* MainWindow::kvChart() const {
    return charts_->kvChart();
}

views::LatencyChart* MainWindow::latencyChart() const {
    return charts_->latencyChart();
}

FindBar* MainWindow::findBar() const {
    return charts_->findBar();
}

void MainWindow::setAgentRows(bool on) {
    charts_->setAgentRows(on);
}

bool MainWindow::agentRows() const {
    return charts_->agentRows();
}

QStringList MainWindow::chartNames() const {
    return charts_->chartNames();
}

bool MainWindow::exportChart(const QString& chart, const QString& path) {
    return charts_->exportChart(chart, path);
}

} // namespace kairos::app
