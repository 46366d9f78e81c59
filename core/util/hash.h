#pragma once
// The core's two hashes, written here once (no hash library is in the dependency set; a
// few lines each):
//  - SplitMix64's output function (Steele, Lea and Flood), a fast 64-bit mix with full
//    avalanche: per-(request, token) draws (predict/trail_predictor.cpp) and the chained
//    block hashes of the prefix cache (sim/prefix_cache.h);
//  - FNV-1a, 64 bits: identification of contents, the same on every platform (a
//    workload's content, a journal line's integrity, seeds derived from names), not
//    security.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace kairos {

inline std::uint64_t splitmix64(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL, kFnvPrime = 1099511628211ULL;

// FNV-1a of `n` bytes, continuing from `h` (kFnvOffset to start).
inline std::uint64_t fnv1a64(const void* data, std::size_t n, std::uint64_t h = kFnvOffset) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= kFnvPrime;
    }
    return h;
}
inline std::uint64_t fnv1a64(std::string_view s) {
    return fnv1a64(s.data(), s.size());
}

// As 16 hex digits.
inline std::string fnv1a64Hex(std::string_view s) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(s)));
    return buf;
}

} // namespace kairos
