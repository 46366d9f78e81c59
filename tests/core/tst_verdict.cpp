// reproduce's verdicts: bands by hand, the seed aggregation's mean and 95 % interval, and
// the tally that counts only comparable, non-calibrated rows.
#include "repro/repro.h"
#include "test_util.h"

#include <QtTest>
#include <cmath>

using namespace kairos::repro;

namespace {
Claim row(nlohmann::json paper, double v, Band b) {
    Claim c;
    c.paper = "x";
    c.claim = "c";
    c.paper_value = std::move(paper);
    c.kairos_value = v;
    c.band = b;
    judge(c);
    return c;
}
} // namespace

class TestVerdict : public QObject {
    Q_OBJECT
private slots:
    void bandsByHand() {
        // Within 25 % of 2: [1.5, 2.5]; of the range [1.66, 2.01]: [1.245, 2.5125].
        QVERIFY(Band::relative(0.25).contains(2.0, 2.5));
        QVERIFY(!Band::relative(0.25).contains(2.0, 2.51));
        QVERIFY(Band::relative(0.25).contains(nlohmann::json{1.66, 2.01}, 1.25));
        QVERIFY(!Band::relative(0.25).contains(nlohmann::json{1.66, 2.01}, 1.24));
        // A negative figure: within 25 % of -84 is [-105, -63].
        QVERIFY(Band::relative(0.25).contains(-84.0, -63.5));
        QVERIFY(!Band::relative(0.25).contains(-84.0, -60.0));
        QVERIFY(Band::absolute(2).contains(6.0, 8.0));
        QVERIFY(!Band::absolute(2).contains(6.0, 9.0));
        QVERIFY(Band::direction(1).contains(3.0, 1.01));
        QVERIFY(!Band::direction(1).contains(3.0, 0.99));
        QVERIFY(Band::atMost().contains(1.0, 1.0));
        QVERIFY(!Band::atMost().contains(1.0, 1.001));
        QVERIFY(!Band::relative(0.25).contains(2.0, std::nan("")));
        QVERIFY(!Band::relative(0.25).contains(nullptr, 2.0));
        QCOMPARE(Band::relative(0.25).text(), std::string("within 25 %"));
    }

    void verdicts() {
        QCOMPARE(row(2.0, 2.1, Band::relative(0.25)).verdict, Verdict::Agrees);
        QCOMPARE(row(2.0, 3.1, Band::relative(0.25)).verdict, Verdict::Disagrees);
        QCOMPARE(row(nullptr, 3.1, Band{}).verdict, Verdict::NotComparable);
        Claim c = row(2.0, 2.0, Band::relative(0.25));
        c.calibrated = true;
        judge(c);
        QCOMPARE(c.verdict, Verdict::Calibrated);
        c.calibrated = false;
        c.not_comparable = "invented curve";
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY_THROWS_EXCEPTION(std::logic_error, row(2.0, 2.0, Band{}));
        const Tally t = tally({row(2.0, 2.1, Band::relative(0.25)),
                               row(2.0, 9.0, Band::relative(0.25)), c, row(nullptr, 1.0, Band{})});
        QCOMPARE(t.agree, 1);
        QCOMPARE(t.comparable, 2);
        QCOMPARE(t.not_comparable, 2);
    }

    // Three seeds 1, 2, 3 against a paper figure of 2.4: mean 2, sd 1, half-width
    // t(0.975, 2) / sqrt(3) = 4.303 / 1.7321 = 2.4843; within 25 % of 2.4 is [1.8, 3].
    void seedAggregation() {
        std::vector<std::vector<Claim>> runs;
        for (double v : {1.0, 2.0, 3.0}) runs.push_back({row(2.4, v, Band::relative(0.25))});
        runs[1][0].cause = "measured";
        const auto a = aggregate(runs);
        QCOMPARE(a.size(), std::size_t(1));
        QCOMPARE(a[0].seeds, 3);
        KAIROS_COMPARE_NEAR(a[0].kairos_value, 2.0, 1e-12);
        KAIROS_COMPARE_NEAR(a[0].ci_low, 2.0 - 4.303 / std::sqrt(3.0), 1e-9);
        KAIROS_COMPARE_NEAR(a[0].ci_high, 2.0 + 4.303 / std::sqrt(3.0), 1e-9);
        QCOMPARE(a[0].verdict, Verdict::Agrees);
        QCOMPARE(a[0].cause, std::string("measured"));
        runs[2][0].claim = "another";
        QVERIFY_THROWS_EXCEPTION(std::logic_error, aggregate(runs));
    }

    void uncoveredHasReasons() {
        QVERIFY(uncoveredClaims().size() >= 5);
        for (const auto& u : uncoveredClaims()) QVERIFY(!u.reason.empty() && !u.claim.empty());
    }
};

QTEST_GUILESS_MAIN(TestVerdict)
#include "tst_verdict.moc"
