#pragma once
// How well the simulator predicts a live run (`kairos-cli validate`): the same prepared run
// simulated on an ETE model measured on this device, judged request by request against the
// run on the real model. The live engine (gpu/) produces the live run; what is compared, and
// how, is here, with no torch, so that tests reach it with any two run logs.
//
//   - per-request relative errors of TTFT and E2EL (median, p90) over the requests that
//     finished in both runs;
//   - with real stopping (the model ends its answers), the simulation is told each answer's
//     length as generated, so that it is judged on time alone; the errors planned on the
//     workload's lengths (limits there) are kept beside, marked as such;
//   - "bracketed": the simulation with the model scaled to the device's mean speed over the
//     run (a reference step timed before and after it), the error left once drift is out;
//   - the planning model against the live run's own iterations, by kind;
//   - with prefix caching, both runs' cache hit rates.
#include "exec/execution_model.h"
#include "run/pipeline.h"
#include "sim/engine.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kairos {

struct ErrorStats {
    double median = NAN, p90 = NAN;
    std::size_t n = 0;
};
// The median and p90 of relative errors (NaN when there are none).
ErrorStats relErrors(const std::vector<double>& e);

// The simulator's per-request errors against a live run of the same workload, and the rows
// (id, live and simulated TTFT and E2EL).
struct SimErrors {
    ErrorStats ttft, e2el;
    nlohmann::json rows = nlohmann::json::array();
};
SimErrors simErrors(const RunLog& sim, const RunLog& live);

// Every coefficient times `k` (a device `k` times slower).
EteParams scaledEte(EteParams p, double k);

// The planning model against the live run's iterations, by kind (prefill, decode, mixed):
// count, median signed and absolute relative error, median measured time; and the median
// time between iterations.
nlohmann::json iterationErrors(const std::vector<Simulator::LiveIteration>& it);

struct LiveCheckInput {
    PreparedRun prep; // the run as simulated (its model: `ete` scaled by `drift`, named `source`)
    EteParams ete;
    double drift = 1.0; // the recalibration applied to the planning model (1: none)
    std::string source;
    bool lengths_told = false; // the live model stopped at its own end of answer
    // The reference step: the profile's time, and this device's just before and after.
    double reference_profile = 0, reference_before = 0, reference_after = 0;
    long long backend_reused_tokens = 0; // the live backend's own count of reused KV
};

struct LiveCheck {
    SimErrors errors;            // of the simulation compared (told the lengths when asked)
    SimErrors planned;           // on the workload's lengths (only with lengths_told)
    SimErrors bracketed;         // with the model at the run's mean speed
    double mean_speed = 1.0;     // that scale: (before + after) / 2 / profile
    nlohmann::json iterations;   // iterationErrors
    nlohmann::json prefix_cache; // null without prefix caching
};

// Simulates `in.prep` (and its variants) in `ctx` and compares each with `live`.
LiveCheck checkAgainstLive(const LiveCheckInput& in, const RunLog& live,
                           const std::vector<Simulator::LiveIteration>& live_iterations,
                           const RunContext& ctx = {});

} // namespace kairos
