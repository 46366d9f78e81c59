#include "sched/scheduler.h"

#include <stdexcept>

namespace kairos {

const char* engineRulesName(EngineRules r) {
    return r == EngineRules::VllmV0 ? "vllm-v0" : "kairos";
}

bool engineRulesFromName(const std::string& name, EngineRules& out) {
    if (name == "kairos")
        out = EngineRules::Kairos;
    else if (name == "vllm-v0")
        out = EngineRules::VllmV0;
    else
        return false;
    return true;
}

ReqId Scheduler::overflowVictim(const EngineView& view) {
    if (view.running().empty()) throw std::logic_error("overflowVictim: nothing is running");
    return worstBy(view.running(), [&](ReqId id) { return view.state(id).req->arrival; });
}

void Scheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    out.key = view.state(id).req->arrival;
}

} // namespace kairos
