// TimeBill (seeds/000) in code: the execution-time estimator's accuracy on held-out settings
// (model fits, against a constant null model) and the length predictor's calibration. The
// runs of the policy are experiment files (resources/experiments): timebill_budgets.toml
// (completion rate and a quality proxy under time budgets, for fixed eviction ratios and
// the closed-form alpha*), timebill_pessimism.toml (the pessimism factor k) and
// timebill_shared_machine.toml (k = 5 against auto_k with requests queueing).
#include "fit/ete_fit.h"
#include "metrics/stats.h"
#include "predict/predictor.h"
#include "repro/common.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace kairos::repro {

double predictorMae(const std::string& spec, const Workload& w, std::uint64_t seed) {
    auto p = makePredictor(spec, seed);
    p->reset(w);
    return initialMae(*p, w);
}

std::string lognormalAtMae(const Options& opt, const Workload& w, double mae) {
    // Remembered for the process: TimeBill's experiments in code and its files calibrate the
    // same predictor at each seed (the key: the seed, the target and the lengths).
    std::vector<std::int64_t> lengths;
    for (const Request& r : w.requests) lengths.push_back(r.output_tokens);
    return remembered(std::make_tuple(opt.seed, mae, std::move(lengths)), [&] {
        double lo = 0.001, hi = 3;
        for (int i = 0; i < 40; ++i) {
            const double mid = 0.5 * (lo + hi);
            (predictorMae("lognormal:" + fmt(mid, 9), w, opt.seed) < mae ? lo : hi) = mid;
        }
        return "lognormal:" + fmt(0.5 * (lo + hi), 9);
    });
}

Report reproduceTimebill(const Options& opt) {
    Report rep;
    // The first 200 arXiv-summarisation requests (40 with --quick), as the experiment files'
    // (resources/experiments/timebill_*.toml): their lengths calibrate the predictor.
    const std::size_t n = opt.quick ? 40 : 200;
    ReadOptions ro;
    ro.limit = n;
    const Workload w = readWorkload(dataFile(opt, "arxiv_summarization_lengths_llama2.csv"), ro);
    // The response-length predictor's error as the paper's RLP (MAE 42.71 tokens with 512
    // buckets): multiplicative log-normal noise whose sigma is set by bisection so that the
    // MAE on this workload is 42.71. (How wrong the predictor is decides what k is worth.)
    const std::string predictor = lognormalAtMae(opt, w, 42.71);
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
        // The paper's 1.22 % is a property of its own profiling (Qwen2.5-7B on an A40) as much
        // as of the form: on other models and hardware the figure tests the data, not the
        // paper (an outside audit). The measured error is reported with its cause.
        rep.claims.back().not_comparable =
            "the paper's MAPE is the fit's error on its own profiling of Qwen2.5-7B on an A40, "
            "which is not here; on Splitwise's Llama2-70B and BLOOM-176B timings the same form "
            "measures those data's shape, not the paper's figure";
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
        rep.claims.back().not_comparable = rep.claims[rep.claims.size() - 2].not_comparable;
    }
    restOn(rep.claims, ete_rows,
           {{"the paper's profiling of Qwen2.5-7B on an A40",
             "Splitwise's measured times of Llama2-70B and BLOOM-176B on A100 and H100"}});

    rep.claims.push_back(makeClaim("timebill", "response-length predictor MAE (paper: 512 buckets)",
                                   42.71, predictorMae(predictor, w, opt.seed), "tokens",
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
