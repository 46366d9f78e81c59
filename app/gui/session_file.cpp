#include "session_file.h"

#include "metrics/summary.h"
#include "run/knobs.h"
#include "sched/registry.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "workload/readers.h"

#include <algorithm>
#include <sstream>

namespace kairos::app {

using json = nlohmann::json;

json SessionFile::toJson() const {
    json j = {{"kairos_session", kVersion}, {"run", run.toJson()}, {"view", view}};
    j["workload"] = {{"label", label}};
    if (!embedded.empty()) {
        j["workload"]["embedded"] = embedded;
        j["workload"]["name"] = embedded_name;
    }
    if (pinned_stored >= 0)
        j["pinned"] = {{"stored", pinned_stored}, {"db", pinned_db}};
    else if (pinned_spec)
        j["pinned"] = {{"spec", pinned_spec->toJson()}};
    return j;
}

namespace {

// Version 1 named its sliders: the policy's parameters, the run knobs (the KV one relative to
// the device's KV capacity, hence after the device is resolved) and each class's TUF pair.
RunSpec specOfV1(const json& j, const RunSpec::ExecPart& exec, std::int64_t profile_kv) {
    RunSpec s;
    s.exec = exec;
    s.policy.name = j.value("policy", s.policy.name);
    s.policy.predictor = j.value("predictor", s.policy.predictor);
    const PolicySpec* ps = findPolicy(s.policy.name);
    if (j.contains("sliders") && j.at("sliders").is_object())
        for (const auto& [name, v] : j.at("sliders").items()) {
            if (!v.is_number()) continue;
            if (const RunKnob* k = findRunKnob(name)) {
                if (name != "kv" || profile_kv > 0) k->set(s, v.get<double>(), profile_kv);
            } else if (ps && ps->param(name)) {
                s.policy.params[name] = v.get<double>();
            }
        }
    if (j.contains("tuf") && j.at("tuf").is_object())
        for (const auto& [cls, v] : j.at("tuf").items())
            if (v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number())
                s.workload.tuf[cls] = RunSpec::WorkloadPart::TufOverride::drawn(v[0].get<double>(),
                                                                                v[1].get<double>());
    return s;
}

RunSpec pinnedOfV1(const json& p, RunSpec s) {
    s.workload.tuf.clear();
    s.policy.name = p.at("policy").get<std::string>();
    s.policy.predictor = p.value("predictor", std::string("oracle"));
    s.policy.seed = p.value("seed", s.policy.seed);
    s.policy.params.clear();
    if (p.contains("params"))
        for (const auto& [k, v] : p.at("params").items()) s.policy.params[k] = v.get<double>();
    s.workload.rate_scale = p.value("rate", 1.0);
    s.limits.kv_capacity_tokens = p.value("kv_capacity_tokens", s.limits.kv_capacity_tokens);
    s.limits.max_num_seqs = p.value("max_num_seqs", s.limits.max_num_seqs);
    return s;
}

} // namespace

OpenedSession readSession(const std::string& path, const RunContext& ctx,
                          std::atomic<double>* progress, const std::atomic<bool>* cancel) {
    // Bounded, never waiting on a FIFO (util/input_file.h); a session may embed its
    // workload, so a workload's limits.
    const std::string text = readInputFile(path, limits::kWorkload);
    // A session is the one file the window may write over after reading it: Save writes
    // the session it came from (util/atomic_file.h guards every other input).
    forgetInput(path);
    const json j = parseJsonDocument(text, path);
    const int version = j.is_object() ? j.value("kairos_session", 0) : 0;
    if (version < 1 || !j.contains("workload") || !j.at("workload").is_object())
        throw std::runtime_error(path + ": not a Kairos session (no kairos_session and workload)");
    if (version > SessionFile::kVersion)
        throw InputError(path, 0, "kairos_session",
                         "version " + std::to_string(version) + " is newer than this Kairos reads");
    OpenedSession out;
    SessionFile& f = out.file;
    const json& wj = j.at("workload");
    f.label = wj.value("label", std::string());
    f.embedded = wj.value("embedded", std::string());
    f.embedded_name = wj.value("name", std::string());
    f.view = j.value("view", json::object());
    if (version >= 2) {
        f.run = RunSpec::fromJson(j.at("run"), path + ": run");
        if (j.contains("pinned") && j.at("pinned").contains("spec"))
            f.pinned_spec = RunSpec::fromJson(j.at("pinned").at("spec"), path + ": pinned");
    } else if (j.contains("exec") && j.at("exec").is_object()) {
        const json& e = j.at("exec");
        f.run.exec.profile = e.value("profile", f.run.exec.profile);
        f.run.exec.model_id = e.value("model_id", std::int64_t(0));
        f.run.exec.model_config = e.value("model_config", std::string());
        f.run.exec.db = e.value("db", std::string());
    }
    if (j.contains("pinned") && j.at("pinned").contains("stored")) {
        f.pinned_stored = j.at("pinned").at("stored").get<std::int64_t>();
        f.pinned_db = j.at("pinned").value("db", std::string());
    }
    // The session's device (a profile file read, a stored model parsed), resolved here: its
    // run must use it from the first simulation on.
    try {
        out.device = std::make_shared<const ResolvedExec>(resolveExec(f.run.exec, ctx));
    } catch (const std::exception& e) {
        out.device_error = e.what();
    }
    if (version == 1) {
        const RunSpec::ExecPart exec = f.run.exec;
        f.run = specOfV1(j, exec, out.device ? out.device->profile.kvCapacityTokens() : 0);
        if (wj.contains("path")) f.run.workload.path = wj.at("path").get<std::string>();
        if (j.contains("pinned") && j.at("pinned").contains("policy"))
            f.pinned_spec = pinnedOfV1(j.at("pinned"), f.run);
    }
    ReadOptions o;
    o.progress = progress;
    o.cancel = cancel;
    if (!f.embedded.empty()) {
        f.run.workload.path = kMemoryWorkload;
        std::istringstream in(f.embedded);
        auto w = std::make_shared<Workload>(readWorkload(in, path + ": embedded workload", o));
        if (!f.embedded_name.empty()) w->name = f.embedded_name;
        out.workload = std::move(w);
    } else {
        out.workload = std::make_shared<const Workload>(readWorkload(f.run.workload.path, o));
    }
    return out;
}

} // namespace kairos::app
