#include "sched/timely.h"

#include "exec/execution_model.h"
#include "sched/admission.h"

#include <algorithm>
#include <cmath>

namespace kairos {

// The rules its reasons cite (model/explain.h), registered as the program starts.
namespace rules {
const RuleId kTimelyDispatch =
    registerRule({"timely.dispatch", "timely: segment generated, dispatched to the robot",
                  RuleVars{"generated", "segment_end", "segment"},
                  "TimelyLLM: a plan segment is complete and goes to the robot", false,
                  [](const double* x) { return x[0] >= x[1]; }});
const RuleId kTimelySuspend = registerRule(
    {"timely.suspend", "timely: segment done, waits for its next turn",
     RuleVars{"generated", "segment_end"},
     "TimelyLLM: while the robot executes, the generation is suspended with its KV kept", false,
     [](const double* x) { return x[0] >= x[1]; }});
const RuleId kTimelyAdmit = registerRule(
    {"timely.admit", "timely: ready segments in rank order, need <= free",
     RuleVars{"key", "rank", "need", "free"},
     "TimelyLLM: the ready segments ranked (PUD priority, arrival or deadline); this one, "
     "at `rank` (0: first), starts as its prompt fits",
     false, [](const double* x) { return x[2] <= x[3] && x[1] >= 0; }});
const RuleId kTimelyResume = registerRule(
    {"timely.resume", "timely: suspended generation in rank order takes a seat",
     RuleVars{"key", "rank", "seats"},
     "TimelyLLM: a suspended generation's next segment, at `rank`, takes a seat (KV kept)", false,
     [](const double* x) { return x[2] >= 1 && x[1] >= 0; }});
} // namespace rules

std::string TimelyScheduler::name() const {
    std::string batching;
    switch (opt_.batching) {
    case TimelyOptions::Batching::Wcet:
        batching = "WCET batching, max segment " + std::to_string(opt_.max_segment);
        break;
    case TimelyOptions::Batching::UtilityGain:
        batching = "utility-gain admission";
        break;
    case TimelyOptions::Batching::Fixed:
        batching = "fixed batch";
        break;
    }
    switch (opt_.mode) {
    case TimelyOptions::Mode::Pud:
        return "timely(PUD, " + batching + ")";
    case TimelyOptions::Mode::Fcfs:
        return "seg_fcfs(" + batching + ")";
    case TimelyOptions::Mode::Edf:
        return "seg_edf(" + batching + ")";
    case TimelyOptions::Mode::Stream:
        return "vllm_stream";
    }
    return "timely";
}

void TimelyScheduler::reset(const Workload& w) {
    index_.clear();
    window_ = 0;
    plans_.assign(w.requests.size(), Plan{});
    ranked_key_.assign(w.requests.size(), {std::nan(""), 0.0});
    for (std::size_t i = 0; i < w.requests.size(); ++i) {
        const Request& r = w.requests[i];
        Plan& p = plans_[i];
        int sum = 0;
        if (r.segments.empty()) {
            p.ends.push_back(r.output_tokens);
            p.exec.push_back(0);
        }
        for (const Segment& s : r.segments) {
            p.ends.push_back(sum += s.tokens);
            p.exec.push_back(s.exec_s);
        }
        p.ready = r.arrival;
        const Tuf tuf = tufOf(r);
        window_ = std::max(window_, tuf.zeroTime());
    }
}

Tuf TimelyScheduler::tufOf(const Request& r) const {
    // Requests without a TUF: full utility for `slack` seconds, zero at twice that.
    return r.tuf ? *r.tuf : Tuf{opt_.slack, -1.0 / opt_.slack, 1.0};
}

double TimelyScheduler::stepTime(std::int64_t extra) const {
    if (!ete_) return -1;
    return ete_->decodeTime(static_cast<std::int32_t>(running_n_ + extra), running_kv_);
}

void TimelyScheduler::onEnqueue(const EngineView& view, ReqId id) {
    Plan& p = plans_[static_cast<std::size_t>(id)];
    // FIFO/EDF: the rank key, fixed while waiting. PUD: when the segment's utility clock
    // started (arrival for s_0, the robot's free time after), see schedule().
    p.index_key = opt_.mode != TimelyOptions::Mode::Pud ? rankKey(view, id)
                  : p.next == 0                         ? view.state(id).req->arrival
                                                        : p.robot_free;
    index_.emplace(p.index_key, id);
}

int TimelyScheduler::Plan::segmentStart() const {
    return next == 0 ? 0 : ends[static_cast<std::size_t>(next - 1)];
}

double TimelyScheduler::generationTime(const EngineView& view, ReqId id) const {
    if (opt_.segment_time > 0) return opt_.segment_time;
    const Plan& p = plans_[static_cast<std::size_t>(id)];
    const int tokens = p.ends[static_cast<std::size_t>(p.next)] -
                       std::max(p.segmentStart(), view.state(id).generated);
    const double step = stepTime(1);
    return step > 0 ? std::max(1, tokens) * step : TimelyOptions{}.segment_time;
}

double TimelyScheduler::firstDue(const Request& r) const {
    return r.arrival + (r.tuf ? r.tuf->ert : opt_.slack);
}

double TimelyScheduler::due(const EngineView& view, ReqId id) const {
    const Plan& p = plans_[static_cast<std::size_t>(id)];
    return p.next == 0 ? firstDue(*view.state(id).req) : p.robot_free;
}

double TimelyScheduler::priority(const EngineView& view, ReqId id, double t) const {
    const Plan& p = plans_[static_cast<std::size_t>(id)];
    const Request& r = *view.state(id).req;
    const Tuf tuf = tufOf(r);
    const double g = generationTime(view, id);
    double value;
    if (p.next == 0)
        value = tuf.value(t + g - r.arrival);
    else
        value = tuf.valueSuspended(std::max(0.0, t + g - p.robot_free));
    if (opt_.literal_eq4) {
        // Eq. 4 as written: a late segment's L is negative (below every on-time one while
        // its TUF is positive, above them past its cut-off); at L = 0, where the formula is
        // undefined, the nearest side (a microsecond).
        double L = due(view, id) - (t + g);
        if (std::abs(L) < 1e-6) L = L < 0 ? -1e-6 : 1e-6;
        return value / (std::max(1e-3, g) * L);
    }
    const double slack = std::max(1e-3, due(view, id) - (t + g));
    return std::max(0.0, value) / (std::max(1e-3, g) * slack);
}

double TimelyScheduler::rankKey(const EngineView& view, ReqId id) const {
    switch (opt_.mode) {
    case TimelyOptions::Mode::Pud:
        return -priority(view, id, view.now());
    case TimelyOptions::Mode::Edf: // the request's deadline, kept for every segment
        return firstDue(*view.state(id).req);
    case TimelyOptions::Mode::Fcfs:
        return view.state(id).req->arrival;
    default: // vllm_stream: never suspends, so this is the arrival too
        return plans_[static_cast<std::size_t>(id)].ready;
    }
}

double TimelyScheduler::shownKey(double rank_key) const {
    return opt_.mode == TimelyOptions::Mode::Pud ? -rank_key : rank_key;
}

std::string TimelyScheduler::keyName() const {
    switch (opt_.mode) {
    case TimelyOptions::Mode::Pud:
        return "PUD priority (1/s^2)";
    case TimelyOptions::Mode::Edf:
        return "deadline (s)";
    case TimelyOptions::Mode::Fcfs:
        return "arrival (s)";
    default:
        return "ready (s)";
    }
}

void TimelyScheduler::inspect(const EngineView& view, ReqId id, Insight& out) const {
    const auto i = static_cast<std::size_t>(id);
    out.key = i < ranked_key_.size() && ranked_key_[i].first == view.now()
                  ? shownKey(ranked_key_[i].second)
                  : shownKey(rankKey(view, id));
    out.deadline = due(view, id);
}

void TimelyScheduler::observeRates(const EngineView& view) {
    const double now = view.now();
    for (ReqId id : view.running()) {
        const ReqState& s = view.state(id);
        Plan& p = plans_[static_cast<std::size_t>(id)];
        if (s.generated > p.obs_gen) {
            // The rate of its last iteration, as when the engine asks after every one: over
            // a skipped-ahead stretch, the stretch's last iteration.
            p.spt = s.generated - p.obs_gen == 1 ? now - p.obs_t : view.lastIterationTime();
            p.obs_t = now;
            p.obs_gen = s.generated;
        }
    }
}

bool TimelyScheduler::wcetAllows(const EngineView& view, const std::vector<ReqId>& pool) const {
    // Section 4.4: "we assess whether the most urgent generation in the execution pool can
    // be completed within its remaining time budget": the one whose due time comes first
    // among those still ahead of it (a late one cannot be saved by waiting longer).
    const double now = view.now();
    ReqId urgent = -1;
    double first_due = INFINITY;
    for (ReqId id : pool) {
        const Plan& p = plans_[static_cast<std::size_t>(id)];
        // The lag for one generation: the last to join has not shown its rate yet (no token
        // since it joined), so the rate of the larger batch is not known: wait for it.
        if (!(p.spt > 0)) {
            if (opt_.serial_joins) return false;
            continue; // its rate shows one generation late
        }
        if (!view.state(id).req->tuf) continue; // no time budget to protect
        const double end = due(view, id);
        if (end > now && end < first_due) first_due = end, urgent = id;
    }
    if (urgent < 0) return true;
    const ReqState& s = view.state(urgent);
    const Plan& p = plans_[static_cast<std::size_t>(urgent)];
    const int left = std::max(1, opt_.max_segment - (s.generated - p.segmentStart()));
    return now + left * p.spt <= first_due;
}

void TimelyScheduler::schedule(const EngineView& view, Decision& out) {
    const double now = view.now();
    ete_ = dynamic_cast<const EteModel*>(view.model());
    observeRates(view);
    running_n_ = static_cast<std::int64_t>(view.running().size());
    running_kv_ = 0;
    for (ReqId id : view.running()) running_kv_ += view.state(id).kv;
    // 1. Segments finished in the last iterations: dispatch, and suspend the generation
    //    (KV kept) until its next segment is picked.
    std::int64_t hold = INT_MAX;
    for (ReqId id : view.running()) {
        const ReqState& s = view.state(id);
        if (s.needsPrefill()) continue;
        Plan& p = plans_[static_cast<std::size_t>(id)];
        bool done_segment = false;
        while (p.next + 1 < static_cast<int>(p.ends.size()) &&
               s.generated >= p.ends[static_cast<std::size_t>(p.next)]) {
            out.dispatch.emplace_back(id, p.next);
            if (out.explain)
                out.because(Act::Dispatch, id, rules::kTimelyDispatch,
                            {double(s.generated), double(p.ends[static_cast<std::size_t>(p.next)]),
                             double(p.next)},
                            -1, p.next);
            p.robot_free = std::max(now, p.robot_free) + p.exec[static_cast<std::size_t>(p.next)];
            ++p.next;
            done_segment = true;
        }
        if (done_segment && opt_.mode != TimelyOptions::Mode::Stream) {
            out.suspend.push_back(id);
            if (out.explain)
                out.because(
                    Act::Suspend, id, rules::kTimelySuspend,
                    {double(s.generated), double(p.ends[static_cast<std::size_t>(p.next - 1)])});
            p.ready = now;
            continue;
        }
        hold = std::min<std::int64_t>(hold, p.ends[static_cast<std::size_t>(p.next)] - s.generated);
    }
    const bool wcet =
        opt_.batching == TimelyOptions::Batching::Wcet && opt_.mode != TimelyOptions::Mode::Stream;
    // WCET batching and the utility-gain admission decide again after every iteration while
    // anything is ready to join: both compare times and utilities that move with the clock.
    // (`guided`: the utility-gain admission below, which needs the ETE model's times.)
    const bool guided = opt_.batching == TimelyOptions::Batching::UtilityGain &&
                        opt_.mode != TimelyOptions::Mode::Stream && ete_;
    if ((wcet || guided) &&
        (!view.waiting().empty() || !view.suspended().empty() || !out.suspend.empty()))
        hold = 1;
    out.hold = static_cast<std::int32_t>(std::max<std::int64_t>(1, hold));
    if (prefillPending(view)) return;

    // 2. Rank the ready segments: new requests (waiting) and suspended generations. FIFO
    //    and EDF keys do not change while a request waits, so new requests come from an
    //    index in key order; PUD priorities change with time and are evaluated for all,
    //    and only the best few are sorted.
    const std::int64_t seats_now = view.limits().max_num_seqs -
                                   static_cast<std::int64_t>(view.running().size()) +
                                   static_cast<std::int64_t>(out.suspend.size());
    const std::size_t want = static_cast<std::size_t>(std::max<std::int64_t>(0, seats_now)) + 16;
    std::vector<std::pair<double, ReqId>> ready;
    // An index entry is current if its request waits and it was made by its last enqueue.
    auto current = [&](const std::pair<double, ReqId>& e) {
        return view.state(e.second).phase == Phase::Waiting &&
               plans_[static_cast<std::size_t>(e.second)].index_key == e.first;
    };
    if (opt_.mode == TimelyOptions::Mode::Pud && std::isfinite(window_)) {
        // A segment whose utility clock started more than window_ ago (the longest time to
        // zero utility of any TUF here) has priority 0: evaluate the recent ones, and of
        // the old ones only the first `want` (their ties go to the lower id).
        const double old = now - window_;
        for (auto it = index_.rbegin(); it != index_.rend() && it->first >= old; ++it)
            if (current(*it)) ready.emplace_back(rankKey(view, it->second), it->second);
        std::size_t taken = 0;
        for (auto it = index_.begin(); it != index_.end() && it->first < old && taken < want;) {
            if (!current(*it)) {
                it = index_.erase(it);
                continue;
            }
            ready.emplace_back(rankKey(view, it->second), it->second);
            ++it;
            ++taken;
        }
    } else if (opt_.mode == TimelyOptions::Mode::Pud) {
        for (ReqId id : view.waiting()) ready.emplace_back(rankKey(view, id), id);
    } else {
        std::size_t taken = 0;
        for (auto it = index_.begin(); it != index_.end() && taken < want;) {
            if (!current(*it)) {
                it = index_.erase(it);
                continue;
            }
            ready.push_back(*it++);
            ++taken;
        }
    }
    if (ready.size() > want) {
        std::partial_sort(ready.begin(), ready.begin() + static_cast<std::ptrdiff_t>(want),
                          ready.end());
        ready.resize(want);
    }
    // Suspended generations are always candidates: they need only a seat, and the best
    // few new requests may all be waiting for memory that the suspended ones hold.
    for (ReqId id : view.suspended()) ready.emplace_back(rankKey(view, id), id);
    for (ReqId id : out.suspend) ready.emplace_back(rankKey(view, id), id);
    std::sort(ready.begin(), ready.end());
    if (out.explain && opt_.mode == TimelyOptions::Mode::Pud) {
        // What it ranked by, for the engine's samples (inspect reads it back this instant).
        for (const auto& [key, id] : ready) {
            out.ranked.push_back(id);
            ranked_key_[static_cast<std::size_t>(id)] = {now, key};
        }
    }

    // 3. Start them in rank order while seats and KV allow.
    AdmissionBudget budget(view, opt_.watermark);
    std::int64_t seats = view.limits().max_num_seqs -
                         static_cast<std::int64_t>(view.running().size()) +
                         static_cast<std::int64_t>(out.suspend.size());
    budget.setSeats(seats);
    // Latency-guided admission (TimelyLLM's adaptive batching, extended to prefill). A
    // segment joins the batch only if the utility it gains by starting now rather than
    // after the segments already in the batch is at least the utility those lose by the
    // delay it causes: the prefill of admitted prompts stalls the batch (vLLM v0 runs it
    // as its own iteration) and every decode step grows with the batch. Utilities are the
    // TUFs at the predicted segment ends (TUF for s_0, TUF_1 after the robot). Without
    // this a burst of tasks is prefilled together and urgent plans (utility 0 half a second
    // after arrival) arrive too late: on the authors' 25-agent workload PUD order alone
    // kept urgent utility at FCFS's. The first segment is always admitted when nothing runs.
    struct Tracked {
        double origin; // arrival (s_0) or when the robot is free (s_k)
        Tuf tuf;
        bool first;         // s_0: TUF; else TUF_1
        std::int64_t left;  // decode steps to the end of its segment
        bool after_prefill; // a new request: its first token comes from the prefill
        double utility(double end) const {
            return first ? tuf.value(end - origin) : tuf.valueSuspended(end - origin);
        }
    };
    auto describe = [&](ReqId id, std::int64_t left, bool fresh) {
        const Plan& p = plans_[static_cast<std::size_t>(id)];
        const Request& r = *view.state(id).req;
        const Tuf tuf = tufOf(r);
        return Tracked{p.next == 0 ? r.arrival : p.robot_free, tuf, p.next == 0, left, fresh};
    };
    std::vector<Tracked> tracked;
    // The generations that stay in the batch (running, not suspended by this decision):
    // what either batching rule protects.
    std::vector<ReqId> staying;
    if (wcet || guided)
        for (ReqId id : view.running())
            if (std::find(out.suspend.begin(), out.suspend.end(), id) == out.suspend.end())
                staying.push_back(id);
    const bool wcet_room = !wcet || staying.empty() || wcetAllows(view, staying);
    std::int64_t batch = running_n_ - static_cast<std::int64_t>(out.suspend.size());
    std::int64_t prefill_l = 0;
    double prefill_l2 = 0;
    if (guided)
        for (ReqId id : staying) {
            const Plan& p = plans_[static_cast<std::size_t>(id)];
            const int left = p.ends[static_cast<std::size_t>(p.next)] - view.state(id).generated;
            if (left > 0) tracked.push_back(describe(id, left, false));
        }
    auto endOf = [&](const Tracked& t, double prefill, double step) {
        return now + prefill +
               static_cast<double>(std::max<std::int64_t>(0, t.left - (t.after_prefill ? 1 : 0))) *
                   step;
    };
    // Whether adding `cand` (prefill of l tokens) gains at least what the others lose.
    auto worthIt = [&](const Tracked& cand, std::int64_t l) {
        const double p1 = prefill_l > 0 ? ete_->prefillTime(prefill_l, prefill_l2) : 0;
        const double p2 = prefill_l + l > 0
                              ? ete_->prefillTime(prefill_l + l, prefill_l2 + double(l) * double(l))
                              : 0;
        const auto b1 = static_cast<std::int32_t>(std::max<std::int64_t>(1, batch));
        const double s1 = ete_->decodeTime(b1, running_kv_),
                     s2 = ete_->decodeTime(b1 + 1, running_kv_);
        double loss = 0, last = now;
        for (const Tracked& t : tracked) {
            const double e1 = endOf(t, p1, s1);
            loss += t.utility(e1) - t.utility(endOf(t, p2, s2));
            last = std::max(last, e1);
        }
        const double e_now = endOf(cand, p2, s2);
        const double gain = cand.utility(e_now) - cand.utility(e_now + (last - now));
        return gain >= loss;
    };
    std::int64_t added = 0;
    // Once a new request waits for memory, no later-ranked new request overtakes it; a
    // suspended generation ranked later still resumes (its KV is kept: it needs only a
    // seat, and resuming it is what eventually frees the memory the new one waits for).
    bool fresh_blocked = false;
    double rank = -1; // position in `ready` (a reason's number)
    for (const auto& [key, id] : ready) {
        ++rank;
        if (seats <= 0 || !wcet_room || (wcet && opt_.serial_joins && added > 0)) break;
        const ReqState& s = view.state(id);
        if (fresh_blocked && s.phase == Phase::Waiting) continue;
        const Plan& p = plans_[static_cast<std::size_t>(id)];
        const std::int64_t left = std::max<std::int64_t>(
            1, p.ends[static_cast<std::size_t>(p.next)] - std::max(p.segmentStart(), s.generated));
        const bool fresh = s.phase == Phase::Waiting;
        const std::int64_t l = fresh ? s.context() - view.prefixHit(id) : 0; // tokens to compute
        const Tracked me = describe(id, left, fresh);
        if (guided && (added > 0 || batch > 0) && !worthIt(me, l))
            continue; // it would cost the batch more than it gains; a cheaper one may not
        if (fresh) {
            const auto v = budget.take(s);
            if (v == AdmissionBudget::Verdict::NeverFits) {
                budget.killNeverFits(out, s);
                continue;
            }
            if (v == AdmissionBudget::Verdict::NoRoom) {
                fresh_blocked = true;
                continue;
            }
            out.admit.push_back(id);
            if (out.explain)
                out.because(
                    Act::Admit, id, rules::kTimelyAdmit,
                    {shownKey(key), rank, double(budget.lastNeed()), double(budget.lastFree())});
        } else {
            out.resume.push_back(id); // its KV is kept: it only needs a seat
            if (out.explain)
                out.because(Act::Resume, id, rules::kTimelyResume,
                            {shownKey(key), rank, double(seats)});
        }
        Plan& joined = plans_[static_cast<std::size_t>(id)];
        joined.obs_t = now; // its rate is measured from here (prefill stall included)
        joined.obs_gen = s.generated;
        joined.spt = std::numeric_limits<double>::quiet_NaN();
        if (guided) {
            tracked.push_back(me);
            ++batch;
            prefill_l += l;
            prefill_l2 += double(l) * double(l);
        }
        --seats;
        ++added;
    }
    // PUD priorities move with the clock: a new request waiting for memory may be overtaken
    // by one that fits once it ranks first, with no event in between.
    if (fresh_blocked && opt_.mode == TimelyOptions::Mode::Pud) out.hold = 1;
    // Resumed generations decode in the next iterations too: stop at their segment ends.
    for (ReqId id : out.resume) {
        const Plan& p = plans_[static_cast<std::size_t>(id)];
        out.hold = static_cast<std::int32_t>(std::clamp<std::int64_t>(
            p.ends[static_cast<std::size_t>(p.next)] - view.state(id).generated, 1, out.hold));
    }
}

} // namespace kairos
