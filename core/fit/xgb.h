#pragma once
// A gradient-boosted tree regressor through XGBoost's C API (ALA's augmentation and its
// error predictor use it). Deterministic: one thread and a fixed seed, so the same data
// and parameters give the same model, byte for byte. Models save to and load from JSON
// (XGBoost's own format), so a stored model predicts exactly as the trained one.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::fit {

struct XgbParams {
    int trees = 5000;       // boosting rounds (the ALA authors': 5000)
    int max_depth = 8;      // 8
    double eta = 0.007;     // learning rate 0.007
    double subsample = 0.8; // 0.8
    double colsample = 0.8; // colsample_bytree 0.8
    double lambda = 1.5;    // L2 regularisation 1.5
    std::uint64_t seed = 0;

    // The defaults but for the rounds, the learning rate and the depth: the named lighter
    // settings (ALA's --fast, the uncertainty's inner trainings) are written as one line.
    static XgbParams with(int trees, double eta, int max_depth = 8) {
        XgbParams p;
        p.trees = trees;
        p.eta = eta;
        p.max_depth = max_depth;
        return p;
    }
};

class XgbRegressor {
public:
    XgbRegressor();
    ~XgbRegressor();
    XgbRegressor(XgbRegressor&&) noexcept;
    XgbRegressor& operator=(XgbRegressor&&) noexcept;

    // Rows of equal length; y one value per row. Throws std::runtime_error with XGBoost's
    // message on failure, std::invalid_argument on shape errors.
    void fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y,
             const XgbParams& p = {});
    std::vector<float> predict(const std::vector<std::vector<float>>& x) const;
    bool trained() const { return trained_; }

    std::string toJson() const;
    static XgbRegressor fromJson(const std::string& json);
    // The same model in XGBoost's binary JSON (UBJSON), base64 text: a third smaller and
    // about ten times faster to load than toJson's (large ALA models load in a second,
    // not seven). fromJson reads both.
    std::string toCompact() const;

private:
    // The booster saved with XGBoost's `config` ({"format": ...}); the bytes are XGBoost's,
    // valid until its next call on this booster.
    std::string_view saved(const char* config) const;

    void* booster_ = nullptr; // BoosterHandle
    bool trained_ = false;
    std::size_t features_ = 0;
};

} // namespace kairos::fit
