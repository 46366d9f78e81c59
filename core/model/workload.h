#pragma once
#include "model/request.h"

#include <map>
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
};

} // namespace kairos
