#include "sched/timebill.h"

#include "exec/execution_model.h"
#include "sched/admission.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace kairos {

namespace {
// Relative slack for comparisons of times computed by two formulas.
bool le(double a, double b) {
    return a <= b + 1e-9 * (1 + std::fabs(b));
}
} // namespace

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kTimeBillAdmit = registerRule(
    {"timebill.admit", "timebill: arrival order, need <= free",
     RuleVars{"need", "free", "seats", "left", "prefill", "decode", "k", "n_w"},
     "TimeBill admits in arrival order while the reservation fits. Its budget arithmetic: "
     "`left` (s) of its budget remains; the WCET it plans on is the prefill estimate plus "
     "the decode estimate of N_W = min(ceil(k N_hat), N_max) tokens at the KV eviction "
     "ratio chosen (alpha*, the state's alpha)",
     false, [](const double* x) { return x[0] <= x[1] && x[2] >= 1 && x[6] >= 1 && x[7] >= 0; }});
const RuleId kTimeBillAlpha = registerRule(
    {"timebill.alpha", "timebill: alpha* from WCET = budget",
     RuleVars{"alpha", "wcet", "left", "n_w", "alpha_max", "p"},
     "the smallest KV eviction ratio whose pessimistic WCET (N_W = min(k N_hat, N_max) "
     "tokens) fits the budget left, capped at alpha_max; 0 when eviction cannot change the "
     "time (p = 0)",
     false, [](const double* x) {
         return x[0] >= 0 && x[0] <= x[4] &&
                (x[5] <= 0 || x[3] <= 1 || le(x[1], x[2]) || x[0] >= x[4]);
     }});
const RuleId kTimeBillFixed = registerRule(
    {"timebill.fixed_alpha", "timebill: fixed alpha", RuleVars{"alpha"}, "the fixed-alpha baseline",
     false, [](const double* x) { return x[0] >= 0 && x[0] <= 1; }});
const RuleId kTimeBillKill =
    registerRule({"timebill.kill", "timebill: Kill, now >= arrival + budget",
                  RuleVars{"now", "deadline"}, "TimeBill's Kill: its time budget ran out", false,
                  [](const double* x) { return x[0] >= x[1]; }});
const RuleId kTimeBillSkip =
    registerRule({"timebill.skip_next", "timebill: Skip-next, released during an overrun",
                  RuleVars{"arrival", "overrun_from", "overrun_to"},
                  "TimeBill's Skip-next: it arrived while an earlier request ran past its deadline",
                  false, [](const double* x) { return x[1] <= x[0] && x[0] <= x[2]; }});
} // namespace rules

double timebillWcet(const EteSingle& e, double n_x, double n_w, double alpha, double cached) {
    // sum_{i=1}^{n-1} [p((1-alpha) N + i - 1) + q] = (n-1)(p(1-alpha)N + q) + p (n-1)(n-2)/2
    const double steps = std::max(0.0, n_w - 1);
    return e.prefill(n_x, cached) + steps * (e.p * (1 - alpha) * n_x + e.q) +
           e.p * steps * std::max(0.0, n_w - 2) / 2;
}

double timebillAlpha(const EteSingle& e, double n_x, double n_w, double budget, double t_predict,
                     double alpha_max, double cached) {
    if (n_w <= 1 || e.p <= 0 || n_x <= 0) {
        // Eviction cannot change the time: nothing to gain from it.
        return 0.0;
    }
    const double a = 1 - (budget - e.prefill(n_x, cached) - t_predict) / (e.p * n_x * (n_w - 1)) +
                     (n_w - 2) / (2 * n_x) + e.q / (e.p * n_x);
    return std::clamp(a, 0.0, alpha_max);
}

TimeBillScheduler::TimeBillScheduler(TimeBillOptions o, std::shared_ptr<LengthPredictor> predictor)
    : opt_(o), pred_(std::move(predictor)), k_(o.k) {
    if (!pred_) throw std::invalid_argument("timebill: needs a length predictor");
    if (!(o.k >= 1)) throw std::invalid_argument("timebill: k must be >= 1");
    if (!(o.alpha_max >= 0 && o.alpha_max <= 1))
        throw std::invalid_argument("timebill: alpha_max must be in [0, 1]");
    if (o.fixed_alpha > 1) throw std::invalid_argument("timebill: alpha must be <= 1");
    if (!(o.default_budget > 0)) throw std::invalid_argument("timebill: budget must be > 0");
    if (!(o.auto_k_quantile > 0 && o.auto_k_quantile < 1))
        throw std::invalid_argument("timebill: quantile in (0, 1)");
}

std::string TimeBillScheduler::name() const {
    char buf[200];
    if (opt_.fixed_alpha >= 0)
        std::snprintf(buf, sizeof buf, "timebill(alpha=%g fixed, %s)", opt_.fixed_alpha,
                      opt_.kill ? "kill" : "skip-next");
    else
        std::snprintf(buf, sizeof buf, "timebill(k=%g%s, alpha_max=%g, %s, %s, predictor=%s)",
                      opt_.k, opt_.auto_k ? " auto" : "", opt_.alpha_max,
                      opt_.kill ? "kill" : "skip-next",
                      opt_.batch_aware ? "batch-aware" : "single-request", pred_->name().c_str());
    return buf;
}

void TimeBillScheduler::reset(const Workload& w) {
    pred_->reset(w);
    k_ = opt_.k;
    ratios_.clear();
    skipped_ = 0;
    overruns_.clear();
    open_overruns_.clear();
    overrun_req_.clear();
    alpha_.assign(w.size(), Insight::kNone);
    wcet_.assign(w.size(), Insight::kNone);
}

void TimeBillScheduler::onFinish(const EngineView& view, ReqId id) {
    for (auto it = open_overruns_.begin(); it != open_overruns_.end(); ++it)
        if (it->first == id) {
            overruns_[it->second].second = view.now();
            open_overruns_.erase(it);
            break;
        }
    if (!opt_.auto_k) return;
    // k should cover the chosen quantile of true / predicted length.
    ratios_.push_back(view.state(id).generated / std::max(1.0, pred_->initial(id)));
    if (static_cast<int>(ratios_.size()) > opt_.auto_k_window) ratios_.pop_front();
    std::vector<double> r(ratios_.begin(), ratios_.end());
    const auto at = static_cast<std::size_t>(
        std::floor(opt_.auto_k_quantile * static_cast<double>(r.size() - 1)));
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(at), r.end());
    k_ = std::clamp(r[at], 1.0, opt_.k_max);
}

std::string TimeBillScheduler::keyName() const {
    return "arrival (s)";
}

void TimeBillScheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    const ReqState& s = view.state(id);
    out.key = s.req->arrival;
    out.deadline = s.req->arrival + budgetOf(*s.req);
    out.predicted = std::max(0.0, pred_->initial(id) - s.generated);
    const auto i = static_cast<std::size_t>(id);
    if (i < alpha_.size()) {
        out.alpha = alpha_[i];
        out.wcet = wcet_[i];
    }
}

void TimeBillScheduler::schedule(const EngineView& view, Decision& out) {
    const double now = view.now();
    out.hold = INT_MAX;
    double next_deadline = INFINITY;
    std::int64_t running_kv = 0;
    for (ReqId id : view.running()) {
        const Request& r = *view.state(id).req;
        const double deadline = r.arrival + budgetOf(r);
        if (now >= deadline) {
            if (opt_.kill) {
                out.killFor(id, KillCause::Deadline);
                if (out.explain) out.because(Act::Kill, id, rules::kTimeBillKill, {now, deadline});
            } else if (std::none_of(open_overruns_.begin(), open_overruns_.end(),
                                    [&](const auto& o) { return o.first == id; })) {
                open_overruns_.emplace_back(id, overruns_.size());
                overruns_.emplace_back(deadline, INFINITY);
                overrun_req_.push_back(id);
            }
        } else {
            next_deadline = std::min(next_deadline, deadline);
            running_kv += view.state(id).kv;
        }
    }
    // Waiting requests are killed at their deadline too (below).
    if (opt_.kill)
        for (ReqId id : view.waiting()) {
            const Request& r = *view.state(id).req;
            if (const double deadline = r.arrival + budgetOf(r); deadline > now)
                next_deadline = std::min(next_deadline, deadline);
        }
    // Stop a stretch at the next deadline so that Kill acts at the first boundary after it.
    out.wake_at = next_deadline;
    if (prefillPending(view)) return;

    EteSingle e; // the unit model (or a non-ETE model) makes eviction pointless: p = 0
    double q0 = 1, q1 = 0;
    if (const auto* ete = dynamic_cast<const EteModel*>(view.model())) {
        const EteParams& p = ete->params();
        e = {p.c, p.b, p.a, p.p, 0};
        q0 = p.q0;
        q1 = p.q1;
    }
    std::int64_t batch = static_cast<std::int64_t>(view.running().size() - out.kill.size());
    AdmissionBudget budget(view, opt_.watermark);
    for (ReqId id : view.waiting()) {
        const ReqState& s = view.state(id);
        const Request& r = *s.req;
        const double left = r.arrival + budgetOf(r) - now;
        if (opt_.kill && left <= 0) { // its deadline passed while it waited
            out.killFor(id, KillCause::Deadline);
            if (out.explain)
                out.because(Act::Kill, id, rules::kTimeBillKill, {now, r.arrival + budgetOf(r)});
            continue;
        }
        if (const auto o = std::find_if(overruns_.begin(), overruns_.end(),
                                        [&](const auto& span) {
                                            return r.arrival >= span.first &&
                                                   r.arrival <= span.second;
                                        });
            o != overruns_.end()) {
            out.killFor(id, KillCause::SkipNext); // released during an overrun
            if (out.explain)
                out.because(Act::Kill, id, rules::kTimeBillSkip, {r.arrival, o->first, o->second},
                            overrun_req_[static_cast<std::size_t>(o - overruns_.begin())]);
            ++skipped_;
            continue;
        }
        double alpha = opt_.fixed_alpha;
        const double hit = double(view.prefixHit(id)); // prompt tokens a prefix cache holds
        // N_W: k times the predicted length, each capped at N_max.
        const double n_w = std::min<double>(
            opt_.n_max, std::ceil(k_ * std::min<double>(opt_.n_max, pred_->initial(id))));
        if (alpha < 0) {
            // The engine's decode step i attends (1 - alpha) N_x + i tokens (it counts the
            // token being decoded), TimeBill's N_kv^i = (1 - alpha) N_x + i - 1 does not:
            // adding p to q makes alpha* exact for the engine.
            e.q = (opt_.batch_aware ? q0 + q1 * static_cast<double>(batch + 1) +
                                          e.p * static_cast<double>(running_kv)
                                    : q0 + q1) +
                  e.p;
            // With a cached prefix only the rest is prefilled; but a prompt to be compressed
            // is computed whole (the engine gives it no cached prefix), so alpha* > 0 is
            // solved again without one.
            alpha =
                timebillAlpha(e, r.prompt_tokens, n_w, left, opt_.t_predict, opt_.alpha_max, hit);
            if (alpha > 0 && hit > 0)
                alpha =
                    timebillAlpha(e, r.prompt_tokens, n_w, left, opt_.t_predict, opt_.alpha_max);
            // Whole tokens are evicted: round up so that the budget still holds.
            alpha = std::min(opt_.alpha_max,
                             std::ceil(alpha * r.prompt_tokens - 1e-9) / r.prompt_tokens);
        }
        // A prompt to be compressed is computed whole (no cached prefix: sim/engine.cpp).
        const auto v = budget.take(s, alpha > 0);
        if (v == AdmissionBudget::Verdict::NeverFits) {
            budget.killNeverFits(out, s);
            continue;
        }
        if (v == AdmissionBudget::Verdict::NoRoom) break;
        if (out.explain) {
            // What it planned on: alpha and the WCET it gives (the fixed baseline's with
            // k x the prediction too, for comparison).
            const auto i = static_cast<std::size_t>(id);
            alpha_[i] = alpha;
            const double cached = alpha > 0 ? 0.0 : hit;
            wcet_[i] = timebillWcet(e, r.prompt_tokens, n_w, alpha, cached);
            const double prefill = e.prefill(r.prompt_tokens, cached);
            out.because(Act::Admit, id, rules::kTimeBillAdmit,
                        {double(budget.lastNeed()), double(budget.lastFree()),
                         double(budget.lastSeats()), left, prefill, wcet_[i] - prefill, k_, n_w});
            if (alpha > 0) {
                if (opt_.fixed_alpha >= 0)
                    out.because(Act::Evict, id, rules::kTimeBillFixed, {alpha});
                else
                    out.because(Act::Evict, id, rules::kTimeBillAlpha,
                                {alpha, wcet_[i], left, n_w, opt_.alpha_max, e.p});
            }
        }
        if (alpha > 0) out.evict.emplace_back(id, alpha);
        out.admit.push_back(id);
        ++batch;
        running_kv += s.context() + 1;
    }
}

} // namespace kairos
