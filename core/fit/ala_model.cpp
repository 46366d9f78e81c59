// AlaModel: the measured curves of every configuration, extended to unseen pairs and
// configurations by XGBoost on the curves' parameters; its JSON.
#include "fit/ala.h"
#include "fit/ala_detail.h"
#include "fit/ala_holdout.h"
#include "metrics/stats.h"
#include "util/hash.h"
#include "util/input_error.h"
#include "util/json_line.h"
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

namespace kairos::fit {
// XGBoost's settings in a stored model, each under its own name (every key required).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(XgbParams, trees, max_depth, eta, subsample, colsample, lambda,
                                   seed)
} // namespace kairos::fit

namespace kairos::ala {
namespace {

using detail::kAMax, detail::kBMax, detail::kBMin, detail::kCMax;

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
    if (learned_) // the three coordinates' regressors are independent
        parallelFor(3, o.threads, [&](std::size_t j) { r_[j].fit(x, y[j], o.xgb); });
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
        // What the rows lack, not a fault of Kairos: exit 2 in the programs.
        throw std::invalid_argument(
            "ALA cannot predict (" + std::to_string(ii) + ", " + std::to_string(oo) +
            "): it learns how a configuration's curve thpt = c - a*exp(-b*batch) changes from "
            "one (input, output) pair to another, and no configuration of the training rows "
            "has two pairs measured at 3 or more batch sizes each; give rows at several batch "
            "sizes per pair");
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

double Prediction::at(double bb) const {
    return fit(bb) * transfer(bb);
}

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
    j["xgboost"] = opt_.xgb;
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
        j = parseJsonDocument(text, "ALA model");
    } catch (const std::exception& e) {
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
        m.opt_.xgb = j.at("xgboost").get<fit::XgbParams>();
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

} // namespace kairos::ala
