#pragma once
// The per-request columns of a run, in one place: what the requests CSV writes
// (requests_csv.h) and the window's Requests panel shows, sorts and filters. A column added
// here is in both.
//
// Columns: id (the trace's own id), row (the request's number in the run log: its place in
// the trace sorted by arrival), agent, class, arrival_s, prompt_tokens, output_tokens,
// status (finished, killed, unfinished), ttft_ms, tpot_ms, e2el_ms (finished requests),
// queue_ms, preemptions, suspensions; with prefix caching cached_tokens (prompt tokens
// served from the cache at its first admission) and recompute_cached_tokens (context tokens
// at its recomputes); in a fleet, replica. Without the workload the id is the row.
#include "metrics/request_metrics.h"
#include "model/run_log.h"
#include "model/workload.h"

#include <string>
#include <vector>

namespace kairos {

class RequestColumns {
public:
    enum class Kind { Integer, Real, Text };
    struct Column {
        std::string name; // as the CSV's header says it ("ttft_ms")
        Kind kind;
        std::string help; // what it is, one line
    };
    // `metrics` is perRequest(log); both (and `w`, which may be null) must outlive this.
    RequestColumns(const RunLog& log, const std::vector<RequestMetrics>& metrics,
                   const Workload* w);
    const std::vector<Column>& columns() const { return columns_; }
    std::size_t rows() const { return metrics_->size(); }
    // The run-log row (request number) of row `i`.
    ReqId request(std::size_t i) const { return (*metrics_)[i].id; }
    // Column `name`'s index, -1 if this run has none.
    int find(const std::string& name) const;
    // Row `i`'s value in column `c` as a number (NaN where undefined: no agent, a TTFT never
    // reached; NaN for a Text column) and as the CSV writes it ("" where undefined; a Real
    // with 6 decimals; a Text cell unescaped).
    double number(std::size_t i, std::size_t c) const;
    std::string text(std::size_t i, std::size_t c) const;

private:
    enum class Field {
        Id,
        Row,
        Agent,
        Class,
        Arrival,
        Prompt,
        Output,
        Status,
        Ttft,
        Tpot,
        E2el,
        Queue,
        Preemptions,
        Suspensions,
        Cached,
        RecomputeCached,
        Replica
    };
    void add(Field f, std::string name, Kind kind, std::string help);

    const RunLog* log_;
    const std::vector<RequestMetrics>* metrics_;
    const Workload* w_;
    std::vector<Column> columns_;
    std::vector<Field> fields_;
};

} // namespace kairos
