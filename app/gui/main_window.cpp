#include "main_window.h"

#include "chart_tools.h"
#include "export/perfetto.h"
#include "export/requests_csv.h"
#include "export/runlog_jsonl.h"
#include "generate_dialog.h"
#include "inspector_panel.h"
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
#include "policy_panel.h"
#include "profiles.h"
#include "report.h"
#include "run/knobs.h"
#include "run/pipeline.h"
#include "run/run_spec.h"
#include "runs_model.h"
#include "runs_panel.h"
#include "store/store.h"
#include "sweep_panel.h"
#include "time_range.h"
#include "timeline_view.h"
#include "trace_formats.h"
#include "tuf_chart.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/input_file.h"
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

// One parameter change (a slider, the policy, the predictor), undoable. Moves of one
// parameter less than 0.8 s apart merge: a drag is one step, not a hundred.
class ParamChange : public QUndoCommand {
public:
    ParamChange(MainWindow* w, QString name, QVariant before, QVariant after)
        : w_(w), name_(std::move(name)), before_(std::move(before)), after_(std::move(after)),
          at_(QDateTime::currentMSecsSinceEpoch()) {
        setText(QObject::tr("change %1").arg(name_));
    }
    void undo() override { w_->setParam(name_, before_); }
    void redo() override {
        if (first_) { // pushed after the change was made: nothing to do
            first_ = false;
            return;
        }
        w_->setParam(name_, after_);
    }
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const ParamChange*>(other);
        if (o->name_ != name_ || o->at_ - at_ > 800) return false;
        after_ = o->after_;
        at_ = o->at_;
        setObsolete(after_ == before_);
        return true;
    }

private:
    MainWindow* w_;
    QString name_;
    QVariant before_, after_;
    qint64 at_;
    bool first_ = true;
};

void MainWindow::noteParam(const QString& name, const QVariant& value) {
    QVariant& last = undo_values_[name];
    if (applying_undo_ || !last.isValid()) {
        last = value;
        return;
    }
    if (last == value) return;
    undo_->push(new ParamChange(this, name, last, value));
    last = value;
}

void MainWindow::setParam(const QString& name, const QVariant& value) {
    applying_undo_ = true;
    undo_values_[name] = value;
    if (name == QStringLiteral("policy"))
        policy_panel_->setPolicy(value.toString());
    else if (name == QStringLiteral("predictor"))
        policy_panel_->setPredictor(value.toString());
    else if (views::ParamSlider* s = slider(name))
        s->setValue(value.toDouble());
    applying_undo_ = false;
}

void MainWindow::buildHelpMenu() {
    auto* help = menuBar()->addMenu(tr("&Help"));
    auto show = [this](const QString& title, const QString& html) {
        auto* box =
            new QMessageBox(QMessageBox::NoIcon, title, QString(), QMessageBox::Close, this);
        box->setTextFormat(Qt::RichText);
        box->setText(html);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    };
    help->addAction(tr("&Keyboard and mouse"), QKeySequence::HelpContents, this,
                    [this, show] { show(tr("Keyboard and mouse"), shortcutsHelp()); });
    help->addAction(tr("&Metrics"), this, [show] {
        show(tr("What the metrics mean"),
             tr("<p>Latencies follow vLLM's benchmark definitions.</p><ul>"
                "<li><b>TTFT</b>: time to first token, arrival to the first output token "
                "(queueing and prefill).</li>"
                "<li><b>TPOT</b>: time per output token after the first, (end − first token) "
                "/ (output − 1).</li>"
                "<li><b>E2EL</b>: end-to-end latency, arrival to the last token.</li>"
                "<li><b>Goodput</b>: requests per second that met every SLO set (TTFT, TPOT); a "
                "killed request meets none.</li>"
                "<li><b>Offered rate / throughput</b>: requests arriving / completing per "
                "second. When served falls behind offered the run is <i>overloaded</i> and its "
                "latencies grow with its length, not a service level.</li>"
                "<li><b>Preemptions</b>: KV dropped and recomputed; <b>suspensions</b>: "
                "paused with KV kept (TimelyLLM segments).</li>"
                "<li><b>KV peak</b>: most KV-cache tokens in use.</li>"
                "<li><b>Utility W(s0)</b> (TimelyLLM): the time-utility function at the first "
                "response, as % of the most it can give; negative when late.</li>"
                "<li><b>Within budget</b> (TimeBill): finished before the request's time "
                "budget.</li>"
                "<li><b>[common]</b>: over the requests both compared runs completed.</li></ul>"));
    });
    help->addAction(tr("&Workload formats"), this,
                    [show] { show(tr("Workload formats"), traceFormatsHtml()); });
    help->addAction(tr("&Policies and papers"), this, [show] {
        QString html = tr("<p>The policies (kairos-cli policies --markdown gives "
                          "their parameters):</p><ul>");
        for (const PolicySpec& ps : policySpecs())
            html += QStringLiteral("<li><b>%1</b>: %2</li>")
                        .arg(QString::fromStdString(ps.name).toHtmlEscaped(),
                             QString::fromStdString(ps.summary).toHtmlEscaped());
        html += tr("</ul><p>Papers: <i>TimeBill</i> (time budgets, KV eviction α*, pessimism "
                   "k), <i>TimelyLLM</i> (time-utility functions, PUD, segmented generation), "
                   "<i>Trail</i> (refined length predictions, SPRPT with limited preemption C), "
                   "<i>MC-SF</i> (memory-constrained shortest-first), <i>ALA</i> (throughput "
                   "model c − a·e<sup>−b·batch</sup>). Predictors: %1.</p>")
                    .arg(QString::fromStdString(kPredictorGrammar).toHtmlEscaped());
        show(tr("Policies and papers"), html);
    });
    help->addSeparator();
    help->addAction(tr("&About Kairos"), this, [this] {
        QMessageBox::about(this, tr("About Kairos"),
                           tr("<b>Kairos %1</b><br>Latency analysis of LLM serving under "
                              "deadlines.")
                               .arg(QStringLiteral(KAIROS_VERSION)));
    });
}

QString MainWindow::shortcutsHelp() const {
    // From the menus' own actions (never stale), then what the mouse does.
    QString html = QStringLiteral("<table>");
    std::function<void(const QMenu*, const QString&)> walk = [&](const QMenu* m,
                                                                 const QString& path) {
        for (const QAction* a : m->actions()) {
            if (a->menu()) {
                walk(a->menu(), path + a->menu()->title().remove('&') + " › ");
                continue;
            }
            if (a->shortcut().isEmpty() || a->text().isEmpty()) continue;
            html += QStringLiteral("<tr><td><b>%1</b></td><td>%2%3</td></tr>")
                        .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                             path.toHtmlEscaped(), a->text().remove('&').toHtmlEscaped());
        }
    };
    for (const QAction* a : menuBar()->actions())
        if (a->menu()) walk(a->menu(), a->menu()->title().remove('&') + " › ");
    html += tr("<tr><td><b>F3 / Shift+F3</b></td><td>next / previous found request</td></tr>"
               "<tr><td><b>Esc</b></td><td>cancel a long run or read</td></tr>"
               "<tr><td><b>Wheel</b></td><td>zoom time around the cursor</td></tr>"
               "<tr><td><b>Shift+wheel</b></td><td>scroll rows</td></tr>"
               "<tr><td><b>Ctrl+wheel</b></td><td>row height</td></tr>"
               "<tr><td><b>Drag</b></td><td>pan time (timeline and KV chart)</td></tr>"
               "<tr><td><b>Click</b></td><td>a request's card</td></tr>"
               "<tr><td><b>Right click</b></td><td>a chart: Export chart; a slider: "
               "Sweep this parameter</td></tr></table>");
    return html;
}

MainWindow::MainWindow(const StartOptions& opt, QWidget* parent)
    : QMainWindow(parent), start_(opt), state_(new WorkbenchState(this)), runner_(&jobs_) {
    setWindowTitle(QStringLiteral("Kairos"));
    auto device = std::make_shared<ResolvedExec>();
    device->profile = resolveProfile(opt.profile.isEmpty() ? std::string(kDefaultProfile)
                                                           : opt.profile.toStdString());
    device->model = makeExecutionModel(device->profile);
    device_ = std::move(device);
    exec_.profile = device_->profile.name;
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
    b.profile = device_->profile;
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
    s.exec = exec_;
    // --param values without a slider go to the policy they were given for.
    if (policy_panel_->policy() == start_.policy)
        for (const auto& [k, v] : extra_params_)
            if (!slider(QString::fromStdString(k))) s.policy.params[k] = v;
    policy_panel_->specInto(&s, device_->profile.kvCapacityTokens());
    return s;
}

RunContext MainWindow::windowContext() const {
    RunContext c = runContext();
    c.cache = const_cast<WorkloadCache*>(&cache_); // thread-safe; its own lock
    c.exec = device_;
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
    range_ = state_->range();
    timeline_ = new views::TimelineView(range_);
    kv_ = new views::KvChart(range_);
    latency_ = new views::LatencyChart;
    tuf_ = new views::TufChart;
    auto* tabs = new QTabWidget;
    tabs->setObjectName(QStringLiteral("charts"));
    tabs->addTab(kv_, tr("&KV memory"));
    tabs->addTab(latency_, tr("&Latency CDFs"));
    tabs->addTab(tuf_, tr("&Utility (TUF)"));
    // Find requests: the search field (core's RequestFilter grammar) over the timeline,
    // its count, previous / next (Shift+F3 / F3) and "only matches".
    auto* find_bar = new QWidget;
    auto* fb = new QHBoxLayout(find_bar);
    fb->setContentsMargins(2, 2, 2, 0);
    filter_ = new QLineEdit;
    filter_->setObjectName(QStringLiteral("requestFilter"));
    filter_->setClearButtonEnabled(true);
    filter_->setPlaceholderText(
        tr("Find requests: 17, killed, preempted, slo, class=urgent, agent=3, phase=suspended, "
           "ttft>2000, e2el>30000 …"));
    filter_help_ =
        tr("<b>Find requests</b> (Ctrl+F). Terms separated by spaces must all hold; a leading "
           "! negates one.<br><tt>17</tt> or <tt>id=17</tt> a request; <tt>agent=3</tt>, "
           "<tt>class=urgent</tt>; <tt>phase=queued|prefill|decoding|preempted|suspended</tt> "
           "(it spent time in it); <tt>killed finished unfinished preempted suspended</tt>; "
           "<tt>slo</tt> missed a goodput SLO; <tt>ttft&gt;MS tpot&gt;MS e2el&gt;MS queue&gt;MS"
           "</tt> (also &lt;, &gt;=, &lt;=); <tt>prompt&gt;N output&gt;N</tt> tokens.<br>Enter "
           "or F3 jumps to the next match, Shift+F3 to the previous.");
    filter_->setToolTip(filter_help_);
    filter_info_ = new QLabel;
    filter_info_->setObjectName(QStringLiteral("filterInfo"));
    auto* prev_match = new QToolButton;
    prev_match->setArrowType(Qt::UpArrow);
    prev_match->setToolTip(tr("Previous match (Shift+F3)"));
    prev_match->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F3));
    auto* next_match = new QToolButton;
    next_match->setArrowType(Qt::DownArrow);
    next_match->setToolTip(tr("Next match (F3)"));
    next_match->setShortcut(QKeySequence(Qt::Key_F3));
    only_matches_ = new QCheckBox(tr("Only &matches"));
    only_matches_->setToolTip(tr("Show only the matching requests' rows"));
    // Back / Forward through the zoom and search history (as KDAB Hotspot does).
    back_ = new QToolButton;
    back_->setArrowType(Qt::LeftArrow);
    back_->setToolTip(tr("Back to the previous zoom and search (Alt+Left)"));
    back_->setEnabled(false);
    forward_ = new QToolButton;
    forward_->setArrowType(Qt::RightArrow);
    forward_->setToolTip(tr("Forward (Alt+Right)"));
    forward_->setEnabled(false);
    connect(back_, &QToolButton::clicked, this, &MainWindow::historyBack);
    connect(forward_, &QToolButton::clicked, this, &MainWindow::historyForward);
    fb->addWidget(back_);
    fb->addWidget(forward_);
    fb->addWidget(filter_, 1);
    fb->addWidget(filter_info_);
    fb->addWidget(prev_match);
    fb->addWidget(next_match);
    fb->addWidget(only_matches_);
    filter_timer_ = new QTimer(this);
    filter_timer_->setSingleShot(true);
    filter_timer_->setInterval(200);
    connect(filter_, &QLineEdit::textChanged, filter_timer_, qOverload<>(&QTimer::start));
    connect(filter_timer_, &QTimer::timeout, this, [this] { applyFilter(); });
    connect(filter_, &QLineEdit::returnPressed, this, [this] {
        filter_timer_->stop();
        applyFilter();
        nextMatch();
    });
    connect(prev_match, &QToolButton::clicked, this, &MainWindow::previousMatch);
    connect(next_match, &QToolButton::clicked, this, &MainWindow::nextMatch);
    connect(only_matches_, &QCheckBox::toggled, this, [this] { applyRows(); });
    history_timer_ = new QTimer(this);
    history_timer_->setSingleShot(true);
    history_timer_->setInterval(600); // a view kept this long is a step (not each wheel notch)
    connect(history_timer_, &QTimer::timeout, this, &MainWindow::recordView);
    connect(range_, &views::TimeRange::changed, this, [this] {
        if (!restoring_view_) history_timer_->start();
    });
    auto* top = new QWidget;
    auto* tv = new QVBoxLayout(top);
    tv->setContentsMargins(0, 0, 0, 0);
    tv->setSpacing(0);
    tv->addWidget(find_bar);
    tv->addWidget(timeline_, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({600, 230});
    // Above the charts, when the run was overloaded: its numbers describe a queue that
    // grows without bound, not a service level (core/metrics/load.h decides).
    load_banner_ = new QLabel;
    load_banner_->setObjectName(QStringLiteral("loadBanner"));
    load_banner_->setWordWrap(true);
    load_banner_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    load_banner_->setStyleSheet(
        QStringLiteral("QLabel { background: #fff1d6; color: #6b4300; border: 1px solid #e0a040; "
                       "padding: 4px 8px; }"));
    load_banner_->setVisible(false);
    auto* central = new QWidget;
    auto* cv = new QVBoxLayout(central);
    cv->setContentsMargins(0, 0, 0, 0);
    cv->setSpacing(2);
    cv->addWidget(load_banner_);
    cv->addWidget(split, 1);
    setCentralWidget(central);
    kv_->setPlotMargins(views::TimelineView::kGutter,
                        timeline_->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
    // Every chart: right click > Export chart as SVG or PNG (exportChart).
    chart_savers_[QStringLiteral("timeline")] = [this](const QString& path) {
        return views::saveDrawing(
            path, timeline_->viewport()->size(), [this](QPainter& p, const QRect& r) {
                p.fillRect(r, timeline_->palette().color(QPalette::Base));
                timeline_->render(p, r, timeline_->verticalScrollBar()->value());
            });
    };
    auto plot = [](QCustomPlot* c) {
        return [c](const QString& path) { return views::saveChart(c, path); };
    };
    chart_savers_[QStringLiteral("kv_memory")] = plot(kv_);
    chart_savers_[QStringLiteral("latency_cdfs")] = plot(latency_);
    chart_savers_[QStringLiteral("utility")] = plot(tuf_);
    views::addChartExport(timeline_, QStringLiteral("timeline"), chart_savers_["timeline"]);
    views::addChartExport(kv_, QStringLiteral("kv_memory"));
    views::addChartExport(latency_, QStringLiteral("latency_cdfs"));
    views::addChartExport(tuf_, QStringLiteral("utility"));

    // Policy panel (policy_panel.h): the workload, the policy, predictor and device, the
    // sliders, the TUF sliders and the request card. The window reacts to its controls.
    policy_panel_ =
        new PolicyPanel(start_.compare.isEmpty() ? start_.policy : start_.compare, start_.predictor,
                        QString::fromStdString(device_->profile.name), extra_params_);
    auto* panel = policy_panel_;
    // Serving as the command line asked (before any signal is connected: no re-run).
    policy_panel_->setPrefixCaching(start_.prefix_caching);
    policy_panel_->setReplicas(start_.replicas);
    policy_panel_->setRouter(start_.router);
    policy_panel_->attach(state_);
    connect(policy_panel_, &PolicyPanel::openRequested, this, [this] {
        const QString f =
            QFileDialog::getOpenFileName(this, tr("Open workload"), QString(), traceFileFilter());
        if (!f.isEmpty()) openWorkload(f);
    });
    connect(policy_panel_, &PolicyPanel::generateRequested, this, &MainWindow::generateWorkload);
    chart_savers_[QStringLiteral("lengths")] = [this](const QString& path) {
        return views::saveChart(policy_panel_->histogram(), path);
    };
    connect(policy_panel_, &PolicyPanel::deviceChosen, this, [this](const QString& name) {
        RunSpec::ExecPart e;
        e.profile = name.toStdString();
        useExecution(e);
    });
    connect(policy_panel_, &PolicyPanel::paramMoved, this,
            [this](const QString& name, double moved) {
                noteParam(name, moved);
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
    auto* runs_dock = new QDockWidget(tr("Runs"), this);
    runs_dock->setObjectName(QStringLiteral("runs"));
    runs_dock->setWidget(runs_);
    addDockWidget(Qt::RightDockWidgetArea, runs_dock);
    tabifyDockWidget(metrics_dock_, runs_dock);
    metrics_dock_->raise();
    // Models: the fitted models in the database, the selected one plotted (models_panel.h).
    models_ = new ModelsPanel(&jobs_, db_path_);
    models_->setObjectName(QStringLiteral("modelsPanel"));
    chart_savers_[QStringLiteral("model")] = [this](const QString& path) {
        return views::saveChart(models_->chart(), path);
    };
    connect(models_, &ModelsPanel::modelShown, this, &MainWindow::modelShown);
    connect(models_, &ModelsPanel::message, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    connect(models_, &ModelsPanel::useModel, this, [this](qint64 id, const QString& config) {
        RunSpec::ExecPart e;
        e.profile = device_->profile.name;
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
    connect(timeline_, &views::TimelineView::cursorMoved, inspector_,
            &InspectorPanel::followCursor);
    connect(kv_, &views::KvChart::cursorMoved, inspector_, &InspectorPanel::followCursor);
    connect(kv_, &views::KvChart::timeClicked, this, [this](double t) {
        inspector_->inspectAt(t);
        showInspector();
    });
    connect(inspector_, &InspectorPanel::timeChanged, this, [this](double t) {
        timeline_->setInspectedTime(t);
        kv_->setInspectedTime(t);
    });
    connect(inspector_, &InspectorPanel::requestPicked, this, [this](int id, double t) {
        if (id < 0) return;
        state_->setSelection(id, t);
        timeline_->scrollToRequest(id);
    });
    connect(timeline_, &views::TimelineView::requestClicked, this, [this] { showInspector(); });
    metrics_dock_->raise();
    runs_->refresh();

    connect(policy_panel_, &PolicyPanel::policyChanged, this, [this](const QString& p) {
        noteParam(QStringLiteral("policy"), p);
        live_->setPolicy(p);
        resimulate();
    });
    connect(policy_panel_, &PolicyPanel::predictorChanged, this, [this](const QString& p) {
        noteParam(QStringLiteral("predictor"), p);
        resimulate();
    });
    connect(policy_panel_, &PolicyPanel::servingChanged, this, &MainWindow::resimulate);
    connect(timeline_, &views::TimelineView::requestClicked, state_, &WorkbenchState::setSelection);
    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open workload…"), QKeySequence::Open, policy_panel_,
                    &PolicyPanel::openRequested);
    file->addAction(tr("&Generate workload…"), QKeySequence(Qt::CTRL | Qt::Key_G), this,
                    &MainWindow::generateWorkload);
    recent_menu_ = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    auto* exp = file->addMenu(tr("&Export"));
    // Exports write the shown run through core's writers (whole file or nothing). Those
    // without charts run on the job tracker; reports draw their charts with widgets, which
    // live on the GUI thread.
    auto exporter = [this](const QString& title, const QString& filter,
                           std::function<void(const RunView&, const std::string&)> write,
                           bool background = true) {
        return [this, title, filter, write, background] {
            if (!state_->run()) return;
            const QString f = QFileDialog::getSaveFileName(this, title, QString(), filter);
            if (f.isEmpty()) return;
            auto done = [this, title, f](const QString& error) {
                if (error.isEmpty())
                    statusBar()->showMessage(tr("wrote %1").arg(f));
                else
                    QMessageBox::warning(this, title, error);
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
            statusBar()->showMessage(tr("writing %1…").arg(f));
            jobs_.start(
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
    };
    auto report = [this](bool pdf) {
        return [this, pdf](const RunView& r, const std::string& f) {
            views::ReportData d;
            d.workload = r.workload.get();
            d.log = r.log.get();
            d.summary = &r.summary;
            d.pinned = state_->pinned() && state_->pinned().get() != &r ? &state_->pinned()->summary
                                                                        : nullptr;
            d.pinned_log = d.pinned ? state_->pinned()->log.get() : nullptr;
            d.config = {{"profile", device_->profile.name},
                        {"execution model", r.log->exec_model},
                        {"predictor", r.policy.predictor}};
            d.name = QStringLiteral("%1 on %2")
                         .arg(QString::fromStdString(r.summary.policy), state_->workloadName());
            if (d.pinned) d.pinned_name = pinnedName();
            d.goodput = r.summary_options.goodput;
            d.spec_json = QString::fromStdString(runSpecJson(r, 2));
            if (d.spec_json.isEmpty())
                d.spec_json = tr("(none: a workload generated in the window is not a file; "
                                 "File › Save session keeps it)");
            d.profile_json = QString::fromStdString(device_->profile.toJson().dump(2));
            d.title = tr("Kairos report: %1").arg(QString::fromStdString(r.workload->name));
            if (pdf)
                views::writeReportPdf(d, QString::fromStdString(f));
            else
                views::writeReportHtml(d, QString::fromStdString(f));
        };
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
    exp->addAction(
        tr("Per-request &CSV…"), this,
        exporter(tr("Export per-request metrics"), tr("CSV (*.csv)"),
                 [](const RunView& r, const std::string& f) { writeRequestsCsvFile(*r.log, f); }));
    exp->addAction(tr("&Run log…"), this,
                   exporter(tr("Export run log"), tr("Run log (*.jsonl)"),
                            [](const RunView& r, const std::string& f) {
                                writeRunLogJsonlFile(*r.log, f, RunLogWriteOptions{});
                            }));
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
    undo_ = new QUndoStack(this);
    auto* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undo_->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = undo_->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z));
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(tr("&Find requests…"), QKeySequence::Find, this, [this] {
        filter_->setFocus();
        filter_->selectAll();
    });
    auto* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Reset zoom"), QKeySequence(Qt::Key_Home), range_,
                    &views::TimeRange::reset);
    view->addAction(tr("&Back"), QKeySequence(Qt::ALT | Qt::Key_Left), this,
                    &MainWindow::historyBack);
    view->addAction(tr("&Forward"), QKeySequence(Qt::ALT | Qt::Key_Right), this,
                    &MainWindow::historyForward);
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
    agent_rows_action_ = view->addAction(tr("Rows per &agent"));
    agent_rows_action_->setCheckable(true);
    agent_rows_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    agent_rows_action_->setToolTip(
        tr("One row per agent (robot workloads): its requests packed into lanes"));
    agent_rows_action_->setEnabled(false);
    connect(agent_rows_action_, &QAction::toggled, this, &MainWindow::setAgentRows);
    // Every panel, shown or hidden: a closed panel comes back from here.
    view->addSeparator();
    view->addSection(tr("Panels"));
    for (auto* d : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly))
        view->addAction(d->toggleViewAction());
    buildHelpMenu();
    // Progress and cancel for simulations that take longer than a third of a second.
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(220);
    progress_->setTextVisible(false);
    cancel_ = new QToolButton;
    cancel_->setText(tr("Cancel"));
    cancel_->setShortcut(QKeySequence(Qt::Key_Escape));
    exec_label_ = new QLabel;
    exec_label_->setObjectName(QStringLiteral("execLabel"));
    statusBar()->addPermanentWidget(exec_label_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
    progress_->hide();
    cancel_->hide();
    connect(cancel_, &QToolButton::clicked, this, [this] {
        if (loading())
            jobs_.cancel(QStringLiteral("load"));
        else
            runner_.cancel();
    });
    poll_ = new QTimer(this);
    poll_->setInterval(100);
    connect(poll_, &QTimer::timeout, this, [this] {
        const bool busy = loading() || runner_.busy();
        const bool show = busy && QDateTime::currentMSecsSinceEpoch() - job_started_ms_ > 300;
        progress_->setVisible(show);
        cancel_->setVisible(show);
        if (show)
            progress_->setValue(static_cast<int>(
                1000 * (loading() ? jobs_.latest(QStringLiteral("load"))->progress.load()
                                  : runner_.progress())));
        if (!busy) poll_->stop();
    });
    showExecution();
    // What undo goes back to: every parameter's value now.
    undo_values_[QStringLiteral("policy")] = policy_panel_->policy();
    undo_values_[QStringLiteral("predictor")] = policy_panel_->predictor();
    for (const auto& [name, w] : policy_panel_->sliders()) undo_values_[name] = w->value();
    statusBar()->showMessage(tr("Open a workload to begin"));
    resize(1400, 850);
    // Window layout as the user left it.
    QSettings settings;
    setAgentRows(start_.agent_rows || settings.value(QStringLiteral("view/agentRows")).toBool());
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("view/agentRows"), agent_rows_);
    jobs_.cancelAll(); // closing: stop spending the CPU on what nobody will see
    QMainWindow::closeEvent(e);
}

std::pair<views::ParamSlider*, views::ParamSlider*>
MainWindow::tufSliders(const std::string& cls) const {
    return policy_panel_->tufSliders(cls);
}

void MainWindow::rememberRecent(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > 10) recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    recent_menu_->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& f : recent)
        recent_menu_->addAction(QFileInfo(f).fileName(), this, [this, f] { openWorkload(f); })
            ->setToolTip(f);
    recent_menu_->setEnabled(!recent.isEmpty());
}

bool MainWindow::loading() const {
    return jobs_.busy(QStringLiteral("load"));
}

void MainWindow::openWorkload(const QString& path) {
    job_started_ms_ = QDateTime::currentMSecsSinceEpoch();
    poll_->start();
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
                rememberRecent(path);
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
    history_.clear();
    history_pos_ = -1;
    back_->setEnabled(false);
    forward_->setEnabled(false);
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
    job_started_ms_ = QDateTime::currentMSecsSinceEpoch();
    poll_->start();
    statusBar()->showMessage(tr("simulating (job %1)…").arg(job));
}

void MainWindow::showResult(std::shared_ptr<const RunView> r) {
    progress_->hide();
    cancel_->hide();
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
        restoring_view_ = true; // the new extent is the history's first step, not a move
        range_->setExtent(lo, hi);
        restoring_view_ = false;
        state_->setSelection(-1, 0.0); // another workload: another request with that id
    }
    restoring_view_ = true; // a re-run's search is not a new step
    applyFilter(false);     // the search's matches in this run; its rows: refreshComparison below
    restoring_view_ = false;
    if (history_.empty()) recordView();
    const LoadReport& load = r->summary.load;
    load_banner_->setVisible(load.saturated.value_or(false));
    if (load.saturated.value_or(false))
        load_banner_->setText(
            tr("<b>Overloaded:</b> %1 req/s offered, %2 req/s served. %3. Latencies of a run "
               "like this grow with its length; lower the rate or add capacity to measure a "
               "service level.")
                .arg(load.offered_rate, 0, 'f', 2)
                .arg(r->summary.request_throughput, 0, 'f', 2)
                .arg(QString::fromStdString(load.verdict).toHtmlEscaped()));
    // A fleet's KV is its replicas' together, against their capacity together.
    live_->setWorkload(r->workload); // a live run uses the workload as shown
    kv_->setRun(r->kv, double(r->limits.kv_capacity_tokens) * std::max(1, r->spec.fleet.replicas),
                r->preemptions, r->kv_held);
    tuf_->setClasses(r->tufs);
    refreshComparison();
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
    auto r = state_->run();
    const QString path = db_path_;
    const std::string spec_json = runSpecJson(*r);
    // Every save matters (Keep::All); the same connection then lists the runs, so the
    // Runs panel shows the new run when runSaved arrives.
    jobs_.start(
        QStringLiteral("save"), this,
        [this, r, path, spec_json](JobTracker::Job&) {
            qint64 id = -1;
            QString error;
            try {
                store::RunRecord rec =
                    store::makeRunRecord(*r->workload, r->workload->source, *r->log, r->summary,
                                         r->policy, r->limits, "saved from the workbench");
                rec.spec_json = spec_json;
                store::Store db(path.toStdString());
                id = db.putRun(rec);
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            auto snap = std::make_shared<const RunsSnapshot>(RunsSnapshot::read(path));
            return std::function<void()>([this, id, error, snap] {
                if (id < 0)
                    statusBar()->showMessage(tr("cannot save the run: %1").arg(error));
                else
                    statusBar()->showMessage(tr("saved as run %1").arg(id));
                runs_->apply(*snap);
                Q_EMIT runSaved(id);
            });
        },
        JobTracker::Keep::All);
}

void MainWindow::pinStoredRun(qint64 id) {
    // Off the GUI thread: the stored run, its per-request rows and, when it keeps its
    // RunSpec, a re-run of it (deterministic) for the timeline, KV and CDF overlays, used
    // only if it reproduces every stored metric. Goodput is then measured under this
    // window's SLOs, as the shown run's is.
    const QString path = db_path_;
    const auto shown = state_->run() ? state_->run()->workload : nullptr;
    const SummaryOptions window_so = windowSummary();
    statusBar()->showMessage(tr("reading stored run %1…").arg(id));
    jobs_.start(
        QStringLiteral("pin"), this, [this, path, id, shown, window_so](JobTracker::Job& job) {
            std::shared_ptr<RunView> r;
            std::optional<store::RunInfo> info;
            QString error, other, overlay_note;
            try {
                const store::Store db(path.toStdString());
                info = db.run(id);
                if (!info)
                    throw std::invalid_argument("no run " + std::to_string(id) + " in " +
                                                path.toStdString());
                const Summary stored = Summary::fromJson(nlohmann::json::parse(info->summary_json));
                if (!info->spec_json.empty()) {
                    try {
                        const RunSpec spec =
                            RunSpec::fromJson(nlohmann::json::parse(info->spec_json),
                                              path.toStdString() + ": run " + std::to_string(id));
                        RunContext ctx = runContext();
                        ctx.cancel = &job.cancel;
                        ctx.progress = &job.progress;
                        // Measured as the stored run was (its inter-token latency too).
                        auto full = std::make_shared<RunView>(
                            SimRunner::run(spec, ctx, job.id, /*itl=*/true));
                        if (!full->error.isEmpty())
                            throw std::runtime_error(full->error.toStdString());
                        const auto diffs = differingMetrics(stored, full->summary);
                        if (full->summary.policy != stored.policy) {
                            overlay_note =
                                tr("re-running its RunSpec ran %1, not the stored %2, so "
                                   "it has no timeline or KV overlay")
                                    .arg(QString::fromStdString(full->summary.policy),
                                         QString::fromStdString(stored.policy));
                        } else if (diffs.empty()) {
                            SummaryOptions so = window_so;
                            so.workload = full->workload.get();
                            full->summary = summarize(*full->log, *full->requests, so);
                            full->summary_options = so;
                            r = std::move(full);
                        } else {
                            overlay_note =
                                tr("re-running its RunSpec gave other figures (%1: %2 stored, %3 "
                                   "re-run; %4 metric(s) differ), so it has no timeline or KV "
                                   "overlay")
                                    .arg(QString::fromStdString(diffs.front().name))
                                    .arg(diffs.front().stored, 0, 'g', 6)
                                    .arg(diffs.front().rerun, 0, 'g', 6)
                                    .arg(diffs.size());
                        }
                    } catch (const std::exception& e) {
                        if (job.cancel) return std::function<void()>();
                        overlay_note = tr("its RunSpec cannot be re-run here (%1), so it has no "
                                          "timeline or KV overlay")
                                           .arg(QString::fromStdString(e.what()));
                    }
                } else {
                    overlay_note = tr("it was stored without its RunSpec (a generated workload, or "
                                      "edited utility functions), so it has no timeline or KV "
                                      "overlay");
                }
                if (!r) { // the stored figures and per-request rows only
                    r = std::make_shared<RunView>();
                    r->summary = stored;
                    r->requests = std::make_shared<const std::vector<RequestMetrics>>(
                        store::toRequestMetrics(db.runRequests(id)));
                    auto cdfs = lod::latencyCdfs(*r->requests);
                    r->cdf_ttft = std::move(cdfs.ttft);
                    r->cdf_tpot = std::move(cdfs.tpot);
                    r->cdf_e2el = std::move(cdfs.e2el);
                }
                // Of the shown workload? The store keys workloads by their content.
                if (shown && store::contentHash(*shown) != info->workload_hash)
                    other = tr("The pinned run (stored run %1) is of another workload: %2 (%3 "
                               "requests), not the shown one (%4 requests). Its figures are shown "
                               "beside, but the change column compares different requests.")
                                .arg(id)
                                .arg(QString::fromStdString(info->workload_name))
                                .arg(info->num_requests)
                                .arg(shown->size());
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            return std::function<void()>([this, id, r, info, error, other, overlay_note] {
                if (!error.isEmpty()) {
                    statusBar()->showMessage(tr("cannot read run %1: %2").arg(id).arg(error));
                    Q_EMIT storedRunPinned(id, false);
                    return;
                }
                state_->setPinned(r, id,
                                  overlay_note.isEmpty()
                                      ? QString()
                                      : tr("Stored run %1: %2.").arg(id).arg(overlay_note),
                                  other);
                refreshComparison();
                statusBar()->showMessage(
                    (other.isEmpty() ? tr("pinned stored run %1: %2 on %3")
                                     : tr("pinned stored run %1: %2 on %3, ANOTHER workload"))
                        .arg(id)
                        .arg(QString::fromStdString(info->policy))
                        .arg(QString::fromStdString(info->workload_name)));
                Q_EMIT storedRunPinned(id, true);
            });
        });
}

void MainWindow::setFilter(const QString& text) {
    const QSignalBlocker block(filter_);
    filter_->setText(text);
    filter_timer_->stop();
    applyFilter();
}

void MainWindow::applyFilter(bool apply_rows) {
    matches_.clear();
    match_pos_ = -1;
    filter_error_.clear();
    const QString text = filter_->text().trimmed();
    std::shared_ptr<std::vector<bool>> marked;
    if (!text.isEmpty() && state_->run() && state_->run()->requests) {
        try {
            const RequestFilter f = RequestFilter::parse(text.toStdString());
            matches_ = f.apply(*state_->run()->requests, state_->run()->workload.get(),
                               state_->run()->rows.get(), state_->run()->summary_options.goodput);
            marked = std::make_shared<std::vector<bool>>(state_->run()->requests->size(), false);
            for (ReqId id : matches_) (*marked)[std::size_t(id)] = true;
        } catch (const std::exception& e) {
            filter_error_ = QString::fromStdString(e.what());
        }
    }
    filter_->setStyleSheet(
        filter_error_.isEmpty() ? QString() : QStringLiteral("QLineEdit { background: #fde8e8; }"));
    filter_->setToolTip(filter_error_.isEmpty()
                            ? filter_help_
                            : filter_help_ + "<hr>" + filter_error_.toHtmlEscaped());
    if (!filter_error_.isEmpty())
        filter_info_->setText(tr("<span style='color:#b02020'>%1</span>")
                                  .arg(filter_error_.section(':', 1).trimmed().toHtmlEscaped()));
    else if (text.isEmpty() || !state_->run())
        filter_info_->clear();
    else
        filter_info_->setText(
            tr("%1 of %2").arg(matches_.size()).arg(state_->run()->requests->size()));
    timeline_->setMarked(marked, -1);
    if (apply_rows && only_matches_->isChecked()) applyRows();
    if (!restoring_view_) recordView();
}

MainWindow::ViewState MainWindow::currentView() const {
    return {range_->from(), range_->to(), filter_->text().trimmed(), only_matches_->isChecked()};
}

void MainWindow::recordView() {
    history_timer_->stop();
    if (!state_->run()) return;
    const ViewState v = currentView();
    if (history_pos_ >= 0 && history_[std::size_t(history_pos_)] == v) return;
    history_.resize(std::size_t(history_pos_ + 1)); // a new step drops the forward ones
    history_.push_back(v);
    if (history_.size() > 100) history_.erase(history_.begin());
    history_pos_ = int(history_.size()) - 1;
    back_->setEnabled(history_pos_ > 0);
    forward_->setEnabled(false);
}

void MainWindow::restoreView(int pos) {
    if (pos < 0 || pos >= int(history_.size())) return;
    history_timer_->stop();
    history_pos_ = pos;
    const ViewState& v = history_[std::size_t(pos)];
    restoring_view_ = true;
    {
        const QSignalBlocker block(only_matches_);
        only_matches_->setChecked(v.only_matches);
    }
    setFilter(v.filter);
    range_->setRange(v.from, v.to);
    restoring_view_ = false;
    back_->setEnabled(history_pos_ > 0);
    forward_->setEnabled(history_pos_ + 1 < int(history_.size()));
}

void MainWindow::historyBack() {
    if (history_timer_->isActive()) recordView(); // the view being settled is a step too
    restoreView(history_pos_ - 1);
}

void MainWindow::historyForward() {
    restoreView(history_pos_ + 1);
}

void MainWindow::stepMatch(int step) {
    if (matches_.empty()) return;
    const int n = int(matches_.size());
    match_pos_ = match_pos_ < 0 ? (step > 0 ? 0 : n - 1) : ((match_pos_ + step) % n + n) % n;
    const int id = int(matches_[std::size_t(match_pos_)]);
    filter_info_->setText(tr("%1 / %2 of %3")
                              .arg(match_pos_ + 1)
                              .arg(n)
                              .arg(state_->run() ? state_->run()->requests->size() : 0));
    timeline_->setMarked(timeline_->marked(), id);
    timeline_->scrollToRequest(id);
    // The request's card, at its arrival.
    state_->setSelection(id, (*state_->run()->rows)[std::size_t(id)].arrival);
}

QString MainWindow::requestCard() const {
    return policy_panel_->cardText();
}

void MainWindow::nextMatch() {
    stepMatch(+1);
}

void MainWindow::previousMatch() {
    stepMatch(-1);
}

void MainWindow::useExecution(const RunSpec::ExecPart& exec) {
    // Resolved off the GUI thread (a profile file, a stored model read and an ALA model
    // parsed); a failure leaves the device as it was.
    statusBar()->showMessage(tr("loading the execution model…"));
    jobs_.start(QStringLiteral("exec"), this, [this, exec](JobTracker::Job&) {
        auto r = std::make_shared<ResolvedExec>();
        QString error;
        try {
            *r = resolveExec(exec, runContext());
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, exec, r, error] {
            if (!error.isEmpty()) {
                statusBar()->showMessage(tr("cannot use that device: %1").arg(error));
                policy_panel_->showDevice(QString::fromStdString(device_->profile.name),
                                          exec_.model_id);
                Q_EMIT executionChanged(false);
                return;
            }
            exec_ = exec;
            device_ = r;
            showExecution();
            for (const auto& w : r->model_warnings)
                statusBar()->showMessage(QString::fromStdString(w));
            resimulate();
            Q_EMIT executionChanged(true);
        });
    });
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
    return exec_label_->text();
}

void MainWindow::showExecution() {
    const DeviceProfile& profile = device_->profile;
    policy_panel_->showDevice(QString::fromStdString(profile.name), exec_.model_id);
    // Short in the status bar (the model's name), whole in the tooltip (its parameters).
    const QString full = QString::fromStdString(device_->model->describe());
    QString name = full.section(QStringLiteral(" ["), 0, 0);
    if (exec_.model_id > 0) name += tr(" on %1").arg(QString::fromStdString(profile.name));
    exec_label_->setText(tr("device: %1 · KV %2 tokens").arg(name).arg(profile.kvCapacityTokens()));
    exec_label_->setToolTip(tr("%1<br>The execution model the simulations use, and the device "
                               "profile's KV capacity (the KV slider scales it)")
                                .arg(full.toHtmlEscaped()));
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
    auto* tabs = findChild<QTabWidget*>(QStringLiteral("charts"));
    f.view = {{"tab", tabs ? tabs->currentIndex() : 0},
              {"agent_rows", agent_rows_},
              {"from", range_->from()},
              {"to", range_->to()},
              {"row_height", timeline_->rowHeight()},
              {"filter", filter_->text().toStdString()},
              {"only_matches", only_matches_->isChecked()}};
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
        exec_ = s.file.run.exec;
        device_ = s.device;
        showExecution();
    } else {
        statusBar()->showMessage(tr("the session's device cannot be used (%1); %2 is")
                                     .arg(QString::fromStdString(s.device_error))
                                     .arg(QString::fromStdString(device_->profile.name)));
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
    applying_undo_ = true;
    policy_panel_->applySpec(s.file.run, device_->profile.kvCapacityTokens());
    applying_undo_ = false;
    for (const auto& [slider_name, w] : policy_panel_->sliders())
        undo_values_[slider_name] = w->value();
    undo_values_[QStringLiteral("policy")] = policy_panel_->policy();
    undo_values_[QStringLiteral("predictor")] = policy_panel_->predictor();
    undo_->clear();
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
    try {
        if (auto* tabs = findChild<QTabWidget*>(QStringLiteral("charts")))
            tabs->setCurrentIndex(v.value("tab", 0));
        setAgentRows(v.value("agent_rows", false));
        if (v.contains("from") && v.contains("to"))
            range_->setRange(v.at("from").get<double>(), v.at("to").get<double>());
        if (v.contains("row_height")) timeline_->setRowHeight(v.at("row_height").get<double>());
        {
            const QSignalBlocker block(only_matches_);
            only_matches_->setChecked(v.value("only_matches", false));
        }
        setFilter(QString::fromStdString(v.value("filter", std::string())));
    } catch (const std::exception&) {
        // A view field of the wrong type: the view stays as it is.
    }
    Q_EMIT sessionOpened(true);
}

void MainWindow::setAgentRows(bool on) {
    agent_rows_ = on;
    if (agent_rows_action_->isChecked() != on) agent_rows_action_->setChecked(on);
    applyRows();
}

void MainWindow::applyRows() {
    agent_rows_action_->setEnabled(state_->run() && state_->run()->agent_rows);
    if (!state_->run()) return;
    const bool lanes = agent_rows_ && state_->run()->agent_rows;
    if (only_matches_->isChecked() && !lanes && !filter_->text().trimmed().isEmpty() &&
        filter_error_.isEmpty()) {
        // The matching requests' rows only (and the pinned run's same requests).
        auto rows = std::make_shared<std::vector<lod::Row>>();
        const bool pin = state_->pinnedComparable() && state_->pinned()->rows &&
                         state_->pinned()->rows->size() == state_->run()->rows->size();
        auto pinned = pin ? std::make_shared<std::vector<lod::Row>>() : nullptr;
        for (ReqId id : matches_) {
            rows->push_back((*state_->run()->rows)[std::size_t(id)]);
            if (pin) pinned->push_back((*state_->pinned()->rows)[std::size_t(id)]);
        }
        timeline_->setRows(std::move(rows), state_->run()->rows);
        timeline_->setPinnedRows(std::move(pinned));
        return;
    }
    timeline_->setRows(lanes ? state_->run()->agent_rows : state_->run()->rows,
                       state_->run()->rows);
    timeline_->setPinnedRows(state_->pinnedComparable() ? state_->pinned()->rows : nullptr);
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

QString MainWindow::pinnedName() const {
    if (!state_->pinned()) return {};
    // The policy's name without its parameters (the metrics table's header has them).
    const QString name =
        QString::fromStdString(state_->pinned()->summary.policy).section('(', 0, 0);
    return state_->pinnedStoredId() >= 0 ? tr("run %1 %2").arg(state_->pinnedStoredId()).arg(name)
                                         : tr("pinned %1").arg(name);
}

QStringList MainWindow::chartNames() const {
    QStringList names;
    for (const auto& [name, save] : chart_savers_) names << name;
    return names;
}

bool MainWindow::exportChart(const QString& chart, const QString& path) {
    const auto it = chart_savers_.find(chart);
    return it != chart_savers_.end() && it->second(path);
}

void MainWindow::refreshComparison() {
    // The Metrics panel follows the state itself; the charts are the window's. (A pinned
    // run of another workload was dropped by the state when the run came.)
    // The lower lane compares request by request: only for a run of the same workload
    // (applyRows; with "only matches", the pinned run's same requests).
    applyRows();
    kv_->setPinned(state_->pinned() ? state_->pinned()->kv : nullptr);
    if (!state_->run()) return;
    std::vector<views::CdfSeries> cdfs{
        {tr("TTFT"), QColor(0xf5, 0xa6, 0x23), state_->run()->cdf_ttft},
        {tr("TPOT"), QColor(0x9b, 0x59, 0xb6), state_->run()->cdf_tpot},
        {tr("E2EL"), QColor(0x2f, 0x80, 0xed), state_->run()->cdf_e2el}};
    if (state_->pinned()) { // dashed, named by the pinned run's policy
        const QString who = pinnedName();
        cdfs.push_back(
            {tr("TTFT, %1").arg(who), QColor(0xf5, 0xa6, 0x23), state_->pinned()->cdf_ttft, true});
        cdfs.push_back(
            {tr("TPOT, %1").arg(who), QColor(0x9b, 0x59, 0xb6), state_->pinned()->cdf_tpot, true});
        cdfs.push_back(
            {tr("E2EL, %1").arg(who), QColor(0x2f, 0x80, 0xed), state_->pinned()->cdf_e2el, true});
    }
    latency_->setSeries(cdfs);
    // The goodput SLOs the shown run was measured against, on the CDFs they judge.
    std::vector<views::LatencyChart::Slo> slos;
    if (const auto& g = state_->run()->summary_options.goodput; g.ttft_ms)
        slos.push_back({tr("TTFT SLO"), QColor(0xf5, 0xa6, 0x23), *g.ttft_ms});
    if (const auto& g = state_->run()->summary_options.goodput; g.tpot_ms)
        slos.push_back({tr("TPOT SLO"), QColor(0x9b, 0x59, 0xb6), *g.tpot_ms});
    if (const auto& g = state_->run()->summary_options.goodput; g.e2el_ms)
        slos.push_back({tr("E2EL SLO"), QColor(0x2f, 0x80, 0xed), *g.e2el_ms});
    latency_->setSlos(slos);
}

} // namespace kairos::app
