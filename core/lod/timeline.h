#pragma once
// What a timeline shows, built from a RunLog alone (plus the Workload for robot execution
// times): per request, the phases it went through as spans of time, and the robot
// executing its dispatched segments. Then level of detail (Tracy's): `fold` cuts the
// visible range with two binary searches and merges runs of spans narrower than a few
// pixels into one folded draw, so painting costs O(visible pixels), not O(events).
#include "model/run_log.h"
#include "model/workload.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace kairos::lod {

enum class SpanKind : std::uint8_t {
    Queued,    // arrived, waiting for its first prefill
    Prefill,   // prefill or recompute running
    Decode,    // generating
    Preempted, // KV dropped, waiting to recompute
    Suspended, // paused with its KV kept
    Robot,     // the robot executes a dispatched segment (a lane of its own)
    Folded,    // several spans narrower than the fold width, merged
    Cached,    // drawn only: the part of a prefill's context found in the prefix cache
               // (the lower part of the prefill's bar, its height that fraction)
    Transfer,  // disaggregation: its KV on the link from its prefill to its decode replica
};
const char* spanKindName(SpanKind p);

struct Span {
    double t0 = 0, t1 = 0;
    SpanKind kind = SpanKind::Queued;
    // Prefill spans with prefix caching: the fraction of the context found cached (the
    // admission's CacheHit over it and the tokens the prefill computes), else 0.
    float cached = 0;
};

// A request placed in an agent lane: it occupies [t0, t1] (arrival to the later of its
// end and its robot's last execution).
struct Member {
    double t0 = 0, t1 = 0;
    ReqId id = 0;
    bool killed = false;
};

struct Row {
    ReqId id = 0;                // the request's row; for an agent lane, its first request's
    std::int64_t trace_id = 0;   // the trace's own id for the request (the row without a workload)
    double arrival = 0, end = 0; // end: finish or kill (or the last event)
    bool finished = false, killed = false;
    std::int32_t prompt = 0, output = 0, preemptions = 0;
    std::int32_t replica = -1; // its replica in a fleet (RunLog::replica_of), else -1
    // Disaggregation: its prefill replica (RunLog::prefill_of), else -1, and when its KV
    // arrived at its decode replica (NaN: never, or not disaggregated). Spans before it ran
    // on the prefill replica.
    std::int32_t prefill_replica = -1;
    double handoff = std::numeric_limits<double>::quiet_NaN();
    std::vector<Span> spans; // generation phases: sorted, not overlapping, no empty span
    std::vector<Span> robot; // robot execution of dispatched segments, sorted
    // The agent (-1: none): a request's, from the workload; an agent lane's (agentRows).
    // Agent lanes only: the lane within the agent (0 is the agent's first), and the
    // requests in this lane by time.
    std::int32_t agent = -1, lane = 0;
    std::vector<Member> members;
    // The last moment the row shows anything: its end or its robot's last execution.
    double lastTime() const { return robot.empty() ? end : std::max(end, robot.back().t1); }
};

// One row per request, in request order. `w` (may be null) gives segment execution times.
std::vector<Row> buildRows(const RunLog& log, const Workload* w);

// Rows per agent: each agent's requests (from `w`) packed first-fit, by arrival, into as
// few lanes as keep them from overlapping; a lane's spans and robot spans are its
// requests' in time order. Agents ascending, then the requests without an agent (agent
// -1). `requests`: buildRows' output for the same workload.
std::vector<Row> agentRows(const std::vector<Row>& requests, const Workload& w);
// True when some request of `w` names its agent.
bool hasAgents(const Workload& w);
// The member of a lane whose [t0, t1] contains t (with `slop` seconds either side), or
// nullptr (binary search).
const Member* memberAt(const std::vector<Member>& members, double t, double slop = 0);

// The time a set of rows covers: the first arrival to the last end ({0, 0} when empty).
std::pair<double, double> timeExtent(const std::vector<Row>& rows);

struct Draw {
    double t0 = 0, t1 = 0;
    SpanKind kind = SpanKind::Queued; // Folded when count > 1
    std::int32_t count = 1;           // spans merged into this draw
    float cached = 0;                 // a single prefill span's Span::cached
};

// Spans of `spans` (sorted, not overlapping) that meet [from, to], with runs of spans
// shorter than `min_len` seconds merged into Folded draws (a run ends at a gap of at least
// `min_len` or at a span that is long enough to draw by itself). Appends to `out`.
void fold(const std::vector<Span>& spans, double from, double to, double min_len,
          std::vector<Draw>& out);

// The span of `spans` that contains time t, or nullptr (binary search).
const Span* spanAt(const std::vector<Span>& spans, double t);

// A series downsampled to buckets, keeping each bucket's minimum and maximum so that
// spikes survive (heaptrack).
struct Bucket {
    double t = 0;          // bucket centre
    double lo = 0, hi = 0; // min and max of the series over the bucket
};
// The KV tokens in use over time, as steps: one point per iteration stretch (t0,
// kv_first) and (tEnd, kv_last). Sorted by time. With `held`, the KV tokens holding data:
// in use plus the cached blocks nobody references (IterSpan::kv_cached, as at each
// stretch's start); the same as in use without prefix caching.
std::vector<std::pair<double, double>> kvSeries(const RunLog& log, bool held = false);
// Replicas [from, to) of a fleet's log: their KV in use summed (disaggregation: a pool's,
// RunLog::prefill_replicas).
std::vector<std::pair<double, double>> kvPoolSeries(const RunLog& log, int from, int to,
                                                    bool held = false);
// The times the engine preempted a request (KV dropped), in order; a robot segment's
// hand-back (HandBacks) is not one. The KV chart's markers, in the window and the report.
std::vector<double> preemptionTimes(const RunLog& log);
// `points` sorted by time, read as a step function: buckets of equal width over [from, to].
std::vector<Bucket> downsample(const std::vector<std::pair<double, double>>& points, double from,
                               double to, int buckets);

} // namespace kairos::lod
