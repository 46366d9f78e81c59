#pragma once
// What a spec sheet says of an accelerator and a config.json of a model, and the roofline
// bound they give on LLM-Inference-Bench's throughput. ALA uses the bound as a prior: a
// configuration on hardware (or a model) it never measured is predicted from the nearest
// measured one, scaled by the ratio of their bounds (fit/ala.h).
//
// The shipped tables are resources/hardware/accelerators.csv and models.csv (compiled in:
// every figure with its source); a user adds or replaces rows with a file of the same
// columns (addFile). Hardware is matched by the name LLM-Inference-Bench writes ("Nvidia
// H100 GPU x4": the chip, then the device count), a model by its hub name.
#include "fit/bench.h"

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace kairos::hw {

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

struct Accelerator {
    std::string chip, vendor, source;
    double memory_gb = kUnknown, bandwidth_gbps = kUnknown, fp16_tflops = kUnknown,
           interconnect_gbps = kUnknown; // per device; NaN: not known
};

struct ModelSpec {
    std::string model, source;
    double params_b = 0, active_b = 0; // billions; active < params for mixture of experts
    int layers = 0, hidden = 0, kv_heads = 0, head_dim = 0;
    // K and V of one token over every layer, at `bytes` per element.
    double kvBytesPerToken(double bytes) const {
        return 2.0 * layers * kv_heads * head_dim * bytes;
    }
};

// "Nvidia H100 GPU x4" -> {"Nvidia H100 GPU", 4}; no trailing "xN": one device.
std::pair<std::string, int> splitHardware(const std::string& hardware);

class Descriptors {
public:
    // The shipped tables.
    static const Descriptors& shipped();
    // Adds or replaces rows from a CSV file with the columns of accelerators.csv or of
    // models.csv (told apart by the header). Bad rows: InputError naming file, line, field.
    void addFile(const std::string& path);
    void addAccelerators(std::istream& in, const std::string& name);
    void addModels(std::istream& in, const std::string& name);
    // Matched ignoring case; null when there is no row.
    const Accelerator* accelerator(const std::string& chip) const;
    const ModelSpec* model(const std::string& name) const;
    const std::map<std::string, Accelerator>& accelerators() const { return acc_; }
    const std::map<std::string, ModelSpec>& models() const { return models_; }

    nlohmann::json toJson() const;
    static Descriptors fromJson(const nlohmann::json& j); // throws std::runtime_error

private:
    std::map<std::string, Accelerator> acc_;  // by lower-case chip
    std::map<std::string, ModelSpec> models_; // by lower-case name
};

// The roofline of one configuration (framework, model, hardware, precision), without its
// (input, output, batch):
//  - weights are read once per forward pass, the KV cache once per decode step, at the
//    memory bandwidth; a pass's matrix work (2 FLOP per active parameter and token, plus
//    attention's) at the FP16 dense peak; a pass takes the longer of the two;
//  - tensor parallel over the devices (bandwidth and compute add up, and two all-reduces of
//    the activations per layer cross the interconnect when its bandwidth is known), except
//    llama.cpp, which splits layers across devices: one token still visits every weight
//    once, at one device's bandwidth;
//  - mixture of experts: a decode step of `bb` sequences reads the experts any of them
//    routes to (expected share 1 - (1 - active/total)^bb of the expert weights);
//  - 2 bytes per weight and per KV element, 1 where the precision says fp8 or int8.
// Throughput as LLM-Inference-Bench counts it: bb * (ii + oo) tokens over the time of a
// prefill of bb * ii tokens and oo decode steps at the mean context ii + oo / 2.
struct Roofline {
    double bandwidth = 0, flops = 0, interconnect = kUnknown; // B/s, FLOP/s, B/s, all devices
    int devices = 1;
    bool tensor_parallel = true;
    double weight_bytes = 0, dense_bytes = 0, expert_bytes = 0; // dense + expert = weight
    double expert_active_share = 1; // active expert weights over all expert weights
    double active_params = 0, kv_bytes_per_token = 0;
    int layers = 0, hidden = 0;
    double throughput(int ii, int oo, int bb) const; // tokens/s
};
// The roofline of `r`'s configuration, or nullopt with `missing` saying which figure is not
// in the tables (a hardware or model without a row, or a row without bandwidth or FLOPS).
std::optional<Roofline> roofline(const Descriptors& d, const ala::BenchRow& r,
                                 std::string* missing = nullptr);

} // namespace kairos::hw
