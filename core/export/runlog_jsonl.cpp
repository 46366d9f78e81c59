#include "export/runlog_jsonl.h"

#include "metrics/request_metrics.h"
#include "model/request.h"
#include "model/router.h"
#include "sched/registry.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/json_line.h"
#include "util/json_number.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

namespace kairos {

namespace {
// A number of the explain stream: 17 digits; infinities as strings, NaN (none) as null.
void putNum(std::string& o, double v) {
    char b[40];
    if (std::isnan(v))
        o += "null";
    else if (std::isinf(v))
        o += v > 0 ? "\"inf\"" : "\"-inf\"";
    else {
        std::snprintf(b, sizeof b, "%.17g", v);
        o += b;
    }
}

// The explain stream (model/explain.h) after the events: the calls, then the reasons,
// then the per-request states, each in the order recorded.
void writeExplain(const Explanation& ex, std::ostream& out) {
    std::string o;
    char b[96];
    const bool fleet = !ex.call_replica.empty(); // a fleet's calls name their replica
    for (std::size_t i = 0; i < ex.calls.size(); ++i) {
        const CallRecord& c = ex.calls[i];
        o.clear();
        o += "{\"ev\":\"call\",\"t\":";
        putNum(o, c.t);
        std::snprintf(b, sizeof b, ",\"hold\":%d,\"wake\":", c.hold);
        o += b;
        putNum(o, c.wake_at);
        if (fleet) o += ",\"replica\":" + std::to_string(ex.call_replica[i]);
        if (c.running >= 0) o += ",\"run\":" + std::to_string(c.running);
        if (c.kv_used >= 0) o += ",\"kv\":" + std::to_string(c.kv_used);
        o += c.restart ? ",\"restart\":true}\n" : "}\n";
        out << o;
    }
    for (const Reason& r : ex.reasons) {
        o.clear();
        o += "{\"ev\":\"why\",\"t\":";
        putNum(o, r.t);
        std::snprintf(b, sizeof b, ",\"call\":%u,\"req\":%d,\"act\":\"%s\",\"rule\":\"", r.call,
                      r.req, actName(r.act));
        o += b;
        o += ruleOf(r.rule).code;
        o += '"';
        if (r.other >= 0) o += ",\"other\":" + std::to_string(r.other);
        if (r.value != 0) o += ",\"v\":" + std::to_string(r.value);
        const int n = r.rule == RuleId::Unexplained ? 1 : ruleVarCount(r.rule);
        o += ",\"x\":[";
        for (int i = 0; i < n; ++i) {
            if (i) o += ',';
            putNum(o, r.x[static_cast<std::size_t>(i)]);
        }
        o += "]}\n";
        out << o;
    }
    for (const Insight& in : ex.insights) {
        o.clear();
        o += "{\"ev\":\"state\",\"t\":";
        putNum(o, in.t);
        o += ",\"req\":" + std::to_string(in.req);
        if (in.generated >= 0) o += ",\"gen\":" + std::to_string(in.generated);
        const std::pair<const char*, double> f[] = {{"key", in.key},
                                                    {"pred", in.predicted},
                                                    {"deadline", in.deadline},
                                                    {"alpha", in.alpha},
                                                    {"wcet", in.wcet}};
        for (const auto& [k, v] : f) {
            if (std::isnan(v)) continue;
            o += ",\"";
            o += k;
            o += "\":";
            putNum(o, v);
        }
        o += "}\n";
        out << o;
    }
}
struct TokenLine {
    double t;
    ReqId req;
    std::int32_t k;
};
} // namespace

namespace {
// The optional tail of an iteration or idle-gap record: its cached KV (with prefix caching)
// and its replica (a fleet's).
void cachedAndReplica(char* out, std::size_t size, const RunLog& log, std::int64_t cached,
                      int replica) {
    out[0] = '\0';
    int at = 0;
    if (log.prefix_caching)
        at = std::snprintf(out, size, ",\"kv_cached\":%lld", static_cast<long long>(cached));
    if (log.fleet()) std::snprintf(out + at, size - std::size_t(at), ",\"replica\":%d", replica);
}
} // namespace

void writeRunLogJsonl(const RunLog& log, std::ostream& out, const RunLogWriteOptions& opt) {
    nlohmann::json h = {{"kairos_runlog", 1},
                        {"workload", log.workload},
                        {"policy", log.policy},
                        {"exec_model", log.exec_model},
                        {"kv_capacity_tokens", log.kv_capacity_tokens},
                        {"num_requests", log.num_requests},
                        {"sim_wall_ms", log.sim_wall_ms},
                        {"warnings", log.warnings}};
    if (log.prefix_caching)
        h["prefix_caching"] = {{"block_size", log.cache_block_size},
                               {"evictions", log.cache_evictions}};
    if (log.fleet()) h["fleet"] = {{"replicas", log.replicas}, {"router", log.router}};
    if (log.disaggregated()) h["fleet"]["prefill_replicas"] = log.prefill_replicas;
    if (log.disaggregated() && log.decode_kv_capacity_tokens > 0)
        h["fleet"]["decode_kv_capacity_tokens"] = log.decode_kv_capacity_tokens;
    // How many lines of each kind follow: a reader tells a log cut short at a line's end
    // (which reads as a shorter run, wrongly) from a whole one.
    h["lines"] = {{"events", log.events.size()},
                  {"iters", log.iters.size()},
                  {"kv_idle", log.kv_idle.size()},
                  {"calls", log.explain.on ? log.explain.calls.size() : 0},
                  {"reasons", log.explain.on ? log.explain.reasons.size() : 0},
                  {"states", log.explain.on ? log.explain.insights.size() : 0}};
    if (log.explain.on) {
        h["explain"] = {{"key", log.explain.key_name},
                        {"key_descending", log.explain.key_descending},
                        {"key_counts_down", log.explain.key_counts_down}};
        if (log.explain.limits.known()) h["explain"]["limits"] = limitsJson(log.explain.limits);
    }
    out << h.dump() << '\n';
    std::vector<TokenLine> tokens;
    if (opt.tokens) {
        const auto times = allTokenTimes(log);
        for (std::size_t r = 0; r < times.size(); ++r)
            for (std::size_t k = 0; k < times[r].size(); ++k)
                tokens.push_back(
                    {times[r][k], static_cast<ReqId>(r), static_cast<std::int32_t>(k + 1)});
        std::stable_sort(tokens.begin(), tokens.end(),
                         [](const TokenLine& a, const TokenLine& b) { return a.t < b.t; });
    }
    char buf[320];
    std::size_t ie = 0, ii = 0, it = 0, ig = 0;
    const auto& ev = log.events;
    const auto& iters = log.iters;
    const auto& idle = log.kv_idle;
    const double inf = std::numeric_limits<double>::infinity();
    while (ie < ev.size() || ii < iters.size() || it < tokens.size() || ig < idle.size()) {
        const double te = ie < ev.size() ? ev[ie].t : inf;
        const double ti = ii < iters.size() ? iters[ii].t0 : inf;
        const double tt = it < tokens.size() ? tokens[it].t : inf;
        const double tg = ig < idle.size() ? idle[ig].t : inf;
        // At equal times: events first, then an idle gap's KV (after the finishes at a
        // stretch's end), then the iteration that starts, then tokens.
        if (te <= tg && te <= ti && te <= tt) {
            const Event& e = ev[ie++];
            // A fleet: the request's replica at its arrival; with disaggregation its
            // prefill replica there and its decode replica where its KV arrives.
            const auto req = static_cast<std::size_t>(e.req);
            if (log.fleet() && (e.ev == Ev::Arrive || e.ev == Ev::KvArrive))
                std::snprintf(buf, sizeof buf,
                              "{\"t\":%.17g,\"req\":%d,\"ev\":\"%s\",\"v\":%d,\"replica\":%d}\n",
                              e.t, e.req, evName(e.ev), e.value,
                              log.disaggregated() && e.ev == Ev::Arrive ? log.prefill_of[req]
                                                                        : log.replica_of[req]);
            else
                std::snprintf(buf, sizeof buf, "{\"t\":%.17g,\"req\":%d,\"ev\":\"%s\",\"v\":%d}\n",
                              e.t, e.req, evName(e.ev), e.value);
        } else if (tg <= ti && tg <= tt) {
            const RunLog::KvIdle& g = idle[ig];
            char extra[64];
            cachedAndReplica(extra, sizeof extra, log, g.cached,
                             log.fleet() ? log.kv_idle_replica[ig] : 0);
            ++ig;
            std::snprintf(buf, sizeof buf, "{\"t\":%.17g,\"ev\":\"kv_idle\",\"kv\":%lld%s}\n", g.t,
                          static_cast<long long>(g.kv), extra);
        } else if (ti <= tt) {
            const IterSpan& s = iters[ii];
            char cached[64];
            cachedAndReplica(cached, sizeof cached, log, s.kv_cached,
                             log.fleet() ? log.iter_replica[ii] : 0);
            ++ii;
            std::snprintf(
                buf, sizeof buf,
                "{\"t\":%.17g,\"ev\":\"iter\",\"n\":%d,\"dur\":%.17g,\"dd\":%.17g,\"batch\":%d,"
                "\"decode\":%d,\"prefill\":%d,\"prefill_tokens\":%d,\"kv\":%lld,\"kv_last\":%lld%s}"
                "\n",
                s.t0, s.n, s.d0, s.dd, s.decode_seqs + s.prefill_seqs, s.decode_seqs,
                s.prefill_seqs, s.prefill_tokens, static_cast<long long>(s.kv_first),
                static_cast<long long>(s.kv_last), cached);
        } else {
            const TokenLine& k = tokens[it++];
            std::snprintf(buf, sizeof buf, "{\"t\":%.17g,\"req\":%d,\"ev\":\"token\",\"v\":%d}\n",
                          k.t, k.req, k.k);
        }
        out << buf;
    }
    if (log.explain.on) writeExplain(log.explain, out);
}

void writeRunLogJsonlFile(const RunLog& log, const std::string& path,
                          const RunLogWriteOptions& opt) {
    writeFileAtomically(path, [&](std::ostream& out) { writeRunLogJsonl(log, out, opt); });
}

namespace {
// `v` if it is a whole number in [lo, hi] (so that casts of it are defined), else the error
// naming the file, line and field.
double wholeIn(double v, const std::string& file, long line, const std::string& field, double lo,
               double hi) {
    if (v != std::floor(v) || v < lo || v > hi)
        throw InputError(file, line, field,
                         "must be a whole number in [" +
                             std::to_string(static_cast<long long>(lo)) + ", " +
                             std::to_string(static_cast<long long>(hi)) + "]");
    return v;
}

// A number of the explain stream: a number, "inf" / "-inf", or (where `none_ok`) null.
double explainNum(const nlohmann::json& v, const std::string& file, long line,
                  const std::string& field, bool none_ok) {
    // null reads as NaN: "none", which only some fields may be.
    if (const auto x = numberOrInf(v); x && (none_ok || !std::isnan(*x))) return *x;
    throw InputError(file, line, field,
                     none_ok ? "not a number, \"inf\", \"-inf\" or null"
                             : "not a number, \"inf\" or \"-inf\"");
}

void readExplainLine(const nlohmann::json& j, const std::string& evs, RunLog& log,
                     const std::string& name, long lineno) {
    Explanation& ex = log.explain;
    auto field = [&](const char* k) -> const nlohmann::json& {
        const auto f = j.find(k);
        if (f == j.end()) throw InputError(name, lineno, k, "missing");
        return *f;
    };
    auto whole = [&](const char* k, double lo, double hi) {
        const auto& f = field(k);
        if (!f.is_number()) throw InputError(name, lineno, k, "not a number");
        return wholeIn(f.get<double>(), name, lineno, k, lo, hi);
    };
    auto time = [&]() {
        const double t = explainNum(field("t"), name, lineno, "t", false);
        if (!(t >= 0 && t <= 2 * kMaxSeconds))
            throw InputError(name, lineno, "t", "a time must be in [0, 2e9] s");
        return t;
    };
    const double n_req = log.num_requests - 1.0;
    if (evs == "call") {
        if (!ex.reasons.empty() || !ex.insights.empty())
            throw InputError(name, lineno, "ev", "a call after the reasons (calls come first)");
        CallRecord c;
        c.t = time();
        if (!ex.calls.empty() && c.t < ex.calls.back().t)
            throw InputError(name, lineno, "t", "earlier than the call before it");
        c.hold = static_cast<std::int32_t>(whole("hold", 1, 2147483647.0));
        c.wake_at = explainNum(field("wake"), name, lineno, "wake", false);
        if (const auto r = j.find("restart"); r != j.end()) {
            if (!r->is_boolean()) throw InputError(name, lineno, "restart", "not true or false");
            c.restart = r->get<bool>();
        }
        if (j.contains("run")) c.running = static_cast<std::int32_t>(whole("run", 0, 2147483647.0));
        if (j.contains("kv")) c.kv_used = static_cast<std::int64_t>(whole("kv", 0, 9.0e15));
        // A fleet's call names its replica; one engine's does not.
        if (log.fleet())
            ex.call_replica.push_back(
                static_cast<std::int16_t>(whole("replica", 0, log.replicas - 1.0)));
        else if (j.contains("replica"))
            throw InputError(name, lineno, "replica", "a call's replica in a log of one engine");
        ex.calls.push_back(c);
        return;
    }
    if (evs == "why") {
        if (!ex.insights.empty())
            throw InputError(name, lineno, "ev", "a reason after the states (reasons come second)");
        Reason r;
        r.t = time();
        r.call = static_cast<std::uint32_t>(whole("call", 0, double(ex.calls.size()) - 1));
        if (ex.calls[r.call].t != r.t)
            throw InputError(name, lineno, "t", "not the time of call " + std::to_string(r.call));
        if (!ex.reasons.empty() && r.call < ex.reasons.back().call)
            throw InputError(name, lineno, "call", "earlier than the reason before it");
        r.req = static_cast<ReqId>(whole("req", 0, n_req));
        const auto& act = field("act");
        if (!act.is_string() || !actFromName(act.get<std::string>(), &r.act))
            throw InputError(name, lineno, "act", "unknown action");
        const auto& rule = field("rule");
        if (!rule.is_string() || !ruleFromCode(rule.get<std::string>(), &r.rule))
            throw InputError(name, lineno, "rule", "unknown rule");
        if (j.contains("other")) r.other = static_cast<ReqId>(whole("other", -1, n_req));
        if (j.contains("v"))
            r.value = static_cast<std::int32_t>(whole("v", -2147483647.0, 2147483647.0));
        const auto& x = field("x");
        const std::size_t n =
            r.rule == RuleId::Unexplained ? 1 : static_cast<std::size_t>(ruleVarCount(r.rule));
        if (!x.is_array() || x.size() != n)
            throw InputError(name, lineno, "x",
                             "must list the rule's " + std::to_string(n) + " number(s)");
        for (std::size_t i = 0; i < n; ++i) r.x[i] = explainNum(x[i], name, lineno, "x", false);
        ex.reasons.push_back(r);
        return;
    }
    Insight in;
    in.t = time();
    in.req = static_cast<ReqId>(whole("req", 0, n_req));
    if (j.contains("gen")) in.generated = static_cast<std::int32_t>(whole("gen", 0, 2147483647.0));
    const std::pair<const char*, double*> f[] = {{"key", &in.key},
                                                 {"pred", &in.predicted},
                                                 {"deadline", &in.deadline},
                                                 {"alpha", &in.alpha},
                                                 {"wcet", &in.wcet}};
    for (const auto& [k, v] : f)
        if (const auto it = j.find(k); it != j.end()) *v = explainNum(*it, name, lineno, k, true);
    ex.insights.push_back(in);
}
} // namespace

RunLog readRunLogJsonl(std::istream& in, const std::string& name) {
    linkPolicyRules(); // its reasons may cite any policy's rule
    RunLog log;
    std::string line;
    long lineno = 0;
    bool header = false;
    auto getNum = [&](const nlohmann::json& j, const char* k) {
        const auto f = j.find(k);
        if (f == j.end() || !f->is_number())
            throw InputError(name, lineno, k, "missing or not a number");
        const double v = f->get<double>();
        if (!std::isfinite(v)) throw InputError(name, lineno, k, "not finite");
        return v;
    };
    // Whole numbers in [lo, hi], so that the casts below are defined.
    auto getInt = [&](const nlohmann::json& j, const char* k, double lo, double hi) {
        return wholeIn(getNum(j, k), name, lineno, k, lo, hi);
    };
    auto getStr = [&](const nlohmann::json& j, const char* k) {
        const auto f = j.find(k);
        if (f == j.end()) return std::string();
        if (!f->is_string()) throw InputError(name, lineno, k, "not a string");
        return f->get<std::string>();
    };
    constexpr double kMaxI32 = 2147483647.0, kMaxTokens = 1e15;
    // What the reader checks beyond each field (a log whose events or iterations are out of
    // order, or a request whose lifecycle makes no sense, is refused here rather than read
    // into metrics that assume an engine wrote it): times within twice kMaxSeconds, events
    // in time order, iterations in order and never overlapping, each iteration of a stretch
    // lasting > 0, and per request: it arrives first, ends (finish or kill) once, nothing
    // after its end.
    constexpr double kMaxLogSeconds = 2 * kMaxSeconds;
    double last_event_t = -1;
    std::vector<double> last_iter_end(1, -1.0); // per replica
    enum : char { NotYet, Arrived, Ended };
    std::vector<char> life;
    std::int64_t arrivals = 0;
    std::map<std::string, std::size_t> declared_lines; // the header's "lines"
    auto getTime = [&](const nlohmann::json& j, const char* k) {
        const double t = getNum(j, k);
        if (t < 0 || t > kMaxLogSeconds)
            throw InputError(name, lineno, k, "a time must be in [0, 2e9] s");
        return t;
    };
    while (text::nextLine(in, line)) {
        ++lineno;
        if (text::trim(line).empty()) continue;
        const nlohmann::json j = parseJsonObjectLine(line, name, lineno);
        if (!header) {
            if (!j.contains("kairos_runlog"))
                throw InputError(name, lineno, "kairos_runlog", "not a Kairos run log");
            if (!j["kairos_runlog"].is_number_integer() || j["kairos_runlog"].get<long long>() != 1)
                throw InputError(name, lineno, "kairos_runlog",
                                 "version " + j["kairos_runlog"].dump() +
                                     " is not one this Kairos reads (1)");
            log.workload = getStr(j, "workload");
            log.policy = getStr(j, "policy");
            log.exec_model = getStr(j, "exec_model");
            log.kv_capacity_tokens =
                static_cast<std::int64_t>(getInt(j, "kv_capacity_tokens", 0, kMaxTokens));
            log.num_requests =
                static_cast<std::int32_t>(getInt(j, "num_requests", 0, kMaxRequests));
            // Grown as requests appear, not to the count claimed: the claim is checked
            // against the arrivals that follow (below) before anyone sizes by it.
            if (j.contains("sim_wall_ms")) log.sim_wall_ms = getNum(j, "sim_wall_ms");
            if (j.contains("warnings") && j["warnings"].is_array())
                for (const auto& w : j["warnings"])
                    if (w.is_string()) log.warnings.push_back(w.get<std::string>());
            if (const auto x = j.find("explain"); x != j.end()) {
                if (!x->is_object()) throw InputError(name, lineno, "explain", "not an object");
                log.explain.on = true;
                log.explain.key_name = getStr(*x, "key");
                for (const auto& [key, flag] :
                     {std::pair<const char*, bool*>{"key_descending", &log.explain.key_descending},
                      {"key_counts_down", &log.explain.key_counts_down}})
                    if (const auto d = x->find(key); d != x->end()) {
                        if (!d->is_boolean())
                            throw InputError(name, lineno, std::string("explain.") + key,
                                             "not true or false");
                        *flag = d->get<bool>();
                    }
                if (const auto l = x->find("limits"); l != x->end())
                    log.explain.limits = limitsFromJson(*l, name, lineno);
            }
            if (const auto x = j.find("lines"); x != j.end()) {
                if (!x->is_object()) throw InputError(name, lineno, "lines", "not an object");
                for (auto k = x->begin(); k != x->end(); ++k)
                    declared_lines[k.key()] = static_cast<std::size_t>(
                        wholeIn(k->is_number() ? k->get<double>() : -1.0, name, lineno,
                                ("lines." + k.key()).c_str(), 0, 9.0e15));
            }
            if (const auto x = j.find("fleet"); x != j.end()) {
                if (!x->is_object()) throw InputError(name, lineno, "fleet", "not an object");
                log.replicas = static_cast<std::int32_t>(getInt(*x, "replicas", 2, kMaxReplicas));
                log.router = getStr(*x, "router");
                Router r{};
                if (!routerFromName(log.router, &r))
                    throw InputError(name, lineno, "fleet.router",
                                     "unknown router '" + log.router + "'");
                if (x->contains("prefill_replicas"))
                    log.prefill_replicas = static_cast<std::int32_t>(
                        getInt(*x, "prefill_replicas", 1, log.replicas - 1.0));
                if (x->contains("decode_kv_capacity_tokens")) {
                    if (log.prefill_replicas == 0)
                        throw InputError(name, lineno, "fleet.decode_kv_capacity_tokens",
                                         "a decode pool's KV capacity in a log without "
                                         "disaggregation (fleet.prefill_replicas)");
                    log.decode_kv_capacity_tokens = static_cast<std::int64_t>(
                        getInt(*x, "decode_kv_capacity_tokens", 1, kMaxTokens));
                }
                last_iter_end.assign(static_cast<std::size_t>(log.replicas), -1.0);
            }
            if (const auto x = j.find("prefix_caching"); x != j.end()) {
                if (!x->is_object())
                    throw InputError(name, lineno, "prefix_caching", "not an object");
                log.prefix_caching = true;
                log.cache_block_size =
                    static_cast<std::int32_t>(getInt(*x, "block_size", 2, 1 << 20));
                log.cache_evictions = static_cast<std::int64_t>(getInt(*x, "evictions", 0, 1e15));
            }
            header = true;
            continue;
        }
        const std::string evs = getStr(j, "ev");
        if (evs.empty()) throw InputError(name, lineno, "ev", "missing");
        if (evs == "call" || evs == "why" || evs == "state") {
            if (!log.explain.on)
                throw InputError(name, lineno, "ev",
                                 "'" + evs + "' line in a log whose header has no 'explain'");
            readExplainLine(j, evs, log, name, lineno);
            continue;
        }
        if (evs == "kv_idle") { // RunLog::kv_idle: the KV through an idle gap
            RunLog::KvIdle g;
            g.t = getTime(j, "t");
            g.kv = static_cast<std::int64_t>(getInt(j, "kv", 0, kMaxTokens));
            if (j.contains("kv_cached"))
                g.cached = static_cast<std::int64_t>(getInt(j, "kv_cached", 0, kMaxTokens));
            if (log.fleet())
                log.kv_idle_replica.push_back(
                    static_cast<std::int16_t>(getInt(j, "replica", 0, log.replicas - 1.0)));
            if (!log.kv_idle.empty() && g.t < log.kv_idle.back().t)
                throw InputError(name, lineno, "t", "before the idle record before it");
            log.kv_idle.push_back(g);
            continue;
        }
        if (evs == "iter") {
            IterSpan sp;
            sp.t0 = getTime(j, "t");
            sp.n = static_cast<std::int32_t>(getInt(j, "n", 1, kMaxI32));
            sp.d0 = getNum(j, "dur");
            sp.dd = getNum(j, "dd");
            if (!(sp.d0 > 0)) throw InputError(name, lineno, "dur", "must be > 0");
            if (!(sp.d0 + double(sp.n - 1) * sp.dd > 0))
                throw InputError(name, lineno, "dd",
                                 "makes the stretch's last iteration last <= 0");
            if (!(sp.tEnd() <= kMaxLogSeconds) || !(sp.tEnd() > sp.t0))
                throw InputError(name, lineno, "dur",
                                 "the stretch ends past 2e9 s or not after it starts");
            std::size_t rep = 0;
            if (log.fleet()) {
                rep = static_cast<std::size_t>(getInt(j, "replica", 0, log.replicas - 1.0));
                log.iter_replica.push_back(static_cast<std::int16_t>(rep));
            }
            double& prev_end = last_iter_end[rep];
            if (sp.t0 < prev_end - 1e-9 * (1 + prev_end))
                throw InputError(name, lineno, "t",
                                 log.fleet()
                                     ? "the iteration starts before its replica's one before it "
                                       "ends"
                                     : "the iteration starts before the one before it ends");
            prev_end = sp.tEnd();
            sp.decode_seqs = static_cast<std::int32_t>(getInt(j, "decode", 0, kMaxI32));
            sp.prefill_seqs = static_cast<std::int32_t>(getInt(j, "prefill", 0, kMaxI32));
            sp.prefill_tokens = static_cast<std::int32_t>(getInt(j, "prefill_tokens", 0, kMaxI32));
            sp.kv_first = static_cast<std::int64_t>(getInt(j, "kv", 0, kMaxTokens));
            sp.kv_last = static_cast<std::int64_t>(getInt(j, "kv_last", 0, kMaxTokens));
            if (j.contains("kv_cached"))
                sp.kv_cached = static_cast<std::int64_t>(getInt(j, "kv_cached", 0, kMaxTokens));
            log.iters.push_back(sp);
            continue;
        }
        Ev ev;
        if (!evFromName(evs, &ev))
            throw InputError(name, lineno, "ev", "unknown event '" + evs + "'");
        if (ev == Ev::Token) continue;
        Event e;
        e.t = getTime(j, "t");
        e.req = static_cast<ReqId>(getInt(j, "req", 0, log.num_requests - 1.0));
        e.ev = ev;
        e.value = static_cast<std::int32_t>(getInt(j, "v", -kMaxI32, kMaxI32));
        if (e.t < last_event_t)
            throw InputError(name, lineno, "t",
                             "earlier than the event before it (events are in time order)");
        last_event_t = e.t;
        if (static_cast<std::size_t>(e.req) >= life.size())
            life.resize(static_cast<std::size_t>(e.req) + 1, NotYet);
        char& st = life[static_cast<std::size_t>(e.req)];
        if (st == Ended)
            throw InputError(name, lineno, "ev",
                             "request " + std::to_string(e.req) +
                                 " already finished or was killed");
        if (ev == Ev::Arrive) {
            if (st != NotYet)
                throw InputError(name, lineno, "ev",
                                 "request " + std::to_string(e.req) + " arrives twice");
            st = Arrived;
            ++arrivals;
            if (log.fleet()) {
                if (log.replica_of.size() <= static_cast<std::size_t>(e.req))
                    log.replica_of.resize(static_cast<std::size_t>(e.req) + 1, -1);
                const auto rep =
                    static_cast<std::int16_t>(getInt(j, "replica", 0, log.replicas - 1.0));
                log.replica_of[static_cast<std::size_t>(e.req)] = rep;
                if (log.disaggregated()) {
                    if (rep >= log.prefill_replicas)
                        throw InputError(name, lineno, "replica",
                                         "a request arrives at a decode replica (" +
                                             std::to_string(rep) + "; the prefill pool is 0 to " +
                                             std::to_string(log.prefill_replicas - 1) + ")");
                    if (log.prefill_of.size() <= static_cast<std::size_t>(e.req))
                        log.prefill_of.resize(static_cast<std::size_t>(e.req) + 1, -1);
                    log.prefill_of[static_cast<std::size_t>(e.req)] = rep;
                }
            }
        } else if (st == NotYet) {
            throw InputError(name, lineno, "ev",
                             "request " + std::to_string(e.req) + " has '" + evs +
                                 "' before it arrives");
        }
        if (ev == Ev::Transfer || ev == Ev::KvArrive) {
            if (!log.disaggregated())
                throw InputError(name, lineno, "ev",
                                 std::string("'") + evs +
                                     "' in a log without disaggregation (fleet.prefill_replicas)");
        }
        if (ev == Ev::KvArrive) {
            const auto rep = static_cast<std::int16_t>(getInt(j, "replica", 0, log.replicas - 1.0));
            if (rep < log.prefill_replicas)
                throw InputError(name, lineno, "replica",
                                 "KV arrives at a prefill replica (" + std::to_string(rep) +
                                     "; the decode pool is " +
                                     std::to_string(log.prefill_replicas) + " to " +
                                     std::to_string(log.replicas - 1) + ")");
            log.replica_of[static_cast<std::size_t>(e.req)] = rep;
        }
        if (ev == Ev::Finish || ev == Ev::Kill) st = Ended;
        if ((ev == Ev::Finish || ev == Ev::PrefillEnd) && e.value < 1)
            throw InputError(name, lineno, "v", "a request emits at least one token by then");
        if (e.value < 0 && ev != Ev::Budget) throw InputError(name, lineno, "v", "must be >= 0");
        log.events.push_back(e);
    }
    if (!header) throw InputError(name, 0, "", "empty run log");
    // A log cut short at a line's end: fewer lines of a kind than its header declares.
    for (const auto& [kind, have] :
         {std::pair<const char*, std::size_t>{"events", log.events.size()},
          {"iters", log.iters.size()},
          {"kv_idle", log.kv_idle.size()},
          {"calls", log.explain.calls.size()},
          {"reasons", log.explain.reasons.size()},
          {"states", log.explain.insights.size()}})
        if (const auto it = declared_lines.find(kind);
            it != declared_lines.end() && it->second != have)
            throw InputError(name, lineno, std::string("lines.") + kind,
                             "the header declares " + std::to_string(it->second) + " " + kind +
                                 " lines but the file has " + std::to_string(have) +
                                 ": the log is cut short or altered");
    // Every request of a run arrives in its log (the engine logs each arrival); a header
    // claiming more is damaged, and would size every per-request table by its claim.
    if (arrivals != log.num_requests)
        throw InputError(name, 1, "num_requests",
                         "the header claims " + std::to_string(log.num_requests) +
                             " requests but " + std::to_string(arrivals) + " arrive in the log");
    if (log.fleet()) log.replica_of.resize(static_cast<std::size_t>(log.num_requests), 0);
    if (log.disaggregated()) log.prefill_of.resize(static_cast<std::size_t>(log.num_requests), 0);
    return log;
}

Workload workloadOfRunLog(const RunLog& log) {
    Workload w;
    w.name = log.workload;
    w.source = "the requests of a run log (" + log.policy + ")";
    w.requests.resize(static_cast<std::size_t>(std::max(0, log.num_requests)));
    for (const Event& e : log.events) {
        Request& r = w.requests[static_cast<std::size_t>(e.req)];
        switch (e.ev) {
        case Ev::Arrive:
            r.arrival = e.t;
            r.prompt_tokens = e.value;
            break;
        case Ev::Budget:
            r.budget_s = e.value / 1e3;
            break;
        case Ev::Finish:
        case Ev::Kill:
        case Ev::Preempt:
        case Ev::Suspend:
            r.output_tokens = std::max(r.output_tokens, e.value);
            break;
        default:
            break;
        }
    }
    // Ids are rows: the log numbers requests by row (the trace's own ids are not in it).
    for (std::size_t i = 0; i < w.requests.size(); ++i) {
        w.requests[i].id = static_cast<std::int64_t>(i);
        w.requests[i].output_tokens = std::max(1, w.requests[i].output_tokens);
    }
    return w;
}

} // namespace kairos
