#pragma once
#include "model/run_log.h"

#include <cstddef>
#include <limits>
#include <vector>

namespace kairos {

// Tells a robot segment's hand-back from a preemption while reading a log's events in
// order: a Preempt at the moment of the same request's Dispatch (the TimelyLLM code hands
// the segment to the robot and re-queues the rest as a new request). Every reader that
// counts preemptions (per request, the timeline's rows, the explain view, the KV chart's
// marks) asks this, so that they agree.
class HandBacks {
public:
    explicit HandBacks(std::size_t requests)
        : at_(requests, std::numeric_limits<double>::quiet_NaN()) {}
    // Call for every event in order; true for a Preempt that is a hand-back.
    bool handBack(const Event& e) {
        const auto i = static_cast<std::size_t>(e.req);
        if (i >= at_.size()) return false;
        if (e.ev == Ev::Dispatch) at_[i] = e.t;
        return e.ev == Ev::Preempt && at_[i] == e.t;
    }

private:
    std::vector<double> at_; // each request's last Dispatch
};

} // namespace kairos
