#include "predict/simple_predictors.h"

#include "workload/random.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kairos {

void OraclePredictor::reset(const Workload& w) {
    truth_.clear();
    for (const auto& r : w.requests) truth_.push_back(r.output_tokens);
}

LogNormalPredictor::LogNormalPredictor(double sigma, std::uint64_t seed)
    : sigma_(sigma), seed_(seed) {
    if (!(sigma >= 0) || !std::isfinite(sigma))
        throw std::invalid_argument("lognormal predictor: sigma must be >= 0");
}

std::string LogNormalPredictor::name() const {
    char b[48];
    std::snprintf(b, sizeof b, "lognormal(sigma=%g)", sigma_);
    return b;
}

void LogNormalPredictor::reset(const Workload& w) {
    Rng rng(seed_);
    pred_.clear();
    for (const auto& r : w.requests)
        pred_.push_back(std::max(1.0, r.output_tokens * std::exp(sigma_ * rng.normal())));
}

void ExponentialPredictor::reset(const Workload& w) {
    Rng rng(seed_);
    pred_.clear();
    for (const auto& r : w.requests)
        pred_.push_back(std::max(1.0, rng.exponential(1.0) * r.output_tokens));
}

BucketPredictor::BucketPredictor(int bucket, double accuracy, int n_max, std::uint64_t seed)
    : bucket_(bucket), n_max_(n_max), accuracy_(accuracy), seed_(seed) {
    if (bucket < 1 || n_max < bucket)
        throw std::invalid_argument("bucket predictor: need 1 <= B <= N_max");
    if (!(accuracy >= 0 && accuracy <= 1))
        throw std::invalid_argument("bucket predictor: accuracy must be in [0, 1]");
}

std::string BucketPredictor::name() const {
    char b[64];
    std::snprintf(b, sizeof b, "bucket(B=%d, accuracy=%g, N_max=%d)", bucket_, accuracy_, n_max_);
    return b;
}

void BucketPredictor::reset(const Workload& w) {
    Rng rng(seed_);
    pred_.clear();
    const int buckets = (n_max_ + bucket_ - 1) / bucket_;
    for (const auto& r : w.requests) {
        int b = std::min(buckets, (r.output_tokens + bucket_ - 1) / bucket_);
        if (!rng.bernoulli(accuracy_)) {
            int k = 1; // P(k) = 2^-k
            while (rng.bernoulli(0.5)) ++k;
            b += rng.bernoulli(0.5) ? k : -k;
            b = std::clamp(b, 1, buckets);
        }
        pred_.push_back(std::min<double>(n_max_, static_cast<double>(b) * bucket_));
    }
}

} // namespace kairos
