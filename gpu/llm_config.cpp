#include "llm_config.h"

#include "model/input_error.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kairos::gpu {

double LlmConfig::params() const {
    const double h = hidden, q = double(heads) * head_dim, kv = double(kv_heads) * head_dim;
    double layer = h * q + 2.0 * h * kv + q * h + 3.0 * h * intermediate + 2.0 * h;
    if (qkv_bias) layer += q + 2.0 * kv;
    return double(vocab) * h * (tie_embeddings ? 1.0 : 2.0) + layers * layer + h;
}

ModelConfig LlmConfig::shape(int dtype_bytes) const {
    ModelConfig m;
    m.name = name;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = kv_heads;
    m.head_dim = head_dim;
    m.dtype_bytes = dtype_bytes;
    m.params = params();
    m.intermediate = intermediate;
    m.vocab = vocab;
    return m;
}

void LlmConfig::validate() const {
    const auto need = [&](bool ok, const char* field) {
        if (!ok) throw std::invalid_argument("model '" + name + "': bad " + field);
    };
    need(vocab > 0, "vocab_size");
    need(hidden > 0, "hidden_size");
    need(intermediate > 0, "intermediate_size");
    need(layers > 0, "num_hidden_layers");
    need(heads > 0, "num_attention_heads");
    need(kv_heads > 0 && heads % kv_heads == 0, "num_key_value_heads (must divide the heads)");
    need(head_dim > 0 && head_dim % 2 == 0, "head_dim (even)");
    need(rope_theta > 0, "rope_theta");
    need(rms_eps > 0, "rms_norm_eps");
    need(max_positions > 0, "max_position_embeddings");
}

std::vector<std::string> builtinConfigNames() {
    return {"tiny", "qwen2.5-0.5b", "llama-3-8b"};
}

LlmConfig builtinConfig(const std::string& name) {
    LlmConfig c;
    c.name = name;
    if (name == "tiny") {
        // Small enough for exact tests on a CPU; both GQA and q/k/v biases exercised.
        c.vocab = 512, c.hidden = 64, c.intermediate = 176, c.layers = 2, c.heads = 4,
        c.kv_heads = 2, c.head_dim = 16, c.rope_theta = 10000.0, c.rms_eps = 1e-6,
        c.qkv_bias = true, c.max_positions = 4096, c.eos_token = 0;
    } else if (name == "qwen2.5-0.5b") {
        // Qwen/Qwen2.5-0.5B config.json.
        c.vocab = 151936, c.hidden = 896, c.intermediate = 4864, c.layers = 24, c.heads = 14,
        c.kv_heads = 2, c.head_dim = 64, c.rope_theta = 1000000.0, c.rms_eps = 1e-6,
        c.tie_embeddings = true, c.qkv_bias = true, c.max_positions = 32768, c.eos_token = 151643;
    } else if (name == "llama-3-8b") {
        // meta-llama/Meta-Llama-3-8B config.json.
        c.vocab = 128256, c.hidden = 4096, c.intermediate = 14336, c.layers = 32, c.heads = 32,
        c.kv_heads = 8, c.head_dim = 128, c.rope_theta = 500000.0, c.rms_eps = 1e-5,
        c.max_positions = 8192, c.eos_token = 128001;
    } else {
        std::string list;
        for (const auto& n : builtinConfigNames()) list += (list.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown model '" + name + "' (built in: " + list +
                                    "; or give --weights DIR with a config.json)");
    }
    return c;
}

LlmConfig readHfConfig(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "", "cannot open");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path, 0, "", std::string("not valid JSON: ") + e.what());
    }
    const auto num = [&](const char* field, bool required, double fallback) {
        const auto it = j.find(field);
        if (it == j.end() || it->is_null()) {
            if (required) throw InputError(path, 0, field, "missing");
            return fallback;
        }
        if (!it->is_number()) throw InputError(path, 0, field, "must be a number");
        return it->get<double>();
    };
    LlmConfig c;
    const std::string type = j.value("model_type", std::string());
    if (type != "llama" && type != "qwen2")
        throw InputError(path, 0, "model_type",
                         "'" + type + "' is not supported (llama and qwen2 are)");
    c.name = j.value("_name_or_path", type);
    c.vocab = int(num("vocab_size", true, 0));
    c.hidden = int(num("hidden_size", true, 0));
    c.intermediate = int(num("intermediate_size", true, 0));
    c.layers = int(num("num_hidden_layers", true, 0));
    c.heads = int(num("num_attention_heads", true, 0));
    c.kv_heads = int(num("num_key_value_heads", false, c.heads));
    c.head_dim = int(num("head_dim", false, c.heads > 0 ? double(c.hidden / c.heads) : 0.0));
    c.rope_theta = num("rope_theta", false, 10000.0);
    c.rms_eps = num("rms_norm_eps", false, 1e-6);
    c.max_positions = int(num("max_position_embeddings", false, 4096));
    c.tie_embeddings = j.value("tie_word_embeddings", false);
    c.qkv_bias = type == "qwen2" || j.value("attention_bias", false);
    if (j.contains("eos_token_id") && j["eos_token_id"].is_number_integer())
        c.eos_token = j["eos_token_id"].get<int>();
    else if (j.contains("eos_token_id") && j["eos_token_id"].is_array() &&
             !j["eos_token_id"].empty())
        c.eos_token = j["eos_token_id"][0].get<int>();
    if (const auto rs = j.find("rope_scaling"); rs != j.end() && !rs->is_null()) {
        const std::string kind = rs->value("rope_type", rs->value("type", std::string()));
        if (kind != "llama3")
            throw InputError(path, 0, "rope_scaling.rope_type",
                             "'" + kind + "' is not supported (llama3 is)");
        c.rope_factor = rs->value("factor", 8.0);
        c.rope_low_freq_factor = rs->value("low_freq_factor", 1.0);
        c.rope_high_freq_factor = rs->value("high_freq_factor", 4.0);
        c.rope_original_max_positions = rs->value("original_max_position_embeddings", 8192);
    }
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw InputError(path, 0, "", e.what());
    }
    return c;
}

} // namespace kairos::gpu
