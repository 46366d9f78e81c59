#include "model/vidur_tables.h"

#include "util/input_error.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace kairos {

using json = nlohmann::json;

namespace {

// Table index for `n` at `step` (rounded up), clamped to the table: Vidur's forests are
// flat beyond the profiled range, so the edge value stands for everything past it.
std::size_t stepIndex(std::int64_t n, int step, std::size_t size) {
    const std::int64_t k = n <= 0 ? 0 : (n + step - 1) / step - 1;
    return static_cast<std::size_t>(std::clamp<std::int64_t>(k, 0, std::int64_t(size) - 1));
}

void checkRow(const std::vector<double>& v, const std::string& field) {
    if (v.empty()) throw std::invalid_argument(field + ": empty table");
    for (std::size_t i = 0; i < v.size(); ++i)
        if (!std::isfinite(v[i]) || v[i] < 0 || v[i] > 1e6)
            throw std::invalid_argument(field + "[" + std::to_string(i) +
                                        "]: must be a time in [0, 1e6] ms");
}

void checkGrid(const std::vector<std::vector<double>>& g, const std::string& field) {
    if (g.empty()) throw std::invalid_argument(field + ": empty table");
    for (std::size_t i = 0; i < g.size(); ++i) {
        if (g[i].size() != g[0].size())
            throw std::invalid_argument(field + "[" + std::to_string(i) +
                                        "]: " + std::to_string(g[i].size()) +
                                        " values where row 0 has " + std::to_string(g[0].size()));
        checkRow(g[i], field + "[" + std::to_string(i) + "]");
    }
}

} // namespace

void VidurTables::finish() {
    if (layers < 1 || layers > 1000) throw std::invalid_argument("layers: must be in [1, 1000]");
    if (tensor_parallel < 1 || tensor_parallel > 1024)
        throw std::invalid_argument("tensor_parallel: must be in [1, 1024]");
    for (const auto& [name, f] : {std::pair{"gqa_decode_overhead", gqa_decode_overhead},
                                  std::pair{"gqa_prefill_overhead", gqa_prefill_overhead},
                                  std::pair{"nccl_launch_ms", nccl_launch_ms}})
        if (!std::isfinite(f) || f < 0 || f > 10)
            throw std::invalid_argument(std::string(name) + ": must be in [0, 10]");
    if (chunk_step < 1 || chunk_step > 65536)
        throw std::invalid_argument("chunk_step: must be in [1, 65536]");
    if (token_ops.empty()) throw std::invalid_argument("token_ops_ms: no operator");
    const std::size_t n = token_ops.begin()->second.size();
    layer_tokens_ms.assign(n, 0.0);
    for (const auto& [op, v] : token_ops) {
        checkRow(v, "token_ops_ms." + op);
        if (v.size() != n)
            throw std::invalid_argument("token_ops_ms." + op + ": " + std::to_string(v.size()) +
                                        " values where the others have " + std::to_string(n));
        for (std::size_t i = 0; i < n; ++i) layer_tokens_ms[i] += v[i];
    }
    if (tensor_parallel > 1) {
        checkRow(all_reduce, "all_reduce_ms");
        if (all_reduce.size() != n)
            throw std::invalid_argument("all_reduce_ms: " + std::to_string(all_reduce.size()) +
                                        " values where token_ops have " + std::to_string(n));
        // Two per layer: after the attention's output projection and after the MLP's.
        for (std::size_t i = 0; i < n; ++i)
            layer_tokens_ms[i] += 2 * (all_reduce[i] + nccl_launch_ms);
    }
    checkGrid(decode, "decode_ms");
    checkGrid(prefill, "prefill_ms");
}

double VidurTables::batchMs(std::int64_t tokens, std::int32_t decodes, std::int64_t decode_kv,
                            std::int32_t prefills, double chunk_sq,
                            std::int64_t prefill_kv_rounded) const {
    double layer = layer_tokens_ms[stepIndex(tokens, kTokenStep, layer_tokens_ms.size())];
    if (decodes > 0) {
        // The requests' mean context, truncated, then rounded up to 64 (0 is a key).
        const std::int64_t mean = decode_kv / decodes;
        const auto& row = decode[std::min<std::size_t>(std::size_t(decodes), decode.size()) - 1];
        const std::size_t k =
            std::min<std::size_t>(std::size_t((mean + kKvStep - 1) / kKvStep), row.size() - 1);
        layer += row[k] * (decodes > 1 ? 1 + gqa_decode_overhead : 1.0);
    }
    if (prefills > 0) {
        // One equivalent chunk whose square is the chunks' summed squares, rounded to a
        // whole token as Vidur does (round half to even).
        const double c = std::nearbyint(std::sqrt(chunk_sq));
        const auto& row = prefill[std::min<std::size_t>(std::size_t(prefill_kv_rounded / kKvStep),
                                                        prefill.size() - 1)];
        // Columns at chunk_step, 2*chunk_step, ...: linear in the square between them.
        const double x = c / chunk_step - 1;
        double t;
        if (x <= 0) {
            t = row.front();
        } else if (x >= double(row.size() - 1)) {
            t = row.back();
        } else {
            const auto j = static_cast<std::size_t>(x);
            const double c0 = double(j + 1) * chunk_step, c1 = c0 + chunk_step;
            const double w = (c * c - c0 * c0) / (c1 * c1 - c0 * c0);
            t = row[j] + w * (row[j + 1] - row[j]);
        }
        layer += t * (prefills > 1 ? 1 + gqa_prefill_overhead : 1.0);
    }
    return layer * layers;
}

json VidurTables::toJson() const {
    json j{{"layers", layers},
           {"tensor_parallel", tensor_parallel},
           {"gqa_decode_overhead", gqa_decode_overhead},
           {"gqa_prefill_overhead", gqa_prefill_overhead},
           {"nccl_launch_ms", nccl_launch_ms},
           {"token_step", kTokenStep},
           {"kv_step", kKvStep},
           {"chunk_step", chunk_step},
           {"token_ops_ms", token_ops},
           {"decode_ms", decode},
           {"prefill_ms", prefill}};
    if (!all_reduce.empty()) j["all_reduce_ms"] = all_reduce;
    if (!fit_report_json.empty()) j["fit"] = json::parse(fit_report_json);
    return j;
}

VidurTables VidurTables::fromJson(const json& j, const std::string& file) {
    const std::string pre = "vidur.";
    auto need = [&](const char* key) -> const json& {
        if (!j.contains(key)) throw InputError(file, 0, pre + key, "missing");
        return j.at(key);
    };
    auto number = [&](const char* key, double def) {
        if (!j.contains(key)) return def;
        if (!j.at(key).is_number()) throw InputError(file, 0, pre + key, "must be a number");
        return j.at(key).get<double>();
    };
    auto whole = [&](const char* key, int def) {
        const double v = number(key, def);
        if (v != std::floor(v) || std::abs(v) > 1e9)
            throw InputError(file, 0, pre + key, "must be a whole number");
        return int(v);
    };
    auto row = [&](const json& v, const std::string& field) {
        if (!v.is_array()) throw InputError(file, 0, field, "must be a list of numbers");
        std::vector<double> out;
        out.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_number())
                throw InputError(file, 0, field, "item " + std::to_string(i) + " is not a number");
            out.push_back(v[i].get<double>());
        }
        return out;
    };
    auto grid = [&](const char* key) {
        const json& g = need(key);
        if (!g.is_array()) throw InputError(file, 0, pre + key, "must be a list of lists");
        std::vector<std::vector<double>> out;
        for (std::size_t i = 0; i < g.size(); ++i) out.push_back(row(g[i], pre + key));
        return out;
    };
    VidurTables t;
    if (whole("token_step", kTokenStep) != kTokenStep || whole("kv_step", kKvStep) != kKvStep)
        throw InputError(file, 0, pre + "token_step",
                         "Kairos rounds as Vidur's defaults do: token_step 8, kv_step 64");
    t.layers = whole("layers", 0);
    t.tensor_parallel = whole("tensor_parallel", 1);
    t.gqa_decode_overhead = number("gqa_decode_overhead", 0.1);
    t.gqa_prefill_overhead = number("gqa_prefill_overhead", 0.1);
    t.nccl_launch_ms = number("nccl_launch_ms", 0.02);
    t.chunk_step = whole("chunk_step", 16);
    const json& ops = need("token_ops_ms");
    if (!ops.is_object() || ops.empty())
        throw InputError(file, 0, pre + "token_ops_ms", "must map operator names to tables");
    for (const auto& [op, v] : ops.items()) t.token_ops[op] = row(v, pre + "token_ops_ms." + op);
    if (j.contains("all_reduce_ms"))
        t.all_reduce = row(j.at("all_reduce_ms"), pre + "all_reduce_ms");
    t.decode = grid("decode_ms");
    t.prefill = grid("prefill_ms");
    if (j.contains("fit")) t.fit_report_json = j.at("fit").dump();
    try {
        t.finish();
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        const auto colon = what.find(':');
        throw InputError(file, 0, pre + what.substr(0, colon),
                         colon == std::string::npos ? what : what.substr(colon + 2));
    }
    return t;
}

} // namespace kairos
