#pragma once
// Replicas behind a router (Vidur's global scheduler; SGLang's and vLLM's routers): a fleet
// of identical engines, each with its own scheduler, KV cache and prefix cache, and a router
// that places every request on one replica when it arrives, from what each replica is at
// that moment.
//
// Routers:
//  - round_robin: the k-th arrival goes to replica k mod N;
//  - least_outstanding: the replica with the fewest requests routed to it and not finished
//    (Vidur's "lor"); ties to the lowest index;
//  - least_kv: the replica with the fewest KV tokens in use plus context tokens queued for
//    admission (the most room once its queue is in); ties by outstanding requests, then index;
//  - prefix_aware: SGLang's cache-aware router as it routes (sgl-model-gateway's
//    cache_aware policy; sim/router_tree.h names the commits). The load of a replica is the
//    router's own count of requests it sent there and not finished. When the load is
//    imbalanced (max - min > balance_abs and max > balance_rel * min, both strict) the
//    least loaded replica (ties to the lowest index); else the tenant of the deepest node
//    of an approximate radix tree that the prompts it routed built (never the replicas'
//    real caches), when the tokens matched exceed cache_threshold of the prompt; else the
//    least loaded. Either way the prompt is then inserted under the replica chosen. Every
//    kTreeEvictionInterval seconds each replica's part of the tree is cut to
//    kTreeTokens, least recently used leaves first. Defaults: SGLang's launcher and CLI,
//    cache_threshold 0.3, balance_abs 64, balance_rel 1.5.
//  - prefix_oracle: Kairos's earlier ideal router: the same rule, but the match is each
//    replica's real prefix cache (the longest cached leading part of the prompt; ties to
//    the less loaded, then the lower index), and its defaults are the early SGLang
//    launcher's: 0.5, 32, 1.0001.
//    Both need prefix caching on.
//
// What the router sees: each replica at an iteration boundary at or after the arrival. A
// replica's stretch (sim/engine.h) never runs past an arrival into the fleet, so this is the
// end of the iteration in progress at the arrival: at most one iteration ahead of it.
//
// The result is one RunLog in the fleet's request ids: events of every replica merged in time
// order, iterations of every replica tagged with theirs (RunLog::iter_replica), and each
// request's replica (RunLog::replica_of). One replica is the engine alone, bit for bit.
#include "exec/execution_model.h"
#include "model/router.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "sched/scheduler.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kairos {

// SGLang's router's tree upkeep, from its launcher: a sweep every 120 s (the Rust CLI's
// --eviction-interval) to 2^26 characters per worker, here 2^24 tokens at 4 characters a
// token.
inline constexpr double kTreeEvictionInterval = 120;
inline constexpr std::int64_t kTreeTokens = std::int64_t(1) << 24;

struct FleetOptions {
    int replicas = 1;
    Router router = Router::RoundRobin;
    // The cache-aware routers' thresholds (prefix_aware, prefix_oracle); negative: the
    // router's default (routerDefaults).
    double cache_threshold = -1;
    std::int64_t balance_abs = -1;
    double balance_rel = -1;
};
// The defaults of a cache-aware router: {cache_threshold, balance_abs, balance_rel}.
struct RouterThresholds {
    double cache_threshold;
    std::int64_t balance_abs;
    double balance_rel;
};
inline RouterThresholds routerDefaults(Router r) {
    return r == Router::PrefixOracle ? RouterThresholds{0.5, 32, 1.0001}
                                     : RouterThresholds{0.3, 64, 1.5};
}

struct FleetRun {
    const Workload* workload = nullptr; // sorted by arrival
    const ExecutionModel* model = nullptr;
    // A fresh scheduler for each replica (a scheduler is stateful).
    std::function<std::unique_ptr<Scheduler>()> make_scheduler;
    EngineLimits limits;
    FleetOptions fleet;
    // Every replica records its decisions with their reasons; the run log's explanation
    // merges them (model/explain.h, Explanation::call_replica).
    bool explain = false;
    // Where each request goes, in the workload's order, instead of the router's choice: a
    // replay of a recorded fleet (sched/replay.h) routes as the run did.
    const std::vector<std::int16_t>* routes = nullptr;
    // Per request, context tokens whose KV arrives with it (a disaggregated decode pool,
    // sim/disagg.h): not computed at its first admission. Null: none.
    const std::vector<std::int32_t>* preloaded = nullptr;
    const std::atomic<bool>* cancel = nullptr;
    std::atomic<double>* progress = nullptr;
};

// The most replicas x requests a fleet may hold (each replica keeps about 200 bytes per
// request of the workload): 25 million, about 5 GB.
inline constexpr double kMaxFleetStates = 25e6;

// Runs the fleet; with one replica, the engine alone (Simulator::run). Throws
// std::invalid_argument for more replicas x requests than kMaxFleetStates.
RunLog simulateFleet(const FleetRun& run);

} // namespace kairos
