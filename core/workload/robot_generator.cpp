#include "workload/robot_generator.h"

#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "workload/llama3_counts.h"
#include "workload/minispec.h"
#include "workload/random.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

namespace kairos {
namespace {
const Tuf kNormal{1.0, -2.0, 1.0};       // [1, 1, 1.5]
const Tuf kUrgent{0.2, -2.0 / 0.3, 2.0}; // [2, 0.2, 0.5]
} // namespace

std::vector<RobotTrace> readRobotTraces(const std::string& path) {
    const std::string in = readInputFile(path, limits::kWorkload);
    const nlohmann::json j = parseJsonDocument(in, path);
    if (!j.is_array()) throw InputError(path, 0, "", "expected a JSON list of traces");
    std::vector<RobotTrace> out;
    for (std::size_t k = 0; k < j.size(); ++k) {
        const auto& t = j[k];
        const std::string at = "[" + std::to_string(k) + "].";
        if (!t.is_object() || !t.contains("trace_id") || !t["trace_id"].is_number_integer())
            throw InputError(path, 0, at + "trace_id", "missing");
        RobotTrace r;
        r.id = t["trace_id"].get<int>();
        r.task = t.value("task_input", "");
        const std::string plan = t.contains("task_plan") && t["task_plan"].is_string()
                                     ? t["task_plan"].get<std::string>()
                                     : "";
        r.plan = plan;
        // Llama 3's tokens and the EOS (workload/llama3_counts.h).
        r.plan_tokens = llama3::tokensOf(plan, 3.0) + 1;
        if (!t.contains("exe_time_detail") || !t["exe_time_detail"].is_array() ||
            t["exe_time_detail"].empty())
            throw InputError(path, 0, at + "exe_time_detail", "missing or empty");
        for (const auto& e : t["exe_time_detail"]) {
            if (!e.is_array() || e.size() != 2 || !e[1].is_number())
                throw InputError(path, 0, at + "exe_time_detail", "expected [skill, seconds]");
            r.skill_seconds.push_back(e[1].get<double>());
        }
        const bool urgent = t.contains("tuf") && t["tuf"].is_array() && !t["tuf"].empty() &&
                            t["tuf"][0].is_number() && t["tuf"][0].get<double>() > 1;
        r.cls = urgent ? "urgent" : "normal";
        r.plan_tokens = std::max<int>(r.plan_tokens, static_cast<int>(r.skill_seconds.size()));
        out.push_back(std::move(r));
    }
    return out;
}

RobotWorkloadSpec RobotWorkloadSpec::preset_(const std::string& name) {
    RobotWorkloadSpec s;
    s.preset = name;
    if (name == "wid1") return s;
    if (name == "wid2") {
        s.max_tasks_per_event = 16;
        s.agents = 42;
        s.duration_s = 300;
        return s;
    }
    if (name == "wid3") {
        s.event_rate = 0.1;
        s.plan_time_s = 1.8820; // timelyllm_plan_times.csv: robotarm_fltrnn's mean
        s.max_tasks_per_event = 8;
        s.agents = 40;
        s.duration_s = 900;
        return s;
    }
    throw std::invalid_argument("unknown robot workload '" + name + "' (wid1, wid2, wid3)");
}

Workload generateRobotWorkload(const RobotWorkloadSpec& spec, const std::vector<RobotTrace>& traces,
                               std::map<std::int64_t, int>* trace_of) {
    const bool arm = spec.preset == "wid3";
    if (!arm && traces.empty())
        throw std::invalid_argument(spec.preset + ": needs the drone traces");
    const bool fixed_agents = spec.agent_rule == RobotWorkloadSpec::Agents::Paper;
    if (fixed_agents && spec.max_tasks_per_event > spec.agents)
        throw std::invalid_argument("more tasks per event than agents");
    Rng rng(spec.seed);
    Workload w;
    w.name = spec.preset;
    std::vector<int> agents(fixed_agents ? static_cast<std::size_t>(spec.agents) : 0);
    std::vector<double> busy_until; // Agents::Code: each agent's timer
    for (double t = rng.exponential(spec.event_rate); t < spec.duration_s;
         t += rng.exponential(spec.event_rate)) {
        const auto tasks = rng.uniformInt(1, spec.max_tasks_per_event);
        std::iota(agents.begin(), agents.end(), 0);
        for (std::int64_t k = 0; k < tasks; ++k) {
            if (fixed_agents) {
                // Distinct agents: a partial Fisher-Yates shuffle.
                const auto pick = rng.uniformInt(k, spec.agents - 1);
                std::swap(agents[static_cast<std::size_t>(k)],
                          agents[static_cast<std::size_t>(pick)]);
            }
            Request r;
            r.arrival = t + 0.001 * static_cast<double>(k);
            std::vector<double> secs;
            int plan_tokens;
            int task_tokens;
            int trace = -1;
            std::string plan_text;
            if (arm) {
                const int objects = static_cast<int>(rng.uniformInt(2, 4)); // desk items to clear
                for (int o = 0; o < objects; ++o) {
                    secs.push_back(1 + 2 * rng.uniform());   // move_to
                    secs.push_back(3 + 1.2 * rng.uniform()); // take
                    secs.push_back(1 + 2 * rng.uniform());   // move_to
                    secs.push_back(3 + 1.2 * rng.uniform()); // drop
                }
                plan_tokens = 6 * static_cast<int>(secs.size()) +
                              static_cast<int>(rng.uniformInt(0, 10)); // ~100
                task_tokens = 40;
                // The paper's section 7.1: trace ids 9-11 (the arm) take the normal TUF.
                r.cls = "normal";
            } else {
                const RobotTrace& tr = traces[static_cast<std::size_t>(
                    rng.uniformInt(0, static_cast<std::int64_t>(traces.size()) - 1))];
                secs = tr.skill_seconds;
                plan_tokens = tr.plan_tokens;
                task_tokens = llama3::tokensOf(tr.task, 4.0);
                r.cls = tr.cls;
                trace = tr.id;
                plan_text = tr.plan;
            }
            r.tuf = r.cls == "urgent" ? kUrgent : kNormal;
            r.prompt_tokens = spec.system_prompt_tokens + task_tokens;
            if (spec.system_prompt_tokens > 0)
                r.prefix = {{kTypeFlyPromptId, spec.system_prompt_tokens}};
            if (!plan_text.empty()) {
                // The plan's Llama 3 tokens without the EOS (plan_tokens counts it).
                r.output_tokens = 0;
                for (const minispec::PlanPart& part : minispec::planParts(
                         plan_text, minispec::Robot::Drone, plan_tokens - 1, secs)) {
                    r.segments.push_back({part.tokens, part.exec_s, part.wcet_s});
                    r.output_tokens += part.tokens;
                }
            } else {
                r.output_tokens = std::max<int>(plan_tokens, static_cast<int>(secs.size()));
                const int n = static_cast<int>(secs.size());
                for (int s = 0; s < n; ++s)
                    r.segments.push_back({r.output_tokens / n + (s < r.output_tokens % n ? 1 : 0),
                                          secs[static_cast<std::size_t>(s)]});
            }
            if (fixed_agents) {
                r.agent = agents[static_cast<std::size_t>(k)];
            } else {
                // The earliest free agent, or a new one when even that one is still busy.
                auto free = std::min_element(busy_until.begin(), busy_until.end());
                if (free == busy_until.end() || *free > r.arrival)
                    free = busy_until.insert(busy_until.end(), 0.0);
                r.agent = static_cast<int>(free - busy_until.begin());
                *free = r.arrival + std::accumulate(secs.begin(), secs.end(), 0.0) +
                        spec.plan_time_s + 1.0;
            }
            r.id = static_cast<std::int64_t>(r.agent) * 100000 +
                   static_cast<std::int64_t>(w.requests.size());
            if (trace_of && trace >= 0) (*trace_of)[r.id] = trace;
            w.requests.push_back(std::move(r));
        }
    }
    w.meta["preset"] = spec.preset;
    w.meta["event_rate"] = std::to_string(spec.event_rate);
    w.meta["max_tasks_per_event"] = std::to_string(spec.max_tasks_per_event);
    w.meta["agents"] = fixed_agents
                           ? std::to_string(spec.agents)
                           : std::to_string(busy_until.size()) + " (the authors' generator's rule)";
    w.meta["duration_s"] = std::to_string(spec.duration_s);
    w.meta["seed"] = std::to_string(spec.seed);
    w.meta["id"] = "agent * 100000 + request index";
    w.sortByArrival();
    return w;
}

void addReadingTime(Workload& w, double wpm) {
    if (!(wpm > 0)) throw std::invalid_argument("reading speed must be > 0 words per minute");
    for (auto& r : w.requests) {
        r.segments = {{r.output_tokens, r.output_tokens * 0.75 / wpm * 60.0}};
        if (!r.tuf) r.tuf = kNormal;
        if (r.cls.empty()) r.cls = "chat";
    }
    w.meta["reading_wpm"] = std::to_string(wpm);
}

} // namespace kairos
