#include "workload/random.h"

#include <cmath>
#include <stdexcept>

namespace kairos {

std::int64_t Rng::uniformInt(std::int64_t lo, std::int64_t hi) {
    if (hi < lo) throw std::invalid_argument("uniformInt: empty range");
    const std::uint64_t range = static_cast<std::uint64_t>(hi - lo) + 1; // 0 means 2^64
    if (range == 0) return static_cast<std::int64_t>(eng_());
    // Reject the lowest (2^64 mod range) values so that x % range is exactly uniform.
    const std::uint64_t threshold = (0 - range) % range;
    std::uint64_t x;
    do x = eng_();
    while (x < threshold);
    return lo + static_cast<std::int64_t>(x % range);
}

double Rng::exponential(double rate) {
    return -std::log(uniformPos()) / rate;
}

double Rng::normal() {
    if (has_spare_) {
        has_spare_ = false;
        return spare_;
    }
    double u, v, s;
    do {
        u = 2.0 * uniform() - 1.0;
        v = 2.0 * uniform() - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
}

double Rng::gamma(double shape, double scale) {
    if (!(shape > 0) || !(scale > 0))
        throw std::invalid_argument("gamma: shape and scale must be > 0");
    if (shape < 1.0) {
        // Boost to shape+1 and scale back: X = Y * U^(1/shape) (Marsaglia & Tsang, sec. 6).
        const double u = uniformPos();
        return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
    }
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = normal();
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        const double u = uniformPos();
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
        if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * scale;
    }
}

double Rng::lognormal(double mu, double sigma) {
    return std::exp(mu + sigma * normal());
}

} // namespace kairos
