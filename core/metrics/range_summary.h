#pragma once
// What happened in a stretch of a run: the workbench's ruler selection, summarised as
// Perfetto's area selection is. Requests by the phases they were in during the window,
// arrivals and completions in it, the KV tokens in use at their lowest and highest, the
// decisions taken in it by rule, and the latencies of the requests that finished in it.
#include "lod/timeline.h"
#include "metrics/request_metrics.h"
#include "metrics/stats.h"
#include "model/run_log.h"

#include <array>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace kairos {

struct RangeSummary {
    double from = 0, to = 0;
    // Requests with some time in the window (a span that overlaps it by more than an
    // instant), and of those, how many were in each phase there: queued, prefill,
    // decode, preempted, suspended (a request counts in every phase it was in).
    long active = 0;
    static constexpr std::array<lod::SpanKind, 5> kPhases{
        lod::SpanKind::Queued, lod::SpanKind::Prefill, lod::SpanKind::Decode,
        lod::SpanKind::Preempted, lod::SpanKind::Suspended};
    std::array<long, kPhases.size()> in_phase{};
    // Arrivals, completions and kills with their time in [from, to).
    long arrived = 0, finished = 0, killed = 0;
    // KV tokens in use (the step series lod::kvSeries): its value at `from` and at every
    // change before `to`; NaN with no series.
    double kv_min = std::numeric_limits<double>::quiet_NaN();
    double kv_max = std::numeric_limits<double>::quiet_NaN();
    // Reasons recorded with their time in [from, to) (runs recorded with explain), and by
    // rule code, the most frequent first (ties by code).
    long decisions = 0;
    std::vector<std::pair<std::string, long>> by_rule;
    // TTFT and end-to-end latency (seconds) of the requests that finished in the window:
    // count, and p50, p90 and p99 (numpy's linear interpolation).
    Stats ttft, e2el;
};

// `rows`: one per request (lod::buildRows); `per_request` by row; `kv`: lod::kvSeries.
RangeSummary summarizeRange(const RunLog& log, const std::vector<lod::Row>& rows,
                            const std::vector<RequestMetrics>& per_request,
                            const std::vector<std::pair<double, double>>& kv, double from,
                            double to);

// Two or three lines for people, durations in readable units (text::duration).
std::string rangeSummaryText(const RangeSummary& s);

// One line, the window and its counts (the strip above the timeline; the details are
// rangeSummaryDetails): "12.0 s to 20.0 s (8 s): 37 requests, 4 arrived, 5 finished,
// 2 killed; KV 1024 to 5012 tokens; 12 decisions".
std::string rangeSummaryLine(const RangeSummary& s);

// Every figure of the summary as a row of a details table, as Perfetto's area selection
// lists them: its group ("window", "requests in the system", "requests", "KV in use",
// "decisions by rule", "finished here"), what it counts, and its value for people. Every
// rule is listed (rangeSummaryText names the three most frequent), every phase with
// requests in it; the latencies only when a request finished in the window.
struct RangeDetail {
    std::string group, name, value;
};
std::vector<RangeDetail> rangeSummaryDetails(const RangeSummary& s);

} // namespace kairos
