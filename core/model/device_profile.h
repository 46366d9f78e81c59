#pragma once
// A device profile: one model on one piece of hardware, with the coefficients of the
// execution-time model fitted for it and what is needed to size its KV cache.
#include "model/model_config.h"

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace kairos {

struct VidurTables; // model/vidur_tables.h

// ETE-batched coefficients, times in seconds (TimeBill's forms, batched as DistServe does):
//   prefill iteration: a + b * sum(L) + c * sum(L^2)      over the prefill chunks L
//   decode iteration:  q0 + q1 * B + p * sum(N_kv)         over the B decoding requests
struct EteParams {
    double a = 0, b = 0, c = 0;
    double q0 = 0, q1 = 0, p = 0;
    // A stored "ete" model's parameters: {"a", "b", "c", "q0", "q1", "p"} (flat, unlike a
    // profile's "ete" section).
    nlohmann::json toModelJson() const;
    // Throws std::invalid_argument naming the field when a coefficient is missing or
    // outside what check() allows.
    static EteParams fromModelJson(const std::string& text);
    // What is wrong with the coefficients, as (field, message), or ("", "") when nothing:
    // every one finite and >= 0, the constants (a, q0) at most 1e4 s, the per-token and
    // per-request ones (b, q1) at most 100 s, the quadratic and per-KV-token ones (c, p) at
    // most 1 s; a one-token prefill and a one-request decode step must take time.
    std::pair<std::string, std::string> check() const;
};

struct DeviceProfile {
    std::string name;
    std::string description;
    std::string hardware; // e.g. "2x A100-80GB"
    int gpu_count = 1;
    double gpu_mem_gib = 0.0;  // per GPU
    double mem_fraction = 0.9; // vLLM's gpu_memory_utilization
    ModelConfig model;
    std::string exec_kind = "ete"; // "ete", "unit" or "vidur"
    EteParams ete;
    std::shared_ptr<const VidurTables> vidur;                // exec "vidur": operator tables
    std::optional<std::int64_t> kv_capacity_tokens;          // explicit, overrides the computed one
    std::string provenance;                                  // how the coefficients were obtained
    std::optional<double> fit_mape_prefill, fit_mape_decode; // in percent

    // KV capacity in tokens: the explicit value, else (memory * fraction - weights) / bytes per
    // token.
    std::int64_t kvCapacityTokens() const;

    // `file` only names the source in error messages.
    static DeviceProfile fromJson(const nlohmann::json& j, const std::string& file);
    static DeviceProfile load(const std::string& path);
    nlohmann::json toJson() const;
};

// KV tokens that fit in `total_bytes * fraction` once the weights are loaded; 0 if none.
std::int64_t kvCapacityFromMemory(const ModelConfig& m, double total_bytes, double fraction);

} // namespace kairos
