#include "metrics/robot_metrics.h"

#include <algorithm>
#include <cmath>

namespace kairos {

std::vector<RobotTask> robotTasks(const RunLog& log, const Workload& w) {
    // Tasks are requests with a plan or a TUF; a workload with neither (most traces) has
    // none, and a million requests' dispatch lists (24 bytes each) were a run's peak.
    const auto isTask = [](const Request& r) { return !r.segments.empty() || r.tuf; };
    if (std::none_of(w.requests.begin(), w.requests.end(), isTask)) return {};
    const std::size_t n = w.requests.size();
    std::vector<std::vector<double>> dispatch(n);
    std::vector<double> finish(n, RobotTask::kNaN);
    double run_end = 0;
    for (const Event& e : log.events) {
        run_end = std::max(run_end, e.t);
        const auto i = static_cast<std::size_t>(e.req);
        if (i >= n) continue;
        if (e.ev == Ev::Dispatch) {
            auto& d = dispatch[i];
            if (static_cast<std::size_t>(e.value) >= d.size())
                d.resize(static_cast<std::size_t>(e.value) + 1, RobotTask::kNaN);
            d[static_cast<std::size_t>(e.value)] = e.t;
        } else if (e.ev == Ev::Finish) {
            finish[i] = e.t;
        }
    }
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

} // namespace kairos
