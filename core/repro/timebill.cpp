// TimeBill (seeds/000): completion rate and a quality proxy under time budgets, for fixed
// eviction ratios and for the closed-form alpha*; the execution-time estimator's accuracy;
// the length predictor's calibration. The pessimism factor k and the shared machine are
// experiment files: resources/experiments/timebill_pessimism.toml and
// timebill_shared_machine.toml.
#include "fit/ete_fit.h"
#include "metrics/stats.h"
#include "predict/predictor.h"
#include "repro/common.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

namespace kairos::repro {

std::string lognormalAtMae(const Options& opt, const Workload& w, double mae) {
    // Remembered for the process: TimeBill's experiments in code and its files calibrate the
    // same predictor at each seed (the key: the seed, the target and the lengths).
    static std::mutex m;
    static std::map<std::tuple<std::uint64_t, double, std::vector<std::int64_t>>, std::string>
        known;
    std::vector<std::int64_t> lengths;
    for (const Request& r : w.requests) lengths.push_back(r.output_tokens);
    const auto key = std::make_tuple(opt.seed, mae, std::move(lengths));
    {
        std::lock_guard<std::mutex> lock(m);
        if (const auto it = known.find(key); it != known.end()) return it->second;
    }
    auto maeOf = [&](const std::string& spec) {
        auto p = makePredictor(spec, opt.seed);
        p->reset(w);
        return initialMae(*p, w);
    };
    double lo = 0.001, hi = 3;
    for (int i = 0; i < 40; ++i) {
        const double mid = 0.5 * (lo + hi);
        (maeOf("lognormal:" + fmt(mid, 9)) < mae ? lo : hi) = mid;
    }
    const std::string spec = "lognormal:" + fmt(0.5 * (lo + hi), 9);
    std::lock_guard<std::mutex> lock(m);
    known.emplace(key, spec);
    return spec;
}

Report reproduceTimebill(const Options& opt) {
    Report rep;
    // Our own measured profile: on this CPU a decode step grows with the KV it reads
    // (p * N_kv is ~40 % of a step at 3k tokens), the regime TimeBill's eviction acts on.
    // The shipped GPU profiles are fitted to Splitwise data whose token time barely grows
    // with context, so eviction would change nothing there.
    const DeviceProfile prof = opt.profile("smollm-135m-cpu");
    const auto model = makeExecutionModel(prof);
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    rep.prefix_caching = lim.prefix_caching;

    // One request at a time, as in the paper: arrivals further apart than any budget
    // (Kill ends every request by its budget).
    constexpr double kScale = 3; // budgets 5-10 s scaled to this CPU's slower prefill
    const std::vector<double> budgets{5, 6, 7, 8, 9, 10};
    const std::size_t n = opt.quick ? 40 : 200;
    ReadOptions ro;
    ro.limit = n;
    Workload w = readWorkload(dataFile(opt, "arxiv_summarization_lengths_llama2.csv"), ro);
    for (std::size_t i = 0; i < w.size(); ++i)
        w.requests[i].arrival = static_cast<double>(i) * (kScale * budgets.back() + 1);
    std::vector<Workload> per_budget;
    for (double T : budgets) {
        Workload b = w;
        for (auto& r : b.requests) r.budget_s = kScale * T;
        per_budget.push_back(std::move(b));
    }
    // The response-length predictor's error as the paper's RLP (MAE 42.71 tokens with 512
    // buckets): multiplicative log-normal noise whose sigma is set by bisection so that the
    // MAE on this workload is 42.71. (How wrong the predictor is decides what k is worth.)
    auto maeOf = [&](const std::string& spec) {
        auto p = makePredictor(spec, opt.seed);
        p->reset(w);
        return initialMae(*p, w);
    };
    const std::string predictor = lognormalAtMae(opt, w, 42.71);
    auto tb = [&](double alpha, double k) {
        PolicyConfig p;
        p.name = "timebill";
        p.params = {{"alpha", alpha}, {"k", k}};
        p.predictor = predictor;
        p.seed = opt.seed;
        return p;
    };
    struct Method {
        std::string name;
        PolicyConfig p;
    };
    const std::vector<Method> methods{{"vanilla", tb(0, 5)},      {"alpha=25%", tb(0.25, 5)},
                                      {"alpha=50%", tb(0.5, 5)},  {"alpha=75%", tb(0.75, 5)},
                                      {"alpha=95%", tb(0.95, 5)}, {"TimeBill k=5", tb(-1, 5)}};
    std::vector<Job> jobs;
    for (const auto& b : per_budget)
        for (const auto& m : methods) jobs.push_back({&b, m.p, lim, {}});
    say(opt, "timebill: " + std::to_string(jobs.size()) + " runs over budgets");
    const auto res = runAll(jobs, *model, opt);

    const std::string setting =
        "SmolLM-135M on this machine's CPU (profile smollm-135m-cpu, measured by kairos-cli "
        "profile-cpu) with arXiv-summarisation lengths (prompts ~2.6k tokens), one request at "
        "a time, Kill on overrun; budgets are the paper's 5-10 s times 3 (this CPU's prefill "
        "of a 2.6k-token prompt takes ~7 s); predictions with the paper's RLP error (MAE "
        "42.71 tokens, log-normal); "
        "quality proxy q(alpha) = 1 - alpha^2 (Kairos's default curve), 0 when killed. The "
        "paper: Qwen2.5-7B on an A40, LongBench scores";
    Table t({"budget s", "method", "completion %", "score", "mean alpha"});
    std::vector<double> score(methods.size(), 0), done(methods.size(), 0);
    for (std::size_t b = 0; b < budgets.size(); ++b)
        for (std::size_t m = 0; m < methods.size(); ++m) {
            const Summary& s = res[b * methods.size() + m].summary;
            t.add({fmt(kScale * budgets[b]), methods[m].name, fixed(100 * s.completion_rate, 1),
                   fixed(s.mean_quality, 3), fixed(s.mean_alpha, 3)});
            score[m] += s.mean_quality / double(budgets.size());
            done[m] += s.completion_rate / double(budgets.size());
        }
    rep.details += "TimeBill: time budgets (" + setting + ")\n" + t.str();
    auto rankOf = [&](const std::vector<double>& v, std::size_t i) {
        return 1.0 + double(std::count_if(v.begin(), v.end(), [&](double x) { return x > v[i]; }));
    };
    const std::size_t tbi = methods.size() - 1;
    const std::string invented =
        "needs a measured quality curve: the score is q(alpha) = 1 - alpha^2, Kairos's "
        "placeholder, not a model's measured answer quality under eviction (with a flatter "
        "curve the rank changes)";
    const std::size_t budget_rows = rep.claims.size();
    rep.claims.push_back(makeClaim("timebill",
                                   "TimeBill's rank by average score (1 = highest of 6)", 1.0,
                                   rankOf(score, tbi), "rank", setting));
    rep.claims.back().not_comparable = invented;
    rep.claims.back().quote = "seeds/000 (TimeBill), Main Results table: \"TimeBill 5-10s "
                              "Highest\" (average score column)";
    // The paper's completion-rate column ("TimeBill: comparable to alpha=95%"; "Vanilla:
    // lowest") is true here by construction: one request at a time with fixed output
    // lengths, completion never falls as alpha grows (tst_timebill completionMonotoneIn-
    // Alpha), and TimeBill's alpha* at k=5 sits near 0.95 on these budgets. Reported, not
    // counted as claims.
    rep.details += "  (as constructed, not claims: vanilla's completion rank " +
                   fmt(rankOf(done, 0)) + " of 6 and TimeBill's completion minus alpha=95%'s " +
                   fixed(100 * (done[tbi] - done[4]), 1) +
                   " points follow from completion rising with alpha at fixed output lengths)\n";
    rep.claims.push_back(makeClaim("timebill", "TimeBill average completion rate", nullptr,
                                   100 * done[tbi], "%", setting));

    restOn(rep.claims, budget_rows,
           {{"Qwen2.5-7B on an A40 with LongBench's tasks and their scores",
             "SmolLM-135M measured on this machine's CPU, arXiv-summarisation lengths, and "
             "q(alpha) = 1 - alpha^2 for the score"}});
    const std::size_t ete_rows = rep.claims.size();

    constexpr const char* kConstantNull =
        "a constant time, the training settings' mean (median over the groups of its held-out "
        "MAPE)";
    // The ETE's accuracy (TimeBill's forms at batch 1: prefill a*N^2 + b*N + c, decode step
    // p*N_kv + q) on held-out settings of every Splitwise model/hardware/TP group (the
    // power-capped H100 groups repeat the uncapped ones' timings and are left out): the
    // paper reports 1.22 % / 1.69 % on its own profiling of Qwen2.5-7B on an A40.
    {
        std::vector<double> pre_test, dec_test, pre_train, pre_max, pre_null, dec_null;
        // The null model: one constant time, the mean of the training settings' times, for
        // every held-out setting (no shape at all).
        auto constantMape = [](const LinearFit& f) {
            double mean = 0;
            for (const auto& pt : f.points) mean += pt.first / double(f.points.size());
            double e = 0;
            for (const auto& pt : f.test_points)
                e += 100 * std::abs(mean - pt.first) / pt.first / double(f.test_points.size());
            return e;
        };
        std::size_t groups = 0;
        for (const auto& [name, m] :
             splitwiseMeasurements(dataFile(opt, "splitwise_perf_model.csv"))) {
            if (name.find("-pcap") != std::string::npos) continue;
            const EteReport r = fitEteReport(m, 0.2, opt.seed);
            for (const LinearFit& f : r.fits) {
                if (f.name.rfind("prefill, batch 1", 0) == 0) {
                    pre_test.push_back(f.test_mape_pct);
                    pre_train.push_back(f.mape_pct);
                    pre_max.push_back(f.max_pct);
                    pre_null.push_back(constantMape(f));
                }
                if (f.name.rfind("decode step, batch 1", 0) == 0) {
                    dec_test.push_back(f.test_mape_pct);
                    dec_null.push_back(constantMape(f));
                }
            }
            ++groups;
        }
        const auto median = [](std::vector<double> v) { return describe(std::move(v), {}).median; };
        const std::string eset =
            "Kairos's ETE fit (kairos-cli fit ete --splitwise) on " + std::to_string(groups) +
            " Splitwise groups (Llama2-70B and BLOOM-176B on A100/H100, TP 2-8), 20 % of the "
            "settings held out (seed " +
            std::to_string(opt.seed) +
            "); median over the groups of the held-out MAPE. The paper profiled Qwen2.5-7B on "
            "an A40, which is not here";
        const std::string ete_quote =
            "seeds/000 (TimeBill): \"Execution time estimation accuracy: - Prefill stage MAPE: "
            "1.22% - Decoding step MAPE: 1.69%\"";
        rep.claims.push_back(makeClaim("timebill", "ETE prefill MAPE, held out (TimeBill's form)",
                                       1.22, median(pre_test), "%", eset));
        rep.claims.back().band = Band::measured(0.005);
        rep.claims.back().quote = ete_quote;
        rep.claims.back().band_origin = precisionOrigin("two decimals: +-0.005 points");
        rep.claims.back().null_model = kConstantNull;
        rep.claims.back().null_value = median(pre_null);
        rep.claims.back().cause =
            "Splitwise's batch-1 prefill times are not quadratic in N over 128-8,192 tokens: "
            "even on the settings it is fitted to the form is " +
            fixed(median(pre_train), 1) + " % off (median over groups; worst row " +
            fixed(median(pre_max), 1) +
            " %), so a held-out error near 1.22 % is not to be expected of it";
        rep.claims.push_back(makeClaim("timebill",
                                       "ETE decode-step MAPE, held out (TimeBill's form)", 1.69,
                                       median(dec_test), "%", eset));
        rep.claims.back().band = Band::measured(0.005);
        rep.claims.back().quote = ete_quote;
        rep.claims.back().band_origin = precisionOrigin("two decimals: +-0.005 points");
        rep.claims.back().null_model = kConstantNull;
        rep.claims.back().null_value = median(dec_null);
    }
    restOn(rep.claims, ete_rows,
           {{"the paper's profiling of Qwen2.5-7B on an A40",
             "Splitwise's measured times of Llama2-70B and BLOOM-176B on A100 and H100"}});

    rep.claims.push_back(makeClaim("timebill", "response-length predictor MAE (paper: 512 buckets)",
                                   42.71, maeOf(predictor), "tokens",
                                   "set, not found: " + predictor +
                                       " predictions, its sigma chosen so that the MAE on these "
                                       "arXiv-summarisation lengths is the paper's (its RLP is a "
                                       "fine-tuned Qwen2.5-0.5B on LongBench)"));
    rep.claims.back().calibrated = true;
    rep.claims.back().quote = "seeds/000 (TimeBill): \"Ours (512 buckets) 512 42.71 78.13 0.723\" "
                              "(the predictor table: MAE 42.71)";
    rep.details += "\n";
    return rep;
}

} // namespace kairos::repro
