#pragma once
// The workbench window: the policy panel with its parameters as sliders, the request
// timeline over the KV-memory chart (one shared time axis), and the metrics table.
// Every change re-simulates off the GUI thread (SimRunner); only the latest result paints.
#include "jobs.h"
#include "model/device_profile.h"
#include "run/pipeline.h"
#include "run/run_spec.h"
#include "session_file.h"
#include "sim_runner.h"
#include "store/store.h"
#include "workbench_state.h"

#include <QMainWindow>
#include <QVariant>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

class QComboBox;
class QLabel;
class QTableView;
class QSlider;
class QDoubleSpinBox;
class QProgressBar;
class QTimer;
class QDockWidget;

namespace kairos::views {
class ParamSlider;
class TimeRange;
class LatencyChart;
class TufChart;
class MetricsModel;
class LengthHistogram;
class RunsModel;
class ModelChart;
class TimelineView;
class KvChart;
class SweepChart;
} // namespace kairos::views

namespace kairos::app {

struct StartOptions {
    QString workload, policy = QStringLiteral("fcfs"), predictor = QStringLiteral("oracle"),
                      profile;
    QStringList params;
    QString compare;             // a policy simulated first and pinned, to compare `policy` against
    bool agent_rows = false;     // timeline rows per agent (robot workloads), else per request
    bool prefix_caching = false; // --prefix-caching on
    // --prefix-caching was given: the window keeps it. Otherwise caching follows the
    // workload until the user sets it: on for robot plans (the TimelyLLM code's server
    // caches its 1,300-token system prompt), off for the rest.
    bool prefix_caching_given = false;
    // No --policy was given: the policy follows the workload until the user picks one: for
    // robot plans TimelyLLM as its authors' code runs it (timely_code, their harness's 8
    // seats), for the rest `policy` with vLLM's 256 seats. Off: `policy` is kept.
    bool policy_follows_workload = false;
    int replicas = 1;                               // --replicas
    QString router = QStringLiteral("round_robin"); // --router
    QString db; // the Kairos database of the runs browser (default: the user's)
    // --open: a workload, a session or a run log, told apart by content (openFile).
    QString open;
};

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const StartOptions& opt, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Reads a workload file (any format) off the GUI thread, with progress and cancel in
    // the status bar; then shows it and remembers it in the recent files. On error, a
    // message names the file, line and field. workloadLoaded tells the outcome.
    void openWorkload(const QString& path);
    bool loading() const;
    // Opens a workload, a session or a run log, told apart by their content (a run log's
    // header names kairos_runlog, a session's kairos_session; anything else is read as a
    // workload in any format).
    enum class FileKind { Workload, Session, RunLog };
    static FileKind fileKind(const QString& path);
    void openFile(const QString& path);
    // A run log (`simulate --runlog`, a fleet's, a live run's) shown as recorded, without
    // simulating: timeline, KV, Inspector and exports from the log. Its requests are the
    // log's (workloadOfRunLog); a control moved afterwards simulates them under the
    // window's settings. workloadLoaded tells the outcome.
    void openRunLog(const QString& path);
    class SessionIO* sessions() const {
        return sessions_;
    }
    // Shows a workload (read or generated); `label` names it in the panel; `file` is the
    // file it was read from ("": it lives in the window only, as a generated one).
    void setWorkload(std::shared_ptr<const Workload> w, const QString& label,
                     const QString& file = {});
    // Opens the generate dialog; true when a workload was generated.
    bool generateWorkload();
    // Runs the state's RunSpec (WorkbenchState::spec) again.
    void resimulate();
    // The window's RunSpec (the state's): what resimulate runs, a sweep starts from and a
    // session keeps. The panels edit it (every change a step of Edit > Undo, spec_undo.h).
    RunSpec shownSpec() const { return state_->spec(); }
    // The panels set from `spec` (a session's run) with no run per setting; the spec then
    // is the window's, with a new undo history, and runs.
    void adoptSpec(const RunSpec& spec);
    // Runs `change` (settings the window is given, not the user's moves) with no run and no
    // undo step per setting.
    void quietly(const std::function<void()>& change);
    // The file the shown workload was read from ("" if generated in the window).
    const QString& workloadFile() const { return workload_file_; }
    // The context the window's runs are prepared in: the shipped profiles, the shown
    // workload's cache, the device.
    RunContext windowContext() const;
    // The comparison panels redrawn for the pinned run.
    void refreshComparison();
    std::shared_ptr<const RunView> lastResult() const { return state_->run(); }
    // Compare: keep the shown run as the reference the next runs are compared with.
    void pin();
    void unpin();
    std::shared_ptr<const RunView> pinned() const { return state_->pinned(); }
    // The warning shown when the pinned stored run is of another workload ("" if none).
    QString pinnedWarning() const { return state_->pinnedOther(); }
    // What the pinned stored run lacks and why (no overlay: no RunSpec, or its re-run
    // differs); "" when it has every overlay.
    QString pinnedNote() const { return state_->pinnedNote(); }
    SimRunner& runner() { return runner_; }
    // What the panels share (workbench_state.h).
    WorkbenchState* state() const { return state_; }
    // Every background job of the window (jobs.h).
    JobTracker& jobs() { return jobs_; }

    // The window's rooms, each testable on its own:
    // the centre (timeline, find bar, KV, CDF and utility charts; chart_area.h) and Back /
    // Forward through its views (view_history.h);
    class ChartArea* charts() const {
        return charts_;
    }
    class ViewHistory* history() const {
        return history_;
    }
    // the panels (each its header);
    class PolicyPanel* policyPanel() const {
        return policy_panel_;
    }
    class MetricsPanel* metricsPanel() const {
        return metrics_;
    }
    class RunsPanel* runsPanel() const {
        return runs_;
    }
    class ModelsPanel* modelsPanel() const {
        return models_;
    }
    class SweepPanel* sweepPanel() const {
        return sweep_;
    }
    class LivePanel* livePanel() const {
        return live_;
    }
    class InspectorPanel* inspector() const {
        return inspector_;
    }
    QDockWidget* inspectorDock() const { return inspector_dock_; }
    QDockWidget* metricsDock() const { return metrics_dock_; }
    // every request in a sortable table (requests_panel.h).
    class RequestsPanel* requestsPanel() const {
        return requests_;
    }
    QDockWidget* requestsDock() const { return requests_dock_; }
    class RunExports* exports() const {
        return exports_;
    }
    // Shows and raises the Inspector, widening its dock when it is narrow.
    void showInspector();
    // Never wider or taller than the screen's available area (the default 1400x850, or a
    // size saved on a larger monitor, on a 1366x768 laptop), and placed inside it.
    void fitToScreen();
    // the device (device_choice.h) and the undo of the RunSpec's changes (spec_undo.h).
    class DeviceChoice* device() const {
        return device_;
    }
    class SpecUndo* undo() const {
        return undo_;
    }
    // The shown run's settings and workload, and the sliders that can be swept.
    struct SweepBase sweepBase() const;

    // The runs database: the shown run saved into it (runSaved, with the RunSpec that re-runs
    // it), a stored run pinned for comparison (storedRunPinned; stored_runs.h); its runs and
    // models re-read when another process writes (runsRefreshed).
    QString databasePath() const { return db_path_; }
    void saveRun();
    void pinStoredRun(qint64 id);
    qint64 pinnedStoredId() const { return state_->pinnedStoredId(); }

    // The device: a shipped profile or a fitted model from the store, resolved off the GUI
    // thread (executionChanged); shown in the Policy panel, the status bar and every export.
    void useExecution(const RunSpec::ExecPart& exec);

    // File > Save / Open session (session_io.h): the shown run's RunSpec, the workload when
    // it is not a file, the pinned run and the view. Opening is asynchronous:
    // sessionOpened(ok) when the run is shown with the view restored.
    bool saveSession(const QString& path, QString* error = nullptr);
    void openSession(const QString& path);

    // Why the start-up workload could not be opened or its first run failed (empty: it
    // did not fail): what kairos --screenshot --quit reports with exit code 2.
    const QString& startError() const { return start_error_; }

Q_SIGNALS:
    void resultShown(long job);
    void workloadLoaded(bool ok);
    void runSaved(qint64 id); // -1 on failure
    void runsRefreshed();     // the Runs and Models tables were re-read
    void modelShown(qint64 id, bool ok);
    void storedRunPinned(qint64 id, bool ok);
    void sessionOpened(bool ok);
    void executionChanged(bool ok);
    // The start-up runs are shown (with --compare: the pinned one and then the other), or
    // failed: startError() then says why.
    void ready();

protected:
    void closeEvent(QCloseEvent* e) override;
    QString startPolicy() const; // the policy a workload opens with when none is given
    void showEvent(QShowEvent* e) override;
    // The tab bars of tabbed panels scroll rather than elide ("Metri… Ru… Mod…" at 1366).
    bool event(QEvent* e) override;

private:
    void buildUi();
    // A workload or run log that could not be opened: its error in the status bar (whole
    // on hover) and over the timeline when no run is shown.
    void showOpenError(const QString& message);
    // A message on the status bar, cut with an ellipsis where the bar is narrow and whole
    // on hover; `timeout_ms` as QStatusBar::showMessage's.
    void say(const QString& message, int timeout_ms = 0);
    // Sizes `dock` (of the right column's tab group) to show `width` pixels of `content`
    // (the table it holds), at most `room` and at least `least` of it, with the dock's frame
    // and the group's tab bar counted; `widen_only`: never narrower than it is.
    void fitDockTo(QDockWidget* dock, const QWidget* content, int width, int least, int room,
                   bool widen_only = false);
    // A panel as a dock named `name` in `area`, tabbed with `tab_with` when given; with
    // `scrolls`, in a scroll area (it does not hold its tab group at its width), and given
    // its width back when raised.
    QDockWidget* addPanel(const QString& title, const char* name, QWidget* panel,
                          Qt::DockWidgetArea area = Qt::RightDockWidgetArea,
                          QDockWidget* tab_with = nullptr, bool scrolls = false);
    void showResult(std::shared_ptr<const RunView> r);
    std::shared_ptr<const Workload> submitted_workload_; // of the last run asked for
    // The width the right column may take with `dock` in it, the timeline keeping 60 % of
    // the window (keepTimelineWide, the Metrics and Requests docks).
    int rightColumnRoom(const QDockWidget* dock) const;
    // The Metrics dock as wide as its columns within that (a pinned run's: 38 %), while in
    // view; when its columns change and at a first layout.
    void fitMetricsDock();
    // The Policy panel at 17 % of the window or its least width (a first layout; with
    // `shrink`, also narrowed to that, after another policy's wider table).
    void fitPolicyDock(bool shrink);
    // The RunSpec the panels say now: the state's, with what the panels set (policy,
    // predictor, sliders, the parameter table's values, serving, utility functions) and the
    // device; a workload part of its own for another workload.
    RunSpec panelSpec() const;
    // The user moved control `what`: the panels' spec, checked by RunSpec::validate, is the
    // window's (an undo step) and runs; refused, the panels go back to the window's spec
    // and the status bar says why.
    void panelEdited(const QString& what);
    // The panels set from `spec` (Undo, Redo, a session), with no run per setting.
    void showSpec(const RunSpec& spec);
    bool device_pending_ = false; // Undo asked for another device: its run waits for it

    StartOptions start_;
    WorkbenchState* state_; // the workload, runs, selection and time window the panels share
    // The device: its profile and execution model, resolved once when chosen.
    class DeviceChoice* device_ = nullptr;
    // The shown workload, under its file's path or kMemoryWorkload: what the runs' specs
    // name (prepareRun takes it from here and keeps its rate-scaled copies).
    mutable WorkloadCache cache_; // thread-safe: runs read it from const methods' contexts
    // Parameters without a slider, per policy: from --param (for the start policy), the
    // parameter table, an opened session's RunSpec and Undo. A run of that policy gets them.
    PolicyParams extra_params_;
    std::map<std::string, PolicyParams> policy_params_;
    JobTracker jobs_; // before runner_, which runs on it
    SimRunner runner_;

    class ChartArea* charts_ = nullptr;
    class MetricsPanel* metrics_ = nullptr;
    QDockWidget* metrics_dock_ = nullptr;
    QDockWidget* policy_dock_ = nullptr;
    bool layout_restored_ = false, shown_once_ = false;
    bool startup_compare_done_ = false;
    class SweepPanel* sweep_ = nullptr;
    QDockWidget* sweep_dock_ = nullptr;
    class InspectorPanel* inspector_ = nullptr;
    QDockWidget* inspector_dock_ = nullptr;
    class RequestsPanel* requests_ = nullptr;
    QDockWidget* requests_dock_ = nullptr;
    bool inspector_widened_ = false;
    bool inspector_sized_ = false;
    // The Inspector's column narrowed so the timeline keeps 60 % of the window's width.
    void keepTimelineWide();
    int leftDockWidth() const; // the widest visible dock on the left (the Policy panel)
    class RecentFiles* recent_ = nullptr;
    class JobProgress* progress_ = nullptr; // of a read or a simulation running a while
    QString db_path_;
    class ViewHistory* history_ = nullptr;
    // What the window's runs measure (the SLO sliders' goodput, no ITL).
    SummaryOptions windowSummary() const;
    // The RunSpec (JSON) that re-runs `r`; "" for a run on a workload that is not a file
    // (generated in the window: a session keeps it).
    std::string runSpecJson(const RunView& r, int indent = -1) const;
    // The line under the load banner for run `r`: what to try with C or k, or why the slider
    // cannot change this run (its tooltip says so too).
    QString sliderHint(const RunView& r);
    class SpecUndo* undo_ = nullptr;
    bool restoring_ = false; // a session is being applied: no run per setting
    class SessionIO* sessions_ = nullptr;
    QString workload_file_; // the file the shown workload was read from ("" if generated)
    QString start_error_;
    class LivePanel* live_ = nullptr;
    class ModelsPanel* models_ = nullptr;
    class PolicyPanel* policy_panel_ = nullptr;
    class RunsPanel* runs_ = nullptr;
    class StoredRuns* stored_ = nullptr;
    class RunExports* exports_ = nullptr;
};

} // namespace kairos::app
