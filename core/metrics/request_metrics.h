#pragma once
// Per-request metrics and inter-token latencies, computed from a RunLog alone.
#include "model/hand_backs.h"
#include "model/run_log.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace kairos {

// The eight-byte fields first, then the four-byte ones: 88 bytes without padding (a
// million-request summary holds a million of these).
struct RequestMetrics {
    static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    double arrival = kNaN;
    double first_token = kNaN;
    double end = kNaN;         // finish or kill time
    double queue_delay = kNaN; // first prefill start - arrival
    double budget = kNaN;      // time budget (s), if the request had one
    double alpha = 0.0;        // KV eviction ratio applied to its prompt
    // Prefix caching: context tokens served from the cache at its later admissions
    // (recomputes after preemption); cached_tokens below: prompt tokens at its first.
    std::int64_t recompute_cached_tokens = 0;
    ReqId id = 0;
    std::int32_t prompt_tokens = 0;
    std::int32_t output_tokens = 0; // tokens generated (at finish or kill)
    // KV dropped by the engine (recomputed on return); see resubmissions.
    std::int32_t preemptions = 0;
    std::int32_t suspensions = 0;
    std::int32_t cached_tokens = 0;
    KillCause kill_cause = KillCause::Unknown; // when killed
    bool finished = false;
    bool killed = false;
    // A preemption at the moment one of the request's robot segments is handed over is the
    // segment's hand-back (the TimelyLLM code re-queues each segment as a new request) and
    // counts here, not in preemptions (16 bits keep the struct at 88 bytes; a plan has tens
    // of segments, and the count saturates).
    std::uint16_t resubmissions = 0;
    // Its first prefill began (it was admitted and computed on at least once).
    bool started() const { return queue_delay == queue_delay; }
    bool inBudget() const { return inBudget(budget); }
    // Finished within `seconds` (a budget the policy gave it, where it carries none).
    bool inBudget(double seconds) const { return finished && !(e2el() > seconds); }
    // Seconds (vLLM's definitions); NaN where undefined.
    double ttft() const { return first_token - arrival; }
    double e2el() const { return end - arrival; }
    double tpot() const {
        return finished && output_tokens > 1 ? (end - first_token) / (output_tokens - 1) : kNaN;
    }
};
static_assert(sizeof(RequestMetrics) == 88, "RequestMetrics has no padding");

std::vector<RequestMetrics> perRequest(const RunLog& log);

// Every inter-token gap of every request (vLLM's ITL list), as (seconds, count) pairs:
// the gaps between consecutive decode iterations are shared by all requests in them, so
// they are counted rather than listed. Exact, also over skipped-ahead stretches.
std::vector<std::pair<double, std::int64_t>> interTokenLatencies(const RunLog& log);

// End times of the iterations that emit decode tokens, in order. A request decoding since
// `t` (its PrefillEnd, or its Resume from suspension) emits one token at each of them after
// `t` until its next event.
std::vector<double> decodeEnds(const RunLog& log);

// Token emission times of one request, expanded (for tests and --tokens logs).
std::vector<double> tokenTimes(const RunLog& log, ReqId id);
// Same for all requests at once: result[id] = times. O(tokens).
std::vector<std::vector<double>> allTokenTimes(const RunLog& log);

} // namespace kairos
