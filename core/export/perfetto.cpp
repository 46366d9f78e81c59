#include "export/perfetto.h"

#include "lod/timeline.h"
#include "util/atomic_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace kairos {

namespace {

// Times are rounded once, to whole nanoseconds, and a slice's duration is the difference
// of its rounded ends: two slices that meet in the run meet exactly in the file (rounding
// the start and the duration separately made consecutive slices overlap by 1 ns, which
// strict importers nest as parent and child).
long long ns(double seconds) {
    return std::llround(seconds * 1e9);
}

// Nanoseconds as microseconds (the format's unit) with three decimals, without locale.
void us(std::ostream& out, long long ns) {
    char b[48];
    const long long whole = ns / 1000, frac = ns % 1000;
    if (ns < 0 && frac != 0)
        std::snprintf(b, sizeof b, "-%lld.%03lld", -whole, -frac);
    else
        std::snprintf(b, sizeof b, "%lld.%03lld", whole, frac < 0 ? -frac : frac);
    out << b;
}

void us(std::ostream& out, double seconds) {
    us(out, ns(seconds));
}

// A JSON string literal, escaped by nlohmann::json (the project's JSON library).
void jsonString(std::ostream& out, const std::string& s) {
    out << nlohmann::json(s).dump();
}

} // namespace

PerfettoCounts writePerfetto(const RunLog& log, const Workload* w, std::ostream& out) {
    PerfettoCounts n;
    const auto rows = lod::buildRows(log, w);
    constexpr int kPid = 1, kRobotPid = 2, kKvPid = 3;
    out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"workload\":";
    jsonString(out, log.workload);
    out << ",\"policy\":";
    jsonString(out, log.policy);
    out << ",\"exec_model\":";
    jsonString(out, log.exec_model);
    out << "},\"traceEvents\":[\n";
    bool first = true;
    auto sep = [&] {
        if (!first) out << ",\n";
        first = false;
    };
    auto meta = [&](int pid, long tid, const char* what, const std::string& name) {
        sep();
        out << "{\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid << ",\"name\":\"" << what
            << "\",\"args\":{\"name\":";
        jsonString(out, name);
        out << "}}";
    };
    // A fleet: a process per replica (its requests' tracks, their decisions, its KV and
    // batch counters), named by replica; the KV process keeps the fleet's total.
    constexpr int kReplicaPid = 10;
    auto pidOf = [&](std::size_t row) {
        return log.fleet() ? kReplicaPid + int(log.replica_of[row]) : kPid;
    };
    if (log.fleet())
        for (int rep = 0; rep < log.replicas; ++rep)
            meta(kReplicaPid + rep, 0, "process_name",
                 log.replicaName(rep) + " (" + log.router + " router)");
    else
        meta(kPid, 0, "process_name", "requests");
    meta(kRobotPid, 0, "process_name", "robot execution");
    meta(kKvPid, 0, "process_name", log.fleet() ? "KV cache (fleet)" : "KV cache");
    for (const lod::Row& r : rows) {
        // Tracks are numbered by row (unique, in arrival order); names and args carry the
        // trace's own id, agent and class, so a slice joins back to its line in the trace.
        const auto row = static_cast<std::size_t>(r.id);
        const std::string label = w ? w->label(row) : "request " + std::to_string(r.id);
        meta(pidOf(row), r.id, "thread_name", label);
        // Disaggregation: its spans up to its KV's arrival are on its prefill replica's
        // track (the transfer too: the prefill side sends it), the rest on its decode one's.
        const bool split =
            log.disaggregated() && r.prefill_replica >= 0 && r.prefill_replica != r.replica;
        const int prefill_pid = kReplicaPid + r.prefill_replica;
        if (split) meta(prefill_pid, r.id, "thread_name", label);
        auto spanPid = [&](const lod::Span& s) {
            return split && !(s.t0 >= r.handoff) ? prefill_pid : pidOf(row);
        };
        ++n.tracks;
        // The request's facts, the same on each of its slices.
        std::string args = ",\"id\":" + std::to_string(w ? w->idOf(row) : r.id) +
                           ",\"row\":" + std::to_string(r.id);
        if (w && w->agentOf(row) >= 0) args += ",\"agent\":" + std::to_string(w->agentOf(row));
        args += ",\"prompt_tokens\":" + std::to_string(r.prompt) +
                ",\"output_tokens\":" + std::to_string(r.output) +
                ",\"preemptions\":" + std::to_string(r.preemptions) + ",\"outcome\":" +
                (r.finished ? "\"finished\""
                 : r.killed ? "\"killed\""
                            : "\"unfinished\"");
        if (log.fleet()) args += ",\"replica\":" + std::to_string(log.replica_of[row]);
        if (log.disaggregated())
            args += ",\"prefill_replica\":" + std::to_string(log.prefill_of[row]);
        if (w && row < w->size() && !w->requests[row].cls.empty())
            args += ",\"class\":" + nlohmann::json(w->requests[row].cls.str()).dump();
        auto span = [&](int pid, const lod::Span& s) {
            sep();
            out << "{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << r.id << ",\"name\":\""
                << lod::spanKindName(s.kind) << "\",\"ts\":";
            const long long t0 = ns(s.t0);
            us(out, t0);
            out << ",\"dur\":";
            us(out, ns(s.t1) - t0);
            out << ",\"args\":{\"phase\":\"" << lod::spanKindName(s.kind) << "\"" << args << "}}";
        };
        for (const lod::Span& s : r.spans) {
            span(spanPid(s), s);
            ++n.phases;
        }
        if (!r.robot.empty()) meta(kRobotPid, r.id, "thread_name", label);
        for (const lod::Span& s : r.robot) {
            span(kRobotPid, s);
            ++n.robot;
        }
    }
    // With prefix caching, a third value: cached blocks nobody references (the allocator
    // may take them; until then a request with the same prefix reuses them).
    auto kvCounter = [&](const RunLog& one, int pid, long long capacity) {
        const auto kv = lod::kvSeries(one);
        const auto held = one.prefix_caching ? lod::kvSeries(one, true) : kv;
        for (std::size_t i = 0; i < kv.size(); ++i) {
            const auto [t, v] = kv[i];
            sep();
            out << "{\"ph\":\"C\",\"pid\":" << pid << ",\"tid\":0,\"name\":\"KV tokens\",\"ts\":";
            us(out, t);
            out << ",\"args\":{\"in use\":" << static_cast<long long>(std::llround(v));
            if (one.prefix_caching)
                out << ",\"cached, unreferenced\":"
                    << static_cast<long long>(std::llround(held[i].second - v));
            out << ",\"capacity\":" << capacity << "}}";
            ++n.counters;
        }
    };
    kvCounter(log, kKvPid, log.kv_capacity_tokens * log.replicas);
    if (log.fleet())
        for (int rep = 0; rep < log.replicas; ++rep)
            kvCounter(replicaLog(log, rep), kReplicaPid + rep, log.kv_capacity_tokens);
    const int kBatchPid = 4, kQueuePid = 5, kPreemptPid = 6;
    if (!log.fleet()) meta(kBatchPid, 0, "process_name", "batch");
    meta(kQueuePid, 0, "process_name", "queues");
    meta(kPreemptPid, 0, "process_name", "preemptions");
    // Batch per iteration: requests in it and tokens prefilled; 0 over idle gaps. A
    // stretch (iterations with one batch) is one point. A fleet: a counter per replica.
    for (int rep = 0; rep < log.replicas; ++rep) {
        const std::string name = "batch";
        const int batch_pid = log.fleet() ? kReplicaPid + rep : kBatchPid;
        long last_n = -1, last_p = -1;
        double busy_until = -1;
        auto point = [&](double t, long reqs, long prefill) {
            if (reqs == last_n && prefill == last_p) return;
            sep();
            out << "{\"ph\":\"C\",\"pid\":" << batch_pid << ",\"tid\":0,\"name\":\"" << name
                << "\",\"ts\":";
            us(out, t);
            out << ",\"args\":{\"requests\":" << reqs << ",\"prefill tokens\":" << prefill << "}}";
            last_n = reqs;
            last_p = prefill;
            ++n.batch;
        };
        for (std::size_t i = 0; i < log.iters.size(); ++i) {
            if (log.fleet() && log.iter_replica[i] != rep) continue;
            const IterSpan& it = log.iters[i];
            if (busy_until >= 0 && it.t0 > busy_until + 1e-12) point(busy_until, 0, 0);
            point(it.t0, long(it.decode_seqs) + it.prefill_seqs, it.prefill_tokens);
            busy_until = it.end(it.n - 1);
        }
        if (busy_until >= 0) point(busy_until, 0, 0);
    }
    // Queues from the timeline's phases: +1 at a span's start, -1 at its end, one point
    // per instant where any count changed.
    {
        struct Step {
            double t;
            int running, waiting, suspended;
        };
        std::vector<Step> steps;
        for (const lod::Row& r : rows)
            for (const lod::Span& s : r.spans) {
                int ru = 0, wa = 0, su = 0;
                switch (s.kind) {
                case lod::SpanKind::Prefill:
                case lod::SpanKind::Decode:
                    ru = 1;
                    break;
                case lod::SpanKind::Queued:
                case lod::SpanKind::Preempted:
                    wa = 1;
                    break;
                case lod::SpanKind::Suspended:
                    su = 1;
                    break;
                default:
                    break;
                }
                if (ru + wa + su == 0) continue;
                steps.push_back({s.t0, ru, wa, su});
                steps.push_back({s.t1, -ru, -wa, -su});
            }
        std::sort(steps.begin(), steps.end(),
                  [](const Step& a, const Step& b) { return a.t < b.t; });
        long ru = 0, wa = 0, su = 0;
        for (std::size_t i = 0; i < steps.size();) {
            const double t = steps[i].t;
            for (; i < steps.size() && steps[i].t == t; ++i) {
                ru += steps[i].running;
                wa += steps[i].waiting;
                su += steps[i].suspended;
            }
            sep();
            out << "{\"ph\":\"C\",\"pid\":" << kQueuePid
                << ",\"tid\":0,\"name\":\"queues\",\"ts\":";
            us(out, t);
            out << ",\"args\":{\"running\":" << ru << ",\"waiting\":" << wa
                << ",\"suspended\":" << su << "}}";
            ++n.queues;
        }
    }
    // Preemptions and suspensions so far, one point per event.
    {
        long pre = 0, sus = 0;
        bool any = false;
        for (const Event& e : log.events) {
            if (e.ev != Ev::Preempt && e.ev != Ev::Suspend) continue;
            if (!any) { // a zero at the start, so the track begins at the run's start
                any = true;
                sep();
                out << "{\"ph\":\"C\",\"pid\":" << kPreemptPid
                    << ",\"tid\":0,\"name\":\"preemptions\",\"ts\":0,\"args\":{\"preempted\":0,"
                       "\"suspended\":0}}";
                ++n.preemptions;
            }
            (e.ev == Ev::Preempt ? pre : sus) += 1;
            sep();
            out << "{\"ph\":\"C\",\"pid\":" << kPreemptPid
                << ",\"tid\":0,\"name\":\"preemptions\",\"ts\":";
            us(out, e.t);
            out << ",\"args\":{\"preempted\":" << pre << ",\"suspended\":" << sus << "}}";
            ++n.preemptions;
        }
    }
    // Decisions with their reasons (a run recorded with --explain): an instant event on
    // the request's track, named by the action and its rule, the rule's numbers as args.
    for (const Reason& r : log.explain.reasons) {
        const Rule& rule = ruleOf(r.rule);
        sep();
        out << "{\"ph\":\"i\",\"s\":\"t\",\"pid\":" << pidOf(std::size_t(r.req))
            << ",\"tid\":" << r.req << ",\"cat\":\"decision\",\"name\":";
        jsonString(out, std::string(actName(r.act)) + ": " + rule.code);
        out << ",\"ts\":";
        us(out, r.t);
        out << ",\"args\":{\"id\":" << (w ? w->idOf(static_cast<std::size_t>(r.req)) : r.req)
            << ",\"rule\":";
        jsonString(out, rule.name);
        for (int i = 0; i < ruleVarCount(r.rule); ++i) {
            const double v = r.x[static_cast<std::size_t>(i)];
            out << ",";
            jsonString(out, rule.vars[static_cast<std::size_t>(i)]);
            out << ":";
            if (std::isfinite(v)) {
                char b[40];
                std::snprintf(b, sizeof b, "%.17g", v);
                out << b;
            } else {
                out << (std::isnan(v) ? "null" : v > 0 ? "\"inf\"" : "\"-inf\"");
            }
        }
        if (r.other >= 0)
            out << ",\"compared with request\":"
                << (w ? w->idOf(static_cast<std::size_t>(r.other)) : r.other);
        if (log.fleet()) out << ",\"replica\":" << log.replica_of[std::size_t(r.req)];
        out << ",\"call\":" << r.call << "}}";
        ++n.decisions;
    }
    out << "\n]}\n";
    return n;
}

PerfettoCounts writePerfettoFile(const RunLog& log, const Workload* w, const std::string& path) {
    PerfettoCounts n;
    writeFileAtomically(path, [&](std::ostream& out) { n = writePerfetto(log, w, out); });
    return n;
}

} // namespace kairos
