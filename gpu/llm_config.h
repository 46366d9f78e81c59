#pragma once
// The architecture of a Llama/Qwen2-family decoder: what the live engine needs to build
// the network and to read a Hugging Face checkpoint's config.json. Torch-free.
#include "model/model_config.h"

#include <string>
#include <vector>

namespace kairos::llama2c {
struct Header;
}

namespace kairos::gpu {

struct LlmConfig {
    std::string name;
    int vocab = 0;
    int hidden = 0;
    int intermediate = 0;
    int layers = 0;
    int heads = 0;
    int kv_heads = 0;
    int head_dim = 0;
    double rope_theta = 10000.0;
    double rms_eps = 1e-6;
    bool tie_embeddings = false;
    bool qkv_bias = false; // Qwen2 has biases on q, k and v projections
    int max_positions = 4096;
    // Llama 3.1's "llama3" RoPE scaling (factor 0: none).
    double rope_factor = 0.0;
    double rope_low_freq_factor = 1.0;
    double rope_high_freq_factor = 4.0;
    int rope_original_max_positions = 8192;
    int eos_token = -1;

    // Parameter count (embeddings, attention, MLP, norms, LM head unless tied).
    double params() const;
    // The shape the core's time and memory models use (dtype_bytes as given).
    ModelConfig shape(int dtype_bytes) const;
    // Throws std::invalid_argument naming the first inconsistent field.
    void validate() const;
};

// Built-in configurations: "tiny" (tests), "qwen2.5-0.5b", "llama-3-8b".
std::vector<std::string> builtinConfigNames();
// Throws std::invalid_argument listing the names when `name` is unknown.
LlmConfig builtinConfig(const std::string& name);
// Reads a Hugging Face config.json (LlamaForCausalLM, Qwen2ForCausalLM); InputError
// naming the file and field when something needed is missing or unsupported.
LlmConfig readHfConfig(const std::string& path);
// The configuration of a llama2.c checkpoint (run.c's semantics: RMSNorm eps 1e-5, RoPE
// theta 10000, the classifier shared when the header says so, the context as positions,
// and BOS (token 1) as the end of a story). `name` defaults to the file's stem.
LlmConfig llama2cConfig(const llama2c::Header& h, const std::string& name);
// Reads a llama2.c checkpoint's header: its configuration, named after the file.
LlmConfig readLlama2cConfig(const std::string& path);

} // namespace kairos::gpu
