// The error predictor and the confidence learned from held-out predictions (whole
// hardware, configuration folds, pairs), and how well they rank what they never saw.
#include "fit/ala.h"
#include "fit/ala_detail.h"
#include "fit/ala_holdout.h"
#include "metrics/stats.h"
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

// The rows' configurations, each a workload, in key order.
std::map<std::string, std::vector<BenchRow>> byConfiguration(const std::vector<BenchRow>& rows,
                                                             const Columns& cols) {
    std::map<std::string, std::vector<BenchRow>> by;
    for (const auto& r : rows) by[configKey(r, cols)].push_back(r);
    return by;
}

// A workload as a query of `m`: its features, novelty and actual median % error. False
// when the model has nothing to predict it from.
bool makeQuery(const AlaModel& m, const std::string& key, const std::vector<BenchRow>& w,
               const std::string& regime, UncertaintyQuery& q) {
    try {
        std::vector<Prediction> preds;
        q.features = m.queryFeatures(w, &preds);
        std::vector<double> e;
        for (std::size_t i = 0; i < w.size(); ++i)
            e.push_back(100.0 * std::abs(preds[i].at(w[i].bb) - w[i].thpt) / w[i].thpt);
        q.config = key;
        q.hardware = w.front().hardware;
        q.regime = regime;
        q.rows = w.size();
        q.novelty = AlaModel::noveltyOf(q.features);
        q.actual_pct = detail::median(e);
        return true;
    } catch (const std::runtime_error&) {
        return false;
    }
}

// One inner training: ALA on `train`, then each configuration of `held` as a query (and,
// with `measured`, each configuration of `train` queried on its own rows).
struct Task {
    std::string regime, label;
    std::vector<BenchRow> train, held;
    bool measured = false;
};

std::vector<UncertaintyQuery> runTask(const Task& t, const AlaOptions& o) {
    std::vector<UncertaintyQuery> out;
    AlaModel m;
    try {
        m.train(t.train, o);
    } catch (const std::exception&) {
        return out; // nothing trainable without these rows
    }
    for (const auto& [k, w] : byConfiguration(t.held, o.columns)) {
        UncertaintyQuery q;
        if (makeQuery(m, k, w, t.regime, q)) out.push_back(std::move(q));
    }
    if (t.measured)
        for (const auto& [k, w] : byConfiguration(t.train, o.columns)) {
            UncertaintyQuery q;
            if (makeQuery(m, k, w, "measured", q)) out.push_back(std::move(q));
        }
    return out;
}

// The tasks run on `threads` threads (each XGBoost training single-threaded and seeded,
// so the result does not depend on how many), results in task order.
std::vector<UncertaintyQuery> runTasks(const std::vector<Task>& tasks, const AlaOptions& o,
                                       int threads,
                                       const std::function<void(const std::string&)>& progress) {
    std::vector<std::vector<UncertaintyQuery>> res(tasks.size());
    std::mutex mu;
    // parallelFor stops at the first failure; every task is wanted here, so each task's
    // failure is kept and the first one rethrown after all have run.
    std::exception_ptr failure;
    parallelFor(tasks.size(), threads, [&](std::size_t i) {
        try {
            res[i] = runTask(tasks[i], o);
        } catch (...) {
            std::lock_guard<std::mutex> g(mu);
            if (!failure) failure = std::current_exception();
        }
        if (progress) {
            std::lock_guard<std::mutex> g(mu);
            progress(tasks[i].label + ": " + std::to_string(res[i].size()) + " queries");
        }
    });
    if (failure) std::rethrow_exception(failure);
    std::vector<UncertaintyQuery> all;
    for (auto& r : res)
        for (auto& q : r) all.push_back(std::move(q));
    return all;
}

// Holds out whole configurations in `folds` groups (seeded), or every configuration of one
// hardware, or (ii, oo) pairs within configurations (split's choice).
std::vector<Task> foldsOf(const std::vector<BenchRow>& rows, const AlaOptions& o,
                          const std::string& regime, int folds, double test_fraction,
                          std::uint64_t seed) {
    std::vector<Task> tasks;
    // Leave one group out: a hardware as written (chip and device count), a vendor, a framework.
    const std::function<std::string(const BenchRow&)> group =
        regime == "hardware"    ? [](const BenchRow& r) { return r.hardware; }
        : regime == "vendor"    ? [](const BenchRow& r) { return vendorOf(r.hardware); }
        : regime == "framework" ? [](const BenchRow& r) { return r.framework; }
                                : std::function<std::string(const BenchRow&)>{};
    if (group) {
        std::set<std::string> gs;
        for (const auto& r : rows) gs.insert(group(r));
        if (gs.size() < 2) return tasks;
        for (const auto& g : gs) {
            Task t;
            t.regime = regime;
            t.label = "without " + g;
            for (const auto& r : rows) (group(r) == g ? t.held : t.train).push_back(r);
            tasks.push_back(std::move(t));
        }
    } else if (regime == "configuration") {
        std::vector<std::string> keys;
        for (const auto& [k, w] : byConfiguration(rows, o.columns)) keys.push_back(k);
        if (keys.size() < 2) return tasks;
        std::mt19937_64 rng(seed);
        std::shuffle(keys.begin(), keys.end(), rng);
        const int n = std::clamp<int>(folds, 2, int(keys.size()));
        for (int f = 0; f < n; ++f) {
            std::set<std::string> out;
            for (std::size_t i = std::size_t(f); i < keys.size(); i += std::size_t(n))
                out.insert(keys[i]);
            Task t;
            t.regime = regime;
            t.label = "configurations, fold " + std::to_string(f + 1) + " of " + std::to_string(n);
            for (const auto& r : rows)
                (out.count(configKey(r, o.columns)) ? t.held : t.train).push_back(r);
            tasks.push_back(std::move(t));
        }
    } else if (regime == "pairs") {
        detail::Split sp;
        try {
            sp = detail::split(rows, o, test_fraction, seed);
        } catch (const std::invalid_argument&) {
            return tasks;
        }
        Task t;
        t.regime = regime;
        t.label = "pairs held out";
        t.measured = true;
        for (std::size_t i = 0; i < rows.size(); ++i)
            (sp.held[i] ? t.held : t.train).push_back(rows[i]);
        tasks.push_back(std::move(t));
    } else {
        throw std::invalid_argument("--evaluate-uncertainty: unknown held-out regime '" + regime +
                                    "' (hardware, vendor, framework, configuration, pairs)");
    }
    return tasks;
}

// min |N w + b - y|^2 over w >= 0 (b free), exactly: every subset of free w solved by least
// squares, the best feasible kept (2^5 subsets).
std::array<double, AlaModel::kNovelty> nonNegativeWeights(const std::vector<UncertaintyQuery>& qs) {
    constexpr std::size_t K = AlaModel::kNovelty;
    std::array<double, K> best{};
    double best_err = INFINITY;
    const auto n = static_cast<Eigen::Index>(qs.size());
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) y(i) = std::log1p(qs[std::size_t(i)].actual_pct);
    for (unsigned mask = 0; mask < (1u << K); ++mask) {
        std::vector<std::size_t> cols;
        for (std::size_t k = 0; k < K; ++k)
            if (mask & (1u << k)) cols.push_back(k);
        Eigen::MatrixXd a(n, Eigen::Index(cols.size()) + 1);
        for (Eigen::Index i = 0; i < n; ++i) {
            a(i, 0) = 1.0;
            for (std::size_t c = 0; c < cols.size(); ++c)
                a(i, Eigen::Index(c) + 1) = qs[std::size_t(i)].novelty[cols[c]];
        }
        const Eigen::VectorXd sol = a.colPivHouseholderQr().solve(y);
        bool ok = true;
        for (Eigen::Index c = 1; c < sol.size(); ++c) ok = ok && sol(c) >= 0;
        if (!ok || !sol.allFinite()) continue;
        const double err = (a * sol - y).squaredNorm();
        if (err < best_err - 1e-12) {
            best_err = err;
            best.fill(0.0);
            for (std::size_t c = 0; c < cols.size(); ++c) best[cols[c]] = sol(Eigen::Index(c) + 1);
        }
    }
    return best;
}

} // namespace

Uncertainty Uncertainty::learn(const std::vector<BenchRow>& rows, const AlaOptions& o,
                               const UncertaintyOptions& u) {
    AlaOptions step = o;
    step.xgb = u.step_xgb;
    step.xgb.seed = o.xgb.seed;
    step.threads = 1; // the tasks below already run at once
    std::vector<Task> tasks;
    for (const char* regime : {"hardware", "configuration", "pairs"}) {
        auto t = foldsOf(rows, o, regime, u.configuration_folds, u.test_fraction, u.seed);
        for (auto& x : t) tasks.push_back(std::move(x));
    }
    Uncertainty out;
    out.queries_ = runTasks(tasks, step, u.threads, u.progress);
    if (out.queries_.size() < 10)
        throw std::runtime_error("ALA uncertainty: " + std::to_string(out.queries_.size()) +
                                 " held-out queries, at least 10 needed (more configurations, "
                                 "pairs or hardware)");
    std::vector<std::vector<float>> x;
    std::vector<float> y;
    for (const auto& q : out.queries_) {
        x.push_back(q.features);
        y.push_back(float(std::log1p(q.actual_pct)));
    }
    fit::XgbParams p = u.predictor;
    p.seed = u.seed;
    out.predictor_.fit(x, y, p);
    out.w_ = nonNegativeWeights(out.queries_);
    return out;
}

double Uncertainty::predictedError(const AlaModel& model,
                                   const std::vector<BenchRow>& workload) const {
    const double z = double(predictor_.predict({model.queryFeatures(workload)})[0]);
    // (log(1 + error %) back to %.)
    return std::max(0.0, std::expm1(z));
}

double Uncertainty::confidence(const AlaModel& model, const std::vector<BenchRow>& workload) const {
    const auto nv = model.novelty(workload);
    double d = 0;
    for (std::size_t k = 0; k < nv.size(); ++k) d += w_[k] * nv[k];
    return 1.0 / (1.0 + d);
}

bool Uncertainty::isCurrent(const nlohmann::json& j) {
    return j.is_object() && j.value("format", "") == "kairos-ala-uncertainty-2";
}

nlohmann::json Uncertainty::toJson() const {
    std::map<std::string, std::size_t> by;
    for (const auto& q : queries_) ++by[q.regime];
    return {{"format", "kairos-ala-uncertainty-2"},
            {"predictor", predictor_.toCompact()},
            {"novelty_weights", w_},
            {"queries", by}};
}

Uncertainty Uncertainty::fromJson(const nlohmann::json& j) {
    Uncertainty u;
    try {
        if (!isCurrent(j))
            throw std::runtime_error("not a Kairos ALA uncertainty (kairos-ala-uncertainty-2)");
        u.predictor_ = fit::XgbRegressor::fromJson(j.at("predictor").get<std::string>());
        const auto w = j.at("novelty_weights").get<std::vector<double>>();
        if (w.size() != AlaModel::kNovelty)
            throw std::runtime_error("ALA uncertainty: " + std::to_string(AlaModel::kNovelty) +
                                     " novelty weights expected");
        for (std::size_t k = 0; k < w.size(); ++k) {
            if (!(w[k] >= 0) || !std::isfinite(w[k]))
                throw std::runtime_error(
                    "ALA uncertainty: a novelty weight must be finite and >= 0");
            u.w_[k] = w[k];
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("ALA uncertainty: ") + e.what());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("ALA uncertainty: ") + e.what());
    }
    return u;
}

UncertaintyEvaluation evaluateUncertainty(const std::vector<BenchRow>& rows, const AlaOptions& o,
                                          const std::string& regime, int folds,
                                          const UncertaintyOptions& u, UncertaintyMethod method,
                                          const AnnealedUncertaintyOptions& annealed) {
    UncertaintyEvaluation ev;
    ev.regime = regime;
    const auto tasks = foldsOf(rows, o, regime, folds, u.test_fraction, u.seed);
    if (tasks.empty())
        throw std::invalid_argument("evaluating the uncertainty by " + regime +
                                    " needs at least two of them in the data");
    for (const Task& t : tasks) {
        AlaModel m;
        m.train(t.train, o);
        std::function<std::pair<double, double>(const std::vector<BenchRow>&)> judge;
        std::shared_ptr<Uncertainty> cur;
        std::shared_ptr<AnnealedUncertainty> ann;
        if (method == UncertaintyMethod::Current) {
            cur = std::make_shared<Uncertainty>(Uncertainty::learn(t.train, o, u));
            judge = [&](const std::vector<BenchRow>& w) {
                return std::make_pair(cur->predictedError(m, w), cur->confidence(m, w));
            };
        } else {
            ann = std::make_shared<AnnealedUncertainty>(
                AnnealedUncertainty::learn(t.train, o, u.test_fraction, u.seed, annealed));
            judge = [&](const std::vector<BenchRow>& w) {
                const Subset s = ann->workload(w);
                return std::make_pair(ann->predictedError(s), ann->confidence(s));
            };
        }
        for (const auto& [k, w] : byConfiguration(t.held, o.columns)) {
            UncertaintyQuery q;
            if (!makeQuery(m, k, w, regime, q)) continue;
            std::tie(q.predicted_pct, q.confidence) = judge(w);
            ev.queries.push_back(std::move(q));
        }
        if (u.progress)
            u.progress("evaluated " + t.label + ": " + std::to_string(ev.queries.size()) +
                       " held-out configurations so far");
    }
    std::vector<double> a, p, c;
    for (const auto& q : ev.queries) {
        a.push_back(q.actual_pct);
        p.push_back(q.predicted_pct);
        c.push_back(q.confidence);
    }
    ev.spearman_predicted = spearman(p, a);
    ev.spearman_confidence = spearman(c, a);
    return ev;
}

} // namespace kairos::ala
