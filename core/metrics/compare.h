#pragma once
// The headline metrics of a run as a list (what the metrics table and reports show), and
// the comparison of two runs: for each metric both values, the change, and whether the
// change is an improvement (each metric knows which direction is better).
//
// A comparison judges only what compares. Latency statistics are over the requests a run
// completed, so two runs that completed different requests are not compared on them as
// they stand (a policy that kills its slow requests would look fast): when both runs'
// per-request results are known, the latency rows are recomputed over the requests both
// completed and shown unjudged (which requests finish depends on the policy, so even the
// common set favours the run that dropped more); without them they are marked not
// comparable. Runs of different workloads are shown side by side and never judged.
#include "metrics/metric_table.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"

#include <string>
#include <utility>
#include <vector>

namespace kairos {

struct MetricRow {
    std::string key;   // stable id, e.g. "mean_ttft_ms" (vLLM's names where they exist)
    std::string label; // e.g. "Mean TTFT (ms)"
    double value = 0;  // NaN when undefined for this run
    Better better = Better::Neither;
};

std::vector<MetricRow> keyMetrics(const Summary& s);
// Whether a key metric is a statistic over completed requests (TTFT, TPOT, E2EL), which
// depends on which requests a run completed.
bool isLatencyMetric(const std::string& key);

enum class Basis {
    AllRequests,  // each run's own statistic, over what it measures
    Common,       // recomputed over the requests both runs completed; never judged
    NotComparable // shown side by side, never judged
};

const char* basisName(Basis b); // "all", "common", "not_comparable"

struct MetricDelta {
    std::string key, label;
    double before = 0, after = 0; // pinned run, current run
    double change = 0;            // after - before
    double relative = 0;          // change / |before| (NaN when before is 0 or undefined)
    int verdict = 0;              // +1 better, -1 worse, 0 unchanged, no direction or not judged
    Basis basis = Basis::AllRequests;
};

// One side of a comparison: its summary and, when known, its per-request results
// (perRequest(log), or a stored run's rows), which say which requests it completed.
struct RunResults {
    RunResults(const Summary* s, const std::vector<RequestMetrics>* r = nullptr,
               std::string hash = {})
        : summary(s), requests(r), workload_hash(std::move(hash)) {}
    const Summary* summary; // required
    const std::vector<RequestMetrics>* requests;
    std::string workload_hash; // the workload's content hash when known (store::contentHash)
};

struct Comparison {
    std::vector<MetricDelta> deltas;
    bool same_workload = true;  // the same requests (arrivals and prompts, when known)
    bool same_completed = true; // both completed the same requests (or, unknown, all)
    std::int64_t common = -1;   // requests both completed (-1: not known)
    std::int64_t only_before = 0, only_after = 0; // completed by one run only
    // What the comparison could not judge, in a sentence; empty when it judged all.
    std::string note;
};

// `after` against `before` (the pinned or reference run). A change within `tolerance`
// (relative) counts as unchanged. Latency rows follow the rules above.
Comparison compare(const RunResults& before, const RunResults& after, double tolerance = 1e-9);

// The same from summaries alone (per-request results unknown).
std::vector<MetricDelta> compareRuns(const Summary& before, const Summary& after,
                                     double tolerance = 1e-9);
// With no run to compare with when `before` is null: every metric of `after`,
// before/change/relative NaN and verdict 0 (what a table shows for a single run).
std::vector<MetricDelta> compareRuns(const Summary* before, const Summary& after,
                                     double tolerance = 1e-9);

// The comparison as a text table: metric, both values, the change (relative where it is
// defined) and "better"/"worse" ("not judged" on the common set, "n/c" where the runs do
// not compare), with the comparison's note above it — what `kairos-cli report --compare`
// and `runs compare` print.
std::string deltaTable(const Comparison& c, const std::string& before_name,
                       const std::string& after_name);
std::string deltaTable(const std::vector<MetricDelta>& deltas, const std::string& before_name,
                       const std::string& after_name);

} // namespace kairos
