#include "sched/scheduler.h"

#include <stdexcept>

namespace kairos {

ReqId Scheduler::overflowVictim(const EngineView& view) {
    if (view.running().empty()) throw std::logic_error("overflowVictim: nothing is running");
    return worstBy(view.running(), [&](ReqId id) { return view.state(id).req->arrival; });
}

void Scheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    out.key = view.state(id).req->arrival;
}

} // namespace kairos
