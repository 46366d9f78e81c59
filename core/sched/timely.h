#pragma once
// TimelyLLM (ARCHITECTURE.md, The papers): segmented generation for robot plans.
// A request's output is a sequence of segments; when a segment has been generated it is
// dispatched to the robot and, while the robot executes it, the generation is suspended
// with its KV kept and queued again for its next segment. Before every pick the queued
// segments are ranked:
//   timely       PUD priority (Eq. 4): [delta TUF_0(W) + (1 - delta) TUF_1(W)] / (G L),
//                delta = 1 for a first segment; G = the profiled generation time of a
//                segment (`segment_time`, the paper's 90 ms; 0: its tokens times the ETE
//                model's current decode step); W = its waiting time if generated now
//                (response time for s_0, robot idle time for later ones); L = slack until
//                it is due (s_0: arrival + ERT; s_k: when the robot finishes s_{k-1}), at
//                least 1 ms.
//                Late segments, where the paper's Eq. 4 is not defined as written: its L
//                is 0 at the due time and negative after it, and its TUF (Eq. 1) negative
//                past the cut-off. Read literally, a segment between its due time and its
//                cut-off (TUF > 0, L < 0) would rank below every on-time one, and one past
//                its cut-off (TUF < 0, L < 0) above them, which contradicts the paper's
//                own reading of PUD as utility per unit of time. Kairos keeps L at 1 ms
//                (a late segment that can still earn utility goes first) and the TUF at 0
//                (one past its cut-off, which can earn nothing, goes last); the paper's
//                metric still counts the negative utility such a segment accrues while it
//                waits (about 6.7 per second for an urgent task), which this priority does
//                not weigh. `literal_eq4` (TimelyOptions::literal_eq4) ranks by Eq. 4 as
//                written instead (L signed, the TUF negative past the cut-off; at L = 0 the
//                side of its sign); `reproduce timely` measures both: where segments run
//                late (the system prompt computed for every task) Eq. 4 as written scores
//                urgent tasks -209 % of the maximum on the authors' WID1 sample against
//                Kairos's -129 % (normal 77 % against 62 %, all tasks -76 % against -41 %);
//                where few do (cached), 98.3 % against 99.2 %.
//   seg_fcfs     segmented, by arrival; seg_edf: segmented, by deadline (arrival + ERT).
//                Both keep "the initial generation priority for suspended generations"
//                (section 7.3.2): a suspended plan is ranked by its request's arrival or
//                deadline, not by when its next segment became ready.
//   vllm_stream  FCFS without suspension: segments are dispatched as they are generated.
// (Plain `fcfs` is TimelyLLM's vLLM baseline: the plan goes to the robot when complete.)
// A segment, once started, runs to its end. Requests without segments are one segment.
//
// How the batch grows (the three segmented policies; vllm_stream always fills it):
//   Wcet (default; section 4.4, latency-guided batch size selection): the highest-ranked
//        ready segment joins only if the most urgent running generation (the first due
//        among those whose due time is still ahead) can finish the worst case of its
//        segment before it ("whether the most urgent generation in the execution pool can
//        be completed within its remaining time budget"): WCET = (max_segment -
//        tokens of the segment generated so far, at least 1) x its time per token measured
//        over its most recent tokens; and the KV it needs is free. One generation joins
//        at a time ("a lag for one generation", "a profiling-independent strategy"): the
//        next joins only once every one in the batch has generated a token since the last
//        joined, so that its rate is the larger batch's. An empty batch always takes the
//        first ready segment. `wcet_serial=0` reads the lag as the rate's only: a member
//        that has not shown its own rate is not checked and every ready segment joins
//        while the check holds. (reproduce timely measures both: cached, on the authors'
//        WID1 sample, urgent utility 79.0 % serialised and 98.4 % joined freely, since a
//        burst's tasks join one prefill pass and one token apart.)
//   UtilityGain (`gain_admission=1`; Kairos's own rule, not the paper's): a segment joins
//        if the utility it gains by starting now is at least what the segments in the batch
//        lose by the longer prefill and decode steps it causes (needs the ETE model).
//   Fixed (`adaptive_batch=0`): as many as seats (max_num_seqs) and memory allow, the
//        paper's fixed-batch-size study (Fig. 7).
#include "sched/scheduler.h"

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kTimelyDispatch;
extern const RuleId kTimelySuspend;
extern const RuleId kTimelyAdmit;
extern const RuleId kTimelyResume;
} // namespace rules

class EteModel;
} // namespace kairos

#include <limits>
#include <memory>
#include <set>
#include <vector>

namespace kairos {

struct TimelyOptions {
    enum class Mode { Pud, Fcfs, Edf, Stream };
    enum class Batching { Wcet, UtilityGain, Fixed };
    Mode mode = Mode::Pud;
    Batching batching = Batching::Wcet;
    double segment_time = 0.09; // G of a segment: the paper's profiled 90 ms; 0: ETE model's
    int max_segment = 10;       // the paper's maximum segment length for batching (tokens)
    double slack = 10.0;        // due time offset of a first segment without a TUF
    double watermark = 0.01;
    bool literal_eq4 = false; // PUD exactly as Eq. 4 is written, late segments included
    // Wcet: true (Kairos's reading of "a lag for one generation ... a profiling-independent
    // strategy"): one joins at a time and the next waits until the batch has shown its
    // rate with it; false: the rate is only one generation late and every ready segment
    // may join while the check holds (measured beside it by reproduce timely).
    bool serial_joins = true;
};

class TimelyScheduler final : public Scheduler {
public:
    explicit TimelyScheduler(TimelyOptions o) : opt_(o) {}
    std::string name() const override;
    double kvWatermark() const override { return opt_.watermark; }
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    void onEnqueue(const EngineView& view, ReqId id) override;

    void inspect(const EngineView& view, ReqId id, Insight& out) const override;
    std::string keyName() const override;
    bool keyDescending() const override { return opt_.mode == TimelyOptions::Mode::Pud; }
    bool waitingKeysVary() const override { return opt_.mode == TimelyOptions::Mode::Pud; }

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
        // Token rate as last observed (WCET batching): the time and token count at the
        // last look, and the seconds per token between the two looks before (NaN: none).
        double obs_t = 0;
        std::int32_t obs_gen = 0;
        double spt = std::numeric_limits<double>::quiet_NaN();
        int segmentStart() const; // tokens before the segment being (or to be) generated
    };
    void observeRates(const EngineView& view);
    // Whether every generation in `pool` whose due time is ahead finishes its segment's
    // worst case before it (section 4.4).
    bool wcetAllows(const EngineView& view, const std::vector<ReqId>& pool) const;

    Tuf tufOf(const Request& r) const;
    double stepTime(std::int64_t extra_batch) const;
    double generationTime(const EngineView& view, ReqId id) const;
    double due(const EngineView& view, ReqId id) const;
    double firstDue(const Request& r) const; // s_0's due time: arrival + ERT (or slack)
    double rankKey(const EngineView& view, ReqId id) const; // lower first
    double shownKey(double rank_key) const;                 // PUD: the priority itself
    // Explaining: per request, when it was last ranked and its rank key then.
    std::vector<std::pair<double, double>> ranked_key_;
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
