#pragma once
// ALA (seeds/004, PAPERS.md §5), its analytical part: throughput against batch size
// thpt(bb) = c - a*exp(-b*bb), fitted per (input ii, output oo) pair of one hardware/
// software configuration by bounded nonlinear least squares (Ceres): a, c in [0, 1e6],
// b in [1e-5, 1], started where the authors start (see fitThroughput). The fits of a
// configuration form its parameter database, (ii, oo) -> (a, b, c).
#include "fit/xgb.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kairos::ala {

// One row of LLM-Inference-Bench's table (throughput in tokens/s).
struct BenchRow {
    std::string framework, model, hardware, precision;
    int ii = 0, oo = 0, bb = 0;
    double thpt = 0;
    std::string group() const; // "framework | model | hardware | precision"
};

// Reads `framework,model,hardware,precision,input_len,output_len,batch,throughput` (any
// column order); rows with the same (configuration, ii, oo, bb) are averaged into one.
// Bad rows throw InputError naming the file, line and field. With `need_throughput`
// false the throughput column may be absent (rows to predict): throughput 0 then.
std::vector<BenchRow> readBench(const std::string& path, bool need_throughput = true);

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
    };
    std::vector<float> regressorInput(const Config& c, int ii, int oo,
                                      const std::pair<int, int>& anchor) const;
    std::vector<float> descriptors(const BenchRow& r) const;
    const Config* nearestWithCurves(const BenchRow& config) const;

    AlaOptions opt_;
    std::map<std::string, Config> configs_;
    std::vector<std::string> frameworks_, chips_, precisions_; // one-hot vocabularies
    fit::XgbRegressor r_[3];
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

// Held-out evaluation over every configuration at once: in each configuration with two
// or more pairs, `test_fraction` of its distinct (ii, oo) pairs (at least one, at most
// all but one; chosen by `seed` and the configuration's key, so configurations hold out
// different pairs) are held out whole. ALA is trained once on all the rest (every
// configuration's), the baselines per configuration on its rest; absolute % errors on
// every held-out row (suspect rows included: they count against every method).
struct ConfigEvaluation {
    std::string config;
    BenchRow fields;
    std::size_t pairs = 0, train_rows = 0, suspect_held_rows = 0;
    std::vector<std::pair<int, int>> held_out;
    std::vector<double> ala_pct, linear_pct, xgb_pct; // per held-out row
};
struct Evaluation {
    std::vector<ConfigEvaluation> configs; // only those with a held-out pair
    std::size_t single_pair_configs = 0, screened_rows = 0;
};
Evaluation evaluate(const std::vector<BenchRow>& rows, const AlaOptions& o, double test_fraction,
                    std::uint64_t seed);

// ALA's subsets and confidence (PAPERS.md §5). A subset is a set of measured points
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

// ALA's error predictor and confidence, learned by simulated annealing over subsets of
// the training points of evaluate's split (same test_fraction and seed): each step
// trains ALA on the subset (with `step_xgb`, lighter than the final model's: the search
// needs many trainings) and scores it by the median % error on the held-out rows. Every
// subset tried is logged per configuration: its points of that configuration with that
// configuration's median error, so that a workload (one configuration's points) is
// compared with workloads of one configuration. The error predictor is XGBoost on the
// encodings of those logged subsets.
struct UncertaintyOptions {
    AnnealOptions anneal;        // steps, points per move, cooling, seed
    double start_fraction = 0.5; // the first subset: this share of the pool, at random
    fit::XgbParams step_xgb = light();
    fit::XgbParams predictor = light();
    static fit::XgbParams light() {
        fit::XgbParams p;
        p.trees = 100;
        p.eta = 0.1;
        p.max_depth = 6;
        return p;
    }
};
class Uncertainty {
public:
    static Uncertainty learn(const std::vector<BenchRow>& rows, const AlaOptions& o,
                             double test_fraction, std::uint64_t seed,
                             const UncertaintyOptions& u = {});
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
    static Uncertainty fromJson(const nlohmann::json& j); // throws std::runtime_error

private:
    ConfigIds ids_;
    AnnealLog log_;
    std::size_t anneal_steps_ = 0;
    std::vector<Subset> logged_; // per configuration
    std::vector<double> logged_error_;
    Vocabulary vocab_;
    fit::XgbRegressor predictor_;
};

} // namespace kairos::ala
