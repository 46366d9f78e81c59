#pragma once
// The live engine: the core's engine (sim/engine.h) driving a real Transformer through
// LiveBackend. Each request's prompt is a sequence of token ids drawn from its id and a
// seed (the workload gives lengths, not text); its output length follows the workload
// (EOS is not a stop), decoded greedily. Every iteration is timed on the wall clock.
#include "sim/engine.h"
#include "transformer.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kairos::gpu {

struct LiveOptions {
    int snap_window = 32;          // SnapKV observation window (queries at the prompt's end)
    int snap_pool = 7;             // max-pooling width over the scores
    std::uint64_t prompt_seed = 1; // prompt token ids
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

    // The prompt token ids of request `id` (deterministic in the seed).
    std::vector<std::int64_t> promptTokens(ReqId id) const;
    const std::vector<std::int64_t>& generated(ReqId id) const {
        return reqs_[static_cast<std::size_t>(id)].generated;
    }
    std::int64_t peakKvBytes() const { return peak_kv_bytes_; }
    std::int64_t iterations() const { return iterations_; }

private:
    struct Req {
        SeqCache cache;
        std::vector<std::int64_t> prompt, generated;
    };
    std::vector<std::int64_t> context(ReqId id, std::int32_t from, std::int32_t n);

    Transformer& m_;
    const Workload& w_;
    LiveOptions opt_;
    std::vector<Req> reqs_;
    std::chrono::steady_clock::time_point start_;
    double origin_ = 0.0;
    std::int64_t kv_bytes_ = 0, peak_kv_bytes_ = 0, iterations_ = 0;
};

// Tokens of KV the device can hold: `budget_bytes` over the model's bytes per token.
std::int64_t kvCapacityTokens(const Transformer& m, double budget_bytes);

} // namespace kairos::gpu
