#pragma once
// A run as a Chrome trace (JSON), which Perfetto's UI and chrome://tracing open: one
// track per request (thread `tid` = request id) with a complete event per phase, the
// robot's execution of dispatched segments on a track of its own per request, and the
// KV cache in use as a counter track. Times in microseconds, as the format wants.
#include "model/run_log.h"
#include "model/workload.h"

#include <ostream>
#include <string>

namespace kairos {

struct PerfettoCounts {
    long phases = 0, robot = 0, counters = 0, tracks = 0;
};

// `w` (may be null) names the requests' classes and gives segment execution times.
PerfettoCounts writePerfetto(const RunLog& log, const Workload* w, std::ostream& out);
PerfettoCounts writePerfettoFile(const RunLog& log, const Workload* w, const std::string& path);

} // namespace kairos
