#include "model/device_profile.h"

#include "model/input_error.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kairos {

nlohmann::json EteParams::toModelJson() const {
    return {{"a", a}, {"b", b}, {"c", c}, {"q0", q0}, {"q1", q1}, {"p", p}};
}

EteParams EteParams::fromModelJson(const std::string& text) {
    const auto j = nlohmann::json::parse(text);
    EteParams e;
    e.a = j.at("a").get<double>();
    e.b = j.at("b").get<double>();
    e.c = j.at("c").get<double>();
    e.q0 = j.at("q0").get<double>();
    e.q1 = j.at("q1").get<double>();
    e.p = j.at("p").get<double>();
    return e;
}
namespace {

using nlohmann::json;

const json& need(const json& j, const char* key, const std::string& file, const std::string& ctx) {
    auto it = j.find(key);
    if (it == j.end()) throw InputError(file, 0, ctx + key, "missing");
    return *it;
}

double num(const json& j, const char* key, const std::string& file, const std::string& ctx) {
    const json& v = need(j, key, file, ctx);
    if (!v.is_number()) throw InputError(file, 0, ctx + key, "not a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) throw InputError(file, 0, ctx + key, "not finite");
    return d;
}

double numOr(const json& j, const char* key, double dflt, const std::string& file,
             const std::string& ctx) {
    return j.contains(key) ? num(j, key, file, ctx) : dflt;
}

int positiveInt(const json& j, const char* key, const std::string& file, const std::string& ctx) {
    const double d = num(j, key, file, ctx);
    if (d <= 0 || d != std::floor(d) || d > 1e9)
        throw InputError(file, 0, ctx + key, "must be a positive whole number");
    return static_cast<int>(d);
}

std::string str(const json& j, const char* key, const std::string& dflt) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : dflt;
}

} // namespace

std::int64_t kvCapacityFromMemory(const ModelConfig& m, double total_bytes, double fraction) {
    const double free_bytes = total_bytes * fraction - m.weightBytes();
    const auto per_token = m.kvBytesPerToken();
    if (free_bytes <= 0 || per_token <= 0) return 0;
    return static_cast<std::int64_t>(std::floor(free_bytes / static_cast<double>(per_token)));
}

std::int64_t DeviceProfile::kvCapacityTokens() const {
    if (kv_capacity_tokens) return *kv_capacity_tokens;
    const double bytes = gpu_count * gpu_mem_gib * 1024.0 * 1024.0 * 1024.0;
    return kvCapacityFromMemory(model, bytes, mem_fraction);
}

DeviceProfile DeviceProfile::fromJson(const json& j, const std::string& file) {
    if (!j.is_object()) throw InputError(file, 0, "", "a device profile must be a JSON object");
    DeviceProfile p;
    p.name = str(j, "name", "");
    if (p.name.empty()) throw InputError(file, 0, "name", "missing or not a string");
    p.description = str(j, "description", "");
    p.hardware = str(j, "hardware", "");
    p.provenance = str(j, "provenance", "");
    p.gpu_count = j.contains("gpu_count") ? positiveInt(j, "gpu_count", file, "") : 1;
    p.gpu_mem_gib = numOr(j, "gpu_mem_gib", 0.0, file, "");
    p.mem_fraction = numOr(j, "mem_fraction", 0.9, file, "");
    if (p.mem_fraction <= 0 || p.mem_fraction > 1)
        throw InputError(file, 0, "mem_fraction", "must be in (0, 1]");
    if (j.contains("kv_capacity_tokens")) {
        const double c = num(j, "kv_capacity_tokens", file, "");
        if (c <= 0) throw InputError(file, 0, "kv_capacity_tokens", "must be positive");
        p.kv_capacity_tokens = static_cast<std::int64_t>(c);
    }
    const json& m = need(j, "model", file, "");
    const std::string mc = "model.";
    p.model.name = str(m, "name", "");
    p.model.layers = positiveInt(m, "layers", file, mc);
    p.model.hidden = positiveInt(m, "hidden", file, mc);
    p.model.heads = positiveInt(m, "heads", file, mc);
    p.model.kv_heads = positiveInt(m, "kv_heads", file, mc);
    p.model.head_dim = positiveInt(m, "head_dim", file, mc);
    p.model.dtype_bytes = positiveInt(m, "dtype_bytes", file, mc);
    p.model.params = num(m, "params", file, mc);
    if (m.contains("intermediate")) p.model.intermediate = positiveInt(m, "intermediate", file, mc);
    if (m.contains("vocab")) p.model.vocab = positiveInt(m, "vocab", file, mc);
    if (p.model.params <= 0) throw InputError(file, 0, "model.params", "must be positive");

    p.exec_kind = str(j, "exec", "ete");
    if (p.exec_kind == "ete") {
        const json& e = need(j, "ete", file, "");
        const json& pre = need(e, "prefill", file, "ete.");
        const json& dec = need(e, "decode", file, "ete.");
        p.ete.a = num(pre, "a", file, "ete.prefill.");
        p.ete.b = num(pre, "b", file, "ete.prefill.");
        p.ete.c = num(pre, "c", file, "ete.prefill.");
        p.ete.q0 = num(dec, "q0", file, "ete.decode.");
        p.ete.q1 = num(dec, "q1", file, "ete.decode.");
        p.ete.p = num(dec, "p", file, "ete.decode.");
        if (e.contains("mape_prefill_pct"))
            p.fit_mape_prefill = num(e, "mape_prefill_pct", file, "ete.");
        if (e.contains("mape_decode_pct"))
            p.fit_mape_decode = num(e, "mape_decode_pct", file, "ete.");
    } else if (p.exec_kind != "unit") {
        throw InputError(file, 0, "exec",
                         "unknown execution model '" + p.exec_kind +
                             "' (expected \"ete\" or \"unit\")");
    }
    if (!p.kv_capacity_tokens && p.gpu_mem_gib <= 0)
        throw InputError(file, 0, "gpu_mem_gib",
                         "needed (or kv_capacity_tokens) to size the KV cache");
    if (p.kvCapacityTokens() <= 0)
        throw InputError(file, 0, "gpu_mem_gib", "the weights leave no memory for the KV cache");
    return p;
}

DeviceProfile DeviceProfile::load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(path, 0, "", "cannot open device profile");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::exception& e) {
        throw InputError(path, 0, "", std::string("not valid JSON: ") + e.what());
    }
    return fromJson(j, path);
}

json DeviceProfile::toJson() const {
    json j;
    j["name"] = name;
    j["description"] = description;
    j["hardware"] = hardware;
    j["gpu_count"] = gpu_count;
    j["gpu_mem_gib"] = gpu_mem_gib;
    j["mem_fraction"] = mem_fraction;
    if (kv_capacity_tokens) j["kv_capacity_tokens"] = *kv_capacity_tokens;
    j["model"] = {{"name", model.name},
                  {"layers", model.layers},
                  {"hidden", model.hidden},
                  {"heads", model.heads},
                  {"kv_heads", model.kv_heads},
                  {"head_dim", model.head_dim},
                  {"dtype_bytes", model.dtype_bytes},
                  {"params", model.params}};
    if (model.intermediate > 0) j["model"]["intermediate"] = model.intermediate;
    if (model.vocab > 0) j["model"]["vocab"] = model.vocab;
    j["exec"] = exec_kind;
    if (exec_kind == "ete") {
        j["ete"] = {{"prefill", {{"a", ete.a}, {"b", ete.b}, {"c", ete.c}}},
                    {"decode", {{"q0", ete.q0}, {"q1", ete.q1}, {"p", ete.p}}}};
        if (fit_mape_prefill) j["ete"]["mape_prefill_pct"] = *fit_mape_prefill;
        if (fit_mape_decode) j["ete"]["mape_decode_pct"] = *fit_mape_decode;
    }
    j["provenance"] = provenance;
    return j;
}

} // namespace kairos
