// Invariants of the simulator over many random workloads and engine settings.
#include "exec/execution_model.h"
#include "export/runlog_jsonl.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "sched/fcfs.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"
#include "workload/random.h"

#include <QtTest>
#include <cmath>
#include <sstream>

using namespace kairos;

namespace {

struct Case {
    Workload w;
    EngineLimits lim;
    bool unit = false;
    QString label;
};

Case randomCase(std::uint64_t seed) {
    Rng rng(seed);
    Case c;
    GenerateSpec g;
    g.count = static_cast<std::size_t>(rng.uniformInt(1, 120));
    g.arrivals.rate = rng.bernoulli(0.2) ? INFINITY : 0.5 + 20 * rng.uniform();
    g.arrivals.burstiness = rng.bernoulli(0.5) ? 1.0 : 0.3 + 2 * rng.uniform();
    g.arrivals.seed = seed;
    g.length_seed = seed + 1;
    g.prompt =
        LengthDist::parse("lognormal:" + std::to_string(rng.uniformInt(4, 400)) + ",0.9,max=2000");
    g.output =
        LengthDist::parse("lognormal:" + std::to_string(rng.uniformInt(1, 200)) + ",1.0,max=800");
    c.w = generateWorkload(g);
    c.lim.block_size = rng.bernoulli(0.5) ? 1 : 16;
    // Tight capacities force preemptions; some requests may not fit at all (killed).
    c.lim.kv_capacity_tokens = rng.uniformInt(200, 6000);
    c.lim.max_num_seqs = static_cast<std::int32_t>(rng.uniformInt(1, 64));
    c.lim.max_num_batched_tokens = static_cast<std::int32_t>(rng.uniformInt(16, 4096));
    c.lim.chunked_prefill = rng.bernoulli(0.5);
    c.unit = rng.bernoulli(0.3);
    std::ostringstream s;
    s << "seed " << seed << ": n=" << g.count << " cap=" << c.lim.kv_capacity_tokens
      << " block=" << c.lim.block_size << " seqs=" << c.lim.max_num_seqs
      << " tokens=" << c.lim.max_num_batched_tokens << " chunked=" << c.lim.chunked_prefill
      << " unit=" << c.unit;
    c.label = QString::fromStdString(s.str());
    return c;
}

RunLog runCase(const Case& c, bool skip) {
    EteParams p{0.02, 2e-4, 1e-8, 0.03, 3e-4, 2e-7}; // a, b, c, q0, q1, p
    EteModel ete(p);
    UnitModel unit;
    FcfsScheduler fcfs;
    EngineLimits lim = c.lim;
    lim.skip_ahead = skip;
    return simulate(c.w, c.unit ? static_cast<const ExecutionModel&>(unit) : ete, fcfs, lim);
}

} // namespace

class TestInvariants : public QObject {
    Q_OBJECT
private slots:
    void invariants_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 s = 1; s <= 150; ++s) QTest::newRow(qPrintable(QString::number(s))) << s;
    }

    void invariants() {
        QFETCH(quint64, seed);
        const Case c = randomCase(seed);
        const RunLog log = runCase(c, true);
        const auto n = c.w.requests.size();
        const std::int64_t cap = c.lim.kv_capacity_tokens / c.lim.block_size * c.lim.block_size;

        // Every request ends exactly once, finished with all its tokens or killed.
        std::vector<int> ends(n, 0);
        for (const Event& e : log.events) {
            if (e.ev == Ev::Finish) {
                ++ends[static_cast<std::size_t>(e.req)];
                QVERIFY2(e.value == c.w.requests[static_cast<std::size_t>(e.req)].output_tokens,
                         qPrintable(c.label));
            }
            if (e.ev == Ev::Kill) ++ends[static_cast<std::size_t>(e.req)];
        }
        for (std::size_t i = 0; i < n; ++i)
            QVERIFY2(ends[i] == 1, qPrintable(c.label + " req " + QString::number(i)));

        // Events in time order; iterations back to back, never overlapping.
        for (std::size_t i = 1; i < log.events.size(); ++i)
            QVERIFY2(log.events[i].t >= log.events[i - 1].t,
                     qPrintable(c.label + " event " + QString::number(i)));
        for (std::size_t i = 1; i < log.iters.size(); ++i)
            QVERIFY2(log.iters[i].t0 >= log.iters[i - 1].tEnd() - 1e-12, qPrintable(c.label));

        // KV use never above capacity.
        for (const IterSpan& s : log.iters) {
            QVERIFY2(s.kv_last <= cap && s.kv_first <= cap,
                     qPrintable(c.label + QString(" kv %1 > %2").arg(s.kv_last).arg(cap)));
            QVERIFY2(s.kv_first <= s.kv_last, qPrintable(c.label));
            QVERIFY2(s.d0 > 0 && s.n >= 1, qPrintable(c.label));
        }

        // Tokens are conserved across preemptions: a finished request emitted exactly its
        // output tokens, at strictly increasing times, the first at its first_token event.
        const auto times = allTokenTimes(log);
        const auto m = perRequest(log);
        for (std::size_t i = 0; i < n; ++i) {
            if (!m[i].finished) continue;
            QVERIFY2(
                static_cast<int>(times[i].size()) == c.w.requests[i].output_tokens,
                qPrintable(c.label + QString(" req %1: %2 tokens").arg(i).arg(times[i].size())));
            QCOMPARE(times[i].front(), m[i].first_token);
            QCOMPARE(times[i].back(), m[i].end);
            for (std::size_t k = 1; k < times[i].size(); ++k)
                QVERIFY(times[i][k] > times[i][k - 1]);
            QVERIFY(m[i].first_token >= m[i].arrival);
        }

        // Metrics agree with the RunLog: the ITL list is every gap between consecutive tokens.
        std::vector<std::pair<double, std::int64_t>> gaps;
        for (std::size_t i = 0; i < n; ++i)
            if (m[i].finished)
                for (std::size_t k = 1; k < times[i].size(); ++k)
                    gaps.emplace_back((times[i][k] - times[i][k - 1]) * 1e3, 1);
        SummaryOptions so;
        so.percentiles = {50, 90, 99};
        const Summary s = summarize(log, so);
        const Stats direct = describeWeighted(gaps, so.percentiles);
        QCOMPARE(s.itl_ms.count, direct.count);
        if (direct.count > 0) {
            KAIROS_COMPARE_NEAR(s.itl_ms.mean, direct.mean, 1e-6);
            KAIROS_COMPARE_NEAR(s.itl_ms.percentile(99), direct.percentile(99), 1e-6);
        }
        std::int64_t finished = 0;
        for (const auto& r : m) finished += r.finished;
        QCOMPARE(s.completed, finished);

        // Skipping ahead changes nothing but speed: same events, same token times.
        const RunLog stepped = runCase(c, false);
        QCOMPARE(stepped.events.size(), log.events.size());
        for (std::size_t i = 0; i < log.events.size(); ++i) {
            QCOMPARE(stepped.events[i].ev, log.events[i].ev);
            QCOMPARE(stepped.events[i].req, log.events[i].req);
            QCOMPARE(stepped.events[i].value, log.events[i].value);
            KAIROS_COMPARE_NEAR(stepped.events[i].t, log.events[i].t, 1e-9 * (1 + log.events[i].t));
        }
        QVERIFY(stepped.iters.size() >= log.iters.size());
        QCOMPARE(stepped.totalIterations(), log.totalIterations());

        // A RunLog written as JSONL and read back gives the same summary.
        std::stringstream buf;
        writeRunLogJsonl(log, buf);
        const RunLog back = readRunLogJsonl(buf, "roundtrip");
        const Summary s2 = summarize(back, so);
        QCOMPARE(s2.completed, s.completed);
        QCOMPARE(s2.itl_ms.count, s.itl_ms.count);
        QCOMPARE(s2.ttft_ms.mean, s.ttft_ms.mean);
        QCOMPARE(s2.kv_peak_tokens, s.kv_peak_tokens);
    }

    // Same inputs, same RunLog (determinism).
    void deterministic() {
        const Case c = randomCase(77);
        const RunLog a = runCase(c, true), b = runCase(c, true);
        QCOMPARE(a.events.size(), b.events.size());
        for (std::size_t i = 0; i < a.events.size(); ++i) {
            QCOMPARE(a.events[i].t, b.events[i].t);
            QCOMPARE(a.events[i].req, b.events[i].req);
        }
    }
};

QTEST_GUILESS_MAIN(TestInvariants)
#include "tst_invariants.moc"
