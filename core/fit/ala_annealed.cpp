// The paper's error predictor and confidence (simulated annealing over subsets of
// measured points, Algorithms 6-8), as first built here.
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
Point ConfigIds::point(const BenchRow& r) {
    Point p{r.ii, r.oo, r.bb};
    const std::string* f[4] = {&r.framework, &r.model, &r.hardware, &r.precision};
    for (std::size_t k = 0; k < 4; ++k) {
        auto& m = ids_[k];
        const auto it = m.emplace(*f[k], int(m.size())).first;
        p.cfg[k] = it->second;
    }
    return p;
}

nlohmann::json ConfigIds::toJson() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& m : ids_) j.push_back(m);
    return j;
}

ConfigIds ConfigIds::fromJson(const nlohmann::json& j) {
    ConfigIds c;
    for (std::size_t k = 0; k < 4; ++k) c.ids_[k] = j.at(k).get<std::map<std::string, int>>();
    return c;
}

Vocabulary Vocabulary::of(const std::vector<Subset>& subsets) {
    std::set<int> ii, oo, bb;
    std::array<std::set<int>, 4> cfg;
    for (const auto& s : subsets)
        for (const Point& p : s) {
            ii.insert(p.ii);
            oo.insert(p.oo);
            bb.insert(p.bb);
            for (std::size_t k = 0; k < 4; ++k)
                if (p.cfg[k] >= 0) cfg[k].insert(p.cfg[k]);
        }
    Vocabulary v{{ii.begin(), ii.end()}, {oo.begin(), oo.end()}, {bb.begin(), bb.end()}, {}};
    for (std::size_t k = 0; k < 4; ++k) v.cfg[k].assign(cfg[k].begin(), cfg[k].end());
    return v;
}

std::size_t Vocabulary::size() const {
    std::size_t n = ii.size() + oo.size() + bb.size();
    for (const auto& c : cfg) n += c.size();
    return n;
}

std::vector<float> encode(const Subset& s, const Vocabulary& v) {
    std::vector<float> out(v.size(), 0.0f);
    auto mark = [&](const std::vector<int>& values, std::size_t offset, int x) {
        const auto it = std::lower_bound(values.begin(), values.end(), x);
        if (it != values.end() && *it == x) out[offset + std::size_t(it - values.begin())] = 1.0f;
    };
    for (const Point& p : s) {
        std::size_t off = 0;
        mark(v.ii, off, p.ii);
        mark(v.oo, off += v.ii.size(), p.oo);
        mark(v.bb, off += v.oo.size(), p.bb);
        off += v.bb.size();
        for (std::size_t k = 0; k < 4; ++k) {
            mark(v.cfg[k], off, p.cfg[k]);
            off += v.cfg[k].size();
        }
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

using Histograms = std::array<std::map<int, double>, 7>;
Histograms histograms(const Subset& s) {
    Histograms h;
    for (const Point& p : s) {
        h[0][p.ii] += 1;
        h[1][p.oo] += 1;
        h[2][p.bb] += 1;
        for (std::size_t k = 0; k < 4; ++k) h[3 + k][p.cfg[k]] += 1;
    }
    return h;
}
// A configuration feature neither side knows (only -1) is left out of the average.
bool unknown(const std::map<int, double>& h) {
    return h.empty() || (h.size() == 1 && h.begin()->first == -1);
}
} // namespace

double confidence(const std::vector<Subset>& logged, const Subset& query) {
    if (logged.empty()) throw std::invalid_argument("confidence needs at least one logged subset");
    const auto q = histograms(query);
    double d_min = INFINITY;
    for (const Subset& s : logged) {
        const auto h = histograms(s);
        double d = 0;
        int n = 0;
        for (std::size_t f = 0; f < 7; ++f) {
            if (f >= 3 && unknown(q[f]) && unknown(h[f])) continue;
            d += cosineDistance(q[f], h[f]);
            ++n;
        }
        d_min = std::min(d_min, d / n);
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
        for (std::size_t m = 0; m < std::max<std::size_t>(1, o.move); ++m) {
            if (add && !outside.empty()) {
                const std::size_t i = std::size_t(rng() % outside.size());
                next.push_back(outside[i]);
                outside.erase(outside.begin() + std::ptrdiff_t(i));
            } else if (!add && next.size() > o.min_size) {
                next.erase(next.begin() + std::ptrdiff_t(rng() % next.size()));
            }
        }
        if (add) next = sorted(std::move(next));
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

AnnealedUncertainty AnnealedUncertainty::learn(const std::vector<BenchRow>& rows,
                                               const AlaOptions& o, double test_fraction,
                                               std::uint64_t seed,
                                               const AnnealedUncertaintyOptions& u) {
    const detail::Split sp = detail::split(rows, o, test_fraction, seed);
    AnnealedUncertainty out;
    std::map<Point, std::size_t> index; // point -> row
    Subset pool;
    std::vector<std::size_t> test;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Point p = out.ids_.point(rows[i]);
        if (sp.held[i]) {
            test.push_back(i);
            continue;
        }
        index.emplace(p, i);
        pool.push_back(p);
    }
    std::sort(pool.begin(), pool.end());
    std::mt19937_64 rng(u.anneal.seed);
    Subset start = pool;
    std::shuffle(start.begin(), start.end(), rng);
    start.resize(std::max<std::size_t>(
        1, std::size_t(std::llround(u.start_fraction * double(pool.size())))));
    AlaOptions step = o;
    step.xgb = u.step_xgb;
    auto error = [&](const Subset& s) {
        std::vector<BenchRow> train;
        for (const Point& p : s) train.push_back(rows[index.at(p)]);
        std::map<std::string, std::vector<double>> per;
        std::vector<double> all;
        try {
            AlaModel m;
            m.train(train, step);
            for (std::size_t i : test) {
                const double e = 100.0 * std::abs(m.predict(rows[i]) - rows[i].thpt) / rows[i].thpt;
                per[configKey(rows[i], o.columns)].push_back(e);
                all.push_back(e);
            }
        } catch (const std::exception&) {
            return 1e6; // nothing to predict from: the worst subset
        }
        // Log the subset per configuration: its points there, that configuration's error.
        std::map<std::string, Subset> parts;
        for (const Point& p : s) parts[configKey(rows[index.at(p)], o.columns)].push_back(p);
        for (auto& [k, e] : per) {
            const auto it = parts.find(k);
            if (it == parts.end()) continue;
            out.logged_.push_back(it->second);
            out.logged_error_.push_back(detail::median(e));
        }
        return detail::median(all);
    };
    AnnealOptions ao = u.anneal;
    if (ao.move == 0) ao.move = std::max<std::size_t>(1, pool.size() / 20);
    out.log_ = anneal(pool, start, error, ao);
    out.anneal_steps_ = out.log_.tried.size();
    if (out.logged_.empty()) throw std::runtime_error("ALA: annealing logged no subset");
    out.vocab_ = Vocabulary::of(out.logged_);
    std::vector<std::vector<float>> x;
    std::vector<float> y;
    for (std::size_t i = 0; i < out.logged_.size(); ++i) {
        x.push_back(encode(out.logged_[i], out.vocab_));
        y.push_back(float(out.logged_error_[i]));
    }
    out.predictor_.fit(x, y, u.predictor);
    return out;
}

Subset AnnealedUncertainty::workload(const std::vector<BenchRow>& rows) {
    Subset s;
    for (const auto& r : rows) s.push_back(ids_.point(r));
    return s;
}

double AnnealedUncertainty::predictedError(const Subset& w) const {
    return std::max(0.0, double(predictor_.predict({encode(w, vocab_)})[0]));
}

double AnnealedUncertainty::confidence(const Subset& w) const {
    return ala::confidence(logged_, w);
}

nlohmann::json AnnealedUncertainty::toJson() const {
    nlohmann::json logged = nlohmann::json::array();
    for (const Subset& sub : logged_) {
        nlohmann::json pts = nlohmann::json::array();
        for (const Point& p : sub)
            pts.push_back({p.ii, p.oo, p.bb, p.cfg[0], p.cfg[1], p.cfg[2], p.cfg[3]});
        logged.push_back(std::move(pts));
    }
    return {{"format", "kairos-ala-uncertainty-1"},
            {"ids", ids_.toJson()},
            {"logged", std::move(logged)},
            {"errors", logged_error_},
            {"predictor", predictor_.toJson()},
            {"anneal_steps", annealSteps()},
            {"start_error", log_.tried.empty() ? 0.0 : log_.tried.front().second},
            {"best_error", log_.best_error}};
}

AnnealedUncertainty AnnealedUncertainty::fromJson(const nlohmann::json& j) {
    AnnealedUncertainty u;
    try {
        if (j.value("format", "") != "kairos-ala-uncertainty-1")
            throw std::runtime_error("not a Kairos ALA uncertainty (kairos-ala-uncertainty-1)");
        u.ids_ = ConfigIds::fromJson(j.at("ids"));
        for (const auto& sub : j.at("logged")) {
            Subset s;
            for (const auto& p : sub) {
                Point pt{p.at(0).get<int>(), p.at(1).get<int>(), p.at(2).get<int>()};
                for (std::size_t k = 0; k < 4; ++k) pt.cfg[k] = p.at(3 + k).get<int>();
                s.push_back(pt);
            }
            u.logged_.push_back(std::move(s));
        }
        u.logged_error_ = j.at("errors").get<std::vector<double>>();
        if (u.logged_.empty() || u.logged_error_.size() != u.logged_.size())
            throw std::runtime_error("ALA uncertainty: logged subsets and errors differ");
        u.predictor_ = fit::XgbRegressor::fromJson(j.at("predictor").get<std::string>());
        // The log's subsets are not kept: its start and best errors are.
        u.log_.best_error = j.at("best_error").get<double>();
        u.log_.tried.emplace_back(Subset{}, j.at("start_error").get<double>());
        u.anneal_steps_ = j.at("anneal_steps").get<std::size_t>();
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("ALA uncertainty: ") + e.what());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("ALA uncertainty: ") + e.what());
    }
    u.vocab_ = Vocabulary::of(u.logged_);
    return u;
}

} // namespace kairos::ala
