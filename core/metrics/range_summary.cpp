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

namespace {

// The window's ends on the run's clock in seconds, as the ruler reads, to a precision that
// tells them apart (three significant digits of the selection's length); its length in
// readable units.
int windowDecimals(const RangeSummary& s) {
    const double len = s.to - s.from;
    return len > 0 ? std::clamp(2 - static_cast<int>(std::floor(std::log10(len))), 0, 9) : 3;
}

std::string windowText(const RangeSummary& s) {
    const int decimals = windowDecimals(s);
    return text::formatted("%.*f s to %.*f s (%s)", decimals, s.from, decimals, s.to,
                           text::duration(s.to - s.from).c_str());
}

} // namespace

std::string rangeSummaryLine(const RangeSummary& s) {
    std::string out =
        text::formatted("%s: %ld requests, %ld arrived, %ld finished, %ld killed",
                        windowText(s).c_str(), s.active, s.arrived, s.finished, s.killed);
    if (std::isfinite(s.kv_min))
        out += text::formatted("; KV %.0f to %.0f tokens", s.kv_min, s.kv_max);
    if (s.decisions > 0) out += text::formatted("; %ld decisions", s.decisions);
    return out;
}

std::vector<RangeDetail> rangeSummaryDetails(const RangeSummary& s) {
    std::vector<RangeDetail> out;
    auto add = [&](const char* group, std::string name, std::string value) {
        out.push_back({group, std::move(name), std::move(value)});
    };
    auto count = [](long n) { return std::to_string(n); };
    add("window", "from", text::formatted("%.*f s", windowDecimals(s), s.from));
    add("window", "to", text::formatted("%.*f s", windowDecimals(s), s.to));
    add("window", "length", text::duration(s.to - s.from));
    add("requests in the system", "any phase", count(s.active));
    for (std::size_t k = 0; k < s.in_phase.size(); ++k)
        if (s.in_phase[k] > 0)
            add("requests in the system", lod::spanKindName(RangeSummary::kPhases[k]),
                count(s.in_phase[k]));
    add("requests", "arrived", count(s.arrived));
    add("requests", "finished", count(s.finished));
    add("requests", "killed", count(s.killed));
    if (std::isfinite(s.kv_min)) {
        add("KV in use", "lowest", text::formatted("%.0f tokens", s.kv_min));
        add("KV in use", "highest", text::formatted("%.0f tokens", s.kv_max));
    }
    add("decisions by rule", "all", count(s.decisions));
    for (const auto& [rule, n] : s.by_rule) add("decisions by rule", rule, count(n));
    if (s.finished > 0)
        for (const auto& [name, stats] :
             {std::pair<const char*, const Stats*>{"TTFT", &s.ttft}, {"end-to-end", &s.e2el}})
            for (double q : {50.0, 90.0, 99.0})
                add("finished here", text::formatted("%s p%.0f", name, q),
                    text::duration(stats->percentile(q)));
    return out;
}

std::string rangeSummaryText(const RangeSummary& s) {
    std::string out =
        text::formatted("%s: %ld requests in the system", windowText(s).c_str(), s.active);
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
