#pragma once
// What every admitting policy checks before it takes a waiting request in, as vLLM does:
// the KV it reserves (prompt, tokens to recompute, one slot) must leave a watermark of
// the capacity free, the running count must stay under max_num_seqs, and without
// chunked prefill one prefill batch stays under max_num_batched_tokens (its first
// request is always allowed, so long prompts are not starved). Under vLLM v0's rules with
// chunked prefill (EngineRules::VllmV0) a request is admitted only while the iteration's
// token budget has room after the running requests' decodes and prefill chunks, as
// _schedule_prefills does: its first chunk is what is left.
#include "sched/scheduler.h"

#include <cstdint>
#include <limits>

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kNeverFits;
} // namespace rules

class AdmissionBudget {
public:
    // `shared_credit`: charge an admission less the cached prefix running requests hold
    // (EngineView::admissionCost). A policy that may drop running requests in the same
    // decision passes false: a dropped request may be the one holding that prefix.
    AdmissionBudget(const EngineView& view, double watermark, bool shared_credit = true);
    enum class Verdict { Ok, NoRoom, NeverFits };
    // Ok: the request fits and its share is taken from the budget. `whole`: charge its
    // whole reservation (a prompt the engine computes whole: one to be compressed).
    Verdict take(const ReqState& s, bool whole = false);
    // Its reservation exceeds the capacity less the watermark: it can never be admitted
    // (whatever a prefix cache holds now: what it shares may be gone by then).
    bool neverFits(const ReqState& s) const { return reservation(s) > capacity_after_watermark_; }
    // Its whole reservation (EngineView::reservation: context + 1 tokens in whole blocks,
    // context alone with prefix caching).
    std::int64_t reservation(const ReqState& s) const { return view_.reservation(s); }
    // Drops a request that never fits (KillCause::NeverFits), with the rule's reason: its
    // reservation against the capacity less the watermark.
    void killNeverFits(Decision& out, const ReqState& s) const;
    // KV tokens admitting `s` would add: its reservation less the blocks of a cached prefix
    // that running requests hold already (EngineView::admissionCost).
    std::int64_t need(const ReqState& s, bool whole = false) const {
        return shared_credit_ && !whole ? view_.admissionCost(s.id) : reservation(s);
    }
    std::int64_t freeTokens() const { return free_; }
    // KV the policy frees in this decision (kvFreedBy of what it drops; with
    // shared_credit off).
    void addFree(std::int64_t tokens) { free_ += tokens; }
    std::int64_t seats() const { return seats_; }
    // For policies that free seats by preempting within the same decision.
    void setSeats(std::int64_t n) { seats_ = n; }
    // What the last take() compared (for reasons, model/explain.h): the reservation, the
    // KV free above the watermark and the seats free before it.
    std::int64_t lastNeed() const { return last_need_; }
    std::int64_t lastFree() const { return last_free_; }
    std::int64_t lastSeats() const { return last_seats_; }
    std::int64_t limit() const { return capacity_after_watermark_; }
    // VllmV0 with chunked prefill: the tokens of this iteration's budget still free (the
    // running requests' share taken first); otherwise unbounded.
    std::int64_t tokensLeft() const { return tokens_left_; }

private:
    const EngineView& view_;
    std::int64_t capacity_after_watermark_;
    std::int64_t free_;
    std::int64_t seats_;
    std::int64_t batch_tokens_ = 0;
    std::int64_t tokens_left_ = std::numeric_limits<std::int64_t>::max();
    bool shared_credit_;
    std::int64_t last_need_ = 0, last_free_ = 0, last_seats_ = 0;
};

// True when, without chunked prefill, a running request still has its prefill to do:
// vLLM v0 runs such a prefill batch alone, so nothing is admitted meanwhile.
bool prefillPending(const EngineView& view);

} // namespace kairos
