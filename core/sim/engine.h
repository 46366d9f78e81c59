#pragma once
// The discrete-event simulator: iteration-level (continuous) batching over an
// ExecutionModel, with KV accounting, optional chunked prefill, max_num_seqs and
// max_num_batched_tokens caps, and preemption by recompute on KV overflow.
//
// Iterations. Without chunked prefill (vLLM v0): an iteration either prefills the
// admitted requests (whole prompts, up to max_num_batched_tokens, at least one request)
// while decodes wait, or decodes every running request by one token. With chunked
// prefill: every running decode plus prefill chunks filling the rest of the token budget.
//
// KV accounting. A request holds kv = (prompt kept after eviction) + (tokens generated);
// admission reserves context + 1 (the prompt, any tokens to recompute, and the slot of
// the token its prefill emits). Each decode iteration adds one token per decoding
// request; before an iteration the engine checks that the growth fits, and otherwise
// asks the scheduler for a victim to preempt (vLLM: latest arrival first), repeatedly.
// A request alone in the engine that cannot grow can never finish: it is killed.
//
// Prefix caching (EngineLimits::prefix_caching; sim/prefix_cache.h): the KV cache is a
// pool of blocks; a request admitted with part of its context cached computes only the
// rest (its prefill's attention still covers the whole context), and shared blocks count
// once in kvUsed. Off, nothing of it exists and runs are as before, bit for bit.
//
// Skipping ahead. Between events the batch of a decode-only stretch does not change, and
// the ETE and unit models give its iteration times as an exact ramp d0 + j*dd, so the
// engine runs the whole stretch as one step: until the first request finishes, the first
// iteration boundary at or after the next arrival, the KV cache would overflow, or the
// scheduler's `hold` runs out. The RunLog records the stretch with its ramp; token times
// are the same as when stepping one iteration at a time (tests check this).
#include "exec/execution_model.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "sched/scheduler.h"
#include "sim/prefix_cache.h"

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace kairos {

// The engine's rules under vLLM v0's (model/explain.h; the others are RuleId's own).
namespace rules {
extern const RuleId kV0OverflowLatest;
extern const RuleId kV0OverflowRank;
extern const RuleId kV0CannotGrow;
} // namespace rules

// What runs the iterations of a live run: a real model on the wall clock (gpu/). The
// engine is the same for simulation and live runs, so both take the same scheduling
// decisions through the same code and write the same RunLog; with a backend, each
// iteration's duration is measured instead of computed, the clock is the wall clock
// (requests are released at their arrival times), and stretches are never skipped ahead.
// The ExecutionModel then only serves the schedulers that plan with one (EngineView::model).
class LiveBackend {
public:
    virtual ~LiveBackend() = default;
    virtual std::string describe() const = 0;
    // Seconds on the run's clock; the backend starts it at the first arrival's time.
    virtual double clock() const = 0;
    virtual void sleepUntil(double t) = 0;
    struct Chunk {
        ReqId id;
        std::int32_t from;   // offset in the request's context (prompt + generated tokens)
        std::int32_t tokens; // how many to compute now
        bool completes;      // the prefill ends with this chunk: emit a token, then evict
                             // the prompt's KV by the request's alpha
    };
    // One iteration: the chunks, and one token for each decoding request. Returns when
    // every new token exists.
    virtual void iterate(const std::vector<Chunk>& chunks, const std::vector<ReqId>& decoders,
                         const EngineView& view) = 0;
    // The request's KV is dropped (preempted, killed or finished); with `restart`, its
    // generated tokens are forgotten too.
    virtual void release(ReqId id, bool restart) = 0;
    // Whether the request's newest token ended its answer (a model's end-of-sequence
    // token, when the backend stops at it): the engine finishes it then, before the
    // workload's output length, which stays its limit.
    virtual bool stopped(ReqId) const { return false; }

    // Prefix caching on a live run (sim/prefix_cache.h): the engine's cache decides what
    // is cached and what a request finds; the backend keeps the KV of every block the
    // cache holds and gives it to the requests that find it. Called once, before the run,
    // with the cache's block size; a backend that cannot share KV says so by throwing
    // std::invalid_argument (the default).
    virtual void shareBlocks(std::int32_t /*block_size*/) {
        throw std::invalid_argument("this live backend cannot share KV blocks: run live "
                                    "with prefix caching off");
    }
    // Block `index` of request `id`'s context (tokens [index, index + 1) x block size),
    // computed by it, is now cached under `hash` (what identifies its content): keep its KV.
    virtual void cacheBlock(ReqId /*id*/, std::int32_t /*index*/, std::uint64_t /*hash*/) {}
    // The cached block `hash` was evicted: its KV may go.
    virtual void uncacheBlock(std::uint64_t /*hash*/) {}
    // Request `id` is admitted with these cached blocks (their hashes, in order) as the
    // start of its context: its KV there is theirs, and its first chunk starts after them.
    virtual void reuseBlocks(ReqId /*id*/, const std::vector<std::uint64_t>& /*hashes*/) {}
};

class Simulator final : public EngineView {
public:
    Simulator(const Simulator&) = delete; // EngineView::states_ points into st_
    Simulator& operator=(const Simulator&) = delete;
    // `w` must be sorted by arrival (Workload::sortByArrival) and outlive the simulator.
    // With `live`, iterations run on it (see LiveBackend); it must outlive the simulator.
    // `prefix_layout`: with prefix caching, the workload's prefix layout when another
    // engine (a replica of the same fleet) has built it (prefixLayout()).
    Simulator(const Workload& w, const ExecutionModel& model, Scheduler& sched, EngineLimits lim,
              LiveBackend* live = nullptr,
              std::shared_ptr<const PrefixLayout> prefix_layout = nullptr);
    std::shared_ptr<const PrefixLayout> prefixLayout() const {
        return cache_ ? cache_->layout() : nullptr;
    }
    // Runs the whole workload once; a Simulator is single-use (a second call throws).
    RunLog run();

    // A replica in a fleet (sim/fleet.h). The fleet's router places each request on one
    // replica at its arrival: every replica holds the whole workload (request ids stay the
    // fleet's), and only the requests routed to it arrive. The fleet drives the run:
    // joinFleet() before start(); then, for each arrival into the fleet, setFleetNext(t)
    // and advance(t) on every replica (each stops at its first iteration boundary at or
    // after t: a stretch never runs past an arrival into the fleet, so what the router sees
    // is each replica at an iteration boundary), route(id) on the chosen one; at the end
    // setFleetNext(inf), advance(inf) and finish(). The RunLog holds only the requests routed
    // here (in the fleet's ids). Alone, run() is start(), advance(inf) and finish().
    void joinFleet();
    void start();
    void advance(double horizon);
    RunLog finish();
    void setFleetNext(double t);
    void route(ReqId id);
    // What a router reads at a boundary: requests routed here and not finished or killed by
    // the router's time (the next arrival, setFleetNext: a replica stops at its first
    // iteration boundary at or after it, so a request that iteration finishes is still in
    // flight when the router decides);
    // context tokens waiting for admission (queued and routed-not-yet-arrived); the leading
    // prompt tokens of `id` the prefix cache holds now (0 without a cache).
    std::int64_t outstanding() const;
    std::int64_t queuedContext() const;
    std::int64_t cachedPrefix(ReqId id) const;
    // Time every Scheduler::schedule call (for benchmarks): (waiting queue length, seconds).
    void timeDecisions(bool on) { time_decisions_ = on; }
    const std::vector<std::pair<std::size_t, double>>& decisionTimes() const {
        return decision_times_;
    }
    // Record every decision with its reason, the calls and the per-request state the
    // policy decides on (RunLog::explain; model/explain.h). Off: nothing extra is built.
    void explain(bool on) { explain_ = on; }
    // false: keep no iteration records, only their digest (RunLog::IterDigest), for a
    // caller that wants the summary alone. Before run().
    void recordIterations(bool on) { record_iters_ = on; }
    // For front ends: `cancel` is polled between iterations (run() then throws
    // SimulationCancelled); `progress` receives the fraction of requests done.
    void setCancelFlag(const std::atomic<bool>* cancel) { cancel_ = cancel; }
    // Per request, context tokens whose KV arrives with it (sim/disagg.h's decode pool): at
    // its first admission they count as computed (at most all but one: the last prompt token
    // is computed here, for its logits). Must outlive the run; null: none.
    void setPreloaded(const std::vector<std::int32_t>* preloaded) { preloaded_ = preloaded; }
    void setProgress(std::atomic<double>* progress) { progress_ = progress; }
    // Live runs: each iteration's shape, its measured duration and what the execution
    // model predicts for that shape (validate's iteration-level errors: the model's own
    // error, apart from where the schedules part).
    struct LiveIteration {
        BatchShape shape;
        double measured = 0.0, predicted = 0.0;
        double gap = 0.0; // since the previous iteration ended (engine work, or idle)
    };
    const std::vector<LiveIteration>& liveIterations() const { return live_iters_; }

    // EngineView
    double now() const override { return now_; }
    const ReqList& waiting() const override { return waiting_; }
    const std::vector<ReqId>& running() const override { return running_; }
    const std::vector<ReqId>& suspended() const override { return suspended_; }
    std::int64_t kvUsed() const override { return kv_used_; }
    const EngineLimits& limits() const override { return lim_; }
    const ExecutionModel* model() const override { return &model_; }
    double nextArrival() const override;
    double lastIterationTime() const override { return last_iter_s_; }
    std::int64_t prefixHit(ReqId id) const override;
    std::int64_t prefixShared(ReqId id) const override;
    std::int64_t kvFreedBy(ReqId id) const override;
    std::int32_t kvLead() const override { return kv_lead_; }
    bool runningPrefill() const override;
    std::int64_t decodeClock() const override {
        return lim_.vllmV0Chunked() || live_ ? -1 : decode_clock_;
    }

private:
    struct Chunk {
        ReqId id;
        std::int32_t tokens;
    };

    ReqState& st(ReqId id) { return st_[static_cast<std::size_t>(id)]; }
    const ReqState& st(ReqId id) const { return st_[static_cast<std::size_t>(id)]; }
    void log(double t, ReqId id, Ev ev, std::int32_t value) {
        log_.events.push_back({t, id, ev, value});
    }
    void arriveUpTo(double t);
    // Requests this engine will see (routed ones in a fleet), and whether all are done.
    std::size_t expected() const;
    bool complete() const;
    void setKv(ReqState& s, std::int64_t kv);
    // Prefix caching: the cache's answer for `id` now (memoised until the cache changes).
    const PrefixCache::Hit& probe(ReqId id) const;
    // Tokens of the request's context whose KV is computed (what its blocks may publish);
    // -1 when its blocks hold a compressed prompt (past its prefill, fewer tokens than its
    // context): its own selection, never cached.
    std::int64_t computedTokens(const ReqState& s) const;
    void removeFrom(std::vector<ReqId>& v, ReqId id);
    bool removeWaiting(ReqId id);
    void applyDecision();
    void doAdmit(ReqId id);
    void doPreempt(ReqId id, bool restart = false);
    void doSuspend(ReqId id);
    void doResume(ReqId id);
    void doKill(ReqId id, KillCause cause);
    void doFinish(ReqId id, double t);
    // A request finished or killed at t (done_, and done_later_ in a fleet).
    void countDone(double t);
    // The next iteration's batch (chunks_, decoders_) and the decoders' sums.
    void compose();
    void composeBatch();
    // The tokens of request `id`'s prefill that a batch with `budget` tokens left gives it
    // now. Committing the batch (committing_, prefix caching): at its first chunk the
    // request looks the cache up again (lookUp), and the blocks its chunk fills are
    // registered before the step computes them, as vLLM's allocate_slots does.
    std::int32_t chunkOf(ReqId id, std::int64_t budget);
    void lookUp(ReqId id);
    // Prefix caching: the batch as it will run, committed (see chunkOf), and the blocks the
    // decoders' fed tokens fill registered (vLLM hashes decode blocks as they fill).
    void commitBatch();
    ReqId lastByArrival(const std::vector<ReqId>& ids) const; // -1 when empty
    std::int64_t growth(std::int64_t iterations) const;
    bool makeRoom();
    void runIteration();
    void warn(const std::string& w);
    // Explaining: the reason the policy gave for (act, id) in this decision, recorded in
    // the order the engine applies the actions; `payload` is what an unexplained action
    // carries (alpha of an eviction) so that a replay still reproduces it.
    void recordAction(Act act, ReqId id, std::int32_t value, double payload = 0);
    void recordEngine(Act act, ReqId id, RuleId rule, const std::array<double, kReasonNumbers>& x);
    void sampleInsight(ReqId id);
    // After a schedule() call: the call, and the states its policy decided on.
    void recordCall();

    const Workload& w_;
    const ExecutionModel& model_;
    Scheduler& sched_;
    LiveBackend* live_ = nullptr;
    std::vector<LiveBackend::Chunk> live_chunks_;
    std::vector<LiveIteration> live_iters_;
    double live_last_end_ = 0.0;
    EngineLimits lim_;
    std::int64_t capacity_ = 0;
    std::vector<ReqState> st_;
    ReqList waiting_;
    std::vector<ReqId> running_, suspended_;
    std::vector<ReqId> decoders_;
    std::vector<Chunk> chunks_;
    // Of decoders_, set by compose(): the KV tokens they hold, the fewest tokens any has
    // left to generate, and the KV one more token each adds (growth(1)). One pass over the
    // batch, where the iteration used to make four: a million-request run decodes 190
    // million tokens in 1.1 million stretches.
    std::int64_t decode_kv_ = 0, growth1_ = 0;
    std::int32_t min_remaining_ = 0;
    // EngineRules::VllmV0: a block that must be free beyond growth1_ (the last request
    // vLLM checks grows into no new block, yet can_append_slots asks for one free); else 0.
    std::int64_t check_block_ = 0;
    std::vector<ReqId> by_arrival_; // VllmV0 with chunked prefill: the batch, in vLLM's order
    // VllmV0: the step (steps_) at which each request was last admitted; those admitted
    // at this step are vLLM's new prefills, scheduled after the running requests.
    std::vector<std::uint32_t> admit_step_;
    // Running requests in their prefill (runningPrefill(), asked before every decision).
    std::int64_t prefilling_ = 0;
    std::vector<ReqId> finished_now_;
    double now_ = 0.0;
    std::size_t next_ = 0; // first request that has not arrived
    std::size_t done_ = 0; // finished or killed
    std::int64_t kv_used_ = 0;
    Decision dec_;
    RunLog log_;
    bool ran_ = false;
    std::chrono::steady_clock::time_point t_start_;
    std::uint32_t steps_ = 0;
    std::int64_t decode_clock_ = 0; // decodeClock(): tokens each decoder got, summed
    // In a fleet: the requests routed here, in arrival order (next_ indexes them), and the
    // next arrival into the fleet not routed yet (infinity when all are).
    bool fleet_ = false;
    std::vector<ReqId> routed_;
    // Context tokens of the waiting requests, and prompt tokens routed here not arrived yet
    // (queuedContext(): least_kv's measure, kept as requests come and go).
    std::int64_t waiting_context_ = 0, routed_context_ = 0;
    double fleet_next_ = std::numeric_limits<double>::infinity();
    // In a fleet: the times of finishes and kills later than fleet_next_ (the iteration a
    // replica stopped after ran past the router's time): in flight for outstanding().
    std::vector<double> done_later_;
    bool made_room_ = false; // this iteration's makeRoom() preempted or killed
    double last_iter_s_ = 0;
    bool time_decisions_ = false;
    std::vector<std::pair<std::size_t, double>> decision_times_;
    long idle_rounds_ = 0; // decisions in a row that changed state but started nothing
    std::int64_t too_big_ = 0, too_big_need_ = 0; // requests killed for their size
    bool explain_ = false;
    bool record_iters_ = true;
    // The KV after the last stretch (RunLog::kv_idle), logged when the next starts later.
    RunLog::KvIdle after_last_{-1.0, 0, 0};
    bool running_vary_ = false, waiting_vary_ = false; // sched_'s, when explaining
    std::vector<std::int64_t> last_insight_;           // per request: its latest sample, -1: none
    // Per request, from its latest sample: the tokens it had generated then and how many
    // more before a running request is sampled again (recordCall). Kept beside the id so that
    // the check at each decision reads no sample: those lie scattered in a long vector, and
    // reading one per running request per decision was most of what explaining cost a
    // refining predictor's run.
    struct SampleDue {
        std::int32_t generated = 0;
        double margin = 0;
    };
    std::vector<SampleDue> sample_due_;
    std::vector<char> why_used_; // reasons of this decision already matched
    std::size_t why_next_ = 0;
    const std::atomic<bool>* cancel_ = nullptr;
    std::atomic<double>* progress_ = nullptr;
    // Prefix caching (null when off).
    std::unique_ptr<PrefixCache> cache_;
    // KV slots a request holds beyond its computed context (EngineView::kvLead): 1, or 0
    // with prefix caching.
    std::int32_t kv_lead_ = 1;
    bool committing_ = false;
    const std::vector<std::int32_t>* preloaded_ = nullptr;
    struct Probe {
        std::uint64_t version = ~0ULL;
        std::int64_t context = -1;
        PrefixCache::Hit hit;
    };
    mutable std::vector<Probe> probes_;
};

// Thrown by Simulator::run when its cancel flag is set.
struct SimulationCancelled : std::runtime_error {
    SimulationCancelled() : std::runtime_error("simulation cancelled") {}
};

// Thrown by Simulator::run when nothing runs, nothing can arrive, and the scheduler leaves
// requests waiting or suspended: a bug in the scheduler (a logic_error: "internal error").
struct SchedulerStall : std::logic_error {
    using std::logic_error::logic_error;
};

// Convenience: runs a fresh Simulator.
RunLog simulate(const Workload& w, const ExecutionModel& model, Scheduler& sched,
                const EngineLimits& lim);

} // namespace kairos
