#pragma once
// Predictors whose estimate is fixed at arrival.
#include "predict/predictor.h"

#include <vector>

namespace kairos {

// The true length.
class OraclePredictor final : public LengthPredictor {
public:
    std::string name() const override { return "oracle"; }
    void reset(const Workload& w) override;
    double initial(ReqId id) const override { return truth_[static_cast<std::size_t>(id)]; }

private:
    std::vector<double> truth_;
};

// Base for predictors that draw one estimate per request at reset.
class DrawnPredictor : public LengthPredictor {
public:
    double initial(ReqId id) const override { return pred_[static_cast<std::size_t>(id)]; }

protected:
    std::vector<double> pred_;
};

// Multiplicative log-normal error: truth * exp(sigma * Z), median-unbiased.
class LogNormalPredictor final : public DrawnPredictor {
public:
    LogNormalPredictor(double sigma, std::uint64_t seed);
    std::string name() const override;
    void reset(const Workload& w) override;

private:
    double sigma_;
    std::uint64_t seed_;
};

// Mitzenmacher's exponential-prediction model (used in the analysis of SPRPT with
// predictions and in Trail's appendix D): the prediction is exponential with mean equal
// to the true size.
class ExponentialPredictor final : public DrawnPredictor {
public:
    explicit ExponentialPredictor(std::uint64_t seed) : seed_(seed) {}
    std::string name() const override { return "exponential"; }
    void reset(const Workload& w) override;

private:
    std::uint64_t seed_;
};

// TimeBill's bucketed response-length predictor: a classifier over buckets of B tokens,
// N_hat = min(N_max, bucket * B) with bucket = ceil(N / B) when right. The confusion
// model: right with probability `accuracy`, otherwise off by k >= 1 buckets (up or down
// alike) with probability proportional to 2^-k.
class BucketPredictor final : public DrawnPredictor {
public:
    BucketPredictor(int bucket, double accuracy, int n_max, std::uint64_t seed);
    std::string name() const override;
    void reset(const Workload& w) override;

private:
    int bucket_, n_max_;
    double accuracy_;
    std::uint64_t seed_;
};

} // namespace kairos
