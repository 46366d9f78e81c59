// Statistics with numpy's definitions, weighted samples, goodput parsing, percentile keys.
#include "metrics/compare.h"
#include "metrics/stats.h"
#include "metrics/summary.h"
#include "test_util.h"
#include "workload/random.h"

#include <QtTest>
#include <cmath>
#include <map>
#include <sstream>

using namespace kairos;

class TestMetrics : public QObject {
    Q_OBJECT
private slots:
    // numpy: np.mean([1,2,3,4]) = 2.5, np.std = sqrt(1.25) = 1.1180339887,
    // np.percentile(x, 90) = 3 + 0.7*(4-3) = 3.7, np.percentile(x, 99) = 3.97.
    void numpyValues() {
        const Stats s = describe({4, 1, 3, 2}, {90, 99, 0, 100});
        QCOMPARE(s.count, std::int64_t(4));
        KAIROS_COMPARE_NEAR(s.mean, 2.5, 1e-15);
        KAIROS_COMPARE_NEAR(s.median, 2.5, 1e-15);
        KAIROS_COMPARE_NEAR(s.std, 1.1180339887498949, 1e-15);
        KAIROS_COMPARE_NEAR(s.percentile(90), 3.7, 1e-12);
        KAIROS_COMPARE_NEAR(s.percentile(99), 3.97, 1e-12);
        KAIROS_COMPARE_NEAR(s.percentile(0), 1.0, 0);
        KAIROS_COMPARE_NEAR(s.percentile(100), 4.0, 0);
    }

    // Comparing runs by hand. Before: mean TTFT 100 ms, 2 req/s, 3 suspensions; after:
    // 80 ms (-20, -20 %, better: lower is better), 1 req/s (worse: higher is better), 5
    // suspensions (a change with no better direction: verdict 0). A run against itself:
    // every change 0, every verdict 0.
    void compareByHand() {
        Summary a, b;
        a.ttft_ms = describe({100, 100}, {99});
        b.ttft_ms = describe({80, 80}, {99});
        a.request_throughput = 2;
        b.request_throughput = 1;
        a.suspensions = 3;
        b.suspensions = 5;
        std::map<std::string, MetricDelta> d;
        for (const auto& x : compareRuns(a, b)) d[x.key] = x;
        KAIROS_COMPARE_NEAR(d.at("mean_ttft_ms").change, -20.0, 1e-12);
        KAIROS_COMPARE_NEAR(d.at("mean_ttft_ms").relative, -0.2, 1e-12);
        QCOMPARE(d.at("mean_ttft_ms").verdict, 1);
        QCOMPARE(d.at("p99_ttft_ms").verdict, 1);
        QCOMPARE(d.at("request_throughput").verdict, -1);
        QCOMPARE(d.at("suspensions").verdict, 0);
        QCOMPARE(d.at("suspensions").change, 2.0);
        QVERIFY(std::isnan(d.at("request_goodput").change)); // no SLOs: undefined
        for (const auto& x : compareRuns(b, b)) {
            QCOMPARE(x.verdict, 0);
            QVERIFY(x.change == 0 || std::isnan(x.change));
        }
        // A metric only one run has (utility of a class) is NaN on the other side.
        b.robot.push_back({"urgent", 3, 1.5, 3.0, 0, 0, 0});
        const auto withRobot = compareRuns(a, b);
        QCOMPARE(withRobot.back().key, std::string("utility_pct_urgent"));
        KAIROS_COMPARE_NEAR(withRobot.back().after, 50.0, 1e-12);
        QVERIFY(std::isnan(withRobot.back().before));
        QCOMPARE(withRobot.back().verdict, 0);
        // As text: the rows of the hand example, column by column.
        const std::string table = deltaTable(compareRuns(a, b), "fcfs", "sjf");
        // The fields after a metric's label on its line.
        auto fields = [&](const std::string& label) {
            const auto at = table.find(label);
            std::vector<std::string> f;
            if (at == std::string::npos) return f;
            std::istringstream in(
                table.substr(at + label.size(), table.find('\n', at) - at - label.size()));
            for (std::string x; in >> x;) f.push_back(x);
            return f;
        };
        using F = std::vector<std::string>;
        QCOMPARE(fields("Mean TTFT (ms)"), (F{"100", "80", "-20.0", "%", "better"}));
        QCOMPARE(fields("Request throughput (req/s)"), (F{"2", "1", "-50.0", "%", "worse"}));
        QCOMPARE(fields("Suspensions"), (F{"3", "5", "+66.7", "%"})); // no better direction
        QCOMPARE(fields("Request goodput (req/s)"), (F{"-", "-", "-"}));
        QVERIFY(table.rfind("metric", 0) == 0 && table.find("fcfs") < table.find("sjf"));
    }

    void emptyIsNan() {
        const Stats s = describe({}, {99});
        QCOMPARE(s.count, std::int64_t(0));
        QVERIFY(std::isnan(s.mean) && std::isnan(s.percentile(99)));
    }

    // A weight w must act exactly as w copies, for random inputs.
    void weightedEqualsExpanded() {
        Rng r(5);
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<std::pair<double, std::int64_t>> w;
            std::vector<double> flat;
            const int n = static_cast<int>(r.uniformInt(1, 30));
            for (int i = 0; i < n; ++i) {
                const double v = std::round(r.uniform() * 50) / 4; // ties happen
                const auto k = r.uniformInt(0, 5);
                w.emplace_back(v, k);
                for (int j = 0; j < k; ++j) flat.push_back(v);
            }
            const std::vector<double> qs{1, 25, 50, 90, 99.9};
            const Stats a = describeWeighted(w, qs), b = describe(flat, qs);
            QCOMPARE(a.count, b.count);
            if (b.count == 0) continue;
            KAIROS_COMPARE_NEAR(a.mean, b.mean, 1e-9);
            KAIROS_COMPARE_NEAR(a.std, b.std, 1e-9);
            for (double q : qs) KAIROS_COMPARE_NEAR(a.percentile(q), b.percentile(q), 1e-12);
        }
    }

    void goodputParse() {
        const GoodputSlo g = GoodputSlo::parse({"ttft:200", "e2el:5000"});
        QCOMPARE(*g.ttft_ms, 200.0);
        QCOMPARE(*g.e2el_ms, 5000.0);
        QVERIFY(!g.tpot_ms);
        for (const char* bad : {"ttft", "ttft:-1", "itl:20", "tpot:x"})
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, GoodputSlo::parse({bad}));
    }

    void keys() {
        QCOMPARE(percentileKey(99), std::string("p99"));
        QCOMPARE(percentileKey(99.9), std::string("p99.9"));
        QCOMPARE(percentileKey(50), std::string("p50"));
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
