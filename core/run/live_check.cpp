#include "run/live_check.h"

#include "metrics/request_metrics.h"
#include "metrics/stats.h"
#include "metrics/summary.h"

#include <map>
#include <memory>

namespace kairos {

ErrorStats relErrors(const std::vector<double>& e) {
    ErrorStats s;
    s.n = e.size();
    if (e.empty()) return s;
    const Stats d = describe(e, {50, 90});
    s.median = d.percentile(50);
    s.p90 = d.percentile(90);
    return s;
}

SimErrors simErrors(const RunLog& sim, const RunLog& live) {
    const auto ms = perRequest(sim), ml = perRequest(live);
    std::vector<double> e_ttft, e_e2el;
    SimErrors out;
    for (std::size_t i = 0; i < ms.size() && i < ml.size(); ++i) {
        if (!ms[i].finished || !ml[i].finished) continue;
        e_ttft.push_back(std::abs(ms[i].ttft() - ml[i].ttft()) / ml[i].ttft());
        e_e2el.push_back(std::abs(ms[i].e2el() - ml[i].e2el()) / ml[i].e2el());
        out.rows.push_back({{"id", ms[i].id},
                            {"ttft_live", ml[i].ttft()},
                            {"ttft_sim", ms[i].ttft()},
                            {"e2el_live", ml[i].e2el()},
                            {"e2el_sim", ms[i].e2el()}});
    }
    out.ttft = relErrors(e_ttft);
    out.e2el = relErrors(e_e2el);
    return out;
}

EteParams scaledEte(EteParams p, double k) {
    for (double* x : {&p.a, &p.b, &p.c, &p.q0, &p.q1, &p.p}) *x *= k;
    return p;
}

nlohmann::json iterationErrors(const std::vector<Simulator::LiveIteration>& it) {
    std::map<std::string, std::vector<double>> sgn, mag, meas;
    std::vector<double> gaps;
    for (std::size_t i = 0; i < it.size(); ++i) {
        const auto& x = it[i];
        if (!(x.measured > 0)) continue;
        const std::string kind = x.shape.prefill_seqs == 0  ? "decode"
                                 : x.shape.decode_seqs == 0 ? "prefill"
                                                            : "mixed";
        const double e = (x.predicted - x.measured) / x.measured;
        sgn[kind].push_back(e);
        mag[kind].push_back(std::abs(e));
        meas[kind].push_back(x.measured);
        if (i > 0) gaps.push_back(x.gap);
    }
    auto median = [](const std::vector<double>& v) { return describe(v, {50}).percentile(50); };
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [k, v] : sgn)
        kinds[k] = {{"count", v.size()},
                    {"median_signed", median(v)},
                    {"median_abs", median(mag[k])},
                    {"median_measured", median(meas[k])}};
    return {{"kinds", kinds}, {"median_gap", gaps.empty() ? 0.0 : median(gaps)}};
}

LiveCheck checkAgainstLive(const LiveCheckInput& in, const RunLog& live,
                           const std::vector<Simulator::LiveIteration>& live_iterations,
                           const RunContext& ctx) {
    LiveCheck out;
    PreparedRun prep = in.prep;
    const RunLog sim = simulatePrepared(prep, ctx);
    out.iterations = iterationErrors(live_iterations);
    RunLog compared = sim;
    if (in.lengths_told) {
        out.planned = simErrors(sim, live);
        auto told = std::make_shared<Workload>(*prep.workload);
        std::map<std::int64_t, std::int32_t> generated;
        for (const auto& r : perRequest(live))
            if (r.output_tokens > 0) generated[r.id] = r.output_tokens;
        for (auto& r : told->requests)
            if (auto it = generated.find(r.id); it != generated.end()) r.output_tokens = it->second;
        prep.workload = told;
        compared = simulatePrepared(prep, ctx);
    }
    out.errors = simErrors(compared, live);
    // Both runs have the engine's prefix cache (when on), but what it finds depends on
    // timing (which requests overlap): the hits are compared, as the latencies are.
    out.prefix_cache = nullptr;
    if (prep.limits.prefix_caching) {
        const Summary ls = summarize(live), ss = summarize(compared);
        out.prefix_cache = {{"block_size", prep.limits.block_size},
                            {"live_hit_rate", ls.prefix_cache_hit_rate},
                            {"live_cached_tokens", ls.prefix_cached_tokens},
                            {"live_reused_tokens", in.backend_reused_tokens},
                            {"simulated_hit_rate", ss.prefix_cache_hit_rate},
                            {"simulated_cached_tokens", ss.prefix_cached_tokens}};
    }
    // It uses a timing taken after the run, so it explains the error; it is no forecast.
    out.mean_speed = 0.5 * (in.reference_before + in.reference_after) / in.reference_profile;
    PreparedRun bracketed = prep;
    bracketed.model =
        std::make_shared<const EteModel>(scaledEte(in.ete, out.mean_speed), "bracketed");
    out.bracketed = simErrors(simulatePrepared(bracketed, ctx), live);
    return out;
}

} // namespace kairos
