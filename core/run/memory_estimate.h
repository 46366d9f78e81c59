#pragma once
// The memory a piece of work will need, stated before it starts, and the refusal of what the
// budget (util/memory.h: the machine, its limits, --max-memory) cannot hold: exit 2 naming
// the option to change, never std::bad_alloc half-way.
//
// The estimate is a sum of parts, each an exact size (the workload's requests as they sit in
// memory) or a measured cost per request (the engine's state, the event log, the summary's
// arrays, the recorded decisions, a fleet's replicas), the latter fitted on this project's
// build by `kairos-cli simulate` runs of 100,000 and 400,000 generated requests and given
// a margin (the constants in memory_estimate.cpp say which run measured each). tst_cli
// memoryEstimateBoundsThePeak checks that the estimate stays above the measured peak, and
// within a small factor of it, over every option it counts.
#include "run/run_spec.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kairos {

struct Workload;

struct MemoryEstimate {
    double bytes = 0;
    // (what, bytes), largest first, for the message: "event log and iterations 1.2 GiB".
    std::vector<std::pair<std::string, double>> parts;
    void add(const std::string& what, double b);
    // "about 1.5 GiB (the run's state 900 MiB, 8 replicas 400 MiB, ...)"
    std::string text() const;
};

// The workload's requests as they sit in memory (64 bytes each and their rare parts).
double workloadBytes(const Workload& w);

// Reading a workload file of `file_bytes`: its text and the requests it may hold (at most a
// request per 30 bytes, the shortest line a request can have, 64 bytes each and the
// reader's working copy).
MemoryEstimate workloadReadMemory(std::uint64_t file_bytes);

// What to know of a run besides its spec (runShape in run/pipeline.h fills it).
struct RunShape {
    std::size_t requests = 0;
    double workload_bytes = 0; // workloadBytes of the workload the run reads
    double output_tokens = 0;  // their sum
    double mean_context = 0;   // mean prompt + output tokens
    double arrival_span_s = 0; // last arrival less the first
    double kv_tokens = 0;      // KV capacity of one engine
    int max_num_seqs = 256;    // seats of one engine
    int block_size = 16;
    double decode_step_s = 0;   // one decode step of one request at the mean context
    bool keep_log = true;       // the run log is kept after the summary (outputs need it)
    bool runlog_output = false; // written as JSONL (--runlog)
    bool token_lines = false;   // ... with a line per token (--tokens)
};

// The engine iterations a run is expected to take, at most: a prefill per request, and the
// decode steps of its output tokens in batches of at most the seats and the requests the KV
// cache holds at the mean context, taken twice fuller than that (the batch measured on
// saturated runs of generated and multi-turn workloads, under every policy, was 0.9 of it), or, on
// a lightly loaded engine, a decode step after another over the arrivals' span on each
// replica; never more than one iteration per output token.
double expectedIterations(const RunSpec& spec, const RunShape& shape);

// One run of `spec` over such a workload (the engine or a fleet, its log, its summary).
MemoryEstimate runMemory(const RunSpec& spec, const RunShape& shape);

// Throws std::invalid_argument when `need` exceeds the budget: "`what` needs about X
// (parts...); Y is available (its source): `remedy`". `remedy` names the options to change.
void checkMemory(const MemoryEstimate& need, const std::string& what, const std::string& remedy);

// The options that make a run of `spec` smaller, for checkMemory's remedy: "fewer requests
// (--limit), fewer replicas (--replicas) or --max-memory".
std::string runMemoryRemedy(const RunSpec& spec);

} // namespace kairos
