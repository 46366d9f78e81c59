#include "sched/mcsf.h"

#include "sched/admission.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kMcsfAdmit =
    registerRule({"mcsf.admit", "mcsf: prefix fits M at every completion time",
                  RuleVars{"predicted", "peak", "M"},
                  "MC-SF: with the request admitted, the predicted KV use at every predicted "
                  "completion time of the batch (its peak) stays within the capacity",
                  false, [](const double* x) { return x[1] <= x[2]; }});
} // namespace rules

McsfScheduler::McsfScheduler(std::shared_ptr<LengthPredictor> predictor)
    : pred_(std::move(predictor)) {
    if (!pred_) throw std::invalid_argument("mcsf: needs a length predictor");
}

std::string McsfScheduler::name() const {
    return "mcsf(predictor=" + pred_->name() + ")";
}

void McsfScheduler::reset(const Workload& w) {
    pred_->reset(w);
    waiting_.clear();
    overflows_ = 0;
}

double McsfScheduler::remaining(const EngineView& view, ReqId id) const {
    return std::max(1.0, std::ceil(pred_->remaining(id, view.state(id).generated)));
}

void McsfScheduler::onEnqueue(const EngineView& view, ReqId id) {
    waiting_.emplace(remaining(view, id), id);
}

void McsfScheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    out.key = out.predicted = remaining(view, id);
}

ReqId McsfScheduler::overflowVictim(const EngineView& view) {
    ++overflows_;
    const ReqId victim = worstBy(view.running(), [&](ReqId id) { return remaining(view, id); });
    if (victim < 0) throw std::logic_error("mcsf: nothing running to preempt");
    return victim;
}

void McsfScheduler::schedule(const EngineView& view, Decision& out) {
    out.hold = INT_MAX;
    if (prefillPending(view)) return;
    // Running requests as (KV now, iterations left): during the m-th iteration from now
    // a request uses kv + m tokens, for m = 1 .. left (then frees everything).
    struct Use {
        std::int64_t base; // tokens before the first of its iterations
        std::int64_t left; // iterations it still runs (predicted)
    };
    const std::int64_t cap = view.kvCapacity();
    std::vector<Use> uses;
    for (ReqId id : view.running()) {
        const ReqState& s = view.state(id);
        const auto left =
            static_cast<std::int64_t>(remaining(view, id)) + (s.needsPrefill() ? 1 : 0);
        const std::int64_t base = s.needsPrefill() ? s.context() : s.kv;
        uses.push_back({base, std::max<std::int64_t>(1, std::min<std::int64_t>(left, cap - base))});
    }
    std::int64_t seats =
        view.limits().max_num_seqs - static_cast<std::int64_t>(view.running().size());
    // Memory peaks at completions: check every m at which some request ends. Token
    // granularity: sorted by `left`, the use at m is sum(base) + count * m over the
    // requests with left >= m (prefix sums); with paged blocks each term is rounded up.
    std::vector<Use> sorted;
    std::int64_t peak = 0; // the largest use fits() found (a reason's number)
    auto fits = [&](const std::vector<Use>& u) {
        peak = 0;
        if (view.limits().block_size > 1) {
            for (const Use& c : u) {
                std::int64_t total = 0;
                for (const Use& x : u)
                    if (x.left >= c.left) total += view.kvCost(x.base + c.left);
                peak = std::max(peak, total);
                if (total > cap) return false;
            }
            return true;
        }
        sorted = u;
        std::sort(sorted.begin(), sorted.end(),
                  [](const Use& a, const Use& b) { return a.left > b.left; });
        std::int64_t base = 0, count = 0;
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            base += sorted[i].base;
            ++count;
            const bool last_of_group =
                i + 1 == sorted.size() || sorted[i + 1].left != sorted[i].left;
            if (!last_of_group) continue;
            peak = std::max(peak, base + count * sorted[i].left);
            if (base + count * sorted[i].left > cap) return false;
        }
        return true;
    };
    bool blocked = false, shifted = false;
    const std::size_t running_uses = uses.size();
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        const ReqId id = it->second;
        const ReqState& s = view.state(id);
        if (s.phase != Phase::Waiting) {
            it = waiting_.erase(it);
            continue;
        }
        if (seats <= 0) {
            blocked = true;
            break;
        }
        // Admitted now: holds context + m during its m-th iteration, for its predicted
        // remaining length (the prefill emits the first of those tokens).
        // A prediction longer than the cache can hold would block the request forever:
        // no request can grow past the capacity, so cap its window there (if it really
        // needs more, the engine stops it when it is alone).
        // (A cached prefix that running requests hold is counted once: theirs.)
        const Use mine{
            s.context() - view.prefixShared(id),
            std::max<std::int64_t>(1, std::min<std::int64_t>(static_cast<std::int64_t>(it->first),
                                                             cap - s.context()))};
        if (view.reservation(s) > cap) { // cannot even start
            out.killFor(id, KillCause::NeverFits);
            if (out.explain)
                out.because(Act::Kill, id, rules::kNeverFits,
                            {double(view.reservation(s)), double(cap)});
            it = waiting_.erase(it);
            continue;
        }
        if (!shifted && !view.limits().chunked_prefill) {
            // Without chunked prefill the admitted batch is prefilled in an iteration of
            // its own, in which the running requests neither grow nor finish: from the
            // new requests' point of view the others start one iteration later.
            for (std::size_t k = 0; k < running_uses; ++k) {
                uses[k].base -= 1;
                uses[k].left += 1;
            }
            shifted = true;
        }
        uses.push_back(mine);
        if (!fits(uses)) {
            uses.pop_back();
            blocked = true;
            break;
        }
        out.admit.push_back(id);
        if (out.explain)
            out.because(Act::Admit, id, rules::kMcsfAdmit, {it->first, double(peak), double(cap)});
        --seats;
        it = waiting_.erase(it);
    }
    // A blocked request may fit a few iterations later without any event (the others'
    // windows move), so ask again at the next boundary.
    if (blocked) out.hold = 1;
}

} // namespace kairos
