#include "workload/llama3_counts.h"

#include "llama3_token_counts_json.h" // generated from resources/timelyllm (core/CMakeLists.txt)

#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace kairos::llama3 {
namespace {
struct Table {
    std::unordered_map<std::string, int> texts;
    int system_prompt = 0;
    std::string tokenizer;
};

const Table& table() {
    static const Table t = [] {
        Table r;
        const auto j = nlohmann::json::parse(kLlama3TokenCountsJson);
        r.tokenizer = j.at("tokenizer").get<std::string>();
        r.system_prompt = j.at("typefly_system_prompt").at("tokens").get<int>();
        for (const auto& [text, n] : j.at("texts").items()) r.texts[text] = n.get<int>();
        return r;
    }();
    return t;
}
} // namespace

int countedTokens(const std::string& text) {
    const auto& t = table().texts;
    const auto f = t.find(text);
    return f == t.end() ? -1 : f->second;
}

int typeflySystemPromptTokens() {
    return table().system_prompt;
}

const std::string& tokenizerName() {
    return table().tokenizer;
}

int tokensOf(const std::string& text, double chars_per_token, bool* counted) {
    const int n = countedTokens(text);
    if (counted) *counted = n >= 0;
    if (n >= 0) return n;
    return static_cast<int>(std::ceil(static_cast<double>(text.size()) / chars_per_token));
}

} // namespace kairos::llama3
