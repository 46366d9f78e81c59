#include "metrics/range_summary.h"

#include "model/explain.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kairos {

RangeSummary summarizeRange(const RunLog& log, const std::vector<lod::Row>& rows,
                            const std::vector<RequestMetrics>& per_request,
                            const std::vector<std::pair<double, double>>& kv, double from,
                            double to) {
    RangeSummary s;
    s.from = from;
    s.to = to;
    for (const lod::Row& r : rows) {
        std::array<bool, RangeSummary::kPhases.size()> seen{};
        bool any = false;
        for (const lod::Span& sp : r.spans) {
            if (!(std::min(sp.t1, to) > std::max(sp.t0, from))) continue;
            any = true;
            for (std::size_t k = 0; k < seen.size(); ++k)
                seen[k] = seen[k] || sp.kind == RangeSummary::kPhases[k];
        }
        for (std::size_t k = 0; k < seen.size(); ++k) s.in_phase[k] += seen[k];
        s.active += any;
    }
    std::vector<double> ttft, e2el;
    for (const RequestMetrics& m : per_request) {
        const auto in = [&](double t) { return t >= from && t < to; };
        s.arrived += in(m.arrival);
        if (m.finished && in(m.end)) {
            ++s.finished;
            ttft.push_back(m.ttft());
            e2el.push_back(m.e2el());
        }
        s.killed += m.killed && in(m.end);
    }
    const std::vector<double> qs{50, 90, 99};
    s.ttft = describe(std::move(ttft), qs);
    s.e2el = describe(std::move(e2el), qs);
    if (!kv.empty()) {
        // The step's value at `from`: the last point at or before it (nothing before the
        // first point), then every point inside the window.
        auto it = std::upper_bound(kv.begin(), kv.end(), from,
                                   [](double t, const auto& p) { return t < p.first; });
        double lo = it == kv.begin() ? 0.0 : std::prev(it)->second, hi = lo;
        for (; it != kv.end() && it->first < to; ++it) {
            lo = std::min(lo, it->second);
            hi = std::max(hi, it->second);
        }
        s.kv_min = lo;
        s.kv_max = hi;
    }
    std::map<std::string, long> rules;
    for (const Reason& r : log.explain.reasons) {
        if (!(r.t >= from && r.t < to)) continue;
        ++s.decisions;
        ++rules[ruleOf(r.rule).code];
    }
    s.by_rule.assign(rules.begin(), rules.end());
    std::stable_sort(s.by_rule.begin(), s.by_rule.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return s;
}

std::string rangeSummaryText(const RangeSummary& s) {
    // Its ends on the run's clock in seconds, as the ruler reads, to a precision that
    // tells them apart (three significant digits of the selection's length); its length
    // in readable units.
    const double len = s.to - s.from;
    const int decimals =
        len > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(len))), 0, 9) : 3;
    std::string out =
        text::formatted("%.*f s to %.*f s (%s): %ld requests in the system", decimals, s.from,
                        decimals, s.to, text::duration(len).c_str(), s.active);
    std::string phases;
    for (std::size_t k = 0; k < s.in_phase.size(); ++k)
        if (s.in_phase[k] > 0)
            phases += text::formatted("%s%ld %s", phases.empty() ? "" : ", ", s.in_phase[k],
                                      lod::spanKindName(RangeSummary::kPhases[k]));
    if (!phases.empty()) out += " (" + phases + ")";
    out +=
        text::formatted("; %ld arrived, %ld finished, %ld killed", s.arrived, s.finished, s.killed);
    if (std::isfinite(s.kv_min))
        out += text::formatted("\nKV in use %.0f to %.0f tokens", s.kv_min, s.kv_max);
    if (s.decisions > 0) {
        out += text::formatted("; %ld decisions", s.decisions);
        std::string top;
        for (std::size_t i = 0; i < s.by_rule.size() && i < 3; ++i)
            top += text::formatted("%s%s %ld", i ? ", " : "", s.by_rule[i].first.c_str(),
                                   s.by_rule[i].second);
        if (s.by_rule.size() > 3) top += ", …";
        out += " (" + top + ")";
    }
    if (s.finished > 0)
        out += text::formatted("\nfinished here: TTFT p50 %s, p90 %s, p99 %s; end-to-end p50 %s, "
                               "p90 %s, p99 %s",
                               text::duration(s.ttft.percentile(50)).c_str(),
                               text::duration(s.ttft.percentile(90)).c_str(),
                               text::duration(s.ttft.percentile(99)).c_str(),
                               text::duration(s.e2el.percentile(50)).c_str(),
                               text::duration(s.e2el.percentile(90)).c_str(),
                               text::duration(s.e2el.percentile(99)).c_str());
    return out;
}

} // namespace kairos
