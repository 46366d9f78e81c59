#include "sched/fcfs.h"

#include <cstdio>

namespace kairos {

std::string FcfsScheduler::name() const {
    char buf[64];
    std::snprintf(buf, sizeof buf, "fcfs(watermark=%g)", opt_.watermark);
    return buf;
}

void FcfsScheduler::schedule(const EngineView& view, Decision& out) {
    out.hold = INT_MAX; // nothing changes for FCFS until an arrival, a finish or an overflow
    const EngineLimits& lim = view.limits();
    const std::int64_t capacity = view.kvCapacity();
    const std::int64_t watermark =
        static_cast<std::int64_t>(opt_.watermark * static_cast<double>(capacity));
    std::int64_t free = view.kvFree() - watermark;
    std::int64_t seats = lim.max_num_seqs - static_cast<std::int64_t>(view.running().size());
    std::int64_t batch_tokens = 0;
    // In vLLM v0 a prefill batch runs alone: while one is pending nothing new is added.
    if (!lim.chunked_prefill)
        for (ReqId id : view.running())
            if (view.state(id).needsPrefill()) return;
    for (ReqId id : view.waiting()) {
        const ReqState& s = view.state(id);
        const std::int64_t need = view.kvCost(s.context() + 1);
        if (need > capacity - watermark) { // can never fit: vLLM ignores such a request
            out.kill.push_back(id);
            continue;
        }
        if (seats <= 0 || need > free) break;
        if (!lim.chunked_prefill && batch_tokens > 0 &&
            batch_tokens + s.context() > lim.max_num_batched_tokens)
            break;
        out.admit.push_back(id);
        free -= need;
        --seats;
        batch_tokens += s.context();
    }
}

} // namespace kairos
