#pragma once
// ALA (seeds/004, PAPERS.md §5), its analytical part: throughput against batch size
// thpt(bb) = c - a*exp(-b*bb), fitted per (input ii, output oo) pair of one hardware/
// software configuration by bounded nonlinear least squares (Ceres): a, c in [0, 1e6],
// b in [1e-5, 1], started where the authors start (see fitThroughput). The fits of a
// configuration form its parameter database, (ii, oo) -> (a, b, c).
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
