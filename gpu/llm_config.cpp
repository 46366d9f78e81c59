#include "llm_config.h"

#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "weights/llama2c.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
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
        throw std::invalid_argument("--model: unknown model '" + name + "' (built in: " + list +
                                    "; or give --weights DIR with a config.json)");
    }
    return c;
}

LlmConfig readHfConfig(const std::string& path) {
    const std::string text = readInputFile(path, limits::kSettings);
    const nlohmann::json j = parseJsonDocument(text, path);
    if (!j.is_object()) throw InputError(path, 1, "", "a config.json must be a JSON object");
    const JsonLines lines(text);
    auto fail = [&](const std::string& field, const std::string& what) {
        return InputError(path, lines.line(field), field, what);
    };
    // Every field read through one of these: a value of the wrong type is an error naming
    // the field and its line (nlohmann's value() would throw its own type_error).
    const auto num = [&](const char* field, bool required, double fallback) {
        const auto it = j.find(field);
        if (it == j.end() || it->is_null()) {
            if (required) throw fail(field, "missing");
            return fallback;
        }
        if (!it->is_number()) throw fail(field, "must be a number");
        const double v = it->get<double>();
        if (!std::isfinite(v) || std::abs(v) > 1e12) throw fail(field, "out of range");
        return v;
    };
    const auto whole = [&](const char* field, bool required, double fallback) {
        const double v = num(field, required, fallback);
        if (v != std::floor(v) || v < 0 || v > 1e9) throw fail(field, "must be a whole number");
        return int(v);
    };
    const auto str = [&](const nlohmann::json& o, const char* field, const std::string& path_of,
                         const std::string& fallback) {
        const auto it = o.find(field);
        if (it == o.end() || it->is_null()) return fallback;
        if (!it->is_string()) throw fail(path_of, "must be a string");
        return it->get<std::string>();
    };
    const auto flag = [&](const char* field, bool fallback) {
        const auto it = j.find(field);
        if (it == j.end() || it->is_null()) return fallback;
        if (!it->is_boolean()) throw fail(field, "must be true or false");
        return it->get<bool>();
    };
    LlmConfig c;
    const std::string type = str(j, "model_type", "model_type", "");
    if (type != "llama" && type != "qwen2")
        throw fail("model_type", "'" + type + "' is not supported (llama and qwen2 are)");
    c.name = str(j, "_name_or_path", "_name_or_path", type);
    c.vocab = whole("vocab_size", true, 0);
    c.hidden = whole("hidden_size", true, 0);
    c.intermediate = whole("intermediate_size", true, 0);
    c.layers = whole("num_hidden_layers", true, 0);
    c.heads = whole("num_attention_heads", true, 0);
    c.kv_heads = whole("num_key_value_heads", false, c.heads);
    c.head_dim = whole("head_dim", false, c.heads > 0 ? double(c.hidden / c.heads) : 0.0);
    c.rope_theta = num("rope_theta", false, 10000.0);
    c.rms_eps = num("rms_norm_eps", false, 1e-6);
    c.max_positions = whole("max_position_embeddings", false, 4096);
    c.tie_embeddings = flag("tie_word_embeddings", false);
    c.qkv_bias = type == "qwen2" || flag("attention_bias", false);
    if (const auto e = j.find("eos_token_id"); e != j.end() && !e->is_null()) {
        const nlohmann::json& v = e->is_array() && !e->empty() ? (*e)[0] : *e;
        if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1e9)
            throw fail("eos_token_id", "must be a token id (a whole number) or a list of them");
        c.eos_token = int(v.get<std::int64_t>());
    }
    if (const auto rs = j.find("rope_scaling"); rs != j.end() && !rs->is_null()) {
        if (!rs->is_object()) throw fail("rope_scaling", "must be an object");
        const std::string kind = str(*rs, "rope_type", "rope_scaling.rope_type",
                                     str(*rs, "type", "rope_scaling.type", std::string()));
        if (kind != "llama3")
            throw fail("rope_scaling.rope_type", "'" + kind + "' is not supported (llama3 is)");
        auto rnum = [&](const char* field, double fallback) {
            const auto it = rs->find(field);
            if (it == rs->end() || it->is_null()) return fallback;
            if (!it->is_number() || !std::isfinite(it->get<double>()))
                throw fail(std::string("rope_scaling.") + field, "must be a number");
            return it->get<double>();
        };
        c.rope_factor = rnum("factor", 8.0);
        c.rope_low_freq_factor = rnum("low_freq_factor", 1.0);
        c.rope_high_freq_factor = rnum("high_freq_factor", 4.0);
        const double omp = rnum("original_max_position_embeddings", 8192);
        if (omp < 1 || omp > 1e9 || omp != std::floor(omp))
            throw fail("rope_scaling.original_max_position_embeddings", "must be a whole number");
        c.rope_original_max_positions = int(omp);
    }
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw InputError(path, 0, "", e.what());
    }
    return c;
}

LlmConfig llama2cConfig(const llama2c::Header& h, const std::string& name) {
    LlmConfig c;
    c.name = name;
    c.vocab = h.vocab_size;
    c.hidden = h.dim;
    c.intermediate = h.hidden_dim;
    c.layers = h.n_layers;
    c.heads = h.n_heads;
    c.kv_heads = h.n_kv_heads;
    c.head_dim = h.headSize();
    c.rope_theta = 10000.0;
    c.rms_eps = 1e-5;
    c.tie_embeddings = h.shared_classifier;
    c.max_positions = h.seq_len;
    c.eos_token = llama2c::kBos; // a story ends where the next one would begin
    c.validate();
    return c;
}

LlmConfig readLlama2cConfig(const std::string& path) {
    const llama2c::Weights w = llama2c::read(path);
    return llama2cConfig(w.h, std::filesystem::path(path).stem().string());
}

} // namespace kairos::gpu
