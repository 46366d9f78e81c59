// Trail's refined predictions: the Bayesian smoothing by hand, the MAE calibration, and
// sprpt_lp driven by refined predictions in the engine.
#include "exec/execution_model.h"
#include "metrics/summary.h"
#include "predict/trail_predictor.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"

#include <QtTest>
#include <thread>

using namespace kairos;

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
        auto check = [&](bool backwards) {
            TrailPredictor t(o, 11);
            t.reset(w);
            for (std::size_t k = 0; k < w.size(); ++k) {
                const std::size_t i = backwards ? w.size() - 1 - k : k;
                for (int gen = 0; gen <= w.requests[i].output_tokens; ++gen)
                    if (t.remaining(static_cast<ReqId>(i), gen) != expected[i][std::size_t(gen)])
                        return false;
            }
            return true;
        };
        bool a = false, b = false;
        std::thread ta([&] { a = check(false); }), tb([&] { b = check(true); });
        ta.join();
        tb.join();
        QVERIFY(a);
        QVERIFY(b);
    }

    // sprpt_lp re-ranks as often as the predictions are refined, and finishes everything.
    void sprptWithRefinedPredictions() {
        GenerateSpec g;
        g.count = 200;
        g.arrivals.rate = 8;
        g.prompt = LengthDist::parse("lognormal:200,0.6,max=1000");
        g.output = LengthDist::parse("lognormal:120,0.8,max=500");
        const Workload w = generateWorkload(g);
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
