#pragma once
// Robot workloads shaped like TimelyLLM's WID1-3 (seeds/001, Table 3): Poisson events,
// each releasing 1..max tasks (uniformly; the authors' WID1 sample has every size 1-8) from
// distinct agents 1 ms apart (agents as RobotWorkloadSpec::agent_rule says); each task is a
// plan of skills, one segment per skill, with the robot's execution time per skill. The
// agent counts below are Table 3's, used by the Paper rule only.
//   wid1: drone traces (the 8 of the TimelyLLM trace set), 0.25 events/s, <= 8 tasks per
//         event, 25 agents, 260 s;  wid2: the same with <= 16 tasks, 42 agents, 300 s;
//   wid3: robot-arm desk-clearing plans (move_to / take / move_to / drop ...), 0.1
//         events/s, <= 8 tasks, 40 agents, 900 s, skill times drawn from the FLTRNN arm
//         models of timelyllm_skill_time_models.csv (move_to U(1, 3) s, take/drop
//         U(3, 4.2) s), about 100 plan tokens.
// A drone task's plan is cut into segments where the authors' server cuts it (their stop
// rule over the trace's plan text, workload/minispec.h planParts: each segment runs the
// next measured skill durations, and the scheduler predicts it by the WCET table), as the
// TimelyLLM reader cuts their own workloads; a trace without plan text, and every generated
// arm plan (no text), get one segment per skill, the tokens shared evenly.
// TUFs as the authors': normal [beta 1, ERT 1, zero 1.5], urgent [2, 0.2, 0.5]; drone
// traces 0-4 normal and 5-7 urgent; arm tasks normal (section 7.1).
#include "model/workload.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kairos {

// The prefix-span id of TypeFly's system prompt ('TypeFly'): the TimelyLLM reader and the
// robot generator mark it, so that prefix caching keeps it stored as the paper's server does.
inline constexpr std::uint64_t kTypeFlyPromptId = 0x54797065466c79ULL;

struct RobotTrace {
    int id = 0;
    std::string cls = "normal";
    std::string task; // task text (prompt)
    std::string plan; // the plan's text (MiniSpec), where the trace set gives it
    int plan_tokens = 20;
    std::vector<double> skill_seconds; // one per executable skill
};

// The drone traces of a TimelyLLM trace-set JSON file (plan tokens: Llama 3's count and the
// EOS, workload/llama3_counts.h; 3 characters each for a plan not counted there).
std::vector<RobotTrace> readRobotTraces(const std::string& path);

struct RobotWorkloadSpec {
    std::string preset = "wid1";
    double event_rate = 0.25;
    int max_tasks_per_event = 8;
    int agents = 25;
    double duration_s = 260;
    std::uint64_t seed = 1;
    // How tasks find their agents (each agent has one robot).
    //   Code (the default): as the authors' generator assigns them (MarkoMile/TimelyLLM
    //     dataset/data_sample_gen.py, read): each task goes to the agent whose timer is
    //     earliest, or to a new agent when even that one's timer is past the task's arrival;
    //     the timer becomes arrival + plan time + the plan's execution + 1 s. No task is
    //     meant to find its robot busy, and the agent count is an outcome (their WID1
    //     sample: 25, Table 3's AN). `agents` is unused.
    //   Paper: Kairos's reading of Table 3: `agents` agents, the tasks of an event on
    //     distinct ones drawn at random; a task can find its robot still executing an
    //     earlier plan, and then waits for it (the authors' metric counts that wait).
    enum class Agents { Code, Paper };
    Agents agent_rule = Agents::Code;
    // The plan time in the timer: the mean of the authors' measured plan times
    // (timelyllm_plan_times.csv; tst_timely checks both against it): the drone traces'
    // (drone_typefly 0-7), the arm's (robotarm_fltrnn) for wid3.
    double plan_time_s = 0.28845;
    // TypeFly's system prompt in Llama 3 tokens (llama3::typeflySystemPromptTokens(), which
    // tst_readers checks it against), a shared prefix span (kTypeFlyPromptId) of every task.
    int system_prompt_tokens = 1308;
    static RobotWorkloadSpec preset_(const std::string& name); // wid1, wid2, wid3
};

// `traces`: the drone traces for wid1/wid2 (ignored for wid3, whose plans are generated).
// `trace_of` (if given) receives each request's task type, its drone trace's id, by request
// id (no entry for a generated arm task): what the authors' metric averages over.
Workload generateRobotWorkload(const RobotWorkloadSpec& spec, const std::vector<RobotTrace>& traces,
                               std::map<std::int64_t, int>* trace_of = nullptr);

// Chat with reading-time execution: each request becomes one segment whose "execution"
// is the time to read its answer at `words_per_minute` (0.75 words per token), with the
// normal TUF.
void addReadingTime(Workload& w, double words_per_minute = 300);

} // namespace kairos
