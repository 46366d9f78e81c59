#pragma once
// Per-request metrics as CSV, one row per request, for spreadsheets and notebooks.
#include "model/run_log.h"

#include <ostream>
#include <string>

namespace kairos {

// Columns: req, arrival_s, prompt_tokens, output_tokens, status, ttft_ms, tpot_ms,
// e2el_ms, queue_ms, preemptions, suspensions. Undefined values are empty cells.
void writeRequestsCsv(const RunLog& log, std::ostream& out);
void writeRequestsCsvFile(const RunLog& log, const std::string& path);

} // namespace kairos
