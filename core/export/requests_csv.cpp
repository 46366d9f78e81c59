#include "export/requests_csv.h"

#include "metrics/request_metrics.h"
#include "util/atomic_file.h"
#include "util/input_error.h"
#include "util/text.h"

#include <cmath>
#include <cstdio>
#include <fstream>

namespace kairos {

void writeRequestsCsv(const RunLog& log, const Workload* w, std::ostream& out) {
    out << "id,row,agent,class,arrival_s,prompt_tokens,output_tokens,status,ttft_ms,tpot_ms,e2el_"
           "ms,queue_ms,"
           "preemptions,suspensions";
    // With prefix caching: prompt tokens served from the cache at its first admission and
    // context tokens at its recomputes (the columns exist only then).
    out << (log.prefix_caching ? ",cached_tokens,recompute_cached_tokens" : "");
    out << (log.fleet() ? ",replica\n" : "\n"); // a fleet: the replica that served it
    char buf[64];
    auto cell = [&](double v, double scale) {
        if (!std::isfinite(v)) return std::string();
        std::snprintf(buf, sizeof buf, "%.6f", v * scale);
        return std::string(buf);
    };
    for (const RequestMetrics& r : perRequest(log)) {
        const char* status = r.finished ? "finished" : r.killed ? "killed" : "unfinished";
        const auto row = static_cast<std::size_t>(r.id);
        const std::int64_t id = w ? w->idOf(row) : r.id;
        const std::int32_t agent = w ? w->agentOf(row) : -1;
        out << id << ',' << r.id << ',' << (agent >= 0 ? std::to_string(agent) : "") << ','
            << (w && row < w->size() ? text::csvField(w->requests[row].cls.str()) : "") << ','
            << cell(r.arrival, 1) << ',' << r.prompt_tokens << ',' << r.output_tokens << ','
            << status << ',' << cell(r.ttft(), 1e3) << ',' << cell(r.tpot(), 1e3) << ','
            << cell(r.finished ? r.e2el() : NAN, 1e3) << ',' << cell(r.queue_delay, 1e3) << ','
            << r.preemptions << ',' << r.suspensions;
        if (log.prefix_caching) out << ',' << r.cached_tokens << ',' << r.recompute_cached_tokens;
        if (log.fleet()) out << ',' << log.replica_of[static_cast<std::size_t>(r.id)];
        out << '\n';
    }
}

void writeRequestsCsvFile(const RunLog& log, const Workload* w, const std::string& path) {
    writeFileAtomically(path, [&](std::ostream& out) { writeRequestsCsv(log, w, out); });
}

} // namespace kairos
