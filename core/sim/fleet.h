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
//  - prefix_aware: SGLang's cache-aware rule. When the load is imbalanced (max - min
//    outstanding > 32 and max > 1.0001 * min, SGLang's defaults) the least loaded replica;
//    else the replica whose prefix cache holds the longest leading part of the prompt, when
//    that part exceeds half the prompt (cache_threshold 0.5); else the least loaded.
//    Where Kairos departs from SGLang: the router reads each replica's real prefix cache (an
//    ideal router; SGLang's keeps an approximate radix tree of what it sent), and without a
//    match it takes the least loaded replica, as this project's issue asks (SGLang: the
//    replica with the smallest tree). It needs prefix caching on.
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

struct FleetOptions {
    int replicas = 1;
    Router router = Router::RoundRobin;
    // SGLang's cache-aware defaults (prefix_aware only).
    double cache_threshold = 0.5;
    std::int64_t balance_abs = 32;
    double balance_rel = 1.0001;
};

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
