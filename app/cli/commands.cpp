#include "commands.h"

#include "checks.h"
#include "exec/execution_model.h"
#include "export/perfetto.h"
#include "export/requests_csv.h"
#include "export/runlog_jsonl.h"
#include "fit/ala.h"
#include "fit/ala_exec.h"
#include "fit/cpu_profile.h"
#include "fit/ete_fit.h"
#include "metrics/compare.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "model/known_models.h"
#include "profiles.h"
#include "run/knobs.h"
#include "run/pipeline.h"
#include "sched/registry.h"
#include "sim/disagg.h"
#include "sim/engine.h"
#include "sim/prefix_cache.h"
#include "store/store.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/memory.h"
#include "util/text.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <algorithm>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

namespace kairos {
// The engine's limits as `simulate --json` reports them, each under its own name.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EngineLimits, kv_capacity_tokens, block_size, max_num_seqs,
                                   max_num_batched_tokens, chunked_prefill, skip_ahead,
                                   prefix_caching)
} // namespace kairos

namespace kairos::cli {
using app::kDefaultProfile;
using app::resolveProfile;
using app::shippedProfileNames;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Writes `text` to `path` through a temporary file: never half-written.
void writeTextFile(const std::string& path, const std::string& text) {
    writeFileAtomically(path, [&](std::ostream& out) { out << text; });
}

} // namespace

ReportWriter& reportWriter() {
    static ReportWriter w;
    return w;
}

std::function<void()>& reportHandOver() {
    static std::function<void()> h;
    return h;
}

void needReportWriters(const char* what) {
    if (reportWriter() && sweepReportWriter()) return;
    if (reportHandOver()) reportHandOver()();
    throw std::invalid_argument(std::string(what) +
                                ": this kairos-cli was built without the GUI libraries "
                                "(KAIROS_BUILD_GUI=OFF), which draw the charts");
}

LiveMaker& liveMaker() {
    static LiveMaker m;
    return m;
}

// The RunSpec the run options describe (or the --spec file's).
RunSpec specFromArgs(const SimulateArgs& a) {
    if (!a.spec_file.empty()) {
        RunSpec s = RunSpec::load(a.spec_file);
        if (a.reference_policy) { // report --compare: the same run under another policy
            s.policy.name = a.policy;
            s.policy.params.clear();
        }
        // (A disaggregated run records no decisions yet: its trace has none.)
        if (a.explain || (!a.perfetto.empty() && s.fleet.disaggregate.empty()))
            s.record.explain = true;
        return s;
    }
    if (a.workload.empty()) throw std::invalid_argument("--workload is required (or --spec FILE)");
    RunSpec s;
    // Absolute, so a stored or saved spec re-runs from any folder.
    std::error_code ec;
    const auto abs = std::filesystem::absolute(a.workload, ec);
    s.workload.path = ec ? a.workload : abs.lexically_normal().string();
    s.workload.format = a.format;
    s.workload.limit = a.limit;
    s.workload.generate_arrivals = a.rate_given;
    s.workload.rate = a.rate;
    s.workload.burstiness = a.burstiness;
    s.workload.arrival_seed = a.seed;
    if (a.rate_scale != 1.0 && a.rate_given)
        throw std::invalid_argument("--rate-scale scales the trace's own arrivals; --rate "
                                    "replaces them: give one of the two");
    s.workload.rate_scale = a.rate_scale;
    if (a.budget < 0) throw std::invalid_argument("--budget must be > 0 seconds");
    s.workload.budget = a.budget;
    s.policy.name = a.policy;
    try {
        s.policy.params = parsePolicyParams(a.params);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("--param: ") + e.what());
    }
    s.policy.predictor = a.predictor;
    s.policy.seed = a.policy_seed;
    s.exec.profile = a.profile;
    if (std::filesystem::is_regular_file(a.profile, ec)) // a file, not a shipped name
        s.exec.profile = std::filesystem::absolute(a.profile, ec).lexically_normal().string();
    s.exec.gpu_mem_gib = a.gpu_mem_gib;
    if (a.mem_fraction > 1) throw std::invalid_argument("--mem-fraction must be in (0, 1]");
    s.exec.mem_fraction = a.mem_fraction;
    s.exec.model_id = a.exec_model;
    s.exec.model_config = a.exec_config;
    if (a.exec_model > 0) s.exec.db = a.db; // where the model is (--db also stores the run)
    s.limits.kv_capacity_tokens = a.kv_capacity;
    s.limits.prefix_caching = a.prefix_caching == "on";
    s.limits.block_size = a.block_size > 0          ? a.block_size
                          : s.limits.prefix_caching ? kPrefixCacheBlockSize
                                                    : 1;
    s.limits.max_num_seqs = a.max_num_seqs;
    s.limits.max_num_batched_tokens = a.max_num_batched_tokens;
    s.limits.chunked_prefill = a.chunked;
    engineRulesFromName(a.engine_rules, s.limits.rules); // checked by the option
    s.limits.skip_ahead = !a.no_skip;
    s.fleet.replicas = a.replicas;
    s.fleet.router = a.router;
    s.fleet.cache_threshold = a.cache_threshold;
    s.fleet.balance_abs = a.balance_abs;
    s.fleet.balance_rel = a.balance_rel;
    s.fleet.disaggregate = a.disaggregate;
    s.fleet.link = a.link;
    s.fleet.decode_profile = a.decode_profile;
    s.summary.goodput = a.goodput;
    s.summary.percentiles = a.percentiles;
    s.summary.quality = a.quality;
    // Last, so they win over the options' defaults. As in the workbench, --param also sets the
    // run's knobs (core/run/knobs.h: seqs=16, rate=2, ttft_slo=500) where the policy has no
    // parameter of that name.
    if (const PolicySpec* ps = findPolicy(a.policy))
        for (auto it = s.policy.params.begin(); it != s.policy.params.end();) {
            const std::string& name = it->first;
            const double value = it->second;
            const bool own = std::any_of(ps->params.begin(), ps->params.end(),
                                         [&](const ParamSpec& p) { return p.name == name; });
            const RunKnob* knob = own ? nullptr : findRunKnob(name);
            if (!knob) {
                ++it;
                continue;
            }
            if (name == "kv") // relative to the profile's capacity, known only once resolved
                throw std::invalid_argument(
                    "--param kv=" + text::formatted("%g", value) +
                    ": the KV capacity as a multiple of the profile's is the workbench's "
                    "slider; here give --kv-capacity TOKENS");
            knob->set(s, value, 0);
            it = s.policy.params.erase(it);
        }
    // A Perfetto trace shows decisions as instants, as the workbench's export does (a
    // disaggregated run records none yet: its trace has none).
    s.record.explain = a.explain || (!a.perfetto.empty() && s.fleet.disaggregate.empty());
    checkCliSpec(s); // errors name the options, not the RunSpec's keys
    return s;
}

namespace {

// A RunSpec key as the command line spells it: errors in a run given by options name the
// option, errors in a --spec file name the key.
std::string cliField(const std::string& key) {
    static const std::map<std::string, std::string> names = {
        {"workload.path", "--workload"},
        {"workload.format", "--format"},
        {"workload.limit", "--limit"},
        {"workload.rate", "--rate"},
        {"workload.burstiness", "--burstiness"},
        {"workload.arrival_seed", "--seed"},
        {"workload.rate_scale", "--rate-scale"},
        {"workload.budget", "--budget"},
        {"policy", "--policy/--param"},
        {"policy.predictor", "--predictor"},
        {"exec.profile", "--profile"},
        {"exec.gpu_mem_gib", "--gpu-mem-gib"},
        {"exec.mem_fraction", "--mem-fraction"},
        {"exec.model_id", "--exec-model"},
        {"exec.model_config", "--exec-config"},
        {"limits.kv_capacity_tokens", "--kv-capacity"},
        {"limits.block_size", "--block-size"},
        {"limits.prefix_caching", "--prefix-caching"},
        {"limits.rules", "--engine-rules"},
        {"fleet.replicas", "--replicas"},
        {"fleet.router", "--router"},
        {"fleet.cache_threshold", "--cache-threshold"},
        {"fleet.balance_abs", "--balance-abs"},
        {"fleet.balance_rel", "--balance-rel"},
        {"fleet.disaggregate", "--disaggregate"},
        {"fleet.decode_profile", "--decode-profile"},
        {"fleet.link", "--link"},
        {"record.explain", "--explain"},
        {"limits.max_num_seqs", "--max-num-seqs"},
        {"limits.max_num_batched_tokens", "--max-num-batched-tokens"},
        {"summary.goodput", "--goodput"},
        {"summary.percentiles", "--percentiles"},
        {"summary.quality", "--quality"}};
    const auto it = names.find(key);
    return it == names.end() ? key : it->second;
}

// The error again, naming the option instead of the RunSpec key; one about the command
// line itself becomes a plain usage error.
[[noreturn]] void throwWithCliField(const InputError& e) {
    if (e.file() == "the command line")
        throw std::invalid_argument(cliField(e.field()) + ": " + e.message());
    throw InputError(e.file(), e.line(), cliField(e.field()), e.message());
}

// Runs `f`, renaming a RunSpec key in an InputError to its option when the spec came from
// the command line.
template <class F> auto withCliFields(const SimulateArgs& a, F&& f) -> decltype(f()) {
    if (!a.spec_file.empty()) return f();
    try {
        return f();
    } catch (const InputError& e) {
        throwWithCliField(e);
    }
}
} // namespace

void runWithCliFields(const SimulateArgs& a, const std::function<void()>& f) {
    withCliFields(a, f);
}

namespace {

// Runs, prints and stores; the files asked for are staged in `outputs`, which the caller
// commits once everything it writes has been staged.
RunOutputs runSimulate(const SimulateArgs& a, OutputBatch& outputs) {
#if defined(__GLIBC__)
    // One run (two with report --compare): buffers of a megabyte or more get pages of their
    // own, returned when freed. glibc otherwise raises this threshold each time it frees such
    // a buffer (up to 32 MiB), and a summary's per-request arrays, allocated and freed in
    // turn, then stay in the heap: a million-request run held 46 MB it no longer used when
    // its peak came. Only here: commands that run many simulations in one process (sweep,
    // capacity, bench) gain from glibc reusing those pages from one run to the next (fixed
    // for the whole process, a 105-run sweep took 8.0 s instead of 5.0 s).
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    const RunSpec spec = withCliFields(a, [&] { return specFromArgs(a); });
    RunContext ctx = app::runContext();
    // Nothing kept that no output asks for: the summary alone releases the event log as
    // it reads it.
    ctx.keep_log = a.keep_log || !a.runlog_out.empty() || !a.requests_csv.empty() ||
                   !a.perfetto.empty() || !a.db.empty() || a.store;
    ctx.runlog_output = !a.runlog_out.empty();
    ctx.token_lines = ctx.runlog_output && a.tokens;
    PreparedRun prep = withCliFields(a, [&] { return prepareRun(spec, ctx); });
    const Workload& w = *prep.workload;
    const DeviceProfile& prof = prep.profile;
    const std::string& profile_path = prep.profile_path;
    const ExecutionModel* model = prep.model.get();
    EngineLimits& lim = prep.limits;
    PolicyConfig pc = prep.policy;
    if (!a.save_spec.empty())
        outputs.add(a.save_spec, [&](std::ostream& out) { out << spec.textFor(a.save_spec); });

    RunOutputs o;
    std::unique_ptr<LiveSession> live;
    if (a.live) {
        if (!liveMaker())
            throw std::invalid_argument("this kairos-cli was built without libtorch "
                                        "(KAIROS_BUILD_LIVE=OFF): no live runs");
        live = liveMaker()(a.live_args, w, lim, spec.limits.kv_capacity_tokens > 0);
        if (auto p = live->predictor()) {
            pc.predictor_instance = p;
            pc.predictor = p->name();
        }
    }
    RunResult res = executeRun(prep, ctx, live ? &live->backend() : nullptr, &pc);
    o.spec_json = spec.toJson().dump(2);
    o.profile_json = prof.toJson().dump(2);
    o.goodput = prep.summary.goodput;
    o.log = std::move(res.log);
    o.summary = std::move(res.summary);
    if (!a.quiet)
        for (const auto& mw : prep.model_warnings)
            std::fprintf(stderr, "kairos-cli: warning: %s\n", mw.c_str());
    const RunLog& log = o.log;
    const Summary& s = o.summary;
    if (!a.quiet) {
        if (live)
            std::printf("%s\nplanning model (for policies that plan; --exec-model ID sets "
                        "this device's): %s\n",
                        o.log.exec_model.c_str(), model->describe().c_str());
        else
            std::printf("profile: %s (%s)\n", prof.name.c_str(), profile_path.c_str());
        std::fputs(s.table().c_str(), stdout);
        if (log.explain.on)
            std::printf("decisions recorded (--explain): %zu with their reasons over %zu "
                        "scheduler calls, %zu request states%s\n",
                        log.explain.reasons.size(), log.explain.calls.size(),
                        log.explain.insights.size(),
                        a.runlog_out.empty() && a.db.empty() && !a.store && a.perfetto.empty()
                            ? " (give --runlog, --perfetto or --db to keep them)"
                            : "");
    }
    // Every output whole or none: each written to a temporary first, the run stored, and
    // only then all moved into place by the caller (a failure anywhere replaces nothing).
    if (!a.json_out.empty()) {
        nlohmann::json j = s.toJson();
        j["profile"] = prof.name;
        j["workload_file"] = spec.workload.path;
        j["spec"] = spec.toJson();
        j["limits"] = lim;
        if (lim.rules != EngineRules::Kairos) j["limits"]["rules"] = engineRulesName(lim.rules);
        const std::string text = j.dump(2) + "\n";
        outputs.add(a.json_out, [&](std::ostream& out) { out << text; });
    }
    if (!a.runlog_out.empty())
        outputs.add(a.runlog_out, [&](std::ostream& out) {
            writeRunLogJsonl(log, out, RunLogWriteOptions{a.tokens});
        });
    if (!a.requests_csv.empty())
        outputs.add(a.requests_csv, [&](std::ostream& out) { writeRequestsCsv(log, &w, out); });
    if (!a.perfetto.empty())
        outputs.add(a.perfetto, [&](std::ostream& out) { writePerfetto(log, &w, out); });
#if KAIROS_HAVE_STORE
    if (!a.db.empty() || a.store) {
        store::RunRecord rec =
            store::makeRunRecord(w, spec.workload.path, log, s, pc, lim, a.label);
        rec.spec_json = spec.toJson().dump();
        store::Store db(a.db.empty() ? store::Store::defaultPath() : a.db);
        o.run_id = db.putRun(rec);
        if (!a.quiet)
            std::printf("stored as run %lld in %s\n", static_cast<long long>(o.run_id),
                        db.path().c_str());
    }
#endif
    o.config = {{"profile", prof.name},
                {"predictor", pc.predictor},
                {"block size", std::to_string(lim.block_size)},
                {"max running requests", std::to_string(lim.max_num_seqs)},
                {"max batched tokens", std::to_string(lim.max_num_batched_tokens)},
                {"chunked prefill", lim.chunked_prefill ? "yes" : "no"},
                {"prefix caching", lim.prefix_caching ? "on" : "off"},
                {"workload file", spec.workload.path}};
    if (lim.rules != EngineRules::Kairos)
        o.config.push_back({"engine rules", engineRulesName(lim.rules)});
    if (live)
        for (auto& kv : live->config()) o.config.push_back(kv);
    o.workload = prep.workload;
    o.memory = prep.memory;
    return o;
}

} // namespace

void checkCliSpec(const RunSpec& s) {
    try {
        s.validate("the command line");
    } catch (const InputError& e) {
        throwWithCliField(e);
    }
}

// The run options simulate, report and live share with sweep and capacity: the workload
// and its arrivals, the predictor, the memory and engine limits not swept, the summary.
void addSharedRunOptions(CLI::App* c, SimulateArgs& a) {
    c->add_option("--workload,-w", a.workload,
                  "Trace file, its format detected (kairos-cli formats lists them); required "
                  "unless --spec");
    c->add_option("--spec", a.spec_file,
                  "Run the RunSpec in this file (JSON, or TOML by its .toml extension: "
                  "--save-spec writes one; every stored run keeps its own)")
        ->excludes("--workload");
    c->add_option("--format", a.format, "auto|" + traceFormatNames("|"))->capture_default_str();
    c->add_option("--burstiness", a.burstiness, "Gamma shape of inter-arrival times (1 = Poisson)")
        ->capture_default_str()
        ->check(number(domains::kBurstiness));
    c->add_option("--seed", a.seed, "Seed of generated arrivals")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--predictor", a.predictor,
                  std::string("Length predictor of the predicting policies: ") + kPredictorGrammar)
        ->capture_default_str();
    c->add_option("--policy-seed", a.policy_seed,
                  "Seed of noisy predictors and randomised policies")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--gpu-mem-gib", a.gpu_mem_gib,
                  "Memory per GPU (GiB), replacing the profile's; the KV capacity follows")
        ->check(number(domains::kGpuMemGib));
    c->add_option("--mem-fraction", a.mem_fraction,
                  "Fraction of memory for weights + KV (vLLM's gpu_memory_utilization)")
        ->check(number(domains::kMemFraction));
    c->add_option("--block-size", a.block_size,
                  "KV block size in tokens (1: no paging; vLLM uses 16). Default 1, or 16 with "
                  "--prefix-caching on")
        ->check(number(domains::kBlockSize));
    c->add_option("--prefix-caching", a.prefix_caching,
                  "Automatic prefix caching as vLLM does it (on|off): KV blocks of shared "
                  "prefixes (the trace's prefix ids: Mooncake hash_ids, the native 'prefix' "
                  "field) are kept, reused and evicted least-recently-used")
        ->capture_default_str()
        ->check(CLI::IsMember({"on", "off"}));
    c->add_option("--max-num-batched-tokens", a.max_num_batched_tokens,
                  "Tokens per iteration at most")
        ->capture_default_str()
        ->check(number(domains::kMaxBatchedTokens));
    c->add_flag("--chunked-prefill", a.chunked, "Mix prefill chunks into decode iterations");
    c->add_option("--engine-rules", a.engine_rules,
                  "Whose rules the engine follows where engines differ (kairos|vllm-v0): "
                  "vllm-v0 is vLLM 0.4-0.5's scheduler and block manager v1 as their code runs "
                  "(with chunked prefill: admission within the iteration's token budget, the "
                  "running requests served in arrival order; one free block per check)")
        ->capture_default_str()
        ->check(CLI::IsMember({"kairos", "vllm-v0"}));
    c->add_option("--budget", a.budget, "Time budget (s) for every request without one (TimeBill)")
        ->check(number(domains::kBudget));
    c->add_option("--quality", a.quality,
                  "Quality proxy q(alpha) as ALPHA:Q,... (default 1 - alpha^2)");
    c->add_option("--goodput", a.goodput, "SLOs for goodput: ttft:MS tpot:MS e2el:MS")
        ->expected(1, 3);
    c->add_option("--percentiles", a.percentiles, "Percentiles to report")
        ->delimiter(',')
        ->capture_default_str()
        ->check(number(0, 100));
    c->add_option("--limit", a.limit, "Read at most this many requests")
        ->check(number(domains::kLimit));
    needsStore(
        c->add_option("--exec-model", a.exec_model,
                      "Use this fitted ETE or ALA model from the database (kairos-cli fit ete|ala "
                      "--db) for iteration times; the profile still sets the KV capacity")
            ->check(whole(1, std::numeric_limits<std::int64_t>::max())));
    c->add_option("--exec-config", a.exec_config,
                  "With an ALA --exec-model: its configuration (\"framework | model | hardware | "
                  "precision\")");
}

// A fleet of replicas behind a router (simulate, report, capacity; a sweep takes ranges).
void addFleetOptions(CLI::App* c, SimulateArgs& a) {
    c->add_option("--replicas", a.replicas,
                  "Identical replicas of the engine behind a router, each with its own KV cache "
                  "and scheduler (Vidur's cluster)")
        ->capture_default_str()
        ->check(number(domains::kReplicas));
    c->add_option("--router", a.router,
                  "How requests are placed on replicas: round_robin, least_outstanding, "
                  "least_kv (fewest KV tokens in use and queued), prefix_aware (SGLang's "
                  "cache-aware router as it routes: an approximate tree of the prompts it "
                  "sent), prefix_oracle (the same rule on the replicas' real caches); the last "
                  "two need --prefix-caching on")
        ->capture_default_str()
        ->check(CLI::IsMember(
            {"round_robin", "least_outstanding", "least_kv", "prefix_aware", "prefix_oracle"}));
    c->add_option("--cache-threshold", a.cache_threshold,
                  "prefix_aware / prefix_oracle: route to the replica matching more than this "
                  "share of the prompt (default 0.3, SGLang's launcher; prefix_oracle 0.5)")
        ->check(number(domains::kCacheThreshold));
    c->add_option("--balance-abs", a.balance_abs,
                  "prefix_aware / prefix_oracle: the load is imbalanced when max - min "
                  "outstanding exceeds this and max exceeds --balance-rel x min (default 64; "
                  "prefix_oracle 32)")
        ->check(number(domains::kBalanceAbs));
    c->add_option("--balance-rel", a.balance_rel,
                  "prefix_aware / prefix_oracle: see --balance-abs (default 1.5; prefix_oracle "
                  "1.0001)")
        ->check(number(domains::kBalanceRel));
    c->add_option("--disaggregate", a.disaggregate,
                  "P:D: prefill/decode disaggregation, P prefill and D decode replicas behind "
                  "the router; each request's KV moves from its prefill replica to a decode "
                  "replica over --link (instead of --replicas)");
    c->add_option("--link", a.link,
                  std::string("With --disaggregate, the link the KV moves over: ") +
                      LinkModel::presetList())
        ->capture_default_str();
    c->add_option("--decode-profile", a.decode_profile,
                  "With --disaggregate, the decode pool's device profile (a shipped name or a "
                  "JSON file): other hardware for the same model, its KV capacity, iteration "
                  "times and GPUs; default the run's --profile for both pools");
}

namespace {
// The options of simulate (and report, which adds its documents).
CLI::Option* addRunOptions(CLI::App* c, const std::shared_ptr<SimulateArgs>& a) {
    c->add_option("--save-spec", a->save_spec,
                  "Write this run's RunSpec here (JSON, or TOML for .toml): re-run it exactly "
                  "with --spec");
    addSharedRunOptions(c, *a);
    auto* rate =
        c->add_option("--rate", a->rate,
                      "Generate Poisson/gamma arrivals at this rate (req/s), replacing the file's")
            ->check(number(domains::kRate));
    c->add_option("--rate-scale", a->rate_scale,
                  "Scale the trace's own arrival rate by this factor (its gaps divided by it; "
                  "its burstiness and shape kept)")
        ->capture_default_str()
        ->check(number(domains::kRateScale));
    c->add_option("--policy,-p", a->policy,
                  "Scheduling policy: " + policyNameList() +
                      " (kairos-cli policies: each one's "
                      "parameters)")
        ->capture_default_str();
    c->add_option("--param", a->params, "Policy parameter NAME=VALUE (repeatable)");
    c->add_option("--profile", a->profile,
                  std::string("Device profile: a shipped name (kairos-cli profiles) or a JSON "
                              "file; auto: ") +
                      kRobotProfileName + " (TimelyLLM's setting) for robot plans, " +
                      kDefaultProfileName + " (MC-SF's) otherwise")
        ->capture_default_str();
    c->add_option("--kv-capacity", a->kv_capacity,
                  "KV cache capacity in tokens (default: from the profile)")
        ->check(number(domains::kKvCapacity));
    c->add_option("--max-num-seqs", a->max_num_seqs, "Running requests at most")
        ->capture_default_str()
        ->check(number(domains::kMaxNumSeqs));
    c->add_flag("--no-skip-ahead", a->no_skip,
                "Step one iteration at a time (slower; same results)");
    c->add_option("--json", a->json_out, "Write the summary as JSON here");
    c->add_option("--runlog", a->runlog_out, "Write the run log as JSONL here");
    c->add_option(
        "--requests-csv", a->requests_csv,
        "Write per-request metrics (TTFT, TPOT, E2EL, queueing, preemptions) as CSV here");
    c->add_flag("--tokens", a->tokens, "With --runlog: one line per generated token too");
    c->add_flag("--explain", a->explain,
                "Record every scheduling decision with its reason (the rule that fired, its "
                "numbers, the request compared against) and the state each policy decided on, "
                "into --runlog, --perfetto and --db; kairos-cli explain reads them");
    c->add_option("--perfetto", a->perfetto,
                  "Write a Chrome/Perfetto trace (JSON): a track per request named by the "
                  "trace's id, KV, batch and queues as counters, and every scheduling decision "
                  "as an instant with its reason (recorded as --explain does)");
    needsStore(c->add_option("--db", a->db, "Store the run in this Kairos database (SQLite)"));
    needsStore(c->add_flag("--store", a->store,
                           "Store the run in the default database ($KAIROS_DB, else "
                           "~/.local/share/kairos/kairos.db)"));
    c->add_option("--label", a->label, "With --db/--store: a label for the stored run");
    c->add_flag("--quiet,-q", a->quiet, "Print nothing");
    return rate;
}
} // namespace

void addSimulate(CLI::App& app) {
    auto a = std::make_shared<SimulateArgs>();
    auto* c = app.add_subcommand("simulate",
                                 "Simulate a policy on a workload and print the latency summary");
    auto* rate = addRunOptions(c, a);
    addFleetOptions(c, *a);
    c->callback([a, rate] {
        a->rate_given = rate->count() > 0;
        OutputBatch outputs;
        const RunOutputs o = runSimulate(*a, outputs);
        outputs.commit();
        // What the run was expected to hold, beside what the process held at its peak, its
        // outputs written (util/memory.h; the estimate is what a too-large run is refused by).
        if (!a->quiet) {
            const MemoryUse use = memoryUse();
            std::printf("memory: %s estimated before the run; %s resident and %s of address "
                        "space at the peak\n",
                        o.memory.text().c_str(), bytesText(double(use.rss_peak)).c_str(),
                        bytesText(double(use.vm_peak)).c_str());
        }
    });
}

void addLiveModelOptions(CLI::App* c, LiveArgs& l) {
    c->add_option("--model", l.model, "Model: tiny, qwen2.5-0.5b, llama-3-8b (or --weights)")
        ->capture_default_str();
    c->add_option("--weights", l.weights,
                  "A Hugging Face folder (config.json, model.safetensors or its sharded index) or "
                  "a llama2.c checkpoint FILE.bin (e.g. ../shared/data/models/stories260K.bin); "
                  "without it the weights are synthetic (seeded)");
    c->add_option("--device", l.device, "cpu or cuda")->capture_default_str();
    c->add_option("--dtype", l.dtype, "fp32, bf16 or fp16 (default fp32 on cpu, bf16 on cuda)");
    c->add_option("--weight-seed", l.weight_seed, "Seed of synthetic weights")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--threads", l.threads, "CPU threads for libtorch (default: its own)")
        ->check(whole(1, 256));
    c->add_flag("--default-allocator", l.default_allocator,
                "Leave the C library's allocator as it is (for comparison: profiles and live "
                "runs then time the same iteration differently; gpu/transformer.h)");
}

void addLiveDecodingOptions(CLI::App* c, LiveArgs& l) {
    c->add_option("--prompts", l.prompts,
                  "Prompt token ids: random (drawn from --prompt-seed), or stories: openings "
                  "of stories the model samples itself (BOS first; for a model without a "
                  "tokenizer, prompts of its own kind of text)")
        ->capture_default_str()
        ->check(CLI::IsMember({"random", "stories"}));
    c->add_option("--prompt-seed", l.prompt_seed, "Seed of the prompts' token ids")
        ->capture_default_str()
        ->check(seedValue());
    c->add_flag("--stop-at-eos", l.stop_at_eos,
                "End each answer at the model's end-of-sequence token (real weights, --weights); "
                "the workload's output length stays its limit");
    c->add_option("--temperature", l.temperature,
                  "Decoding: 0 is greedy; above 0, seeded sampling from softmax(logits / T), so "
                  "answers and their lengths vary as in a real service")
        ->capture_default_str()
        ->check(number(0, 100));
    c->add_option("--top-p", l.top_p,
                  "With --temperature: sample from the most likely tokens holding this much "
                  "probability (1: all)")
        ->capture_default_str()
        ->check(number(0, 1, true));
    c->add_option("--sample-seed", l.sample_seed,
                  "Seed of the sampling (each request's stream from it and its id; a recompute "
                  "after a preemption samples the same answer again)")
        ->capture_default_str()
        ->check(seedValue());
}

void addLive(CLI::App& app) {
    auto a = std::make_shared<SimulateArgs>();
    a->live = true;
    auto* c = app.add_subcommand(
        "live", "Run a policy on a workload live, on a real transformer (GPU or CPU): requests "
                "released at their arrival times on the wall clock, every iteration measured; "
                "the same outputs as simulate");
    auto* rate = addRunOptions(c, a);
    LiveArgs& l = a->live_args;
    addLiveModelOptions(c, l);
    c->add_option("--length-cue", l.length_cue,
                  "The synthetic length task: prompt ids tell the output length's bucket of this "
                  "many tokens (0: off)")
        ->check(whole(0, 1 << 20));
    addLiveDecodingOptions(c, l);
    c->add_option("--length-heads", l.length_heads,
                  "Length heads trained by kairos-cli lengths: the predicting policies use them "
                  "instead of --predictor");
    c->add_option("--length-predictor", l.length_mode,
                  "With --length-heads: rlp (TimeBill's bucket prediction) or trail (the probe, "
                  "smoothed, refreshed while generating)")
        ->capture_default_str();
    c->add_option("--snap-window", l.snap_window,
                  "SnapKV observation window for KV eviction (tokens)")
        ->capture_default_str()
        ->check(whole(1, 1 << 20));
    c->add_option("--kv-mem-gib", l.kv_mem_gib,
                  "KV cache memory (GiB) when --kv-capacity is not given (default 4 on cpu, "
                  "16 on cuda)")
        ->check(number(0, domains::kGpuMemGib.hi, true));
    c->callback([a, rate] {
        a->rate_given = rate->count() > 0;
        OutputBatch outputs;
        runSimulate(*a, outputs);
        outputs.commit();
    });
}

void addReport(CLI::App& app) {
    auto a = std::make_shared<SimulateArgs>();
    auto* c = app.add_subcommand(
        "report", "Simulate and write a report: HTML and PDF (workload, configuration, metrics, "
                  "the workbench's charts), per-request CSV, Perfetto trace");
    auto* rate = addRunOptions(c, a);
    addFleetOptions(c, *a);
    c->add_option("--html", a->html, "Write the report as one HTML file (charts inline)");
    c->add_option("--pdf", a->pdf, "Write the report as PDF");
    c->add_option("--csv", a->requests_csv, "Write per-request metrics as CSV (as --requests-csv)")
        ->excludes("--requests-csv");
    c->add_option("--compare", a->compare,
                  "Also simulate this policy (its default parameters, the same workload, "
                  "profile, predictor and limits) and compare: a delta table, and the report's "
                  "metrics and charts against it");
    c->callback([a, rate] {
        a->rate_given = rate->count() > 0;
        a->keep_log = true; // the report's charts and --compare read the events
        if (!a->html.empty() || !a->pdf.empty()) needReportWriters("--html/--pdf");
        std::optional<RunOutputs> ref;
        OutputBatch outputs;
        if (!a->compare.empty()) { // the reference run first: its errors before any output
            SimulateArgs b = *a;
            b.policy = a->compare;
            b.params.clear();
            b.reference_policy = true;
            b.save_spec.clear();
            b.quiet = true;
            b.json_out.clear();
            b.runlog_out.clear();
            b.requests_csv.clear();
            b.perfetto.clear();
            b.db.clear();
            b.store = false;
            OutputBatch none;
            ref = runSimulate(b, none);
        }
        const RunOutputs o = runSimulate(*a, outputs);
        if (ref && !a->quiet) {
            const auto qa = perRequest(ref->log), qb = perRequest(o.log);
            std::printf(
                "\ncompared with %s:\n%s", ref->summary.policy.c_str(),
                deltaTable(compare({&ref->summary, &qa}, {&o.summary, &qb}), a->compare, a->policy)
                    .c_str());
        }
        if (!a->html.empty() || !a->pdf.empty()) {
            const auto docs =
                reportWriter()(o, ref ? &*ref : nullptr, !a->html.empty(), !a->pdf.empty());
            if (!a->html.empty()) outputs.add(a->html, [&](std::ostream& f) { f << docs.first; });
            if (!a->pdf.empty()) outputs.add(a->pdf, [&](std::ostream& f) { f << docs.second; });
        }
        outputs.commit();
    });
}

void addGenerate(CLI::App& app) {
    struct Args {
        std::string out, lengths, prompt = "lognormal:512,0.8,max=4096",
                                  output = "lognormal:128,0.9,max=2048", name;
        std::size_t count = 1000;
        double rate = 1.0, burstiness = 1.0;
        std::uint64_t seed = 0, length_seed = 1;
        std::string robot_agents = "code";
        std::string robot, traces = std::string(KAIROS_SHARED_DATA) +
                                    "/timelyllm/timelyllm_drone_trace_set_extracted.json";
        double reading_wpm = 0;
        int system_prompt = 0, system_prompts = 1, max_context = 32768;
        double turns = 1, think_s = 30;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand("generate",
                                 "Write a native workload with generated arrivals and lengths");
    c->add_option("--out,-o", a->out, "Output file (.jsonl)")->required();
    c->add_option("--count,-n", a->count,
                  "Number of requests (at most 10 million: a file of about 700 MB)")
        ->capture_default_str()
        ->check(whole(1, 10000000));
    c->add_option("--rate", a->rate, "Arrival rate (req/s); inf puts all at time 0")
        ->capture_default_str()
        ->check(number(domains::kRate));
    c->add_option("--burstiness", a->burstiness, "Gamma shape (1 = Poisson)")
        ->capture_default_str()
        ->check(number(domains::kBurstiness));
    c->add_option("--seed", a->seed, "Seed of the arrivals")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--lengths", a->lengths,
                  "Draw (prompt, output) pairs from this trace (any readable format)");
    c->add_option("--prompt", a->prompt, "Prompt length distribution without --lengths")
        ->capture_default_str();
    c->add_option("--output", a->output, "Output length distribution without --lengths")
        ->capture_default_str();
    c->add_option("--length-seed", a->length_seed, "Seed of the lengths")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--name", a->name, "Workload name (default: the output file's name)");
    c->add_option("--robot", a->robot,
                  "A TimelyLLM-like robot workload instead: wid1, wid2 or wid3 (uses --seed)");
    c->add_option("--traces", a->traces, "Drone trace set for wid1/wid2")->capture_default_str();
    c->add_option("--robot-agents", a->robot_agents,
                  "With --robot, how tasks find their agents: code (as the authors' generator: "
                  "the earliest free agent, a new one when all are busy, so no task waits for "
                  "its robot) or paper (Table 3's agent count, distinct agents drawn at random "
                  "per event)")
        ->capture_default_str()
        ->check(CLI::IsMember({"code", "paper"}));
    c->add_option("--system-prompt", a->system_prompt,
                  "Every request begins with a shared system prompt of this many tokens (a "
                  "prefix span: what --prefix-caching reuses)")
        ->check(whole(1, 1 << 24));
    c->add_option("--system-prompts", a->system_prompts,
                  "With --system-prompt: this many different ones, drawn uniformly")
        ->capture_default_str()
        ->check(whole(1, 1000000));
    c->add_option("--turns", a->turns,
                  "Multi-turn conversations with this mean number of turns (geometric): each "
                  "turn's prompt is the previous prompt, its answer and a new user message; "
                  "conversations start at --rate / turns")
        ->capture_default_str()
        ->check(number(1, 1000));
    c->add_option("--think-time", a->think_s,
                  "With --turns: mean seconds between a turn's arrival and the next's "
                  "(exponential; open loop)")
        ->capture_default_str()
        ->check(number(1e-3, 1e6));
    c->add_option("--max-context", a->max_context,
                  "With --turns: a conversation ends before a turn whose prompt and answer "
                  "would exceed this many tokens")
        ->capture_default_str()
        ->check(whole(2, 1 << 30));
    c->add_option("--reading-time", a->reading_wpm,
                  "Chat with reading-time execution: one segment per answer, read at this many "
                  "words per minute")
        ->check(number(1, 10000));
    c->callback([a] {
        {
            // The requests held in memory while they are generated and written: 174 B each
            // measured at 10 million (a 1.7 GB peak), 220 B with a margin. A conversation's
            // turn carries a prefix span for each earlier prompt and answer, so a request
            // holds as many spans as its conversation has turns on average over its requests:
            // twice the mean number of turns (geometric), at most what --max-context allows
            // at the lengths' medians, and never more than --count; 24 B a span (10,000
            // requests at --turns 50 and 1,000: 1.6 KB and 34 KB a request measured).
            double spans = a->system_prompt > 0 ? 1 : 0;
            if (a->turns > 1) {
                double per_turn = 2;
                try {
                    if (a->lengths.empty())
                        per_turn = std::max(2.0, LengthDist::parse(a->prompt).p1 +
                                                     LengthDist::parse(a->output).p1);
                } catch (const std::exception&) {
                    // a bad distribution is refused with its own error below
                }
                spans +=
                    std::min({2 * a->turns, double(a->max_context) / per_turn, double(a->count)});
            }
            checkMemoryNeed(double(a->count) * (220 + 24 * spans),
                            "generating " + std::to_string(a->count) + " requests" +
                                (a->turns > 1 ? " in conversations" : ""),
                            a->turns > 1 ? "fewer requests (--count), fewer --turns or a "
                                           "smaller --max-context"
                                         : "fewer requests (--count)");
        }
        if (!a->robot.empty() && a->reading_wpm > 0)
            throw std::invalid_argument("--reading-time is for chat workloads; --robot gives "
                                        "each task its robot's plan");
        if (!a->robot.empty() && (a->system_prompt > 0 || a->turns > 1))
            throw std::invalid_argument("--system-prompt and --turns are for chat workloads; "
                                        "--robot's tasks share TypeFly's system prompt already");
        if (!a->robot.empty()) {
            RobotWorkloadSpec spec;
            try {
                spec = RobotWorkloadSpec::preset_(a->robot);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(std::string("--robot: ") + e.what());
            }
            spec.seed = a->seed;
            spec.agent_rule = a->robot_agents == "paper" ? RobotWorkloadSpec::Agents::Paper
                                                         : RobotWorkloadSpec::Agents::Code;
            Workload w = generateRobotWorkload(
                spec, a->robot == "wid3" ? std::vector<RobotTrace>{} : readRobotTraces(a->traces));
            if (!a->name.empty()) w.name = a->name;
            w.source = "kairos-cli generate --robot " + a->robot + " --seed " +
                       std::to_string(a->seed) +
                       (a->robot_agents == "paper" ? " --robot-agents paper" : "");
            writeKairosFile(w, a->out);
            std::printf("wrote %zu robot tasks to %s (span %.1f s)\n", w.size(), a->out.c_str(),
                        w.span());
            return;
        }
        GenerateSpec g;
        g.count = a->count;
        if (g.count == 0) throw std::invalid_argument("--count must be > 0");
        g.arrivals.rate = a->rate;
        g.arrivals.burstiness = a->burstiness;
        g.arrivals.seed = a->seed;
        g.length_seed = a->length_seed;
        g.system_prompt_tokens = a->system_prompt;
        g.system_prompts = a->system_prompts;
        g.turns = a->turns;
        g.think_s = a->think_s;
        g.max_context = a->max_context;
        if (!a->lengths.empty()) {
            ReadOptions ro;
            const Workload src = readWorkload(a->lengths, ro);
            for (const auto& r : src.requests)
                g.length_pairs.emplace_back(r.prompt_tokens, r.output_tokens);
        } else {
            auto dist = [](const char* opt, const std::string& text) {
                try {
                    return LengthDist::parse(text);
                } catch (const std::invalid_argument& e) {
                    throw std::invalid_argument(std::string(opt) + ": " + e.what());
                }
            };
            g.prompt = dist("--prompt", a->prompt);
            g.output = dist("--output", a->output);
        }
        std::string name = a->name;
        if (name.empty()) {
            name = a->out.substr(a->out.find_last_of('/') + 1);
            name = name.substr(0, name.find_last_of('.'));
        }
        g.name = name;
        Workload w = generateWorkload(g);
        if (!a->lengths.empty())
            w.meta["lengths_from"] = a->lengths.substr(a->lengths.find_last_of('/') + 1);
        if (a->reading_wpm > 0) addReadingTime(w, a->reading_wpm);
        writeKairosFile(w, a->out);
        std::printf("wrote %zu requests to %s (span %.1f s, %lld prompt + %lld output tokens)\n",
                    w.size(), a->out.c_str(), w.span(), w.totalPromptTokens(),
                    w.totalOutputTokens());
    });
}

namespace {
// Both errors of a fit, named apart: the profile's fit_mape_* are over the rows the fit kept,
// and a reader saw "MAPE over all rows: prefill 70.8 %" beside fit_mape_prefill 5.96 with
// nothing saying which was which.
std::string mapeWords(const EteFit& f) {
    char b[240];
    std::snprintf(b, sizeof b,
                  "MAPE over the rows kept (the profile's fit_mape_*): prefill %.2f%%, decode "
                  "%.2f%%; over every row, those left out included: prefill %.1f%%, decode %.1f%%",
                  f.mape_prefill_pct, f.mape_decode_pct, f.mape_prefill_all_pct,
                  f.mape_decode_all_pct);
    return b;
}
} // namespace

void addFitProfile(CLI::App& app) {
    struct Args {
        std::string splitwise, model, hardware, name, out, description;
        int tp = 2, gpu_count = 0;
        double gpu_mem_gib = 80, mem_fraction = 0.9;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "fit-profile", "Fit ETE coefficients from Splitwise's perf_model.csv and write a profile");
    c->add_option("--splitwise", a->splitwise, "Path to splitwise_perf_model.csv")->required();
    c->add_option("--model", a->model, "Model as named in the file (e.g. llama2-70b)")->required();
    c->add_option("--hardware", a->hardware, "Hardware as named in the file (e.g. a100-80gb)")
        ->required();
    c->add_option("--tp", a->tp, "Tensor-parallel degree (rows to use)")
        ->capture_default_str()
        ->check(whole(1, 1024));
    c->add_option("--gpu-count", a->gpu_count, "GPUs (default: --tp)")->check(whole(1, 1 << 20));
    c->add_option("--gpu-mem-gib", a->gpu_mem_gib, "Memory per GPU (GiB)")
        ->capture_default_str()
        ->check(number(0, 1e6, true));
    c->add_option("--mem-fraction", a->mem_fraction, "Fraction of memory vLLM may use")
        ->capture_default_str()
        ->check(number(0, 1, true));
    c->add_option("--name", a->name, "Profile name")->required();
    c->add_option("--description", a->description, "One line about the profile");
    c->add_option("--out,-o", a->out, "Output JSON")->required();
    c->callback([a] {
        const auto cfg = knownModel(a->model);
        if (!cfg)
            throw std::invalid_argument("--model: unknown model '" + a->model +
                                        "' (no shape known)");
        const auto rows = readSplitwise(a->splitwise, a->model, a->hardware, a->tp);
        const EteFit fit = fitEte(rows.prefill, rows.decode);
        DeviceProfile p;
        p.name = a->name;
        p.description = a->description;
        p.gpu_count = a->gpu_count > 0 ? a->gpu_count : a->tp;
        p.hardware = std::to_string(p.gpu_count) + "x " + a->hardware;
        p.gpu_mem_gib = a->gpu_mem_gib;
        p.mem_fraction = a->mem_fraction;
        p.model = *cfg;
        p.ete = fit.params;
        p.fit_mape_prefill = fit.mape_prefill_pct;
        p.fit_mape_decode = fit.mape_decode_pct;
        // A profile every command could read back: the memory must hold the weights and
        // at least one token of KV (1e-300 GiB wrote a profile no run could use).
        if (p.kvCapacityTokens() <= 0) {
            char b[320];
            std::snprintf(b, sizeof b,
                          "--gpu-mem-gib %g: %d GPU(s) x %g GiB x --mem-fraction %g leave no "
                          "memory for the KV cache after %s's weights (%.1f GiB); give more "
                          "memory per GPU or more GPUs (--gpu-count)",
                          a->gpu_mem_gib, p.gpu_count, a->gpu_mem_gib, a->mem_fraction,
                          a->model.c_str(), cfg->weightBytes() / (1024.0 * 1024.0 * 1024.0));
            throw std::invalid_argument(b);
        }
        const std::string file = a->splitwise.substr(a->splitwise.find_last_of('/') + 1);
        p.provenance =
            "kairos-cli fit-profile --splitwise " + file + " --model " + a->model + " --hardware " +
            a->hardware + " --tp " + std::to_string(a->tp) +
            ": non-negative least squares on relative error over " +
            std::to_string(fit.prefill_rows) +
            " prefill rows (sum L = batch*prompt, sum L^2 = batch*prompt^2) and " +
            std::to_string(fit.decode_rows) +
            " decode rows (B = batch, sum N_kv = batch*(prompt + tokens/2)) of Splitwise's "
            "measured perf model (Mutinifni/splitwise-sim data/perf_model.csv); rows more than 50% "
            "off "
            "a first fit left out (" +
            std::to_string(fit.prefill_outliers) + " prefill, " +
            std::to_string(fit.decode_outliers) + " decode); " + mapeWords(fit);
        writeTextFile(a->out, p.toJson().dump(2) + "\n");
        std::printf("%s: prefill a=%.6g b=%.6g c=%.6g (%zu of %zu rows left out), decode q0=%.6g "
                    "q1=%.6g p=%.6g (%zu left out), KV capacity %lld tokens; %s\n",
                    p.name.c_str(), p.ete.a, p.ete.b, p.ete.c, fit.prefill_outliers,
                    fit.prefill_rows, p.ete.q0, p.ete.q1, p.ete.p, fit.decode_outliers,
                    static_cast<long long>(p.kvCapacityTokens()), mapeWords(fit).c_str());
    });
}

void addProfileCpu(CLI::App& app) {
    struct Args {
        std::string model = "smollm-135m", name, out, db;
        int repeats = 3;
        double mem_gib = 8;
        bool quick = false, store = false;
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand(
        "profile-cpu",
        "Measure the reference decoder of a model shape on this CPU and fit a profile");
    c->add_option("--model", a->model, "Model shape (known: smollm-135m, qwen2.5-0.5b, ...)")
        ->capture_default_str();
    c->add_option("--name", a->name, "Profile name (default: MODEL-cpu)");
    c->add_option("--out,-o", a->out, "Output JSON")->required();
    c->add_option("--repeats", a->repeats, "Timings per point (median kept)")
        ->capture_default_str()
        ->check(whole(1, 1000));
    c->add_option("--mem-gib", a->mem_gib,
                  "Host memory the KV cache may use with the weights (GiB)")
        ->capture_default_str()
        ->check(number(0, 1e6, true));
    c->add_flag("--quick", a->quick, "A smaller grid (for a first look)");
    needsStore(
        c->add_option("--db", a->db,
                      "Also store the profile and its raw measurements in this database (then "
                      "kairos-cli fit ete --profile ID refits them)"));
    needsStore(c->add_flag("--store", a->store, "The same in the default database"));
    c->callback([a] {
        auto cfg = knownModel(a->model);
        if (!cfg) throw std::invalid_argument("--model: unknown model '" + a->model + "'");
        cfg->dtype_bytes = 4; // the reference decoder computes in fp32
        CpuProfileGrid grid;
        grid.repeats = a->repeats;
        if (a->quick) {
            grid.prefill_lengths = {16, 64, 128};
            grid.decode_batches = {1, 4};
            grid.decode_contexts = {32, 512};
        }
        {
            // The decoder's weights (fp32) and the KV cache of its largest point (the largest
            // batch at the longest context, or the longest batched prefill), a third more for
            // activations and the allocator (qwen2.5-0.5b: 2.1 GB resident, its weights 2.0).
            const auto mx = [](const std::vector<int>& v) {
                return v.empty() ? 0.0 : double(*std::max_element(v.begin(), v.end()));
            };
            const double kv = double(cfg->kvBytesPerToken()) *
                              std::max(mx(grid.decode_batches) * mx(grid.decode_contexts),
                                       mx(grid.prefill_batches) * mx(grid.prefill_lengths));
            checkMemoryNeed(1.33 * (cfg->weightBytes() + kv) + 64.0 * 1024 * 1024,
                            "profiling " + a->model + " on the CPU (fp32 weights " +
                                bytesText(cfg->weightBytes()) + ")",
                            "a smaller --model, or --quick");
        }
        const CpuProfileResult r = profileReferenceDecoder(
            *cfg, grid, [](const std::string& s) { std::printf("  %s\n", s.c_str()); });
        DeviceProfile p;
        p.name = a->name.empty() ? a->model + "-cpu" : a->name;
        const std::string cpu = cpuModelName();
        p.hardware = cpu + ", 1 thread";
        p.description = a->model + " (fp32, Kairos reference decoder) on " + p.hardware;
        p.gpu_count = 1;
        p.gpu_mem_gib = a->mem_gib;
        p.mem_fraction = 1.0;
        p.model = *cfg;
        p.ete = r.fit.params;
        p.fit_mape_prefill = r.fit.mape_prefill_pct;
        p.fit_mape_decode = r.fit.mape_decode_pct;
        p.provenance = "kairos-cli profile-cpu --model " + a->model + (a->quick ? " --quick" : "") +
                       ": measured the reference decoder (core/exec/reference_decoder.h: Eigen, "
                       "random weights, the "
                       "model's real shape, fp32, one thread) on " +
                       cpu + ", median of " + std::to_string(grid.repeats) +
                       " timings per point over " + std::to_string(r.prefill.size()) +
                       " prefill and " + std::to_string(r.decode.size()) +
                       " decode points, then fitted like fit-profile (non-negative least squares "
                       "on relative error, "
                       "outliers > 50% left out: " +
                       std::to_string(r.fit.prefill_outliers) + " prefill, " +
                       std::to_string(r.fit.decode_outliers) + " decode)";
        writeTextFile(a->out, p.toJson().dump(2) + "\n");
#if KAIROS_HAVE_STORE
        if (!a->db.empty() || a->store) {
            // The raw timings: a prefill of batch b at length l has sum L = b*l and
            // sum L^2 = b*l^2; a decode step keeps its batch and total KV.
            std::vector<Measurement> ms;
            for (const auto& x : r.prefill) {
                const double l = x.sum_l2 / x.sum_l;
                ms.push_back({"prefill", std::llround(x.sum_l / l), std::llround(l), 0, x.seconds});
            }
            for (const auto& x : r.decode)
                ms.push_back(
                    {"decode", std::llround(x.batch), 0, std::llround(x.sum_kv), x.seconds});
            store::Store db(a->db.empty() ? store::Store::defaultPath() : a->db);
            const auto id =
                db.putProfile(p.name, cpu, a->model, "synthetic", p.toJson().dump(), ms);
            std::printf("stored as profile %lld with %zu measurements in %s\n",
                        static_cast<long long>(id), ms.size(), db.path().c_str());
        }
#endif
        std::printf("%s: prefill a=%.6g b=%.6g c=%.6g (MAPE %.2f%%), decode q0=%.6g q1=%.6g p=%.6g "
                    "(MAPE %.2f%%), "
                    "KV capacity %lld tokens; %.1f s of measuring\n",
                    p.name.c_str(), p.ete.a, p.ete.b, p.ete.c, r.fit.mape_prefill_pct, p.ete.q0,
                    p.ete.q1, p.ete.p, r.fit.mape_decode_pct,
                    static_cast<long long>(p.kvCapacityTokens()), r.seconds_spent);
    });
}

void addPolicies(CLI::App& app) {
    auto* c = app.add_subcommand(
        "policies", "List the scheduling policies and their parameters (defaults, domains, units)");
    auto markdown = std::make_shared<bool>(false);
    c->add_flag("--markdown", *markdown, "As Markdown (docs/policies.md is this output)");
    c->callback([markdown] { std::fputs(policyTable(*markdown).c_str(), stdout); });
}

void addMetrics(CLI::App& app) {
    auto* c = app.add_subcommand(
        "metrics", "List the metrics a run reports: name (the JSON key, and what sweep, "
                   "capacity and experiments take), display name, unit, better direction, "
                   "whether vLLM reports it under that name, description");
    auto json = std::make_shared<bool>(false);
    c->add_flag("--json", *json, "As JSON");
    c->callback([json] {
        const std::vector<double> pcts = SummaryOptions{}.percentiles;
        if (!*json) {
            std::fputs(metricTableText(pcts).c_str(), stdout);
            return;
        }
        const auto tab = tabulatedMetrics(pcts);
        nlohmann::json rows = nlohmann::json::array();
        for (const MetricDef& d : metricTable(pcts)) {
            const bool swept = std::any_of(tab.begin(), tab.end(),
                                           [&](const MetricDef& t) { return t.key == d.key; });
            rows.push_back({{"name", d.key},
                            {"display", d.display},
                            {"unit", d.unit},
                            {"better", betterName(d.better)},
                            {"vllm", d.vllm},
                            {"tabulated", swept},
                            {"description", d.description}});
        }
        std::cout << rows.dump(2) << "\n";
    });
}

void addFormats(CLI::App& app) {
    auto* c = app.add_subcommand(
        "formats", "List the trace formats --workload reads (detected from the file's start)");
    struct Args {
        bool markdown = false, names = false;
        std::string sample;
    };
    auto a = std::make_shared<Args>();
    c->add_flag("--markdown", a->markdown, "As Markdown");
    c->add_flag("--names", a->names, "Only the names, one a line");
    c->add_option("--sample", a->sample,
                  "Print a small example of the format named, which --workload reads back")
        ->check(CLI::Validator(
            [](std::string& name) -> std::string {
                if (findTraceFormat(name)) return "";
                return "unknown format '" + name + "' (" + traceFormatNames() + ")";
            },
            "NAME", "FORMAT"));
    c->callback([a] {
        if (!a->sample.empty()) {
            std::cout << findTraceFormat(a->sample)->sample;
            return;
        }
        std::ostringstream out;
        if (a->markdown) out << "| format | files | what it reads |\n|---|---|---|\n";
        for (const TraceFormat& f : traceFormats()) {
            if (a->names)
                out << f.name << '\n';
            else if (a->markdown)
                out << "| `" << f.name << "`: " << f.title << " | `" << f.extensions << "` | "
                    << f.fields << " |\n";
            else
                out << f.name << ": " << f.title << ", " << f.extensions << "\n  " << f.fields
                    << "\n";
        }
        if (!a->names && !a->markdown)
            out << "Detected from the file's first line (--format auto); `formats --sample NAME` "
                   "prints an example.\n";
        std::cout << out.str();
    });
}

void addProfiles(CLI::App& app) {
    auto* c = app.add_subcommand("profiles", "List the shipped device profiles");
    c->callback([] {
        for (const auto& n : shippedProfileNames()) {
            std::string at;
            const DeviceProfile p = resolveProfile(n, &at);
            std::printf("%-28s %-26s KV %8lld tokens  %s\n", p.name.c_str(), p.hardware.c_str(),
                        static_cast<long long>(p.kvCapacityTokens()), p.description.c_str());
        }
    });
}

} // namespace kairos::cli
