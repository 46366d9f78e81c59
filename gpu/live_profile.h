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
    // Drift control. A shared host's speed wanders (this project's CPU VM: -28 % in three
    // minutes), so a reference point, one batch-1 decode step at `reference_context`
    // positions, is timed before the first point and after every point. With `normalise`
    // each point's timing is divided by its speed factor: the mean of the references
    // bracketing it over the median of all references, so every point reads as if timed
    // at the session's median speed. A factor is the median of the `reference_window`
    // references nearest the point, so a slow drift is followed and a one-off spike (a
    // neighbour's burst: seen here as +35 % on one reference in 23) is not. The references
    // are kept as "reference" rows.
    int reference_context = 128;
    int reference_window = 5;
    // A point whose repeats differ by more than this share of their median (slowest -
    // fastest) is timed again, at most `retries` more times, and the steadiest kept.
    double max_spread_pct = 10;
    int retries = 2;
    bool normalise = true;
    static LiveProfileGrid quick();
};

struct BenchPoint {
    int input = 0, output = 0, batch = 0;
    double seconds = 0;    // prefill of the batch and every decode step
    double throughput = 0; // batch * output / seconds (tokens/s)
};

struct LiveProfile {
    // The grid's points (normalised when the grid says so), then one "reference" row per
    // reference timing (batch 1, context = reference_context + 1, raw seconds, in order).
    std::vector<Measurement> measurements;
    std::vector<BenchPoint> bench;   // normalised likewise
    std::vector<double> speed;       // per grid point then per bench point: its speed factor
    std::vector<double> spread_pct;  // per grid point: (slowest - fastest) / median repeat, %
    int retimed = 0;                 // attempts timed again for too much spread
    double reference_seconds = 0;    // the median reference timing
    double reference_spread_pct = 0; // (slowest - fastest) / median reference, percent
    double seconds_spent = 0;
};

// One point alone (profiles and kairos-gpu-check): the median of `repeats` timings after
// `warmup` untimed ones, and (`spread_pct`) their (slowest - fastest) / median in percent.
// A decode step of `batch` requests holding `context` positions each (`kv_out`: the KV
// positions it attends to); a prefill of `batch` fresh prompts of `len` tokens.
double timeDecodeStep(Transformer& m, int batch, int context, int warmup, int repeats,
                      std::int64_t* kv_out = nullptr, double* spread_pct = nullptr);
double timePrefillStep(Transformer& m, int batch, int len, int warmup, int repeats,
                       double* spread_pct = nullptr);

// `progress(done, total, what)` after each point; `cancel` polled between points
// (throws std::runtime_error("cancelled")).
LiveProfile
profileTransformer(Transformer& m, const LiveProfileGrid& grid,
                   const std::function<void(int, int, const std::string&)>& progress = {},
                   const std::atomic<bool>* cancel = nullptr);

// The drift reference of profiles (LiveProfileGrid::reference_context): one batch-1 decode
// step at `context` positions, the median of 3 after a warm-up step. Its cache is filled
// once and cut back before each step, so a timing costs four decode steps.
class ReferenceStep {
public:
    ReferenceStep(Transformer& m, int context);
    double time();
    // The median of `n` timings one after another: a reading that a one-off spike (seen
    // here: +30 % for a second or two) does not move, for recalibrating a model.
    double steadyTime(int n = 5);
    int context() const { return context_; }

private:
    Transformer& m_;
    int context_;
    SeqCache cache_;
};

// This process's device description: CPU model and thread count, or the GPU's name.
std::string deviceName(const Transformer& m);
// libtorch's version (and CUDA's when built with it).
std::string libraryVersions();

} // namespace kairos::gpu
