#pragma once
// First come, first served with iteration-level batching, as vLLM's (v0) scheduler:
// admit from the head of the waiting queue while the prompt's KV fits above a
// watermark, the running count stays under max_num_seqs and (without chunked prefill)
// the prefill batch stays under max_num_batched_tokens; stop at the first that does not
// fit (no overtaking). Preempted requests go back to the front of the queue.
#include "sched/scheduler.h"

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kFcfsHead;
} // namespace rules

struct FcfsOptions {
    double watermark = 0.01; // fraction of the KV capacity kept free at admission (vLLM)
};

class FcfsScheduler final : public Scheduler {
public:
    explicit FcfsScheduler(FcfsOptions o = {}) : opt_(o) {}
    std::string name() const override;
    double kvWatermark() const override { return opt_.watermark; }
    void schedule(const EngineView& view, Decision& out) override;

private:
    FcfsOptions opt_;
};

} // namespace kairos
