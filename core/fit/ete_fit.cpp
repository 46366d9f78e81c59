#include "fit/ete_fit.h"

#include "model/input_error.h"
#include "workload/text.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <random>
#include <stdexcept>

namespace kairos {
namespace {

// Solves min sum_i ((x_i . beta) / y_i - 1)^2 subject to beta >= 0. With three unknowns
// the non-negative least-squares optimum is found exactly by solving the unconstrained
// problem on every subset of free coefficients (the others fixed at 0) and keeping the
// best feasible one: a negative coefficient (decode time falling with context) would let
// large batches take negative time.
Eigen::Vector3d relativeLeastSquares(const std::vector<std::array<double, 3>>& x,
                                     const std::vector<double>& y,
                                     const std::vector<double>& weight) {
    const auto n = static_cast<Eigen::Index>(x.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, 3);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(n);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (weight[i] <= 0) continue;
        const double w = std::sqrt(weight[i]);
        b(static_cast<Eigen::Index>(i)) = w;
        for (int k = 0; k < 3; ++k)
            a(static_cast<Eigen::Index>(i), k) = w * x[i][static_cast<std::size_t>(k)] / y[i];
    }
    // Scale columns so that the solve is well conditioned (sum L^2 reaches 1e9).
    Eigen::Vector3d scale;
    for (int k = 0; k < 3; ++k) {
        const double nrm = a.col(k).norm();
        scale(k) = nrm > 0 ? nrm : 1.0;
        a.col(k) /= scale(k);
    }
    Eigen::Vector3d best = Eigen::Vector3d::Zero();
    double best_err = (b).squaredNorm();
    for (int mask = 1; mask < 8; ++mask) {
        std::vector<int> cols;
        for (int k = 0; k < 3; ++k)
            if (mask & (1 << k)) cols.push_back(k);
        Eigen::MatrixXd sub(n, static_cast<Eigen::Index>(cols.size()));
        for (std::size_t c = 0; c < cols.size(); ++c)
            sub.col(static_cast<Eigen::Index>(c)) = a.col(cols[c]);
        const Eigen::VectorXd sol = sub.colPivHouseholderQr().solve(b);
        if ((sol.array() < 0).any()) continue;
        const double err = (sub * sol - b).squaredNorm();
        if (err < best_err) {
            best_err = err;
            best.setZero();
            for (std::size_t c = 0; c < cols.size(); ++c)
                best(cols[c]) = sol(static_cast<Eigen::Index>(c));
        }
    }
    return best.cwiseQuotient(scale);
}

double relErr(const std::array<double, 3>& x, double y, const Eigen::Vector3d& beta) {
    return std::fabs(beta(0) * x[0] + beta(1) * x[1] + beta(2) * x[2] - y) / y;
}

// Robust fit: a least-trimmed-squares search over exact fits of random row triples
// (seeded, so the result is reproducible), scored by the smallest 75 % of squared *log*
// errors. Log error is symmetric: a relative-error fit is dragged by rows it over-predicts
// (their error is unbounded), such as Splitwise's batch-64 prompt rows at TP2 that are 8x
// faster than batch 32. Rows more than 50 % off the best candidate are outliers; the
// relative-error fit is then done without them. If over a quarter would go, none do.
Eigen::Vector3d robustFit(const std::vector<std::array<double, 3>>& x, const std::vector<double>& y,
                          std::size_t* outliers) {
    const std::size_t n = x.size();
    std::vector<double> w(n, 1.0);
    const Eigen::Vector3d plain = relativeLeastSquares(x, y, w);
    const std::size_t h = (3 * n + 3) / 4;
    std::vector<double> e2(n);
    auto score = [&](const Eigen::Vector3d& b) {
        for (std::size_t i = 0; i < n; ++i) {
            const double pred = b(0) * x[i][0] + b(1) * x[i][1] + b(2) * x[i][2];
            e2[i] = pred > 0 ? std::pow(std::log(pred / y[i]), 2) : INFINITY;
        }
        std::nth_element(e2.begin(), e2.begin() + static_cast<std::ptrdiff_t>(h - 1), e2.end());
        double s = 0;
        for (std::size_t i = 0; i < h; ++i) s += e2[i];
        return s;
    };
    Eigen::Vector3d best = plain;
    double best_score = score(plain);
    std::mt19937_64 rng(20240531);
    for (int trial = 0; trial < 400 && n >= 3; ++trial) {
        Eigen::Matrix3d m;
        Eigen::Vector3d r;
        for (int k = 0; k < 3; ++k) {
            const std::size_t i = static_cast<std::size_t>(rng() % n);
            for (int c = 0; c < 3; ++c) m(k, c) = x[i][static_cast<std::size_t>(c)];
            r(k) = y[i];
        }
        Eigen::FullPivLU<Eigen::Matrix3d> lu(m);
        if (!lu.isInvertible()) continue;
        const Eigen::Vector3d b = lu.solve(r);
        if ((b.array() < 0).any()) continue;
        const double sc = score(b);
        if (sc < best_score) {
            best_score = sc;
            best = b;
        }
    }
    *outliers = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const bool out = relErr(x[i], y[i], best) > 0.5;
        w[i] = out ? 0.0 : 1.0;
        *outliers += out;
    }
    if (4 * *outliers > n) {
        *outliers = 0;
        return plain;
    }
    return *outliers ? relativeLeastSquares(x, y, w) : plain;
}

// Mean absolute percentage error over the rows whose error is at most `cut`.
double mape(const std::vector<std::array<double, 3>>& x, const std::vector<double>& y,
            const Eigen::Vector3d& beta, double cut) {
    double s = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double e = relErr(x[i], y[i], beta);
        if (e > cut) continue;
        s += e;
        ++n;
    }
    return n == 0 ? 0.0 : 100.0 * s / static_cast<double>(n);
}

} // namespace

EteFit fitEte(const std::vector<PrefillSample>& pre, const std::vector<DecodeSample>& dec) {
    if (pre.size() < 3 || dec.size() < 3)
        throw std::invalid_argument("ETE fit needs at least 3 prefill and 3 decode rows");
    std::vector<std::array<double, 3>> xp, xd;
    std::vector<double> yp, yd;
    for (const auto& s : pre) {
        if (!(s.seconds > 0)) throw std::invalid_argument("prefill time must be > 0");
        xp.push_back({1.0, s.sum_l, s.sum_l2});
        yp.push_back(s.seconds);
    }
    for (const auto& s : dec) {
        if (!(s.seconds > 0)) throw std::invalid_argument("decode time must be > 0");
        xd.push_back({1.0, s.batch, s.sum_kv});
        yd.push_back(s.seconds);
    }
    EteFit f;
    const Eigen::Vector3d bp = robustFit(xp, yp, &f.prefill_outliers),
                          bd = robustFit(xd, yd, &f.decode_outliers);
    f.params.a = bp(0);
    f.params.b = bp(1);
    f.params.c = bp(2);
    f.params.q0 = bd(0);
    f.params.q1 = bd(1);
    f.params.p = bd(2);
    f.mape_prefill_pct = mape(xp, yp, bp, 0.5);
    f.mape_decode_pct = mape(xd, yd, bd, 0.5);
    f.mape_prefill_all_pct = mape(xp, yp, bp, INFINITY);
    f.mape_decode_all_pct = mape(xd, yd, bd, INFINITY);
    f.prefill_rows = pre.size();
    f.decode_rows = dec.size();
    return f;
}

SplitwiseRows readSplitwise(const std::string& path, const std::string& model,
                            const std::string& hardware, int tensor_parallel) {
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "", "cannot open file");
    std::string line;
    std::vector<std::string_view> f, h;
    if (!text::nextLine(in, line)) throw InputError(path, 0, "", "empty file");
    const std::string header = line;
    text::split(header, ',', h);
    auto col = [&](const char* name) {
        for (std::size_t i = 0; i < h.size(); ++i)
            if (h[i] == name) return i;
        throw InputError(path, 1, name, "missing column in the header");
    };
    const auto cM = col("model"), cH = col("hardware"), cP = col("prompt_size"),
               cB = col("batch_size"), cT = col("token_size"), cPT = col("prompt_time"),
               cTT = col("token_time"), cTP = col("tensor_parallel");
    SplitwiseRows rows;
    long lineno = 1;
    while (text::nextLine(in, line)) {
        ++lineno;
        if (text::trim(line).empty()) continue;
        text::split(line, ',', f);
        if (f.size() < h.size()) throw InputError(path, lineno, "", "too few fields");
        if (f[cM] != model || f[cH] != hardware) continue;
        if (text::needInt(f[cTP], path, lineno, "tensor_parallel") != tensor_parallel) continue;
        const double p = text::needCount(f[cP], path, lineno, "prompt_size", 1);
        const double b = text::needCount(f[cB], path, lineno, "batch_size", 1);
        const double t = text::needCount(f[cT], path, lineno, "token_size", 1);
        const double pt = text::needDouble(f[cPT], path, lineno, "prompt_time") / 1e3;
        const double tt = text::needDouble(f[cTT], path, lineno, "token_time") / 1e3;
        if (pt <= 0) throw InputError(path, lineno, "prompt_time", "must be > 0");
        if (tt <= 0) throw InputError(path, lineno, "token_time", "must be > 0");
        rows.prefill.push_back({b * p, b * p * p, pt});
        rows.decode.push_back({b, b * (p + t / 2.0), tt});
    }
    if (rows.prefill.empty())
        throw InputError(path, 0, "model",
                         "no rows for model '" + model + "', hardware '" + hardware +
                             "', tensor_parallel " + std::to_string(tensor_parallel));
    return rows;
}

} // namespace kairos
