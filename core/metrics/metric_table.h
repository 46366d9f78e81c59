#pragma once
// The one table of the metrics a run reports: each metric's name (its JSON key and the name a
// sweep, capacity search, experiment or --metrics takes), display name, unit, better
// direction, description and how it is read off a Summary. The summary's JSON, the CLI's text,
// sweeps, capacity, experiments, reports, the Metrics panel and Help read it; a metric is
// added here once.
//
// Names are vLLM's benchmark_serving names where vLLM has the metric (request_throughput,
// output_throughput, mean_ttft_ms, median_tpot_ms, p99_e2el_ms, request_goodput, ...);
// Kairos's own follow the same pattern (mean_queue_ms, p99_queue_ms). Names of older
// releases (ttft_mean_ms, ttft_p99_ms, ...: the sweeps' and experiments' until issue 56) are
// accepted wherever a name is read (canonicalMetricKey) and written as today's.
#include "metrics/summary.h"

#include <functional>
#include <string>
#include <vector>

namespace kairos {

enum class Better { Lower, Higher, Neither };

const char* betterName(Better b); // "lower", "higher", "neither"

struct MetricDef {
    std::string key;     // "mean_ttft_ms"
    std::string display; // "Mean TTFT"
    std::string unit;    // "ms", "req/s", "tok/s", "tokens", "%", "share" (0..1) or "" (a count)
    Better better = Better::Neither;
    std::string description;
    bool vllm = false; // vLLM's benchmark_serving reports it under this key
    // Its value for a run; NaN where the run does not measure it (no SLOs, no budgets, no
    // completed request for a latency statistic).
    std::function<double(const Summary&)> value;
    // "Mean TTFT (ms)": the display name and its unit.
    std::string label() const;
};

// Every scalar metric of a run, its latency statistics (mean, median, std and each of
// `percentiles`, of TTFT, TPOT, ITL, E2EL and queueing delay) at these percentiles.
std::vector<MetricDef> metricTable(const std::vector<double>& percentiles);

// The metrics a sweep, a capacity search and an experiment tabulate per run, in their fixed
// order (a sweep journal stores values by position): completed, killed, the throughputs,
// goodput_fraction and slo_attainment, the mean and each percentile of each latency, the KV
// peak, preemptions, suspensions, the budget and utility figures.
std::vector<MetricDef> tabulatedMetrics(const std::vector<double>& percentiles);

// The definition named `key` (today's name or an older one) in `table`, or null.
const MetricDef* findMetric(const std::vector<MetricDef>& table, const std::string& key);

// Today's name of a metric given by an older one ("ttft_mean_ms" -> "mean_ttft_ms",
// "e2el_p99_ms" -> "p99_e2el_ms"); any other name unchanged.
std::string canonicalMetricKey(const std::string& key);

// The table as text (a row per metric: name, display, unit, better, vLLM's or not,
// description) and as JSON, for `kairos-cli metrics` and Help.
std::string metricTableText(const std::vector<double>& percentiles);

} // namespace kairos
