#include "fit/ala.h"

#include "metrics/stats.h"
#include "model/input_error.h"
#include "workload/text.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <ceres/ceres.h>
#include <cmath>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <tuple>

namespace kairos::ala {

namespace {

constexpr double kAMax = 1e6, kCMax = 1e6, kBMin = 1e-5, kBMax = 1.0;

// r = c - a*exp(-b*bb) - thpt: the absolute residual, as the authors' least squares.
struct Residual {
    double bb, thpt;
    template <class T>
    bool operator()(const T* const a, const T* const b, const T* const c, T* r) const {
        r[0] = c[0] - a[0] * exp(-b[0] * T(bb)) - T(thpt);
        return true;
    }
};

double sse(const std::vector<std::pair<double, double>>& pts, double a, double b, double c) {
    double s = 0;
    for (const auto& [x, y] : pts) s += std::pow(c - a * std::exp(-b * x) - y, 2);
    return s;
}

// Ceres's bounded Levenberg-Marquardt projects steps onto the box and can stall next to
// an active bound (e.g. a = 0 with c short of the mean). So: solve, hold the parameters
// that ended on a bound constant and solve again over the others, and keep the better.
// Each parameter is its own block so that any of them can be held.
struct Solved {
    double p[3] = {0, 0, 0};
    int iterations = 0;
    bool converged = false;
};

Solved solveBounded(const std::vector<std::pair<double, double>>& pts, const double start[3]) {
    static const double lo[3] = {0.0, kBMin, 0.0}, hi[3] = {kAMax, kBMax, kCMax};
    Solved best;
    std::copy(start, start + 3, best.p);
    std::vector<bool> hold(3, false);
    for (int round = 0; round < 3; ++round) {
        Solved s = best;
        ceres::Problem problem;
        for (const auto& [x, y] : pts)
            problem.AddResidualBlock(
                new ceres::AutoDiffCostFunction<Residual, 1, 1, 1, 1>(new Residual{x, y}), nullptr,
                &s.p[0], &s.p[1], &s.p[2]);
        for (int k = 0; k < 3; ++k) {
            if (hold[std::size_t(k)]) {
                problem.SetParameterBlockConstant(&s.p[k]);
                continue;
            }
            problem.SetParameterLowerBound(&s.p[k], 0, lo[k]);
            problem.SetParameterUpperBound(&s.p[k], 0, hi[k]);
        }
        ceres::Solver::Options opt;
        opt.linear_solver_type = ceres::DENSE_QR;
        opt.max_num_iterations = 2000;
        opt.function_tolerance = 1e-15;
        opt.gradient_tolerance = 1e-15;
        opt.parameter_tolerance = 1e-15;
        opt.logging_type = ceres::SILENT;
        ceres::Solver::Summary sum;
        ceres::Solve(opt, &problem, &sum);
        s.iterations = best.iterations + int(sum.iterations.size());
        s.converged = sum.termination_type == ceres::CONVERGENCE;
        if (round == 0 ||
            sse(pts, s.p[0], s.p[1], s.p[2]) <= sse(pts, best.p[0], best.p[1], best.p[2]))
            best = s;
        // Parameters on a bound are held next round; none: done.
        bool any = false;
        for (int k = 0; k < 3; ++k) {
            const bool at = best.p[k] <= lo[k] || best.p[k] >= hi[k];
            any = any || (at && !hold[std::size_t(k)]);
            hold[std::size_t(k)] = hold[std::size_t(k)] || at;
        }
        if (!any) break;
    }
    return best;
}

} // namespace

std::string BenchRow::group() const {
    return framework + " | " + model + " | " + hardware + " | " + precision;
}

double ExpFit::operator()(double bb) const {
    return c - a * std::exp(-b * bb);
}

std::vector<BenchRow> readBench(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "", "cannot open file");
    const text::CsvHeader h(in, path);
    const auto cF = h.column("framework"), cM = h.column("model"), cH = h.column("hardware"),
               cP = h.column("precision"), cI = h.column("input_len"), cO = h.column("output_len"),
               cB = h.column("batch"), cT = h.column("throughput");
    // Repeated keys: averaged, in the order the keys first appear.
    std::map<std::tuple<std::string, std::string, std::string, std::string, int, int, int>,
             std::size_t>
        index;
    std::vector<BenchRow> out;
    std::vector<int> count;
    text::forCsvRows(in, path, h, 0, [&](const std::vector<std::string_view>& f, long lineno) {
        BenchRow r;
        r.framework = std::string(f[cF]);
        r.model = std::string(f[cM]);
        r.hardware = std::string(f[cH]);
        r.precision = std::string(f[cP]);
        r.ii = text::needCount(f[cI], path, lineno, "input_len", 1);
        r.oo = text::needCount(f[cO], path, lineno, "output_len", 1);
        r.bb = text::needCount(f[cB], path, lineno, "batch", 1);
        r.thpt = text::needDouble(f[cT], path, lineno, "throughput");
        if (!(r.thpt > 0)) throw InputError(path, lineno, "throughput", "must be > 0");
        const auto key =
            std::make_tuple(r.framework, r.model, r.hardware, r.precision, r.ii, r.oo, r.bb);
        const auto it = index.find(key);
        if (it == index.end()) {
            index.emplace(key, out.size());
            out.push_back(r);
            count.push_back(1);
        } else { // running mean
            const std::size_t i = it->second;
            ++count[i];
            out[i].thpt += (r.thpt - out[i].thpt) / count[i];
        }
    });
    if (out.empty()) throw InputError(path, 0, "", "no rows");
    return out;
}

ExpFit fitThroughput(const std::vector<std::pair<double, double>>& pts) {
    if (pts.empty()) throw std::invalid_argument("a throughput fit needs at least one point");
    ExpFit fit;
    fit.points = int(pts.size());
    std::vector<double> bb, th;
    for (const auto& [x, y] : pts) {
        bb.push_back(x);
        th.push_back(y);
    }
    const Stats sb = describe(bb, {10, 90}), st = describe(th, {10, 90});
    const bool single = std::all_of(bb.begin(), bb.end(), [&](double x) { return x == bb[0]; });
    if (single) {
        fit.a0 = 1;
        fit.b0 = 0.001;
        fit.c0 = 0;
    } else {
        fit.a0 = std::max(1e-5, st.percentile(90) - st.percentile(10));
        const double spread = sb.percentile(90) - sb.percentile(10);
        fit.b0 = spread > 0 ? 1.0 / spread : 0.001;
        fit.c0 = st.percentile(90);
    }
    fit.a0 = std::clamp(fit.a0, 0.0, kAMax);
    fit.b0 = std::clamp(fit.b0, kBMin, kBMax);
    fit.c0 = std::clamp(fit.c0, 0.0, kCMax);
    const double start[3] = {fit.a0, fit.b0, fit.c0};
    const Solved s = solveBounded(pts, start);
    fit.iterations = s.iterations;
    fit.a = s.p[0];
    fit.b = s.p[1];
    fit.c = s.p[2];
    fit.converged = s.converged;
    for (const auto& [x, y] : pts)
        fit.max_abs_pct = std::max(fit.max_abs_pct, 100.0 * std::abs(fit(x) - y) / y);
    return fit;
}

std::map<std::pair<int, int>, ExpFit> parameterDatabase(const std::vector<BenchRow>& rows) {
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by;
    for (const auto& r : rows) by[{r.ii, r.oo}].emplace_back(double(r.bb), r.thpt);
    std::map<std::pair<int, int>, ExpFit> db;
    for (const auto& [k, pts] : by) db[k] = fitThroughput(pts);
    return db;
}

std::vector<float> features(int ii, int oo) {
    const double i = ii, o = oo;
    return {float(i),
            float(o),
            float(std::log1p(i)),
            float(std::log1p(o)),
            float(std::log1p(i / o)),
            float(i / (o + 1)),
            float(i / (i + 1))};
}

void AlaModel::train(const std::vector<BenchRow>& rows, const fit::XgbParams& p) {
    db_ = parameterDatabase(rows);
    if (db_.empty()) throw std::invalid_argument("ALA: no rows to train on");
    std::vector<std::vector<float>> x;
    std::vector<float> ya, yb, yc;
    for (const auto& [k, f] : db_) {
        x.push_back(features(k.first, k.second));
        ya.push_back(float(f.a));
        yb.push_back(float(f.b));
        yc.push_back(float(f.c));
    }
    ra_.fit(x, ya, p);
    rb_.fit(x, yb, p);
    rc_.fit(x, yc, p);
}

ExpFit AlaModel::parameters(int ii, int oo) const {
    const auto it = db_.find({ii, oo});
    if (it != db_.end()) return it->second;
    const std::vector<std::vector<float>> x{features(ii, oo)};
    ExpFit f;
    f.a = std::clamp(double(ra_.predict(x)[0]), 0.0, kAMax);
    f.b = std::clamp(double(rb_.predict(x)[0]), kBMin, kBMax);
    f.c = std::clamp(double(rc_.predict(x)[0]), 0.0, kCMax);
    return f;
}

double AlaModel::predict(int ii, int oo, int bb) const {
    return parameters(ii, oo)(bb);
}

void LinearBaseline::train(const std::vector<BenchRow>& rows) {
    // Normal equations on [1, ii, oo, bb], solved by Eigen's QR (rank-deficient columns,
    // e.g. ii = oo in every row, get a least-squares minimum-norm-like solution).
    Eigen::MatrixXd a(Eigen::Index(rows.size()), 4);
    Eigen::VectorXd y(Eigen::Index(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        a.row(Eigen::Index(i)) << 1.0, rows[i].ii, rows[i].oo, rows[i].bb;
        y(Eigen::Index(i)) = rows[i].thpt;
    }
    const Eigen::VectorXd w = a.completeOrthogonalDecomposition().solve(y);
    for (int k = 0; k < 4; ++k) w_[k] = w(k);
}

double LinearBaseline::predict(int ii, int oo, int bb) const {
    return w_[0] + w_[1] * ii + w_[2] * oo + w_[3] * bb;
}

void XgbBaseline::train(const std::vector<BenchRow>& rows, const fit::XgbParams& p) {
    std::vector<std::vector<float>> x;
    std::vector<float> y;
    for (const auto& r : rows) {
        x.push_back({float(r.ii), float(r.oo), float(r.bb)});
        y.push_back(float(r.thpt));
    }
    r_.fit(x, y, p);
}

double XgbBaseline::predict(int ii, int oo, int bb) const {
    return r_.predict({{float(ii), float(oo), float(bb)}})[0];
}

Evaluation evaluate(const std::vector<BenchRow>& rows, double test_fraction, std::uint64_t seed,
                    const fit::XgbParams& p) {
    std::vector<std::pair<int, int>> pairs;
    for (const auto& r : rows)
        if (std::find(pairs.begin(), pairs.end(), std::make_pair(r.ii, r.oo)) == pairs.end())
            pairs.emplace_back(r.ii, r.oo);
    if (pairs.size() < 2)
        throw std::invalid_argument("held-out evaluation needs at least two (ii, oo) pairs");
    std::sort(pairs.begin(), pairs.end());
    std::mt19937_64 rng(seed);
    std::shuffle(pairs.begin(), pairs.end(), rng);
    const std::size_t n_test = std::clamp<std::size_t>(
        std::size_t(std::ceil(test_fraction * double(pairs.size()))), 1, pairs.size() - 1);
    Evaluation ev;
    ev.held_out.assign(pairs.begin(), pairs.begin() + std::ptrdiff_t(n_test));
    auto held = [&](const BenchRow& r) {
        return std::find(ev.held_out.begin(), ev.held_out.end(), std::make_pair(r.ii, r.oo)) !=
               ev.held_out.end();
    };
    std::vector<BenchRow> train, test;
    for (const auto& r : rows) (held(r) ? test : train).push_back(r);
    ev.train_rows = train.size();
    AlaModel ala;
    ala.train(train, p);
    LinearBaseline lin;
    lin.train(train);
    XgbBaseline xgb;
    xgb.train(train, p);
    for (const auto& r : test) {
        auto pct = [&](double pred) { return 100.0 * std::abs(pred - r.thpt) / r.thpt; };
        ev.ala_pct.push_back(pct(ala.predict(r.ii, r.oo, r.bb)));
        ev.linear_pct.push_back(pct(lin.predict(r.ii, r.oo, r.bb)));
        ev.xgb_pct.push_back(pct(xgb.predict(r.ii, r.oo, r.bb)));
    }
    return ev;
}

Vocabulary Vocabulary::of(const std::vector<Subset>& subsets) {
    std::set<int> ii, oo, bb;
    for (const auto& s : subsets)
        for (const Point& p : s) {
            ii.insert(p.ii);
            oo.insert(p.oo);
            bb.insert(p.bb);
        }
    return {{ii.begin(), ii.end()}, {oo.begin(), oo.end()}, {bb.begin(), bb.end()}};
}

std::vector<float> encode(const Subset& s, const Vocabulary& v) {
    std::vector<float> out(v.size(), 0.0f);
    auto mark = [&](const std::vector<int>& values, std::size_t offset, int x) {
        const auto it = std::lower_bound(values.begin(), values.end(), x);
        if (it != values.end() && *it == x) out[offset + std::size_t(it - values.begin())] = 1.0f;
    };
    for (const Point& p : s) {
        mark(v.ii, 0, p.ii);
        mark(v.oo, v.ii.size(), p.oo);
        mark(v.bb, v.ii.size() + v.oo.size(), p.bb);
    }
    return out;
}

namespace {
// 1 - cosine similarity of two value histograms (counts per distinct value).
double cosineDistance(const std::map<int, double>& a, const std::map<int, double>& b) {
    double dot = 0, na = 0, nb = 0;
    for (const auto& [k, v] : a) {
        na += v * v;
        const auto it = b.find(k);
        if (it != b.end()) dot += v * it->second;
    }
    for (const auto& [k, v] : b) nb += v * v;
    if (na == 0 || nb == 0) return 1.0;
    return 1.0 - dot / std::sqrt(na * nb);
}

std::array<std::map<int, double>, 3> histograms(const Subset& s) {
    std::array<std::map<int, double>, 3> h;
    for (const Point& p : s) {
        h[0][p.ii] += 1;
        h[1][p.oo] += 1;
        h[2][p.bb] += 1;
    }
    return h;
}
} // namespace

double confidence(const std::vector<Subset>& logged, const Subset& query) {
    if (logged.empty()) throw std::invalid_argument("confidence needs at least one logged subset");
    const auto q = histograms(query);
    double d_min = INFINITY;
    for (const Subset& s : logged) {
        const auto h = histograms(s);
        double d = 0;
        for (int f = 0; f < 3; ++f) d += cosineDistance(q[std::size_t(f)], h[std::size_t(f)]) / 3.0;
        d_min = std::min(d_min, d);
    }
    return 1.0 / (1.0 + d_min);
}

AnnealLog anneal(const Subset& pool, const Subset& start,
                 const std::function<double(const Subset&)>& error, const AnnealOptions& o) {
    if (pool.empty()) throw std::invalid_argument("annealing needs a pool of points");
    std::mt19937_64 rng(o.seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    auto sorted = [](Subset s) {
        std::sort(s.begin(), s.end());
        s.erase(std::unique(s.begin(), s.end()), s.end());
        return s;
    };
    const Subset all = sorted(pool);
    Subset cur = sorted(start);
    double e = error(cur);
    AnnealLog log;
    log.tried.emplace_back(cur, e);
    log.best = cur;
    log.best_error = e;
    double tau = o.tau0;
    for (int step = 0; step < o.steps; ++step) {
        Subset next = cur;
        std::vector<Point> outside;
        std::set_difference(all.begin(), all.end(), cur.begin(), cur.end(),
                            std::back_inserter(outside));
        const bool can_add = !outside.empty(), can_remove = cur.size() > o.min_size;
        if (!can_add && !can_remove) break;
        const bool add = can_add && (!can_remove || u(rng) < 0.5);
        if (add) {
            next.push_back(outside[std::size_t(rng() % outside.size())]);
            next = sorted(std::move(next));
        } else {
            next.erase(next.begin() + std::ptrdiff_t(rng() % next.size()));
        }
        const double e2 = error(next);
        log.tried.emplace_back(next, e2);
        if (e2 <= e || u(rng) < std::exp((e - e2) / tau)) {
            cur = std::move(next);
            e = e2;
            if (e < log.best_error) {
                log.best = cur;
                log.best_error = e;
            }
        }
        tau *= o.alpha;
    }
    return log;
}

} // namespace kairos::ala
