#pragma once
// The vLLM-like benchmarks of the MC-SF paper (seeds/003, section 7):
//   protect_greedy(alpha): admit waiting requests in arrival order while adding the next
//     one keeps the KV in use at or below (1 - alpha) * M (an idle engine admits its first
//     request whatever its size, if it fits M); when the running requests' growth would overflow
//     the cache, every running request is cleared back to the queue (it will recompute).
//   protect_clearing(alpha, beta): the same admission; on overflow each running request is
//     cleared independently with probability beta (seeded), in rounds, until the next
//     iteration fits.
// A small alpha admits aggressively and can loop: overflow, clear, readmit, overflow.
// With reset = true cleared requests start over, as in the paper ("sent back to the waiting
// queue as unprocessed"); then greedy (beta = 1) can repeat itself exactly: when, with no
// request finishing in between, the same requests are cleared at the same progress a
// third time it throws SchedulerLoop (the run would never end, or only by the luck of
// arrivals). For any beta, 1,000 clears with nothing finishing also throw SchedulerLoop:
// with reset and beta < 1 a batch finishes only when the coin spares all of it long enough,
// which takes exponentially many rounds in the batch size. With reset = false
// (default) clearing is vLLM's recompute: generated tokens are kept, so every cycle makes
// progress and no loop is possible, only thrashing.
#include "sched/scheduler.h"
#include "workload/random.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kProtectAdmit;
extern const RuleId kProtectIdle;
extern const RuleId kProtectClear;
} // namespace rules

struct ProtectOptions {
    double alpha = 0.2;
    double beta = 1.0; // 1: clear all (protect_greedy)
    std::uint64_t seed = 0;
    bool clearing = false; // name the policy protect_clearing
    bool reset = false;    // cleared requests start over (the paper's benchmarks)
};

class ProtectScheduler final : public Scheduler {
public:
    explicit ProtectScheduler(ProtectOptions o);
    std::string name() const override;
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    void onFinish(const EngineView& view, ReqId id) override;
    long overflows() const { return overflows_; }

private:
    void detectLoop(const EngineView& view, const std::vector<ReqId>& cleared);

    ProtectOptions opt_;
    Rng rng_;
    long overflows_ = 0;
    // Clear-alls since the last finish: how often each (request, generated) set was seen.
    std::map<std::vector<std::pair<ReqId, std::int32_t>>, int> seen_;
    long clears_since_finish_ = 0;
};

} // namespace kairos
