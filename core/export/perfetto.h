#pragma once
// A run as a Chrome trace (JSON), which Perfetto's UI and chrome://tracing open: one
// track per request (thread `tid` = request id) with a complete event per phase, the
// robot's execution of dispatched segments on a track of its own per request, and
// counter tracks for the KV cache in use, the batch (requests and prefill tokens per
// iteration), the queues (running, waiting, suspended) and the preemptions so far.
// Every slice carries args: request id, phase, prompt and output tokens, preemptions and
// class. A run recorded with its reasons (--explain) adds each decision as an instant
// event on its request's track, its rule's numbers as args. Times in microseconds, as the
// format wants.
//
// A fleet's run (RunLog::replicas > 1): a process per replica, named by it and the router,
// holding its requests' tracks (each slice and decision with `replica` in its args), its
// own KV and batch counters; the KV process keeps the fleet's total.
//
// The queue counters are the timeline's own phases counted (lod::buildRows): running =
// in prefill or decode, waiting = queued or preempted, suspended; so the trace and the
// workbench's timeline agree at every instant.
#include "model/run_log.h"
#include "model/workload.h"

#include <ostream>
#include <string>

namespace kairos {

struct PerfettoCounts {
    long phases = 0, robot = 0, tracks = 0;
    long counters = 0;                           // KV points
    long batch = 0, queues = 0, preemptions = 0; // the other counter tracks' points
    long decisions = 0;                          // instant events with reasons (--explain)
};

// `w` (may be null) names the requests' classes and gives segment execution times.
PerfettoCounts writePerfetto(const RunLog& log, const Workload* w, std::ostream& out);
PerfettoCounts writePerfettoFile(const RunLog& log, const Workload* w, const std::string& path);

} // namespace kairos
