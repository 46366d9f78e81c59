// Hand-written: the rules are the TimelyLLM code's own (a small state machine and whole-word
// keyword tables over plans of a few dozen characters); no library models them.
#include "workload/minispec.h"

#include <algorithm>
#include <cmath>

namespace kairos::minispec {
namespace {

bool wordChar(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || std::isalnum(u) || c == '_';
}
bool letter(char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || std::isalpha(u);
}
bool digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

// Occurrences of `kw` as Python's regex \bkw\b finds them (\b only where kw ends in a word
// character: `g(` has none after it), not overlapping.
int countWord(std::string_view text, std::string_view kw) {
    int n = 0;
    const bool tail = wordChar(kw.back());
    for (std::size_t pos = text.find(kw); pos != std::string_view::npos;
         pos = text.find(kw, pos + 1)) {
        const std::size_t end = pos + kw.size();
        if (pos > 0 && wordChar(text[pos - 1])) continue;
        if (tail && end < text.size() && wordChar(text[end])) continue;
        ++n;
        pos = end - 1;
    }
    return n;
}

// The stop rule's action test (it knows a bare `m` too, the executor does not).
constexpr std::string_view kActions[] = {"m",  "mf", "mb", "ml", "mr",  "mu", "md", "tc", "tu",
                                         "ox", "oy", "ow", "oh", "od",  "iv", "p",  "l",  "d",
                                         "tp", "rp", "g(", "s(", "sa(", "gt", "pi", "dr", "sc"};
// The virtual executor's: each occurrence takes the task's next measured duration.
constexpr std::string_view kExecutor[] = {"mf", "mb", "ml",      "mr",   "mu",   "md",  "tc", "tu",
                                          "ox", "oy", "ow",      "oh",   "od",   "iv",  "p",  "l",
                                          "d",  "tp", "rp",      "g(",   "s(",   "sa(", "gt", "pi",
                                          "dr", "sc", "move_to", "take", "drop", "sd"};

bool namesAction(std::string_view text) {
    for (std::string_view kw : kActions)
        if (countWord(text, kw) > 0) return true;
    return false;
}

struct Wcet {
    std::string_view kw;
    double c0, c1, c2, c3; // c0 + c1 v + c2 v^2 + c3 v^3
};
// The scheduler's table per robot type (seconds; v: the segment's first number in
// parentheses): moves (distance, cm), turns (degrees), `d` (a delay of v seconds), scans.
constexpr Wcet kDrone[] = {{"mf", 1.8144, 0.0072, 0, 0},
                           {"mb", 1.8144, 0.0072, 0, 0},
                           {"ml", 1.8144, 0.0072, 0, 0},
                           {"mr", 1.8144, 0.0072, 0, 0},
                           {"mu", 1.3195, 0.0388, -0.0003, 8e-7},
                           {"md", 1.3195, 0.0388, -0.0003, 8e-7},
                           {"tc", 0.784, 0.0165, 0, 0},
                           {"tu", 0.784, 0.0165, 0, 0},
                           {"ox", 0.001, 0, 0, 0},
                           {"oy", 0.001, 0, 0, 0},
                           {"ow", 0.001, 0, 0, 0},
                           {"oh", 0.001, 0, 0, 0},
                           {"od", 0.001, 0, 0, 0},
                           {"iv", 0.001, 0, 0, 0},
                           {"p", 0.041, 0, 0, 0},
                           {"l", 0.001, 0, 0, 0},
                           {"d", 0, 1, 0, 0},
                           {"tp", 0.001, 0, 0, 0},
                           {"rp", 0.001, 0, 0, 0},
                           {"g(", 2.5, 0, 0, 0},
                           {"s(", 1.5275, 0, 0, 0},
                           {"sa(", 1.5675, 0, 0, 0}};
constexpr Wcet kArm[] = {{"ox", 0.001, 0, 0, 0},  {"oy", 0.001, 0, 0, 0},   {"ow", 0.001, 0, 0, 0},
                         {"oh", 0.001, 0, 0, 0},  {"od", 0.001, 0, 0, 0},   {"iv", 0.001, 0, 0, 0},
                         {"p", 0.041, 0, 0, 0},   {"l", 0.001, 0, 0, 0},    {"d", 0, 1, 0, 0},
                         {"tp", 0.001, 0, 0, 0},  {"rp", 0.001, 0, 0, 0},   {"g(", 2.5, 0, 0, 0},
                         {"s(", 1.5275, 0, 0, 0}, {"sa(", 1.5675, 0, 0, 0}, {"gt", 0.8, 0, 0, 0},
                         {"pi", 3, 0, 0, 0},      {"dr", 3, 0, 0, 0},       {"sc", 1, 0, 0, 0},
                         {"move_to", 1, 0, 0, 0}, {"take", 3, 0, 0, 0},     {"drop", 3, 0, 0, 0}};

// The first "(digits)" of the text, 0 without one.
double firstNumber(std::string_view text) {
    for (std::size_t i = 0; i + 2 < text.size(); ++i) {
        if (text[i] != '(' || !digit(text[i + 1])) continue;
        std::size_t j = i + 1;
        double v = 0;
        while (j < text.size() && digit(text[j])) v = 10 * v + (text[j++] - '0');
        if (j < text.size() && text[j] == ')') return v;
    }
    return 0;
}

// The MiniSpec statement parser of the stop rule, one character at a time: whether this
// character completes a statement (the parser keeps going after one completes).
class Statement {
public:
    bool feed(char c) {
        switch (state_) {
        case State::Code: {
            bool done = false;
            if (c == '?' && !in_args_) {
                state_ = State::Condition;
            } else if (c == ';' || c == '}' || c == ')') {
                if (c == ')') in_args_ = false;
                done = true;
            } else {
                if (c == '(') in_args_ = true;
                if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') allow_digit_ = true;
                buffer_ += c;
            }
            if (digit(c) && !allow_digit_) state_ = State::Loop;
            return done;
        }
        case State::Condition: {
            bool done = false;
            if (c == '{') {
                state_ = State::Block;
                done = namesAction(buffer_); // an action in the condition runs now
            }
            if (c == ')' || c == ';') return true;
            buffer_ += c;
            return done;
        }
        case State::Loop:
            if (c == '{')
                state_ = State::Block;
            else
                buffer_ += c;
            return false;
        case State::Block:
            // Inside the block each character is parsed as a new statement's first:
            // `;`, `}` and `)` complete one.
            return c == ';' || c == '}' || c == ')';
        }
        return false;
    }

private:
    enum class State { Code, Condition, Loop, Block };
    State state_ = State::Code;
    std::string buffer_;
    bool in_args_ = false, allow_digit_ = false;
};

} // namespace

Robot robotOf(const std::string& robot_type, const std::string& robot_system) {
    if (robot_type == "robotarm") return robot_system == "fltrnn" ? Robot::ArmFltrnn : Robot::Arm;
    return Robot::Drone;
}

bool stopsAfter(std::string_view text, Robot robot) {
    if (text.empty()) return false;
    if (robot == Robot::ArmFltrnn) return text.find(';') != std::string_view::npos;
    Statement s;
    bool last = false;
    for (char c : text) last = s.feed(c);
    return last && namesAction(text);
}

// Punctuation pieces taken as one token, longest first (a run of punctuation is one
// pre-token in Llama 3 and BPE splits it into tokens of its vocabulary; these are the
// code-like pieces MiniSpec plans are made of). The split they give matches the segments
// the authors' fork logged: ");?" is ");" then "?", "')}->" is "')}" then "->", and
// "')==" stays whole (a condition does not stop at its call's ")").
constexpr std::string_view kPunctTokens[] = {"')==", "')}", "');", "'),", "')",  "('",
                                             "();",  "()",  ");",  "),",  "){",  "->",
                                             "==",   "!=",  "&&",  "||",  "}\n", ";\n"};

std::vector<std::size_t> tokenEnds(std::string_view t) {
    std::vector<std::size_t> ends;
    const std::size_t n = t.size();
    std::size_t i = 0;
    while (i < n) {
        std::size_t j = i;
        const char c = t[i];
        if (letter(c)) {
            while (j < n && letter(t[j])) ++j;
        } else if (digit(c)) {
            while (j < n && j - i < 3 && digit(t[j])) ++j;
        } else if (c == ' ' && i + 1 < n && letter(t[i + 1])) {
            j = i + 1;
            while (j < n && letter(t[j])) ++j;
        } else if (space(c)) {
            while (j < n && space(t[j])) ++j;
        } else {
            j = i + 1; // one character, unless a known piece starts here
            for (std::string_view piece : kPunctTokens)
                if (t.substr(i, piece.size()) == piece) {
                    j = i + piece.size();
                    break;
                }
        }
        ends.push_back(j);
        i = j;
    }
    return ends;
}

std::vector<PlanSegment> segmentPlan(const std::string& plan, Robot robot) {
    std::vector<PlanSegment> out;
    std::size_t start = 0;
    for (std::size_t end : tokenEnds(plan)) {
        const std::string_view seg(plan.data() + start, end - start);
        if (!stopsAfter(seg, robot)) continue;
        out.push_back({std::string(seg), executorSkills(seg), predictedSeconds(seg, robot), true});
        start = end;
    }
    const std::string_view rest(plan.data() + start, plan.size() - start);
    out.push_back({std::string(rest), executorSkills(rest), predictedSeconds(rest, robot), false});
    return out;
}

int executorSkills(std::string_view text) {
    int n = 0;
    for (std::string_view kw : kExecutor) n += countWord(text, kw);
    return n;
}

double predictedSeconds(std::string_view text, Robot robot) {
    const double v = firstNumber(text);
    double s = 0;
    auto add = [&](const auto& table) {
        for (const Wcet& w : table)
            s += countWord(text, w.kw) * (w.c0 + v * (w.c1 + v * (w.c2 + v * w.c3)));
    };
    if (robot == Robot::Drone)
        add(kDrone);
    else
        add(kArm);
    return std::round(s * 1e6) / 1e6;
}

std::vector<PlanPart> planParts(const std::string& plan, Robot robot, int text_tokens,
                                const std::vector<double>& exec) {
    const std::vector<PlanSegment> segs = segmentPlan(plan, robot);
    text_tokens = std::max<int>(static_cast<int>(segs.size()) - 1, text_tokens);
    const double chars = static_cast<double>(std::max<std::size_t>(1, plan.size()));
    std::vector<PlanPart> out;
    std::size_t cursor = 0, done_chars = 0;
    int given = 0;
    for (std::size_t sk = 0; sk < segs.size(); ++sk) {
        const PlanSegment& g = segs[sk];
        done_chars += g.text.size();
        const bool last = sk + 1 == segs.size();
        // At least a token each, and room for one per segment still to come; the last has
        // the rest and the EOS.
        const int later = static_cast<int>(segs.size() - sk) - 2;
        const int upto =
            last ? text_tokens + 1
                 : std::clamp(static_cast<int>(std::lround(text_tokens * done_chars / chars)),
                              given + 1, text_tokens - later);
        double secs = 0;
        for (int m = 0; m < g.skills && !exec.empty(); ++m) {
            secs += exec[cursor];
            cursor = (cursor + 1) % exec.size(); // starts over after the last
        }
        out.push_back({upto - given, secs, g.wcet_s});
        given = upto;
    }
    return out;
}

} // namespace kairos::minispec
