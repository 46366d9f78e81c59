#include "metrics/robot_metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kairos {
namespace {

// What each request handed its robot and when: segment k's dispatch time (NaN: not
// dispatched on its own), and when it finished (NaN: never).
struct Handed {
    std::vector<std::vector<double>> dispatch;
    std::vector<double> finish;
    double run_end = 0;
};
Handed handed(const RunLog& log, std::size_t n) {
    Handed h;
    h.dispatch.resize(n);
    h.finish.assign(n, RobotTask::kNaN);
    for (const Event& e : log.events) {
        h.run_end = std::max(h.run_end, e.t);
        const auto i = static_cast<std::size_t>(e.req);
        if (i >= n) continue;
        if (e.ev == Ev::Dispatch) {
            auto& d = h.dispatch[i];
            if (static_cast<std::size_t>(e.value) >= d.size())
                d.resize(static_cast<std::size_t>(e.value) + 1, RobotTask::kNaN);
            d[static_cast<std::size_t>(e.value)] = e.t;
        } else if (e.ev == Ev::Finish) {
            h.finish[i] = e.t;
        }
    }
    return h;
}

} // namespace

std::vector<RobotTask> robotTasks(const RunLog& log, const Workload& w) {
    // Tasks are requests with a plan or a TUF; a workload with neither (most traces) has
    // none, and a million requests' dispatch lists (24 bytes each) were a run's peak.
    const auto isTask = [](const Request& r) { return !r.segments.empty() || r.tuf; };
    if (std::none_of(w.requests.begin(), w.requests.end(), isTask)) return {};
    const std::size_t n = w.requests.size();
    const Handed h = handed(log, n);
    const auto& dispatch = h.dispatch;
    const auto& finish = h.finish;
    const double run_end = h.run_end;
    std::vector<RobotTask> out;
    for (std::size_t i = 0; i < n; ++i) {
        const Request& r = w.requests[i];
        if (!isTask(r)) continue;
        RobotTask t;
        t.id = static_cast<ReqId>(i);
        t.cls = r.cls.empty() ? std::string("default") : r.cls.str();
        const std::vector<Segment> segs =
            r.segments.empty() ? std::vector<Segment>{{r.output_tokens, 0.0}} : r.segments.get();
        t.segments = static_cast<int>(segs.size());
        const Tuf tuf = r.tuf ? *r.tuf : Tuf{};
        t.max_utility = tuf.beta;
        t.segment_max_utility = tuf.beta * t.segments;
        double robot_free = -INFINITY; // end of the previous segment's execution
        bool complete = true;
        for (std::size_t k = 0; k < segs.size(); ++k) {
            double d = k < dispatch[i].size() ? dispatch[i][k] : RobotTask::kNaN;
            if (std::isnan(d)) d = finish[i]; // delivered with the finished plan
            if (std::isnan(d)) {
                if (k == 0) t.utility = std::min(0.0, tuf.signedValue(run_end - r.arrival));
                complete = false;
                break;
            }
            ++t.dispatched;
            if (k == 0) {
                t.response = d - r.arrival;
                t.utility = tuf.signedValue(t.response);
                t.segment_utility += tuf.value(t.response);
            } else {
                const double wait = std::max(0.0, d - robot_free);
                t.robot_wait += wait;
                t.segment_utility += tuf.valueSuspended(wait);
            }
            robot_free = std::max(d, robot_free) + segs[k].exec_s;
        }
        if (complete) t.completion = robot_free - r.arrival;
        out.push_back(t);
    }
    return out;
}

std::vector<RobotClassSummary> summarizeRobotTasks(const std::vector<RobotTask>& tasks) {
    std::vector<RobotClassSummary> out{{"all"}};
    auto add = [](RobotClassSummary& s, const RobotTask& t) {
        ++s.tasks;
        s.utility += t.utility;
        s.max_utility += t.max_utility;
        s.segment_utility += t.segment_utility;
        s.segment_max_utility += t.segment_max_utility;
        if (!std::isnan(t.response)) {
            ++s.responded;
            s.mean_response += t.response;
        }
        if (!std::isnan(t.completion)) {
            ++s.complete;
            s.mean_robot_wait += t.robot_wait;
            s.mean_completion += t.completion;
        }
    };
    for (const RobotTask& t : tasks) {
        add(out[0], t);
        auto it = std::find_if(out.begin() + 1, out.end(),
                               [&](const RobotClassSummary& s) { return s.cls == t.cls; });
        if (it == out.end()) {
            out.push_back({t.cls});
            it = out.end() - 1;
        }
        add(*it, t);
    }
    const double nan = RobotTask::kNaN;
    for (auto& s : out) {
        s.mean_response = s.responded > 0 ? s.mean_response / double(s.responded) : nan;
        s.mean_robot_wait = s.complete > 0 ? s.mean_robot_wait / double(s.complete) : nan;
        s.mean_completion = s.complete > 0 ? s.mean_completion / double(s.complete) : nan;
    }
    return out;
}

AuthorsMetric authorsMetric(const RunLog& log, const Workload& w, const AuthorsMetricOptions& opt) {
    const std::size_t n = w.requests.size();
    // What each request handed its robot: (time, request, segment).
    struct Item {
        double t;
        ReqId req;
        int seg;
        bool operator<(const Item& o) const {
            return t != o.t ? t < o.t : req != o.req ? req < o.req : seg < o.seg;
        }
    };
    const Handed h = handed(log, n);
    const auto& dispatch = h.dispatch;
    const auto& finish = h.finish;
    auto execOf = [&](std::size_t i, int k) {
        const Request& r = w.requests[i];
        return r.segments.empty() ? 0.0 : r.segments[static_cast<std::size_t>(k)].exec_s;
    };
    std::map<std::int64_t, std::vector<Item>> by_agent; // an agent's robot; -1 - i: its own
    for (std::size_t i = 0; i < n; ++i) {
        const Request& r = w.requests[i];
        const int segs = r.segments.empty() ? 1 : static_cast<int>(r.segments.size());
        const std::int64_t robot = r.agent >= 0 ? r.agent : -1 - static_cast<std::int64_t>(i);
        for (int k = 0; k < segs; ++k) {
            double d = k < static_cast<int>(dispatch[i].size())
                           ? dispatch[i][static_cast<std::size_t>(k)]
                           : RobotTask::kNaN;
            if (std::isnan(d)) d = finish[i]; // handed over with the finished plan
            if (std::isnan(d)) break;         // never generated (shed or unfinished)
            by_agent[robot].push_back({d, static_cast<ReqId>(i), k});
        }
    }
    std::vector<std::vector<std::pair<double, double>>> runs(n); // (start, end) per segment
    for (auto& [robot, items] : by_agent) {
        std::sort(items.begin(), items.end());
        double free = -INFINITY;
        for (const Item& it : items) {
            const double start = std::max(it.t + opt.network_s, free);
            free = start + execOf(static_cast<std::size_t>(it.req), it.seg);
            runs[static_cast<std::size_t>(it.req)].emplace_back(start, free);
        }
    }
    // Per task, then per (class, type).
    struct Acc {
        double u = 0, raw = 0, resp = 0, wait = 0;
        long scored = 0;
    };
    std::map<std::pair<bool, int>, Acc> types;
    AuthorsMetric m;
    double pooled = 0;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return w.requests[a].arrival < w.requests[b].arrival;
    });
    for (std::size_t rank = 0; rank < n; ++rank) {
        const std::size_t i = order[rank];
        const Request& r = w.requests[i];
        if (!r.tuf && r.segments.empty()) continue;
        if (static_cast<int>(rank) < opt.skip_first) {
            ++m.skipped;
            continue;
        }
        const bool urgent = r.cls == "urgent";
        AuthorsClassFigures& cls = urgent ? m.urgent : m.normal;
        if (runs[i].empty()) {
            ++cls.dropped;
            ++m.all.dropped;
            continue;
        }
        const Tuf tuf = r.tuf ? *r.tuf : Tuf{};
        const double response = runs[i][0].first - r.arrival;
        double wait = response;
        for (std::size_t k = 1; k < runs[i].size(); ++k)
            wait += runs[i][k].first - runs[i][k - 1].second;
        const int type = i < opt.type.size() && !opt.pooled ? opt.type[i] : -1;
        Acc& a = types[{urgent, type}];
        const double u = tuf.signedValue(response);
        a.u += tuf.beta > 0 ? u / tuf.beta : 0.0;
        a.raw += u;
        pooled += u;
        a.resp += response;
        a.wait += wait;
        ++a.scored;
        ++cls.scored;
        ++m.all.scored;
    }
    // Means per type, then over the class's types ("all": over every type).
    auto finishClass = [&](AuthorsClassFigures& f, int which) { // 0 normal, 1 urgent, 2 all
        double u = 0, raw = 0, resp = 0, wait = 0;
        int k = 0;
        for (const auto& [key, a] : types) {
            if (which != 2 && key.first != (which == 1)) continue;
            if (a.scored == 0) continue;
            u += a.u / double(a.scored);
            raw += a.raw / double(a.scored);
            resp += a.resp / double(a.scored);
            wait += a.wait / double(a.scored);
            ++k;
        }
        if (k == 0) return;
        f.utility_pct = 100 * u / k;
        f.utility = raw / k;
        f.response_s = resp / k;
        f.waiting_s = wait / k;
    };
    finishClass(m.normal, 0);
    finishClass(m.urgent, 1);
    finishClass(m.all, 2);
    if (m.all.scored > 0) m.task_utility = pooled / double(m.all.scored);
    return m;
}

} // namespace kairos
