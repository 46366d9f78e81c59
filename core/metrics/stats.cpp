#include "metrics/stats.h"

#include "util/huge_pages.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kairos {

double Stats::percentile(double q) const {
    for (const auto& [pq, v] : percentiles)
        if (pq == q) return v;
    throw std::out_of_range("percentile not computed");
}

namespace {
// The statistics of an empty sample: NaN throughout.
Stats noSamples(const std::vector<double>& qs) {
    Stats st;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    st.mean = st.median = st.std = nan;
    for (double q : qs) st.percentiles.emplace_back(q, nan);
    return st;
}

// The 0-based rank just below percentile q of n sorted values.
std::int64_t rankBelow(std::int64_t n, double q) {
    return static_cast<std::int64_t>(std::floor(static_cast<double>(n - 1) * q / 100.0));
}

// The median and percentiles `qs` of n sorted values, the k-th given by at(k): linear
// between the two nearest ranks.
template <class At>
void putPercentiles(Stats& st, std::int64_t n, const std::vector<double>& qs, At at) {
    auto pct = [&](double q) {
        const double h = static_cast<double>(n - 1) * q / 100.0;
        const std::int64_t lo = rankBelow(n, q);
        const double a = at(lo);
        if (lo + 1 >= n) return a;
        return a + (h - static_cast<double>(lo)) * (at(lo + 1) - a);
    };
    st.median = pct(50.0);
    for (double q : qs) st.percentiles.emplace_back(q, pct(q));
}

// The 0-based ranks putPercentiles reads for the median and `qs` over n values, ascending
// and distinct (the two nearest ranks of each).
std::vector<std::int64_t> ranksAsked(std::int64_t n, const std::vector<double>& qs) {
    std::vector<double> asked{50.0};
    asked.insert(asked.end(), qs.begin(), qs.end());
    std::vector<std::int64_t> at;
    for (double q : asked) {
        at.push_back(std::clamp<std::int64_t>(rankBelow(n, q), 0, n - 1));
        at.push_back(std::min<std::int64_t>(at.back() + 1, n - 1));
    }
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    return at;
}
} // namespace

namespace {
using Weighted = std::pair<double, std::int64_t>;

// Weighted selection (hand-written: the standard library selects by position, not by
// weight). The value at 0-based index k of the expanded sorted sample, searched in
// s[lo, end), whose expanded indices start at `base`: quickselect with a three-way
// partition around a median of three, so that runs of equal values end in one step.
// Ranks asked in ascending order: on return lo and base have moved past what lies below
// the answer, so the next search starts there (the scheme describe() uses with
// nth_element).
double selectWeighted(std::vector<Weighted>& s, std::size_t& lo, std::int64_t& base,
                      std::int64_t k) {
    std::size_t hi = s.size();
    const auto below = [](double p) { return [p](const Weighted& x) { return x.first < p; }; };
    const auto equal = [](double p) { return [p](const Weighted& x) { return x.first == p; }; };
    while (true) {
        if (hi - lo <= 16) {
            std::sort(s.begin() + std::ptrdiff_t(lo), s.begin() + std::ptrdiff_t(hi));
            for (std::size_t i = lo; i < hi; ++i) {
                if (k < base + s[i].second) {
                    lo = i;
                    return s[i].first;
                }
                base += s[i].second;
            }
            // Unreachable while k is below the total weight; the last value otherwise.
            lo = hi - 1;
            base -= s[lo].second;
            return s[lo].first;
        }
        const double a = s[lo].first, b = s[lo + (hi - lo) / 2].first, c = s[hi - 1].first;
        const double pivot = std::max(std::min(a, b), std::min(std::max(a, b), c));
        const auto first = s.begin() + std::ptrdiff_t(lo), last = s.begin() + std::ptrdiff_t(hi);
        const auto m1 = std::partition(first, last, below(pivot));
        const auto m2 = std::partition(m1, last, equal(pivot));
        std::int64_t wl = 0, wm = 0;
        for (auto it = first; it != m1; ++it) wl += it->second;
        for (auto it = m1; it != m2; ++it) wm += it->second;
        if (k < base + wl) {
            hi = static_cast<std::size_t>(m1 - s.begin());
        } else if (k < base + wl + wm) {
            lo = static_cast<std::size_t>(m1 - s.begin());
            base += wl;
            return pivot;
        } else {
            lo = static_cast<std::size_t>(m2 - s.begin());
            base += wl + wm;
        }
    }
}
} // namespace

Stats describeWeighted(std::vector<std::pair<double, std::int64_t>> s,
                       const std::vector<double>& qs) {
    // Without sorting: the order statistics by weighted selection (linear; the same values
    // as sorting, tst_metrics checks), the sums in long double in the sample's order (the
    // mean and std can differ from a sum in sorted order in their last bit). A
    // million-request run's inter-token latencies are two million pairs; sorting them was
    // a twentieth of the run.
    Stats st;
    s.erase(std::remove_if(s.begin(), s.end(), [](const auto& p) { return p.second <= 0; }),
            s.end());
    std::int64_t n = 0;
    long double sum = 0;
    for (const auto& [v, w] : s) {
        n += w;
        sum += static_cast<long double>(v) * w;
    }
    st.count = n;
    if (n == 0) return noSamples(qs);
    st.mean = static_cast<double>(sum / n);
    long double ss = 0;
    for (const auto& [v, w] : s) ss += static_cast<long double>(v - st.mean) * (v - st.mean) * w;
    st.std = std::sqrt(static_cast<double>(ss / n));
    const std::vector<std::int64_t> at = ranksAsked(n, qs);
    std::vector<double> value(at.size());
    std::size_t lo = 0;
    std::int64_t base = 0;
    for (std::size_t i = 0; i < at.size(); ++i) value[i] = selectWeighted(s, lo, base, at[i]);
    putPercentiles(st, n, qs, [&](std::int64_t k) {
        return value[static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), k) -
                                              at.begin())];
    });
    return st;
}

Stats describe(std::vector<double> values, const std::vector<double>& qs) {
    return describeInPlace(values, qs);
}

Stats describeInPlace(std::vector<double>& values, const std::vector<double>& qs) {
    // describeWeighted with every weight 1, without sorting: the order statistics by
    // selection (std::nth_element, linear; the same values as sorting, tst_metrics checks),
    // the sums in long double in the sample's order (the mean and std can differ from a
    // sum in sorted order in their last bit). A million-request summary describes four
    // such samples; sorting each was a tenth of the run.
    Stats st;
    const auto n = static_cast<std::int64_t>(values.size());
    st.count = n;
    if (n == 0) return noSamples(qs);
    long double sum = 0;
    for (double v : values) sum += static_cast<long double>(v);
    st.mean = static_cast<double>(sum / n);
    long double ss = 0;
    for (double v : values) ss += static_cast<long double>(v - st.mean) * (v - st.mean);
    st.std = std::sqrt(static_cast<double>(ss / n));
    // The elements at 0-based index lo and lo + 1 of the sorted sample, for each asked
    // percentile; selected in ascending order of index, each within what is right of the
    // last (nth_element leaves the larger elements there).
    const std::vector<std::int64_t> at = ranksAsked(n, qs);
    auto from = values.begin();
    for (const std::int64_t k : at) {
        const auto it = values.begin() + k;
        std::nth_element(from, it, values.end());
        from = it + 1;
    }
    putPercentiles(st, n, qs, [&](std::int64_t k) { return values[static_cast<std::size_t>(k)]; });
    return st;
}

namespace {
std::vector<double> averageRanks(const std::vector<double>& x) {
    std::vector<std::size_t> order(x.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
    std::vector<double> r(x.size());
    for (std::size_t a = 0; a < order.size();) {
        std::size_t b = a;
        while (b + 1 < order.size() && x[order[b + 1]] == x[order[a]]) ++b;
        for (std::size_t k = a; k <= b; ++k) r[order[k]] = (double(a) + double(b)) / 2 + 1;
        a = b + 1;
    }
    return r;
}
} // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) throw std::invalid_argument("spearman: samples of different sizes");
    if (a.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    const auto ra = averageRanks(a), rb = averageRanks(b);
    const double n = double(a.size());
    double ma = 0, mb = 0;
    for (std::size_t i = 0; i < ra.size(); ++i) ma += ra[i], mb += rb[i];
    ma /= n;
    mb /= n;
    double sab = 0, saa = 0, sbb = 0;
    for (std::size_t i = 0; i < ra.size(); ++i) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb)
                              : std::numeric_limits<double>::quiet_NaN();
}

double studentT975(int df) {
    // Table values (two-sided 95 %, df 1..30), as in every statistics text; written out
    // rather than computed from the incomplete beta function, which nothing else here needs.
    static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                               2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                               2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                               2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) return std::numeric_limits<double>::quiet_NaN();
    return df <= 30 ? t[df - 1] : 1.96;
}

std::pair<double, double> meanInterval95(const std::vector<double>& values, int* n_out) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int n = 0;
    for (double v : values)
        if (std::isfinite(v)) {
            sum += v;
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            ++n;
        }
    if (n_out) *n_out = n;
    if (n == 0) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
    // Equal values have no spread: the value itself, not a sum / n that rounds away from
    // it and leaves a half-width of 1e-11 (a sweep printed "±4.4e-11" for identical runs).
    if (lo == hi) return {lo, 0.0};
    const double mean = sum / n;
    if (n == 1) return {mean, 0.0};
    double ss = 0;
    for (double v : values)
        if (std::isfinite(v)) ss += (v - mean) * (v - mean);
    return {mean, studentT975(n - 1) * std::sqrt(ss / (n - 1) / n)};
}

} // namespace kairos
