#include "model/workload.h"

#include <algorithm>

namespace kairos {

void Workload::sortByArrival() {
    // Most workloads arrive sorted; a stable sort of sorted requests moves each twice.
    const auto earlier = [](const Request& a, const Request& b) { return a.arrival < b.arrival; };
    if (std::is_sorted(requests.begin(), requests.end(), earlier)) return;
    std::stable_sort(requests.begin(), requests.end(),
                     [](const Request& a, const Request& b) { return a.arrival < b.arrival; });
}

void Workload::normalise(double origin) {
    sortByArrival();
    if (requests.empty()) return;
    const double shift = origin - requests.front().arrival;
    if (shift != 0.0)
        for (auto& r : requests) r.arrival += shift;
}

long long Workload::totalPromptTokens() const {
    long long s = 0;
    for (const auto& r : requests) s += r.prompt_tokens;
    return s;
}

long long Workload::totalOutputTokens() const {
    long long s = 0;
    for (const auto& r : requests) s += r.output_tokens;
    return s;
}

double Workload::span() const {
    return requests.empty() ? 0.0 : requests.back().arrival - requests.front().arrival;
}

std::int64_t Workload::idOf(std::size_t row) const {
    return row < requests.size() ? requests[row].id : static_cast<std::int64_t>(row);
}

std::int32_t Workload::agentOf(std::size_t row) const {
    return row < requests.size() ? requests[row].agent : -1;
}

std::optional<std::size_t> Workload::rowOfId(std::int64_t id) const {
    for (std::size_t i = 0; i < requests.size(); ++i)
        if (requests[i].id == id) return i;
    return std::nullopt;
}

std::string Workload::label(std::size_t row) const {
    std::string s = "request " + std::to_string(idOf(row));
    if (row >= requests.size()) return s;
    const Request& r = requests[row];
    std::string extra;
    if (r.agent >= 0) extra = "agent " + std::to_string(r.agent);
    if (!r.cls.empty()) extra += (extra.empty() ? "" : ", ") + r.cls.str();
    return extra.empty() ? s : s + " (" + extra + ")";
}

} // namespace kairos
