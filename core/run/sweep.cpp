#include "run/sweep.h"

#include "metrics/metric_table.h"
#include "metrics/stats.h"
#include "sched/registry.h"
#include "util/enum_names.h"
#include "util/hash.h"
#include "util/input_error.h"
#include "util/parallel.h"
#include "util/text.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

namespace kairos::sweep {

namespace {

using json = nlohmann::json;
constexpr std::size_t kMaxValues = 100000;
constexpr std::size_t kMaxRuns = 1000000;

double parseNumber(const std::string& s, const std::string& arg) {
    double v;
    if (!text::parseNumberStrict(s, &v))
        throw std::invalid_argument(arg + ": '" + s +
                                    "' is not a number (decimal, finite, no blanks)");
    return v;
}

double round12(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return std::strtod(buf, nullptr);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

constexpr EnumName<AxisKind> kAxisKindNames[] = {{AxisKind::Policy, "policy"},
                                                 {AxisKind::Param, "param"},
                                                 {AxisKind::Rate, "rate"},
                                                 {AxisKind::RateScale, "rate_scale"},
                                                 {AxisKind::KvCapacity, "kv_capacity"},
                                                 {AxisKind::Profile, "profile"},
                                                 {AxisKind::MaxNumSeqs, "max_num_seqs"},
                                                 {AxisKind::Replicas, "replicas"},
                                                 {AxisKind::Router, "router"},
                                                 {AxisKind::Budget, "budget"}};

const char* kindName(AxisKind k) {
    return enumName(kAxisKindNames, k);
}

AxisKind kindFromName(const std::string& s, const std::string& where) {
    for (AxisKind k : {AxisKind::Policy, AxisKind::Param, AxisKind::Rate, AxisKind::RateScale,
                       AxisKind::KvCapacity, AxisKind::Profile, AxisKind::MaxNumSeqs,
                       AxisKind::Replicas, AxisKind::Router, AxisKind::Budget})
        if (s == kindName(k)) return k;
    throw InputError(where, 0, "axes.kind", "unknown axis kind '" + s + "'");
}

// Applies an axis value to a spec; false when the axis does not apply (a parameter the
// point's policy does not have).
bool apply(const Axis& a, const std::string& v, RunSpec& s) {
    switch (a.kind) {
    case AxisKind::Policy: {
        // The base's parameters that this policy has (the others belong to another policy).
        s.policy.name = v;
        const PolicySpec* p = findPolicy(v);
        for (auto it = s.policy.params.begin(); it != s.policy.params.end();)
            it = p && p->param(it->first) ? std::next(it) : s.policy.params.erase(it);
        return true;
    }
    case AxisKind::Param: {
        const PolicySpec* p = findPolicy(s.policy.name);
        if (!p || !p->param(a.name)) return false;
        s.policy.params[a.name] = std::strtod(v.c_str(), nullptr);
        return true;
    }
    case AxisKind::Rate:
        s.workload.generate_arrivals = true;
        s.workload.rate = std::strtod(v.c_str(), nullptr);
        s.workload.rate_scale = 1.0;
        return true;
    case AxisKind::RateScale:
        s.workload.rate_scale = std::strtod(v.c_str(), nullptr);
        return true;
    case AxisKind::KvCapacity:
        s.limits.kv_capacity_tokens = std::strtoll(v.c_str(), nullptr, 10);
        return true;
    case AxisKind::Profile:
        s.exec.profile = v;
        return true;
    case AxisKind::MaxNumSeqs:
        s.limits.max_num_seqs = static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
        return true;
    case AxisKind::Replicas:
        s.fleet.replicas = static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
        return true;
    case AxisKind::Router:
        s.fleet.router = v;
        return true;
    case AxisKind::Budget:
        s.workload.budget = std::strtod(v.c_str(), nullptr);
        return true;
    }
    return false;
}

std::string num(double v) {
    if (!std::isfinite(v)) return "";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

} // namespace

std::string formatValue(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return buf;
}

std::vector<double> parseRange(const std::string& text, const std::string& arg) {
    if (text.empty()) throw std::invalid_argument(arg + ": no values");
    if (text.find(':') == std::string::npos) {
        std::vector<double> out;
        for (const auto& item : split(text, ',')) out.push_back(parseNumber(item, arg));
        return out;
    }
    const auto parts = split(text, ':');
    if (parts.size() != 3)
        throw std::invalid_argument(arg + ": a range is LO:HI:STEP or LO:HI:xFACTOR");
    const double lo = parseNumber(parts[0], arg), hi = parseNumber(parts[1], arg);
    if (lo > hi) throw std::invalid_argument(arg + ": LO " + parts[0] + " is above HI " + parts[1]);
    std::vector<double> out;
    if (!parts[2].empty() && (parts[2][0] == 'x' || parts[2][0] == '*')) {
        const double f = parseNumber(parts[2].substr(1), arg);
        if (!(f > 1)) throw std::invalid_argument(arg + ": a geometric factor must be > 1");
        if (!(lo > 0)) throw std::invalid_argument(arg + ": a geometric range needs LO > 0");
        for (double v = lo; v <= hi * (1 + 1e-9); v *= f) {
            out.push_back(round12(v));
            if (out.size() > kMaxValues) break;
        }
    } else {
        const double step = parseNumber(parts[2], arg);
        if (!(step > 0)) throw std::invalid_argument(arg + ": STEP must be > 0");
        const double n = std::floor((hi - lo) / step + 1e-9);
        if (n + 1 > double(kMaxValues))
            throw std::invalid_argument(arg + ": more than 100,000 values");
        for (long i = 0; i <= long(n); ++i) out.push_back(round12(lo + double(i) * step));
    }
    if (out.size() > kMaxValues) throw std::invalid_argument(arg + ": more than 100,000 values");
    return out;
}

Axis paramAxis(const std::string& arg, const std::vector<std::string>& policies) {
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    Axis a;
    a.kind = AxisKind::Param;
    a.name = name;
    a.arg = "--param " + arg;
    std::vector<const ParamSpec*> specs;
    std::vector<std::string> owners;
    for (const auto& p : policies) {
        const PolicySpec& ps = policySpec(p);
        if (const ParamSpec* s = ps.param(name)) {
            specs.push_back(s);
            owners.push_back(p);
        }
    }
    if (specs.empty()) {
        std::string known;
        for (const auto& p : policies)
            for (const auto& s : policySpec(p).params)
                if (known.find(" " + s.name + ",") == std::string::npos)
                    known += " " + s.name + ",";
        if (!known.empty()) known.pop_back();
        throw std::invalid_argument(a.arg + ": no policy of the sweep has a parameter '" + name +
                                    "' (they have:" + known + ")");
    }
    std::vector<double> values;
    if (eq == std::string::npos) {
        // The registered explored range: 21 points.
        const ParamSpec& s = *specs.front();
        if (s.kind == ParamSpec::Kind::Flag) {
            values = {0, 1};
        } else {
            for (int i = 0; i <= 20; ++i) {
                const double t = i / 20.0;
                double v = s.log ? s.explore_lo * std::pow(s.explore_hi / s.explore_lo, t)
                                 : s.explore_lo + t * (s.explore_hi - s.explore_lo);
                if (s.kind == ParamSpec::Kind::Whole) v = std::round(v);
                v = round12(v);
                if (values.empty() || values.back() != v) values.push_back(v);
            }
        }
    } else {
        values = parseRange(arg.substr(eq + 1), a.arg);
    }
    for (double v : values) {
        for (std::size_t i = 0; i < specs.size(); ++i) {
            try {
                specs[i]->check(owners[i], v);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument(a.arg + ": " + e.what());
            }
        }
        a.values.push_back(formatValue(v));
    }
    return a;
}

std::vector<std::string> Definition::defaultMetrics(const RunSpec& base) {
    std::vector<std::string> m = {"completed",    "request_throughput", "goodput_fraction",
                                  "mean_ttft_ms", "mean_tpot_ms",       "mean_e2el_ms"};
    for (double q : base.summary.percentiles)
        if (q == 99) {
            m.push_back("p99_ttft_ms");
            m.push_back("p99_e2el_ms");
        }
    m.push_back("kv_peak_tokens");
    m.push_back("preemptions");
    return m;
}

json Definition::toJson() const {
    json axes_j = json::array();
    for (const auto& a : axes)
        axes_j.push_back(
            {{"kind", kindName(a.kind)}, {"name", a.name}, {"values", a.values}, {"arg", a.arg}});
    return json{{"kairos_sweep", 1},
                {"base", base.toJson()},
                {"axes", axes_j},
                {"seeds", seeds},
                {"metrics", metrics}};
}

Definition Definition::fromJson(const json& j, const std::string& where) {
    Definition d;
    try {
        d.base = RunSpec::fromJson(j.at("base"), where);
        for (const auto& a : j.at("axes")) {
            Axis x;
            x.kind = kindFromName(a.at("kind").get<std::string>(), where);
            x.name = a.at("name").get<std::string>();
            x.values = a.at("values").get<std::vector<std::string>>();
            x.arg = a.value("arg", "");
            d.axes.push_back(std::move(x));
        }
        d.seeds = j.at("seeds").get<int>();
        // Names of earlier releases ("ttft_mean_ms") read as today's ("mean_ttft_ms").
        for (const auto& m : j.at("metrics").get<std::vector<std::string>>())
            d.metrics.push_back(canonicalMetricKey(m));
    } catch (const json::exception& e) {
        throw InputError(where, 0, "", std::string("not a sweep definition: ") + e.what());
    }
    if (d.seeds < 1) throw InputError(where, 0, "seeds", "must be >= 1");
    return d;
}

std::vector<Point> expand(const Definition& d) {
    std::vector<Point> out;
    std::set<std::vector<std::string>> seen;
    std::vector<std::size_t> idx(d.axes.size(), 0);
    for (const auto& a : d.axes)
        if (a.values.empty()) return out;
    // A grid's size is bounded as a whole, not only per axis: 1,000,000 runs (points times
    // seeds) is days of simulation of any real trace, and each point's spec is held in memory.
    double grid = std::max(1, d.seeds);
    std::string dims;
    for (const auto& a : d.axes) {
        grid *= double(a.values.size());
        dims += std::to_string(a.values.size()) + " x ";
    }
    if (grid > double(kMaxRuns))
        throw std::invalid_argument("the sweep is " + dims + std::to_string(d.seeds) +
                                    " seeds = " + std::to_string(static_cast<long long>(grid)) +
                                    " runs, more than " + std::to_string(kMaxRuns) +
                                    " (fewer values per --param/--rate axis, or fewer --seeds)");
    // Policy axes first, so parameter axes see the point's policy.
    std::vector<std::size_t> order(d.axes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return (d.axes[a].kind == AxisKind::Policy) > (d.axes[b].kind == AxisKind::Policy);
    });
    while (true) {
        Point p;
        p.spec = d.base;
        p.values.assign(d.axes.size(), "");
        for (std::size_t k : order) {
            const std::string& v = d.axes[k].values[idx[k]];
            p.values[k] = apply(d.axes[k], v, p.spec) ? v : "-";
        }
        if (seen.insert(p.values).second) out.push_back(std::move(p));
        // Odometer, the last axis fastest.
        std::size_t k = d.axes.size();
        while (k > 0) {
            --k;
            if (++idx[k] < d.axes[k].values.size()) break;
            idx[k] = 0;
            if (k == 0) return out;
        }
        if (d.axes.empty()) return out;
    }
}

RunSpec jobSpec(const Definition& d, const std::vector<Point>& points, std::size_t job) {
    const std::size_t seeds = static_cast<std::size_t>(d.seeds);
    RunSpec s = points.at(job / seeds).spec;
    const std::uint64_t k = job % seeds;
    s.policy.seed += k;
    s.workload.arrival_seed += k;
    return s;
}

namespace {
// A journal line's checksum: a line cut short by an interruption (the last of a journal,
// "0x1.83a66p+10" cut to "0x1") never reads as a shorter number.
std::string lineCheck(std::string_view body) {
    return fnv1a64Hex(body);
}
} // namespace

std::string encode(std::size_t job, const Outcome& o) {
    std::string line =
        std::to_string(job) + " " + o.status + " " + std::to_string(o.metrics.size());
    char buf[40];
    for (double v : o.metrics) {
        std::snprintf(buf, sizeof buf, " %a", v);
        line += buf;
    }
    return line + " #" + lineCheck(line);
}

bool decode(const std::string& line, std::size_t* job, Outcome* o) {
    const auto hash = line.rfind(" #");
    if (hash == std::string::npos || line.size() - hash != 18) return false;
    const std::string body = line.substr(0, hash);
    if (lineCheck(body) != line.substr(hash + 2)) return false;
    std::istringstream in(body);
    long long j = -1, n = -1;
    std::string status;
    if (!(in >> j >> status >> n) || j < 0 || n < 0 || (status != "ok" && status != "loop"))
        return false;
    Outcome out;
    out.status = status;
    std::string tok;
    while (in >> tok) {
        char* end = nullptr;
        const double v = std::strtod(tok.c_str(), &end);
        if (end != tok.c_str() + tok.size()) return false;
        out.metrics.push_back(v);
    }
    if (static_cast<long long>(out.metrics.size()) != n) return false;
    *job = static_cast<std::size_t>(j);
    *o = std::move(out);
    return true;
}

std::map<std::size_t, Outcome> runJobs(const Definition& d, const std::vector<Point>& points,
                                       const RunContext& ctx, const RunOptions& opt,
                                       const std::map<std::size_t, Outcome>& done) {
    const std::size_t total = points.size() * static_cast<std::size_t>(d.seeds);
    std::vector<std::size_t> mine;
    for (std::size_t j = 0; j < total; ++j)
        if (static_cast<int>(j % static_cast<std::size_t>(opt.ranks)) == opt.rank && !done.count(j))
            mine.push_back(j);
    // The workload read once and each profile resolved once for all jobs.
    WorkloadCache cache;
    const RunContext c = forManyRuns(ctx, cache, opt.cancel);
    const std::size_t n_metrics = summaryMetricNames(d.base.summary.percentiles).size();
    if (!mine.empty()) {
        // The memory of the runs that go at once, judged before any starts, on the job
        // with the most replicas (then the most requests kept: --explain).
        std::size_t worst = mine.front();
        auto weight = [&](std::size_t j) {
            const RunSpec s = jobSpec(d, points, j);
            return std::make_pair(s.fleet.replicas, int(s.record.explain));
        };
        for (std::size_t j : mine)
            if (weight(j) > weight(worst)) worst = j;
        const MemoryEstimate need = checkConcurrentRuns(
            jobSpec(d, points, worst), c, parallelThreads(mine.size(), opt.threads), "the sweep",
            "fewer runs at once (--threads), fewer requests (--limit) or "
            "fewer replicas");
        if (opt.memory) opt.memory(need);
    }

    std::map<std::size_t, Outcome> out;
    std::mutex m;
    std::size_t finished = 0;
    parallelFor(mine.size(), opt.threads, [&](std::size_t i) {
        if (opt.cancel && opt.cancel->load()) return;
        const std::size_t job = mine[i];
        Outcome o;
        try {
            const RunResult r = runSpec(jobSpec(d, points, job), c);
            for (const auto& [name, v] : summaryMetrics(r.summary)) o.metrics.push_back(v);
        } catch (const SchedulerLoop&) {
            o.status = "loop";
            o.metrics.assign(n_metrics, std::numeric_limits<double>::quiet_NaN());
        } catch (const SimulationCancelled&) {
            return;
        }
        std::lock_guard<std::mutex> lock(m);
        if (opt.finished) opt.finished(job, o);
        out.emplace(job, std::move(o));
        ++finished;
        if (opt.progress) opt.progress(finished, mine.size());
    });
    return out;
}

Table aggregate(const Definition& d, const std::vector<Point>& points,
                const std::map<std::size_t, Outcome>& outcomes) {
    Table t;
    for (const auto& a : d.axes) t.axes.push_back(a.name);
    for (const auto& m : d.metrics) t.metrics.push_back(canonicalMetricKey(m));
    const auto names = summaryMetricNames(d.base.summary.percentiles);
    std::vector<std::size_t> col;
    for (const auto& mname : d.metrics) {
        const auto it = std::find(names.begin(), names.end(), canonicalMetricKey(mname));
        if (it == names.end()) throw std::invalid_argument("unknown metric '" + mname + "'");
        col.push_back(static_cast<std::size_t>(it - names.begin()));
    }
    const std::size_t seeds = static_cast<std::size_t>(d.seeds);
    for (std::size_t p = 0; p < points.size(); ++p) {
        Table::Row row;
        row.values = points[p].values;
        std::vector<std::vector<double>> per(col.size());
        for (std::size_t s = 0; s < seeds; ++s) {
            const auto it = outcomes.find(p * seeds + s);
            if (it == outcomes.end())
                throw std::logic_error("sweep: job " + std::to_string(p * seeds + s) +
                                       " has no result");
            ++row.runs;
            if (it->second.status != "ok") continue;
            ++row.ok;
            for (std::size_t c = 0; c < col.size(); ++c)
                per[c].push_back(col[c] < it->second.metrics.size()
                                     ? it->second.metrics[col[c]]
                                     : std::numeric_limits<double>::quiet_NaN());
        }
        for (const auto& v : per) {
            const auto [mean, half] = meanInterval95(v);
            row.mean.push_back(mean);
            row.half.push_back(half);
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

std::string Table::csv() const {
    std::string out;
    for (const auto& a : axes) out += text::csvField(a) + ",";
    out += "runs,ok";
    for (const auto& m : metrics) out += "," + m + "," + m + "_lo," + m + "_hi";
    out += "\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        for (const auto& v : r.values) out += text::csvField(v) + ",";
        out += std::to_string(r.runs) + "," + std::to_string(r.ok);
        for (std::size_t c = 0; c < metrics.size(); ++c) {
            const bool m = std::isfinite(r.mean[c]);
            out += "," + num(r.mean[c]) + "," + (m ? num(lo(i, c)) : "") + "," +
                   (m ? num(hi(i, c)) : "");
        }
        out += "\n";
    }
    return out;
}

double Table::lo(std::size_t r, std::size_t c) const {
    return std::max(rows[r].mean[c] - rows[r].half[c], metricFloor(metrics[c]));
}

json Table::toJson() const {
    json rows_j = json::array();
    auto jn = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
    for (std::size_t row = 0; row < rows.size(); ++row) {
        const Row& r = rows[row];
        json point = json::object();
        for (std::size_t i = 0; i < axes.size(); ++i) point[axes[i]] = r.values[i];
        json metrics_j = json::object();
        for (std::size_t c = 0; c < metrics.size(); ++c)
            metrics_j[metrics[c]] = {
                {"mean", jn(r.mean[c])}, {"lo", jn(lo(row, c))}, {"hi", jn(hi(row, c))}};
        rows_j.push_back(
            {{"point", point}, {"runs", r.runs}, {"ok", r.ok}, {"metrics", metrics_j}});
    }
    return json{{"axes", axes}, {"metrics", metrics}, {"rows", rows_j}};
}

Table Table::fromJson(const json& j, const std::string& where) {
    Table t;
    auto num = [](const json& v) {
        return v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN();
    };
    try {
        t.axes = j.at("axes").get<std::vector<std::string>>();
        t.metrics = j.at("metrics").get<std::vector<std::string>>();
        for (const auto& r : j.at("rows")) {
            Row row;
            for (const auto& ax : t.axes)
                row.values.push_back(r.at("point").at(ax).get<std::string>());
            row.runs = r.at("runs").get<int>();
            row.ok = r.at("ok").get<int>();
            for (const auto& m : t.metrics) {
                const auto& c = r.at("metrics").at(m);
                const double mean = num(c.at("mean"));
                row.mean.push_back(mean);
                row.half.push_back(std::isfinite(mean) ? num(c.at("hi")) - mean : 0);
            }
            t.rows.push_back(std::move(row));
        }
    } catch (const json::exception& e) {
        throw InputError(where, 0, "results", std::string("not a sweep table: ") + e.what());
    }
    return t;
}

std::vector<double> Table::lastAxisNumbers(bool* numeric) const {
    std::vector<double> x;
    bool all = !axes.empty();
    for (const auto& row : rows) {
        const std::string& v = row.values.empty() ? std::string() : row.values.back();
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        all = all && !v.empty() && end && *end == 0;
        x.push_back(d);
    }
    if (!all)
        for (std::size_t r = 0; r < x.size(); ++r) x[r] = double(r);
    if (numeric) *numeric = all;
    return x;
}

std::string Table::text() const {
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> head = axes;
    head.push_back("ok");
    for (const auto& m : metrics) head.push_back(m);
    cells.push_back(head);
    for (const auto& r : rows) {
        std::vector<std::string> line = r.values;
        line.push_back(std::to_string(r.ok) + "/" + std::to_string(r.runs));
        for (std::size_t c = 0; c < metrics.size(); ++c) {
            char buf[64];
            if (!std::isfinite(r.mean[c]))
                std::snprintf(buf, sizeof buf, "-");
            else if (r.half[c] > 0)
                std::snprintf(buf, sizeof buf, "%.4g ±%.2g", r.mean[c], r.half[c]);
            else
                std::snprintf(buf, sizeof buf, "%.4g", r.mean[c]);
            line.push_back(buf);
        }
        cells.push_back(std::move(line));
    }
    std::vector<std::size_t> width(head.size(), 0);
    auto len = [](const std::string& s) { // display width: count UTF-8 lead bytes
        std::size_t n = 0;
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;
        return n;
    };
    for (const auto& line : cells)
        for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], len(line[i]));
    std::string out;
    for (const auto& line : cells) {
        for (std::size_t i = 0; i < line.size(); ++i) {
            out += line[i] + std::string(width[i] - len(line[i]) + 2, ' ');
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += "\n";
    }
    return out;
}

bool higherIsBetter(const std::string& metric) {
    static const std::vector<MetricDef> table = metricTable({50, 90, 99});
    const MetricDef* d = findMetric(table, metric);
    return d && d->better == Better::Higher;
}

double metricFloor(const std::string& metric) {
    return metric.find("utility") != std::string::npos ? -INFINITY : 0.0;
}

std::vector<std::size_t> paretoFront(const std::vector<std::pair<double, double>>& points,
                                     bool x_higher_better, bool y_higher_better) {
    // O(n^2): a sweep has at most a few thousand points, and this stays obviously right.
    auto better = [](double a, double b, bool higher) { return higher ? a > b : a < b; };
    auto atLeast = [](double a, double b, bool higher) { return higher ? a >= b : a <= b; };
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto [xi, yi] = points[i];
        if (!std::isfinite(xi) || !std::isfinite(yi)) continue;
        bool dominated = false;
        for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
            if (j == i) continue;
            const auto [xj, yj] = points[j];
            if (!std::isfinite(xj) || !std::isfinite(yj)) continue;
            dominated = atLeast(xj, xi, x_higher_better) && atLeast(yj, yi, y_higher_better) &&
                        (better(xj, xi, x_higher_better) || better(yj, yi, y_higher_better));
        }
        if (!dominated) front.push_back(i);
    }
    std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
        return points[a].first < points[b].first || (points[a].first == points[b].first && a < b);
    });
    return front;
}

} // namespace kairos::sweep
