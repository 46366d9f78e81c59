#pragma once
// Prefill/decode disaggregation (Splitwise, DistServe, Mooncake, llm-d; vLLM's disaggregated
// prefill through a KV connector): a pool of P prefill replicas and a pool of D decode
// replicas, each replica an engine of its own (sim/engine.h) behind the fleet's router.
//  - A request goes to a prefill replica (the router over the prefill pool), which computes
//    its prompt and stops (vLLM's prefill instance runs it with one output token).
//  - Its KV then moves to a decode replica over a link (LinkModel): latency + bytes /
//    bandwidth, bytes = prompt tokens x the model's KV bytes per token, the link's
//    bandwidth per GPU times the replica's GPUs (each GPU sends its tensor-parallel shard
//    over its own link, as in a DGX node with a NIC per GPU).
//  - When the KV has arrived, the request enters the decode pool (the router over the decode
//    pool, at that time): admitted when its KV fits, it computes its last prompt token
//    there (the transferred KV holds the others) and emits every output token. Its TTFT
//    therefore includes the transfer and any wait for decode memory, as a client of vLLM's
//    disaggregated proxy sees it.
// Where Kairos simplifies: the prefill pool runs first, the decode pool after it (no
// back-pressure: a prefill replica frees the KV when the prompt is done, where a real one
// keeps it until the decode side has pulled it), and a request preempted on the decode side
// recomputes its whole context there.
//
// The run log is one fleet's: replicas 0..P-1 the prefill pool, P..P+D-1 the decode pool;
// each request's replica is its decode replica (its prefill replica when it never got
// there); events in time order (a prefill's end is not a token: the first comes from the
// decode side).
#include "sim/fleet.h"

#include <algorithm>
#include <string>

namespace kairos {

struct LinkModel {
    std::string name;
    double bandwidth_gbs = 0; // GB/s per GPU, one direction
    double latency_s = 0;
    // Seconds to move `bytes` from one replica of `gpus` GPUs to another.
    double transferTime(double bytes, int gpus) const {
        return latency_s + bytes / (bandwidth_gbs * 1e9 * std::max(1, gpus));
    }
    // "nvlink-a100", "nvlink-h100", "ib-hdr", "ib-ndr", "pcie4", "pcie5", or "GBS:US" (GB/s
    // per GPU and microseconds). Throws std::invalid_argument naming the choices.
    static LinkModel parse(const std::string& text);
    static const char* presetList();
};

struct DisaggRun {
    FleetRun prefill; // its workload, model, schedulers and limits; fleet: P and the router
    FleetRun decode;  // the same workload; fleet: D and the router
    LinkModel link;
    std::int64_t kv_bytes_per_token = 0;
    int gpus_per_replica = 1;
    // A decode replica's GPUs when the pools run on different hardware (0: the same as a
    // prefill replica's). Each GPU's shard moves over its own link, so a transfer between
    // replicas of different tensor-parallel degrees runs over as many links as the smaller
    // of the two has GPUs.
    int decode_gpus_per_replica = 0;
    int transferGpus() const {
        return decode_gpus_per_replica > 0 ? std::min(gpus_per_replica, decode_gpus_per_replica)
                                           : gpus_per_replica;
    }
};

// Throws std::invalid_argument for a pool of no replicas, a link without bandwidth, or a
// prompt whose KV alone exceeds a decode replica's KV capacity.
RunLog simulateDisaggregated(const DisaggRun& run);

// "P:D" -> {P, D}; throws std::invalid_argument.
std::pair<int, int> parseDisaggregate(const std::string& text);

} // namespace kairos
