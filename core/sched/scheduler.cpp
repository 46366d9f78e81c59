#include "sched/scheduler.h"

#include <stdexcept>

namespace kairos {

ReqId Scheduler::overflowVictim(const EngineView& view) {
    const auto& running = view.running();
    if (running.empty()) throw std::logic_error("overflowVictim: nothing is running");
    ReqId victim = running.front();
    for (ReqId id : running) {
        const double a = view.state(id).req->arrival, b = view.state(victim).req->arrival;
        if (a > b || (a == b && id > victim)) victim = id;
    }
    return victim;
}

} // namespace kairos
