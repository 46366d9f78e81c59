#include "metrics/summary.h"

#include "metrics/request_metrics.h"
#include "util/huge_pages.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "util/json_number.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace kairos {

bool GoodputSlo::meets(const RequestMetrics& r) const {
    const double tp = r.tpot();
    const double tpot = std::isnan(tp) ? 0.0 : tp * 1e3; // vLLM: 0 for one token
    return (!ttft_ms || r.ttft() * 1e3 <= *ttft_ms) && (!tpot_ms || tpot <= *tpot_ms) &&
           (!e2el_ms || r.e2el() * 1e3 <= *e2el_ms);
}

GoodputSlo GoodputSlo::parse(const std::vector<std::string>& items) {
    GoodputSlo g;
    for (const auto& it : items) {
        const auto colon = it.find(':');
        double v;
        if (colon == std::string::npos ||
            !text::parseDouble(std::string_view(it).substr(colon + 1), &v) || v <= 0)
            throw std::invalid_argument("goodput SLO '" + it +
                                        "': expected ttft:MS, tpot:MS or e2el:MS with MS > 0");
        const std::string k = it.substr(0, colon);
        if (k == "ttft")
            g.ttft_ms = v;
        else if (k == "tpot")
            g.tpot_ms = v;
        else if (k == "e2el")
            g.e2el_ms = v;
        else
            throw std::invalid_argument("goodput SLO '" + it + "': unknown metric '" + k +
                                        "' (ttft, tpot, e2el)");
    }
    return g;
}

std::vector<std::string> GoodputSlo::terms() const {
    std::vector<std::string> out;
    const std::pair<const char*, const std::optional<double>*> slos[] = {
        {"ttft", &ttft_ms}, {"tpot", &tpot_ms}, {"e2el", &e2el_ms}};
    for (const auto& [name, v] : slos)
        if (*v) {
            char b[64];
            std::snprintf(b, sizeof b, "%s:%.17g", name, **v); // round-trips exactly
            out.emplace_back(b);
        }
    return out;
}

double QualityCurve::at(double alpha) const {
    if (points.empty()) return 1.0;
    if (alpha <= points.front().first) return points.front().second;
    for (std::size_t i = 1; i < points.size(); ++i)
        if (alpha <= points[i].first) {
            const auto [a0, q0] = points[i - 1];
            const auto [a1, q1] = points[i];
            return a1 == a0 ? q1 : q0 + (q1 - q0) * (alpha - a0) / (a1 - a0);
        }
    return points.back().second;
}

QualityCurve QualityCurve::parse(const std::string& text) {
    if (text.size() > 5 && text.compare(text.size() - 5, 5, ".json") == 0) {
        // A measured curve (kairos-cli quality --out).
        std::string body;
        try {
            body = readInputFile(text, limits::kSettings);
        } catch (const InputError& e) {
            throw std::invalid_argument("quality curve file " + std::string(e.what()));
        }
        nlohmann::json j;
        try {
            j = parseJsonDocument(body, text);
        } catch (const std::exception& e) {
            throw std::invalid_argument("quality curve file '" + text + "': not JSON (" + e.what() +
                                        ")");
        }
        if (!j.is_object() || !j.contains("quality") || !j.at("quality").is_string())
            throw std::invalid_argument("quality curve file '" + text +
                                        "': no \"quality\" string (written by kairos-cli "
                                        "quality --out?)");
        const std::string inner = j.at("quality").get<std::string>();
        if (inner.size() > 5 && inner.compare(inner.size() - 5, 5, ".json") == 0)
            throw std::invalid_argument("quality curve file '" + text +
                                        "': its \"quality\" names another file, not a curve");
        return parse(inner);
    }
    QualityCurve c;
    c.points.clear();
    std::vector<std::string_view> items;
    text::split(text, ',', items);
    for (auto it : items) {
        const auto colon = it.find(':');
        double a, q;
        if (colon == std::string_view::npos || !text::parseDouble(it.substr(0, colon), &a) ||
            !text::parseDouble(it.substr(colon + 1), &q) || a < 0 || a > 1 || q < 0 || q > 1 ||
            (!c.points.empty() && a <= c.points.back().first))
            throw std::invalid_argument(
                "quality curve '" + text +
                "': expected ALPHA:QUALITY,... with ALPHA rising in [0, 1] and each QUALITY in "
                "[0, 1] (the fraction of the full-cache answer's quality kept)");
        c.points.emplace_back(a, q);
    }
    if (c.points.empty()) throw std::invalid_argument("quality curve: empty");
    return c;
}

std::string percentileKey(double q) {
    char buf[32];
    if (q == std::floor(q))
        std::snprintf(buf, sizeof buf, "p%d", static_cast<int>(q));
    else
        std::snprintf(buf, sizeof buf, "p%g", q);
    return buf;
}

namespace {
// The inter-token latencies in milliseconds.
Stats itlStats(const RunLog& log, const std::vector<double>& percentiles) {
    auto gaps = interTokenLatencies(log);
    for (auto& p : gaps) p.first *= 1e3;
    return describeWeighted(std::move(gaps), percentiles);
}

// What summarize() computes from the log before the per-request table.
struct Early {
    Stats itl;
    LoadReport load;
    IterTotals iters;
    std::vector<RobotClassSummary> robot;
    std::optional<Summary::Authors> authors;
};

// The TimelyLLM authors' metric of a run whose tasks have agents (robots), else none.
std::optional<Summary::Authors> authorsOf(const RunLog& log, const Workload& w) {
    if (std::none_of(w.requests.begin(), w.requests.end(),
                     [](const Request& r) { return r.agent >= 0 && !r.segments.empty(); }))
        return std::nullopt;
    const AuthorsMetric m = authorsMetric(log, w);
    Summary::Authors a;
    a.urgent_pct = m.urgent.utility_pct;
    a.normal_pct = m.normal.utility_pct;
    a.all_pct = m.all.utility_pct;
    a.scored = m.all.scored;
    a.dropped = m.all.dropped;
    return a;
}

// Both robot figures of a run on `w`: Kairos's per class, and the authors'.
void robotFigures(const RunLog& log, const Workload& w, std::vector<RobotClassSummary>& robot,
                  std::optional<Summary::Authors>& authors) {
    const auto tasks = robotTasks(log, w);
    if (!tasks.empty()) robot = summarizeRobotTasks(tasks);
    authors = authorsOf(log, w);
}

Summary summarizeWith(const RunLog& log, const std::vector<RequestMetrics>& reqs,
                      const SummaryOptions& opt, Early* early);

// A fleet's inter-token latencies: each replica's (interTokenLatencies, in replica order),
// taken from the replica logs the per-replica rows build anyway.
bool itlFromReplicas(const RunLog& log, const SummaryOptions& opt) {
    return opt.itl && log.fleet();
}

// Reads the log alone first, the inter-token latencies, the iteration totals and the
// load: their buffers are gone before the per-request table is built, which lowers a
// million-request run's peak memory by their size. `release` (null, or the log itself):
// emptied of its iterations, then of its events, as soon as nothing more reads them.
Summary summarizeLog(const RunLog& log, RunLog* release, const SummaryOptions& opt) {
    // A fleet's per-replica rows re-read the events; keep them.
    if (log.fleet()) release = nullptr;
    Early early;
    if (opt.itl && !itlFromReplicas(log, opt)) early.itl = itlStats(log, opt.percentiles);
    early.iters = log.iterTotals();
    if (release) {
        std::vector<IterSpan>().swap(release->iters);
        std::vector<double>().swap(release->iter_digest.decode_ends);
    }
    early.load = loadOf(log);
    if (opt.workload) robotFigures(log, *opt.workload, early.robot, early.authors);
    SummaryOptions rest = opt;
    rest.itl = itlFromReplicas(log, opt); // else computed above
    std::vector<RequestMetrics> reqs = perRequest(log);
    if (release) std::vector<Event>().swap(release->events);
    Summary s = summarizeWith(log, reqs, rest, &early);
    if (opt.itl && !rest.itl) s.itl_ms = std::move(early.itl);
    return s;
}
} // namespace

Summary summarize(const RunLog& log, const SummaryOptions& opt) {
    return summarizeLog(log, nullptr, opt);
}

Summary summarizeReleasing(RunLog& log, const SummaryOptions& opt) {
    return summarizeLog(log, &log, opt);
}

Summary summarize(const RunLog& log, const std::vector<RequestMetrics>& reqs,
                  const SummaryOptions& opt) {
    return summarizeWith(log, reqs, opt, nullptr);
}

namespace {
// `early`: what summarizeLog computed from the log already (else computed here).
Summary summarizeWith(const RunLog& log, const std::vector<RequestMetrics>& reqs,
                      const SummaryOptions& opt, Early* early) {
    Summary s;
    s.workload = log.workload;
    s.policy = log.policy;
    s.exec_model = log.exec_model;
    s.num_requests = log.num_requests;
    s.kv_capacity_tokens = log.kv_capacity_tokens;
    s.sim_wall_ms = log.sim_wall_ms;
    s.percentiles = opt.percentiles;
    s.warnings = log.warnings;
    double t_first = std::numeric_limits<double>::infinity(), t_last = -t_first;
    std::int64_t prefilled_with_budget = 0;
    std::map<std::string, std::int64_t> killed_by;
    std::int64_t all_prompt_tokens = 0;
    for (const auto& r : reqs) {
        all_prompt_tokens += r.prompt_tokens;
        s.prefix_cached_tokens += r.cached_tokens;
        s.prefix_recompute_cached_tokens += r.recompute_cached_tokens;
        if (!std::isnan(r.arrival)) t_first = std::min(t_first, r.arrival);
        if (!std::isnan(r.end)) t_last = std::max(t_last, r.end);
        s.preemptions += r.preemptions;
        s.resubmissions += r.resubmissions;
        s.suspensions += r.suspensions;
        if (r.killed) {
            ++s.killed;
            ++killed_by[killCauseName(r.kill_cause)];
        }
        if (!r.started() && !r.finished) ++s.never_started;
        if (const double budget = std::isnan(r.budget) ? opt.default_budget_s : r.budget;
            !std::isnan(budget)) {
            ++s.budget_requests;
            const bool ok = r.inBudget(budget);
            s.in_budget += ok;
            s.mean_quality += ok ? opt.quality.at(r.alpha) : 0.0;
            if (!std::isnan(r.queue_delay)) {
                s.mean_alpha += r.alpha;
                ++prefilled_with_budget;
            }
        }
        if (!r.finished) continue;
        ++s.completed;
        s.total_input_tokens += r.prompt_tokens;
        s.total_output_tokens += r.output_tokens;
        const GoodputSlo& g = opt.goodput;
        if (g.any()) {
            if (g.meets(r)) ++s.good_requests;
        }
    }
    s.killed_by.assign(killed_by.begin(), killed_by.end());
    if (s.budget_requests > 0) {
        s.completion_rate = double(s.in_budget) / double(s.budget_requests);
        s.mean_quality /= double(s.budget_requests);
    }
    if (prefilled_with_budget > 0) s.mean_alpha /= double(prefilled_with_budget);
    s.duration_s = t_last > t_first ? t_last - t_first : 0.0;
    const double d = s.duration_s > 0 ? s.duration_s : std::numeric_limits<double>::quiet_NaN();
    s.request_throughput = s.completed / d;
    s.output_throughput = s.total_output_tokens / d;
    s.total_token_throughput = (s.total_input_tokens + s.total_output_tokens) / d;
    if (opt.goodput.any()) s.request_goodput = s.good_requests / d;
    // The four latency samples one after the other in one buffer, in request order (a
    // million-request summary holds one of them at a time, not four).
    {
        std::vector<double> buf;
        buf.reserve(reqs.size());
        adviseHugePages(buf); // util/huge_pages.h
        const auto sample = [&](Stats& out, auto&& value) {
            buf.clear();
            for (const auto& r : reqs) {
                const double v = value(r); // NaN: not in the sample
                if (!std::isnan(v)) buf.push_back(v * 1e3);
            }
            out = describeInPlace(buf, opt.percentiles);
        };
        constexpr double kSkip = std::numeric_limits<double>::quiet_NaN();
        sample(s.ttft_ms, [&](const RequestMetrics& r) { return r.finished ? r.ttft() : kSkip; });
        sample(s.tpot_ms, [&](const RequestMetrics& r) { return r.finished ? r.tpot() : kSkip; });
        sample(s.e2el_ms, [&](const RequestMetrics& r) { return r.finished ? r.e2el() : kSkip; });
        sample(s.queue_ms, [](const RequestMetrics& r) { return r.queue_delay; });
    }
    if (opt.itl && !itlFromReplicas(log, opt)) s.itl_ms = itlStats(log, opt.percentiles);
    const IterTotals it = early ? early->iters : log.iterTotals();
    s.kv_peak_tokens = it.kv_peak;
    s.iterations = it.iterations;
    s.stretches = it.stretches;
    s.prefix_caching = log.prefix_caching;
    s.prefix_cache_evictions = log.cache_evictions;
    s.prefix_cache_hit_rate =
        all_prompt_tokens > 0 ? double(s.prefix_cached_tokens) / double(all_prompt_tokens) : 0.0;
    s.load = early ? std::move(early->load) : loadOf(log);
    s.load.finished = s.completed;
    s.load.slo_missed = opt.goodput.any() ? s.completed - s.good_requests : -1;
    if (early) {
        s.robot = std::move(early->robot);
        s.authors = early->authors;
    } else if (opt.workload) {
        robotFigures(log, *opt.workload, s.robot, s.authors);
    }
    if (log.fleet()) {
        s.replica_count = log.replicas;
        s.router = log.router;
        SummaryOptions one = opt;
        one.workload = nullptr;
        one.itl = false;
        std::vector<std::pair<double, std::int64_t>> itl; // itlFromReplicas
        for (int r = 0; r < log.replicas; ++r) {
            const RunLog part = replicaLog(log, r);
            const Summary x = summarize(part, one);
            if (itlFromReplicas(log, opt)) {
                const auto gaps = interTokenLatencies(part);
                itl.insert(itl.end(), gaps.begin(), gaps.end());
            }
            ReplicaSummary row;
            row.replica = r;
            if (log.disaggregated()) row.pool = r < log.prefill_replicas ? "prefill" : "decode";
            row.requests = x.num_requests;
            row.completed = x.completed;
            row.killed = x.killed;
            row.good_requests = x.good_requests;
            row.preemptions = x.preemptions;
            row.iterations = x.iterations;
            row.kv_peak_tokens = x.kv_peak_tokens;
            row.prefix_cached_tokens = x.prefix_cached_tokens;
            row.prefix_cache_hit_rate = x.prefix_cache_hit_rate;
            row.request_throughput = x.request_throughput;
            row.ttft_ms = x.ttft_ms;
            row.tpot_ms = x.tpot_ms;
            row.e2el_ms = x.e2el_ms;
            if (log.decode_kv_capacity_tokens > 0) {
                std::int64_t& pool =
                    row.pool == "prefill" ? s.prefill_kv_peak_tokens : s.decode_kv_peak_tokens;
                pool = std::max(pool, row.kv_peak_tokens);
            }
            s.replicas.push_back(std::move(row));
        }
        s.decode_kv_capacity_tokens = log.decode_kv_capacity_tokens;
        if (itlFromReplicas(log, opt)) { // as itlStats(log) gives them
            for (auto& p : itl) p.first *= 1e3;
            s.itl_ms = describeWeighted(std::move(itl), opt.percentiles);
        }
    }
    return s;
}
} // namespace

nlohmann::json Summary::toJson() const {
    nlohmann::json j;
    j["workload"] = workload;
    j["policy"] = policy;
    j["exec_model"] = exec_model;
    j["num_requests"] = num_requests;
    j["completed"] = completed;
    j["killed"] = killed;
    {
        nlohmann::json k = nlohmann::json::object();
        for (const auto& [cause, n] : killed_by) k[cause] = n;
        j["killed_by"] = k;
    }
    j["never_started"] = never_started;
    j["total_input_tokens"] = total_input_tokens;
    j["total_output_tokens"] = total_output_tokens;
    j["duration"] = jsonNumber(duration_s);
    // The offered load: +inf (an offline batch) is written as null, like NaN.
    j["offered_rate"] = jsonNumber(load.offered_rate);
    j["saturated"] = load.saturated ? nlohmann::json(*load.saturated) : nlohmann::json(nullptr);
    j["saturation"] = {{"verdict", load.verdict},
                       {"arrival_span_s", jsonNumber(load.arrival_span_s)},
                       {"queue_growth", jsonNumber(load.queue_growth)},
                       {"from_s", jsonNumber(load.from_s)},
                       {"to_s", jsonNumber(load.to_s)},
                       {"arrival_cv2", jsonNumber(load.arrival_cv2)},
                       {"window_s", jsonNumber(load.window_s)},
                       {"window_arrivals", load.window_arrivals},
                       {"queue_at_last_arrival", load.queue_at_last_arrival},
                       {"dropped_waiting", load.dropped_waiting},
                       {"max_queue", load.max_queue},
                       {"score", jsonNumber(load.score)},
                       {"band", loadBandName(loadBand(load))},
                       {"arrivals", load.arrivals},
                       {"killed", load.killed},
                       {"finished", load.finished},
                       {"slo_missed", load.slo_missed < 0 ? nlohmann::json(nullptr)
                                                          : nlohmann::json(load.slo_missed)},
                       {"drain_s", jsonNumber(load.drain_s)}};
    j["request_throughput"] = jsonNumber(request_throughput);
    j["output_throughput"] = jsonNumber(output_throughput);
    j["total_token_throughput"] = jsonNumber(total_token_throughput);
    if (request_goodput) {
        j["request_goodput"] = jsonNumber(*request_goodput);
        j["good_requests"] = good_requests;
    }
    auto put = [&](const char* m, const Stats& st) {
        const std::string name(m);
        j["mean_" + name + "_ms"] = jsonNumber(st.mean);
        j["median_" + name + "_ms"] = jsonNumber(st.median);
        j["std_" + name + "_ms"] = jsonNumber(st.std);
        j[name + "_count"] = st.count; // samples behind the statistics
        for (const auto& [q, v] : st.percentiles)
            j[percentileKey(q) + "_" + name + "_ms"] = jsonNumber(v);
    };
    put("ttft", ttft_ms);
    put("tpot", tpot_ms);
    put("itl", itl_ms);
    put("e2el", e2el_ms);
    put("queue", queue_ms);
    if (budget_requests > 0) {
        j["budget_requests"] = budget_requests;
        j["in_budget"] = in_budget;
        j["completion_rate"] = completion_rate;
        j["mean_alpha"] = mean_alpha;
        j["mean_quality"] = mean_quality;
    }
    for (const auto& r : robot) {
        const std::string k = "robot_" + r.cls + "_";
        j[k + "tasks"] = r.tasks;
        // utility*: the first response's (the paper's metric; negative when late);
        // segment_utility*: summed over the plan's segments, each floored at zero.
        j[k + "utility"] = jsonNumber(r.utility);
        j[k + "utility_pct"] = jsonNumber(r.utilityPercent());
        j[k + "max_utility"] = r.max_utility;
        j[k + "mean_utility"] = jsonNumber(r.meanUtility());
        j[k + "segment_utility"] = r.segment_utility;
        j[k + "segment_utility_pct"] = jsonNumber(r.segmentUtilityPercent());
        j[k + "segment_max_utility"] = r.segment_max_utility;
        j[k + "responded"] = r.responded;
        j[k + "complete"] = r.complete;
        j[k + "mean_response_s"] = jsonNumber(r.mean_response);
        j[k + "mean_robot_wait_s"] = jsonNumber(r.mean_robot_wait);
        j[k + "mean_completion_s"] = jsonNumber(r.mean_completion);
    }
    j["kv_peak_tokens"] = kv_peak_tokens;
    j["kv_capacity_tokens"] = kv_capacity_tokens;
    if (decode_kv_capacity_tokens > 0) {
        j["decode_kv_capacity_tokens"] = decode_kv_capacity_tokens;
        j["prefill_kv_peak_tokens"] = prefill_kv_peak_tokens;
        j["decode_kv_peak_tokens"] = decode_kv_peak_tokens;
    }
    if (authors) {
        // The TimelyLLM authors' metric (Summary::authors).
        j["authors_urgent_utility_pct"] = jsonNumber(authors->urgent_pct);
        j["authors_normal_utility_pct"] = jsonNumber(authors->normal_pct);
        j["authors_utility_pct"] = jsonNumber(authors->all_pct);
        j["authors_scored"] = authors->scored;
        j["authors_dropped"] = authors->dropped;
    }
    j["preemptions"] = preemptions;
    if (resubmissions > 0) j["segment_resubmissions"] = resubmissions;
    j["suspensions"] = suspensions;
    j["iterations"] = iterations;
    j["stretches"] = stretches;
    if (prefix_caching) {
        j["prefix_caching"] = true;
        j["prefix_cached_tokens"] = prefix_cached_tokens;
        j["prefix_cache_hit_rate"] = prefix_cache_hit_rate;
        j["prefix_recompute_cached_tokens"] = prefix_recompute_cached_tokens;
        j["prefix_cache_evictions"] = prefix_cache_evictions;
    }
    if (replica_count > 1) {
        j["router"] = router;
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& r : replicas) {
            nlohmann::json x;
            x["replica"] = r.replica;
            if (!r.pool.empty()) x["pool"] = r.pool;
            x["requests"] = r.requests;
            x["completed"] = r.completed;
            x["killed"] = r.killed;
            if (request_goodput) x["good_requests"] = r.good_requests;
            x["request_throughput"] = jsonNumber(r.request_throughput);
            auto putStats = [&](const char* m, const Stats& st) {
                const std::string name(m);
                x["mean_" + name + "_ms"] = jsonNumber(st.mean);
                x["median_" + name + "_ms"] = jsonNumber(st.median);
                x[name + "_count"] = st.count;
                for (const auto& [q, v] : st.percentiles)
                    x[percentileKey(q) + "_" + name + "_ms"] = jsonNumber(v);
            };
            putStats("ttft", r.ttft_ms);
            putStats("tpot", r.tpot_ms);
            putStats("e2el", r.e2el_ms);
            x["kv_peak_tokens"] = r.kv_peak_tokens;
            x["preemptions"] = r.preemptions;
            x["iterations"] = r.iterations;
            if (prefix_caching) {
                x["prefix_cached_tokens"] = r.prefix_cached_tokens;
                x["prefix_cache_hit_rate"] = r.prefix_cache_hit_rate;
            }
            rows.push_back(std::move(x));
        }
        j["replicas"] = std::move(rows);
    }
    j["sim_wall_ms"] = sim_wall_ms;
    j["warnings"] = warnings;
    j["percentiles"] = percentiles;
    return j;
}

Summary Summary::fromJson(const nlohmann::json& j) {
    if (!j.is_object()) throw std::invalid_argument("a run summary must be a JSON object");
    Summary s;
    auto str = [&](const char* k) {
        const auto it = j.find(k);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    auto real = [&](const std::string& k) {
        const auto it = j.find(k);
        return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
    };
    // Counts: whole numbers in [0, 2^62]; anything else (a corrupt or edited row) is 0,
    // never a cast of an out-of-range double.
    auto count = [&](const char* k) {
        const auto it = j.find(k);
        if (it == j.end() || !it->is_number()) return std::int64_t(0);
        if (it->is_number_integer()) return std::max<std::int64_t>(0, it->get<std::int64_t>());
        const double v = it->get<double>();
        return v >= 0 && v <= 4.6e18 ? static_cast<std::int64_t>(v) : std::int64_t(0);
    };
    s.workload = str("workload");
    s.policy = str("policy");
    s.exec_model = str("exec_model");
    s.num_requests = count("num_requests");
    s.completed = count("completed");
    s.killed = count("killed");
    if (const auto it = j.find("killed_by"); it != j.end() && it->is_object())
        for (auto k = it->begin(); k != it->end(); ++k)
            if (k->is_number_integer() && k->get<std::int64_t>() >= 0)
                s.killed_by.emplace_back(k.key(), k->get<std::int64_t>());
    s.never_started = count("never_started");
    s.total_input_tokens = count("total_input_tokens");
    s.total_output_tokens = count("total_output_tokens");
    s.duration_s = real("duration");
    s.load.offered_rate = real("offered_rate");
    if (const auto it = j.find("saturated"); it != j.end() && it->is_boolean())
        s.load.saturated = it->get<bool>();
    if (const auto it = j.find("saturation"); it != j.end() && it->is_object()) {
        const auto& l = *it;
        auto lnum = [&](const char* k) {
            const auto f = l.find(k);
            return f != l.end() && f->is_number() ? f->get<double>() : std::nan("");
        };
        if (const auto v = l.find("verdict"); v != l.end() && v->is_string())
            s.load.verdict = v->get<std::string>();
        s.load.arrival_span_s = lnum("arrival_span_s");
        s.load.queue_growth = lnum("queue_growth");
        s.load.from_s = lnum("from_s");
        s.load.to_s = lnum("to_s");
        s.load.arrival_cv2 = lnum("arrival_cv2");
        s.load.window_s = lnum("window_s");
        auto lcount = [&](const char* k) {
            const double v = lnum(k);
            return v >= 0 && v <= 4.6e18 ? static_cast<std::int64_t>(v) : std::int64_t(0);
        };
        s.load.window_arrivals = lcount("window_arrivals");
        s.load.queue_at_last_arrival = lcount("queue_at_last_arrival");
        s.load.drain_s = lnum("drain_s");
        s.load.dropped_waiting = lcount("dropped_waiting");
        s.load.max_queue = lcount("max_queue");
        s.load.arrivals = lcount("arrivals"); // absent in runs stored before: 0
        s.load.killed = lcount("killed");
        s.load.finished = lcount("finished");
        if (const auto m = l.find("slo_missed");
            m != l.end() && m->is_number_integer() && m->get<std::int64_t>() >= 0)
            s.load.slo_missed = m->get<std::int64_t>();
        if (const double v = lnum("score"); std::isfinite(v)) s.load.score = v;
    }
    s.request_throughput = real("request_throughput");
    s.output_throughput = real("output_throughput");
    s.total_token_throughput = real("total_token_throughput");
    if (j.contains("request_goodput")) {
        s.request_goodput = real("request_goodput");
        s.good_requests = count("good_requests");
    }
    if (const auto it = j.find("percentiles"); it != j.end() && it->is_array())
        for (const auto& q : *it)
            if (q.is_number()) s.percentiles.push_back(q.get<double>());
    auto get = [&](const char* m, Stats& st) {
        const std::string name(m);
        st.mean = real("mean_" + name + "_ms");
        st.median = real("median_" + name + "_ms");
        st.std = real("std_" + name + "_ms");
        st.count = j.contains(name + "_count") ? count((name + "_count").c_str())
                                               : std::int64_t(std::isfinite(st.mean));
        for (double q : s.percentiles)
            st.percentiles.emplace_back(q, real(percentileKey(q) + "_" + name + "_ms"));
    };
    get("ttft", s.ttft_ms);
    get("tpot", s.tpot_ms);
    get("itl", s.itl_ms);
    get("e2el", s.e2el_ms);
    get("queue", s.queue_ms);
    s.budget_requests = count("budget_requests");
    s.in_budget = count("in_budget");
    if (s.budget_requests > 0) {
        s.completion_rate = real("completion_rate");
        s.mean_alpha = real("mean_alpha");
        s.mean_quality = real("mean_quality");
    }
    if (const auto it = j.find("replicas"); it != j.end() && it->is_array() && !it->empty()) {
        s.replica_count = static_cast<std::int32_t>(std::min<std::size_t>(it->size(), 1u << 20));
        s.router = str("router");
        for (const auto& x : *it) {
            if (!x.is_object()) continue;
            nlohmann::json xx = x; // the same keys, fewer of them
            if (const auto q = j.find("percentiles"); q != j.end()) xx["percentiles"] = *q;
            xx["num_requests"] = x.contains("requests") ? x["requests"] : nlohmann::json(0);
            const Summary row = fromJson(xx);
            ReplicaSummary r;
            r.replica = static_cast<int>(s.replicas.size());
            r.requests = row.num_requests;
            r.completed = row.completed;
            r.killed = row.killed;
            r.good_requests = row.good_requests;
            r.request_throughput = row.request_throughput;
            r.ttft_ms = row.ttft_ms;
            r.tpot_ms = row.tpot_ms;
            r.e2el_ms = row.e2el_ms;
            r.kv_peak_tokens = row.kv_peak_tokens;
            r.preemptions = row.preemptions;
            r.iterations = row.iterations;
            r.prefix_cached_tokens = row.prefix_cached_tokens;
            r.prefix_cache_hit_rate = row.prefix_cache_hit_rate;
            s.replicas.push_back(std::move(r));
        }
    }
    // Robot classes: the keys robot_<class>_tasks ("all" first, then by name: JSON objects
    // keep no order).
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        const std::string pre = "robot_", suf = "_tasks";
        if (k.size() <= pre.size() + suf.size() || k.compare(0, pre.size(), pre) != 0 ||
            k.compare(k.size() - suf.size(), suf.size(), suf) != 0)
            continue;
        RobotClassSummary r;
        r.cls = k.substr(pre.size(), k.size() - pre.size() - suf.size());
        const std::string p = pre + r.cls + "_";
        r.tasks = long(count(k.c_str()));
        if (j.contains(p + "segment_utility")) {
            r.utility = real(p + "utility");
            r.max_utility = real(p + "max_utility");
            r.segment_utility = real(p + "segment_utility");
            r.segment_max_utility = real(p + "segment_max_utility");
        } else {
            // Written before the first-response utility was the metric: what was stored as
            // "utility" is the summed one; the first-response utility was not recorded.
            r.segment_utility = real(p + "utility");
            r.segment_max_utility = real(p + "max_utility");
            if (std::isnan(r.segment_max_utility)) { // older still: from the share
                const double pct = real(p + "utility_pct");
                r.segment_max_utility = pct > 0 ? 100.0 * r.segment_utility / pct : 0.0;
            }
            r.utility = r.max_utility = std::nan("");
        }
        // Written before the counts were: the means were over every task.
        r.responded =
            j.contains(p + "responded") ? long(count((p + "responded").c_str())) : r.tasks;
        r.complete = j.contains(p + "complete") ? long(count((p + "complete").c_str())) : r.tasks;
        r.mean_response = real(p + "mean_response_s");
        r.mean_robot_wait = real(p + "mean_robot_wait_s");
        r.mean_completion = real(p + "mean_completion_s");
        s.robot.push_back(r);
    }
    std::stable_partition(s.robot.begin(), s.robot.end(),
                          [](const RobotClassSummary& r) { return r.cls == "all"; });
    s.kv_peak_tokens = count("kv_peak_tokens");
    s.kv_capacity_tokens = count("kv_capacity_tokens");
    s.decode_kv_capacity_tokens = count("decode_kv_capacity_tokens");
    s.prefill_kv_peak_tokens = count("prefill_kv_peak_tokens");
    s.decode_kv_peak_tokens = count("decode_kv_peak_tokens");
    s.preemptions = count("preemptions");
    s.resubmissions = count("segment_resubmissions");
    if (j.contains("authors_scored")) {
        Authors a;
        a.urgent_pct = real("authors_urgent_utility_pct");
        a.normal_pct = real("authors_normal_utility_pct");
        a.all_pct = real("authors_utility_pct");
        a.scored = count("authors_scored");
        a.dropped = count("authors_dropped");
        s.authors = a;
    }
    s.suspensions = count("suspensions");
    s.iterations = count("iterations");
    s.stretches = count("stretches");
    if (const auto it = j.find("prefix_caching"); it != j.end() && it->is_boolean())
        s.prefix_caching = it->get<bool>();
    s.prefix_cached_tokens = count("prefix_cached_tokens");
    s.prefix_recompute_cached_tokens = count("prefix_recompute_cached_tokens");
    s.prefix_cache_evictions = count("prefix_cache_evictions");
    s.prefix_cache_hit_rate = s.prefix_caching ? real("prefix_cache_hit_rate") : 0.0;
    s.sim_wall_ms = real("sim_wall_ms");
    if (const auto it = j.find("warnings"); it != j.end() && it->is_array())
        for (const auto& w : *it)
            if (w.is_string()) s.warnings.push_back(w.get<std::string>());
    return s;
}

std::string Summary::coverage() const {
    if (num_requests > 0 && completed == num_requests)
        return "all " + std::to_string(num_requests) + " requests";
    std::string c =
        std::to_string(completed) + " completed of " + std::to_string(num_requests) + " requests";
    std::string left;
    if (killed > 0) {
        std::string by;
        for (const auto& [cause, n] : killed_by)
            by += (by.empty() ? "" : ", ") + cause + " " + std::to_string(n);
        left = std::to_string(killed) + " killed" + (by.empty() ? "" : " (" + by + ")");
    }
    const std::int64_t unfinished = num_requests - completed - killed;
    if (unfinished > 0)
        left += (left.empty() ? "" : ", ") + std::to_string(unfinished) + " unfinished";
    return left.empty() ? c : c + "; left out: " + left;
}

std::string Summary::table() const {
    std::ostringstream o;
    char buf[160];
    // Labels padded to 40 columns; values whole, however long (an execution model's
    // description can run past any fixed buffer).
    auto line = [&](const char* label, const std::string& v) {
        std::snprintf(buf, sizeof buf, "%-40s ", label);
        o << buf << v << "\n";
    };
    auto f = [](double v, int prec = 2) {
        if (!std::isfinite(v)) return std::string("n/a");
        char b[64];
        std::snprintf(b, sizeof b, "%.*f", prec, v);
        return std::string(b);
    };
    auto head = [&](const char* t) {
        std::snprintf(buf, sizeof buf, "%s\n", std::string(50, '-').c_str());
        o << buf << t << "\n" << buf;
    };
    const bool live = exec_model.rfind("live:", 0) == 0; // a live run (gpu/live_engine)
    o << (live ? "================ Kairos live run ================\n"
               : "=============== Kairos simulation ===============\n");
    line("Workload:", text::printable(workload));
    line("Policy:", text::printable(policy));
    line("Execution model:", text::printable(exec_model));
    line("Requests (completed / killed / all):", std::to_string(completed) + " / " +
                                                     std::to_string(killed) + " / " +
                                                     std::to_string(num_requests));
    if (killed > 0) {
        std::string by;
        for (const auto& [cause, n] : killed_by)
            by += (by.empty() ? "" : ", ") + cause + " " + std::to_string(n);
        line("Killed by rule:", by);
    }
    if (never_started > 0) line("Never started (no prefill):", std::to_string(never_started));
    line("Latency statistics are over:", coverage());
    line("Offered request rate (req/s):", std::isinf(load.offered_rate)
                                              ? std::string("inf (all arrive at once)")
                                              : f(load.offered_rate));
    line("Achieved request rate (req/s):", f(request_throughput));
    // Near the threshold either side (kNearSaturation) the two-way verdict is said with
    // its band: a small change of rate or policy moves it across.
    // What requests got beside the queue: the finished ones that missed an SLO.
    std::string slo_tail = load.slo_missed > 0
                               ? "; " + std::to_string(load.slo_missed) + " of " +
                                     std::to_string(load.finished) + " finished missed an SLO"
                               : std::string();
    // Killed or dropped requests where they are not most (that band says them itself): the
    // queue "keeps up" read alone as a run that served its load.
    if (load.killed > 0 && loadBand(load) != LoadBand::ShedsLoad)
        slo_tail = "; but " + std::to_string(load.killed) + " of " + std::to_string(load.arrivals) +
                   " requests killed or dropped" + slo_tail;
    line("Load:",
         (loadBand(load) == LoadBand::ShedsLoad
              ? "sheds load: " + std::to_string(load.killed) + " of " +
                    std::to_string(load.arrivals) +
                    " requests killed or dropped, never finished (the queue alone: " +
                    (load.verdict.empty() ? std::string("n/a") : load.verdict) + ")"
          : load.verdict.empty() ? std::string("n/a")
          : loadBand(load) == LoadBand::NearSaturation
              ? "near saturation (" + f(load.score) + " of the threshold; " +
                    text::formatted("%g to %g", kNearSaturation.first, kNearSaturation.second) +
                    " read alike): " + load.verdict
              : load.verdict) +
             slo_tail);
    line("Duration (s):", f(duration_s));
    line("Total input tokens:", std::to_string(total_input_tokens));
    line("Total generated tokens:", std::to_string(total_output_tokens));
    line("Request throughput (req/s):", f(request_throughput));
    line("Output token throughput (tok/s):", f(output_throughput));
    line("Total token throughput (tok/s):", f(total_token_throughput));
    if (request_goodput)
        line("Request goodput (req/s):",
             f(*request_goodput) + "  (" + std::to_string(good_requests) + " good)");
    auto block = [&](const char* title, const char* m, const Stats& st) {
        head(title);
        line(("Mean " + std::string(m) + " (ms):").c_str(), f(st.mean));
        line(("Median " + std::string(m) + " (ms):").c_str(), f(st.median));
        for (const auto& [q, v] : st.percentiles) {
            const std::string k = "P" + percentileKey(q).substr(1) + " " + m + " (ms):";
            line(k.c_str(), f(v));
        }
    };
    block("Time to First Token", "TTFT", ttft_ms);
    block("Time per Output Token (excl. 1st token)", "TPOT", tpot_ms);
    block("Inter-token Latency", "ITL", itl_ms);
    block("End-to-end Latency", "E2EL", e2el_ms);
    if (budget_requests > 0) {
        head("Time budgets");
        line("Finished within budget:", std::to_string(in_budget) + " of " +
                                            std::to_string(budget_requests) + " (" +
                                            f(100.0 * completion_rate, 1) + " %)");
        line("Mean eviction ratio alpha:", f(mean_alpha, 3));
        line("Mean quality proxy q(alpha):", f(mean_quality, 3));
    }
    if (!robot.empty()) {
        head("Robot plans (TimelyLLM)");
        for (const auto& r : robot) {
            const std::string label =
                "Utility W(s0), " + r.cls + " (" + std::to_string(r.tasks) + " tasks):";
            line(label.c_str(), std::isnan(r.utility)
                                    ? std::string("not recorded (a run stored before it was)")
                                    : f(r.utility) + " of " + f(r.max_utility) + " (" +
                                          f(r.utilityPercent(), 1) + " %)");
        }
        for (const auto& r : robot) {
            const std::string label = "Utility summed over segments, " + r.cls + ":";
            line(label.c_str(), f(r.segment_utility) + " of " + f(r.segment_max_utility) + " (" +
                                    f(r.segmentUtilityPercent(), 1) + " %)");
        }
        const RobotClassSummary& a = robot[0];
        auto over = [&](long n) {
            return n == a.tasks ? std::string()
                                : "  (over " + std::to_string(n) + " of " +
                                      std::to_string(a.tasks) + " tasks)";
        };
        line("Mean response time W(s0) (s):", f(a.mean_response, 3) + over(a.responded));
        line("Mean robot waiting time (s):", f(a.mean_robot_wait, 3) + over(a.complete));
        line("Mean task completion time (s):", f(a.mean_completion, 3) + over(a.complete));
        if (a.responded < a.tasks)
            line("Tasks never answered:", std::to_string(a.tasks - a.responded));
        if (authors) {
            line("Authors' metric, urgent / normal:",
                 f(authors->urgent_pct, 1) + " % / " + f(authors->normal_pct, 1) + " % of beta");
            line("Authors' metric, scored / dropped:", std::to_string(authors->scored) + " / " +
                                                           std::to_string(authors->dropped) +
                                                           " (the first 10 tasks skipped)");
        }
    }
    head("KV cache and engine");
    if (decode_kv_capacity_tokens > 0) { // the pools on different hardware
        line("KV peak / capacity, prefill pool:",
             std::to_string(prefill_kv_peak_tokens) + " / " + std::to_string(kv_capacity_tokens));
        line("KV peak / capacity, decode pool:", std::to_string(decode_kv_peak_tokens) + " / " +
                                                     std::to_string(decode_kv_capacity_tokens));
    } else {
        line("KV peak / capacity (tokens):",
             std::to_string(kv_peak_tokens) + " / " + std::to_string(kv_capacity_tokens));
    }
    line("Preemptions:", std::to_string(preemptions));
    if (resubmissions > 0)
        line("Segments re-queued (not preemptions):", std::to_string(resubmissions));
    if (prefix_caching) {
        line("Prompt tokens from the prefix cache:", std::to_string(prefix_cached_tokens) + " (" +
                                                         f(100.0 * prefix_cache_hit_rate, 1) +
                                                         " % of all prompt tokens)");
        if (prefix_recompute_cached_tokens > 0)
            line("Recomputed tokens from the cache:",
                 std::to_string(prefix_recompute_cached_tokens));
        line("Cached blocks evicted:", std::to_string(prefix_cache_evictions));
    }
    line("Iterations (in stretches):",
         std::to_string(iterations) + " (" + std::to_string(stretches) + ")");
    if (replica_count > 1) {
        head(("Replicas (" + std::to_string(replica_count) + ", router " + router + ")").c_str());
        char b[160];
        const int wide = !replicas.empty() && !replicas.front().pool.empty() ? 11 : 8;
        std::snprintf(b, sizeof b, "%-*s%9s%10s%12s%12s%12s%12s\n", wide, "replica", "requests",
                      "completed", "TTFT mean", "TTFT p50", "TPOT mean", "KV peak");
        o << b;
        // Disaggregation: the prefill pool's requests end when their KV leaves (its TTFT is
        // the prompt's time there), the decode pool's begin when it has arrived.
        for (const auto& r : replicas) {
            const std::string who = r.pool.empty() ? std::to_string(r.replica)
                                                   : std::to_string(r.replica) + " " + r.pool;
            std::snprintf(b, sizeof b, "%-*s%9lld%10lld%12s%12s%12s%12lld\n", wide, who.c_str(),
                          static_cast<long long>(r.requests), static_cast<long long>(r.completed),
                          f(r.ttft_ms.mean).c_str(), f(r.ttft_ms.median).c_str(),
                          f(r.tpot_ms.mean).c_str(), static_cast<long long>(r.kv_peak_tokens));
            o << b;
        }
        if (!replicas.empty() && !replicas.front().pool.empty())
            o << "(prefill: TTFT to the KV's transfer; decode: TTFT from its arrival)\n";
        if (prefix_caching)
            for (const auto& r : replicas)
                line(("Replica " + std::to_string(r.replica) +
                      (r.pool.empty() ? "" : " " + r.pool) + " prefix cache hit rate:")
                         .c_str(),
                     f(100.0 * r.prefix_cache_hit_rate, 1) + " %");
    }
    line(live ? "Engine wall time (ms):" : "Simulation wall time (ms):", f(sim_wall_ms, 1));
    for (const auto& w : warnings) o << "warning: " << text::printable(w) << "\n";
    o << std::string(50, '=') << "\n";
    return o.str();
}

} // namespace kairos
