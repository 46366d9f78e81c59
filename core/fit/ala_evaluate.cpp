// ALA held out by pairs beside the baselines (per configuration and dataset-wide, as the
// paper's), and the pooled errors.
#include "fit/ala.h"
#include "fit/ala_detail.h"
#include "fit/ala_holdout.h"
#include "metrics/stats.h"
#include "util/hash.h"
#include "util/input_error.h"
#include "util/memory.h"
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
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

namespace kairos::ala {
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

std::vector<double> DatasetWideBaseline::features(const BenchRow& r) const {
    std::vector<double> f(std::size_t(width_), 0.0);
    f[0] = r.ii, f[1] = r.oo, f[2] = r.bb;
    const std::string* v[4] = {&r.framework, &r.model, &r.hardware, &r.precision};
    int at = 3;
    for (std::size_t k = 0; k < 4; ++k) {
        const auto it = cats_[k].find(*v[k]);
        if (it != cats_[k].end()) f[std::size_t(at + it->second)] = 1.0;
        at += int(cats_[k].size());
    }
    return f;
}

void DatasetWideBaseline::train(const std::vector<BenchRow>& rows, const fit::XgbParams& p) {
    for (const auto& r : rows) {
        const std::string* v[4] = {&r.framework, &r.model, &r.hardware, &r.precision};
        for (std::size_t k = 0; k < 4; ++k) cats_[k].emplace(*v[k], 0);
    }
    width_ = 3;
    for (auto& m : cats_) {
        int i = 0;
        for (auto& [name, id] : m) id = i++;
        width_ += int(m.size());
    }
    // What the two baselines hold: the dense copy of the one-hot features XGBoost trains on
    // (4 B a value) and XGBoost's own matrices, 4 times that in all (fit ala --trees 1 on
    // 32,000 rows of 1,600 models: 868 MB at the peak), given a quarter more; and the
    // normal equations.
    const double w1 = double(width_ + 1);
    checkMemoryNeed(double(rows.size()) * w1 * 4 * 5 + w1 * w1 * 8 * 3,
                    "the dataset-wide baselines of " + std::to_string(rows.size()) + " rows (" +
                        std::to_string(width_ - 3) +
                        " one-hot columns: every framework, model, "
                        "hardware and precision)",
                    "fewer configurations in --data");
    // Linear: least squares on [1, features], the minimum-norm solution (the one-hot blocks
    // with the intercept are rank-deficient). Through the normal equations, accumulated from
    // each row's few non-zero values, then Eigen's complete orthogonal decomposition of the
    // (w+1)^2 matrix: the pseudo-inverse of A'A times A'y is A's (the same null space), and
    // the cost is O(n) plus O(w^3) instead of a dense n x (w+1) decomposition, O(n w^2) in
    // time and n (w+1) in memory (32,000 rows of 1,600 models took 45 s and 1.2 GB). The
    // three numeric columns share one scale, so the normal equations stay well conditioned
    // and the minimum-norm choice among collinear ones (ii = oo) is the unscaled one.
    double scale = 1;
    for (const auto& r : rows) scale = std::max({scale, double(r.ii), double(r.oo), double(r.bb)});
    const Eigen::Index n1 = Eigen::Index(width_ + 1);
    Eigen::MatrixXd ata = Eigen::MatrixXd::Zero(n1, n1);
    Eigen::VectorXd aty = Eigen::VectorXd::Zero(n1);
    std::vector<std::vector<float>> x;
    x.reserve(rows.size());
    std::vector<float> ly;
    std::vector<std::pair<Eigen::Index, double>> nz;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto f = features(rows[i]);
        nz.clear();
        nz.emplace_back(0, 1.0);
        for (int k = 0; k < width_; ++k)
            if (f[std::size_t(k)] != 0)
                nz.emplace_back(Eigen::Index(k + 1),
                                k < 3 ? f[std::size_t(k)] / scale : f[std::size_t(k)]);
        for (const auto& [a, va] : nz) {
            aty(a) += va * rows[i].thpt;
            for (const auto& [b, vb] : nz) ata(a, b) += va * vb;
        }
        x.emplace_back(f.begin(), f.end());
        ly.push_back(float(std::log(rows[i].thpt)));
    }
    Eigen::VectorXd w = ata.completeOrthogonalDecomposition().solve(aty);
    for (Eigen::Index k = 1; k <= 3 && k < w.size(); ++k) w(k) /= scale;
    w_.assign(w.data(), w.data() + w.size());
    xgb_.fit(x, ly, p);
}

double DatasetWideBaseline::predictLinear(const BenchRow& r) const {
    const auto f = features(r);
    double v = w_[0];
    for (std::size_t k = 0; k < f.size(); ++k) v += w_[k + 1] * f[k];
    return v;
}

double DatasetWideBaseline::predictXgb(const BenchRow& r) const {
    const auto f = features(r);
    return std::exp(double(xgb_.predict({std::vector<float>(f.begin(), f.end())})[0]));
}

std::vector<double> DatasetWideBaseline::predictXgb(const std::vector<BenchRow>& rows) const {
    std::vector<std::vector<float>> x;
    x.reserve(rows.size());
    for (const BenchRow& r : rows) {
        const auto f = features(r);
        x.emplace_back(f.begin(), f.end());
    }
    std::vector<double> out;
    out.reserve(rows.size());
    if (x.empty()) return out;
    for (float e : xgb_.predict(x)) out.push_back(std::exp(double(e)));
    return out;
}

nlohmann::json DatasetWideBaseline::toJson() const {
    nlohmann::json cats = nlohmann::json::array();
    for (const auto& m : cats_) cats.push_back(m);
    return {{"categories", cats}, {"linear", w_}, {"xgboost", xgb_.toCompact()}};
}

DatasetWideBaseline DatasetWideBaseline::fromJson(const nlohmann::json& j) {
    DatasetWideBaseline b;
    try {
        const auto& cats = j.at("categories");
        if (!cats.is_array() || cats.size() != b.cats_.size())
            throw std::runtime_error("dataset-wide baseline: four category maps expected");
        b.width_ = 3;
        for (std::size_t k = 0; k < b.cats_.size(); ++k) {
            b.cats_[k] = cats[k].get<std::map<std::string, int>>();
            for (const auto& [name, id] : b.cats_[k])
                if (id < 0 || id >= int(b.cats_[k].size()))
                    throw std::runtime_error("dataset-wide baseline: category index out of range");
            b.width_ += int(b.cats_[k].size());
        }
        b.w_ = j.at("linear").get<std::vector<double>>();
        if (b.w_.size() != std::size_t(b.width_ + 1))
            throw std::runtime_error("dataset-wide baseline: linear weights do not match");
        b.xgb_ = fit::XgbRegressor::fromJson(j.at("xgboost").get<std::string>());
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("dataset-wide baseline: ") + e.what());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("dataset-wide baseline: ") + e.what());
    }
    return b;
}

namespace detail {
Split split(const std::vector<BenchRow>& rows, const AlaOptions& o, double test_fraction,
            std::uint64_t seed) {
    Split sp;
    sp.held.assign(rows.size(), false);
    for (std::size_t i = 0; i < rows.size(); ++i) sp.by[configKey(rows[i], o.columns)].push_back(i);
    for (const auto& [k, idx] : sp.by) {
        std::vector<std::pair<int, int>> pairs;
        for (std::size_t i : idx) pairs.emplace_back(rows[i].ii, rows[i].oo);
        std::sort(pairs.begin(), pairs.end());
        pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
        if (pairs.size() < 2) {
            ++sp.single_pair_configs;
            continue;
        }
        std::mt19937_64 rng(seed ^ fnv1a64(k));
        std::shuffle(pairs.begin(), pairs.end(), rng);
        const std::size_t n_test = std::clamp<std::size_t>(
            std::size_t(std::ceil(test_fraction * double(pairs.size()))), 1, pairs.size() - 1);
        ConfigEvaluation& ce = sp.per[k];
        ce.config = k;
        ce.fields = rows[idx.front()];
        ce.pairs = pairs.size();
        ce.held_out.assign(pairs.begin(), pairs.begin() + std::ptrdiff_t(n_test));
        std::sort(ce.held_out.begin(), ce.held_out.end());
        for (std::size_t i : idx)
            sp.held[i] = std::binary_search(ce.held_out.begin(), ce.held_out.end(),
                                            std::make_pair(rows[i].ii, rows[i].oo));
    }
    if (sp.per.empty())
        throw std::invalid_argument("held-out evaluation needs a configuration with two or more "
                                    "(ii, oo) pairs");
    return sp;
}
} // namespace detail

double finitePercentile(const std::vector<double>& v, double pct) {
    std::vector<double> ok;
    for (double x : v)
        if (std::isfinite(x)) ok.push_back(x);
    return ok.empty() ? std::nan("") : describe(ok, {pct}).percentile(pct);
}

PooledErrors poolErrors(const Evaluation& ev) {
    PooledErrors p;
    for (const auto& ce : ev.configs) {
        const std::array<const std::vector<double>*, PooledErrors::kMethods> e{
            &ce.ala_pct, &ce.linear_pct, &ce.xgb_pct, &ce.linear_all_pct, &ce.xgb_all_pct};
        for (std::size_t m = 0; m < PooledErrors::kMethods; ++m) {
            auto& h = p.by_hardware[ce.fields.hardware][m];
            h.insert(h.end(), e[m]->begin(), e[m]->end());
            p.all[m].insert(p.all[m].end(), e[m]->begin(), e[m]->end());
        }
    }
    for (const auto& [hw, e] : p.by_hardware) {
        const double a = finitePercentile(e[0], 50);
        p.hardware_ala_best += a < finitePercentile(e[1], 50) && a < finitePercentile(e[2], 50);
        p.hardware_ala_best_dataset_wide +=
            a < finitePercentile(e[3], 50) && a < finitePercentile(e[4], 50);
    }
    return p;
}

Evaluation evaluate(const std::vector<BenchRow>& rows, const AlaOptions& o, double test_fraction,
                    std::uint64_t seed) {
    detail::Split sp = detail::split(rows, o, test_fraction, seed);
    const auto suspect = suspectRows(rows, o.columns, o.screen_ratio);
    Evaluation ev;
    ev.single_pair_configs = sp.single_pair_configs;
    std::vector<BenchRow> train;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (!sp.held[i]) train.push_back(rows[i]);
    const auto train_suspect = suspectRows(train, o.columns, o.screen_ratio);
    std::vector<BenchRow> clean; // the rows the per-configuration baselines train on
    for (std::size_t t = 0; t < train.size(); ++t)
        if (!train_suspect[t]) clean.push_back(train[t]);
    // The training rows of each configuration, grouped once (a scan of every row per
    // configuration was quadratic: 32,000 rows of 1,600 configurations took 72 s).
    std::map<std::string, std::vector<BenchRow>> train_by;
    for (const BenchRow& r : clean) train_by[configKey(r, o.columns)].push_back(r);
    std::vector<std::pair<const std::string*, ConfigEvaluation*>> configs;
    for (auto& [k, ce] : sp.per) configs.emplace_back(&k, &ce);
    // Every training is independent of the others: ALA, the dataset-wide baselines and each
    // configuration's two baselines run at once (each single-threaded and seeded, so the
    // figures are the same at any thread count).
    AlaModel ala;
    std::vector<LinearBaseline> lins(configs.size());
    std::vector<XgbBaseline> xgbs(configs.size());
    parallelFor(2 + configs.size(), o.threads, [&](std::size_t t) {
        if (t == 0) return ala.train(train, o);
        if (t == 1) return ev.dataset_wide.train(clean, o.xgb);
        const std::size_t c = t - 2;
        const auto found = train_by.find(*configs[c].first);
        if (found == train_by.end()) return;
        configs[c].second->train_rows = found->second.size();
        lins[c].train(found->second);
        xgbs[c].train(found->second, o.xgb);
    });
    ev.screened_rows = ala.screenedRows();
    for (std::size_t c = 0; c < configs.size(); ++c) {
        const std::string& k = *configs[c].first;
        ConfigEvaluation& ce = *configs[c].second;
        const bool trained = ce.train_rows > 0;
        const LinearBaseline& lin = lins[c];
        const XgbBaseline& xgb = xgbs[c];
        for (std::size_t i : sp.by.at(k)) {
            if (!sp.held[i]) continue;
            const BenchRow& r = rows[i];
            auto pct = [&](double pred) { return 100.0 * std::abs(pred - r.thpt) / r.thpt; };
            ce.suspect_held_rows += suspect[i];
            ce.ala_pct.push_back(pct(ala.predict(r)));
            ce.linear_pct.push_back(trained ? pct(lin.predict(r.ii, r.oo, r.bb)) : NAN);
            ce.xgb_pct.push_back(trained ? pct(xgb.predict(r.ii, r.oo, r.bb)) : NAN);
            ce.linear_all_pct.push_back(pct(ev.dataset_wide.predictLinear(r)));
            ce.xgb_all_pct.push_back(pct(ev.dataset_wide.predictXgb(r)));
        }
        ev.configs.push_back(std::move(ce));
    }
    return ev;
}

} // namespace kairos::ala
