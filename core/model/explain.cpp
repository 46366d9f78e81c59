#include "model/explain.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace kairos {

namespace {
// Relative slack for comparisons of times computed by two formulas.
bool le(double a, double b) {
    return a <= b + 1e-9 * (1 + std::fabs(b));
}

using V = std::array<const char*, kReasonNumbers>;
// The table, in RuleId order (checked by ruleOf's static_assert on the count).
const Rule kRules[] = {
    {"unexplained", "unexplained", V{}, "an action its policy gave no reason for", false,
     [](const double*) { return false; }},
    {"fcfs.head", "fcfs: the head of the queue fits (need <= free, a seat)",
     V{"need", "free", "seats"},
     "first come, first served: the oldest waiting request's reservation fits above the "
     "watermark and a seat is free; the first that does not stops admission",
     false, [](const double* x) { return x[0] <= x[1] && x[2] >= 1; }},
    {"never_fits", "never_fits: need > M - watermark", V{"need", "limit"},
     "its reservation (context + 1) exceeds the KV capacity less the watermark: it can "
     "never be admitted (vLLM: AllocStatus.NEVER)",
     false, [](const double* x) { return x[0] > x[1]; }},
    {"overflow.latest", "overflow: used + growth > M, the latest arrival preempted",
     V{"used", "growth", "M", "arrival"},
     "the next iteration's KV growth does not fit; vLLM's victim is the most recently "
     "arrived running request (it will recompute)",
     true, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"overflow.rank", "overflow: used + growth > M, the worst-ranked preempted",
     V{"used", "growth", "M", "key"},
     "the next iteration's KV growth does not fit; the policy gives up the request it "
     "ranks last (kept KV of suspended requests first)",
     true, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"cannot_grow", "cannot_grow: alone, used + growth > M", V{"used", "growth", "M"},
     "the only request in the engine cannot add its next token to the KV cache: it can "
     "never finish",
     true, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"rank.admit", "rank: best key waiting, need <= free", V{"key", "need", "free"},
     "the best-ranked waiting request (ties keep running ones) gets a seat and its "
     "reservation fits",
     false, [](const double* x) { return x[1] <= x[2]; }},
    {"rank.resume", "rank: best key suspended takes a seat", V{"key", "seats"},
     "the best-ranked suspended request returns to the batch; its KV was kept", false,
     [](const double* x) { return x[1] >= 1; }},
    {"sprpt_lp.suspend", "sprpt_lp: a < C*r, ranked after the one it makes room for",
     V{"a", "C", "r", "key", "other_key"},
     "Trail's limited preemption: a running request may be displaced only while its age a "
     "(tokens generated) is below C times its initial prediction r, and only by a request "
     "with a smaller key; its KV is kept (suspended)",
     false,
     [](const double* x) { return (std::isinf(x[1]) || x[0] < x[1] * x[2]) && x[3] > x[4]; }},
    {"sprpt_lp.drop", "sprpt_lp: a < C*r, KV released for a better-ranked request",
     V{"a", "C", "r", "key", "other_key"},
     "as the suspension rule, and the better-ranked request needs the KV: it is dropped "
     "(recompute), at most once in its life",
     false,
     [](const double* x) { return (std::isinf(x[1]) || x[0] < x[1] * x[2]) && x[3] > x[4]; }},
    {"rank.drop_suspended", "rank: kept KV released for a better-ranked request",
     V{"key", "other_key"},
     "a suspended request's kept KV is released (it will recompute) for a waiting request "
     "ranked before it",
     false, [](const double* x) { return x[0] > x[1]; }},
    {"mcsf.admit", "mcsf: prefix fits M at every completion time", V{"predicted", "peak", "M"},
     "MC-SF: with the request admitted, the predicted KV use at every predicted "
     "completion time of the batch (its peak) stays within the capacity",
     false, [](const double* x) { return x[1] <= x[2]; }},
    {"protect.admit", "protect: used + need <= (1 - alpha) M",
     V{"used", "need", "limit", "alpha", "M"},
     "MC-SF's alpha-protection baseline: arrival order while the usage stays under "
     "(1 - alpha) M",
     false, [](const double* x) { return x[0] + x[1] <= x[2]; }},
    {"protect.idle", "protect: nothing runs, used + need <= M", V{"used", "need", "M"},
     "the baseline's liveness exception: an empty engine takes the first request that "
     "fits the whole cache",
     false, [](const double* x) { return x[0] + x[1] <= x[2]; }},
    {"protect.clear", "protect: used + growth > M, cleared", V{"used", "growth", "M", "beta"},
     "the next iteration overflows: every running request is cleared (beta-clearing: each "
     "with probability beta, in rounds until it fits)",
     false, [](const double* x) { return x[0] + x[1] > x[2]; }},
    {"timebill.admit", "timebill: arrival order, need <= free",
     V{"need", "free", "seats", "left", "prefill", "decode", "k", "n_w"},
     "TimeBill admits in arrival order while the reservation fits. Its budget arithmetic: "
     "`left` (s) of its budget remains; the WCET it plans on is the prefill estimate plus "
     "the decode estimate of N_W = min(ceil(k N_hat), N_max) tokens at the KV eviction "
     "ratio chosen (alpha*, the state's alpha)",
     false, [](const double* x) { return x[0] <= x[1] && x[2] >= 1 && x[6] >= 1 && x[7] >= 0; }},
    {"timebill.alpha", "timebill: alpha* from WCET = budget",
     V{"alpha", "wcet", "left", "n_w", "alpha_max", "p"},
     "the smallest KV eviction ratio whose pessimistic WCET (N_W = min(k N_hat, N_max) "
     "tokens) fits the budget left, capped at alpha_max; 0 when eviction cannot change the "
     "time (p = 0)",
     false,
     [](const double* x) {
         return x[0] >= 0 && x[0] <= x[4] &&
                (x[5] <= 0 || x[3] <= 1 || le(x[1], x[2]) || x[0] >= x[4]);
     }},
    {"timebill.fixed_alpha", "timebill: fixed alpha", V{"alpha"}, "the fixed-alpha baseline", false,
     [](const double* x) { return x[0] >= 0 && x[0] <= 1; }},
    {"timebill.kill", "timebill: Kill, now >= arrival + budget", V{"now", "deadline"},
     "TimeBill's Kill: its time budget ran out", false,
     [](const double* x) { return x[0] >= x[1]; }},
    {"timebill.skip_next", "timebill: Skip-next, released during an overrun",
     V{"arrival", "overrun_from", "overrun_to"},
     "TimeBill's Skip-next: it arrived while an earlier request ran past its deadline", false,
     [](const double* x) { return x[1] <= x[0] && x[0] <= x[2]; }},
    {"timely.dispatch", "timely: segment generated, dispatched to the robot",
     V{"generated", "segment_end", "segment"},
     "TimelyLLM: a plan segment is complete and goes to the robot", false,
     [](const double* x) { return x[0] >= x[1]; }},
    {"timely.suspend", "timely: segment done, waits for its next turn",
     V{"generated", "segment_end"},
     "TimelyLLM: while the robot executes, the generation is suspended with its KV kept", false,
     [](const double* x) { return x[0] >= x[1]; }},
    {"timely.admit", "timely: ready segments in rank order, need <= free",
     V{"key", "rank", "need", "free"},
     "TimelyLLM: the ready segments ranked (PUD priority, arrival or deadline); this one, "
     "at `rank` (0: first), starts as its prompt fits",
     false, [](const double* x) { return x[2] <= x[3] && x[1] >= 0; }},
    {"timely.resume", "timely: suspended generation in rank order takes a seat",
     V{"key", "rank", "seats"},
     "TimelyLLM: a suspended generation's next segment, at `rank`, takes a seat (KV kept)", false,
     [](const double* x) { return x[2] >= 1 && x[1] >= 0; }},
    {"optimal.start", "optimal: the hindsight optimum starts it now", V{"start", "now"},
     "MC-SF's exact optimum (exhaustive search over the discrete model) starts it this "
     "round",
     false, [](const double* x) { return x[0] <= x[1]; }},
    {"prefix_cache.hit",
     "prefix cache: the longest cached run of leading blocks, at most context - 1 tokens",
     V{"hit", "context", "block", "shared"},
     "at admission the request takes its longest run of leading 16-token blocks (by the "
     "chained hash of their prefix) found cached, neither computed nor allocated again; "
     "at least one token is always computed (vLLM's max_cache_hit_length); shared: of "
     "them, tokens in blocks running requests already hold",
     true,
     [](const double* x) {
         return x[2] >= 2 && x[0] > 0 && std::fmod(x[0], x[2]) == 0 && x[0] <= x[1] - 1 &&
                x[3] >= 0 && x[3] <= x[0] && std::fmod(x[3], x[2]) == 0;
     }},
    {"prefix_cache.evict",
     "prefix cache: cached blocks nobody references taken back for this request's KV",
     V{"evicted", "idle cached before", "never used"},
     "every block was in use once and the request needed more: the allocator took the "
     "least recently released cached blocks (a chain's tail first), which nobody "
     "referenced; their prefixes are no longer cached",
     true, [](const double* x) { return x[0] >= 1 && x[0] <= x[1] && x[2] == 0; }},
};
static_assert(sizeof kRules / sizeof kRules[0] == static_cast<std::size_t>(RuleId::Count),
              "one rule per RuleId");
} // namespace

const char* actName(Act a) {
    switch (a) {
    case Act::Admit:
        return "admit";
    case Act::Preempt:
        return "preempt";
    case Act::Suspend:
        return "suspend";
    case Act::Resume:
        return "resume";
    case Act::Kill:
        return "kill";
    case Act::Evict:
        return "evict";
    case Act::Dispatch:
        return "dispatch";
    case Act::Reuse:
        return "reuse";
    case Act::Uncache:
        return "uncache";
    }
    return "?";
}

bool actFromName(const std::string& s, Act* out) {
    for (int i = 0; i <= static_cast<int>(kLastAct); ++i)
        if (s == actName(static_cast<Act>(i))) {
            *out = static_cast<Act>(i);
            return true;
        }
    return false;
}

const Rule& ruleOf(RuleId id) {
    const auto i = static_cast<std::size_t>(id);
    return kRules[i < static_cast<std::size_t>(RuleId::Count) ? i : 0];
}

int ruleVarCount(RuleId id) {
    const Rule& r = ruleOf(id);
    int n = 0;
    while (n < int(kReasonNumbers) && r.vars[static_cast<std::size_t>(n)]) ++n;
    return n;
}

bool ruleFromCode(const std::string& code, RuleId* out) {
    for (std::size_t i = 0; i < static_cast<std::size_t>(RuleId::Count); ++i)
        if (code == kRules[i].code) {
            *out = static_cast<RuleId>(i);
            return true;
        }
    return false;
}

bool Insight::sameAs(const Insight& o, bool key_counts_down) const {
    const auto eq = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    // Remaining counts as totals (remaining + generated), within max(1 token, 1 %).
    const auto total = [&](double a, double b) {
        if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) return eq(a, b);
        const double x = a + generated, y = b + o.generated;
        return std::fabs(x - y) <= std::max(1.0, 0.01 * std::fabs(y));
    };
    return (key_counts_down ? total(key, o.key) : eq(key, o.key)) &&
           total(predicted, o.predicted) && eq(deadline, o.deadline) && eq(alpha, o.alpha) &&
           eq(wcet, o.wcet);
}

Explanation replicaExplanation(const Explanation& ex, const std::vector<std::int16_t>& replica_of,
                               int replica) {
    if (ex.call_replica.size() != ex.calls.size())
        throw std::invalid_argument("replicaExplanation: not a fleet's explanation");
    Explanation out;
    out.on = ex.on;
    out.key_name = ex.key_name;
    out.key_descending = ex.key_descending;
    out.key_counts_down = ex.key_counts_down;
    std::vector<std::uint32_t> local(ex.calls.size(), UINT32_MAX);
    for (std::size_t i = 0; i < ex.calls.size(); ++i)
        if (ex.call_replica[i] == replica) {
            local[i] = static_cast<std::uint32_t>(out.calls.size());
            out.calls.push_back(ex.calls[i]);
        }
    for (const Reason& r : ex.reasons)
        if (r.call < local.size() && local[r.call] != UINT32_MAX) {
            out.reasons.push_back(r);
            out.reasons.back().call = local[r.call];
        }
    for (const Insight& in : ex.insights)
        if (static_cast<std::size_t>(in.req) < replica_of.size() &&
            replica_of[static_cast<std::size_t>(in.req)] == replica)
            out.insights.push_back(in);
    return out;
}

} // namespace kairos
