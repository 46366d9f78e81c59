#pragma once
// A robot plan cut into segments the way the TimelyLLM authors' serving code cuts it
// (MarkoMile/TimelyLLM, rtengine/stop_rule.py, executor/virtual_wrapper.py,
// rtengine/exe_worst_case.py; read for what it does, written here from that reading):
//  - Generation stops after a token when the segment's text so far (only this segment's:
//    each segment is a new request) ends exactly where a MiniSpec statement completes and
//    the text names a robot action. A statement completes at `;`, `}` or `)` in code; a
//    condition (`?...`) at `)`, `;`, or at its `{` when the condition itself names an
//    action; inside a block (after a condition's or a loop's `{`) at any `;`, `}` or `)`.
//    For a robot arm under FLTRNN's prompt, a segment ends at its first `;`.
//  - Tokens: the check runs after each token, so a segment can only end where a token
//    ends. No Llama 3 tokenizer is here, so tokens are approximated by Llama 3's
//    pre-tokenizer classes (a run of letters, of up to 3 digits, of other non-space
//    characters, of spaces): a punctuation run such as `')==` is one token. This reproduces
//    the segments the authors' fork logged on the drone traces (`md(40);`,
//    `?iv('toy')==True{`, `g('toy')}`, `->False;`).
//  - The robot (the virtual executor) runs a segment for the next k measured durations of
//    the task (exe_time_detail, in order, starting over after the last), k the number of
//    skill keywords in the segment's text, whole words (`mf`, `iv`, `l`, `g(`, ...): not
//    which skill matched, only how many.
//  - The scheduler predicts that time instead (the WCET table per robot type): each skill
//    keyword adds its formula of v, v being the first whole number in parentheses in the
//    segment (0 if none). Used only to move the predicted end of the robot's work.
#include <string>
#include <string_view>
#include <vector>

namespace kairos::minispec {

enum class Robot { Drone, Arm, ArmFltrnn };

// "drone" (TypeFly, the default), "robotarm" (with robot_system "fltrnn": FLTRNN's rule).
Robot robotOf(const std::string& robot_type, const std::string& robot_system);

struct PlanSegment {
    std::string text;
    int skills = 0;    // executor keyword matches: measured durations this segment takes
    double wcet_s = 0; // the scheduler's predicted execution time (the WCET table)
    bool stop = false; // ended by the stop rule (false: the plan's last part, ended by EOS)
};

// Whether generation stops after `text` (a segment's text so far).
bool stopsAfter(std::string_view text, Robot robot);
// The plan cut at token ends where stopsAfter fires; the rest (possibly empty: the EOS
// alone) is the last segment.
std::vector<PlanSegment> segmentPlan(const std::string& plan, Robot robot);
// A plan of `text_tokens` tokens (the EOS comes on top, in the last segment) as the authors'
// server generates it: cut by segmentPlan, its tokens shared by the segments' characters (at
// least one each), each segment taking the next measured durations of `exec` (the task's
// exe_time_detail, starting over after the last) as their virtual robot does, and the WCET
// table's prediction of it. The TimelyLLM reader and the robot generator both cut plans so.
struct PlanPart {
    int tokens = 0;
    double exec_s = 0, wcet_s = 0;
};
std::vector<PlanPart> planParts(const std::string& plan, Robot robot, int text_tokens,
                                const std::vector<double>& exec);
// Approximate token ends of `text` (positions one past each token's last character).
std::vector<std::size_t> tokenEnds(std::string_view text);
int executorSkills(std::string_view text);
double predictedSeconds(std::string_view text, Robot robot);

} // namespace kairos::minispec
