#pragma once
// ALA (seeds/004, PAPERS.md §5), its analytical part: throughput against batch size
// thpt(bb) = c - a*exp(-b*bb), fitted per (input ii, output oo) pair of one hardware/
// software configuration by bounded nonlinear least squares (Ceres): a, c in [0, 1e6],
// b in [1e-5, 1], started where the authors start (see fitThroughput). The fits of a
// configuration form its parameter database, (ii, oo) -> (a, b, c).
#include "fit/xgb.h"

#include <cstdint>
#include <functional>
#include <map>
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
// Bad rows throw InputError naming the file, line and field.
std::vector<BenchRow> readBench(const std::string& path);

struct ExpFit {
    double a = 0, b = 0, c = 0;
    double a0 = 0, b0 = 0, c0 = 0; // where the solver started
    int points = 0, iterations = 0;
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

// ALA for one configuration: its parameter database, and XGBoost regressors of a, b and
// c on the features of the measured pairs. A measured (ii, oo) is looked up; an unseen
// one gets its (a, b, c) predicted (clamped into the fit's bounds).
class AlaModel {
public:
    // `trees` etc.: XGBoost's settings (the authors': 5000 trees, depth 8, eta 0.007).
    void train(const std::vector<BenchRow>& rows, const fit::XgbParams& p);
    double predict(int ii, int oo, int bb) const;
    // (a, b, c) for a pair: looked up or predicted.
    ExpFit parameters(int ii, int oo) const;
    const std::map<std::pair<int, int>, ExpFit>& database() const { return db_; }

private:
    std::map<std::pair<int, int>, ExpFit> db_;
    fit::XgbRegressor ra_, rb_, rc_;
};

// The baselines the authors compare with, on raw (ii, oo, bb) -> throughput.
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

// Held-out evaluation of one configuration: `test_fraction` of its distinct (ii, oo)
// pairs (at least one; chosen by `seed`) are held out whole; ALA and both baselines are
// trained on the rest; absolute % errors on every held-out row.
struct Evaluation {
    std::vector<std::pair<int, int>> held_out;
    std::vector<double> ala_pct, linear_pct, xgb_pct; // per held-out row
    std::size_t train_rows = 0;
};
// Throws std::invalid_argument when the configuration has fewer than two pairs.
Evaluation evaluate(const std::vector<BenchRow>& rows, double test_fraction, std::uint64_t seed,
                    const fit::XgbParams& p);

// ALA's subsets and confidence (PAPERS.md §5). A subset is a set of measured points
// (ii, oo, bb); simulated annealing logs the subsets it tried with their error.
struct Point {
    int ii = 0, oo = 0, bb = 0;
    bool operator<(const Point& o) const {
        return std::tie(ii, oo, bb) < std::tie(o.ii, o.oo, o.bb);
    }
    bool operator==(const Point& o) const { return ii == o.ii && oo == o.oo && bb == o.bb; }
};
using Subset = std::vector<Point>;

// The unique values of each feature over some subsets: the vocabulary of the encoding.
struct Vocabulary {
    std::vector<int> ii, oo, bb; // sorted, unique
    static Vocabulary of(const std::vector<Subset>& subsets);
    std::size_t size() const { return ii.size() + oo.size() + bb.size(); }
};

// The error predictor's input: for each unique ii, then oo, then bb of the vocabulary,
// 1 if the subset has a point with that value, else 0.
std::vector<float> encode(const Subset& s, const Vocabulary& v);

// Confidence of a prediction for `query` given the logged subsets: per feature (ii, oo,
// bb) the histogram of the query's values and of each logged subset's over the union
// of their values; the cosine distance (1 - cosine similarity) averaged over the three
// features; d_min the smallest over the logged subsets; c = 1 / (1 + d_min). 1 for a
// query identical to a logged subset; 0.5 when no value is shared with any.
double confidence(const std::vector<Subset>& logged, const Subset& query);

// Simulated annealing over training subsets (the authors' search for the training set
// that gives the lowest error): start from `start`; each step adds a point of `pool`
// not in the subset or removes one (at least `min_size` kept), chosen at random; a
// worse subset is accepted with probability exp((E - E') / tau), tau <- alpha * tau.
// Every subset evaluated is logged with its error (what the error predictor learns
// from). Deterministic under `seed`.
struct AnnealOptions {
    int steps = 200;
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

} // namespace kairos::ala
