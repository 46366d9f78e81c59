#pragma once
// optimal: the hindsight optimum of the MC-SF paper's discrete model (seeds/003),
// replayed in the engine. At its first decision it solves the whole workload with the
// exhaustive search of discrete::optimal (Engine occupancy, the engine's capacity) and
// then admits each request at its optimal start round. It knows every future arrival and
// length, which no online policy can: it is the yardstick `mcsf` is measured against.
//
// Only where the discrete model is exact: at most 8 requests, integer arrival times, the
// unit-time model (profile `unit`), chunked prefill, token-granular KV. Anything else is
// refused with std::invalid_argument naming what is wrong.
#include "sched/scheduler.h"

#include <vector>

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kOptimalStart;
} // namespace rules

class OptimalScheduler final : public Scheduler {
public:
    static constexpr std::size_t kMaxRequests = 8;
    std::string name() const override { return "optimal(hindsight, discrete model)"; }
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    const std::vector<int>& starts() const { return start_; }

private:
    const Workload* w_ = nullptr;
    std::vector<int> start_; // optimal start round per request (empty until solved)
};

} // namespace kairos
