#include "sched/admission.h"

#include <algorithm>

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
    if (view.limits().vllmV0Chunked()) {
        // The running requests take the budget first (a decode one token, a prefill the
        // rest of its prompt), whatever their order: what is left is the same.
        std::int64_t used = 0;
        for (ReqId id : view.running()) {
            const ReqState& s = view.state(id);
            used += s.needsPrefill() ? s.prefill_target - s.prefilled : 1;
        }
        tokens_left_ = std::max<std::int64_t>(0, view.limits().max_num_batched_tokens - used);
    }
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
    if (seats_ <= 0 || n > free_ || tokens_left_ <= 0) return Verdict::NoRoom;
    const EngineLimits& lim = view_.limits();
    if (!lim.chunked_prefill && batch_tokens_ > 0 &&
        batch_tokens_ + s.context() > lim.max_num_batched_tokens)
        return Verdict::NoRoom;
    free_ -= n;
    --seats_;
    if (lim.vllmV0Chunked()) tokens_left_ -= std::min<std::int64_t>(tokens_left_, s.context());
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
