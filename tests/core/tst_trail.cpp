// Trail's refined predictions: the Bayesian smoothing by hand, the MAE calibration, and
// sprpt_lp driven by refined predictions in the engine.
#include "exec/execution_model.h"
#include "metrics/summary.h"
#include "predict/trail_predictor.h"
#include "sched/priority.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"
#include "workload/random.h"

#include <QtTest>
#include <cmath>
#include <thread>

using namespace kairos;

// A random chat workload for the property tests below: count, rate, burstiness and the
// lengths' medians drawn from `rng` (in that order), each up to its bound.
struct Bounds {
    int count;
    double rate;
    int prompt_median, prompt_max, output_median, output_max;
};
Workload randomWorkload(Rng& rng, quint64 seed, const Bounds& b, int least = 20) {
    GenerateSpec g;
    g.count = static_cast<std::size_t>(rng.uniformInt(least, b.count));
    g.arrivals.rate = 1 + b.rate * rng.uniform();
    g.arrivals.burstiness = rng.bernoulli(0.5) ? 1.0 : 0.3 + 2 * rng.uniform();
    g.arrivals.seed = seed;
    g.length_seed = seed + 1;
    g.prompt = LengthDist::parse("lognormal:" + std::to_string(rng.uniformInt(4, b.prompt_median)) +
                                 ",0.9,max=" + std::to_string(b.prompt_max));
    g.output = LengthDist::parse("lognormal:" + std::to_string(rng.uniformInt(5, b.output_median)) +
                                 ",1.0,max=" + std::to_string(b.output_max));
    return generateWorkload(g);
}

class TestTrail : public QObject {
    Q_OBJECT
private slots:
    // Three bins, p = 0.1: T = [[1, 0, 0], [0.1, 0.9, 0], [0, 0.1, 0.9]] (row i -> column j).
    // post = (0.2, 0.5, 0.3): prior = post T = (0.2 + 0.05, 0.45 + 0.03, 0.27) = (0.25, 0.48,
    // 0.27). q = (0.1, 0.6, 0.3): (0.025, 0.288, 0.081) / 0.394. Two tokens (T^2): prior = (0.25 +
    // 0.048, 0.432 + 0.027, 0.243) = (0.298, 0.459, 0.243); times q: (0.0298, 0.2754, 0.0729) /
    // 0.3781.
    void smoothingByHand() {
        const std::vector<double> post{0.2, 0.5, 0.3}, q{0.1, 0.6, 0.3};
        const auto one = trailSmooth(post, q, 0.1, 1);
        KAIROS_COMPARE_NEAR(one[0], 0.025 / 0.394, 1e-12);
        KAIROS_COMPARE_NEAR(one[1], 0.288 / 0.394, 1e-12);
        KAIROS_COMPARE_NEAR(one[2], 0.081 / 0.394, 1e-12);
        const auto two = trailSmooth(post, q, 0.1, 2);
        KAIROS_COMPARE_NEAR(two[0], 0.0298 / 0.3781, 1e-12);
        KAIROS_COMPARE_NEAR(two[1], 0.2754 / 0.3781, 1e-12);
        KAIROS_COMPARE_NEAR(two[2], 0.0729 / 0.3781, 1e-12);
    }

    // The paper: refined predictions have a 2.66x lower MAE than prompt-only ones. The
    // token noise is calibrated to that ratio and the ratio measured back.
    void calibratedToPaperRatio() {
        GenerateSpec g;
        g.count = 150;
        g.output = LengthDist::parse("lognormal:120,0.8,max=500");
        const Workload w = generateWorkload(g);
        const TrailOptions o = calibrateTrail(w, TrailOptions{}, 2.66, 1);
        const TrailMae m = trailMae(w, o, 1);
        qInfo("prompt-only MAE %.1f tokens, refined %.1f, ratio %.3f (token noise %.3f bins)",
              m.prompt_only, m.refined, m.ratio(), o.token_noise);
        KAIROS_COMPARE_NEAR(m.ratio(), 2.66, 0.05);
        // A noiseless per-token classifier does much better; a noisier one worse.
        TrailOptions sharp = o, blunt = o;
        sharp.token_noise = 0;
        blunt.token_noise = o.token_noise * 2;
        QVERIFY(trailMae(w, sharp, 1).ratio() > 2.66);
        QVERIFY(trailMae(w, blunt, 1).ratio() < 2.66);
    }

    // Predictions do not depend on the order of the questions.
    void orderIndependent() {
        GenerateSpec g;
        g.count = 20;
        const Workload w = generateWorkload(g);
        TrailPredictor a(TrailOptions{}, 3), b(TrailOptions{}, 3);
        a.reset(w);
        b.reset(w);
        const double a50 = a.remaining(4, 50), a10 = a.remaining(4, 10);
        const double b10 = b.remaining(4, 10), b50 = b.remaining(4, 50);
        QCOMPARE(a50, b50);
        QCOMPARE(a10, b10);
        TrailOptions every4;
        every4.every = 4;
        TrailPredictor c(every4, 3);
        c.reset(w);
        QCOMPARE(c.refreshEvery(), 4);
        QCOMPARE(c.remaining(4, 9),
                 std::max(1.0, c.remaining(4, 8) - 1)); // no classifier call at 9
    }

    // The shared table (one per workload lengths, options and seed, filled lazily across
    // runs and threads) gives exactly the filter's value: the posterior rebuilt here step by
    // step from the public smoothing and classifier, for every token of every request, every
    // classifier period, and from predictors asking in different orders on two threads.
    void sharedTableEqualsTheFilter_data() {
        QTest::addColumn<int>("every");
        QTest::newRow("every token") << 1;
        QTest::newRow("every 3 tokens") << 3;
    }
    void sharedTableEqualsTheFilter() {
        QFETCH(int, every);
        GenerateSpec g;
        g.count = 40;
        g.output = LengthDist::parse("lognormal:60,0.8,max=300");
        const Workload w = generateWorkload(g);
        TrailOptions o;
        o.every = every;
        const double width = o.l_max / o.bins, p = std::min(1.0, o.bins / o.l_max);
        TrailPredictor ref(o, 11);
        ref.reset(w);
        std::vector<std::vector<double>> expected(w.size());
        for (std::size_t i = 0; i < w.size(); ++i) {
            const ReqId id = static_cast<ReqId>(i);
            std::vector<double> post = ref.classifier(id, 0);
            auto est = [&] {
                double e = 0;
                for (std::size_t b = 0; b < post.size(); ++b)
                    e += post[b] * (static_cast<double>(b) + 0.5) * width;
                return e;
            };
            double last = est();
            for (int gen = 0; gen <= w.requests[i].output_tokens; ++gen) {
                if (gen > 0 && gen % every == 0) {
                    post = trailSmooth(post, ref.classifier(id, gen), p, every);
                    last = est();
                }
                expected[i].push_back(std::max(1.0, last - (gen - gen / every * every)));
            }
        }
        // Each predictor's answers, in request order whichever order it asked in.
        auto answers = [&](bool backwards) {
            TrailPredictor t(o, 11);
            t.reset(w);
            std::vector<std::vector<double>> got(w.size());
            for (std::size_t k = 0; k < w.size(); ++k) {
                const std::size_t i = backwards ? w.size() - 1 - k : k;
                for (int gen = 0; gen <= w.requests[i].output_tokens; ++gen)
                    got[i].push_back(t.remaining(static_cast<ReqId>(i), gen));
            }
            return got;
        };
        std::vector<std::vector<double>> fwd, bwd;
        std::thread ta([&] { fwd = answers(false); }), tb([&] { bwd = answers(true); });
        ta.join();
        tb.join();
        // The same bits whoever filled the table first.
        QVERIFY(fwd == bwd);
        // The textbook filter's value: the fast one does not normalise the classifier's
        // output (the factor cancels) and sums the estimate in the smoothing pass, so the
        // last bits may differ.
        double worst = 0;
        for (std::size_t i = 0; i < w.size(); ++i)
            for (std::size_t gen = 0; gen < fwd[i].size(); ++gen)
                worst = std::max(worst, std::fabs(fwd[i][gen] - expected[i][gen]) /
                                            std::max(1.0, expected[i][gen]));
        QVERIFY2(worst < 1e-12, QByteArray::number(worst).constData());
    }

    // The classifier's noise draws: the normal quantile inverts the normal CDF (from
    // std::erfc) within Acklam's bound (relative error 1.15e-9 in x, so a CDF error of
    // |x| phi(x) 1.15e-9), in the centre, at the region boundaries and far in both tails,
    // and is odd.
    void normalQuantileInvertsTheCdf() {
        double worst = 0; // error / bound
        for (double u : {1e-300, 1e-100, 1e-12, 1e-6, 0.001, 0.02, 0.02425, 0.0243, 0.1, 0.3, 0.5,
                         0.7, 0.9, 0.97575, 0.99, 0.999999}) {
            const double x = trailNormalQuantile(u);
            const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
            const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
            const double bound = 1.15e-9 * std::fabs(x) * pdf + 1e-16;
            worst = std::max(worst, std::fabs(cdf - u) / std::min(u, 1 - u) /
                                        (bound / std::min(cdf, 1 - cdf)));
            if (u >= 0.001) // 1 - u is exact enough to test the symmetry
                QVERIFY(std::fabs(trailNormalQuantile(1 - u) + x) <
                        1e-9 * std::max(1.0, std::fabs(x)));
        }
        QVERIFY2(worst < 1.0, QByteArray::number(worst).constData());
        QCOMPARE(trailNormalQuantile(0.5), 0.0);
        QVERIFY(std::fabs(trailNormalQuantile(0.975) - 1.959963984540054) < 1e-8);
    }

    // The register-resident filter (10 bins, one call per period: a cold refined run's
    // inner loop) and the generic step give the same estimates and posterior to the bit:
    // on random likelihood rows, on rows that shrink the total below 2^-600 (rescaled), and
    // on all-zero rows (the uniform reset), with random posteriors and transition rates.
    void registerFilterEqualsGeneric() {
        Rng rng(17);
        for (int trial = 0; trial < 60; ++trial) {
            std::vector<double> post(10);
            for (double& v : post) v = rng.uniform();
            const double p = trial % 3 == 0 ? 1.0 : 0.5 * rng.uniform();
            const double width = 1.0 + 99.0 * rng.uniform();
            std::vector<std::vector<float>> rows(static_cast<std::size_t>(1 + trial * 7));
            for (std::size_t j = 0; j < rows.size(); ++j) {
                rows[j].resize(10);
                for (float& q : rows[j])
                    q = trial % 5 == 1 ? 1e-6f // the floor alone: rescaled every ~30 calls
                        : trial % 5 == 2 && j % 9 == 4 ? 0.0f // a zero row: reset
                                                       : static_cast<float>(rng.uniform());
            }
            std::vector<double> a = post, b = post;
            const std::vector<double> ea = trailFilterGeneric(a, rows, p, width);
            const std::vector<double> eb = trailFilterRegisters(b, rows, p, width);
            QVERIFY2(ea == eb, qPrintable(QString("trial %1: estimates differ").arg(trial)));
            QVERIFY2(a == b, qPrintable(QString("trial %1: posteriors differ").arg(trial)));
        }
    }

    // firstAbove reads ahead exactly: the first token count in (generated, limit] whose
    // remaining() exceeds the threshold, by brute force, for random requests, ages, limits
    // and thresholds, every classifier period, in both orders of filling the table.
    void firstAboveIsTheFirstTokenAbove() {
        GenerateSpec g;
        g.count = 60;
        g.output = LengthDist::parse("lognormal:80,1.0,max=600");
        const Workload w = generateWorkload(g);
        Rng rng(5);
        for (int every : {1, 2, 3, 7}) {
            TrailOptions o;
            o.every = every;
            TrailPredictor t(o, 21 + static_cast<std::uint64_t>(every));
            t.reset(w);
            for (int trial = 0; trial < 3000; ++trial) {
                const auto id = static_cast<ReqId>(rng.uniformInt(0, 59));
                const int out = w.requests[static_cast<std::size_t>(id)].output_tokens;
                const int gen = static_cast<int>(rng.uniformInt(0, std::max(0, out - 1)));
                const int limit = static_cast<int>(rng.uniformInt(gen, out + 50));
                const double threshold = rng.bernoulli(0.1) ? 0.5 : 1 + 300 * rng.uniform();
                int expected = limit + 1;
                for (int x = gen + 1; x <= std::min(limit, out - 1); ++x)
                    if (t.remaining(id, x) > threshold) {
                        expected = x;
                        break;
                    }
                QVERIFY2(
                    t.firstAbove(id, gen, limit, threshold) == expected,
                    qPrintable(QString("every %1 req %2 gen %3 limit %4 threshold %5: %6 vs %7")
                                   .arg(every)
                                   .arg(id)
                                   .arg(gen)
                                   .arg(limit)
                                   .arg(threshold)
                                   .arg(t.firstAbove(id, gen, limit, threshold))
                                   .arg(expected)));
            }
        }
    }

    // sprpt_lp with refined predictions runs until a prediction can change a decision
    // (PriorityOptions::look_ahead, the predictor reading ahead in its table) instead of
    // re-ranking every token, and reads only the running requests that may still be
    // preempted (PriorityOptions::tracked). That must change no decision: over random workloads,
    // engine limits (tight KV, few seats, blocks, chunked prefill), C (0 to unlimited), classifier
    // periods and execution models, the run log's events are those of the token-by-token
    // run: the same events of the same requests with the same values, at the same times
    // (to rounding: one skipped-ahead stretch sums its iteration times in closed form).
    void lookAheadChangesNoDecision_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 s = 1; s <= 200; ++s) QTest::newRow(qPrintable(QString::number(s))) << s;
    }
    void lookAheadChangesNoDecision() {
        QFETCH(quint64, seed);
        Rng rng(seed);
        const Workload w = randomWorkload(rng, seed, {250, 30, 400, 1500, 250, 700});
        EngineLimits lim;
        lim.block_size = rng.bernoulli(0.5) ? 1 : 16;
        lim.kv_capacity_tokens = rng.uniformInt(3000, 40000);
        lim.max_num_seqs = static_cast<std::int32_t>(rng.uniformInt(2, 64));
        lim.max_num_batched_tokens = static_cast<std::int32_t>(rng.uniformInt(512, 4096));
        lim.chunked_prefill = rng.bernoulli(0.3);
        const double Cs[] = {0.0, 0.2, 0.5, 0.8, 1.0, 3.0, INFINITY};
        PriorityOptions po;
        po.C = Cs[rng.uniformInt(0, 6)];
        TrailOptions to;
        to.every = rng.bernoulli(0.6) ? 1 : static_cast<int>(rng.uniformInt(2, 6));
        const bool unit = rng.bernoulli(0.3);
        const QString label = QString("n=%1 C=%2 every=%3 seqs=%4 kv=%5 block=%6 chunked=%7 "
                                      "unit=%8")
                                  .arg(w.size())
                                  .arg(po.C)
                                  .arg(to.every)
                                  .arg(lim.max_num_seqs)
                                  .arg(lim.kv_capacity_tokens)
                                  .arg(lim.block_size)
                                  .arg(lim.chunked_prefill)
                                  .arg(unit);
        EteModel ete(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        UnitModel unit_model;
        // The reference also reads every running request at each decision (tracked off):
        // the list of preemptible ones must change no decision either.
        auto run = [&](bool look_ahead) {
            PriorityOptions o = po;
            o.look_ahead = look_ahead;
            o.tracked = look_ahead;
            PriorityScheduler s(o, std::make_shared<TrailPredictor>(to, seed + 7));
            return simulate(w, unit ? static_cast<const ExecutionModel&>(unit_model) : ete, s, lim);
        };
        const RunLog ahead = run(true), step = run(false);
        const QString diff = test::firstEventDifference(ahead, step);
        QVERIFY2(diff.isEmpty(), qPrintable(label + ": " + diff));
        // Reading ahead is the point: on a loaded run it asks the scheduler less often.
        QVERIFY(ahead.iters.size() <= step.iters.size());
    }

    // Where the engine has a decode clock and keys follow it (a prediction counting down,
    // a deadline), the running requests stay in order between decisions
    // (PriorityOptions::clocked) instead of being read and sorted at each. That must change
    // no decision: over random workloads, limits (tight KV, few seats, blocks, chunked
    // prefill under both engines' rules, prefix caching), keys, predictors and C, the run
    // log's events are exactly those of the scanning run, and the clock was used wherever
    // the engine has one (not vLLM v0's chunked budget, which leaves decodes out).
    void clockedRankingChangesNoDecision_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 s = 1; s <= 150; ++s) QTest::newRow(qPrintable(QString::number(s))) << s;
    }
    void clockedRankingChangesNoDecision() {
        QFETCH(quint64, seed);
        Rng rng(seed);
        Workload w = randomWorkload(rng, seed, {400, 40, 600, 2000, 300, 900}, 30);
        const bool deadline = rng.bernoulli(0.3);
        if (deadline) // budgets for some, the slack for the others
            for (auto& r : w.requests)
                if (rng.bernoulli(0.6)) r.budget_s = 0.5 + 20 * rng.uniform();
        EngineLimits lim;
        lim.block_size = rng.bernoulli(0.5) ? 1 : 16;
        lim.kv_capacity_tokens = rng.uniformInt(3000, 60000);
        lim.max_num_seqs = static_cast<std::int32_t>(rng.uniformInt(2, 128));
        lim.max_num_batched_tokens = static_cast<std::int32_t>(rng.uniformInt(2048, 8192));
        lim.chunked_prefill = rng.bernoulli(0.4);
        lim.rules = rng.bernoulli(0.5) ? EngineRules::Kairos : EngineRules::VllmV0;
        lim.prefix_caching = lim.block_size > 1 && rng.bernoulli(0.3);
        lim.skip_ahead = rng.bernoulli(0.8);
        const double Cs[] = {0.2, 0.5, 0.8, 1.0, 3.0, INFINITY};
        PriorityOptions po;
        po.C = Cs[rng.uniformInt(0, 5)];
        const char* predictors[] = {"oracle", "lognormal:0.8", "bucket:50,0.7"};
        const std::string predictor = predictors[rng.uniformInt(0, 2)];
        if (deadline) {
            po.key = PriorityOptions::Key::Deadline;
            po.policy = "edf";
            po.slack = 1 + 10 * rng.uniform();
        }
        const QString label =
            QString("n=%1 %2 C=%3 seqs=%4 kv=%5 block=%6 chunked=%7 rules=%8 cache=%9 skip=%10")
                .arg(w.size())
                .arg(deadline ? QString("edf") : QString::fromStdString(predictor))
                .arg(po.C)
                .arg(lim.max_num_seqs)
                .arg(lim.kv_capacity_tokens)
                .arg(lim.block_size)
                .arg(lim.chunked_prefill)
                .arg(engineRulesName(lim.rules))
                .arg(lim.prefix_caching)
                .arg(lim.skip_ahead);
        EteModel ete(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        bool used = false;
        auto run = [&](bool clocked) {
            PriorityOptions o = po;
            o.clocked = clocked;
            PriorityScheduler s(o, makePredictor(predictor, seed + 7));
            RunLog log = simulate(w, ete, s, lim);
            if (clocked) used = s.clocked();
            return log;
        };
        const RunLog clocked = run(true), scanned = run(false);
        const QString diff = test::firstEventDifference(clocked, scanned);
        QVERIFY2(diff.isEmpty(), qPrintable(label + ": " + diff));
        QCOMPARE(clocked.iters.size(), scanned.iters.size());
        QVERIFY2(used == !lim.vllmV0Chunked(), qPrintable(label));
        // The rows must move running requests under the clock, or they show nothing.
        static int clocked_rows_ = 0, clocked_moves_ = 0;
        ++clocked_rows_;
        if (used && std::any_of(clocked.events.begin(), clocked.events.end(), [](const Event& e) {
                return e.ev == Ev::Suspend || e.ev == Ev::Preempt;
            }))
            ++clocked_moves_;
        if (clocked_rows_ == 150) qInfo("%d of 150 rows move running requests", clocked_moves_);
        if (clocked_rows_ == 150)
            QVERIFY2(clocked_moves_ >= 40, qPrintable(QString("only %1 of 150 rows suspend or "
                                                              "preempt under the clock")
                                                          .arg(clocked_moves_)));
    }

    // sprpt_lp re-ranks as often as the predictions are refined, and finishes everything.
    void sprptWithRefinedPredictions() {
        const Workload w =
            test::generated(200, 8, "lognormal:200,0.6,max=1000", "lognormal:120,0.8,max=500");
        EteModel model(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7});
        EngineLimits lim;
        lim.kv_capacity_tokens = 20000;
        lim.max_num_seqs = 16;
        PolicyConfig c;
        c.name = "sprpt_lp";
        c.predictor = "trail";
        auto s = makeScheduler(c);
        const Summary sum = summarize(simulate(w, model, *s, lim));
        QCOMPARE(sum.completed, std::int64_t(200));
        QVERIFY(sum.kv_peak_tokens <= 20000);
    }
};

QTEST_GUILESS_MAIN(TestTrail)
#include "tst_trail.moc"
