#pragma once
// Runs simulations off the GUI thread on the job tracker (jobs.h): every submit gets a
// new job id; a result comes back on the GUI thread only if it is the latest job's, so a
// slider moved ten times repaints once with the last setting.
#include "exec/execution_model.h"
#include "jobs.h"
#include "run/pipeline.h"
#include "run_view.h"

#include <QObject>
#include <atomic>
#include <memory>
#include <optional>

namespace kairos::app {

// The timeline as the run was asked for, for its next frame (RunView::frame).
struct FrameJob {
    views::TimelineView::FramePlan plan;
    const Workload* shown = nullptr; // the workload of the run shown then
};

class SimRunner : public QObject {
    Q_OBJECT
public:
    // Runs its jobs on `jobs` (channel "simulate"); without one, on a tracker of its own.
    explicit SimRunner(JobTracker* jobs = nullptr, QObject* parent = nullptr);
    // Starts a job running `spec` through the core's pipeline (prepareRun, then the
    // simulation) in `ctx` (its workload cache and resolved device; the job sets cancel and
    // progress); the previous job is cancelled (its result would be dropped anyway).
    // With `frame`, the timeline's next frame is built beside the summary (RunView::frame).
    // With `coalesce` (a slider dragged over the same workload), a run in flight is not
    // cancelled: it finishes and is shown, and then the newest setting submitted meanwhile
    // runs (those between are skipped; 0 is returned for a setting that waits). Cancelling
    // each run for the next left a 20,000-request trace's picture frozen for a whole drag.
    long submit(RunSpec spec, RunContext ctx, FrameJob frame = {}, bool coalesce = false);
    long latest() const;
    // Cancels the latest job (it reports a result with error "simulation cancelled") and the
    // setting waiting for it.
    void cancel();
    // The latest job's progress in [0, 1], and whether it is still running.
    double progress() const;
    bool busy() const;
    // Runs one spec on the calling thread (what the job does; also for benchmarks and the
    // re-run of a stored run): prepared in `ctx`, simulated with every decision's reason (the
    // Inspector), summarised beside the timeline's layout. The window shows no inter-token
    // latency, the costliest statistic: it is measured only with `itl` (a re-run compared
    // with a stored run, which has it).
    static RunView run(const RunSpec& spec, const RunContext& ctx, long job, bool itl = false,
                       const FrameJob& frame = {});
    // A run log as the window shows it, without simulating (`simulate --runlog`, a fleet's,
    // a live run's): `w` is its requests (workloadOfRunLog, or the workload it ran on).
    static RunView fromLog(std::shared_ptr<RunLog> log, std::shared_ptr<const Workload> w,
                           SummaryOptions so, long job);
    static inline const QString kChannel = QStringLiteral("simulate");

Q_SIGNALS:
    void finished(std::shared_ptr<const kairos::app::RunView> result);

private:
    // What the views draw from a run's log: summary, rows, KV, CDFs, TUFs, the Inspector's
    // index (after the log is shown).
    static void present(RunView& r, std::shared_ptr<RunLog> log, const SummaryOptions& so,
                        const FrameJob& frame = {}, const std::atomic<bool>* cancel = nullptr);

    long start(RunSpec spec, RunContext ctx, FrameJob frame);
    struct Waiting {
        RunSpec spec;
        RunContext ctx;
        FrameJob frame;
    };
    std::optional<Waiting> waiting_; // the newest setting coalesced behind the run in flight

    std::unique_ptr<JobTracker> own_;
    JobTracker* jobs_;
};

} // namespace kairos::app
