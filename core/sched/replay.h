#pragma once
// A policy that replays the decisions another run recorded (RunLog::explain, model/
// explain.h): at its i-th schedule() call it issues the i-th recorded call's actions in
// their recorded order with its hold, wake-up time and restart flag, and when the KV cache
// overflows it names the victims the engine recorded. Run on the same workload, model and
// limits, it must reproduce the recorded run's log exactly: the test that the recorded
// decisions are the whole story of the run (tests/core/tst_explain.cpp). A call made at
// another time than recorded, or one more than recorded, throws ReplayDiverged.
#include "sched/scheduler.h"

#include <stdexcept>

namespace kairos {

struct ReplayDiverged : std::logic_error {
    using std::logic_error::logic_error;
};

class ReplayScheduler final : public Scheduler {
public:
    ReplayScheduler(Explanation recorded, std::string policy);
    std::string name() const override { return policy_; }
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    ReqId overflowVictim(const EngineView& view) override;

private:
    Explanation rec_;
    std::string policy_;
    std::size_t call_ = 0; // next call to replay
    std::size_t next_ = 0; // next reason to replay
};

} // namespace kairos
