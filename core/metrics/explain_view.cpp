#include "metrics/explain_view.h"

#include "lod/timeline.h"
#include "metrics/request_metrics.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace kairos {

ExplainIndex::ExplainIndex(const RunLog& log) : log_(log) {
    // Decode iteration ends per replica (a fleet's requests emit at their own replica's),
    // and a fleet's KV per replica (viewAt of one replica): each replica's log built once.
    if (log.fleet())
        for (int r = 0; r < log.replicas; ++r) {
            const RunLog one = replicaLog(log, r);
            decode_ends_.push_back(decodeEnds(one));
            kv_replica_.push_back(lod::kvSeries(one));
        }
    else
        decode_ends_.push_back(decodeEnds(log));
    const auto n = static_cast<std::size_t>(std::max(0, log.num_requests));
    output_.assign(n, -1);
    prompt_.assign(n, 0);
    arrival_.assign(n, std::nan(""));
    // Each table in two passes: count per request, then place each index at its slot.
    // `each(visit)` calls visit(request, index) for every entry, in order.
    auto build = [n](PerRequest& t, const auto& each) {
        t.start.assign(n + 1, 0);
        each([&](std::size_t r, std::uint32_t) { ++t.start[r + 1]; });
        for (std::size_t r = 0; r < n; ++r) t.start[r + 1] += t.start[r];
        t.index.resize(t.start[n]);
        std::vector<std::uint32_t> at(t.start.begin(), t.start.end() - 1);
        each([&](std::size_t r, std::uint32_t i) { t.index[at[r]++] = i; });
    };
    build(events_of_, [&](const auto& visit) {
        for (std::size_t i = 0; i < log.events.size(); ++i)
            if (const auto r = static_cast<std::size_t>(log.events[i].req); r < n)
                visit(r, static_cast<std::uint32_t>(i));
    });
    for (const Event& e : log.events) {
        const auto r = static_cast<std::size_t>(e.req);
        if (r >= n) continue;
        if (e.ev == Ev::Arrive) {
            arrival_[r] = e.t;
            prompt_[r] = e.value;
        } else if (e.ev == Ev::Finish) {
            output_[r] = e.value;
        }
    }
    const auto& ex = log.explain;
    build(reasons_of_, [&](const auto& visit) {
        for (std::size_t i = 0; i < ex.reasons.size(); ++i) {
            const Reason& r = ex.reasons[i];
            if (static_cast<std::size_t>(r.req) < n)
                visit(static_cast<std::size_t>(r.req), static_cast<std::uint32_t>(i));
            if (r.other >= 0 && static_cast<std::size_t>(r.other) < n && r.other != r.req)
                visit(static_cast<std::size_t>(r.other), static_cast<std::uint32_t>(i));
        }
    });
    for (std::size_t i = 0; i < ex.reasons.size(); ++i)
        if (i == 0 || ex.reasons[i - 1].call != ex.reasons[i].call)
            acting_calls_.push_back(ex.reasons[i].call);
    build(insights_of_, [&](const auto& visit) {
        for (std::size_t i = 0; i < ex.insights.size(); ++i)
            if (const auto r = static_cast<std::size_t>(ex.insights[i].req); r < n)
                visit(r, static_cast<std::uint32_t>(i));
    });
    // A request's samples are recorded in time order but for its arrival, sampled when the
    // engine saw it (at the end of a stretch, with the arrival's time): keep them sorted.
    for (std::size_t r = 0; r < n; ++r)
        std::stable_sort(
            insights_of_.index.begin() + insights_of_.start[r],
            insights_of_.index.begin() + insights_of_.start[r + 1],
            [&](std::uint32_t a, std::uint32_t b) { return ex.insights[a].t < ex.insights[b].t; });
    kv_ = lod::kvSeries(log);
}

std::int32_t ExplainIndex::generatedAt(ReqId id, double t) const {
    std::int32_t at = 0;
    bool decoding = false;
    double anchor = 0;
    bool recompute = false;
    for (std::uint32_t i : eventsOf(id)) {
        const Event& e = log_.events[i];
        if (e.t > t) break;
        switch (e.ev) {
        case Ev::PrefillEnd:
            recompute = false;
            decoding = true;
            anchor = e.t;
            at = e.value;
            break;
        case Ev::Resume:
            at = e.value;
            if (!recompute) {
                decoding = true;
                anchor = e.t;
            }
            break;
        case Ev::Preempt:
            recompute = true;
            decoding = false;
            at = e.value;
            break;
        case Ev::Suspend:
        case Ev::Finish:
        case Ev::Kill:
            decoding = false;
            at = e.value;
            break;
        default:
            break;
        }
    }
    if (!decoding) return at;
    const auto& ends =
        decode_ends_[log_.fleet() ? static_cast<std::size_t>(log_.replica_of[std::size_t(id)]) : 0];
    const auto from = std::upper_bound(ends.begin(), ends.end(), anchor);
    const auto to = std::upper_bound(from, ends.end(), t);
    return at + static_cast<std::int32_t>(to - from);
}

const Insight* ExplainIndex::insightAt(ReqId id, double t) const {
    const auto& v = insightsOf(id);
    const auto& ins = log_.explain.insights;
    const auto it = std::upper_bound(v.begin(), v.end(), t,
                                     [&](double x, std::uint32_t i) { return x < ins[i].t; });
    return it == v.begin() ? nullptr : &ins[*std::prev(it)];
}

bool ExplainIndex::stateAt(ReqId id, double t, Insight* out) const {
    const Insight* in = insightAt(id, t);
    if (!in) return false;
    *out = *in;
    if (in->generated >= 0) {
        const double since = double(generatedAt(id, t) - in->generated);
        // As the policies count: a remaining count stays at least 1 while it runs.
        auto down = [&](double v) {
            return std::isfinite(v) && since > 0 ? std::max(std::min(v, 1.0), v - since) : v;
        };
        out->predicted = down(in->predicted);
        if (log_.explain.key_counts_down) out->key = down(in->key);
    }
    return true;
}

bool ExplainIndex::onReplica(std::int64_t call, int replica) const {
    const auto& cr = log_.explain.call_replica;
    return replica < 0 || cr.empty() || cr[static_cast<std::size_t>(call)] == replica;
}

std::int64_t ExplainIndex::callAt(double t, int replica) const {
    const auto& c = log_.explain.calls;
    const auto it = std::upper_bound(c.begin(), c.end(), t,
                                     [](double x, const CallRecord& r) { return x < r.t; });
    std::int64_t i = static_cast<std::int64_t>(it - c.begin()) - 1;
    while (i >= 0 && !onReplica(i, replica)) --i;
    return i;
}

std::int64_t ExplainIndex::actingCall(double t, int direction, int replica) const {
    const auto& calls = log_.explain.calls;
    const auto& a = acting_calls_;
    auto later = [&](double x, std::uint32_t c) { return x < calls[c].t; };
    auto earlier = [&](std::uint32_t c, double x) { return calls[c].t < x; };
    if (direction > 0) {
        auto it = std::upper_bound(a.begin(), a.end(), t, later);
        while (it != a.end() && !onReplica(*it, replica)) ++it;
        return it == a.end() ? -1 : std::int64_t(*it);
    }
    auto it = direction < 0 ? std::lower_bound(a.begin(), a.end(), t, earlier)
                            : std::upper_bound(a.begin(), a.end(), t, later);
    while (it != a.begin() && !onReplica(*std::prev(it), replica)) --it;
    return it == a.begin() ? -1 : std::int64_t(*std::prev(it));
}

std::pair<std::size_t, std::size_t> ExplainIndex::reasonsOfCall(std::int64_t call) const {
    const auto& r = log_.explain.reasons;
    if (call < 0) return {0, 0};
    const auto c = static_cast<std::uint32_t>(call);
    const auto lo = std::lower_bound(r.begin(), r.end(), c,
                                     [](const Reason& x, std::uint32_t v) { return x.call < v; });
    const auto hi = std::upper_bound(lo, r.end(), c,
                                     [](std::uint32_t v, const Reason& x) { return v < x.call; });
    return {static_cast<std::size_t>(lo - r.begin()), static_cast<std::size_t>(hi - r.begin())};
}

std::int64_t ExplainIndex::kvAt(double t, int replica) const {
    const auto& kv = replica >= 0 && static_cast<std::size_t>(replica) < kv_replica_.size()
                         ? kv_replica_[static_cast<std::size_t>(replica)]
                         : kv_;
    const auto it =
        std::upper_bound(kv.begin(), kv.end(), t,
                         [](double x, const std::pair<double, double>& p) { return x < p.first; });
    return it == kv.begin() ? 0 : static_cast<std::int64_t>(std::prev(it)->second);
}

SchedulerView viewAt(const ExplainIndex& ix, double t, int replica) {
    const RunLog& log = ix.log();
    if (!log.fleet()) replica = -1;
    if (replica >= log.replicas)
        throw std::invalid_argument("replica " + std::to_string(replica) + ": the run had " +
                                    std::to_string(log.replicas));
    auto mine = [&](std::size_t r) { return replica < 0 || log.replica_of[r] == replica; };
    const auto n = static_cast<std::size_t>(std::max(0, log.num_requests));
    enum : char { NotYet, Waiting, Running, Suspended, Finished, Killed };
    std::vector<char> phase(n, NotYet);
    std::vector<double> since(n, 0);
    std::vector<std::int32_t> preempt(n, 0), suspend(n, 0);
    std::vector<std::uint32_t> order; // requests in the order they entered the batch
    HandBacks hand_backs(n);
    for (const Event& e : log.events) {
        if (e.t > t) break;
        const auto r = static_cast<std::size_t>(e.req);
        if (r >= n || !mine(r)) continue;
        const bool hand_back = hand_backs.handBack(e);
        char next = phase[r];
        switch (e.ev) {
        case Ev::Arrive:
            next = Waiting;
            break;
        case Ev::Admit:
        case Ev::Resume:
            next = Running;
            break;
        case Ev::Preempt:
            next = Waiting;
            if (!hand_back) ++preempt[r];
            break;
        case Ev::Suspend:
            next = Suspended;
            ++suspend[r];
            break;
        case Ev::Finish:
            next = Finished;
            break;
        case Ev::Kill:
            next = Killed;
            break;
        default:
            break;
        }
        if (next != phase[r]) {
            phase[r] = next;
            since[r] = e.t;
            if (next == Running) order.push_back(static_cast<std::uint32_t>(r));
        }
    }
    SchedulerView v;
    v.t = t;
    v.replica = replica;
    // A fleet's KV: one replica's, or all of theirs against all of their capacity.
    v.kv_capacity = log.kv_capacity_tokens * (log.fleet() && replica < 0 ? log.replicas : 1);
    v.kv_used = ix.kvAt(t, replica);
    auto row = [&](std::size_t r) {
        ViewRow w;
        w.req = static_cast<ReqId>(r);
        w.replica = log.fleet() ? log.replica_of[r] : 0;
        w.arrival = ix.arrivalOf(w.req);
        w.since = since[r];
        w.prompt = ix.promptOf(w.req);
        w.output = ix.outputOf(w.req);
        w.generated = ix.generatedAt(w.req, t);
        w.preemptions = preempt[r];
        w.suspensions = suspend[r];
        Insight in;
        if (ix.stateAt(w.req, t, &in)) {
            w.key = in.key;
            w.predicted = in.predicted;
            w.deadline = in.deadline;
            w.alpha = in.alpha;
            w.wcet = in.wcet;
        }
        return w;
    };
    for (std::size_t r = 0; r < n; ++r) {
        if (!mine(r)) continue;
        switch (phase[static_cast<std::size_t>(r)]) {
        case NotYet:
            ++v.not_arrived;
            break;
        case Waiting:
            v.waiting.push_back(row(r));
            break;
        case Suspended:
            v.suspended.push_back(row(r));
            break;
        case Finished:
            ++v.finished;
            break;
        case Killed:
            ++v.killed;
            break;
        default:
            break;
        }
    }
    // The running batch in the order its members entered it (the last entry counts).
    std::vector<char> seen(n, 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (phase[*it] == Running && !seen[*it]) {
            seen[*it] = 1;
            v.running.push_back(row(*it));
        }
    std::reverse(v.running.begin(), v.running.end());
    const bool desc = log.explain.key_descending;
    auto byKey = [desc](const ViewRow& a, const ViewRow& b) {
        const bool na = std::isnan(a.key), nb = std::isnan(b.key);
        if (na != nb) return nb; // unknown keys last
        if (!na && a.key != b.key) return desc ? a.key > b.key : a.key < b.key;
        if (a.arrival != b.arrival) return a.arrival < b.arrival;
        return a.req < b.req;
    };
    std::sort(v.waiting.begin(), v.waiting.end(), byKey);
    std::sort(v.suspended.begin(), v.suspended.end(), byKey);
    v.call = ix.callAt(t, replica);
    if (v.call >= 0) {
        v.call_t = log.explain.calls[static_cast<std::size_t>(v.call)].t;
        v.reasons = ix.reasonsOfCall(v.call);
    }
    return v;
}

std::vector<StoryLine> storyOf(const ExplainIndex& ix, ReqId id) {
    std::vector<StoryLine> out;
    const RunLog& log = ix.log();
    if (id < 0 || id >= log.num_requests) return out;
    for (std::uint32_t i : ix.eventsOf(id))
        if (log.events[i].ev != Ev::KillCause)
            out.push_back({StoryLine::Kind::Event, log.events[i].t, i});
    for (std::uint32_t i : ix.reasonsOf(id))
        out.push_back({StoryLine::Kind::Reason, log.explain.reasons[i].t, i});
    for (std::uint32_t i : ix.insightsOf(id))
        out.push_back({StoryLine::Kind::State, log.explain.insights[i].t, i});
    // At one time: its arrival, then the decision, then what happened, then the state.
    std::stable_sort(out.begin(), out.end(), [&](const StoryLine& a, const StoryLine& b) {
        if (a.t != b.t) return a.t < b.t;
        auto rank = [&](const StoryLine& l) {
            if (l.kind == StoryLine::Kind::Event) {
                const Ev e = log.events[l.index].ev;
                return e == Ev::Arrive || e == Ev::Budget ? 0 : 2;
            }
            return l.kind == StoryLine::Kind::Reason ? 1 : 3;
        };
        return rank(a) < rank(b);
    });
    return out;
}

std::string reasonNumbers(const Reason& r) {
    std::string s;
    char b[64];
    const Rule& rule = ruleOf(r.rule);
    const int n = ruleVarCount(r.rule);
    for (int i = 0; i < n; ++i) {
        std::snprintf(b, sizeof b, "%s%s = %.6g", i ? ", " : "",
                      rule.vars[static_cast<std::size_t>(i)], r.x[static_cast<std::size_t>(i)]);
        s += b;
    }
    return s;
}

std::string describeReason(const Reason& r, const Workload* w) {
    const auto id = [w](ReqId row) {
        return std::to_string(w ? w->idOf(static_cast<std::size_t>(row)) : row);
    };
    std::string s = std::string(actName(r.act)) + " req " + id(r.req);
    if (r.act == Act::Dispatch) s += " segment " + std::to_string(r.value);
    if (r.act == Act::Kill)
        s += std::string(" (") + killCauseName(static_cast<KillCause>(r.value)) + ")";
    s += ": ";
    s += ruleOf(r.rule).name;
    const std::string x = reasonNumbers(r);
    if (!x.empty()) s += " (" + x + ")";
    if (r.other >= 0) s += " for req " + id(r.other);
    return s;
}

} // namespace kairos
