// kairos-cli sweep and capacity: curves and capacities from many runs of one pipeline.
#include "run/sweep.h"

#include "checks.h"
#include "commands.h"
#include "metrics/metric_table.h"
#include "model/router.h"
#include "profiles.h"
#include "run/capacity.h"
#include "sched/registry.h"
#include "store/store.h"
#include "util/atomic_file.h"
#include "util/hash.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/parallel.h"
#include "util/text.h"
#include "workload/readers.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace kairos::cli {

Distribution& distribution() {
    static Distribution d;
    return d;
}

SweepReportWriter& sweepReportWriter() {
    static SweepReportWriter w;
    return w;
}

namespace {

// Ctrl-C: the first sets the flag (finished runs are kept, running ones stop), the second
// ends the process as usual.
std::atomic<bool> g_interrupted{false};
extern "C" void onInterrupt(int) {
    g_interrupted = true;
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

struct InterruptScope {
    InterruptScope() {
        g_interrupted = false;
        std::signal(SIGINT, onInterrupt);
        std::signal(SIGTERM, onInterrupt);
    }
    ~InterruptScope() {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
    }
};

// "a,b,,c" -> a, b, c (util/text.h's split, empty items dropped).
std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string_view> parts;
    text::split(s, ',', parts);
    std::vector<std::string> out;
    for (auto p : parts)
        if (!p.empty()) out.emplace_back(p);
    return out;
}

// --policy A,B,C: the names, each a registered policy (else an error naming --policy).
std::vector<std::string> policiesArg(const std::string& text) {
    const auto policies = splitList(text);
    if (policies.empty()) throw std::invalid_argument("--policy: no policy named");
    for (const auto& p : policies) try {
            policySpec(p);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("--policy: ") + e.what());
        }
    return policies;
}

// Journal or MPI lines (sweep::encode) into `out`; lines that are not one (a torn last line
// of an interrupted journal) or name a job past `total` are skipped.
// Returns how many lines were skipped; a line must carry every metric (`metrics` of them).
std::size_t decodeLines(std::istream& in, std::size_t total, std::size_t metrics,
                        std::map<std::size_t, sweep::Outcome>& out) {
    std::string line;
    std::size_t skipped = 0;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::size_t job;
        sweep::Outcome o;
        if (sweep::decode(line, &job, &o) && job < total && o.metrics.size() == metrics)
            out[job] = std::move(o);
        else
            ++skipped;
    }
    return skipped;
}

// A progress bar on a terminal; nothing otherwise.
class Progress {
public:
    Progress(bool on, std::string what) : on_(on && ::isatty(2)), what_(std::move(what)) {}
    void update(std::size_t done, std::size_t total) {
        if (!on_) return;
        const double s = std::chrono::duration<double>(Clock::now() - t0_).count();
        const int width = 30;
        const int fill = total ? int(double(width) * double(done) / double(total)) : width;
        const double eta = done ? s / double(done) * double(total - done) : 0;
        std::fprintf(stderr, "\r[%s%s] %zu/%zu %s  %.1f s  ETA %.0f s ",
                     std::string(std::size_t(fill), '#').c_str(),
                     std::string(std::size_t(width - fill), ' ').c_str(), done, total,
                     what_.c_str(), s, eta);
        std::fflush(stderr);
    }
    void end() {
        if (on_) std::fputs("\r\033[K", stderr);
    }

private:
    using Clock = std::chrono::steady_clock;
    bool on_;
    std::string what_;
    Clock::time_point t0_ = Clock::now();
};

struct SweepArgs {
    SimulateArgs base;
    std::string policies = "fcfs";
    std::vector<std::string> params;
    std::string rate, rate_scale, kv, profiles, seats, replicas, routers, budgets;
    int seeds = 1;
    std::string metrics;
    std::string csv, json, name, html;
    int threads = 0;
    bool resume = false, quiet = false;
};

// FNV-1a of a file's bytes, as hex: the journal records what its runs were run on, so a
// workload or profile changed under the same path is not mixed with the old one's rows.
std::string contentHash(const std::string& path, const InputLimits& lim) {
    return fnv1a64Hex(readInputFile(path, lim));
}

// What to name a sweep's journal: beside its first output when that is a regular file (or
// not there yet); otherwise (no output, or /dev/stdout, /dev/null, a pipe) in the user's
// cache folder under the definition's hash, so --resume finds it again. "" when there is no
// such folder (HOME unset): the sweep then keeps no journal.
std::string journalPath(const SweepArgs& a, const std::string& header) {
    for (const std::string* out : {&a.csv, &a.json, &a.html})
        if (!out->empty()) {
            if (besideIsFine(*out)) return *out + ".partial";
            break;
        }
    const std::string dir = userStateDir();
    if (dir.empty()) return "";
    return dir + "/sweep-" + fnv1a64Hex(header) + ".partial";
}

void runSweep(const SweepArgs& a) {
    Distribution& dist = distribution();
    const bool root = dist.rank == 0;
    sweep::Definition d;
    SimulateArgs base = a.base;
    const auto policies = policiesArg(a.policies);
    base.policy = policies.front();
    d.base = specFromArgs(base);
    // A spec file's own policy stands unless --policy names another.
    if (base.spec_file.empty() || a.policies != "fcfs") d.base.policy.name = policies.front();
    if (policies.size() > 1) {
        sweep::Axis ax;
        ax.kind = sweep::AxisKind::Policy;
        ax.name = "policy";
        ax.values = policies;
        ax.arg = "--policy " + a.policies;
        d.axes.push_back(ax);
    }
    const std::vector<std::string> axis_policies =
        policies.size() > 1 ? policies : std::vector<std::string>{d.base.policy.name};
    for (const auto& p : a.params) d.axes.push_back(sweep::paramAxis(p, axis_policies));
    auto numeric = [&](const std::string& text, sweep::AxisKind kind, const char* name,
                       const char* opt, double lo, double hi, bool whole_only) {
        if (text.empty()) return;
        sweep::Axis ax;
        ax.kind = kind;
        ax.name = name;
        ax.arg = std::string(opt) + " " + text;
        for (double v : sweep::parseRange(text, ax.arg)) {
            if (!(v >= lo && v <= hi) || (whole_only && v != std::floor(v)))
                throw std::invalid_argument(ax.arg + ": " + sweep::formatValue(v) + " is outside " +
                                            (whole_only ? "whole numbers " : "") + "[" +
                                            sweep::formatValue(lo) + ", " + sweep::formatValue(hi) +
                                            "]");
            if (v <= 0 && kind != sweep::AxisKind::KvCapacity)
                throw std::invalid_argument(ax.arg + ": values must be > 0");
            ax.values.push_back(sweep::formatValue(v));
        }
        d.axes.push_back(ax);
    };
    numeric(a.rate, sweep::AxisKind::Rate, "rate", "--rate", 1e-9, domains::kRate.hi, false);
    numeric(a.rate_scale, sweep::AxisKind::RateScale, "rate_scale", "--rate-scale", 1e-9,
            domains::kRateScale.hi, false);
    numeric(a.kv, sweep::AxisKind::KvCapacity, "kv_capacity", "--kv-capacity", 1, 1e15, true);
    numeric(a.seats, sweep::AxisKind::MaxNumSeqs, "max_num_seqs", "--max-num-seqs", 1, 1 << 24,
            true);
    numeric(a.replicas, sweep::AxisKind::Replicas, "replicas", "--replicas", 1, kMaxReplicas, true);
    numeric(a.budgets, sweep::AxisKind::Budget, "budget", "--budgets", 1e-9, domains::kBudget.hi,
            false);
    if (!a.routers.empty()) {
        sweep::Axis ax;
        ax.kind = sweep::AxisKind::Router;
        ax.name = "router";
        ax.arg = "--router " + a.routers;
        for (const auto& r : splitList(a.routers)) {
            Router x{};
            if (!routerFromName(r, &x))
                throw std::invalid_argument("--router: unknown router '" + r + "' (" +
                                            routerNames() + ")");
            ax.values.push_back(r);
        }
        if (ax.values.empty()) throw std::invalid_argument("--router: no router named");
        d.axes.push_back(ax);
    }
    if (!a.profiles.empty()) {
        sweep::Axis ax;
        ax.kind = sweep::AxisKind::Profile;
        ax.name = "profile";
        ax.arg = "--profile " + a.profiles;
        for (const auto& p : splitList(a.profiles)) {
            std::string found;
            app::resolveProfile(p, &found); // an unknown profile is an error now, not per run
            ax.values.push_back(p);
        }
        if (ax.values.empty()) throw std::invalid_argument("--profile: no profile named");
        d.axes.push_back(ax);
    }
    if (!a.rate.empty() && !a.rate_scale.empty())
        throw std::invalid_argument("--rate generates arrivals, --rate-scale scales the trace's: "
                                    "give one of the two");
    d.seeds = a.seeds;
    const auto all = summaryMetricNames(d.base.summary.percentiles);
    if (a.metrics.empty())
        d.metrics = sweep::Definition::defaultMetrics(d.base);
    else if (a.metrics == "all")
        d.metrics = all;
    else if (splitList(a.metrics).empty())
        throw std::invalid_argument("--metrics: no metric named (a list, or all)");
    else
        for (const auto& given : splitList(a.metrics)) {
            // An earlier release's name ("ttft_mean_ms") is today's ("mean_ttft_ms").
            const std::string m = canonicalMetricKey(given);
            if (std::find(all.begin(), all.end(), m) == all.end()) {
                std::string list;
                for (const auto& n : all) list += (list.empty() ? "" : ", ") + n;
                throw std::invalid_argument("--metrics: unknown metric '" + given +
                                            "' (known: " + list + ")");
            }
            d.metrics.push_back(m);
        }
    if (!a.html.empty()) needReportWriters("--html");
    const auto points = sweep::expand(d);
    const std::size_t total = points.size() * std::size_t(d.seeds);
    // Every point's spec is checked before anything runs (a bad value fails now).
    for (const auto& p : points) p.spec.validate("the sweep");
    const std::string definition = d.toJson().dump();

    // Resume: the journal's first line is the definition with the content hashes of its
    // workload (and profile file); then a line per finished job, each with its checksum.
    nlohmann::json head = nlohmann::json::parse(definition);
    head["workload_content"] = contentHash(d.base.workload.path, limits::kWorkload);
    {
        std::error_code ec;
        if (std::filesystem::is_regular_file(d.base.exec.profile, ec))
            head["profile_content"] = contentHash(d.base.exec.profile, limits::kSettings);
    }
    const std::string header = head.dump();
    std::map<std::size_t, sweep::Outcome> done;
    const std::string journal = journalPath(a, header);
    const std::size_t metric_count = summaryMetricNames(d.base.summary.percentiles).size();
    if (a.resume) {
        if (dist.size > 1)
            throw std::invalid_argument("--resume runs on one machine (without mpirun)");
        std::error_code ec;
        if (journal.empty() || !std::filesystem::exists(journal, ec))
            throw std::invalid_argument("--resume: no journal" +
                                        (journal.empty() ? std::string() : " " + journal) +
                                        " (nothing to resume: run without --resume)");
        std::istringstream in(readInputFile(journal, limits::kJournal));
        std::string line;
        std::getline(in, line);
        if (line != header)
            throw InputError(journal, 1, "",
                             "the journal is of another sweep (its axes, seeds, metrics or base "
                             "spec differ, or its workload or profile file changed since): run "
                             "without --resume to start over");
        const std::size_t skipped = decodeLines(in, total, metric_count, done);
        if (!a.quiet) {
            std::fprintf(stderr, "kairos-cli: resuming: %zu of %zu runs already done\n",
                         done.size(), total);
            if (skipped)
                std::fprintf(stderr,
                             "kairos-cli: %zu damaged journal line%s (cut short by the "
                             "interruption) will be run again\n",
                             skipped, skipped == 1 ? "" : "s");
        }
    }
    std::unique_ptr<AppendFile> jout;
    if (dist.size == 1 && !journal.empty()) {
        // The journal is named after the first output: it may not be one of the inputs (a
        // workload called OUT.partial was truncated before it was read).
        refuseInputsOfThisProcess(journal, a.resume ? journal : "");
        jout = std::make_unique<AppendFile>(journal, !a.resume);
        if (!a.resume) jout->line(header);
    }

    InterruptScope interrupts;
    Progress bar(!a.quiet && root, "runs");
    sweep::RunOptions ro;
    ro.threads = a.threads;
    if (ro.threads == 0 && dist.size > 1)
        // Ranks on one machine share its cores (Open MPI says how many ranks are local).
        if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
            ro.threads = std::max(1, int(std::thread::hardware_concurrency()) /
                                         std::max(1, std::atoi(local)));
    ro.rank = dist.rank;
    ro.ranks = dist.size;
    ro.cancel = &g_interrupted;
    const std::size_t already = done.size();
    ro.progress = [&](std::size_t n, std::size_t) { bar.update(already + n, total); };
    ro.finished = [&](std::size_t job, const sweep::Outcome& o) {
        if (jout) jout->line(sweep::encode(job, o));
    };
    if (!a.quiet && root)
        ro.memory = [](const MemoryEstimate& m) {
            std::fprintf(stderr, "memory: %s estimated\n", m.text().c_str());
        };
    const auto t0 = std::chrono::steady_clock::now();
    std::map<std::size_t, sweep::Outcome> mine;
    try {
        mine = sweep::runJobs(d, points, app::runContext(), ro, done);
    } catch (const std::exception& e) {
        if (dist.size > 1 && dist.abort) { // the other ranks would wait in the gather
            std::fprintf(stderr, "kairos-cli: error (rank %d of %d): %s\n", dist.rank, dist.size,
                         e.what());
            dist.abort(2);
        }
        throw;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    bar.end();
    if (g_interrupted) {
        const std::size_t have = done.size() + mine.size();
        std::fprintf(stderr,
                     "kairos-cli: interrupted: %zu of %zu runs finished and kept in %s; resume "
                     "with the same command and --resume\n",
                     have, total, journal.empty() ? "no journal (HOME unset)" : journal.c_str());
        throw ExitCode{130};
    }
    // Gather to rank 0 (MPI), as text lines: exact and independent of the rank count.
    if (dist.size > 1) {
        std::string text;
        for (const auto& [job, o] : mine) text += sweep::encode(job, o) + "\n";
        const auto parts = dist.gather(text);
        if (!root) return;
        mine.clear();
        for (const auto& part : parts) {
            std::istringstream in(part);
            decodeLines(in, total, metric_count, mine);
        }
    }
    for (auto& [job, o] : done) mine.emplace(job, std::move(o));
    const sweep::Table table = sweep::aggregate(d, points, mine);
    if (!a.quiet) {
        std::fputs(table.text().c_str(), stdout);
        std::printf("%zu points x %d seeds = %zu runs in %.2f s (%.1f runs/s, %d rank%s)\n",
                    points.size(), d.seeds, total, secs, double(total - already) / secs, dist.size,
                    dist.size == 1 ? "" : "s");
    }
    OutputBatch outputs;
    if (!a.csv.empty()) outputs.add(a.csv, [&](std::ostream& o) { o << table.csv(); });
    if (!a.html.empty()) {
        const std::string page = sweepReportWriter()(d, table);
        outputs.add(a.html, [&](std::ostream& o) { o << page; });
    }
    if (!a.json.empty())
        outputs.add(a.json, [&](std::ostream& o) {
            nlohmann::json j = table.toJson();
            j["definition"] = d.toJson();
            o << j.dump(2) << "\n";
        });
#if KAIROS_HAVE_STORE
    if (!base.db.empty() || base.store) {
        // One sweep with its runs (their summaries and specs; per-request rows are left out:
        // a sweep's runs are many, and any one can be re-run from its spec).
        store::Store db(base.db.empty() ? store::Store::defaultPath() : base.db);
        const auto names = summaryMetricNames(d.base.summary.percentiles);
        std::vector<store::SweepRun> runs;
        for (const auto& [job, o] : mine) {
            store::SweepRun r;
            r.job = std::int64_t(job);
            r.seed = std::int64_t(job % std::size_t(d.seeds));
            nlohmann::json point = nlohmann::json::object();
            const auto& p = points[job / std::size_t(d.seeds)];
            for (std::size_t k = 0; k < d.axes.size(); ++k) point[d.axes[k].name] = p.values[k];
            r.point_json = point.dump();
            r.spec_json = sweep::jobSpec(d, points, job).toJson().dump();
            r.status = o.status;
            nlohmann::json m = nlohmann::json::object();
            for (std::size_t k = 0; k < names.size() && k < o.metrics.size(); ++k)
                m[names[k]] = std::isfinite(o.metrics[k]) ? nlohmann::json(o.metrics[k])
                                                          : nlohmann::json(nullptr);
            r.metrics_json = m.dump();
            runs.push_back(std::move(r));
        }
        const std::int64_t id =
            db.putSweep(a.name.empty() ? ("sweep of " + d.base.workload.path) : a.name, definition,
                        table.toJson().dump(), runs);
        if (!a.quiet)
            std::printf("stored as sweep %lld in %s\n", static_cast<long long>(id),
                        db.path().c_str());
    }
#endif
    outputs.commit();
    if (jout) {
        jout.reset();
        std::error_code ec;
        std::filesystem::remove(journal, ec);
    }
}

// A capacity answer's JSON document (--json), written atomically with the run's outputs.
void writeCapacityJson(const std::string& path, const nlohmann::json& doc) {
    OutputBatch outputs;
    if (!path.empty()) outputs.add(path, [&](std::ostream& o) { o << doc.dump(2) << "\n"; });
    outputs.commit();
}

// What both capacity questions start from: the spec (the first policy's), the policies and
// the SLOs as written.
struct CapacitySetup {
    RunSpec spec;
    std::vector<std::string> policies;
    std::string slos;
};
CapacitySetup capacitySetup(const SweepArgs& a) {
    CapacitySetup c;
    SimulateArgs base = a.base;
    c.policies = policiesArg(a.policies);
    base.policy = c.policies.front();
    c.spec = specFromArgs(base);
    if (c.spec.summary.goodput.empty())
        throw std::invalid_argument("--goodput: capacity needs SLOs (e.g. --goodput ttft:2000 "
                                    "tpot:100)");
    for (const auto& g : c.spec.summary.goodput) c.slos += (c.slos.empty() ? "" : " ") + g;
    return c;
}

// Runs a search with Ctrl-C as its cancel flag (exit 130 when pressed): its result and the
// seconds it took.
template <class Search> auto interruptibleSearch(capacity::Options& opt, Search&& search) {
    InterruptScope interrupts;
    opt.cancel = &g_interrupted;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        auto res = search();
        return std::make_pair(
            std::move(res),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    } catch (const SimulationCancelled&) {
        std::fprintf(stderr, "kairos-cli: interrupted\n");
        throw ExitCode{130};
    }
}

void runCapacity(const SweepArgs& a, double target, bool poisson, double start, double tol) {
    const CapacitySetup cs = capacitySetup(a);
    const RunSpec& spec = cs.spec;
    const std::string& slos = cs.slos;
    capacity::Options opt;
    opt.target = target;
    opt.generate = poisson;
    opt.start = start;
    opt.rel_tol = tol;
    opt.seeds = a.seeds;
    opt.threads = a.threads;
    if (!a.quiet)
        opt.memory = [](const MemoryEstimate& m) {
            std::fprintf(stderr, "memory: %s estimated\n", m.text().c_str());
        };
    const auto [res, secs] = interruptibleSearch(
        opt, [&] { return capacity::find(spec, cs.policies, opt, app::runContext()); });
    if (!a.quiet) {
        std::printf("capacity: the highest %s rate with SLO attainment >= %.3g (the share of "
                    "requests within SLOs %s), %d seed%s, bisection to %.3g %%\n",
                    poisson ? "Poisson" : "scaled-trace", target, slos.c_str(), a.seeds,
                    a.seeds == 1 ? "" : "s", 100 * tol);
        if (!poisson && !res.empty())
            std::printf("the trace's own rate: %.4g req/s\n", res.front().base_rate);
        std::printf("%-18s %12s %12s %20s %6s  %s\n", "policy", "req/s", "95% +-", "seed brackets",
                    "runs", "note");
        for (const auto& r : res) {
            std::string br;
            for (const auto& s : r.seeds) {
                char b[64];
                std::snprintf(b, sizeof b, "%s[%.4g, %.4g)", br.empty() ? "" : " ", s.capacity,
                              s.failed_at);
                br += b;
                if (br.size() > 60) {
                    br += " ...";
                    break;
                }
            }
            std::printf("%-18s %12.4g %12.3g %20s %6d  %s\n", r.policy.c_str(), r.capacity, r.half,
                        br.c_str(), r.runs, r.note.c_str());
        }
        std::printf("%zu policies in %.2f s\n", res.size(), secs);
    }
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : res) {
        nlohmann::json seeds = nlohmann::json::array();
        for (const auto& s : r.seeds)
            seeds.push_back({{"capacity", s.capacity},
                             {"failed_at", std::isfinite(s.failed_at) ? nlohmann::json(s.failed_at)
                                                                      : nlohmann::json(nullptr)},
                             {"runs", s.runs}});
        j.push_back({{"policy", r.policy},
                     {"capacity", r.capacity},
                     {"lo", r.capacity - r.half},
                     {"hi", r.capacity + r.half},
                     {"trace_rate", r.base_rate},
                     {"seeds", seeds},
                     {"runs", r.runs},
                     {"note", r.note}});
    }
    writeCapacityJson(a.json, {{"target", target},
                               {"criterion", "slo_attainment"},
                               {"arrivals", poisson ? "poisson" : "scaled trace"},
                               {"goodput", spec.summary.goodput},
                               {"base", spec.toJson()},
                               {"policies", j}});
}

} // namespace

void addSweep(CLI::App& app) {
    auto a = std::make_shared<SweepArgs>();
    auto* c = app.add_subcommand(
        "sweep", "Run every combination of policies, parameters, rates, KV capacities and "
                 "profiles over seeds; a table of each metric's mean and 95 % interval (CSV, "
                 "JSON, the database). Ctrl-C keeps finished runs (--resume)");
    addSharedRunOptions(c, a->base);
    c->add_option("--policy,-p", a->policies, "Policies, comma-separated: " + policyNameList())
        ->capture_default_str();
    c->add_option("--param", a->params,
                  "A parameter axis NAME=LO:HI:STEP, NAME=LO:HI:xFACTOR, NAME=A,B,C or a bare "
                  "NAME (its registered range, 21 points; kairos-cli policies lists them); "
                  "repeatable");
    c->add_option("--rate", a->rate, "Generated Poisson/gamma arrival rates (req/s): a range");
    c->add_option("--rate-scale", a->rate_scale,
                  "Factors on the trace's own arrival rate: a range");
    c->add_option("--kv-capacity", a->kv, "KV capacities (tokens): a range");
    c->add_option("--max-num-seqs", a->seats, "Running requests at most: a range");
    c->add_option("--replicas", a->replicas,
                  "Replicas behind the router (each its own engine): a range");
    c->add_option("--router", a->routers,
                  "Routers, comma-separated: round_robin, least_outstanding, least_kv, "
                  "prefix_aware, prefix_oracle (need --prefix-caching on)");
    c->add_option("--profile", a->profiles, "Device profiles, comma-separated");
    c->add_option("--budgets", a->budgets,
                  "Time budgets (s) of every request without one (TimeBill's Kill / Skip-next): "
                  "a range; --budget sets one for every point");
    c->add_option("--seeds", a->seeds,
                  "Seeds per point (seed k adds k to --seed and --policy-seed)")
        ->capture_default_str()
        ->check(whole(1, 100000));
    c->add_option("--metrics", a->metrics,
                  "Metrics in the table, comma-separated, or 'all' (default: completed, "
                  "throughput, goodput fraction, TTFT/TPOT/E2EL means and p99s, KV peak, "
                  "preemptions)");
    c->add_option("--csv", a->csv, "Write the table as CSV here");
    c->add_option("--json", a->json, "Write the table and the sweep's definition as JSON here");
    c->add_option("--html", a->html,
                  "Write a report here: the settings, a chart per metric (mean and 95 % band "
                  "against the last axis, a curve per combination of the others) and the table");
    needsStore(c->add_option("--db", a->base.db, "Store the sweep in this Kairos database"));
    needsStore(c->add_flag("--store", a->base.store, "Store the sweep in the default database"));
    c->add_option("--name", a->name, "With --db/--store: the sweep's name");
    c->add_option("--threads,-j", a->threads, "Threads (default: every core)")
        ->check(whole(1, kMaxThreads));
    c->add_flag("--resume", a->resume,
                "Continue an interrupted sweep from its journal (OUTPUT.partial)");
    c->add_flag("--quiet,-q", a->quiet, "Print nothing");
    c->callback([a] { runWithCliFields(a->base, [&] { runSweep(*a); }); });
}
// capacity --fewest-replicas: at the workload's own rate, the fewest replicas per policy.
void runFewestReplicas(const SweepArgs& a, double target, int max_replicas) {
    const CapacitySetup cs = capacitySetup(a);
    const RunSpec& spec = cs.spec;
    const std::string& slos = cs.slos;
    capacity::Options opt;
    opt.target = target;
    opt.seeds = a.seeds;
    opt.threads = a.threads;
    // The estimate is of the largest fleet the search may try (checked before it starts);
    // a search that stops short of --max-replicas needs less.
    if (!a.quiet)
        opt.memory = [max_replicas](const MemoryEstimate& m) {
            std::fprintf(stderr,
                         "memory: %s estimated, should the search reach --max-replicas %d\n",
                         m.text().c_str(), max_replicas);
        };
    const auto [res, secs] = interruptibleSearch(opt, [&] {
        return capacity::fewestReplicas(spec, cs.policies, opt, app::runContext(), max_replicas);
    });
    // Pools on different hardware (--decode-profile): each split's GPUs, since the search
    // minimises replicas, not GPUs.
    int prefill_gpus = 0, decode_gpus = 0;
    if (!spec.fleet.decode_profile.empty()) {
        const PreparedRun p = prepareRun(spec, app::runContext());
        prefill_gpus = p.profile.gpu_count;
        decode_gpus = p.decode ? p.decode->profile.gpu_count : prefill_gpus;
    }
    const auto gpusOf = [&](int n, int p) { return p * prefill_gpus + (n - p) * decode_gpus; };
    if (!a.quiet) {
        if (!spec.fleet.disaggregate.empty())
            std::printf("disaggregated: the fewest prefill + decode replicas, each total at "
                        "its best split P:D (link %s)\n",
                        spec.fleet.link.c_str());
        if (prefill_gpus > 0)
            std::printf("pools on different hardware: %d GPUs a prefill replica, %d a decode "
                        "replica (%s); the search minimises replicas, not GPUs: each split's "
                        "GPUs in brackets\n",
                        prefill_gpus, decode_gpus, spec.fleet.decode_profile.c_str());
        std::printf("capacity: the fewest replicas (router %s) with SLO attainment >= %.3g (the "
                    "share of requests within SLOs %s) at the workload's own rate, %d seed%s\n",
                    spec.fleet.router.c_str(), target, slos.c_str(), a.seeds,
                    a.seeds == 1 ? "" : "s");
        if (!res.empty()) std::printf("offered rate: %.4g req/s\n", res.front().rate);
        std::printf("%-18s %9s %24s %6s  %s\n", "policy", "replicas", "per seed", "runs", "note");
        for (const auto& r : res) {
            std::string per;
            for (std::size_t k = 0; k < r.seeds.size(); ++k) {
                const int n = r.seeds[k];
                const int p = k < r.prefill.size() ? r.prefill[k] : 0;
                per += (per.empty() ? "" : " ") +
                       (n <= 0  ? std::string("-")
                        : p > 0 ? std::to_string(p) + ":" + std::to_string(n - p) +
                                      (prefill_gpus > 0 ? " [" + std::to_string(gpusOf(n, p)) + "]"
                                                        : std::string())
                                : std::to_string(n));
                if (per.size() > 40) {
                    per += " ...";
                    break;
                }
            }
            std::printf("%-18s %9s %24s %6d  %s\n", r.policy.c_str(),
                        r.replicas > 0 ? std::to_string(r.replicas).c_str() : "-", per.c_str(),
                        r.runs, r.note.c_str());
        }
        std::printf("%zu policies in %.2f s\n", res.size(), secs);
    }
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : res) {
        nlohmann::json gpus = nullptr; // per seed, with pools on different hardware
        if (prefill_gpus > 0) {
            gpus = nlohmann::json::array();
            for (std::size_t k = 0; k < r.seeds.size(); ++k)
                gpus.push_back(r.seeds[k] > 0 && k < r.prefill.size()
                                   ? nlohmann::json(gpusOf(r.seeds[k], r.prefill[k]))
                                   : nlohmann::json(nullptr));
        }
        j.push_back(
            {{"policy", r.policy},
             {"replicas", r.replicas > 0 ? nlohmann::json(r.replicas) : nlohmann::json(nullptr)},
             {"seeds", r.seeds},
             {"slo_attainment", r.met_at},
             {"prefill_replicas", r.prefill},
             {"rate", r.rate},
             {"runs", r.runs},
             {"gpus", gpus},
             {"note", r.note}});
    }
    writeCapacityJson(a.json, {{"target", target},
                               {"question", "fewest replicas"},
                               {"criterion", "slo_attainment"},
                               {"router", spec.fleet.router},
                               {"max_replicas", max_replicas},
                               {"goodput", spec.summary.goodput},
                               {"base", spec.toJson()},
                               {"policies", j}});
}

void addCapacity(CLI::App& app) {
    auto a = std::make_shared<SweepArgs>();
    auto target = std::make_shared<double>(0.9);
    auto arrivals = std::make_shared<std::string>("trace");
    auto start = std::make_shared<double>(0);
    auto tol = std::make_shared<double>(0.02);
    auto fewest = std::make_shared<bool>(false);
    auto max_replicas = std::make_shared<int>(1024);
    auto* c = app.add_subcommand(
        "capacity", "Per policy, the highest arrival rate at which the SLO attainment (the "
                    "share of requests meeting every SLO) stays at or above a target "
                    "(bracketing and bisection, per seed; mean and 95 % interval)");
    addSharedRunOptions(c, a->base);
    addFleetOptions(c, a->base);
    c->add_option("--policy,-p", a->policies, "Policies, comma-separated: " + policyNameList())
        ->capture_default_str();
    c->add_option("--target", *target,
                  "SLO attainment to keep, (0, 1]: the share of requests meeting every SLO")
        ->capture_default_str()
        ->check(number(0, 1, true));
    c->add_option("--arrivals", *arrivals,
                  "trace: scale the trace's own arrivals; poisson: generate at the rate (gamma "
                  "with --burstiness)")
        ->capture_default_str()
        ->check(CLI::IsMember({"trace", "poisson"}));
    c->add_option("--start", *start, "First rate tried, req/s (default: the trace's own)")
        ->check(number(1e-3, domains::kRate.hi));
    c->add_option("--tolerance", *tol, "Bisection stops when HI / LO - 1 is below this")
        ->capture_default_str()
        ->check(number(capacity::kMinTolerance, capacity::kMaxTolerance));
    c->add_option("--seeds", a->seeds, "Seeds (each searched separately)")
        ->capture_default_str()
        ->check(whole(1, 10000));
    c->add_option("--kv-capacity", a->base.kv_capacity, "KV cache capacity in tokens")
        ->check(whole(1, 1000000000000000LL));
    c->add_option("--max-num-seqs", a->base.max_num_seqs, "Running requests at most")
        ->capture_default_str()
        ->check(whole(1, 1 << 24));
    c->add_option("--profile", a->base.profile, "Device profile")->capture_default_str();
    c->add_option("--param", a->base.params, "Parameter of the first policy NAME=VALUE");
    c->add_option("--json", a->json, "Write the capacities as JSON here");
    c->add_option("--threads,-j", a->threads, "Threads (default: every core)")
        ->check(whole(1, kMaxThreads));
    c->add_flag("--fewest-replicas", *fewest,
                "The other question: at the workload's own rate, the fewest replicas (behind "
                "--router) that keep the target (bracketing 1, 2, 4, ... then bisection, per "
                "seed; the answer holds for every seed). With --disaggregate (any P:D), the "
                "fewest prefill + decode replicas, each total at its best split");
    c->add_option("--max-replicas", *max_replicas, "With --fewest-replicas: search up to this")
        ->capture_default_str()
        ->check(whole(1, 4096));
    c->add_flag("--quiet,-q", a->quiet, "Print nothing");
    c->callback([a, target, arrivals, start, tol, fewest, max_replicas] {
        runWithCliFields(a->base, [&] {
            if (*fewest) {
                if (a->base.replicas != 1)
                    throw std::invalid_argument(
                        "--replicas: --fewest-replicas searches the number of replicas; give "
                        "one or the other");
                runFewestReplicas(*a, *target, *max_replicas);
            } else {
                runCapacity(*a, *target, *arrivals == "poisson", *start, *tol);
            }
        });
    });
}

} // namespace kairos::cli
