#pragma once
// Every wait explained: for one request, each stretch it spent not running (queued before
// its prefill, preempted until its recompute starts, suspended until it resumes), cut at
// the decisions it stood through, each piece with why it was not running then and who went
// ahead. Read from a run log recorded with --explain (model/explain.h): the calls carry the
// engine as each decision left it (seats taken, KV allocated) and the explanation the
// run's limits, so every cause is a comparison of recorded numbers, not a guess.
//
// The causes, checked in this order at each decision the request stood through:
//   step          it arrived (or was preempted) while an iteration ran: nothing is decided
//                 until the iteration ends (ahead: the prefills that iteration carries)
//   seats         every seat was taken after the decision (running >= max_num_seqs)
//   kv            its reservation (context + 1 tokens in whole blocks) exceeded the KV free
//                 above the policy's watermark after the decision
//   token_budget  the iteration after the decision had no token budget left for its prompt
//                 (max_num_batched_tokens); also an admitted request whose prefill waits
//                 for the budget behind earlier prefills
//   router        (a fleet) its replica was full on seats or KV while another replica had
//                 room for it: the router's placement held it
//   kv            (also) room for it, but a request ahead of it in the policy's order (by
//                 their last recorded keys) did not fit: admission stops there, as vLLM's
//                 does (head of line); `blocked_by` names it
//   order         room for it, and the policy took others in ahead of it
//   policy        room for it, nobody ahead of it that did not fit, and the policy took
//                 nobody in (it batches, or runs one at a time: its own rule)
//   suspended     the policy paused it with its KV kept (the rule of its suspension)
//   unrecorded    the run log has no decisions with the engine's state (not --explain, or
//                 written before they were recorded)
// Neighbouring decisions alike (state, cause, bound, the request ahead) make one span; its
// numbers are its first decision's. A decision that took others in while the request stayed
// passed it over, whatever bound:
// `passed_over` counts those decisions and `ahead` names whom they took in, by the rule
// their reasons cite.
//
// The spans of a request's waits are contiguous within each stretch and add up to its
// whole time not running between arrival and its end (tests/core/tst_waits.cpp checks it
// over every registered policy); the queued stretch is its queue delay.
#include "metrics/explain_view.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kairos {

enum class WaitState : std::uint8_t { Queued, Admitted, Preempted, Suspended };
enum class WaitCause : std::uint8_t {
    Step,
    Seats,
    Kv,
    TokenBudget,
    Router,
    Order,
    Policy,
    Suspended,
    Unrecorded
};
const char* waitStateName(WaitState s);  // "queued", "admitted", "preempted", "suspended"
const char* waitCauseName(WaitCause c);  // "step", "seats", ...
const char* waitCauseWords(WaitCause c); // "an iteration in progress", "every seat taken", ...

struct Wait {
    static constexpr std::size_t kAheadShown = 64; // ids listed at most (ahead_count: all)
    double from = 0, to = 0;
    WaitState state = WaitState::Queued;
    WaitCause cause = WaitCause::Unrecorded;
    // The rule behind it: the code of the rule the decisions that went ahead cited (most
    // cited), the suspension's rule, or the limit that bound ("max_num_seqs", "kv_cache",
    // "max_num_batched_tokens", "iteration", the router's name); "" for none.
    std::string rule;
    // The rule the decisions that took others in ahead of it cited most ("" if none did).
    std::string passed_by;
    std::vector<ReqId> ahead;     // who went ahead: taken in at decisions in the span (the
                                  // prefills of the iteration, for `step`), first kAheadShown
    std::int64_t ahead_count = 0; // all of them, distinct
    std::int32_t decisions = 0;   // decisions it stood through in the span
    std::int32_t passed_over = 0; // of them, those that took another request in
    // The engine at the span's first decision (or in the iteration, for `step`): requests
    // running, the seats, KV free above the watermark (below 0 when running requests grew
    // past it) and what it needed. -1 (kv_need, running): not known.
    std::int32_t running = -1, seats = -1;
    std::int32_t peak_running = -1; // the most running at any of its decisions
    std::int64_t kv_free = -1, kv_need = -1;
    // Room for it, but a request ahead of it in the policy's order was first: that one
    // (-1: none), and its reservation when it did not fit (the queue stops there).
    ReqId blocked_by = -1;
    std::int64_t blocked_need = -1;
    double seconds() const { return to - from; }
    // The shortest time told as a wait, or as a cause's part of one: what reads as more
    // than "0 ms" ("an iteration in progress for 0 ms" read as a cause that held nobody).
    static constexpr double kShortestTold = 0.0005;
    // Whether the story tells it: long enough to read, or others went ahead meanwhile.
    bool told() const { return seconds() >= kShortestTold || passed_over > 0; }
};

// The waits of `id`, in time order. Throws std::out_of_range for a request not in the log.
std::vector<Wait> waitsOf(const ExplainIndex& ix, ReqId id);

// The same for many requests of one log: the per-replica indexes are built once, and each
// decision's queue (in the policy's order) once for every request that stood through it.
// Not thread-safe (it fills its cache as it goes).
class WaitIndex {
public:
    explicit WaitIndex(const ExplainIndex& ix);
    ~WaitIndex();
    std::vector<Wait> of(ReqId id) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Its whole time not running, from its events alone (what the waits add up to): arrival to
// first prefill start (or its end, never started), preempt to recompute start, suspend to
// resume.
double timeNotRunning(const ExplainIndex& ix, ReqId id);

// One line for people: "waited 21.9 min: KV full for 12.3 min behind 37 running requests;
// ...; passed over 214 times (sprpt_lp.rank)". "" when it never waited.
std::string waitStory(const std::vector<Wait>& waits);
// A span in words: "12.3 s queued: every seat taken (32 of 32 running); passed over 4 times
// by 7 requests (sprpt_lp.rank)".
// Requests by their run-log row; with the workload `w`, by the trace's own ids (as
// describeReason names them).
std::string describeWait(const Wait& w, const Workload* wl = nullptr);

// Whether room ever bound in a run: what a preemption knob (Trail's C) needs to act on,
// since it only decides who gives room up. Room bound when the running requests filled
// every seat, or KV in use came within a typical request's reservation (its median prompt
// + 1, in whole blocks) of the capacity less the watermark. Read from the iteration
// records; a fleet's per replica (each has the capacity).
struct RoomUse {
    std::int64_t kv_peak = 0, kv_limit = 0, typical_need = 0;
    std::int32_t peak_running = 0, seats = 0;
    bool seats_bound = false, kv_bound = false; // every seat taken at once; KV near its limit
    bool binds = false;                         // either
};
RoomUse roomUse(const RunLog& log, std::int32_t seats, std::int32_t block_size, double watermark);

} // namespace kairos
