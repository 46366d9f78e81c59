#pragma once
// Profiling the live transformer on this device: the timings the ETE fits need (prefill
// over prompt length and batch, decode steps over context at batch 1 and over batch and
// total KV) and a throughput table in LLM-Inference-Bench's layout (a batch of bb
// requests of ii input and oo output tokens, end to end) so that ALA can be fitted on
// our own measurements.
#include "fit/ete_fit.h"
#include "transformer.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace kairos::gpu {

struct LiveProfileGrid {
    std::vector<int> prefill_lengths{16, 32, 64, 128, 256, 512, 1024}; // batch 1
    std::vector<int> prefill_batches{2, 4, 8};                         // at the lengths below
    std::vector<int> prefill_batch_lengths{32, 128};
    std::vector<int> decode_contexts{16, 64, 256, 512, 1024, 2048}; // batch 1
    std::vector<int> decode_batches{2, 4, 8, 16, 32};               // at the contexts below
    std::vector<int> decode_batch_contexts{64, 512};                // per request
    // ii = oo. End-to-end batches are the slowest points on a CPU (a 0.5B model's batch of
    // 32 x 128 tokens took minutes on one thread): kept small; widen them on a GPU.
    std::vector<int> bench_lengths{32, 64};
    std::vector<int> bench_batches{1, 2, 4, 8, 16};
    int repeats = 5; // the median of this many timings is kept
    int warmup = 2;  // timings thrown away first, per point
    static LiveProfileGrid quick();
};

struct BenchPoint {
    int input = 0, output = 0, batch = 0;
    double seconds = 0;    // prefill of the batch and every decode step
    double throughput = 0; // batch * output / seconds (tokens/s)
};

struct LiveProfile {
    std::vector<Measurement> measurements;
    std::vector<BenchPoint> bench;
    double seconds_spent = 0;
};

// `progress(done, total, what)` after each point; `cancel` polled between points
// (throws std::runtime_error("cancelled")).
LiveProfile
profileTransformer(Transformer& m, const LiveProfileGrid& grid,
                   const std::function<void(int, int, const std::string&)>& progress = {},
                   const std::atomic<bool>* cancel = nullptr);

// The median time of one decode step of `batch` requests holding `context` positions
// each, after `warmup` untimed steps; `kv_out`: the KV positions the step attends to.
double timeDecodeStep(Transformer& m, int batch, int context, int warmup, int repeats,
                      std::int64_t* kv_out = nullptr);

// This process's device description: CPU model and thread count, or the GPU's name.
std::string deviceName(const Transformer& m);
// libtorch's version (and CUDA's when built with it).
std::string libraryVersions();

} // namespace kairos::gpu
