#pragma once
// Seeded workload generators: arrival processes and request lengths.
#include "model/workload.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace kairos {

// Arrivals: Poisson (burstiness 1) or gamma inter-arrival times with shape b and scale
// 1/(rate*b), vLLM's `--burstiness` (cv = 1/sqrt(b)). rate = inf puts every request at
// `start` (vLLM's default request rate).
struct ArrivalSpec {
    double rate = std::numeric_limits<double>::infinity(); // requests per second
    double burstiness = 1.0;
    std::uint64_t seed = 0;
    double start = 0.0;
    void validate() const; // throws std::invalid_argument
};

std::vector<double> generateArrivals(const ArrivalSpec& spec, std::size_t n);

// A length distribution written as "const:N", "uniform:LO,HI" or "lognormal:MEDIAN,SIGMA"
// with an optional ",max=M" clip (lognormal draws are rounded and clipped to [1, M]).
struct LengthDist {
    enum class Kind { Const, Uniform, LogNormal } kind = Kind::Const;
    double p1 = 1, p2 = 0;
    int max = 1 << 20;
    static LengthDist parse(const std::string& text); // throws std::invalid_argument
    int sample(class Rng& rng) const;
    std::string describe() const;
};

struct GenerateSpec {
    std::size_t count = 100;
    ArrivalSpec arrivals;
    // Lengths from (prompt, output) pairs of a file, drawn with replacement ...
    std::vector<std::pair<int, int>> length_pairs;
    // ... or from two parametric distributions when length_pairs is empty.
    LengthDist prompt = LengthDist::parse("lognormal:512,0.8,max=4096");
    LengthDist output = LengthDist::parse("lognormal:128,0.9,max=2048");
    std::uint64_t length_seed = 1;
    std::string name = "generated";
    // Shared prefixes (model/request.h's prefix spans; what prefix caching reuses):
    //  - system_prompt_tokens > 0: every request begins with one of `system_prompts` shared
    //    system prompts of that many tokens (drawn uniformly), added to its prompt;
    //  - turns > 1: multi-turn conversations. Conversations start at rate / turns (the
    //    request rate stays about `rate`), each has 1 + Geometric turns (mean `turns`), and
    //    each turn's prompt is the previous turn's prompt, its answer and a new user message
    //    (a draw of `prompt`, or of a pair's prompt); its answer a draw of `output`. Turn k+1
    //    arrives an exponential gap (mean think_s) after turn k: arrivals are open-loop, as
    //    in Mooncake's trace, so under overload a turn may arrive before its predecessor's
    //    answer is done (and then finds less of it cached). A conversation ends early when
    //    its next turn's prompt and answer would exceed max_context tokens. Every message
    //    (user or answer) is a prefix span of its own, so turn k+1's spans extend turn k's.
    std::int32_t system_prompt_tokens = 0;
    int system_prompts = 1;
    double turns = 1;
    double think_s = 30;
    std::int32_t max_context = 32768;
};

Workload generateWorkload(const GenerateSpec& spec);

// Replaces the arrival times of `w` (in its order) by a generated process.
void assignArrivals(Workload& w, const ArrivalSpec& spec);

// Scales the workload's own arrival rate by `factor` (> 0, finite): every gap between
// arrivals is divided by it, the first arrival stays. The trace's burstiness and daily
// shape are kept, unlike --rate, which replaces the arrivals. Throws
// std::invalid_argument for a factor out of range.
void scaleArrivalRate(Workload& w, double factor);

} // namespace kairos
