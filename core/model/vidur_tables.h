#pragma once
// The operator tables of Vidur's batch execution-time model (exec/vidur_model.h reads
// them; docs/upstream/vidur_execution_model.md): per-layer times looked up at a batch's
// token count (rounded up to 8), its decode shape (requests, mean context rounded up to
// 64) and its prefill shape (the chunks' cached tokens, each rounded up to 64, summed; the
// root of the chunks' summed squares), plus two tensor-parallel all-reduces per layer,
// times the layers. Beyond a table's edge the value is the edge's (Vidur's random forests
// saturate there; Vidur itself refuses a key outside its grid).
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kairos {

struct VidurTables {
    int layers = 0;          // layers per pipeline stage
    int tensor_parallel = 1; // all-reduces are charged when > 1
    // Vidur's defaults, fixed: token counts are rounded up to a multiple of 8, KV lengths
    // to one of 64 (kv_cache_prediction_granularity); the engine rounds each chunk's cached
    // tokens to 64 as it builds BatchShape::prefill_kv_r64.
    static constexpr int kTokenStep = 8;
    static constexpr int kKvStep = 64;
    double gqa_decode_overhead = 0.1;  // x(1 + this) on decode attention of more than one request
    double gqa_prefill_overhead = 0.1; // x(1 + this) on prefill attention of more than one chunk
    double nccl_launch_ms = 0.02;      // added to each all-reduce (nccl_cpu_launch_overhead_ms)

    // Per-layer operator times (ms) at token counts 8, 16, ...: one
    // table per operator (attn_pre_proj, mlp_up_proj, ...), and the all-reduce's.
    std::map<std::string, std::vector<double>> token_ops;
    std::vector<double> all_reduce; // empty when tensor_parallel == 1
    // Decode attention (ms): decode[b-1][k] for b requests of mean context 64k.
    std::vector<std::vector<double>> decode;
    // Prefill attention (ms): prefill[k][j] for 64k cached tokens (summed over the
    // chunks) and an equivalent chunk of (j+1)*chunk_step tokens; linear in the chunk's
    // square between columns, as Vidur's feature is the square.
    int chunk_step = 16;
    std::vector<std::vector<double>> prefill;
    // How each table was obtained (derive-profile's report): free JSON, carried along.
    std::string fit_report_json;

    // The per-layer sum of the token-keyed operators at each step (built by finish()).
    std::vector<double> layer_tokens_ms;

    // Checks the shapes and values and builds the sum; throws std::invalid_argument naming
    // the field.
    void finish();
    // Milliseconds of one pipeline stage for a batch: `tokens` in total (chunks plus one
    // per decode), `decodes` requests of summed context `decode_kv`, `prefills` chunks of
    // summed squares `chunk_sq` whose cached tokens, each rounded up to 64, sum to
    // `prefill_kv_rounded`.
    double batchMs(std::int64_t tokens, std::int32_t decodes, std::int64_t decode_kv,
                   std::int32_t prefills, double chunk_sq, std::int64_t prefill_kv_rounded) const;

    nlohmann::json toJson() const;
    // Throws InputError naming `file` and the field ("vidur.decode[3]") when a table is
    // missing, ragged, empty or holds a value that is not a finite time >= 0.
    static VidurTables fromJson(const nlohmann::json& j, const std::string& file);
};

} // namespace kairos
