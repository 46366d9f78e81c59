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
