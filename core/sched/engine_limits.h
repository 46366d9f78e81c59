#pragma once
// What an engine may hold and do per iteration, as vLLM's scheduler configuration: the KV
// cache, its block size, the running requests, the tokens of one iteration, chunked
// prefill, skipping ahead over idle time, automatic prefix caching.
#include <cstdint>
#include <string>

namespace kairos {

// Whose rules the engine follows where serving engines differ
// (docs/upstream/vllm_0_5_0_scheduler.md):
//   Kairos  the default, as every run before this setting existed: with chunked prefill a
//           request is admitted whenever its KV and a seat are free (its prefill waits for
//           token budget while it holds both), every decode runs before any prefill chunk,
//           and decodes need room only for the blocks they grow into.
//   VllmV0  vLLM 0.4-0.5's scheduler with chunked prefill (vllm/core/scheduler.py,
//           _schedule_chunked_prefill) and block manager v1, as their code runs them: the
//           running requests take the iteration's token budget in arrival order (a decode
//           one token, a prefill the rest of its prompt or what is left) and those past the
//           budget skip the iteration; a waiting request is admitted only while budget is
//           left, its first chunk being what is left; before an iteration every request in
//           it needs one free block when vLLM checks it (can_append_slots), so the last one
//           checked needs a free block even when it grows into none (with or without
//           chunked prefill).
enum class EngineRules : std::uint8_t { Kairos, VllmV0 };
// Their names on the command line and in a RunSpec: "kairos", "vllm-v0".
const char* engineRulesName(EngineRules r);
// The rules named `name`, or false when no rules have that name.
bool engineRulesFromName(const std::string& name, EngineRules& out);

struct EngineLimits {
    std::int64_t kv_capacity_tokens = 0;
    std::int32_t block_size = 1;                // 1: token granularity; 16: vLLM's paged blocks
    std::int32_t max_num_seqs = 256;            // running requests at most
    std::int32_t max_num_batched_tokens = 8192; // tokens per iteration (see sim/engine.h)
    bool chunked_prefill = false;
    bool skip_ahead = true;
    // Automatic prefix caching (sim/prefix_cache.h); needs block_size >= 2.
    bool prefix_caching = false;
    EngineRules rules = EngineRules::Kairos;
    bool vllmV0Chunked() const { return chunked_prefill && rules == EngineRules::VllmV0; }
};

} // namespace kairos
