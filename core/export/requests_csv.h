#pragma once
// Per-request metrics as CSV, one row per request, for spreadsheets and notebooks.
#include "model/run_log.h"
#include "model/workload.h"

#include <ostream>
#include <string>

namespace kairos {

// The columns are RequestColumns' (request_columns.h), under a header line naming them.
void writeRequestsCsv(const RunLog& log, const Workload* w, std::ostream& out);
void writeRequestsCsvFile(const RunLog& log, const Workload* w, const std::string& path);

} // namespace kairos
