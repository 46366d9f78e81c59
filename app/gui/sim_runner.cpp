#include "sim_runner.h"

#include "metrics/cdf.h"
#include "metrics/request_metrics.h"
#include "metrics/robot_metrics.h"
#include "run/pipeline.h"
#include "session_file.h"
#include "sim/engine.h"

#include <QMetaObject>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

namespace kairos::app {

namespace {
using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}
} // namespace

void SimRunner::present(RunView& r, std::shared_ptr<RunLog> log, const SummaryOptions& so,
                        const FrameJob& frame, const std::atomic<bool>* cancel) {
    const auto b = Clock::now();
    // The timeline's rows, its next frame and the KV series on a second thread while this
    // one summarises (they read the log only): the largest parts after the simulation.
    auto layout = std::async(std::launch::async, [&r, &log, &frame, cancel] {
        r.rows =
            std::make_shared<const std::vector<lod::Row>>(lod::buildRows(*log, r.workload.get()));
        r.extent = lod::timeExtent(*r.rows);
        if (frame.plan.valid)
            r.frame = views::TimelineView::prebuildFrame(frame.plan, r.rows, r.extent.first,
                                                         r.extent.second,
                                                         frame.shown != r.workload.get(), cancel);
        if (lod::hasAgents(*r.workload))
            r.agent_rows =
                std::make_shared<const std::vector<lod::Row>>(lod::agentRows(*r.rows, *r.workload));
        r.kv = std::make_shared<const std::vector<std::pair<double, double>>>(lod::kvSeries(*log));
        if (log->prefix_caching)
            r.kv_held = std::make_shared<const std::vector<std::pair<double, double>>>(
                lod::kvSeries(*log, true));
        if (log->disaggregated())
            r.kv_prefill = std::make_shared<const std::vector<std::pair<double, double>>>(
                lod::kvPoolSeries(*log, 0, log->prefill_replicas));
    });
    auto requests = std::make_shared<const std::vector<RequestMetrics>>(perRequest(*log));
    const std::vector<RequestMetrics>& per_request = *requests;
    r.requests = requests;
    // The CDFs (three sorts of every latency) on a third thread, beside the summary and the
    // layout: a quarter of what followed the simulation, with the load shared by two cores.
    auto cdf_job =
        std::async(std::launch::async, [&per_request] { return lod::latencyCdfs(per_request); });
    r.summary = summarize(*log, per_request, so);
    r.summary_options = so;
    const auto c = Clock::now();
    r.preemptions = lod::preemptionTimes(*log);
    // Utility view: per class, its TUF and every task at (W(s0), TUF(W(s0))).
    r.tufs = views::tufClasses(*log, *r.workload, r.summary);
    // Whether room ever bound (the banner's hint for C), from the iterations: here, not on
    // the GUI thread. The watermark the engine used, else the policy's, else vLLM's 0.01.
    {
        const auto it = r.policy.params.find("watermark");
        const double wm = log->explain.limits.known()   ? log->explain.limits.watermark
                          : it != r.policy.params.end() ? it->second
                                                        : 0.01;
        r.room = roomUse(*log, r.limits.max_num_seqs, r.limits.block_size, wm);
    }
    auto cdfs = cdf_job.get();
    r.cdf_ttft = std::move(cdfs.ttft);
    r.cdf_tpot = std::move(cdfs.tpot);
    r.cdf_e2el = std::move(cdfs.e2el);
    const auto c2 = Clock::now();
    layout.get(); // rethrows what the layout threw
    const auto d = Clock::now();
    r.summary_ms = ms(b, c);
    r.rows_ms = ms(c, d);         // CDFs and utility here, then waiting for the layout
    r.layout_wait_ms = ms(c2, d); // the layout's time beyond the summary and CDFs
    // The Inspector's index after the run is shown, not before (RunView::explain).
    std::shared_ptr<const RunLog> keep = log;
    r.explain_index = std::async(std::launch::async, [keep] {
                          return std::shared_ptr<const ExplainIndex>(
                              new ExplainIndex(*keep), [keep](const ExplainIndex* p) { delete p; });
                      }).share();
    r.log = std::move(log);
}

RunView SimRunner::run(const RunSpec& spec, const RunContext& ctx, long job, bool itl,
                       const FrameJob& frame) {
    RunView r;
    r.job = job;
    r.spec = spec;
    const auto t0 = Clock::now();
    try {
        // The core's run pipeline; the summary is computed below beside the timeline layout.
        PreparedRun prep = prepareRun(spec, ctx);
        r.workload = prep.workload;
        r.policy = prep.policy;
        r.limits = prep.limits;
        // Every decision with its reason, for the Inspector (at most 1.5x the simulation's
        // time: kairos-cli bench explain); a fleet's replicas each record theirs.
        prep.spec.record.explain = true;
        const auto a = Clock::now();
        auto log = std::make_shared<RunLog>(simulatePrepared(prep, ctx));
        r.sim_ms = ms(a, Clock::now());
        SummaryOptions so = prep.summary;
        so.itl = itl;
        so.workload = prep.workload.get();
        present(r, std::move(log), so, frame, ctx.cancel);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    }
    r.wall_ms = ms(t0, Clock::now());
    return r;
}

RunView SimRunner::fromLog(std::shared_ptr<RunLog> log, std::shared_ptr<const Workload> w,
                           SummaryOptions so, long job) {
    RunView r;
    r.job = job;
    const auto t0 = Clock::now();
    try {
        r.workload = std::move(w);
        r.spec.workload.path = kMemoryWorkload; // shown as recorded: no spec re-runs it
        r.policy.name = log->policy.substr(0, log->policy.find('('));
        r.limits.kv_capacity_tokens = log->kv_capacity_tokens;
        r.limits.prefix_caching = log->prefix_caching;
        if (log->prefix_caching) r.limits.block_size = log->cache_block_size;
        if (log->explain.limits.known()) {
            r.limits.max_num_seqs = log->explain.limits.seats;
            r.limits.max_num_batched_tokens = log->explain.limits.token_budget;
            r.limits.block_size = log->explain.limits.block_size;
            r.limits.chunked_prefill = log->explain.limits.chunked;
        }
        r.spec.fleet.replicas = log->replicas;
        if (log->fleet()) r.spec.fleet.router = log->router;
        so.workload = r.workload.get();
        present(r, std::move(log), so);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    }
    r.wall_ms = ms(t0, Clock::now());
    return r;
}

SimRunner::SimRunner(JobTracker* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {
    if (!jobs_) {
        own_ = std::make_unique<JobTracker>();
        jobs_ = own_.get();
    }
}

long SimRunner::submit(RunSpec spec, RunContext ctx, FrameJob frame, bool coalesce) {
    if (coalesce && jobs_->busy(kChannel)) {
        waiting_ = Waiting{std::move(spec), std::move(ctx), std::move(frame)};
        return 0;
    }
    waiting_.reset(); // started now: it is newer
    return start(std::move(spec), std::move(ctx), std::move(frame));
}

long SimRunner::start(RunSpec spec, RunContext ctx, FrameJob frame) {
    // The job's id is the tracker's (one sequence for all background work).
    return jobs_->start(kChannel, this,
                        [this, spec = std::move(spec), ctx = std::move(ctx),
                         frame = std::move(frame)](JobTracker::Job& job) {
                            RunContext c = ctx;
                            c.cancel = &job.cancel;
                            c.progress = &job.progress;
                            auto result =
                                std::make_shared<const RunView>(run(spec, c, job.id, false, frame));
                            // (The job outlives its continuation: the tracker holds it until
                            // delivered.)
                            return std::function<void()>([this, result, &job] {
                                Q_EMIT finished(result);
                                if (job.cancel)
                                    waiting_.reset(); // cancelled: what waited for it too
                                if (!waiting_ || jobs_->busy(kChannel)) return;
                                Waiting w = std::move(*waiting_);
                                waiting_.reset();
                                start(std::move(w.spec), std::move(w.ctx), std::move(w.frame));
                            });
                        });
}

long SimRunner::latest() const {
    const auto j = jobs_->latest(kChannel);
    return j ? j->id : 0;
}

void SimRunner::cancel() {
    waiting_.reset();
    jobs_->cancel(kChannel);
}

double SimRunner::progress() const {
    const auto j = jobs_->latest(kChannel);
    return j ? j->progress.load() : 0.0;
}

bool SimRunner::busy() const {
    return jobs_->busy(kChannel) || waiting_.has_value();
}

} // namespace kairos::app
