#pragma once
// TimelyLLM's metrics for robot plans (seeds/001): a plan's segments are dispatched to
// the robot as they are generated (Dispatch events; whatever was not dispatched when the
// generation finished goes at its finish, as a plain server delivers the whole plan);
// the robot executes them one after another.
//   W(s_0) = dispatch_0 - arrival                      (response time)
//   W(s_k) = max(0, dispatch_k - end of s_{k-1})       (robot waiting, k >= 1)
//   utility = TUF(W(s_0)) without the zero floor, at most beta: the paper's metric (section
//             7.1, "the time utility value of the LLM's response ... based on its actual
//             response time (Eq. 1)"), negative past the cut-off (alpha = -2 normal, -6.67
//             urgent). A task never answered scores min(0, TUF(end of the run - arrival)):
//             dropping a task can never score better than answering it late.
//   segment utility = TUF(W(s_0)) + sum_k TUF_1(W(s_k)), each floored at 0, at most
//             beta * segments (Eq. 3's objective; Kairos's summed figure, named as such)
//   completion = end of the last segment's execution - arrival
// Segment execution times and TUFs are workload data, so these take the Workload too.
#include "model/run_log.h"
#include "model/workload.h"

#include <limits>
#include <string>
#include <vector>

namespace kairos {

struct RobotTask {
    static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    ReqId id = 0;
    std::string cls;
    int segments = 0, dispatched = 0;
    double response = kNaN;   // W(s_0)
    double robot_wait = 0;    // sum of W(s_k), k >= 1
    double completion = kNaN; // end of the last segment - arrival (NaN if not all dispatched)
    double utility = 0, max_utility = 0;                 // first response; beta
    double segment_utility = 0, segment_max_utility = 0; // summed over segments
};

// One entry per request that has segments or a TUF (a TUF without segments: one segment
// of no execution, its utility TUF(W(s_0))).
std::vector<RobotTask> robotTasks(const RunLog& log, const Workload& w);

// Each mean is over the tasks it applies to, and says how many that is: a task whose
// first segment was never dispatched has no response time (it is not a 0 s response),
// and one that was not dispatched whole has no completion time or total robot wait.
// Utility is over every task (an unanswered one scores as in robotTasks).
struct RobotClassSummary {
    std::string cls;
    long tasks = 0;
    long responded = 0; // first segment dispatched: W(s0) defined
    long complete = 0;  // every segment dispatched: completion and robot wait defined
    double utility = 0, max_utility = 0; // first-response utility (NaN: not recorded)
    double segment_utility = 0, segment_max_utility = 0;
    double mean_response = 0;   // over `responded` (NaN when none)
    double mean_robot_wait = 0; // over `complete` (NaN when none)
    double mean_completion = 0; // over `complete` (NaN when none)
    // First-response utility as % of its maximum (negative when late answers dominate).
    double utilityPercent() const {
        return max_utility > 0 ? 100.0 * utility / max_utility
                               : std::numeric_limits<double>::quiet_NaN();
    }
    double meanUtility() const { // per task, the unit of the paper's Fig. 7
        return tasks > 0 ? utility / double(tasks) : std::numeric_limits<double>::quiet_NaN();
    }
    double segmentUtilityPercent() const {
        return segment_max_utility > 0 ? 100.0 * segment_utility / segment_max_utility
                                       : std::numeric_limits<double>::quiet_NaN();
    }
};
// Per class ("all" first), in order of first appearance.
std::vector<RobotClassSummary> summarizeRobotTasks(const std::vector<RobotTask>& tasks);

// The TimelyLLM authors' own metric, as their scripts compute it from their run's log
// (MarkoMile/TimelyLLM resdata.py and fig_plot/performance_compare_vllm.py, as read):
//  - each agent has one robot that executes what it is handed in the order handed: a
//    segment when it is generated (a plan not cut into segments: whole, when it finishes),
//    starting when the robot is free;
//  - response = the first segment's start - arrival (it includes waiting for the agent's
//    robot to finish earlier tasks); waiting = response + the robot's idle time between
//    the task's segments;
//  - utility = TUF(response) with no floor (negative past the zero point), as % of beta;
//  - the first `skip_first` tasks by arrival are left out (warm-up), and so is a task whose
//    robot never started (shed, or unfinished): counted in `dropped`, not scored;
//  - a figure per task type, then the mean over the class's types (their Fig. 5), or
//    (`pooled`) the mean over the class's tasks (their Fig. 8 ablation).
struct AuthorsMetricOptions {
    int skip_first = 10;
    bool pooled = false;
    // The paper's simulated network latency (TimelyLLM 7.2: 8 ms, "by measuring the time each
    // response remains in the execution queue and adding necessary delays"): a segment starts
    // no sooner than this after it was handed over. 0: the code's virtual executor.
    double network_s = 0;
    // The task type of request i (their trace_id); without it each class is one type.
    std::vector<int> type;
};
struct AuthorsClassFigures {
    double utility_pct = RobotTask::kNaN; // mean utility / beta, in %
    double utility = RobotTask::kNaN;     // mean utility (TUF value, the unit of their Fig. 7)
    double response_s = RobotTask::kNaN, waiting_s = RobotTask::kNaN;
    long scored = 0, dropped = 0;
};
struct AuthorsMetric {
    AuthorsClassFigures urgent, normal, all;
    long skipped = 0;
    double task_utility = RobotTask::kNaN; // mean utility over every scored task, pooled
};
AuthorsMetric authorsMetric(const RunLog& log, const Workload& w,
                            const AuthorsMetricOptions& opt = {});

} // namespace kairos
