#pragma once
// NaN and infinities are not JSON: a number that is not finite is written as null.
#include <cmath>
#include <nlohmann/json.hpp>

namespace kairos {

inline nlohmann::json jsonNumber(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

} // namespace kairos
