#include "metrics/cdf.h"

#include <algorithm>
#include <cmath>

namespace kairos::lod {

std::vector<std::pair<double, double>> ecdf(std::vector<double> v, int max_points) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }),
            v.end());
    std::vector<std::pair<double, double>> out;
    const auto n = static_cast<long>(v.size());
    if (n == 0) return out;
    std::sort(v.begin(), v.end());
    max_points = std::max(2, max_points);
    // Ranks (0-based) to keep: the tail from p99 up if it fits in half of the budget,
    // then evenly spaced ones over the rest.
    std::vector<long> ranks;
    const long tail_from = static_cast<long>(std::floor(0.99 * double(n - 1)));
    const long tail = n - tail_from;
    const long budget = max_points;
    long even = budget;
    if (tail <= budget / 2) {
        for (long r = tail_from; r < n; ++r) ranks.push_back(r);
        even = budget - tail;
    }
    for (long k = 0; k < even; ++k)
        ranks.push_back(static_cast<long>(
            std::llround(double(k) * double(n - 1) / double(std::max(1L, even - 1)))));
    ranks.push_back(0);
    ranks.push_back(n - 1);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    out.reserve(ranks.size());
    for (long r : ranks) {
        // Fraction <= v[r]: the last rank with the same value.
        const auto last =
            std::upper_bound(v.begin(), v.end(), v[static_cast<std::size_t>(r)]) - v.begin();
        out.emplace_back(v[static_cast<std::size_t>(r)], double(last) / double(n));
    }
    // Equal values give equal points: keep one.
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

LogHistogram logHistogram(const std::vector<double>& v, int bins) {
    LogHistogram h;
    double lo = INFINITY, hi = 0;
    for (double x : v)
        if (std::isfinite(x) && x > 0) lo = std::min(lo, x), hi = std::max(hi, x);
    if (bins < 1 || !(hi > 0)) return h;
    if (hi <= lo) hi = lo * 1.0001; // one value: one narrow bin range
    const double l0 = std::log(lo), step = (std::log(hi) - l0) / bins;
    for (int i = 0; i <= bins; ++i) h.edges.push_back(std::exp(l0 + i * step));
    h.counts.assign(static_cast<std::size_t>(bins), 0);
    for (double x : v) {
        if (!(std::isfinite(x) && x > 0)) continue;
        const auto b = std::clamp(static_cast<int>((std::log(x) - l0) / step), 0, bins - 1);
        ++h.counts[static_cast<std::size_t>(b)];
    }
    return h;
}

LatencyCdfs latencyCdfs(const std::vector<RequestMetrics>& requests) {
    std::vector<double> ttft, tpot, e2el;
    for (const RequestMetrics& m : requests) {
        if (!m.finished) continue;
        ttft.push_back(m.ttft() * 1e3);
        tpot.push_back(m.tpot() * 1e3); // NaN for one token: ecdf keeps finite values only
        e2el.push_back(m.e2el() * 1e3);
    }
    return {ecdf(std::move(ttft)), ecdf(std::move(tpot)), ecdf(std::move(e2el))};
}

} // namespace kairos::lod
