#include "metrics/compare.h"

#include "metrics/metric_table.h"
#include "util/enum_names.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>

namespace kairos {

std::vector<MetricRow> keyMetrics(const Summary& s) {
    // The headline rows, each as the metric table defines it (P99: where --percentiles
    // computed it).
    static const std::vector<MetricDef> table = metricTable({99});
    std::vector<MetricRow> m;
    auto add = [&](const char* key) {
        const MetricDef* d = findMetric(table, key);
        if (!d) throw std::logic_error(std::string("keyMetrics: no metric ") + key);
        std::string label = d->label();
        if (d->key == "kv_peak_tokens" && s.replica_count > 1)
            label = "KV peak, one replica (tokens)";
        m.push_back({d->key, label, d->value(s), d->better});
    };
    for (const char* k : {"completed", "killed", "offered_rate", "request_throughput",
                          "output_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms",
                          "mean_tpot_ms", "p99_tpot_ms", "mean_e2el_ms", "p99_e2el_ms",
                          "request_goodput", "preemptions", "suspensions", "kv_peak_tokens"})
        add(k);
    // Time budgets (TimeBill): what the budget got, and what meeting it cost in KV evicted.
    // Once: a second block listed the same three as "Completion rate", "Mean eviction α" and
    // "Mean quality" (an outside test read six rows for three figures).
    if (s.budget_requests > 0)
        for (const char* k : {"completion_rate", "mean_alpha", "mean_quality"}) add(k);
    if (s.prefix_caching) {
        // The hit rate counts prompts at their first admission; a request resumed (a robot
        // plan's next segment, a recompute after preemption) finds its own context cached,
        // which the hit rate does not count (wid1: 0 % beside 517,072 tokens reused).
        add("prefix_cache_hit_rate");
        add("prefix_recompute_cached_tokens");
    }
    // A fleet: each replica's load and latency (how evenly the router spread the work).
    for (const ReplicaSummary& r : s.replicas) {
        const std::string k = "replica_" + std::to_string(r.replica) + "_",
                          n = "Replica " + std::to_string(r.replica) +
                              (r.pool.empty() ? "" : " (" + r.pool + ")") + ": ";
        // Disaggregated, a pool's TTFT is its own part: the prefill pool's to the KV's
        // transfer, the decode pool's from its arrival (RunLog::replicaName, replicaLog).
        const std::string ttft = r.pool == "prefill"  ? "mean TTFT to transfer (ms)"
                                 : r.pool == "decode" ? "mean TTFT from KV arrival (ms)"
                                                      : "mean TTFT (ms)";
        m.push_back({k + "requests", n + "requests", double(r.requests), Better::Neither});
        m.push_back({k + "mean_ttft_ms", n + ttft, r.ttft_ms.mean, Better::Lower});
        if (s.prefix_caching)
            m.push_back({k + "prefix_cache_hit_rate", n + "prefix cache hit rate (share)",
                         r.prefix_cache_hit_rate, Better::Higher});
    }
    if (s.authors) {
        // The TimelyLLM authors' own figures: a task never handed to its robot is dropped,
        // not scored (Kairos's W(s0) below scores it at its TUF at the run's end).
        m.push_back({"authors_urgent_utility_pct", "Urgent utility, authors' metric (% of β)",
                     s.authors->urgent_pct, Better::Higher});
        m.push_back({"authors_normal_utility_pct", "Normal utility, authors' metric (% of β)",
                     s.authors->normal_pct, Better::Higher});
        m.push_back({"authors_dropped", "Tasks dropped (authors' metric)",
                     double(s.authors->dropped), Better::Lower});
    }
    for (const auto& c : s.robot)
        m.push_back({"utility_pct_" + c.cls, "Utility W(s0), " + c.cls + " (% of max)",
                     c.utilityPercent(), Better::Higher});
    for (const auto& c : s.robot)
        m.push_back({"segment_utility_pct_" + c.cls,
                     "Utility summed over segments, " + c.cls + " (% of max)",
                     c.segmentUtilityPercent(), Better::Higher});
    if (s.resubmissions > 0)
        m.push_back({"segment_resubmissions", "Segments re-queued", double(s.resubmissions),
                     Better::Neither});
    return m;
}

constexpr EnumName<Basis> kBasisNames[] = {{Basis::Common, "common"},
                                           {Basis::NotComparable, "not_comparable"}};

const char* basisName(Basis b) {
    return enumName(kBasisNames, b, "all");
}

bool isLatencyMetric(const std::string& key) {
    for (const char* m : {"_ttft_ms", "_tpot_ms", "_e2el_ms", "_itl_ms"}) {
        const std::string suf(m);
        if (key.size() > suf.size() && key.compare(key.size() - suf.size(), suf.size(), suf) == 0)
            return true;
    }
    return false;
}

namespace {

// The same requests: equal counts and, when both runs' results are known, the same
// arrival times and prompt lengths.
bool sameWorkload(const RunResults& a, const RunResults& b) {
    if (a.summary->num_requests != b.summary->num_requests) return false;
    if (!a.workload_hash.empty() && !b.workload_hash.empty() && a.workload_hash != b.workload_hash)
        return false;
    if (!a.requests || !b.requests) return a.summary->workload == b.summary->workload;
    if (a.requests->size() != b.requests->size()) return false;
    for (std::size_t i = 0; i < a.requests->size(); ++i) {
        const RequestMetrics &x = (*a.requests)[i], &y = (*b.requests)[i];
        if (x.prompt_tokens != y.prompt_tokens) return false;
        const bool both_nan = std::isnan(x.arrival) && std::isnan(y.arrival);
        if (!both_nan &&
            !(std::abs(x.arrival - y.arrival) <= 1e-9 * std::max(1.0, std::abs(x.arrival))))
            return false;
    }
    return true;
}

// `s` with its latency statistics recomputed over the requests marked in `keep`.
Summary restricted(const Summary& s, const std::vector<RequestMetrics>& reqs,
                   const std::vector<char>& keep) {
    Summary r = s;
    std::vector<double> ttft, tpot, e2el;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        if (!keep[i] || !reqs[i].finished) continue;
        ttft.push_back(reqs[i].ttft() * 1e3);
        e2el.push_back(reqs[i].e2el() * 1e3);
        if (const double tp = reqs[i].tpot(); !std::isnan(tp)) tpot.push_back(tp * 1e3);
    }
    std::vector<double> qs = s.percentiles;
    if (std::find(qs.begin(), qs.end(), 99.0) == qs.end()) qs.push_back(99);
    r.ttft_ms = describe(std::move(ttft), qs);
    r.tpot_ms = describe(std::move(tpot), qs);
    r.e2el_ms = describe(std::move(e2el), qs);
    r.itl_ms = Stats{}; // needs the run log: not recomputed
    return r;
}

MetricDelta delta(const MetricRow& r, double before, double tolerance) {
    MetricDelta d;
    d.key = r.key;
    d.label = r.label;
    d.after = r.value;
    d.before = before;
    d.change = d.after - d.before;
    d.relative = d.before != 0 && std::isfinite(d.before)
                     ? d.change / std::abs(d.before)
                     : std::numeric_limits<double>::quiet_NaN();
    const bool same = std::abs(d.change) <= tolerance * std::max(1.0, std::abs(d.before));
    if (std::isfinite(d.change) && !same && r.better != Better::Neither)
        d.verdict = (d.change < 0) == (r.better == Better::Lower) ? 1 : -1;
    return d;
}

} // namespace

Comparison compare(const RunResults& before, const RunResults& after, double tolerance) {
    Comparison c;
    const Summary& a = *before.summary;
    const Summary& b = *after.summary;
    c.same_workload = sameWorkload(before, after);
    const Summary* lat_a = &a;
    const Summary* lat_b = &b;
    Summary ra, rb;
    Basis latency = Basis::AllRequests;
    if (!c.same_workload) {
        latency = Basis::NotComparable;
        c.same_completed = false;
        // The same requests at other times (the rate slider, another arrival seed) said as
        // such: "different workloads (400 and 400 requests)" read as another file.
        bool same_requests =
            before.requests && after.requests && before.requests->size() == after.requests->size();
        for (std::size_t i = 0; same_requests && i < before.requests->size(); ++i)
            same_requests =
                (*before.requests)[i].prompt_tokens == (*after.requests)[i].prompt_tokens;
        if (same_requests)
            c.note = "the same " + std::to_string(a.num_requests) +
                     " requests arriving at other times (" +
                     text::formatted("%.3g", a.load.offered_rate) + " and " +
                     text::formatted("%.3g", b.load.offered_rate) +
                     " req/s offered, the reference run's first): latency depends on the arrivals, "
                     "so values stand side by side, not compared (n/c)";
        else
            c.note = "different workloads (" + std::to_string(a.num_requests) + " and " +
                     std::to_string(b.num_requests) +
                     " requests): values side by side, not compared (n/c)";
    } else if (before.requests && after.requests) {
        const auto& x = *before.requests;
        const auto& y = *after.requests;
        std::vector<char> both(x.size(), 0);
        c.common = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            both[i] = x[i].finished && y[i].finished;
            c.common += both[i];
            c.only_before += x[i].finished && !y[i].finished;
            c.only_after += !x[i].finished && y[i].finished;
        }
        c.same_completed = c.only_before == 0 && c.only_after == 0;
        if (!c.same_completed) {
            latency = Basis::Common;
            ra = restricted(a, x, both);
            rb = restricted(b, y, both);
            lat_a = &ra;
            lat_b = &rb;
            // Named by role, not order: the window lists this run first and the pinned one
            // second, so "only in the first" read backwards there.
            // The count the rows are over first, then who completed the rest (an outside
            // reader could not parse the two counts in one parenthesis).
            c.note = "the runs completed different requests: latency rows are over the " +
                     std::to_string(c.common) +
                     " both completed, and no change is judged. The reference run (the "
                     "pinned one) also completed " +
                     std::to_string(c.only_before) + " others, the compared run " +
                     std::to_string(c.only_after) + "; which requests finish depends on the policy";
        }
    } else if (!(a.completed == a.num_requests && b.completed == b.num_requests)) {
        latency = Basis::NotComparable;
        c.same_completed = false;
        c.note = "the runs completed " + std::to_string(a.completed) + " and " +
                 std::to_string(b.completed) + " of " + std::to_string(a.num_requests) +
                 " requests and their per-request results are not at hand: latency rows are "
                 "not comparable";
    }
    std::map<std::string, double> va, la;
    for (const auto& r : keyMetrics(a)) va[r.key] = r.value;
    for (const auto& r : keyMetrics(*lat_a)) la[r.key] = r.value;
    std::map<std::string, double> lb;
    for (const auto& r : keyMetrics(*lat_b)) lb[r.key] = r.value;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (MetricRow r : keyMetrics(b)) {
        const bool lat = isLatencyMetric(r.key);
        const auto& from = lat ? la : va;
        if (lat) r.value = lb.count(r.key) ? lb.at(r.key) : nan;
        const auto it = from.find(r.key);
        MetricDelta d = delta(r, it == from.end() ? nan : it->second, tolerance);
        d.basis = !c.same_workload ? Basis::NotComparable : lat ? latency : Basis::AllRequests;
        if (d.basis != Basis::AllRequests) d.verdict = 0;
        c.deltas.push_back(d);
    }
    // Every row the same: the policies served the requests alike. Said with the reason that
    // is nearly always behind it (almost nobody waited, so there was nothing to reorder),
    // so a table of '=' is not read as two policies that perform alike under load.
    const bool all_same = std::all_of(c.deltas.begin(), c.deltas.end(), [](const MetricDelta& d) {
        return d.change == 0 || (std::isnan(d.before) && std::isnan(d.after));
    });
    // Unless the two ran with the same settings: then they are one run twice (the simulator
    // is deterministic), which is what the note says (a run pinned, k moved and undone read
    // "both policies served the requests alike ... raise the rate").
    const bool same_settings = a.policy == b.policy && a.exec_model == b.exec_model &&
                               a.kv_capacity_tokens == b.kv_capacity_tokens &&
                               a.replica_count == b.replica_count;
    if (c.same_workload && c.note.empty() && all_same && !c.deltas.empty() && same_settings)
        c.note = "every metric is the same: both runs have the same settings (" + a.policy +
                 "), and a simulation run twice is the same run";
    else if (c.same_workload && c.note.empty() && all_same && !c.deltas.empty())
        c.note = "every metric is the same: both policies served the requests alike; at most " +
                 std::to_string(std::max(a.load.max_queue, b.load.max_queue)) +
                 " waited at once, so there was little to reorder. Raise the rate "
                 "(--rate-scale) or lower the KV capacity to compare them under load";
    return c;
}

std::vector<MetricDelta> compareRuns(const Summary& before, const Summary& after,
                                     double tolerance) {
    return compareRuns(&before, after, tolerance);
}

std::vector<MetricDelta> compareRuns(const Summary* before, const Summary& after,
                                     double tolerance) {
    if (before) return compare({before, nullptr}, {&after, nullptr}, tolerance).deltas;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<MetricDelta> out;
    for (const auto& r : keyMetrics(after)) out.push_back(delta(r, nan, tolerance));
    return out;
}

std::string deltaTable(const Comparison& c, const std::string& before_name,
                       const std::string& after_name) {
    std::string out;
    if (!c.note.empty()) out += "note: " + c.note + "\n";
    return out + deltaTable(c.deltas, before_name, after_name);
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
        const char* verdict = d.basis == Basis::NotComparable ? "  n/c"
                              : d.basis == Basis::Common      ? "  not judged (common set)"
                              : d.verdict > 0                 ? "  better"
                              : d.verdict < 0                 ? "  worse"
                                                              : "";
        std::snprintf(line, sizeof line, "%-*s  %*s  %*s  %12s%s\n", int(w0), d.label.c_str(),
                      int(w1), num(d.before).c_str(), int(w2), num(d.after).c_str(), change.c_str(),
                      verdict);
        out += line;
    }
    return out;
}

} // namespace kairos
