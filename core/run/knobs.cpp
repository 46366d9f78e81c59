#include "run/knobs.h"

#include "metrics/summary.h"

#include <algorithm>
#include <cmath>

namespace kairos {

namespace {

RunKnob knob(const char* name, const char* label, const char* help, const char* unit, double lo,
             double hi, double dflt, int decimals) {
    // Every run knob spans decades: explored on a log scale.
    return RunKnob{name, label, help, unit, lo, hi, dflt, decimals, true, {}, {}, {}, {}};
}

// A goodput SLO (GoodputSlo's field), read from and written to the spec's goodput terms.
RunKnob sloKnob(const char* name, const char* label, const char* help, double lo, double hi,
                double dflt, std::optional<double> GoodputSlo::*field) {
    RunKnob k = knob(name, label, help, "ms", lo, hi, dflt, 0);
    k.get = [field, dflt](const RunSpec& s, std::int64_t) {
        return (GoodputSlo::parse(s.summary.goodput).*field).value_or(dflt);
    };
    k.set = [field](RunSpec& s, double v, std::int64_t) {
        GoodputSlo g = GoodputSlo::parse(s.summary.goodput);
        g.*field = v;
        s.summary.goodput = g.terms();
    };
    return k; // not swept: an SLO changes what is measured, not the run
}

std::vector<RunKnob> makeKnobs() {
    std::vector<RunKnob> v;
    RunKnob kv = knob("kv", "KV capacity ×", "KV cache capacity as a multiple of the profile's",
                      "× profile", 0.1, 2, 1, 2);
    kv.get = [](const RunSpec& s, std::int64_t profile_kv) {
        return s.limits.kv_capacity_tokens > 0 && profile_kv > 0
                   ? double(s.limits.kv_capacity_tokens) / double(profile_kv)
                   : 1.0;
    };
    auto tokens = [](double x, std::int64_t profile_kv) {
        return std::max<std::int64_t>(1, std::llround(double(profile_kv) * x));
    };
    kv.set = [tokens](RunSpec& s, double x, std::int64_t profile_kv) {
        s.limits.kv_capacity_tokens = tokens(x, profile_kv);
    };
    kv.axis = sweep::AxisKind::KvCapacity;
    kv.axis_value = [tokens](double x, std::int64_t profile_kv) {
        return sweep::formatValue(double(tokens(x, profile_kv)));
    };
    v.push_back(kv);

    RunKnob seqs =
        knob("seqs", "max running", "most requests running at once (vLLM's max_num_seqs)",
             "requests", 1, 512, 256, 0);
    seqs.get = [](const RunSpec& s, std::int64_t) { return double(s.limits.max_num_seqs); };
    seqs.set = [](RunSpec& s, double x, std::int64_t) {
        s.limits.max_num_seqs = static_cast<int>(std::lround(x));
    };
    seqs.axis = sweep::AxisKind::MaxNumSeqs;
    seqs.axis_value = [](double x, std::int64_t) {
        return sweep::formatValue(std::max(1.0, std::round(x)));
    };
    v.push_back(seqs);

    RunKnob rate = knob("rate", "arrival rate ×",
                        "the workload's arrival rate scaled (its gaps divided by this)",
                        "× the trace's", 0.25, 4, 1, 2);
    rate.get = [](const RunSpec& s, std::int64_t) { return s.workload.rate_scale; };
    rate.set = [](RunSpec& s, double x, std::int64_t) { s.workload.rate_scale = x; };
    rate.axis = sweep::AxisKind::RateScale;
    rate.axis_value = [](double x, std::int64_t) { return sweep::formatValue(x); };
    v.push_back(rate);

    v.push_back(sloKnob("ttft_slo", "TTFT SLO (ms)",
                        "time to first token a request must meet for goodput", 50, 20000, 2000,
                        &GoodputSlo::ttft_ms));
    v.push_back(sloKnob("tpot_slo", "TPOT SLO (ms)",
                        "time per output token a request must meet for goodput", 5, 2000, 100,
                        &GoodputSlo::tpot_ms));
    return v;
}

} // namespace

const std::vector<RunKnob>& runKnobs() {
    static const std::vector<RunKnob> knobs = makeKnobs();
    return knobs;
}

const RunKnob* findRunKnob(std::string_view name) {
    for (const RunKnob& k : runKnobs())
        if (k.name == name) return &k;
    return nullptr;
}

} // namespace kairos
