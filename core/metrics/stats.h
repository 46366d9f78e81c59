#pragma once
// Descriptive statistics with numpy's definitions (population std, linear-interpolation
// percentiles), over plain or integer-weighted samples. A weight w stands for w copies
// of the value, so the results equal numpy's on the expanded list.
#include <cstdint>
#include <utility>
#include <vector>

namespace kairos {

struct Stats {
    std::int64_t count = 0;
    double mean = 0, median = 0, std = 0;
    std::vector<std::pair<double, double>> percentiles; // (q in [0,100], value)
    double percentile(double q) const;                  // one of those asked for
};

Stats describe(std::vector<double> values, const std::vector<double>& qs);
// The same, reordering `values` in place (no copy; for a caller that reuses the buffer).
Stats describeInPlace(std::vector<double>& values, const std::vector<double>& qs);

// Two-sided 95 % quantile of Student's t with `df` degrees of freedom (df >= 1; 1.96
// beyond 30).
double studentT975(int df);
// The mean of the finite values and the half-width of its 95 % interval (t-based; 0 for
// one value); NaN mean when there is none. `n` gets the count used.
std::pair<double, double> meanInterval95(const std::vector<double>& values, int* n = nullptr);
// (value, weight) pairs; weights >= 0.
Stats describeWeighted(std::vector<std::pair<double, std::int64_t>> samples,
                       const std::vector<double>& qs);

// Spearman's rank correlation of two equally long samples (Pearson's correlation of their
// ranks, ties at their average rank, as scipy.stats.spearmanr); NaN for fewer than two
// pairs or a constant sample.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

} // namespace kairos
