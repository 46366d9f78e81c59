#include "run/pipeline.h"

#include "util/memory.h"

#if KAIROS_HAVE_ALA
#include "fit/ala.h"
#include "fit/ala_exec.h"
#include "metrics/metric_table.h"
#endif
#include "predict/predictor.h"
#include "sched/registry.h"
#include "sim/disagg.h"
#include "sim/fleet.h"
#include "store/store.h"
#include "util/input_error.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace kairos {

namespace {

std::string cacheKey(const std::string& path, const std::string& format, std::size_t limit) {
    return path + '\n' + format + '\n' + std::to_string(limit);
}

Workload readBase(const RunSpec::WorkloadPart& w) {
    ReadOptions ro;
    if (!parseTraceFormat(w.format, &ro.format))
        throw InputError(w.path, 0, "workload.format",
                         "unknown format '" + w.format + "' (auto, " + traceFormatNames() + ")");
    ro.limit = w.limit;
    return readWorkload(w.path, ro);
}

} // namespace

std::shared_ptr<const Workload> WorkloadCache::get(const RunSpec::WorkloadPart& w) {
    const std::string key = cacheKey(w.path, w.format, w.limit);
    {
        std::lock_guard<std::mutex> lock(m_);
        auto it = byKey_.find(key);
        if (it != byKey_.end()) return it->second;
    }
    // Read outside the lock; two threads may both read the first time, one copy is kept.
    auto read = std::make_shared<const Workload>(readBase(w));
    std::lock_guard<std::mutex> lock(m_);
    return byKey_.emplace(key, std::move(read)).first->second;
}

void WorkloadCache::put(const std::string& path, const std::string& format, std::size_t limit,
                        std::shared_ptr<const Workload> w) {
    std::lock_guard<std::mutex> lock(m_);
    byKey_[cacheKey(path, format, limit)] = std::move(w);
}

RunContext forManyRuns(const RunContext& ctx, WorkloadCache& cache,
                       const std::atomic<bool>* cancel) {
    RunContext c = ctx;
    if (!c.cache) c.cache = &cache;
    c.cancel = cancel;
    c.progress = nullptr;
    if (ctx.resolve_profile) {
        struct Memo {
            std::mutex m;
            std::map<std::string, std::pair<DeviceProfile, std::string>> found;
        };
        auto memo = std::make_shared<Memo>();
        c.resolve_profile = [memo, resolve = ctx.resolve_profile](const std::string& name,
                                                                  std::string* found_at) {
            {
                std::lock_guard<std::mutex> lock(memo->m);
                if (auto it = memo->found.find(name); it != memo->found.end()) {
                    if (found_at) *found_at = it->second.second;
                    return it->second.first;
                }
            }
            std::string at;
            DeviceProfile p = resolve(name, &at); // outside the lock: errors pass through
            std::lock_guard<std::mutex> lock(memo->m);
            memo->found.emplace(name, std::make_pair(p, at));
            if (found_at) *found_at = at;
            return p;
        };
    }
    return c;
}

Workload transformWorkload(const Workload& base, const RunSpec::WorkloadPart& w) {
    Workload out = base;
    if (w.generate_arrivals) {
        ArrivalSpec a;
        a.rate = w.rate;
        a.burstiness = w.burstiness;
        a.seed = w.arrival_seed;
        try {
            a.validate();
            assignArrivals(out, a);
        } catch (const std::invalid_argument& e) {
            throw InputError(w.path, 0, "workload.rate", e.what());
        }
        out.meta["arrival_rate"] = std::to_string(a.rate);
        out.meta["burstiness"] = std::to_string(a.burstiness);
        out.meta["arrival_seed"] = std::to_string(a.seed);
        out.sortByArrival();
    } else if (w.rate_scale != 1.0) {
        try {
            scaleArrivalRate(out, w.rate_scale);
        } catch (const std::invalid_argument& e) {
            throw InputError(w.path, 0, "workload.rate_scale", e.what());
        }
    }
    if (w.budget > 0)
        for (auto& r : out.requests)
            if (!r.budget_s) r.budget_s = w.budget;
    if (!w.tuf.empty())
        for (auto& r : out.requests)
            if (auto it = w.tuf.find(r.cls); r.tuf && it != w.tuf.end()) {
                // Utility beta until ERT, then falling linearly through 0 at the zero time
                // (and below it after: a late first response scores negatively).
                r.tuf->ert = it->second.ert;
                r.tuf->slope = -r.tuf->beta / (it->second.zero - it->second.ert);
            }
    return out;
}

namespace {
bool transformsWorkload(const RunSpec::WorkloadPart& w) {
    return w.generate_arrivals || w.rate_scale != 1.0 || w.budget > 0 || !w.tuf.empty();
}
} // namespace

std::shared_ptr<const Workload> transformedWorkload(const std::shared_ptr<const Workload>& base,
                                                    const RunSpec::WorkloadPart& w) {
    return transformsWorkload(w) ? std::make_shared<const Workload>(transformWorkload(*base, w))
                                 : base;
}

std::shared_ptr<const Workload>
WorkloadCache::transformed(const std::shared_ptr<const Workload>& base,
                           const RunSpec::WorkloadPart& w) {
    {
        std::lock_guard<std::mutex> lock(m_);
        if (keep_transformed_ == 0 || !transformsWorkload(w)) return transformedWorkload(base, w);
    }
    RunSpec s; // the memo's key: the workload part as its JSON says it
    s.workload = w;
    const std::string key = s.toJson().at("workload").dump();
    {
        std::lock_guard<std::mutex> lock(m_);
        for (const Transformed& t : transformed_)
            if (t.base == base && t.transforms == key) return t.result;
    }
    auto out = transformedWorkload(base, w); // outside the lock: other runs go on
    std::lock_guard<std::mutex> lock(m_);
    transformed_.push_back({base, key, out});
    while (transformed_.size() > keep_transformed_) transformed_.erase(transformed_.begin());
    return out;
}

void WorkloadCache::clear() {
    std::lock_guard<std::mutex> lock(m_);
    byKey_.clear();
    transformed_.clear();
}

void WorkloadCache::keepTransformed(std::size_t n) {
    std::lock_guard<std::mutex> lock(m_);
    keep_transformed_ = n;
    while (transformed_.size() > keep_transformed_) transformed_.erase(transformed_.begin());
}

ResolvedExec resolveExec(const RunSpec::ExecPart& asked, const RunContext& ctx,
                         const Workload* workload) {
    RunSpec::ExecPart e = asked;
    e.profile = profileFor(asked.profile, workload);
    ResolvedExec r;
    // The device profile gives the KV capacity (and the execution model unless a fitted
    // one from the store replaces it).
    if (ctx.resolve_profile) {
        r.profile = ctx.resolve_profile(e.profile, &r.profile_path);
    } else {
        if (!std::filesystem::is_regular_file(e.profile))
            throw InputError(e.profile, 0, "exec.profile",
                             "not a file (shipped profiles are found by the application)");
        r.profile = DeviceProfile::load(e.profile);
        r.profile_path = e.profile;
    }
    if (e.gpu_mem_gib > 0) {
        r.profile.gpu_mem_gib = e.gpu_mem_gib;
        r.profile.kv_capacity_tokens.reset();
    }
    if (e.mem_fraction > 0) {
        r.profile.mem_fraction = e.mem_fraction;
        r.profile.kv_capacity_tokens.reset();
    }
    if (e.model_id > 0) {
#if KAIROS_HAVE_STORE
        const store::Store db(e.db.empty() ? store::Store::defaultPath() : e.db,
                              store::Store::Open::Existing);
        const auto m = db.model(e.model_id);
        const std::string id = std::to_string(e.model_id);
        if (!m) throw InputError(db.path(), 0, "exec.model_id", "no model " + id);
        if (m->kind == "ala") {
#if KAIROS_HAVE_ALA
            const auto ala = ala::AlaModel::fromJson(m->params);
            const auto keys = ala.configurations();
            std::string key = e.model_config;
            if (key.empty() && keys.size() == 1) key = keys.front();
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
                std::string list;
                for (std::size_t i = 0; i < keys.size() && i < 12; ++i) list += "\n  " + keys[i];
                if (keys.size() > 12)
                    list += "\n  ... (" + std::to_string(keys.size()) +
                            " in all: kairos-cli models show " + id + ")";
                throw InputError(db.path(), 0, "exec.model_config",
                                 std::string(key.empty() ? "a configuration is needed"
                                                         : "no configuration '" + key + "'") +
                                     ": ALA model " + id + " has" + list);
            }
            r.model = std::make_shared<ala::AlaExecutionModel>(
                ala, key, "ala model " + id + " (" + key + ")");
            r.model_warnings = store::modelFitWarnings(*m, key);
#else
            throw InputError(db.path(), 0, "exec.model_id",
                             "model " + id +
                                 " is an ALA model: this build has no ALA (KAIROS_WITH_ALA=OFF)");
#endif
        } else if (m->kind == "ete") {
            r.model = std::make_shared<EteModel>(EteParams::fromModelJson(m->params),
                                                 "ete model " + id + " (" + m->name + ")");
            r.model_warnings = store::modelFitWarnings(*m);
        } else {
            throw InputError(db.path(), 0, "exec.model_id",
                             "model " + id + " is '" + m->kind +
                                 "': the simulator takes ETE and ALA models");
        }
#else
        throw InputError(e.db.empty() ? "--model" : e.db, 0, "exec.model_id",
                         "this build has no store (KAIROS_WITH_STORE=OFF): fitted models "
                         "cannot be read");
#endif
    } else {
        r.model = makeExecutionModel(r.profile);
    }

    return r;
}

RunShape runShape(const Workload& w, const RunContext& ctx, const EngineLimits& limits,
                  const ExecutionModel* model) {
    RunShape s;
    s.requests = w.requests.size();
    s.workload_bytes = workloadBytes(w);
    double tokens = 0, first = 0, last = 0;
    for (const Request& r : w.requests) {
        tokens += double(r.prompt_tokens) + r.output_tokens;
        s.output_tokens += r.output_tokens;
    }
    if (!w.requests.empty()) {
        first = w.requests.front().arrival;
        last = w.requests.front().arrival;
        for (const Request& r : w.requests) {
            first = std::min(first, r.arrival);
            last = std::max(last, r.arrival);
        }
    }
    s.mean_context = s.requests ? tokens / double(s.requests) : 0;
    s.arrival_span_s = last - first;
    s.kv_tokens = double(limits.kv_capacity_tokens);
    s.max_num_seqs = limits.max_num_seqs;
    s.block_size = limits.block_size;
    if (model) {
        BatchShape one;
        one.decode_seqs = 1;
        one.decode_kv_tokens = static_cast<std::int64_t>(s.mean_context);
        s.decode_step_s = model->iterationTime(one);
    }
    s.keep_log = ctx.keep_log;
    s.runlog_output = ctx.runlog_output;
    s.token_lines = ctx.token_lines;
    return s;
}

PreparedRun prepareRun(const RunSpec& spec, const RunContext& ctx) {
    spec.validate();
    PreparedRun p;
    p.spec = spec;
    // The workload: from the cache or the file, then its transforms (a copy only when one
    // applies: most sweep points share the base workload as it is).
    std::shared_ptr<const Workload> base;
    if (ctx.cache)
        base = ctx.cache->get(spec.workload);
    else
        base = std::make_shared<const Workload>(readBase(spec.workload));
    p.workload = ctx.cache ? ctx.cache->transformed(base, spec.workload)
                           : transformedWorkload(base, spec.workload);

    ResolvedExec ex = ctx.exec ? *ctx.exec : resolveExec(spec.exec, ctx, p.workload.get());
    p.profile = std::move(ex.profile);
    p.profile_path = std::move(ex.profile_path);
    p.model = std::move(ex.model);
    p.model_warnings = std::move(ex.model_warnings);
    // The spec's limits with its own KV capacity, else the profile's (each pool's, with a
    // decode profile).
    const auto limitsOn = [&spec](const DeviceProfile& profile) {
        return spec.limits.engine(spec.limits.kv_capacity_tokens > 0
                                      ? spec.limits.kv_capacity_tokens
                                      : profile.kvCapacityTokens());
    };
    p.limits = limitsOn(p.profile);
    if (p.limits.kv_capacity_tokens <= 0)
        throw InputError(p.profile_path, 0,
                         spec.exec.gpu_mem_gib > 0    ? "exec.gpu_mem_gib"
                         : spec.exec.mem_fraction > 0 ? "exec.mem_fraction"
                                                      : "gpu_mem_gib",
                         "the weights of the profile's model (" + p.profile.name + ")" +
                             " leave no memory for the KV cache");
    if (!spec.fleet.decode_profile.empty()) {
        RunSpec::ExecPart e = spec.exec;
        e.profile = spec.fleet.decode_profile;
        e.model_id = 0; // a fitted model is of the run's hardware: the profile's own here
        e.model_config.clear();
        ResolvedExec d;
        try {
            d = resolveExec(e, ctx, p.workload.get());
        } catch (const InputError& err) {  // named as the option the user gave
            if (err.file() == "--profile") // the CLI's and window's "no such profile"
                throw InputError("--decode-profile", 0, "", err.message());
            if (err.field() != "exec.profile") throw;
            throw InputError(err.file(), err.line(), "fleet.decode_profile", err.message());
        }
        PreparedRun::DecodePool pool;
        pool.profile = std::move(d.profile);
        pool.profile_path = std::move(d.profile_path);
        pool.model = std::move(d.model);
        const std::int64_t mine = p.profile.model.kvBytesPerToken(),
                           theirs = pool.profile.model.kvBytesPerToken();
        if (mine != theirs)
            throw InputError(pool.profile_path, 0, "fleet.decode_profile",
                             "its model keeps " + std::to_string(theirs) +
                                 " bytes of KV per token where the prefill pool's (" +
                                 p.profile.name + ") keeps " + std::to_string(mine) +
                                 ": both pools must serve the same model (--decode-profile)");
        // The same model: its name and shape, not only its KV size per token (a 70B model
        // and another with the same KV layout would pass that).
        const ModelConfig &a = p.profile.model, &b = pool.profile.model;
        if (a.name != b.name || a.layers != b.layers || a.hidden != b.hidden ||
            a.heads != b.heads || a.kv_heads != b.kv_heads || a.head_dim != b.head_dim ||
            a.dtype_bytes != b.dtype_bytes || a.params != b.params)
            throw InputError(pool.profile_path, 0, "fleet.decode_profile",
                             "its model is " + (b.name.empty() ? std::string("unnamed") : b.name) +
                                 " where the prefill pool's (" + p.profile.name + ") is " +
                                 (a.name.empty() ? std::string("unnamed") : a.name) +
                                 " (or the same name with another shape): both pools must serve "
                                 "the same model (--decode-profile)");
        // Abstract time units (the unit profile) and seconds do not add up on one clock.
        if ((p.profile.exec_kind == "unit") != (pool.profile.exec_kind == "unit"))
            throw InputError(pool.profile_path, 0, "fleet.decode_profile",
                             std::string("the ") +
                                 (pool.profile.exec_kind == "unit" ? "decode" : "prefill") +
                                 " pool's profile counts abstract iterations (exec \"unit\") and "
                                 "the other seconds: both pools must run on one clock "
                                 "(--decode-profile)");
        pool.limits = limitsOn(pool.profile);
        if (pool.limits.kv_capacity_tokens <= 0)
            throw InputError(pool.profile_path, 0, "fleet.decode_profile",
                             "the weights of the profile's model (" + pool.profile.name +
                                 ") leave no memory for the KV cache (--decode-profile)");
        p.decode = std::move(pool);
    }

    p.policy.name = spec.policy.name;
    p.policy.params = spec.policy.params;
    p.policy.predictor = spec.policy.predictor;
    p.policy.seed = spec.policy.seed;

    // A policy that gives requests without one a time budget (TimeBill's `budget`): the
    // summary scores them against it (its "within budget" was shown only for workloads that
    // carry budgets, though Help described it for TimeBill).
    if (const PolicySpec* ps = findPolicy(p.policy.name))
        if (const ParamSpec* q = ps->param("budget")) {
            const auto it = p.policy.params.find("budget");
            p.summary.default_budget_s = it != p.policy.params.end() ? it->second : q->dflt;
        }
    p.summary.goodput = GoodputSlo::parse(spec.summary.goodput);
    p.summary.percentiles = spec.summary.percentiles;
    if (!spec.summary.quality.empty())
        p.summary.quality = QualityCurve::parse(spec.summary.quality);
    p.memory = runMemory(spec, runShape(*p.workload, ctx, p.limits, p.model.get()));
    if (ctx.check_memory)
        checkMemory(p.memory,
                    "a run of " + std::to_string(p.workload->requests.size()) + " requests",
                    runMemoryRemedy(spec));
    return p;
}

RunContext inMemory(const RunContext& base, WorkloadCache& cache, const std::string& name,
                    const Workload& w, const ExecutionModel& model) {
    cache.put(name, "auto", 0, std::shared_ptr<const Workload>(&w, [](const Workload*) {}));
    auto ex = std::make_shared<ResolvedExec>();
    ex->model = std::shared_ptr<const ExecutionModel>(&model, [](const ExecutionModel*) {});
    RunContext c = base;
    c.cache = &cache;
    c.exec = std::move(ex);
    c.check_memory = false;
    return c;
}

MemoryEstimate checkConcurrentRuns(const RunSpec& worst, const RunContext& ctx,
                                   std::size_t concurrent, const std::string& what,
                                   const std::string& remedy) {
    RunContext c = ctx;
    c.check_memory = false;
    const PreparedRun p = prepareRun(worst, c);
    const MemoryEstimate one = runMemory(worst, runShape(*p.workload, c, p.limits, p.model.get()));
    MemoryEstimate all;
    const double shared = workloadBytes(*p.workload);
    all.add("the workload", shared);
    const double k = double(std::max<std::size_t>(1, concurrent));
    all.add(std::to_string(std::max<std::size_t>(1, concurrent)) +
                (concurrent > 1 ? " runs at once of " : " run of ") +
                std::to_string(p.workload->requests.size()) + " requests (" +
                bytesText(one.bytes - shared) + " each)",
            k * (one.bytes - shared));
    checkMemory(all, what, remedy);
    return all;
}

RunResult executeRun(const PreparedRun& p, const RunContext& ctx, LiveBackend* live,
                     const PolicyConfig* policy_override) {
    RunResult r;
    r.spec = p.spec;
    r.workload = p.workload;
    r.limits = p.limits;
    r.policy = policy_override ? *policy_override : p.policy;
    r.profile_name = p.profile.name;
    r.profile_path = p.profile_path;
    r.log = simulatePrepared(p, ctx, live, &r.policy);
    SummaryOptions so = p.summary;
    so.workload = p.workload.get();
    r.summary = ctx.keep_log ? summarize(r.log, so) : summarizeReleasing(r.log, so);
    return r;
}

RunLog simulatePrepared(const PreparedRun& p, const RunContext& ctx, LiveBackend* live,
                        const PolicyConfig* policy_override,
                        std::vector<Simulator::LiveIteration>* live_iterations) {
    const PolicyConfig& policy = policy_override ? *policy_override : p.policy;
    if (!p.spec.fleet.disaggregate.empty()) {
        if (live) throw std::invalid_argument("a live run drives one engine: no --disaggregate");
        const auto [np, nd] = parseDisaggregate(p.spec.fleet.disaggregate);
        DisaggRun run;
        run.prefill.workload = p.workload.get();
        run.prefill.model = p.model.get();
        run.prefill.make_scheduler = [&policy] { return makeScheduler(policy); };
        run.prefill.limits = p.limits;
        routerFromName(p.spec.fleet.router, &run.prefill.fleet.router);
        run.prefill.fleet.cache_threshold = p.spec.fleet.cache_threshold;
        run.prefill.fleet.balance_abs = p.spec.fleet.balance_abs;
        run.prefill.fleet.balance_rel = p.spec.fleet.balance_rel;
        run.prefill.cancel = ctx.cancel;
        run.decode = run.prefill;
        run.prefill.fleet.replicas = np;
        run.decode.fleet.replicas = nd;
        if (p.decode) {
            run.decode.model = p.decode->model.get();
            run.decode.limits = p.decode->limits;
            run.decode_gpus_per_replica = p.decode->profile.gpu_count;
        }
        run.link = LinkModel::parse(p.spec.fleet.link);
        run.kv_bytes_per_token = p.profile.model.kvBytesPerToken();
        run.gpus_per_replica = p.profile.gpu_count;
        if (run.kv_bytes_per_token <= 0)
            throw InputError(p.profile_path, 0, "model",
                             "disaggregation moves KV: the profile's model gives no KV bytes "
                             "per token");
        RunLog log = simulateDisaggregated(run);
        if (p.spec.record.explain) // the window asks every run for its decisions
            log.warnings.push_back("disaggregated runs do not record their decisions yet: the "
                                   "Inspector and explain have none for this run");
        if (p.decode) { // the log's execution model and KV capacity are the prefill pool's
            log.exec_model =
                "prefill: " + log.exec_model + "; decode: " + p.decode->model->describe();
            const int g = p.decode->profile.gpu_count;
            log.decode_kv_capacity_tokens = p.decode->limits.kv_capacity_tokens;
            log.warnings.push_back("the decode pool runs on " + p.decode->profile.name + " (" +
                                   std::to_string(g) + (g == 1 ? " GPU" : " GPUs") +
                                   " a replica), the prefill pool on " + p.profile.name);
        }
        for (const auto& w : p.model_warnings) log.warnings.push_back(w);
        return log;
    }
    if (p.spec.fleet.replicas > 1) {
        if (live) throw std::invalid_argument("a live run drives one engine: --replicas must be 1");
        FleetRun run;
        run.workload = p.workload.get();
        run.model = p.model.get();
        run.make_scheduler = [&policy] { return makeScheduler(policy); };
        run.limits = p.limits;
        run.fleet.replicas = p.spec.fleet.replicas;
        routerFromName(p.spec.fleet.router, &run.fleet.router); // validated with the spec
        run.fleet.cache_threshold = p.spec.fleet.cache_threshold;
        run.fleet.balance_abs = p.spec.fleet.balance_abs;
        run.fleet.balance_rel = p.spec.fleet.balance_rel;
        run.explain = p.spec.record.explain;
        run.cancel = ctx.cancel;
        run.progress = ctx.progress;
        RunLog log = simulateFleet(run);
        for (const auto& w : p.model_warnings) log.warnings.push_back(w);
        return log;
    }
    auto sched = makeScheduler(policy);
    Simulator engine(*p.workload, *p.model, *sched, p.limits, live);
    engine.setCancelFlag(ctx.cancel);
    engine.setProgress(ctx.progress);
    engine.explain(p.spec.record.explain);
    engine.recordIterations(ctx.keep_log); // else only what the summary reads
    RunLog log = engine.run();
    if (live_iterations) *live_iterations = engine.liveIterations();
    for (const auto& w : p.model_warnings) log.warnings.push_back(w);
    return log;
}

RunResult runSpec(const RunSpec& spec, const RunContext& ctx) {
    return executeRun(prepareRun(spec, ctx), ctx);
}

std::vector<MetricDifference> differingMetrics(const Summary& stored, const Summary& rerun) {
    const auto before = summaryMetrics(stored), after = summaryMetrics(rerun);
    std::vector<MetricDifference> out;
    for (std::size_t i = 0; i < before.size() && i < after.size(); ++i) {
        const double x = before[i].second, y = after[i].second;
        if (std::isnan(x) && !std::isnan(y)) continue; // the stored run did not measure it
        const bool same = (std::isnan(x) && std::isnan(y)) || x == y ||
                          std::fabs(x - y) <= 1e-9 * std::max(std::fabs(x), std::fabs(y));
        if (!same) out.push_back({before[i].first, x, y});
    }
    return out;
}

std::vector<std::pair<std::string, double>> summaryMetrics(const Summary& s) {
    std::vector<std::pair<std::string, double>> m;
    for (const MetricDef& d : tabulatedMetrics(s.percentiles)) m.emplace_back(d.key, d.value(s));
    return m;
}

std::vector<std::string> summaryMetricNames(const std::vector<double>& percentiles) {
    Summary s;
    s.percentiles = percentiles;
    std::vector<std::string> names;
    for (const auto& [n, v] : summaryMetrics(s)) names.push_back(n);
    return names;
}

} // namespace kairos
