#pragma once
// TimelyLLM as the authors' serving code runs it (MarkoMile/TimelyLLM:
// rtengine/vllm_llm_scheduler.py, request/read_request.py; read for what it does, written
// here from that reading), beside Kairos's reading of the paper (sched/timely.h). Their
// harness drives vLLM one engine step at a time:
//  - After each step, before it looks at that step's outputs, it adds at most one task to
//    vLLM (a new task, or the next segment of one). vLLM then runs at most max_num_seqs of
//    what was added, first come first served, within its KV cache; the harness never
//    reorders or preempts inside vLLM. With nothing left in vLLM it adds the next task as
//    soon as one is queued.
//  - rtllm (adaptive): it adds only while the "urgent" task's token rate promises its
//    segment in time: speed = tokens of its current segment / time since that segment was
//    taken from the queue; add if speed is 0 or (lmax - tokens) / speed < slack, slack =
//    predicted end of its robot work - (now + comm); and only while the KV cache is not
//    full. After a refusal nothing is added until some request finishes a segment. The
//    urgent task is, of the tasks taken from the queue and not done (waiting ones
//    included), the one with the earliest predicted end when speed is 0, else the largest
//    (lmax - tokens) / speed - slack, with the last speed measured.
//  - rtllm-fixed / EDF / FCFS (exp743): add while fewer than `batch` added requests are
//    unfinished (a finished segment frees its place), no KV check.
//  - Queue order: rtllm's priority p = (alpha max(0, D) + beta) exp(min(0, D)),
//    D = now + seg_exe + comm - due, the largest first, every queued task re-scored at each
//    dequeue; due starts at arrival + ERT and after each segment becomes
//    max(now + comm, due) + its predicted execution (now + comm + it, after the first);
//    the prediction is the WCET table over the segment's text (Segment::wcet_s). EDF:
//    arrival + ERT for every segment. FCFS: arrival, then when the last segment ended. The
//    vLLM arm: arrival, the plan whole.
//  - Load shedding (rtllm, rtllm-fixed): at each dequeue a queued task whose utility
//    alpha max(0, now - due) + beta is 0 or less is dropped (KillCause::Shed).
//  - A segment ends by the stop rule (workload/minispec.h); the request leaves vLLM (here:
//    a preemption: its KV is released, its full blocks stay in the prefix cache) and its
//    next segment is queued at once as a new request whose prompt is everything so far,
//    its prefill finding the cached blocks. The robot gets the segment at once.
// Ties in the priority are broken by the lower request index (the code's heap leaves
// them in no defined order).
#include "sched/scheduler.h"

#include <deque>
#include <set>
#include <vector>

namespace kairos {

namespace rules {
extern const RuleId kCodeShed;
} // namespace rules

struct TimelyCodeOptions {
    enum class Mode { Rtllm, Edf, Fcfs, Vllm };
    Mode mode = Mode::Rtllm;
    int batch = 0;           // > 0: a fixed batch (rtllm-fixed, EDF, FCFS); 0: adaptive
    int lmax = 10;           // segment length the admission test assumes (typefly: 10)
    double seg_exe = 0.09;   // a segment's generation time in the priority (typefly: 90 ms)
    double comm = 0.008;     // hand-off to the robot in the priority and the due times
    bool shed = true;        // rtllm and rtllm-fixed drop tasks whose utility fell to 0
    double slack = 10.0;     // ERT of a request without a TUF (full utility, zero at 2x)
    double watermark = 0.01; // vLLM's own admission
};

class TimelyCodeScheduler final : public Scheduler {
public:
    explicit TimelyCodeScheduler(TimelyCodeOptions o) : opt_(o) {}
    std::string name() const override;
    double kvWatermark() const override { return opt_.watermark; }
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    void onEnqueue(const EngineView& view, ReqId id) override;
    void onFinish(const EngineView& view, ReqId id) override;
    void inspect(const EngineView& view, ReqId id, Insight& out) const override;
    std::string keyName() const override;
    bool keyDescending() const override { return opt_.mode == TimelyCodeOptions::Mode::Rtllm; }
    bool waitingKeysVary() const override { return opt_.mode == TimelyCodeOptions::Mode::Rtllm; }

    // The queue priority of request `id` at time t (rtllm), and whether it would be shed.
    double priority(ReqId id, double t) const;
    bool shedAt(ReqId id, double t) const;
    double due(ReqId id) const { return tasks_[static_cast<std::size_t>(id)].due; }

private:
    enum class Where : std::uint8_t { Pending, Queued, Added, Running, Done };
    struct Task {
        std::vector<int> ends; // cumulative tokens at each segment's end
        std::vector<double> wcet;
        int next = 0;     // the segment being (or to be) generated
        double due = 0;   // exe_end_pre: the predicted end of the robot's work (abs.)
        double key = 0;   // EDF / FCFS / vLLM queue key
        double taken = 0; // when the current segment was taken from the queue
        int tokens = 0;   // tokens of the current segment, as last seen
        double ert = 0, alpha = 0, beta = 1;
        Where where = Where::Pending;
        bool registered = false; // taken from the queue at least once, not done
    };
    Task& task(ReqId id) { return tasks_[static_cast<std::size_t>(id)]; }
    const Task& task(ReqId id) const { return tasks_[static_cast<std::size_t>(id)]; }
    bool fixedBatch() const { return opt_.batch > 0; }
    bool ranked() const;
    bool sheds() const;
    bool adaptive() const; // rtllm: the urgent task's token rate decides (no fixed batch)
    // The best queued task (dropping the ones shed), -1 if none.
    ReqId dequeue(const EngineView& view, Decision& out);
    void add(ReqId id, double now);
    ReqId pickUrgent(double speed, double now) const;
    void enqueue(ReqId id);

    TimelyCodeOptions opt_;
    std::vector<Task> tasks_;
    std::vector<ReqId> queued_;                // rtllm: re-scored at every dequeue
    std::set<std::pair<double, ReqId>> keyed_; // the other modes: by fixed key
    std::deque<ReqId> in_vllm_;                // added, waiting inside vLLM (its FCFS)
    std::vector<ReqId> running_;               // taken in by vLLM
    std::vector<ReqId> finished_;              // since the last decision
    std::set<ReqId> registered_;
    ReqId urgent_ = -1;
    double speed_ = 0;
    bool wait_ = false; // rtllm: admission refused, until a segment finishes
    int in_flight_ = 0; // fixed batch: added and not finished
};

} // namespace kairos
