#include "exec/vidur_model.h"

#include <sstream>
#include <stdexcept>

namespace kairos {

VidurModel::VidurModel(std::shared_ptr<const VidurTables> t, std::string label)
    : t_(std::move(t)), label_(std::move(label)) {
    if (!t_ || t_->layer_tokens_ms.empty())
        throw std::invalid_argument("a Vidur model needs its tables");
}

double VidurModel::iterationTime(const BatchShape& s) const {
    const std::int64_t tokens = s.prefill_tokens + s.decode_seqs;
    return 1e-3 * t_->batchMs(tokens, s.decode_seqs, s.decode_kv_tokens, s.prefill_seqs,
                              s.prefill_chunk_sq, s.prefill_kv_r64);
}

std::optional<DecodeRamp> VidurModel::decodeRamp(std::int32_t b, std::int64_t kv) const {
    if (b <= 0) return std::nullopt;
    BatchShape s;
    s.decode_seqs = b;
    s.decode_kv_tokens = kv;
    // Iteration j attends to kv + j*b tokens: mean m0 + j, keyed by ceil((m0 + j) / 64).
    // The key stays while m0 + j <= 64 ceil(m0 / 64); past the table's last column it
    // never changes.
    const std::int64_t m0 = kv / b;
    const std::int64_t last = std::int64_t(t_->decode.front().size() - 1) * VidurTables::kKvStep;
    DecodeRamp r{iterationTime(s), 0.0};
    if (m0 < last)
        r.exact_for =
            (m0 + VidurTables::kKvStep - 1) / VidurTables::kKvStep * VidurTables::kKvStep - m0 + 1;
    return r;
}

std::string VidurModel::describe() const {
    std::ostringstream s;
    s << label_ << " [vidur: " << t_->layers << " layers, TP " << t_->tensor_parallel << ", "
      << t_->token_ops.size() << " token-keyed operators, decode " << t_->decode.size() << "x"
      << t_->decode.front().size() << ", prefill " << t_->prefill.size() << "x"
      << t_->prefill.front().size() << "]";
    return s.str();
}

} // namespace kairos
