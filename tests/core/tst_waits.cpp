// Every wait explained (metrics/waits.h), checked rather than printed:
//  - for every registered policy (policyNames(), so a new one is covered without anyone
//    editing this file) on random workloads, limits, parameters and predictors, alone and
//    as a fleet of 2 to 4 replicas: each request's waits lie inside its stretches not
//    running, follow each other without a gap or an overlap, and add up to its whole time
//    not running (counted here from its events, independently) and, up to its first prefill,
//    to its queue delay as the metrics count it; none is left without a cause; every cause's
//    recorded numbers say what the cause says (seats: running >= max_num_seqs; KV: the
//    reservation, or the head of the queue's, exceeds the KV free; the router only in a
//    fleet); a run log's JSONL round trip keeps them;
//  - by hand: a request behind a one-seat engine, one behind KV and one behind the head of
//    the queue that does not fit, each with its span, numbers and who went ahead.
#include "export/runlog_jsonl.h"
#include "metrics/request_metrics.h"
#include "metrics/waits.h"
#include "random_cases.h"
#include "sim/engine.h"
#include "sim/fleet.h"
#include "test_util.h"
#include "util/input_error.h"

#include <QtTest>
#include <cmath>
#include <map>
#include <sstream>

using namespace kairos;

namespace {

using test::Case;
using test::makeCase;
using test::seedCount;

RunLog explainedRun(const Workload& w, Scheduler& s, const EngineLimits& lim,
                    const ExecutionModel& m) {
    Simulator sim(w, m, s, lim);
    sim.explain(true);
    return sim.run();
}

// FCFS (no watermark) on one seat, 1,000 tokens of KV, an iteration per time unit.
RunLog oneSeat(std::vector<Request> requests, bool explain) {
    Workload w;
    w.requests = std::move(requests);
    EngineLimits lim;
    lim.kv_capacity_tokens = 1000;
    lim.max_num_seqs = 1;
    const auto s = test::policyNoWatermark("fcfs");
    const UnitModel unit;
    Simulator sim(w, unit, *s, lim);
    sim.explain(explain);
    return sim.run();
}

// Its time not running, from the events alone: what the waits must add up to.
double notRunning(const RunLog& log, ReqId id) {
    double total = 0, since = NAN;
    bool queued = false, admitted = false, preempted = false, suspended = false;
    for (const Event& e : log.events) {
        if (e.req != id) continue;
        const bool waiting = queued || admitted || preempted || suspended;
        switch (e.ev) {
        case Ev::Arrive:
            queued = true;
            since = e.t;
            break;
        case Ev::PrefillStart:
        case Ev::Finish:
        case Ev::Kill:
            if (waiting) total += e.t - since;
            queued = admitted = preempted = suspended = false;
            break;
        case Ev::Resume:
            if (suspended) {
                total += e.t - since;
                suspended = false;
            }
            break;
        case Ev::Preempt:
            if (waiting) total += e.t - since;
            queued = admitted = suspended = false;
            preempted = true;
            since = e.t;
            break;
        case Ev::Suspend:
            suspended = true;
            since = e.t;
            break;
        default:
            break;
        }
    }
    return total;
}

// What is wrong with the waits of every request of `log` ("" if nothing).
QString checkWaits(const RunLog& log, std::map<std::string, double>* by_cause) {
    const ExplainIndex ix(log);
    const WaitIndex index(ix);
    const auto metrics = perRequest(log);
    for (ReqId id = 0; id < log.num_requests; ++id) {
        const auto waits = index.of(id);
        // The shared index tells what a fresh one does (its queue cache changes nothing).
        if (id % 16 == 0 && waits.size() != waitsOf(ix, id).size())
            return QString("req %1: the shared index and a fresh one disagree").arg(id);
        const double expect = notRunning(log, id);
        double sum = 0, queued = 0;
        const double arrival = ix.arrivalOf(id);
        const double qd = metrics[std::size_t(id)].queue_delay;
        for (std::size_t i = 0; i < waits.size(); ++i) {
            const Wait& w = waits[i];
            const QString at = QString("req %1, wait %2 [%3, %4] %5")
                                   .arg(id)
                                   .arg(i)
                                   .arg(w.from, 0, 'g', 17)
                                   .arg(w.to, 0, 'g', 17)
                                   .arg(waitCauseName(w.cause));
            if (!(w.to >= w.from)) return at + ": ends before it starts";
            if (i > 0 && w.from < waits[i - 1].to) return at + ": overlaps the one before";
            if (w.cause == WaitCause::Unrecorded) return at + ": no cause";
            if (w.cause == WaitCause::Seats && !(w.running >= w.seats))
                return at + QString(": seats, but %1 of %2 running").arg(w.running).arg(w.seats);
            if (w.cause == WaitCause::Kv &&
                !(w.kv_need > w.kv_free || (w.blocked_by >= 0 && w.blocked_need > w.kv_free)))
                return at + QString(": KV, but needs %1 of %2 free").arg(w.kv_need).arg(w.kv_free);
            if (w.cause == WaitCause::Router &&
                (!log.fleet() || w.state != WaitState::Queued || w.blocked_by >= 0))
                return at + ": the router blamed for a wait in its replica's queue";
            if (w.cause == WaitCause::Order && w.passed_over < 1)
                return at + ": 'others taken in first' with nobody taken in";
            if (w.running > w.peak_running && w.peak_running >= 0)
                return at + ": running above its peak";
            if (w.ahead_count < std::int64_t(w.ahead.size())) return at + ": ahead miscounted";
            if (w.passed_over > w.decisions) return at + ": passed over more than decided";
            sum += w.seconds();
            if (!std::isnan(qd) && w.to <= arrival + qd + 1e-9 * std::max(1.0, arrival + qd))
                queued += w.seconds();
            if (by_cause) (*by_cause)[waitCauseName(w.cause)] += w.seconds();
        }
        const double tol = 1e-9 * std::max(1.0, std::fabs(expect));
        if (std::fabs(sum - expect) > tol)
            return QString("req %1: waits add up to %2 s, not running %3 s")
                .arg(id)
                .arg(sum, 0, 'g', 17)
                .arg(expect, 0, 'g', 17);
        if (!waits.empty() && waits.front().state == WaitState::Queued &&
            waits.front().from != arrival)
            return QString("req %1: its first wait starts after its arrival").arg(id);
        if (!std::isnan(qd) && std::fabs(queued - qd) > tol)
            return QString("req %1: queued waits %2 s, queue delay %3 s")
                .arg(id)
                .arg(queued, 0, 'g', 17)
                .arg(qd, 0, 'g', 17);
        if (std::fabs(timeNotRunning(ix, id) - expect) > tol)
            return QString("req %1: timeNotRunning disagrees with the events").arg(id);
    }
    return {};
}

QString causes(const std::map<std::string, double>& by) {
    QString s;
    for (const auto& [k, v] : by) s += QString(" %1 %2 s;").arg(QString::fromStdString(k)).arg(v);
    return s;
}

} // namespace

class TestWaits : public QObject {
    Q_OBJECT
private slots:
    void everyWaitHasACause_data() { test::policyRows(); }
    void everyWaitHasACause() {
        QFETCH(QString, policy);
        const std::string name = policy.toStdString();
#ifdef KAIROS_SANITIZED
        const int seeds = seedCount(3, "KAIROS_WAITS_SEEDS"); // ASan: a quarter, for CI's time
#else
        const int seeds = seedCount(12, "KAIROS_WAITS_SEEDS");
#endif
        std::map<std::string, double> by;
        int runs = 0;
        for (int seed = 1; seed <= seeds; ++seed) {
            const Case c = makeCase(static_cast<std::uint64_t>(seed) + 900);
            const std::int64_t need = std::max<std::int64_t>(16, c.largest_need);
            Rng rng(static_cast<std::uint64_t>(seed) * 37 + 5);
            const std::int64_t caps[] = {need + c.lim.block_size, 2 * need, 4 * need};
            EngineLimits lim = c.lim;
            lim.kv_capacity_tokens = caps[rng.uniformInt(0, 2)];
            const std::int64_t cap = lim.kv_capacity_tokens / lim.block_size * lim.block_size;
            const PolicyConfig pc = test::randomConfig(name, static_cast<std::uint64_t>(seed), rng);
            const QString what = test::describeRun(pc, c, cap);
            const EteModel ete(c.ete);
            const UnitModel unit;
            const ExecutionModel& model = c.unit ? static_cast<const ExecutionModel&>(unit) : ete;
            RunLog log;
            try {
                const auto s = makeScheduler(pc);
                log = explainedRun(c.w, *s, lim, model);
            } catch (const SchedulerLoop&) {
                continue; // documented (tst_liveness checks where)
            } catch (const std::exception& e) {
                QFAIL(qPrintable(what + ": " + e.what()));
            }
            QString bad = checkWaits(log, &by);
            QVERIFY2(bad.isEmpty(), qPrintable(what + ": " + bad));
            // Read back from JSONL, the same waits.
            std::stringstream io;
            writeRunLogJsonl(log, io);
            const RunLog back = readRunLogJsonl(io, "waits.jsonl");
            const ExplainIndex a(log), b(back);
            for (ReqId id = 0; id < log.num_requests; ++id) {
                const auto wa = waitsOf(a, id), wb = waitsOf(b, id);
                QCOMPARE(wa.size(), wb.size());
                for (std::size_t i = 0; i < wa.size(); ++i) {
                    QCOMPARE(describeWait(wa[i]), describeWait(wb[i]));
                    QCOMPARE(wa[i].from, wb[i].from);
                }
            }
            // A fleet of 2 to 4 replicas behind a random router.
            FleetRun run;
            run.workload = &c.w;
            run.model = &model;
            run.limits = lim;
            run.fleet.replicas = static_cast<int>(rng.uniformInt(2, 4));
            const Router routers[] = {Router::RoundRobin, Router::LeastOutstanding,
                                      Router::LeastKv};
            run.fleet.router = routers[rng.uniformInt(0, 2)];
            run.make_scheduler = [&] { return makeScheduler(pc); };
            run.explain = true;
            try {
                log = simulateFleet(run);
            } catch (const SchedulerLoop&) {
                continue;
            } catch (const std::exception& e) {
                QFAIL(qPrintable(what + " (fleet): " + e.what()));
            }
            bad = checkWaits(log, &by);
            QVERIFY2(bad.isEmpty(), qPrintable(what + " (fleet): " + bad));
            ++runs;
        }
        qInfo("%s: %d runs, waits by cause:%s", name.c_str(), runs, qPrintable(causes(by)));
        QVERIFY(runs > 0);
    }

    // One seat (max_num_seqs 1), one iteration per time unit: A (prompt 5, 3 tokens) is
    // taken in at 0 and runs [0, 3); B arrives at 0.5, inside A's prefill iteration [0, 1):
    // it waits for that iteration (ahead: A, whose prefill it carries), then on the seat
    // from 1 until A finishes at 3, when FCFS takes it in: 2.5 s, its queue delay.
    void oneSeatByHand() {
        const RunLog log = oneSeat({test::req(0, 5, 3), test::req(0.5, 5, 2)}, true);
        const ExplainIndex ix(log);
        const auto waits = waitsOf(ix, 1);
        QCOMPARE(int(waits.size()), 2);
        QCOMPARE(waits[0].cause, WaitCause::Step);
        QCOMPARE(waits[0].from, 0.5);
        QCOMPARE(waits[0].to, 1.0);
        QCOMPARE(waits[0].ahead, std::vector<ReqId>{0});
        QCOMPARE(waits[0].running, 1);
        QCOMPARE(waits[1].cause, WaitCause::Seats);
        QCOMPARE(waits[1].from, 1.0);
        QCOMPARE(waits[1].to, 3.0);
        QCOMPARE(waits[1].running, 1);
        QCOMPARE(waits[1].seats, 1);
        QCOMPARE(waits[1].rule, std::string("max_num_seqs"));
        QCOMPARE(waits[1].passed_over, 0);
        QCOMPARE(timeNotRunning(ix, 1), 2.5);
        QCOMPARE(waitStory(waits),
                 std::string("waited 2.50 s: every seat taken for 2.00 s behind as many as 1 "
                             "running requests; an iteration in progress for 500 ms"));
        QVERIFY(waitsOf(ix, 0).empty()); // taken in at its arrival
    }

    // KV of 16 tokens, token by token (block 1), no watermark: A (prompt 10, 5 tokens)
    // reserves 11 at 0 (its first token's slot included) and grows a token per iteration
    // after. B (prompt 10) arrives at 0.5 and needs 11: from the decision at 1 it waits on
    // KV (5 free) until A finishes at 5. C (prompt 2, needs 3) arrives at 0.6: 5 tokens are
    // free at 1, but B is
    // first in FCFS's order and does not fit, and FCFS takes no one past it: C waits on KV
    // behind B (vLLM's head of line). At 5 both are taken in.
    void kvAndHeadOfLineByHand() {
        Workload w;
        w.requests = {test::req(0, 10, 5), test::req(0.5, 10, 2), test::req(0.6, 2, 1)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 16;
        lim.max_num_seqs = 8;
        const auto s = test::policyNoWatermark("fcfs");
        const RunLog log = explainedRun(w, *s, lim, UnitModel());
        const ExplainIndex ix(log);
        const auto b = waitsOf(ix, 1);
        QCOMPARE(int(b.size()), 2);
        QCOMPARE(b[0].cause, WaitCause::Step);
        QCOMPARE(b[1].cause, WaitCause::Kv);
        QCOMPARE(b[1].from, 1.0);
        QCOMPARE(b[1].to, 5.0);
        QCOMPARE(b[1].kv_need, std::int64_t(11));
        QCOMPARE(b[1].kv_free, std::int64_t(5)); // 16 - 11: A's reservation holds its 1st token
        QCOMPARE(b[1].blocked_by, -1);
        const auto c = waitsOf(ix, 2);
        QCOMPARE(int(c.size()), 2);
        QCOMPARE(c[1].cause, WaitCause::Kv);
        QCOMPARE(c[1].kv_need, std::int64_t(3));
        QCOMPARE(c[1].blocked_by, 1);
        QCOMPARE(c[1].blocked_need, std::int64_t(11));
        QCOMPARE(c[1].to, 5.0);
        QVERIFY(describeWait(c[1]).find("behind req 1, ahead of it in the policy's order") !=
                std::string::npos);
    }

    // A run log cut short at a line's end is refused (its header declares how many lines of
    // each kind follow), not read as a shorter run whose waits would be told wrongly.
    void truncatedLogIsRefused() {
        const RunLog log =
            oneSeat({test::req(0, 5, 3), test::req(0.5, 5, 2), test::req(0.7, 4, 2)}, true);
        std::stringstream io;
        writeRunLogJsonl(log, io);
        const std::string whole = io.str();
        std::vector<std::string> lines;
        std::istringstream in(whole);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
        for (std::size_t keep : {lines.size() - 1, lines.size() / 2, std::size_t(3)}) {
            std::string cut;
            for (std::size_t i = 0; i < keep; ++i) cut += lines[i] + "\n";
            std::istringstream cin(cut);
            try {
                (void)readRunLogJsonl(cin, "cut.jsonl");
                QFAIL(qPrintable(
                    QString("a log of %1 of %2 lines was read").arg(keep).arg(lines.size())));
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("cut.jsonl") != std::string::npos, e.what());
            }
        }
        std::istringstream full(whole);
        QCOMPARE(readRunLogJsonl(full, "whole.jsonl").events.size(), log.events.size());
    }

    // A run log without decisions recorded still has its waits, each said to be unrecorded,
    // adding up to the time not running.
    void unrecordedRunsSaySo() {
        const RunLog log = oneSeat({test::req(0, 5, 3), test::req(0.5, 5, 2)}, false);
        const ExplainIndex ix(log);
        const auto waits = waitsOf(ix, 1);
        QCOMPARE(int(waits.size()), 1);
        QCOMPARE(waits[0].cause, WaitCause::Unrecorded);
        QCOMPARE(waits[0].seconds(), 2.5);
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, waitsOf(ix, 2));
    }
};

QTEST_GUILESS_MAIN(TestWaits)
#include "tst_waits.moc"
