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

} // namespace kairos
