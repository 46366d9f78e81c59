#pragma once
// ALA (ARCHITECTURE.md, The papers), its analytical part: throughput against batch size
// thpt(bb) = c - a*exp(-b*bb), fitted per (input ii, output oo) pair of one hardware/
// software configuration by bounded nonlinear least squares (Ceres): a, c in [0, 1e6],
// b in [1e-5, 1], started where the authors start (see fitThroughput). The fits of a
// configuration form its parameter database, (ii, oo) -> (a, b, c).
#include "fit/bench.h"
#include "fit/descriptors.h"
#include "fit/xgb.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kairos::ala {

struct ExpFit {
    double a = 0, b = 0, c = 0;
    double a0 = 0, b0 = 0, c0 = 0; // where the solver started
    int points = 0, iterations = 0;
    std::vector<int> batches; // the batch sizes fitted over, ascending
    bool converged = false;
    double max_abs_pct = 0; // largest |fit - measured| / measured over the points, in %
    double operator()(double bb) const;
};

// The bounded fit over (bb, thpt) points. Start (the authors'): a0 = p90 - p10 of thpt
// (at least 1e-5), b0 = 1 / (p90 - p10 of bb), c0 = p90 of thpt, percentiles as numpy's;
// with a single batch size a0 = 1, b0 = 0.001, c0 = 0. Starts are clamped into the bounds.
ExpFit fitThroughput(const std::vector<std::pair<double, double>>& bb_thpt);

// One configuration's parameter database: a fit per (ii, oo) from its rows.
std::map<std::pair<int, int>, ExpFit> parameterDatabase(const std::vector<BenchRow>& rows);

// The authors' features of an (ii, oo) pair: ii, oo, log1p(ii), log1p(oo), log1p(ii/oo),
// ii/(oo + 1), ii/(ii + 1).
std::vector<float> features(int ii, int oo);

// The columns that make a configuration (any of framework, model, hardware, precision)
// and a row's configuration key under them ("vLLM | m | h | fp16").
using Columns = std::vector<std::string>;
const Columns& allColumns();
Columns parseColumns(const std::string& comma_list); // throws std::invalid_argument
std::string configKey(const BenchRow& r, const Columns& cols);

// Rows that cannot be right: per configuration and batch size, with at least three rows,
// a throughput more than `ratio` times the median of those rows, or less than 1/ratio of
// it (LLM-Inference-Bench has vLLM 7B models on GH200 at 2048/2048 reporting ~85,000
// tokens/s at batch 1 where the other pairs give ~280). Marked, not deleted: training
// leaves them out, evaluation still scores them.
std::vector<bool> suspectRows(const std::vector<BenchRow>& rows, const Columns& cols,
                              double ratio = 10);

struct AlaOptions {
    fit::XgbParams xgb;
    Columns columns = allColumns();
    double screen_ratio = 10; // suspectRows' ratio; 0 keeps every row
    // The roofline prior: a pair predicted from another configuration's curve is scaled by
    // the ratio of the two configurations' roofline bounds at the same (ii, oo, bb) (hardware,
    // device count, model and precision all enter the bound). Off by default: held out by
    // vendor it raised ALA's median error from 61 % to 92 % (software efficiency differs by
    // vendor far more than the spec sheets do), by hardware from 46 % to 52 %; by framework
    // it lowered it from 97 % to 90 % (fit ala --holdout, LLM-Inference-Bench).
    bool roofline_prior = false;
    hw::Descriptors descriptors = hw::Descriptors::shipped();
    // Trainings run at once where they are independent (ALA's three regressors; evaluate()'s
    // ALA, dataset-wide and per-configuration trainings); 0: the hardware's count. Each
    // training is single-threaded and seeded, so the result is the same at any count.
    int threads = 0;
};

// Where a pair's (a, b, c) came from.
enum class Source {
    Measured,          // looked up: the pair was measured in this configuration
    Predicted,         // from the nearest measured pair of the same configuration
    OtherConfiguration // the configuration has no measured curve: from the nearest one's
};
const char* sourceName(Source s);
struct Prediction {
    ExpFit fit;
    Source source = Source::Measured;
    std::string anchor_config; // the configuration and pair the prediction started from
    std::pair<int, int> anchor{0, 0};
    // Other configurations equally near by ALA's features: the prediction is the mean,
    // in the regressors' coordinates, of the predictions from each (anchor_config is
    // the first of them by key, for display).
    std::size_t anchors = 1;
    double config_distance = 0;      // configDistance to the anchor configuration (0: its own)
    std::vector<int> anchor_batches; // the anchor curve's measured batch sizes
    double anchor_max_abs_pct = 0;   // and its own fit's largest error (%)
    // The roofline prior (AlaOptions::roofline_prior), set where the curve comes from other
    // configurations and every roofline involved is known: the query's and each anchor
    // configuration's bound, evaluated at the query's pair.
    std::optional<hw::Roofline> roof_query;
    std::vector<hw::Roofline> roof_anchors;
    int ii = 0, oo = 0;
    // The predicted throughput at batch `bb`: fit(bb), times the geometric mean over the
    // anchors of roofline(query) / roofline(anchor) where the prior applies.
    double at(double bb) const;
    double transfer(double bb) const; // that factor (1 without the prior)
};

// ALA's model over many configurations: each configuration's parameter database, and
// three XGBoost regressors that predict the (a, b, c) of an unseen pair.
//
// How the regressors learn (our choice where the paper leaves it open; fit ala measures
// it against the paper's baselines). The paper trains them per configuration on the
// authors' features; LLM-Inference-Bench has five (ii, oo) pairs per configuration, so
// with one held out the trees see four points, and (a, b, c) regressed one by one are
// inconsistent: with a ~ c (a curve still rising at batch 64) a 1 % error in a is a 60 %
// error at batch 1. So:
//  - coordinates: (a, b, c) are learned as u = log thpt(1), v = log(c - thpt(1)) and
//    w = log b, and turned back (c = e^u + e^v, a = e^v * e^b): the same curve, and a
//    relative error in any coordinate is at most that relative error in throughput;
//  - anchor: a pair's coordinates are predicted as the change from the nearest measured
//    pair of the same configuration (distance in log ii, log oo), from the authors'
//    features of both pairs, their log ratios, the anchor's coordinates and the
//    configuration's descriptors;
//  - pooled: one set of regressors learns these changes from every configuration's
//    pairs (each pair against its nearest other pair), so four pairs are not all it has.
// Only curves (pairs measured at three or more batch sizes) train the regressors and
// serve as anchors; every measured pair is looked up.
class AlaModel {
public:
    void train(const std::vector<BenchRow>& rows, const AlaOptions& o = {});
    // (a, b, c) of `ii`, `oo` in the configuration of `config` (its ii/oo/bb ignored).
    Prediction parameters(const BenchRow& config, int ii, int oo) const;
    double predict(const BenchRow& q) const; // throughput at q.ii, q.oo, q.bb
    // One configuration's database (empty when unknown).
    const std::map<std::pair<int, int>, ExpFit>& database(const std::string& config_key) const;
    std::vector<std::string> configurations() const;
    // A configuration's framework/model/hardware/precision (null when unknown).
    const BenchRow* fields(const std::string& config_key) const;
    std::size_t screenedRows() const { return screened_; }
    std::size_t learnedPairs() const { return learned_pairs_; }
    const AlaOptions& options() const { return opt_; }
    // The prior only changes predictions, not what is trained: one training serves both.
    void setRooflinePrior(bool on) { opt_.roofline_prior = on; }

    // Distance between two configurations in the features ALA's regressors see of a
    // configuration (descriptors: devices, log model size, size per device, mixture of
    // experts, and framework, chip and precision one-hot), each numeric feature divided by
    // its standard deviation over the trained configurations. An unseen configuration
    // takes its prediction from the nearest configuration with measured curves by this
    // distance (ties averaged), never by name.
    double configDistance(const BenchRow& a, const BenchRow& b) const;

    // What is known about predicting a workload (one configuration's rows, e.g. what
    // --predict is given) from this model, for the error predictor (queryFeatures) and
    // the confidence (novelty). Per row, from parameters(): how the pair is obtained
    // (measured, predicted in its configuration, taken from another), the distance to the
    // configuration and pair it starts from, how far its batch lies outside the anchor
    // curve's measured batches, the anchor curve's own fit error, whether the chip and
    // vendor are known, device and model-size ratios to the anchor, and how many measured
    // curves and configurations back it; averaged over the rows. Not the number of rows.
    static constexpr std::size_t kQueryFeatures = 19;
    // `predictions` (may be null) receives each row's parameters(), in order.
    std::vector<float> queryFeatures(const std::vector<BenchRow>& workload,
                                     std::vector<Prediction>* predictions = nullptr) const;
    // How far a workload lies from what the model was trained on, per kind (all >= 0, all
    // 0 for a measured pair of a trained configuration at a measured batch size): the
    // configuration distance, the (ii, oo) distance, the batch extrapolation, an unknown
    // chip, a different vendor (averaged over the rows).
    static constexpr std::size_t kNovelty = 5;
    std::array<double, kNovelty> novelty(const std::vector<BenchRow>& workload) const;
    // The same from queryFeatures' output.
    static std::array<double, kNovelty> noveltyOf(const std::vector<float>& features);

    // Everything needed to predict again, exactly (XGBoost's own JSON inside); `extra`'s
    // keys are added (fromJson ignores keys it does not know).
    std::string toJson(const nlohmann::json& extra = nlohmann::json::object()) const;
    static AlaModel fromJson(const std::string& json);   // throws std::runtime_error
    static AlaModel fromParsed(const nlohmann::json& j); // the same, already parsed

private:
    struct Config {
        std::string key;
        BenchRow fields; // framework/model/hardware/precision of the configuration
        std::map<std::pair<int, int>, ExpFit> db;
        std::vector<float> desc; // descriptors(fields), kept (computeScales)
        bool curves = false;     // has a measured curve
        std::string chip;        // the hardware without its device count
    };
    double distance(const std::vector<float>& a, const std::vector<float>& b) const;
    std::vector<float> regressorInput(const Config& c, int ii, int oo,
                                      const std::pair<int, int>& anchor) const;
    std::vector<float> descriptors(const BenchRow& r) const;
    // The configurations with measured curves nearest to `config` by configDistance
    // (several when tied), and that distance.
    std::vector<const Config*> nearestWithCurves(const BenchRow& config, double* distance) const;
    void computeScales();

    AlaOptions opt_;
    std::map<std::string, Config> configs_;
    std::vector<std::string> frameworks_, chips_, precisions_; // one-hot vocabularies
    fit::XgbRegressor r_[3];
    std::vector<double> desc_scale_; // per descriptor: its spread over the configurations
    bool learned_ = false;
    std::size_t screened_ = 0, learned_pairs_ = 0;
};

// The baselines the authors compare with, on raw (ii, oo, bb) -> throughput, one per
// configuration.
class LinearBaseline { // ordinary least squares with an intercept
public:
    void train(const std::vector<BenchRow>& rows);
    double predict(int ii, int oo, int bb) const;

private:
    double w_[4] = {0, 0, 0, 0};
};
class XgbBaseline {
public:
    void train(const std::vector<BenchRow>& rows, const fit::XgbParams& p);
    double predict(int ii, int oo, int bb) const;

private:
    fit::XgbRegressor r_;
};

// The same two baselines as the paper trains them: once on the whole dataset (its
// "Vanilla XGBoost ... on the dataset itself"), the configuration as one-hot features of
// its framework, model, hardware and precision beside (ii, oo, bb); XGBoost learns log
// throughput. A category the training never saw is all zeros.
class DatasetWideBaseline {
public:
    void train(const std::vector<BenchRow>& rows, const fit::XgbParams& p);
    double predictLinear(const BenchRow& r) const;
    double predictXgb(const BenchRow& r) const;
    // The same for many rows in one XGBoost call (a call per row costs a thread pool's
    // wake-up each: 100,000 calibration rows took a minute).
    std::vector<double> predictXgb(const std::vector<BenchRow>& rows) const;
    bool trained() const { return xgb_.trained(); }
    // Both models with their one-hot vocabularies (XGBoost's UBJSON, base64).
    nlohmann::json toJson() const;
    static DatasetWideBaseline fromJson(const nlohmann::json& j); // throws std::runtime_error

private:
    std::vector<double> features(const BenchRow& r) const; // [ii, oo, bb, one-hots...]
    std::array<std::map<std::string, int>, 4> cats_;
    int width_ = 3;
    std::vector<double> w_; // linear: [1, features]
    fit::XgbRegressor xgb_;
};

// Held-out evaluation over every configuration at once: in each configuration with two
// or more pairs, `test_fraction` of its distinct (ii, oo) pairs (at least one, at most
// all but one; chosen by `seed` and the configuration's key, so configurations hold out
// different pairs) are held out whole. ALA is trained once on all the rest (every
// configuration's), the baselines per configuration on its rest and, as the paper's, once
// on all of it (DatasetWideBaseline); absolute % errors on
// every held-out row (suspect rows included: they count against every method).
struct ConfigEvaluation {
    std::string config;
    BenchRow fields;
    std::size_t pairs = 0, train_rows = 0, suspect_held_rows = 0;
    std::vector<std::pair<int, int>> held_out;
    std::vector<double> ala_pct, linear_pct, xgb_pct; // per held-out row
    std::vector<double> linear_all_pct, xgb_all_pct;  // the dataset-wide baselines
};
struct Evaluation {
    std::vector<ConfigEvaluation> configs; // only those with a held-out pair
    DatasetWideBaseline dataset_wide;      // trained on every configuration's training rows
    std::size_t single_pair_configs = 0, screened_rows = 0;
};
Evaluation evaluate(const std::vector<BenchRow>& rows, const AlaOptions& o, double test_fraction,
                    std::uint64_t seed);

// The pct-th percentile of the finite values of v (NaN when there are none).
double finitePercentile(const std::vector<double>& v, double pct);
// An evaluation's held-out errors pooled per hardware and over every configuration, per
// method (0: ALA, 1: linear regression, 2: XGBoost, both per configuration; 3: linear
// regression, 4: XGBoost, both dataset-wide as the paper's), and on how many hardware ALA's
// median is below both per-configuration baselines' medians (and below both dataset-wide
// ones').
struct PooledErrors {
    static constexpr std::size_t kMethods = 5;
    std::map<std::string, std::array<std::vector<double>, kMethods>> by_hardware;
    std::array<std::vector<double>, kMethods> all;
    int hardware_ala_best = 0, hardware_ala_best_dataset_wide = 0;
};
PooledErrors poolErrors(const Evaluation& ev);

// ALA's subsets and confidence (the paper's Algorithms 6-8). A subset is a set of measured points
// (ii, oo, bb); simulated annealing logs the subsets it tried with their error. Our
// points also carry their configuration (framework, model, hardware, precision as ids
// of a ConfigIds table; -1 when unknown): the paper's features see only (ii, oo, bb),
// so a workload on hardware the training never saw would look familiar; with these it
// does not (the paper's Qwen2-7B-on-PVC case, which it attributes to the hardware).
struct Point {
    int ii = 0, oo = 0, bb = 0;
    std::array<int, 4> cfg{-1, -1, -1, -1};
    bool operator<(const Point& o) const {
        return std::tie(ii, oo, bb, cfg) < std::tie(o.ii, o.oo, o.bb, o.cfg);
    }
    bool operator==(const Point& o) const {
        return ii == o.ii && oo == o.oo && bb == o.bb && cfg == o.cfg;
    }
};
using Subset = std::vector<Point>;

// Interned configuration strings, per column (framework, model, hardware, precision).
class ConfigIds {
public:
    Point point(const BenchRow& r); // adds unseen strings
    nlohmann::json toJson() const;
    static ConfigIds fromJson(const nlohmann::json& j);

private:
    std::array<std::map<std::string, int>, 4> ids_;
};

// The unique values of each feature over some subsets: the vocabulary of the encoding.
struct Vocabulary {
    std::vector<int> ii, oo, bb;         // sorted, unique
    std::array<std::vector<int>, 4> cfg; // sorted, unique ids (-1 left out)
    static Vocabulary of(const std::vector<Subset>& subsets);
    std::size_t size() const;
};

// The error predictor's input: for each unique ii, then oo, then bb, then configuration
// value of the vocabulary, 1 if the subset has a point with that value, else 0.
std::vector<float> encode(const Subset& s, const Vocabulary& v);

// Confidence of a prediction for `query` given the logged subsets: per feature (ii, oo,
// bb, and each configuration column that either side knows) the histogram of the
// query's values and of each logged subset's over the union of their values; the
// cosine distance (1 - cosine similarity) averaged over those features; d_min the
// smallest over the logged subsets; c = 1 / (1 + d_min). 1 for a query identical to a
// logged subset; 0.5 when no value is shared with any.
double confidence(const std::vector<Subset>& logged, const Subset& query);

// Simulated annealing over training subsets (the authors' search for the training set
// that gives the lowest error): start from `start`; each step adds `move` points of
// `pool` not in the subset or removes `move` (at least `min_size` kept), at random; a
// worse subset is accepted with probability exp((E - E') / tau), tau <- alpha * tau.
// Every subset evaluated is logged with its error (what the error predictor learns
// from). Deterministic under `seed`.
struct AnnealOptions {
    int steps = 200;
    std::size_t move = 1; // points added or removed per step
    double tau0 = 1.0, alpha = 0.95;
    std::size_t min_size = 1;
    std::uint64_t seed = 1;
};
struct AnnealLog {
    std::vector<std::pair<Subset, double>> tried; // in order, the start first
    Subset best;
    double best_error = 0;
};
AnnealLog anneal(const Subset& pool, const Subset& start,
                 const std::function<double(const Subset&)>& error, const AnnealOptions& o = {});

// The paper's error predictor and confidence as first built here (format
// kairos-ala-uncertainty-1), kept to compare with and to read models stored with it.
// Evaluated on configurations and hardware held out whole (evaluateUncertainty), it did
// not earn its name: leave one hardware out, Spearman(predicted, actual error) -0.04 and
// Spearman(confidence, actual error) +0.6 (confidence rose where the error rose); the
// predicted error followed how many points a workload has, not how new it is.
// Learned by simulated annealing over subsets of
// the training points of evaluate's split (same test_fraction and seed): each step
// trains ALA on the subset (with `step_xgb`, lighter than the final model's: the search
// needs many trainings) and scores it by the median % error on the held-out rows. Every
// subset tried is logged per configuration: its points of that configuration with that
// configuration's median error, so that a workload (one configuration's points) is
// compared with workloads of one configuration. The error predictor is XGBoost on the
// encodings of those logged subsets.
struct AnnealedUncertaintyOptions {
    AnnealOptions anneal;        // steps, points per move, cooling, seed
    double start_fraction = 0.5; // the first subset: this share of the pool, at random
    fit::XgbParams step_xgb = light();
    fit::XgbParams predictor = light();
    static fit::XgbParams light() { return fit::XgbParams::with(100, 0.1, 6); }
};
class AnnealedUncertainty {
public:
    static AnnealedUncertainty learn(const std::vector<BenchRow>& rows, const AlaOptions& o,
                                     double test_fraction, std::uint64_t seed,
                                     const AnnealedUncertaintyOptions& u = {});
    Subset workload(const std::vector<BenchRow>& rows);  // its points (ids of this table)
    double predictedError(const Subset& workload) const; // median % error, >= 0
    double confidence(const Subset& workload) const;
    // The global subsets and errors (after fromJson: only the start's and the best error).
    const AnnealLog& log() const { return log_; }
    std::size_t annealSteps() const { return anneal_steps_; } // subsets tried, the start too
    std::size_t loggedSubsets() const { return logged_.size(); }

    // The logged subsets, their errors, the id table and the error predictor (of the
    // annealing's log only its length, first and best errors): enough to predict errors
    // and confidences again, exactly.
    nlohmann::json toJson() const;
    static AnnealedUncertainty fromJson(const nlohmann::json& j); // throws std::runtime_error

private:
    ConfigIds ids_;
    AnnealLog log_;
    std::size_t anneal_steps_ = 0;
    std::vector<Subset> logged_; // per configuration
    std::vector<double> logged_error_;
    Vocabulary vocab_;
    fit::XgbRegressor predictor_;
};

// ALA's error predictor and confidence (format kairos-ala-uncertainty-2), learned from
// held-out predictions made the way a query is: within the training rows, ALA is trained
// again without one hardware at a time, without a fifth of the configurations at a time,
// and without a fifth of each configuration's (ii, oo) pairs (step_xgb, a faster setting
// than the final model's), and each held-out configuration's rows are predicted: a query
// workload with its actual median % error. Measured workloads (a trained configuration's
// own rows) are queries too.
//  - Error predictor: XGBoost from AlaModel::queryFeatures to log(1 + error %).
//  - Confidence: c = 1 / (1 + d), d = w . AlaModel::novelty(workload), w >= 0 fitted by
//    non-negative least squares of log(1 + error %) on the novelties of those queries
//    (with an intercept): a similarity to the training data in ALA's own features, where
//    each kind of novelty weighs by how much error it brought. 1 for a measured pair of a
//    trained configuration; it falls with every kind of novelty, never rises.
// (The paper anneals over training subsets and learns from their encodings, with a
// histogram similarity for confidence; AnnealedUncertainty keeps that.)
struct UncertaintyOptions {
    fit::XgbParams step_xgb = fast(); // ALA's regressors in the inner trainings
    fit::XgbParams predictor = predictorParams();
    int configuration_folds = 5; // whole configurations held out, a fold at a time
    double test_fraction = 0.2;  // pairs held out within configurations
    std::uint64_t seed = 1;
    int threads = 0;                                  // inner trainings at once (0: the hardware's)
    std::function<void(const std::string&)> progress; // one line per inner training
    // 350 rounds at eta 0.1: the authors' 5,000 at 0.007 in a fifteenth of the time, held-out
    // median error 2.5 % against 2.3 % on LLM-Inference-Bench.
    static fit::XgbParams fast() { return fit::XgbParams::with(350, 0.1); }
    static fit::XgbParams predictorParams() { return fit::XgbParams::with(300, 0.05, 4); }
};

// One held-out query: a configuration's rows predicted by a model that did not see them.
struct UncertaintyQuery {
    std::string config, hardware;
    std::string regime; // "hardware", "configuration", "pairs" or "measured"
    std::size_t rows = 0;
    std::vector<float> features; // AlaModel::queryFeatures
    std::array<double, AlaModel::kNovelty> novelty{};
    double actual_pct = 0;                    // median % error of ALA's predictions of its rows
    double predicted_pct = 0, confidence = 0; // filled by evaluations
};

class Uncertainty {
public:
    static Uncertainty learn(const std::vector<BenchRow>& rows, const AlaOptions& o,
                             const UncertaintyOptions& u = {});
    // The predicted median % error (>= 0) and the confidence in (0, 1] of `model`'s
    // predictions of `workload` (one configuration's rows; `model` the one trained on the
    // same rows this was learned from).
    double predictedError(const AlaModel& model, const std::vector<BenchRow>& workload) const;
    double confidence(const AlaModel& model, const std::vector<BenchRow>& workload) const;
    const std::array<double, AlaModel::kNovelty>& noveltyWeights() const { return w_; }
    // The queries it learned from, by regime.
    const std::vector<UncertaintyQuery>& queries() const { return queries_; }

    nlohmann::json toJson() const;
    static Uncertainty fromJson(const nlohmann::json& j); // throws std::runtime_error
    // Whether `j` is this format (else, perhaps AnnealedUncertainty's).
    static bool isCurrent(const nlohmann::json& j);

private:
    fit::XgbRegressor predictor_;
    std::array<double, AlaModel::kNovelty> w_{};
    std::vector<UncertaintyQuery> queries_; // not stored: only learn() fills it
};

// How well an error predictor and a confidence track the error they are about, on data
// they never saw: ALA and the uncertainty are learned on part of `rows` and judged on
// the held-out part, per held-out configuration (actual = median % error of its rows).
//   "hardware":      leave one hardware out (each in turn);
//   "configuration": whole configurations, `folds` folds;
//   "pairs":         (ii, oo) pairs within configurations (evaluate's split).
// Spearman's rank correlation over all held-out configurations: of the predicted error
// with the actual (should be positive), of the confidence with it (should be negative).
struct UncertaintyEvaluation {
    std::string regime;
    std::vector<UncertaintyQuery> queries;
    double spearman_predicted = 0, spearman_confidence = 0;
};
enum class UncertaintyMethod { Current, Annealed };
UncertaintyEvaluation evaluateUncertainty(const std::vector<BenchRow>& rows, const AlaOptions& o,
                                          const std::string& regime, int folds,
                                          const UncertaintyOptions& u,
                                          UncertaintyMethod method = UncertaintyMethod::Current,
                                          const AnnealedUncertaintyOptions& annealed = {});

} // namespace kairos::ala
