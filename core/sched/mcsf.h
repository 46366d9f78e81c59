#pragma once
// MC-SF (seeds/003, Algorithm 2): memory-constrained shortest-first. At every iteration
// boundary the running requests stay; waiting requests are considered in order of
// predicted output length and added one by one while the KV use they would all reach
// stays within the capacity at every future completion (where memory peaks); the first
// that does not fit stops the round. With the unit model and chunked prefill this is
// exactly discrete::mcsf under the Engine occupancy convention (tests check it).
//
// Predictions can be wrong, so the check uses predicted remaining lengths (at least 1)
// and the engine's real KV. Overflow rule (the paper leaves it open): when a running
// request outgrows its prediction and the KV cache overflows, the request with the
// longest predicted remaining length is preempted and recomputes later; such events are
// counted (overflows()). A predicted window longer than the cache can hold is capped at
// the capacity, so that an overestimate cannot block a request for ever.
#include "predict/predictor.h"
#include "sched/scheduler.h"

#include <memory>
#include <set>

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kMcsfAdmit;
} // namespace rules

class McsfScheduler final : public Scheduler {
public:
    explicit McsfScheduler(std::shared_ptr<LengthPredictor> predictor);
    std::string name() const override;
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    ReqId overflowVictim(const EngineView& view) override;
    void onEnqueue(const EngineView& view, ReqId id) override;
    long overflows() const { return overflows_; }
    void inspect(const EngineView& view, ReqId id, Insight& out) const override;
    std::string keyName() const override { return "predicted remaining (tokens)"; }
    bool keyCountsDown() const override { return true; }
    bool runningStateVaries() const override { return pred_->refreshEvery() > 0; }
    RuleId overflowRule() const override { return RuleId::RankOverflow; }

private:
    double remaining(const EngineView& view, ReqId id) const;
    std::shared_ptr<LengthPredictor> pred_;
    std::set<std::pair<double, ReqId>> waiting_; // by predicted length, then id
    long overflows_ = 0;
};

} // namespace kairos
