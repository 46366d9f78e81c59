// Experiment files (repro/experiment.h): each formula against the same runs made directly by
// runSpec and computed here by hand; a generated bad-input suite (every key of a file given
// a value of the wrong kind, an unknown key in every table, every key removed) whose errors
// all name the file, the line and the key; the shipped files read.
#include "predict/predictor.h"
#include "repro/common.h"
#include "repro/experiment.h"
#include "run/pipeline.h"
#include "run/run_spec.h"
#include "test_util.h"
#include "util/input_error.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <QtTest>
#include <cmath>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <tuple>

using namespace kairos;
using json = nlohmann::json;

namespace {

const std::string kProfile = "llama2-70b-a100x2";

std::string profilePath(const std::string& name) {
    return std::string(KAIROS_SOURCE_DIR) + "/resources/profiles/" + name + ".json";
}

repro::Options options() {
    repro::Options o;
    o.data_dir = test::dataPath("");
    o.seed = 3;
    o.threads = 2;
    o.profile = [](const std::string& name) { return DeviceProfile::load(profilePath(name)); };
    return o;
}

// 60 requests of the Azure conversation trace at their own arrivals, on the shipped 2x A100
// profile; FCFS, SJF (oracle lengths) and SPRPT with limited preemption over C.
const char* kFile = R"(# a test experiment
[experiment]
paper = "trail"
title = "formulas by hand"
setting = "${workload.requests} requests on ${profile.kv_capacity_tokens} KV tokens"

[[experiment.substitute]]
paper_used = "the paper's machine"
measured_instead = "a shipped profile"

[workload]
builder = "trace"
file = "AzureLLMInferenceTrace_conv_2023.csv"
requests = 60
budget = 200

[calibrate.rlp]
kind = "lognormal_mae"
mae = 20

[device]
profile = "llama2-70b-a100x2"

[limits]
block_size = 16
max_num_seqs = 8

[[arm]]
id = "fcfs"
policy = { name = "fcfs" }

[[arm]]
id = "sjf"
label = "SJF"
policy = { name = "sjf", predictor = "${rlp.spec}" }

[[arm]]
id = "sp"
policy = { name = "sprpt_lp" }
vary = { C = [0, 0.5, 1] }
limits = { max_num_seqs = 4 }

[figure]
best = { argmin = "sp:e2el_mean_ms" }

[report]
metrics = ["e2el_mean_ms", "ttft_mean_ms"]

[[claim]]
claim = "fcfs over sjf"
unit = "ratio"
value = { ratio = ["fcfs:e2el_mean_ms", "sjf:e2el_mean_ms"] }
paper_value = 1.0
band = { kind = "at_least" }
null_model = "no effect"
null_value = 1.0
cause = "best C ${figure.best}; fcfs ${fcfs:e2el_mean_ms:1} ms"

[[claim]]
claim = "fcfs minus sjf TTFT"
unit = "ms"
value = { difference = ["fcfs:ttft_mean_ms", "sjf:ttft_mean_ms"], scale = 0.001 }

[[claim]]
claim = "best C"
unit = "C"
value = { argmin = "sp:e2el_mean_ms" }
paper_value = [0.5, 1]
band = { kind = "absolute", tol = 0 }

[[claim]]
claim = "spread"
unit = "%"
value = { spread = "sp:e2el_mean_ms", offset = -1, scale = 100 }

[[claim]]
claim = "KV of C=1"
unit = "tokens"
value = { metric = "sp@C=1:kv_capacity_tokens" }

[[claim.premise]]
what = "C=0.5 latency"
value = { metric = "sp@C=0.5:e2el_mean_ms" }
at_least = 0
why = "test"
)";

// TimeBill's methods over budgets: the mean and the rank of a varied arm.
const char* kBudgetFile = R"([experiment]
paper = "timebill"
title = "budgets by hand"
setting = "20 requests one at a time"

[workload]
builder = "trace"
file = "arxiv_summarization_lengths_llama2.csv"
requests = 20
spacing = 100

[device]
profile = "smollm-135m-cpu"

[[arm]]
id = "vanilla"
policy = { name = "timebill", params = { alpha = 0, k = 5 } }
vary = { budget = [9, 12, 20] }

[[arm]]
id = "half"
policy = { name = "timebill", params = { alpha = 0.5, k = 5 } }
vary = { budget = [9, 12, 20] }

[[arm]]
id = "tb"
policy = { name = "timebill", params = { alpha = -1, k = 2 } }
vary = { budget = [9, 12, 20] }

[[claim]]
claim = "rank of vanilla by completion"
value = { rank = ["vanilla:completion_rate", "half:completion_rate", "tb:completion_rate"] }

[[claim]]
claim = "TimeBill's mean completion"
value = { mean = "tb:completion_rate", scale = 100 }

[[claim]]
claim = "budget where TimeBill's score is highest"
value = { argmax = "tb:mean_quality" }
)";

// Loads: 80 requests of the Azure conversation trace's lengths at fractions of FCFS's service
// rate and at one rate in req/s; a selection of them, values over it, a claim at a named
// load, one run again at a longer length, figures read at a claim's row.
const char* kLoadsFile = R"([experiment]
paper = "trail"
title = "loads by hand"
setting = "FCFS serves ${mu.rate:3} req/s"

[workload]
builder = "conversation_trace"
requests = 80
loads = { of = "mu", fractions = [0.6, 1.2, 1.5], rates = [0.4] }
paper_length = { requests = 160 }

[device]
profile = "llama2-70b-a100x2"

[limits]
block_size = 16
max_num_seqs = 4

[calibrate.mu]
kind = "service_rate"
policy = { name = "fcfs" }

[[arm]]
id = "fcfs"
policy = { name = "fcfs" }

[[arm]]
id = "sjf"
policy = { name = "sjf" }

[select.busy]
where = { ratio = ["fcfs:queue_mean_ms", "fcfs:e2el_mean_ms"] }
at_least = 0.2
otherwise = "most_loaded"

[figure]
bound = { ratio = ["fcfs:queue_mean_ms", "fcfs:e2el_mean_ms"], offset = -1, scale = -1, reciprocal = true }
tokens = { sum = ["fcfs:preemptions", "sjf:completed"] }

[[claim]]
claim = "least gain over the busy loads"
unit = "x"
value = { ratio = ["fcfs:e2el_mean_ms", "sjf:e2el_mean_ms"], over = "busy", take = "min" }
paper_value = 1.05
band = { kind = "at_least" }
baseline_queue_share = { ratio = ["fcfs:queue_mean_ms", "fcfs:e2el_mean_ms"] }
cause = "at ${row.load:3}: bound ${figure.bound:4}, sum ${figure.tokens:0}, ${row.value:4}x"

[[claim.reading]]
what = "the greatest"
value = { ratio = ["fcfs:e2el_mean_ms", "sjf:e2el_mean_ms"], over = "busy", take = "max" }

[[claim.premise]]
what = "queue share at the row"
value = { ratio = ["fcfs:queue_mean_ms", "fcfs:e2el_mean_ms"] }
at_least = 0.05
why = "test"

[claim.at_length]
compared = "at_length"
what = "at ${length.requests} requests, load ${row.load:2}"
why_same = "same: ${row.value:4} and ${row.value_at_length:4}"
why_differs = "differs: ${row.value:4} and ${row.value_at_length:4}"
why_below = "below"

[[claim]]
claim = "share of busy loads where SJF is faster"
value = { ratio = ["fcfs:e2el_mean_ms", "sjf:e2el_mean_ms"], over = "busy", take = "share_above", above = 1 }

[[claim]]
claim = "TTFT gain at 0.4 req/s"
at = "rate=0.4"
value = { ratio = ["fcfs:ttft_mean_ms", "sjf:ttft_mean_ms"] }
paper_value = 1.0
band = { kind = "at_least" }
null_model = "fcfs"
null_value = { ratio = ["fcfs:ttft_mean_ms", "fcfs:ttft_mean_ms"] }

[[claim.paper_reading]]
what = "another"
paper_value = 2.0

[[claim]]
claim = "the service rate"
value = { calibration = "mu.rate" }

[[claim]]
claim = "best load for SJF"
value = { argmin = "sjf:e2el_mean_ms" }

[[claim]]
claim = "FCFS at 1.2 over 0.4 req/s"
value = { ratio = ["fcfs@load=1.2:e2el_mean_ms", "fcfs@rate=0.4:e2el_mean_ms"] }
)";

// The same run made directly: the trace file, the profile and the arm's policy in a RunSpec.
Summary direct(const std::string& policy, double C, int seats,
               const std::string& predictor = "oracle") {
    RunSpec s;
    s.workload.path = test::dataPath("AzureLLMInferenceTrace_conv_2023.csv");
    s.workload.limit = 60;
    s.workload.budget = 200;
    s.policy.predictor = predictor;
    s.exec.profile = profilePath(kProfile);
    s.policy.name = policy;
    if (policy == "sprpt_lp") s.policy.params["C"] = C;
    s.policy.seed = 3;
    s.limits.block_size = 16;
    s.limits.max_num_seqs = seats;
    return runSpec(s).summary;
}

// Every path of a JSON document: "a.b", "a[2].c".
void paths(const json& j, const std::string& at, std::vector<std::string>& out) {
    if (!at.empty()) out.push_back(at);
    if (j.is_object())
        for (auto it = j.begin(); it != j.end(); ++it)
            paths(it.value(), at.empty() ? it.key() : at + "." + it.key(), out);
    else if (j.is_array())
        for (std::size_t i = 0; i < j.size(); ++i)
            paths(j[i], at + "[" + std::to_string(i) + "]", out);
}

// The value at `path` in `j` (created where absent), and its parent with the last key.
json* at(json& j, const std::string& path, json** parent = nullptr, std::string* key = nullptr) {
    json* cur = &j;
    std::size_t pos = 0;
    while (pos < path.size()) {
        if (parent) *parent = cur;
        if (path[pos] == '[') {
            const auto end = path.find(']', pos);
            const std::size_t i = std::stoul(path.substr(pos + 1, end - pos - 1));
            if (key) *key = "[" + std::to_string(i) + "]";
            cur = &(*cur)[i];
            pos = end + 1;
        } else {
            if (path[pos] == '.') ++pos;
            const auto end = path.find_first_of(".[", pos);
            const std::string k = path.substr(pos, end == std::string::npos ? end : end - pos);
            if (key) *key = k;
            cur = &(*cur)[k];
            pos = end == std::string::npos ? path.size() : end;
        }
    }
    return cur;
}

} // namespace

class TestExperiment : public QObject {
    Q_OBJECT
private slots:
    // Each formula equals the arithmetic of the same runs made directly by runSpec.
    void formulasByHand() {
        const std::string file = test::tempPath("hand.toml");
        QVERIFY(test::writeText(file, kFile));
        const repro::Experiment e = repro::loadExperiment(file);
        QCOMPARE(e.arms, std::size_t(3));
        QCOMPARE(e.runs, std::size_t(5)); // fcfs, sjf, three values of C
        QCOMPARE(e.claims, std::size_t(5));
        const repro::Report r = repro::runExperiment(e, options());
        QCOMPARE(r.claims.size(), std::size_t(5));

        // The calibrated predictor: log-normal noise whose MAE on these 60 lengths is 20.
        ReadOptions ro;
        ro.limit = 60;
        const Workload w = readWorkload(test::dataPath("AzureLLMInferenceTrace_conv_2023.csv"), ro);
        const std::string rlp = repro::lognormalAtMae(options(), w, 20);
        {
            auto pred = makePredictor(rlp, 3);
            pred->reset(w);
            KAIROS_COMPARE_NEAR(initialMae(*pred, w), 20, 0.01);
        }
        const Summary fcfs = direct("fcfs", 0, 8), sjf = direct("sjf", 0, 8, rlp);
        std::vector<double> sp;
        for (double C : {0.0, 0.5, 1.0}) sp.push_back(direct("sprpt_lp", C, 4).e2el_ms.mean);
        QVERIFY(fcfs.e2el_ms.mean > 0 && sjf.e2el_ms.mean > 0);
        qInfo("fcfs %.1f sjf %.1f ms; sprpt_lp C=0, 0.5, 1: %.1f %.1f %.1f ms", fcfs.e2el_ms.mean,
              sjf.e2el_ms.mean, sp[0], sp[1], sp[2]);
        QCOMPARE(r.claims[0].kairos_value, fcfs.e2el_ms.mean / sjf.e2el_ms.mean);
        QCOMPARE(r.claims[0].compared["numerator"].get<double>(), fcfs.e2el_ms.mean);
        QCOMPARE(r.claims[0].null_value, 1.0);
        QCOMPARE(r.claims[0].null_model, std::string("no effect"));
        QCOMPARE(r.claims[0].band.kind, repro::Band::Kind::AtLeast);
        QCOMPARE(r.claims[1].kairos_value, (fcfs.ttft_ms.mean - sjf.ttft_ms.mean) * 0.001);
        QVERIFY(r.claims[1].compared.empty()); // not a ratio
        std::size_t best = 0;                  // the first C at the least mean latency
        for (std::size_t i = 1; i < sp.size(); ++i)
            if (sp[i] < sp[best]) best = i;
        const double Cs[] = {0, 0.5, 1};
        QCOMPARE(r.claims[2].kairos_value, Cs[best]);
        QCOMPARE(r.claims[2].paper_value, json({0.5, 1}));
        const auto [lo, hi] = std::minmax_element(sp.begin(), sp.end());
        QCOMPARE(r.claims[3].kairos_value, (*hi / *lo - 1) * 100);
        const DeviceProfile prof = DeviceProfile::load(profilePath(kProfile));
        QCOMPARE(r.claims[4].kairos_value, double(prof.kvCapacityTokens()));
        QCOMPARE(r.claims[4].premises.size(), std::size_t(1));
        QCOMPARE(r.claims[4].premises[0].value, sp[1]);
        // Texts: the first seed's numbers, the experiment's setting on every row.
        char fcfs_ms[64];
        std::snprintf(fcfs_ms, sizeof fcfs_ms, "%.1f", fcfs.e2el_ms.mean);
        const char* best_c[] = {"0", "0.5", "1"};
        QCOMPARE(r.claims[0].cause,
                 std::string("best C ") + best_c[best] + "; fcfs " + fcfs_ms + " ms");
        QCOMPARE(r.claims[0].setting,
                 "60 requests on " + std::to_string(prof.kvCapacityTokens()) + " KV tokens");
        QCOMPARE(r.claims[3].substitutes.size(), std::size_t(1));
        QVERIFY(r.details.find("SJF") != std::string::npos); // the arm's label in the table
        QVERIFY(r.prefix_caching && !*r.prefix_caching);
    }

    // Loads: the service rate, each load's runs, the selection, values over it, a claim at
    // a named load and one at the paper's length, all from runSpec's runs by hand.
    void loadsByHand() {
        const std::string file = test::tempPath("loads.toml");
        QVERIFY(test::writeText(file, kLoadsFile));
        const repro::Experiment e = repro::loadExperiment(file);
        QCOMPARE(e.runs, std::size_t(8)); // two arms at four loads
        const repro::Options opt = options();
        const repro::Report r = repro::runExperiment(e, opt);
        QCOMPARE(r.claims.size(), std::size_t(6));

        const DeviceProfile prof = DeviceProfile::load(profilePath(kProfile));
        const auto model = makeExecutionModel(prof);
        auto run = [&](const Workload& w, const std::string& policy) {
            WorkloadCache cache;
            const RunContext ctx = inMemory({}, cache, "w", w, *model);
            RunSpec s;
            s.workload.path = "w";
            s.limits.kv_capacity_tokens = prof.kvCapacityTokens();
            s.limits.block_size = 16;
            s.limits.max_num_seqs = 4;
            s.policy.name = policy;
            s.policy.seed = 3;
            return runSpec(s, ctx).summary;
        };
        const double mu =
            run(repro::conversationTrace(opt, INFINITY, 80), "fcfs").request_throughput;
        QVERIFY(mu > 0);
        QCOMPARE(r.claims[3].kairos_value, mu);
        QCOMPARE(r.claims[0].setting, "FCFS serves " + repro::fixed(mu, 3) + " req/s");
        const std::vector<double> loads{0.6, 1.2, 1.5, 0.4 / mu};
        std::vector<Summary> f, j;
        for (double x : loads) {
            const Workload w = repro::conversationTrace(opt, x * mu, 80);
            f.push_back(run(w, "fcfs"));
            j.push_back(run(w, "sjf"));
        }
        const auto share = [&](std::size_t k) { return f[k].queue_ms.mean / f[k].e2el_ms.mean; };
        const auto gain = [&](std::size_t k) { return f[k].e2el_ms.mean / j[k].e2el_ms.mean; };
        std::vector<std::size_t> busy;
        for (std::size_t k = 0; k < loads.size(); ++k)
            if (share(k) >= 0.2) busy.push_back(k);
        if (busy.empty()) busy.push_back(2); // the most loaded (1.5)
        qInfo("mu %.3f req/s; busy loads: %zu; gains %.3f %.3f %.3f %.3f", mu, busy.size(), gain(0),
              gain(1), gain(2), gain(3));
        std::size_t lo = busy[0], hi = busy[0];
        int above = 0;
        for (std::size_t k : busy) {
            if (gain(k) < gain(lo)) lo = k;
            if (gain(k) > gain(hi)) hi = k;
            above += gain(k) > 1;
        }
        qInfo("least gain at load %.3f, greatest at %.3f", loads[lo], loads[hi]);
        const repro::Claim& least = r.claims[0];
        QCOMPARE(least.kairos_value, gain(lo));
        QCOMPARE(least.load, loads[lo]);
        QCOMPARE(least.baseline_queue_share, share(lo));
        QCOMPARE(least.compared["numerator"].get<double>(), f[lo].e2el_ms.mean);
        QCOMPARE(least.readings.size(), std::size_t(1));
        QCOMPARE(least.readings[0].value, gain(hi));
        QCOMPARE(least.premises[0].value, share(lo));
        const double bound = 1 / (1 - share(lo));
        QCOMPARE(least.cause, "at " + repro::fixed(loads[lo], 3) + ": bound " +
                                  repro::fixed(bound, 4) + ", sum " +
                                  repro::fixed(double(f[lo].preemptions + j[lo].completed), 0) +
                                  ", " + repro::fixed(gain(lo), 4) + "x");
        // The paper's length: above the service rate, the 80 requests' lengths taken in turn
        // (160 distinct here: the trace has more), arrivals drawn again for 160.
        QCOMPARE(least.premises.size(), std::size_t(2));
        if (loads[lo] > 1) {
            Workload w = repro::conversationTrace(opt, loads[lo] * mu, 160);
            const auto t = generateArrivals({loads[lo] * mu, 1.0, opt.seed, 0.0}, 160);
            for (std::size_t i = 0; i < w.size(); ++i) w.requests[i].arrival = t[i];
            const double g = run(w, "fcfs").e2el_ms.mean / run(w, "sjf").e2el_ms.mean;
            QCOMPARE(least.compared["at_length"].get<double>(), g);
            const bool same = (gain(lo) >= 1.05) == (g >= 1.05);
            QCOMPARE(least.premises[1].value, same ? 1.0 : 0.0);
            QCOMPARE(least.premises[1].why, std::string(same ? "same: " : "differs: ") +
                                                repro::fixed(gain(lo), 4) + " and " +
                                                repro::fixed(g, 4));
        } else {
            QVERIFY(std::isnan(least.compared["at_length"].get<double>()));
            QCOMPARE(least.premises[1].value, 1.0);
            QCOMPARE(least.premises[1].why, std::string("below"));
        }
        QCOMPARE(least.premises[1].what, "at 160 requests, load " + repro::fixed(loads[lo], 2));
        QCOMPARE(r.claims[1].kairos_value, double(above) / double(busy.size()));
        QVERIFY(std::isnan(r.claims[1].load));
        // At a named load: 0.4 req/s, its own fraction of mu.
        QCOMPARE(r.claims[2].kairos_value, f[3].ttft_ms.mean / j[3].ttft_ms.mean);
        QCOMPARE(r.claims[2].load, 0.4 / mu);
        QCOMPARE(r.claims[2].null_value, 1.0);
        QCOMPARE(r.claims[2].paper_readings.size(), std::size_t(1));
        std::size_t best = 0; // argmin over the loads: the load's fraction
        for (std::size_t k = 1; k < loads.size(); ++k)
            if (j[k].e2el_ms.mean < j[best].e2el_ms.mean) best = k;
        QCOMPARE(r.claims[4].kairos_value, loads[best]);
        QCOMPARE(r.claims[5].kairos_value, f[1].e2el_ms.mean / f[3].e2el_ms.mean);
    }

    // An arm over budgets (a sweep's budget axis): mean and rank by hand from runSpec's runs
    // with the workload's budget set, on the same 20 requests 100 s apart (SmolLM on this
    // project's CPU profile, where eviction shortens decoding).
    void budgetsByHand() {
        const std::string file = test::tempPath("budgets.toml");
        QVERIFY(test::writeText(file, kBudgetFile));
        const repro::Report r = repro::runExperiment(repro::loadExperiment(file), options());
        const double budgets[] = {9, 12, 20};
        ReadOptions ro;
        ro.limit = 20;
        Workload w = readWorkload(test::dataPath("arxiv_summarization_lengths_llama2.csv"), ro);
        for (std::size_t i = 0; i < w.size(); ++i) w.requests[i].arrival = 100.0 * double(i);
        const DeviceProfile prof = DeviceProfile::load(profilePath("smollm-135m-cpu"));
        const auto model = makeExecutionModel(prof);
        WorkloadCache cache;
        const RunContext ctx = inMemory({}, cache, "twenty", w, *model);
        std::map<std::string, std::vector<Summary>> runs;
        for (const auto& [id, alpha, k] :
             {std::tuple{"vanilla", 0.0, 5.0}, std::tuple{"half", 0.5, 5.0},
              std::tuple{"tb", -1.0, 2.0}})
            for (double b : budgets) {
                RunSpec s;
                s.workload.path = "twenty";
                s.workload.budget = b;
                s.limits.kv_capacity_tokens = prof.kvCapacityTokens();
                s.policy.name = "timebill";
                s.policy.params = {{"alpha", alpha}, {"k", k}};
                s.policy.seed = 3;
                runs[id].push_back(runSpec(s, ctx).summary);
            }
        auto mean = [&](const std::string& id, double Summary::*m) {
            double x = 0;
            for (const Summary& s : runs[id]) x += s.*m / 3.0;
            return x;
        };
        const double v = mean("vanilla", &Summary::completion_rate);
        const double h = mean("half", &Summary::completion_rate);
        const double t = mean("tb", &Summary::completion_rate);
        qInfo("mean completion: vanilla %.4f, alpha 0.5 %.4f, TimeBill k=2 %.4f", v, h, t);
        QVERIFY(v != h || h != t); // the methods differ: the rank is not a tie
        QCOMPARE(r.claims[0].kairos_value, 1.0 + (h > v) + (t > v));
        QCOMPARE(r.claims[1].kairos_value, 100 * t);
        std::size_t best = 0;
        for (std::size_t i = 1; i < 3; ++i)
            if (runs["tb"][i].mean_quality > runs["tb"][best].mean_quality) best = i;
        QCOMPARE(r.claims[2].kairos_value, budgets[best]);
    }

    // Generated: every key of a valid file given a value of the wrong kind, an unknown key
    // added to every table, every key removed. Each such file reads or fails with an
    // InputError naming the file, a line (removed keys may have none left to name) and the
    // key; nothing else escapes.
    void badInputNamesFileLineAndKey_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("arms") << QString(kFile);
        QTest::newRow("loads") << QString(kLoadsFile);
    }
    void badInputNamesFileLineAndKey() {
        QFETCH(QString, text);
        const std::string source = text.toStdString();
        const std::string good = test::tempPath("good.toml");
        QVERIFY(test::writeText(good, source));
        (void)repro::loadExperiment(good);
        std::map<std::string, long> lines;
        const json doc = tomlToJson(source, good, &lines);
        std::vector<std::string> all;
        paths(doc, "", all);
        int cases = 0, refused = 0;
        const std::string file = test::tempPath("mutated.toml");
        auto check = [&](const json& mutated, const std::string& what, bool must_fail,
                         bool needs_line) {
            ++cases;
            QVERIFY(test::writeText(file, jsonToToml(mutated)));
            try {
                (void)repro::loadExperiment(file);
                QVERIFY2(!must_fail, qPrintable(QString::fromStdString(what + ": read")));
            } catch (const InputError& e) {
                ++refused;
                QVERIFY2(e.file() == file, qPrintable(QString::fromStdString(what)));
                QVERIFY2(!e.field().empty(),
                         qPrintable(QString::fromStdString(what + ": " + e.what())));
                QVERIFY2(!needs_line || e.line() > 0,
                         qPrintable(QString::fromStdString(what + ": " + e.what())));
            }
        };
        for (const std::string& p : all) {
            json* parent = nullptr;
            std::string key;
            json m = doc;
            json* v = at(m, p, &parent, &key);
            const json original = *v;
            // A value of the wrong kind.
            *v = original.is_string()                            ? json(12345)
                 : original.is_number() || original.is_boolean() ? json("text")
                                                                 : json(7);
            // A number stands for a string nowhere; a string for a number only where "inf" or
            // a placeholder is allowed; 7 in place of a formula table is a constant formula.
            check(m, "wrong kind at " + p, false, true);
            // An unknown key in every table (figures take any name: a new figure is one).
            if (original.is_object() && p != "figure" && p.find("calibrate.") != 0 &&
                p != "calibrate" && p != "select") {
                json u = doc;
                (*at(u, p))["zz_unknown"] = 1;
                check(u, "unknown key in " + p, true, true);
            }
            // Removed.
            json r = doc;
            json* rp = nullptr;
            std::string rk;
            (void)at(r, p, &rp, &rk);
            if (rk.front() == '[')
                rp->erase(std::stoul(rk.substr(1)));
            else
                rp->erase(rk);
            check(r, "removed " + p, false, false);
        }
        {
            json u = doc;
            u["zz_unknown"] = 1;
            check(u, "unknown top-level key", true, true);
        }
        qInfo("%d mutated files, %d refused", cases, refused);
        QVERIFY2(cases > 120, qPrintable(QString::number(cases)));
        QVERIFY2(refused > cases / 2, qPrintable(QString("%1 of %2").arg(refused).arg(cases)));
    }

    // Formulas, references and placeholders that name nothing: each refused before anything
    // runs, with the key at fault and its line.
    void wrongReferencesAreNamed() {
        struct Case {
            const char* from;
            const char* to;
            const char* field;
            const char* says;
        };
        const Case cases[] = {
            {"\"fcfs:e2el_mean_ms\", \"sjf", "\"fifo:e2el_mean_ms\", \"sjf", "claim[0].value.ratio",
             "names no arm 'fifo'"},
            {"sjf:e2el_mean_ms\"] }", "sjf:e2e_mean_ms\"] }", "claim[0].value.ratio",
             "no metric 'e2e_mean_ms'"},
            {"{ argmin = \"sp:e2el_mean_ms\" }\npaper", "{ argmin = \"fcfs:e2el_mean_ms\" }\npaper",
             "claim[2].value.argmin", "reads over an arm's varied parameter"},
            {"sp@C=1:kv_capacity_tokens", "sp@C=0.7:kv_capacity_tokens", "claim[4].value.metric",
             "has no run at C = 0.7"},
            {"sp@C=0.5:e2el_mean_ms", "sp:e2el_mean_ms", "claim[4].premise[0].value.metric",
             "name a point"},
            {"${figure.best}", "${figure.worst}", "claim[0].cause", "no figure 'worst'"},
            {"${workload.requests}", "${workload.size}", "experiment.setting", "names nothing"},
            {"vary = { C = [0, 0.5, 1] }", "vary = { D = [0, 0.5, 1] }", "arm[2].vary.D",
             "no policy of the sweep has a parameter 'D'"},
            {"kind = \"at_least\"", "kind = \"atleast\"", "claim[0].band.kind", "must be"},
            {"paper_value = 1.0", "paper_value = [2, 1]", "claim[0].paper_value", "[low, high]"},
            {"max_num_seqs = 4", "max_num_seqs = 0", "arm[2].limits.max_num_seqs", "whole number"},
            {"builder = \"trace\"", "builder = \"tracer\"", "workload.builder", "must be"},
            {"requests = 60\n", "requests = 60\nspacing = 5\nrate = 2\n", "workload.spacing",
             "without a rate"},
            {"mae = 20", "mae = -1", "calibrate.rlp.mae", "must be a finite number > 0"},
            {"claim = \"fcfs over sjf\"", "claim = \"fcfs over sjf at ${seed}\"", "claim[0].claim",
             "no ${...} here"},
            {"paper_value = 1.0", "paper_value = nan", "claim[0].paper_value", "finite number"},
            {"band = { kind = \"at_least\" }\nnull", "null", "claim[0].band",
             "is required with paper_value"},
            {"\"fcfs:e2el_mean_ms\", \"sjf", "\"sp:e2el_mean_ms\", \"sjf", "claim[0].value.ratio",
             "name a point"},
            {"vary = { C = [0, 0.5, 1] }", "vary = { C = [0, 0.5, 0.50] }", "arm[2].vary.C",
             "0.5 appears twice"},
            {"sp@C=1:kv_capacity_tokens", "sp@C=1xyz:kv_capacity_tokens", "claim[4].value.metric",
             "is not a number"},
            {"kind = \"at_least\"", "kind = \"direction\", pivot = nan", "claim[0].band.pivot",
             "finite"},
            {"vary = { C = [0, 0.5, 1] }", "vary = { budget = [10, 20] }", "arm[2].vary.budget",
             "gives every request its budget already"},
            {"{ argmin = \"sp:e2el_mean_ms\" }\npaper", "{ mean = \"sp@C=1:e2el_mean_ms\" }\npaper",
             "claim[2].value.mean", "name the arm alone"},
            {"{ metric = \"sp@C=1:kv_capacity_tokens\" }",
             "{ rank = [\"sp@C=1:kv_capacity_tokens\", \"fcfs:e2el_mean_ms\"] }",
             "claim[4].value.rank", "without a point"},
            {"\"${rlp.spec}\"", "\"${rlp.refined}\"", "arm[1].policy.predictor",
             "only a calibration's value"},
            {"file = \"AzureLLMInferenceTrace_conv_2023.csv\"", "file = \"../x.csv\"",
             "workload.file", "not a path"},
        };
        // The loads' keys, on the file with loads.
        const Case load_cases[] = {
            {"of = \"mu\"", "of = \"nu\"", "workload.loads.of", "names no [calibrate.NAME]"},
            {"rates = [0.4]", "rates = [0.4, 0.40]", "workload.loads.rates", "appears twice"},
            {"fractions = [0.6, 1.2, 1.5]", "fractions = [0.6, -1]", "workload.loads.fractions",
             "finite numbers > 0"},
            {"requests = 80\n", "requests = 80\nrate = 3\n", "workload.rate", "not both"},
            {"over = \"busy\", take = \"min\"", "over = \"idle\", take = \"min\"",
             "claim[0].value.over", "must name a [select.NAME]"},
            {"over = \"busy\", take = \"min\"", "over = \"busy\", take = \"median\"",
             "claim[0].value.take", "must be min, max or share_above"},
            {"at = \"rate=0.4\"", "at = \"rate=0.5\"", "claim[2].at", "not one of the workload's"},
            {"at = \"rate=0.4\"", "at = \"speed=0.4\"", "claim[2].at", "load=FRACTION"},
            {"{ calibration = \"mu.rate\" }", "{ calibration = \"mu.mae\" }",
             "claim[3].value.calibration", "must name a calibration's number"},
            {"fcfs@load=1.2:e2el", "fcfs@load=1.3:e2el", "claim[5].value.ratio",
             "has no run at load = 1.3"},
            {"fcfs@rate=0.4:e2el", "fcfs:e2el", "claim[5].value.ratio", "runs at every load"},
            {"${row.value:4}x\"", "${row.value_at_length:4}x\"", "claim[0].cause", ""},
            {"kind = \"service_rate\"", "kind = \"service\"", "calibrate.mu.kind", "must be"},
            {"otherwise = \"most_loaded\"", "otherwise = \"all\"", "select.busy.otherwise",
             "must be none or most_loaded"},
            {"value = { calibration = \"mu.rate\" }",
             "value = { calibration = \"mu.rate\" }\ncause = \"${row.load}\"", "claim[3].cause",
             "only in a claim with a row"},
            {"setting = \"FCFS serves ${mu.rate:3} req/s\"",
             "setting = \"FCFS serves ${figure.bound} req/s\"", "experiment.setting",
             "read at a load"},
        };
        const std::string file = test::tempPath("wrong.toml");
        for (const Case& c : load_cases) {
            std::string text = kLoadsFile;
            const auto pos = text.find(c.from);
            QVERIFY2(pos != std::string::npos, c.from);
            text.replace(pos, std::strlen(c.from), c.to);
            QVERIFY(test::writeText(file, text));
            try {
                (void)repro::loadExperiment(file);
                if (std::string(c.says).empty()) continue; // allowed (a claim with at_length)
                QFAIL(c.to);
            } catch (const InputError& e) {
                QVERIFY2(!std::string(c.says).empty(),
                         qPrintable(QString::fromStdString(e.what())));
                QVERIFY2(e.field() == c.field, qPrintable(QString::fromStdString(e.what())));
                QVERIFY2(std::string(e.what()).find(c.says) != std::string::npos,
                         qPrintable(QString::fromStdString(e.what())));
                QVERIFY2(e.line() > 0, qPrintable(QString::fromStdString(e.what())));
            }
        }
        for (const Case& c : cases) {
            std::string text = kFile;
            const auto pos = text.find(c.from);
            QVERIFY2(pos != std::string::npos, c.from);
            text.replace(pos, std::strlen(c.from), c.to);
            QVERIFY(test::writeText(file, text));
            try {
                (void)repro::loadExperiment(file);
                QFAIL(c.to);
            } catch (const InputError& e) {
                QVERIFY2(e.field() == c.field, qPrintable(QString::fromStdString(e.what())));
                QVERIFY2(std::string(e.what()).find(c.says) != std::string::npos,
                         qPrintable(QString::fromStdString(e.what())));
                QVERIFY2(e.line() > 0, qPrintable(QString::fromStdString(e.what())));
            }
        }
    }

    // A figure that is not a number (0 / 0: FCFS preempts nothing) is not comparable, not a
    // disagreement; a null model without a number at some seeds makes the row not comparable.
    void noNumberIsNotComparable() {
        std::string text = kFile;
        const std::string from =
            "value = { ratio = [\"fcfs:e2el_mean_ms\", \"sjf:e2el_mean_ms\"] }";
        const auto pos = text.find(from);
        QVERIFY(pos != std::string::npos);
        text.replace(pos, from.size(),
                     "value = { ratio = [\"fcfs:preemptions\", \"sjf:preemptions\"] }");
        const std::string file = test::tempPath("nan.toml");
        QVERIFY(test::writeText(file, text));
        const repro::Report r = repro::runExperiment(repro::loadExperiment(file), options());
        QVERIFY(std::isnan(r.claims[0].kairos_value));
        const auto judged = repro::aggregate({r.claims});
        QCOMPARE(judged[0].verdict, repro::Verdict::NotComparable);
        QVERIFY(judged[0].not_comparable.find("not a number") != std::string::npos);
        // The null model: a number at one seed, none at the other.
        std::vector<repro::Claim> one = r.claims, two = r.claims;
        for (auto* c : {&one[3], &two[3]}) {
            c->paper_value = 1.0;
            c->band = repro::Band::atLeast();
            c->null_model = "a null";
            c->kairos_value = 2;
        }
        one[3].null_value = 0.5;
        two[3].null_value = NAN;
        const auto mixed = repro::aggregate({one, two});
        QCOMPARE(mixed[3].verdict, repro::Verdict::NotComparable);
        QVERIFY(mixed[3].not_comparable.find("gives no number at 1 of 2 seeds") !=
                std::string::npos);
    }

    // The shipped files read, each names its paper, and no two share a title.
    void shippedFilesRead() {
        const std::string dir = std::string(KAIROS_SOURCE_DIR) + "/resources/experiments";
        const auto files = repro::experimentFiles(dir);
        QVERIFY(files.size() >= 2);
        std::set<std::string> titles;
        for (const auto& f : files) {
            const repro::Experiment e = repro::loadExperiment(f);
            QVERIFY2(titles.insert(e.title).second, f.c_str());
            QCOMPARE(repro::experimentFiles(dir, e.paper).empty(), false);
            QVERIFY(e.claims > 0 && e.runs >= e.arms);
        }
        QCOMPARE(repro::experimentFiles(dir, "trail").size(), std::size_t(3));
        QCOMPARE(repro::experimentFiles(dir, "timebill").size(), std::size_t(3));
        QVERIFY(repro::isExperimentPath("x.toml") && !repro::isExperimentPath("trail") &&
                !repro::isExperimentPath("all"));
    }
};

QTEST_GUILESS_MAIN(TestExperiment)
#include "tst_experiment.moc"
