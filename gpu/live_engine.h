#pragma once
// The live engine: the core's engine (sim/engine.h) driving a real Transformer through
// LiveBackend. Each request's prompt is a sequence of token ids drawn from its id and a
// seed (the workload gives lengths, not text); its output length follows the workload
// (EOS is not a stop unless asked), decoded greedily or sampled with a seed per request.
// Every iteration is timed on the wall clock.
#include "sim/engine.h"
#include "transformer.h"
#include "weights/llama2c.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kairos::gpu {

struct LiveOptions {
    int snap_window = 32;          // SnapKV observation window (queries at the prompt's end)
    int snap_pool = 7;             // max-pooling width over the scores
    std::uint64_t prompt_seed = 1; // prompt token ids
    // The synthetic length task (0: off). With width W > 0 the prompt tells the output
    // length's bucket: request r's prompt ids are drawn from the ids of bucket
    // (output_tokens - 1) / W (the vocabulary cut into ceil(max output / W) equal slices,
    // of which each bucket uses the first kCueIds ids at most), and its answer is decoded
    // greedily within the same ids, none of its last kCueNoRepeat tokens again, so the
    // prompt and the generated tokens carry the bucket as a real answer carries its
    // question's kind. Synthetic ids carry no such cue unless asked; a synthetic-weights
    // model's free answer would not carry it either (its residual stream mixes the prompt
    // in too weakly for a per-token probe to read it, which the tests showed).
    int length_cue = 0;
    // End a request when it emits the model's end-of-sequence token (LlmConfig::eos_token)
    // rather than at the workload's output length, which stays its limit. Meant for real
    // weights (kairos-cli live refuses it without them): a synthetic model's EOS is noise.
    bool stop_at_eos = false;
    // Decoding: temperature 0 is greedy (argmax); above 0, seeded sampling (softmax of the
    // logits / temperature, then top-p), each request's stream seeded from `sample_seed`
    // and its id and started again when a preemption makes it recompute, so a request
    // answers the same whatever the schedule (its length too, with stop_at_eos).
    double temperature = 0.0;
    double top_p = 1.0;
    std::uint64_t sample_seed = 1;
    // Prompts as openings of stories the model itself samples (BOS, then tokens drawn at
    // temperature 1, top-p 0.9 from `prompt_seed`), cut to each request's length, so a
    // model without a tokenizer gets prompts of its own kind of text rather than random
    // ids. Sampled before the clock starts.
    bool story_prompts = false;
};

constexpr std::int64_t kCueIds = 64;    // token ids per bucket of the length task
constexpr std::size_t kCueNoRepeat = 8; // its answers repeat none of their last 8 tokens

// Reads the residual stream of generated tokens as the engine decodes them (a length
// probe, or the collector of its training data).
class TokenObserver {
public:
    virtual ~TokenObserver() = default;
    virtual int layer() const = 0; // 1 .. layers: the stream after this many layers
    virtual int every() const = 0; // read when generated % every == 0
    // `h` [hidden] float: the stream at request `id`'s newest token once `generated`
    // tokens exist (the embedding of token number `generated`). After a restart the
    // same counts come again.
    virtual void observe(ReqId id, int generated, const at::Tensor& h) = 0;
};

class TorchBackend final : public LiveBackend {
public:
    // `w` and `model` must outlive the backend. The clock starts now, at the first
    // request's arrival time.
    TorchBackend(Transformer& model, const Workload& w, LiveOptions opt = {});

    std::string describe() const override;
    double clock() const override;
    void sleepUntil(double t) override;
    void iterate(const std::vector<Chunk>& chunks, const std::vector<ReqId>& decoders,
                 const EngineView& view) override;
    void release(ReqId id, bool restart) override;
    bool stopped(ReqId id) const override;
    // Prefix caching: the KV of each block the engine's cache holds is copied out of the
    // request that computed it into a store by block, and copied into the cache of each
    // request admitted with it (the transformer's attention reads one tensor per request,
    // not a block table). So the computation of a cached prefix is saved, as in vLLM, but
    // not its memory: a block in use by k requests is held k + 1 times here (peakKvBytes
    // counts the requests' caches, cachedKvBytes the store, which holds what the engine's
    // cache holds: a block leaves it when the cache evicts it).
    //
    // While sharing, the tokens of a request's context that its prefix spans cover are the
    // span's own (drawn from the span's id and the position in it, the same wherever the
    // span appears) instead of the request's ids, stories or length cue, and an answer a
    // span covers (a conversation's earlier turn, named in the next turn's prompt) is the
    // span's tokens: decoding emits them in place of the model's choice, as replaying a
    // recorded conversation does. Without sharing nothing changes.
    void shareBlocks(std::int32_t block_size) override;
    void cacheBlock(ReqId id, std::int32_t index, std::uint64_t hash) override;
    void uncacheBlock(std::uint64_t hash) override;
    void reuseBlocks(ReqId id, const std::vector<std::uint64_t>& hashes) override;
    std::int64_t cachedKvBytes() const { return store_bytes_; }
    // Prompt tokens the requests did not compute because they found them cached.
    std::int64_t reusedTokens() const { return reused_tokens_; }
    // Not owned; null: none. Set before the run.
    void setObserver(TokenObserver* o) { observer_ = o; }

    // The prompt token ids of request `id` (deterministic in the seed; while sharing, a
    // prefix span's tokens where one covers it).
    std::vector<std::int64_t> promptTokens(ReqId id) const;
    // The token ids request `id` may use: [first, first + size) (the whole vocabulary
    // unless the length task is on).
    std::pair<std::int64_t, std::int64_t> cueSlice(ReqId id) const;
    const std::vector<std::int64_t>& generated(ReqId id) const {
        return reqs_[static_cast<std::size_t>(id)].generated;
    }
    std::int64_t peakKvBytes() const { return peak_kv_bytes_; }
    const Workload& workload() const { return w_; }
    std::int64_t iterations() const { return iterations_; }

private:
    struct Req {
        SeqCache cache;
        std::vector<std::int64_t> prompt, generated;
        std::optional<llama2c::Sampler> sampler; // with temperature > 0, from the first token
    };
    std::vector<std::int64_t> context(ReqId id, std::int32_t from, std::int32_t n);
    // While sharing: the token at context position `pos` of request `id` when one of its
    // prefix spans covers it, else -1.
    std::int64_t spanToken(ReqId id, std::int64_t pos) const;
    std::int64_t tokenOfSpan(const PrefixSpan& sp, std::int64_t offset) const;
    std::vector<std::int64_t> ownPromptTokens(ReqId id) const; // the request's own draw

    Transformer& m_;
    const Workload& w_;
    LiveOptions opt_;
    std::vector<Req> reqs_;
    std::chrono::steady_clock::time_point start_;
    double origin_ = 0.0;
    std::int64_t kv_bytes_ = 0, peak_kv_bytes_ = 0, iterations_ = 0;
    TokenObserver* observer_ = nullptr;
    int cue_slices_ = 0;                             // the length task's vocabulary slices
    std::vector<std::vector<std::int64_t>> stories_; // story_prompts: each request's opening
    // Prefix sharing (0: off): the block size, each cached block's KV per layer
    // [kv_heads, block, head_dim], and the prompt KV of requests whose prefill just ended
    // as computed, before an eviction compressed it (what cacheBlock copies from then).
    std::int32_t share_block_ = 0;
    std::unordered_map<std::uint64_t, SeqCache> store_; // by block hash: one block each
    std::unordered_map<ReqId, SeqCache> uncompressed_;
    std::int64_t store_bytes_ = 0, reused_tokens_ = 0;
};

// Tokens of KV the device can hold: `budget_bytes` over the model's bytes per token.
std::int64_t kvCapacityTokens(const Transformer& m, double budget_bytes);

} // namespace kairos::gpu
