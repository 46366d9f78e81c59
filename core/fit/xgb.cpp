#include "fit/xgb.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <xgboost/c_api.h>

namespace kairos::fit {

namespace {

void check(int rc, const char* what) {
    if (rc != 0) throw std::runtime_error(std::string(what) + ": " + XGBGetLastError());
}

// A DMatrix from row-major rows (RAII).
struct Matrix {
    DMatrixHandle h = nullptr;
    Matrix(const std::vector<std::vector<float>>& x, std::size_t features) {
        std::vector<float> flat;
        flat.reserve(x.size() * features);
        for (const auto& r : x) {
            if (r.size() != features)
                throw std::invalid_argument("every row needs " + std::to_string(features) +
                                            " features");
            flat.insert(flat.end(), r.begin(), r.end());
        }
        check(XGDMatrixCreateFromMat(flat.data(), bst_ulong(x.size()), bst_ulong(features),
                                     std::numeric_limits<float>::quiet_NaN(), &h),
              "XGDMatrixCreateFromMat");
    }
    ~Matrix() { XGDMatrixFree(h); }
    Matrix(const Matrix&) = delete;
    Matrix& operator=(const Matrix&) = delete;
};

// Base64 (RFC 4648), by hand: neither nlohmann::json nor the C++ library has it, and the
// core does not link Qt. Only for the compact model text below.
const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const char* p, std::size_t n) {
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (std::size_t i = 0; i < n; i += 3) {
        const unsigned v = (unsigned(static_cast<unsigned char>(p[i])) << 16) |
                           (i + 1 < n ? unsigned(static_cast<unsigned char>(p[i + 1])) << 8 : 0) |
                           (i + 2 < n ? unsigned(static_cast<unsigned char>(p[i + 2])) : 0);
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += i + 1 < n ? kB64[(v >> 6) & 63] : '=';
        out += i + 2 < n ? kB64[v & 63] : '=';
    }
    return out;
}

std::string unbase64(const std::string& s, std::size_t from) {
    int rev[256];
    std::fill(rev, rev + 256, -1);
    for (int i = 0; i < 64; ++i) rev[static_cast<unsigned char>(kB64[i])] = i;
    std::string out;
    out.reserve((s.size() - from) / 4 * 3);
    unsigned v = 0;
    int bits = 0;
    for (std::size_t i = from; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '=') break;
        if (rev[c] < 0) throw std::invalid_argument("not a saved XGBoost model (bad base64)");
        v = (v << 6) | unsigned(rev[c]);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += char((v >> bits) & 0xff);
        }
    }
    return out;
}

constexpr const char* kCompactTag = "ubj64:";

} // namespace

XgbRegressor::XgbRegressor() = default;

XgbRegressor::~XgbRegressor() {
    if (booster_) XGBoosterFree(booster_);
}

XgbRegressor::XgbRegressor(XgbRegressor&& o) noexcept
    : booster_(o.booster_), trained_(o.trained_), features_(o.features_) {
    o.booster_ = nullptr;
    o.trained_ = false;
}

XgbRegressor& XgbRegressor::operator=(XgbRegressor&& o) noexcept {
    if (this != &o) {
        if (booster_) XGBoosterFree(booster_);
        booster_ = o.booster_;
        trained_ = o.trained_;
        features_ = o.features_;
        o.booster_ = nullptr;
        o.trained_ = false;
    }
    return *this;
}

void XgbRegressor::fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y,
                       const XgbParams& p) {
    if (x.empty() || x.size() != y.size())
        throw std::invalid_argument("XGBoost: need one target per row, and some rows");
    features_ = x.front().size();
    Matrix m(x, features_);
    check(XGDMatrixSetFloatInfo(m.h, "label", y.data(), bst_ulong(y.size())), "label");
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
    check(XGBoosterCreate(&m.h, 1, &booster_), "XGBoosterCreate");
    const std::pair<const char*, std::string> params[] = {
        {"objective", "reg:squarederror"},
        {"tree_method", "exact"},
        {"max_depth", std::to_string(p.max_depth)},
        {"eta", std::to_string(p.eta)},
        {"subsample", std::to_string(p.subsample)},
        {"colsample_bytree", std::to_string(p.colsample)},
        {"lambda", std::to_string(p.lambda)},
        {"seed", std::to_string(p.seed)},
        {"nthread", "1"}, // determinism
        {"verbosity", "0"},
    };
    for (const auto& [k, v] : params) check(XGBoosterSetParam(booster_, k, v.c_str()), k);
    for (int i = 0; i < p.trees; ++i)
        check(XGBoosterUpdateOneIter(booster_, i, m.h), "XGBoosterUpdateOneIter");
    trained_ = true;
}

std::vector<float> XgbRegressor::predict(const std::vector<std::vector<float>>& x) const {
    if (!trained_) throw std::logic_error("XGBoost: predict before fit");
    if (x.empty()) return {};
    Matrix m(x, features_);
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* out = nullptr;
    check(
        XGBoosterPredictFromDMatrix(
            booster_, m.h,
            R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})",
            &shape, &dim, &out),
        "XGBoosterPredictFromDMatrix");
    return std::vector<float>(out, out + x.size());
}

std::string_view XgbRegressor::saved(const char* config) const {
    if (!trained_) throw std::logic_error("XGBoost: save before fit");
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(XGBoosterSaveModelToBuffer(booster_, config, &len, &buf), "XGBoosterSaveModelToBuffer");
    return {buf, std::size_t(len)};
}

std::string XgbRegressor::toJson() const {
    return std::to_string(features_) + "\n" + std::string(saved(R"({"format": "json"})"));
}

std::string XgbRegressor::toCompact() const {
    const std::string_view ubj = saved(R"({"format": "ubj"})");
    return std::to_string(features_) + "\n" + kCompactTag + base64(ubj.data(), ubj.size());
}

XgbRegressor XgbRegressor::fromJson(const std::string& json) {
    const auto nl = json.find('\n');
    if (nl == std::string::npos) throw std::invalid_argument("not a saved XGBoost model");
    XgbRegressor r;
    try {
        r.features_ = std::stoul(json.substr(0, nl));
    } catch (const std::exception&) {
        throw std::invalid_argument("not a saved XGBoost model (feature count)");
    }
    check(XGBoosterCreate(nullptr, 0, &r.booster_), "XGBoosterCreate");
    const std::size_t tag = std::char_traits<char>::length(kCompactTag);
    if (json.compare(nl + 1, tag, kCompactTag) == 0) {
        const std::string bytes = unbase64(json, nl + 1 + tag);
        check(XGBoosterLoadModelFromBuffer(r.booster_, bytes.data(), bst_ulong(bytes.size())),
              "XGBoosterLoadModelFromBuffer");
    } else {
        check(XGBoosterLoadModelFromBuffer(r.booster_, json.data() + nl + 1,
                                           bst_ulong(json.size() - nl - 1)),
              "XGBoosterLoadModelFromBuffer");
    }
    r.trained_ = true;
    return r;
}

} // namespace kairos::fit
