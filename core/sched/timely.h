#pragma once
// TimelyLLM (seeds/001, PAPERS.md section 2): segmented generation for robot plans.
// A request's output is a sequence of segments; when a segment has been generated it is
// dispatched to the robot and, while the robot executes it, the generation is suspended
// with its KV kept and queued again for its next segment. Before every pick the queued
// segments are ranked:
//   timely       PUD priority (Eq. 4): [delta TUF_0(W) + (1 - delta) TUF_1(W)] / (G L),
//                delta = 1 for a first segment; G = expected generation time of the
//                segment (its tokens times the current decode step of the ETE model, or
//                `segment_time`); W = its waiting time if generated now (response time
//                for s_0, robot idle time for later ones); L = slack until it is due
//                (s_0: arrival + ERT; s_k: when the robot finishes s_{k-1}), at least 1 ms.
//                Latency-guided admission: a segment joins the batch only if the utility
//                it gains by starting now is at least what the segments in the batch lose
//                by the longer prefill and decode steps it causes.
//   seg_fcfs     segmented, first ready first served;
//   seg_edf      segmented, earliest due time first;
//   vllm_stream  FCFS without suspension: segments are dispatched as they are generated.
// (Plain `fcfs` is TimelyLLM's vLLM baseline: the plan goes to the robot when complete.)
// A segment, once started, runs to its end. Requests without segments are one segment.
#include "sched/scheduler.h"

namespace kairos {
class EteModel;
}

#include <memory>
#include <set>
#include <vector>

namespace kairos {

struct TimelyOptions {
    enum class Mode { Pud, Fcfs, Edf, Stream };
    Mode mode = Mode::Pud;
    double segment_time = 0.09; // G without an ETE model: the paper's profiled 90 ms
    bool adaptive_batch = true;
    double slack = 10.0; // due time offset of a first segment without a TUF
    double watermark = 0.01;
};

class TimelyScheduler final : public Scheduler {
public:
    explicit TimelyScheduler(TimelyOptions o) : opt_(o) {}
    std::string name() const override;
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    void onEnqueue(const EngineView& view, ReqId id) override;

    // PUD priority of request `id`'s next segment at time t (exposed for tests).
    double priority(const EngineView& view, ReqId id, double t) const;

private:
    struct Plan {
        std::vector<int> ends; // cumulative tokens at each segment's end
        std::vector<double> exec;
        int next = 0;               // segment being (or to be) generated
        double robot_free = -1e300; // end of the robot's execution of the dispatched ones
        double ready = 0;           // when the next segment became ready to generate
        double index_key = 0;       // key of its current entry in index_
    };
    Tuf tufOf(const Request& r) const;
    double stepTime(std::int64_t extra_batch) const;
    double generationTime(const EngineView& view, ReqId id) const;
    double due(const EngineView& view, ReqId id) const;
    double rankKey(const EngineView& view, ReqId id) const; // lower first
    TimelyOptions opt_;
    std::vector<Plan> plans_;
    std::set<std::pair<double, ReqId>> index_; // waiting requests by FIFO/EDF key, or (PUD)
                                               // by when their utility clock started
    double window_ = 0; // PUD: the longest time to zero utility of any TUF in the workload
    // Per decision: the model and the running batch, for step-time estimates.
    const EteModel* ete_ = nullptr;
    std::int64_t running_n_ = 0, running_kv_ = 0;
};

} // namespace kairos
