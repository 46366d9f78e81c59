#include "exec/execution_model.h"

#include "exec/vidur_model.h"

#include <sstream>
#include <stdexcept>

namespace kairos {

EteModel::EteModel(const EteParams& p, std::string label) : p_(p), label_(std::move(label)) {
    if (const auto [field, what] = p.check(); !field.empty())
        throw std::invalid_argument("ETE coefficient " + field + ": " + what);
}

double EteModel::prefillTime(std::int64_t sum_l, double sum_l2) const {
    return p_.a + p_.b * static_cast<double>(sum_l) + p_.c * sum_l2;
}

double EteModel::decodeTime(std::int32_t b, std::int64_t sum_kv) const {
    return p_.q0 + p_.q1 * b + p_.p * static_cast<double>(sum_kv);
}

double EteModel::iterationTime(const BatchShape& s) const {
    double t = 0.0;
    if (s.prefill_seqs > 0) t += prefillTime(s.prefill_tokens, s.prefill_tokens_sq);
    if (s.decode_seqs > 0) t += decodeTime(s.decode_seqs, s.decode_kv_tokens);
    return t;
}

std::optional<DecodeRamp> EteModel::decodeRamp(std::int32_t b, std::int64_t kv) const {
    // Iteration j attends to kv + j*b tokens: d_j = decodeTime(b, kv) + j * p * b.
    return DecodeRamp{decodeTime(b, kv), p_.p * b};
}

std::string EteModel::describe() const {
    std::ostringstream s;
    s << label_ << " [prefill a=" << p_.a << " b=" << p_.b << " c=" << p_.c
      << "; decode q0=" << p_.q0 << " q1=" << p_.q1 << " p=" << p_.p << "]";
    return s.str();
}

std::unique_ptr<ExecutionModel> makeExecutionModel(const DeviceProfile& profile) {
    if (profile.exec_kind == "unit") return std::make_unique<UnitModel>();
    if (profile.exec_kind == "vidur")
        return std::make_unique<VidurModel>(profile.vidur, profile.name);
    return std::make_unique<EteModel>(profile.ete, profile.name);
}

} // namespace kairos
