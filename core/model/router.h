#pragma once
// The routers of a fleet of replicas (sim/fleet.h says what each does), by name: what run
// specs, run logs and the command line spell.
#include "util/enum_names.h"

#include <string>

namespace kairos {

enum class Router { RoundRobin, LeastOutstanding, LeastKv, PrefixAware, PrefixOracle };

inline constexpr EnumName<Router> kRouterNames[] = {{Router::RoundRobin, "round_robin"},
                                                    {Router::LeastOutstanding, "least_outstanding"},
                                                    {Router::LeastKv, "least_kv"},
                                                    {Router::PrefixAware, "prefix_aware"},
                                                    {Router::PrefixOracle, "prefix_oracle"}};

// The most replicas a fleet may have (replica indices are 16-bit in the run log).
inline constexpr int kMaxReplicas = 4096;

inline const char* routerName(Router r) {
    return enumName(kRouterNames, r);
}

inline bool routerFromName(const std::string& name, Router* out) {
    return enumFromName(kRouterNames, name, out);
}

// "round_robin, least_outstanding, least_kv, prefix_aware, prefix_oracle"
inline std::string routerNames() {
    std::string s;
    for (const auto& x : kRouterNames) {
        if (!s.empty()) s += ", ";
        s += x.name;
    }
    return s;
}

} // namespace kairos
