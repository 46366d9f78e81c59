#pragma once
// The run summary, with vLLM benchmark_serving's names and definitions.
#include "metrics/stats.h"
#include "model/run_log.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kairos {

// Service-level objectives for goodput (milliseconds); a request is good only if it
// meets every one given. Parsed from "ttft:MS", "tpot:MS", "e2el:MS".
struct GoodputSlo {
    std::optional<double> ttft_ms, tpot_ms, e2el_ms;
    bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
    static GoodputSlo parse(const std::vector<std::string>& items); // throws std::invalid_argument
};

struct SummaryOptions {
    std::vector<double> percentiles{50, 90, 99};
    GoodputSlo goodput;
};

struct Summary {
    std::string workload, policy, exec_model;
    std::int64_t num_requests = 0, completed = 0, killed = 0;
    std::int64_t total_input_tokens = 0, total_output_tokens = 0;
    double duration_s = 0;         // first arrival to the last finish or kill
    double request_throughput = 0; // completed / duration
    double output_throughput = 0;  // output tokens / duration
    double total_token_throughput = 0;
    std::optional<double> request_goodput; // good requests / duration
    std::int64_t good_requests = 0;
    Stats ttft_ms, tpot_ms, itl_ms, e2el_ms, queue_ms;
    std::int64_t kv_peak_tokens = 0, kv_capacity_tokens = 0;
    std::int64_t preemptions = 0, suspensions = 0, iterations = 0, stretches = 0;
    double sim_wall_ms = 0;
    std::vector<double> percentiles;
    std::vector<std::string> warnings;

    nlohmann::json toJson() const;
    std::string table() const; // the readable summary the CLI prints
};

Summary summarize(const RunLog& log, const SummaryOptions& opt = {});

// vLLM's key for a percentile: 99 -> "p99", 99.9 -> "p99.9".
std::string percentileKey(double q);

} // namespace kairos
