#pragma once
// Shapes of the models the shipped profiles and traces refer to, from each model's
// published config.json (num_hidden_layers, hidden_size, num_attention_heads,
// num_key_value_heads, head_dim = hidden / heads) and parameter count.
#include "model/model_config.h"

#include <optional>
#include <string>
#include <vector>

namespace kairos {

std::optional<ModelConfig> knownModel(const std::string& name);
std::vector<std::string> knownModelNames();

} // namespace kairos
