// Mooncake traces (FAST'25 release): one JSON object per line,
// {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}.
#include "model/input_error.h"
#include "workload/json_line.h"
#include "workload/readers.h"
#include "workload/text.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace kairos {

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
        for (const auto& [k, v] : {std::pair<const char*, double>{"input_length", in_len},
                                   {"output_length", out_len}})
            if (v > kMaxRequestTokens)
                throw InputError(name, lineno, k,
                                 "more than " + std::to_string(kMaxRequestTokens) + " tokens");
        if (in_len != std::floor(in_len))
            throw InputError(name, lineno, "input_length", "not a whole number");
        if (out_len != std::floor(out_len))
            throw InputError(name, lineno, "output_length", "not a whole number");
        r.prompt_tokens = static_cast<int>(in_len);
        r.output_tokens = static_cast<int>(out_len);
        if (const auto h = j.find("hash_ids"); h != j.end() && h->is_array())
            blocks += static_cast<long>(h->size());
        w.requests.push_back(std::move(r));
        if (limit && w.requests.size() >= limit) break;
    }
    if (lineno == 0) throw InputError(name, 0, "", "empty file");
    w.meta["prefix_blocks_total"] = std::to_string(blocks);
    w.normalise(0.0);
    return w;
}

} // namespace kairos
