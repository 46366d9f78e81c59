#include "fit/xgb.h"

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

std::string XgbRegressor::toJson() const {
    if (!trained_) throw std::logic_error("XGBoost: save before fit");
    bst_ulong len = 0;
    const char* buf = nullptr;
    check(XGBoosterSaveModelToBuffer(booster_, R"({"format": "json"})", &len, &buf),
          "XGBoosterSaveModelToBuffer");
    return std::to_string(features_) + "\n" + std::string(buf, len);
}

XgbRegressor XgbRegressor::fromJson(const std::string& json) {
    const auto nl = json.find('\n');
    if (nl == std::string::npos) throw std::invalid_argument("not a saved XGBoost model");
    XgbRegressor r;
    r.features_ = std::stoul(json.substr(0, nl));
    check(XGBoosterCreate(nullptr, 0, &r.booster_), "XGBoosterCreate");
    check(XGBoosterLoadModelFromBuffer(r.booster_, json.data() + nl + 1,
                                       bst_ulong(json.size() - nl - 1)),
          "XGBoosterLoadModelFromBuffer");
    r.trained_ = true;
    return r;
}

} // namespace kairos::fit
