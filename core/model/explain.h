#pragma once
// Decisions with their reasons: the third stream of a RunLog, recorded only when
// a run asks for it (RunSpec explain, `--explain`), so runs without it cost nothing extra.
//
//  - reasons:  every action a decision took (admit, preempt, suspend, resume, kill, KV
//              eviction ratio, segment dispatch), in the order the engine applied it, with
//              the rule that fired (named as in the paper), the numbers it compared and the
//              request it compared against. Actions the engine takes on its own (a victim
//              when the KV cache overflows, a request that cannot grow) are here too.
//  - calls:    every call of Scheduler::schedule (time, how long the engine may run without
//              asking again, wake-up time, restart flag). With the reasons, the calls are
//              the whole input the policy gave the engine: replaying them (sched/replay.h)
//              reproduces the run log exactly (tests/core/tst_explain.cpp checks it).
//  - insights: the per-request state the policy decides on (its key in the policy's order,
//              predicted remaining tokens, deadline (slack), alpha*, WCET estimate), sampled
//              when a request enters the queue, when a decision acts on it, while it runs
//              where the policy refines its predictions, and while it waits where its key
//              moves with the clock (at the decisions that act); kept only when it changed:
//              what the "scheduler at t" view reads.
//
// Rules are a book: the engine's own (explain.cpp) and those each policy registers in its
// file. Each names its numbers and says what they must satisfy; tests check every recorded
// reason against its rule, so a reason is a claim that was verified, not a caption.
#include "model/request.h"

#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kairos {

// Reuse and Uncache are the prefix cache's (sim/prefix_cache.h), recorded by the engine
// for what it did, not decided by a policy: an admission's hit length, and cached blocks
// the allocator took back. They change nothing a replay must repeat (sched/replay.cpp
// passes over them).
enum class Act : std::uint8_t {
    Admit,
    Preempt,
    Suspend,
    Resume,
    Kill,
    Evict,
    Dispatch,
    Reuse,
    Uncache
};
constexpr Act kLastAct = Act::Uncache;
// The prefix cache's own records (see above).
inline bool cacheAct(Act a) {
    return a == Act::Reuse || a == Act::Uncache;
}
const char* actName(Act a); // "admit", ...
bool actFromName(const std::string& s, Act* out);

// A rule's handle: its place in the rule book. The engine's own rules (actions it takes
// whatever the policy) are fixed here; every policy registers its rules in its own file
// (registerRule), so a new policy adds nothing to this one. Files store a rule's code, never
// its handle, which depends on the order the program registered them in.
enum class RuleId : std::uint16_t {
    Unexplained = 0, // an action its policy gave no reason for (a bug; tests refuse it)
    EngineOverflow,  // engine: KV overflow, the policy's victim (latest arrival) preempted
    RankOverflow,    // overflow: the worst-ranked request preempted (key)
    CannotGrow,      // engine: alone, its next token does not fit M
    CacheHit,        // prefix cache: the longest run of cached leading blocks, < context
    CacheEvict,      // prefix cache: blocks nobody referenced taken back, least recent first
    FirstRegistered  // the policies' rules count on from here
};

// The most numbers a reason carries.
constexpr std::size_t kReasonNumbers = 8;

using RuleVars = std::array<const char*, kReasonNumbers>;

struct Rule {
    const char* code; // "sprpt_lp.suspend": what files store
    const char* name; // "sprpt_lp: a < C*r, ...": what people read
    RuleVars vars;    // names of its numbers; nullptr past the last
    const char* text; // one line for people
    bool engine;      // an action the engine took on its own
    // Whether the recorded numbers satisfy the rule.
    bool (*holds)(const double* x);
};
// Adds a policy's rule to the book and returns its handle. Called while the program starts,
// from a namespace-scope constant in the policy's file:
//     const RuleId kHead = registerRule({"fcfs.head", ...});
// so every rule of a linked policy is known before main (sched/registry.h's
// policySpecs() links every policy: readers of rule codes call it). Throws
// std::logic_error for a code already in the book, and once the book has been read (it
// is read without a lock).
RuleId registerRule(const Rule& rule);
// Every rule, the engine's first; ids 0 .. ruleCount() - 1.
std::size_t ruleCount();
const Rule& ruleOf(RuleId id); // Unexplained's rule for an id not in the book
int ruleVarCount(RuleId id);
bool ruleFromCode(const std::string& code, RuleId* out);

struct Reason {
    double t = 0;
    std::uint32_t call = 0; // the schedule() call that decided it (or that the engine's
                            // own action followed)
    ReqId req = 0;
    Act act = Act::Admit;
    RuleId rule = RuleId::Unexplained;
    ReqId other = -1;       // the request it was compared against, -1 if none
    std::int32_t value = 0; // kill: KillCause; dispatch: segment index
    std::array<double, kReasonNumbers> x{};
};

struct CallRecord {
    double t = 0;
    std::int32_t hold = 1;
    double wake_at = std::numeric_limits<double>::infinity();
    bool restart = false;
    // The engine once the decision was applied: requests running (seats taken) and KV tokens
    // allocated. What tells why a request left waiting was not taken in (metrics/waits.h).
    // -1: not recorded (a log written before they were).
    std::int32_t running = -1;
    std::int64_t kv_used = -1;
};

// The engine's limits a run's decisions worked under (EngineLimits), and the policy's KV
// watermark: what a wait is measured against (metrics/waits.h). 0: not recorded.
struct ExplainLimits {
    std::int32_t seats = 0;        // max_num_seqs
    std::int32_t token_budget = 0; // max_num_batched_tokens
    std::int32_t block_size = 0;
    bool chunked = false;   // chunked prefill
    double watermark = 0.0; // fraction of the KV capacity the policy keeps free at admission
    bool known() const { return seats > 0; }
};
// As a run log's header and the store keep them: {"seats", "token_budget", "block_size",
// "chunked", "watermark"}. Reading throws InputError naming `file`, `line` and the field.
nlohmann::json limitsJson(const ExplainLimits& l);
ExplainLimits limitsFromJson(const nlohmann::json& j, const std::string& file, long line);

// What a policy decides on for one request. NaN where the policy has no such notion.
struct Insight {
    static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    double t = 0;
    ReqId req = 0;
    double key = kNone;       // its key in the policy's order (Explanation::key_name)
    double predicted = kNone; // predicted remaining tokens
    double deadline = kNone;  // when it is due (s); its slack at t is deadline - t
    double alpha = kNone;     // KV eviction ratio chosen
    double wcet = kNone;      // worst-case execution time estimate (s)
    // Tokens it had generated when sampled. The predicted remaining tokens (and the key,
    // where the key counts down: Explanation::key_counts_down) are as of then; read at a
    // later time they count down by the tokens generated since (metrics/explain_view.h),
    // so a prediction that only counts down is one sample, not one per token.
    std::int32_t generated = -1;
    // The same state: equal numbers, remaining counts compared as predicted totals
    // (remaining + generated) within max(1 token, 1 %) (a refining predictor's estimate
    // moves a little at every token; a sample per 1 % keeps its course, not its noise).
    bool sameAs(const Insight& o, bool key_counts_down) const;
};

struct Explanation {
    bool on = false;
    std::string key_name;         // "arrival (s)", "predicted remaining (tokens)", ...
    bool key_descending = false;  // higher keys first (PUD priority)
    bool key_counts_down = false; // the key is a remaining count (see Insight::generated)
    ExplainLimits limits;
    std::vector<CallRecord> calls;
    std::vector<Reason> reasons;
    std::vector<Insight> insights;
    // A fleet's run (sim/fleet.h): each replica's calls, reasons and states merged in time
    // order, and here the replica each call was made on (a reason's call names its replica).
    // Empty: one engine.
    std::vector<std::int16_t> call_replica;
};
// One replica's part of a fleet's explanation, its calls numbered from 0 as that replica's
// engine numbered them: what a replay of that replica issues (sched/replay.h). `replica_of`
// is the run log's (RunLog::replica_of); a request's states belong to its replica.
Explanation replicaExplanation(const Explanation& ex, const std::vector<std::int16_t>& replica_of,
                               int replica);

} // namespace kairos
