#pragma once
// The headline metrics of a run as a list (what the metrics table and reports show), and
// the comparison of two runs: for each metric both values, the change, and whether the
// change is an improvement (each metric knows which direction is better).
#include "metrics/summary.h"

#include <string>
#include <vector>

namespace kairos {

enum class Better { Lower, Higher, Neither };

struct MetricRow {
    std::string key;   // stable id, e.g. "mean_ttft_ms" (vLLM's names where they exist)
    std::string label; // e.g. "Mean TTFT (ms)"
    double value = 0;  // NaN when undefined for this run
    Better better = Better::Neither;
};

std::vector<MetricRow> keyMetrics(const Summary& s);

struct MetricDelta {
    std::string key, label;
    double before = 0, after = 0; // pinned run, current run
    double change = 0;            // after - before
    double relative = 0;          // change / |before| (NaN when before is 0 or undefined)
    int verdict = 0;              // +1 better, -1 worse, 0 unchanged or no direction
};

// Metrics of `after` matched by key with `before` (a metric missing on one side is NaN
// there). A change within `tolerance` (relative) counts as unchanged.
std::vector<MetricDelta> compareRuns(const Summary& before, const Summary& after,
                                     double tolerance = 1e-9);
// The same with no run to compare with when `before` is null: every metric of `after`,
// before/change/relative NaN and verdict 0 (what a table shows for a single run).
std::vector<MetricDelta> compareRuns(const Summary* before, const Summary& after,
                                     double tolerance = 1e-9);

// The comparison as a text table: metric, both values, the change (relative where it is
// defined) and "better"/"worse" — what `kairos-cli report --compare` and `runs compare`
// print.
std::string deltaTable(const std::vector<MetricDelta>& deltas, const std::string& before_name,
                       const std::string& after_name);

} // namespace kairos
