#include "sched/protect.h"

#include "sched/admission.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kProtectAdmit =
    registerRule({"protect.admit", "protect: used + need <= (1 - alpha) M",
                  RuleVars{"used", "need", "limit", "alpha", "M"},
                  "MC-SF's alpha-protection baseline: arrival order while the usage stays under "
                  "(1 - alpha) M",
                  false, [](const double* x) { return x[0] + x[1] <= x[2]; }});
const RuleId kProtectIdle = registerRule(
    {"protect.idle", "protect: nothing runs, used + need <= M", RuleVars{"used", "need", "M"},
     "the baseline's liveness exception: an empty engine takes the first request that "
     "fits the whole cache",
     false, [](const double* x) { return x[0] + x[1] <= x[2]; }});
const RuleId kProtectClear = registerRule(
    {"protect.clear", "protect: used + growth > M, cleared",
     RuleVars{"used", "growth", "M", "beta"},
     "the next iteration overflows: every running request is cleared (beta-clearing: each "
     "with probability beta, in rounds until it fits)",
     false, [](const double* x) { return x[0] + x[1] > x[2]; }});
} // namespace rules

ProtectScheduler::ProtectScheduler(ProtectOptions o) : opt_(o), rng_(o.seed) {
    if (!(o.alpha >= 0 && o.alpha < 1))
        throw std::invalid_argument("protect: alpha must be in [0, 1)");
    if (!(o.beta > 0 && o.beta <= 1))
        throw std::invalid_argument("protect: beta must be in (0, 1]");
}

std::string ProtectScheduler::name() const {
    char buf[96];
    if (opt_.clearing)
        std::snprintf(buf, sizeof buf, "protect_clearing(alpha=%g, beta=%g%s)", opt_.alpha,
                      opt_.beta, opt_.reset ? ", reset=1" : "");
    else
        std::snprintf(buf, sizeof buf, "protect_greedy(alpha=%g%s)", opt_.alpha,
                      opt_.reset ? ", reset=1" : "");
    return buf;
}

void ProtectScheduler::reset(const Workload&) {
    rng_ = Rng(opt_.seed);
    overflows_ = 0;
    seen_.clear();
    clears_since_finish_ = 0;
}

void ProtectScheduler::onFinish(const EngineView&, ReqId) {
    seen_.clear();
    clears_since_finish_ = 0;
}

void ProtectScheduler::detectLoop(const EngineView& view, const std::vector<ReqId>& cleared) {
    constexpr int kRepeats = 3;
    constexpr long kClearsWithoutFinish = 1000;
    std::vector<std::pair<ReqId, std::int32_t>> now;
    now.reserve(cleared.size());
    for (ReqId id : cleared) now.emplace_back(id, view.state(id).generated);
    std::sort(now.begin(), now.end());
    // A repeat of the same cleared set at the same progress is a loop only when clearing is
    // deterministic (beta = 1); with coin flips a repeat can be chance, and only the count of
    // clears without a finish bounds the run (with reset=1 and beta < 1 the expected time to
    // finish grows exponentially with the batch, so an unbounded run would exhaust memory).
    const int times = opt_.beta >= 1 ? ++seen_[now] : 0;
    ++clears_since_finish_;
    if (times < kRepeats && clears_since_finish_ < kClearsWithoutFinish) return;
    char buf[320];
    if (times >= kRepeats)
        std::snprintf(buf, sizeof buf,
                      "%s: infinite processing loop at t = %.3f s: the same %zu requests were "
                      "admitted, overflowed the KV cache (M = %lld) and were cleared at the same "
                      "progress %d times with nothing finishing; raise alpha",
                      name().c_str(), view.now(), now.size(),
                      static_cast<long long>(view.kvCapacity()), times);
    else
        std::snprintf(buf, sizeof buf,
                      "%s: processing loop at t = %.3f s: %ld clears of the KV cache (M = %lld) "
                      "with no request finishing; raise alpha",
                      name().c_str(), view.now(), clears_since_finish_,
                      static_cast<long long>(view.kvCapacity()));
    throw SchedulerLoop(buf);
}

void ProtectScheduler::schedule(const EngineView& view, Decision& out) {
    out.hold = INT_MAX;
    const std::int64_t cap = view.kvCapacity();
    // Will the next iteration's growth overflow? (The same test the engine makes.)
    if (!prefillPending(view)) {
        std::int64_t growth = 0;
        std::vector<ReqId> decoding;
        for (ReqId id : view.running()) {
            const ReqState& s = view.state(id);
            if (s.needsPrefill()) continue;
            growth += view.kvCost(s.kv + 1) - s.alloc;
            decoding.push_back(id);
        }
        if (view.kvUsed() + growth > cap) {
            ++overflows_;
            out.restart = opt_.reset;
            std::int64_t used = view.kvUsed() + growth;
            std::vector<char> cleared(view.running().size(), 0);
            // Rounds of independent coin flips until the iteration fits (one round when beta = 1).
            while (used > cap) {
                bool any = false;
                for (std::size_t i = 0; i < view.running().size(); ++i) {
                    if (cleared[i] || !rng_.bernoulli(opt_.beta)) continue;
                    const ReqId id = view.running()[i];
                    const ReqState& s = view.state(id);
                    cleared[i] = 1;
                    any = true;
                    out.preempt.push_back(id);
                    if (out.explain)
                        out.because(
                            Act::Preempt, id, rules::kProtectClear,
                            {double(view.kvUsed()), double(growth), double(cap), opt_.beta});
                    used -= view.kvFreedBy(id) +
                            (s.needsPrefill() ? 0 : view.kvCost(s.kv + 1) - s.alloc);
                }
                if (!any &&
                    std::all_of(cleared.begin(), cleared.end(), [](char c) { return c != 0; }))
                    break;
            }
            detectLoop(view, out.preempt);
            return; // nothing is admitted in an overflow round
        }
    }
    if (prefillPending(view)) return;
    // Admission (the paper's benchmark, section 5): arrival order, a new prompt only if adding
    // it keeps the usage within (1 - alpha) * M; the first that would exceed it stops
    // admission. One exception keeps the policy live: an engine with nothing running admits
    // the first waiting request that fits the cache even when it alone exceeds the limit
    // (otherwise a prompt larger than (1 - alpha) * M would wait for ever).
    const auto limit =
        static_cast<std::int64_t>(std::floor((1.0 - opt_.alpha) * static_cast<double>(cap)));
    std::int64_t used = view.kvUsed();
    std::int64_t seats =
        view.limits().max_num_seqs - static_cast<std::int64_t>(view.running().size());
    std::int64_t batch = 0;
    for (ReqId id : view.waiting()) {
        const ReqState& s = view.state(id);
        const std::int64_t need = view.reservation(s);
        if (need > cap) {
            out.killFor(id, KillCause::NeverFits);
            if (out.explain)
                out.because(Act::Kill, id, rules::kNeverFits, {double(need), double(cap)});
            continue;
        }
        const bool idle = view.running().empty() && out.admit.empty();
        if (seats <= 0 || used + need > (idle ? cap : limit)) break;
        if (!view.limits().chunked_prefill && batch > 0 &&
            batch + s.context() > view.limits().max_num_batched_tokens)
            break;
        out.admit.push_back(id);
        if (out.explain) {
            if (idle && used + need > limit)
                out.because(Act::Admit, id, rules::kProtectIdle,
                            {double(used), double(need), double(cap)});
            else
                out.because(Act::Admit, id, rules::kProtectAdmit,
                            {double(used), double(need), double(limit), opt_.alpha, double(cap)});
        }
        used += need;
        batch += s.context();
        --seats;
    }
}

} // namespace kairos
