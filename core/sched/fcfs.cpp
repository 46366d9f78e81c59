#include "sched/fcfs.h"

#include "sched/admission.h"

#include <cstdio>

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kFcfsHead = registerRule(
    {"fcfs.head", "fcfs: the head of the queue fits (need <= free, a seat)",
     RuleVars{"need", "free", "seats"},
     "first come, first served: the oldest waiting request's reservation fits above the "
     "watermark and a seat is free; the first that does not stops admission",
     false, [](const double* x) { return x[0] <= x[1] && x[2] >= 1; }});
} // namespace rules

std::string FcfsScheduler::name() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "fcfs(watermark=%g)", opt_.watermark);
    return buf;
}

void FcfsScheduler::schedule(const EngineView& view, Decision& out) {
    out.hold = INT_MAX; // nothing changes for FCFS until an arrival, a finish or an overflow
    if (prefillPending(view)) return;
    AdmissionBudget budget(view, opt_.watermark);
    for (ReqId id : view.waiting()) {
        const auto v = budget.take(view.state(id));
        if (v == AdmissionBudget::Verdict::NeverFits) { // vLLM ignores such a request
            budget.killNeverFits(out, view.state(id));
            continue;
        }
        if (v == AdmissionBudget::Verdict::NoRoom) break; // no overtaking
        out.admit.push_back(id);
        if (out.explain)
            out.because(
                Act::Admit, id, rules::kFcfsHead,
                {double(budget.lastNeed()), double(budget.lastFree()), double(budget.lastSeats())});
    }
}

} // namespace kairos
