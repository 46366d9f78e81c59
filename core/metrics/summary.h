#pragma once
// The run summary, with vLLM benchmark_serving's names and definitions.
#include "metrics/load.h"
#include "metrics/request_metrics.h"
#include "metrics/robot_metrics.h"
#include "metrics/stats.h"
#include "model/run_log.h"
#include "model/workload.h"

#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kairos {

// Service-level objectives for goodput (milliseconds); a request is good only if it
// meets every one given. Parsed from "ttft:MS", "tpot:MS", "e2el:MS".
struct GoodputSlo {
    std::optional<double> ttft_ms, tpot_ms, e2el_ms;
    bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
    // A finished request meets every SLO given (vLLM: TPOT 0 for a one-token output).
    bool meets(const RequestMetrics& r) const;
    static GoodputSlo parse(const std::vector<std::string>& items); // throws std::invalid_argument
    // The inverse of parse: "ttft:MS" terms that parse back to these exact values.
    std::vector<std::string> terms() const;
};

// Response quality as a function of the KV eviction ratio alpha (TimeBill's trade-off),
// piecewise linear through (alpha, quality) points. Default: q = 1 - alpha^2 at alpha =
// 0, .25, .5, .75, .95, 1 — a placeholder shape, not a measurement: small evictions cost
// little and the last ones most (TimeBill reports alpha = 95 % as "poor quality"). Set
// your own from measurements of your model and task (CLI: --quality A:Q,..., or the JSON
// file `kairos-cli quality --out` writes from a real model).
struct QualityCurve {
    std::vector<std::pair<double, double>> points{{0, 1},         {0.25, 0.9375}, {0.5, 0.75},
                                                  {0.75, 0.4375}, {0.95, 0.0975}, {1, 0}};
    double at(double alpha) const;
    // "0:1,0.5:0.8,1:0", or a file ending in .json with the curve in its "quality" field.
    static QualityCurve parse(const std::string& text);
};

struct SummaryOptions {
    std::vector<double> percentiles{50, 90, 99};
    GoodputSlo goodput;
    QualityCurve quality;
    // The workload the run log came from: robot-plan and utility metrics need its segment
    // execution times and TUFs (metrics/robot_metrics.h). Optional.
    const Workload* workload = nullptr;
    // Inter-token latencies are the costliest statistic (one sample per decode
    // iteration gap); a view that does not show them can skip them (itl_ms stays empty).
    bool itl = true;
    // The time budget of requests that carry none, where the policy gives them one
    // (TimeBill's `budget`): they are scored against it (within budget, alpha, quality).
    // NaN: only requests with their own budget are.
    double default_budget_s = std::numeric_limits<double>::quiet_NaN();
};

// One replica of a fleet (sim/fleet.h): its share of the requests and its figures, as
// summarize() gives them for the replica's own log.
struct ReplicaSummary {
    int replica = 0;
    std::string pool; // disaggregation: "prefill" or "decode" (RunLog::replicaName); else ""
    std::int64_t requests = 0, completed = 0, killed = 0, good_requests = 0;
    std::int64_t preemptions = 0, iterations = 0, kv_peak_tokens = 0;
    std::int64_t prefix_cached_tokens = 0;
    double prefix_cache_hit_rate = 0;
    double request_throughput = 0;
    Stats ttft_ms, tpot_ms, e2el_ms;
};

struct Summary {
    std::string workload, policy, exec_model;
    std::int64_t num_requests = 0, completed = 0, killed = 0;
    // What the latency statistics leave out: they are over the `completed` requests only
    // (vLLM's definitions). Killed requests by the rule that dropped them (KillCause
    // names, e.g. "deadline"), and requests whose prefill never began.
    std::vector<std::pair<std::string, std::int64_t>> killed_by;
    std::int64_t never_started = 0;
    std::int64_t total_input_tokens = 0, total_output_tokens = 0;
    double duration_s = 0;         // first arrival to the last finish or kill
    double request_throughput = 0; // completed / duration: the achieved rate
    LoadReport load;               // offered rate and the saturation verdict
    double output_throughput = 0;  // output tokens / duration
    double total_token_throughput = 0;
    std::optional<double> request_goodput; // good requests / duration
    std::int64_t good_requests = 0;
    Stats ttft_ms, tpot_ms, itl_ms, e2el_ms, queue_ms;
    std::int64_t kv_peak_tokens = 0, kv_capacity_tokens = 0;
    // Disaggregation with the decode pool on other hardware: each pool's KV capacity per
    // replica and largest peak of one replica (kv_capacity_tokens is then the prefill
    // pool's, kv_peak_tokens the largest of either); 0 otherwise.
    std::int64_t decode_kv_capacity_tokens = 0, prefill_kv_peak_tokens = 0,
                 decode_kv_peak_tokens = 0;
    std::int64_t preemptions = 0, suspensions = 0, iterations = 0, stretches = 0;
    // Robot segments handed back and queued again as new requests (RequestMetrics::
    // resubmissions: the TimelyLLM code's segmented generation), not counted as preemptions.
    std::int64_t resubmissions = 0;
    // Prefix caching (when the run had it): prompt tokens served from the cache at first
    // admissions, their share of all prompt tokens, and context tokens served to recomputes.
    bool prefix_caching = false;
    std::int64_t prefix_cached_tokens = 0, prefix_recompute_cached_tokens = 0;
    std::int64_t prefix_cache_evictions = 0;
    double prefix_cache_hit_rate = 0;
    // Time budgets (TimeBill): only when some requests have one.
    std::int64_t budget_requests = 0, in_budget = 0;
    double completion_rate = 0;           // finished within budget / requests with a budget
    double mean_alpha = 0;                // over requests with a budget that were prefilled
    double mean_quality = 0;              // q(alpha) if finished within budget, else 0; averaged
    std::vector<RobotClassSummary> robot; // TimelyLLM utility per class, when known
    // The TimelyLLM authors' metric (metrics/robot_metrics.h authorsMetric: the first 10
    // tasks skipped, a task never handed to its robot not scored but counted as dropped;
    // each class one task type here), when the workload's tasks have agents.
    struct Authors {
        double urgent_pct = RobotTask::kNaN, normal_pct = RobotTask::kNaN,
               all_pct = RobotTask::kNaN;
        std::int64_t scored = 0, dropped = 0;
    };
    std::optional<Authors> authors;
    // A fleet (more than one replica): its router and a row per replica. Everything above is
    // over the whole fleet (kv_peak_tokens: the largest of one replica; kv_capacity_tokens:
    // each replica's).
    std::int32_t replica_count = 1;
    std::string router;
    std::vector<ReplicaSummary> replicas;
    double sim_wall_ms = 0;
    std::vector<double> percentiles;
    std::vector<std::string> warnings;

    nlohmann::json toJson() const;
    // The inverse of toJson() (a stored run's summary); missing numbers are NaN or 0.
    static Summary fromJson(const nlohmann::json& j);
    std::string table() const; // the readable summary the CLI prints
    // One line saying what the latency statistics are over, and what they leave out
    // ("over all 1000 requests", "over 4 of 1000 requests: 996 killed (deadline 996)").
    std::string coverage() const;
};

Summary summarize(const RunLog& log, const SummaryOptions& opt = {});
// The same from per-request metrics already computed from `log` (perRequest(log)).
Summary summarize(const RunLog& log, const std::vector<RequestMetrics>& per_request,
                  const SummaryOptions& opt = {});
// summarize(log, opt) for a caller that keeps only the summary: the log's iterations and
// then its events are released as soon as the summary has read them, so that a
// million-request run never holds them beside the per-request table. The log keeps its
// header, warnings and explain record. The same summary as summarize(log, opt).
Summary summarizeReleasing(RunLog& log, const SummaryOptions& opt = {});

// vLLM's key for a percentile: 99 -> "p99", 99.9 -> "p99.9".
std::string percentileKey(double q);

} // namespace kairos
