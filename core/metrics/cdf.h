#pragma once
// Empirical CDFs for the latency view, reduced to at most a few hundred points without
// losing the tail: the points are the order statistics at evenly spaced ranks plus the
// top ones (p99 and above are where serving SLOs live), so a plot of them is the ECDF.
#include "metrics/request_metrics.h"

#include <utility>
#include <vector>

namespace kairos::lod {

// (value, fraction of values <= it) for the finite values of `v`, at most `max_points`
// (>= 2) points: ranks evenly spaced over [0, n), always including the minimum, the
// maximum and every rank from the 99th percentile up when that fits.
std::vector<std::pair<double, double>> ecdf(std::vector<double> v, int max_points = 400);

// The latency view's three curves: TTFT, TPOT and E2EL (milliseconds) of the finished
// requests (TPOT where defined: more than one output token). The workbench's runs, a
// stored run's per-request rows and the report's charts all take them from here.
struct LatencyCdfs {
    std::vector<std::pair<double, double>> ttft, tpot, e2el;
};
LatencyCdfs latencyCdfs(const std::vector<RequestMetrics>& requests);

// A histogram over log-spaced bins between the smallest and largest positive value:
// `bins` edges ratios equal; counts sum to the number of positive finite values.
struct LogHistogram {
    std::vector<double> edges; // bins + 1 edges
    std::vector<long> counts;  // bins counts
};
LogHistogram logHistogram(const std::vector<double>& v, int bins);

} // namespace kairos::lod
