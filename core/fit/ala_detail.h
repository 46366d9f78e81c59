#pragma once
// What the files of ALA's fits share and no user of them needs (fit/ala_*.cpp only).
#include "fit/ala.h"
#include "fit/bench.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kairos::ala::detail {

// The bounds of a curve's parameters in c - a*exp(-b*batch): the fit's box (ala_curve.cpp)
// and the starting points the model draws inside it (ala_model.cpp).
constexpr double kAMax = 1e6, kCMax = kMaxThroughput, kBMin = 1e-5, kBMax = 1.0;

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The held-out choice of evaluate (and of the uncertainty's pair hold-outs): the rows held
// out, and per configuration with two or more pairs its evaluation record (pairs,
// held-out pairs) to fill.
struct Split {
    std::vector<bool> held;
    std::map<std::string, ConfigEvaluation> per;
    std::map<std::string, std::vector<std::size_t>> by; // rows per configuration
    std::size_t single_pair_configs = 0;
};
// Throws std::invalid_argument when no configuration has two or more pairs.
Split split(const std::vector<BenchRow>& rows, const AlaOptions& o, double test_fraction,
            std::uint64_t seed);

} // namespace kairos::ala::detail
