#pragma once
// Value types of one request. Units: seconds (double) for time, tokens (int) for lengths.
#include "model/compact.h"
#include "util/limits.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kairos {

// Index of a request inside its Workload (0..n-1); the engine, scheduler and RunLog use it.
using ReqId = std::int32_t;

// Requests in one workload at most: a run log keeps a request's id in 25 bits (Event,
// model/run_log.h). Readers refuse more; generate stops at 10 million.
constexpr std::int32_t kMaxRequests = (1 << 24) - 1;

// Time-utility function (TimelyLLM): TUF(t) = min(beta, slope * (t - ert) + beta), slope < 0,
// and no less than 0 (past its zero-utility time a response is worth nothing, not less).
// t is the waiting/response time of the request (or segment), not the wall clock.
struct Tuf {
    double ert = 0.0;   // expected response time: utility is beta up to here
    double slope = 0.0; // alpha in the paper, <= 0
    double beta = 0.0;  // maximum utility

    double value(double t) const { return std::max(0.0, std::min(beta, slope * (t - ert) + beta)); }
    // The paper's Eq. 1 without the zero floor: negative past the cut-off (TimelyLLM scores
    // the first response W(s0) with it: a late answer costs utility, it is not merely 0).
    double signedValue(double t) const { return std::min(beta, slope * (t - ert) + beta); }
    // TUF_1 of a suspended segment: the same line with ERT = 0.
    double valueSuspended(double t) const {
        return std::max(0.0, std::min(beta, slope * std::max(t, 0.0) + beta));
    }
    // Time at which the utility reaches zero (infinite when slope == 0).
    double zeroTime() const;
    bool operator==(const Tuf& o) const {
        return ert == o.ert && slope == o.slope && beta == o.beta;
    }
};

// One piece of a robot plan: generate `tokens`, then the robot executes it for `exec_s`.
// `wcet_s`: what the serving system predicts that execution takes (the TimelyLLM code's WCET
// table over the segment's text), < 0 when nothing predicts it (the scheduler then uses
// exec_s).
struct Segment {
    int tokens = 0;
    double exec_s = 0.0;
    double wcet_s = -1.0;
    double predicted() const { return wcet_s >= 0 ? wcet_s : exec_s; }
    bool operator==(const Segment& o) const {
        return tokens == o.tokens && exec_s == o.exec_s && wcet_s == o.wcet_s;
    }
};

// A run of a request's context (prompt, then output) whose content has an identity: two
// requests with the same spans from the start hold the same tokens there, so their KV is
// the same and a prefix cache may share it (sim/prefix_cache.h). Mooncake's 512-token
// `hash_ids`, a named system prompt, a conversation's earlier turns and their answers.
// Tokens past the last span are the request's own.
struct PrefixSpan {
    std::uint64_t id = 0;
    std::int32_t tokens = 0; // > 0
    bool operator==(const PrefixSpan& o) const { return id == o.id && tokens == o.tokens; }
};

// 64 bytes (a million-request run holds a million): the rare parts are out of line or
// interned (model/compact.h) and read like the std::string, std::optional and std::vector
// they stand for.
struct Request {
    std::int64_t id = 0;          // the identifier in the source file (row number if it has none)
    double arrival = 0.0;         // seconds from the start of the workload
    int prompt_tokens = 0;        // > 0
    int output_tokens = 0;        // > 0: the true length the model will generate
    std::int32_t agent = -1;      // the robot/agent that issued it (>= 0), -1 if none
    ClassLabel cls;               // free class label ("normal", "urgent", ...); empty if none
    BoxedOptional<Tuf> tuf;       // time-utility function, if the request has one
    OptionalSeconds budget_s;     // TimeBill time budget, if any
    RareVector<Segment> segments; // robot plan; when present their tokens sum to output_tokens
    // What its context shares with others', from the start (empty: nothing known); the
    // spans cover at most prompt + output tokens.
    RareVector<PrefixSpan> prefix;

    bool operator==(const Request& o) const;
};
static_assert(sizeof(Request) == 64, "Request stays compact (model/compact.h)");

} // namespace kairos
