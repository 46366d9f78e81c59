// `kairos-cli bench`: simulation speed against the time to merely read the workload,
// both measured in the same run, plus the engine stepping one iteration at a time as a
// second baseline (what skipping ahead buys).
#include "checks.h"
#include "commands.h"
#include "exec/execution_model.h"
#include "export/runlog_jsonl.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "profiles.h"
#include "run/capacity.h"
#include "run/pipeline.h"
#include "run/sweep.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "store/store.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/memory.h"
#include "workload/readers.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace kairos::cli {
using app::kDefaultProfile;
using app::resolveProfile;

namespace {

template <class Fn> double medianMs(int repeat, Fn&& fn) {
    std::vector<double> t;
    for (int i = 0; i < repeat; ++i) {
        const auto a = std::chrono::steady_clock::now();
        fn();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                        .count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

} // namespace

namespace {
// Decision time per scheduler call at given queue lengths, and whole-trace simulation
// time of every policy against FCFS on the same workload, in the same run.
void benchPolicies(const std::string& trace, int repeat) {
    const DeviceProfile prof = resolveProfile(kDefaultProfile);
    const auto model = makeExecutionModel(prof);
    std::printf("decision time per schedule() call, median / p99 in microseconds (queue = requests "
                "waiting)\n");
    std::printf("%-18s %16s %16s %16s %16s\n", "policy", "queue 8", "queue 64", "queue 512",
                "queue 4096");
    const std::vector<std::size_t> queues{8, 64, 512, 4096};
    for (const auto& name : policyNames()) {
        std::printf("%-18s", name.c_str());
        for (std::size_t q : queues) {
            // q + 8 requests at time 0; 8 of them fit the KV cache at a time, the rest queue.
            GenerateSpec g;
            g.count = q + 8;
            g.prompt = LengthDist::parse("uniform:400,600");
            g.output = LengthDist::parse("uniform:50,150");
            const Workload w = generateWorkload(g);
            EngineLimits lim;
            lim.kv_capacity_tokens = 8 * 760;
            PolicyConfig pc;
            pc.name = name;
            auto sched = makeScheduler(pc);
            Simulator sim(w, *model, *sched, lim);
            sim.timeDecisions(true);
            sim.run();
            std::vector<double> t;
            for (const auto& [len, sec] : sim.decisionTimes())
                if (len + 8 >= q && len <= q + 8) t.push_back(sec);
            std::sort(t.begin(), t.end());
            if (t.empty())
                std::printf(" %16s", "-");
            else
                std::printf(" %7.2f / %6.2f", 1e6 * t[t.size() / 2],
                            1e6 * t[std::min(t.size() - 1, t.size() * 99 / 100)]);
        }
        std::printf("\n");
    }
    std::printf("TimelyLLM reports 580-2030 us per decision for 1-8 tasks.\n\n");

    const Workload w = readWorkload(trace);
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    std::printf("whole trace: %s (%zu requests), profile %s; median of %d runs\n", trace.c_str(),
                w.size(), prof.name.c_str(), repeat);
    double fcfs_ms = 0;
    // Through the run pipeline, on the workload and model read above (not owned here).
    WorkloadCache cache;
    const RunContext ctx = inMemory({}, cache, trace, w, *model);
    RunSpec spec;
    spec.workload.path = trace;
    spec.limits = RunSpec::LimitsPart::of(lim);
    for (const auto& name : policyNames()) {
        spec.policy.name = name;
        const PreparedRun p = prepareRun(spec, ctx);
        const double ms = medianMs(repeat, [&] { (void)simulatePrepared(p, ctx); });
        if (name == "fcfs") fcfs_ms = ms;
        std::printf("%-18s %10.1f ms  (%.2fx fcfs)\n", name.c_str(), ms, ms / fcfs_ms);
    }
}
// The cost of recording every decision with its reason (--explain): each policy the issue
// names simulated on the trace with and without it, alternately (so drift hits both), the
// medians' ratio, and the run log's size (JSONL) with and without the explain stream.
void benchExplain(const std::string& trace, int repeat) {
    const DeviceProfile prof = resolveProfile(kDefaultProfile);
    const auto model = makeExecutionModel(prof);
    const Workload w = readWorkload(trace);
    WorkloadCache cache;
    const RunContext ctx = inMemory({}, cache, trace, w, *model);
    RunSpec spec;
    spec.workload.path = trace;
    spec.limits.kv_capacity_tokens = prof.kvCapacityTokens();
    std::printf("recording reasons (--explain): %s (%zu requests), profile %s; median of %d runs "
                "each, alternated\n",
                trace.c_str(), w.size(), prof.name.c_str(), repeat);
    std::printf("%-22s %10s %10s %7s %10s %10s %10s %10s %12s %12s\n", "policy", "plain ms",
                "explain ms", "ratio", "calls", "reasons", "states", "log MB", "+explain MB",
                "kept/req");
    const std::pair<const char*, const char*> runs[] = {{"fcfs", "oracle"},
                                                        {"sprpt_lp", "trail"},
                                                        {"mcsf", "oracle"},
                                                        {"timebill", "oracle"},
                                                        {"timely", "oracle"}};
    for (const auto& [name, predictor] : runs) {
        spec.policy.name = name;
        spec.policy.predictor = predictor;
        PreparedRun p = prepareRun(spec, ctx);
        std::vector<double> plain, explained;
        RunLog with, without;
        for (int i = 0; i < repeat; ++i)
            for (bool on : {false, true}) {
                p.spec.record.explain = on;
                const auto a = std::chrono::steady_clock::now();
                RunLog log = simulatePrepared(p, ctx);
                const double ms =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                        .count();
                (on ? explained : plain).push_back(ms);
                (on ? with : without) = std::move(log);
            }
        std::sort(plain.begin(), plain.end());
        std::sort(explained.begin(), explained.end());
        auto bytes = [](const RunLog& log) {
            std::ostringstream o;
            writeRunLogJsonl(log, o);
            return double(o.tellp());
        };
        const double b0 = bytes(without), b1 = bytes(with);
        const auto& ex = with.explain;
        const std::string label = std::string(name) + " (" + predictor + ")";
        std::printf("%-22s %10.1f %10.1f %6.2fx %10zu %10zu %10zu %10.1f %12.1f %12.1f\n",
                    label.c_str(), plain[plain.size() / 2], explained[explained.size() / 2],
                    explained[explained.size() / 2] / plain[plain.size() / 2], ex.calls.size(),
                    ex.reasons.size(), ex.insights.size(), b0 / 1e6, (b1 - b0) / 1e6,
                    double(ex.reasons.size() + ex.insights.size()) / double(w.size()));
    }
}
// Sweeps and capacity, through the run pipeline: a 21-point C sweep x 5 seeds on the trace
// with 1 thread and with every core (runs per second and the parallel efficiency), the
// capacity of four policies, and sprpt_lp with Trail's refined predictor against the same
// run with exact lengths (the baseline in the same run), at 80 % and at 4x the load.
void benchSweeps(const std::string& trace) {
    using Clock = std::chrono::steady_clock;
    auto secs = [](Clock::time_point a) {
        return std::chrono::duration<double>(Clock::now() - a).count();
    };
    RunContext ctx = app::runContext();
    WorkloadCache cache;
    ctx.cache = &cache;
    sweep::Definition d;
    d.base.workload.path = trace;
    d.base.policy.name = "sprpt_lp";
    d.base.policy.predictor = "lognormal:0.5";
    d.axes.push_back(sweep::paramAxis("C=0:1:0.05", {"sprpt_lp"}));
    d.seeds = 5;
    d.metrics = sweep::Definition::defaultMetrics(d.base);
    const auto points = sweep::expand(d);
    (void)prepareRun(d.base, ctx); // the trace read once, outside the timings
    const std::size_t runs = points.size() * std::size_t(d.seeds);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf("sweep: %s, sprpt_lp, C = 0:1:0.05 (%zu points) x %d seeds = %zu runs\n",
                trace.c_str(), points.size(), d.seeds, runs);
    double one = 0;
    std::string table_one;
    for (unsigned threads : {1u, cores}) {
        sweep::RunOptions ro;
        ro.threads = static_cast<int>(threads);
        const auto t0 = Clock::now();
        const auto out = sweep::runJobs(d, points, ctx, ro);
        const double s = secs(t0);
        const std::string table = sweep::aggregate(d, points, out).csv();
        if (threads == 1) {
            one = s;
            table_one = table;
        }
        std::printf("  %u thread%s: %6.2f s, %6.1f runs/s, efficiency %5.1f %%, table %s\n",
                    threads, threads == 1 ? " " : "s", s, double(runs) / s,
                    100.0 * one / s / double(threads),
                    table == table_one ? "identical" : "DIFFERS");
        if (threads == cores && cores == 1) break;
    }
    RunSpec cap = d.base;
    cap.policy.predictor = "oracle";
    cap.summary.goodput = {"ttft:2000"};
    capacity::Options co;
    const auto t1 = Clock::now();
    const auto res = capacity::find(cap, baselinePolicies(), co, ctx);
    std::printf("capacity (TTFT <= 2 s, goodput >= 0.9 x offered, scaled trace): %.2f s for %zu "
                "policies\n",
                secs(t1), res.size());
    for (const auto& r : res)
        std::printf("  %-10s %.4g req/s (%d runs)\n", r.policy.c_str(), r.capacity, r.runs);
    std::printf("sprpt_lp, refined predictions (trail) against exact lengths (oracle), the "
                "baseline in the same run:\n");
    for (double scale : {0.11, 4 / 5.53}) {
        RunSpec o = d.base, t = d.base;
        o.policy.predictor = "oracle";
        t.policy.predictor = "trail";
        o.workload.rate_scale = t.workload.rate_scale = scale;
        const PreparedRun po = prepareRun(o, ctx), pt = prepareRun(t, ctx);
        const double oracle_ms = medianMs(3, [&] { (void)simulatePrepared(po, ctx); });
        // Trail's estimates are shared by every run with the same lengths, options and seed
        // (predict/trail_predictor.cpp): the first run fills them, the next ones read them.
        t.policy.seed = 1000 + static_cast<std::uint64_t>(scale * 100); // a fresh table
        const PreparedRun cold = prepareRun(t, ctx);
        auto a = Clock::now();
        (void)simulatePrepared(cold, ctx);
        const double first_ms = 1e3 * secs(a);
        const double warm_ms = medianMs(3, [&] { (void)simulatePrepared(cold, ctx); });
        std::printf("  %.2f req/s: oracle %6.1f ms; trail first run %6.1f ms (%.1fx), later runs "
                    "%6.1f ms (%.1fx)\n",
                    scale * 5.53, oracle_ms, first_ms, first_ms / oracle_ms, warm_ms,
                    warm_ms / oracle_ms);
        (void)pt;
    }
    // A whole sweep: C x 5 seeds on refined predictions against the same on exact lengths.
    for (const char* pred : {"oracle", "trail"}) {
        sweep::Definition s = d;
        s.base.policy.predictor = pred;
        s.base.policy.seed = 5000; // tables not filled above
        s.base.workload.rate_scale = 0.11;
        const auto pts = sweep::expand(s);
        const auto t0 = Clock::now();
        (void)sweep::runJobs(s, pts, ctx, {});
        std::printf("  sweep of C x 5 seeds at 0.61 req/s, %-6s: %.2f s\n", pred, secs(t0));
    }
}

#if KAIROS_HAVE_STORE
// The store: `runs` runs of one simulated `requests`-request workload written one by one
// (each its own transaction, as simulate --db writes), with the time to list all runs and
// the newest 20 as the database grows, and its size per run. Baseline in the same run:
// writing the same per-request rows as CSV (the export every run could write instead).
void benchStore(const std::string& db_path, std::size_t requests, int runs, double rate,
                bool replace) {
    // The benchmark starts from an empty database: an existing file is replaced only when
    // asked (a stored 200,000-request run was once lost to a mistyped --db).
    std::error_code ec;
    if (std::filesystem::exists(db_path, ec) && !replace)
        throw std::invalid_argument("--db " + db_path +
                                    " exists: bench --store-runs starts from an empty database; "
                                    "give another path, or --replace-db to delete this one");
    if (std::filesystem::exists(db_path, ec) && !std::filesystem::is_regular_file(db_path, ec))
        throw std::invalid_argument("--db " + db_path + " is not a regular file");
    // --replace-db deletes a Kairos database, nothing else (notes.json given by mistake).
    if (std::filesystem::exists(db_path, ec) && !store::Store::isKairosDatabase(db_path))
        throw std::invalid_argument("--db " + db_path +
                                    " is not a Kairos database: --replace-db deletes only one "
                                    "(nothing was deleted)");
    GenerateSpec g;
    g.count = requests;
    g.arrivals.rate = rate;
    const Workload w = generateWorkload(g);
    const DeviceProfile prof = resolveProfile(kDefaultProfile);
    const auto model = makeExecutionModel(prof);
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    auto sched = makeScheduler("fcfs");
    const RunLog log = simulate(w, *model, *sched, lim);
    SummaryOptions so;
    so.itl = false;
    const Summary sum = summarize(log, so);
    store::RunRecord rec;
    rec.workload = &w;
    rec.policy = log.policy;
    rec.exec_model = log.exec_model;
    rec.summary = &sum;
    rec.per_request = perRequest(log);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_path + suffix);
    const std::string csv_path = db_path + ".baseline.csv";
    const double csv_ms = medianMs(5, [&] {
        std::vector<store::RequestRow> rows;
        rows.reserve(rec.per_request.size());
        for (const auto& m : rec.per_request)
            rows.push_back({m.id, m.arrival, m.first_token, m.end, m.prompt_tokens, m.output_tokens,
                            m.preemptions, m.suspensions, m.finished, m.killed});
        const std::string text = store::requestsCsv(rows);
        writeFileAtomically(csv_path, [&](std::ostream& o) { o << text; });
    });
    const auto csv_bytes = std::filesystem::file_size(csv_path);
    std::filesystem::remove(csv_path);
    std::printf("store: %d runs of %zu requests into %s (synchronous=FULL, WAL)\n", runs, requests,
                db_path.c_str());
    std::printf("baseline: the same rows as CSV, written atomically: %.1f ms, %.2f MB per run\n",
                csv_ms, double(csv_bytes) / 1e6);
    std::printf("%8s %14s %14s %16s %16s %14s\n", "runs", "write ms/run", "(median of last)",
                "list all (ms)", "list 20 (ms)", "MB per run");
    store::Store st(db_path);
    std::vector<double> write_ms;
    int next_report = 1;
    for (int i = 1; i <= runs; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        st.putRun(rec);
        write_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        if (i == next_report || i == runs) {
            std::vector<double> last(write_ms.end() - std::min<std::ptrdiff_t>(10, i),
                                     write_ms.end());
            std::sort(last.begin(), last.end());
            const double all_ms = medianMs(5, [&] { (void)st.listRuns(); });
            const double top_ms = medianMs(5, [&] { (void)st.listRuns(20); });
            std::uintmax_t bytes = 0;
            for (const char* suffix : {"", "-wal"})
                if (std::filesystem::exists(db_path + suffix))
                    bytes += std::filesystem::file_size(db_path + suffix);
            std::printf("%8d %14.1f %14.1f %16.2f %16.3f %14.2f\n", i, write_ms.back(),
                        last[last.size() / 2], all_ms, top_ms, double(bytes) / 1e6 / i);
            std::fflush(stdout);
            next_report *= 10;
        }
    }
}
#endif

} // namespace

void addBench(CLI::App& app) {
    struct Args {
        std::string workload, profile = kDefaultProfile, json_out;
        std::size_t requests = 20000;
        int repeat = 5;
        double rate = 4.0;
        bool policies = false, replace_db = false, sweeps = false, explain = false;
        int store_runs = 0;
        std::string store_db = "kairos-bench.db";
    };
    auto a = std::make_shared<Args>();
    auto* c = app.add_subcommand("bench",
                                 "Measure simulation speed against the time to read the workload");
    c->add_option("--workload,-w", a->workload,
                  "Trace to use (default: a generated native workload)");
    c->add_option("--requests,-n", a->requests, "Requests in the generated workload")
        ->capture_default_str()
        ->check(whole(1, 100000000));
    c->add_option("--rate", a->rate, "Arrival rate of the generated workload (req/s)")
        ->capture_default_str()
        ->check(number(0, 1e9, true, true));
    c->add_option("--repeat", a->repeat, "Repetitions (the median is reported)")
        ->capture_default_str()
        ->check(whole(1, 10000));
    c->add_option("--profile", a->profile, "Device profile")->capture_default_str();
    c->add_option("--json", a->json_out, "Write the figures as JSON here");
    c->add_flag("--policies", a->policies,
                "Instead: decision time of every policy at queue lengths 8..4096, and whole-trace "
                "time against fcfs "
                "(on --workload, default the Azure conversation trace)");
    c->add_flag("--explain", a->explain,
                "Instead: the cost of recording every decision with its reason (fcfs, sprpt_lp "
                "with Trail, mcsf, timebill, timely with and without --explain: time ratio and "
                "run log size, on --workload, default the Azure conversation trace)");
    c->add_flag("--sweeps", a->sweeps,
                "Instead: sweep speed with 1 thread and every core, capacity of four policies, "
                "and sprpt_lp with refined predictions against exact lengths (on --workload, "
                "default the Azure conversation trace)");
    needsStore(c->add_option("--store-runs", a->store_runs,
                             "Instead: write this many runs of --requests requests into a "
                             "database (--db) and time writing and listing as it grows (the "
                             "issue's figure: 1000 x 20000)")
                   ->check(whole(1, 1000000)));
    c->add_option("--db", a->store_db,
                  "A new database for --store-runs (an existing file is refused)")
        ->capture_default_str();
    c->add_flag("--replace-db", a->replace_db, "With --store-runs: delete an existing --db first");
    c->callback([a] {
        if (a->repeat < 1) throw std::invalid_argument("--repeat must be >= 1");
#if KAIROS_HAVE_STORE
        if (a->store_runs > 0) {
            benchStore(a->store_db, a->requests, a->store_runs, a->rate, a->replace_db);
            return;
        }
#endif
        if (a->explain) {
            benchExplain(a->workload.empty() ? std::string(KAIROS_SHARED_DATA) +
                                                   "/AzureLLMInferenceTrace_conv_2023.csv"
                                             : a->workload,
                         a->repeat);
            return;
        }
        if (a->sweeps) {
            benchSweeps(a->workload.empty() ? std::string(KAIROS_SHARED_DATA) +
                                                  "/AzureLLMInferenceTrace_conv_2023.csv"
                                            : a->workload);
            return;
        }
        if (a->policies) {
            benchPolicies(a->workload.empty() ? std::string(KAIROS_SHARED_DATA) +
                                                    "/AzureLLMInferenceTrace_conv_2023.csv"
                                              : a->workload,
                          a->repeat);
            return;
        }
        std::string path = a->workload;
        std::string tmp;
        // A private folder (mkdtemp: 0700, a fresh name) for the generated workload, removed
        // however the command ends: a predictable name in a shared /tmp could be a planted
        // link, and an error left 13 MB files behind.
        struct PrivateDir {
            std::string path;
            ~PrivateDir() {
                std::error_code ec;
                if (!path.empty()) std::filesystem::remove_all(path, ec);
            }
        } dir;
        if (path.empty()) {
            // Generated, written, read back and simulated: about 1.2 KB a request at its
            // peak (20,000 requests: 23 MiB measured over the program's own).
            checkMemoryNeed(double(a->requests) * 1200,
                            "bench of " + std::to_string(a->requests) + " generated requests",
                            "fewer --requests");
            std::string templ =
                (std::filesystem::temp_directory_path() / "kairos-bench-XXXXXX").string();
            if (!::mkdtemp(templ.data()))
                throw InputError(templ, 0, "",
                                 std::string("cannot make a private folder for the generated "
                                             "workload: ") +
                                     std::strerror(errno));
            dir.path = templ;
            GenerateSpec g;
            g.count = a->requests;
            g.arrivals.rate = a->rate;
            g.arrivals.seed = 7;
            g.length_seed = 8;
            g.prompt = LengthDist::parse("lognormal:700,0.9,max=8192");
            g.output = LengthDist::parse("lognormal:150,1.0,max=2048");
            g.name = "bench";
            tmp = dir.path + "/bench.jsonl";
            writeKairosFile(generateWorkload(g), tmp);
            path = tmp;
        }
        Workload w;
        const double read_ms = medianMs(a->repeat, [&] { w = readWorkload(path); });
        const DeviceProfile prof = resolveProfile(a->profile);
        const auto model = makeExecutionModel(prof);
        EngineLimits lim;
        lim.kv_capacity_tokens = prof.kvCapacityTokens();
        RunLog log;
        // The run pipeline, on the workload and model above (not owned).
        WorkloadCache cache;
        const RunContext ctx = inMemory({}, cache, path, w, *model);
        RunSpec spec;
        spec.workload.path = path;
        spec.policy.name = "fcfs";
        auto prepared = [&](bool skip) {
            lim.skip_ahead = skip;
            spec.limits = RunSpec::LimitsPart::of(lim);
            return prepareRun(spec, ctx);
        };
        const PreparedRun skipping = prepared(true), stepping = prepared(false);
        auto run = [&](bool skip) { log = simulatePrepared(skip ? skipping : stepping, ctx); };
        const double sim_ms = medianMs(a->repeat, [&] { run(true); });
        const Summary s = summarize(log);
        const double metrics_ms = medianMs(a->repeat, [&] { (void)summarize(log); });
        const double step_ms = medianMs(std::max(1, a->repeat / 2), [&] { run(false); });

        const double gen = static_cast<double>(s.total_output_tokens);
        const double tok = static_cast<double>(s.total_input_tokens + s.total_output_tokens);
        std::printf("workload: %s (%zu requests, %lld prompt + %lld output tokens)\n", path.c_str(),
                    w.size(), w.totalPromptTokens(), w.totalOutputTokens());
        std::printf("profile: %s, KV capacity %lld tokens; policy fcfs; median of %d runs\n",
                    prof.name.c_str(), static_cast<long long>(lim.kv_capacity_tokens), a->repeat);
        std::printf("%-34s %10.2f ms\n", "read workload (baseline)", read_ms);
        std::printf("%-34s %10.2f ms  (%.2fx the read time)\n", "simulate fcfs, skipping ahead",
                    sim_ms, sim_ms / read_ms);
        std::printf("%-34s %10.2f ms  (%.2fx the read time, %.1fx slower than skipping)\n",
                    "simulate fcfs, one step per iter.", step_ms, step_ms / read_ms,
                    step_ms / sim_ms);
        std::printf("%-34s %10.2f ms\n", "summary metrics from the run log", metrics_ms);
        std::printf("%-34s %10.0f req/s\n", "simulated requests per second",
                    1e3 * static_cast<double>(w.size()) / sim_ms);
        std::printf("%-34s %10.3g tok/s (generated), %.3g tok/s (prompt+generated)\n",
                    "simulated tokens per second", 1e3 * gen / sim_ms, 1e3 * tok / sim_ms);
        std::printf("%-34s %10lld in %lld stretches\n", "iterations",
                    static_cast<long long>(s.iterations), static_cast<long long>(s.stretches));
        std::printf("%-34s %10lld of %lld (killed %lld, preemptions %lld)\n", "completed",
                    static_cast<long long>(s.completed), static_cast<long long>(s.num_requests),
                    static_cast<long long>(s.killed), static_cast<long long>(s.preemptions));
        if (!a->json_out.empty()) {
            nlohmann::json j = {{"workload", path},
                                {"requests", w.size()},
                                {"read_ms", read_ms},
                                {"simulate_ms", sim_ms},
                                {"simulate_step_ms", step_ms},
                                {"metrics_ms", metrics_ms},
                                {"ratio_to_read", sim_ms / read_ms},
                                {"generated_tokens_per_s", 1e3 * gen / sim_ms},
                                {"iterations", s.iterations},
                                {"stretches", s.stretches}};
            writeFileAtomically(a->json_out, [&](std::ostream& out) { out << j.dump(2) << "\n"; });
        }
    });
}

} // namespace kairos::cli
