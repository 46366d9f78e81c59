#include "fit/ala_exec.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kairos::ala {

AlaExecutionModel::AlaExecutionModel(const AlaModel& m, const std::string& key, std::string label)
    : label_(std::move(label)) {
    const BenchRow* cfg = m.fields(key);
    if (!cfg) throw std::invalid_argument("the ALA model has no configuration '" + key + "'");
    for (int k = 16; k <= 64; ++k) { // n = 2^(k/4): 16 .. 65,536
        const double n = std::pow(2.0, k / 4.0);
        const int ni = std::max(1, int(std::lround(n)));
        log_n_.push_back(std::log(double(ni)));
        fits_.push_back(m.parameters(*cfg, ni, ni).fit);
    }
}

double AlaExecutionModel::throughput(double n, int batch) const {
    const double x = std::log(std::max(n, 1.0));
    const auto it = std::upper_bound(log_n_.begin(), log_n_.end(), x);
    auto at = [&](std::size_t i) { return std::max(fits_[i](batch), 1e-9); };
    if (it == log_n_.begin()) return at(0);
    if (it == log_n_.end()) return at(log_n_.size() - 1);
    const std::size_t hi = std::size_t(it - log_n_.begin()), lo = hi - 1;
    const double t = (x - log_n_[lo]) / (log_n_[hi] - log_n_[lo]);
    // Geometric interpolation: throughput varies by factors, not by amounts.
    return std::exp((1 - t) * std::log(at(lo)) + t * std::log(at(hi)));
}

double AlaExecutionModel::iterationTime(const BatchShape& s) const {
    double t = 0;
    if (s.decode_seqs > 0) {
        const double n = double(s.decode_kv_tokens) / s.decode_seqs / 1.5;
        t += s.decode_seqs / throughput(n, s.decode_seqs);
    }
    if (s.prefill_seqs > 0) {
        const double n = double(s.prefill_tokens) / s.prefill_seqs;
        t += s.prefill_seqs / throughput(n, s.prefill_seqs);
    }
    return t;
}

} // namespace kairos::ala
