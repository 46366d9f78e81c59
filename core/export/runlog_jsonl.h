#pragma once
// RunLog as JSONL (sample_traces/README.md documents the lines): a header line, then
// events and iteration records merged in time order. Times are written with 17
// significant digits so that a log read back gives the same metrics to the last bit.
#include "model/run_log.h"
#include "model/workload.h"

#include <istream>
#include <ostream>
#include <string>

namespace kairos {

struct RunLogWriteOptions {
    bool tokens = false; // also one "token" line per generated token
};

void writeRunLogJsonl(const RunLog& log, std::ostream& out, const RunLogWriteOptions& opt = {});
// Through a temporary file renamed into place: never half-written.
void writeRunLogJsonlFile(const RunLog& log, const std::string& path,
                          const RunLogWriteOptions& opt = {});
// Reads what writeRunLogJsonl wrote ("token" lines are skipped: they are derived).
RunLog readRunLogJsonl(std::istream& in, const std::string& name);

// The requests a run log saw, as a workload (what the window shows a run log on when its
// workload is not at hand): by row, each request's arrival and prompt from its arrive event,
// its output from its finish (or, unfinished, the tokens it had generated), its budget from
// its budget event, its id its row (the log numbers requests by row). Named after the log's
// workload; no classes, TUFs or segments.
Workload workloadOfRunLog(const RunLog& log);

} // namespace kairos
