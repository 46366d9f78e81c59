// The ranking policies (sjf, sprpt_lp, sprpt, edf) and the length predictors.
#include "exec/execution_model.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "predict/simple_predictors.h"
#include "sched/admission.h"
#include "sched/priority.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "test_util.h"
#include "workload/generators.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <set>

using namespace kairos;
using kairos::test::req;

namespace {

RunLog run(const Workload& w, Scheduler& s, EngineLimits lim) {
    return simulate(w, UnitModel(), s, lim);
}

std::unique_ptr<Scheduler> policy(const std::string& name, PolicyParams p = {},
                                  const std::string& pred = "oracle") {
    return test::policyNoWatermark(name, std::move(p), pred, 5);
}

void sameLog(const RunLog& a, const RunLog& b, const QString& what) {
    QVERIFY2(
        a.events.size() == b.events.size(),
        qPrintable(what + QString(": %1 vs %2 events").arg(a.events.size()).arg(b.events.size())));
    for (std::size_t i = 0; i < a.events.size(); ++i) {
        const Event &x = a.events[i], &y = b.events[i];
        QVERIFY2(x.t == y.t && x.req == y.req && x.ev == y.ev && x.value == y.value,
                 qPrintable(what + QString(": event %1: %2 req %3 at %4 vs %5 req %6 at %7")
                                       .arg(i)
                                       .arg(evName(x.ev))
                                       .arg(x.req)
                                       .arg(x.t)
                                       .arg(evName(y.ev))
                                       .arg(y.req)
                                       .arg(y.t)));
    }
}

// Independent references, written plainly (sort everything at every boundary).
class RefSpjf final : public Scheduler {
public:
    explicit RefSpjf(std::shared_ptr<LengthPredictor> p) : p_(std::move(p)) {}
    std::string name() const override { return "ref-spjf"; }
    void reset(const Workload& w) override { p_->reset(w); }
    double key(const EngineView& v, ReqId id) const {
        return p_->remaining(id, v.state(id).generated);
    }
    void schedule(const EngineView& v, Decision& out) override {
        out.hold = INT_MAX;
        if (prefillPending(v)) return;
        std::vector<std::pair<double, ReqId>> w;
        for (ReqId id : v.waiting()) w.emplace_back(key(v, id), id);
        std::sort(w.begin(), w.end());
        AdmissionBudget b(v, 0.0);
        for (auto [k, id] : w) {
            const auto verdict = b.take(v.state(id));
            if (verdict == AdmissionBudget::Verdict::NeverFits) {
                out.killFor(id, KillCause::NeverFits);
                continue;
            }
            if (verdict == AdmissionBudget::Verdict::NoRoom) break;
            out.admit.push_back(id);
        }
    }
    ReqId overflowVictim(const EngineView& v) override {
        ReqId best = -1;
        double worst = -1;
        for (ReqId id : v.running())
            if (key(v, id) > worst || (key(v, id) == worst && id > best))
                worst = key(v, id), best = id;
        return best;
    }

private:
    std::shared_ptr<LengthPredictor> p_;
};

// Plain SPRPT with unlimited KV: the max_num_seqs best-ranked requests run.
class RefSprpt final : public Scheduler {
public:
    explicit RefSprpt(std::shared_ptr<LengthPredictor> p) : p_(std::move(p)) {}
    std::string name() const override { return "ref-sprpt"; }
    void reset(const Workload& w) override { p_->reset(w); }
    void schedule(const EngineView& v, Decision& out) override {
        out.hold = INT_MAX;
        if (prefillPending(v)) return;
        struct C {
            double k;
            int cls;
            ReqId id;
        };
        std::vector<C> all;
        for (ReqId id : v.running())
            all.push_back({p_->remaining(id, v.state(id).generated), 0, id});
        for (ReqId id : v.suspended())
            all.push_back({p_->remaining(id, v.state(id).generated), 1, id});
        for (ReqId id : v.waiting())
            all.push_back({p_->remaining(id, v.state(id).generated), 2, id});
        std::sort(all.begin(), all.end(), [](const C& a, const C& b) {
            return std::tie(a.k, a.cls, a.id) < std::tie(b.k, b.cls, b.id);
        });
        const std::size_t seats = static_cast<std::size_t>(v.limits().max_num_seqs);
        std::vector<std::pair<double, ReqId>> suspend;
        for (std::size_t i = 0; i < all.size(); ++i) {
            const C& c = all[i];
            if (i < seats) {
                if (c.cls == 1) out.resume.push_back(c.id);
                if (c.cls == 2) out.admit.push_back(c.id);
            } else if (c.cls == 0) {
                out.suspend.push_back(c.id);
            }
        }
    }

private:
    std::shared_ptr<LengthPredictor> p_;
};

Workload randomWorkload(std::uint64_t seed, std::size_t n) {
    GenerateSpec g;
    g.count = n;
    g.arrivals.rate = 2.0;
    g.arrivals.seed = seed;
    g.length_seed = seed + 100;
    g.prompt = LengthDist::parse("uniform:1,20");
    g.output = LengthDist::parse("lognormal:8,1.0,max=60");
    return generateWorkload(g);
}
} // namespace

class TestPolicies : public QObject {
    Q_OBJECT
private slots:
    // docs/policies.md is the registry's Markdown table; regenerate it with
    // `kairos-cli policies --markdown > docs/policies.md` when a policy changes.
    void docsArePolicyTable() {
        QFile f(QStringLiteral(KAIROS_SOURCE_DIR "/docs/policies.md"));
        QVERIFY2(f.open(QIODevice::ReadOnly), "docs/policies.md is missing");
        const std::string doc = f.readAll().toStdString();
        QVERIFY2(doc == policyTable(true),
                 "docs/policies.md is stale: run kairos-cli policies --markdown > "
                 "docs/policies.md");
        for (const auto& spec : policySpecs())
            QVERIFY2(doc.find("## `" + spec.name + "`") != std::string::npos, spec.name.c_str());
    }

    // Every registered parameter is consistent: its default and its explored range lie in
    // its domain, a log range is positive, names are unique, and the policy can be built at
    // the default and at both ends of the explored range.
    // The comparison set sweeps and bench's capacity search use: registered with the
    // policies, general ones, in registry order.
    void baselinesAreRegistered() {
        QCOMPARE(baselinePolicies(), (std::vector<std::string>{"fcfs", "sjf", "sprpt_lp", "mcsf"}));
        for (const auto& n : baselinePolicies()) QVERIFY(policySpec(n).general);
        QCOMPARE(policyNameList(baselinePolicies()), std::string("fcfs, sjf, sprpt_lp, mcsf"));
    }

    void registryIsConsistent() {
        std::set<std::string> names;
        for (const auto& spec : policySpecs()) {
            QVERIFY2(names.insert(spec.name).second, spec.name.c_str());
            QVERIFY2(!spec.summary.empty(), spec.name.c_str());
            QVERIFY(spec.make != nullptr);
            std::set<std::string> params;
            for (const auto& p : spec.params) {
                const std::string where = spec.name + "." + p.name;
                QVERIFY2(params.insert(p.name).second, where.c_str());
                QVERIFY2(!p.help.empty(), where.c_str());
                for (double v : {p.dflt, p.explore_lo, p.explore_hi}) {
                    try {
                        p.check(spec.name, v);
                    } catch (const std::invalid_argument& e) {
                        QFAIL((where + ": " + e.what()).c_str());
                    }
                }
                QVERIFY2(p.explore_lo <= p.explore_hi, where.c_str());
                if (p.log) QVERIFY2(p.explore_lo > 0, where.c_str());
                if (!spec.general) continue;
                for (double v : {p.explore_lo, p.explore_hi}) {
                    PolicyConfig cfg;
                    cfg.name = spec.name;
                    cfg.params = {{p.name, v}};
                    try {
                        QVERIFY(makeScheduler(cfg) != nullptr);
                    } catch (const std::invalid_argument& e) {
                        // A combination a constructor rejects is allowed only with a message
                        // that names the policy.
                        QVERIFY2(std::string(e.what()).find(spec.name) != std::string::npos,
                                 (where + ": " + e.what()).c_str());
                    }
                }
            }
            if (spec.general) QVERIFY(makeScheduler(spec.name) != nullptr);
        }
        // Out of the domain, an unknown parameter and an unknown policy are errors naming
        // what was wrong.
        auto message = [](const PolicyConfig& cfg) {
            try {
                makeScheduler(cfg);
            } catch (const std::invalid_argument& e) {
                return std::string(e.what());
            }
            return std::string();
        };
        PolicyConfig bad;
        bad.name = "sprpt_lp";
        bad.params = {{"C", -0.5}};
        QVERIFY(message(bad).find("C") != std::string::npos);
        bad.params = {{"nonsense", 1}};
        QVERIFY(message(bad).find("nonsense") != std::string::npos);
        QVERIFY(message(bad).find("C") != std::string::npos); // lists what exists
        bad.name = "no_such_policy";
        bad.params = {};
        QVERIFY(message(bad).find("no_such_policy") != std::string::npos);
    }

    // One seat, unit time. A (t=0, 10 tokens) runs; B (t=2, 3 tokens) arrives.
    // C = 1: at t=2 A has 2 tokens < 1 * 10, so B (3 left) displaces A (8 left): A is
    // suspended with its KV; B runs 2->5; A resumes at 5 and ends at 13.
    // C = 0.1 (or sjf): A is past 0.1 * 10 tokens and keeps the seat to t=10; B runs 10->13.
    void sprptLimitedPreemptionByHand() {
        Workload w;
        w.requests = {req(0, 5, 10), req(2, 5, 3)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        lim.max_num_seqs = 1;
        {
            auto s = policy("sprpt_lp", {{"C", 1.0}});
            const RunLog log = run(w, *s, lim);
            const auto m = perRequest(log);
            QCOMPARE(m[1].end, 5.0);
            QCOMPARE(m[0].end, 13.0);
            QCOMPARE(m[0].suspensions, 1);
            QCOMPARE(m[0].preemptions, 0);
            QCOMPARE(tokenTimes(log, 0), (std::vector<double>{1, 2, 6, 7, 8, 9, 10, 11, 12, 13}));
            const Summary sum = summarize(log);
            QCOMPARE(sum.suspensions, std::int64_t(1));
        }
        for (const char* name : {"sprpt_lp", "sjf"}) {
            auto s = policy(name,
                            name == std::string("sjf") ? PolicyParams{} : PolicyParams{{"C", 0.1}});
            const auto m = perRequest(run(w, *s, lim));
            QCOMPARE(m[0].end, 10.0);
            QCOMPARE(m[1].end, 13.0);
            QCOMPARE(m[0].suspensions, 0);
        }
    }

    // Suspended KV is released when a better-ranked request needs the memory: it then
    // recomputes (a preemption), as Trail falls back to recompute.
    void keptKvIsReleasedUnderPressure() {
        Workload w;
        // A long request (KV up to 30), then two short ones (11 each to start); 2 seats;
        // 30 tokens of KV. At t=1 both short ones outrank A (19 left): A's 11 tokens must
        // go for the second one to fit (30 - 11 - 11 < 11).
        w.requests = {req(0, 10, 20), req(1, 10, 2), req(1, 10, 2)};
        EngineLimits lim;
        lim.kv_capacity_tokens = 30;
        lim.max_num_seqs = 2;
        auto s = policy("sprpt", {});
        const RunLog log = run(w, *s, lim);
        const Summary sum = summarize(log);
        QCOMPARE(sum.completed, std::int64_t(3));
        QVERIFY(sum.kv_peak_tokens <= 30);
        QVERIFY2(sum.preemptions >= 1, "the long request must lose its KV to the short ones");
    }

    void spjfAndSprptEqualReferences_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 s = 1; s <= 25; ++s) QTest::newRow(qPrintable(QString::number(s))) << s;
    }
    void spjfAndSprptEqualReferences() {
        QFETCH(quint64, seed);
        const Workload w = randomWorkload(seed, 60);
        EngineLimits lim;
        lim.max_num_seqs = 4;
        // C = 0 is non-preemptive SPJF, under memory pressure too.
        lim.kv_capacity_tokens = 150;
        for (bool chunked : {false, true}) {
            lim.chunked_prefill = chunked;
            RefSpjf ref(makePredictor("lognormal:0.7", 5));
            const RunLog a = run(w, ref, lim);
            sameLog(run(w, *policy("sprpt_lp", {{"C", 0.0}}, "lognormal:0.7"), lim), a,
                    "sprpt_lp C=0 vs SPJF");
            sameLog(run(w, *policy("sjf", {}, "lognormal:0.7"), lim), a, "sjf vs SPJF");
        }
        // C = 1 is plain SPRPT (memory unlimited so that only the ranking decides).
        lim.kv_capacity_tokens = 1000000;
        lim.chunked_prefill = false;
        RefSprpt ref(makePredictor("lognormal:0.7", 5));
        const RunLog b = run(w, ref, lim);
        sameLog(run(w, *policy("sprpt_lp", {{"C", 1.0}}, "lognormal:0.7"), lim), b,
                "sprpt_lp C=1 vs SPRPT");
        sameLog(run(w, *policy("sprpt", {}, "lognormal:0.7"), lim), b, "sprpt vs SPRPT");
    }

    // EDF admits by deadline: arrival + budget, else + TUF ERT, else + slack.
    void edfByHand() {
        Workload w;
        w.requests = {req(0, 4, 3), req(0.5, 4, 2, 20.0), req(0.5, 4, 2, 4.0)};
        w.requests[0].budget_s = 30.0;
        EngineLimits lim;
        lim.kv_capacity_tokens = 1000;
        lim.max_num_seqs = 1;
        auto s = policy("edf", {});
        const auto m = perRequest(run(w, *s, lim));
        // R0 runs 0->3 (non-preemptive); then R2 (deadline 4.5) before R1 (20.5).
        QCOMPARE(m[0].end, 3.0);
        QCOMPARE(m[2].end, 5.0);
        QCOMPARE(m[1].end, 7.0);
        auto p = policy("edf", {{"preemptive", 1}});
        const auto mp = perRequest(run(w, *p, lim));
        QCOMPARE(mp[2].end, 3.0); // at t=1 R2 (deadline 4.5) displaces R0 (30)
        QCOMPARE(mp[0].suspensions, 1);
    }

    void predictors() {
        Workload w = randomWorkload(3, 20000);
        auto oracle = makePredictor("oracle", 1);
        oracle->reset(w);
        QCOMPARE(initialMae(*oracle, w), 0.0);
        QCOMPARE(oracle->remaining(0, w.requests[0].output_tokens - 1), 1.0);
        // Log-normal noise is median-unbiased: the median of pred/true is 1.
        auto ln = makePredictor("lognormal:0.5", 1);
        ln->reset(w);
        std::vector<double> ratio;
        for (std::size_t i = 0; i < w.size(); ++i)
            ratio.push_back(ln->initial(ReqId(i)) / w.requests[i].output_tokens);
        std::nth_element(ratio.begin(), ratio.begin() + ratio.size() / 2, ratio.end());
        KAIROS_COMPARE_NEAR(ratio[ratio.size() / 2], 1.0, 0.03);
        // Exponential predictions have the true size as their mean (lengths >= 1 clip a little).
        auto ex = makePredictor("exponential", 2);
        ex->reset(w);
        double sp = 0, st = 0;
        for (std::size_t i = 0; i < w.size(); ++i)
            sp += ex->initial(ReqId(i)), st += w.requests[i].output_tokens;
        KAIROS_COMPARE_NEAR(sp / st, 1.0, 0.04);
        // Buckets: exact when always right; right about `accuracy` of the time otherwise.
        auto b1 = makePredictor("bucket:16,1", 3);
        b1->reset(w);
        for (std::size_t i = 0; i < 100; ++i)
            QCOMPARE(b1->initial(ReqId(i)), std::ceil(w.requests[i].output_tokens / 16.0) * 16);
        // With 1-token buckets, among requests of 12+ tokens (where a wrong guess is never
        // clamped back to the right bucket, P(k >= 12) = 2^-11) the hit rate is `accuracy`:
        // 0.7 +- 3 sigma (sigma = sqrt(0.21 / n) < 0.6 % here).
        auto b7 = makePredictor("bucket:1,0.7", 3);
        b7->reset(w);
        int right = 0, n = 0;
        for (std::size_t i = 0; i < w.size(); ++i) {
            if (w.requests[i].output_tokens < 12) continue;
            ++n;
            right += b7->initial(ReqId(i)) == w.requests[i].output_tokens;
        }
        QVERIFY(n > 5000);
        KAIROS_COMPARE_NEAR(double(right) / n, 0.7, 3 * std::sqrt(0.21 / n));
        for (const char* bad : {"magic", "lognormal:-1", "bucket:0", "bucket:16,2"})
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makePredictor(bad, 1));
    }

    // A predictor that says remainingFromInitial() (the schedulers then compute its
    // remaining() from the initial predictions) must mean it, to the bit, at every age; and
    // Trail's refined predictions must not claim it.
    void remainingFromInitialHolds() {
        Workload w = randomWorkload(7, 300);
        for (const char* spec :
             {"oracle", "lognormal:0.5", "exponential", "bucket:16,0.7", "trail"}) {
            auto p = makePredictor(spec, 4);
            p->reset(w);
            if (std::string(spec) == "trail") {
                QVERIFY(!p->remainingFromInitial());
                continue;
            }
            QVERIFY2(p->remainingFromInitial(), spec);
            for (std::size_t i = 0; i < w.size(); ++i)
                for (int g = 0; g <= w.requests[i].output_tokens; g += 7)
                    QCOMPARE(p->remaining(ReqId(i), g), std::max(1.0, p->initial(ReqId(i)) - g));
        }
    }

    // Every policy, on random workloads with tight KV and few seats: each request ends
    // exactly once (finished with all its tokens), KV stays within capacity, no admission
    // is refused by the engine.
    void everyPolicyKeepsInvariants() {
        for (const auto& name : policyNames()) {
            for (std::uint64_t seed = 1; seed <= 8; ++seed) {
                Workload w = randomWorkload(seed, 80);
                for (auto& r : w.requests) {
                    r.budget_s = 1000.0; // timebill: loose budgets, nothing killed for time
                    if (r.output_tokens >= 4)
                        r.segments = {{r.output_tokens / 2, 0.5},
                                      {r.output_tokens - r.output_tokens / 2, 0.2}};
                }
                EngineLimits lim;
                lim.kv_capacity_tokens = 160;
                lim.max_num_seqs = static_cast<std::int32_t>(2 + seed % 5);
                lim.chunked_prefill = seed % 2 == 0;
                PolicyConfig c;
                c.name = name;
                c.predictor = seed % 3 == 0 ? "trail" : "lognormal:0.5";
                c.seed = seed;
                auto s = makeScheduler(c);
                const RunLog log =
                    simulate(w, EteModel(EteParams{0.01, 1e-4, 0, 0.01, 1e-4, 1e-6}), *s, lim);
                const QString what =
                    QString::fromStdString(name) + " seed " + QString::number(seed);
                std::vector<int> ends(w.size(), 0);
                for (const Event& e : log.events) {
                    if (e.ev == Ev::Finish) {
                        QVERIFY2(e.value == w.requests[std::size_t(e.req)].output_tokens,
                                 qPrintable(what));
                        ++ends[std::size_t(e.req)];
                    }
                    if (e.ev == Ev::Kill) ++ends[std::size_t(e.req)];
                }
                for (int x : ends) QVERIFY2(x == 1, qPrintable(what));
                for (const auto& sp : log.iters) QVERIFY2(sp.kv_last <= 160, qPrintable(what));
                for (const auto& warning : log.warnings)
                    QVERIFY2(warning.find("refused") == std::string::npos,
                             qPrintable(what + ": " + QString::fromStdString(warning)));
                const Summary sum = summarize(log);
                QVERIFY2(sum.completed + sum.killed == 80, qPrintable(what));
                if (name != "timebill")
                    QVERIFY2(sum.killed == 0,
                             qPrintable(what + QString(": %1 killed").arg(sum.killed)));
            }
        }
    }

    void registry() {
        for (const auto& n : policyNames()) QVERIFY(makeScheduler(n) != nullptr);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeScheduler("sprpt_lp", {{"C", -1}}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeScheduler("sjf", {{"C", 1}}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeScheduler("nope"));
        QCOMPARE(parsePolicyParams({"C=inf"}).at("C"), INFINITY);
    }
};

QTEST_GUILESS_MAIN(TestPolicies)
#include "tst_policies.moc"
