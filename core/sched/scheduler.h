#pragma once
// The Scheduler interface (ARCHITECTURE.md, The one flow): called at every iteration boundary with
// a read-only view of the engine, it answers with a Decision. The same scheduler objects drive the
// simulator and the live engine, so a simulated decision and a measured one compare.
#include "model/run_log.h"
#include "model/workload.h"
#include "sched/engine_limits.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kairos {

class ExecutionModel;

enum class Phase : std::uint8_t { Pending, Waiting, Running, Suspended, Finished, Killed };

// An ordered list of request ids with O(1) insertion at either end and O(1) removal of
// any member (a doubly linked list over arrays indexed by ReqId): the waiting queue,
// from which policies admit in any order.
class ReqList {
public:
    explicit ReqList(std::size_t capacity = 0) { resize(capacity); }
    void resize(std::size_t n) {
        next_.assign(n, -1);
        prev_.assign(n, -1);
        in_.assign(n, 0);
        head_ = tail_ = -1;
        size_ = 0;
    }
    bool contains(ReqId id) const { return in_[static_cast<std::size_t>(id)] != 0; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    ReqId front() const { return head_; }
    void pushBack(ReqId id) { link(id, tail_, -1); }
    void pushFront(ReqId id) { link(id, -1, head_); }
    bool remove(ReqId id) {
        const auto i = static_cast<std::size_t>(id);
        if (!in_[i]) return false;
        const ReqId p = prev_[i], n = next_[i];
        (p >= 0 ? next_[static_cast<std::size_t>(p)] : head_) = n;
        (n >= 0 ? prev_[static_cast<std::size_t>(n)] : tail_) = p;
        in_[i] = 0;
        --size_;
        return true;
    }
    class const_iterator {
    public:
        const_iterator(const ReqList* l, ReqId at) : l_(l), at_(at) {}
        ReqId operator*() const { return at_; }
        const_iterator& operator++() {
            at_ = l_->next_[static_cast<std::size_t>(at_)];
            return *this;
        }
        bool operator!=(const const_iterator& o) const { return at_ != o.at_; }
        bool operator==(const const_iterator& o) const { return at_ == o.at_; }

    private:
        const ReqList* l_;
        ReqId at_;
    };
    const_iterator begin() const { return {this, head_}; }
    const_iterator end() const { return {this, -1}; }

private:
    void link(ReqId id, ReqId p, ReqId n) {
        const auto i = static_cast<std::size_t>(id);
        if (in_[i]) return;
        prev_[i] = p;
        next_[i] = n;
        (p >= 0 ? next_[static_cast<std::size_t>(p)] : head_) = id;
        (n >= 0 ? prev_[static_cast<std::size_t>(n)] : tail_) = id;
        in_[i] = 1;
        ++size_;
    }
    std::vector<ReqId> next_, prev_;
    std::vector<char> in_;
    ReqId head_ = -1, tail_ = -1;
    std::size_t size_ = 0;
};

// What the engine knows about one request. Owned by the engine; schedulers only read it.
// 64 bytes (a million-request run holds one per request while it simulates); what the run
// log records (admission, first token) is not kept here twice.
struct ReqState {
    const Request* req = nullptr;
    std::int64_t kv = 0;             // KV tokens held (logical)
    std::int64_t alloc = 0;          // KV tokens allocated (kv rounded up to whole blocks)
    double alpha = 0.0;              // KV eviction ratio applied to the prompt after prefill
    ReqId id = -1;                   // its index in the workload
    std::int32_t generated = 0;      // tokens emitted so far (kept across preemptions)
    std::int32_t prefill_target = 0; // context tokens the current prefill computes
    std::int32_t prefilled = 0;      // of prefill_target, done so far
    std::int32_t preemptions = 0;
    std::int32_t suspensions = 0;
    // Of the current (re)admission's context, the leading tokens found in the prefix cache:
    // not computed (prefill_target leaves them out) and not allocated again.
    std::int32_t cached = 0;
    Phase phase = Phase::Pending;
    bool admitted = false; // the scheduler has taken it in at least once

    bool needsPrefill() const { return prefilled < prefill_target; }
    std::int32_t remaining() const { return req->output_tokens - generated; }
    // Context to recompute on (re)admission: the prompt and every token generated so far.
    std::int32_t context() const { return req->prompt_tokens + generated; }
};
static_assert(sizeof(ReqState) == 64, "ReqState stays compact");

// Read-only view of an engine at an iteration boundary.
class EngineView {
public:
    virtual ~EngineView() = default;
    virtual double now() const = 0;
    virtual const ReqList& waiting() const = 0;            // in queue order
    virtual const std::vector<ReqId>& running() const = 0; // in admission order
    virtual const std::vector<ReqId>& suspended() const = 0;
    // Not virtual: policies read it for every running request at every decision.
    const ReqState& state(ReqId id) const { return states_[static_cast<std::size_t>(id)]; }
    virtual std::int64_t kvUsed() const = 0; // allocated KV tokens
    virtual const EngineLimits& limits() const = 0;
    virtual const ExecutionModel* model() const = 0; // nullptr in the live engine
    virtual double nextArrival() const = 0;          // +inf when none is pending
    // Duration of the last iteration that ran (the last of a skipped-ahead stretch): what
    // a policy measuring token rates sees whether or not the engine skipped ahead. 0 before
    // the first.
    virtual double lastIterationTime() const = 0;
    // KV tokens allocated for a request holding `tokens` (rounded up to whole blocks).
    std::int64_t kvCost(std::int64_t tokens) const {
        const std::int64_t bs = limits().block_size;
        return bs <= 1 ? tokens : (tokens + bs - 1) / bs * bs;
    }
    std::int64_t kvCapacity() const {
        const std::int64_t bs = std::max<std::int32_t>(1, limits().block_size);
        return limits().kv_capacity_tokens / bs * bs;
    }
    std::int64_t kvFree() const { return kvCapacity() - kvUsed(); }
    // With prefix caching: what admitting the waiting request `id` now would find cached
    // (leading tokens of its context), and of those the tokens running or suspended
    // requests hold already (counted once in kvUsed). 0 without caching.
    virtual std::int64_t prefixHit(ReqId id) const {
        (void)id;
        return 0;
    }
    virtual std::int64_t prefixShared(ReqId id) const {
        (void)id;
        return 0;
    }
    // KV tokens dropping the request's KV now frees: its allocation, less blocks other
    // requests hold too (prefix caching).
    virtual std::int64_t kvFreedBy(ReqId id) const { return state(id).alloc; }
    // A decode clock, when the engine has one: a count that grows by n whenever it decodes n
    // tokens of every running request past its prefill at once, and only then (every
    // iteration of a non-chunked engine that does not prefill, every iteration of a
    // chunked one that batches every decode). While a request runs past its prefill, its
    // tokens generated less this count stay constant, so a policy whose keys follow the
    // tokens generated can keep its running requests in order without reading them at
    // every decision (PriorityScheduler). -1: none (an engine that may leave some decodes
    // out of an iteration, as vLLM v0's chunked budget does, or a live one).
    virtual std::int64_t decodeClock() const { return -1; }
    // Whether a running request is still in its prefill (a non-chunked engine finishes
    // those first). The engine keeps a count; this default looks.
    virtual bool runningPrefill() const {
        for (ReqId id : running())
            if (state(id).needsPrefill()) return true;
        return false;
    }
    // KV slots a request holds beyond its computed context: 1 in Kairos's own accounting (a
    // slot for the newest token, taken with the token); 0 with prefix caching, as vLLM
    // allocates the slot in the step that feeds the token (sim/prefix_cache.h).
    virtual std::int32_t kvLead() const { return 1; }
    // The KV tokens admitting `s` reserves: its context, plus the lead, in whole blocks.
    std::int64_t reservation(const ReqState& s) const {
        return kvCost(std::int64_t(s.context()) + kvLead());
    }
    // KV tokens admitting `id` now adds to kvUsed: its reservation less the blocks it
    // shares with running requests.
    std::int64_t admissionCost(ReqId id) const { return reservation(state(id)) - prefixShared(id); }

protected:
    const ReqState* states_ = nullptr; // by request id: set by the engine once they exist
};

struct Decision {
    struct Kill {
        ReqId id;
        KillCause cause;
    };
    std::vector<Kill> kill;     // dropped unfinished, each by a documented rule (KillCause)
    std::vector<ReqId> preempt; // running or suspended -> front of waiting, KV dropped (recompute)
    // The requests in `preempt` start over: their generated tokens are discarded too (the
    // MC-SF paper's benchmarks clear requests "as unprocessed"); default: vLLM's recompute,
    // which keeps the tokens and re-prefills them with the prompt.
    bool restart = false;
    std::vector<ReqId> suspend;                  // running -> suspended, KV kept
    std::vector<ReqId> resume;                   // suspended -> running
    std::vector<std::pair<ReqId, double>> evict; // KV eviction ratio alpha, set before admit
    std::vector<ReqId> admit; // waiting -> running; prefill starts, in this order
    // Robot plan segments handed to the robot now: (request, segment index). Logged only.
    std::vector<std::pair<ReqId, std::int32_t>> dispatch;
    // Iterations the engine may run without asking again, unless a request arrives or
    // finishes or the KV cache overflows first. INT_MAX: until such an event.
    std::int32_t hold = 1;
    // With nothing runnable, wake the scheduler at this time even if nothing arrives.
    double wake_at = std::numeric_limits<double>::infinity();

    void killFor(ReqId id, KillCause cause) { kill.push_back({id, cause}); }

    // Reasons (model/explain.h): when `explain` is set (the engine records this run's
    // reasons), a policy gives each action it takes a reason: the rule that fired, its
    // numbers in the rule's order, and the request it compared against. Policies test
    // `explain` first, so that a run without it builds nothing.
    bool explain = false;
    std::vector<Reason> why;
    // With `explain`, for a policy whose keys move with the clock (waitingKeysVary): the
    // waiting and suspended requests it ranked in this decision; the engine samples their
    // state (inspect) when the decision acts.
    std::vector<ReqId> ranked;
    void because(Act act, ReqId id, RuleId rule, std::initializer_list<double> x, ReqId other = -1,
                 std::int32_t value = 0) {
        Reason r{/*t, call: the engine's*/ 0,
                 0,
                 id,
                 act,
                 rule,
                 other,
                 value,
                 {}};
        std::size_t i = 0;
        for (double v : x)
            if (i < r.x.size()) r.x[i++] = v;
        why.push_back(r);
    }
    void clear() {
        kill.clear();
        preempt.clear();
        restart = false;
        suspend.clear();
        resume.clear();
        evict.clear();
        admit.clear();
        dispatch.clear();
        why.clear();
        ranked.clear();
        hold = 1;
        wake_at = std::numeric_limits<double>::infinity();
    }
};

// The request among `ids` with the largest key(id), ties to the larger id; -1 if none.
// What overflow rules pick: the worst-ranked request.
template <class Ids, class Key> ReqId worstBy(const Ids& ids, Key&& key) {
    ReqId victim = -1;
    double worst = -std::numeric_limits<double>::infinity();
    for (ReqId id : ids) {
        const double k = key(id);
        if (victim < 0 || k > worst || (k == worst && id > victim)) worst = k, victim = id;
    }
    return victim;
}

// Thrown by a scheduler that finds itself in a cycle that can never end (e.g. the MC-SF
// paper's alpha-protection greedy with too small an alpha: the same requests are admitted,
// overflow the cache and are cleared again and again).
struct SchedulerLoop : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Scheduler {
public:
    virtual ~Scheduler() = default;
    // Name with parameters, e.g. "fcfs(watermark=0.01)".
    virtual std::string name() const = 0;
    virtual void reset(const Workload& w) { (void)w; }
    virtual void schedule(const EngineView& view, Decision& out) = 0;
    // The next iteration needs more KV than is free: name one request whose KV to drop: a
    // running one (preempted, it will recompute) or a suspended one (its kept KV is
    // released and it goes back to waiting). Default: vLLM's rule, the most recently
    // arrived running request.
    virtual ReqId overflowVictim(const EngineView& view);
    // A request entered the waiting queue (it arrived, or lost its KV to a preemption).
    virtual void onEnqueue(const EngineView& view, ReqId id) {
        (void)view;
        (void)id;
    }
    virtual void onFinish(const EngineView& view, ReqId id) {
        (void)view;
        (void)id;
    }

    // Explaining (model/explain.h). What the policy decides on for request `id` now: its
    // key in the policy's order and whatever else it uses (predicted remaining tokens,
    // deadline, alpha*, WCET). Default: first come, first served (the key is the arrival).
    virtual void inspect(const EngineView& view, ReqId id, Insight& out) const;
    // What the key is, and whether higher keys go first.
    virtual std::string keyName() const { return "arrival (s)"; }
    virtual bool keyDescending() const { return false; }
    // The fraction of the KV capacity it keeps free when it admits (AdmissionBudget's
    // watermark): recorded with its reasons, so a wait on KV is told from one on its order.
    virtual double kvWatermark() const { return 0.0; }
    // Whether waiting requests' keys change while they wait (then the decisions that act
    // sample those the policy ranked, Decision::ranked; otherwise they are sampled when
    // they enter the queue).
    virtual bool waitingKeysVary() const { return false; }
    // Whether the key is a remaining count (it counts down a token at a time between
    // samples; Insight::generated), and whether what the policy knows of a running
    // request changes other than by counting down (a refining length predictor): then
    // every decision samples the running batch.
    virtual bool keyCountsDown() const { return false; }
    virtual bool runningStateVaries() const { return false; }
    // The rule overflowVictim follows (x: used, growth, M, and the victim's arrival for
    // EngineOverflow or its key for RankOverflow).
    virtual RuleId overflowRule() const { return RuleId::EngineOverflow; }
};

} // namespace kairos
