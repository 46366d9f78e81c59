#include "export/perfetto.h"

#include "export/atomic_file.h"
#include "lod/timeline.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace kairos {

namespace {

// Microseconds with a fixed precision (the format's unit), written without locale.
void us(std::ostream& out, double seconds) {
    char b[48];
    std::snprintf(b, sizeof b, "%.3f", seconds * 1e6);
    out << b;
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
    meta(kPid, 0, "process_name", "requests");
    meta(kRobotPid, 0, "process_name", "robot execution");
    meta(kKvPid, 0, "process_name", "KV cache");
    for (const lod::Row& r : rows) {
        std::string label = "request " + std::to_string(r.id);
        if (w && static_cast<std::size_t>(r.id) < w->size() &&
            !w->requests[static_cast<std::size_t>(r.id)].cls.empty())
            label += " (" + w->requests[static_cast<std::size_t>(r.id)].cls + ")";
        meta(kPid, r.id, "thread_name", label);
        ++n.tracks;
        auto span = [&](int pid, const lod::Span& s) {
            sep();
            out << "{\"ph\":\"X\",\"pid\":" << pid << ",\"tid\":" << r.id << ",\"name\":\""
                << lod::spanKindName(s.kind) << "\",\"ts\":";
            us(out, s.t0);
            out << ",\"dur\":";
            us(out, s.t1 - s.t0);
            out << "}";
        };
        for (const lod::Span& s : r.spans) {
            span(kPid, s);
            ++n.phases;
        }
        if (!r.robot.empty()) meta(kRobotPid, r.id, "thread_name", label);
        for (const lod::Span& s : r.robot) {
            span(kRobotPid, s);
            ++n.robot;
        }
    }
    for (const auto& [t, v] : lod::kvSeries(log)) {
        sep();
        out << "{\"ph\":\"C\",\"pid\":" << kKvPid << ",\"tid\":0,\"name\":\"KV tokens\",\"ts\":";
        us(out, t);
        out << ",\"args\":{\"in use\":" << static_cast<long long>(std::llround(v))
            << ",\"capacity\":" << log.kv_capacity_tokens << "}}";
        ++n.counters;
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
