// Decisions with their reasons, checked rather than printed. For every
// registered policy (policyNames(), so a new policy is covered without anyone editing this
// file) on random workloads, limits, parameters and predictors (random_cases.h):
//  - every admit, preempt, suspend, resume, kill and dispatch in the run log has a reason
//    recorded at the same time for the same request, and every reason but an eviction
//    ratio has its event: none is unexplained;
//  - every reason's numbers satisfy the rule it names (Rule::holds), and the numbers that
//    can be known from outside agree with it: Trail's a is the tokens generated (the
//    event's value) and its C the run's parameter, the capacity M is the engine's, a kill's
//    rule matches its cause, a Kill's `now` is its time;
//  - recording changes nothing (the log with and without it is the same, event by event);
//  - replaying the recorded decisions (sched/replay.h) reproduces the run log exactly,
//    event by event, with the same iterations.
// Then the reasons of hand-computed runs, number by number.
#include "export/perfetto.h"
#include "export/runlog_jsonl.h"
#include "metrics/explain_view.h"
#include "model/explain.h"
#include "random_cases.h"
#include "sched/admission.h"
#include "sched/optimal.h"
#include "sched/priority.h"
#include "sched/replay.h"
#include "sched/timebill.h"
#include "sched/timely_code.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "test_util.h"
#include "util/input_error.h"

#include <QtTest>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#if KAIROS_HAVE_STORE
#include "store/store.h"
#endif

using namespace kairos;

namespace {

using test::Case;
using test::kPredictors;
using test::makeCase;
using test::seedCount;
using test::valueOf;
using test::variation;

RunLog runWith(const Case& c, Scheduler& s, const EngineLimits& lim, bool explain) {
    const EteModel ete(c.ete);
    const UnitModel unit;
    Simulator sim(c.w, c.unit ? static_cast<const ExecutionModel&>(unit) : ete, s, lim);
    sim.explain(explain);
    return sim.run();
}

// The acts an event can be the outcome of (a preempted request's re-admission is logged
// as a Resume).
bool eventOf(Ev ev, Act act) {
    switch (ev) {
    case Ev::Admit:
        return act == Act::Admit;
    case Ev::Resume:
        return act == Act::Resume || act == Act::Admit;
    case Ev::Preempt:
        return act == Act::Preempt;
    case Ev::Suspend:
        return act == Act::Suspend;
    case Ev::Kill:
        return act == Act::Kill;
    case Ev::Dispatch:
        return act == Act::Dispatch;
    default:
        return false;
    }
}

// Checks one explained run; returns the first problem, empty if none.
QString checkReasons(const RunLog& log, const PolicyConfig& pc, std::int64_t cap,
                     std::map<std::string, long>& by_rule) {
    const Explanation& ex = log.explain;
    if (!ex.on) return "the run recorded no reasons";
    auto num = [](double v) { return QString::number(v, 'g', 12); };
    auto show = [&](const Reason& r) {
        QString s = QString("%1 req %2 at %3 by '%4' (")
                        .arg(actName(r.act))
                        .arg(r.req)
                        .arg(num(r.t))
                        .arg(ruleOf(r.rule).name);
        for (int i = 0; i < ruleVarCount(r.rule); ++i)
            s += QString("%1%2 = %3")
                     .arg(i ? ", " : "")
                     .arg(ruleOf(r.rule).vars[i])
                     .arg(num(r.x[i]));
        return s + ")";
    };
    // Reasons by (request, time), consumed by the events they explain.
    std::map<std::pair<ReqId, double>, std::vector<std::size_t>> open;
    // The prefix cache's records: each admission's hit (by request and time) and the
    // blocks taken back, which must add up to the run's evictions.
    std::map<std::pair<ReqId, double>, double> reuse;
    double uncached = 0;
    for (std::size_t i = 0; i < ex.reasons.size(); ++i) {
        const Reason& r = ex.reasons[i];
        ++by_rule[ruleOf(r.rule).name];
        if (r.rule == RuleId::Unexplained) return "unexplained: " + show(r);
        if (!ruleOf(r.rule).holds(r.x.data())) return "rule does not hold: " + show(r);
        if (r.call >= ex.calls.size()) return "reason of no call: " + show(r);
        if (cacheAct(r.act)) {
            if (r.act == Act::Reuse && r.rule == RuleId::CacheHit &&
                reuse.emplace(std::make_pair(r.req, r.t), r.x[0]).second)
                continue;
            if (r.act == Act::Uncache && r.rule == RuleId::CacheEvict) {
                if (r.t < ex.calls[r.call].t) return "evicted before its call: " + show(r);
                uncached += r.x[0];
                continue;
            }
            return "a prefix cache record out of place: " + show(r);
        }
        if (ex.calls[r.call].t != r.t) return "reason at another time than its call: " + show(r);
        if (r.act != Act::Evict) open[{r.req, r.t}].push_back(i);
        // What can be checked from outside the policy, by the names of the rule's numbers:
        // M is the run's KV capacity and C the run's preemption constant, in every rule.
        const Rule& rule = ruleOf(r.rule);
        for (int k = 0; k < ruleVarCount(r.rule); ++k) {
            const std::string var = rule.vars[static_cast<std::size_t>(k)];
            const double x = r.x[static_cast<std::size_t>(k)];
            if (var == "M" && x != double(cap))
                return "M is not the capacity " + num(cap) + ": " + show(r);
            if (var == "C" && x != valueOf(pc, "C", x))
                return "C is not the run's " + num(valueOf(pc, "C", x)) + ": " + show(r);
        }
        if (r.rule == rules::kTimeBillKill && r.x[0] != r.t)
            return "now is not the kill's time: " + show(r);
        if (r.act == Act::Kill) {
            const auto cause = static_cast<KillCause>(r.value);
            const bool ok = (r.rule == rules::kNeverFits && cause == KillCause::NeverFits) ||
                            ((r.rule == RuleId::CannotGrow || r.rule == rules::kV0CannotGrow) &&
                             cause == KillCause::CannotGrow) ||
                            (r.rule == rules::kTimeBillKill && cause == KillCause::Deadline) ||
                            (r.rule == rules::kTimeBillSkip && cause == KillCause::SkipNext) ||
                            (r.rule == rules::kCodeShed && cause == KillCause::Shed);
            if (!ok) return QString("kill cause %1 by another rule: ").arg(r.value) + show(r);
        }
    }
    for (const Event& e : log.events) {
        if (!eventOf(e.ev, Act::Admit) && !eventOf(e.ev, Act::Resume) &&
            !eventOf(e.ev, Act::Preempt) && !eventOf(e.ev, Act::Suspend) &&
            !eventOf(e.ev, Act::Kill) && !eventOf(e.ev, Act::Dispatch))
            continue;
        auto it = open.find({e.req, e.t});
        std::size_t k = 0;
        bool found = false;
        if (it != open.end())
            for (; k < it->second.size(); ++k)
                if (eventOf(e.ev, ex.reasons[it->second[k]].act)) {
                    found = true;
                    break;
                }
        if (!found)
            return QString("%1 of req %2 at %3 has no reason")
                .arg(evName(e.ev))
                .arg(e.req)
                .arg(num(e.t));
        const Reason& r = ex.reasons[it->second[k]];
        // Trail's a is the tokens generated when it was displaced (the event's value).
        if ((r.rule == rules::kSprptSuspend || r.rule == rules::kSprptDrop) &&
            r.x[0] != double(e.value))
            return QString("a is not the %1 tokens generated: ").arg(e.value) + show(r);
        it->second.erase(it->second.begin() + static_cast<std::ptrdiff_t>(k));
    }
    for (const auto& [key, left] : open)
        if (!left.empty()) return "a reason without its event: " + show(ex.reasons[left.front()]);
    // Every cache hit has its reason, with the hit's length; every eviction is counted in
    // some reason.
    for (const Event& e : log.events) {
        if (e.ev != Ev::CacheHit) continue;
        const auto it = reuse.find({e.req, e.t});
        if (it == reuse.end() || it->second != double(e.value))
            return QString("cache hit of %1 tokens for req %2 at %3 without its reason")
                .arg(e.value)
                .arg(e.req)
                .arg(num(e.t));
        reuse.erase(it);
    }
    if (!reuse.empty())
        return QString("a reuse reason without its cache hit: req %1 at %2")
            .arg(reuse.begin()->first.first)
            .arg(num(reuse.begin()->first.second));
    if (uncached != double(log.cache_evictions))
        return QString("evictions with reasons %1, the run's %2")
            .arg(num(uncached))
            .arg(log.cache_evictions);
    return {};
}

// sprpt_lp on case 7 (twice its largest need of KV per replica) as a fleet of three behind
// least_outstanding, recorded with its reasons; `lim` receives the limits it ran with.
RunLog fleetOfThree(const test::Case& c, EngineLimits* lim) {
    *lim = c.lim;
    lim->kv_capacity_tokens = std::max<std::int64_t>(16, c.largest_need) * 2;
    Rng rng(3);
    const PolicyConfig pc = test::randomConfig("sprpt_lp", 7, rng);
    FleetRun run;
    run.workload = &c.w;
    const EteModel ete(c.ete);
    run.model = &ete;
    run.limits = *lim;
    run.fleet.replicas = 3;
    run.fleet.router = Router::LeastOutstanding;
    run.explain = true;
    run.make_scheduler = [&] { return makeScheduler(pc); };
    return simulateFleet(run);
}

RunLog explained(const Workload& w, Scheduler& s, const EngineLimits& lim,
                 const ExecutionModel& m) {
    Simulator sim(w, m, s, lim);
    sim.explain(true);
    return sim.run();
}

bool sameNumber(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b));
}

// Two explanations equal field by field.
QString explanationDifference(const Explanation& a, const Explanation& b) {
    if (a.on != b.on || a.key_name != b.key_name || a.key_descending != b.key_descending ||
        a.key_counts_down != b.key_counts_down)
        return "header";
    if (a.calls.size() != b.calls.size()) return "calls' count";
    if (a.call_replica != b.call_replica) return "calls' replicas";
    for (std::size_t i = 0; i < a.calls.size(); ++i)
        if (a.calls[i].t != b.calls[i].t || a.calls[i].hold != b.calls[i].hold ||
            a.calls[i].wake_at != b.calls[i].wake_at || a.calls[i].restart != b.calls[i].restart)
            return QString("call %1").arg(i);
    if (a.reasons.size() != b.reasons.size()) return "reasons' count";
    for (std::size_t i = 0; i < a.reasons.size(); ++i) {
        const Reason &x = a.reasons[i], &y = b.reasons[i];
        if (x.t != y.t || x.call != y.call || x.req != y.req || x.act != y.act ||
            x.rule != y.rule || x.other != y.other || x.value != y.value)
            return QString("reason %1").arg(i);
        for (int k = 0; k < ruleVarCount(x.rule); ++k)
            if (!sameNumber(x.x[std::size_t(k)], y.x[std::size_t(k)]))
                return QString("reason %1 number %2").arg(i).arg(k);
    }
    if (a.insights.size() != b.insights.size()) return "states' count";
    for (std::size_t i = 0; i < a.insights.size(); ++i) {
        const Insight &x = a.insights[i], &y = b.insights[i];
        if (x.t != y.t || x.req != y.req || x.generated != y.generated ||
            !sameNumber(x.key, y.key) || !sameNumber(x.predicted, y.predicted) ||
            !sameNumber(x.deadline, y.deadline) || !sameNumber(x.alpha, y.alpha) ||
            !sameNumber(x.wcet, y.wcet))
            return QString("state %1").arg(i);
    }
    return {};
}

// The rows of a view by request.
const ViewRow* find(const std::vector<ViewRow>& rows, ReqId id) {
    for (const ViewRow& r : rows)
        if (r.req == id) return &r;
    return nullptr;
}

} // namespace

class TestExplain : public QObject {
    Q_OBJECT
private slots:
    void reasonsHoldAndReplay_data() { test::policyRows(); }

    // An event's value in words, as the stories print it (by hand, one per kind whose value
    // says something): "evict (9500)" read as a count of something.
    void eventValuesInWords() {
        auto text = [](Ev ev, int v) { return eventValueText(Event(1.0, 0, ev, v)); };
        QCOMPARE(text(Ev::Arrive, 342), std::string("342 prompt tokens"));
        QCOMPARE(text(Ev::PrefillStart, 299), std::string("299 context tokens to compute"));
        QCOMPARE(text(Ev::Kill, 21), std::string("21 generated"));
        QCOMPARE(text(Ev::Finish, 172), std::string("172 generated"));
        QCOMPARE(text(Ev::Evict, 9500), std::string("KV eviction ratio alpha = 0.95"));
        QCOMPARE(text(Ev::Budget, 5000), std::string("budget 5000 ms"));
        QCOMPARE(text(Ev::Dispatch, 3), std::string("segment 3"));
        QCOMPARE(text(Ev::CacheHit, 512), std::string("512 tokens cached"));
        QCOMPARE(text(Ev::KillCause, int(KillCause::Deadline)), std::string("deadline"));
        QCOMPARE(text(Ev::Admit, 0), std::string());
        QCOMPARE(text(Ev::FirstToken, 1), std::string());
    }

    void reasonsHoldAndReplay() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = seedCount(60, "KAIROS_EXPLAIN_SEEDS");
        long runs = 0, reasons = 0, calls = 0, insights = 0;
        std::map<std::string, long> by_rule;
        for (int seed = 1; seed <= seeds; ++seed) {
            const Case c = makeCase(static_cast<std::uint64_t>(seed));
            const std::int64_t need = std::max<std::int64_t>(16, c.largest_need);
            const std::int64_t caps[] = {need / 2, need + c.lim.block_size, 4 * need};
            Rng rng(static_cast<std::uint64_t>(seed) * 41 + 7);
            const std::int64_t cap_tokens = caps[rng.uniformInt(0, 2)];
            const PolicyConfig pc = test::randomConfig(name, static_cast<std::uint64_t>(seed), rng);
            EngineLimits lim = c.lim;
            lim.kv_capacity_tokens = cap_tokens;
            const std::int64_t cap = lim.kv_capacity_tokens / lim.block_size * lim.block_size;
            const QString what = test::describeRun(pc, c, cap);
            RunLog plain, explained;
            try {
                const auto s1 = makeScheduler(pc);
                plain = runWith(c, *s1, lim, false);
                const auto s2 = makeScheduler(pc);
                explained = runWith(c, *s2, lim, true);
            } catch (const SchedulerLoop&) {
                continue; // documented (tst_liveness checks where)
            } catch (const std::exception& e) {
                QFAIL(qPrintable(what + ": " + e.what()));
            }
            QVERIFY2(!plain.explain.on && plain.explain.reasons.empty(), qPrintable(what));
            const QString same = test::firstEventDifference(plain, explained);
            QVERIFY2(same.isEmpty(), qPrintable(what + ": recording changed the run: " + same));
            QCOMPARE(explained.totalIterations(), plain.totalIterations());
            const QString bad = checkReasons(explained, pc, cap, by_rule);
            QVERIFY2(bad.isEmpty(), qPrintable(what + ": " + bad));
            // The recorded decisions are the whole story: replayed, the same run.
            ReplayScheduler replay(explained.explain, name);
            RunLog replayed;
            try {
                replayed = runWith(c, replay, lim, false);
            } catch (const std::exception& e) {
                QFAIL(qPrintable(what + ": replay: " + e.what()));
            }
            const QString diff = test::firstEventDifference(explained, replayed);
            QVERIFY2(diff.isEmpty(), qPrintable(what + ": replay differs: " + diff));
            QCOMPARE(replayed.totalIterations(), explained.totalIterations());
            ++runs;
            reasons += static_cast<long>(explained.explain.reasons.size());
            calls += static_cast<long>(explained.explain.calls.size());
            insights += static_cast<long>(explained.explain.insights.size());
        }
        std::string rules;
        for (const auto& [k, v] : by_rule) rules += "\n    " + std::to_string(v) + " x " + k;
        qInfo("%s: %ld runs, %ld calls, %ld reasons (all hold, all replayed), %ld insights:%s",
              name.c_str(), runs, calls, reasons, insights, rules.c_str());
        QVERIFY(runs > 0);
    }

    // A fleet records every replica's decisions: for every registered policy on random
    // cases, 2 to 4 replicas behind a random router, recording changes nothing, every reason
    // holds as in one engine's run, each call names its replica and the reasons of a call
    // are about requests routed there, and replaying each replica's part (routed as the run
    // routed) reproduces the fleet's log exactly, as does the run log's JSONL round trip.
    void fleetReasonsHoldAndReplay_data() { test::policyRows(); }
    void fleetReasonsHoldAndReplay() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = seedCount(15, "KAIROS_EXPLAIN_SEEDS");
        long runs = 0, calls = 0;
        std::map<std::string, long> by_rule;
        for (int seed = 1; seed <= seeds; ++seed) {
            const Case c = makeCase(static_cast<std::uint64_t>(seed) + 500);
            Rng rng(static_cast<std::uint64_t>(seed) * 53 + 11);
            EngineLimits lim = c.lim;
            lim.kv_capacity_tokens =
                std::max<std::int64_t>(16, c.largest_need) * (rng.bernoulli(0.5) ? 1 : 3);
            const std::int64_t cap = lim.kv_capacity_tokens / lim.block_size * lim.block_size;
            const PolicyConfig pc = test::randomConfig(name, static_cast<std::uint64_t>(seed), rng);
            FleetRun run;
            run.workload = &c.w;
            const EteModel ete(c.ete);
            const UnitModel unit;
            run.model = c.unit ? static_cast<const ExecutionModel*>(&unit) : &ete;
            run.limits = lim;
            run.fleet.replicas = static_cast<int>(rng.uniformInt(2, 4));
            const Router routers[] = {Router::RoundRobin, Router::LeastOutstanding, Router::LeastKv,
                                      Router::PrefixAware};
            run.fleet.router = routers[rng.uniformInt(0, lim.prefix_caching ? 3 : 2)];
            run.make_scheduler = [&] { return makeScheduler(pc); };
            const QString what =
                test::describeRun(pc, c, cap) + QString(", %1 replicas, %2")
                                                    .arg(run.fleet.replicas)
                                                    .arg(routerName(run.fleet.router));
            RunLog plain, recorded;
            try {
                plain = simulateFleet(run);
                run.explain = true;
                recorded = simulateFleet(run);
            } catch (const SchedulerLoop&) {
                continue; // documented (tst_liveness checks where)
            } catch (const std::exception& e) {
                QFAIL(qPrintable(what + ": " + e.what()));
            }
            const QString same = test::firstEventDifference(plain, recorded);
            QVERIFY2(same.isEmpty(), qPrintable(what + ": recording changed the run: " + same));
            const Explanation& ex = recorded.explain;
            QVERIFY2(ex.on && ex.call_replica.size() == ex.calls.size(), qPrintable(what));
            const QString bad = checkReasons(recorded, pc, cap, by_rule);
            QVERIFY2(bad.isEmpty(), qPrintable(what + ": " + bad));
            for (const Reason& r : ex.reasons)
                QVERIFY2(recorded.replica_of[static_cast<std::size_t>(r.req)] ==
                             ex.call_replica[r.call],
                         qPrintable(what + ": a reason about a request of another replica"));
            // Each replica's part replayed on a fleet routed as the run was.
            int next = 0;
            FleetRun again = run;
            again.explain = false;
            again.routes = &recorded.replica_of;
            again.make_scheduler = [&]() -> std::unique_ptr<Scheduler> {
                return std::make_unique<ReplayScheduler>(
                    replicaExplanation(ex, recorded.replica_of, next++), name);
            };
            RunLog replayed;
            try {
                replayed = simulateFleet(again);
            } catch (const std::exception& e) {
                QFAIL(qPrintable(what + ": replay: " + e.what()));
            }
            QCOMPARE(next, run.fleet.replicas);
            const QString diff = test::firstEventDifference(recorded, replayed);
            QVERIFY2(diff.isEmpty(), qPrintable(what + ": replay differs: " + diff));
            std::stringstream io;
            writeRunLogJsonl(recorded, io);
            std::istringstream in(io.str());
            const RunLog back = readRunLogJsonl(in, "fleet.jsonl");
            const QString round = explanationDifference(ex, back.explain);
            QVERIFY2(round.isEmpty(), qPrintable(what + ": JSONL round trip: " + round));
            ++runs;
            calls += static_cast<long>(ex.calls.size());
        }
        qInfo("%s: %ld fleet runs, %ld calls (all replayed)", name.c_str(), runs, calls);
        QVERIFY(runs > 0);
    }

    // The scheduler's view of a fleet: the view of each replica holds its own requests, KV
    // and calls, and the replicas' views add up to the fleet's at every sampled instant.
    void fleetViewSplitsByReplica() {
        const Case c = makeCase(7);
        EngineLimits lim;
        const RunLog log = fleetOfThree(c, &lim);
        const ExplainIndex ix(log);
        const double end = log.events.back().t;
        int checked = 0;
        for (int k = 0; k <= 40; ++k) {
            const double t = end * k / 40;
            const SchedulerView all = viewAt(ix, t);
            QCOMPARE(all.kv_capacity, lim.kv_capacity_tokens / lim.block_size * lim.block_size * 3);
            std::size_t running = 0, waiting = 0, suspended = 0;
            std::int64_t kv = 0;
            std::int32_t finished = 0, not_arrived = 0;
            for (int r = 0; r < 3; ++r) {
                const SchedulerView v = viewAt(ix, t, r);
                for (const auto* rows : {&v.running, &v.waiting, &v.suspended})
                    for (const ViewRow& row : *rows) QCOMPARE(int(row.replica), r);
                if (v.call >= 0) {
                    QCOMPARE(int(log.explain.call_replica[std::size_t(v.call)]), r);
                    QVERIFY(log.explain.calls[std::size_t(v.call)].t <= t);
                }
                running += v.running.size();
                waiting += v.waiting.size();
                suspended += v.suspended.size();
                kv += v.kv_used;
                finished += v.finished;
                not_arrived += v.not_arrived;
            }
            QCOMPARE(running, all.running.size());
            QCOMPARE(waiting, all.waiting.size());
            QCOMPARE(suspended, all.suspended.size());
            QCOMPARE(kv, all.kv_used);
            QCOMPARE(finished, all.finished);
            QCOMPARE(not_arrived, all.not_arrived);
            checked += int(all.running.size());
        }
        QVERIFY(checked > 0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, viewAt(ix, 1.0, 3));
    }

    // A fleet's Perfetto trace: a process per replica, named by it; every slice and decision
    // of a request in its replica's process with `replica` in its args; a KV counter per
    // replica at most its capacity, whose values at each of the fleet total's points add up
    // to the total.
    void fleetPerfettoHasAProcessPerReplica() {
        const Case c = makeCase(7);
        EngineLimits lim;
        const RunLog log = fleetOfThree(c, &lim);
        std::stringstream out;
        const PerfettoCounts n = writePerfetto(log, &c.w, out);
        const auto j = nlohmann::json::parse(out.str());
        std::map<int, std::string> processes;
        std::map<int, std::vector<std::pair<double, long long>>> kv; // pid -> (ts, in use)
        long slices = 0, decisions = 0;
        for (const auto& e : j["traceEvents"]) {
            const std::string ph = e.value("ph", "");
            const int pid = e.value("pid", -1);
            if (ph == "M" && e.value("name", "") == "process_name")
                processes[pid] = e["args"]["name"].get<std::string>();
            if ((ph == "X" && pid != 2) || ph == "i") { // 2: the robot's execution
                const int row = ph == "X" ? e["args"]["row"].get<int>() : e.value("tid", -1);
                const int rep = log.replica_of[std::size_t(row)];
                QCOMPARE(e["args"]["replica"].get<int>(), rep);
                QCOMPARE(pid, 10 + rep);
                ++(ph == "X" ? slices : decisions);
            }
            if (ph == "C" && e.value("name", "") == "KV tokens")
                kv[pid].push_back({e["ts"].get<double>(), e["args"]["in use"].get<long long>()});
        }
        QCOMPARE(slices, n.phases);
        QCOMPARE(decisions, long(log.explain.reasons.size()));
        for (int r = 0; r < 3; ++r) {
            QVERIFY2(processes[10 + r].rfind("replica " + std::to_string(r), 0) == 0,
                     processes[10 + r].c_str());
            QVERIFY(!kv[10 + r].empty());
            for (const auto& [t, v] : kv[10 + r]) QVERIFY(v <= lim.kv_capacity_tokens);
        }
        // At each point of the fleet's total, the replicas' last values add up to it.
        auto at = [&](int pid, double t) {
            long long v = 0;
            for (const auto& [ts, x] : kv[pid])
                if (ts <= t) v = x;
            return v;
        };
        for (const auto& [t, total] : kv[3]) QCOMPARE(at(10, t) + at(11, t) + at(12, t), total);
    }

    // tst_policies' sprptLimitedPreemptionByHand with its reasons: one seat, unit time, C = 1.
    // A (t=0, prompt 5, 10 tokens) runs; B (t=2, 3 tokens) arrives. At t=2 A has generated
    // a = 2 < C * r = 1 * 10 tokens and ranks after B (8 left against 3): A is suspended for
    // B, which is admitted; at t=5 B is done and A resumes (its key 8, the seat free).
    void sprptReasonsByHand() {
        Workload w;
        w.requests = {test::req(0, 5, 10), test::req(2, 5, 3)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        lim.max_num_seqs = 1;
        const auto s = test::policyNoWatermark("sprpt_lp", {{"C", 1.0}}, "oracle", 5);
        const RunLog log = explained(w, *s, lim, UnitModel());
        const auto& r = log.explain.reasons;
        QCOMPARE(log.explain.key_name, std::string("predicted remaining (tokens)"));
        QCOMPARE(int(r.size()), 4);
        QCOMPARE(r[0].act, Act::Admit); // A at 0: the best waiting, need 6 of 1,000 free
        QCOMPARE(r[0].rule, rules::kRankAdmit);
        QCOMPARE(r[0].req, 0);
        QCOMPARE(r[0].t, 0.0);
        QCOMPARE(r[0].x[0], 10.0);
        QCOMPARE(r[0].x[1], 6.0);
        QCOMPARE(r[0].x[2], 1000.0);
        QCOMPARE(r[1].act, Act::Suspend); // applied before admissions
        QCOMPARE(r[1].rule, rules::kSprptSuspend);
        QCOMPARE(r[1].req, 0);
        QCOMPARE(r[1].other, 1);
        QCOMPARE(r[1].t, 2.0);
        const std::array<double, 5> suspend{2, 1, 10, 8, 3}; // a, C, r, key, other_key
        for (std::size_t k = 0; k < suspend.size(); ++k) QCOMPARE(r[1].x[k], suspend[k]);
        QCOMPARE(r[2].act, Act::Admit);
        QCOMPARE(r[2].req, 1);
        QCOMPARE(r[2].x[0], 3.0);
        QCOMPARE(r[2].x[1], 6.0);
        QCOMPARE(r[3].act, Act::Resume);
        QCOMPARE(r[3].rule, rules::kRankResume);
        QCOMPARE(r[3].req, 0);
        QCOMPARE(r[3].t, 5.0);
        QCOMPARE(r[3].x[0], 8.0);
        QCOMPARE(r[3].x[1], 1.0);
        QCOMPARE(QString::fromStdString(describeReason(r[1])),
                 QString("suspend req 0: sprpt_lp: a < C*r, ranked after the one it makes room "
                         "for (a = 2, C = 1, r = 10, key = 8, other_key = 3) for req 1"));
        // The scheduler's view at t = 2, after that decision: B runs, A is suspended with
        // 2 tokens and 8 to go (predicted by the oracle: exactly), nothing waits.
        const ExplainIndex ix(log);
        const SchedulerView v = viewAt(ix, 2.0);
        QCOMPARE(int(v.running.size()), 1);
        QCOMPARE(v.running[0].req, 1);
        QCOMPARE(v.running[0].generated, 0);
        QCOMPARE(v.running[0].key, 3.0);
        QCOMPARE(v.running[0].trueRemaining(), 3.0);
        QCOMPARE(int(v.suspended.size()), 1);
        QCOMPARE(v.suspended[0].req, 0);
        QCOMPARE(v.suspended[0].generated, 2);
        QCOMPARE(v.suspended[0].predicted, 8.0);
        QCOMPARE(v.suspended[0].trueRemaining(), 8.0);
        QCOMPARE(v.suspended[0].since, 2.0);
        QVERIFY(v.waiting.empty());
        QCOMPARE(v.reasons.second - v.reasons.first, std::size_t(2)); // suspend A, admit B
        // At 1.5 A runs alone with its first token (prefill 0 -> 1) out; at 12.5 it has 9.
        QCOMPARE(viewAt(ix, 1.5).running.at(0).generated, 1);
        QCOMPARE(viewAt(ix, 12.5).running.at(0).generated, 9);
        QCOMPARE(viewAt(ix, 20).finished, 2);
        // A's story: its arrival, admission, suspension for B (its own reason), B's
        // admission is not about A, its resumption and its end.
        int reasons = 0, events = 0;
        for (const StoryLine& l : storyOf(ix, 0))
            (l.kind == StoryLine::Kind::Reason ? reasons : events) +=
                l.kind != StoryLine::Kind::State;
        QCOMPARE(reasons, 3);
        QVERIFY(events >= 5);
        int about_b = 0;
        for (const StoryLine& l : storyOf(ix, 1)) about_b += l.kind == StoryLine::Kind::Reason;
        QCOMPARE(about_b, 2); // its admission, and A's suspension for it
    }

    // The run log keeps the stream: written and read back, every call, reason and state is
    // the same to the last bit; infinities survive (sprpt's C); a damaged line names its
    // line and field.
    void jsonlRoundTripAndErrors() {
        const test::Case c = makeCase(4);
        EngineLimits lim = c.lim;
        lim.kv_capacity_tokens = std::max<std::int64_t>(16, c.largest_need) + c.lim.block_size;
        for (const char* name : {"sprpt", "timebill", "timely", "mcsf"}) {
            const auto s = test::policy(name, {}, "trail", 3);
            const EteModel ete(c.ete);
            const RunLog log = explained(c.w, *s, lim, ete);
            QVERIFY(!log.explain.reasons.empty());
            std::stringstream io;
            writeRunLogJsonl(log, io);
            const std::string text = io.str();
            std::istringstream in(text);
            const RunLog back = readRunLogJsonl(in, "x.jsonl");
            QVERIFY2(test::firstEventDifference(log, back).isEmpty(), name);
            const QString diff = explanationDifference(log.explain, back.explain);
            QVERIFY2(diff.isEmpty(), qPrintable(QString(name) + ": " + diff));
            if (std::string(name) == "sprpt") QVERIFY(text.find("\"inf\"") != std::string::npos);
        }
        const auto s = test::policy("sprpt", {}, "oracle", 3);
        const EteModel ete(c.ete);
        std::stringstream io;
        writeRunLogJsonl(explained(c.w, *s, lim, ete), io);
        std::vector<std::string> lines;
        for (std::string l; std::getline(io, l);) lines.push_back(l);
        auto lineOf = [&](const char* ev) {
            for (std::size_t i = 0; i < lines.size(); ++i)
                if (lines[i].find(std::string("\"ev\":\"") + ev + "\"") != std::string::npos)
                    return i;
            return lines.size();
        };
        auto fails = [&](std::size_t at, const std::string& from, const std::string& to,
                         const char* field) {
            std::vector<std::string> bad = lines;
            const auto k = bad[at].find(from);
            QVERIFY2(k != std::string::npos, qPrintable(QString::fromStdString(bad[at])));
            bad[at].replace(k, from.size(), to);
            std::string text;
            for (const auto& l : bad) text += l + "\n";
            std::istringstream in(text);
            try {
                (void)readRunLogJsonl(in, "bad.jsonl");
            } catch (const InputError& e) {
                QCOMPARE(e.line(), long(at + 1));
                QCOMPARE(QString::fromStdString(e.field()), QString(field));
                return;
            }
            QFAIL(qPrintable("accepted: " + QString::fromStdString(bad[at])));
        };
        const std::size_t why = lineOf("why"), call = lineOf("call"), state = lineOf("state");
        QVERIFY(why < lines.size() && call < lines.size() && state < lines.size());
        fails(why, "\"rule\":\"", "\"rule\":\"no_such.", "rule");
        fails(why, "\"act\":\"", "\"act\":\"x", "act");
        fails(why, "\"x\":[", "\"x\":[1,", "x");
        fails(why, "\"call\":", "\"call\":99999999", "call");
        fails(call, "\"hold\":", "\"hold\":-", "hold");
        fails(state, "\"req\":", "\"req\":99999999,\"was\":", "req");
        // A reason line in a log whose header recorded none.
        std::vector<std::string> headless = lines;
        const auto k = headless[0].find(",\"explain\"");
        QVERIFY(k != std::string::npos);
        headless[0] = headless[0].substr(0, k) + "}";
        std::string text;
        for (const auto& l : headless) text += l + "\n";
        std::istringstream in(text);
        QVERIFY_THROWS_EXCEPTION(InputError, readRunLogJsonl(in, "h.jsonl"));
    }

    // The view at any instant agrees with the run, on random workloads for every policy:
    // every request is in exactly one place, the KV in use within the capacity, the batch
    // within its seats, the queue in the policy's order; after each decision, what it
    // admitted runs, what it suspended is suspended, what it preempted waits; with exact
    // (oracle) predictions a running request's predicted remaining tokens are its true
    // remaining tokens at every decision that sampled it.
    void viewAgreesWithTheRun_data() { reasonsHoldAndReplay_data(); }
    void viewAgreesWithTheRun() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
        const int seeds = seedCount(25, "KAIROS_EXPLAIN_SEEDS");
        long views = 0, exact = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
            const Case c = makeCase(static_cast<std::uint64_t>(seed));
            EngineLimits lim = c.lim;
            lim.kv_capacity_tokens = std::max<std::int64_t>(16, c.largest_need) * 2;
            Rng rng(static_cast<std::uint64_t>(seed) * 43 + 1);
            PolicyConfig pc;
            pc.name = name;
            pc.params = variation(name, rng);
            pc.predictor = seed % 2 ? "oracle" : kPredictors[rng.uniformInt(0, 4)];
            pc.seed = static_cast<std::uint64_t>(seed);
            RunLog log;
            try {
                const auto s = makeScheduler(pc);
                log = runWith(c, *s, lim, true);
            } catch (const SchedulerLoop&) {
                continue;
            }
            const QString what = QString::fromStdString(name + " " + pc.predictor + ", " + c.label);
            const ExplainIndex ix(log);
            const auto& ex = log.explain;
            const std::int64_t cap = lim.kv_capacity_tokens / lim.block_size * lim.block_size;
            for (std::size_t ci = 0; ci < ex.calls.size(); ci += 1 + ex.calls.size() / 60) {
                const double t = ex.calls[ci].t;
                const SchedulerView v = viewAt(ix, t);
                ++views;
                const auto n =
                    std::int64_t(v.waiting.size() + v.running.size() + v.suspended.size()) +
                    v.not_arrived + v.finished + v.killed;
                QVERIFY2(n == log.num_requests, qPrintable(what));
                QVERIFY2(v.kv_used <= cap, qPrintable(what));
                QVERIFY2(std::int64_t(v.running.size()) <= lim.max_num_seqs, qPrintable(what));
                for (std::size_t i = 1; i < v.waiting.size(); ++i) {
                    const double a = v.waiting[i - 1].key, b = v.waiting[i].key;
                    if (std::isnan(a) || std::isnan(b)) continue;
                    QVERIFY2(ex.key_descending ? a >= b : a <= b, qPrintable(what));
                }
                const std::int64_t call = ix.callAt(t);
                QVERIFY(call >= std::int64_t(ci));
                // The engine's own actions after the decision (an overflow's victim, a
                // suspended request's kept KV released) move a request again at once.
                std::set<ReqId> moved_again;
                for (std::size_t k = v.reasons.first; k < v.reasons.second; ++k)
                    if (ruleOf(ex.reasons[k].rule).engine) moved_again.insert(ex.reasons[k].req);
                // A decision may act twice on one request (TimelyLLM suspends a generation
                // whose segment is done and resumes it at once when it ranks first): its
                // last action counts.
                std::map<ReqId, std::size_t> last;
                for (std::size_t k = v.reasons.first; k < v.reasons.second; ++k)
                    last[ex.reasons[k].req] = k;
                for (std::size_t k = v.reasons.first; k < v.reasons.second; ++k) {
                    const Reason& r = ex.reasons[k];
                    if (ruleOf(r.rule).engine || moved_again.count(r.req) || last[r.req] != k)
                        continue;
                    const std::vector<ViewRow>* where = r.act == Act::Admit || r.act == Act::Resume
                                                            ? &v.running
                                                        : r.act == Act::Suspend ? &v.suspended
                                                        : r.act == Act::Preempt ? &v.waiting
                                                                                : nullptr;
                    if (!where) continue;
                    QVERIFY2(find(*where, r.req),
                             qPrintable(what + ": after '" +
                                        QString::fromStdString(describeReason(r)) +
                                        "' it is not there"));
                }
                if (pc.predictor != "oracle" || name == "timebill" || name.rfind("seg", 0) == 0 ||
                    name == "timely" || name == "vllm_stream" || name == "fcfs" ||
                    name.rfind("protect", 0) == 0 || name == "edf")
                    continue;
                // Counted down from its last sample (Insight::generated), an exact
                // prediction stays exact at every decision.
                for (const ViewRow& row : v.running) {
                    if (row.output < 0 || std::isnan(row.predicted)) continue;
                    QVERIFY2(row.predicted == row.trueRemaining(),
                             qPrintable(what + QString(": req %1 at %2: predicted %3, true %4")
                                                   .arg(row.req)
                                                   .arg(t)
                                                   .arg(row.predicted)
                                                   .arg(row.trueRemaining())));
                    ++exact;
                }
            }
        }
        qInfo("%s: %ld views checked, %ld exact predictions matched", name.c_str(), views, exact);
    }

    // The other writers: Perfetto gets one instant event per decision with the rule's
    // numbers as args; the store keeps the stream and gives it back.
    void perfettoAndStore() {
        const test::Case c = makeCase(7);
        EngineLimits lim = c.lim;
        lim.kv_capacity_tokens = std::max<std::int64_t>(16, c.largest_need) + c.lim.block_size;
        const auto s = test::policy("sprpt_lp", {{"C", 0.8}}, "trail", 3);
        const EteModel ete(c.ete);
        const RunLog log = explained(c.w, *s, lim, ete);
        std::stringstream out;
        const PerfettoCounts n = writePerfetto(log, &c.w, out);
        QCOMPARE(n.decisions, long(log.explain.reasons.size()));
        const auto j = nlohmann::json::parse(out.str());
        long instants = 0;
        for (const auto& e : j["traceEvents"])
            if (e.value("ph", "") == "i") {
                ++instants;
                QVERIFY(e["args"].contains("rule"));
            }
        QCOMPARE(instants, n.decisions);
#if KAIROS_HAVE_STORE
        const std::string db = test::tempPath("explain.db");
        store::Store st(db);
        const Summary sum = summarize(log);
        PolicyConfig pc;
        pc.name = "sprpt_lp";
        store::RunRecord rec = store::makeRunRecord(c.w, "test", log, sum, pc, lim, "");
        QVERIFY(rec.explain);
        const auto id = st.putRun(rec);
        const QString diff = explanationDifference(log.explain, st.runExplanation(id));
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        const RunLog plain = runWith(c, *test::policy("fcfs"), lim, false);
        const Summary psum = summarize(plain);
        const auto pid = st.putRun(store::makeRunRecord(c.w, "test", plain, psum, pc, lim, ""));
        QVERIFY(!st.runExplanation(pid).on);
#endif
    }

    // MC-SF's exact optimum (a hindsight schedule, not in the registry): its starts are
    // explained and replay.
    void optimalIsExplained() {
        Workload w;
        for (int i = 0; i < 6; ++i) w.requests.push_back(test::req(0, 2 + i % 3, 1 + (5 * i) % 4));
        EngineLimits lim;
        lim.kv_capacity_tokens = 12;
        lim.max_num_seqs = 8;
        lim.chunked_prefill = true;
        const auto s = test::policy("optimal");
        const UnitModel unit;
        const RunLog log = explained(w, *s, lim, unit);
        std::map<std::string, long> cited;
        PolicyConfig pc;
        pc.name = "optimal";
        const QString bad = checkReasons(log, pc, 12, cited);
        QVERIFY2(bad.isEmpty(), qPrintable(bad));
        QVERIFY(cited.count(ruleOf(rules::kOptimalStart).name));
        ReplayScheduler replay(log.explain, "optimal");
        Simulator again(w, unit, replay, lim);
        QVERIFY(test::firstEventDifference(log, again.run()).isEmpty());
    }

    // The rule book: the engine's 6 fixed rules (with "unexplained") and those the policies
    // register in their own files (among them the 21 below: fcfs 1, admission 1, priority
    // 5, mcsf 1, protect 3, timebill 5, timely 4, optimal 1), each found by its code, none
    // registered twice, and nothing added once the book has been read. A new policy's rules
    // need no line here: reasonsHoldAndReplay runs every registered policy.
    void ruleBook() {
        for (const char* code : {"fcfs.head",           "never_fits",           "rank.admit",
                                 "rank.resume",         "sprpt_lp.suspend",     "sprpt_lp.drop",
                                 "rank.drop_suspended", "mcsf.admit",           "protect.admit",
                                 "protect.idle",        "protect.clear",        "timebill.admit",
                                 "timebill.alpha",      "timebill.fixed_alpha", "timebill.kill",
                                 "timebill.skip_next",  "timely.dispatch",      "timely.suspend",
                                 "timely.admit",        "timely.resume",        "optimal.start"}) {
            RuleId id = RuleId::Unexplained;
            QVERIFY2(ruleFromCode(code, &id), code);
            QVERIFY(id >= RuleId::FirstRegistered);
        }
        const std::size_t count = ruleCount();
        QVERIFY(count >= std::size_t(RuleId::FirstRegistered) + 21);
        std::set<std::string> codes;
        for (std::size_t i = 0; i < ruleCount(); ++i) {
            const auto id = static_cast<RuleId>(i);
            const Rule& r = ruleOf(id);
            QVERIFY2(codes.insert(r.code).second, r.code);
            RuleId back = RuleId::Unexplained;
            QVERIFY(ruleFromCode(r.code, &back));
            QCOMPARE(back, id);
            QVERIFY(r.holds != nullptr);
            const bool v0 = id == rules::kV0OverflowLatest || id == rules::kV0OverflowRank ||
                            id == rules::kV0CannotGrow; // the engine's under vLLM v0's rules
            QCOMPARE(r.engine, (id > RuleId::Unexplained && id < RuleId::FirstRegistered) || v0);
            QVERIFY2(id == RuleId::Unexplained || ruleVarCount(id) >= 1, r.code);
        }
        QCOMPARE(std::string(ruleOf(rules::kSprptSuspend).code), std::string("sprpt_lp.suspend"));
        QCOMPARE(std::string(ruleOf(rules::kNeverFits).code), std::string("never_fits"));
        QVERIFY(rules::kTimeBillAdmit >= RuleId::FirstRegistered);
        // An id outside the book reads as "unexplained" (a damaged handle is not a rule).
        QCOMPARE(std::string(ruleOf(static_cast<RuleId>(ruleCount())).code),
                 std::string("unexplained"));
        RuleId none = RuleId::Unexplained;
        QVERIFY(!ruleFromCode("no.such_rule", &none));
        const Rule late{"late.rule",   "late",
                        RuleVars{"x"}, "registered after main",
                        false,         [](const double*) { return true; }};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, registerRule(late));
        QCOMPARE(ruleCount(), count);
    }

    // A replay that is told another decision than the run's does not reproduce it: the
    // check above can fail.
    void replayDetectsAnAlteredDecision() {
        Workload w;
        for (int i = 0; i < 6; ++i) w.requests.push_back(test::req(0.01 * i, 20, 10 + 5 * i));
        EngineLimits lim;
        lim.kv_capacity_tokens = 10000;
        lim.max_num_seqs = 2;
        const UnitModel unit;
        const auto fcfs = test::policy("fcfs");
        Simulator sim(w, unit, *fcfs, lim);
        sim.explain(true);
        const RunLog log = sim.run();
        QVERIFY(!log.explain.reasons.empty());
        // Swap the first two admissions of the run's second decision that admits.
        Explanation altered = log.explain;
        std::size_t first = altered.reasons.size(), second = first;
        for (std::size_t i = 1; i < altered.reasons.size(); ++i)
            if (altered.reasons[i].act == Act::Admit && altered.reasons[i].call > 0) {
                first = i;
                break;
            }
        QVERIFY(first < altered.reasons.size());
        // Delay it: admit the next request instead.
        for (std::size_t i = first + 1; i < altered.reasons.size(); ++i)
            if (altered.reasons[i].act == Act::Admit) {
                second = i;
                break;
            }
        QVERIFY(second < altered.reasons.size());
        std::swap(altered.reasons[first].req, altered.reasons[second].req);
        ReplayScheduler replay(altered, "fcfs");
        QString diff;
        try {
            Simulator again(w, unit, replay, lim);
            diff = test::firstEventDifference(log, again.run());
        } catch (const std::exception& e) {
            diff = e.what();
        }
        QVERIFY2(!diff.isEmpty(), "an altered replay reproduced the run");
    }
};

QTEST_GUILESS_MAIN(TestExplain)
#include "tst_explain.moc"
