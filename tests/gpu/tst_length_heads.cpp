// Length predictors on the live model: TimeBill's RLP head and Trail's probe, trained on
// (prompt, length) pairs collected from a live run of the tiny transformer on the
// synthetic task in which the prompt tells the output length's bucket (LiveOptions::
// length_cue), evaluated on held-out requests against baselines from the same data;
// saved and loaded; and plugged into a live run as the schedulers' predictor.
#include "length_heads.h"
#include "length_study.h"
#include "metrics/request_metrics.h"
#include "predict/trail_predictor.h"
#include "sched/registry.h"
#include "util/input_error.h"
#include "weights/safetensors.h"

#include <QtTest/QtTest>
#include <cmath>
#include <limits>
#include <random>

using namespace kairos;
using namespace kairos::gpu;

namespace {

constexpr int kCue = 16; // tokens per length bucket in the task
constexpr int kLongest = 96;

// Output lengths uniform in 1..96 (6 buckets), prompts 16..47 tokens, all at t = 0.
Workload taskWorkload(int n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> out(1, kLongest), prompt(16, 47);
    Workload w;
    w.name = "length-task";
    for (int i = 0; i < n; ++i) {
        Request r;
        r.id = i;
        r.arrival = 0.0;
        r.prompt_tokens = prompt(rng);
        r.output_tokens = out(rng);
        w.requests.push_back(r);
    }
    // The longest length is present, so every run cuts the vocabulary the same way.
    w.requests.back().output_tokens = kLongest;
    return w;
}

Transformer& model() {
    static Transformer m(builtinConfig("tiny"), {});
    return m;
}

LengthHeadOptions headOptions() {
    LengthHeadOptions o;
    o.layer = 1;
    o.bucket = kCue;
    o.n_max = kLongest;
    o.bins = 12;
    o.l_max = kLongest;
    o.every = 1;
    o.rlp_hidden = 64;
    o.probe_hidden = 128;
    o.rlp_epochs = 200;
    o.probe_epochs = 40;
    o.seed = 3;
    return o;
}

// Runs `w` live under `policy` with the task's prompts; collects readings when asked.
RunLog runTask(const Workload& w, const std::string& policy, LengthCollector* collector,
               std::vector<LengthSample>* samples,
               std::shared_ptr<LivePredictor>* predictor = nullptr,
               std::shared_ptr<const LengthHeads> heads = nullptr, const char* mode = "trail") {
    LiveOptions lo;
    lo.length_cue = kCue;
    TorchBackend backend(model(), w, lo);
    if (collector) backend.setObserver(collector);
    PolicyConfig pc;
    pc.name = policy;
    if (heads) {
        auto p = std::make_shared<LivePredictor>(heads, mode, model(), backend);
        pc.predictor_instance = p;
        if (predictor) *predictor = p;
    }
    auto sched = makeScheduler(pc);
    EngineLimits lim;
    lim.kv_capacity_tokens = 1 << 20;
    UnitModel planning;
    Simulator engine(w, planning, *sched, lim, &backend);
    RunLog log = engine.run();
    if (collector && samples) *samples = collector->samples(model(), backend, w);
    return log;
}

struct Trained {
    std::vector<LengthSample> train, test;
    std::shared_ptr<const LengthHeads> heads;
    double mean_length = 0;
    TrainLog log;
};

const Trained& trained() {
    static const Trained t = [] {
        Trained r;
        const Workload w = taskWorkload(200, 11);
        LengthCollector c(1, 1);
        std::vector<LengthSample> all;
        runTask(w, "fcfs", &c, &all);
        r.train.assign(all.begin(), all.begin() + 150);
        r.test.assign(all.begin() + 150, all.end());
        for (const auto& s : r.train) r.mean_length += s.length;
        r.mean_length /= double(r.train.size());
        r.heads = std::make_shared<LengthHeads>(
            LengthHeads::train(r.train, model().config().hidden, headOptions(), &r.log));
        return r;
    }();
    return t;
}

} // namespace

class TestLengthHeads : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The task: prompt ids come from the slice of the vocabulary of the length's bucket.
    void promptsCarryTheBucket() {
        Workload w = taskWorkload(30, 5);
        LiveOptions lo;
        lo.length_cue = kCue;
        TorchBackend b(model(), w, lo);
        const int slice = model().config().vocab / (kLongest / kCue); // 512 / 6 = 85 ids
        const int ids = int(kCueIds);                                 // of which 64 used
        for (const auto& r : w.requests) {
            const int bucket = (r.output_tokens - 1) / kCue;
            for (auto t : b.promptTokens(r.id)) {
                QVERIFY(t >= bucket * slice);
                QVERIFY(t < bucket * slice + ids);
            }
        }
        // Without the cue the ids span the vocabulary.
        TorchBackend plain(model(), w);
        std::int64_t hi = 0;
        for (const auto& r : w.requests)
            for (auto t : plain.promptTokens(r.id)) hi = std::max(hi, t);
        QVERIFY(hi >= slice);
        lo.length_cue = 1; // 96 buckets of 5 ids: fine; 1,000 buckets would not be
        TorchBackend ok(model(), w, lo);
        Workload longw = w;
        longw.requests[0].output_tokens = 1000;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, TorchBackend(model(), longw, lo));
    }

    // The reading the engine hands the observer is the residual stream a full
    // recomputation of the same context gives at that position.
    void readingsMatchRecomputation() {
        Workload w = taskWorkload(3, 9);
        LengthCollector c(1, 4);
        std::vector<LengthSample> s;
        runTask(w, "fcfs", &c, &s);
        LiveOptions lo;
        lo.length_cue = kCue;
        TorchBackend b(model(), w, lo);
        QCOMPARE(int(s.size()), 3);
        for (const auto& smp : s) {
            // Readings every 4 tokens, from 4 up to length - 1.
            for (const auto& [g, h] : smp.readings) {
                QCOMPARE(g % 4, 0);
                QVERIFY(g >= 4 && g < smp.length);
            }
            QCOMPARE(int(smp.readings.size()), (smp.length - 1) / 4);
            QCOMPARE(smp.prompt.numel(), std::int64_t(64));
        }
        // Regenerate request 0's tokens greedily and recompute its context in one go.
        const auto& smp = s[0];
        if (smp.readings.empty()) QSKIP("request 0 too short for a reading");
        std::vector<std::int64_t> ctx = b.promptTokens(0);
        const auto n_prompt = ctx.size();
        SeqCache cache;
        std::vector<Transformer::Step> st{{&cache, ctx}};
        // The task keeps the answer in the bucket's slice of the vocabulary.
        const auto [first, size] = b.cueSlice(0);
        QCOMPARE(size, kCueIds);
        // ... and repeats none of its last kCueNoRepeat tokens.
        std::vector<std::int64_t> answer;
        auto pick = [&, first = first, size = size](const at::Tensor& logits) {
            at::Tensor l = logits[0].narrow(0, first, size).clone();
            for (std::size_t k = answer.size() - std::min(answer.size(), kCueNoRepeat);
                 k < answer.size(); ++k)
                l[answer[k] - first] = -std::numeric_limits<float>::infinity();
            return l.argmax().item<std::int64_t>() + first;
        };
        std::int64_t next = pick(model().forward(st));
        for (int g = 1; g < smp.length; ++g) {
            QVERIFY(next >= first && next < first + size);
            answer.push_back(next);
            ctx.push_back(next);
            std::vector<Transformer::Step> d{{&cache, {next}}};
            next = pick(model().forward(d));
        }
        const at::Tensor full = model().hiddenStates(ctx, 1); // [prompt + length - 1, 64]
        for (const auto& [g, h] : smp.readings) {
            const at::Tensor want = full[std::int64_t(n_prompt) + g - 1];
            QVERIFY2(at::allclose(h, want, 1e-4, 1e-4), qPrintable(QString("reading %1").arg(g)));
        }
        // The prompt feature is the mean over the prompt's positions.
        QVERIFY(at::allclose(smp.prompt, full.narrow(0, 0, std::int64_t(n_prompt)).mean(0), 1e-4,
                             1e-4));
    }

    // TimeBill's RLP learns the bucket: far above chance (1 in 6) and well under the
    // constant (training mean) predictor's error.
    void rlpLearnsTheTask() {
        const Trained& t = trained();
        const LengthEval e = evaluateHeads(*t.heads, t.test, t.mean_length);
        qInfo("RLP: bucket accuracy %.2f, MAE %.1f tokens; training-mean baseline %.1f "
              "(train loss %.3f, %d examples)",
              e.rlp_bucket_accuracy, e.rlp_mae, e.mean_baseline_mae, t.log.rlp_loss,
              t.log.rlp_examples);
        QCOMPARE(e.requests, 50);
        QVERIFY(e.rlp_bucket_accuracy >= 0.8);
        QVERIFY(e.rlp_mae < 0.5 * e.mean_baseline_mae);
        // RMSE at least the MAE; R^2 against the held-out mean: the RLP explains most of
        // the variance, the training mean none of it (about 0, below when the means differ).
        QVERIFY(e.rlp_rmse >= e.rlp_mae && e.mean_baseline_rmse >= e.mean_baseline_mae);
        QVERIFY2(e.rlp_r2 > 0.6, qPrintable(QString::number(e.rlp_r2)));
        QVERIFY(e.mean_baseline_r2 <= 1e-9 && e.mean_baseline_r2 > -0.2);
        // The RLP alone (probe untrained) evaluates the same.
        LengthHeadOptions alone = headOptions();
        alone.probe_epochs = 0;
        const auto rlp_only = LengthHeads::train(t.train, model().config().hidden, alone);
        QCOMPARE(evaluateHeads(rlp_only, t.test, t.mean_length).rlp_mae, e.rlp_mae);
        // A right bucket predicts its upper edge: within B - 1 tokens of the truth.
        for (const auto& s : t.test) {
            const double p = t.heads->rlpPredict(s.prompt);
            QVERIFY(p >= kCue && p <= kLongest && std::fmod(p, kCue) == 0);
        }
    }

    // Trail's probe reads the bucket from generated tokens' embeddings and the age;
    // smoothed, its remaining-length estimates beat the mean-length countdown by far and
    // come close to the task's floor (told the bucket, nothing more can be known: the
    // length within it is drawn at random), as does the prompt's reading.
    void probeLearnsTheTask() {
        const Trained& t = trained();
        const LengthEval e = evaluateHeads(*t.heads, t.test, t.mean_length);
        qInfo("probe: bin accuracy %.2f over %ld readings; remaining-length MAE refined %.2f, "
              "prompt-only %.2f, RLP countdown %.2f, mean countdown %.2f (%ld tokens; train loss "
              "%.3f)",
              e.probe_bin_accuracy, e.readings, e.trail_refined_mae, e.trail_prompt_only_mae,
              e.rlp_countdown_mae, e.mean_countdown_mae, e.tokens, t.log.probe_loss);
        const double floor = bucketOracleMae(t.test, kCue);
        qInfo("floor of the task (told the bucket): %.2f", floor);
        // Chance is 1 in 12; a bucket spans 2 bins and a bit, so about half is the best.
        QVERIFY(e.probe_bin_accuracy > 3.0 / 12.0);
        QVERIFY(e.trail_refined_mae < 0.5 * e.mean_countdown_mae);
        QVERIFY(e.trail_refined_mae <= 1.5 * floor); // bins of 8 tokens, a mean not a median
        QVERIFY(e.trail_refined_mae <= 1.1 * e.trail_prompt_only_mae);
        // The temper sweep: its first point is Trail's rule, the options' own.
        QCOMPARE(e.temper_mae.size(), std::size_t(5));
        QCOMPARE(e.temper_mae[0].first, 1.0);
        QCOMPARE(e.temper_mae[0].second, e.trail_refined_mae);
        for (const auto& [t, mae] : e.temper_mae) {
            qInfo("  temper %.2f: refined MAE %.2f", t, mae);
            QVERIFY(mae > 0 && mae < e.mean_countdown_mae);
        }
        LengthHeadOptions bad = headOptions();
        bad.temper = 0;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, bad.validate());
    }

    // The temper chosen on a validation split of the training requests, never the test's:
    // the sweep's lowest validation error; on the test it does no worse than Trail's rule.
    void temperChosenOnValidation() {
        const Trained& t = trained();
        const int hidden = model().config().hidden;
        const TemperChoice c = chooseTemper(t.train, hidden, headOptions());
        QCOMPARE(c.validation_requests, 30); // 20 % of 150
        QCOMPARE(c.validation_mae.size(), std::size_t(5));
        double best = std::numeric_limits<double>::infinity(), chosen_val = NAN;
        for (const auto& [temper, mae] : c.validation_mae) {
            qInfo("  validation, temper %.2f: refined MAE %.2f", temper, mae);
            best = std::min(best, mae);
            if (temper == c.temper) chosen_val = mae;
        }
        QCOMPARE(chosen_val, best);
        const LengthEval e = evaluateHeads(*t.heads, t.test, t.mean_length);
        double chosen_test = NAN;
        for (const auto& [temper, mae] : e.temper_mae)
            if (temper == c.temper) chosen_test = mae;
        qInfo("chosen temper %.2f: held-out refined MAE %.2f, Trail's rule %.2f", c.temper,
              chosen_test, e.trail_refined_mae);
        QVERIFY(chosen_test <= 1.05 * e.trail_refined_mae);
        // Two requests leave no validation request: named, not a crash.
        const std::vector<LengthSample> two(t.train.begin(), t.train.begin() + 2);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, chooseTemper(two, hidden, headOptions()));
    }

    void saveLoadRoundTrip() {
        const Trained& t = trained();
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/heads.safetensors").toStdString();
        t.heads->save(path, {{"model", "tiny"}});
        const LengthHeads back = LengthHeads::load(path);
        QCOMPARE(back.metadata().at("model"), std::string("tiny"));
        QCOMPARE(back.options().layer, 1);
        QCOMPARE(back.options().bins, 12);
        QCOMPARE(back.options().temper, 1.0);
        for (const auto& s : t.test) {
            QCOMPARE(back.rlpProbs(s.prompt), t.heads->rlpProbs(s.prompt));
            for (const auto& [g, h] : s.readings) QCOMPARE(back.probe(h, g), t.heads->probe(h, g));
        }
        // Not a heads file: a checkpoint without the metadata.
        const float one = 1;
        const std::string other = (dir.path() + "/other.safetensors").toStdString();
        safetensors::write(other, {{"x", safetensors::DType::F32, {1}, &one, 4}});
        try {
            LengthHeads::load(other);
            QFAIL("loaded a file without heads");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("__metadata__.format") != std::string::npos);
        }
        // A head of the wrong shape names the tensor.
        std::map<std::string, std::string> meta = back.metadata();
        meta["hidden"] = "65";
        safetensors::write(other, {{"rlp.0.weight", safetensors::DType::F32, {1}, &one, 4}}, meta);
        try {
            LengthHeads::load(other);
            QFAIL("loaded a mismatched head");
        } catch (const InputError& e) {
            QVERIFY(std::string(e.what()).find("rlp.0.weight") != std::string::npos);
        }
    }

    // `kairos-cli lengths`' study without the command: the same split, training and
    // evaluation as the hand-built ones above, give the same figures; the text and JSON
    // report them; the split's and the prompt floor's arithmetic by hand.
    void lengthStudy() {
        QCOMPARE(heldOutCount(200, 0.25), std::size_t(50));
        QCOMPARE(heldOutCount(3, 0.5), std::size_t(2)); // round(1.5) = 2, one left to train
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, heldOutCount(200, 0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, heldOutCount(200, 1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, heldOutCount(2, 0.1)); // none held out
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, heldOutCount(2, 0.9)); // none to train
        // Answers 10, 20, 30: medians of the others 25, 20, 15; errors 15, 0, 15.
        QCOMPARE(bestFromPromptMae({{10, 20, 30}}), 10.0);
        // With a second prompt answered 7 and 9: errors 2 and 2; (30 + 4) / 5 answers.
        QCOMPARE(bestFromPromptMae({{10, 20, 30}, {7, 9}}), 34.0 / 5.0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, bestFromPromptMae({{4}}));

        const Trained& t = trained();
        std::vector<LengthSample> all = t.train;
        all.insert(all.end(), t.test.begin(), t.test.end());
        LengthStudyOptions o;
        o.heads = headOptions();
        o.test_fraction = 0.25;
        o.bucket_sweep = {32};
        o.length_cue = kCue;
        const LengthStudy s = studyLengths(all, model().config().hidden, o);
        QCOMPARE(s.train_requests, std::size_t(150));
        QCOMPARE(s.held_out.size(), std::size_t(50));
        for (std::size_t i = 0; i < t.test.size(); ++i) {
            QCOMPARE(s.held_out[i], t.test[i].id);
            QCOMPARE(s.held_out_lengths[i], t.test[i].length);
        }
        QCOMPARE(s.train_mean, t.mean_length);
        const LengthEval e = evaluateHeads(*t.heads, t.test, t.mean_length);
        QCOMPARE(s.eval.rlp_mae, e.rlp_mae);
        QCOMPARE(s.eval.trail_refined_mae, e.trail_refined_mae);
        QCOMPARE(s.bucket_floor, bucketOracleMae(t.test, kCue));
        QCOMPARE(s.bucket_sweep.size(), std::size_t(1));
        QCOMPARE(s.bucket_sweep[0].bucket, 32);
        QCOMPARE(s.bucket_sweep[0].buckets, 3); // N_max 96 / 32
        QVERIFY(s.bucket_sweep[0].mae > 0);
        const std::string text = lengthStudyText(s);
        QVERIFY(text.find("RLP (TimeBill, B=16)") != std::string::npos);
        QVERIFY(text.find("RLP alone, B=32") != std::string::npos);
        QVERIFY(text.find("told the true bucket") != std::string::npos);
        QVERIFY(text.find("best from the prompt") == std::string::npos);
        const nlohmann::json j = lengthStudyJson(s, "tiny");
        QCOMPARE(j["test_requests"].get<int>(), 50);
        QCOMPARE(j["train_requests"].get<int>(), 150);
        QCOMPARE(j["rlp"]["mae"].get<double>(), e.rlp_mae);
        QCOMPARE(j["remaining_mae"]["bucket_floor"].get<double>(), s.bucket_floor);
        QVERIFY(j["best_from_prompt_mae"].is_null());
        QCOMPARE(j["rlp_bucket_sweep"].size(), std::size_t(1));
        // Without the synthetic task there is no floor: null, not a number.
        o.length_cue = 0;
        o.bucket_sweep.clear();
        o.heads.rlp_epochs = 1;
        o.heads.probe_epochs = 0;
        const LengthStudy quick = studyLengths(all, model().config().hidden, o);
        QVERIFY(lengthStudyJson(quick, "tiny")["remaining_mae"]["bucket_floor"].is_null());
        QVERIFY(lengthStudyText(quick).find("told the true bucket") == std::string::npos);
        // Too few requests to hold any out: named, before anything trains.
        const std::vector<LengthSample> two(all.begin(), all.begin() + 2);
        o.test_fraction = 0.1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 studyLengths(two, model().config().hidden, o));
    }

    // The collecting run and a second run's answers: greedy decoding answers each prompt
    // as the run that collected it did, and the samples are the collector's.
    void collectAndAnswerAgain() {
        const Workload w = taskWorkload(12, 5);
        LiveOptions lo;
        lo.length_cue = kCue;
        PolicyConfig pc;
        pc.name = "fcfs";
        EngineLimits lim;
        lim.kv_capacity_tokens = 1 << 20;
        const LengthCollection got = collectLengths(model(), w, lo, pc, lim, 1, 1);
        std::vector<LengthSample> by_hand;
        LengthCollector c(1, 1);
        runTask(w, "fcfs", &c, &by_hand);
        QCOMPARE(got.samples.size(), by_hand.size());
        QVERIFY(got.iterations > 0);
        QVERIFY(!got.device.empty());
        std::vector<ReqId> ids;
        for (std::size_t i = 0; i < by_hand.size(); ++i) {
            QCOMPARE(got.samples[i].id, by_hand[i].id);
            QCOMPARE(got.samples[i].length, by_hand[i].length);
            QCOMPARE(got.samples[i].readings.size(), by_hand[i].readings.size());
            QVERIFY(at::allclose(got.samples[i].prompt, by_hand[i].prompt));
            ids.push_back(by_hand[i].id);
        }
        const std::vector<int> again = answerLengths(model(), w, lo, pc, lim, ids);
        for (std::size_t i = 0; i < ids.size(); ++i) QCOMPARE(again[i], by_hand[i].length);
    }

    // The heads as a live run's predictor: the prompt reading at arrival is the one the
    // evaluation computes; Trail refreshes from the engine's decode steps; every request
    // of a run scheduled by them finishes.
    void livePredictorDrivesScheduling() {
        const Trained& t = trained();
        const Workload w = taskWorkload(24, 21);
        std::vector<LengthSample> fcfs_samples;
        LengthCollector c(1, 1);
        runTask(w, "fcfs", &c, &fcfs_samples);
        std::shared_ptr<LivePredictor> trail;
        const RunLog srpt = runTask(w, "sprpt_lp", nullptr, nullptr, &trail, t.heads, "trail");
        const auto done = perRequest(srpt);
        QCOMPARE(done.size(), w.requests.size());
        for (const auto& r : done) QVERIFY(r.finished);
        for (const auto& s : fcfs_samples) {
            const double want = std::max(1.0, t.heads->binEstimate(t.heads->promptBins(s.prompt)));
            QVERIFY(std::fabs(trail->initial(s.id) - want) < 1e-3 * want);
            // After the run, the posterior reflects the last reading (length - 1).
            if (s.length > 1) QCOMPARE(trail->remaining(s.id, s.length - 1) >= 1.0, true);
        }
        QCOMPARE(trail->refreshEvery(), 1);
        // A policy that never asks for lengths: the readings still arrive, nothing breaks.
        std::shared_ptr<LivePredictor> unused;
        const RunLog plain = runTask(w, "fcfs", nullptr, nullptr, &unused, t.heads, "trail");
        for (const auto& r : perRequest(plain)) QVERIFY(r.finished);
        std::shared_ptr<LivePredictor> rlp;
        runTask(w, "sjf", nullptr, nullptr, &rlp, t.heads, "rlp");
        QCOMPARE(rlp->refreshEvery(), 0);
        for (const auto& s : fcfs_samples) {
            QCOMPARE(rlp->initial(s.id), t.heads->rlpPredict(s.prompt));
            QCOMPARE(rlp->remaining(s.id, 5), std::max(1.0, rlp->initial(s.id) - 5));
        }
        // An unknown mode is refused.
        TorchBackend b(model(), w);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 LivePredictor(t.heads, "bogus", model(), b));
    }
};

QTEST_GUILESS_MAIN(TestLengthHeads)
#include "tst_length_heads.moc"
