#pragma once
// `kairos-cli reproduce`: each paper's experiment run on the closest workload Kairos has,
// with the paper's figure next to the one measured here, claim by claim.
//
// A Claim's paper_value is a number, a [low, high] range, or null where the paper gives
// no figure (then the claim is a measurement the paper only describes in words); the
// setting says where ours differs from the paper's and why. Experiments are seeded: the
// same options give the same claims on every machine (simulated time, not wall time).
#include "model/device_profile.h"

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kairos::repro {

struct Claim {
    std::string paper;          // "mcsf", "trail", "timely", "timebill"
    std::string claim;          // what is compared, in words
    nlohmann::json paper_value; // number, [lo, hi] or null
    double kairos_value = 0;
    std::string unit;
    std::string setting; // the setting of our measurement and how it differs from the paper's
};

struct Options {
    std::string data_dir;   // ../shared/data: the real traces the experiments use
    bool quick = false;     // smaller instances (tests, a first look): same claims, noisier
    std::uint64_t seed = 1; // arrivals, predictors, random instances
    int threads = 0;        // simulations run in parallel; 0: the hardware's count
    // Finds a shipped device profile by name (the CLI's resolver).
    std::function<DeviceProfile(const std::string&)> profile;
    std::function<void(const std::string&)> progress; // one line per step; may be empty
};

struct Report {
    std::vector<Claim> claims;
    std::string details; // the tables behind the claims, for people
};

// "mcsf", "trail", "timely", "timebill"; "all" runs each in that order. Throws
// std::invalid_argument for another name and InputError when a data file is missing.
Report reproduce(const std::string& paper, const Options& opt);
std::vector<std::string> paperNames();

nlohmann::json toJson(const std::vector<Claim>& claims);
std::string claimsTable(const std::vector<Claim>& claims);

Report reproduceMcsf(const Options& opt);
Report reproduceTrail(const Options& opt);
Report reproduceTimely(const Options& opt);
Report reproduceTimebill(const Options& opt);

} // namespace kairos::repro
