#pragma once
// RunLog: the single result format. Engines write it; metrics, views, storage and
// exports read only this. Two streams:
//  - events: per-request lifecycle (arrive .. finish/kill), in time order;
//  - iters:  per-iteration records. A record may stand for a *stretch* of n iterations
//            whose batch did not change (the engine skipped ahead over it); iteration j
//            of the stretch (0-based) lasts d0 + j*dd seconds, so token times inside a
//            stretch are exact, not interpolated.
// Token emission rule (what metrics rely on): a request emits a token at the end of the
// iteration that completes its prefill (event prefill_end), and then at the end of every
// iteration with decode_seqs > 0 until its next preempt/suspend/finish/kill event; while
// suspended it emits nothing and after `resume` it emits again in every decode iteration.
#include "model/explain.h"
#include "model/request.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace kairos {

enum class Ev : std::uint8_t {
    Arrive,       // value = prompt tokens
    Admit,        // first time the scheduler takes the request in; value = 0
    PrefillStart, // a prefill (or recompute) begins; value = context tokens to compute
    PrefillEnd,   // prefill done, one token emitted; value = tokens generated after it
    FirstToken,   // value = 1 (same time as the first PrefillEnd)
    Preempt,      // KV dropped, back to waiting (recompute); value = tokens generated so far
    Suspend,      // paused with its KV kept; value = tokens generated so far
    Resume,       // back from waiting-after-preempt or from suspended; value = tokens so far
    Dispatch,     // a robot segment is handed to the robot; value = segment index
    Finish,       // value = tokens generated (= output tokens)
    Kill,         // dropped unfinished; value = tokens generated so far
    Token,        // only in expanded logs (--tokens); value = token index (1-based)
    Budget,       // at arrival, for a request with a time budget; value = budget in ms
    Evict,        // the prompt's KV was compressed at prefill end; value = alpha * 10,000
    KillCause,    // just before a Kill of the same request at the same time: why (KillCause)
    CacheHit,     // right after an Admit or Resume that found part of its context in the
                  // prefix cache (sim/prefix_cache.h); value = tokens neither computed nor
                  // allocated again
    Transfer,     // disaggregation (sim/disagg.h): its prompt computed on the prefill pool, its
                  // KV leaves for the decode pool; value = tokens of KV sent
    KvArrive,     // ... the KV has arrived at its decode replica, which queues the request
                  // until it admits it; value = tokens of KV received
};

// Why a request was dropped unfinished. Every kill names one, and each is a documented
// rule (tests/core/tst_liveness.cpp checks that the rule really applied):
enum class KillCause : std::int32_t {
    Unknown = 0,    // a log written before causes were recorded
    NeverFits = 1,  // its reservation (context + 1) exceeds the KV capacity less the
                    // policy's watermark: it can never be admitted (vLLM: AllocStatus.NEVER)
    CannotGrow = 2, // alone in the engine, its next token does not fit the KV cache
    Deadline = 3,   // TimeBill's Kill: its time budget ran out
    SkipNext = 4,   // TimeBill's Skip-next: it arrived while an earlier request overran
    Shed = 5,       // TimelyLLM's code: queued, its utility had fallen to 0 (load shedding)
};
const char* killCauseName(KillCause c); // "never_fits", ...; "unknown" for others

const char* evName(Ev e);
bool evFromName(const std::string& s, Ev* out);

// 16 bytes: the request's id and the event share a word (25 and 7 bits; kMaxRequests keeps
// ids in range), where an aligned {double, int32, uint8, int32} took 24: a million-request
// run logs six million events.
struct Event {
    Event() : req(0), ev(Ev::Arrive) {}
    Event(double t_, ReqId req_, Ev ev_, std::int32_t value_)
        : t(t_), req(req_), ev(ev_), value(value_) {}
    double t = 0.0;
    ReqId req : 25;
    Ev ev : 7;
    std::int32_t value = 0;
};
static_assert(sizeof(Event) == 16, "Event is packed to 16 bytes");

// What an event's value means, in words ("342 prompt tokens", "30 generated", "KV eviction ratio
// alpha = 0.95", "budget 5000 ms"); empty where it says nothing (admit, first_token). The
// Inspector's and `kairos-cli explain`'s stories ("evict (9500)" read as a count of something).
std::string eventValueText(const Event& e);

struct IterSpan {
    double t0 = 0.0;           // start of the first iteration
    double d0 = 0.0;           // duration of the first iteration
    double dd = 0.0;           // growth of the duration per iteration (decode KV growth)
    std::int64_t kv_first = 0; // KV tokens allocated during the first iteration
    std::int64_t kv_last = 0;  // ... during the last one (KV only grows inside a stretch)
    // With prefix caching: KV tokens in blocks no request references that still hold cached
    // prefixes (free for the allocator; not in kv_first/kv_last), at the stretch's start.
    std::int64_t kv_cached = 0;
    std::int32_t n = 1;           // iterations in the stretch (>= 1)
    std::int32_t decode_seqs = 0; // requests emitting a decode token in every iteration
    std::int32_t prefill_seqs = 0;
    std::int32_t prefill_tokens = 0; // tokens prefilled in this (single) iteration

    // End of iteration j (0-based): t0 + (j+1)*d0 + dd*j*(j+1)/2. The one formula every
    // reader and the engine use, so times agree to the last bit.
    double end(std::int64_t j) const {
        return t0 + static_cast<double>(j + 1) * d0 +
               dd * 0.5 * static_cast<double>(j) * static_cast<double>(j + 1);
    }
    double tEnd() const { return end(n - 1); }
    std::int64_t kvPeak() const { return kv_last; }
    // Appends the ends of its iterations that emit decode tokens (all of them, or none when
    // it decodes nothing): what decodeEnds() collects, record by record.
    void appendDecodeEnds(std::vector<double>& out) const {
        if (decode_seqs > 0)
            for (std::int64_t j = 0; j < n; ++j) out.push_back(end(j));
    }
};
static_assert(sizeof(IterSpan) == 64, "IterSpan has no padding");

// What the summary reads from the iteration records besides their decode ends.
struct IterTotals {
    std::int64_t kv_peak = 0;    // max over the records of kvPeak()
    std::int64_t iterations = 0; // sum of n
    std::int64_t stretches = 0;  // records
    void add(const IterSpan& sp) {
        kv_peak = std::max(kv_peak, sp.kvPeak());
        iterations += sp.n;
        ++stretches;
    }
};

struct RunLog {
    std::string workload;   // name
    std::string policy;     // scheduler name with parameters
    std::string exec_model; // description of the execution model / profile
    std::int64_t kv_capacity_tokens = 0;
    std::int32_t num_requests = 0;
    std::vector<Event> events;
    std::vector<IterSpan> iters;
    double sim_wall_ms = 0.0;          // wall time the engine took
    std::vector<std::string> warnings; // what the engine refused or had to resolve
    // Prefix caching (sim/prefix_cache.h): on, its block size, and the cached blocks the
    // allocator took back.
    bool prefix_caching = false;
    std::int32_t cache_block_size = 0;
    std::int64_t cache_evictions = 0;
    Explanation explain; // decisions with reasons (when the run recorded them)
    // A fleet of replicas behind a router (sim/fleet.h): how many, the router, each
    // request's replica and each iteration record's. With one replica (replicas == 1) both
    // vectors are empty and the log is one engine's. Every replica has kv_capacity_tokens.
    // The token emission rule above holds per replica: a request emits at the ends of its
    // own replica's iterations.
    std::int32_t replicas = 1;
    std::string router;
    std::vector<std::int16_t> replica_of;   // per request
    std::vector<std::int16_t> iter_replica; // per iteration record
    // Prefill/decode disaggregation (sim/disagg.h): replicas 0 .. prefill_replicas - 1 are
    // the prefill pool, the others the decode pool; replica_of is each request's decode
    // replica (its prefill replica when it never got there) and prefill_of its prefill
    // replica. 0 and empty for a colocated fleet.
    std::int32_t prefill_replicas = 0;
    std::vector<std::int16_t> prefill_of;
    // The decode pool's KV capacity per replica when it runs on other hardware
    // (--decode-profile); 0: kv_capacity_tokens, as every other replica's.
    std::int64_t decode_kv_capacity_tokens = 0;
    // KV in use (and, with prefix caching, in idle cached blocks) at the end of a stretch
    // that the next one does not follow at once, its finished requests' KV released: the
    // KV series' value through the idle gap (the stretch's own value stood there before,
    // as if the finished requests still held their KV). A kill of a request holding KV
    // inside a gap is not seen until the next stretch. Recorded with the iterations; a
    // fleet's are tagged with their replica (kv_idle_replica). Logs written before have
    // none, and read as before.
    struct KvIdle {
        double t = 0;
        std::int64_t kv = 0, cached = 0;
    };
    std::vector<KvIdle> kv_idle;
    std::vector<std::int16_t> kv_idle_replica;
    // A run that kept no iteration records (Simulator::recordIterations(false), for a caller
    // that wants the summary alone: a million-request run's records are 72 MB) has `iters`
    // empty and this digest of them instead, what the summary reads from them. Off (and
    // empty) in every other log; no export reads a digest.
    struct IterDigest {
        bool on = false;
        IterTotals totals;
        std::vector<double> decode_ends; // what decodeEnds() gives from the records
    } iter_digest;

    // Of `iters`, or the digest's when the run kept none.
    IterTotals iterTotals() const;
    std::int64_t totalIterations() const { return iterTotals().iterations; }
    bool fleet() const { return replicas > 1; }
    bool disaggregated() const { return prefill_replicas > 0; }
    // "replica 3", or with disaggregation "prefill 1" / "decode 0" (each pool from 0).
    std::string replicaName(int replica) const;
};

// One replica of a fleet's log as a log of its own: its requests renumbered 0.. in arrival
// order (`members`, when given, receives their ids in the fleet), its events and iterations.
// Throws std::invalid_argument for a replica the log does not have.
RunLog replicaLog(const RunLog& fleet, int replica, std::vector<ReqId>* members = nullptr);

} // namespace kairos
