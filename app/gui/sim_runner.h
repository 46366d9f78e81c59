#pragma once
// Runs simulations off the GUI thread on the job tracker (jobs.h): every submit gets a
// new job id; a result comes back on the GUI thread only if it is the latest job's, so a
// slider moved ten times repaints once with the last setting.
#include "exec/execution_model.h"
#include "jobs.h"
#include "lod/timeline.h"
#include "metrics/explain_view.h"
#include "metrics/summary.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "run/pipeline.h"
#include "run/run_spec.h"
#include "sched/registry.h"
#include "tuf_chart.h"

#include <QObject>
#include <atomic>
#include <memory>

namespace kairos::app {

// A run as the workbench shows it: the RunSpec that made it, what the core's pipeline
// returned, and what the views draw from it (timeline rows, KV series, CDFs, the Inspector's
// index), computed once off the GUI thread.
struct RunView {
    long job = 0;
    RunSpec spec;        // what ran (its workload part may name the window's in-memory one)
    PolicyConfig policy; // the spec's policy and limits as the engine had them
    EngineLimits limits;
    std::shared_ptr<const Workload> workload; // transformed, as it ran
    std::shared_ptr<const RunLog> log;
    Summary summary;
    SummaryOptions summary_options; // what the summary measured (SLOs, percentiles)
    std::shared_ptr<const std::vector<RequestMetrics>> requests; // perRequest(log), by id
    std::shared_ptr<const std::vector<lod::Row>> rows;           // one per request, by id
    std::shared_ptr<const std::vector<lod::Row>> agent_rows;     // agent lanes; null without agents
    std::shared_ptr<const std::vector<std::pair<double, double>>> kv;
    // With prefix caching: KV holding data (in use plus cached blocks nobody references).
    std::shared_ptr<const std::vector<std::pair<double, double>>> kv_held;
    // The run's decisions with their reasons, indexed (the Inspector); it keeps the log.
    std::shared_ptr<const ExplainIndex> explain;
    std::vector<double> preemptions;
    // Latency CDFs of finished requests (ms, lod::ecdf) and the utility view's data.
    std::vector<std::pair<double, double>> cdf_ttft, cdf_tpot, cdf_e2el;
    std::vector<views::TufClass> tufs;
    double wall_ms = 0;                             // prepare + simulate + summarise + rows
    double sim_ms = 0, summary_ms = 0, rows_ms = 0; // the parts (rows: after the summary)
    double layout_wait_ms = 0; // of rows_ms: waiting for the timeline layout's thread
    QString error;             // set when the run failed (bad parameter, scheduler loop)
};

class SimRunner : public QObject {
    Q_OBJECT
public:
    // Runs its jobs on `jobs` (channel "simulate"); without one, on a tracker of its own.
    explicit SimRunner(JobTracker* jobs = nullptr, QObject* parent = nullptr);
    // Starts a job running `spec` through the core's pipeline (prepareRun, then the
    // simulation) in `ctx` (its workload cache and resolved device; the job sets cancel and
    // progress); the previous job is cancelled (its result would be dropped anyway).
    long submit(RunSpec spec, RunContext ctx);
    long latest() const;
    // Cancels the latest job (it reports a result with error "simulation cancelled").
    void cancel();
    // The latest job's progress in [0, 1], and whether it is still running.
    double progress() const;
    bool busy() const;
    // Runs one spec on the calling thread (what the job does; also for benchmarks and the
    // re-run of a stored run): prepared in `ctx`, simulated with every decision's reason (the
    // Inspector), summarised beside the timeline's layout. The window shows no inter-token
    // latency, the costliest statistic: it is measured only with `itl` (a re-run compared
    // with a stored run, which has it).
    static RunView run(const RunSpec& spec, const RunContext& ctx, long job, bool itl = false);
    static inline const QString kChannel = QStringLiteral("simulate");

Q_SIGNALS:
    void finished(std::shared_ptr<const kairos::app::RunView> result);

private:
    std::unique_ptr<JobTracker> own_;
    JobTracker* jobs_;
};

} // namespace kairos::app
