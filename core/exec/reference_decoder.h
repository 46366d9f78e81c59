#pragma once
// A decoder-only transformer forward pass (Llama/Qwen2 layout: RMSNorm, grouped-query
// attention over a KV cache, SwiGLU MLP, LM head) in Eigen, with random weights. It is
// a *stopwatch*, not a model: the weights are noise, but the arithmetic and the memory
// traffic are those of the real shape, so timing it measures what an iteration of that
// model costs on this CPU. `kairos-cli profile-cpu` fits an ETE profile from it.
// Hand-written because the project's live engine (libtorch) is a separate room and the
// core must not depend on torch; Eigen is already the core's linear-algebra library.
// Rotary position embeddings are left out: they are elementwise and cost next to nothing.
#include "model/model_config.h"

#include <Eigen/Dense>
#include <cstdint>
#include <vector>

namespace kairos {

class ReferenceDecoder {
public:
    // The KV cache of one sequence: per layer, keys and values as (kv_dim x capacity).
    struct Sequence {
        std::vector<Eigen::MatrixXf> k, v;
        int len = 0;
    };

    ReferenceDecoder(const ModelConfig& shape, std::uint64_t seed);
    Sequence newSequence() const;
    // Gives a sequence `n` cached positions of keys and values equal to `value` (what a
    // prefill would leave, as far as time goes: the decode cost does not depend on content).
    void fillCache(Sequence& s, int n, float value = 0.01f) const;

    // One iteration: sequence i gets tokens[i] new tokens (its prefill chunk, or one token
    // when decoding), attends causally to its cache and them, and appends them to its
    // cache. Returns the logits of each sequence's last new position (vocab x seqs).
    Eigen::MatrixXf forward(const std::vector<Sequence*>& seqs,
                            const std::vector<std::vector<int>>& tokens);

    const ModelConfig& shape() const { return m_; }

private:
    struct Layer {
        Eigen::MatrixXf wq, wk, wv, wo, wg, wu, wd; // (out x in)
        Eigen::VectorXf norm1, norm2;
    };
    void rmsnorm(Eigen::MatrixXf& x, const Eigen::VectorXf& g) const;

    ModelConfig m_;
    int kv_dim_ = 0;
    Eigen::MatrixXf embed_; // (vocab x hidden), tied with the LM head
    std::vector<Layer> layers_;
    Eigen::VectorXf final_norm_;
};

} // namespace kairos
