#pragma once
// A decoder-only transformer of the Llama/Qwen2 family in libtorch (ATen): token
// embeddings, RMSNorm, rotary position embeddings (with Llama 3.1's scaling), grouped-query
// attention over a per-request KV cache, SwiGLU MLP, LM head (tied or not). fp32 on the
// CPU, bf16 or fp16 on a GPU.
//
// One forward call is one engine iteration: any mix of prefill chunks and single decode
// tokens from different requests. Everything but attention runs on the concatenated tokens
// of the iteration; attention runs per request (a chunk of several tokens: ATen matmuls
// with a causal mask) or, for the requests decoding one token, in one call of the ragged
// decode-attention kernel (host reference on the CPU, CUDA kernel on a GPU).
//
// Requests' caches are separate tensors per layer, [kv_heads, capacity, head_dim], grown
// by doubling; SnapKV-style eviction compacts them per KV head after a prefill.
#include "llm_config.h"

#include <ATen/ATen.h>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kairos::gpu {

struct SeqCache {
    std::vector<at::Tensor> k, v; // per layer [kv_heads, cap, head_dim]
    std::int64_t len = 0;         // cached positions
    std::int64_t cap = 0;
    std::int64_t next_pos = 0; // rotary position of the next token (len + evicted)
    // After an eviction: per layer, the kept prompt positions of each KV head [kv_heads,
    // kept], ascending.
    std::vector<at::Tensor> kept;
    std::int64_t bytes() const;
    void clear();
};

struct TransformerOptions {
    at::Device device = at::kCPU;
    at::ScalarType dtype = at::kFloat;
    std::uint64_t seed = 1;  // synthetic weights
    std::string weights_dir; // a Hugging Face folder, or a llama2.c .bin file; empty: synthetic
    // A prefill's attention runs in blocks of queries whose float scores take about this
    // many bytes (at least 16 queries a block); forward() says why. Tests set it small to
    // check blocked against whole.
    std::int64_t score_block_bytes = std::int64_t(4) << 20;
};

// SnapKV's observation: the attention the last `window` prompt queries pay to each prompt
// position, summed over those queries and over the query heads of each KV head.
struct SnapScores {
    int window = 0;
    std::vector<at::Tensor> per_layer; // [kv_heads, prompt_len] float
};

// Makes host memory behave the same all through an inference process. glibc hands blocks
// above its mmap threshold back to the kernel when freed, so an iteration's large
// activations are fresh pages faulted in again each time, and the threshold moves with
// the process's history (it rises to the largest block freed so far). Measured on this
// project's CPU (qwen2.5-0.5b, one thread): a prefill of 96 tokens took 2.56 s in a fresh
// process and 1.94 s with the threshold fixed; a 64-token prefill 1.78 s or 1.43 s
// depending on what the process had run before. So a profile and a live run of the same
// iteration timed differently. This fixes the threshold at glibc's largest (32 MiB) and
// stops trimming the heap. Process-wide: call it once, early, in a process that serves a
// model. No effect where the C library is not glibc. Returns whether it took effect.
bool settleHostAllocator();

class Transformer {
public:
    Transformer(const LlmConfig& cfg, const TransformerOptions& opt);

    const LlmConfig& config() const { return cfg_; }
    const TransformerOptions& options() const { return opt_; }
    bool realWeights() const { return !opt_.weights_dir.empty(); }
    // The weights are a llama2.c checkpoint (a file; a folder is Hugging Face's layout).
    bool llama2cWeights() const;
    at::TensorOptions tensorOptions() const {
        return at::TensorOptions(opt_.dtype).device(opt_.device);
    }
    std::int64_t weightBytes() const;

    struct Step {
        SeqCache* cache = nullptr;
        std::vector<std::int64_t> tokens; // appended to the cache, attending causally
        // When > 0: fill `snap` with SnapKV scores: the attention of this step's last
        // `snap_window` tokens to every cached position (the last chunk of a prefill).
        int snap_window = 0;
        SnapScores* snap = nullptr;
        // When `hidden` is set: the residual stream after `hidden_layer` layers (1 ..
        // layers) for this step's tokens, [tokens, hidden] float on the CPU: what a length
        // probe reads (Trail: an intermediate layer's embedding).
        int hidden_layer = 0;
        at::Tensor* hidden = nullptr;
    };
    // Gives a cache `n` positions of random keys and values, as a prefill would leave it
    // as far as time goes (decode cost does not depend on the values). For profiling.
    void fillCache(SeqCache& cache, std::int64_t n) const;

    // One iteration. Returns the logits of each step's last token, [steps, vocab] float.
    // With 0 < `layers` < config().layers only that many layers run (the caches then hold
    // those layers alone: for reading hidden states, not for decoding on) and the result
    // is an undefined tensor.
    at::Tensor forward(std::vector<Step>& steps, int layers = -1);

    // The residual stream after `layer` layers for `tokens` as a fresh prompt,
    // [tokens, hidden] float on the CPU; runs only those layers, with a throwaway cache.
    at::Tensor hiddenStates(const std::vector<std::int64_t>& tokens, int layer);

    // SnapKV-style eviction of a prompt's KV right after the prefill that scored it
    // (`scores` cover every cached position): of the first `prompt_len` positions (-1: all)
    // keeps prompt_len - floor(alpha * prompt_len) per KV head and layer: the prompt's last
    // `window` positions and the highest-scoring others after max-pooling the scores over
    // `pool` neighbours (ties to the earlier position). Positions after the prompt (tokens
    // generated before a recompute) are kept. alpha = 0 leaves the cache untouched.
    void evict(SeqCache& cache, double alpha, const SnapScores& scores,
               std::int64_t prompt_len = -1, int pool = 7) const;

    // Prompt positions kept by evict() for one head's scores (exposed for tests).
    static std::vector<std::int64_t> keptPositions(const std::vector<float>& scores, int keep,
                                                   int window, int pool);

private:
    struct Layer {
        at::Tensor attn_norm, wq, bq, wk, bk, wv, bv, wo, mlp_norm, wg, wu, wd;
    };
    void loadSynthetic();
    void loadCheckpoint();
    void loadLlama2c();
    at::Tensor rmsnorm(const at::Tensor& x, const at::Tensor& w) const;
    at::Tensor rope(const at::Tensor& x, const at::Tensor& pos) const; // x [T, h, d]
    void ensureCapacity(SeqCache& c, std::int64_t need) const;

    LlmConfig cfg_;
    TransformerOptions opt_;
    at::Tensor embed_, final_norm_, lm_head_;
    std::vector<Layer> layers_;
    at::Tensor inv_freq_; // [head_dim / 2] float on the device
};

} // namespace kairos::gpu
