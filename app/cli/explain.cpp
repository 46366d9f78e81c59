// kairos-cli explain: why the scheduler did what it did, from a run log recorded with
// --explain (model/explain.h): the story of one request (--req), the scheduler's view at
// an instant (--at), or the rules reasons name (--rules); text or --json.
#include "checks.h"
#include "commands.h"
#include "export/runlog_jsonl.h"
#include "metrics/explain_view.h"
#include "metrics/waits.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_number.h"
#include "util/memory.h"
#include "util/text.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <sys/stat.h>

namespace kairos::cli {

namespace {

struct ExplainArgs {
    std::string log, workload;
    long long req = -1;
    std::int64_t id = 0;
    bool id_given = false;
    double at = std::nan("");
    bool rules = false, json = false;
    int top = 20;
    int replica = -1; // a fleet's: one replica's view
};

nlohmann::json num(double v) {
    return jsonNumber(v);
}

// A reason's numbers by name; infinities as "inf" (JSON has none).
nlohmann::json reasonJson(const Reason& r) {
    nlohmann::json x = nlohmann::json::object();
    const Rule& rule = ruleOf(r.rule);
    for (int i = 0; i < ruleVarCount(r.rule); ++i) {
        const double v = r.x[static_cast<std::size_t>(i)];
        x[rule.vars[static_cast<std::size_t>(i)]] = jsonNumberOrInf(v);
    }
    nlohmann::json j = {{"t", r.t},          {"call", r.call},
                        {"req", r.req},      {"act", actName(r.act)},
                        {"rule", rule.code}, {"rule_name", rule.name},
                        {"numbers", x},      {"holds", rule.holds(r.x.data())}};
    if (r.other >= 0) j["other"] = r.other;
    if (r.act == Act::Kill) j["kill_cause"] = killCauseName(static_cast<KillCause>(r.value));
    if (r.act == Act::Dispatch) j["segment"] = r.value;
    return j;
}

nlohmann::json insightJson(const Insight& in) {
    nlohmann::json j = {{"t", in.t}, {"req", in.req}};
    const std::pair<const char*, double> f[] = {{"key", in.key},
                                                {"predicted_remaining", in.predicted},
                                                {"deadline", in.deadline},
                                                {"alpha", in.alpha},
                                                {"wcet", in.wcet}};
    for (const auto& [k, v] : f)
        if (!std::isnan(v)) j[k] = jsonNumberOrInf(v);
    return j;
}

std::string insightText(const Insight& in, const std::string& key_name) {
    std::string s;
    char b[96];
    auto add = [&](const char* what, double v) {
        if (std::isnan(v)) return;
        std::snprintf(b, sizeof b, "%s%s %.6g", s.empty() ? "" : ", ", what, v);
        s += b;
    };
    add(key_name.empty() ? "key" : ("key [" + key_name + "]").c_str(), in.key);
    if (in.predicted != in.key) add("predicted remaining", in.predicted);
    if (in.deadline != in.key) add("deadline", in.deadline);
    add("alpha", in.alpha);
    add("wcet", in.wcet);
    return s;
}

RunLog readLog(const std::string& path) {
    // Its text, the stream's copy of it and the log it becomes: 2.1 times the file at the
    // peak, measured on a 93 MB run log of 100,000 requests with reasons; 3 times here.
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
        checkMemoryNeed(3.0 * double(st.st_size),
                        "reading the run log " + path + " (" + bytesText(double(st.st_size)) + ")",
                        "explain a shorter run (simulate --limit)");
    std::istringstream in(readInputFile(path, limits::kRunLog));
    return readRunLogJsonl(in, path);
}

void printRules(bool json) {
    nlohmann::json all = nlohmann::json::array();
    // The engine's rules, then the policies' by code (their handles follow link order).
    std::vector<RuleId> ids;
    for (std::size_t i = 1; i < ruleCount(); ++i) ids.push_back(static_cast<RuleId>(i));
    std::stable_sort(ids.begin(), ids.end(), [](RuleId a, RuleId b) {
        const bool ea = a < RuleId::FirstRegistered, eb = b < RuleId::FirstRegistered;
        if (ea != eb) return ea;
        return !ea && std::string(ruleOf(a).code) < ruleOf(b).code;
    });
    for (const RuleId id : ids) {
        const Rule& r = ruleOf(id);
        nlohmann::json vars = nlohmann::json::array();
        for (int k = 0; k < ruleVarCount(id); ++k)
            vars.push_back(r.vars[static_cast<std::size_t>(k)]);
        if (json) {
            all.push_back({{"code", r.code},
                           {"name", r.name},
                           {"numbers", vars},
                           {"text", r.text},
                           {"engine", r.engine}});
            continue;
        }
        std::printf("%-22s %s\n%-22s numbers: %s\n%-22s %s%s\n\n", r.code, r.name, "",
                    vars.dump().c_str(), "", r.text, r.engine ? " (the engine's own action)" : "");
    }
    if (json) std::cout << all.dump(2) << '\n';
}

nlohmann::json waitJson(const Wait& x, const Workload* w) {
    nlohmann::json ahead = nlohmann::json::array();
    for (ReqId r : x.ahead) ahead.push_back(r);
    nlohmann::json j = {{"from_s", x.from},
                        {"to_s", x.to},
                        {"state", waitStateName(x.state)},
                        {"cause", waitCauseName(x.cause)},
                        {"rule", x.rule},
                        {"ahead", ahead},
                        {"ahead_count", x.ahead_count},
                        {"decisions", x.decisions},
                        {"passed_over", x.passed_over},
                        {"passed_by", x.passed_by},
                        {"text", describeWait(x, w)}};
    if (w) {
        nlohmann::json ids = nlohmann::json::array();
        for (ReqId r : x.ahead) ids.push_back(w->idOf(std::size_t(r)));
        j["ahead_ids"] = ids;
    }
    // Counts as whole numbers; null where not known (a step has no decision's numbers). KV
    // free may be below 0: running requests grew past the admission limit.
    auto count = [](std::int64_t v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
    j["running"] = count(x.running);
    j["peak_running"] = count(x.peak_running);
    j["seats"] = count(x.seats);
    j["kv_need"] = count(x.kv_need);
    j["kv_free"] = x.kv_need < 0 ? nlohmann::json(nullptr) : nlohmann::json(x.kv_free);
    j["blocked_by"] = count(x.blocked_by);
    j["blocked_need"] = count(x.blocked_need);
    if (w && x.blocked_by >= 0) j["blocked_by_id"] = w->idOf(std::size_t(x.blocked_by));
    return j;
}

// `w` (optional): the run's workload; the story then names requests by the trace's ids.
void printStory(const ExplainIndex& ix, ReqId id, bool json, const Workload* w) {
    const RunLog& log = ix.log();
    const auto story = storyOf(ix, id);
    const Explanation& ex = log.explain;
    const std::vector<Wait> waits = waitsOf(ix, id);
    if (json) {
        nlohmann::json wj = nlohmann::json::array();
        for (const Wait& x : waits) wj.push_back(waitJson(x, w));
        nlohmann::json lines = nlohmann::json::array();
        for (const StoryLine& l : story) {
            switch (l.kind) {
            case StoryLine::Kind::Event: {
                const Event& e = log.events[l.index];
                lines.push_back(
                    {{"t", e.t}, {"kind", "event"}, {"ev", evName(e.ev)}, {"v", e.value}});
                break;
            }
            case StoryLine::Kind::Reason: {
                nlohmann::json j = reasonJson(ex.reasons[l.index]);
                j["kind"] = "decision";
                lines.push_back(std::move(j));
                break;
            }
            case StoryLine::Kind::State: {
                const Insight& in = ex.insights[l.index];
                nlohmann::json j = insightJson(in);
                j["kind"] = "state";
                const std::int32_t g = ix.generatedAt(id, in.t);
                j["generated"] = g;
                if (ix.outputOf(id) >= 0) j["true_remaining"] = ix.outputOf(id) - g;
                lines.push_back(std::move(j));
                break;
            }
            }
        }
        nlohmann::json j = {
            {"req", id},
            {"id", w ? nlohmann::json(w->idOf(std::size_t(id))) : nlohmann::json(nullptr)},
            {"agent", w && w->agentOf(std::size_t(id)) >= 0
                          ? nlohmann::json(w->agentOf(std::size_t(id)))
                          : nlohmann::json(nullptr)},
            {"replica", log.fleet() ? nlohmann::json(log.replica_of[std::size_t(id)])
                                    : nlohmann::json(nullptr)},
            {"policy", log.policy},
            {"explained", ix.explained()},
            {"key", ex.key_name},
            {"key_descending", ex.key_descending},
            {"arrival", num(ix.arrivalOf(id))},
            {"prompt_tokens", ix.promptOf(id)},
            {"output_tokens",
             ix.outputOf(id) < 0 ? nlohmann::json(nullptr) : nlohmann::json(ix.outputOf(id))},
            {"waited_s", num(timeNotRunning(ix, id))},
            {"waits", wj},
            {"wait_story", waitStory(waits)},
            {"lines", lines}};
        std::cout << j.dump(2) << '\n';
        return;
    }
    std::printf(
        "%s under %s: prompt %d tokens, %s, arrived at %.6f s%s\n",
        w ? (text::printable(w->label(std::size_t(id))) + ", row " + std::to_string(id)).c_str()
          : ("request " + std::to_string(id)).c_str(),
        text::printable(log.policy).c_str(), ix.promptOf(id),
        ix.outputOf(id) < 0 ? "did not finish"
                            : ("output " + std::to_string(ix.outputOf(id)) + " tokens").c_str(),
        ix.arrivalOf(id),
        log.fleet() ? (", routed to replica " + std::to_string(log.replica_of[std::size_t(id)]) +
                       " of " + std::to_string(log.replicas))
                          .c_str()
                    : "");
    if (!ix.explained())
        std::printf("(this run log has no decisions recorded: simulate with --explain for the "
                    "reasons)\n");
    if (const std::string ws = waitStory(waits); !ws.empty()) {
        std::printf("%s\n", ws.c_str());
        for (const Wait& x : waits)
            if (x.seconds() > 0 || x.passed_over > 0)
                std::printf("  %12.6f - %12.6f  %s\n", x.from, x.to, describeWait(x, w).c_str());
    }
    for (const StoryLine& l : story) {
        switch (l.kind) {
        case StoryLine::Kind::Event: {
            const Event& e = log.events[l.index];
            const std::string what = eventValueText(e);
            if (what.empty())
                std::printf("%14.6f  %s\n", e.t, evName(e.ev));
            else
                std::printf("%14.6f  %-13s %s\n", e.t, evName(e.ev), what.c_str());
            break;
        }
        case StoryLine::Kind::Reason: {
            const Reason& r = ex.reasons[l.index];
            std::printf("%14.6f    why: %s%s\n", r.t, describeReason(r, w).c_str(),
                        r.req != id ? "  [another request's decision]" : "");
            break;
        }
        case StoryLine::Kind::State: {
            const Insight& in = ex.insights[l.index];
            const std::int32_t g = ix.generatedAt(id, in.t);
            std::printf("%14.6f    state: %s; generated %d%s\n", in.t,
                        insightText(in, ex.key_name).c_str(), g,
                        ix.outputOf(id) >= 0
                            ? (", true remaining " + std::to_string(ix.outputOf(id) - g)).c_str()
                            : "");
            break;
        }
        }
    }
}

nlohmann::json rowJson(const ViewRow& r, double t, bool fleet, const Workload* w) {
    nlohmann::json j = {
        {"req", r.req},
        {"id", w ? nlohmann::json(w->idOf(std::size_t(r.req))) : nlohmann::json(nullptr)},
        {"arrival", r.arrival},
        {"since", r.since},
        {"prompt_tokens", r.prompt},
        {"generated", r.generated},
        {"output_tokens", r.output < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.output)},
        {"true_remaining", num(r.trueRemaining())},
        {"preemptions", r.preemptions},
        {"suspensions", r.suspensions}};
    const std::pair<const char*, double> f[] = {{"key", r.key},
                                                {"predicted_remaining", r.predicted},
                                                {"deadline", r.deadline},
                                                {"alpha", r.alpha},
                                                {"wcet", r.wcet}};
    for (const auto& [k, v] : f)
        if (!std::isnan(v)) j[k] = jsonNumberOrInf(v);
    if (!std::isnan(r.deadline)) j["slack"] = num(r.deadline - t);
    if (fleet) j["replica"] = r.replica;
    return j;
}

void printView(const ExplainIndex& ix, double t, bool json, int top, int replica,
               const Workload* w) {
    const RunLog& log = ix.log();
    if (replica >= 0 && !log.fleet())
        throw std::invalid_argument("explain: --replica is for a fleet's run log (simulate "
                                    "--replicas N); this one is of one engine");
    if (replica >= log.replicas)
        throw std::invalid_argument("explain: --replica " + std::to_string(replica) +
                                    ": the run had replicas 0 to " +
                                    std::to_string(log.replicas - 1));
    SchedulerView v = viewAt(ix, t, replica);
    const Explanation& ex = log.explain;
    const bool fleet = log.fleet();
    auto replicaOfCall = [&](std::int64_t call) {
        return ex.call_replica.empty() ? 0 : int(ex.call_replica[std::size_t(call)]);
    };
    // The last decision that acted, at or before t (the calls between act on nothing).
    v.call = ix.actingCall(t, 0, replica);
    v.call_t = v.call < 0 ? std::nan("") : ex.calls[std::size_t(v.call)].t;
    v.reasons = ix.reasonsOfCall(v.call);
    if (json) {
        auto rows = [&](const std::vector<ViewRow>& rs) {
            nlohmann::json a = nlohmann::json::array();
            for (const ViewRow& r : rs) a.push_back(rowJson(r, t, fleet, w));
            return a;
        };
        nlohmann::json decided = nlohmann::json::array();
        for (std::size_t i = v.reasons.first; i < v.reasons.second; ++i)
            decided.push_back(reasonJson(ex.reasons[i]));
        nlohmann::json j = {
            {"t", t},
            {"policy", log.policy},
            {"explained", ix.explained()},
            {"key", ex.key_name},
            {"key_descending", ex.key_descending},
            {"kv_used", v.kv_used},
            {"kv_capacity", v.kv_capacity},
            {"not_arrived", v.not_arrived},
            {"finished", v.finished},
            {"killed", v.killed},
            {"last_call", v.call},
            {"last_call_t", num(v.call_t)},
            {"replicas", log.replicas},
            {"replica", replica >= 0 ? nlohmann::json(replica) : nlohmann::json(nullptr)},
            {"last_call_replica", v.call >= 0 && fleet ? nlohmann::json(replicaOfCall(v.call))
                                                       : nlohmann::json(nullptr)},
            {"last_decisions", decided},
            {"running", rows(v.running)},
            {"waiting", rows(v.waiting)},
            {"suspended", rows(v.suspended)}};
        std::cout << j.dump(2) << '\n';
        return;
    }
    std::printf("scheduler at t = %.6f s under %s\n", t, text::printable(log.policy).c_str());
    if (fleet)
        std::printf("%s\n", replica >= 0
                                ? ("replica " + std::to_string(replica) + " of " +
                                   std::to_string(log.replicas) + " (" + log.router + " router)")
                                      .c_str()
                                : ("all " + std::to_string(log.replicas) + " replicas (" +
                                   log.router + " router; --replica R for one)")
                                      .c_str());
    std::printf("KV %lld of %lld tokens (%.1f %%); %zu running, %zu waiting, %zu suspended; "
                "%d finished, %d killed, %d not arrived\n",
                static_cast<long long>(v.kv_used), static_cast<long long>(v.kv_capacity),
                v.kv_capacity > 0 ? 100.0 * double(v.kv_used) / double(v.kv_capacity) : 0.0,
                v.running.size(), v.waiting.size(), v.suspended.size(), v.finished, v.killed,
                v.not_arrived);
    if (!ix.explained()) {
        std::printf("(this run log has no decisions recorded: simulate with --explain for the "
                    "policy's keys and reasons)\n");
    } else if (v.call >= 0) {
        std::printf("last decision that acted: call %lld%s at %.6f s, %zu action(s)\n",
                    static_cast<long long>(v.call),
                    fleet ? (" on replica " + std::to_string(replicaOfCall(v.call))).c_str() : "",
                    v.call_t, v.reasons.second - v.reasons.first);
        for (std::size_t i = v.reasons.first; i < v.reasons.second; ++i)
            std::printf("  %s\n", describeReason(ex.reasons[i], w).c_str());
    }
    auto table = [&](const char* title, const std::vector<ViewRow>& rs) {
        std::printf("\n%s (%zu)%s\n", title, rs.size(),
                    rs.size() > std::size_t(top) ? (", first " + std::to_string(top)).c_str() : "");
        if (rs.empty()) return;
        const bool col = fleet && replica < 0; // which replica, when all are shown
        std::printf("  %7s%s %12s %12s %7s %9s %11s %10s %12s %9s %8s\n", w ? "id" : "req",
                    col ? " replica" : "", "arrival", "since", "prompt", "generated", "pred. rem.",
                    "true rem.", "key", "slack (s)", "alpha");
        auto f = [](double x, const char* format) {
            if (std::isnan(x)) return std::string("-");
            char b[32];
            std::snprintf(b, sizeof b, format, x);
            return std::string(b);
        };
        for (std::size_t i = 0; i < rs.size() && i < std::size_t(top); ++i) {
            const ViewRow& r = rs[i];
            char rep[16] = "";
            if (col) std::snprintf(rep, sizeof rep, " %7d", int(r.replica));
            std::printf("  %7lld%s %12.4f %12.4f %7d %9d %11s %10s %12s %9s %8s\n",
                        static_cast<long long>(w ? w->idOf(std::size_t(r.req)) : r.req), rep,
                        r.arrival, r.since, r.prompt, r.generated, f(r.predicted, "%.5g").c_str(),
                        f(r.trueRemaining(), "%.0f").c_str(), f(r.key, "%.6g").c_str(),
                        f(r.deadline - t, "%.4g").c_str(), f(r.alpha, "%.3g").c_str());
        }
    };
    table("running, in admission order", v.running);
    table(("waiting, in the policy's order (" +
           (ex.key_name.empty() ? std::string("arrival") : ex.key_name) +
           (ex.key_descending ? ", highest first)" : ", lowest first)"))
              .c_str(),
          v.waiting);
    table("suspended (KV kept), in the policy's order", v.suspended);
}

} // namespace

void addExplain(CLI::App& app) {
    auto a = std::make_shared<ExplainArgs>();
    auto* c = app.add_subcommand(
        "explain",
        "Why the scheduler did that: a request's story (--req), the scheduler's view at an "
        "instant (--at), from a run log recorded with simulate --explain --runlog");
    c->add_option("runlog", a->log, "A run log (JSONL) written by simulate --runlog");
    c->add_option("--req", a->req,
                  "The story of this request: every event and every decision "
                  "that touched it, with the rule and its numbers")
        ->check(CLI::Range(0LL, 1000000000LL));
    c->add_option("--id", a->id,
                  "The story of the request with this id in the trace (needs -w: a run log "
                  "numbers requests by row)")
        ->check(whole(std::numeric_limits<std::int64_t>::min(),
                      std::numeric_limits<std::int64_t>::max()))
        ->each([a](const std::string&) { a->id_given = true; });
    c->add_option("--workload,-w", a->workload,
                  "The run's workload: --id is looked up in it, and the story, decisions and "
                  "tables name requests by the trace's ids (checked against the run log)");
    c->add_option("--at", a->at,
                  "The scheduler's view at this time (s): waiting queue in the "
                  "policy's order with keys, running batch with predicted and "
                  "true remaining tokens, suspended requests, KV use")
        ->check(number(0, 2e9));
    c->add_option("--top", a->top, "With --at: rows per table at most (JSON lists all)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000000));
    c->add_option("--replica", a->replica,
                  "With --at, on a fleet's run log (simulate --replicas N): that replica's "
                  "requests, KV and decisions alone (default: every replica's, with a column "
                  "naming each request's)")
        ->check(CLI::Range(0, 32767));
    c->add_flag("--rules", a->rules, "List the rules reasons name (code, numbers, meaning)");
    c->add_flag("--json", a->json, "JSON instead of text");
    c->callback([a] {
        if (a->rules) {
            printRules(a->json);
            return;
        }
        if (a->log.empty()) throw std::invalid_argument("explain: give a run log (or --rules)");
        const bool want_req = a->req >= 0 || a->id_given, want_at = !std::isnan(a->at);
        if (want_req == want_at || (a->req >= 0 && a->id_given))
            throw std::invalid_argument("explain: give one of --req ROW, --id ID and --at T");
        if (a->id_given && a->workload.empty())
            throw std::invalid_argument("explain: --id needs -w, the run's workload (a run log "
                                        "numbers requests by row: --req ROW)");
        const RunLog log = readLog(a->log);
        const ExplainIndex ix(log);
        std::unique_ptr<Workload> w;
        if (!a->workload.empty()) {
            w = std::make_unique<Workload>(readWorkload(a->workload));
            // The same requests in the same rows, or the ids would name other requests.
            if (std::int64_t(w->size()) != std::int64_t(log.num_requests))
                throw InputError(a->workload, 0, "-w",
                                 "has " + std::to_string(w->size()) + " requests, the run log " +
                                     std::to_string(log.num_requests) + ": not the run's workload");
            for (std::size_t i = 0; i < w->size(); ++i)
                if (w->requests[i].prompt_tokens != ix.promptOf(ReqId(i)))
                    throw InputError(a->workload, 0, "-w",
                                     "row " + std::to_string(i) + " has a " +
                                         std::to_string(w->requests[i].prompt_tokens) +
                                         "-token prompt, the run log's " +
                                         std::to_string(ix.promptOf(ReqId(i))) +
                                         ": not the run's workload (or its arrivals were "
                                         "replaced, --rate)");
        }
        if (want_req) {
            ReqId row = 0;
            if (a->id_given) {
                const auto found = w->rowOfId(a->id);
                if (!found)
                    throw InputError(a->workload, 0, "--id",
                                     "no request has id " + std::to_string(a->id));
                row = static_cast<ReqId>(*found);
            } else {
                if (a->req >= log.num_requests)
                    throw InputError(a->log, 0, "--req",
                                     "the run has requests 0 to " +
                                         std::to_string(log.num_requests - 1));
                row = static_cast<ReqId>(a->req);
            }
            printStory(ix, row, a->json, w.get());
        } else {
            printView(ix, a->at, a->json, a->top, a->replica, w.get());
        }
    });
}

} // namespace kairos::cli
