#pragma once
#include "model/request.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kairos {

// A set of requests ordered by arrival time (ties keep file order), plus where it came from.
struct Workload {
    std::string name;
    std::string source;                      // file it was read from, or the generator command
    std::map<std::string, std::string> meta; // free key/value pairs carried by the native format
    std::vector<Request> requests;

    std::size_t size() const { return requests.size(); }
    bool empty() const { return requests.empty(); }
    void sortByArrival(); // stable: ties keep file order
    // Sorts by arrival (stable) and shifts times so that the first arrival is at `origin`.
    void normalise(double origin = 0.0);
    long long totalPromptTokens() const;
    long long totalOutputTokens() const;
    double span() const; // last arrival - first arrival

    // A request's identity: runs, metrics and timelines number requests by their row (the
    // index after sorting by arrival); the trace's own id, agent and class are what a user
    // joins results back to. Out-of-range rows give the row itself, no agent, no class.
    std::int64_t idOf(std::size_t row) const;
    std::int32_t agentOf(std::size_t row) const;
    // The first row whose trace id is `id` (ids need not be unique), or none.
    std::optional<std::size_t> rowOfId(std::int64_t id) const;
    // "request 500000 (agent 5, urgent)": the trace id, then agent and class where known.
    std::string label(std::size_t row) const;
};

} // namespace kairos
