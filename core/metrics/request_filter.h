#pragma once
// Finding requests in a run: the workbench's search field, parsed. Terms are separated by
// spaces and must all hold; a leading '!' negates one.
//   17, id=17              the request the trace calls 17 (its own id; robot traces
//                          number agent x 100000 + index), id>N and id<N too
//   row=N                  the request in row N (its place in arrival order: the row
//                          the timeline and the run log number it by)
//   agent=3, class=urgent  the workload's agent or class
//   phase=P                it spent time in phase P (queued, prefill, decoding,
//                          preempted, suspended) at any point
//   killed, finished, unfinished, preempted, suspended
//   slo                    it missed a goodput SLO (a killed or unfinished request missed
//                          them all); with no SLO set, nothing matches
//   ttft>MS, ttft<MS, tpot>MS, e2el>MS, queue>MS   latencies in milliseconds (>= and <=
//                          too); a request without the value (never started) does not match
//   prompt>N, output>N     tokens (output: tokens generated)
//   replica=N              a fleet's request on replica N (0-based)
//   cached>N               prompt tokens served from the prefix cache at its first admission
// Parse errors name the term and what was expected.
#include "lod/timeline.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "model/workload.h"

#include <string>
#include <vector>

namespace kairos {

class RequestFilter {
public:
    static RequestFilter parse(const std::string& text); // throws std::invalid_argument
    bool empty() const { return terms_.empty(); }
    // `q` and `row` may be null (no workload facts, no phases: terms needing them fail).
    bool matches(const RequestMetrics& m, const Request* q, const lod::Row* row,
                 const GoodputSlo& slo) const;
    // The ids of the matching requests, in id order. `per_request` by id; `w` and `rows`
    // (one per request, by id) may be null.
    std::vector<ReqId> apply(const std::vector<RequestMetrics>& per_request, const Workload* w,
                             const std::vector<lod::Row>* rows, const GoodputSlo& slo) const;

private:
    enum class Kind {
        Id,
        Agent,
        Class,
        Phase,
        Killed,
        Finished,
        Unfinished,
        Preempted,
        Suspended,
        Slo,
        Ttft,
        Tpot,
        E2el,
        Queue,
        Prompt,
        Output,
        Replica,
        Cached,
        Row
    };
    enum class Op { Eq, Gt, Ge, Lt, Le };
    struct Term {
        Kind kind;
        Op op = Op::Eq;
        double number = 0;
        std::string text;
        lod::SpanKind phase = lod::SpanKind::Queued;
        bool negate = false;
    };
    std::vector<Term> terms_;
};

} // namespace kairos
