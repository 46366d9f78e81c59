#pragma once
// Capacity search: per policy, the highest arrival rate at which the SLO attainment (the
// share of requests that meet every SLO of the spec, summary.goodput: DistServe's measure)
// stays at or above a target.
//
// The rate is varied either by scaling the trace's own arrivals (its burstiness and daily
// shape kept; the rate reported is the scaled offered rate in requests per second) or by
// generating Poisson/gamma arrivals at the rate (the spec's burstiness). For each policy
// and seed: bracket (double the rate while the target is met, halve it while it is not),
// then bisect until the bracket is narrower than `rel_tol` of its lower end; the seed's
// capacity is the highest rate that met the target. The policy's capacity is the mean over
// seeds with a 95 % interval (t-based), and each seed's bracket.
//
// SLO attainment is run/pipeline.h's slo_attainment: good requests / requests, killed and
// unfinished ones counting as missing. It does not involve the run's duration: vLLM's
// goodput (good requests per second, its fraction of the offered rate) does, and over a
// run the decode tail that no replica shortens bounds it below the target however many
// replicas serve (40 requests all within their SLOs on 2 replicas read as "above
// max_replicas" up to 64). Goodput stays a reported metric. Attainment need not fall
// monotonically with the rate; bisection finds one crossing between a rate that met the
// target and a higher one that did not.
#include "run/pipeline.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace kairos::capacity {

// The bisection's relative tolerance: HI / LO - 1 below it ends the search. Finer than 1e-6
// is below the simulation's own noise between seeds; coarser than 0.5 is not a search.
inline constexpr double kMinTolerance = 1e-6, kMaxTolerance = 0.5;

struct Options {
    double target = 0.9;    // SLO attainment at or above this
    bool generate = false;  // Poisson/gamma at the rate instead of scaling the trace
    double start = 0;       // first rate tried (req/s); 0: the trace's own rate
    double rel_tol = 0.02;  // bisection stops when hi / lo - 1 < rel_tol
    double max_rate = 1e6;  // bracketing gives up above this (capacity >= it)
    double min_rate = 1e-6; // ... and below this (capacity < it)
    int seeds = 1;
    int threads = 0; // 0: every core
    const std::atomic<bool>* cancel = nullptr;
    std::function<void(const std::string& policy, int seed, double rate, double fraction)> step;
    // Called once before any run with what the searches at once will hold (checked against
    // the budget first: run/memory_estimate.h).
    std::function<void(const MemoryEstimate&)> memory;
};

struct SeedResult {
    double capacity = 0;  // highest rate that met the target (0 when none did)
    double failed_at = 0; // lowest rate above it that did not (inf when none did not)
    int runs = 0;
};

struct Result {
    std::string policy;
    double capacity = 0, half = 0; // mean over seeds and its 95 % half-width (req/s)
    double base_rate = 0;          // the trace's own offered rate (req/s)
    std::vector<SeedResult> seeds;
    int runs = 0;
    std::string note; // "", "above max_rate", "below min_rate"
};

// `base` must give goodput SLOs. Throws std::invalid_argument otherwise.
std::vector<Result> find(const RunSpec& base, const std::vector<std::string>& policies,
                         const Options& opt, const RunContext& ctx);

// The other question (what Vidur-Search answers by brute force): at the workload's own rate
// (the base spec's arrivals), the fewest replicas behind the base spec's router that keep the
// SLO attainment at or above the target. Per policy and seed: 1, 2, 4, ... until the target
// is met (bracketing), then bisection over the whole numbers between the last that failed and
// the first that met it. The answer for a policy holds for every seed (the largest of the
// seeds' answers); each seed's own is kept. Attainment need not rise monotonically with replicas
// (a router can place badly); bisection finds one crossing. `opt.start`, `rel_tol`,
// `min_rate` and `max_rate` are not used; `max_replicas` bounds the bracketing.
struct ReplicaResult {
    std::string policy;
    int replicas = 0;           // the fewest that met the target for every seed (0: none did)
    std::vector<int> seeds;     // each seed's fewest (0: none up to max_replicas)
    std::vector<double> met_at; // each seed's SLO attainment with its fewest
    // With disaggregation (the base spec's fleet.disaggregate set, whatever its split):
    // `replicas` counts both pools, and each seed's answer is split into this many prefill
    // replicas (the rest decode), the split of that total with the highest attainment.
    std::vector<int> prefill;
    double rate = 0; // the offered rate searched at (req/s)
    int runs = 0;
    std::string note; // "", "above max_replicas"
};
std::vector<ReplicaResult> fewestReplicas(const RunSpec& base,
                                          const std::vector<std::string>& policies,
                                          const Options& opt, const RunContext& ctx,
                                          int max_replicas = 1024);

} // namespace kairos::capacity
