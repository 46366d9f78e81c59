#include "fit/descriptors.h"

#include "hardware_tables.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

namespace kairos::hw {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// A figure that may be left empty (not known); when given, a finite number > 0.
double optionalPositive(std::string_view s, const std::string& file, long line, const char* field) {
    if (text::trim(s).empty()) return kUnknown;
    const double v = text::needDouble(s, file, line, field);
    if (!(v > 0)) throw InputError(file, line, field, "must be above 0 (or empty: not known)");
    return v;
}

double needPositive(std::string_view s, const std::string& file, long line, const char* field) {
    const double v = text::needDouble(s, file, line, field);
    if (!(v > 0)) throw InputError(file, line, field, "must be above 0");
    return v;
}

std::string needText(std::string_view s, const std::string& file, long line, const char* field) {
    const std::string t(text::trim(s));
    if (t.empty()) throw InputError(file, line, field, "empty");
    return t;
}

// The source is the last column and may hold commas: the rest of the line.
std::string restOf(const std::vector<std::string_view>& f, std::size_t from) {
    std::string s;
    for (std::size_t i = from; i < f.size(); ++i) s += (i > from ? "," : "") + std::string(f[i]);
    return s;
}

// The source column: the rest of the line when it is the last column; never empty.
std::string sourceOf(const std::vector<std::string_view>& f, std::size_t col, std::size_t columns,
                     const std::string& file, long line) {
    std::string s = col + 1 == columns ? restOf(f, col) : std::string(f[col]);
    if (text::trim(s).empty())
        throw InputError(file, line, "source", "empty: say where the figures come from");
    return s;
}

// A row under its lower-case name; a name twice in one file is an error.
template <class Row>
void addOnce(std::map<std::string, Row>& rows, const std::string& key, const Row& row,
             const std::string& file, long line, const char* field) {
    if (!rows.emplace(lower(key), row).second)
        throw InputError(file, line, field, "'" + key + "' appears twice");
}

bool oneByte(const std::string& precision, const char* what) {
    const std::string p = lower(precision);
    const std::string key = std::string(what) + "=";
    const auto at = p.find(key);
    if (at == std::string::npos) return false;
    const std::string v = p.substr(at + key.size(), 4);
    return v.rfind("fp8", 0) == 0 || v.rfind("int8", 0) == 0;
}

} // namespace

std::pair<std::string, int> splitHardware(const std::string& hardware) {
    static const std::regex re(R"(^(.*?)\s*\bx(\d{1,4})\s*$)", std::regex::icase);
    std::smatch m;
    if (std::regex_match(hardware, m, re)) return {m[1].str(), std::max(1, std::stoi(m[2]))};
    return {std::string(text::trim(hardware)), 1};
}

const Descriptors& Descriptors::shipped() {
    static const Descriptors d = [] {
        Descriptors t;
        std::istringstream a(kAcceleratorsCsv), m(kModelsCsv);
        t.addAccelerators(a, "resources/hardware/accelerators.csv");
        t.addModels(m, "resources/hardware/models.csv");
        return t;
    }();
    return d;
}

void Descriptors::addFile(const std::string& path) {
    const std::string text = readInputFile(path, limits::kTable);
    if (text::trim(text).empty())
        throw InputError(path, 0, "",
                         "empty: no header line (a FIFO that no program writes reads as empty)");
    std::istringstream in(text);
    std::string first;
    std::getline(in, first);
    in.clear();
    in.seekg(0);
    if (first.find("chip") != std::string::npos)
        addAccelerators(in, path);
    else if (first.find("parameters_b") != std::string::npos)
        addModels(in, path);
    else
        throw InputError(path, 1, "",
                         "neither an accelerator table (chip,vendor,memory_gb,"
                         "memory_bandwidth_gbps,fp16_dense_tflops,interconnect_gbps,source) nor a "
                         "model table (model,parameters_b,active_parameters_b,layers,hidden,"
                         "kv_heads,head_dim,source)");
}

void Descriptors::addAccelerators(std::istream& in, const std::string& name) {
    const text::CsvHeader h(in, name);
    const std::size_t c_chip = h.column("chip"), c_vendor = h.column("vendor"),
                      c_mem = h.column("memory_gb"), c_bw = h.column("memory_bandwidth_gbps"),
                      c_fl = h.column("fp16_dense_tflops"), c_ic = h.column("interconnect_gbps"),
                      c_src = h.column("source");
    std::map<std::string, Accelerator> rows;
    text::forCsvRows(
        in, name, h, 0,
        [&](const std::vector<std::string_view>& f, long line) {
            Accelerator a;
            a.chip = needText(f[c_chip], name, line, "chip");
            if (splitHardware(a.chip).second != 1 || a.chip != splitHardware(a.chip).first)
                throw InputError(
                    name, line, "chip",
                    "a chip without its device count (\"Nvidia H100 GPU\", not \"... x4\")");
            a.vendor = needText(f[c_vendor], name, line, "vendor");
            a.memory_gb = optionalPositive(f[c_mem], name, line, "memory_gb");
            a.bandwidth_gbps = optionalPositive(f[c_bw], name, line, "memory_bandwidth_gbps");
            a.fp16_tflops = optionalPositive(f[c_fl], name, line, "fp16_dense_tflops");
            a.interconnect_gbps = optionalPositive(f[c_ic], name, line, "interconnect_gbps");
            a.source = sourceOf(f, c_src, h.count(), name, line);
            addOnce(rows, a.chip, a, name, line, "chip");
        },
        text::CsvRowWidth::LastTakesRest);
    for (auto& [k, a] : rows) acc_[k] = std::move(a);
}

void Descriptors::addModels(std::istream& in, const std::string& name) {
    const text::CsvHeader h(in, name);
    const std::size_t c_model = h.column("model"), c_p = h.column("parameters_b"),
                      c_a = h.column("active_parameters_b"), c_l = h.column("layers"),
                      c_h = h.column("hidden"), c_kv = h.column("kv_heads"),
                      c_hd = h.column("head_dim"), c_src = h.column("source");
    std::map<std::string, ModelSpec> rows;
    text::forCsvRows(
        in, name, h, 0,
        [&](const std::vector<std::string_view>& f, long line) {
            ModelSpec m;
            m.model = needText(f[c_model], name, line, "model");
            m.params_b = needPositive(f[c_p], name, line, "parameters_b");
            m.active_b = needPositive(f[c_a], name, line, "active_parameters_b");
            if (m.active_b > m.params_b)
                throw InputError(name, line, "active_parameters_b", "above parameters_b");
            m.layers = text::needCount(f[c_l], name, line, "layers", 1);
            m.hidden = text::needCount(f[c_h], name, line, "hidden", 1);
            m.kv_heads = text::needCount(f[c_kv], name, line, "kv_heads", 1);
            m.head_dim = text::needCount(f[c_hd], name, line, "head_dim", 1);
            m.source = sourceOf(f, c_src, h.count(), name, line);
            addOnce(rows, m.model, m, name, line, "model");
        },
        text::CsvRowWidth::LastTakesRest);
    for (auto& [k, m] : rows) models_[k] = std::move(m);
}

const Accelerator* Descriptors::accelerator(const std::string& chip) const {
    const auto it = acc_.find(lower(chip));
    return it == acc_.end() ? nullptr : &it->second;
}

const ModelSpec* Descriptors::model(const std::string& name) const {
    const auto it = models_.find(lower(name));
    return it == models_.end() ? nullptr : &it->second;
}

nlohmann::json Descriptors::toJson() const {
    auto num = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
    nlohmann::json a = nlohmann::json::array(), m = nlohmann::json::array();
    for (const auto& [k, x] : acc_)
        a.push_back({{"chip", x.chip},
                     {"vendor", x.vendor},
                     {"memory_gb", num(x.memory_gb)},
                     {"memory_bandwidth_gbps", num(x.bandwidth_gbps)},
                     {"fp16_dense_tflops", num(x.fp16_tflops)},
                     {"interconnect_gbps", num(x.interconnect_gbps)},
                     {"source", x.source}});
    for (const auto& [k, x] : models_)
        m.push_back({{"model", x.model},
                     {"parameters_b", x.params_b},
                     {"active_parameters_b", x.active_b},
                     {"layers", x.layers},
                     {"hidden", x.hidden},
                     {"kv_heads", x.kv_heads},
                     {"head_dim", x.head_dim},
                     {"source", x.source}});
    return {{"accelerators", a}, {"models", m}};
}

Descriptors Descriptors::fromJson(const nlohmann::json& j) {
    Descriptors d;
    try {
        auto num = [](const nlohmann::json& v) { return v.is_null() ? kUnknown : v.get<double>(); };
        for (const auto& x : j.at("accelerators")) {
            Accelerator a;
            a.chip = x.at("chip").get<std::string>();
            a.vendor = x.at("vendor").get<std::string>();
            a.memory_gb = num(x.at("memory_gb"));
            a.bandwidth_gbps = num(x.at("memory_bandwidth_gbps"));
            a.fp16_tflops = num(x.at("fp16_dense_tflops"));
            a.interconnect_gbps = num(x.at("interconnect_gbps"));
            a.source = x.at("source").get<std::string>();
            d.acc_[lower(a.chip)] = a;
        }
        for (const auto& x : j.at("models")) {
            ModelSpec m;
            m.model = x.at("model").get<std::string>();
            m.params_b = x.at("parameters_b").get<double>();
            m.active_b = x.at("active_parameters_b").get<double>();
            m.layers = x.at("layers").get<int>();
            m.hidden = x.at("hidden").get<int>();
            m.kv_heads = x.at("kv_heads").get<int>();
            m.head_dim = x.at("head_dim").get<int>();
            m.source = x.at("source").get<std::string>();
            d.models_[lower(m.model)] = m;
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("hardware descriptors: ") + e.what());
    }
    return d;
}

std::optional<Roofline> roofline(const Descriptors& d, const ala::BenchRow& r,
                                 std::string* missing) {
    const auto [chip, n] = splitHardware(r.hardware);
    const Accelerator* a = d.accelerator(chip);
    const ModelSpec* m = d.model(r.model);
    auto fail = [&](const std::string& why) -> std::optional<Roofline> {
        if (missing) *missing = why;
        return std::nullopt;
    };
    if (!a) return fail("no row for the hardware '" + chip + "'");
    if (std::isnan(a->bandwidth_gbps)) return fail("no memory bandwidth for '" + chip + "'");
    if (std::isnan(a->fp16_tflops)) return fail("no FP16 peak for '" + chip + "'");
    if (!m) return fail("no row for the model '" + r.model + "'");
    Roofline f;
    f.devices = n;
    f.tensor_parallel = lower(r.framework) != "llama.cpp";
    const int eff = f.tensor_parallel ? n : 1;
    f.bandwidth = a->bandwidth_gbps * 1e9 * eff;
    f.flops = a->fp16_tflops * 1e12 * eff;
    if (f.tensor_parallel && n > 1 && !std::isnan(a->interconnect_gbps))
        f.interconnect = a->interconnect_gbps * 1e9;
    const double wb = oneByte(r.precision, "w") ? 1.0 : 2.0;
    const double kb = oneByte(r.precision, "kv") ? 1.0 : 2.0;
    f.weight_bytes = m->params_b * 1e9 * wb;
    f.active_params = m->active_b * 1e9;
    if (m->active_b < m->params_b) {
        // Mixture of experts: with k of E experts active, dense + k/E * experts = active and
        // dense + experts = all; the share k/E is not in the table, Mixtral's 2 of 8 taken.
        constexpr double share = 2.0 / 8.0;
        const double experts = (m->params_b - m->active_b) / (1 - share);
        f.expert_bytes = experts * 1e9 * wb;
        f.expert_active_share = share;
    }
    f.dense_bytes = f.weight_bytes - f.expert_bytes;
    f.kv_bytes_per_token = m->kvBytesPerToken(kb);
    f.layers = m->layers;
    f.hidden = m->hidden;
    return f;
}

double Roofline::throughput(int ii, int oo, int bb) const {
    const double b = std::max(1, bb);
    // Two all-reduces of the activations per layer (ring: 2 (n - 1) / n of the bytes).
    auto allReduce = [&](double tokens) {
        if (std::isnan(interconnect) || devices < 2) return 0.0;
        return 2.0 * layers * 2.0 * (devices - 1) / devices * tokens * hidden * 2.0 / interconnect;
    };
    // Prefill: every weight read once; 2 FLOP per active parameter and token, and causal
    // attention's 2 * layers * hidden * ii^2 per sequence.
    const double pre_flops =
        2.0 * active_params * b * ii + 2.0 * layers * hidden * double(ii) * ii * b;
    const double prefill =
        std::max(pre_flops / flops, weight_bytes / bandwidth) + allReduce(b * ii);
    // A decode step at the mean context: the dense weights, the experts any sequence routes
    // to, and every sequence's KV.
    const double ctx = ii + oo / 2.0;
    const double experts_read = expert_bytes * (1.0 - std::pow(1.0 - expert_active_share, b));
    const double step_bytes = dense_bytes + experts_read + b * ctx * kv_bytes_per_token;
    const double step_flops = 2.0 * active_params * b + 4.0 * layers * hidden * ctx * b;
    const double step = std::max(step_bytes / bandwidth, step_flops / flops) + allReduce(b);
    return b * (ii + oo) / (prefill + oo * step);
}

} // namespace kairos::hw
