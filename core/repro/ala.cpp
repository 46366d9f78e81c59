// ALA (seeds/004): held-out throughput error of the analytical model extended by XGBoost
// against the paper's baselines (linear regression, vanilla XGBoost) on LLM-Inference-Bench,
// the data the paper's ANL dataset comes from.
#include "fit/ala.h"

#include "repro/common.h"

namespace kairos::repro {

Report reproduceAla(const Options& opt) {
    Report rep;
    const std::string path = dataFile(opt, "llm_inference_bench.csv");
    const auto rows = ala::readBench(path);
    // The authors' 5,000 rounds at eta 0.007 take 83 s per training on two cores; every
    // seed trains once, so the rows use Kairos's named faster setting (350 rounds at eta
    // 0.1), whose held-out median kairos-cli fit ala measures at 2.5 % against 2.3 % for
    // the authors' setting (kairos-cli fit ala --data ... runs the latter).
    ala::AlaOptions o;
    o.xgb.trees = ala::UncertaintyOptions::fast().trees;
    o.xgb.eta = ala::UncertaintyOptions::fast().eta;
    if (opt.quick) o.xgb = fit::XgbParams::with(60, 0.3); // a first look
    o.xgb.seed = opt.seed;
    o.threads = opt.threads;
    constexpr double kHeldOut = 0.2;
    say(opt, "ala: training on LLM-Inference-Bench with 20 % of each configuration's pairs "
             "held out");
    const ala::Evaluation ev = ala::evaluate(rows, o, kHeldOut, opt.seed);
    const ala::PooledErrors pooled = ala::poolErrors(ev);
    const auto median = [](const std::vector<double>& v) { return ala::finitePercentile(v, 50); };
    const double a = median(pooled.all[0]), l = median(pooled.all[1]), x = median(pooled.all[2]),
                 la = median(pooled.all[3]), xa = median(pooled.all[4]);

    Table t({"hardware", "held-out rows", "ALA median %", "linear median %", "XGBoost median %",
             "dataset-wide linear %", "dataset-wide XGBoost %"});
    for (const auto& [hw, e] : pooled.by_hardware)
        t.add({hw, std::to_string(e[0].size()), fixed(median(e[0]), 1), fixed(median(e[1]), 1),
               fixed(median(e[2]), 1), fixed(median(e[3]), 1), fixed(median(e[4]), 1)});
    t.add({"all", std::to_string(pooled.all[0].size()), fixed(a, 1), fixed(l, 1), fixed(x, 1),
           fixed(la, 1), fixed(xa, 1)});
    const std::string setting =
        "LLM-Inference-Bench (" + std::to_string(rows.size()) + " rows, " +
        std::to_string(ev.configs.size()) +
        " configurations of framework, model, hardware and precision evaluated), 20 % of each "
        "configuration's (input, output) pairs held out whole (seed " +
        std::to_string(opt.seed) + "); XGBoost at " + std::to_string(o.xgb.trees) +
        " rounds, eta " + fmt(o.xgb.eta) +
        " (the authors' 5,000 at 0.007 take 83 s a training); the baselines as the paper's: "
        "trained once on the whole dataset, the configuration one-hot beside (ii, oo, bb), "
        "XGBoost on log throughput (the per-configuration baselines, Kairos's own, are in the "
        "table). ALA here is Kairos's variant (its regressors learn curve coordinates anchored "
        "at the nearest measured pair: fit/ala.h). The paper's Experiment 1 split is not "
        "reproducible from its text";
    rep.details += "ALA: held-out throughput error (" + setting + ")\n" + t.str() + "\n";

    rep.claims.push_back(
        makeClaim("ala", "ALA median held-out error (Experiment 1: 4 %)", 4.0, a, "%", setting));
    rep.claims.back().substitutes = {
        {"the paper's Experiment 1 split (its Fig. 5, lost from the text)",
         "20 % of each configuration's (input, output) pairs held out"}};
    rep.claims.back().band = Band::measured(0.5);
    rep.claims.back().quote =
        "seeds/004 (ALA), RQ1: \"Experiment 1 achieves the lowest error (4%) due to its broad "
        "yet balanced coverage\"";
    rep.claims.back().band_origin = precisionOrigin("a whole percent: +-0.5 points");
    // A held-out error is the split's as much as the model's: the paper's four experiments
    // (its Fig. 5) span a range of medians, and Experiment 1's split is not in its text.
    rep.claims.back().not_comparable =
        "the error depends on the split, and the paper's Experiment 1 split (Fig. 5, lost from "
        "its text) cannot be rebuilt; Kairos holds out 20 % of each configuration's (input, "
        "output) pairs, so every held-out row has siblings of its configuration in training";
    const std::string fig7a =
        "seeds/004 (ALA), RQ2: \"Fig. 7(a) depicts the distribution of median percentage "
        "errors across methods reveals that ALA achieves the lowest median errors\"";
    const std::string lowest = "Kairos's reading of 'lowest' (the baseline's error at least ALA's)";
    // A baseline's median error over ALA's: Fig. 7a's "lowest", read as at least 1.
    const auto lowestClaim = [&](const std::string& baseline, double ratio) {
        rep.claims.push_back(makeClaim("ala",
                                       baseline + " (dataset-wide) median / ALA median (Fig. 7a: "
                                                  "ALA lowest, read as >= 1)",
                                       1.0, ratio, "ratio", setting));
        rep.claims.back().band = Band::atLeast();
        rep.claims.back().quote = fig7a;
        rep.claims.back().band_origin = lowest;
    };
    lowestClaim("linear regression", la / a);
    // "Lowest" is over the paper's baselines: does beating linear regression need ALA? The
    // paper's other baseline in ALA's place (an outside audit: it beats linear regression
    // by about 46x here, so the agreement alone is no evidence).
    rep.claims.back().null_model =
        "vanilla XGBoost (dataset-wide) in ALA's place: linear regression's median over its";
    rep.claims.back().null_value = la / xa;
    lowestClaim("vanilla XGBoost", xa / a);
    rep.claims.back().cause = "trained per configuration instead (Kairos's own, weaker "
                              "baseline), XGBoost's median is " +
                              fixed(x, 2) + " % against ALA's " + fixed(a, 2) + " %";
    rep.claims.push_back(makeClaim(
        "ala", "share of hardware where ALA's median beats both dataset-wide baselines'", nullptr,
        double(pooled.hardware_ala_best_dataset_wide) /
            double(std::max<std::size_t>(1, pooled.by_hardware.size())),
        "fraction", setting));
    restOn(rep.claims, 0,
           {{"XGBoost at the authors' 5,000 rounds, eta 0.007",
             std::to_string(o.xgb.trees) + " rounds at eta " + fmt(o.xgb.eta) +
                 " (the authors' settings take 83 s a training)"}});
    return rep;
}

} // namespace kairos::repro
