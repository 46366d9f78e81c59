#pragma once
// One domain per number a run takes, in one table: the command line checks an option by
// it (app/cli/checks.h, number(domain)), RunSpec::validate checks the same field of a
// --spec file, a stored run or the workbench's session by it, and the generators check
// their arguments by it. So a RunSpec cannot carry what the command line refuses.
//
// The bounds are where a value stops meaning anything for a simulated server, each with
// its reason:
//   rate           (0, 1e9] req/s, or inf (everything at once: an offline batch)
//   burstiness     [0.05, 1e4], the gamma shape of inter-arrival gaps: the squared
//                  coefficient of variation is 1/shape, from 20 (a few huge bursts) to
//                  1e-4 (a metronome). Below 0.05 most gaps underflow to 0 in doubles and a
//                  "rate" silently becomes an offline batch (1e-4 reported 3e9 req/s).
//   rate_scale     (0, 1e6]
//   budget         [0, 1e9] s (0: none)
//   gpu_mem_gib    [0, 16384] GiB per device (0: the profile's); no device has 16 TiB
//   mem_fraction   [0, 1] (0: the profile's)
//   kv_capacity    [0, 1e15] tokens (0: the profile's)
//   block_size     [1, 2^20] tokens; max_num_seqs [1, 2^24]; max_num_batched_tokens [1, 2^30]
//   limit          [0, 1e12] requests (0: all)
#include "util/input_error.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace kairos::domains {

struct Domain {
    const char* key;    // the RunSpec field
    const char* option; // the command-line option
    double lo, hi;
    bool lo_open; // (lo, hi] rather than [lo, hi]
    bool inf_ok;  // "inf" also accepted
    bool integer; // a whole number
    // 0 stands for "the profile's" (or "none", "all") in a RunSpec; on the command line the
    // option is then left out, and an explicit 0 is refused as a likely mistake.
    bool zero_means_default = false;
};

inline constexpr Domain kRate{"workload.rate", "--rate", 0, 1e9, true, true, false};
inline constexpr Domain kBurstiness{
    "workload.burstiness", "--burstiness", 0.05, 1e4, false, false, false};
inline constexpr Domain kRateScale{
    "workload.rate_scale", "--rate-scale", 0, 1e6, true, false, false};
inline constexpr Domain kBudget{"workload.budget", "--budget", 0, 1e9, false, false, false, true};
inline constexpr Domain kGpuMemGib{
    "exec.gpu_mem_gib", "--gpu-mem-gib", 0, 16384, false, false, false, true};
inline constexpr Domain kMemFraction{
    "exec.mem_fraction", "--mem-fraction", 0, 1, false, false, false, true};
inline constexpr Domain kKvCapacity{
    "limits.kv_capacity_tokens", "--kv-capacity", 0, 1e15, false, false, true, true};
inline constexpr Domain kBlockSize{
    "limits.block_size", "--block-size", 1, 1 << 20, false, false, true};
inline constexpr Domain kMaxNumSeqs{
    "limits.max_num_seqs", "--max-num-seqs", 1, 1 << 24, false, false, true};
inline constexpr Domain kMaxBatchedTokens{"limits.max_num_batched_tokens",
                                          "--max-num-batched-tokens",
                                          1,
                                          double(1 << 30),
                                          false,
                                          false,
                                          true};
inline constexpr Domain kReplicas{"fleet.replicas", "--replicas", 1, 4096, false, false, true};
// The cache-aware routers' thresholds (sim/fleet.h); a RunSpec's negative value: the
// router's default. cache_threshold is a share of the prompt; balance_abs a count of
// requests; balance_rel a ratio of loads (1: any difference).
inline constexpr Domain kCacheThreshold{
    "fleet.cache_threshold", "--cache-threshold", 0, 1, false, false, false};
inline constexpr Domain kBalanceAbs{
    "fleet.balance_abs", "--balance-abs", 0, 1e9, false, false, true};
inline constexpr Domain kBalanceRel{
    "fleet.balance_rel", "--balance-rel", 1, 1e6, false, false, false};
inline constexpr Domain kLimit{"workload.limit", "--limit", 0, 1e12, false, false, true, true};

// The command line's view: (0, hi] where 0 is a RunSpec's "default".
inline std::string describeOption(const Domain& d);

inline std::string describe(const Domain& d) {
    auto text = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%g", v);
        return std::string(b);
    };
    return std::string(d.lo_open ? "(" : "[") + text(d.lo) + ", " + text(d.hi) + "]" +
           (d.inf_ok ? " or inf" : "") + (d.integer ? ", whole" : "");
}

inline std::string describeOption(const Domain& d) {
    if (!d.zero_means_default || d.lo != 0) return describe(d);
    Domain o = d;
    o.lo_open = true;
    return describe(o);
}

inline bool inDomain(const Domain& d, double v) {
    if (d.inf_ok && v == INFINITY) return true;
    if (!std::isfinite(v)) return false;
    if (v < d.lo || (d.lo_open && v == d.lo) || v > d.hi) return false;
    return !d.integer || v == std::floor(v);
}

// Throws InputError(where, 0, d.key, ...) for a value outside d.
inline void check(const Domain& d, double v, const std::string& where) {
    if (inDomain(d, v)) return;
    char b[40];
    std::snprintf(b, sizeof b, "%g", v);
    throw InputError(where, 0, d.key, std::string(b) + " is outside " + describe(d));
}

} // namespace kairos::domains
