#include "model/known_models.h"

namespace kairos {
namespace {
const std::vector<ModelConfig>& table() {
    static const std::vector<ModelConfig> t = {
        // name, layers, hidden, heads, kv_heads, head_dim, dtype bytes (fp16), params,
        // intermediate (MLP), vocabulary
        {"llama2-70b", 80, 8192, 64, 8, 128, 2, 68.98e9, 28672, 32000},
        {"llama2-7b", 32, 4096, 32, 32, 128, 2, 6.74e9, 11008, 32000},
        {"llama3-8b", 32, 4096, 32, 8, 128, 2, 8.03e9, 14336, 128256},
        {"bloom-176b", 70, 14336, 112, 112, 128, 2, 176.25e9, 57344, 250880},
        {"qwen2.5-7b", 28, 3584, 28, 4, 128, 2, 7.62e9, 18944, 152064},
        {"qwen2.5-0.5b", 24, 896, 14, 2, 64, 2, 0.494e9, 4864, 151936},
        // HuggingFaceTB/SmolLM-135M (Llama layout, tied embeddings): small enough to
        // profile on a laptop CPU.
        {"smollm-135m", 30, 576, 9, 3, 64, 2, 134.5e6, 1536, 49152},
    };
    return t;
}
} // namespace

std::optional<ModelConfig> knownModel(const std::string& name) {
    for (const auto& m : table())
        if (m.name == name) return m;
    return std::nullopt;
}

std::vector<std::string> knownModelNames() {
    std::vector<std::string> n;
    for (const auto& m : table()) n.push_back(m.name);
    return n;
}

} // namespace kairos
