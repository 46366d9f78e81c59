#include "metrics/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace kairos {

std::vector<MetricRow> keyMetrics(const Summary& s) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // P99 when there were values and it was computed (--percentiles may leave it out).
    auto p99 = [nan](const Stats& st) {
        if (st.count == 0) return nan;
        for (const auto& [q, v] : st.percentiles)
            if (q == 99) return v;
        return nan;
    };
    std::vector<MetricRow> m{
        {"completed", "Completed", double(s.completed), Better::Higher},
        {"killed", "Killed", double(s.killed), Better::Lower},
        {"request_throughput", "Request throughput (req/s)", s.request_throughput, Better::Higher},
        {"output_throughput", "Output token throughput (tok/s)", s.output_throughput,
         Better::Higher},
        {"mean_ttft_ms", "Mean TTFT (ms)", s.ttft_ms.mean, Better::Lower},
        {"median_ttft_ms", "Median TTFT (ms)", s.ttft_ms.median, Better::Lower},
        {"p99_ttft_ms", "P99 TTFT (ms)", p99(s.ttft_ms), Better::Lower},
        {"mean_tpot_ms", "Mean TPOT (ms)", s.tpot_ms.mean, Better::Lower},
        {"p99_tpot_ms", "P99 TPOT (ms)", p99(s.tpot_ms), Better::Lower},
        {"mean_e2el_ms", "Mean E2EL (ms)", s.e2el_ms.mean, Better::Lower},
        {"p99_e2el_ms", "P99 E2EL (ms)", p99(s.e2el_ms), Better::Lower},
        {"request_goodput", "Request goodput (req/s)", s.request_goodput ? *s.request_goodput : nan,
         Better::Higher},
        {"preemptions", "Preemptions", double(s.preemptions), Better::Lower},
        {"suspensions", "Suspensions", double(s.suspensions), Better::Neither},
        {"kv_peak_tokens", "KV peak (tokens)", double(s.kv_peak_tokens), Better::Neither},
    };
    if (s.budget_requests > 0) {
        m.push_back(
            {"completion_rate", "Completion rate (%)", 100 * s.completion_rate, Better::Higher});
        m.push_back({"mean_alpha", "Mean eviction α", s.mean_alpha, Better::Lower});
        m.push_back({"mean_quality", "Mean quality", s.mean_quality, Better::Higher});
    }
    for (const auto& c : s.robot)
        m.push_back({"utility_pct_" + c.cls, "Utility, " + c.cls + " (% of max)",
                     c.utilityPercent(), Better::Higher});
    return m;
}

std::vector<MetricDelta> compareRuns(const Summary& before, const Summary& after,
                                     double tolerance) {
    return compareRuns(&before, after, tolerance);
}

std::vector<MetricDelta> compareRuns(const Summary* before, const Summary& after,
                                     double tolerance) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::map<std::string, double> b;
    if (before)
        for (const auto& r : keyMetrics(*before)) b[r.key] = r.value;
    std::vector<MetricDelta> out;
    for (const auto& r : keyMetrics(after)) {
        MetricDelta d;
        d.key = r.key;
        d.label = r.label;
        d.after = r.value;
        const auto it = b.find(r.key);
        d.before = it == b.end() ? nan : it->second;
        d.change = d.after - d.before;
        d.relative = d.before != 0 && std::isfinite(d.before) ? d.change / std::abs(d.before) : nan;
        const bool same = std::abs(d.change) <= tolerance * std::max(1.0, std::abs(d.before));
        if (std::isfinite(d.change) && !same && r.better != Better::Neither)
            d.verdict = (d.change < 0) == (r.better == Better::Lower) ? 1 : -1;
        out.push_back(d);
    }
    return out;
}

std::string deltaTable(const std::vector<MetricDelta>& deltas, const std::string& before_name,
                       const std::string& after_name) {
    auto num = [](double v) {
        if (std::isnan(v)) return std::string("-");
        char buf[64];
        // Counts as integers, large values to 0.1, the rest to 4 significant digits.
        std::snprintf(buf, sizeof buf,
                      v == std::floor(v) && std::abs(v) < 1e15 ? "%.0f"
                      : std::abs(v) >= 1000                    ? "%.1f"
                                                               : "%.4g",
                      v);
        return std::string(buf);
    };
    std::size_t w0 = 6, w1 = std::max<std::size_t>(before_name.size(), 10),
                w2 = std::max<std::size_t>(after_name.size(), 10);
    for (const auto& d : deltas) w0 = std::max(w0, d.label.size());
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-*s  %*s  %*s  %12s\n", int(w0), "metric", int(w1),
                  before_name.c_str(), int(w2), after_name.c_str(), "change");
    out += line;
    for (const auto& d : deltas) {
        std::string change = "-";
        if (std::isfinite(d.change)) {
            char buf[64];
            if (std::abs(d.change) <= 1e-12)
                std::snprintf(buf, sizeof buf, "=");
            else if (std::isfinite(d.relative))
                std::snprintf(buf, sizeof buf, "%+.1f %%", 100 * d.relative);
            else
                std::snprintf(buf, sizeof buf, "%+.4g", d.change);
            change = buf;
        }
        const char* verdict = d.verdict > 0 ? "  better" : d.verdict < 0 ? "  worse" : "";
        std::snprintf(line, sizeof line, "%-*s  %*s  %*s  %12s%s\n", int(w0), d.label.c_str(),
                      int(w1), num(d.before).c_str(), int(w2), num(d.after).c_str(), change.c_str(),
                      verdict);
        out += line;
    }
    return out;
}

} // namespace kairos
