#include "fit/ala_transfer.h"

#include "fit/ala_detail.h"
#include "util/enum_names.h"
#include "util/hash.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <tuple>

namespace kairos::ala {
namespace {

void addUniqueName(std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

double medianAbs(std::vector<double> v) {
    if (v.empty()) return NAN;
    for (double& x : v) x = std::abs(x);
    return detail::median(std::move(v));
}

} // namespace

std::vector<float> SpecModel::features(const BenchRow& r, const hw::Roofline& f) const {
    const auto [chip, n] = hw::splitHardware(r.hardware);
    const double per = double(f.tensor_parallel ? n : 1);
    std::vector<float> x{float(std::log(double(r.ii))),
                         float(std::log(double(r.oo))),
                         float(std::log(double(std::max(1, r.bb)))),
                         float(std::log(f.throughput(r.ii, r.oo, r.bb))),
                         float(std::log(f.bandwidth / per)),
                         float(std::log(f.flops / per)),
                         float(std::log(double(n))),
                         f.tensor_parallel ? 1.0f : 0.0f,
                         float(std::log(f.weight_bytes)),
                         float(std::log(f.active_params)),
                         float(std::log(f.kv_bytes_per_token)),
                         float(std::log(f.dense_bytes / f.bandwidth))};
    for (const auto& v : frameworks_) x.push_back(v == r.framework ? 1.0f : 0.0f);
    for (const auto& v : precisions_) x.push_back(v == r.precision ? 1.0f : 0.0f);
    return x;
}

void SpecModel::train(const std::vector<BenchRow>& rows, const hw::Descriptors& d,
                      const fit::XgbParams& p) {
    d_ = d;
    frameworks_.clear();
    precisions_.clear();
    std::vector<std::pair<const BenchRow*, hw::Roofline>> usable;
    for (const BenchRow& r : rows)
        if (auto f = hw::roofline(d_, r)) {
            usable.emplace_back(&r, *f);
            addUniqueName(frameworks_, r.framework);
            addUniqueName(precisions_, r.precision);
        }
    if (usable.empty())
        throw std::invalid_argument("no training row has a roofline (hardware and model tables)");
    std::vector<std::vector<float>> x;
    std::vector<float> y; // log efficiency: throughput over its roofline bound
    for (const auto& [r, f] : usable) {
        x.push_back(features(*r, f));
        y.push_back(float(std::log(r->thpt / f.throughput(r->ii, r->oo, r->bb))));
    }
    xgb_.fit(x, y, p);
}

double SpecModel::predict(const BenchRow& r) const {
    if (!xgb_.trained()) return NAN;
    const auto f = hw::roofline(d_, r);
    if (!f) return NAN;
    const double e = double(xgb_.predict({features(r, *f)})[0]);
    return f->throughput(r.ii, r.oo, r.bb) * std::exp(e);
}

std::vector<double> SpecModel::predict(const std::vector<BenchRow>& rows) const {
    std::vector<double> out(rows.size(), NAN);
    if (!xgb_.trained()) return out;
    std::vector<std::vector<float>> x;
    std::vector<std::size_t> at;
    std::vector<double> bound;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (const auto f = hw::roofline(d_, rows[i])) {
            x.push_back(features(rows[i], *f));
            at.push_back(i);
            bound.push_back(f->throughput(rows[i].ii, rows[i].oo, rows[i].bb));
        }
    if (x.empty()) return out;
    const std::vector<float> e = xgb_.predict(x);
    for (std::size_t k = 0; k < at.size(); ++k) out[at[k]] = bound[k] * std::exp(double(e[k]));
    return out;
}

nlohmann::json SpecModel::toJson() const {
    return {{"descriptors", d_.toJson()},
            {"frameworks", frameworks_},
            {"precisions", precisions_},
            {"xgboost", xgb_.trained() ? xgb_.toCompact() : std::string()}};
}

SpecModel SpecModel::fromJson(const nlohmann::json& j) {
    SpecModel m;
    try {
        m.d_ = hw::Descriptors::fromJson(j.at("descriptors"));
        m.frameworks_ = j.at("frameworks").get<std::vector<std::string>>();
        m.precisions_ = j.at("precisions").get<std::vector<std::string>>();
        const std::string x = j.at("xgboost").get<std::string>();
        if (!x.empty()) m.xgb_ = fit::XgbRegressor::fromJson(x);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("spec-sheet model: ") + e.what());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("spec-sheet model: ") + e.what());
    }
    return m;
}

double Calibration::factor(const BenchRow& r) const {
    const double lb = std::log(double(std::max(1, r.bb))), ll = std::log(double(r.ii + r.oo));
    return std::exp(level + slope_batch * (lb - mean_log_batch) +
                    slope_length * (ll - mean_log_length));
}

namespace {
// Ridge least squares of y on two centred covariates (intercept free), solved in closed form.
Calibration ridgeFit(const std::vector<std::array<double, 2>>& x, const std::vector<double>& y,
                     double ridge) {
    Calibration c;
    const double n = double(x.size());
    c.rows = x.size();
    double my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        c.mean_log_batch += x[i][0] / n;
        c.mean_log_length += x[i][1] / n;
        my += y[i] / n;
    }
    double a11 = ridge, a12 = 0, a22 = ridge, r1 = 0, r2 = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double u = x[i][0] - c.mean_log_batch, v = x[i][1] - c.mean_log_length, w = y[i] - my;
        a11 += u * u;
        a12 += u * v;
        a22 += v * v;
        r1 += u * w;
        r2 += v * w;
    }
    const double det = a11 * a22 - a12 * a12;
    if (det > 1e-12) {
        c.slope_batch = (a22 * r1 - a12 * r2) / det;
        c.slope_length = (a11 * r2 - a12 * r1) / det;
    }
    c.level = my;
    return c;
}
} // namespace

Calibration calibrate(const std::vector<BenchRow>& measured, const std::vector<double>& estimates,
                      double ridge) {
    if (measured.empty() || measured.size() != estimates.size())
        throw std::invalid_argument("calibrate: one estimate per measured row, at least one row");
    std::vector<std::array<double, 2>> x;
    std::vector<double> y;
    for (std::size_t i = 0; i < measured.size(); ++i) {
        const BenchRow& r = measured[i];
        if (!(r.thpt > 0) || !(estimates[i] > 0))
            throw std::invalid_argument("calibrate: throughputs and estimates must be above 0");
        x.push_back({std::log(double(std::max(1, r.bb))), std::log(double(r.ii + r.oo))});
        y.push_back(std::log(r.thpt / estimates[i]));
    }
    Calibration c = ridgeFit(x, y, ridge);
    if (x.size() >= 2) {
        // Each row predicted from the others: the fit without row k is ridgeFit's on the
        // sums of all rows less row k's, so the n leave-one-out fits take O(n) in all (a
        // fit per row over the rest was O(n^2): 30,000 rows took 30 s). The sums are over
        // values shifted by the whole set's means, which keeps the centred moments exact to
        // rounding.
        const double n = double(x.size());
        const double m0 = c.mean_log_batch, m1 = c.mean_log_length;
        double my = 0;
        for (double v : y) my += v / n;
        double s0 = 0, s1 = 0, sy = 0, s00 = 0, s01 = 0, s11 = 0, s0y = 0, s1y = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const double u = x[i][0] - m0, v = x[i][1] - m1, w = y[i] - my;
            s0 += u, s1 += v, sy += w;
            s00 += u * u, s01 += u * v, s11 += v * v, s0y += u * w, s1y += v * w;
        }
        std::vector<double> loo;
        loo.reserve(x.size());
        const double k1 = n - 1;
        for (std::size_t k = 0; k < x.size(); ++k) {
            const double u = x[k][0] - m0, v = x[k][1] - m1, w = y[k] - my;
            // The others' sums, then their means and centred moments.
            const double t0 = s0 - u, t1 = s1 - v, ty = sy - w;
            const double e0 = t0 / k1, e1 = t1 / k1, ey = ty / k1;
            const double a11 = ridge + (s00 - u * u) - t0 * e0;
            const double a12 = (s01 - u * v) - t0 * e1;
            const double a22 = ridge + (s11 - v * v) - t1 * e1;
            const double r1 = (s0y - u * w) - t0 * ey;
            const double r2 = (s1y - v * w) - t1 * ey;
            const double det = a11 * a22 - a12 * a12;
            double b0 = 0, b1 = 0;
            if (det > 1e-12) {
                b0 = (a22 * r1 - a12 * r2) / det;
                b1 = (a11 * r2 - a12 * r1) / det;
            }
            const double fitted = ey + b0 * (u - e0) + b1 * (v - e1);
            loo.push_back(w - fitted);
        }
        c.loo_log_error = medianAbs(loo);
    }
    return c;
}

double calibratedErrorPct(double loo_log_error, double estimate, double second) {
    double d = 0;
    if (std::isfinite(second) && second > 0 && estimate > 0)
        d = std::abs(std::log(estimate / second));
    if (!std::isfinite(loo_log_error)) return NAN;
    return 100 * (std::exp(loo_log_error + d) - 1);
}

std::string vendorOf(const std::string& hardware) {
    const std::string chip = hw::splitHardware(hardware).first;
    return chip.substr(0, chip.find(' '));
}

constexpr EnumName<Novelty> kNoveltyNames[] = {{Novelty::Pair, "pair"},
                                               {Novelty::Configuration, "configuration"},
                                               {Novelty::Hardware, "hardware"},
                                               {Novelty::Vendor, "vendor"},
                                               {Novelty::Framework, "framework"}};

const char* noveltyName(Novelty n) {
    return enumName(kNoveltyNames, n);
}

void ResidualTable::add(Novelty n, bool calibrated, double log_ratio) {
    if (!std::isfinite(log_ratio)) return;
    auto& v = r_[std::size_t(n)][calibrated ? 1 : 0];
    v.insert(std::upper_bound(v.begin(), v.end(), log_ratio), log_ratio);
}

void ResidualTable::addCalibrated(Novelty n, double log_ratio, double loo_log_error) {
    add(n, true, log_ratio);
    if (!std::isfinite(log_ratio) || !std::isfinite(loo_log_error)) return;
    auto& v = scaled_[std::size_t(n)];
    const double x = log_ratio / scaleOf(loo_log_error);
    v.insert(std::upper_bound(v.begin(), v.end(), x), x);
}

std::size_t ResidualTable::count(Novelty n, bool calibrated) const {
    return r_[std::size_t(n)][calibrated ? 1 : 0].size();
}

std::size_t ResidualTable::countScaled(Novelty n) const {
    return scaled_[std::size_t(n)].size();
}

namespace {
// Split-conformal quantiles of sorted residuals `v` at miscoverage `miss`: the
// floor((n+1) miss/2)-th and ceil((n+1)(1 - miss/2))-th, -inf / +inf where the rank falls
// outside (unbounded).
std::pair<double, double> conformalQuantiles(const std::vector<double>& v, double miss) {
    const double m = double(v.size());
    // 1-based ranks; the 1e-9 keeps 1 - 0.8 = 0.19999... from moving a rank.
    const long lo_k = long(std::floor((m + 1) * miss / 2 + 1e-9));
    const long hi_k = long(std::ceil((m + 1) * (1 - miss / 2) - 1e-9));
    return {lo_k < 1 ? -INFINITY : v[std::size_t(lo_k - 1)],
            hi_k > long(v.size()) ? INFINITY : v[std::size_t(hi_k - 1)]};
}
} // namespace

ResidualTable::Interval ResidualTable::interval(Novelty n, bool calibrated, double coverage,
                                                double loo_log_error) const {
    if (!(coverage > 0 && coverage < 1)) throw std::invalid_argument("coverage must be in (0, 1)");
    // Scaled wherever the class the ladder lands on has scaled residuals (a new vendor
    // reads the hardware class's, as the plain interval does).
    bool scaled = calibrated && std::isfinite(loo_log_error);
    if (scaled) {
        int k = int(n);
        while (k > 0 && countScaled(Novelty(k)) < kMinResiduals) --k;
        scaled = countScaled(Novelty(k)) >= kMinResiduals;
    }
    auto size = [&](int k) {
        return scaled ? countScaled(Novelty(k)) : count(Novelty(k), calibrated);
    };
    Interval out;
    double miss = 1 - coverage;
    int k = int(n);
    std::string why;
    while (k > 0 && size(k) < kMinResiduals) {
        why += std::string(why.empty() ? "" : "; ") + "no " + noveltyName(Novelty(k)) +
               " hold-out in training (" + std::to_string(size(k)) + " residuals)";
        --k;
        miss /= 2;
    }
    const double scale = scaled ? scaleOf(loo_log_error) : 1.0;
    const auto& v = scaled ? scaled_[std::size_t(k)] : r_[std::size_t(k)][calibrated ? 1 : 0];
    out.from = Novelty(k);
    out.level = 1 - miss;
    if (v.empty()) {
        out.lo = 0;
        out.hi = INFINITY;
        out.note = "no held-out residuals: unbounded";
        return out;
    }
    const auto [qlo, qhi] = conformalQuantiles(v, miss);
    out.lo = std::exp(scale * qlo);
    out.hi = std::exp(scale * qhi);
    out.note = std::string(noveltyName(out.from)) + " hold-outs" +
               (calibrated ? " (calibrated)" : "") + ", " + std::to_string(v.size()) + " residuals";
    if (scaled) {
        char b[96];
        std::snprintf(b, sizeof b, ", scaled by the rows' own error (%.3g + %.2g in log)",
                      loo_log_error, kScaleFloor);
        out.note += b;
    }
    if (!why.empty())
        out.note +=
            ", read at " + std::to_string(int(std::lround(100 * out.level))) + " % (" + why + ")";
    return out;
}

void ResidualTable::addGroup(Novelty n, const std::vector<double>& log_ratios) {
    std::vector<double> v;
    for (double x : log_ratios)
        if (std::isfinite(x)) v.push_back(x);
    if (v.size() < kMinGroupRows) return;
    std::sort(v.begin(), v.end());
    const double off = detail::median(v);
    offsets_[std::size_t(n)].push_back(off);
    auto& c = centred_[std::size_t(n)];
    for (double x : v) c.insert(std::upper_bound(c.begin(), c.end(), x - off), x - off);
}

ResidualTable::Interval ResidualTable::newVendorInterval(double coverage) const {
    if (!(coverage > 0 && coverage < 1)) throw std::invalid_argument("coverage must be in (0, 1)");
    int k = int(Novelty::Vendor);
    while (k > int(Novelty::Configuration) && offsets_[std::size_t(k)].size() < 2) --k;
    const auto& off = offsets_[std::size_t(k)];
    if (off.size() < 2) {
        Interval out = interval(Novelty::Vendor, false, coverage);
        out.note += "; no two vendors or chips held out in training to widen it by (or a "
                    "table stored before their offsets were kept)";
        return out;
    }
    const auto& v = centred_[std::size_t(k)];
    double mean = 0;
    for (double x : off) mean += x;
    mean /= double(off.size());
    double ss = 0;
    for (double x : off) ss += (x - mean) * (x - mean);
    const double sd = std::sqrt(ss / double(off.size() - 1));
    const double widen = kNewVendorWidening * sd;
    const auto [qlo, qhi] = conformalQuantiles(v, 1 - coverage);
    Interval out;
    out.from = Novelty(k);
    out.level = coverage;
    out.lo = std::exp(mean + qlo - widen);
    out.hi = std::exp(mean + qhi + widen);
    char b[256];
    std::snprintf(b, sizeof b,
                  "a vendor never measured: %zu %s hold-outs' residuals less their offsets, "
                  "widened by %.2g x the offsets' spread (%.3g in log); a guess until rows of "
                  "it are measured",
                  off.size(), k == int(Novelty::Vendor) ? "vendor" : "chip", kNewVendorWidening,
                  sd);
    out.note = b;
    return out;
}

double ResidualTable::typicalErrorPct(Novelty n, bool calibrated) const {
    int k = int(n);
    while (k > 0 && count(Novelty(k), calibrated) < kMinResiduals) --k;
    const auto& v = r_[std::size_t(k)][calibrated ? 1 : 0];
    return v.empty() ? NAN : 100 * (std::exp(medianAbs(v)) - 1);
}

nlohmann::json ResidualTable::toJson() const {
    nlohmann::json j = nlohmann::json::object();
    for (int k = 0; k < kNovelties; ++k)
        for (int c = 0; c < 2; ++c)
            j[std::string(noveltyName(Novelty(k))) + (c ? "_calibrated" : "")] =
                r_[std::size_t(k)][std::size_t(c)];
    for (int k = 0; k < kNovelties; ++k)
        j[std::string(noveltyName(Novelty(k))) + "_calibrated_scaled"] = scaled_[std::size_t(k)];
    for (int k = 0; k < kNovelties; ++k) {
        j[std::string(noveltyName(Novelty(k))) + "_group_offsets"] = offsets_[std::size_t(k)];
        j[std::string(noveltyName(Novelty(k))) + "_centred"] = centred_[std::size_t(k)];
    }
    return j;
}

ResidualTable ResidualTable::fromJson(const nlohmann::json& j) {
    ResidualTable t;
    try {
        for (int k = 0; k < kNovelties; ++k)
            for (int c = 0; c < 2; ++c)
                for (double x :
                     j.at(std::string(noveltyName(Novelty(k))) + (c ? "_calibrated" : ""))
                         .get<std::vector<double>>())
                    t.add(Novelty(k), c == 1, x);
        // Tables stored before scaled residuals: plain intervals only.
        for (int k = 0; k < kNovelties; ++k) {
            const auto key = std::string(noveltyName(Novelty(k))) + "_calibrated_scaled";
            if (!j.contains(key)) continue;
            auto& v = t.scaled_[std::size_t(k)];
            for (double x : j.at(key).get<std::vector<double>>())
                if (std::isfinite(x)) v.push_back(x);
            std::sort(v.begin(), v.end());
        }
        // Tables stored before group offsets: a new vendor reads interval() (and says so).
        for (int k = 0; k < kNovelties; ++k) {
            const std::string name = noveltyName(Novelty(k));
            if (!j.contains(name + "_group_offsets")) continue;
            for (double x : j.at(name + "_group_offsets").get<std::vector<double>>())
                if (std::isfinite(x)) t.offsets_[std::size_t(k)].push_back(x);
            auto& v = t.centred_[std::size_t(k)];
            for (double x : j.at(name + "_centred").get<std::vector<double>>())
                if (std::isfinite(x)) v.push_back(x);
            std::sort(v.begin(), v.end());
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("residual table: ") + e.what());
    }
    return t;
}

Novelty KnownGroups::of(const BenchRow& q, const Columns& cols) const {
    if (configs.count(configKey(q, cols))) return Novelty::Pair;
    if (!frameworks.count(q.framework)) return Novelty::Framework;
    if (chips.count(hw::splitHardware(q.hardware).first)) return Novelty::Configuration;
    if (vendors.count(vendorOf(q.hardware))) return Novelty::Hardware;
    return Novelty::Vendor;
}

void KnownGroups::add(const BenchRow& r, const Columns& cols) {
    configs.insert(configKey(r, cols));
    chips.insert(hw::splitHardware(r.hardware).first);
    vendors.insert(vendorOf(r.hardware));
    frameworks.insert(r.framework);
}

nlohmann::json KnownGroups::toJson() const {
    return {{"configurations", configs},
            {"chips", chips},
            {"vendors", vendors},
            {"frameworks", frameworks}};
}

KnownGroups KnownGroups::fromJson(const nlohmann::json& j) {
    KnownGroups k;
    k.configs = j.at("configurations").get<std::set<std::string>>();
    k.chips = j.at("chips").get<std::set<std::string>>();
    k.vendors = j.at("vendors").get<std::set<std::string>>();
    k.frameworks = j.at("frameworks").get<std::set<std::string>>();
    return k;
}

namespace {

// One inner hold-out: the estimate trained on `train`, each held row's log ratio recorded
// by its novelty to `train`; then each held configuration calibrated from k of its rows
// and the rest recorded as calibrated.
void holdOut(const std::vector<BenchRow>& train, const std::vector<BenchRow>& held,
             const AlaOptions& o, const UnseenOptions& u, ResidualTable& t, bool whole_group) {
    if (train.empty() || held.empty()) return;
    DatasetWideBaseline wide;
    wide.train(train, u.xgb);
    KnownGroups known;
    for (const BenchRow& r : train) known.add(r, o.columns);
    std::map<std::string, std::vector<std::size_t>> by;
    std::vector<double> est(held.size());
    std::array<std::vector<double>, kNovelties> group;
    for (std::size_t i = 0; i < held.size(); ++i) {
        est[i] = wide.predictXgb(held[i]);
        const Novelty n = known.of(held[i], o.columns);
        const double lr = std::log(held[i].thpt / est[i]);
        t.add(n, false, lr);
        group[std::size_t(n)].push_back(lr);
        by[configKey(held[i], o.columns)].push_back(i);
    }
    // The group's offsets, where it is a whole chip or vendor (configuration folds mix them).
    if (whole_group)
        for (int k = int(Novelty::Hardware); k <= int(Novelty::Vendor); ++k)
            t.addGroup(Novelty(k), group[std::size_t(k)]);
    if (u.calibration_rows == 0) return;
    for (auto& [k, idx] : by) {
        if (idx.size() <= u.calibration_rows) continue;
        std::mt19937_64 rng(u.seed ^ fnv1a64(k));
        std::shuffle(idx.begin(), idx.end(), rng);
        std::vector<BenchRow> m;
        std::vector<double> e;
        for (std::size_t j = 0; j < u.calibration_rows; ++j) {
            m.push_back(held[idx[j]]);
            e.push_back(est[idx[j]]);
        }
        const Calibration c = calibrate(m, e);
        const Novelty n = known.of(held[idx.front()], o.columns);
        for (std::size_t j = u.calibration_rows; j < idx.size(); ++j) {
            const std::size_t i = idx[j];
            t.addCalibrated(n, std::log(held[i].thpt / (est[i] * c.factor(held[i]))),
                            c.loo_log_error);
        }
    }
}

} // namespace

UnseenEstimator UnseenEstimator::learn(const std::vector<BenchRow>& rows, const AlaOptions& o,
                                       const UnseenOptions& u) {
    UnseenEstimator e;
    e.columns_ = o.columns;
    const auto suspect = suspectRows(rows, o.columns, o.screen_ratio);
    std::vector<BenchRow> clean;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (!suspect[i]) clean.push_back(rows[i]);
    if (clean.empty()) throw std::invalid_argument("no rows to learn the unseen estimate from");
    e.wide_.train(clean, u.xgb); // the inner models' setting: the residuals are its own
    for (const BenchRow& r : clean) e.known_.add(r, o.columns);
    // Grouped hold-outs of the clean rows: a group's rows against a model without them.
    auto byGroup = [&](const std::function<std::string(const BenchRow&)>& group,
                       const std::string& what, const std::set<std::string>& skip = {}) {
        std::set<std::string> gs;
        for (const BenchRow& r : clean) gs.insert(group(r));
        if (gs.size() < 2) return;
        for (const std::string& g : gs) {
            if (skip.count(g)) continue;
            std::vector<BenchRow> train, held;
            for (const BenchRow& r : clean) (group(r) == g ? held : train).push_back(r);
            holdOut(train, held, o, u, e.table_, what == "vendor" || what == "chip");
            if (u.progress) u.progress("residuals: " + what + " " + g + " held out");
        }
    };
    byGroup([](const BenchRow& r) { return r.framework; }, "framework");
    byGroup([](const BenchRow& r) { return vendorOf(r.hardware); }, "vendor");
    // A vendor's only chip is the vendor's hold-out again: held out once (a second copy
    // would count one vendor's offset twice).
    std::map<std::string, std::set<std::string>> chips_of;
    for (const BenchRow& r : clean)
        chips_of[vendorOf(r.hardware)].insert(hw::splitHardware(r.hardware).first);
    std::set<std::string> only_chips;
    if (chips_of.size() > 1)
        for (const auto& [v, cs] : chips_of)
            if (cs.size() == 1) only_chips.insert(*cs.begin());
    byGroup([](const BenchRow& r) { return hw::splitHardware(r.hardware).first; }, "chip",
            only_chips);
    {
        std::vector<std::string> keys(e.known_.configs.begin(), e.known_.configs.end());
        std::mt19937_64 rng(u.seed);
        std::shuffle(keys.begin(), keys.end(), rng);
        const int n = std::clamp<int>(u.configuration_folds, 2, std::max(2, int(keys.size())));
        std::map<std::string, int> fold;
        for (std::size_t i = 0; i < keys.size(); ++i) fold[keys[i]] = int(i) % n;
        byGroup([&](const BenchRow& r) { return std::to_string(fold[configKey(r, o.columns)]); },
                "configuration fold");
    }
    if (u.pair_residuals) {
        // A fifth of each configuration's (ii, oo) pairs held out (at least one, never all),
        // ALA trained on the rest, the held rows' log ratios recorded as new pairs.
        std::map<std::string, std::vector<std::pair<int, int>>> pairs;
        for (const BenchRow& r : clean) {
            auto& v = pairs[configKey(r, o.columns)];
            if (std::find(v.begin(), v.end(), std::make_pair(r.ii, r.oo)) == v.end())
                v.emplace_back(r.ii, r.oo);
        }
        std::set<std::tuple<std::string, int, int>> held_pairs;
        for (auto& [k, v] : pairs) {
            if (v.size() < 2) continue;
            std::mt19937_64 rng(u.seed ^ fnv1a64(k));
            std::shuffle(v.begin(), v.end(), rng);
            const std::size_t n = std::clamp<std::size_t>(v.size() / 5, 1, v.size() - 1);
            for (std::size_t i = 0; i < n; ++i) held_pairs.emplace(k, v[i].first, v[i].second);
        }
        std::vector<BenchRow> train, held;
        for (const BenchRow& r : clean)
            (held_pairs.count({configKey(r, o.columns), r.ii, r.oo}) ? held : train).push_back(r);
        AlaOptions inner = o;
        inner.xgb = u.xgb;
        AlaModel m;
        m.train(train, inner);
        for (const BenchRow& r : held) {
            try {
                e.table_.add(Novelty::Pair, false, std::log(r.thpt / m.predict(r)));
            } catch (const std::runtime_error&) {
                // a configuration without a measured curve left: not a pair residual
            }
        }
        if (u.progress) u.progress("residuals: pairs held out within configurations");
    }
    return e;
}

Novelty UnseenEstimator::novelty(const BenchRow& q) const {
    return known_.of(q, columns_);
}

double UnseenEstimator::estimate(const BenchRow& q) const {
    return wide_.predictXgb(q);
}

std::vector<double> UnseenEstimator::estimate(const std::vector<BenchRow>& rows) const {
    return wide_.predictXgb(rows);
}

nlohmann::json UnseenEstimator::toJson() const {
    return {{"format", "kairos-ala-unseen-1"},
            {"columns", columns_},
            {"estimate", wide_.toJson()},
            {"residuals", table_.toJson()},
            {"known", known_.toJson()}};
}

UnseenEstimator UnseenEstimator::fromJson(const nlohmann::json& j) {
    UnseenEstimator e;
    try {
        if (j.value("format", "") != "kairos-ala-unseen-1")
            throw std::runtime_error("not a Kairos unseen estimate (format kairos-ala-unseen-1)");
        e.columns_ = j.at("columns").get<Columns>();
        e.wide_ = DatasetWideBaseline::fromJson(j.at("estimate"));
        e.table_ = ResidualTable::fromJson(j.at("residuals"));
        e.known_ = KnownGroups::fromJson(j.at("known"));
    } catch (const nlohmann::json::exception& x) {
        throw std::runtime_error(std::string("unseen estimate: ") + x.what());
    }
    return e;
}

RangePredictor::RangePredictor(const AlaModel& model, UnseenEstimator unseen, SpecModel spec)
    : model_(&model), unseen_(std::move(unseen)), spec_(std::move(spec)),
      columns_(model.options().columns) {}

std::vector<std::string> RangePredictor::calibrateWith(const std::vector<BenchRow>& measured) {
    std::map<std::string, std::vector<BenchRow>> by;
    for (const BenchRow& r : measured) {
        if (!(r.thpt > 0))
            throw std::invalid_argument("a calibration row needs a measured throughput above 0");
        by[configKey(r, columns_)].push_back(r);
    }
    std::vector<std::string> unused;
    for (const auto& [k, rs] : by) {
        if (unseen_.novelty(rs.front()) == Novelty::Pair) {
            unused.push_back(k);
            continue;
        }
        Fix f;
        const std::vector<double> est = unseen_.estimate(rs), sec = spec_.predict(rs);
        f.estimate = calibrate(rs, est);
        f.second_ok = std::all_of(sec.begin(), sec.end(), [](double x) { return x > 0; });
        if (f.second_ok) f.second = calibrate(rs, sec);
        fixes_[k] = f;
    }
    return unused;
}

const Calibration* RangePredictor::calibration(const std::string& config_key) const {
    const auto it = fixes_.find(config_key);
    return it == fixes_.end() ? nullptr : &it->second.estimate;
}

RangePrediction RangePredictor::predict(const BenchRow& r, double coverage) const {
    return predict(std::vector<BenchRow>{r}, coverage).front();
}

std::vector<RangePrediction> RangePredictor::predict(const std::vector<BenchRow>& rows,
                                                     double coverage) const {
    // The XGBoost estimates of every row that needs one, in one call each (a call per row
    // costs a thread pool's wake-up: 100,000 rows took a minute).
    std::vector<BenchRow> newer;
    std::vector<std::size_t> at(rows.size(), std::size_t(-1));
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (unseen_.novelty(rows[i]) != Novelty::Pair) {
            at[i] = newer.size();
            newer.push_back(rows[i]);
        }
    const std::vector<double> est = unseen_.estimate(newer);
    std::vector<BenchRow> second_rows;
    std::vector<std::size_t> second_at(rows.size(), std::size_t(-1));
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (at[i] != std::size_t(-1)) {
            const auto fx = fixes_.find(configKey(rows[i], columns_));
            if (fx != fixes_.end() && fx->second.second_ok) {
                second_at[i] = second_rows.size();
                second_rows.push_back(rows[i]);
            }
        }
    const std::vector<double> spec = spec_.predict(second_rows);
    std::vector<RangePrediction> out;
    out.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
        out.push_back(predictOne(rows[i], coverage, at[i] == std::size_t(-1) ? NAN : est[at[i]],
                                 second_at[i] == std::size_t(-1) ? NAN : spec[second_at[i]]));
    return out;
}

RangePrediction RangePredictor::predictOne(const BenchRow& r, double coverage, double est,
                                           double spec) const {
    RangePrediction out;
    out.novelty = unseen_.novelty(r);
    const ResidualTable& table = unseen_.residuals();
    if (out.novelty == Novelty::Pair) {
        const Prediction pr = model_->parameters(r, r.ii, r.oo);
        out.predicted = pr.at(r.bb);
        if (pr.source == Source::Measured) {
            // The curve fitted to the pair's own points, as far off as it is at its worst.
            out.estimate = "ALA (measured pair)";
            const double f = pr.anchor_max_abs_pct / 100;
            out.lo = out.predicted * std::max(0.0, 1 - f);
            out.hi = out.predicted * (1 + f);
            out.from = "the measured curve's own largest error";
            return out;
        }
        out.estimate = "ALA";
        const auto iv = table.interval(out.novelty, false, coverage);
        out.lo = out.predicted * iv.lo;
        out.hi = out.predicted * iv.hi;
        out.from = iv.note;
        return out;
    }
    const auto fx = fixes_.find(configKey(r, columns_));
    out.calibrated = fx != fixes_.end();
    out.predicted = out.calibrated ? est * fx->second.estimate.factor(r) : est;
    out.estimate = out.calibrated ? "dataset-wide XGBoost calibrated on " +
                                        std::to_string(fx->second.estimate.rows) + " rows"
                                  : "dataset-wide XGBoost";
    const auto iv = out.novelty == Novelty::Vendor && !out.calibrated
                        ? table.newVendorInterval(coverage)
                        : table.interval(out.novelty, out.calibrated, coverage,
                                         out.calibrated ? fx->second.estimate.loo_log_error : NAN);
    out.lo = out.predicted * iv.lo;
    out.hi = out.predicted * iv.hi;
    out.from = iv.note;
    // The calibrated residuals are of calibrations from UnseenOptions::calibration_rows (3)
    // rows each; a level fitted to fewer rows errs more, by sqrt(3 / n) as a mean's does, so
    // the range (on the log scale) and the error score widen by that (one row's range is
    // 1.73 times three rows', never the same).
    const std::size_t trained_rows = UnseenOptions{}.calibration_rows;
    const std::size_t n_rows = out.calibrated ? fx->second.estimate.rows : 0;
    const double widen = out.calibrated && n_rows > 0 && n_rows < trained_rows
                             ? std::sqrt(double(trained_rows) / double(n_rows))
                             : 1.0;
    if (widen > 1) {
        if (iv.lo > 0) out.lo = out.predicted * std::exp(std::log(iv.lo) * widen);
        if (std::isfinite(iv.hi)) out.hi = out.predicted * std::exp(std::log(iv.hi) * widen);
        char b[160];
        std::snprintf(b, sizeof b,
                      "; widened x%.2f on the log scale for %zu measured row(s) (the residuals "
                      "are of %zu-row calibrations)",
                      widen, n_rows, trained_rows);
        out.from += b;
    }
    if (out.calibrated) {
        const double second = fx->second.second_ok ? spec * fx->second.second.factor(r) : NAN;
        out.error_pct =
            calibratedErrorPct(fx->second.estimate.loo_log_error, out.predicted, second);
        if (widen > 1) {
            // Too few rows to leave one out and trust the rest: the typical calibrated
            // error, widened as the range is, and the second estimate's disagreement.
            const double d = std::isfinite(second) && second > 0 && out.predicted > 0
                                 ? std::abs(std::log(out.predicted / second))
                                 : 0.0;
            const double typical = table.typicalErrorPct(out.novelty, true);
            if (std::isfinite(typical)) {
                const double few = 100 * (std::exp(std::log1p(typical / 100) * widen + d) - 1);
                out.error_pct = std::isfinite(out.error_pct) ? std::max(out.error_pct, few) : few;
            }
        }
    }
    if (!std::isfinite(out.error_pct))
        out.error_pct = table.typicalErrorPct(out.novelty, out.calibrated);
    return out;
}

} // namespace kairos::ala
