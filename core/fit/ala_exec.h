#pragma once
// An ExecutionModel from a fitted ALA model, for one of its configurations, so that the
// simulator can run a workload on a configuration known only from a throughput benchmark
// (kairos-cli simulate --exec-model ID --exec-config KEY).
//
// ALA predicts throughput, not phases: thpt(ii, oo, bb) in output tokens/s of bb requests
// of ii input and oo output tokens each, prefill included (that is what the benchmark
// measures). So, as the paper turns throughput into latency (oo * bb / thpt for the
// batch, hence bb / thpt per decode step):
//  - a decode iteration of B requests whose mean KV context is N takes B / thpt(n, n, B)
//    with n = N / 1.5, the pair on the diagonal ii = oo whose requests have mean context
//    N over their decode (ii + oo / 2; LLM-Inference-Bench measures mostly ii = oo);
//  - an iteration with prefill chunks (S sequences, L tokens) takes as long as one decode
//    step of S requests of the pair (L / S, L / S), once; prefill's real cost is already
//    spread over the decode steps by the throughput. TTFT from this model is indicative
//    only; E2E latency and throughput are what it predicts.
// The throughput curves are evaluated at construction on a grid of n (a quarter-octave
// apart, 16 to 65,536) and interpolated in log n: iterationTime is cheap and const.
#include "exec/execution_model.h"
#include "fit/ala.h"

#include <string>
#include <vector>

namespace kairos::ala {

class AlaExecutionModel final : public ExecutionModel {
public:
    // Throws std::invalid_argument when `config_key` is not one of the model's
    // configurations.
    AlaExecutionModel(const AlaModel& m, const std::string& config_key, std::string label);
    double iterationTime(const BatchShape& s) const override;
    std::optional<DecodeRamp> decodeRamp(std::int32_t, std::int64_t) const override {
        return std::nullopt; // not affine in the KV tokens
    }
    std::string describe() const override { return label_; }
    // Throughput (tokens/s) of `batch` requests on the diagonal pair (n, n).
    double throughput(double n, int batch) const;

private:
    std::vector<double> log_n_;
    std::vector<ExpFit> fits_;
    std::string label_;
};

} // namespace kairos::ala
