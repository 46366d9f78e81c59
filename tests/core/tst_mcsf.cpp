// MC-SF against the exact optimum in the paper's discrete model, the engine's mcsf
// against the discrete algorithm, and the alpha-protection / beta-clearing baselines.
#include "exec/execution_model.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "sched/discrete_model.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"
#include "workload/random.h"

#include <QtTest>
#include <numeric>

using namespace kairos;
namespace d = kairos::discrete;

namespace {

// The instance as a workload sorted by arrival (and the instance in that order), with the
// limits under which the engine is the discrete model (Engine occupancy).
void inEngine(const d::Instance& in, Workload* w, d::Instance* sorted, EngineLimits* lim) {
    for (const auto& j : in.jobs) w->requests.push_back(test::req(j.arrival, j.prompt, j.output));
    w->sortByArrival();
    *sorted = in;
    for (std::size_t i = 0; i < w->size(); ++i)
        sorted->jobs[i] = {int(w->requests[i].arrival), w->requests[i].prompt_tokens,
                           w->requests[i].output_tokens};
    lim->kv_capacity_tokens = in.capacity;
    lim->chunked_prefill = true;
    lim->max_num_batched_tokens = 1 << 20;
    lim->max_num_seqs = 1 << 20;
}

// 80 short requests at 50/s: with a 400-token cache the benchmarks overflow and clear.
Workload crowded() {
    return test::generated(80, 50, "uniform:5,30", "uniform:5,60");
}

// A and B at t = 0, each 4 prompt tokens and 6 output tokens.
Workload twoAtZero() {
    Workload w;
    for (int i = 0; i < 2; ++i) {
        Request q;
        q.prompt_tokens = 4;
        q.output_tokens = 6;
        w.requests.push_back(q);
    }
    return w;
}

std::unique_ptr<Scheduler> policy(const std::string& name, PolicyParams p = {},
                                  const std::string& pred = "oracle") {
    return test::policy(name, std::move(p), pred, 9);
}
} // namespace

class TestMcsf : public QObject {
    Q_OBJECT
private slots:
    // The paper's notes: M = 10, four requests with s = 2 and o = 3, 4, 5, 6, all at round 0.
    // MC-SF starts (0, 0, 4, 8) (sum 12, latency 30); the optimum sums to 10 (latency 28).
    void paperCounterexample() {
        d::Instance in;
        in.capacity = 10;
        for (int o : {3, 4, 5, 6}) in.jobs.push_back({0, 2, o});
        const auto m = d::mcsf(in);
        QCOMPARE(m, (std::vector<int>{0, 0, 4, 8}));
        QCOMPARE(d::totalLatency(in, m), std::int64_t(30));
        const auto opt = d::optimal(in);
        QVERIFY(d::feasible(in, opt));
        QCOMPARE(std::accumulate(opt.begin(), opt.end(), 0), 10);
        QCOMPARE(d::totalLatency(in, opt), std::int64_t(28));
        QCOMPARE(d::totalLatency(in, d::bruteForce(in, 12)), std::int64_t(28));
    }

    // The exhaustive search agrees with an independent brute force over start vectors.
    void optimalEqualsBruteForce() {
        Rng r(17);
        for (int k = 0; k < 60; ++k) {
            const auto occ = k % 2 ? d::Occupancy::Paper : d::Occupancy::Engine;
            const d::Instance in = d::randomInstance(r, 2, 4, 3, 4, 6, k % 3 == 0 ? 3 : 0, occ);
            const auto opt = d::optimal(in), bf = d::bruteForce(in, 16);
            QVERIFY(d::feasible(in, opt));
            QCOMPARE(d::totalLatency(in, opt), d::totalLatency(in, bf));
        }
    }

    // MC-SF is never better than the optimum; on random all-at-zero instances its mean
    // ratio is close to 1. The paper reports 1.005 on its (unstated) synthetic instances;
    // here (3-6 jobs, s <= 3, o <= 6, M = largest need + U(0, 20)) it is about 1.01, and
    // tighter memory raises it (1.03-1.05 with 8 jobs). Bound: [1, 1.03].
    void ratioToOptimum() {
        Rng r(7);
        double sum = 0, online = 0;
        const int n = 300;
        for (int k = 0; k < n; ++k) {
            const d::Instance in = d::randomInstance(r, 3, 6, 3, 6, 20, 0, d::Occupancy::Paper);
            const auto m = d::mcsf(in), opt = d::optimal(in);
            QVERIFY(d::feasible(in, m));
            const double ratio = double(d::totalLatency(in, m)) / double(d::totalLatency(in, opt));
            QVERIFY2(ratio >= 1.0, "MC-SF beat the optimum: the search is wrong");
            sum += ratio;
            const d::Instance on = d::randomInstance(r, 3, 6, 3, 6, 20, 4, d::Occupancy::Paper);
            online += double(d::totalLatency(on, d::mcsf(on))) /
                      double(d::totalLatency(on, d::optimal(on)));
        }
        qInfo("MC-SF / optimum: all at round 0 %.4f, online arrivals %.4f (%d instances each)",
              sum / n, online / n, n);
        QVERIFY2(sum / n <= 1.03, qPrintable(QString::number(sum / n)));
        QVERIFY(online / n >= 1.0);
    }

    // The engine's mcsf with the unit model and chunked prefill makes the discrete
    // algorithm's decisions (Engine occupancy): same start rounds.
    void engineMatchesDiscrete() {
        Rng r(23);
        for (int k = 0; k < 40; ++k) {
            const d::Instance in = d::randomInstance(r, 3, 12, 8, 10, 25, 6, d::Occupancy::Engine);
            Workload w;
            d::Instance sorted;
            EngineLimits lim;
            inEngine(in, &w, &sorted, &lim);
            auto s = policy("mcsf");
            const RunLog log = simulate(w, UnitModel(), *s, lim);
            std::vector<int> starts(w.size(), -1);
            for (const Event& e : log.events)
                if (e.ev == Ev::Admit)
                    starts[static_cast<std::size_t>(e.req)] = static_cast<int>(e.t);
            QCOMPARE(starts, d::mcsf(sorted));
            const Summary sum = summarize(log);
            QCOMPARE(sum.preemptions, std::int64_t(0));
            QVERIFY(sum.kv_peak_tokens <= in.capacity);
        }
    }

    // The `optimal` policy replays the exhaustive search in the engine: the same start
    // rounds as discrete::optimal, and mcsf (online, no hindsight, never preempting with
    // exact lengths) is never below it. (A preempting policy can be: in the unit model a
    // recompute costs no time, so the non-preemptive optimum is not a bound for it.) It
    // refuses what it cannot solve.
    void optimalPolicyInTheEngine() {
        Rng r(31);
        double sum_ratio = 0;
        const int n = 40;
        for (int k = 0; k < n; ++k) {
            const d::Instance in = d::randomInstance(r, 3, 7, 6, 8, 20, 5, d::Occupancy::Engine);
            Workload w;
            d::Instance sorted;
            EngineLimits lim;
            inEngine(in, &w, &sorted, &lim);
            auto run = [&](const std::string& name) {
                auto s = policy(name);
                const RunLog log = simulate(w, UnitModel(), *s, lim);
                std::vector<int> starts(w.size(), -1);
                for (const Event& e : log.events)
                    if (e.ev == Ev::Admit) starts[std::size_t(e.req)] = int(e.t);
                const Summary sum = summarize(log);
                [&] { QCOMPARE(sum.completed, std::int64_t(w.size())); }();
                [&] { QVERIFY(sum.kv_peak_tokens <= in.capacity); }();
                return starts;
            };
            const auto opt = run("optimal");
            QCOMPARE(opt, d::optimal(sorted));
            const auto m = run("mcsf");
            const auto lo = d::totalLatency(sorted, opt), lm = d::totalLatency(sorted, m);
            QVERIFY(lm >= lo);
            sum_ratio += double(lm) / double(lo);
        }
        qInfo("engine mcsf / optimal over %d online instances: %.4f", n, sum_ratio / n);

        Workload nine;
        for (int i = 0; i < 9; ++i) nine.requests.push_back(test::req(0, 2, 2));
        EngineLimits lim;
        lim.kv_capacity_tokens = 100;
        lim.chunked_prefill = true;
        auto o = policy("optimal");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulate(nine, UnitModel(), *o, lim));
        nine.requests.resize(3);
        auto o2 = policy("optimal");
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            simulate(nine, EteModel(EteParams{0.01, 1e-4, 0, 0.01, 0, 0}), *o2, lim));
        nine.requests[1].arrival = 0.5;
        auto o3 = policy("optimal");
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, simulate(nine, UnitModel(), *o3, lim));
    }

    // With exact predictions mcsf never overflows, also with the ETE model and prefill-only
    // iterations; with noisy ones it may, and each overflow preempts (KV stays within M).
    void neverOverflowsWithExactPredictions() {
        EteParams p{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7};
        EteModel model(p);
        for (std::uint64_t seed = 1; seed <= 20; ++seed) {
            GenerateSpec g;
            g.count = 150;
            g.arrivals.rate = 20;
            g.arrivals.seed = seed;
            g.length_seed = seed;
            g.prompt = LengthDist::parse("lognormal:100,0.8,max=600");
            g.output = LengthDist::parse("lognormal:60,0.9,max=400");
            const Workload w = generateWorkload(g);
            EngineLimits lim;
            lim.kv_capacity_tokens = 3000;
            lim.block_size = seed % 2 ? 1 : 16;
            auto s = policy("mcsf");
            const Summary exact = summarize(simulate(w, model, *s, lim));
            QCOMPARE(exact.completed, std::int64_t(150));
            QCOMPARE(exact.preemptions, std::int64_t(0));
            QVERIFY(exact.kv_peak_tokens <= 3000);
            auto n = policy("mcsf", {}, "lognormal:0.6");
            const Summary noisy = summarize(simulate(w, model, *n, lim));
            QCOMPARE(noisy.completed, std::int64_t(150));
            QVERIFY(noisy.kv_peak_tokens <= 3000);
        }
    }

    // Unit model, M = 12, A and B (t=0, 4 -> 6 tokens). alpha = 0 admits both (5 + 5);
    // at t=2 they hold 6 + 6 = 12 and the next step overflows: both are cleared. The
    // queue is then B, A (preempted requests go to the front, in turn): B recomputes 6
    // tokens (needs 7), A does not fit beside it (7 + 7 > 12). B: 2 -> 3 prefill, ends 6;
    // A: 6 -> 7, ends 10. alpha = 0.6 (limit 4 tokens) admits A alone: no overflow.
    void protectGreedyByHand() {
        const Workload w = twoAtZero();
        EngineLimits lim;
        lim.kv_capacity_tokens = 12;
        auto g0 = policy("protect_greedy", {{"alpha", 0.0}});
        const auto m = perRequest(simulate(w, UnitModel(), *g0, lim));
        QCOMPARE(m[0].preemptions, 1);
        QCOMPARE(m[1].preemptions, 1);
        QCOMPARE(m[1].end, 6.0);
        QCOMPARE(m[0].end, 10.0);
        auto g6 = policy("protect_greedy", {{"alpha", 0.6}});
        const auto m6 = perRequest(simulate(w, UnitModel(), *g6, lim));
        QCOMPARE(m6[0].preemptions + m6[1].preemptions, 0);
        QCOMPARE(m6[0].end, 6.0);
        QCOMPARE(m6[1].end, 12.0);
    }

    // The paper's admission test is "would adding this prompt exceed (1 - alpha) M?", so no
    // request is admitted past the limit. M = 20, alpha = 0.5: limit 10. A, B, C at t = 0,
    // 4 prompt + 2 output tokens, each needing 5 at admission: A (5) and B (10) are admitted,
    // C (15 > 10) waits for them and ends at 4, not 2 (the check "usage so far <= limit"
    // admitted C too, one request past the limit). A request larger than the limit alone
    // still runs when the engine is idle (alpha = 0.8, limit 4).
    void protectAdmitsOnlyWithinTheLimit() {
        Workload w;
        for (int i = 0; i < 3; ++i) w.requests.push_back(test::req(0, 4, 2));
        w.sortByArrival();
        EngineLimits lim;
        lim.kv_capacity_tokens = 20;
        for (const char* name : {"protect_greedy", "protect_clearing"}) {
            auto g = policy(name, {{"alpha", 0.5}});
            const auto m = perRequest(simulate(w, UnitModel(), *g, lim));
            QCOMPARE(m[0].end, 2.0);
            QCOMPARE(m[1].end, 2.0);
            QCOMPARE(m[2].end, 4.0);
            auto big = policy(name, {{"alpha", 0.8}});
            const auto mb = perRequest(simulate(w, UnitModel(), *big, lim));
            QCOMPARE(mb[0].end, 2.0);
            QCOMPARE(mb[1].end, 4.0);
            QCOMPARE(mb[2].end, 6.0);
        }
    }

    // The paper's clearing "as unprocessed" (reset=1): A and B as above, M = 12, alpha = 0.
    // Both are admitted, overflow at t=2 and start over with nothing kept: the same state
    // again, so greedy loops for ever and says so. With vLLM's recompute (reset=0) the
    // same run finishes (tested above); alpha = 0.6 admits one at a time and never loops.
    void protectGreedyResetLoops() {
        const Workload w = twoAtZero();
        EngineLimits lim;
        lim.kv_capacity_tokens = 12;
        auto g = policy("protect_greedy", {{"alpha", 0.0}, {"reset", 1}});
        bool looped = false;
        try {
            simulate(w, UnitModel(), *g, lim);
        } catch (const SchedulerLoop& e) {
            looped = true;
            QVERIFY(QString(e.what()).contains("raise alpha"));
        }
        QVERIFY(looped);
        auto ok = policy("protect_greedy", {{"alpha", 0.6}, {"reset", 1}});
        const auto m = perRequest(simulate(w, UnitModel(), *ok, lim));
        QCOMPARE(m[0].end, 6.0);
        QCOMPARE(m[1].end, 12.0);
    }

    // With reset, a cleared request's tokens are generated again: it still ends with its
    // output length, and the run log's token accounting stays consistent.
    void protectClearingReset() {
        const Workload w = crowded();
        EngineLimits lim;
        lim.kv_capacity_tokens = 400;
        // Tight protection (alpha = 0.05) re-admits the cleared requests at once and clears
        // them again from scratch: the documented loop, named rather than run for ever.
        // (Until skipping ahead was made to equal stepping, a stretch run after a clear hid
        // the re-admission and this setting finished.)
        auto tight = policy("protect_clearing", {{"alpha", 0.05}, {"beta", 0.5}, {"reset", 1}});
        QVERIFY_THROWS_EXCEPTION(SchedulerLoop, (void)simulate(w, UnitModel(), *tight, lim));
        auto a = policy("protect_clearing", {{"alpha", 0.3}, {"beta", 0.5}, {"reset", 1}});
        const RunLog log = simulate(w, UnitModel(), *a, lim);
        const Summary s = summarize(log);
        QCOMPARE(s.completed, std::int64_t(80));
        QVERIFY(s.preemptions > 0);
        QVERIFY(s.kv_peak_tokens <= 400);
        const auto m = perRequest(log);
        for (std::size_t i = 0; i < w.size(); ++i)
            QCOMPARE(m[i].output_tokens, w.requests[i].output_tokens);
    }

    // beta-clearing clears some of the running requests at random (seeded): repeatable,
    // and it finishes everything.
    void protectClearing() {
        const Workload w = crowded();
        EngineLimits lim;
        lim.kv_capacity_tokens = 400;
        auto a = policy("protect_clearing", {{"alpha", 0.05}, {"beta", 0.5}});
        auto b = policy("protect_clearing", {{"alpha", 0.05}, {"beta", 0.5}});
        const RunLog la = simulate(w, UnitModel(), *a, lim), lb = simulate(w, UnitModel(), *b, lim);
        QCOMPARE(la.events.size(), lb.events.size());
        const Summary s = summarize(la);
        QCOMPARE(s.completed, std::int64_t(80));
        QVERIFY(s.preemptions > 0);
        QVERIFY(s.kv_peak_tokens <= 400);
    }
};

QTEST_GUILESS_MAIN(TestMcsf)
#include "tst_mcsf.moc"
