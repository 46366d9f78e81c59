#include "sched/priority.h"

#include "sched/admission.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <stdexcept>

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kRankAdmit = registerRule(
    {"rank.admit", "rank: best key waiting, need <= free", RuleVars{"key", "need", "free"},
     "the best-ranked waiting request (ties keep running ones) gets a seat and its "
     "reservation fits",
     false, [](const double* x) { return x[1] <= x[2]; }});
const RuleId kRankResume =
    registerRule({"rank.resume", "rank: best key suspended takes a seat", RuleVars{"key", "seats"},
                  "the best-ranked suspended request returns to the batch; its KV was kept", false,
                  [](const double* x) { return x[1] >= 1; }});
// Trail's limited preemption, for a suspension and a drop alike: age a < C * r (C infinite:
// always), and the displaced request ranks after the one it makes room for.
constexpr RuleVars kLimitedPreemptionVars{"a", "C", "r", "key", "other_key"};
bool limitedPreemption(const double* x) {
    return (std::isinf(x[1]) || x[0] < x[1] * x[2]) && x[3] > x[4];
}
const RuleId kSprptSuspend =
    registerRule({"sprpt_lp.suspend", "sprpt_lp: a < C*r, ranked after the one it makes room for",
                  kLimitedPreemptionVars,
                  "Trail's limited preemption: a running request may be displaced only while its "
                  "age a (tokens generated) is below C times its initial prediction r, and only "
                  "by a request with a smaller key; its KV is kept (suspended)",
                  false, limitedPreemption});
const RuleId kSprptDrop =
    registerRule({"sprpt_lp.drop", "sprpt_lp: a < C*r, KV released for a better-ranked request",
                  kLimitedPreemptionVars,
                  "as the suspension rule, and the better-ranked request needs the KV: it is "
                  "dropped (recompute), at most once in its life",
                  false, limitedPreemption});
const RuleId kSuspendedDrop = registerRule(
    {"rank.drop_suspended", "rank: kept KV released for a better-ranked request",
     RuleVars{"key", "other_key"},
     "a suspended request's kept KV is released (it will recompute) for a waiting request "
     "ranked before it",
     false, [](const double* x) { return x[0] > x[1]; }});
} // namespace rules

// One decision's state, shared by the steps of schedule().
struct PriorityScheduler::Round {
    const EngineView& view;
    Decision& out;
    AdmissionBudget budget;
    std::int64_t free_seats;      // seats not taken; displaced and dropped requests free theirs
    std::size_t next_movable = 0; // movable_ entries before it were passed over in rank order
    double stop_key = NAN;        // the key of the candidate that could not start, if one
};

PriorityScheduler::PriorityScheduler(PriorityOptions o, std::shared_ptr<LengthPredictor> predictor)
    : opt_(std::move(o)), pred_(std::move(predictor)) {
    if (opt_.key == PriorityOptions::Key::PredictedRemaining && !pred_)
        throw std::invalid_argument(opt_.policy + ": needs a length predictor");
    if (!(opt_.C >= 0)) throw std::invalid_argument(opt_.policy + ": C must be >= 0");
}

std::string PriorityScheduler::name() const {
    char buf[160];
    if (opt_.key == PriorityOptions::Key::Deadline)
        std::snprintf(buf, sizeof buf, "%s(preemptive=%d, slack=%g, watermark=%g)",
                      opt_.policy.c_str(), opt_.C > 0 ? 1 : 0, opt_.slack, opt_.watermark);
    else if (opt_.policy == "sjf")
        std::snprintf(buf, sizeof buf, "sjf(predictor=%s, watermark=%g)", pred_->name().c_str(),
                      opt_.watermark);
    else
        std::snprintf(buf, sizeof buf, "%s(C=%g, predictor=%s, watermark=%g)", opt_.policy.c_str(),
                      opt_.C, pred_->name().c_str(), opt_.watermark);
    return buf;
}

void PriorityScheduler::reset(const Workload& w) {
    waiting_.clear();
    suspended_.clear();
    if (pred_) pred_->reset(w);
    initial_.resize(w.requests.size());
    for (std::size_t i = 0; i < w.requests.size(); ++i)
        initial_[i] = opt_.key == PriorityOptions::Key::Deadline
                          ? double(w.requests[i].output_tokens)
                          : pred_->initial(static_cast<ReqId>(i));
    count_down_ =
        opt_.key == PriorityOptions::Key::PredictedRemaining && pred_->remainingFromInitial();
    keys_fall_ = count_down_ || opt_.key == PriorityOptions::Key::Deadline;
    running_bound_ = INFINITY;
    crossing_.clear();
    const bool refined =
        opt_.key == PriorityOptions::Key::PredictedRemaining && pred_->refreshEvery() > 0;
    if (refined && opt_.look_ahead) crossing_.resize(w.requests.size());
    clocked_ = opt_.clocked && keys_fall_ && !refined && opt_.C > 0;
    tracked_ = opt_.tracked && refined && opt_.C > 0;
    pre_.clear();
    in_pre_.assign(tracked_ ? w.requests.size() : 0, 0);
    ranked_.clear();
    unanchored_.clear();
    anchor_.assign(clocked_ ? w.requests.size() : 0, NAN);
    taken_.assign(clocked_ ? w.requests.size() : 0, 0);
}

const std::pair<double, ReqId>* PriorityScheduler::waitingFront(const EngineView& view) {
    while (!waiting_.empty() && view.state(waiting_.front().second).phase != Phase::Waiting)
        takeWaitingFront();
    return waiting_.empty() ? nullptr : &waiting_.front();
}

void PriorityScheduler::takeWaitingFront() {
    const auto top = waiting_.front();
    do {
        std::pop_heap(waiting_.begin(), waiting_.end(), std::greater<>());
        waiting_.pop_back();
    } while (!waiting_.empty() && waiting_.front() == top);
}

double PriorityScheduler::key(const EngineView& view, ReqId id) const {
    return keyOf(view.state(id));
}

double PriorityScheduler::keyOf(const ReqState& s) const {
    if (opt_.key == PriorityOptions::Key::Deadline) {
        const Request& r = *s.req;
        const double rel = r.budget_s ? *r.budget_s : r.tuf ? r.tuf->ert : opt_.slack;
        return r.arrival + rel;
    }
    if (count_down_) // LengthPredictor::remaining's default
        return std::max(1.0, initialOf(s.id) - s.generated);
    return pred_->remaining(s.id, s.generated);
}

bool PriorityScheduler::preemptible(const EngineView& view, ReqId id) const {
    return preemptibleState(view.state(id));
}

std::string PriorityScheduler::keyName() const {
    return opt_.key == PriorityOptions::Key::Deadline ? "deadline (s)"
                                                      : "predicted remaining (tokens)";
}

void PriorityScheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    out.key = key(view, id);
    if (opt_.key == PriorityOptions::Key::Deadline)
        out.deadline = out.key;
    else
        out.predicted = out.key;
}

void PriorityScheduler::onEnqueue(const EngineView& view, ReqId id) {
    waiting_.emplace_back(key(view, id), id);
    std::push_heap(waiting_.begin(), waiting_.end(), std::greater<>());
}

ReqId PriorityScheduler::overflowVictim(const EngineView& view) {
    // Release kept KV first (worst-ranked suspended request), else preempt the worst-
    // ranked running request.
    const auto k = [&](ReqId id) { return key(view, id); };
    ReqId victim = worstBy(view.suspended(), k);
    if (victim < 0) {
        victim = worstBy(view.running(), k);
        if (victim >= 0) unrank(victim);
    }
    if (victim < 0) throw std::logic_error("overflowVictim: nothing to preempt");
    return victim;
}

void PriorityScheduler::onFinish(const EngineView& view, ReqId id) {
    (void)view;
    unrank(id);
}

void PriorityScheduler::takenIn(ReqId id) {
    if (tracked_) {
        char& in = in_pre_[static_cast<std::size_t>(id)];
        if (!in) pre_.push_back(id);
        in = 1;
    }
    if (!clocked_) return;
    unrank(id); // an entry of an earlier stay, if one was left
    auto& t = taken_[static_cast<std::size_t>(id)];
    if (!t) unanchored_.push_back(id);
    t = 1;
}

void PriorityScheduler::unrank(ReqId id) {
    // Its entry goes stale (its anchor no longer matches) and is dropped where met: erasing
    // it from the middle now cost more than every use of ranked_ together.
    if (clocked_) anchor_[static_cast<std::size_t>(id)] = NAN;
}

// One decision, in steps: nothing to decide; the best candidate's key; the running requests
// ranked after it (movable); candidates taken in rank order (admitted, resumed, or seated
// and fitted by displacing or dropping movable ones); the displaced suspended; how long the
// engine may run before asking again.
void PriorityScheduler::schedule(const EngineView& view, Decision& out) {
    out.hold = opt_.key == PriorityOptions::Key::PredictedRemaining && pred_->refreshEvery() > 0
                   ? pred_->refreshEvery()
                   : INT_MAX;
    if (prefillPending(view)) return;
    // Nothing waits or is suspended: nobody to admit, resume or preempt for (the common
    // case below saturation; skipping it halves sprpt_lp's time on a 20,000-request trace).
    // Refined predictions change nothing then either: with nobody to rank against, the
    // engine may run until a request arrives or finishes (which consult it again).
    if (view.waiting().empty() && view.suspended().empty()) {
        out.hold = INT_MAX;
        return;
    }
    // The best key waiting or suspended: a running request ranked at or before it is passed
    // over before any candidate is considered (ties keep running), so it can be neither
    // displaced nor dropped and is left out (on a loaded trace that is almost every one).
    double best = INFINITY;
    if (const auto* w = waitingFront(view)) best = w->first;
    if (auto u = suspendedFront(view); u != suspended_.end()) best = std::min(best, u->first);
    const std::int64_t D = clocked_ ? view.decodeClock() : -1;
    if (clocked_ && D < 0) { // this engine has no decode clock: scan (for the run)
        clocked_ = false;
        ranked_.clear();
        unanchored_.clear();
    }
    if (clocked_)
        collectClocked(view, best, D);
    else
        collectMovable(view, best, out.hold == INT_MAX);
    dropped_.assign(movable_.size(), 0);
    displaced_.assign(movable_.size(), 0);
    displaced_by_.assign(movable_.size(), {-1, 0.0});
    Round r{view, out, AdmissionBudget(view, opt_.watermark, /*shared_credit=*/false),
            view.limits().max_num_seqs - static_cast<std::int64_t>(view.running().size())};
    // Seats are counted here: displaced requests free theirs.
    r.budget.setSeats(view.limits().max_num_seqs);
    takeCandidates(r);
    suspendDisplaced(r);
    setHold(r, best);
}

std::set<std::pair<double, ReqId>>::iterator
PriorityScheduler::suspendedFront(const EngineView& view) {
    auto it = suspended_.begin();
    while (it != suspended_.end() && view.state(it->second).phase != Phase::Suspended)
        it = suspended_.erase(it);
    return it;
}

void PriorityScheduler::collectMovable(const EngineView& view, double best, bool not_refined) {
    // Running requests that may be preempted, with their keys (lookAhead reads them too,
    // when predictions are refined: the scan is never skipped then); the others keep their
    // seats.
    preemptible_now_.clear();
    if (!(keys_fall_ && not_refined && running_bound_ <= best)) {
        double bound = -INFINITY;
        const bool known = !crossing_.empty();
        const auto visit = [&](ReqId id, const ReqState& s) {
            if (known) { // its key is at or below c.T <= best: not movable, no need to ask
                const Crossing& c = crossing_[static_cast<std::size_t>(id)];
                if (c.T <= best && c.from <= s.generated && s.generated < c.at) {
                    preemptible_now_.emplace_back(c.T, id);
                    return;
                }
            }
            const double k = keyOf(s);
            preemptible_now_.emplace_back(k, id);
            bound = std::max(bound, k);
        };
        if (tracked_) { // the preemptible running requests, in the order they were taken in
            std::size_t keep = 0;
            for (const ReqId id : pre_) {
                const ReqState& s = view.state(id);
                if (s.phase != Phase::Running || !preemptibleState(s)) {
                    in_pre_[static_cast<std::size_t>(id)] = 0;
                    continue;
                }
                pre_[keep++] = id;
                visit(id, s);
            }
            pre_.resize(keep);
        } else {
            for (ReqId id : view.running())
                if (const ReqState& s = view.state(id); preemptibleState(s)) visit(id, s);
        }
        running_bound_ = bound;
    }
#ifndef NDEBUG
    else // skipped: a scan would have found no running request ranked after `best`
        for (ReqId id : view.running())
            assert(!preemptibleState(view.state(id)) || keyOf(view.state(id)) <= best);
#endif
    // Those ranked after the best waiting or suspended one, best first.
    movable_.clear();
    for (const auto& [k, id] : preemptible_now_)
        if (k > best) movable_.push_back({k, id});
    // A lambda, not the function's address: the comparison is inlined into the sort.
    std::sort(movable_.begin(), movable_.end(),
              [](const Cand& a, const Cand& b) { return candBefore(a, b); });
}

void PriorityScheduler::collectClocked(const EngineView& view, double best, std::int64_t D) {
    movable_.clear();
    // Requests taken in since the last decision: ranked once past their prefill; until
    // then (a chunked engine decides while they prefill) read as the scan would.
    std::size_t keep = 0;
    for (ReqId id : unanchored_) {
        const ReqState& s = view.state(id);
        const auto i = static_cast<std::size_t>(id);
        if (s.phase != Phase::Running) {
            taken_[i] = 0;
            continue;
        }
        if (s.needsPrefill()) {
            unanchored_[keep++] = id;
            if (preemptibleState(s))
                if (const double k = keyOf(s); k > best) movable_.push_back({k, id});
            continue;
        }
        taken_[i] = 0;
        if (!preemptibleState(s)) continue; // never again while it runs
        const double a = count_down_ ? initialOf(id) - double(s.generated - D) : keyOf(s);
        anchor_[i] = a;
        const std::pair<double, ReqId> e{a, id};
        ranked_.insert(std::upper_bound(ranked_.begin(), ranked_.end(), e), e);
    }
    unanchored_.resize(keep);
    // Stale entries (unrank) that sank below where decisions look go when they outnumber
    // the running requests. (An entry made stale and then made again, the same anchor for
    // the same request, would be met twice: unique() drops the copy.)
    if (ranked_.size() > 2 * view.running().size() + 64) {
        ranked_.erase(std::remove_if(ranked_.begin(), ranked_.end(),
                                     [&](const std::pair<double, ReqId>& e) {
                                         double& a = anchor_[static_cast<std::size_t>(e.second)];
                                         if (a != e.first) return true;
                                         if (view.state(e.second).phase == Phase::Running)
                                             return false;
                                         a = NAN; // left without unrank (none known)
                                         return true;
                                     }),
                      ranked_.end());
        ranked_.erase(std::unique(ranked_.begin(), ranked_.end()), ranked_.end());
    }
    // The tail ranked after `best`: an anchor less D is the key (count_down_, before the
    // key's floor of 1, which no key above `best` >= 1 meets) to the rounding of one
    // subtraction, so a token's margin and the exact key decide. Entries of requests that
    // left, or can no longer be preempted, are dropped as they are met.
    const double from =
        count_down_ ? best + double(D) - 1 - 1e-9 * (std::abs(best) + double(D)) : best;
    auto it = std::lower_bound(ranked_.begin(), ranked_.end(),
                               std::pair<double, ReqId>{from, std::numeric_limits<ReqId>::min()});
    auto kept = it;
    for (; it != ranked_.end(); ++it) {
        const auto [a, id] = *it;
        const ReqState& s = view.state(id);
        double& mine = anchor_[static_cast<std::size_t>(id)];
        if (mine != a) continue; // stale: left since (and maybe taken in again)
        if (kept != ranked_.begin() && *std::prev(kept) == *it) continue; // a copy
        if (s.phase != Phase::Running || !preemptibleState(s)) {
            mine = NAN;
            continue;
        }
        *kept++ = *it;
        if (const double k = keyOf(s); k > best) movable_.push_back({k, id});
    }
    ranked_.erase(kept, ranked_.end());
    // Nearly in order already (anchors tie where keys differ by a rounding; those still
    // in prefill come first): an insertion sort is linear then.
    for (std::size_t i = 1; i < movable_.size(); ++i)
        for (std::size_t j = i; j > 0 && candBefore(movable_[j], movable_[j - 1]); --j)
            std::swap(movable_[j], movable_[j - 1]);
#ifndef NDEBUG
    { // the scan's answer
        std::vector<Cand> scan;
        for (ReqId id : view.running())
            if (preemptibleState(view.state(id)))
                if (const double k = keyOf(view.state(id)); k > best) scan.push_back({k, id});
        std::sort(scan.begin(), scan.end(), candBefore);
        assert(scan.size() == movable_.size());
        for (std::size_t i = 0; i < scan.size(); ++i)
            assert(scan[i].id == movable_[i].id && scan[i].key == movable_[i].key);
    }
#endif
}

void PriorityScheduler::reclaim(Round& r, double k, ReqId for_id, std::int64_t need) {
    // Releases kept or displaced KV of requests ranked after `k`, worst-ranked first:
    // suspended requests, then running requests not reached yet; only when that frees
    // enough for `need` (releasing KV for an admission that still fails would make its
    // owners recompute for nothing). A running request's KV is dropped at most once in its
    // life: with memory full and predictions refined every token the ranking flickers, and
    // dropping again and again made long contexts recompute after every token (on the
    // Azure conversation trace at 80 % load, mean latency 20x FCFS's).
    const EngineView& view = r.view;
    auto droppable = [&](ReqId id) { return view.state(id).preemptions == 0; };
    std::int64_t can = r.budget.freeTokens();
    for (auto it = suspended_.rbegin(); it != suspended_.rend() && can < need; ++it) {
        if (it->first <= k) break;
        const ReqState& s = view.state(it->second);
        if (s.phase == Phase::Suspended) can += view.kvFreedBy(it->second);
    }
    for (std::size_t j = movable_.size(); j-- > r.next_movable && can < need;)
        if (!dropped_[j] && droppable(movable_[j].id)) can += view.kvFreedBy(movable_[j].id);
    if (can < need) return;
    for (auto it = suspended_.rbegin(); it != suspended_.rend() && r.budget.freeTokens() < need;) {
        if (it->first <= k) break;
        const ReqId sid = it->second;
        const double skey = it->first;
        const ReqState& s = view.state(sid);
        it = std::make_reverse_iterator(suspended_.erase(std::next(it).base()));
        if (s.phase != Phase::Suspended) continue;
        r.out.preempt.push_back(sid);
        if (r.out.explain)
            r.out.because(Act::Preempt, sid, rules::kSuspendedDrop, {skey, k}, for_id);
        r.budget.addFree(view.kvFreedBy(sid));
    }
    for (std::size_t j = movable_.size(); j-- > r.next_movable && r.budget.freeTokens() < need;) {
        if (dropped_[j] || !droppable(movable_[j].id)) continue;
        if (!displaced_[j]) ++r.free_seats;
        dropped_[j] = 1;
        r.out.preempt.push_back(movable_[j].id);
        unrank(movable_[j].id);
        if (r.out.explain)
            r.out.because(Act::Preempt, movable_[j].id, rules::kSprptDrop,
                          {double(view.state(movable_[j].id).generated), opt_.C,
                           initialOf(movable_[j].id), movable_[j].key, k},
                          for_id);
        r.budget.addFree(view.kvFreedBy(movable_[j].id));
    }
}

bool PriorityScheduler::seatFor(Round& r, double k, ReqId for_id) {
    // A running request keeps its seat; a waiting or suspended one needs a free seat, or
    // displaces the worst-ranked running request not reached yet (suspended, KV kept) if
    // that one ranks after it.
    if (r.free_seats > 0) return true;
    for (std::size_t j = movable_.size(); j-- > r.next_movable;) {
        if (gone(j)) continue;
        if (!(movable_[j].key > k)) return false;
        displaced_[j] = 1;
        displaced_by_[j] = {for_id, k};
        ++r.free_seats;
        return true;
    }
    return false;
}

void PriorityScheduler::takeCandidates(Round& r) {
    const EngineView& view = r.view;
    Decision& out = r.out;
    // The fronts change only where this loop takes or reclaims (no phase changes during a
    // decision): looked up again there, not at every step (a loaded run passes over ~6
    // movable requests per decision).
    const auto* wi = waitingFront(view);
    auto si = suspendedFront(view);
    const auto takeWaiting = [&] {
        takeWaitingFront();
        wi = waitingFront(view);
    };
    while (true) {
        while (r.next_movable < movable_.size() && gone(r.next_movable)) ++r.next_movable;
        const bool have_m = r.next_movable < movable_.size(), have_w = wi != nullptr,
                   have_s = si != suspended_.end();
        if (!have_m && !have_w && !have_s) break;
        // The best of the three; ties go to running, then suspended (no churn on equal keys).
        const double km = have_m ? movable_[r.next_movable].key : INFINITY;
        const double ks = have_s ? si->first : INFINITY;
        const double kw = have_w ? wi->first : INFINITY;
        if (have_m && km <= ks && km <= kw) {
            ++r.next_movable;
            continue;
        }
        if (have_s && ks <= kw) {
            if (!seatFor(r, ks, si->second)) {
                r.stop_key = ks;
                break;
            }
            out.resume.push_back(si->second);
            takenIn(si->second);
            running_bound_ = std::max(running_bound_, ks);
            if (out.explain)
                out.because(Act::Resume, si->second, rules::kRankResume,
                            {ks, double(r.free_seats)});
            suspended_.erase(si);
            si = suspendedFront(view);
            --r.free_seats;
            continue;
        }
        const auto [k, id] = *wi;
        const ReqState& s = view.state(id);
        if (r.budget.neverFits(s)) {
            r.budget.killNeverFits(out, s);
            takeWaiting();
            continue;
        }
        if (!seatFor(r, k, id)) {
            r.stop_key = k;
            break;
        }
        auto v = r.budget.take(s);
        if (v == AdmissionBudget::Verdict::NoRoom) {
            reclaim(r, k, id, r.budget.need(s));
            si = suspendedFront(view); // reclaim may have released suspended requests
            v = r.budget.take(s);
        }
        if (v == AdmissionBudget::Verdict::NeverFits) {
            r.budget.killNeverFits(out, s);
            takeWaiting();
            continue;
        }
        if (v == AdmissionBudget::Verdict::NoRoom) { // memory-bound: stop here
            r.stop_key = k;
            break;
        }
        out.admit.push_back(id);
        takenIn(id);
        running_bound_ = std::max(running_bound_, k);
        if (out.explain)
            out.because(Act::Admit, id, rules::kRankAdmit,
                        {k, double(r.budget.lastNeed()), double(r.budget.lastFree())});
        --r.free_seats;
        takeWaiting();
    }
}

void PriorityScheduler::suspendDisplaced(Round& r) {
    // Displaced running requests are suspended (KV kept); those whose KV was released
    // above are preempted (recompute).
    for (std::size_t j = 0; j < movable_.size(); ++j)
        if (displaced_[j] && !dropped_[j]) {
            r.out.suspend.push_back(movable_[j].id);
            unrank(movable_[j].id);
            if (r.out.explain)
                r.out.because(Act::Suspend, movable_[j].id, rules::kSprptSuspend,
                              {double(r.view.state(movable_[j].id).generated), opt_.C,
                               initialOf(movable_[j].id), movable_[j].key, displaced_by_[j].second},
                              displaced_by_[j].first);
            suspended_.emplace(movable_[j].key, movable_[j].id);
        }
}

void PriorityScheduler::setHold(Round& r, double best) {
    Decision& out = r.out;
    if (out.hold == INT_MAX) return; // predictions are not refined
    if (!opt_.look_ahead) {
        out.hold = 1; // the reference: re-rank after every token
        return;
    }
    // Until a running request's next classifier call (each request is refined at its own
    // multiples of the period), unless reading ahead proves longer.
    std::int64_t next = INT_MAX;
    const int every = pred_->refreshEvery();
    auto refreshIn = [&](ReqId id) { return every - r.view.state(id).generated % every; };
    if (every == 1 && !(r.view.running().empty() && out.resume.empty())) {
        next = 1; // every request is refined at every token
    } else {
        for (ReqId id : r.view.running()) next = std::min<std::int64_t>(next, refreshIn(id));
        for (ReqId id : out.resume) next = std::min<std::int64_t>(next, refreshIn(id));
    }
    out.hold = static_cast<std::int32_t>(next);
    if (!out.resume.empty()) return; // resumed requests decode next, unseen by lookAhead
    const bool acted =
        !out.admit.empty() || !out.preempt.empty() || !out.suspend.empty() || !out.kill.empty();
    if (!acted && !std::isnan(r.stop_key))
        out.hold = lookAhead(r.view, r.stop_key);
    else if (movable_.empty())
        out.hold = lookAhead(r.view, best);
}

std::int32_t PriorityScheduler::lookAhead(const EngineView& view, double threshold) {
    // Called in two cases, each with a threshold that no key may rise above unseen:
    // - Nothing was done, and the candidate (waiting or suspended) with key `threshold`
    //   found no seat or no KV. Until a request arrives or finishes (the engine asks again
    //   then), KV only gets scarcer, and the candidate can gain a seat or KV only from a
    //   running request that becomes movable, i.e. whose key rises above `threshold`:
    //   the requests already above it were counted and were not enough, and their keys
    //   falling only frees less.
    // - No running request ranked after the best waiting or suspended one (`threshold`),
    //   and this decision admitted or resumed what fits. `threshold` is the one before the
    //   admissions; it can only have risen since, so the answer is never late. Requests
    //   admitted now prefill next, and the engine asks again after a prefill iteration.
    // So the engine may run until the first token at which a preemptible running request's
    // refined prediction rises above `threshold`, or until it stops being preemptible.
    // Requests not preemptible now cannot become so again; those above `threshold` were
    // counted already.
    std::int64_t hold = INT_MAX;
    for (const auto& [k, id] : preemptible_now_) {
        if (k > threshold) continue;
        const ReqState& s = view.state(id);
        // The last age at which it may still be preempted: age < C x initial.
        const double bound = std::ceil(opt_.C * initialOf(id)) - 1;
        const int limit = std::isinf(opt_.C) || bound >= INT_MAX - 1
                              ? INT_MAX - 1
                              : std::max(s.generated, static_cast<int>(bound));
        // Read at most kLookAhead tokens ahead: a refined prediction costs its filter steps
        // once computed (predict/trail_predictor.cpp), and on a lightly loaded trace the
        // queue is usually empty again long before the horizon, when nobody needs them.
        const int near =
            static_cast<int>(std::min<std::int64_t>(limit, std::int64_t(s.generated) + kLookAhead));
        const int at = crossing_.empty() ? pred_->firstAbove(id, s.generated, near, threshold)
                                         : firstAboveKnown(id, s.generated, near, threshold);
        if (at <= near)
            hold = std::min<std::int64_t>(hold, at - s.generated);
        else if (near < limit) // nothing within reach: look again right after it
            hold = std::min<std::int64_t>(hold, near + 1 - s.generated);
    }
    return static_cast<std::int32_t>(std::max<std::int64_t>(1, hold));
}

int PriorityScheduler::firstAboveKnown(ReqId id, int generated, int near, double T) {
    // Called for a request whose key at `generated` is at or below T (lookAhead's entries).
    Crossing& c = crossing_[static_cast<std::size_t>(id)];
    if (c.T <= T && c.from <= generated && generated < c.at) {
        // Its key stays at or below c.T <= T until `at`: no token before `at` is above T.
        if (c.T == T && c.at <= c.to) return c.at <= near ? c.at : near + 1; // known
        const int start = c.at - 1; // >= generated; nothing above T through it
        if (start >= near) return near + 1;
        const int at = pred_->firstAbove(id, start, near, T);
        c.T = T; // [from, at) at or below the old T, so below T; `at` the first above T
        c.at = std::min(at, near + 1);
        c.to = near;
        return at;
    }
    const int at = pred_->firstAbove(id, generated, near, T);
    c = {T, generated, std::min(at, near + 1), near};
    return at;
}

} // namespace kairos
