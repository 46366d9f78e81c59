#pragma once
// The vLLM-like benchmarks of the MC-SF paper (seeds/003, section 7):
//   protect_greedy(alpha): admit waiting requests in arrival order while the KV in use
//     stays at or below (1 - alpha) * M; when the running requests' growth would overflow
//     the cache, every running request is cleared back to the queue (it will recompute).
//   protect_clearing(alpha, beta): the same admission; on overflow each running request is
//     cleared independently with probability beta (seeded), in rounds, until the next
//     iteration fits.
// A small alpha admits aggressively and can loop: overflow, clear, readmit, overflow.
#include "sched/scheduler.h"
#include "workload/random.h"

#include <cstdint>

namespace kairos {

struct ProtectOptions {
    double alpha = 0.2;
    double beta = 1.0; // 1: clear all (protect_greedy)
    std::uint64_t seed = 0;
    bool clearing = false; // name the policy protect_clearing
};

class ProtectScheduler final : public Scheduler {
public:
    explicit ProtectScheduler(ProtectOptions o);
    std::string name() const override;
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    long overflows() const { return overflows_; }

private:
    ProtectOptions opt_;
    Rng rng_;
    long overflows_ = 0;
};

} // namespace kairos
