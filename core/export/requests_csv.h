#pragma once
// Per-request metrics as CSV, one row per request, for spreadsheets and notebooks.
#include "model/run_log.h"
#include "model/workload.h"

#include <ostream>
#include <string>

namespace kairos {

// Columns: id (the trace's own id), row (the request's number in the run log: its place
// in the trace sorted by arrival), agent, class, arrival_s, prompt_tokens, output_tokens,
// status, ttft_ms, tpot_ms, e2el_ms, queue_ms, preemptions, suspensions. Undefined values
// (no agent, no class, a TTFT never reached) are empty cells. Without the workload the id
// is the row.
void writeRequestsCsv(const RunLog& log, const Workload* w, std::ostream& out);
void writeRequestsCsvFile(const RunLog& log, const Workload* w, const std::string& path);

} // namespace kairos
