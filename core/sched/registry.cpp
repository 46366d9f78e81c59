#include "sched/registry.h"

#include "sched/fcfs.h"
#include "workload/text.h"

#include <stdexcept>

namespace kairos {

PolicyParams parsePolicyParams(const std::vector<std::string>& items) {
    PolicyParams p;
    for (const auto& it : items) {
        const auto eq = it.find('=');
        double v;
        if (eq == std::string::npos || eq == 0 ||
            !text::parseDouble(std::string_view(it).substr(eq + 1), &v))
            throw std::invalid_argument("policy parameter '" + it + "': expected NAME=NUMBER");
        p[it.substr(0, eq)] = v;
    }
    return p;
}

namespace {
double take(PolicyParams& p, const std::string& key, double dflt) {
    const auto it = p.find(key);
    if (it == p.end()) return dflt;
    const double v = it->second;
    p.erase(it);
    return v;
}
void noneLeft(const PolicyParams& p, const std::string& policy) {
    if (!p.empty())
        throw std::invalid_argument("policy '" + policy + "' has no parameter '" +
                                    p.begin()->first + "'");
}
} // namespace

std::unique_ptr<Scheduler> makeScheduler(const std::string& name, const PolicyParams& params) {
    PolicyParams p = params;
    if (name == "fcfs") {
        FcfsOptions o;
        o.watermark = take(p, "watermark", o.watermark);
        if (o.watermark < 0 || o.watermark >= 1)
            throw std::invalid_argument("fcfs: watermark must be in [0, 1)");
        noneLeft(p, name);
        return std::make_unique<FcfsScheduler>(o);
    }
    throw std::invalid_argument("unknown policy '" + name + "' (known: fcfs)");
}

std::vector<std::string> policyNames() {
    return {"fcfs"};
}

} // namespace kairos
