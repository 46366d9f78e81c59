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
#include "random_cases.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"

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

} // namespace

class TestLiveness : public QObject {
    Q_OBJECT
private slots:
    void everyPolicyIsLive_data() { test::policyRows(); }

    void everyPolicyIsLive() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = test::seedCount(200);
        long runs = 0, kills = 0, completed = 0, loops = 0;
        std::map<std::string, long> by_cause;
        for (int seed = 1; seed <= seeds; ++seed) {
            const test::Case c = test::makeCase(static_cast<std::uint64_t>(seed));
            const std::int64_t need = std::max<std::int64_t>(16, c.largest_need);
            const std::int64_t caps[] = {need / 2, need + c.lim.block_size, 4 * need};
            for (int ci = 0; ci < 3; ++ci) {
                Rng rng(static_cast<std::uint64_t>(seed) * 31 + ci);
                const PolicyConfig pc =
                    test::randomConfig(name, static_cast<std::uint64_t>(seed), rng);
                EngineLimits lim = c.lim;
                lim.kv_capacity_tokens = caps[ci];
                const std::int64_t cap = lim.kv_capacity_tokens / lim.block_size * lim.block_size;
                const QString what = test::describeRun(pc, c, cap);
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
                const bool skip_next = test::valueOf(pc, "skip_next", 0) == 1;
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
                    const auto wm = static_cast<std::int64_t>(test::valueOf(pc, "watermark", 0.01) *
                                                              static_cast<double>(cap));
                    const QString why = req + ": killed at " + QString::number(m[i].end) +
                                        " s as " + killCauseName(m[i].kill_cause);
                    switch (m[i].kill_cause) {
                    case KillCause::NeverFits:
                        QVERIFY2(reserve > cap - wm, qPrintable(why));
                        break;
                    case KillCause::CannotGrow: {
                        // Under vLLM v0's rules a request alone needs one free block
                        // beyond its own when vLLM checks it.
                        const std::int64_t extra =
                            lim.rules == EngineRules::VllmV0 && bs > 1 ? bs : 0;
                        QVERIFY2(std::int64_t(r.prompt_tokens) + r.output_tokens + 1 + extra > cap,
                                 qPrintable(why));
                        break;
                    }
                    case KillCause::Deadline:
                        QVERIFY2(name == "timebill" && !skip_next, qPrintable(why));
                        break;
                    case KillCause::SkipNext:
                        QVERIFY2(name == "timebill" && skip_next, qPrintable(why));
                        break;
                    case KillCause::Shed: {
                        // Queued at least its TUF's fall (zero point - ERT) past its due
                        // time, which is never before its arrival.
                        const double slack = test::valueOf(pc, "slack", 10.0);
                        const double fall = r.tuf ? r.tuf->zeroTime() - r.tuf->ert : slack;
                        QVERIFY2(name == "timely_code" && test::valueOf(pc, "shed", 1) == 1 &&
                                     m[i].end >= r.arrival + fall - 1e-9,
                                 qPrintable(why));
                        break;
                    }
                    default:
                        QFAIL(qPrintable(why));
                    }
                    if (m[i].kill_cause == KillCause::Deadline) {
                        const double budget =
                            r.budget_s ? *r.budget_s : test::valueOf(pc, "budget", 5.0);
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
        const int seeds = test::seedCount(60);
        int compared = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
            const test::Case c = test::makeCase(static_cast<std::uint64_t>(seed));
            const std::int64_t need = std::max<std::int64_t>(16, c.largest_need);
            for (const std::int64_t cap : {need + c.lim.block_size, 4 * need}) {
                Rng rng(static_cast<std::uint64_t>(seed) * 37 + static_cast<std::uint64_t>(cap));
                const PolicyConfig pc =
                    test::randomConfig(name, static_cast<std::uint64_t>(seed), rng);
                const QString what = test::describeRun(pc, c, cap);
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
