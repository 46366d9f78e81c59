// Google Benchmark figures for the engine and the readers (not timed tests: `make bench`).
// The read of the same trace is the baseline the simulation is compared against.
#include "exec/execution_model.h"
#include "metrics/summary.h"
#include "sched/fcfs.h"
#include "sim/engine.h"
#include "workload/readers.h"

#include <benchmark/benchmark.h>

using namespace kairos;

namespace {
const std::string kAzure =
    std::string(KAIROS_SHARED_DATA) + "/AzureLLMInferenceTrace_conv_2023.csv";

// Llama-2-70B on 2x A100 (the shipped llama2-70b-a100x4 coefficients, rounded).
EteParams params() {
    EteParams p{0.0142, 2.37e-4, 1.45e-9, 0.0435, 2.08e-4, 3.18e-7}; // a, b, c, q0, q1, p
    return p;
}

void BM_ReadAzureConv(benchmark::State& st) {
    for (auto _ : st) benchmark::DoNotOptimize(readWorkload(kAzure));
}
BENCHMARK(BM_ReadAzureConv)->Unit(benchmark::kMillisecond);

void BM_SimulateAzureConvFcfs(benchmark::State& st) {
    const Workload w = readWorkload(kAzure);
    EteModel model(params());
    EngineLimits lim;
    lim.kv_capacity_tokens = 522697;
    lim.skip_ahead = st.range(0) != 0;
    std::int64_t tokens = 0;
    for (auto _ : st) {
        FcfsScheduler fcfs;
        const RunLog log = simulate(w, model, fcfs, lim);
        tokens = 0;
        for (const auto& r : w.requests) tokens += r.output_tokens;
        benchmark::DoNotOptimize(log.events.data());
    }
    st.counters["gen_tokens_per_s"] = benchmark::Counter(
        static_cast<double>(tokens), benchmark::Counter::kIsIterationInvariantRate);
    st.counters["requests_per_s"] = benchmark::Counter(
        static_cast<double>(w.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SimulateAzureConvFcfs)
    ->Arg(1)
    ->Arg(0)
    ->ArgName("skip_ahead")
    ->Unit(benchmark::kMillisecond);

void BM_SummaryAzureConv(benchmark::State& st) {
    const Workload w = readWorkload(kAzure);
    EteModel model(params());
    EngineLimits lim;
    lim.kv_capacity_tokens = 522697;
    FcfsScheduler fcfs;
    const RunLog log = simulate(w, model, fcfs, lim);
    for (auto _ : st) benchmark::DoNotOptimize(summarize(log));
}
BENCHMARK(BM_SummaryAzureConv)->Unit(benchmark::kMillisecond);
} // namespace

BENCHMARK_MAIN();
