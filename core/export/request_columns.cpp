#include "export/request_columns.h"

#include <cmath>
#include <cstdio>

namespace kairos {

RequestColumns::RequestColumns(const RunLog& log, const std::vector<RequestMetrics>& metrics,
                               const Workload* w)
    : log_(&log), metrics_(&metrics), w_(w) {
    add(Field::Id, "id", Kind::Integer, "the trace's own id (the row without the workload)");
    add(Field::Row, "row", Kind::Integer,
        "the request's number in the run log: its place in the trace sorted by arrival");
    add(Field::Agent, "agent", Kind::Integer, "the robot agent it plans for (empty: none)");
    add(Field::Class, "class", Kind::Text, "its request class (empty: none)");
    add(Field::Arrival, "arrival_s", Kind::Real, "arrival time (s)");
    add(Field::Prompt, "prompt_tokens", Kind::Integer, "prompt length (tokens)");
    add(Field::Output, "output_tokens", Kind::Integer, "tokens generated (at finish or kill)");
    add(Field::Status, "status", Kind::Text, "finished, killed or unfinished");
    add(Field::Ttft, "ttft_ms", Kind::Real, "time to first token (ms)");
    add(Field::Tpot, "tpot_ms", Kind::Real, "time per output token after the first (ms)");
    add(Field::E2el, "e2el_ms", Kind::Real, "end-to-end latency of a finished request (ms)");
    add(Field::Queue, "queue_ms", Kind::Real, "arrival to its first prefill (ms)");
    add(Field::Preemptions, "preemptions", Kind::Integer, "times its KV was dropped");
    add(Field::Suspensions, "suspensions", Kind::Integer, "times it was suspended");
    if (log.prefix_caching) {
        add(Field::Cached, "cached_tokens", Kind::Integer,
            "prompt tokens served from the prefix cache at its first admission");
        add(Field::RecomputeCached, "recompute_cached_tokens", Kind::Integer,
            "context tokens served from the prefix cache at its recomputes");
    }
    if (log.fleet()) add(Field::Replica, "replica", Kind::Integer, "the replica that served it");
}

void RequestColumns::add(Field f, std::string name, Kind kind, std::string help) {
    columns_.push_back({std::move(name), kind, std::move(help)});
    fields_.push_back(f);
}

int RequestColumns::find(const std::string& name) const {
    for (std::size_t c = 0; c < columns_.size(); ++c)
        if (columns_[c].name == name) return int(c);
    return -1;
}

double RequestColumns::number(std::size_t i, std::size_t c) const {
    const RequestMetrics& r = (*metrics_)[i];
    const auto row = static_cast<std::size_t>(r.id);
    switch (fields_[c]) {
    case Field::Id:
        return double(w_ ? w_->idOf(row) : r.id);
    case Field::Row:
        return double(r.id);
    case Field::Agent: {
        const std::int32_t agent = w_ ? w_->agentOf(row) : -1;
        return agent >= 0 ? double(agent) : NAN;
    }
    case Field::Arrival:
        return r.arrival;
    case Field::Prompt:
        return r.prompt_tokens;
    case Field::Output:
        return r.output_tokens;
    case Field::Ttft:
        return r.ttft() * 1e3;
    case Field::Tpot:
        return r.tpot() * 1e3;
    case Field::E2el:
        return r.finished ? r.e2el() * 1e3 : NAN;
    case Field::Queue:
        return r.queue_delay * 1e3;
    case Field::Preemptions:
        return r.preemptions;
    case Field::Suspensions:
        return r.suspensions;
    case Field::Cached:
        return double(r.cached_tokens);
    case Field::RecomputeCached:
        return double(r.recompute_cached_tokens);
    case Field::Replica:
        return double(log_->replica_of[row]);
    case Field::Class:
    case Field::Status:
        return NAN;
    }
    return NAN;
}

std::string RequestColumns::text(std::size_t i, std::size_t c) const {
    const RequestMetrics& r = (*metrics_)[i];
    switch (fields_[c]) {
    case Field::Class: {
        const auto row = static_cast<std::size_t>(r.id);
        return w_ && row < w_->size() ? w_->requests[row].cls.str() : std::string();
    }
    case Field::Status:
        return r.finished ? "finished" : r.killed ? "killed" : "unfinished";
    default:
        break;
    }
    const double v = number(i, c);
    if (!std::isfinite(v)) return {};
    char buf[64];
    if (columns_[c].kind == Kind::Real)
        std::snprintf(buf, sizeof buf, "%.6f", v);
    else
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
}

} // namespace kairos
