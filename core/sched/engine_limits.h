#pragma once
// What an engine may hold and do per iteration, as vLLM's scheduler configuration: the KV
// cache, its block size, the running requests, the tokens of one iteration, chunked
// prefill, skipping ahead over idle time, automatic prefix caching.
#include <cstdint>

namespace kairos {

struct EngineLimits {
    std::int64_t kv_capacity_tokens = 0;
    std::int32_t block_size = 1;                // 1: token granularity; 16: vLLM's paged blocks
    std::int32_t max_num_seqs = 256;            // running requests at most
    std::int32_t max_num_batched_tokens = 8192; // tokens per iteration (see sim/engine.h)
    bool chunked_prefill = false;
    bool skip_ahead = true;
    // Automatic prefix caching (sim/prefix_cache.h); needs block_size >= 2.
    bool prefix_caching = false;
};

} // namespace kairos
