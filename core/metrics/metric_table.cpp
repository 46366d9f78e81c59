#include "metrics/metric_table.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace kairos {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The latency statistics: (name in keys, display, what it measures, its Stats).
struct Latency {
    const char* name;
    const char* display;
    const char* what;
    Stats Summary::*stats;
    bool vllm;
};
const Latency kLatencies[] = {
    {"ttft", "TTFT",
     "time to first token: arrival to the first output token (queueing and prefill)",
     &Summary::ttft_ms, true},
    {"tpot", "TPOT",
     "time per output token after the first: (end - first token) / (output tokens - 1)",
     &Summary::tpot_ms, true},
    {"itl", "ITL", "inter-token latency: the gaps between a request's consecutive tokens",
     &Summary::itl_ms, true},
    {"e2el", "E2EL", "end-to-end latency: arrival to the last token", &Summary::e2el_ms, true},
    {"queue", "queueing delay", "arrival to the start of the first prefill", &Summary::queue_ms,
     false},
};

double goodputFraction(const Summary& s) {
    if (!s.request_goodput) return kNaN;
    if (std::isfinite(s.load.offered_rate) && s.load.offered_rate > 0)
        return *s.request_goodput / s.load.offered_rate;
    if (s.num_requests > 0) // an offline batch: the share of requests that are good
        return double(s.good_requests) / double(s.num_requests);
    return kNaN;
}

double allUtility(const Summary& s) {
    for (const auto& c : s.robot)
        if (c.cls == "all") return c.utilityPercent();
    return kNaN;
}

// A latency statistic: "mean", "median", "std" or a percentile q.
MetricDef latencyDef(const Latency& l, const std::string& stat, double q) {
    MetricDef d;
    const std::string pk = stat == "pct" ? percentileKey(q) : stat;
    d.key = pk + "_" + l.name + "_ms";
    const std::string shown = stat == "pct"      ? "P" + pk.substr(1)
                              : stat == "std"    ? "Std"
                              : stat == "median" ? "Median"
                                                 : "Mean";
    d.display = shown + " " + l.display;
    d.unit = "ms";
    d.better = stat == "std" ? Better::Neither : Better::Lower;
    d.vllm = l.vllm;
    d.description = (stat == "pct"   ? "the " + pk.substr(1) + "th percentile of the "
                     : stat == "std" ? "the standard deviation of the "
                                     : stat + " ") +
                    std::string(l.display) + ", " + l.what + "; over completed requests";
    const Stats Summary::*m = l.stats;
    if (stat == "mean")
        d.value = [m](const Summary& s) { return (s.*m).count ? (s.*m).mean : kNaN; };
    else if (stat == "median")
        d.value = [m](const Summary& s) { return (s.*m).count ? (s.*m).median : kNaN; };
    else if (stat == "std")
        d.value = [m](const Summary& s) { return (s.*m).count ? (s.*m).std : kNaN; };
    else
        d.value = [m, q](const Summary& s) {
            if (!(s.*m).count) return kNaN;
            for (const auto& [pq, v] : (s.*m).percentiles)
                if (pq == q) return v;
            return kNaN;
        };
    return d;
}

MetricDef def(std::string key, std::string display, std::string unit, Better better,
              std::string description, bool vllm, std::function<double(const Summary&)> value) {
    MetricDef d;
    d.key = std::move(key);
    d.display = std::move(display);
    d.unit = std::move(unit);
    d.better = better;
    d.description = std::move(description);
    d.vllm = vllm;
    d.value = std::move(value);
    return d;
}

// The scalar metrics besides the latency statistics, in the tabulated order's groups.
std::vector<MetricDef> headMetrics() {
    return {
        def("completed", "Completed", "", Better::Higher, "requests that finished", true,
            [](const Summary& s) { return double(s.completed); }),
        def("killed", "Killed", "", Better::Lower,
            "requests dropped unfinished (a budget, a deadline, a policy's rule)", false,
            [](const Summary& s) { return double(s.killed); }),
        def("request_throughput", "Request throughput", "req/s", Better::Higher,
            "completed requests / the run's duration (first arrival to last finish)", true,
            [](const Summary& s) { return s.request_throughput; }),
        def("goodput_fraction", "Goodput / offered rate", "share", Better::Higher,
            "request goodput over the offered rate (for an offline batch, the share of "
            "requests meeting every SLO); needs SLOs",
            false, goodputFraction),
        def("slo_attainment", "SLO attainment", "share", Better::Higher,
            "the share of all requests that meet every SLO (DistServe's measure; what "
            "capacity sizes a fleet by); needs SLOs",
            false,
            [](const Summary& s) {
                return s.request_goodput && s.num_requests > 0
                           ? double(s.good_requests) / double(s.num_requests)
                           : kNaN;
            }),
        def("output_throughput", "Output token throughput", "tok/s", Better::Higher,
            "output tokens / the run's duration", true,
            [](const Summary& s) { return s.output_throughput; }),
    };
}

std::vector<MetricDef> tailMetrics() {
    return {
        def("kv_peak_tokens", "KV peak", "tokens", Better::Neither,
            "most KV-cache tokens in use at once (a fleet: the largest of one replica)", false,
            [](const Summary& s) { return double(s.kv_peak_tokens); }),
        def("preemptions", "Preemptions", "", Better::Lower,
            "KV dropped and recomputed when the request runs again", false,
            [](const Summary& s) { return double(s.preemptions); }),
        def("suspensions", "Suspensions", "", Better::Neither,
            "requests paused with their KV kept (TimelyLLM segments as Kairos reads the paper)",
            false, [](const Summary& s) { return double(s.suspensions); }),
        def("completion_rate", "Within budget", "share", Better::Higher,
            "requests finished within their time budget / requests with one (TimeBill)", false,
            [](const Summary& s) { return s.budget_requests ? s.completion_rate : kNaN; }),
        def("mean_quality", "Mean quality proxy q(alpha)", "", Better::Higher,
            "q(alpha) of each budgeted request finished in budget, else 0, averaged (TimeBill)",
            false, [](const Summary& s) { return s.budget_requests ? s.mean_quality : kNaN; }),
        def("utility_pct", "Utility W(s0), all classes", "%", Better::Higher,
            "the time-utility function at the first response as % of the most it can give, "
            "negative when late (TimelyLLM)",
            false, allUtility),
    };
}

// Names of earlier releases: the sweeps' "<latency>_<stat>_ms".
const std::map<std::string, std::string>& oldKeys() {
    static const std::map<std::string, std::string> m = [] {
        std::map<std::string, std::string> o;
        for (const Latency& l : kLatencies)
            for (const char* stat : {"mean", "median", "std"})
                o[std::string(l.name) + "_" + stat + "_ms"] =
                    std::string(stat) + "_" + l.name + "_ms";
        return o;
    }();
    return m;
}

} // namespace

const char* betterName(Better b) {
    return b == Better::Lower ? "lower" : b == Better::Higher ? "higher" : "neither";
}

std::string MetricDef::label() const {
    return unit.empty() ? display : display + " (" + unit + ")";
}

std::vector<MetricDef> tabulatedMetrics(const std::vector<double>& percentiles) {
    std::vector<MetricDef> t = headMetrics();
    for (const Latency& l : kLatencies) {
        t.push_back(latencyDef(l, "mean", 0));
        for (double q : percentiles) t.push_back(latencyDef(l, "pct", q));
    }
    for (auto& d : tailMetrics()) t.push_back(std::move(d));
    return t;
}

std::vector<MetricDef> metricTable(const std::vector<double>& percentiles) {
    std::vector<MetricDef> t = headMetrics();
    t.push_back(def("offered_rate", "Offered rate", "req/s", Better::Neither,
                    "requests arriving per second over the arrivals' span", false,
                    [](const Summary& s) { return s.load.offered_rate; }));
    t.push_back(def("total_token_throughput", "Total token throughput", "tok/s", Better::Higher,
                    "prompt and output tokens / the run's duration", true,
                    [](const Summary& s) { return s.total_token_throughput; }));
    t.push_back(
        def("request_goodput", "Request goodput", "req/s", Better::Higher,
            "requests meeting every SLO / the run's duration (a killed request meets "
            "none); needs SLOs",
            true, [](const Summary& s) { return s.request_goodput ? *s.request_goodput : kNaN; }));
    for (const Latency& l : kLatencies) {
        t.push_back(latencyDef(l, "mean", 0));
        t.push_back(latencyDef(l, "median", 0));
        t.push_back(latencyDef(l, "std", 0));
        for (double q : percentiles) t.push_back(latencyDef(l, "pct", q));
    }
    for (auto& d : tailMetrics()) t.push_back(std::move(d));
    t.push_back(def("mean_alpha", "Mean KV evicted, alpha", "", Better::Lower,
                    "the KV eviction ratio alpha applied to budgeted prompts, averaged "
                    "(TimeBill)",
                    false,
                    [](const Summary& s) { return s.budget_requests ? s.mean_alpha : kNaN; }));
    t.push_back(def(
        "prefix_cache_hit_rate", "Prefix cache hit rate", "share", Better::Higher,
        "prompt tokens served from the prefix cache at first admission / all "
        "prompt tokens",
        false, [](const Summary& s) { return s.prefix_caching ? s.prefix_cache_hit_rate : kNaN; }));
    t.push_back(def("prefix_recompute_cached_tokens", "Context reused on resume", "tokens",
                    Better::Higher,
                    "context tokens a resumed or recomputed request found cached (the hit rate "
                    "counts first admissions only)",
                    false, [](const Summary& s) {
                        return s.prefix_caching ? double(s.prefix_recompute_cached_tokens) : kNaN;
                    }));
    return t;
}

const MetricDef* findMetric(const std::vector<MetricDef>& table, const std::string& key) {
    const std::string k = canonicalMetricKey(key);
    for (const MetricDef& d : table)
        if (d.key == k) return &d;
    return nullptr;
}

std::string canonicalMetricKey(const std::string& key) {
    if (auto it = oldKeys().find(key); it != oldKeys().end()) return it->second;
    // "<latency>_p<q>_ms" -> "p<q>_<latency>_ms"
    for (const Latency& l : kLatencies) {
        const std::string head = std::string(l.name) + "_p";
        if (key.size() > head.size() + 3 && key.compare(0, head.size(), head) == 0 &&
            key.compare(key.size() - 3, 3, "_ms") == 0) {
            const std::string pk = key.substr(head.size() - 1, key.size() - head.size() - 2);
            return pk + "_" + l.name + "_ms";
        }
    }
    return key;
}

std::string metricTableText(const std::vector<double>& percentiles) {
    std::ostringstream o;
    char b[256];
    std::snprintf(b, sizeof b, "%-32s %-32s %-7s %-8s %-5s %s\n", "name", "display", "unit",
                  "better", "vllm", "description");
    o << b;
    for (const MetricDef& d : metricTable(percentiles)) {
        std::snprintf(b, sizeof b, "%-32s %-32s %-7s %-8s %-5s ", d.key.c_str(), d.display.c_str(),
                      d.unit.empty() ? "-" : d.unit.c_str(), betterName(d.better),
                      d.vllm ? "yes" : "no");
        o << b << d.description << "\n";
    }
    return o.str();
}

} // namespace kairos
