#pragma once
// The scheduler's view at any instant, and the story of one request, from the run log
// alone: what `kairos-cli explain` prints and the workbench's inspector shows.
//
// ExplainIndex is built once per log (O(events + iterations + reasons)); viewAt(t) then
// replays the events up to t (a linear scan, about 1 ms on 20,000 requests) and looks up
// each live request's state with binary searches. Everything a row says is read from the
// log: its phase from its events, tokens generated from its events and the decode
// iterations since, its true length from its Finish event (unknown until it finishes or
// when it was killed), and what the policy decided on from the explain stream.
#include "model/run_log.h"
#include "model/workload.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kairos {

class ExplainIndex {
public:
    explicit ExplainIndex(const RunLog& log);
    const RunLog& log() const { return log_; }
    bool explained() const { return log_.explain.on; }

    // Tokens request `id` had generated at t (after its events at t).
    std::int32_t generatedAt(ReqId id, double t) const;
    // The policy's state of `id` in force at t (the latest sample at or before t); nullptr
    // if none was recorded.
    const Insight* insightAt(ReqId id, double t) const;
    // That state read at t: its remaining counts counted down by the tokens generated since
    // it was sampled (Insight::generated); false if there is none.
    bool stateAt(ReqId id, double t, Insight* out) const;
    // Its true output length (its Finish event's tokens); -1 if it never finished.
    std::int32_t outputOf(ReqId id) const { return output_[static_cast<std::size_t>(id)]; }
    std::int32_t promptOf(ReqId id) const { return prompt_[static_cast<std::size_t>(id)]; }
    double arrivalOf(ReqId id) const { return arrival_[static_cast<std::size_t>(id)]; }
    // Indices of one request's entries: a slice of a table held for all requests.
    struct Indices {
        const std::uint32_t *first = nullptr, *last = nullptr;
        const std::uint32_t* begin() const { return first; }
        const std::uint32_t* end() const { return last; }
        std::size_t size() const { return static_cast<std::size_t>(last - first); }
        bool empty() const { return first == last; }
    };
    // Its events, reasons (where it acted or was compared against) and states, in order.
    Indices eventsOf(ReqId id) const { return events_of_.of(id); }
    Indices reasonsOf(ReqId id) const { return reasons_of_.of(id); }
    Indices insightsOf(ReqId id) const { return insights_of_.of(id); }
    // The last schedule() call at or before t (-1: none), and the reasons it gave. A fleet's
    // calls are every replica's; `replica` >= 0 takes that replica's alone.
    std::int64_t callAt(double t, int replica = -1) const;
    std::pair<std::size_t, std::size_t> reasonsOfCall(std::int64_t call) const;
    // The decisions that acted (reason indices whose call differs from the one before),
    // in order: what stepping "decision by decision" walks through.
    const std::vector<std::uint32_t>& actingCalls() const { return acting_calls_; }
    // Of those: the last at or before t (`direction` 0), the first after t (+1) or the last
    // before t (-1); -1 if there is none.
    std::int64_t actingCall(double t, int direction = 0, int replica = -1) const;
    // KV tokens in use at t as the KV chart draws it (the iteration in force at t): a fleet's
    // summed over its replicas, or one replica's.
    std::int64_t kvAt(double t, int replica = -1) const;

private:
    const RunLog& log_;
    std::vector<std::vector<double>> decode_ends_; // per replica
    // Every request's indices in one array, request by request (compressed rows): a vector
    // per request cost 40,000 allocations and two thirds of the index's time on 20,000
    // requests.
    struct PerRequest {
        std::vector<std::uint32_t> start; // request r's indices: [start[r], start[r + 1])
        std::vector<std::uint32_t> index;
        Indices of(ReqId id) const {
            const auto r = static_cast<std::size_t>(id);
            return {index.data() + start[r], index.data() + start[r + 1]};
        }
    };
    PerRequest events_of_, reasons_of_, insights_of_;
    std::vector<std::int32_t> output_, prompt_;
    std::vector<double> arrival_;
    std::vector<std::uint32_t> acting_calls_;
    std::vector<std::pair<double, double>> kv_;
    std::vector<std::vector<std::pair<double, double>>> kv_replica_; // a fleet's, per replica
    bool onReplica(std::int64_t call, int replica) const;
};

// One request as the scheduler saw it at t.
struct ViewRow {
    static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    ReqId req = 0;
    std::int16_t replica = 0; // a fleet's: the replica it was routed to
    double arrival = 0;
    double since = 0; // when it entered this state
    std::int32_t prompt = 0;
    std::int32_t generated = 0;
    std::int32_t output = -1; // its true length, -1 if unknown (killed)
    double key = kNone;       // the policy's key (ExplainIndex's log: explain.key_name)
    double predicted = kNone; // predicted remaining tokens
    double deadline = kNone;  // due time (s); slack = deadline - t
    double alpha = kNone;     // KV eviction ratio chosen
    double wcet = kNone;      // WCET estimate (s)
    std::int32_t preemptions = 0, suspensions = 0;
    double trueRemaining() const { return output < 0 ? kNone : double(output - generated); }
};

struct SchedulerView {
    double t = 0;
    int replica = -1;             // a fleet's view of one replica; -1: all of them (or one engine)
    std::vector<ViewRow> waiting; // in the policy's order (by key; ties by arrival)
    std::vector<ViewRow> running; // in admission order
    std::vector<ViewRow> suspended; // in the policy's order
    std::int64_t kv_used = 0, kv_capacity = 0;
    std::int32_t not_arrived = 0, finished = 0, killed = 0;
    std::int64_t call = -1; // the last decision at or before t (-1: none)
    double call_t = std::nan("");
    std::pair<std::size_t, std::size_t> reasons{0, 0}; // its reasons [first, last)
};

// `replica` >= 0: a fleet's replica alone (its requests, KV and calls); ignored for one
// engine. Throws std::invalid_argument for a replica the run did not have.
SchedulerView viewAt(const ExplainIndex& ix, double t, int replica = -1);

// One line of a request's story: an event of it, or a decision that touched it (its own,
// or another request's that was compared against it), or a change of its state.
struct StoryLine {
    enum class Kind { Event, Reason, State } kind = Kind::Event;
    double t = 0;
    std::uint32_t index = 0; // into log.events, explain.reasons or explain.insights
};
std::vector<StoryLine> storyOf(const ExplainIndex& ix, ReqId id);

// People's text for a reason: "preempt req 17: sprpt_lp: a < C*r, ... (a = 12, C = 0.8,
// r = 45, key = 40, other_key = 10) for req 9". Requests by row; with the workload `w`, by
// the trace's own ids.
std::string describeReason(const Reason& r, const Workload* w = nullptr);
// The numbers alone: "a = 12, C = 0.8, r = 45".
std::string reasonNumbers(const Reason& r);

} // namespace kairos
