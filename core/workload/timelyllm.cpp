// The TimelyLLM authors' drone workload (MarkoMile/TimelyLLM dataset/data_sample_*.json):
// a JSON list of jobs {"job_id", "trigger time" (s), "agent_id", "trace_id", "task_input",
// "exe_time_detail": [[skill, seconds], ...], "task_exe_time", "tuf": [beta, ERT, zero-
// utility time]}, optionally "robot_type" and "robot_system". The plan text comes from the
// trace set beside the file (a JSON list of {"trace_id", "task_plan", ...}); tokens are
// Llama 3's (the paper's plans come from Llama 3-8B): counted once with its tokenizer for
// the texts of the shipped trace set (workload/llama3_counts.h), a plan being its count
// plus the EOS that ends it; a text not counted there (a user's own traces) is estimated
// at 3 characters per token for MiniSpec's code-like plans and 4 for English task text,
// and the workload's metadata says how many were estimated. A plan is cut into segments as
// the authors' server cuts it (workload/minispec.h: their stop rule; each segment runs for
// the next measured durations, as many as its skill keywords; its predicted time from
// their WCET table); a job without plan text has one segment per measured skill. The prompt also
// carries TypeFly's system prompt (MiniSpec syntax, skills, guides, examples: 4,707 characters in
// ../shared/data/typefly, 1,308 Llama 3 tokens), the same for every task: a shared prefix span
// (model/request.h), which the paper's server keeps stored and a prefix cache (--prefix-caching on)
// does not compute again.
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "workload/llama3_counts.h"
#include "workload/minispec.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kairos {
namespace {
using nlohmann::json;

std::string slurp(std::istream& in) {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A trace set's plans by trace id, with each trace's task text.
struct TracePlan {
    std::string plan, input;
};
void readTraceSet(const std::string& path, std::map<int, TracePlan>& plans) {
    requireRegularFile(path);
    const json j = parseJsonDocument(readInputFile(path, limits::kWorkload), path);
    if (!j.is_array()) return;
    for (const auto& t : j)
        if (t.is_object() && t.contains("trace_id") && t["trace_id"].is_number_integer() &&
            t.contains("task_plan") && t["task_plan"].is_string())
            plans[t["trace_id"].get<int>()] = {t["task_plan"].get<std::string>(),
                                               t.contains("task_input") &&
                                                       t["task_input"].is_string()
                                                   ? t["task_input"].get<std::string>()
                                                   : std::string()};
}

std::map<int, std::string> readPlans(const std::string& workload_path) {
    std::map<int, TracePlan> found;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = fs::path(workload_path).parent_path();
    for (const auto& e : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
        const std::string f = e.path().filename().string();
        if (e.path().extension() != ".json" || f.find("trace_set") == std::string::npos) continue;
        readTraceSet(e.path().string(), found);
    }
    std::map<int, std::string> plans;
    for (auto& [id, t] : found) plans[id] = std::move(t.plan);
    return plans;
}
} // namespace

Workload readTimelyLlm(std::istream& in, const std::string& name,
                       const std::map<int, std::string>& plans, std::size_t limit) {
    const std::string text = slurp(in);
    const json j = parseJsonDocument(text, name);
    if (!j.is_array()) throw InputError(name, 1, "", "expected a JSON list of jobs");
    // Errors name the line of the field: "jobs[3].tuf" is the document's "[3].tuf".
    const JsonLines lines(text);
    auto fail = [&](const std::string& field, const std::string& what) -> InputError {
        return InputError(name, lines.line(field.substr(4)), field, what);
    };
    Workload w;
    w.name = name;
    w.source = name;
    long missing_plans = 0, estimated_texts = 0;
    const int system_prompt = llama3::typeflySystemPromptTokens();
    auto tokens = [&](const std::string& s, double chars_per_token) {
        bool counted = false;
        const int n = llama3::tokensOf(s, chars_per_token, &counted);
        estimated_texts += !counted;
        return n;
    };
    for (std::size_t k = 0; k < j.size(); ++k) {
        const json& job = j[k];
        const std::string at = "jobs[" + std::to_string(k) + "].";
        auto num = [&](const char* key) {
            const auto f = job.find(key);
            if (f == job.end() || !f->is_number()) throw fail(at + key, "missing or not a number");
            const double v = f->get<double>();
            if (!std::isfinite(v)) throw fail(at + key, "not finite");
            return v;
        };
        if (!job.is_object()) throw fail(at.substr(0, at.size() - 1), "expected an object");
        Request r;
        const double id = job.contains("job_id") ? num("job_id") : static_cast<double>(k);
        if (std::abs(id) > 9e15 || id != std::floor(id))
            throw fail(at + "job_id", "must be a whole number");
        r.id = static_cast<std::int64_t>(id);
        r.arrival = num("trigger time");
        if (job.contains("agent_id")) {
            const double a = num("agent_id");
            if (a < 0 || a != std::floor(a) || a > 1e9)
                throw fail(at + "agent_id", "must be a whole number >= 0");
            r.agent = static_cast<std::int32_t>(a);
        }
        if (r.arrival < 0) throw fail(at + "trigger time", "must be >= 0");
        if (r.arrival > kMaxSeconds)
            throw fail(at + "trigger time", "more than 1e9 s (31.7 years)");
        const auto tuf = job.find("tuf");
        if (tuf == job.end() || !tuf->is_array() || tuf->size() != 3 || !(*tuf)[0].is_number() ||
            !(*tuf)[1].is_number() || !(*tuf)[2].is_number())
            throw fail(at + "tuf", "expected [beta, ERT, zero-utility time]");
        const double beta = (*tuf)[0].get<double>(), ert = (*tuf)[1].get<double>(),
                     zero = (*tuf)[2].get<double>();
        if (!(beta > 0) || !(ert >= 0) || !(zero > ert) || beta > 1e9 || zero > kMaxSeconds)
            throw fail(at + "tuf", "need 0 < beta <= 1e9 and 0 <= ERT < zero time <= 1e9 s");
        r.tuf = Tuf{ert, -beta / (zero - ert), beta};
        r.cls = beta > 1 ? "urgent" : "normal";
        const auto det = job.find("exe_time_detail");
        if (det == job.end() || !det->is_array() || det->empty())
            throw fail(at + "exe_time_detail", "expected a non-empty list of [skill, seconds]");
        std::vector<double> exec;
        for (std::size_t s = 0; s < det->size(); ++s) {
            const json& e = (*det)[s];
            if (!e.is_array() || e.size() != 2 || !e[1].is_number() || !(e[1].get<double>() >= 0) ||
                !(e[1].get<double>() <= kMaxSeconds))
                throw fail(at + "exe_time_detail[" + std::to_string(s) + "]",
                           "expected [skill, seconds in [0, 1e9]]");
            exec.push_back(e[1].get<double>());
        }
        const int trace = job.contains("trace_id") && job["trace_id"].is_number_integer()
                              ? job["trace_id"].get<int>()
                              : -1;
        const auto plan = plans.find(trace);
        if (exec.size() > std::size_t(kMaxRequestTokens))
            throw fail(at + "exe_time_detail", "more segments than 1e8");
        const std::string input = job.contains("task_input") && job["task_input"].is_string()
                                      ? job["task_input"].get<std::string>()
                                      : "";
        if (input.size() > 4.0 * kMaxRequestTokens)
            throw fail(at + "task_input", "more than 1e8 tokens");
        r.prompt_tokens = system_prompt + tokens(input, 4.0);
        r.prefix = {{kTypeFlyPromptId, system_prompt}};
        if (plan != plans.end()) {
            // The plan as the authors' server generates it: cut by their stop rule, each
            // segment taking the next measured durations as their virtual robot does
            // (workload/minispec.h). Its Llama 3 tokens (and the EOS, in the last segment)
            // are shared by the segments' characters.
            auto str = [&](const char* key) {
                const auto f = job.find(key);
                return f != job.end() && f->is_string() ? f->get<std::string>() : std::string();
            };
            const auto robot = minispec::robotOf(str("robot_type"), str("robot_system"));
            int given = 0;
            for (const minispec::PlanPart& part :
                 minispec::planParts(plan->second, robot, tokens(plan->second, 3.0), exec)) {
                r.segments.push_back({part.tokens, part.exec_s, part.wcet_s});
                given += part.tokens;
            }
            r.output_tokens = given;
        } else {
            // No plan text: the paper's typical drone plan (about 20 tokens with its EOS),
            // one segment per measured skill, the tokens shared evenly.
            ++missing_plans;
            const int plan_tokens = std::max<int>(20, static_cast<int>(exec.size()));
            r.output_tokens = plan_tokens;
            const int n = static_cast<int>(exec.size());
            for (int s = 0; s < n; ++s)
                r.segments.push_back({plan_tokens / n + (s < plan_tokens % n ? 1 : 0),
                                      exec[static_cast<std::size_t>(s)]});
        }
        w.requests.push_back(std::move(r));
        if (limit && w.requests.size() >= limit) break;
    }
    w.meta["plans_found"] = std::to_string(plans.size());
    w.meta["jobs_without_plan_text"] = std::to_string(missing_plans);
    w.meta["tokenizer"] = llama3::tokenizerName();
    w.meta["texts_estimated_from_characters"] = std::to_string(estimated_texts);
    w.sortByArrival();
    return w;
}

Workload readTimelyLlmFile(std::istream& in, const std::string& path, std::size_t limit) {
    return readTimelyLlm(in, path, readPlans(path), limit);
}

Workload readTimelyLlmFile(std::istream& in, const std::string& path, std::size_t limit,
                           const std::string& trace_set) {
    std::map<int, std::string> plans = readPlans(path);
    if (!trace_set.empty()) {
        // The other trace set's plan serves a job only where the job's task text is that
        // trace's (a trace id alone may name another trace in another set).
        std::map<int, TracePlan> more;
        readTraceSet(trace_set, more);
        const std::string text = slurp(in);
        const json j = parseJsonDocument(text, path);
        std::map<int, bool> same; // trace id -> every job's text matches
        if (j.is_array())
            for (const auto& job : j) {
                if (!job.is_object() || !job.contains("trace_id") ||
                    !job["trace_id"].is_number_integer())
                    continue;
                const int id = job["trace_id"].get<int>();
                const auto m = more.find(id);
                const bool ok = m != more.end() && job.contains("task_input") &&
                                job["task_input"].is_string() &&
                                job["task_input"].get<std::string>() == m->second.input;
                const auto [it, fresh] = same.emplace(id, ok);
                if (!fresh) it->second = it->second && ok;
            }
        for (const auto& [id, ok] : same)
            if (ok && plans.count(id) == 0) plans[id] = more[id].plan;
        std::istringstream again(text);
        return readTimelyLlm(again, path, plans, limit);
    }
    return readTimelyLlm(in, path, plans, limit);
}

} // namespace kairos
