#pragma once
// Seeded sampling that gives the same numbers with every standard library.
// std::mt19937_64 is fully specified by the standard, but std::*_distribution are not
// (libstdc++ and libc++ draw differently), so the distributions are written here: a
// workload generated from a seed must be the same file on every machine.
#include <cstdint>
#include <random>

namespace kairos {

class Rng {
public:
    explicit Rng(std::uint64_t seed) : eng_(seed) {}
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(eng_() >> 11) * 0x1.0p-53; }
    // Uniform in (0, 1]: safe under log().
    double uniformPos() { return 1.0 - uniform(); }
    // Uniform integer in [lo, hi] (exact: rejection of the biased low values).
    std::int64_t uniformInt(std::int64_t lo, std::int64_t hi);
    double exponential(double rate);          // mean 1/rate
    double normal();                          // standard normal (Marsaglia polar method)
    double gamma(double shape, double scale); // Marsaglia & Tsang (2000); shape > 0
    double lognormal(double mu, double sigma);
    bool bernoulli(double p) { return uniform() < p; }
    std::uint64_t raw() { return eng_(); }

private:
    std::mt19937_64 eng_;
    bool has_spare_ = false;
    double spare_ = 0.0;
};

} // namespace kairos
