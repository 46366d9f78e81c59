// kairos-cli fit ete: the execution-time models from measurements (a CSV, Splitwise's
// perf model, or a stored profile), their errors on the rows fitted and on held-out
// settings, stored as models the simulator can use (simulate --exec-model ID).
#include "checks.h"
#include "commands.h"
#include "util/atomic_file.h"
#if KAIROS_HAVE_ALA
#include "fit/ala.h"
#include "fit/ala_holdout.h"
#include "fit/ala_transfer.h"
#endif
#include "fit/ete_fit.h"
#include "metrics/stats.h"
#include "store/store.h"
#include "util/json_number.h"
#include "util/text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kairos::cli {

#if KAIROS_HAVE_ALA
void addFitAlaTo(CLI::App* fit);
#endif

namespace {

nlohmann::json fitJson(const LinearFit& f, bool residuals) {
    nlohmann::json c = nlohmann::json::object();
    for (std::size_t i = 0; i < f.terms.size(); ++i) c[f.terms[i]] = f.beta[i];
    nlohmann::json j = {{"fit", f.name},
                        {"coefficients", c},
                        {"rows", f.rows},
                        {"outliers_left_out", f.outliers},
                        {"mape_pct", jsonNumber(f.mape_pct)},
                        {"max_error_pct", jsonNumber(f.max_pct)},
                        {"held_out_rows", f.test_rows},
                        {"held_out_mape_pct", jsonNumber(f.test_mape_pct)},
                        {"held_out_max_error_pct", jsonNumber(f.test_max_pct)},
                        {"held_out_median_pct", jsonNumber(f.test_median_pct)},
                        {"held_out_p90_pct", jsonNumber(f.test_p90_pct)},
                        {"poor", f.poor()}};
    if (residuals) j["residuals_pct"] = f.residuals_pct;
    // (measured, predicted) seconds: what the workbench's model view plots.
    j["points"] = f.points;
    j["held_out_points"] = f.test_points;
    return j;
}

std::string pct(double v) {
    if (!std::isfinite(v)) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.2f %%", v);
    return b;
}

} // namespace

nlohmann::json fitEteGroup(const std::string& name, const std::vector<Measurement>& ms,
                           const std::string& source, double test_fraction, std::uint64_t seed,
                           store::Store* db, EteReport* report) {
    const EteReport rep = fitEteReport(ms, test_fraction, seed);
    std::printf("%s: %zu measurements (%.0f %% of settings held out, seed %llu)\n", name.c_str(),
                ms.size(), 100 * test_fraction, static_cast<unsigned long long>(seed));
    std::printf("  %-46s %5s %4s %9s %9s | %9s %9s %9s %9s  %s\n", "fit", "rows", "out", "MAPE",
                "max", "held-out", "median", "p90", "max", "coefficients (s)");
    nlohmann::json g = {{"group", name}, {"source", source}, {"fits", nlohmann::json::array()}};
    for (const LinearFit& f : rep.fits) {
        std::string coef;
        for (std::size_t i = 0; i < f.terms.size(); ++i) {
            char b[64];
            std::snprintf(b, sizeof b, "%s%s=%.4g", i ? " " : "", f.terms[i].c_str(), f.beta[i]);
            coef += b;
        }
        std::printf("  %-46s %5zu %4zu %9s %9s | %9s %9s %9s %9s  %s\n", f.name.c_str(), f.rows,
                    f.outliers, pct(f.mape_pct).c_str(), pct(f.max_pct).c_str(),
                    pct(f.test_mape_pct).c_str(), pct(f.test_median_pct).c_str(),
                    pct(f.test_p90_pct).c_str(), pct(f.test_max_pct).c_str(), coef.c_str());
        g["fits"].push_back(fitJson(f, true));
    }
    for (const auto& why : rep.skipped) std::printf("  not fitted: %s\n", why.c_str());
    if (!rep.suspect.empty()) {
        std::printf("  left out as suspect (%zu measurements: more work in less than half the "
                    "time of another setting):\n",
                    rep.suspect_rows);
        for (const auto& why : rep.suspect) std::printf("    %s\n", why.c_str());
    }
    g["suspect"] = rep.suspect;
    g["suspect_rows"] = rep.suspect_rows;
    nlohmann::json warnings = nlohmann::json::array();
    for (const LinearFit& f : rep.fits)
        if (f.poor()) {
            char b[400];
            std::snprintf(b, sizeof b,
                          "%s, %s: held-out error median %.1f %%, p90 %.1f %% (above %.0f %% / "
                          "%.0f %%): a poor fit%s",
                          name.c_str(), f.name.c_str(), f.test_median_pct, f.test_p90_pct,
                          kPoorMedianPct, kPoorP90Pct,
                          f.name.find("batched") != std::string::npos
                              ? "; simulations with it are not to be trusted"
                              : "");
            std::printf("  warning: %s\n", b);
            warnings.push_back(b);
        }
    g["warnings"] = warnings;
#if KAIROS_HAVE_STORE
    if (db && !(rep.batched_prefill && rep.batched_decode)) {
        std::printf("  not stored: the simulator needs both batched forms\n");
    } else if (db) {
        store::ModelInfo mi;
        mi.kind = "ete";
        mi.name = name;
        mi.params = rep.params.toModelJson().dump();
        nlohmann::json training = {{"source", source},
                                   {"group", name},
                                   {"measurements", ms.size()},
                                   {"test_fraction", test_fraction},
                                   {"seed", seed}};
        // A live profile's drift reference (gpu/live_profile.h): what validate
        // --recalibrate re-times.
        std::vector<double> refs;
        std::int64_t ref_context = 0;
        for (const Measurement& x : ms)
            if (x.kind == "reference") {
                refs.push_back(x.seconds);
                ref_context = x.context;
            }
        if (!refs.empty())
            training["reference"] = {{"batch", 1},
                                     {"context", ref_context},
                                     {"seconds", describe(refs, {50}).percentile(50)},
                                     {"timings", refs.size()}};
        mi.training = training.dump();
        nlohmann::json acc = nlohmann::json::array();
        for (const LinearFit& f : rep.fits) acc.push_back(fitJson(f, false));
        mi.accuracy = acc.dump();
        const auto id = db->putModel(mi);
        g["model_id"] = id;
        std::printf("  stored as model %lld (simulate --exec-model %lld)\n",
                    static_cast<long long>(id), static_cast<long long>(id));
    }
#else
    (void)db; // never given: the store's options refuse themselves (checks.h)
#endif
    if (report) *report = rep;
    return g;
}

void addFit(CLI::App& app) {
    struct Args {
        std::string measurements, splitwise, group, db, json_out;
        std::int64_t profile = 0;
        double test_fraction = 0.2;
        std::uint64_t seed = 1;
        bool store = false;
    };
    auto a = std::make_shared<Args>();
    auto* fit = app.add_subcommand("fit", "Fit performance models from measurements");
    fit->require_subcommand(1);
#if KAIROS_HAVE_ALA
    addFitAlaTo(fit);
#endif
    auto* c = fit->add_subcommand(
        "ete", "Execution-time estimation: prefill a*N^2+b*N+c and decode p*N_kv+q at batch 1, "
               "and the simulator's batched forms; errors on fitted and held-out settings");
    auto* src_m = c->add_option("--measurements", a->measurements,
                                "CSV with kind,batch,tokens,context,seconds");
    auto* src_s = c->add_option("--splitwise", a->splitwise,
                                "Splitwise perf_model.csv: one fit per model, hardware and TP");
    auto* src_p = needsStore(c->add_option("--profile", a->profile,
                                           "A profile stored in the database (its measurements)")
                                 ->check(whole(1, std::numeric_limits<std::int64_t>::max())));
    src_m->excludes(src_s)->excludes(src_p);
    src_s->excludes(src_p);
    c->add_option("--group", a->group,
                  "With --splitwise: only this group (e.g. \"llama2-70b a100-80gb tp2\")");
    c->add_option("--test-fraction", a->test_fraction,
                  "Fraction of distinct settings held out for the held-out error")
        ->capture_default_str()
        ->check(number(0, 0.95));
    c->add_option("--seed", a->seed, "Seed of the held-out choice")
        ->capture_default_str()
        ->check(seedValue());
    needsStore(
        c->add_option("--db", a->db, "Database: where --profile is read, and the fits stored"));
    needsStore(c->add_flag("--store", a->store, "Store the fits in the default database"));
    c->add_option("--json", a->json_out, "Write the fits (with residuals) as JSON");
    c->callback([a] {
        std::map<std::string, std::vector<Measurement>> groups;
        std::string source;
        std::unique_ptr<store::Store> db;
#if KAIROS_HAVE_STORE
        if (!a->db.empty() || a->store || a->profile)
            // Reading a stored profile needs the database to exist; storing fits creates it.
            db = std::make_unique<store::Store>(a->db.empty() ? store::Store::defaultPath() : a->db,
                                                a->profile ? store::Store::Open::Existing
                                                           : store::Store::Open::Create);
#endif
        if (!a->measurements.empty()) {
            groups[a->measurements.substr(a->measurements.find_last_of('/') + 1)] =
                readMeasurementsCsv(a->measurements);
            source = a->measurements;
        } else if (!a->splitwise.empty()) {
            groups = splitwiseMeasurements(a->splitwise);
            source = a->splitwise;
            if (!a->group.empty()) {
                auto it = groups.find(a->group);
                if (it == groups.end()) {
                    std::string names;
                    for (const auto& [k, v] : groups) names += "\n  " + k;
                    throw std::invalid_argument("--group: no group '" + a->group + "' in " +
                                                source + "; the groups are:" + names);
                }
                auto one = std::move(it->second);
                groups.clear();
                groups[a->group] = std::move(one);
            }
#if KAIROS_HAVE_STORE
        } else if (a->profile) {
            const auto ps = db->listProfiles();
            auto it = std::find_if(ps.begin(), ps.end(),
                                   [&](const store::ProfileInfo& p) { return p.id == a->profile; });
            if (it == ps.end())
                throw std::invalid_argument("no profile " + std::to_string(a->profile) + " in " +
                                            db->path());
            groups[it->name] = db->measurements(a->profile);
            source = db->path() + " profile " + std::to_string(a->profile);
#endif
        } else {
            throw std::invalid_argument("fit ete: give --measurements, --splitwise or --profile");
        }
        nlohmann::json out = nlohmann::json::array();
        for (const auto& [name, ms] : groups)
            out.push_back(fitEteGroup(name, ms, source, a->test_fraction, a->seed, db.get()));
        if (!a->json_out.empty()) {
            const std::string text = out.dump(2) + "\n";
            writeFileAtomically(a->json_out, [&](std::ostream& f) { f << text; });
        }
    });
}

#if KAIROS_HAVE_ALA
namespace {

std::string fmt2(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", x);
    return b;
}

template <class Args> ala::UncertaintyOptions uncertaintyOptions(const Args& a) {
    ala::UncertaintyOptions u;
    u.seed = a.seed;
    u.test_fraction = a.test_fraction;
    u.configuration_folds = a.folds;
    u.threads = a.threads;
    if (a.inner_trees > 0) u.step_xgb.trees = a.inner_trees;
    u.progress = [](const std::string& line) {
        std::printf("  %s\n", line.c_str());
        std::fflush(stdout);
    };
    return u;
}

template <class Args>
ala::Uncertainty learnUncertainty(const std::vector<ala::BenchRow>& rows, const ala::AlaOptions& o,
                                  const Args& a) {
    std::printf("\nlearning the error predictor and the confidence from held-out predictions "
                "(each hardware, each fifth of the configurations and of the pairs held out in "
                "turn; %d rounds at eta %g)...\n",
                ala::UncertaintyOptions::fast().trees, ala::UncertaintyOptions::fast().eta);
    std::fflush(stdout);
    ala::Uncertainty unc = ala::Uncertainty::learn(rows, o, uncertaintyOptions(a));
    std::map<std::string, std::size_t> by;
    for (const auto& q : unc.queries()) ++by[q.regime];
    std::string counts;
    for (const auto& [k, n] : by)
        counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + k;
    const auto& w = unc.noveltyWeights();
    std::printf("learned from %zu held-out workloads (%s); confidence weights: configuration "
                "%.3g, pair %.3g, batch %.3g, unknown chip %.3g, other vendor %.3g\n",
                unc.queries().size(), counts.c_str(), w[0], w[1], w[2], w[3], w[4]);
    return unc;
}

template <class Args>
void predictAla(const ala::AlaModel& model, const ala::Uncertainty& unc,
                const ala::RangePredictor& range, const ala::AlaOptions& o,
                const std::vector<ala::BenchRow>& queries, const Args& a) {
    using Out = ala::RangePrediction;
    std::map<std::string, std::vector<std::size_t>> by;
    for (std::size_t i = 0; i < queries.size(); ++i)
        by[ala::configKey(queries[i], o.columns)].push_back(i);
    struct PerConfig {
        double predicted_error = 0, confidence = 0;
    };
    std::map<std::string, PerConfig> per;
    std::vector<Out> outs(queries.size());
    std::printf("\n%-62s %5s %-13s %10s %10s %13s %11s %9s\n", "configuration (of --predict)",
                "rows", "novelty", "pred. err%", "confidence", "range (x, med)", "actual err%",
                "in range");
    for (const auto& [k, idx] : by) {
        std::vector<ala::BenchRow> w;
        for (std::size_t i : idx) w.push_back(queries[i]);
        PerConfig& pc = per[k];
        pc.predicted_error = unc.predictedError(model, w);
        pc.confidence = unc.confidence(model, w);
        std::vector<double> actual, width, errs;
        std::size_t in = 0, with_actual = 0;
        const std::vector<Out> predicted = range.predict(w, a.coverage); // one XGBoost call
        for (std::size_t j = 0; j < idx.size(); ++j) {
            const std::size_t i = idx[j];
            const auto& r = queries[i];
            outs[i] = predicted[j];
            Out& out = outs[i];
            if (!std::isfinite(out.error_pct)) out.error_pct = pc.predicted_error;
            errs.push_back(out.error_pct);
            width.push_back(out.hi / std::max(out.lo, 1e-300));
            if (r.thpt > 0) {
                ++with_actual;
                in += r.thpt >= out.lo && r.thpt <= out.hi;
                actual.push_back(100.0 * std::abs(out.predicted - r.thpt) / r.thpt);
            }
        }
        std::printf(
            "%-62.62s %5zu %-13s %10.2f %10.3f %13.2f %11s %9s\n", text::printable(k).c_str(),
            idx.size(), ala::noveltyName(outs[idx.front()].novelty),
            ala::finitePercentile(errs, 50), pc.confidence, ala::finitePercentile(width, 50),
            actual.empty() ? "-" : fmt2(describe(actual, {50}).percentile(50)).c_str(),
            with_actual ? (std::to_string(in) + "/" + std::to_string(with_actual)).c_str() : "-");
    }
    writeFileAtomically(a.out, [&](std::ostream& f) {
        f << "framework,model,hardware,precision,input_len,output_len,batch,throughput,"
             "predicted_throughput,source,anchor_configuration,anchor_input_len,"
             "anchor_output_len,anchor_configurations,predicted_error_pct,confidence,novelty,"
             "estimate,interval_lo,interval_hi,coverage,interval_from\n";
        for (std::size_t i = 0; i < queries.size(); ++i) {
            const auto& r = queries[i];
            const auto pr = model.parameters(r, r.ii, r.oo);
            const PerConfig& pc = per.at(ala::configKey(r, o.columns));
            const Out& out = outs[i];
            // Fields came from a CSV read without quoting: they hold no comma; the interval's
            // note may, so it is quoted.
            f << r.framework << ',' << r.model << ',' << r.hardware << ',' << r.precision << ','
              << r.ii << ',' << r.oo << ',' << r.bb << ',';
            if (r.thpt > 0) f << r.thpt;
            f << ',' << out.predicted << ',' << ala::sourceName(pr.source) << ','
              << pr.anchor_config << ',' << pr.anchor.first << ',' << pr.anchor.second << ','
              << pr.anchors << ',' << out.error_pct << ',' << pc.confidence << ','
              << ala::noveltyName(out.novelty) << ',' << out.estimate << ',' << out.lo << ',';
            if (std::isfinite(out.hi)) f << out.hi;
            f << ',' << a.coverage << ",\"" << out.from << "\"\n";
        }
    });
    std::printf("wrote %zu predictions to %s (each with its %.0f %% interval)\n", queries.size(),
                a.out.c_str(), 100 * a.coverage);
}

// fit ala --evaluate-uncertainty: the error predictor and the confidence judged on data
// they never saw, per regime; with --compare-annealed, the paper's annealing method too.
template <class Args>
void evaluateUncertaintyCli(const std::vector<ala::BenchRow>& rows, const ala::AlaOptions& o,
                            const Args& a) {
    std::vector<std::string_view> regimes;
    text::split(a.evaluate_uncertainty, ',', regimes);
    nlohmann::json out = nlohmann::json::array();
    std::vector<std::pair<ala::UncertaintyMethod, const char*>> methods{
        {ala::UncertaintyMethod::Current, "current (held-out predictions)"}};
    if (a.compare_annealed)
        methods.emplace_back(ala::UncertaintyMethod::Annealed,
                             "annealed (the paper's, as first built)");
    for (auto rv : regimes) {
        const std::string regime(rv);
        for (const auto& [method, mname] : methods) {
            std::printf("\nuncertainty, %s, %s held out (ALA: %d rounds at eta %g):\n", mname,
                        regime.c_str(), o.xgb.trees, o.xgb.eta);
            std::fflush(stdout);
            ala::AnnealedUncertaintyOptions ann;
            ann.anneal.seed = a.seed;
            ann.step_xgb.seed = ann.predictor.seed = a.seed;
            const auto ev = ala::evaluateUncertainty(rows, o, regime, a.folds,
                                                     uncertaintyOptions(a), method, ann);
            std::map<std::string, std::vector<const ala::UncertaintyQuery*>> by_hw;
            for (const auto& q : ev.queries) by_hw[q.hardware].push_back(&q);
            std::printf("  %-26s %7s | %10s %10s %10s\n", "hardware", "configs", "actual %",
                        "predicted %", "confidence");
            nlohmann::json qs = nlohmann::json::array();
            for (const auto& [hw, v] : by_hw) {
                std::vector<double> act, pred, conf;
                for (const auto* q : v) {
                    act.push_back(q->actual_pct);
                    pred.push_back(q->predicted_pct);
                    conf.push_back(q->confidence);
                }
                std::printf("  %-26s %7zu | %10.1f %10.1f %10.3f  (medians)\n", hw.c_str(),
                            v.size(), describe(act, {50}).percentile(50),
                            describe(pred, {50}).percentile(50),
                            describe(conf, {50}).percentile(50));
            }
            for (const auto& q : ev.queries)
                qs.push_back({{"configuration", q.config},
                              {"hardware", q.hardware},
                              {"rows", q.rows},
                              {"actual_pct", jsonNumber(q.actual_pct)},
                              {"predicted_pct", jsonNumber(q.predicted_pct)},
                              {"confidence", jsonNumber(q.confidence)}});
            std::printf("  %zu held-out configurations: Spearman(predicted, actual error) %+.3f, "
                        "Spearman(confidence, actual error) %+.3f\n",
                        ev.queries.size(), ev.spearman_predicted, ev.spearman_confidence);
            out.push_back(
                {{"regime", regime},
                 {"method", method == ala::UncertaintyMethod::Current ? "current" : "annealed"},
                 {"spearman_predicted", jsonNumber(ev.spearman_predicted)},
                 {"spearman_confidence", jsonNumber(ev.spearman_confidence)},
                 {"queries", qs}});
        }
    }
    if (!a.json_out.empty()) {
        const std::string text = out.dump(2) + "\n";
        writeFileAtomically(a.json_out, [&](std::ostream& f) { f << text; });
    }
}

// A method's column in fit ala --holdout --out.
const char* holdoutColumn(std::size_t m) {
    static const char* names[ala::kHoldoutMethods] = {
        "ala", "ala_no_prior", "roofline", "linear_dataset_wide", "xgb_dataset_wide", "spec"};
    return m < ala::kHoldoutMethods ? names[m] : "?";
}

// fit ala --holdout: every vendor, framework or hardware held out whole in turn; each
// method's median and p90 % error per held-out group and over all of them.
template <class Args>
void holdoutCli(const std::vector<ala::BenchRow>& rows, const ala::AlaOptions& o, const Args& a) {
    std::vector<std::string_view> regimes;
    text::split(a.holdout, ',', regimes);
    nlohmann::json out = nlohmann::json::array();
    std::vector<ala::HoldoutRow> all;
    std::vector<std::string> regime_of;
    for (auto rv : regimes) {
        const std::string regime(rv);
        std::printf("\nheld out by %s (ALA: %d rounds at eta %g; errors in %%, median / p90):\n",
                    regime.c_str(), o.xgb.trees, o.xgb.eta);
        std::fflush(stdout);
        const auto ev = ala::evaluateHoldout(rows, o, regime, std::size_t(a.calibration_rows),
                                             a.seed, a.coverage, [](const std::string& line) {
                                                 std::printf("  %s\n", line.c_str());
                                                 std::fflush(stdout);
                                             });
        nlohmann::json groups = nlohmann::json::array();
        // Zero-shot over every held-out row; calibrated over the rows not used to calibrate.
        for (const bool cal : {false, true}) {
            if (cal && a.calibration_rows == 0) break;
            if (cal)
                std::printf("  calibrated with %d measured rows of each held-out configuration "
                            "(the rest scored):\n",
                            a.calibration_rows);
            else
                std::printf("  zero-shot (no row of the held-out configuration measured):\n");
            std::printf("  %-22s %5s", "held out", "rows");
            for (std::size_t m = 0; m < ala::kHoldoutMethods; ++m)
                std::printf(" | %23s", ala::holdoutMethodName(m));
            std::printf("\n");
            auto line = [&](const std::string& name, const std::string& group) {
                std::array<std::vector<double>, ala::kHoldoutMethods> e;
                std::size_t n = 0;
                for (const auto& h : ev.rows) {
                    if ((!group.empty() && h.group != group) || (cal && h.calibration_row))
                        continue;
                    ++n;
                    for (std::size_t m = 0; m < ala::kHoldoutMethods; ++m)
                        e[m].push_back(
                            ala::pctError(cal ? h.calibrated[m] : h.predicted[m], h.row.thpt));
                }
                std::printf("  %-22.22s %5zu", name.c_str(), n);
                nlohmann::json g{{"held_out", name}, {"calibrated", cal}, {"rows", n}};
                for (std::size_t m = 0; m < ala::kHoldoutMethods; ++m) {
                    const double med = ala::finitePercentile(e[m], 50),
                                 p90 = ala::finitePercentile(e[m], 90);
                    std::printf(" | %11.1f %11.1f", med, p90);
                    g[ala::holdoutMethodName(m)] = {{"median_pct", jsonNumber(med)},
                                                    {"p90_pct", jsonNumber(p90)}};
                }
                std::printf("\n");
                groups.push_back(g);
            };
            for (const auto& g : ev.groups) line(g, g);
            line("all held-out rows", "");
        }
        // The range of the unseen estimate (dataset-wide XGBoost), learned inside the
        // training groups: how often it holds the truth, and whether the predicted error
        // ranks the configurations as their actual error does.
        std::printf("  the unseen estimate's %.0f %% interval (residuals from hold-outs inside "
                    "the training groups only; 'before': the range before the new-vendor "
                    "rule, on the same rows):\n",
                    100 * ev.coverage);
        std::printf("  %-22s %9s %9s %9s %10s %10s %10s %10s\n", "held out", "coverage", "before",
                    "calibr.", "width (x)", "width cal.", "Spearman", "(width)");
        std::vector<std::string> rows_of = ev.groups;
        rows_of.emplace_back(); // every held-out row pooled
        for (const auto& g : rows_of) {
            const ala::IntervalSummary is = ala::summarizeIntervals(ev, g);
            std::printf("  %-22.22s %8.1f%% %8.1f%% %8.1f%% %10.2f %10.2f %10.2f %10.2f%s%s%s\n",
                        g.empty() ? "all held-out rows" : g.c_str(), 100 * is.coverage(),
                        100 * is.plainCoverage(), 100 * is.calibratedCoverage(), is.median_width,
                        is.calibrated_median_width, is.spearman_predicted, is.spearman_width,
                        g.empty() ? "" : "   (", is.interval_from.c_str(), g.empty() ? "" : ")");
            groups.push_back(
                {{"held_out", g.empty() ? "all held-out rows" : g},
                 {"interval_coverage", jsonNumber(is.coverage())},
                 {"interval_coverage_before_new_vendor_rule", jsonNumber(is.plainCoverage())},
                 {"calibrated_interval_coverage", jsonNumber(is.calibratedCoverage())},
                 {"median_width_factor", jsonNumber(is.median_width)},
                 {"calibrated_median_width_factor", jsonNumber(is.calibrated_median_width)},
                 {"spearman_calibrated_predicted_vs_actual", jsonNumber(is.spearman_predicted)},
                 {"spearman_calibrated_width_vs_actual", jsonNumber(is.spearman_width)},
                 {"configurations", is.configurations},
                 {"interval_from", is.interval_from}});
        }
        out.push_back({{"regime", regime}, {"groups", groups}});
        all.insert(all.end(), ev.rows.begin(), ev.rows.end());
        regime_of.insert(regime_of.end(), ev.rows.size(), regime);
    }
    if (!a.out.empty())
        writeFileAtomically(a.out, [&](std::ostream& f) {
            f << "regime,held_out,framework,model,hardware,precision,input_len,output_len,batch,"
                 "throughput,suspect,calibration_row";
            for (std::size_t m = 0; m < ala::kHoldoutMethods; ++m)
                f << ',' << holdoutColumn(m) << ',' << holdoutColumn(m) << "_calibrated,"
                  << holdoutColumn(m) << "_loo_log_error";
            f << ",novelty,interval_lo,interval_hi,calibrated_interval_lo,calibrated_interval_hi\n";
            for (std::size_t i = 0; i < all.size(); ++i) {
                const auto& h = all[i];
                const auto& r = h.row;
                // Fields came from a CSV read without quoting: they hold no comma.
                f << regime_of[i] << ',' << h.group << ',' << r.framework << ',' << r.model << ','
                  << r.hardware << ',' << r.precision << ',' << r.ii << ',' << r.oo << ',' << r.bb
                  << ',' << r.thpt << ',' << (h.suspect ? 1 : 0) << ','
                  << (h.calibration_row ? 1 : 0);
                for (std::size_t m = 0; m < ala::kHoldoutMethods; ++m)
                    for (double p : {h.predicted[m], h.calibrated[m], h.loo_log_error[m]}) {
                        f << ',';
                        if (std::isfinite(p)) f << p;
                    }
                f << ',' << ala::noveltyName(h.novelty);
                for (double p : {h.lo, h.hi, h.cal_lo, h.cal_hi}) {
                    f << ',';
                    if (std::isfinite(p)) f << p;
                }
                f << '\n';
            }
        });
    if (!a.json_out.empty()) {
        const std::string text = out.dump(2) + "\n";
        writeFileAtomically(a.json_out, [&](std::ostream& f) { f << text; });
    }
}

void addFitAla(CLI::App* fit) {
    struct Args {
        std::string data, group = "framework,model,hardware,precision", json_out, predict, out, db;
        std::string evaluate_uncertainty, holdout, hardware, calibrate;
        double test_fraction = 0.2, screen = 10, coverage = 0.8;
        std::uint64_t seed = 1;
        int trees = 5000, folds = 5, threads = 0, inner_trees = 0, calibration_rows = 3;
        bool store = false, fast = false, compare_annealed = false;
    };
    auto a = std::make_shared<Args>();
    auto* c = fit->add_subcommand(
        "ala", "ALA: thpt = c - a*exp(-b*batch) per (input, output) pair of each configuration, "
               "extended to unseen pairs by XGBoost; held-out error against linear regression "
               "and plain XGBoost");
    c->add_option("--data", a->data, "LLM-Inference-Bench CSV")->required();
    c->add_option("--group", a->group,
                  "Columns that make a configuration (of framework,model,hardware,precision)")
        ->capture_default_str();
    c->add_option("--test-fraction", a->test_fraction,
                  "Fraction of each configuration's (input, output) pairs held out (at least one)")
        ->capture_default_str()
        ->check(number(0, 0.95, true));
    c->add_option("--seed", a->seed, "Seed of the held-out choice and of XGBoost")
        ->capture_default_str()
        ->check(seedValue());
    c->add_option("--trees", a->trees, "XGBoost rounds (the authors': 5000, at eta 0.007)")
        ->capture_default_str()
        ->check(whole(1, 100000));
    c->add_flag("--fast", a->fast,
                "A faster named setting: 350 rounds at eta 0.1 (a fifteenth of the time; "
                "held-out median 2.5 % against the authors' 2.3 % on LLM-Inference-Bench)");
    c->add_option("--screen", a->screen,
                  "Leave out of training rows more than this factor off their configuration's "
                  "median at the same batch size (0: keep all)")
        ->capture_default_str()
        ->check(number(0, 1e6));
    c->add_option("--json", a->json_out, "Write every configuration's errors as JSON");
    auto* pr = c->add_option("--predict", a->predict,
                             "CSV of rows to predict (the same columns; throughput optional): "
                             "trains on all of --data, learns the error predictor and the "
                             "confidence from inner hold-outs, writes --out");
    c->add_option("--out", a->out,
                  "With --predict: CSV of the rows with predicted_throughput, source, "
                  "predicted_error_pct, confidence, novelty, interval_lo, interval_hi and "
                  "interval_from (a vendor never measured: widened by the spread between the "
                  "vendors trained on, and said to be a guess until rows of it are measured); "
                  "with --holdout: every held-out row with each method's prediction");
    c->add_option("--evaluate-uncertainty", a->evaluate_uncertainty,
                  "Judge the error predictor and the confidence on held-out data: hardware "
                  "(leave one out), configuration (whole configurations, --folds), pairs; a "
                  "comma-separated list. Prints Spearman's rank correlation of each with the "
                  "actual error")
        ->check(commaListOf({"hardware", "vendor", "framework", "configuration", "pairs"}));
    c->add_option("--folds", a->folds, "Configuration folds (uncertainty learning and evaluation)")
        ->capture_default_str()
        ->check(whole(2, 1000));
    c->add_flag("--compare-annealed", a->compare_annealed,
                "With --evaluate-uncertainty: also judge the paper's annealing method as first "
                "built here (slow)");
    c->add_option("--inner-trees", a->inner_trees,
                  "XGBoost rounds of the inner trainings that learn the uncertainty (default: "
                  "350 at eta 0.1)")
        ->check(whole(1, 100000));
    c->add_option("--threads", a->threads,
                  "Inner trainings at once while learning the uncertainty (0: one per core)")
        ->check(whole(0, 1024));
    c->add_option("--holdout", a->holdout,
                  "Judge ALA on what is new to it: each vendor, framework or hardware held out "
                  "whole in turn (a comma-separated list of vendor, framework, hardware), beside "
                  "the roofline baseline and the paper's dataset-wide baselines; "
                  "chip-as-vendor: each chip held out with every vendor still in training, its "
                  "range read as a vendor's never measured (the check of the new-vendor range "
                  "where training holds two vendors)")
        ->check(commaListOf({"vendor", "framework", "hardware", "chip-as-vendor"}));
    c->add_option("--calibration-rows", a->calibration_rows,
                  "With --holdout: measured rows of each held-out configuration that calibrate "
                  "each method (chosen at random by --seed; 0: zero-shot only)")
        ->capture_default_str()
        ->check(whole(0, 1000));
    c->add_option("--calibrate", a->calibrate,
                  "With --predict: a CSV of a few measured rows (the same columns, throughput "
                  "required; say 3 per configuration) of configurations --data lacks: each such "
                  "configuration's estimate is fitted to them (level and slopes in log batch and "
                  "log length) and its interval read from calibrated hold-outs")
        ->needs(pr);
    c->add_option("--coverage", a->coverage,
                  "The share of rows a prediction interval should hold (split conformal on "
                  "grouped hold-outs of the training rows)")
        ->capture_default_str()
        ->check(number(0.5, 0.99));
    c->add_option("--hardware", a->hardware,
                  "A CSV of accelerators (chip,vendor,memory_gb,memory_bandwidth_gbps,"
                  "fp16_dense_tflops,interconnect_gbps,source) or of models (model,parameters_b,"
                  "active_parameters_b,layers,hidden,kv_heads,head_dim,source) that adds to or "
                  "replaces rows of the shipped tables (resources/hardware)");
    needsStore(
        c->add_option("--db", a->db, "Store the model trained on all of --data in this database"));
    needsStore(c->add_flag("--store", a->store, "Store it in the default database"));
    c->callback([a] {
        if (!a->predict.empty() && a->out.empty())
            throw std::invalid_argument("fit ala --predict needs --out FILE");
        if (!a->calibrate.empty() && a->predict.empty())
            throw std::invalid_argument("fit ala --calibrate is for --predict");
        if (!a->out.empty() && a->predict.empty() && a->holdout.empty())
            throw std::invalid_argument("fit ala --out is for --predict or --holdout");
        ala::AlaOptions o;
        o.columns = ala::parseColumns(a->group);
        o.xgb.trees = a->trees;
        o.xgb.seed = a->seed;
        o.screen_ratio = a->screen;
        if (a->fast) {
            o.xgb.trees = ala::UncertaintyOptions::fast().trees;
            o.xgb.eta = ala::UncertaintyOptions::fast().eta;
        }
        if (!a->hardware.empty()) o.descriptors.addFile(a->hardware);
        const auto rows = ala::readBench(a->data);
        // The query file is read before anything is trained: a bad row is reported at once,
        // not after minutes of training. Every row, in its order (no averaging of repeats).
        const auto queries = a->predict.empty() ? std::vector<ala::BenchRow>{}
                                                : ala::readBench(a->predict, false, false);
        const auto calibration = a->calibrate.empty() ? std::vector<ala::BenchRow>{}
                                                      : ala::readBench(a->calibrate, true, false);
        {
            // Calibration rows of a configuration no --predict row asks for fix nothing that
            // is printed: said, so that a typo in a name is not mistaken for a calibration.
            std::set<std::string> asked;
            for (const auto& q : queries) asked.insert(ala::configKey(q, o.columns));
            std::map<std::string, std::size_t> unmatched;
            for (const auto& r : calibration)
                if (!asked.count(ala::configKey(r, o.columns)))
                    ++unmatched[ala::configKey(r, o.columns)];
            for (const auto& [k, n] : unmatched)
                std::fprintf(stderr,
                             "warning: --calibrate: %zu row(s) of %s match no row of --predict "
                             "(%s): not used\n",
                             n, text::printable(k).c_str(), a->predict.c_str());
        }
        if (!a->evaluate_uncertainty.empty()) {
            evaluateUncertaintyCli(rows, o, *a);
            return;
        }
        if (!a->holdout.empty()) {
            holdoutCli(rows, o, *a);
            return;
        }
        const auto ev = ala::evaluate(rows, o, a->test_fraction, a->seed);
        const auto q = ala::finitePercentile;
        nlohmann::json out = nlohmann::json::array();
        int ala_best = 0;
        std::size_t suspect_held = 0;
        std::vector<std::string> poor; // configurations whose held-out error is too high
        std::printf("%-70s %5s %5s | %15s | %15s | %15s\n", "configuration", "pairs", "held",
                    "ALA med/p90 %", "linear med/p90", "XGBoost med/p90");
        for (const auto& ce : ev.configs) {
            const double am = q(ce.ala_pct, 50), lm = q(ce.linear_pct, 50), xm = q(ce.xgb_pct, 50);
            ala_best += am < lm && am < xm;
            suspect_held += ce.suspect_held_rows;
            const bool is_poor = poorFit(am, q(ce.ala_pct, 90));
            if (is_poor) poor.push_back(ce.config);
            std::printf("%-70.70s %5zu %5zu | %7.1f %7.1f | %7.1f %7.1f | %7.1f %7.1f%s\n",
                        ce.config.c_str(), ce.pairs, ce.held_out.size(), am, q(ce.ala_pct, 90), lm,
                        q(ce.linear_pct, 90), xm, q(ce.xgb_pct, 90), is_poor ? "  poor" : "");
            nlohmann::json held = nlohmann::json::array();
            for (const auto& [ii, oo] : ce.held_out) held.push_back({ii, oo});
            out.push_back({{"configuration", ce.config},
                           {"hardware", ce.fields.hardware},
                           {"pairs", ce.pairs},
                           {"held_out", held},
                           {"train_rows", ce.train_rows},
                           {"suspect_held_rows", ce.suspect_held_rows},
                           {"poor", is_poor},
                           {"ala_pct", ce.ala_pct},
                           {"linear_pct", ce.linear_pct},
                           {"xgboost_pct", ce.xgb_pct},
                           {"linear_dataset_wide_pct", ce.linear_all_pct},
                           {"xgboost_dataset_wide_pct", ce.xgb_all_pct}});
        }
        std::printf("\n%zu configurations evaluated (%zu with a single pair: trained on, not "
                    "evaluated); ALA's median below both baselines' in %d\n",
                    ev.configs.size(), ev.single_pair_configs, ala_best);
        if (!poor.empty()) {
            std::printf("warning: %zu configuration(s) with ALA's held-out error above %.0f %% "
                        "(median) or %.0f %% (p90), poor fits that simulations should not use:",
                        poor.size(), kPoorMedianPct, kPoorP90Pct);
            for (std::size_t i = 0; i < poor.size() && i < 8; ++i)
                std::printf("\n  %s", poor[i].c_str());
            if (poor.size() > 8) std::printf("\n  ... (--json lists them: \"poor\": true)");
            std::printf("\n");
        }
        std::printf("training left out %zu suspect rows (--screen %g); %zu held-out rows are "
                    "suspect and count against every method\n\nper hardware (all held-out "
                    "rows):\n",
                    ev.screened_rows, a->screen, suspect_held);
        std::printf("%-26s %6s | %15s | %15s | %15s | %23s\n", "hardware", "rows", "ALA med/p90 %",
                    "linear med/p90", "XGBoost med/p90", "dataset-wide lin / XGB");
        const ala::PooledErrors pooled = ala::poolErrors(ev);
        using Errors = std::array<std::vector<double>, ala::PooledErrors::kMethods>;
        auto line = [&](const std::string& name, const Errors& e) {
            std::printf("%-26s %6zu | %7.1f %7.1f | %7.1f %7.1f | %7.1f %7.1f | %11.1f %11.1f\n",
                        name.c_str(), e[0].size(), q(e[0], 50), q(e[0], 90), q(e[1], 50),
                        q(e[1], 90), q(e[2], 50), q(e[2], 90), q(e[3], 50), q(e[4], 50));
        };
        for (const auto& [hw, e] : pooled.by_hardware) line(hw, e);
        line("all", pooled.all);
        std::printf("ALA's median below both baselines' on %d of %zu hardware (below both "
                    "dataset-wide baselines', the paper's, on %d)\n",
                    pooled.hardware_ala_best, pooled.by_hardware.size(),
                    pooled.hardware_ala_best_dataset_wide);
        if (!a->json_out.empty()) {
            const std::string text = out.dump(2) + "\n";
            writeFileAtomically(a->json_out, [&](std::ostream& f) { f << text; });
        }
        if (a->predict.empty() && a->db.empty() && !a->store) return;
        ala::AlaModel model;
        model.train(rows, o);
        const ala::Uncertainty unc = learnUncertainty(rows, o, *a);
        // The range of configurations without measured curves, for --predict and stored with
        // the model (the Models panel draws it and calibrates to a user's measurements).
        std::printf("\nlearning the range of configurations without measured curves (hold-outs "
                    "of --data by framework, vendor, chip, configuration and pair)...\n");
        std::fflush(stdout);
        ala::UnseenOptions uo;
        uo.seed = a->seed;
        if (a->inner_trees > 0) uo.xgb.trees = a->inner_trees;
        ala::SpecModel spec;
        spec.train(rows, o.descriptors, uo.xgb);
        ala::RangePredictor range(model, ala::UnseenEstimator::learn(rows, o, uo), std::move(spec));
#if KAIROS_HAVE_STORE
        if (!a->db.empty() || a->store) {
            store::Store db(a->db.empty() ? store::Store::defaultPath() : a->db);
            store::ModelInfo mi;
            mi.kind = "ala";
            mi.name = a->data.substr(a->data.find_last_of('/') + 1) + " by " + a->group;
            mi.params = model.toJson({{"uncertainty", unc.toJson()},
                                      {"unseen", range.unseen().toJson()},
                                      {"spec", range.spec().toJson()},
                                      {"coverage", a->coverage}});
            mi.training = nlohmann::json{
                {"source", a->data},
                {"rows", rows.size()},
                {"columns", o.columns},
                {"configurations", model.configurations().size()},
                {"screened_rows", model.screenedRows()},
                {"trees", a->trees},
                {"seed",
                 a->seed}}.dump();
            mi.accuracy = nlohmann::json{
                {"test_fraction", a->test_fraction},
                {"ala_median_pct", q(pooled.all[0], 50)},
                {"ala_p90_pct", q(pooled.all[0], 90)},
                {"linear_median_pct", q(pooled.all[1], 50)},
                {"xgboost_median_pct", q(pooled.all[2], 50)},
                {"linear_dataset_wide_median_pct", q(pooled.all[3], 50)},
                {"xgboost_dataset_wide_median_pct", q(pooled.all[4], 50)},
                {"configurations",
                 out}}.dump();
            const auto id = db.putModel(mi);
            std::printf("stored as model %lld in %s (simulate --exec-model %lld)\n",
                        static_cast<long long>(id), db.path().c_str(), static_cast<long long>(id));
        }
#endif
        if (a->predict.empty()) return;
        for (const auto& k : range.calibrateWith(calibration))
            std::printf("--calibrate: %s has measured curves in --data; its rows are not used\n",
                        text::printable(k).c_str());
        predictAla(model, unc, range, o, queries, *a);
    });
}

} // namespace

void addFitAlaTo(CLI::App* fit) {
    addFitAla(fit);
}
#endif // KAIROS_HAVE_ALA

} // namespace kairos::cli
