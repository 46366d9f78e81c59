#include "length_study.h"

#include "metrics/stats.h"
#include "util/text.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kairos::gpu {

LengthCollection collectLengths(Transformer& m, const Workload& w, const LiveOptions& live,
                                const PolicyConfig& policy, const EngineLimits& lim, int layer,
                                int every) {
    TorchBackend backend(m, w, live);
    LengthCollector collector(layer, every);
    backend.setObserver(&collector);
    auto sched = makeScheduler(policy);
    const UnitModel planning; // the live backend times every step; the plan is not used
    Simulator engine(w, planning, *sched, lim, &backend);
    LengthCollection c;
    c.device = backend.describe();
    c.log = engine.run();
    c.samples = collector.samples(m, backend, w);
    c.iterations = static_cast<long long>(backend.iterations());
    return c;
}

std::vector<int> answerLengths(Transformer& m, const Workload& w, const LiveOptions& live,
                               const PolicyConfig& policy, const EngineLimits& lim,
                               const std::vector<ReqId>& ids) {
    TorchBackend backend(m, w, live);
    auto sched = makeScheduler(policy);
    const UnitModel planning;
    Simulator engine(w, planning, *sched, lim, &backend);
    engine.run();
    std::vector<int> out;
    out.reserve(ids.size());
    for (ReqId id : ids) out.push_back(static_cast<int>(backend.generated(id).size()));
    return out;
}

std::size_t heldOutCount(std::size_t n, double fraction) {
    if (!(fraction > 0 && fraction < 1))
        throw std::invalid_argument("--test-fraction must be in (0, 1)");
    const auto k = static_cast<std::size_t>(std::lround(fraction * double(n)));
    if (k < 1 || k >= n)
        throw std::invalid_argument("--test-fraction leaves no training or no test requests of " +
                                    std::to_string(n));
    return k;
}

double bestFromPromptMae(const std::vector<std::vector<int>>& answers) {
    double sum = 0;
    long count = 0;
    for (const auto& lengths : answers) {
        if (lengths.size() < 2)
            throw std::invalid_argument("bestFromPromptMae: a prompt answered fewer than twice");
        for (std::size_t j = 0; j < lengths.size(); ++j) {
            std::vector<double> others;
            for (std::size_t k = 0; k < lengths.size(); ++k)
                if (k != j) others.push_back(lengths[k]);
            sum += std::fabs(describe(others, {}).median - lengths[j]);
            ++count;
        }
    }
    return count ? sum / double(count) : 0.0;
}

LengthStudy studyLengths(const std::vector<LengthSample>& samples, int hidden,
                         const LengthStudyOptions& o) {
    const std::size_t n_test = heldOutCount(samples.size(), o.test_fraction);
    const auto cut = samples.end() - static_cast<std::ptrdiff_t>(n_test);
    const std::vector<LengthSample> train(samples.begin(), cut);
    const std::vector<LengthSample> test(cut, samples.end());
    LengthStudy s;
    s.options = o.heads;
    s.options.validate();
    s.train_requests = train.size();
    for (const LengthSample& t : test) {
        s.held_out.push_back(t.id);
        s.held_out_lengths.push_back(t.length);
    }
    s.train_mean = meanLength(train);
    if (o.choose_temper) {
        s.temper_choice = chooseTemper(train, hidden, s.options);
        s.options.temper = s.temper_choice->temper;
    }
    s.heads.emplace(LengthHeads::train(train, hidden, s.options, &s.train_log));
    s.eval = evaluateHeads(*s.heads, test, s.train_mean);
    for (int b : o.bucket_sweep) {
        LengthHeadOptions ob = s.options;
        ob.bucket = b;
        ob.n_max = std::max(b, (s.options.n_max / b) * b);
        ob.probe_epochs = 0;
        const LengthEval eb =
            evaluateHeads(LengthHeads::train(train, hidden, ob), test, s.train_mean);
        s.bucket_sweep.push_back(
            {b, ob.buckets(), eb.rlp_mae, eb.rlp_rmse, eb.rlp_r2, eb.rlp_bucket_accuracy});
    }
    s.bucket_floor = o.length_cue > 0 ? bucketOracleMae(test, o.length_cue)
                                      : std::numeric_limits<double>::quiet_NaN();
    return s;
}

std::string lengthStudyText(const LengthStudy& s) {
    using text::formatted;
    const LengthEval& e = s.eval;
    std::string out;
    if (s.temper_choice) {
        out += formatted("temper chosen on %d validation requests:",
                         s.temper_choice->validation_requests);
        for (const auto& [t, mae] : s.temper_choice->validation_mae)
            out += formatted("  %g: %.2f", t, mae);
        out += formatted("  -> %g\n", s.options.temper);
    }
    out += formatted("trained on %zu requests (%d probe readings) in %.1f s; held out: %d "
                     "requests, %ld tokens\n",
                     s.train_requests, s.train_log.probe_examples, s.train_log.seconds, e.requests,
                     e.tokens);
    out +=
        formatted("  RLP (TimeBill, B=%d):  MAE %7.2f tokens, RMSE %7.2f, R^2 %6.3f, bucket "
                  "accuracy %.1f %%\n",
                  s.options.bucket, e.rlp_mae, e.rlp_rmse, e.rlp_r2, 100 * e.rlp_bucket_accuracy);
    out += formatted("  training-mean length:  MAE %7.2f tokens, RMSE %7.2f, R^2 %6.3f\n",
                     e.mean_baseline_mae, e.mean_baseline_rmse, e.mean_baseline_r2);
    for (const BucketResult& b : s.bucket_sweep)
        out += formatted("  RLP alone, B=%-4d (%3d buckets): MAE %7.2f, RMSE %7.2f, R^2 %6.3f, "
                         "bucket accuracy %.1f %%\n",
                         b.bucket, b.buckets, b.mae, b.rmse, b.r2, 100 * b.bucket_accuracy);
    if (s.best_from_prompt)
        out += formatted("  best from the prompt:  MAE %7.2f tokens (each held-out prompt "
                         "answered %d times; the median of its other answers' lengths)\n",
                         *s.best_from_prompt, s.prompt_answers);
    out += "remaining length at every generated token (MAE, tokens):\n";
    out += formatted("  Trail probe, smoothed: %7.2f   (probe bin accuracy %.1f %%)\n",
                     e.trail_refined_mae, 100 * e.probe_bin_accuracy);
    out += formatted("  probe's prompt only:   %7.2f   (the refinement's error is %.2fx this)\n",
                     e.trail_prompt_only_mae,
                     e.trail_prompt_only_mae > 0 ? e.trail_refined_mae / e.trail_prompt_only_mae
                                                 : 0.0);
    out += "  smoothed, other tempers:";
    for (const auto& [t, mae] : e.temper_mae) out += formatted("  %g: %.2f", t, mae);
    out += "\n";
    out += formatted("  RLP counted down:      %7.2f\n", e.rlp_countdown_mae);
    out += formatted("  mean counted down:     %7.2f\n", e.mean_countdown_mae);
    if (std::isfinite(s.bucket_floor))
        out += formatted("  told the true bucket:  %7.2f   (the task's floor)\n", s.bucket_floor);
    return out;
}

nlohmann::json lengthStudyJson(const LengthStudy& s, const std::string& model) {
    const LengthEval& e = s.eval;
    const auto orNull = [](double x) {
        return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
    };
    nlohmann::json sweep = nlohmann::json::array();
    for (const BucketResult& b : s.bucket_sweep)
        sweep.push_back({{"bucket", b.bucket},
                         {"buckets", b.buckets},
                         {"mae", b.mae},
                         {"rmse", b.rmse},
                         {"r2", b.r2},
                         {"bucket_accuracy", b.bucket_accuracy}});
    nlohmann::json tempers = nlohmann::json::array();
    for (const auto& [t, mae] : e.temper_mae) tempers.push_back({{"temper", t}, {"mae", mae}});
    nlohmann::json j = {{"model", model},
                        {"layer", s.options.layer},
                        {"train_requests", s.train_requests},
                        {"test_requests", e.requests},
                        {"test_tokens", e.tokens},
                        {"train_seconds", s.train_log.seconds},
                        {"rlp",
                         {{"mae", e.rlp_mae},
                          {"rmse", e.rlp_rmse},
                          {"r2", e.rlp_r2},
                          {"bucket_accuracy", e.rlp_bucket_accuracy}}},
                        {"mean_baseline_mae", e.mean_baseline_mae},
                        {"mean_baseline_rmse", e.mean_baseline_rmse},
                        {"mean_baseline_r2", e.mean_baseline_r2},
                        {"remaining_mae",
                         {{"trail_refined", e.trail_refined_mae},
                          {"trail_prompt_only", e.trail_prompt_only_mae},
                          {"rlp_countdown", e.rlp_countdown_mae},
                          {"mean_countdown", e.mean_countdown_mae},
                          {"bucket_floor", orNull(s.bucket_floor)}}},
                        {"probe_bin_accuracy", e.probe_bin_accuracy},
                        {"rlp_bucket_sweep", sweep},
                        {"best_from_prompt_mae", s.best_from_prompt
                                                     ? nlohmann::json(*s.best_from_prompt)
                                                     : nlohmann::json()},
                        {"temper", s.options.temper},
                        {"temper_sweep", tempers}};
    if (s.temper_choice) {
        j["temper_choice"] = {{"validation_requests", s.temper_choice->validation_requests},
                              {"sweep", nlohmann::json::array()}};
        for (const auto& [t, mae] : s.temper_choice->validation_mae)
            j["temper_choice"]["sweep"].push_back({{"temper", t}, {"mae", mae}});
    }
    return j;
}

} // namespace kairos::gpu
