#pragma once
// NaN and infinities are not JSON: a number that is not finite is written as null
// (jsonNumber), or, where an infinity means something (a reason's numbers, Trail's C = inf),
// as the string "inf" / "-inf" with NaN as null (jsonNumberOrInf, read back by
// numberOrInf).
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kairos {

inline nlohmann::json jsonNumber(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

inline nlohmann::json jsonNumberOrInf(double v) {
    if (std::isnan(v)) return nullptr;
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

// What jsonNumberOrInf wrote: a number, "inf" / "-inf", or null (NaN); nothing for anything
// else.
inline std::optional<double> numberOrInf(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    return std::nullopt;
}

} // namespace kairos
