#include "sched/admission.h"

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kNeverFits = registerRule(
    {"never_fits", "never_fits: need > M - watermark", RuleVars{"need", "limit"},
     "its reservation (context + 1) exceeds the KV capacity less the watermark: it can "
     "never be admitted (vLLM: AllocStatus.NEVER)",
     false, [](const double* x) { return x[0] > x[1]; }});
} // namespace rules

AdmissionBudget::AdmissionBudget(const EngineView& view, double watermark, bool shared_credit)
    : view_(view), shared_credit_(shared_credit) {
    const std::int64_t capacity = view.kvCapacity();
    const auto wm = static_cast<std::int64_t>(watermark * static_cast<double>(capacity));
    capacity_after_watermark_ = capacity - wm;
    free_ = view.kvFree() - wm;
    seats_ = view.limits().max_num_seqs - static_cast<std::int64_t>(view.running().size());
}

AdmissionBudget::Verdict AdmissionBudget::take(const ReqState& s, bool whole) {
    const std::int64_t n = need(s, whole);
    last_need_ = n;
    last_free_ = free_;
    last_seats_ = seats_;
    if (neverFits(s)) {
        last_need_ = reservation(s); // what never fits: the whole reservation
        return Verdict::NeverFits;
    }
    if (seats_ <= 0 || n > free_) return Verdict::NoRoom;
    const EngineLimits& lim = view_.limits();
    if (!lim.chunked_prefill && batch_tokens_ > 0 &&
        batch_tokens_ + s.context() > lim.max_num_batched_tokens)
        return Verdict::NoRoom;
    free_ -= n;
    --seats_;
    batch_tokens_ += s.context();
    return Verdict::Ok;
}

void AdmissionBudget::killNeverFits(Decision& out, const ReqState& s) const {
    out.killFor(s.id, KillCause::NeverFits);
    if (out.explain)
        out.because(Act::Kill, s.id, rules::kNeverFits,
                    {double(reservation(s)), double(capacity_after_watermark_)});
}

bool prefillPending(const EngineView& view) {
    return !view.limits().chunked_prefill && view.runningPrefill();
}

} // namespace kairos
