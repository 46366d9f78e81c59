#include "sched/replay.h"

#include <string>

namespace kairos {

ReplayScheduler::ReplayScheduler(Explanation recorded, std::string policy)
    : rec_(std::move(recorded)), policy_(std::move(policy)) {
    if (!rec_.on) throw std::invalid_argument("replay: the run recorded no decisions (--explain)");
}

void ReplayScheduler::reset(const Workload&) {
    call_ = next_ = 0;
}

void ReplayScheduler::schedule(const EngineView& view, Decision& out) {
    if (call_ >= rec_.calls.size())
        throw ReplayDiverged("replay: call " + std::to_string(call_ + 1) +
                             " at t = " + std::to_string(view.now()) + " s, but the run recorded " +
                             std::to_string(rec_.calls.size()));
    const CallRecord& c = rec_.calls[call_];
    if (c.t != view.now())
        throw ReplayDiverged("replay: call " + std::to_string(call_) +
                             " at t = " + std::to_string(view.now()) + " s, recorded at " +
                             std::to_string(c.t) + " s");
    while (next_ < rec_.reasons.size() && cacheAct(rec_.reasons[next_].act)) ++next_;
    // Engine-made actions of earlier calls that no overflow asked for: the run diverged.
    if (next_ < rec_.reasons.size() && rec_.reasons[next_].call < call_)
        throw ReplayDiverged("replay: an overflow victim recorded at t = " +
                             std::to_string(rec_.reasons[next_].t) + " s was never asked for");
    out.hold = c.hold;
    out.wake_at = c.wake_at;
    out.restart = c.restart;
    for (; next_ < rec_.reasons.size() && rec_.reasons[next_].call == call_; ++next_) {
        const Reason& r = rec_.reasons[next_];
        if (cacheAct(r.act)) continue;    // the prefix cache's record, not a decision
        if (ruleOf(r.rule).engine) break; // the engine's own, after this decision
        switch (r.act) {
        case Act::Admit:
            out.admit.push_back(r.req);
            break;
        case Act::Preempt:
            out.preempt.push_back(r.req);
            break;
        case Act::Suspend:
            out.suspend.push_back(r.req);
            break;
        case Act::Resume:
            out.resume.push_back(r.req);
            break;
        case Act::Kill:
            out.killFor(r.req, static_cast<KillCause>(r.value));
            break;
        case Act::Evict:
            out.evict.emplace_back(r.req, r.x[0]);
            break;
        case Act::Dispatch:
            out.dispatch.emplace_back(r.req, r.value);
            break;
        case Act::Reuse:
        case Act::Uncache:
            break;
        }
    }
    ++call_;
}

ReqId ReplayScheduler::overflowVictim(const EngineView& view) {
    while (next_ < rec_.reasons.size() && cacheAct(rec_.reasons[next_].act)) ++next_;
    if (next_ >= rec_.reasons.size() || !ruleOf(rec_.reasons[next_].rule).engine ||
        rec_.reasons[next_].call + 1 != call_)
        throw ReplayDiverged("replay: a KV overflow at t = " + std::to_string(view.now()) +
                             " s that the run did not record");
    return rec_.reasons[next_++].req;
}

} // namespace kairos
