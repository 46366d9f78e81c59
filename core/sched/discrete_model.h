#pragma once
// The discrete model of the MC-SF paper (seeds/003): one worker, rounds of one time unit,
// KV capacity M tokens. Job i arrives at round a_i with prompt s_i and output o_i; started
// at round p it completes at round p + o_i and its KV use grows by one token a round.
//
// Two conventions for the rounds a job occupies:
//  - Paper: rounds p .. p + o_i inclusive, using s_i + (t - p) at round t (so s_i at its
//    start round): the formulation of the paper's feasibility check and integer program.
//  - Engine: rounds p .. p + o_i - 1, using s_i + (t - p) + 1 during round t: what the
//    simulator does with the unit model and chunked prefill (a request admitted at a
//    boundary reserves its prompt and the slot of the token its prefill emits, and frees
//    its KV at the end of its last iteration).
// Latency of a job: p + o_i - a_i (its completion minus its arrival), the same in both.
#include <cstdint>
#include <vector>

namespace kairos {
class Rng;
}

namespace kairos::discrete {

struct Job {
    int arrival = 0;
    int prompt = 1; // s_i
    int output = 1; // o_i
};

enum class Occupancy { Paper, Engine };

struct Instance {
    std::int64_t capacity = 0; // M
    std::vector<Job> jobs;
    Occupancy occupancy = Occupancy::Paper;
};

// KV tokens job `j` started at round `p` uses at round `t` (0 when not active).
std::int64_t usage(const Instance& in, const Job& j, int p, int t);
// Whether the start rounds keep memory within M at every round (and each starts after it arrives).
bool feasible(const Instance& in, const std::vector<int>& start);
// Sum of latencies (p_i + o_i - a_i).
std::int64_t totalLatency(const Instance& in, const std::vector<int>& start);

// A random instance for checks against the optimum: n in [n_min, n_max] jobs with prompt
// U(1, s_max), output U(1, o_max), arrival U(0, max_arrival), and capacity M = the largest
// single need (s + o + 1) + U(0, extra) so that every job fits alone.
Instance randomInstance(class kairos::Rng& r, int n_min, int n_max, int s_max, int o_max, int extra,
                        int max_arrival, Occupancy occ);

// MC-SF (Algorithm 2, online; Algorithm 1 when all arrive at 0): at every round, keep the
// running jobs and add arrived ones in order of output length (ties: index) while the
// check at the completion times of running and added jobs holds; stop at the first that
// fails. Returns start rounds.
std::vector<int> mcsf(const Instance& in);

// The hindsight optimum by exhaustive search (depth-first over rounds and subsets of
// arrived jobs to start, with a lower bound), for tiny instances (<= 8 jobs).
std::vector<int> optimal(const Instance& in);

// A second, independent brute force: every vector of start rounds up to a horizon.
// Only for very small instances (the search is (horizon)^n).
std::vector<int> bruteForce(const Instance& in, int horizon);

} // namespace kairos::discrete
