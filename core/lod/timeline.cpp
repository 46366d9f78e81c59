#include "lod/timeline.h"

#include "model/hand_backs.h"
#include "util/enum_names.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kairos::lod {

constexpr EnumName<SpanKind> kSpanKindNames[] = {
    {SpanKind::Queued, "queued"},       {SpanKind::Prefill, "prefill"},
    {SpanKind::Decode, "decoding"},     {SpanKind::Preempted, "preempted"},
    {SpanKind::Suspended, "suspended"}, {SpanKind::Robot, "robot executing"},
    {SpanKind::Folded, "folded"},       {SpanKind::Cached, "cached"},
    {SpanKind::Transfer, "KV transfer"}};

const char* spanKindName(SpanKind p) {
    return enumName(kSpanKindNames, p);
}

std::vector<Row> buildRows(const RunLog& log, const Workload* w) {
    const auto n = static_cast<std::size_t>(log.num_requests);
    std::vector<Row> rows(n);
    struct Open {
        SpanKind kind = SpanKind::Queued;
        double since = 0;
        bool active = false;
        double robot_free = -INFINITY;
        float cached = 0;     // of the open span (a prefill)
        std::int32_t hit = 0; // the last CacheHit, for the prefill that follows it
    };
    std::vector<Open> open(n);
    for (std::size_t i = 0; i < n; ++i) {
        rows[i].id = static_cast<ReqId>(i);
        rows[i].trace_id = w ? w->idOf(i) : static_cast<std::int64_t>(i);
        rows[i].agent = w ? w->agentOf(i) : -1;
        if (i < log.replica_of.size()) rows[i].replica = log.replica_of[i];
        if (i < log.prefill_of.size()) rows[i].prefill_replica = log.prefill_of[i];
    }
    auto enter = [&](std::size_t i, double t, SpanKind p, float cached = 0) {
        Open& o = open[i];
        if (o.active && t > o.since) rows[i].spans.push_back({o.since, t, o.kind, o.cached});
        o.kind = p;
        o.since = t;
        o.active = true;
        o.cached = cached;
    };
    auto close = [&](std::size_t i, double t) {
        Open& o = open[i];
        if (o.active && t > o.since) rows[i].spans.push_back({o.since, t, o.kind, o.cached});
        o.active = false;
        rows[i].end = t;
    };
    {
        // Each row's spans at once: at most one per event that opens or ends one (growing
        // them one push at a time reallocated twice per row, a fifth of the layout's time).
        std::vector<std::uint32_t> most(n, 0);
        for (const Event& e : log.events)
            if (static_cast<std::size_t>(e.req) < n) switch (e.ev) {
                case Ev::Arrive:
                case Ev::PrefillStart:
                case Ev::Resume:
                case Ev::PrefillEnd:
                case Ev::Preempt:
                case Ev::Suspend:
                case Ev::Transfer:
                case Ev::KvArrive:
                    ++most[static_cast<std::size_t>(e.req)];
                    break;
                default:
                    break;
                }
        for (std::size_t i = 0; i < n; ++i) rows[i].spans.reserve(most[i]);
    }
    HandBacks hand_backs(n);
    for (const Event& e : log.events) {
        const auto i = static_cast<std::size_t>(e.req);
        if (i >= n) continue;
        Row& r = rows[i];
        const bool hand_back = hand_backs.handBack(e);
        switch (e.ev) {
        case Ev::Arrive:
            r.arrival = r.end = e.t;
            r.prompt = e.value;
            enter(i, e.t, SpanKind::Queued);
            break;
        case Ev::CacheHit:
            open[i].hit = e.value;
            break;
        case Ev::PrefillStart: {
            // CacheHit's tokens were neither computed nor allocated; the prefill computes
            // e.value tokens of the context.
            const double hit = open[i].hit, total = hit + std::max(0, e.value);
            enter(i, e.t, SpanKind::Prefill, total > 0 ? static_cast<float>(hit / total) : 0.0f);
            open[i].hit = 0;
            break;
        }
        case Ev::Admit:
            open[i].hit = 0; // a CacheHit of this admission follows
            break;
        case Ev::Resume:
            open[i].hit = 0;
            enter(i, e.t, SpanKind::Decode);
            break;
        case Ev::PrefillEnd:
            enter(i, e.t, SpanKind::Decode);
            break;
        case Ev::Preempt:
            // A segment handed back waits in the harness's queue as a new request.
            if (!hand_back) ++r.preemptions;
            enter(i, e.t, hand_back ? SpanKind::Queued : SpanKind::Preempted);
            break;
        case Ev::Suspend:
            enter(i, e.t, SpanKind::Suspended);
            break;
        case Ev::Transfer:
            enter(i, e.t, SpanKind::Transfer);
            break;
        case Ev::KvArrive: // queued at its decode replica until it is taken in
            r.handoff = e.t;
            enter(i, e.t, SpanKind::Queued);
            break;
        case Ev::Dispatch: {
            double exec = 0;
            if (w && i < w->size()) {
                const auto& segs = w->requests[i].segments;
                const auto k = static_cast<std::size_t>(e.value);
                if (k < segs.size()) exec = segs[k].exec_s;
            }
            const double start = std::max(e.t, open[i].robot_free);
            if (exec > 0) r.robot.push_back({start, start + exec, SpanKind::Robot});
            open[i].robot_free = start + exec;
            break;
        }
        case Ev::Finish:
            r.finished = true;
            r.output = e.value;
            close(i, e.t);
            break;
        case Ev::Kill:
            r.killed = true;
            r.output = e.value;
            close(i, e.t);
            break;
        default:
            break;
        }
    }
    return rows;
}

bool hasAgents(const Workload& w) {
    return std::any_of(w.requests.begin(), w.requests.end(),
                       [](const Request& r) { return r.agent >= 0; });
}

std::vector<Row> agentRows(const std::vector<Row>& requests, const Workload& w) {
    // Requests grouped by agent (-1 last), each group by arrival then id.
    std::vector<std::size_t> order;
    order.reserve(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) order.push_back(i);
    auto agentOf = [&](std::size_t i) {
        const std::int32_t a = i < w.size() ? w.requests[i].agent : -1;
        return a < 0 ? std::numeric_limits<std::int32_t>::max() : a; // no agent: last
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto ka = agentOf(a), kb = agentOf(b);
        if (ka != kb) return ka < kb;
        return requests[a].arrival < requests[b].arrival;
    });
    std::vector<Row> out;
    std::size_t g = 0;
    while (g < order.size()) {
        const std::int32_t key = agentOf(order[g]);
        std::size_t e = g;
        while (e < order.size() && agentOf(order[e]) == key) ++e;
        // First fit: the first lane whose last request is over before this one arrives.
        const std::size_t base = out.size();
        for (std::size_t k = g; k < e; ++k) {
            const Row& r = requests[order[k]];
            const double t1 = r.lastTime();
            std::size_t lane = base;
            while (lane < out.size() && !(out[lane].members.back().t1 < r.arrival)) ++lane;
            if (lane == out.size()) {
                Row l;
                l.id = r.id;
                l.trace_id = r.trace_id;
                l.arrival = r.arrival;
                l.finished = true;
                l.agent = key == std::numeric_limits<std::int32_t>::max() ? -1 : key;
                l.lane = static_cast<std::int32_t>(lane - base);
                out.push_back(std::move(l));
            }
            Row& l = out[lane];
            l.members.push_back({r.arrival, t1, r.id, r.killed});
            l.end = std::max(l.end, t1);
            l.finished = l.finished && r.finished;
            l.killed = l.killed || r.killed;
            l.prompt += r.prompt;
            l.output += r.output;
            l.preemptions += r.preemptions;
            l.spans.insert(l.spans.end(), r.spans.begin(), r.spans.end());
            l.robot.insert(l.robot.end(), r.robot.begin(), r.robot.end());
        }
        g = e;
    }
    return out;
}

const Member* memberAt(const std::vector<Member>& members, double t, double slop) {
    auto it = std::upper_bound(members.begin(), members.end(), t,
                               [](double x, const Member& m) { return x < m.t0; });
    // The nearer of the next member and the last one starting at or before t (a tie goes
    // to the next).
    const Member* best = nullptr;
    double dist = slop;
    for (auto c : {it, it == members.begin() ? members.end() : std::prev(it)}) {
        if (c == members.end()) continue;
        const double d = t < c->t0 ? c->t0 - t : (t > c->t1 ? t - c->t1 : 0.0);
        if (d < dist || (!best && d <= dist)) {
            best = &*c;
            dist = d;
        }
    }
    return best;
}

std::pair<double, double> timeExtent(const std::vector<Row>& rows) {
    if (rows.empty()) return {0.0, 0.0};
    double lo = rows.front().arrival, hi = lo;
    for (const Row& r : rows) {
        lo = std::min(lo, r.arrival);
        hi = std::max(hi, r.end);
    }
    return {lo, hi};
}

void fold(const std::vector<Span>& spans, double from, double to, double min_len,
          std::vector<Draw>& out) {
    auto it = std::lower_bound(spans.begin(), spans.end(), from,
                               [](const Span& s, double t) { return s.t1 < t; });
    Draw group;
    bool have = false;
    auto flush = [&] {
        if (!have) return;
        if (group.count > 1) group.kind = SpanKind::Folded;
        out.push_back(group);
        have = false;
    };
    for (; it != spans.end() && it->t0 <= to; ++it) {
        if (it->t1 - it->t0 >= min_len) {
            flush();
            out.push_back({it->t0, it->t1, it->kind, 1, it->cached});
            continue;
        }
        if (have && it->t0 - group.t1 < min_len) {
            group.t1 = it->t1;
            ++group.count;
        } else {
            flush();
            group = {it->t0, it->t1, it->kind, 1};
            have = true;
        }
    }
    flush();
}

const Span* spanAt(const std::vector<Span>& spans, double t) {
    auto it = std::upper_bound(spans.begin(), spans.end(), t,
                               [](double x, const Span& s) { return x < s.t0; });
    if (it == spans.begin()) return nullptr;
    --it;
    return t < it->t1 ? &*it : nullptr;
}

std::vector<std::pair<double, double>> kvPoolSeries(const RunLog& log, int from, int to,
                                                    bool held) {
    // The replicas' step functions summed.
    struct Step {
        double t;
        int r;
        double v;
    };
    std::vector<Step> steps;
    for (int r = from; r < to; ++r)
        for (const auto& [t, v] : kvSeries(replicaLog(log, r), held)) steps.push_back({t, r, v});
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.t < b.t; });
    std::vector<double> now(static_cast<std::size_t>(log.replicas), 0.0);
    double total = 0;
    std::vector<std::pair<double, double>> out;
    for (const Step& x : steps) {
        total += x.v - now[static_cast<std::size_t>(x.r)];
        now[static_cast<std::size_t>(x.r)] = x.v;
        if (!out.empty() && out.back().first == x.t)
            out.back().second = total;
        else
            out.emplace_back(x.t, total);
    }
    return out;
}

std::vector<std::pair<double, double>> kvSeries(const RunLog& log, bool held) {
    if (log.fleet()) return kvPoolSeries(log, 0, log.replicas, held);
    std::vector<std::pair<double, double>> s;
    s.reserve(log.iters.size() * 2 + log.kv_idle.size());
    std::size_t gap = 0; // the idle gaps' values (RunLog::kv_idle), in time order
    for (const IterSpan& it : log.iters) {
        for (; gap < log.kv_idle.size() && log.kv_idle[gap].t <= it.t0; ++gap)
            s.emplace_back(log.kv_idle[gap].t,
                           static_cast<double>(log.kv_idle[gap].kv) +
                               (held ? static_cast<double>(log.kv_idle[gap].cached) : 0.0));
        const double cached = held ? static_cast<double>(it.kv_cached) : 0.0;
        s.emplace_back(it.t0, static_cast<double>(it.kv_first) + cached);
        if (it.n > 1) s.emplace_back(it.end(it.n - 2), static_cast<double>(it.kv_last) + cached);
    }
    // After the last iteration nothing is in use; cached blocks stay (as at its start).
    if (!log.iters.empty())
        s.emplace_back(log.iters.back().tEnd(),
                       held ? static_cast<double>(log.iters.back().kv_cached) : 0.0);
    return s;
}

std::vector<Bucket> downsample(const std::vector<std::pair<double, double>>& points, double from,
                               double to, int buckets) {
    std::vector<Bucket> out;
    if (buckets <= 0 || !(to > from) || points.empty()) return out;
    out.reserve(static_cast<std::size_t>(buckets));
    const double width = (to - from) / buckets;
    // The step in force at `from`: the last point at or before it.
    auto it =
        std::upper_bound(points.begin(), points.end(), from,
                         [](double t, const std::pair<double, double>& p) { return t < p.first; });
    double value = it == points.begin() ? std::nan("") : std::prev(it)->second;
    for (int b = 0; b < buckets; ++b) {
        const double b0 = from + b * width, b1 = from + (b + 1) * width;
        for (; it != points.end() && it->first <= b0; ++it) value = it->second; // in force at b0
        double lo = value, hi = value;
        for (; it != points.end() && it->first < b1; ++it) {
            value = it->second;
            lo = std::isnan(lo) ? value : std::min(lo, value);
            hi = std::isnan(hi) ? value : std::max(hi, value);
        }
        if (!std::isnan(lo)) out.push_back({from + (b + 0.5) * width, lo, hi});
    }
    return out;
}

std::vector<double> preemptionTimes(const RunLog& log) {
    std::vector<double> out;
    HandBacks hand_backs(static_cast<std::size_t>(log.num_requests));
    for (const Event& e : log.events) {
        const bool hand_back = hand_backs.handBack(e);
        if (e.ev == Ev::Preempt && !hand_back) out.push_back(e.t);
    }
    return out;
}

} // namespace kairos::lod
