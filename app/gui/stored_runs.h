#pragma once
// The window's runs in the database: the shown run saved (with the RunSpec that re-runs
// it) and a stored run pinned for comparison. Both run on the window's job tracker.
//
// Pinning reads the stored run and its per-request rows and, when it keeps its RunSpec,
// re-runs it (deterministic) for the timeline, KV and CDF overlays, used only if the re-run
// reproduces every stored metric; its goodput is then measured under the window's SLOs, as
// the shown run's is. Otherwise the stored figures alone are pinned, with a note saying
// which overlay is missing and why; a run of another workload is pinned with a warning.
#include "jobs.h"
#include "sim_runner.h"

#include <QObject>
#include <QString>
#include <memory>
#include <string>

namespace kairos::app {

class RunsPanel;
class WorkbenchState;

class StoredRuns : public QObject {
    Q_OBJECT
public:
    StoredRuns(JobTracker* jobs, WorkbenchState* state, RunsPanel* panel, QString db,
               QObject* parent = nullptr);
    // Stores `run` with `spec_json` ("": without a spec), then shows the Runs panel's new
    // list: saved(id), -1 on failure.
    void save(std::shared_ptr<const RunView> run, std::string spec_json);
    // Pins stored run `id` in the state, its goodput measured with `window_slos`:
    // pinned(id, ok).
    void pin(qint64 id, const SummaryOptions& window_slos);

Q_SIGNALS:
    void saved(qint64 id);
    void pinned(qint64 id, bool ok);
    void message(const QString& text); // for the status bar

private:
    JobTracker* jobs_;
    WorkbenchState* state_;
    RunsPanel* panel_;
    QString db_;
};

} // namespace kairos::app
