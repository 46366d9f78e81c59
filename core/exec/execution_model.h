#pragma once
// ExecutionModel: the time one engine iteration takes for a batch shape (simulation only).
#include "model/device_profile.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace kairos {

// The shape of one iteration: prefill chunks (sum and sum of squares of their lengths)
// and decoding requests (count and the sum of the KV tokens each attends to).
struct BatchShape {
    std::int32_t prefill_seqs = 0;
    std::int64_t prefill_tokens = 0;   // sum L
    double prefill_tokens_sq = 0.0;    // sum L^2 (double: 100k-token prompts square past int32)
    std::int32_t decode_seqs = 0;      // B
    std::int64_t decode_kv_tokens = 0; // sum N_kv
    // Vidur's prefill features (exec/vidur_model.h): the chunks' squares alone (sum c^2,
    // without the cached prefix that prefill_tokens_sq extends them by) and their cached
    // tokens each rounded up to 64, summed.
    double prefill_chunk_sq = 0.0;
    std::int64_t prefill_kv_r64 = 0;
};

// Duration of iteration j of a stretch of decode-only iterations whose batch stays the
// same: d0 + j*dd. Every decoding request adds one KV token per iteration, so a model
// that is affine in sum N_kv gives an exact ramp.
struct DecodeRamp {
    double d0 = 0.0;
    double dd = 0.0;
    // Iterations j = 0 .. exact_for - 1 follow the ramp exactly (a table model is flat only
    // until the batch's context crosses its next key); the engine steps no further at once.
    std::int64_t exact_for = std::numeric_limits<std::int64_t>::max();
};

class ExecutionModel {
public:
    virtual ~ExecutionModel() = default;
    virtual double iterationTime(const BatchShape& shape) const = 0;
    // Exact ramp for decode-only stretches, or nothing if the model is not affine in N_kv
    // (the engine then steps one iteration at a time).
    virtual std::optional<DecodeRamp> decodeRamp(std::int32_t decode_seqs,
                                                 std::int64_t decode_kv_tokens) const = 0;
    virtual std::string describe() const = 0;
};

// ETE-batched (TimeBill's forms batched as in DistServe). An iteration with both prefill
// chunks and decodes (chunked prefill) costs the sum of the two parts: the fixed costs a
// and q0 are both paid, which is what a fit on separate prefill and decode measurements
// implies; a profile fitted on mixed batches can fold the difference into a.
class EteModel final : public ExecutionModel {
public:
    explicit EteModel(const EteParams& p, std::string label = "ete");
    double iterationTime(const BatchShape& s) const override;
    std::optional<DecodeRamp> decodeRamp(std::int32_t b, std::int64_t kv) const override;
    std::string describe() const override;
    const EteParams& params() const { return p_; }
    double prefillTime(std::int64_t sum_l, double sum_l2) const;
    double decodeTime(std::int32_t b, std::int64_t sum_kv) const;

private:
    EteParams p_;
    std::string label_;
};

// Every iteration takes exactly one time unit: the discrete model of the MC-SF paper.
class UnitModel final : public ExecutionModel {
public:
    double iterationTime(const BatchShape&) const override { return 1.0; }
    std::optional<DecodeRamp> decodeRamp(std::int32_t, std::int64_t) const override {
        return DecodeRamp{1.0, 0.0};
    }
    std::string describe() const override { return "unit (1 time unit per iteration)"; }
};

std::unique_ptr<ExecutionModel> makeExecutionModel(const DeviceProfile& profile);

} // namespace kairos
