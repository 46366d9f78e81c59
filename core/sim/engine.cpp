#include "sim/engine.h"

#include "model/vidur_tables.h"
#include "util/huge_pages.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kairos {

// The engine's own rules under vLLM v0's (EngineRules::VllmV0), registered as the program
// starts: its overflow check asks for one free block more when the last request it checks
// grows into none (`check`: that block, 0 when it grows).
namespace rules {
namespace {
// An overflow rule under vLLM v0's: its numbers used, growth, M, the victim's `victim`
// (its arrival or its key), check.
RuleId overflowV0(const char* code, const char* name, const char* victim, const char* text) {
    return registerRule({code, name, RuleVars{"used", "growth", "M", victim, "check"}, text, true,
                         [](const double* x) { return x[0] + x[1] + x[4] > x[2]; }});
}
} // namespace
const RuleId kV0OverflowLatest = overflowV0(
    "overflow.latest.vllm_v0",
    "overflow (vLLM v0): used + growth + check > M, the latest arrival preempted", "arrival",
    "the next iteration's KV growth, and the free block vLLM's can_append_slots asks of the "
    "last request it checks, do not fit; the most recently arrived running request is "
    "preempted (it will recompute)");
const RuleId kV0OverflowRank = overflowV0(
    "overflow.rank.vllm_v0",
    "overflow (vLLM v0): used + growth + check > M, the worst-ranked preempted", "key",
    "the next iteration's KV growth, and the free block vLLM's can_append_slots asks of the "
    "last request it checks, do not fit; the policy gives up the request it ranks last");
const RuleId kV0CannotGrow = registerRule(
    {"cannot_grow.vllm_v0", "cannot_grow (vLLM v0): alone, used + growth + check > M",
     RuleVars{"used", "growth", "M", "check"},
     "the only request in the engine cannot pass vLLM's check for its next token (vLLM "
     "would preempt it and admit it again forever): it is killed",
     true, [](const double* x) { return x[0] + x[1] + x[3] > x[2]; }});
} // namespace rules

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxWarnings = 50;
} // namespace

Simulator::Simulator(const Workload& w, const ExecutionModel& model, Scheduler& sched,
                     EngineLimits lim, LiveBackend* live,
                     std::shared_ptr<const PrefixLayout> prefix_layout)
    : w_(w), model_(model), sched_(sched), live_(live), lim_(lim) {
    if (live_) lim_.skip_ahead = false; // every live iteration is measured
    if (lim_.kv_capacity_tokens <= 0) throw std::invalid_argument("KV capacity must be > 0 tokens");
    if (lim_.block_size < 1) throw std::invalid_argument("block size must be >= 1");
    if (lim_.max_num_seqs < 1) throw std::invalid_argument("max_num_seqs must be >= 1");
    if (lim_.max_num_batched_tokens < 1)
        throw std::invalid_argument("max_num_batched_tokens must be >= 1");
    if (w_.requests.size() > static_cast<std::size_t>(kMaxRequests))
        throw std::invalid_argument("a run takes at most " + std::to_string(kMaxRequests) +
                                    " requests; this workload has " +
                                    std::to_string(w_.requests.size()));
    for (std::size_t i = 1; i < w_.requests.size(); ++i)
        if (w_.requests[i].arrival < w_.requests[i - 1].arrival)
            throw std::invalid_argument("workload is not sorted by arrival time");
    capacity_ = kvCapacity();
    if (lim_.prefix_caching) {
        if (lim_.block_size < 2)
            throw std::invalid_argument("prefix caching shares whole KV blocks: the block size "
                                        "must be >= 2 tokens (vLLM uses 16)");
        cache_ = std::make_unique<PrefixCache>(lim_.block_size, capacity_ / lim_.block_size,
                                               w_.requests, std::move(prefix_layout));
        probes_.resize(w_.requests.size());
        kv_lead_ = 0;
        if (live_) {
            live_->shareBlocks(lim_.block_size);
            cache_->onCached([live = live_](ReqId id, std::int32_t index, std::uint64_t hash) {
                live->cacheBlock(id, index, hash);
            });
            cache_->onEvicted([live = live_](std::uint64_t hash) { live->uncacheBlock(hash); });
        }
    }
    st_.reserve(w_.requests.size());
    adviseHugePages(st_); // before it is written (util/huge_pages.h)
    st_.resize(w_.requests.size());
    states_ = st_.data(); // never resized again
    waiting_.resize(w_.requests.size());
    for (std::size_t i = 0; i < st_.size(); ++i) {
        st_[i].req = &w_.requests[i];
        st_[i].id = static_cast<ReqId>(i);
    }
}

double Simulator::nextArrival() const {
    if (!fleet_) return next_ < w_.requests.size() ? w_.requests[next_].arrival : kInf;
    const double own = next_ < routed_.size()
                           ? w_.requests[static_cast<std::size_t>(routed_[next_])].arrival
                           : kInf;
    return std::min(own, fleet_next_);
}

void Simulator::joinFleet() {
    if (ran_) throw std::logic_error("Simulator::joinFleet: before the run only");
    fleet_ = true;
    fleet_next_ = w_.requests.empty() ? kInf : w_.requests.front().arrival;
}

void Simulator::route(ReqId id) {
    if (!fleet_) throw std::logic_error("Simulator::route: not in a fleet");
    routed_.push_back(id);
    routed_context_ += w_.requests[static_cast<std::size_t>(id)].prompt_tokens;
}

void Simulator::setFleetNext(double t) {
    fleet_next_ = t;
    done_later_.erase(
        std::remove_if(done_later_.begin(), done_later_.end(), [t](double x) { return x <= t; }),
        done_later_.end());
}

void Simulator::countDone(double t) {
    ++done_;
    if (fleet_ && t > fleet_next_) done_later_.push_back(t);
}

std::size_t Simulator::expected() const {
    return fleet_ ? routed_.size() : w_.requests.size();
}

bool Simulator::complete() const {
    return done_ >= expected() && (!fleet_ || fleet_next_ == kInf);
}

std::int64_t Simulator::outstanding() const {
    return static_cast<std::int64_t>(expected() - done_ + done_later_.size());
}

std::int64_t Simulator::queuedContext() const {
    return waiting_context_ + routed_context_;
}

std::int64_t Simulator::cachedPrefix(ReqId id) const {
    if (!cache_) return 0;
    const Request& r = w_.requests[static_cast<std::size_t>(id)];
    return std::int64_t(cache_->probe(id, r.prompt_tokens).blocks) * lim_.block_size;
}

const PrefixCache::Hit& Simulator::probe(ReqId id) const {
    Probe& p = probes_[static_cast<std::size_t>(id)];
    const std::int64_t context = state(id).context();
    if (p.version != cache_->version() || p.context != context) {
        p.hit = cache_->probe(id, context);
        p.version = cache_->version();
        p.context = context;
    }
    return p.hit;
}

std::int64_t Simulator::prefixHit(ReqId id) const {
    return cache_ ? std::int64_t(probe(id).blocks) * lim_.block_size : 0;
}

std::int64_t Simulator::prefixShared(ReqId id) const {
    return cache_ ? std::int64_t(probe(id).referenced) * lim_.block_size : 0;
}

std::int64_t Simulator::kvFreedBy(ReqId id) const {
    return cache_ ? cache_->exclusiveBlocks(id) * lim_.block_size : state(id).alloc;
}

bool Simulator::runningPrefill() const {
    assert(prefilling_ == std::count_if(running_.begin(), running_.end(),
                                        [&](ReqId id) { return state(id).needsPrefill(); }));
    return prefilling_ > 0;
}

std::int64_t Simulator::computedTokens(const ReqState& s) const {
    // In prefill: the cached part and the chunks done; after it: the context but the newest
    // token, whose KV the next decode step computes.
    if (s.needsPrefill()) return std::int64_t(s.cached) + s.prefilled;
    if (s.kv - kv_lead_ + 1 < s.context()) return -1; // compressed by alpha
    return std::max<std::int64_t>(0, s.kv - kv_lead_);
}

void Simulator::warn(const std::string& w) {
    if (log_.warnings.size() < kMaxWarnings) log_.warnings.push_back(w);
}

void Simulator::recordAction(Act act, ReqId id, std::int32_t value, double payload) {
    // The policy's reasons usually come in the order of its actions: look from the last
    // match on, then from the start.
    const std::size_t n = dec_.why.size();
    Reason r;
    bool found = false;
    for (std::size_t k = 0; k < n && !found; ++k) {
        const std::size_t i = (why_next_ + k) % n;
        const Reason& c = dec_.why[i];
        if (why_used_[i] || c.act != act || c.req != id) continue;
        why_used_[i] = 1;
        why_next_ = i + 1;
        r = c;
        found = true;
    }
    if (!found) {
        r.req = id;
        r.act = act;
        r.rule = RuleId::Unexplained;
        r.x[0] = payload;
    }
    r.t = now_;
    r.call = static_cast<std::uint32_t>(log_.explain.calls.size() - 1);
    r.value = value;
    log_.explain.reasons.push_back(r);
}

void Simulator::recordEngine(Act act, ReqId id, RuleId rule,
                             const std::array<double, kReasonNumbers>& x) {
    Reason r;
    r.t = now_;
    r.call =
        static_cast<std::uint32_t>(log_.explain.calls.empty() ? 0 : log_.explain.calls.size() - 1);
    r.req = id;
    r.act = act;
    r.rule = rule;
    r.x = x;
    if (act == Act::Kill) r.value = static_cast<std::int32_t>(KillCause::CannotGrow);
    log_.explain.reasons.push_back(r);
}

void Simulator::sampleInsight(ReqId id) {
    Insight in;
    sched_.inspect(*this, id, in);
    in.generated = st(id).generated;
    std::int64_t& last = last_insight_[static_cast<std::size_t>(id)];
    if (last >= 0 && log_.explain.insights[static_cast<std::size_t>(last)].sameAs(
                         in, log_.explain.key_counts_down))
        return;
    in.t = now_;
    in.req = id;
    last = static_cast<std::int64_t>(log_.explain.insights.size());
    log_.explain.insights.push_back(in);
    // Sampled again once it has generated max(8 tokens, 5 % of its predicted total) more.
    const double total =
        std::isfinite(in.predicted) ? in.predicted + std::max(0, in.generated) : 0.0;
    sample_due_[static_cast<std::size_t>(id)] = {in.generated, std::max(8.0, 0.05 * total)};
}

void Simulator::recordCall() {
    log_.explain.calls.push_back({now_, dec_.hold, dec_.wake_at, dec_.restart});
    // What the policy decided on: the running batch where its predictions are refined,
    // and the queue at the decisions that act where its keys move with the clock (between
    // samples a remaining count counts down: Insight::generated).
    if (running_vary_) {
        // A refining predictor's estimate is looked at again once the request has generated
        // max(8 tokens, 5 % of its predicted total) since its last sample: its course, at a
        // bounded cost per token.
        for (ReqId id : running_) {
            if (last_insight_[static_cast<std::size_t>(id)] >= 0) {
                const SampleDue& due = sample_due_[static_cast<std::size_t>(id)];
                if (st(id).generated - due.generated < due.margin) continue;
            }
            sampleInsight(id);
        }
    }
    if (waiting_vary_ && !dec_.why.empty())
        for (ReqId id : dec_.ranked) {
            const Phase ph = st(id).phase;
            if (ph == Phase::Waiting || ph == Phase::Suspended) sampleInsight(id);
        }
}

void Simulator::arriveUpTo(double t) {
    while (true) {
        ReqId id;
        if (!fleet_) {
            if (next_ >= w_.requests.size() || w_.requests[next_].arrival > t) break;
            id = static_cast<ReqId>(next_++);
        } else {
            if (next_ >= routed_.size() ||
                w_.requests[static_cast<std::size_t>(routed_[next_])].arrival > t)
                break;
            id = routed_[next_++];
            routed_context_ -= w_.requests[static_cast<std::size_t>(id)].prompt_tokens;
        }
        st(id).phase = Phase::Waiting;
        waiting_.pushBack(id);
        waiting_context_ += st(id).context();
        log(w_.requests[static_cast<std::size_t>(id)].arrival, id, Ev::Arrive,
            w_.requests[static_cast<std::size_t>(id)].prompt_tokens);
        if (const auto& b = w_.requests[static_cast<std::size_t>(id)].budget_s)
            log(w_.requests[static_cast<std::size_t>(id)].arrival, id, Ev::Budget,
                static_cast<std::int32_t>(std::min(2.0e9, std::round(*b * 1e3))));
        sched_.onEnqueue(*this, id);
        if (explain_) {
            // Sampled at its arrival (a stretch's arrivals are seen at its end).
            const double at = now_;
            now_ = w_.requests[static_cast<std::size_t>(id)].arrival;
            sampleInsight(id);
            now_ = at;
        }
    }
}

void Simulator::setKv(ReqState& s, std::int64_t kv) {
    if (cache_) {
        if (kv == 0) {
            cache_->release(s.id, computedTokens(s));
        } else {
            const std::int64_t evicted = explain_ ? cache_->evictions() : 0,
                               idle = explain_ ? cache_->idleCachedBlocks() : 0;
            cache_->resize(s.id, kv);
            // --explain: the cached blocks its growth took back (the least recently let go).
            if (explain_ && cache_->evictions() > evicted)
                recordEngine(Act::Uncache, s.id, RuleId::CacheEvict,
                             {double(cache_->evictions() - evicted), double(idle),
                              double(cache_->unusedBlocks())});
        }
        kv_used_ = cache_->referencedBlocks() * lim_.block_size;
        s.alloc = kvCost(kv);
        s.kv = kv;
        return;
    }
    const std::int64_t alloc = kvCost(kv);
    kv_used_ += alloc - s.alloc;
    s.alloc = alloc;
    s.kv = kv;
}

void Simulator::removeFrom(std::vector<ReqId>& v, ReqId id) {
    auto it = std::find(v.begin(), v.end(), id);
    assert(it != v.end());
    v.erase(it);
}

bool Simulator::removeWaiting(ReqId id) {
    if (!waiting_.remove(id)) return false;
    waiting_context_ -= st(id).context();
    return true;
}

void Simulator::doAdmit(ReqId id) {
    ReqState& s = st(id);
    if (s.phase != Phase::Waiting) {
        warn("admit of a request that is not waiting (req " + std::to_string(id) + ")");
        return;
    }
    const std::int64_t reserve = s.context() + kv_lead_;
    // A prompt to be compressed (alpha > 0) is computed whole, in blocks of its own: its
    // compressed KV replaces them, and a shared prefix could not be replaced.
    const PrefixCache::Hit hit = cache_ && !(s.alpha > 0) ? probe(id) : PrefixCache::Hit{};
    if (kv_used_ + kvCost(reserve) - std::int64_t(hit.referenced) * lim_.block_size > capacity_ ||
        static_cast<std::int32_t>(running_.size()) >= lim_.max_num_seqs) {
        warn("admission refused: no room for req " + std::to_string(id));
        return;
    }
    removeWaiting(id);
    if (!admit_step_.empty()) admit_step_[static_cast<std::size_t>(id)] = steps_;
    const bool first = !s.admitted;
    s.admitted = true;
    log(now_, id, first ? Ev::Admit : Ev::Resume, s.generated);
    s.phase = Phase::Running;
    s.cached = hit.blocks * lim_.block_size;
    if (preloaded_ && first)
        s.cached = std::max<std::int32_t>(
            s.cached,
            std::min<std::int32_t>((*preloaded_)[static_cast<std::size_t>(id)], s.context() - 1));
    s.prefill_target = s.context() - s.cached;
    s.prefilled = 0;
    if (cache_) {
        // setKv allocates the rest; what it found is logged at its first chunk (lookUp).
        cache_->admit(id, hit.blocks);
        if (live_ && hit.blocks > 0) live_->reuseBlocks(id, cache_->blockHashes(id, hit.blocks));
    }
    setKv(s, reserve);
    running_.push_back(id);
    prefilling_ += s.needsPrefill();
}

void Simulator::doPreempt(ReqId id, bool restart) {
    ReqState& s = st(id);
    if (s.phase == Phase::Running) {
        removeFrom(running_, id);
        prefilling_ -= s.needsPrefill();
    } else if (s.phase == Phase::Suspended)
        removeFrom(suspended_, id);
    else
        return;
    setKv(s, 0);
    if (live_) live_->release(id, restart);
    s.prefill_target = s.prefilled = 0;
    s.cached = 0;
    s.phase = Phase::Waiting;
    ++s.preemptions;
    waiting_.pushFront(id);
    log(now_, id, Ev::Preempt, s.generated);
    if (restart) s.generated = 0; // the tokens are lost: they will be generated again
    waiting_context_ += s.context();
    sched_.onEnqueue(*this, id);
    if (explain_) sampleInsight(id);
}

void Simulator::doSuspend(ReqId id) {
    ReqState& s = st(id);
    if (s.phase != Phase::Running) return;
    removeFrom(running_, id);
    prefilling_ -= s.needsPrefill();
    s.phase = Phase::Suspended;
    ++s.suspensions;
    suspended_.push_back(id);
    log(now_, id, Ev::Suspend, s.generated);
    if (explain_) sampleInsight(id);
}

void Simulator::doResume(ReqId id) {
    ReqState& s = st(id);
    if (s.phase != Phase::Suspended) return;
    if (static_cast<std::int32_t>(running_.size()) >= lim_.max_num_seqs) {
        warn("resume refused: max_num_seqs reached");
        return;
    }
    removeFrom(suspended_, id);
    s.phase = Phase::Running;
    running_.push_back(id);
    prefilling_ += s.needsPrefill();
    log(now_, id, Ev::Resume, s.generated);
}

void Simulator::doKill(ReqId id, KillCause cause) {
    ReqState& s = st(id);
    switch (s.phase) {
    case Phase::Running:
        removeFrom(running_, id);
        prefilling_ -= s.needsPrefill();
        break;
    case Phase::Suspended:
        removeFrom(suspended_, id);
        break;
    case Phase::Waiting:
        removeWaiting(id);
        break;
    default:
        return;
    }
    setKv(s, 0);
    if (live_) live_->release(id, false);
    s.phase = Phase::Killed;
    countDone(now_);
    if (cause == KillCause::NeverFits || cause == KillCause::CannotGrow) {
        ++too_big_;
        too_big_need_ = std::max<std::int64_t>(too_big_need_, std::int64_t(s.req->prompt_tokens) +
                                                                  s.req->output_tokens);
    }
    log(now_, id, Ev::KillCause, static_cast<std::int32_t>(cause));
    log(now_, id, Ev::Kill, s.generated);
}

void Simulator::doFinish(ReqId id, double t) {
    ReqState& s = st(id);
    removeFrom(running_, id);
    prefilling_ -= s.needsPrefill();
    setKv(s, 0);
    if (live_) live_->release(id, false);
    s.phase = Phase::Finished;
    countDone(t);
    log(t, id, Ev::Finish, s.generated);
}

void Simulator::applyDecision() {
    if (explain_) {
        // Every action with its reason, in the order applied below (what a replay issues).
        why_used_.assign(dec_.why.size(), 0);
        why_next_ = 0;
        for (const auto& [id, k] : dec_.dispatch) recordAction(Act::Dispatch, id, k);
        for (const auto& k : dec_.kill)
            recordAction(Act::Kill, k.id, static_cast<std::int32_t>(k.cause));
        for (ReqId id : dec_.preempt) recordAction(Act::Preempt, id, 0);
        for (ReqId id : dec_.suspend) recordAction(Act::Suspend, id, 0);
        for (ReqId id : dec_.resume) recordAction(Act::Resume, id, 0);
        for (const auto& [id, a] : dec_.evict) recordAction(Act::Evict, id, 0, a);
        for (ReqId id : dec_.admit) recordAction(Act::Admit, id, 0);
    }
    for (const auto& [id, k] : dec_.dispatch) log(now_, id, Ev::Dispatch, k);
    for (const auto& k : dec_.kill) doKill(k.id, k.cause);
    for (ReqId id : dec_.preempt) doPreempt(id, dec_.restart);
    for (ReqId id : dec_.suspend) doSuspend(id);
    for (ReqId id : dec_.resume) doResume(id);
    for (const auto& [id, a] : dec_.evict) {
        ReqState& s = st(id);
        // The ratio applies when the prompt's KV is compressed at the end of its prefill.
        if (s.phase == Phase::Running && s.needsPrefill() && s.cached > 0 && a > 0) {
            // Its prefix comes from the cache, shared: it cannot be compressed away.
            warn("eviction ratio not applied to req " + std::to_string(id) +
                 ": its prompt's prefix is shared in the prefix cache");
            continue;
        }
        if (s.phase == Phase::Waiting || (s.phase == Phase::Running && s.needsPrefill()))
            s.alpha = std::clamp(a, 0.0, 1.0);
    }
    for (ReqId id : dec_.admit) doAdmit(id);
}

void Simulator::compose() {
    composeBatch();
    decode_kv_ = 0;
    growth1_ = 0;
    min_remaining_ = std::numeric_limits<std::int32_t>::max();
    for (ReqId id : decoders_) {
        const ReqState& s = st_[static_cast<std::size_t>(id)];
        decode_kv_ += s.kv + 1 - kv_lead_; // the step attends over the fed token too
        min_remaining_ = std::min(min_remaining_, s.remaining());
        growth1_ += kvCost(s.kv + 1) - s.alloc; // growth(1), term by term
    }
    check_block_ = 0;
    if (lim_.rules == EngineRules::VllmV0 && lim_.block_size > 1) {
        // vLLM checks each request of the iteration in turn for one free block and takes a
        // block for those that grow into one: all pass iff the free blocks cover the growth
        // and, when the last one checked grows into none, one block more.
        ReqId last = -1;
        if (lim_.chunked_prefill) {
            if (!by_arrival_.empty()) last = by_arrival_.back();
        } else if (!decoders_.empty()) {
            last = lastByArrival(decoders_);
        }
        if (last >= 0) {
            const ReqState& s = st(last);
            const bool grows = !s.needsPrefill() && kvCost(s.kv + 1) > s.alloc;
            if (!grows) check_block_ = lim_.block_size;
        }
    }
}

ReqId Simulator::lastByArrival(const std::vector<ReqId>& ids) const {
    ReqId last = -1;
    for (ReqId id : ids)
        if (last < 0 || st(id).req->arrival > st(last).req->arrival ||
            (st(id).req->arrival == st(last).req->arrival && id > last))
            last = id;
    return last;
}

void Simulator::composeBatch() {
    decoders_.clear();
    chunks_.clear();
    if (!lim_.chunked_prefill) {
        if (prefilling_ > 0) {
            std::int64_t budget = lim_.max_num_batched_tokens;
            for (ReqId id : running_) {
                const ReqState& s = st(id);
                if (!s.needsPrefill()) continue;
                if (!chunks_.empty() && s.prefill_target - s.prefilled > budget) break;
                const std::int32_t rest = chunkOf(id, std::numeric_limits<std::int32_t>::max());
                chunks_.push_back({id, rest});
                budget -= rest;
            }
        } else {
            decoders_ = running_;
        }
        return;
    }
    if (lim_.rules == EngineRules::VllmV0) {
        // vLLM v0 (_schedule_running, chunked): the running requests in arrival order take
        // the budget, a decode one token, a prefill the rest of its prompt or what is left;
        // the first that gets nothing ends the iteration's batch (those after it wait).
        // Those admitted at this step are vLLM's new prefills (_schedule_prefills), after
        // the running ones, in the order the policy admitted them; the running ones are
        // sorted by arrival (a stable sort, as Python's: ties keep the running order).
        by_arrival_ = running_;
        const auto fresh = [&](ReqId id) {
            return admit_step_[static_cast<std::size_t>(id)] == steps_;
        };
        const auto old_end = std::stable_partition(by_arrival_.begin(), by_arrival_.end(),
                                                   [&](ReqId id) { return !fresh(id); });
        std::stable_sort(by_arrival_.begin(), old_end,
                         [&](ReqId a, ReqId b) { return st(a).req->arrival < st(b).req->arrival; });
        std::int64_t left = lim_.max_num_batched_tokens;
        std::size_t in = 0;
        for (; in < by_arrival_.size() && left > 0; ++in) {
            const ReqId id = by_arrival_[in];
            const ReqState& s = st(id);
            if (!s.needsPrefill()) {
                decoders_.push_back(id);
                --left;
                continue;
            }
            const std::int32_t take = chunkOf(id, left);
            chunks_.push_back({id, take});
            left -= take;
        }
        by_arrival_.resize(in); // those in the batch, in the order vLLM checks them
        return;
    }
    std::int64_t budget = lim_.max_num_batched_tokens;
    for (ReqId id : running_)
        if (!st(id).needsPrefill()) decoders_.push_back(id);
    budget -= static_cast<std::int64_t>(decoders_.size());
    for (ReqId id : running_) {
        if (budget <= 0) break;
        if (!st(id).needsPrefill()) continue;
        const std::int32_t take = chunkOf(id, budget);
        chunks_.push_back({id, take});
        budget -= take;
    }
}

std::int32_t Simulator::chunkOf(ReqId id, std::int64_t budget) {
    if (committing_ && st(id).prefilled == 0) lookUp(id);
    const ReqState& s = st(id);
    const auto take =
        static_cast<std::int32_t>(std::min<std::int64_t>(budget, s.prefill_target - s.prefilled));
    // Registered now (a later request of this step finds them); a live backend copies a
    // block's KV as it is registered, so there they wait for the step (runIteration).
    if (committing_ && !live_) cache_->publish(id, std::int64_t(s.cached) + s.prefilled + take);
    return take;
}

void Simulator::lookUp(ReqId id) {
    // vLLM looks a request up when it first schedules tokens of it: here it was admitted
    // (and charged) with what it found then, possibly iterations ago (a chunked prefill
    // ahead of it took the budget); blocks registered since extend its hit.
    ReqState& s = st(id);
    // KV that arrived with it (a disaggregated decode pool) is not a cache hit.
    if (preloaded_ && s.preemptions == 0 && (*preloaded_)[static_cast<std::size_t>(id)] > 0) return;
    if (!(s.alpha > 0)) {
        const PrefixCache::Hit& hit = probe(id);
        if (std::int64_t(hit.blocks) * lim_.block_size > s.cached) {
            cache_->extend(id, hit.blocks);
            s.cached = hit.blocks * lim_.block_size;
            s.prefill_target = s.context() - s.cached;
            kv_used_ = cache_->referencedBlocks() * lim_.block_size;
            if (live_) live_->reuseBlocks(id, cache_->blockHashes(id, hit.blocks));
        }
    }
    if (s.cached <= 0) return;
    log(now_, id, Ev::CacheHit, s.cached);
    if (explain_)
        recordEngine(
            Act::Reuse, id, RuleId::CacheHit,
            {double(s.cached), double(s.context()), double(lim_.block_size),
             double(cache_->sharedBlocks(id, s.cached / lim_.block_size) * lim_.block_size)});
}

void Simulator::commitBatch() {
    // vLLM schedules the running requests before the waiting ones: the decoders' blocks
    // are registered before a new request looks the cache up. First what every decoder
    // has computed (a skipped-ahead stretch registers nothing as it runs: nobody looks
    // meanwhile), then, in this step's batch, the block its fed token fills.
    for (ReqId id : running_) {
        const ReqState& s = st(id);
        if (!s.needsPrefill() && computedTokens(s) >= 0) cache_->publish(id, computedTokens(s));
    }
    if (!live_)
        for (ReqId id : decoders_) {
            const ReqState& s = st(id);
            if (computedTokens(s) >= 0) cache_->publish(id, s.context());
        }
    committing_ = true;
    composeBatch();
    committing_ = false;
}

std::int64_t Simulator::growth(std::int64_t iterations) const {
    if (lim_.block_size <= 1) return iterations * static_cast<std::int64_t>(decoders_.size());
    std::int64_t g = 0;
    for (ReqId id : decoders_) {
        const ReqState& s = st_[static_cast<std::size_t>(id)];
        g += kvCost(s.kv + iterations) - s.alloc;
    }
    return g;
}

bool Simulator::makeRoom() {
    compose();
    made_room_ = false;
    while (!running_.empty() && kv_used_ + growth1_ + check_block_ > capacity_) {
        made_room_ = true;
        const ReqId victim = sched_.overflowVictim(*this);
        const Phase ph = st(victim).phase;
        if (explain_ && (ph == Phase::Suspended || ph == Phase::Running)) {
            const bool dies = ph == Phase::Running && running_.size() == 1 && suspended_.empty();
            RuleId rule = dies ? RuleId::CannotGrow : sched_.overflowRule();
            std::array<double, kReasonNumbers> x{double(kv_used_), double(growth1_),
                                                 double(capacity_)};
            if (rule == RuleId::RankOverflow) {
                Insight in;
                sched_.inspect(*this, victim, in);
                x[3] = in.key;
            } else if (rule == RuleId::EngineOverflow) {
                x[3] = st(victim).req->arrival;
            }
            if (lim_.rules == EngineRules::VllmV0) {
                x[rule == RuleId::CannotGrow ? 3 : 4] = double(check_block_);
                rule = rule == RuleId::CannotGrow       ? rules::kV0CannotGrow
                       : rule == RuleId::RankOverflow   ? rules::kV0OverflowRank
                       : rule == RuleId::EngineOverflow ? rules::kV0OverflowLatest
                                                        : rule;
            }
            recordEngine(dies ? Act::Kill : Act::Preempt, victim, rule, x);
        }
        if (ph == Phase::Suspended) {
            doPreempt(victim); // releases the KV it kept
        } else if (ph != Phase::Running) {
            throw std::logic_error(
                "overflowVictim named a request that is neither running nor suspended");
        } else if (running_.size() == 1 && suspended_.empty()) {
            doKill(victim, KillCause::CannotGrow);
        } else {
            doPreempt(victim);
        }
        compose();
    }
    return !running_.empty();
}

void Simulator::runIteration() {
    if (!makeRoom()) return;
    if (cache_) commitBatch();
    BatchShape shape;
    for (const Chunk& c : chunks_) {
        ++shape.prefill_seqs;
        shape.prefill_tokens += c.tokens;
        // Attention over the cached prefix too: (h + L)^2 - h^2 for a chunk of L tokens after
        // h cached ones (the L^2 of the quadratic term, extended as one chunk's share).
        const double h = st(c.id).cached;
        shape.prefill_tokens_sq += h > 0 ? (h + c.tokens) * (h + c.tokens) - h * h
                                         : static_cast<double>(c.tokens) * c.tokens;
        shape.prefill_chunk_sq += static_cast<double>(c.tokens) * c.tokens;
        constexpr std::int64_t r = VidurTables::kKvStep;
        const std::int64_t past = std::int64_t(st(c.id).cached) + st(c.id).prefilled;
        shape.prefill_kv_r64 += (past + r - 1) / r * r;
    }
    shape.decode_seqs = static_cast<std::int32_t>(decoders_.size());
    shape.decode_kv_tokens = decode_kv_;
    const std::int32_t min_remaining = min_remaining_;

    IterSpan sp;
    if (live_) {
        // The iteration runs now on the real model; its duration is what it took.
        live_chunks_.clear();
        for (const Chunk& c : chunks_) {
            const ReqState& s = st(c.id);
            live_chunks_.push_back({c.id, s.cached + s.prefilled, c.tokens,
                                    s.prefilled + c.tokens >= s.prefill_target});
        }
        now_ = std::max(now_, live_->clock());
        sp.t0 = now_;
        live_->iterate(live_chunks_, decoders_, *this);
        sp.d0 = std::max(0.0, live_->clock() - sp.t0);
        const double gap = live_iters_.empty() ? 0.0 : sp.t0 - live_last_end_;
        live_iters_.push_back({shape, sp.d0, model_.iterationTime(shape), gap});
        live_last_end_ = sp.t0 + sp.d0;
    } else {
        sp.t0 = now_;
        sp.d0 = model_.iterationTime(shape);
    }
    sp.n = 1;
    sp.dd = 0.0;
    sp.decode_seqs = shape.decode_seqs;
    sp.prefill_seqs = shape.prefill_seqs;
    sp.prefill_tokens = static_cast<std::int32_t>(shape.prefill_tokens);

    // KV or seats freed by this decision (preempted, suspended or killed requests) or for
    // room just now are unseen by the scheduler's `hold`: this iteration runs alone, so it
    // is asked again after it, as when stepping (tst_liveness: skipped = stepped).
    const bool freed =
        made_room_ || !dec_.preempt.empty() || !dec_.suspend.empty() || !dec_.kill.empty();
    if (chunks_.empty() && lim_.skip_ahead && dec_.hold > 1 && !decoders_.empty() && !freed) {
        if (const auto ramp = model_.decodeRamp(shape.decode_seqs, shape.decode_kv_tokens)) {
            std::int64_t n = std::min<std::int64_t>({dec_.hold, min_remaining, ramp->exact_for});
            // KV: the largest n whose growth still fits.
            // (VllmV0: less the block vLLM's check asks for at every step of the stretch,
            // so that a stretch never runs past where stepping would preempt.)
            const std::int64_t room =
                capacity_ - kv_used_ -
                (lim_.rules == EngineRules::VllmV0 && lim_.block_size > 1 ? lim_.block_size : 0);
            if (lim_.block_size <= 1) {
                n = std::min<std::int64_t>(n, room / static_cast<std::int64_t>(decoders_.size()));
            } else if (growth(n) > room) {
                std::int64_t lo = 1, hi = n; // growth(lo) fits, growth(hi) does not
                while (hi - lo > 1) {
                    const std::int64_t mid = lo + (hi - lo) / 2;
                    (growth(mid) <= room ? lo : hi) = mid;
                }
                n = lo;
            }
            sp.d0 = ramp->d0;
            sp.dd = ramp->dd;
            // Stop at the first boundary at or after the next arrival or wake-up time.
            const double until = std::min(nextArrival(), dec_.wake_at > now_ ? dec_.wake_at : kInf);
            if (n > 1 && until < kInf) {
                sp.n = static_cast<std::int32_t>(n);
                if (sp.end(n - 1) > until) {
                    std::int64_t lo = -1, hi = n - 1; // end(lo) < until <= end(hi)
                    while (hi - lo > 1) {
                        const std::int64_t mid = lo + (hi - lo) / 2;
                        (sp.end(mid) >= until ? hi : lo) = mid;
                    }
                    n = hi + 1;
                }
            }
            sp.n = static_cast<std::int32_t>(std::max<std::int64_t>(1, n));
        }
    }

    if (cache_) sp.kv_cached = cache_->idleCachedBlocks() * lim_.block_size;
    sp.kv_first = kv_used_ + growth1_;
    sp.kv_last = sp.n == 1 ? sp.kv_first : kv_used_ + growth(sp.n);
    const double t_end = sp.tEnd();
    // Every iteration must move the clock: an execution model that gives one no time (or
    // a time that does not register at this clock's magnitude) would emit tokens that no
    // reader can place. Inputs are bounded so that this cannot happen (request.h); a model
    // outside them is an input error, named here.
    if (!live_ && (!(t_end > sp.t0) || !std::isfinite(t_end) || !(sp.d0 > 0)))
        throw std::invalid_argument(
            "the execution model (" + model_.describe() + ") gives an iteration of " +
            std::to_string(shape.prefill_seqs) + " prefill(s) and " +
            std::to_string(shape.decode_seqs) + " decode(s) at t = " + std::to_string(sp.t0) +
            " s a duration of " + std::to_string(sp.d0) + " s, which does not advance the clock");
    if (record_iters_) {
        if (after_last_.t >= 0 && sp.t0 > after_last_.t) log_.kv_idle.push_back(after_last_);
        log_.iters.push_back(sp);
    } else { // the digest: what the summary would read from the record (RunLog::IterDigest)
        log_.iter_digest.totals.add(sp);
        sp.appendDecodeEnds(log_.iter_digest.decode_ends);
    }
    last_iter_s_ = sp.n == 1 ? sp.tEnd() - sp.t0 : sp.end(sp.n - 1) - sp.end(sp.n - 2);

    for (const Chunk& c : chunks_)
        if (st(c.id).prefilled == 0) log(sp.t0, c.id, Ev::PrefillStart, st(c.id).prefill_target);
    // Arrivals during the stretch become visible at its end (the next boundary); logging
    // them here keeps the event stream in time order.
    arriveUpTo(t_end);

    finished_now_.clear();
    // Done at its output length, or earlier when the live backend says its answer ended.
    const auto done = [&](ReqId id, const ReqState& s) {
        return s.remaining() <= 0 || (live_ && live_->stopped(id));
    };
    for (const Chunk& c : chunks_) {
        ReqState& s = st(c.id);
        s.prefilled += c.tokens;
        if (s.prefilled < s.prefill_target) continue;
        // Prefill done: the prompt's KV is compressed by alpha and one token is emitted.
        --prefilling_;
        s.prefill_target = s.prefilled = 0;
        ++s.generated;
        const auto prompt = s.req->prompt_tokens;
        const auto kept = prompt - static_cast<std::int64_t>(std::floor(s.alpha * prompt + 1e-9));
        if (cache_) {
            // The context's blocks are computed (all but the token just emitted): cached
            // from now. A compressed prompt is the request's own: fresh blocks hold it.
            cache_->publish(c.id, s.context() - 1);
            if (kept < prompt) cache_->release(c.id, -1);
        }
        setKv(s, kept + s.generated - 1 + kv_lead_);
        if (s.alpha > 0)
            log(t_end, c.id, Ev::Evict, static_cast<std::int32_t>(std::lround(s.alpha * 1e4)));
        log(t_end, c.id, Ev::PrefillEnd, s.generated);
        if (s.generated == 1) log(t_end, c.id, Ev::FirstToken, 1);
        if (done(c.id, s)) finished_now_.push_back(c.id);
    }
    if (!decoders_.empty()) decode_clock_ += sp.n;
    if (!cache_ && !live_) {
        // setKv's arithmetic, inline: a million calls in an overloaded 20,000-request run.
        // None finishes before the fewest remaining tokens among them (compose), so the
        // requests themselves are read only when one may.
        const bool may_finish = sp.n >= min_remaining;
        for (ReqId id : decoders_) {
            ReqState& s = st_[static_cast<std::size_t>(id)];
            s.generated += sp.n;
            s.kv += sp.n;
            const std::int64_t alloc = kvCost(s.kv);
            kv_used_ += alloc - s.alloc;
            s.alloc = alloc;
            if (may_finish && s.remaining() <= 0) finished_now_.push_back(id);
        }
    } else {
        for (ReqId id : decoders_) {
            ReqState& s = st(id);
            s.generated += sp.n;
            setKv(s, s.kv + sp.n);
            if (live_ && cache_ && computedTokens(s) >= 0) cache_->publish(id, computedTokens(s));
            if (done(id, s)) finished_now_.push_back(id);
        }
    }
    now_ = t_end;
    for (ReqId id : finished_now_) {
        doFinish(id, t_end);
        sched_.onFinish(*this, id);
    }
    after_last_ = {t_end, kv_used_,
                   cache_ ? cache_->idleCachedBlocks() * std::int64_t(lim_.block_size) : 0};
}

RunLog Simulator::run() {
    start();
    advance(kInf);
    return finish();
}

void Simulator::start() {
    if (ran_) throw std::logic_error("Simulator::run: a simulator runs once; make a new one");
    ran_ = true;
    t_start_ = std::chrono::steady_clock::now();
    log_ = RunLog{};
    log_.workload = w_.name;
    log_.policy = sched_.name();
    log_.exec_model = live_ ? live_->describe() : model_.describe();
    log_.kv_capacity_tokens = capacity_;
    log_.num_requests = static_cast<std::int32_t>(w_.requests.size());
    log_.prefix_caching = cache_ != nullptr;
    log_.cache_block_size = cache_ ? lim_.block_size : 0;
    // Six events make a request's life (arrival to finish); suspensions and preemptions
    // add two each. Pages are touched only as events come, so reserving for eight costs
    // address space, not memory, and spares the copy of a full log when one grows.
    log_.events.reserve(w_.requests.size() * 8);
    adviseHugePages(log_.events);
    if (record_iters_) {
        log_.iters.reserve(w_.requests.size() + w_.requests.size() / 4);
        adviseHugePages(log_.iters);
    } else {
        log_.iter_digest.on = true;
        log_.iter_digest.decode_ends.reserve(w_.requests.size() + w_.requests.size() / 4);
        adviseHugePages(log_.iter_digest.decode_ends);
    }
    sched_.reset(w_);
    if (lim_.vllmV0Chunked()) admit_step_.assign(w_.requests.size(), ~std::uint32_t{0});
    if (explain_) {
        log_.explain.on = true;
        log_.explain.key_name = sched_.keyName();
        log_.explain.key_descending = sched_.keyDescending();
        log_.explain.key_counts_down = sched_.keyCountsDown();
        log_.explain.limits = {lim_.max_num_seqs, lim_.max_num_batched_tokens,
                               std::max<std::int32_t>(1, lim_.block_size), lim_.chunked_prefill,
                               sched_.kvWatermark()};
        last_insight_.assign(w_.requests.size(), -1);
        sample_due_.assign(w_.requests.size(), SampleDue{});
        // Most runs give two or three reasons and states per request (reserved address
        // space: pages are touched only as they fill).
        log_.explain.reasons.reserve(3 * w_.requests.size());
        log_.explain.insights.reserve(3 * w_.requests.size());
    }
    dec_.explain = explain_;
    running_vary_ = explain_ && sched_.runningStateVaries();
    waiting_vary_ = explain_ && sched_.waitingKeysVary();
    if (!w_.requests.empty()) now_ = w_.requests.front().arrival;
}

void Simulator::advance(double horizon) {
    while (!complete()) {
        // In a fleet: stop at the first iteration boundary at or after the horizon (the next
        // arrival into the fleet, which the router places); alone, the horizon is infinite.
        if (now_ >= horizon) return;
        // In a fleet, a replica with nothing to do waits for the router (no decision is
        // asked of an empty engine; alone, the engine jumps to its next arrival instead).
        if (fleet_ && next_ == routed_.size() && running_.empty() && waiting_.empty() &&
            suspended_.empty())
            return;
        if ((++steps_ & 255U) == 0 && (cancel_ || progress_)) {
            if (cancel_ && cancel_->load(std::memory_order_relaxed)) throw SimulationCancelled();
            if (progress_)
                progress_->store(double(done_) / double(w_.requests.size()),
                                 std::memory_order_relaxed);
        }
        if (live_) now_ = std::max(now_, live_->clock());
        arriveUpTo(now_);
        dec_.clear();
        if (time_decisions_) {
            const std::size_t queued = waiting_.size();
            const auto a = std::chrono::steady_clock::now();
            sched_.schedule(*this, dec_);
            decision_times_.emplace_back(
                queued,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
        } else {
            sched_.schedule(*this, dec_);
        }
        if (explain_) recordCall();
        applyDecision();
        if (explain_) {
            // The engine as the decision left it: what a wait is measured against.
            CallRecord& c = log_.explain.calls.back();
            c.running = static_cast<std::int32_t>(running_.size());
            c.kv_used = kv_used_;
            // What the decision set on the requests it took in (TimeBill's alpha and WCET).
            for (ReqId id : dec_.admit) sampleInsight(id);
            for (ReqId id : dec_.resume) sampleInsight(id);
        }
        if (!running_.empty()) {
            idle_rounds_ = 0;
            runIteration();
            continue;
        }
        // Nothing runs. If the decision changed something (it cleared or dropped requests),
        // ask again at the same time; else jump to the next arrival or wake-up, or give
        // up if none can come.
        if (!dec_.preempt.empty() || !dec_.suspend.empty() || !dec_.kill.empty()) {
            if (++idle_rounds_ > 1000000)
                throw std::logic_error("scheduler '" + sched_.name() + "' makes no progress");
            continue;
        }
        const double next = std::min(nextArrival(), dec_.wake_at > now_ ? dec_.wake_at : kInf);
        if (next < kInf) {
            if (live_) live_->sleepUntil(next); // wait on the wall clock
            now_ = std::max(now_, next);
            continue;
        }
        if (done_ == expected()) break;
        // Nothing runs, nothing can arrive, and the scheduler starts none of the requests
        // left: a scheduler bug (every policy is live: tests/core/tst_liveness.cpp), never
        // a result to report.
        throw SchedulerStall(
            "scheduler '" + sched_.name() + "' stalled at t = " + std::to_string(now_) +
            " s: " + std::to_string(waiting_.size()) + " waiting and " +
            std::to_string(suspended_.size()) + " suspended request(s), nothing running, KV " +
            std::to_string(kv_used_) + " of " + std::to_string(capacity_) + " tokens in use");
    }
}

RunLog Simulator::finish() {
    if (too_big_ > 0)
        warn(std::to_string(too_big_) + " request(s) could not fit the KV cache of " +
             std::to_string(capacity_) + " tokens (the largest needs " +
             std::to_string(too_big_need_) +
             " with its output): killed as never_fits or "
             "cannot_grow");
    if (cache_) log_.cache_evictions = cache_->evictions();
    log_.sim_wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_start_)
            .count();
    return std::move(log_);
}

RunLog simulate(const Workload& w, const ExecutionModel& model, Scheduler& sched,
                const EngineLimits& lim) {
    Simulator sim(w, model, sched, lim);
    return sim.run();
}

} // namespace kairos
