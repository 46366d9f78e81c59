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

    // A stated figure's band: the paper's value +- its precision against Kairos's 95 %
    // interval over the seeds (TimeBill's decode MAPE 1.69 %, two decimals: +-0.005).
    void measuredBandsMeetTheSeedsInterval() {
        const Band b = Band::measured(0.005);
        QCOMPARE(b.text(), std::string("+-0.005 meets the 95 % interval"));
        // One seed: the value itself, within the precision.
        QCOMPARE(row(1.69, 1.694, b).verdict, Verdict::Agrees);
        QCOMPARE(row(1.69, 1.696, b).verdict, Verdict::Disagrees);
        QVERIFY(b.contains(1.69, 1.685) && !b.contains(1.69, 1.684));
        // Seeds 0.9, 1.4, 1.8: mean 1.3667, interval 1.3667 +- 4.303 * 0.2603 = [0.247, 2.487],
        // which holds 1.69; seeds 1.2, 1.25, 1.3: [1.126, 1.374], which does not.
        auto over = [&](std::initializer_list<double> vs, nlohmann::json paper) {
            std::vector<std::vector<Claim>> runs;
            for (double v : vs) runs.push_back({row(paper, v, b)});
            return aggregate(runs)[0];
        };
        const Claim wide = over({0.9, 1.4, 1.8}, 1.69);
        QCOMPARE(wide.verdict, Verdict::Agrees);
        QVERIFY(wide.rule.find("95 % interval over the seeds") != std::string::npos);
        QCOMPARE(over({1.2, 1.25, 1.3}, 1.69).verdict, Verdict::Disagrees);
        // A range ([1.66, 2.01], Trail's gain): the interval must reach into it.
        QCOMPARE(over({1.2, 1.25, 1.3}, nlohmann::json{1.66, 2.01}).verdict, Verdict::Disagrees);
        QCOMPARE(over({1.5, 1.6, 1.7}, nlohmann::json{1.66, 2.01}).verdict, Verdict::Agrees);
        // Identical seeds: an interval of zero width, judged as one value.
        QCOMPARE(over({98.1, 98.1, 98.1}, 59.5).verdict, Verdict::Disagrees);
        // A gain (no effect at 1) whose interval holds 1 is not resolved, even though the
        // interval also holds the paper's 1.83: seeds 0.5, 2.4, 4.3 give [-2.72, 7.12].
        {
            std::vector<std::vector<Claim>> runs;
            for (double v : {0.5, 2.4, 4.3})
                runs.push_back({row(1.83, v, Band::measured(0.005, 1))});
            const Claim g = aggregate(runs)[0];
            QCOMPARE(g.verdict, Verdict::NotComparable);
            QVERIFY(g.rule.find("excludes no effect") != std::string::npos);
            // Without the no-effect value the same row agrees: the paper's figure is inside.
            QCOMPARE(over({0.5, 2.4, 4.3}, 1.83).verdict, Verdict::Agrees);
        }
    }

    // Rule 4: a ratio is judged only when both sides are positive. -202 / -152 = 1.33 would
    // "agree" with a paper's 1.42 within 25 % although -202 is the worse utility.
    void ratiosOfNonPositiveValuesAreNotJudged() {
        Claim c;
        c.paper = "timely";
        c.claim = "urgent utility TimelyLLM / segmented EDF";
        c.paper_value = 1.42;
        c.band = Band::relative(0.25);
        c.ratio(-202.0, -152.0);
        KAIROS_COMPARE_NEAR(c.kairos_value, 202.0 / 152.0, 1e-15);
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY(c.rule.find("both sides are positive") != std::string::npos);
        QVERIFY(c.not_comparable.find("-202") != std::string::npos);
        // A zero denominator and a negative numerator alone: not judged either.
        c.ratio(3.0, 0.0);
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        c.ratio(-1.0, 2.0);
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        // Both positive: the band decides (1.5 is within 25 % of 1.42; 2.0 is not).
        c.ratio(3.0, 2.0);
        judge(c);
        QCOMPARE(c.verdict, Verdict::Agrees);
        QVERIFY(c.not_comparable.empty()); // the earlier rule's reason is gone
        QVERIFY(c.rule.find("band") == 0);
        c.ratio(4.0, 2.0);
        judge(c);
        QCOMPARE(c.verdict, Verdict::Disagrees);
        // An experiment's own reason stays whatever the values.
        c.not_comparable = "rests on an invented curve";
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QCOMPARE(c.not_comparable, std::string("rests on an invented curve"));
    }

    // Over seeds the sides are their means: one seed's negative denominator does not rule
    // the row out when the mean is positive, and the reverse.
    void ratiosOverSeedsUseTheMeanSides() {
        auto seed = [](double n, double d) {
            Claim c;
            c.paper = "x";
            c.claim = "ratio";
            c.paper_value = 2.0;
            c.band = Band::relative(0.5);
            c.ratio(n, d);
            judge(c);
            return std::vector<Claim>{c};
        };
        // Denominators -1, 3, 4: mean 2; numerators 4, 4, 4: mean 4. The row's value stays
        // the mean of the seeds' ratios, (-4 + 4/3 + 1) / 3 = -0.5556, as for any claim.
        const auto a = aggregate({seed(4, -1), seed(4, 3), seed(4, 4)});
        QCOMPARE(a[0].seed_values.size(), std::size_t(3));
        KAIROS_COMPARE_NEAR(a[0].compared["denominator"].get<double>(), 2.0, 1e-12);
        KAIROS_COMPARE_NEAR(a[0].compared["numerator"].get<double>(), 4.0, 1e-12);
        QVERIFY(a[0].verdict != Verdict::NotComparable); // the mean sides are positive
        const auto b = aggregate({seed(4, -3), seed(4, -3), seed(4, 1)});
        QCOMPARE(b[0].verdict, Verdict::NotComparable);
        // A value compared in one seed only is a bug of the experiment.
        auto odd = seed(4, 2);
        odd[0].compared.erase("denominator");
        QVERIFY_THROWS_EXCEPTION(std::logic_error, aggregate({seed(4, 2), odd}));
    }

    // A gain over a baseline is judged only where the baseline queues: at 0.8 of FCFS's
    // service rate with 0.1 % of its latency spent waiting, no order can gain, and a 1.00x
    // "gain" says nothing about the paper's 1.66-2.01x.
    void gainsWhereNothingQueuesAreNotJudged() {
        Claim c = row(nlohmann::json{1.66, 2.01}, 1.0, Band::relative(0.25));
        QCOMPARE(c.verdict, Verdict::Disagrees); // not a gain claim: the band decides
        c.load = 0.8;
        c.baseline_queue_share = 0.001;
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY(c.rule.find("gain") == 0);
        QVERIFY(c.not_comparable.find("0.8") != std::string::npos);
        c.baseline_queue_share = 0.30; // FCFS queues: judged again, by the band
        judge(c);
        QCOMPARE(c.verdict, Verdict::Disagrees);
        QVERIFY(c.not_comparable.empty());
        c.kairos_value = 1.8;
        judge(c);
        QCOMPARE(c.verdict, Verdict::Agrees);
        const nlohmann::json j = toJson({c})[0];
        QCOMPARE(j["load"].get<double>(), 0.8);
        QVERIFY(auditText({c}).find("load:     0.8") != std::string::npos);
    }

    // Rule 7: a direction (which side of 1) is judged only when the seeds resolve it.
    void directionsTheSeedsDoNotResolveAreNotJudged() {
        auto seeds = [](std::vector<double> v) {
            std::vector<std::vector<Claim>> runs;
            for (double x : v) runs.push_back({row(3.0, x, Band::direction(1))});
            return aggregate(runs)[0];
        };
        // 0.99, 1.01, 1.003: mean 1.001, the interval contains 1.
        const Claim unresolved = seeds({0.99, 1.01, 1.003});
        QCOMPARE(unresolved.verdict, Verdict::NotComparable);
        QVERIFY(unresolved.rule.find("direction") == 0);
        // 1.10, 1.12, 1.11: above 1 beyond doubt; agrees with the paper's 3 (above 1).
        QCOMPARE(seeds({1.10, 1.12, 1.11}).verdict, Verdict::Agrees);
        QCOMPARE(seeds({0.90, 0.92, 0.91}).verdict, Verdict::Disagrees);
        // "At least 1" is a side too: 0.90, 1.20, 1.05 (mean 1.05) does not resolve it.
        std::vector<std::vector<Claim>> runs;
        for (double x : {0.90, 1.20, 1.05}) runs.push_back({row(1.0, x, Band::atLeast())});
        const Claim one_sided = aggregate(runs)[0];
        QCOMPARE(one_sided.verdict, Verdict::NotComparable);
        QVERIFY(one_sided.rule.find("one-sided") == 0);
        runs.clear();
        for (double x : {1.50, 1.60, 1.70}) runs.push_back({row(1.0, x, Band::atLeast())});
        QCOMPARE(aggregate(runs)[0].verdict, Verdict::Agrees);
    }

    // Rule 6: a claim resting on a condition of the paper's setting (memory binds, the
    // baseline leaves room, the curve has a peak) is judged only where Kairos's setting has
    // it; over seeds, the premise's mean decides, as for the figure itself.
    void premisesTheSettingLacksAreNotJudged() {
        const Premise binds{"peak KV over capacity", 0.43, 0.9, "C trades memory"};
        Claim c = row(2.4, 2.4, Band::relative(0.25));
        QCOMPARE(c.verdict, Verdict::Agrees);
        c.premises = {binds};
        c.cause = "latency varies 0.8 % over C";
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY(c.rule.find("premise") == 0);
        QCOMPARE(c.not_comparable,
                 std::string("peak KV over capacity is 0.43 here, under the 0.9 the claim needs: "
                             "C trades memory"));
        // The row keeps its measured cause beside the reason.
        const nlohmann::json j = toJson({c})[0];
        QCOMPARE(j["cause"].get<std::string>(),
                 c.not_comparable + ". Measured: latency varies 0.8 % over C");
        QCOMPARE(j["premises"][0]["value"].get<double>(), 0.43);
        QCOMPARE(j["premises"][0]["at_least"].get<double>(), 0.9);
        QVERIFY(auditText({c}).find("premise:  peak KV over capacity = 0.43") != std::string::npos);
        c.premises[0].value = 0.95; // the setting has it: judged again, by the band
        judge(c);
        QCOMPARE(c.verdict, Verdict::Agrees);
        QVERIFY(c.not_comparable.empty());
        c.premises[0].value = std::nan(""); // not measured: not judged
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        // Seeds at 0.8, 1.0, 1.0: mean 0.933, judged; 0.8, 0.8, 1.0: mean 0.867, not.
        auto seeds = [&](std::vector<double> v) {
            std::vector<std::vector<Claim>> runs;
            for (double x : v) {
                Claim s = row(2.4, 2.4, Band::relative(0.25));
                s.premises = {binds};
                s.premises[0].value = x;
                judge(s);
                runs.push_back({s});
            }
            return aggregate(runs)[0];
        };
        const Claim judged = seeds({0.8, 1.0, 1.0});
        KAIROS_COMPARE_NEAR(judged.premises[0].value, 2.8 / 3, 1e-12);
        QCOMPARE(judged.verdict, Verdict::Agrees);
        QCOMPARE(seeds({0.8, 0.8, 1.0}).verdict, Verdict::NotComparable);
        std::vector<std::vector<Claim>> odd{{row(2.4, 2.4, Band::relative(0.25))},
                                            {row(2.4, 2.4, Band::relative(0.25))}};
        odd[1][0].premises = {binds};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, aggregate(odd));
    }

    // Rule 9: an agreement the null model reaches too is no evidence. TimeBill's decode MAPE
    // 1.69 % (+-0.005): Kairos's 1.692 agrees; a constant model's 1.694 agrees too, so the
    // row is not counted; at 1.9 % the null model disagrees and the row agrees.
    void agreementsMustBeatTheNullModel() {
        Claim c = row(1.69, 1.692, Band::measured(0.005));
        QCOMPARE(c.verdict, Verdict::Agrees);
        c.null_model = "a constant time";
        c.null_value = 1.694;
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QCOMPARE(c.null_verdict, Verdict::Agrees);
        QVERIFY(c.rule.find("null model") == 0);
        QVERIFY(c.not_comparable.find("a constant time") != std::string::npos);
        c.null_value = 1.9;
        judge(c);
        QCOMPARE(c.verdict, Verdict::Agrees);
        QCOMPARE(c.null_verdict, Verdict::Disagrees);
        const nlohmann::json j = toJson({c})[0];
        QCOMPARE(j["null_model"].get<std::string>(), std::string("a constant time"));
        QCOMPARE(j["null_value"].get<double>(), 1.9);
        QCOMPARE(j["null_verdict"].get<std::string>(), std::string("disagrees"));
        QCOMPARE(j["paper_value_source"].get<std::string>(), std::string("the paper's text"));
        // A row of Kairos's own names no source in the paper's text.
        Claim own = c;
        own.paper_value = nullptr;
        QCOMPARE(toJson({own})[0]["paper_value_source"].get<std::string>(),
                 std::string("none: the paper gives no figure"));
        // Over seeds the null's values get their own interval: 1.5, 1.7, 1.9 (mean 1.7,
        // t interval [1.20, 2.20]) meets 1.69 +- 0.005, so the row is not counted.
        std::vector<std::vector<Claim>> runs;
        for (double v : {1.5, 1.7, 1.9}) {
            Claim r = row(1.69, 1.69, Band::measured(0.005));
            r.null_model = "a constant time";
            r.null_value = v;
            runs.push_back({r});
        }
        const Claim a = aggregate(runs)[0];
        KAIROS_COMPARE_NEAR(a.null_value, 1.7, 1e-12);
        KAIROS_COMPARE_NEAR(a.null_ci_low, 1.7 - 4.303 * 0.2 / std::sqrt(3.0), 1e-9);
        QCOMPARE(a.verdict, Verdict::NotComparable);
        // A side claim's default null is no effect: at the edge it is on no side.
        const Claim side = row(1.0, 1.2, Band::atLeast());
        QCOMPARE(side.verdict, Verdict::Agrees);
        QCOMPARE(side.null_model, std::string("no effect"));
        QCOMPARE(side.null_verdict, Verdict::Disagrees);
    }

    // Rules 5 and 6 exclude a magnitude, never a direction: a gain the paper puts above no
    // effect (1.91 = +191 %, no effect 0) measured wholly below it, with a premise unmet,
    // disagrees; inside the interval's reach of no effect it stays not comparable.
    void premisesNeverExcuseADirection() {
        const Premise room{"the highest gain any order reaches", 0.2, 1.0, "no room"};
        auto seeds = [&](std::vector<double> v) {
            std::vector<std::vector<Claim>> runs;
            for (double x : v) {
                Claim s = row(191.0, x, Band::measured(0.5, 0));
                s.premises = {room};
                runs.push_back({s});
            }
            return aggregate(runs)[0];
        };
        const Claim wrong = seeds({-40, -44, -48});
        QCOMPARE(wrong.verdict, Verdict::Disagrees);
        QVERIFY(wrong.rule.find("direction") == 0);
        QCOMPARE(seeds({-40, 10, 30}).verdict, Verdict::NotComparable);
        QCOMPARE(seeds({40, 44, 48}).verdict, Verdict::NotComparable); // right side, premise unmet
        // The same where the baseline barely queues (rule 5).
        Claim q = row(2.0, 0.5, Band::measured(0.005, 1));
        q.load = 0.3;
        q.baseline_queue_share = 0.01;
        judge(q);
        QCOMPARE(q.verdict, Verdict::Disagrees);
        q.kairos_value = 1.5;
        judge(q);
        QCOMPARE(q.verdict, Verdict::NotComparable);
    }

    // Rule 10: a figure from outside the paper's text is judged but not tallied.
    void figuresFromElsewhereAreNotTallied() {
        Claim c = row(0.24, 0.24, Band::measured(0.015));
        c.paper_value_source = "PAPERS.md's notes";
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY(c.not_comparable.find("PAPERS.md's notes") != std::string::npos);
        QVERIFY(c.not_comparable.find("agrees (not tallied)") != std::string::npos);
        QCOMPARE(tally({c}).comparable, 0);
        QCOMPARE(toJson({c})[0]["paper_value_source"].get<std::string>(),
                 std::string("PAPERS.md's notes"));
    }

    // Rule 11: a verdict stands only if every reading of what the paper leaves unstated
    // gives it; the readings are averaged over the seeds like the figure.
    void readingsThatFlipAreNoVerdict() {
        Claim c = row(81.5, 81.5, Band::measured(0.05));
        c.readings = {{"the system prompt computed", 81.52}};
        judge(c);
        QCOMPARE(c.verdict, Verdict::Agrees); // both readings agree
        c.readings.push_back({"joins not serialised", 95.0});
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY(c.not_comparable.find("joins not serialised: 95 (disagrees)") != std::string::npos);
        QVERIFY(c.not_comparable.find("as run Kairos agrees") != std::string::npos);
        QCOMPARE(toJson({c})[0]["readings"].size(), std::size_t(2));
        // A disagreement flipped to an agreement is no verdict either; over seeds the mean.
        std::vector<std::vector<Claim>> runs;
        for (double x : {60.0, 62.0, 64.0}) {
            Claim s = row(81.5, x, Band::measured(0.05));
            s.readings = {{"cached", x + 19.5}};
            runs.push_back({s});
        }
        const Claim a = aggregate(runs)[0];
        KAIROS_COMPARE_NEAR(a.readings[0].value, 81.5, 1e-12);
        QCOMPARE(a.verdict, Verdict::NotComparable);
    }

    // Rule 11 over the paper's own words: the figure judged against the paper's value as
    // another reading of its text gives it ("183 %" as a ratio, 1.83, or an increase, 2.83).
    void paperReadingsThatFlipAreNoVerdict() {
        Claim c = row(1.83, 2.54, Band::measured(0.005, 1));
        QCOMPARE(c.verdict, Verdict::Disagrees);
        c.paper_readings = {{"read as an increase", 3.5}};
        judge(c);
        QCOMPARE(c.verdict, Verdict::Disagrees); // 2.54 is neither 1.83 nor 3.5
        c.paper_readings.push_back({"read as an increase, closer", 2.54});
        judge(c);
        QCOMPARE(c.verdict, Verdict::NotComparable);
        QVERIFY2(c.not_comparable.find("read as an increase, closer: the paper's 2.54 (agrees)") !=
                     std::string::npos,
                 c.not_comparable.c_str());
        const auto j = toJson({c})[0]["paper_readings"];
        QCOMPARE(j.size(), std::size_t(2));
        QCOMPARE(j[1]["paper_value"].get<double>(), 2.54);
    }

    // Rule 13: on a derived device, an agreement stands only if it agrees at every level of
    // the device, a disagreement only if the range from Kairos's interval to the device
    // readings cannot reach the paper's band; readings averaged over the seeds.
    void derivedDevicesDecideNothingFinerThanTheirOwnError() {
        // Disagrees at +-0.05 (57.6 against 59.5), but the card's levels reach 44 .. 70.
        Claim d = row(59.5, 57.6, Band::measured(0.05));
        d.device_readings = {{"the card 12 % faster", 70.5}, {"the card 12 % slower", 44.2}};
        judge(d);
        QCOMPARE(d.verdict, Verdict::NotComparable);
        QVERIFY(d.not_comparable.find("as run Kairos disagrees") != std::string::npos);
        QVERIFY(d.not_comparable.find("44.2 .. 70.5") != std::string::npos);
        QVERIFY(d.rule.find("derived device") != std::string::npos);
        QCOMPARE(toJson({d})[0]["device_readings"].size(), std::size_t(2));
        // 96.3 against 81.5: the card's levels (93.8 .. 97.9) stay far from it.
        Claim far = row(81.5, 96.3, Band::measured(0.05));
        far.device_readings = {{"faster", 97.9}, {"slower", 93.8}};
        judge(far);
        QCOMPARE(far.verdict, Verdict::Disagrees);
        // An agreement must hold at every level: 6 within 2 of 6, and 4 still is (|4 - 6| <=
        // 2), 3 is not.
        // A contained band (not a stated precision): a disagreement whose range holds a
        // figure the band contains is no verdict (9 .. 11 reaches within 2 of 12).
        struct Case {
            double paper, kairos, faster, slower;
            Verdict expected;
        };
        for (const Case& k :
             {Case{6, 6, 6, 4, Verdict::Agrees}, Case{6, 6, 6, 3, Verdict::NotComparable},
              Case{12, 9, 11, 8, Verdict::NotComparable},
              Case{12, 9, 9.5, 8, Verdict::Disagrees}}) {
            Claim a = row(k.paper, k.kairos, Band::absolute(2));
            a.device_readings = {{"faster", k.faster}, {"slower", k.slower}};
            judge(a);
            QCOMPARE(a.verdict, k.expected);
            if (k.expected == Verdict::NotComparable)
                QVERIFY(a.not_comparable.find(k.kairos == k.paper ? "as run Kairos agrees"
                                                                  : "as run Kairos disagrees") !=
                        std::string::npos);
        }
        // Over seeds: each reading is the mean of the seeds'.
        std::vector<std::vector<Claim>> runs;
        for (double x : {90.0, 92.0, 94.0}) {
            Claim s = row(81.5, x, Band::measured(0.05));
            s.device_readings = {{"faster", x + 2}, {"slower", x - 4}};
            runs.push_back({s});
        }
        const Claim m = aggregate(runs)[0];
        KAIROS_COMPARE_NEAR(m.device_readings[1].value, 88.0, 1e-12);
        QCOMPARE(m.verdict, Verdict::Disagrees);
    }

    // Rule 12: from 10 seeds on, an agreement on a side needs the seeds on it by a sign count
    // (P(X >= k) < 5 % for X ~ Binomial(n, 1/2): 9 of 10). Six of ten above 1, the mean's
    // interval above 1 too, is no agreement; nine of ten is.
    void sidesNeedTheSeeds() {
        auto seeds = [&](std::vector<double> v) {
            std::vector<std::vector<Claim>> runs;
            for (double x : v) runs.push_back({row(1.0, x, Band::atLeast())});
            return aggregate(runs)[0];
        };
        const Claim few = seeds({0.999, 1.2, 0.999, 1.2, 0.999, 1.2, 0.999, 1.2, 1.2, 1.2});
        QVERIFY(few.ci_low > 1); // the mean's interval excludes the edge
        QCOMPARE(few.verdict, Verdict::NotComparable);
        QVERIFY2(few.not_comparable.find("only 6 of 10 seeds") != std::string::npos,
                 few.not_comparable.c_str());
        const Claim most = seeds({0.99, 1.02, 1.03, 1.04, 1.05, 1.02, 1.03, 1.02, 1.06, 1.04});
        QCOMPARE(most.verdict, Verdict::Agrees);
    }

    // A gain whose seeds' interval holds no effect but excludes the paper's figure is a
    // disagreement: the gate hides an unresolved side, never a magnitude the seeds exclude.
    void noEffectNeverHidesAnExcludedMagnitude() {
        auto seeds = [&](double paper, std::vector<double> v) {
            std::vector<std::vector<Claim>> runs;
            for (double x : v) runs.push_back({row(paper, x, Band::measured(0.005, 1))});
            return aggregate(runs)[0];
        };
        const Claim small = seeds(1.42, {0.98, 1.05, 1.12, 1.0, 1.1});
        QCOMPARE(small.verdict, Verdict::Disagrees);
        QVERIFY(small.rule.find("excludes the paper's figure") != std::string::npos);
        // The paper's figure inside the interval too: unresolved.
        QCOMPARE(seeds(1.05, {0.98, 1.05, 1.12, 1.0, 1.1}).verdict, Verdict::NotComparable);
    }

    // From 10 seeds on the interval is a percentile bootstrap of the mean: it lies within
    // the seeds' range, holds the mean, and is the same on every run; ten seeds 0..9 give
    // a narrower interval than Student's t would (mean 4.5, t half-width 2.166).
    void tenSeedsBootstrap() {
        std::vector<std::vector<Claim>> runs;
        for (int v = 0; v < 10; ++v) runs.push_back({row(4.5, double(v), Band::measured(0.05))});
        const Claim a = aggregate(runs)[0];
        KAIROS_COMPARE_NEAR(a.kairos_value, 4.5, 1e-12);
        QVERIFY(a.ci_low < 4.5 && a.ci_high > 4.5);
        QVERIFY(a.ci_low > 4.5 - 2.166 && a.ci_high < 4.5 + 2.166);
        QVERIFY(a.ci_low > 2.0 && a.ci_high < 7.0);
        const Claim b = aggregate(runs)[0];
        QCOMPARE(b.ci_low, a.ci_low);
        QCOMPARE(b.ci_high, a.ci_high);
    }

    // The JSON row carries what an audit needs, and --audit prints it.
    void rowsAreAuditable() {
        Claim c = row(1.42, 1.0, Band::relative(0.25));
        c.quote = "seeds/004, Fig. 8: '142 %'";
        c.band_origin = "the figure's bars read to 5 %";
        c.ratio(-2.0, -1.0);
        c.substitutes = {{"the paper's RTX 4090", "a derived profile"}};
        judge(c);
        const nlohmann::json j = toJson({c})[0];
        for (const char* k :
             {"paper", "claim", "quote", "paper_value", "kairos_value", "unit", "compared", "band",
              "band_origin", "seeds", "rule", "verdict", "cause", "missing_data"})
            QVERIFY2(j.contains(k), k);
        QCOMPARE(j["missing_data"][0]["paper_used"].get<std::string>(),
                 std::string("the paper's RTX 4090"));
        QCOMPARE(j["missing_data"][0]["measured_instead"].get<std::string>(),
                 std::string("a derived profile"));
        QCOMPARE(j["compared"]["numerator"].get<double>(), -2.0);
        QVERIFY(j["seeds"].is_array());
        QCOMPARE(j["verdict"].get<std::string>(), std::string("not comparable"));
        const std::string a = auditText({c});
        QVERIFY(a.find("Fig. 8") != std::string::npos);
        QVERIFY(a.find("numerator = -2") != std::string::npos);
        QVERIFY(a.find("rule:     ratio") != std::string::npos);
        QVERIFY(a.find("missing:  the paper's RTX 4090; measured instead: a derived profile") !=
                std::string::npos);
        // A row without its quote or band origin says so.
        QVERIFY(auditText({row(2.0, 2.0, Band::relative(0.1))}).find("not quoted yet") !=
                std::string::npos);
    }

    void uncoveredHasReasons() {
        QVERIFY(uncoveredClaims().size() >= 5);
        for (const auto& u : uncoveredClaims()) QVERIFY(!u.reason.empty() && !u.claim.empty());
    }
};

QTEST_GUILESS_MAIN(TestVerdict)
#include "tst_verdict.moc"
