#pragma once
// llama2.c checkpoints (karpathy/llama2.c, its "legacy" version 0 export, which run.c
// reads): seven little-endian int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a negative vocab_size means the classifier is stored separately,
// else it is the token embedding), then float32 tensors in run.c's order: token embedding
// [vocab][dim], per-layer attention RMS gains [layers][dim], wq [layers][dim][dim], wk and
// wv [layers][kv_dim][dim], wo [layers][dim][dim], FFN RMS gains [layers][dim], w1
// [layers][hidden][dim], w2 [layers][dim][hidden], w3 [layers][hidden][dim], the final
// RMS gain [dim], two legacy RoPE tables [seq_len][head_size / 2] (skipped), then the
// classifier [vocab][dim] when not shared. Matrices are row-major [out][in].
//
// Semantics (run.c): RMSNorm with eps 1e-5; rotary embeddings on adjacent pairs (i, i+1)
// of each head with frequency 10000^(-(i mod head_size) / head_size); grouped-query
// attention (query head h reads KV head h / (n_heads / n_kv_heads)); SwiGLU FFN
// w2(silu(w1 x) * w3 x); token 1 (BOS) starts and separates stories, 2 is EOS.
//
// Torch-free: read here; the live engine (gpu/) turns the arrays into tensors, and
// Reference below is an independent forward pass, a plain loop over run.c's semantics,
// that the libtorch transformer is checked against. Written by hand: the format is a
// header and a flat array, with no library for it.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kairos::llama2c {

inline constexpr int kBos = 1;
inline constexpr int kEos = 2;

struct Header {
    int dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0,
        seq_len = 0;
    bool shared_classifier = true;
    int headSize() const { return n_heads > 0 ? dim / n_heads : 0; }
    int kvDim() const { return n_heads > 0 ? dim * n_kv_heads / n_heads : 0; }
    // Floats the file must hold after the header (RoPE tables and classifier included).
    std::int64_t floatsExpected() const;
};

struct Weights {
    Header h;
    std::string path;
    // run.c's arrays, per layer concatenated (layer l's wq starts at l * dim * dim).
    std::vector<float> token_embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final;
    std::vector<float> wcls; // the classifier when not shared; empty when shared
    const std::vector<float>& classifier() const {
        return h.shared_classifier ? token_embedding : wcls;
    }
    std::int64_t parameters() const; // the model's parameters (no RoPE tables)
};

// Reads and validates a checkpoint: the header's fields (positive, heads dividing dim,
// query heads a multiple of KV heads, even head size) and the file's size against them.
// Throws InputError naming the file and the header field or tensor at fault.
Weights read(const std::string& path);

// A plain forward pass, one token at a time with a KV cache, as run.c computes it.
class Reference {
public:
    explicit Reference(const Weights& w);
    // The logits after feeding `token` at position `pos` (0, 1, 2, ... in order;
    // pos < seq_len). The reference keeps its own cache; reset() starts a new sequence.
    const std::vector<float>& step(int token, int pos);
    void reset();

private:
    const Weights& w_;
    std::vector<float> x_, xb_, xb2_, hb_, hb2_, q_, att_, logits_;
    std::vector<float> key_cache_, value_cache_; // [layers][seq_len][kv_dim]
};

// Seeded sampling as llama2.c does it: temperature 0 is greedy (argmax); otherwise
// softmax(logits / temperature), then top-p (nucleus) when 0 < top_p < 1: the smallest
// set of most likely tokens whose probability reaches top_p, renormalised. The draw walks
// the kept tokens in id order, so logits that differ by rounding draw the same token
// unless the uniform falls within that rounding of an interval's edge.
class Sampler {
public:
    Sampler(double temperature, double top_p, std::uint64_t seed)
        : temperature_(temperature), top_p_(top_p), rng_(seed) {}
    int sample(const float* logits, int n);

private:
    double temperature_, top_p_;
    std::mt19937_64 rng_;
    std::vector<std::pair<float, int>> scratch_;
};

} // namespace kairos::llama2c
