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
    int replicas = 1;            // --replicas
    QString router = QStringLiteral("round_robin"); // --router
    QString db; // the Kairos database of the runs browser (default: the user's)
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
    // Shows a workload (read or generated); `label` names it in the panel; `file` is the
    // file it was read from ("": it lives in the window only, as a generated one).
    void setWorkload(std::shared_ptr<const Workload> w, const QString& label,
                     const QString& file = {});
    // Opens the generate dialog; true when a workload was generated.
    bool generateWorkload();
    // Re-simulates with the panel's current settings.
    void resimulate();
    // The RunSpec of the panel's current settings on the shown workload: what resimulate
    // runs, a sweep starts from and a session keeps.
    RunSpec shownSpec() const;
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
    // The pinned run as legends name it ("run 3 fcfs", "pinned sjf").
    QString pinnedName() const;
    // The centre: timeline, find bar, KV, CDF and utility charts (chart_area.h).
    class ChartArea* charts() const {
        return charts_;
    }
    views::MetricsModel* metricsModel() const;
    SimRunner& runner() { return runner_; }
    views::TimelineView* timeline() const;
    views::KvChart* kvChart() const;
    views::LatencyChart* latencyChart() const;
    views::ParamSlider* slider(const QString& name) const;
    class SweepPanel* sweepPanel() const {
        return sweep_;
    }
    // The shown run's settings and workload, and the sliders that can be swept.
    struct SweepBase sweepBase() const;
    // The TUF sliders of a class (ERT, zero-utility time); nulls if it has none.
    std::pair<views::ParamSlider*, views::ParamSlider*> tufSliders(const std::string& cls) const;
    QComboBox* policyBox() const;
    class LivePanel* livePanel() const {
        return live_;
    }
    // The Inspector: the scheduler at any instant and a request's story with reasons.
    class InspectorPanel* inspector() const {
        return inspector_;
    }
    QDockWidget* inspectorDock() const { return inspector_dock_; }
    // Shows and raises the Inspector, widening its dock when it is narrow.
    void showInspector();

    // The runs browser: the database's runs (re-read off the GUI thread when another
    // process writes: runsRefreshed), the shown run saved into it (runSaved), a stored run
    // pinned for comparison (storedRunPinned): re-run from its RunSpec when it has one and
    // the re-run reproduces its stored metrics, for the timeline, KV and CDF overlays.
    QString databasePath() const { return db_path_; }
    void refreshRuns();
    void saveRun();
    void pinStoredRun(qint64 id);
    // The stored run pinned (-1: none, or a run of this window's pinned).
    qint64 pinnedStoredId() const { return state_->pinnedStoredId(); }
    // What the panels share (workbench_state.h).
    WorkbenchState* state() const { return state_; }
    views::RunsModel* runsModel() const;
    // Model views: the database's fitted models (read with the runs); selecting one plots it.
    // The model is read (and an ALA model parsed) off the GUI thread, then plotted: an ALA
    // model's configuration chooser filled and the chosen configuration's curves drawn
    // (modelShown).
    void showModel(qint64 id);
    class QComboBox* alaConfigBox() const;
    bool modelLoading() const { return jobs_.busy(QStringLiteral("model")); }
    // Every background job of the window (jobs.h).
    JobTracker& jobs() { return jobs_; }
    views::ModelChart* modelChart() const;
    class QTableWidget* modelsTable() const;

    // Every chart of the window by name (timeline, kv_memory, latency_cdfs, utility,
    // lengths, model), and one written as .svg (vector) or .png: what each chart's right
    // click > Export chart does.
    QStringList chartNames() const;
    bool exportChart(const QString& chart, const QString& path);

    // Find requests over the timeline (find_bar.h), and Back / Forward through the views
    // (view_history.h).
    class FindBar* findBar() const;
    class ViewHistory* history() const {
        return history_;
    }
    QString requestCard() const;

    // The device: a shipped profile or a fitted model from the store (exec.model_id, its
    // configuration, its database), resolved off the GUI thread (executionChanged); shown in
    // the Policy panel's Device box, the status bar and every export.
    void useExecution(const RunSpec::ExecPart& exec);
    const RunSpec::ExecPart& execution() const;
    QString executionLabel() const;

    // File > Save / Open session: the workload (its file, or embedded when generated), the
    // policy, predictor, every slider and TUF slider, the pinned run (a stored run by id,
    // or this window's re-simulated from its settings) and the view (chart tab, rows,
    // time window, row height, search). Opening is asynchronous: sessionOpened(ok) when
    // the run is shown with the view restored.
    bool saveSession(const QString& path, QString* error = nullptr);
    void openSession(const QString& path);

    // Undo and redo of parameter changes (Edit menu): sliders, policy, predictor.
    class QUndoStack* undoStack() const;
    // Sets a parameter ("policy", "predictor" or a slider's name) as undo does, without
    // recording it.
    void setParam(const QString& name, const QVariant& value);
    // Help > Keyboard and mouse: every menu shortcut and the mouse's gestures.
    QString shortcutsHelp() const;

    // Timeline rows per agent lane (when the workload names agents) or per request.
    void setAgentRows(bool on);
    bool agentRows() const;
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

private:
    void buildUi();
    void showResult(std::shared_ptr<const RunView> r);
    void refreshComparison();

    StartOptions start_;
    WorkbenchState* state_; // the workload, runs, selection and time window the panels share
    // The device: its profile and execution model, resolved once when chosen.
    class DeviceChoice* device_ = nullptr;
    // The shown workload, under its file's path or kMemoryWorkload: what the runs' specs
    // name (prepareRun takes it from here and keeps its rate-scaled copies).
    WorkloadCache cache_;
    PolicyParams extra_params_; // from --param, for parameters without a slider
    JobTracker jobs_;           // before runner_, which runs on it
    SimRunner runner_;
    // The context the window's runs are prepared in: the shipped profiles, cache_, device_.
    RunContext windowContext() const;

    class ChartArea* charts_ = nullptr;
    class MetricsPanel* metrics_ = nullptr;
    class QDockWidget* metrics_dock_ = nullptr;
    bool startup_compare_done_ = false;
    class SweepPanel* sweep_ = nullptr;
    QDockWidget* sweep_dock_ = nullptr;
    class InspectorPanel* inspector_ = nullptr;
    QDockWidget* inspector_dock_ = nullptr;
    bool inspector_widened_ = false;
    class RecentFiles* recent_ = nullptr;
    class JobProgress* progress_ = nullptr; // of a read or a simulation running a while
    QString db_path_;
    class ViewHistory* history_ = nullptr;
    // What the window's runs measure (the SLO sliders' goodput, no ITL).
    SummaryOptions windowSummary() const;
    // The RunSpec (JSON) that re-runs `r`; "" for a run on a workload that is not a file
    // (generated in the window: a session keeps it).
    std::string runSpecJson(const RunView& r, int indent = -1) const;
    class ParamUndo* undo_ = nullptr;
    bool restoring_ = false;      // a session is being applied: no run per setting
    nlohmann::json session_view_; // the opened session's view, applied after its run
    void applySession(const OpenedSession& s);
    void applySessionView();
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
