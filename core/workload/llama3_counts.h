// Token counts made once with Llama 3's own tokenizer (tools/llama3_tokens/count.mjs, from
// the npm registry's llama3-tokenizer-js 1.2.0) for the TimelyLLM drone traces' task and
// plan texts and TypeFly's system prompt: resources/timelyllm/llama3_token_counts.json,
// compiled in. TimelyLLM's paper generates its plans with Llama 3-8B, so a plan's length is
// its Llama 3 token count plus the EOS that ends it; a text not counted there is estimated
// from its characters (estimatedTokens), and the readers say how many they estimated.
#pragma once

#include <string>

namespace kairos::llama3 {

// The Llama 3 token count of exactly this text (no BOS/EOS), or -1 when it was not counted.
int countedTokens(const std::string& text);

// TypeFly's system prompt as ../shared/data/typefly ships it (1,308 tokens; the paper's
// section 4.1 speaks of a 1,300-token robot-control context).
int typeflySystemPromptTokens();

// The tokenizer the counts came from, for settings and metadata.
const std::string& tokenizerName();

// The count when counted, else ceil(characters / chars_per_token) (3 suits MiniSpec's
// code-like plans, 4 English); `counted` (optional) says which.
int tokensOf(const std::string& text, double chars_per_token, bool* counted = nullptr);

} // namespace kairos::llama3
