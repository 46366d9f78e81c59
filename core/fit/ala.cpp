#include "fit/ala.h"
#include "fit/ala_holdout.h"

#include "metrics/stats.h"
#include "model/input_error.h"
#include "run/parallel.h"
#include "workload/text.h"

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

constexpr double kAMax = 1e6, kCMax = kMaxThroughput, kBMin = 1e-5, kBMax = 1.0;

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

namespace {
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
} // namespace

std::vector<bool> suspectRows(const std::vector<BenchRow>& rows, const Columns& cols,
                              double ratio) {
    std::vector<bool> out(rows.size(), false);
    if (!(ratio > 0)) return out;
    std::map<std::pair<std::string, int>, std::vector<double>> by;
    for (const auto& r : rows) by[{configKey(r, cols), r.bb}].push_back(r.thpt);
    std::map<std::pair<std::string, int>, double> med;
    for (const auto& [k, v] : by)
        if (v.size() >= 3) med[k] = median(v);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto it = med.find({configKey(rows[i], cols), rows[i].bb});
        if (it != med.end())
            out[i] = rows[i].thpt > ratio * it->second || rows[i].thpt * ratio < it->second;
    }
    return out;
}

const char* sourceName(Source s) {
    switch (s) {
    case Source::Measured:
        return "measured";
    case Source::Predicted:
        return "predicted";
    case Source::OtherConfiguration:
        return "other-configuration";
    }
    return "?";
}

namespace {

// A curve: fitted over three or more batch sizes (fewer leave (a, b, c) undetermined).
bool isCurve(const ExpFit& f) {
    return f.points >= 3;
}

// The well-conditioned coordinates of a curve (see AlaModel) and back.
std::array<double, 3> toUvw(const ExpFit& f) {
    const double y1 = std::max(f(1.0), 1e-3);
    const double head = std::max(f.c - y1, 1e-3 * y1);
    return {std::log(y1), std::log(head), std::log(std::clamp(f.b, kBMin, kBMax))};
}
ExpFit fromUvw(double u, double v, double w) {
    ExpFit f;
    f.b = std::clamp(std::exp(w), kBMin, kBMax);
    const double y1 = std::exp(u), head = std::exp(v);
    f.c = std::clamp(y1 + head, 0.0, kCMax);
    f.a = std::clamp(head * std::exp(f.b), 0.0, kAMax);
    return f;
}

double pairDistance(const std::pair<int, int>& p, int ii, int oo) {
    return std::hypot(std::log(double(p.first) / ii), std::log(double(p.second) / oo));
}

// The nearest curve of `db` to (ii, oo), other than (ii, oo) itself when `skip_same`
// (training: a pair against another); ties to the smaller pair (the map's order). Null
// when there is none.
const std::pair<const std::pair<int, int>, ExpFit>*
nearestCurve(const std::map<std::pair<int, int>, ExpFit>& db, int ii, int oo,
             bool skip_same = false) {
    const std::pair<const std::pair<int, int>, ExpFit>* best = nullptr;
    double best_d = INFINITY;
    for (const auto& e : db) {
        if (!isCurve(e.second) || (skip_same && e.first.first == ii && e.first.second == oo))
            continue;
        const double d = pairDistance(e.first, ii, oo);
        if (d < best_d) {
            best_d = d;
            best = &e;
        }
    }
    return best;
}

// Numbers in free-text names, parsed by hand because no library knows these names:
// the device count is the hardware's trailing "xN" ("Nvidia H100 GPU x4"), the chip is
// the rest; the model's parameters in billions are "NxMB" (mixture of experts, N*M) or
// "MB" ("Llama-2-70b-hf", "Mixtral-8x7B"), 0 when absent.
int deviceCount(const std::string& hw) {
    static const std::regex re(R"(\bx(\d+)\s*$)", std::regex::icase);
    std::smatch m;
    return std::regex_search(hw, m, re) ? std::max(1, std::stoi(m[1])) : 1;
}
std::string chip(const std::string& hw) {
    static const std::regex re(R"(\s*\bx\d+\s*$)", std::regex::icase);
    return std::regex_replace(hw, re, "");
}
double modelBillions(const std::string& model, bool* moe) {
    static const std::regex mix(R"((\d+)x(\d+(?:\.\d+)?)b)", std::regex::icase),
        plain(R"((\d+(?:\.\d+)?)b(?![a-z]))", std::regex::icase);
    std::smatch m;
    *moe = false;
    if (std::regex_search(model, m, mix)) {
        *moe = true;
        return std::stod(m[1]) * std::stod(m[2]);
    }
    return std::regex_search(model, m, plain) ? std::stod(m[1]) : 0.0;
}

void oneHot(std::vector<float>& out, const std::vector<std::string>& vocab, const std::string& v) {
    for (const auto& x : vocab) out.push_back(x == v ? 1.0f : 0.0f);
}

void addUnique(std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

} // namespace

namespace {
// The vendor: the chip's first word ("Nvidia", "AMD").
std::string vendor(const std::string& hw) {
    const auto sp = hw.find(' ');
    return hw.substr(0, sp);
}
// Descriptor columns that are numbers (the rest are one-hot): devices, log size, size per
// device, mixture of experts.
constexpr std::size_t kNumericDescriptors = 4;
} // namespace

void AlaModel::computeScales() {
    desc_scale_.clear();
    std::vector<std::vector<float>> d;
    for (auto& [k, c] : configs_) {
        c.desc = descriptors(c.fields);
        c.chip = chip(c.fields.hardware);
        c.curves =
            std::any_of(c.db.begin(), c.db.end(), [](const auto& e) { return isCurve(e.second); });
        d.push_back(c.desc);
    }
    if (d.empty()) return;
    desc_scale_.assign(d.front().size(), 1.0);
    for (std::size_t j = 0; j < kNumericDescriptors && j < desc_scale_.size(); ++j) {
        double m = 0, v = 0;
        for (const auto& x : d) m += x[j];
        m /= double(d.size());
        for (const auto& x : d) v += (x[j] - m) * (x[j] - m);
        const double sd = std::sqrt(v / double(d.size()));
        desc_scale_[j] = sd > 0 ? sd : 1.0;
    }
}

double AlaModel::configDistance(const BenchRow& a, const BenchRow& b) const {
    return distance(descriptors(a), descriptors(b));
}

double AlaModel::distance(const std::vector<float>& da, const std::vector<float>& db) const {
    double s = 0;
    for (std::size_t j = 0; j < da.size(); ++j) {
        const double scale = j < desc_scale_.size() ? desc_scale_[j] : 1.0;
        const double x = (double(da[j]) - double(db[j])) / scale;
        s += x * x;
    }
    return std::sqrt(s);
}

std::vector<float> AlaModel::descriptors(const BenchRow& r) const {
    bool moe = false;
    const double b = modelBillions(r.model, &moe);
    const int n = deviceCount(r.hardware);
    std::vector<float> f{float(n), float(std::log1p(b)), float(b / n), moe ? 1.0f : 0.0f};
    oneHot(f, frameworks_, r.framework);
    oneHot(f, chips_, chip(r.hardware));
    oneHot(f, precisions_, r.precision);
    return f;
}

std::vector<float> AlaModel::regressorInput(const Config& c, int ii, int oo,
                                            const std::pair<int, int>& anchor) const {
    std::vector<float> x = features(ii, oo);
    const auto fa = features(anchor.first, anchor.second);
    x.insert(x.end(), fa.begin(), fa.end());
    x.push_back(float(std::log(double(ii) / anchor.first)));
    x.push_back(float(std::log(double(oo) / anchor.second)));
    for (double t : toUvw(c.db.at(anchor))) x.push_back(float(t));
    const auto d = descriptors(c.fields);
    x.insert(x.end(), d.begin(), d.end());
    return x;
}

void AlaModel::train(const std::vector<BenchRow>& rows, const AlaOptions& o) {
    if (rows.empty()) throw std::invalid_argument("ALA: no rows to train on");
    opt_ = o;
    configs_.clear();
    frameworks_.clear();
    chips_.clear();
    precisions_.clear();
    const auto suspect = suspectRows(rows, o.columns, o.screen_ratio);
    screened_ = std::size_t(std::count(suspect.begin(), suspect.end(), true));
    std::map<std::string, std::vector<BenchRow>> by;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (suspect[i]) continue;
        by[configKey(rows[i], o.columns)].push_back(rows[i]);
        addUnique(frameworks_, rows[i].framework);
        addUnique(chips_, chip(rows[i].hardware));
        addUnique(precisions_, rows[i].precision);
    }
    for (auto& [k, rs] : by) {
        Config& c = configs_[k];
        c.key = k;
        c.fields = rs.front();
        c.fields.ii = c.fields.oo = c.fields.bb = 0;
        c.fields.thpt = 0;
        c.db = parameterDatabase(rs);
    }
    computeScales();
    // Each curve against the nearest other curve of its configuration.
    std::vector<std::vector<float>> x;
    std::array<std::vector<float>, 3> y;
    for (const auto& [k, c] : configs_)
        for (const auto& [p, f] : c.db) {
            if (!isCurve(f)) continue;
            const auto* a = nearestCurve(c.db, p.first, p.second, true);
            if (!a) continue;
            x.push_back(regressorInput(c, p.first, p.second, a->first));
            const auto t = toUvw(f), ta = toUvw(a->second);
            for (int j = 0; j < 3; ++j) y[std::size_t(j)].push_back(float(t[j] - ta[j]));
        }
    learned_pairs_ = x.size();
    learned_ = !x.empty();
    if (learned_)
        for (int j = 0; j < 3; ++j) r_[j].fit(x, y[std::size_t(j)], o.xgb);
}

std::vector<const AlaModel::Config*> AlaModel::nearestWithCurves(const BenchRow& q,
                                                                 double* nearest) const {
    std::vector<const Config*> best;
    double best_d = INFINITY;
    const auto dq = descriptors(q);
    for (const auto& [k, c] : configs_) {
        if (!c.curves) continue;
        const double d = distance(c.desc, dq);
        if (d < best_d - 1e-9) {
            best_d = d;
            best.assign(1, &c);
        } else if (d <= best_d + 1e-9) {
            best.push_back(&c);
        }
    }
    if (nearest) *nearest = best_d;
    return best;
}

Prediction AlaModel::parameters(const BenchRow& q, int ii, int oo) const {
    if (configs_.empty()) throw std::logic_error("ALA: parameters before train");
    Prediction out;
    const auto it = configs_.find(configKey(q, opt_.columns));
    if (it != configs_.end()) {
        const auto m = it->second.db.find({ii, oo});
        if (m != it->second.db.end()) {
            out.fit = m->second;
            out.source = Source::Measured;
            out.anchor_config = it->first;
            out.anchor = m->first;
            out.anchor_batches = m->second.batches;
            out.anchor_max_abs_pct = m->second.max_abs_pct;
            return out;
        }
    }
    std::vector<const Config*> from;
    if (it != configs_.end() && nearestCurve(it->second.db, ii, oo)) {
        from.push_back(&it->second);
        out.source = Source::Predicted;
    } else {
        from = nearestWithCurves(q, &out.config_distance);
        out.source = Source::OtherConfiguration;
    }
    if (from.empty() || !learned_)
        throw std::runtime_error("ALA: no measured curve to predict (" + std::to_string(ii) + ", " +
                                 std::to_string(oo) + ") from");
    // Each equally near configuration predicts; the mean in (u, v, w) is the prediction.
    std::array<double, 3> mean{0, 0, 0};
    for (const Config* c : from) {
        const auto* a = nearestCurve(c->db, ii, oo);
        if (c == from.front()) {
            out.anchor_config = c->key;
            out.anchor = a->first;
            out.anchor_batches = a->second.batches;
            out.anchor_max_abs_pct = a->second.max_abs_pct;
        }
        const std::vector<std::vector<float>> x{regressorInput(*c, ii, oo, a->first)};
        const auto ta = toUvw(a->second);
        for (int j = 0; j < 3; ++j)
            mean[std::size_t(j)] += ta[std::size_t(j)] + r_[j].predict(x)[0];
    }
    for (double& m : mean) m /= double(from.size());
    out.fit = fromUvw(mean[0], mean[1], mean[2]);
    out.anchors = from.size();
    out.ii = ii;
    out.oo = oo;
    if (opt_.roofline_prior && out.source == Source::OtherConfiguration) {
        out.roof_query = hw::roofline(opt_.descriptors, q);
        for (const Config* c : from) {
            const auto r = hw::roofline(opt_.descriptors, c->fields);
            if (!r) {
                out.roof_anchors.clear();
                break;
            }
            out.roof_anchors.push_back(*r);
        }
        if (!out.roof_query || out.roof_anchors.empty()) {
            out.roof_query.reset();
            out.roof_anchors.clear();
        }
    }
    return out;
}

std::vector<float> AlaModel::queryFeatures(const std::vector<BenchRow>& workload,
                                           std::vector<Prediction>* predictions) const {
    if (workload.empty()) throw std::invalid_argument("ALA: an empty workload");
    if (predictions) predictions->clear();
    const BenchRow& q = workload.front();
    const std::string qchip = chip(q.hardware), qvendor = vendor(q.hardware);
    bool moe = false;
    const double qb = modelBillions(q.model, &moe);
    const int qn = deviceCount(q.hardware);
    std::vector<double> f(kQueryFeatures, 0.0);
    // The anchor configurations' numbers, once each.
    std::map<std::string, std::pair<int, double>> anchor_numbers;
    for (const BenchRow& r : workload) {
        Prediction p = parameters(r, r.ii, r.oo);
        const BenchRow& a = configs_.at(p.anchor_config).fields;
        auto an = anchor_numbers.find(p.anchor_config);
        if (an == anchor_numbers.end()) {
            bool amoe = false;
            an = anchor_numbers
                     .emplace(p.anchor_config, std::make_pair(deviceCount(a.hardware),
                                                              modelBillions(a.model, &amoe)))
                     .first;
        }
        f[std::size_t(p.source)] += 1; // 0 measured, 1 predicted, 2 other configuration
        f[3] += p.config_distance;
        f[5] += vendor(a.hardware) != qvendor;
        f[6] += std::abs(std::log2(double(qn) / an->second.first));
        f[7] += std::abs(std::log1p(qb) - std::log1p(an->second.second));
        f[8] += a.framework != q.framework;
        f[9] += a.precision != q.precision;
        f[10] += a.model != q.model;
        f[11] += p.source == Source::Measured ? 0.0 : pairDistance(p.anchor, r.ii, r.oo);
        if (!p.anchor_batches.empty()) {
            f[12] += std::max(0.0, std::log(double(r.bb) / p.anchor_batches.back()));
            f[13] += std::max(0.0, std::log(double(p.anchor_batches.front()) / r.bb));
        }
        f[14] += std::log1p(p.anchor_max_abs_pct);
        f[18] += std::log(double(p.anchors));
        if (predictions) predictions->push_back(std::move(p));
    }
    const double n = double(workload.size());
    for (double& x : f) x /= n;
    f[4] = std::find(chips_.begin(), chips_.end(), qchip) != chips_.end() ? 1.0 : 0.0;
    const auto own = configs_.find(configKey(q, opt_.columns));
    std::size_t curves = 0, same_chip = 0, same_model = 0;
    if (own != configs_.end())
        for (const auto& [pr, e] : own->second.db) curves += isCurve(e);
    for (const auto& [k, c] : configs_) {
        same_chip += c.chip == qchip;
        same_model += c.fields.model == q.model;
    }
    f[15] = std::log1p(double(curves));
    f[16] = std::log1p(double(same_chip));
    f[17] = std::log1p(double(same_model));
    return {f.begin(), f.end()};
}

std::array<double, AlaModel::kNovelty>
AlaModel::novelty(const std::vector<BenchRow>& workload) const {
    return noveltyOf(queryFeatures(workload));
}

std::array<double, AlaModel::kNovelty> AlaModel::noveltyOf(const std::vector<float>& f) {
    // Configuration distance, (ii, oo) distance, batch extrapolation, unknown chip, other vendor.
    return {double(f[3]), double(f[11]), double(f[12]) + double(f[13]), 1.0 - double(f[4]),
            double(f[5])};
}

double Prediction::transfer(double bb) const {
    if (!roof_query || roof_anchors.empty()) return 1.0;
    const int b = std::max(1, int(std::lround(bb)));
    const double q = roof_query->throughput(ii, oo, b);
    double s = 0;
    for (const hw::Roofline& a : roof_anchors) s += std::log(q / a.throughput(ii, oo, b));
    return std::exp(s / double(roof_anchors.size()));
}

double Prediction::at(double bb) const { return fit(bb) * transfer(bb); }

double AlaModel::predict(const BenchRow& q) const {
    return parameters(q, q.ii, q.oo).at(q.bb);
}

const std::map<std::pair<int, int>, ExpFit>& AlaModel::database(const std::string& key) const {
    static const std::map<std::pair<int, int>, ExpFit> none;
    const auto it = configs_.find(key);
    return it == configs_.end() ? none : it->second.db;
}

const BenchRow* AlaModel::fields(const std::string& key) const {
    const auto it = configs_.find(key);
    return it == configs_.end() ? nullptr : &it->second.fields;
}

std::vector<std::string> AlaModel::configurations() const {
    std::vector<std::string> k;
    for (const auto& [name, c] : configs_) k.push_back(name);
    return k;
}

std::string AlaModel::toJson(const nlohmann::json& extra) const {
    nlohmann::json j = extra.is_object() ? extra : nlohmann::json::object();
    j["format"] = "kairos-ala-1";
    j["columns"] = opt_.columns;
    j["screen_ratio"] = opt_.screen_ratio;
    const auto& p = opt_.xgb;
    j["xgboost"] = {{"trees", p.trees},
                    {"max_depth", p.max_depth},
                    {"eta", p.eta},
                    {"subsample", p.subsample},
                    {"colsample", p.colsample},
                    {"lambda", p.lambda},
                    {"seed", p.seed}};
    j["frameworks"] = frameworks_;
    j["chips"] = chips_;
    j["precisions"] = precisions_;
    j["screened_rows"] = screened_;
    j["learned_pairs"] = learned_pairs_;
    nlohmann::json cs = nlohmann::json::array();
    for (const auto& [k, c] : configs_) {
        nlohmann::json fits = nlohmann::json::array();
        for (const auto& [pr, f] : c.db)
            fits.push_back({{"ii", pr.first},
                            {"oo", pr.second},
                            {"a", f.a},
                            {"b", f.b},
                            {"c", f.c},
                            {"points", f.points},
                            {"batches", f.batches},
                            {"max_abs_pct", f.max_abs_pct}});
        cs.push_back({{"key", k},
                      {"framework", c.fields.framework},
                      {"model", c.fields.model},
                      {"hardware", c.fields.hardware},
                      {"precision", c.fields.precision},
                      {"fits", fits}});
    }
    j["configurations"] = cs;
    j["roofline_prior"] = opt_.roofline_prior;
    if (opt_.roofline_prior) j["descriptors"] = opt_.descriptors.toJson();
    if (learned_)
        for (int i = 0; i < 3; ++i)
            j["regressors"].push_back(r_[i].toCompact()); // XGBoost's UBJSON, base64
    return j.dump();
}

AlaModel AlaModel::fromJson(const std::string& text) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("ALA model: ") + e.what());
    }
    return fromParsed(j);
}

AlaModel AlaModel::fromParsed(const nlohmann::json& j) {
    AlaModel m;
    try {
        if (j.value("format", "") != "kairos-ala-1")
            throw std::runtime_error("not a Kairos ALA model (format kairos-ala-1)");
        m.opt_.columns = j.at("columns").get<Columns>();
        m.opt_.screen_ratio = j.at("screen_ratio").get<double>();
        const auto& x = j.at("xgboost");
        m.opt_.xgb.trees = x.at("trees");
        m.opt_.xgb.max_depth = x.at("max_depth");
        m.opt_.xgb.eta = x.at("eta");
        m.opt_.xgb.subsample = x.at("subsample");
        m.opt_.xgb.colsample = x.at("colsample");
        m.opt_.xgb.lambda = x.at("lambda");
        m.opt_.xgb.seed = x.at("seed");
        // Models stored before the prior predict as they did.
        m.opt_.roofline_prior = j.value("roofline_prior", false);
        if (j.contains("descriptors"))
            m.opt_.descriptors = hw::Descriptors::fromJson(j.at("descriptors"));
        m.frameworks_ = j.at("frameworks").get<std::vector<std::string>>();
        m.chips_ = j.at("chips").get<std::vector<std::string>>();
        m.precisions_ = j.at("precisions").get<std::vector<std::string>>();
        m.screened_ = j.at("screened_rows");
        m.learned_pairs_ = j.at("learned_pairs");
        for (const auto& c : j.at("configurations")) {
            Config& cf = m.configs_[c.at("key").get<std::string>()];
            cf.key = c.at("key").get<std::string>();
            cf.fields.framework = c.at("framework");
            cf.fields.model = c.at("model");
            cf.fields.hardware = c.at("hardware");
            cf.fields.precision = c.at("precision");
            for (const auto& f : c.at("fits")) {
                ExpFit e;
                e.a = f.at("a");
                e.b = f.at("b");
                e.c = f.at("c");
                e.points = f.at("points");
                e.batches = f.value("batches", std::vector<int>{});
                e.max_abs_pct = f.at("max_abs_pct");
                cf.db[{f.at("ii").get<int>(), f.at("oo").get<int>()}] = e;
            }
        }
        if (j.contains("regressors")) {
            const auto& r = j.at("regressors");
            if (r.size() != 3) throw std::runtime_error("ALA model: expected three regressors");
            for (int i = 0; i < 3; ++i)
                m.r_[i] = fit::XgbRegressor::fromJson(r[std::size_t(i)].get<std::string>());
            m.learned_ = true;
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("ALA model: ") + e.what());
    } catch (const std::invalid_argument& e) { // a regressor's text
        throw std::runtime_error(std::string("ALA model: ") + e.what());
    }
    if (m.configs_.empty()) throw std::runtime_error("ALA model: no configurations");
    m.computeScales();
    return m;
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
    // Linear: least squares on [1, features] by Eigen's complete orthogonal decomposition
    // (the one-hot blocks with the intercept are rank-deficient: a minimum-norm solution).
    Eigen::MatrixXd a(Eigen::Index(rows.size()), width_ + 1);
    Eigen::VectorXd y(Eigen::Index(rows.size()));
    std::vector<std::vector<float>> x;
    std::vector<float> ly;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto f = features(rows[i]);
        a(Eigen::Index(i), 0) = 1.0;
        for (int k = 0; k < width_; ++k) a(Eigen::Index(i), k + 1) = f[std::size_t(k)];
        y(Eigen::Index(i)) = rows[i].thpt;
        x.emplace_back(f.begin(), f.end());
        ly.push_back(float(std::log(rows[i].thpt)));
    }
    const Eigen::VectorXd w = a.completeOrthogonalDecomposition().solve(y);
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

namespace {
// FNV-1a of a configuration's key: its held-out choice, the same on every platform.
std::uint64_t fnv(const std::string& s) {
    return text::fnv1a64(s);
}
} // namespace

namespace {
// evaluate's choice of held-out pairs: the rows held out, and per configuration with two
// or more pairs its evaluation record (pairs, held-out pairs) to fill.
struct Split {
    std::vector<bool> held;
    std::map<std::string, ConfigEvaluation> per;
    std::map<std::string, std::vector<std::size_t>> by; // rows per configuration
    std::size_t single_pair_configs = 0;
};
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
        std::mt19937_64 rng(seed ^ fnv(k));
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
} // namespace

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
    Split sp = split(rows, o, test_fraction, seed);
    const auto suspect = suspectRows(rows, o.columns, o.screen_ratio);
    Evaluation ev;
    ev.single_pair_configs = sp.single_pair_configs;
    std::vector<BenchRow> train;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (!sp.held[i]) train.push_back(rows[i]);
    AlaModel ala;
    ala.train(train, o);
    ev.screened_rows = ala.screenedRows();
    const auto train_suspect = suspectRows(train, o.columns, o.screen_ratio);
    {
        std::vector<BenchRow> clean; // the rows the per-configuration baselines train on
        for (std::size_t t = 0; t < train.size(); ++t)
            if (!train_suspect[t]) clean.push_back(train[t]);
        ev.dataset_wide.train(clean, o.xgb);
    }
    for (auto& [k, ce] : sp.per) {
        std::vector<BenchRow> tr;
        for (std::size_t t = 0; t < train.size(); ++t)
            if (!train_suspect[t] && configKey(train[t], o.columns) == k) tr.push_back(train[t]);
        ce.train_rows = tr.size();
        LinearBaseline lin;
        XgbBaseline xgb;
        if (!tr.empty()) {
            lin.train(tr);
            xgb.train(tr, o.xgb);
        }
        for (std::size_t i : sp.by.at(k)) {
            if (!sp.held[i]) continue;
            const BenchRow& r = rows[i];
            auto pct = [&](double pred) { return 100.0 * std::abs(pred - r.thpt) / r.thpt; };
            ce.suspect_held_rows += suspect[i];
            ce.ala_pct.push_back(pct(ala.predict(r)));
            ce.linear_pct.push_back(tr.empty() ? NAN : pct(lin.predict(r.ii, r.oo, r.bb)));
            ce.xgb_pct.push_back(tr.empty() ? NAN : pct(xgb.predict(r.ii, r.oo, r.bb)));
            ce.linear_all_pct.push_back(pct(ev.dataset_wide.predictLinear(r)));
            ce.xgb_all_pct.push_back(pct(ev.dataset_wide.predictXgb(r)));
        }
        ev.configs.push_back(std::move(ce));
    }
    return ev;
}

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
    const Split sp = split(rows, o, test_fraction, seed);
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
            out.logged_error_.push_back(median(e));
        }
        return median(all);
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
        q.actual_pct = median(e);
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
        Split sp;
        try {
            sp = split(rows, o, test_fraction, seed);
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
