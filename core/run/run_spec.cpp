#include "run/run_spec.h"

#include "metrics/summary.h"
#include "model/domains.h"
#include "model/router.h"
#include "model/workload.h"
#include "predict/predictor.h"
#include "sched/registry.h"
#include "sched/scheduler.h"
#include "sim/disagg.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "util/object_reader.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <toml++/toml.h>

namespace kairos {

bool hasRobotPlans(const Workload& w) {
    return std::any_of(w.requests.begin(), w.requests.end(),
                       [](const Request& r) { return r.agent >= 0 && !r.segments.empty(); });
}

std::string profileFor(const std::string& asked, const Workload* w) {
    if (asked != kAutoProfile) return asked;
    return w && hasRobotPlans(*w) ? kRobotProfileName : kDefaultProfileName;
}

namespace {

using json = nlohmann::json;

json numberOrNull(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

void tomlNodeToJson(const toml::node& n, json& out, const std::string& path,
                    std::map<std::string, long>* lines) {
    if (lines) (*lines)[path] = static_cast<long>(n.source().begin.line);
    if (const auto* t = n.as_table()) {
        out = json::object();
        for (auto&& [k, v] : *t) {
            const std::string key(k.str());
            tomlNodeToJson(v, out[key], path.empty() ? key : path + "." + key, lines);
        }
    } else if (const auto* a = n.as_array()) {
        out = json::array();
        std::size_t i = 0;
        for (const auto& e : *a) {
            json item;
            // Each element's line under "path[i]" (an array of tables: [[claim]]).
            tomlNodeToJson(e, item, path + "[" + std::to_string(i++) + "]", lines);
            out.push_back(std::move(item));
        }
    } else if (const auto* i = n.as_integer()) {
        out = i->get();
    } else if (const auto* f = n.as_floating_point()) {
        out = f->get();
    } else if (const auto* b = n.as_boolean()) {
        out = b->get();
    } else if (const auto* s = n.as_string()) {
        out = s->get();
    } else {
        throw InputError("", static_cast<long>(n.source().begin.line), path,
                         "dates and times are not used by Kairos");
    }
}

void jsonToTomlNode(const json& j, toml::table& t, const std::string& key);

toml::array jsonToTomlArray(const json& j) {
    toml::array a;
    for (const auto& e : j) {
        if (e.is_string())
            a.push_back(e.get<std::string>());
        else if (e.is_boolean())
            a.push_back(e.get<bool>());
        else if (e.is_number_integer())
            a.push_back(e.get<std::int64_t>());
        else if (e.is_number())
            a.push_back(e.get<double>());
        else if (e.is_object()) {
            toml::table sub;
            for (auto it = e.begin(); it != e.end(); ++it)
                jsonToTomlNode(it.value(), sub, it.key());
            a.push_back(std::move(sub));
        } else if (e.is_array())
            a.push_back(jsonToTomlArray(e));
    }
    return a;
}

void jsonToTomlNode(const json& j, toml::table& t, const std::string& key) {
    if (j.is_null()) return; // TOML has no null: absent
    if (j.is_object()) {
        toml::table sub;
        for (auto it = j.begin(); it != j.end(); ++it) jsonToTomlNode(it.value(), sub, it.key());
        t.insert_or_assign(key, std::move(sub));
    } else if (j.is_array()) {
        t.insert_or_assign(key, jsonToTomlArray(j));
    } else if (j.is_string()) {
        t.insert_or_assign(key, j.get<std::string>());
    } else if (j.is_boolean()) {
        t.insert_or_assign(key, j.get<bool>());
    } else if (j.is_number_unsigned()) {
        // TOML integers are signed 64-bit; larger seeds are written as text-free floats
        // would lose bits, so they are refused.
        const auto u = j.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            throw std::invalid_argument(key + " = " + std::to_string(u) +
                                        " does not fit a TOML integer");
        t.insert_or_assign(key, static_cast<std::int64_t>(u));
    } else if (j.is_number_integer()) {
        t.insert_or_assign(key, j.get<std::int64_t>());
    } else {
        t.insert_or_assign(key, j.get<double>());
    }
}

} // namespace

json tomlToJson(const std::string& text, const std::string& where,
                std::map<std::string, long>* lines) {
    return [&] {
        try {
            const toml::table t = toml::parse(text, where);
            json out;
            tomlNodeToJson(t, out, "", lines);
            return out;
        } catch (const toml::parse_error& e) {
            throw InputError(where, static_cast<long>(e.source().begin.line), "",
                             std::string(e.description()));
        }
    }();
}

std::string jsonToToml(const json& j) {
    toml::table t;
    for (auto it = j.begin(); it != j.end(); ++it) jsonToTomlNode(it.value(), t, it.key());
    std::ostringstream out;
    out << t << "\n";
    return out.str();
}

void RunSpec::validate(const std::string& where) const {
    auto bad = [&](const std::string& key, const std::string& msg) {
        throw InputError(where, 0, key, msg);
    };
    if (workload.path.empty()) bad("workload.path", "is required (the trace file)");
    const TraceFormat* f = nullptr;
    if (!parseTraceFormat(workload.format, &f))
        bad("workload.format",
            "unknown format '" + workload.format + "' (auto, " + traceFormatNames() + ")");
    // The numbers' domains are the command line's (model/domains.h): a spec file, a stored
    // run or a session cannot carry what the options refuse.
    domains::check(domains::kRate, workload.rate, where);
    domains::check(domains::kBurstiness, workload.burstiness, where);
    domains::check(domains::kRateScale, workload.rate_scale, where);
    if (workload.generate_arrivals && workload.rate_scale != 1.0)
        bad("workload.rate_scale",
            "scales the trace's own arrivals; workload.rate replaces them: give one of the two");
    domains::check(domains::kBudget, workload.budget, where);
    domains::check(domains::kLimit, double(workload.limit), where);
    for (const auto& [cls, t] : workload.tuf) {
        if (!(std::isfinite(t.ert) && t.ert >= 0))
            bad("workload.tuf." + cls + ".ert", "must be a number of seconds >= 0");
        if (!(std::isfinite(t.zero) && t.zero > t.ert))
            bad("workload.tuf." + cls + ".zero",
                "must be a number of seconds after ert (" + std::to_string(t.ert) + ")");
    }
    try {
        resolvePolicyParams(policy.name, policy.params);
    } catch (const std::invalid_argument& e) {
        bad("policy", e.what());
    }
    try {
        makePredictor(policy.predictor, 0);
    } catch (const std::exception& e) {
        bad("policy.predictor", e.what());
    }
    if (exec.profile.empty() && exec.model_id <= 0) bad("exec.profile", "is required");
    domains::check(domains::kGpuMemGib, exec.gpu_mem_gib, where);
    domains::check(domains::kMemFraction, exec.mem_fraction, where);
    if (exec.model_id < 0) bad("exec.model_id", "must be >= 0 (0: none)");
    domains::check(domains::kKvCapacity, double(limits.kv_capacity_tokens), where);
    domains::check(domains::kBlockSize, double(limits.block_size), where);
    domains::check(domains::kMaxNumSeqs, double(limits.max_num_seqs), where);
    domains::check(domains::kMaxBatchedTokens, double(limits.max_num_batched_tokens), where);
    if (limits.prefix_caching && limits.block_size < 2)
        bad("limits.prefix_caching",
            "shares whole KV blocks: the block size must be >= 2 (vLLM uses 16), not " +
                std::to_string(limits.block_size));
    if (fleet.replicas < 1 || fleet.replicas > kMaxReplicas)
        bad("fleet.replicas", "must be 1 to " + std::to_string(kMaxReplicas) + ", not " +
                                  std::to_string(fleet.replicas));
    Router router{};
    if (!routerFromName(fleet.router, &router))
        bad("fleet.router", "unknown router '" + fleet.router + "' (" + routerNames() + ")");
    if ((router == Router::PrefixAware || router == Router::PrefixOracle) && !limits.prefix_caching)
        bad("fleet.router", std::string(routerName(router)) +
                                " routes by prefix caches: it needs limits.prefix_caching on");
    if (fleet.cache_threshold >= 0)
        domains::check(domains::kCacheThreshold, fleet.cache_threshold, where);
    if (fleet.balance_abs >= 0)
        domains::check(domains::kBalanceAbs, double(fleet.balance_abs), where);
    if (fleet.balance_rel >= 0) domains::check(domains::kBalanceRel, fleet.balance_rel, where);
    if (!fleet.disaggregate.empty()) {
        try {
            parseDisaggregate(fleet.disaggregate);
        } catch (const std::invalid_argument& e) {
            bad("fleet.disaggregate", e.what());
        }
        if (fleet.replicas != 1)
            bad("fleet.disaggregate",
                "gives the replicas of both pools: --replicas (fleet.replicas) must stay 1");
        if (record.explain)
            bad("record.explain", "disaggregated runs do not record their decisions yet: run "
                                  "without --explain");
    } else if (!fleet.decode_profile.empty()) {
        bad("fleet.decode_profile",
            "is the decode pool's profile: it needs disaggregation (--disaggregate P:D)");
    } else if (fleet.link != "ib-hdr") {
        bad("fleet.link", "is the link a disaggregated run's KV moves over: it needs "
                          "disaggregation (--disaggregate P:D)");
    }
    try {
        LinkModel::parse(fleet.link);
    } catch (const std::invalid_argument& e) {
        bad("fleet.link", e.what());
    }
    try {
        GoodputSlo::parse(summary.goodput);
    } catch (const std::exception& e) {
        bad("summary.goodput", e.what());
    }
    for (double q : summary.percentiles)
        if (!(q >= 0 && q <= 100)) bad("summary.percentiles", "must be in [0, 100]");
    if (!summary.quality.empty()) try {
            QualityCurve::parse(summary.quality);
        } catch (const std::exception& e) {
            bad("summary.quality", e.what());
        }
}

json RunSpec::toJson() const {
    json params = json::object();
    for (const auto& [k, v] : policy.params) params[k] = v;
    json j = json{{"kairos_run_spec", kVersion},
                  {"workload",
                   {{"path", workload.path},
                    {"format", workload.format},
                    {"limit", workload.limit},
                    {"arrivals", workload.generate_arrivals ? "generated" : "trace"},
                    {"rate", numberOrNull(workload.rate)},
                    {"burstiness", workload.burstiness},
                    {"arrival_seed", workload.arrival_seed},
                    {"rate_scale", workload.rate_scale},
                    {"budget", workload.budget}}},
                  {"policy",
                   {{"name", policy.name},
                    {"params", params},
                    {"predictor", policy.predictor},
                    {"seed", policy.seed}}},
                  {"exec",
                   {{"profile", exec.profile},
                    {"gpu_mem_gib", exec.gpu_mem_gib},
                    {"mem_fraction", exec.mem_fraction},
                    {"model_id", exec.model_id},
                    {"model_config", exec.model_config},
                    {"db", exec.db}}},
                  {"limits",
                   {{"kv_capacity_tokens", limits.kv_capacity_tokens},
                    {"block_size", limits.block_size},
                    {"max_num_seqs", limits.max_num_seqs},
                    {"max_num_batched_tokens", limits.max_num_batched_tokens},
                    {"chunked_prefill", limits.chunked_prefill},
                    {"skip_ahead", limits.skip_ahead}}},
                  {"summary",
                   {{"goodput", summary.goodput},
                    {"percentiles", summary.percentiles},
                    {"quality", summary.quality}}}};
    // Written only when on, so that specs saved before it read and compare as before.
    if (record.explain) j["record"] = {{"explain", true}};
    if (limits.prefix_caching) j["limits"]["prefix_caching"] = true;
    if (limits.rules != EngineRules::Kairos) j["limits"]["rules"] = engineRulesName(limits.rules);
    if (fleet.replicas != 1 || fleet.router != "round_robin")
        j["fleet"] = {{"replicas", fleet.replicas}, {"router", fleet.router}};
    // The thresholds only when set, so that specs saved before them read as before.
    if (fleet.cache_threshold >= 0) j["fleet"]["cache_threshold"] = fleet.cache_threshold;
    if (fleet.balance_abs >= 0) j["fleet"]["balance_abs"] = fleet.balance_abs;
    if (fleet.balance_rel >= 0) j["fleet"]["balance_rel"] = fleet.balance_rel;
    if (!fleet.disaggregate.empty()) j["fleet"]["disaggregate"] = fleet.disaggregate;
    if (fleet.link != "ib-hdr") j["fleet"]["link"] = fleet.link;
    if (!fleet.decode_profile.empty()) j["fleet"]["decode_profile"] = fleet.decode_profile;
    for (const auto& [cls, t] : workload.tuf)
        j["workload"]["tuf"][cls] = {{"ert", t.ert}, {"zero", t.zero}};
    return j;
}

RunSpec RunSpec::fromJson(const json& j, const std::string& where) {
    RunSpec s;
    ObjectReader top(j, where, "");
    const std::int64_t version = top.integer("kairos_run_spec", kVersion, 1, 1 << 20);
    if (version > kVersion)
        top.fail("kairos_run_spec", "version " + std::to_string(version) +
                                        " is newer than this Kairos reads (" +
                                        std::to_string(kVersion) + ")");
    {
        ObjectReader r(top.table("workload"), where, "workload.");
        s.workload.path = r.text("path", "");
        s.workload.format = r.text("format", s.workload.format);
        s.workload.limit = static_cast<std::size_t>(r.integer("limit", 0, 0, 1LL << 50));
        const std::string arrivals = r.text("arrivals", "trace");
        if (arrivals != "trace" && arrivals != "generated")
            r.fail("arrivals", "must be \"trace\" (the file's) or \"generated\" (at rate)");
        s.workload.generate_arrivals = arrivals == "generated";
        s.workload.rate = r.number("rate", s.workload.rate);
        s.workload.burstiness = r.number("burstiness", s.workload.burstiness);
        s.workload.arrival_seed = r.seed("arrival_seed", 0);
        s.workload.rate_scale = r.number("rate_scale", 1.0);
        s.workload.budget = r.number("budget", 0.0);
        const json& tuf = r.table("tuf");
        for (auto it = tuf.begin(); it != tuf.end(); ++it) {
            ObjectReader t(it.value(), where, "workload.tuf." + it.key() + ".");
            const double nan = std::numeric_limits<double>::quiet_NaN();
            RunSpec::WorkloadPart::TufOverride& o = s.workload.tuf[it.key()];
            o.ert = t.number("ert", nan);
            o.zero = t.number("zero", nan);
            if (std::isnan(o.ert)) t.fail("ert", "is required");
            if (std::isnan(o.zero)) t.fail("zero", "is required");
            t.finish();
        }
        r.finish();
    }
    {
        ObjectReader r(top.table("policy"), where, "policy.");
        s.policy.name = r.text("name", s.policy.name);
        const json& params = r.table("params");
        // A parameter's JSON type is its kind's: true/false only for a flag (0 or 1), a
        // number for every other. {"C": true} is a mistake, not 1.
        const PolicySpec* known = findPolicy(s.policy.name);
        for (auto it = params.begin(); it != params.end(); ++it) {
            const ParamSpec* ps = nullptr;
            if (known)
                for (const ParamSpec& p : known->params)
                    if (p.name == it.key()) ps = &p;
            const bool flag = ps && ps->kind == ParamSpec::Kind::Flag;
            if (it.value().is_boolean() && !flag)
                r.fail("params." + it.key(),
                       "must be a number, not true or false (only a flag parameter, 0 or 1, "
                       "takes true or false)");
            if (!it.value().is_number() && !it.value().is_boolean())
                r.fail("params." + it.key(),
                       flag ? "must be true, false, 0 or 1" : "must be a number");
            s.policy.params[it.key()] = it.value().is_boolean() ? (it.value().get<bool>() ? 1 : 0)
                                                                : it.value().get<double>();
        }
        s.policy.predictor = r.text("predictor", s.policy.predictor);
        s.policy.seed = r.seed("seed", 0);
        r.finish();
    }
    {
        ObjectReader r(top.table("exec"), where, "exec.");
        s.exec.profile = r.text("profile", s.exec.profile);
        s.exec.gpu_mem_gib = r.number("gpu_mem_gib", 0);
        s.exec.mem_fraction = r.number("mem_fraction", 0);
        s.exec.model_id = r.integer("model_id", 0, 0, std::numeric_limits<std::int64_t>::max());
        s.exec.model_config = r.text("model_config", "");
        s.exec.db = r.text("db", "");
        r.finish();
    }
    {
        ObjectReader r(top.table("limits"), where, "limits.");
        s.limits.kv_capacity_tokens = r.integer("kv_capacity_tokens", 0, 0, 1000000000000000LL);
        s.limits.block_size = int(r.integer("block_size", s.limits.block_size, 1, 1 << 20));
        s.limits.max_num_seqs = int(r.integer("max_num_seqs", s.limits.max_num_seqs, 1, 1 << 24));
        s.limits.max_num_batched_tokens =
            int(r.integer("max_num_batched_tokens", s.limits.max_num_batched_tokens, 1, 1 << 30));
        s.limits.chunked_prefill = r.flag("chunked_prefill", false);
        s.limits.skip_ahead = r.flag("skip_ahead", true);
        s.limits.prefix_caching = r.flag("prefix_caching", false);
        const std::string rules = r.text("rules", "kairos");
        if (!engineRulesFromName(rules, s.limits.rules))
            r.fail("rules", "must be kairos or vllm-v0, not '" + rules + "'");
        r.finish();
    }
    {
        ObjectReader r(top.table("summary"), where, "summary.");
        s.summary.goodput = r.texts("goodput");
        s.summary.percentiles = r.numbers("percentiles", s.summary.percentiles);
        s.summary.quality = r.text("quality", "");
        r.finish();
    }
    {
        ObjectReader r(top.table("fleet"), where, "fleet.");
        s.fleet.replicas = int(r.integer("replicas", 1, 1, kMaxReplicas));
        s.fleet.router = r.text("router", s.fleet.router);
        s.fleet.cache_threshold = r.number("cache_threshold", -1);
        s.fleet.balance_abs = r.integer("balance_abs", -1, -1, std::int64_t(1e9));
        s.fleet.balance_rel = r.number("balance_rel", -1);
        s.fleet.disaggregate = r.text("disaggregate", "");
        s.fleet.link = r.text("link", s.fleet.link);
        s.fleet.decode_profile = r.text("decode_profile", "");
        r.finish();
    }
    {
        ObjectReader r(top.table("record"), where, "record.");
        s.record.explain = r.flag("explain", false);
        r.finish();
    }
    top.finish();
    s.validate(where);
    return s;
}

std::string RunSpec::toToml() const {
    return jsonToToml(toJson());
}

RunSpec RunSpec::fromToml(const std::string& text, const std::string& where) {
    std::map<std::string, long> lines;
    json j;
    try {
        const toml::table t = toml::parse(text, where);
        tomlNodeToJson(t, j, "", &lines);
    } catch (const toml::parse_error& e) {
        throw InputError(where, static_cast<long>(e.source().begin.line), "",
                         std::string(e.description()));
    }
    try {
        return fromJson(j, where);
    } catch (const InputError& e) {
        // The line of the key at fault (or of its table) from the TOML source.
        throw InputError(where, tomlLine(lines, e.field()), e.field(), e.message());
    }
}

long tomlLine(const std::map<std::string, long>& lines, std::string field) {
    while (!field.empty()) {
        if (const auto it = lines.find(field); it != lines.end()) return it->second;
        const auto cut = field.find_last_of(".[");
        field = cut == std::string::npos ? "" : field.substr(0, cut);
    }
    return 0;
}

namespace {
bool isTomlPath(const std::string& path) {
    return path.size() > 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
}
} // namespace

RunSpec RunSpec::load(const std::string& path) {
    const std::string text = readInputFile(path, limits::kSettings);
    if (isTomlPath(path)) return fromToml(text, path);
    const json j = parseJsonDocument(text, path); // the syntax error's line named
    return fromJson(j, path);
}

std::string RunSpec::textFor(const std::string& path) const {
    return isTomlPath(path) ? toToml() : toJson().dump(2) + "\n";
}

void RunSpec::save(const std::string& path) const {
    const std::string text = textFor(path);
    writeFileAtomically(path, [&](std::ostream& out) { out << text; });
}

bool RunSpec::operator==(const RunSpec& o) const {
    return toJson() == o.toJson();
}

EngineLimits RunSpec::LimitsPart::engine(std::int64_t kv_tokens) const {
    EngineLimits l = *this;
    l.kv_capacity_tokens = kv_tokens;
    return l;
}

RunSpec::LimitsPart RunSpec::LimitsPart::of(const EngineLimits& l) {
    LimitsPart p;
    static_cast<EngineLimits&>(p) = l;
    return p;
}

} // namespace kairos
