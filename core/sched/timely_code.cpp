#include "sched/timely_code.h"

#include "sched/admission.h"

#include <algorithm>
#include <cmath>

namespace kairos {

namespace rules {
const RuleId kCodeSegment = registerRule(
    {"timely_code.segment", "timely_code: segment complete, handed to the robot, queued again",
     RuleVars{"generated", "segment_end", "segment"},
     "TimelyLLM's code: the stop rule ended a segment; the request leaves the engine and its "
     "next segment is queued as a new request",
     false, [](const double* x) { return x[0] >= x[1]; }});
const RuleId kCodeAdmit = registerRule(
    {"timely_code.admit", "timely_code: vLLM takes what the harness added, in order",
     RuleVars{"position", "need", "free"},
     "TimelyLLM's code: the harness added it (one per step, by its queue and batching "
     "rule); vLLM starts what was added first come, first served, as seats and KV allow",
     false, [](const double* x) { return x[1] <= x[2] && x[0] >= 0; }});
const RuleId kCodeShed = registerRule(
    {"timely_code.shed", "timely_code: queued task's utility fell to 0, dropped",
     RuleVars{"late", "cutoff"},
     "TimelyLLM's code: at a dequeue, a queued task `late` seconds past its due time, at "
     "or past its TUF's zero point `cutoff` after it, is dropped",
     false, [](const double* x) { return x[0] >= x[1]; }});
} // namespace rules

std::string TimelyCodeScheduler::name() const {
    std::string s;
    switch (opt_.mode) {
    case TimelyCodeOptions::Mode::Rtllm:
        s = fixedBatch() ? "timely_code(rtllm-fixed, batch " + std::to_string(opt_.batch) + ")"
                         : "timely_code(rtllm, lmax " + std::to_string(opt_.lmax) + ")";
        break;
    case TimelyCodeOptions::Mode::Edf:
        s = "edf_code(batch " + std::to_string(opt_.batch) + ")";
        break;
    case TimelyCodeOptions::Mode::Fcfs:
        s = "fcfs_code(batch " + std::to_string(opt_.batch) + ")";
        break;
    case TimelyCodeOptions::Mode::Vllm:
        s = "vllm_code";
        break;
    }
    return s;
}

bool TimelyCodeScheduler::ranked() const {
    return opt_.mode == TimelyCodeOptions::Mode::Rtllm;
}
bool TimelyCodeScheduler::sheds() const {
    return ranked() && opt_.shed;
}
bool TimelyCodeScheduler::adaptive() const {
    return ranked() && !fixedBatch();
}

void TimelyCodeScheduler::reset(const Workload& w) {
    tasks_.assign(w.requests.size(), Task{});
    queued_.clear();
    keyed_.clear();
    in_vllm_.clear();
    running_.clear();
    finished_.clear();
    registered_.clear();
    urgent_ = -1;
    speed_ = 0;
    wait_ = false;
    in_flight_ = 0;
    for (std::size_t i = 0; i < w.requests.size(); ++i) {
        const Request& r = w.requests[i];
        Task& t = tasks_[i];
        int sum = 0;
        // The vLLM arm generates the plan whole: one segment.
        if (r.segments.empty() || opt_.mode == TimelyCodeOptions::Mode::Vllm) {
            t.ends.push_back(r.output_tokens);
            t.wcet.push_back(0);
        } else {
            for (const Segment& s : r.segments) {
                t.ends.push_back(sum += s.tokens);
                t.wcet.push_back(s.predicted());
            }
        }
        const Tuf tuf = r.tuf ? *r.tuf : Tuf{opt_.slack, -1.0 / opt_.slack, 1.0};
        t.ert = tuf.ert;
        t.alpha = tuf.slope;
        t.beta = tuf.beta;
        t.due = r.arrival + tuf.ert;
        t.key = opt_.mode == TimelyCodeOptions::Mode::Edf ? t.due : r.arrival;
    }
}

double TimelyCodeScheduler::priority(ReqId id, double t) const {
    const Task& k = task(id);
    const double d = t + opt_.seg_exe + opt_.comm - k.due;
    return (k.alpha * std::max(0.0, d) + k.beta) * std::exp(std::min(0.0, d));
}

bool TimelyCodeScheduler::shedAt(ReqId id, double t) const {
    const Task& k = task(id);
    return k.alpha * std::max(0.0, t - k.due) + k.beta <= 0;
}

void TimelyCodeScheduler::enqueue(ReqId id) {
    Task& t = task(id);
    t.where = Where::Queued;
    if (ranked())
        queued_.push_back(id);
    else
        keyed_.emplace(t.key, id);
}

void TimelyCodeScheduler::onEnqueue(const EngineView& view, ReqId id) {
    (void)view;
    // An arrival joins the harness's queue; a request the engine preempted (KV overflow)
    // goes back to the head of vLLM's own waiting queue (schedule() finds those).
    if (task(id).where == Where::Pending) enqueue(id);
}

void TimelyCodeScheduler::onFinish(const EngineView& view, ReqId id) {
    (void)view;
    finished_.push_back(id);
}

ReqId TimelyCodeScheduler::dequeue(const EngineView& view, Decision& out) {
    const double now = view.now();
    if (!ranked()) {
        if (keyed_.empty()) return -1;
        const ReqId id = keyed_.begin()->second;
        keyed_.erase(keyed_.begin());
        return id;
    }
    ReqId best = -1;
    double best_p = 0;
    std::size_t kept = 0;
    for (ReqId id : queued_) {
        if (sheds() && shedAt(id, now)) {
            Task& t = task(id);
            out.killFor(id, KillCause::Shed);
            if (out.explain)
                out.because(Act::Kill, id, rules::kCodeShed,
                            {now - t.due, t.beta / -std::min(-1e-300, t.alpha)});
            t.where = Where::Done;
            if (t.registered) registered_.erase(id);
            t.registered = false;
            continue;
        }
        queued_[kept++] = id;
        const double p = priority(id, now);
        if (best < 0 || p > best_p || (p == best_p && id < best)) best = id, best_p = p;
    }
    queued_.resize(kept);
    if (best >= 0) queued_.erase(std::find(queued_.begin(), queued_.end(), best));
    return best;
}

void TimelyCodeScheduler::add(ReqId id, double now) {
    Task& t = task(id);
    t.where = Where::Added;
    t.taken = now;
    t.tokens = 0;
    if (!t.registered) registered_.insert(id);
    t.registered = true;
    in_vllm_.push_back(id);
    ++in_flight_;
}

ReqId TimelyCodeScheduler::pickUrgent(double speed, double now) const {
    ReqId best = -1;
    double best_v = 0;
    for (ReqId id : registered_) {
        const Task& t = task(id);
        const double v =
            speed == 0 ? -t.due : (opt_.lmax - t.tokens) / speed - (t.due - (now + opt_.comm));
        if (best < 0 || v > best_v) best = id, best_v = v;
    }
    return best;
}

void TimelyCodeScheduler::schedule(const EngineView& view, Decision& out) {
    const double now = view.now();
    out.hold = 1; // the harness decides after every engine step
    // Whether an engine step ran since the last decision (else an arrival woke an idle
    // engine: the harness's admission runs only after a step).
    const bool stepped = !running_.empty();
    // Requests the engine preempted on its own (KV overflow) wait inside vLLM again, first.
    for (std::size_t i = 0; i < running_.size();) {
        const ReqId id = running_[i];
        const Phase ph = view.state(id).phase;
        if (ph == Phase::Running) {
            ++i;
            continue;
        }
        running_[i] = running_.back();
        running_.pop_back();
        if (ph == Phase::Waiting) {
            task(id).where = Where::Added;
            in_vllm_.push_front(id);
        }
    }
    // 1. The harness's admission, on what it knew before this step's outputs.
    if (stepped) {
        bool add_one = false;
        if (fixedBatch()) {
            add_one = in_flight_ < opt_.batch;
        } else if (opt_.mode == TimelyCodeOptions::Mode::Vllm) {
            add_one = true;
        } else if (!wait_) {
            // vLLM's cache counts evictable cached blocks as free: full means none free.
            if (view.kvFree() > 0) {
                double slack = INFINITY;
                speed_ = 0;
                if (urgent_ >= 0 && task(urgent_).registered) {
                    const Task& u = task(urgent_);
                    slack = u.due - (now + opt_.comm);
                    if (now > u.taken) speed_ = u.tokens / (now - u.taken);
                }
                add_one = speed_ == 0 || (opt_.lmax - task(urgent_).tokens) / speed_ < slack;
                if (!add_one) wait_ = true;
            } else {
                wait_ = true;
            }
        }
        if (add_one) {
            const ReqId id = dequeue(view, out);
            if (id >= 0) add(id, now);
            if (adaptive()) urgent_ = pickUrgent(speed_, now);
        }
    }

    // 2. This step's outputs: segments that ended go to the robot and back to the queue.
    bool freed = false;
    for (ReqId id : finished_) {
        Task& t = task(id);
        if (t.where == Where::Done) continue;
        t.where = Where::Done;
        running_.erase(std::remove(running_.begin(), running_.end(), id), running_.end());
        registered_.erase(id);
        t.registered = false;
        --in_flight_;
        freed = true;
        if (id == urgent_) urgent_ = -1;
    }
    finished_.clear();
    for (std::size_t i = 0; i < running_.size();) {
        const ReqId id = running_[i];
        const ReqState& s = view.state(id);
        Task& t = task(id);
        const int start = t.next == 0 ? 0 : t.ends[static_cast<std::size_t>(t.next - 1)];
        const bool last = t.next + 1 >= static_cast<int>(t.ends.size());
        if (last || s.needsPrefill() || s.generated < t.ends[static_cast<std::size_t>(t.next)]) {
            if (!s.needsPrefill()) t.tokens = s.generated - start;
            ++i;
            continue;
        }
        out.dispatch.emplace_back(id, t.next);
        out.preempt.push_back(id);
        if (out.explain) {
            const double end = t.ends[static_cast<std::size_t>(t.next)];
            out.because(Act::Dispatch, id, rules::kCodeSegment,
                        {double(s.generated), end, double(t.next)}, -1, t.next);
            out.because(Act::Preempt, id, rules::kCodeSegment,
                        {double(s.generated), end, double(t.next)});
        }
        if (ranked()) {
            const double gen_end = now + opt_.comm;
            const double exe = t.wcet[static_cast<std::size_t>(t.next)];
            t.due = (t.next == 0 ? gen_end : std::max(gen_end, t.due)) + exe;
        } else if (opt_.mode == TimelyCodeOptions::Mode::Fcfs) {
            t.key = now;
        }
        ++t.next;
        t.tokens = 0;
        --in_flight_;
        freed = true;
        running_[i] = running_.back();
        running_.pop_back();
        enqueue(id);
        if (id == urgent_ && adaptive()) urgent_ = pickUrgent(speed_, now);
    }
    if (freed) wait_ = false;
    if (urgent_ < 0 && adaptive()) urgent_ = pickUrgent(speed_, now);

    // 3. Nothing left in vLLM: the harness adds the next queued task at once. (After a
    //    segment ended here, in the engine's next decision at this same instant: the engine
    //    asks again when nothing runs, and a request is not dropped and taken in by one
    //    decision.)
    if (running_.empty() && in_vllm_.empty() && out.preempt.empty()) {
        const ReqId id = dequeue(view, out);
        if (id >= 0) {
            add(id, now);
            if (adaptive()) urgent_ = pickUrgent(speed_, now);
        }
    }

    // 4. vLLM's own scheduler: what was added, first come first served, as seats and KV
    //    allow (without chunked prefill a pending prefill runs alone first).
    if (prefillPending(view)) return;
    AdmissionBudget budget(view, opt_.watermark, false);
    for (ReqId id : out.preempt) budget.addFree(view.kvFreedBy(id));
    budget.setSeats(view.limits().max_num_seqs - static_cast<std::int64_t>(running_.size()));
    double position = 0;
    while (!in_vllm_.empty() && budget.seats() > 0) {
        const ReqId id = in_vllm_.front();
        const ReqState& s = view.state(id);
        const auto v = budget.take(s);
        if (v == AdmissionBudget::Verdict::NeverFits) {
            in_vllm_.pop_front();
            budget.killNeverFits(out, s);
            Task& t = task(id);
            t.where = Where::Done;
            registered_.erase(id);
            t.registered = false;
            --in_flight_;
            continue;
        }
        if (v == AdmissionBudget::Verdict::NoRoom) break;
        in_vllm_.pop_front();
        out.admit.push_back(id);
        if (out.explain)
            out.because(Act::Admit, id, rules::kCodeAdmit,
                        {position, double(budget.lastNeed()), double(budget.lastFree())});
        ++position;
        task(id).where = Where::Running;
        running_.push_back(id);
    }
}

void TimelyCodeScheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    const Task& t = task(id);
    out.key = ranked() ? priority(id, view.now()) : t.key;
    out.deadline = t.due;
}

std::string TimelyCodeScheduler::keyName() const {
    switch (opt_.mode) {
    case TimelyCodeOptions::Mode::Rtllm:
        return "priority (alpha max(0,D) + beta) e^min(0,D)";
    case TimelyCodeOptions::Mode::Edf:
        return "deadline (s)";
    default:
        return "arrival (s)";
    }
}

} // namespace kairos
