#include "model/device_profile.h"

#include "model/vidur_tables.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kairos {

nlohmann::json EteParams::toModelJson() const {
    return {{"a", a}, {"b", b}, {"c", c}, {"q0", q0}, {"q1", q1}, {"p", p}};
}

EteParams EteParams::fromModelJson(const std::string& text) {
    const auto j = parseJsonLenient(text);
    if (!j.is_object()) throw std::invalid_argument("ETE model parameters: not a JSON object");
    EteParams e;
    double* fields[] = {&e.a, &e.b, &e.c, &e.q0, &e.q1, &e.p};
    const char* names[] = {"a", "b", "c", "q0", "q1", "p"};
    for (int k = 0; k < 6; ++k) {
        const auto it = j.find(names[k]);
        if (it == j.end() || !it->is_number())
            throw std::invalid_argument(std::string("ETE model parameter '") + names[k] +
                                        "': missing or not a number");
        *fields[k] = it->get<double>();
    }
    if (const auto [field, what] = e.check(); !field.empty())
        throw std::invalid_argument("ETE model parameter '" + field + "': " + what);
    return e;
}

std::pair<std::string, std::string> EteParams::check() const {
    const struct {
        const char* name;
        double v, hi;
    } cs[] = {{"prefill.a", a, 1e4},  {"prefill.b", b, 100},  {"prefill.c", c, 1},
              {"decode.q0", q0, 1e4}, {"decode.q1", q1, 100}, {"decode.p", p, 1}};
    for (const auto& x : cs)
        if (!(x.v >= 0) || !(x.v <= x.hi))
            return {x.name, "must be a number in [0, " + std::to_string(x.hi).substr(0, 5) + "]"};
    if (!(a + b + c > 0))
        return {"prefill.b", "a one-token prefill must take time (a + b + c > 0)"};
    if (!(q0 + q1 + p > 0))
        return {"decode.q0", "a one-request decode step must take time (q0 + q1 + p > 0)"};
    return {"", ""};
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
    if (p.gpu_mem_gib < 0 || p.gpu_mem_gib > 1e6)
        throw InputError(file, 0, "gpu_mem_gib", "must be in [0, 1e6] GiB");
    p.mem_fraction = numOr(j, "mem_fraction", 0.9, file, "");
    if (p.mem_fraction <= 0 || p.mem_fraction > 1)
        throw InputError(file, 0, "mem_fraction", "must be in (0, 1]");
    if (j.contains("kv_capacity_tokens")) {
        const double c = num(j, "kv_capacity_tokens", file, "");
        if (c < 1 || c != std::floor(c) || c > 1e15)
            throw InputError(file, 0, "kv_capacity_tokens", "must be a whole number in [1, 1e15]");
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
    if (p.model.params > 1e15) throw InputError(file, 0, "model.params", "more than 1e15");
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
        if (const auto [field, what] = p.ete.check(); !field.empty())
            throw InputError(file, 0, "ete." + field, what);
        if (e.contains("mape_prefill_pct"))
            p.fit_mape_prefill = num(e, "mape_prefill_pct", file, "ete.");
        if (e.contains("mape_decode_pct"))
            p.fit_mape_decode = num(e, "mape_decode_pct", file, "ete.");
    } else if (p.exec_kind == "vidur") {
        p.vidur = std::make_shared<const VidurTables>(
            VidurTables::fromJson(need(j, "vidur", file, ""), file));
    } else if (p.exec_kind != "unit") {
        throw InputError(file, 0, "exec",
                         "unknown execution model '" + p.exec_kind +
                             "' (expected \"ete\", \"unit\" or \"vidur\")");
    }
    if (!p.kv_capacity_tokens && p.gpu_mem_gib <= 0)
        throw InputError(file, 0, "gpu_mem_gib",
                         "needed (or kv_capacity_tokens) to size the KV cache");
    if (p.kvCapacityTokens() <= 0)
        throw InputError(file, 0, "gpu_mem_gib", "the weights leave no memory for the KV cache");
    return p;
}

DeviceProfile DeviceProfile::load(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw InputError(path, 0, "", "is a folder, not a device profile");
    const std::string text = readInputFile(path, limits::kSettings);
    const json j = parseJsonDocument(text, path);
    try {
        return fromJson(j, path);
    } catch (const InputError& e) {
        // fromJson names the field; the text says on which line it is.
        if (e.line() != 0) throw;
        throw InputError(path, JsonLines(text).line(e.field()), e.field(), e.message());
    }
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
    if (exec_kind == "vidur" && vidur) j["vidur"] = vidur->toJson();
    j["provenance"] = provenance;
    return j;
}

} // namespace kairos
