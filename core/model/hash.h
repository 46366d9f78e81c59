#pragma once
// SplitMix64's output function (Steele, Lea and Flood), a fast 64-bit mix with full
// avalanche: per-(request, token) draws (predict/trail_predictor.cpp) and the chained
// block hashes of the prefix cache (sim/prefix_cache.h). Seven lines, written here once
// rather than pulled in from a library.
#include <cstdint>

namespace kairos {

inline std::uint64_t splitmix64(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

} // namespace kairos
