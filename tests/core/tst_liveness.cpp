// Liveness of every registered policy: a request that fits in an empty KV cache is
// eventually run, unless the policy drops it by one of its documented rules (KillCause),
// and the rule really applied. The policies come from the registry (policyNames()), so a
// new policy is covered here without anyone editing this file.
//
// For each of 200 seeds a workload is drawn from one of the generators (chat lengths at
// random rates and burstiness, TimelyLLM-like robot plans wid1/wid2/wid3, chat with
// reading-time segments), with time budgets on some requests, and random engine limits;
// it runs under every policy at three KV capacities: below the largest request's need
// (some requests can never run: their kills are checked), just its need, and four times
// that. Checked on every run:
//  - the run ends (no SchedulerStall, no other exception);
//  - every request ends exactly once; a finished one generated all its tokens;
//  - every kill names a cause, and the cause holds: never_fits only when its reservation
//    exceeds the capacity less the largest watermark (1 %), cannot_grow only when the
//    request cannot finish alone, deadline only past its budget and skip_next only under
//    TimeBill's Skip-next;
//  - the engine refused nothing the policy decided;
//  - at every decision that drops nothing, an engine left idle by it holds nothing
//    waiting or suspended (unless the policy asked to be woken later): a policy may order
//    requests as it likes, but it may not sit on admissible work.
#include "exec/execution_model.h"
#include "metrics/request_metrics.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"
#include "workload/random.h"
#include "workload/robot_generator.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

using namespace kairos;

namespace {

// Forwards everything to the policy and checks each decision against the engine's state.
class Watch final : public Scheduler {
public:
    explicit Watch(std::unique_ptr<Scheduler> inner) : s_(std::move(inner)) {}
    std::string name() const override { return s_->name(); }
    void reset(const Workload& w) override { s_->reset(w); }
    ReqId overflowVictim(const EngineView& v) override { return s_->overflowVictim(v); }
    void onEnqueue(const EngineView& v, ReqId id) override { s_->onEnqueue(v, id); }
    void onFinish(const EngineView& v, ReqId id) override { s_->onFinish(v, id); }
    void schedule(const EngineView& v, Decision& out) override {
        s_->schedule(v, out);
        ++decisions;
        if (!out.preempt.empty() || !out.suspend.empty() || !out.kill.empty()) return;
        if (std::isfinite(out.wake_at) && out.wake_at > v.now()) return;
        const auto running =
            static_cast<std::int64_t>(v.running().size() + out.admit.size() + out.resume.size());
        if (running > 0) return;
        const auto waiting = static_cast<std::int64_t>(v.waiting().size());
        const auto suspended = static_cast<std::int64_t>(v.suspended().size());
        if ((waiting > 0 || suspended > 0) && idle_violation.empty()) {
            std::ostringstream o;
            o << "idle engine at t = " << v.now() << " s with " << waiting << " waiting and "
              << suspended << " suspended, KV " << v.kvUsed() << " of " << v.kvCapacity();
            idle_violation = o.str();
        }
    }
    std::string idle_violation;
    long decisions = 0;

private:
    std::unique_ptr<Scheduler> s_;
};

struct Case {
    Workload w;
    EngineLimits lim; // kv_capacity_tokens set per run
    bool unit = false;
    EteParams ete;
    std::int64_t largest_need = 0; // max over requests of prompt + output + 1 (tokens)
    std::string label;
};

const std::vector<RobotTrace>& droneTraces() {
    static const std::vector<RobotTrace> t =
        readRobotTraces(test::dataPath("timelyllm/timelyllm_drone_trace_set_extracted.json"));
    return t;
}

Case makeCase(std::uint64_t seed) {
    Rng rng(seed * 7919 + 13);
    Case c;
    std::ostringstream label;
    label << "seed " << seed << ": ";
    const int kind = static_cast<int>(rng.uniformInt(0, 3));
    if (kind <= 1) { // chat lengths, possibly with reading-time segments
        GenerateSpec g;
        g.count = static_cast<std::size_t>(rng.uniformInt(1, 150));
        g.arrivals.rate = rng.bernoulli(0.15) ? INFINITY : 0.2 + 30 * rng.uniform();
        g.arrivals.burstiness = rng.bernoulli(0.5) ? 1.0 : 0.2 + 2 * rng.uniform();
        g.arrivals.seed = seed;
        g.length_seed = seed + 1;
        g.prompt = LengthDist::parse(rng.bernoulli(0.5)
                                         ? "lognormal:" + std::to_string(rng.uniformInt(2, 600)) +
                                               ",1.0,max=3000"
                                         : "uniform:1," + std::to_string(rng.uniformInt(1, 900)));
        g.output = LengthDist::parse(rng.bernoulli(0.5)
                                         ? "lognormal:" + std::to_string(rng.uniformInt(1, 300)) +
                                               ",1.1,max=1500"
                                         : "uniform:1," + std::to_string(rng.uniformInt(1, 400)));
        c.w = generateWorkload(g);
        label << "chat n=" << g.count << " rate=" << g.arrivals.rate;
        if (kind == 1) {
            addReadingTime(c.w, 200 + 400 * rng.uniform());
            label << " +reading";
        }
    } else { // robot plans
        static const char* presets[] = {"wid1", "wid2", "wid3"};
        const std::string preset = presets[rng.uniformInt(0, 2)];
        RobotWorkloadSpec spec = RobotWorkloadSpec::preset_(preset);
        spec.seed = seed;
        spec.agents = static_cast<int>(rng.uniformInt(spec.max_tasks_per_event, 25));
        spec.duration_s = 10 + 70 * rng.uniform();
        c.w = generateRobotWorkload(spec,
                                    preset == "wid3" ? std::vector<RobotTrace>{} : droneTraces());
        label << preset << " n=" << c.w.size();
    }
    // Time budgets on some requests (TimeBill plans with them; the others ignore them).
    if (rng.bernoulli(0.5)) {
        const double scale = 0.05 + 20 * rng.uniform();
        for (auto& r : c.w.requests)
            if (rng.bernoulli(0.7)) r.budget_s = scale * (0.5 + rng.uniform());
        label << " budgets~" << scale;
    }
    c.w.sortByArrival();
    c.lim.block_size = rng.bernoulli(0.5) ? 1 : 16;
    c.lim.max_num_seqs = static_cast<std::int32_t>(rng.uniformInt(1, 48));
    c.lim.max_num_batched_tokens = static_cast<std::int32_t>(rng.uniformInt(8, 4096));
    c.lim.chunked_prefill = rng.bernoulli(0.5);
    c.unit = rng.bernoulli(0.2);
    c.ete =
        EteParams{0.005 + 0.05 * rng.uniform(), 1e-5 + 4e-4 * rng.uniform(), 1e-8 * rng.uniform(),
                  0.005 + 0.05 * rng.uniform(), 4e-4 * rng.uniform(),        4e-7 * rng.uniform()};
    for (const auto& r : c.w.requests)
        c.largest_need = std::max<std::int64_t>(c.largest_need, std::int64_t(r.prompt_tokens) +
                                                                    r.output_tokens + 1);
    label << " block=" << c.lim.block_size << " seqs=" << c.lim.max_num_seqs
          << " tokens=" << c.lim.max_num_batched_tokens << " chunked=" << c.lim.chunked_prefill
          << " unit=" << c.unit;
    c.label = label.str();
    return c;
}

// A random setting of the policy's parameters, drawn from the registry: each parameter,
// with probability 1/2, gets a value from the range its spec says users explore (log-
// uniform on a log scale; a flag 0 or 1), so a new policy or parameter is covered here
// without anyone editing this file. Combinations the policy rejects as documented (e.g.
// timely's gain_admission=1 with adaptive_batch=0) are drawn again.
PolicyParams variation(const std::string& policy, Rng& rng) {
    const PolicySpec& spec = policySpec(policy);
    for (int attempt = 0; attempt < 20; ++attempt) {
        PolicyParams p;
        for (const ParamSpec& ps : spec.params) {
            if (rng.uniformInt(0, 1) == 0) continue;
            double v;
            if (ps.kind == ParamSpec::Kind::Flag) {
                v = double(rng.uniformInt(0, 1));
            } else if (ps.log && ps.explore_lo > 0) {
                v = ps.explore_lo * std::pow(ps.explore_hi / ps.explore_lo, rng.uniform());
            } else {
                v = ps.explore_lo + (ps.explore_hi - ps.explore_lo) * rng.uniform();
            }
            if (ps.kind == ParamSpec::Kind::Whole) v = std::round(v);
            if (ps.lo_open && v <= ps.lo) v = ps.explore_hi;
            p[ps.name] = v;
        }
        try {
            (void)makeScheduler(policy, p);
            return p;
        } catch (const std::invalid_argument&) {
        }
    }
    return {};
}

// A parameter's value in this run: given, or the registry's default.
double valueOf(const PolicyConfig& pc, const std::string& name, double if_none) {
    const ParamSpec* ps = policySpec(pc.name).param(name);
    if (!ps) return if_none;
    const auto it = pc.params.find(name);
    return it == pc.params.end() ? ps->dflt : it->second;
}

// Seeds to run: KAIROS_LIVENESS_SEEDS, else `dflt` (CI's share).
int seedCount(int dflt) {
    return qEnvironmentVariableIsSet("KAIROS_LIVENESS_SEEDS")
               ? qEnvironmentVariableIntValue("KAIROS_LIVENESS_SEEDS")
               : dflt;
}

const char* kPredictors[] = {"oracle", "lognormal:0.5", "exponential", "bucket:16,0.8", "trail"};

} // namespace

class TestLiveness : public QObject {
    Q_OBJECT
private slots:
    void everyPolicyIsLive_data() {
        QTest::addColumn<QString>("policy");
        for (const auto& n : policyNames()) QTest::newRow(n.c_str()) << QString::fromStdString(n);
    }

    void everyPolicyIsLive() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = seedCount(200);
        long runs = 0, kills = 0, completed = 0, loops = 0;
        std::map<std::string, long> by_cause;
        for (int seed = 1; seed <= seeds; ++seed) {
            const Case c = makeCase(static_cast<std::uint64_t>(seed));
            const std::int64_t need = std::max<std::int64_t>(16, c.largest_need);
            const std::int64_t caps[] = {need / 2, need + c.lim.block_size, 4 * need};
            for (int ci = 0; ci < 3; ++ci) {
                Rng rng(static_cast<std::uint64_t>(seed) * 31 + ci);
                PolicyConfig pc;
                pc.name = name;
                pc.params = variation(name, rng);
                pc.predictor = kPredictors[rng.uniformInt(0, 4)];
                pc.seed = static_cast<std::uint64_t>(seed);
                EngineLimits lim = c.lim;
                lim.kv_capacity_tokens = caps[ci];
                const std::int64_t cap = lim.kv_capacity_tokens / lim.block_size * lim.block_size;
                std::ostringstream params;
                for (const auto& [k, v] : pc.params) params << k << "=" << v << " ";
                const QString what =
                    QString::fromStdString(name + " " + params.str() + "predictor=" + pc.predictor +
                                           ", " + c.label + " cap=" + std::to_string(cap));
                Watch watch(makeScheduler(pc));
                const EteModel ete(c.ete);
                const UnitModel unit;
                RunLog log;
                try {
                    log = simulate(c.w, c.unit ? static_cast<const ExecutionModel&>(unit) : ete,
                                   watch, lim);
                } catch (const SchedulerLoop& e) {
                    // A documented endless cycle, detected and named rather than run for
                    // ever: only where the policy's registry entry says it may loop.
                    QVERIFY2(!policySpec(name).loops_when.empty(),
                             qPrintable(what + ": " + e.what()));
                    ++loops;
                    continue;
                } catch (const std::exception& e) {
                    QFAIL(qPrintable(what + ": " + e.what()));
                }
                ++runs;
                QVERIFY2(watch.idle_violation.empty(),
                         qPrintable(what + ": " + QString::fromStdString(watch.idle_violation)));
                for (const auto& warning : log.warnings)
                    QVERIFY2(warning.find("refused") == std::string::npos &&
                                 warning.find("not waiting") == std::string::npos,
                             qPrintable(what + ": " + QString::fromStdString(warning)));
                std::vector<int> ends(c.w.size(), 0);
                for (const Event& e : log.events)
                    if (e.ev == Ev::Finish || e.ev == Ev::Kill) ++ends[std::size_t(e.req)];
                const auto m = perRequest(log);
                const bool skip_next = valueOf(pc, "skip_next", 0) == 1;
                for (std::size_t i = 0; i < m.size(); ++i) {
                    const Request& r = c.w.requests[i];
                    const QString req = what + QString(", req %1 (prompt %2, output %3)")
                                                   .arg(i)
                                                   .arg(r.prompt_tokens)
                                                   .arg(r.output_tokens);
                    QVERIFY2(ends[i] == 1,
                             qPrintable(req + ": ended " + QString::number(ends[i]) + " times"));
                    if (m[i].finished) {
                        QVERIFY2(m[i].output_tokens == r.output_tokens, qPrintable(req));
                        ++completed;
                        continue;
                    }
                    ++kills;
                    ++by_cause[killCauseName(m[i].kill_cause)];
                    // What admitting it would reserve: its context and one slot, in whole blocks.
                    const std::int64_t bs = lim.block_size;
                    const std::int64_t reserve =
                        (std::int64_t(r.prompt_tokens) + m[i].output_tokens + 1 + bs - 1) / bs * bs;
                    // The policy's watermark, or the engine's 1 % for one without.
                    const auto wm = static_cast<std::int64_t>(valueOf(pc, "watermark", 0.01) *
                                                              static_cast<double>(cap));
                    const QString why = req + ": killed at " + QString::number(m[i].end) +
                                        " s as " + killCauseName(m[i].kill_cause);
                    switch (m[i].kill_cause) {
                    case KillCause::NeverFits:
                        QVERIFY2(reserve > cap - wm, qPrintable(why));
                        break;
                    case KillCause::CannotGrow:
                        QVERIFY2(std::int64_t(r.prompt_tokens) + r.output_tokens + 1 > cap,
                                 qPrintable(why));
                        break;
                    case KillCause::Deadline:
                        QVERIFY2(name == "timebill" && !skip_next, qPrintable(why));
                        break;
                    case KillCause::SkipNext:
                        QVERIFY2(name == "timebill" && skip_next, qPrintable(why));
                        break;
                    default:
                        QFAIL(qPrintable(why));
                    }
                    if (m[i].kill_cause == KillCause::Deadline) {
                        const double budget = r.budget_s ? *r.budget_s : valueOf(pc, "budget", 5.0);
                        QVERIFY2(m[i].end >= r.arrival + budget - 1e-9, qPrintable(why));
                    }
                }
            }
        }
        std::string causes;
        for (const auto& [k, v] : by_cause) causes += " " + k + "=" + std::to_string(v);
        qInfo("%s: %ld runs, %ld requests completed, %ld killed by documented rules:%s, %ld "
              "documented loops, 0 stalls",
              name.c_str(), runs, completed, kills, causes.c_str(), loops);
    }

    // Skipping ahead (the engine running a stretch of decode iterations in closed form
    // while the policy's `hold` allows) is an optimisation: for every policy, on the same
    // random workloads, limits, parameters and predictors, the run log's events equal
    // those of the run stepped one iteration at a time (times to rounding: a stretch sums
    // its iteration times in closed form).
    void skipAheadChangesNoEvent_data() { everyPolicyIsLive_data(); }
    void skipAheadChangesNoEvent() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = seedCount(60);
        int compared = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
            const Case c = makeCase(static_cast<std::uint64_t>(seed));
            const std::int64_t need = std::max<std::int64_t>(16, c.largest_need);
            for (const std::int64_t cap : {need + c.lim.block_size, 4 * need}) {
                Rng rng(static_cast<std::uint64_t>(seed) * 37 + static_cast<std::uint64_t>(cap));
                PolicyConfig pc;
                pc.name = name;
                pc.params = variation(name, rng);
                pc.predictor = kPredictors[rng.uniformInt(0, 4)];
                pc.seed = static_cast<std::uint64_t>(seed);
                std::ostringstream params;
                for (const auto& [k, v] : pc.params) params << k << "=" << v << " ";
                const QString what =
                    QString::fromStdString(name + " " + params.str() + "predictor=" + pc.predictor +
                                           ", " + c.label + " cap=" + std::to_string(cap));
                const EteModel ete(c.ete);
                const UnitModel unit;
                auto run = [&](bool skip) {
                    EngineLimits lim = c.lim;
                    lim.kv_capacity_tokens = cap;
                    lim.skip_ahead = skip;
                    const auto s = makeScheduler(pc);
                    return simulate(c.w, c.unit ? static_cast<const ExecutionModel&>(unit) : ete,
                                    *s, lim);
                };
                RunLog skipped, stepped;
                try {
                    skipped = run(true);
                    stepped = run(false);
                } catch (const SchedulerLoop&) {
                    continue; // documented (everyPolicyIsLive checks where)
                }
                const QString diff = test::firstEventDifference(skipped, stepped);
                QVERIFY2(diff.isEmpty(), qPrintable(what + ": " + diff));
                ++compared;
            }
        }
        qInfo("%s: %d runs equal skipped and stepped", name.c_str(), compared);
    }
};

QTEST_GUILESS_MAIN(TestLiveness)
#include "tst_liveness.moc"
