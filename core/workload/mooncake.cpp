// Mooncake traces (FAST'25 release): one JSON object per line,
// {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}.
#include "util/input_error.h"
#include "util/json_line.h"
#include "util/text.h"
#include "workload/readers.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace kairos {

namespace {
constexpr std::int64_t kMooncakeBlock = 512; // tokens per hash_ids entry (the trace's)
} // namespace

Workload readMooncake(std::istream& in, const std::string& name, std::size_t limit) {
    Workload w;
    w.name = name;
    w.source = name;
    std::string line;
    long lineno = 0;
    long blocks = 0;
    while (text::nextLine(in, line)) {
        ++lineno;
        if (text::trim(line).empty()) continue;
        const nlohmann::json j = parseJsonObjectLine(line, name, lineno);
        auto field = [&](const char* key, double lo) {
            const auto it = j.find(key);
            if (it == j.end()) throw InputError(name, lineno, key, "missing");
            if (!it->is_number()) throw InputError(name, lineno, key, "not a number");
            const double v = it->get<double>();
            if (!std::isfinite(v) || v < lo)
                throw InputError(name, lineno, key,
                                 "must be a number >= " + std::to_string(static_cast<int>(lo)));
            return v;
        };
        Request r;
        r.id = static_cast<std::int64_t>(w.requests.size());
        r.arrival = field("timestamp", 0) / 1000.0;
        if (r.arrival > kMaxSeconds)
            throw InputError(name, lineno, "timestamp", "more than 1e12 ms (31.7 years)");
        const double in_len = field("input_length", 1), out_len = field("output_length", 1);
        for (const auto& [k, v] :
             {std::pair<const char*, double>{"input_length", in_len}, {"output_length", out_len}})
            if (v > kMaxRequestTokens)
                throw InputError(name, lineno, k,
                                 "more than " + std::to_string(kMaxRequestTokens) + " tokens");
        if (in_len != std::floor(in_len))
            throw InputError(name, lineno, "input_length", "not a whole number");
        if (out_len != std::floor(out_len))
            throw InputError(name, lineno, "output_length", "not a whole number");
        r.prompt_tokens = static_cast<int>(in_len);
        r.output_tokens = static_cast<int>(out_len);
        // hash_ids: one id per 512-token block of the prompt, the same id for the same
        // block after the same prefix (the trace's own definition): the prefix spans the
        // cache keys on (sim/prefix_cache.h); the last block may be partial.
        if (const auto h = j.find("hash_ids"); h != j.end()) {
            if (!h->is_array()) throw InputError(name, lineno, "hash_ids", "not a list");
            const auto most =
                (static_cast<std::int64_t>(in_len) + kMooncakeBlock - 1) / kMooncakeBlock;
            if (static_cast<std::int64_t>(h->size()) > most)
                throw InputError(name, lineno, "hash_ids",
                                 std::to_string(h->size()) + " blocks of " +
                                     std::to_string(kMooncakeBlock) + " tokens for " +
                                     std::to_string(r.prompt_tokens) + " input tokens (at most " +
                                     std::to_string(most) + ")");
            r.prefix.reserve(h->size());
            std::int64_t at = 0;
            for (std::size_t k = 0; k < h->size(); ++k) {
                const auto& e = (*h)[k];
                if (!e.is_number_unsigned())
                    throw InputError(name, lineno, "hash_ids[" + std::to_string(k) + "]",
                                     "not a whole number >= 0");
                const auto tokens =
                    std::min<std::int64_t>(kMooncakeBlock, std::int64_t(in_len) - at);
                r.prefix.push_back({e.get<std::uint64_t>(), static_cast<std::int32_t>(tokens)});
                at += tokens;
            }
            blocks += static_cast<long>(h->size());
        }
        w.requests.push_back(std::move(r));
        if (limit && w.requests.size() >= limit) break;
    }
    if (lineno == 0) throw InputError(name, 0, "", "empty file");
    w.meta["prefix_blocks_total"] = std::to_string(blocks);
    w.normalise(0.0);
    return w;
}

} // namespace kairos
