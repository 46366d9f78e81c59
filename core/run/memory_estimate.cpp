#include "run/memory_estimate.h"

#include "model/workload.h"
#include "predict/predictor.h"
#include "sched/registry.h"
#include "util/memory.h"

#include <algorithm>
#include <cmath>

namespace kairos {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Measured costs. Each is fitted on the address space (VmPeak) of `kairos-cli simulate -w W`
// runs here (Debian 12, g++ 12, the dev preset), less the 38 MiB of a run of 1,000 requests,
// over W = generate -n N --rate 50 --seed 2 (N = 100,000 and 400,000: 4 iterations per
// request), the same with --system-prompt 512 --system-prompts 1000 --turns 4 (17 per
// request) and --rate 3 (20,000 and 100,000 requests), on the default profile under fcfs;
// then given a margin of a quarter (vectors that double, the allocator's slack).
//  - 200 B per request: its events, metrics and summary entries (472 B a request with its
//    4 iterations less 4 x 68 B; the workload's 64 B are counted apart);
//  - 68 B per iteration: its record and the inter-token latencies' arrays (the multi-turn
//    workload's 1,515 B a request with 17 iterations against 472 B with 4);
//  - 563 B per request for --explain (the same on both workloads and sizes), on each
//    replica and half as much again (a fleet's replicas each record their decisions: 2, 4
//    and 8 replicas held 2.5, 4.1 and 7.6 times one engine's); with the prefix cache,
//    3,100 B per request more (13.7 decisions recorded per request instead of 1.04, on the
//    generated workload at 100,000 and 400,000 requests; 900 B on the multi-turn one);
//  - 327 B per request for each replica beyond the first (4 replicas: +93 MiB and +374 MiB
//    over 100,000 and 400,000 requests);
//  - the run log kept and written (--runlog): 147 B per request;
//  - --tokens: a line per generated token, 52 B each (its line and every request's token
//    times, sorted: 1.03 GiB against 97 MiB without, over 19.25 million tokens);
//  - the prefix cache: 96 B per KV block per replica and 16 B per request (its block list's
//    share while it runs); measured +32 B per request in all.
constexpr double kMargin = 1.25;
constexpr double kPerRequest = 200 * kMargin;
constexpr double kPerIteration = 68 * kMargin;
constexpr double kExplainPerRequest = 563 * kMargin;
constexpr double kExplainCachePerRequest = 3100 * kMargin;
constexpr double kReplicaPerRequest = 327 * kMargin;
constexpr double kKeptLogPerRequest = 60 * kMargin;
constexpr double kRunlogPerRequest = 87 * kMargin;
constexpr double kPerTokenLine = 52 * kMargin;
constexpr double kCachePerBlock = 96 * kMargin;
constexpr double kCachePerRequest = 16 * kMargin;
constexpr double kBase = 4 * kMiB; // the run's fixed part beyond the program (1 request: 0.1 MiB)

} // namespace

void MemoryEstimate::add(const std::string& what, double b) {
    if (!(b > 0)) return;
    bytes += b;
    parts.emplace_back(what, b);
    std::stable_sort(parts.begin(), parts.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
}

std::string MemoryEstimate::text() const {
    std::string s = "about " + bytesText(bytes);
    if (parts.empty()) return s;
    s += " (";
    for (std::size_t i = 0; i < parts.size() && i < 4; ++i)
        s += (i ? ", " : "") + parts[i].first + " " + bytesText(parts[i].second);
    return s + ")";
}

double workloadBytes(const Workload& w) {
    double b = double(w.requests.capacity()) * sizeof(Request);
    for (const Request& r : w.requests) {
        b += double(r.segments.size()) * sizeof(Segment) +
             double(r.prefix.size()) * sizeof(PrefixSpan);
        if (r.tuf) b += sizeof(Tuf);
    }
    return b;
}

MemoryEstimate workloadReadMemory(std::uint64_t file_bytes) {
    MemoryEstimate m;
    m.add("the file's text", double(file_bytes));
    // The shortest request line, {"arrival":0,"prompt":1,"output":1}, is 36 bytes.
    m.add("its requests", double(file_bytes) / 30.0 * sizeof(Request) * 2);
    return m;
}

double expectedIterations(const RunSpec& spec, const RunShape& shape) {
    const double n = double(shape.requests), out = shape.output_tokens;
    const double fits = shape.mean_context > 0 ? shape.kv_tokens / shape.mean_context : 1.0;
    const double batch = std::max(1.0, std::min(double(shape.max_num_seqs), fits));
    const double full = 2 * out / batch;
    const double step = shape.decode_step_s > 0 ? shape.decode_step_s : 1e-3;
    const double light = double(std::max(1, spec.fleet.replicas)) * shape.arrival_span_s / step;
    return n + std::min(out, std::max(full, light));
}

MemoryEstimate runMemory(const RunSpec& spec, const RunShape& shape) {
    MemoryEstimate m;
    const double n = double(shape.requests);
    const int replicas = std::max(1, spec.fleet.replicas);
    m.add("the workload", shape.workload_bytes);
    m.add("requests' events and metrics", kBase + n * kPerRequest);
    m.add("iterations", expectedIterations(spec, shape) * kPerIteration);
    if (shape.keep_log) m.add("the run log kept for the outputs", n * kKeptLogPerRequest);
    if (shape.runlog_output) m.add("the run log's JSONL", n * kRunlogPerRequest);
    if (shape.token_lines)
        m.add("a line per token (--tokens)", shape.output_tokens * kPerTokenLine);
    if (spec.record.explain)
        m.add("the recorded decisions (--explain)",
              n * kExplainPerRequest * (replicas + 0.5) +
                  (spec.limits.prefix_caching ? n * kExplainCachePerRequest : 0));
    if (replicas > 1)
        m.add(std::to_string(replicas) + " replicas",
              n * double(replicas - 1) * kReplicaPerRequest);
    if (const PolicySpec* ps = findPolicy(spec.policy.name); ps && ps->predicts) {
        // The length predictor's own state (Trail's table of refined estimates).
        try {
            const auto pred = makePredictor(spec.policy.predictor, spec.policy.seed);
            m.add("the length predictor (" + spec.policy.predictor + ")",
                  kMargin * pred->memoryFor(n, shape.output_tokens));
        } catch (const std::exception&) {
            // A predictor that cannot be made is refused with its own error by the run.
        }
    }
    if (spec.limits.prefix_caching)
        m.add("the prefix cache",
              replicas * shape.kv_tokens / std::max(1, shape.block_size) * kCachePerBlock +
                  n * kCachePerRequest);
    return m;
}

void checkMemory(const MemoryEstimate& need, const std::string& what, const std::string& remedy) {
    std::string w = what;
    if (!need.parts.empty()) {
        w += " (";
        for (std::size_t i = 0; i < need.parts.size() && i < 4; ++i)
            w += (i ? ", " : "") + need.parts[i].first + " " + bytesText(need.parts[i].second);
        w += ")";
    }
    checkMemoryNeed(need.bytes, w, remedy);
}

std::string runMemoryRemedy(const RunSpec& spec) {
    std::string r = "run fewer requests (--limit)";
    if (spec.fleet.replicas > 1) r += ", fewer replicas (--replicas)";
    if (spec.record.explain) r += ", without --explain";
    if (spec.limits.prefix_caching) r += ", without --prefix-caching";
    return r;
}

} // namespace kairos
