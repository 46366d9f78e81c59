#include "sched/optimal.h"

#include "exec/execution_model.h"
#include "sched/discrete_model.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kOptimalStart = registerRule(
    {"optimal.start", "optimal: the hindsight optimum starts it now", RuleVars{"start", "now"},
     "MC-SF's exact optimum (exhaustive search over the discrete model) starts it this "
     "round",
     false, [](const double* x) { return x[0] <= x[1]; }});
} // namespace rules

void OptimalScheduler::reset(const Workload& w) {
    if (w.size() > kMaxRequests)
        throw std::invalid_argument(
            "optimal: an exhaustive search is for tiny instances (at most " +
            std::to_string(kMaxRequests) + " requests; this workload has " +
            std::to_string(w.size()) + ")");
    for (std::size_t i = 0; i < w.size(); ++i)
        if (w.requests[i].arrival != std::floor(w.requests[i].arrival))
            throw std::invalid_argument("optimal: request " + std::to_string(w.requests[i].id) +
                                        " arrives at a fractional time; the discrete model "
                                        "needs whole rounds");
    w_ = &w;
    start_.clear();
}

void OptimalScheduler::schedule(const EngineView& view, Decision& out) {
    if (start_.empty() && w_ && !w_->empty()) {
        if (!dynamic_cast<const UnitModel*>(view.model()))
            throw std::invalid_argument(
                "optimal: needs the unit-time model (--profile unit), where the discrete "
                "model is exact");
        if (!view.limits().chunked_prefill || view.limits().block_size != 1)
            throw std::invalid_argument(
                "optimal: needs chunked prefill and token-granular KV (--chunked-prefill, "
                "--block-size 1), where the discrete model is exact");
        discrete::Instance in;
        in.capacity = view.kvCapacity();
        in.occupancy = discrete::Occupancy::Engine;
        for (const Request& r : w_->requests)
            in.jobs.push_back({static_cast<int>(r.arrival), r.prompt_tokens, r.output_tokens});
        start_ = discrete::optimal(in);
    }
    const auto now = static_cast<long>(std::llround(view.now()));
    double next = INFINITY;
    for (ReqId id : view.waiting()) {
        const int s = start_[static_cast<std::size_t>(id)];
        if (s <= now) {
            out.admit.push_back(id);
            if (out.explain)
                out.because(Act::Admit, id, rules::kOptimalStart, {double(s), double(now)});
        } else
            next = std::min(next, static_cast<double>(s));
    }
    out.hold = 1;
    out.wake_at = next;
}

} // namespace kairos
