// ALA's curves: c - a*exp(-b*batch) fitted per (input, output) pair (Ceres, bounded), the
// configuration keys, and the screen of suspect rows.
#include "fit/ala.h"
#include "fit/ala_detail.h"
#include "fit/ala_holdout.h"
#include "metrics/stats.h"
#include "util/enum_names.h"
#include "util/hash.h"
#include "util/input_error.h"
#include "util/parallel.h"
#include "util/text.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <atomic>
#include <ceres/ceres.h>
#include <climits>
#include <cmath>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

namespace kairos::ala {

namespace {

using detail::kAMax, detail::kBMax, detail::kBMin, detail::kCMax;

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

double ExpFit::operator()(double bb) const {
    return c - a * std::exp(-b * bb);
}

ExpFit fitThroughput(const std::vector<std::pair<double, double>>& pts) {
    if (pts.empty()) throw std::invalid_argument("a throughput fit needs at least one point");
    ExpFit fit;
    fit.points = int(pts.size());
    for (const auto& pt : pts) fit.batches.push_back(int(std::lround(pt.first)));
    std::sort(fit.batches.begin(), fit.batches.end());
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

const Columns& allColumns() {
    static const Columns c{"framework", "model", "hardware", "precision"};
    return c;
}

Columns parseColumns(const std::string& list) {
    Columns cols;
    std::stringstream ss(list);
    for (std::string x; std::getline(ss, x, ',');) {
        if (std::find(allColumns().begin(), allColumns().end(), x) == allColumns().end())
            throw std::invalid_argument("--group: unknown configuration column '" + x +
                                        "' (framework, model, hardware, precision)");
        cols.push_back(x);
    }
    if (cols.empty()) throw std::invalid_argument("--group: no configuration columns");
    return cols;
}

namespace {
const std::string& field(const BenchRow& r, const std::string& col) {
    return col == "framework"  ? r.framework
           : col == "model"    ? r.model
           : col == "hardware" ? r.hardware
                               : r.precision;
}
} // namespace

std::string configKey(const BenchRow& r, const Columns& cols) {
    std::string k;
    for (const auto& c : cols) k += (k.empty() ? "" : " | ") + field(r, c);
    return k;
}

std::vector<bool> suspectRows(const std::vector<BenchRow>& rows, const Columns& cols,
                              double ratio) {
    std::vector<bool> out(rows.size(), false);
    if (!(ratio > 0)) return out;
    std::map<std::pair<std::string, int>, std::vector<double>> by;
    for (const auto& r : rows) by[{configKey(r, cols), r.bb}].push_back(r.thpt);
    std::map<std::pair<std::string, int>, double> med;
    for (const auto& [k, v] : by)
        if (v.size() >= 3) med[k] = detail::median(v);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto it = med.find({configKey(rows[i], cols), rows[i].bb});
        if (it != med.end())
            out[i] = rows[i].thpt > ratio * it->second || rows[i].thpt * ratio < it->second;
    }
    return out;
}

constexpr EnumName<Source> kSourceNames[] = {{Source::Measured, "measured"},
                                             {Source::Predicted, "predicted"},
                                             {Source::OtherConfiguration, "other-configuration"}};

const char* sourceName(Source s) {
    return enumName(kSourceNames, s);
}

} // namespace kairos::ala
