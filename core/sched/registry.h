#pragma once
// Policies by name, with parameters by name ("--param watermark=0.02").
#include "sched/scheduler.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kairos {

using PolicyParams = std::map<std::string, double>;

// Parses "key=value" items; throws std::invalid_argument naming the bad item.
PolicyParams parsePolicyParams(const std::vector<std::string>& items);
// Throws std::invalid_argument for an unknown policy or parameter.
std::unique_ptr<Scheduler> makeScheduler(const std::string& name, const PolicyParams& params = {});
std::vector<std::string> policyNames();

} // namespace kairos
