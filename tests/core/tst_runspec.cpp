// RunSpec: JSON and TOML round trips over random specs (every registered policy and its
// parameters), re-run equality, strict reading with file, line and key in every error.
#include "run/knobs.h"
#include "run/live_check.h"
#include "run/pipeline.h"
#include "run/run_spec.h"
#include "sched/registry.h"
#include "test_util.h"
#include "util/input_error.h"
#include "workload/generators.h"
#include "workload/random.h"
#include "workload/readers.h"

#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

using namespace kairos;

namespace {

const std::string kTrace = KAIROS_SOURCE_DIR "/sample_traces/chat_poisson_small.jsonl";

RunContext context() {
    return test::sourceProfiles();
}

double U(Rng& rng, double lo, double hi) {
    return lo + (hi - lo) * rng.uniform();
}

// A random valid spec: any general policy with a random subset of its parameters drawn
// from their explored ranges, and random values for every other field.
RunSpec randomSpec(Rng& rng) {
    RunSpec s;
    s.workload.path = kTrace;
    s.workload.limit = rng.bernoulli(0.5) ? 0 : std::size_t(1 + rng.uniformInt(0, 500));
    s.workload.generate_arrivals = rng.bernoulli(0.5);
    if (s.workload.generate_arrivals) {
        s.workload.rate =
            rng.bernoulli(0.2) ? std::numeric_limits<double>::infinity() : U(rng, 0.1, 20);
        s.workload.burstiness = U(rng, 0.2, 3);
        s.workload.arrival_seed = rng.raw() >> 1;
    } else {
        s.workload.rate_scale = rng.bernoulli(0.5) ? 1.0 : U(rng, 0.25, 4);
    }
    s.workload.budget = rng.bernoulli(0.5) ? 0 : U(rng, 0.5, 30);
    // Utility functions redrawn, under class names TOML must quote.
    for (const char* cls : {"urgent", "normal", "a b.c"})
        if (rng.bernoulli(0.3)) {
            const double ert = U(rng, 0, 5);
            s.workload.tuf[cls] = {ert, ert + U(rng, 0.001, 20)};
        }
    const auto names = policyNames();
    const PolicySpec& p = policySpec(names[rng.uniformInt(0, int(names.size()) - 1)]);
    s.policy.name = p.name;
    for (const auto& param : p.params) {
        if (!rng.bernoulli(0.5)) continue;
        double v = param.kind == ParamSpec::Kind::Flag ? double(rng.uniformInt(0, 1))
                                                       : U(rng, param.explore_lo, param.explore_hi);
        if (param.kind == ParamSpec::Kind::Whole) v = std::round(v);
        s.policy.params[param.name] = v;
    }
    const char* predictors[] = {"oracle", "lognormal:0.5", "exponential", "bucket:8"};
    s.policy.predictor = predictors[rng.uniformInt(0, 3)];
    s.policy.seed = rng.raw() >> 1;
    s.exec.profile = rng.bernoulli(0.5) ? "llama2-70b-a100x2" : "llama2-70b-h100x2";
    s.exec.gpu_mem_gib = rng.bernoulli(0.7) ? 0 : U(rng, 80, 200);
    s.exec.mem_fraction = rng.bernoulli(0.7) ? 0 : U(rng, 0.9, 1);
    s.limits.kv_capacity_tokens = rng.bernoulli(0.5) ? 0 : rng.uniformInt(1000, 1000000);
    s.limits.block_size = rng.bernoulli(0.5) ? 1 : 16;
    s.limits.max_num_seqs = rng.uniformInt(1, 512);
    s.limits.max_num_batched_tokens = rng.uniformInt(512, 16384);
    s.limits.chunked_prefill = rng.bernoulli(0.5);
    s.limits.skip_ahead = rng.bernoulli(0.8);
    if (rng.bernoulli(0.5))
        s.summary.goodput = {"ttft:" + std::to_string(rng.uniformInt(100, 5000))};
    if (rng.bernoulli(0.3)) s.summary.goodput.push_back("tpot:100");
    if (rng.bernoulli(0.5)) s.summary.percentiles = {50, 95, 99.9};
    if (rng.bernoulli(0.3)) s.summary.quality = "0:1,0.5:0.8,1:0";
    if (rng.bernoulli(0.3)) s.limits.rules = EngineRules::VllmV0;
    return s;
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestRunSpec : public QObject {
    Q_OBJECT
private slots:
    void roundTrips_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 s = 1; s <= 200; ++s) QTest::newRow(qPrintable(QString::number(s))) << s;
    }
    // JSON -> spec and TOML -> spec give back the same spec, field for field, for any
    // policy and parameters; the texts are stable (writing the read spec again gives the
    // same bytes).
    void roundTrips() {
        QFETCH(quint64, seed);
        Rng rng(seed);
        const RunSpec s = randomSpec(rng);
        s.validate();
        const nlohmann::json j = s.toJson();
        const RunSpec from_json = RunSpec::fromJson(nlohmann::json::parse(j.dump()));
        QVERIFY2(from_json == s, j.dump().c_str());
        const std::string toml = s.toToml();
        const RunSpec from_toml = RunSpec::fromToml(toml);
        QVERIFY2(from_toml == s, (toml + "\nread back as\n" + from_toml.toToml()).c_str());
        QCOMPARE(from_toml.toToml(), toml);
        // Files by extension.
        const std::string jf = test::tempPath("spec.json"), tf = test::tempPath("spec.toml");
        s.save(jf);
        s.save(tf);
        QVERIFY(RunSpec::load(jf) == s);
        QVERIFY(RunSpec::load(tf) == s);
    }

    // A spec's limits and the engine's convert both ways without losing a field, over
    // random values (the pipeline and the workbench's saved specs both go through it).
    void limitsConvertBothWays() {
        Rng r(3);
        for (int k = 0; k < 200; ++k) {
            RunSpec::LimitsPart a;
            a.kv_capacity_tokens = r.uniformInt(1, 1 << 30);
            a.block_size = int(r.uniformInt(1, 64));
            a.max_num_seqs = int(r.uniformInt(1, 4096));
            a.max_num_batched_tokens = int(r.uniformInt(1, 1 << 20));
            a.chunked_prefill = r.bernoulli(0.5);
            a.skip_ahead = r.bernoulli(0.5);
            const EngineLimits e = a.engine(a.kv_capacity_tokens);
            const RunSpec::LimitsPart b = RunSpec::LimitsPart::of(e);
            RunSpec x, y;
            x.limits = a;
            y.limits = b;
            QCOMPARE(QString::fromStdString(y.toJson().dump()),
                     QString::fromStdString(x.toJson().dump()));
            QCOMPARE(a.engine(7).kv_capacity_tokens, std::int64_t(7));
        }
    }

    // The same spec runs to the same log and summary; so does the spec read back from the
    // JSON a stored run keeps.
    void rerunIsExact_data() {
        QTest::addColumn<quint64>("seed");
        for (quint64 s = 1; s <= 12; ++s) QTest::newRow(qPrintable(QString::number(s))) << s;
    }
    void rerunIsExact() {
        QFETCH(quint64, seed);
        Rng rng(seed * 7919);
        RunSpec s = randomSpec(rng);
        s.workload.limit = 300; // quick
        const RunContext ctx = context();
        RunResult a;
        try {
            a = runSpec(s, ctx);
        } catch (const SchedulerLoop&) {
            QSKIP("a documented loop (protect with reset=1)");
        }
        const RunResult b =
            runSpec(RunSpec::fromJson(nlohmann::json::parse(s.toJson().dump())), ctx);
        QCOMPARE(a.log.events.size(), b.log.events.size());
        for (std::size_t i = 0; i < a.log.events.size(); ++i) {
            QCOMPARE(a.log.events[i].t, b.log.events[i].t);
            QCOMPARE(int(a.log.events[i].ev), int(b.log.events[i].ev));
            QCOMPARE(a.log.events[i].req, b.log.events[i].req);
        }
        const auto ma = summaryMetrics(a.summary), mb = summaryMetrics(b.summary);
        QCOMPARE(ma.size(), mb.size());
        for (std::size_t i = 0; i < ma.size(); ++i) {
            QCOMPARE(ma[i].first, mb[i].first);
            QVERIFY2((std::isnan(ma[i].second) && std::isnan(mb[i].second)) ||
                         ma[i].second == mb[i].second,
                     ma[i].first.c_str());
        }
    }

    // The pipeline applies what the spec says: a fixed KV capacity, generated arrivals at
    // the rate asked (offered rate within 10 % on 2,000 requests), the trace's own gaps
    // scaled.
    void pipelineAppliesTheSpec() {
        RunSpec s;
        s.workload.path = kTrace;
        s.limits.kv_capacity_tokens = 123456;
        const RunContext ctx = context();
        const PreparedRun p = prepareRun(s, ctx);
        QCOMPARE(p.limits.kv_capacity_tokens, std::int64_t(123456));
        const double span0 =
            p.workload->requests.back().arrival - p.workload->requests.front().arrival;
        RunSpec scaled = s;
        scaled.workload.rate_scale = 2;
        const PreparedRun q = prepareRun(scaled, ctx);
        const double span1 =
            q.workload->requests.back().arrival - q.workload->requests.front().arrival;
        QVERIFY(std::fabs(span1 - span0 / 2) < 1e-9 * span0);
        RunSpec gen = s;
        gen.workload.generate_arrivals = true;
        gen.workload.rate = 3;
        const PreparedRun g = prepareRun(gen, ctx);
        const auto& rq = g.workload->requests;
        const double rate = double(rq.size() - 1) / (rq.back().arrival - rq.front().arrival);
        QVERIFY2(std::fabs(rate - 3) < 0.1 * 3 + 3.0 * 3 / std::sqrt(double(rq.size())),
                 qPrintable(QString::number(rate)));
        // A cache shares the base workload between runs that do not transform it.
        WorkloadCache cache;
        RunContext cached = ctx;
        cached.cache = &cache;
        QCOMPARE(prepareRun(s, cached).workload.get(), prepareRun(s, cached).workload.get());
    }

    // TUF overrides redraw the utility of their class only (ERT as given, the slope through
    // 0 at the zero time: beta / (zero - ert)); other classes keep the file's functions. The
    // pipeline's transform memo returns the same workload for the same transforms.
    void tufOverridesRedrawTheirClass() {
        RunSpec s;
        s.workload.path = KAIROS_SOURCE_DIR "/sample_traces/wid1_like.jsonl";
        const RunContext ctx = context();
        const PreparedRun base = prepareRun(s, ctx);
        s.workload.tuf["urgent"] = {0.5, 2.5};
        const PreparedRun p = prepareRun(s, ctx);
        QCOMPARE(p.workload->size(), base.workload->size());
        int urgent = 0;
        for (std::size_t i = 0; i < p.workload->size(); ++i) {
            const Request& a = base.workload->requests[i];
            const Request& b = p.workload->requests[i];
            QVERIFY(a.tuf && b.tuf);
            if (a.cls == "urgent") {
                ++urgent;
                QCOMPARE(b.tuf->ert, 0.5);
                QCOMPARE(b.tuf->beta, a.tuf->beta);
                QCOMPARE(b.tuf->slope, -a.tuf->beta / 2.0); // wid1's urgent: beta 2 -> -1
                QCOMPARE(b.tuf->zeroTime(), 2.5);
            } else {
                QVERIFY(*a.tuf == *b.tuf);
            }
        }
        QVERIFY(urgent > 10);
        // Bad overrides are named by class and field.
        RunSpec bad = s;
        bad.workload.tuf["urgent"] = {2, 1};
        QVERIFY(errorOf([&] { bad.validate("t.json"); }).find("workload.tuf.urgent.zero") !=
                std::string::npos);
        const std::string e = errorOf([&] {
            RunSpec::fromJson(
                nlohmann::json{{"workload", {{"path", "x"}, {"tuf", {{"urgent", {{"ert", 1}}}}}}}},
                "u.json");
        });
        QVERIFY2(e.find("workload.tuf.urgent.zero") != std::string::npos, e.c_str());
        // The memo: the same transforms on the same base give the same workload when kept.
        WorkloadCache cache;
        RunContext cached = ctx;
        cached.cache = &cache;
        QVERIFY(prepareRun(s, cached).workload != prepareRun(s, cached).workload);
        cache.keepTransformed(2);
        const auto first = prepareRun(s, cached).workload;
        QCOMPARE(prepareRun(s, cached).workload, first);
        RunSpec other = s;
        other.workload.rate_scale = 2;
        QVERIFY(prepareRun(other, cached).workload != first);
        QCOMPARE(prepareRun(s, cached).workload, first); // two are kept
    }

    // Every run knob (run/knobs.h) reads back what it set, within its range, and a sweep
    // along its axis gives the spec that setting it gives (the Sweep panel and the Policy
    // panel agree); goodput terms parse back to the exact SLOs.
    void runKnobsSetGetAndSweep() {
        const std::int64_t profile_kv = 123457;
        Rng rng(11);
        for (const RunKnob& k : runKnobs()) {
            QVERIFY2(findRunKnob(k.name) == &k, k.name.c_str());
            QVERIFY(k.lo < k.dflt && k.dflt < k.hi && k.get && k.set);
            for (int i = 0; i < 50; ++i) {
                double x = k.lo * std::pow(k.hi / k.lo, rng.uniform());
                if (k.decimals == 0) x = std::round(x);
                RunSpec s;
                s.workload.path = kTrace;
                k.set(s, x, profile_kv);
                s.validate();
                const double back = k.get(s, profile_kv);
                // The KV knob is kept in whole tokens: within half a token of the profile's.
                const double tol = k.name == "kv" ? 0.5 / double(profile_kv) : 0;
                QVERIFY2(std::fabs(back - x) <= tol, (k.name + " " + std::to_string(x)).c_str());
                if (!k.axis) continue;
                sweep::Definition d;
                d.base.workload.path = kTrace;
                sweep::Axis ax;
                ax.kind = *k.axis;
                ax.name = k.name;
                ax.values = {k.axis_value(x, profile_kv)};
                d.axes.push_back(ax);
                RunSpec expected = d.base;
                k.set(expected, x, profile_kv);
                const RunSpec swept = sweep::expand(d).front().spec;
                // The axis text carries 12 digits: the same spec up to that.
                QVERIFY2(std::fabs(k.get(swept, profile_kv) - k.get(expected, profile_kv)) <=
                             1e-11 * std::fabs(k.get(expected, profile_kv)),
                         k.name.c_str());
            }
        }
        GoodputSlo g;
        g.ttft_ms = 1234.5678901234567;
        g.e2el_ms = 0.1;
        const GoodputSlo back = GoodputSlo::parse(g.terms());
        QCOMPARE(*back.ttft_ms, *g.ttft_ms);
        QCOMPARE(*back.e2el_ms, *g.e2el_ms);
        QVERIFY(!back.tpot_ms);
    }

    // validate's judgement of the simulator against a live run (run/live_check.h), with a
    // "live" run simulated on a device 10 % slower: requests far apart (no queueing) are
    // each 10 % slower, so every relative error is 0.1 / 1.1; bracketed by a device timed
    // 10 % slower before and after, the error is gone. With the answers' lengths told, a live
    // run that stopped early is judged on time alone (no error left at the same speed) while
    // the errors planned on the workload's lengths are large.
    void liveCheckJudgesTheSimulator() {
        GenerateSpec g;
        g.count = 30;
        g.arrivals.rate = 0.01; // ~100 s apart: each request alone
        g.prompt = LengthDist::parse("const:300");
        g.output = LengthDist::parse("const:40");
        const std::string path = test::tempPath("live_check.jsonl");
        writeKairosFile(generateWorkload(g), path);
        RunSpec spec;
        spec.workload.path = path;
        const EteParams ete{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7};
        PreparedRun prep = prepareRun(spec, context());
        prep.model = std::make_shared<const EteModel>(ete, "planned");
        PreparedRun slow = prep;
        slow.model = std::make_shared<const EteModel>(scaledEte(ete, 1.1), "slower device");
        const RunLog live = simulatePrepared(slow, context());
        LiveCheckInput in;
        in.prep = prep;
        in.ete = ete;
        in.reference_profile = 1e-3;
        in.reference_before = in.reference_after = 1.1e-3;
        std::vector<Simulator::LiveIteration> iters(3);
        for (auto& it : iters) {
            it.shape.decode_seqs = 1;
            it.predicted = 1.1;
            it.measured = 1.0;
            it.gap = 0.25;
        }
        const LiveCheck c = checkAgainstLive(in, live, iters, context());
        QCOMPARE(c.errors.ttft.n, std::size_t(30));
        KAIROS_COMPARE_NEAR(c.errors.ttft.median, 0.1 / 1.1, 1e-9);
        KAIROS_COMPARE_NEAR(c.errors.e2el.p90, 0.1 / 1.1, 1e-9);
        KAIROS_COMPARE_NEAR(c.mean_speed, 1.1, 1e-12);
        KAIROS_COMPARE_NEAR(c.bracketed.e2el.p90, 0.0, 1e-9);
        QVERIFY(c.prefix_cache.is_null());
        KAIROS_COMPARE_NEAR(c.iterations["kinds"]["decode"]["median_signed"].get<double>(), 0.1,
                            1e-12);
        QCOMPARE(c.iterations["kinds"]["decode"]["count"].get<int>(), 3);
        KAIROS_COMPARE_NEAR(c.iterations["median_gap"].get<double>(), 0.25, 1e-12);
        // Stopped early: half of each answer, at the planned speed.
        PreparedRun early = prep;
        auto shorter = std::make_shared<Workload>(*prep.workload);
        for (auto& r : shorter->requests) r.output_tokens = 20;
        early.workload = shorter;
        const RunLog stopped = simulatePrepared(early, context());
        in.lengths_told = true;
        in.reference_before = in.reference_after = 1e-3;
        const LiveCheck t = checkAgainstLive(in, stopped, {}, context());
        KAIROS_COMPARE_NEAR(t.errors.e2el.p90, 0.0, 1e-9);
        QVERIFY2(t.planned.e2el.median > 0.3, qPrintable(QString::number(t.planned.e2el.median)));
        QCOMPARE(t.errors.rows.size(), std::size_t(30));
    }

    // Strict reading: an unknown key, a wrong type, a value out of range, an unknown policy
    // or parameter: an InputError naming the file, the key, and in TOML the line.
    void badSpecsNameFileLineKey() {
        const std::string toml = "kairos_run_spec = 1\n"
                                 "[workload]\n"
                                 "path = 'x.jsonl'\n"
                                 "rate_scal = 2.0\n";
        std::string e = errorOf([&] { RunSpec::fromToml(toml, "f.toml"); });
        QVERIFY2(e.find("f.toml:4") != std::string::npos &&
                     e.find("workload.rate_scal") != std::string::npos,
                 e.c_str());
        e = errorOf([&] {
            RunSpec::fromToml("[workload]\npath = 'x'\n[limits]\nmax_num_seqs = 'many'\n",
                              "g.toml");
        });
        QVERIFY2(e.find("g.toml:4") != std::string::npos &&
                     e.find("limits.max_num_seqs") != std::string::npos,
                 e.c_str());
        e = errorOf([&] {
            RunSpec::fromToml("[workload]\npath = 'x'\n[limits]\nrules = 'vllm-v9'\n", "r.toml");
        });
        QVERIFY2(e.find("r.toml:4") != std::string::npos &&
                     e.find("limits.rules") != std::string::npos &&
                     e.find("kairos or vllm-v0") != std::string::npos,
                 e.c_str());
        e = errorOf([&] {
            RunSpec::fromToml(
                "[workload]\npath = 'x'\n[policy]\nname = 'sprpt_lp'\n[policy.params]\nC = -3.0\n",
                "h.toml");
        });
        QVERIFY2(e.find("h.toml") != std::string::npos && e.find("C") != std::string::npos,
                 e.c_str());
        e = errorOf([&] {
            RunSpec::fromToml("[workload]\npath = 'x'\n[policy]\nname = 'nope'\n", "i.toml");
        });
        QVERIFY2(e.find("i.toml:3") != std::string::npos && e.find("nope") != std::string::npos,
                 e.c_str());
        e = errorOf([&] { RunSpec::fromToml("[workload\npath = 'x'\n", "j.toml"); });
        QVERIFY2(e.find("j.toml:1") != std::string::npos, e.c_str());
        e = errorOf([&] {
            RunSpec::fromJson(nlohmann::json{{"workload", {{"path", "x"}, {"rate_scale", 0}}}},
                              "k.json");
        });
        QVERIFY2(e.find("k.json") != std::string::npos &&
                     e.find("workload.rate_scale") != std::string::npos,
                 e.c_str());
        e = errorOf([&] {
            RunSpec::fromJson(
                nlohmann::json{{"kairos_run_spec", 99}, {"workload", {{"path", "x"}}}}, "l.json");
        });
        QVERIFY2(e.find("newer") != std::string::npos, e.c_str());
        // Memory too small for the weights: named, not a crash in the engine.
        RunSpec small;
        small.workload.path = kTrace;
        small.exec.gpu_mem_gib = 20;
        e = errorOf([&] { prepareRun(small, context()); });
        QVERIFY2(e.find("exec.gpu_mem_gib") != std::string::npos, e.c_str());
        e = errorOf([&] {
            RunSpec::fromJson(nlohmann::json{{"workload", {{"path", ""}}}}, "m.json");
        });
        QVERIFY2(e.find("workload.path") != std::string::npos, e.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRunSpec)
#include "tst_runspec.moc"
