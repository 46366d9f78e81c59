#pragma once
// The Sweep panel: one slider's whole range at once. "Sweep this parameter" (a slider's
// context menu, or the panel's button) runs the parameter's range x seeds through the core's
// sweep (run/sweep.h) in the background, on the workload and settings the window shows, and
// plots the chosen metric against it: the mean over seeds, its 95 % band, one curve per
// policy when comparing, and the slider's current value as a mark that follows it.
// Switching the metric redraws from the finished table; Export writes its CSV.
#include "jobs.h"
#include "run/sweep.h"
#include "run_view.h"

#include <QStringList>
#include <QWidget>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

class QComboBox;
class QSpinBox;
class QCheckBox;
class QPushButton;
class QLabel;

namespace kairos::views {
class SweepChart;
}

namespace kairos::app {

// What the window can sweep, and its current settings.
struct SweepParam {
    QString name, label; // the slider's name ("C", "rate", "kv", "seqs") and label
    double lo = 0, hi = 1, value = 0;
    bool log = false, whole = false;
    std::vector<std::string> policies; // the policies that have it (empty: every run)
};
// Every slider that can be swept (the policies' parameters and the run knobs with a sweep
// axis), at the values `value(name)` gives.
std::vector<SweepParam> sweepParams(const std::function<double(const QString&)>& value);

struct SweepBase {
    RunSpec spec; // the shown run's (its workload path is replaced: the workload is below)
    std::shared_ptr<const Workload> workload; // as read (the spec's transforms not applied)
    DeviceProfile profile;
    std::vector<SweepParam> params; // every slider that can be swept
};

class SweepPanel : public QWidget {
    Q_OBJECT
public:
    // Its sweeps and database reads run on `jobs` (the window's tracker).
    SweepPanel(JobTracker* jobs, std::function<SweepBase()> base, QWidget* parent = nullptr);
    ~SweepPanel() override;
    // Sweeps this slider's range now (selecting it in the panel).
    void sweep(const QString& param);
    // Lists what the shown policy can sweep: its own parameters, then the run's. A choice the
    // user made is kept where it still applies; otherwise the policy's first parameter, or
    // the first run knob for a policy without any.
    void refreshParams();
    // The slider `param` moved: moves the mark when that is the swept parameter.
    void sliderMoved(const QString& param, double value);
    // The window shows another run: the finished sweep says which of its settings the
    // window has changed since (the swept parameter aside), or nothing when none.
    void checkSettings();
    // The window's run shown now: drawn on the chart at the slider's mark while the sweep is
    // current (the curve is a mean over seeds; the window's run is the first of them), and
    // its offered rate for capacities in req/s. Its metrics are read only then.
    void setShownRun(std::shared_ptr<const RunView> run);
    // What checkSettings found: the settings changed since the finished sweep, by label.
    const QStringList& staleSettings() const { return stale_; }
    // Whether the drawn metric's band is empty at every point although several seeds ran:
    // the seeds gave the same run (exact lengths on a replayed trace), said in the status.
    bool seedsAgree() const { return seeds_agree_; }
    bool running() const { return job_ != nullptr; }
    views::SweepChart* chart() const { return chart_; }
    const sweep::Table* table() const { return table_.get(); }
    QString sweptParam() const { return swept_; }
    double lastSeconds() const { return last_seconds_; }
    QComboBox* metricBox() const { return metric_; }
    QComboBox* paramBox() const { return param_; }
    // "" (the parameter) or a second metric: the trade-off view.
    QComboBox* againstBox() const { return against_; }
    QCheckBox* compareBox() const { return compare_; }
    QSpinBox* pointsBox() const { return points_; }
    // The database sweeps are saved to and opened from (the window's Runs database).
    void setDatabase(const QString& path) { db_ = path; }
    // Stores the finished sweep (definition, table, and how to draw it), off the GUI
    // thread: saved(id), 0 when it could not.
    void save(const QString& name);
    // Lists the stored sweeps and shows the one chosen (the Runs panel's Sweeps… button).
    void chooseStored();
    // Reads and shows a stored sweep (this panel's or kairos-cli sweep --db's) off the GUI
    // thread: opened(id, ok).
    void open(std::int64_t id);
    // Writes the finished sweep by the extension: .csv the table, .html the report, .png or
    // .svg the chart. False when no sweep has finished; throws (naming the path and why)
    // when the file cannot be written.
    bool exportTo(const QString& path);
    // A rate sweep's capacity per policy: the rate where goodput / offered rate first falls
    // below kCapacityTarget, interpolated between the two points around it (NaN: it never
    // fell; the label says "above").
    static constexpr double kCapacityTarget = 0.9;
    const std::vector<std::pair<std::string, double>>& capacities() const { return capacities_; }

Q_SIGNALS:
    void finished(); // a sweep finished (or failed: see the status)
    void saved(qint64 id);
    void opened(qint64 id, bool ok);

private:
    struct Job;
    void start();
    void redraw();
    void exportFile(const QString& filter);

    static inline const QString kChannel = QStringLiteral("sweep");
    JobTracker* jobs_;
    std::function<SweepBase()> base_;
    QComboBox *param_, *metric_, *against_;
    bool param_chosen_ = false; // the user picked the parameter (or asked to sweep it)
    QSpinBox *points_, *seeds_;
    QCheckBox* compare_;
    QPushButton *run_, *export_, *save_, *open_;
    QLabel* status_;
    views::SweepChart* chart_;
    std::shared_ptr<Job> job_;
    // The finished sweep: its table, axis values as numbers, and what was swept.
    std::unique_ptr<sweep::Table> table_;
    std::vector<double> x_;
    QString swept_;
    bool swept_log_ = false;
    double last_seconds_ = 0;
    std::vector<SweepParam> params_;
    std::vector<std::pair<std::string, double>> capacities_;
    std::string policy_;                     // the finished sweep's policy (one-policy sweeps)
    std::unique_ptr<sweep::Definition> def_; // the finished sweep's definition
    std::shared_ptr<const Workload> swept_workload_; // the workload it ran (a panel sweep's)
    QString done_status_;                            // what the finished sweep says of itself
    QStringList stale_;
    bool seeds_agree_ = false;
    void showStatus();
    void placeShownRun(); // the window's run on the chart, where it compares
    std::shared_ptr<const RunView> shown_;
    void plainStatus(const QString& text);
    QString db_;
};

} // namespace kairos::app
