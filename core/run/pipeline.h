#pragma once
// The one run pipeline: RunSpec -> prepared inputs -> simulation -> RunResult. The CLI's
// simulate, report and live, sweeps, capacity searches, `bench` and the workbench all call
// it; they differ only in what they do with the result.
//
//   prepareRun(spec, ctx)  reads (or takes from the cache) the workload and applies its
//                          transforms, resolves the execution model and the KV capacity,
//                          checks the policy; everything a run needs, nothing run yet.
//   executeRun(prepared)   builds the scheduler, simulates (or runs live on a backend),
//                          summarises.
//   runSpec(spec, ctx)     both.
//
// Thread safety: prepared inputs are immutable and shared (the workload and the execution
// model are const); executeRun builds its own scheduler, so many threads may execute runs
// of one PreparedRun, or of several sharing a WorkloadCache, at once.
#include "exec/execution_model.h"
#include "metrics/summary.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "run/memory_estimate.h"
#include "run/run_spec.h"
#include "sched/registry.h"
#include "sim/engine.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kairos {

// Workloads read once and shared by every run of a sweep (by path, format and limit).
// Thread-safe.
class WorkloadCache {
public:
    std::shared_ptr<const Workload> get(const RunSpec::WorkloadPart& w);
    // The workload of `w` with its transforms applied, on `base` (get(w)'s). With
    // keepTransformed(n > 0), the last n results are kept and returned again for the same base
    // and transforms: the workbench re-runs one workload at one rate many times (sliders that
    // do not move the rate or the utility functions reuse it). Default 0: nothing kept (a
    // sweep's points each transform once).
    std::shared_ptr<const Workload> transformed(const std::shared_ptr<const Workload>& base,
                                                const RunSpec::WorkloadPart& w);
    void keepTransformed(std::size_t n);
    // Forgets every workload and transformed copy (the workbench opening another).
    void clear();
    // A workload already in memory stands for `path` (the workbench's open trace).
    void put(const std::string& path, const std::string& format, std::size_t limit,
             std::shared_ptr<const Workload> w);

private:
    std::mutex m_;
    std::map<std::string, std::shared_ptr<const Workload>> byKey_;
    struct Transformed {
        std::shared_ptr<const Workload> base;
        std::string transforms; // the workload part's JSON
        std::shared_ptr<const Workload> result;
    };
    std::vector<Transformed> transformed_; // newest last
    std::size_t keep_transformed_ = 0;
};

struct ResolvedExec;

struct RunContext {
    // Finds a device profile by name or path (the app's shipped profiles); without it the
    // name must be a JSON file.
    std::function<DeviceProfile(const std::string& name, std::string* found_at)> resolve_profile;
    WorkloadCache* cache = nullptr; // optional
    const std::atomic<bool>* cancel = nullptr;
    std::atomic<double>* progress = nullptr;
    // The spec's execution side already resolved (the workbench's chosen device, resolved once
    // when it was chosen): prepareRun takes it as it is instead of resolving spec.exec again.
    std::shared_ptr<const ResolvedExec> exec;
    // false: the caller keeps only the summary; RunResult.log keeps its header, warnings
    // and explain record, and its events and iterations are released as the summary reads
    // them (summarizeReleasing: a million-request run's peak memory falls by a third).
    bool keep_log = true;
    // The run log is written as JSONL (--runlog): counted in the memory estimate.
    bool runlog_output = false;
    bool token_lines = false; // ... with a line per token (--tokens)
    // prepareRun states the memory the run will need (PreparedRun::memory) and refuses, with
    // std::invalid_argument naming the options, what exceeds the budget (util/memory.h).
    // Off where a caller has judged the whole of its work already (a sweep's runs at once).
    bool check_memory = true;
};

// The context many runs of one sweep or search share: `ctx` with `cache` for its workloads
// (unless it has one), profiles resolved once per name (a profile file is read once, not once
// per run; thread-safe), the cancel flag given and no per-run progress.
RunContext forManyRuns(const RunContext& ctx, WorkloadCache& cache,
                       const std::atomic<bool>* cancel);

// What the memory estimate needs to know of a workload and a context.
RunShape runShape(const Workload& w, const RunContext& ctx, const EngineLimits& limits,
                  const ExecutionModel* model);

// Several runs at once (a sweep's jobs, a capacity search's seeds and policies): the
// workload of `worst` (the largest of them) held once and the rest of its run `concurrent`
// times, judged against the budget before any starts; throws std::invalid_argument naming
// `what` and `remedy` (util/memory.h). `ctx` is the runs' context (its cache).
// Returns the estimate (what the caller states).
MemoryEstimate checkConcurrentRuns(const RunSpec& worst, const RunContext& ctx,
                                   std::size_t concurrent, const std::string& what,
                                   const std::string& remedy);

struct PreparedRun {
    RunSpec spec;
    std::shared_ptr<const Workload> workload; // transformed, sorted by arrival
    DeviceProfile profile;
    std::string profile_path;
    std::shared_ptr<const ExecutionModel> model;
    std::vector<std::string> model_warnings; // a stored model's own fit warnings
    EngineLimits limits;
    // With fleet.decode_profile: the decode pool's profile, its execution model (the
    // profile's own) and limits (its KV capacity); none: both pools run on `profile`.
    struct DecodePool {
        DeviceProfile profile;
        std::string profile_path;
        std::shared_ptr<const ExecutionModel> model;
        EngineLimits limits;
    };
    std::optional<DecodePool> decode;
    PolicyConfig policy;
    SummaryOptions summary; // .workload is set by executeRun
    MemoryEstimate memory;  // what executing it will hold at its peak (run/memory_estimate.h)
};

struct RunResult {
    RunSpec spec;
    std::shared_ptr<const Workload> workload;
    RunLog log;
    Summary summary;
    EngineLimits limits;
    PolicyConfig policy;
    std::string profile_name, profile_path;
};

// The execution side of a spec alone: the device profile (memory overrides applied) and
// the execution model (the profile's, or a fitted ETE/ALA model from the store), with a
// stored model's fit warnings. What prepareRun does for it; the workbench's device picker
// calls it directly.
struct ResolvedExec {
    DeviceProfile profile;
    std::string profile_path;
    std::shared_ptr<const ExecutionModel> model;
    std::vector<std::string> model_warnings;
};
// A profile named "auto" is the one for `workload` (profileFor, run_spec.h).
ResolvedExec resolveExec(const RunSpec::ExecPart& exec, const RunContext& ctx = {},
                         const Workload* workload = nullptr);

PreparedRun prepareRun(const RunSpec& spec, const RunContext& ctx = {});
// Runs of a workload and a model already in memory (an experiment's, a benchmark's), made by
// prepareRun like any other: `w` stands in `cache` for `name` (a spec's workload.path
// naming it finds it), and the context's execution side is `model` as resolved (no profile:
// the spec's limits must give the KV capacity). Neither is owned: both must outlive the
// runs. The context carries no memory check (the caller's instances are its own).
RunContext inMemory(const RunContext& base, WorkloadCache& cache, const std::string& name,
                    const Workload& w, const ExecutionModel& model);
// `live` runs the iterations on a real model (the CLI's live command); `policy_override`
// replaces the prepared policy config (a live run's trained predictor).
RunResult executeRun(const PreparedRun& p, const RunContext& ctx = {}, LiveBackend* live = nullptr,
                     const PolicyConfig* policy_override = nullptr);
RunResult runSpec(const RunSpec& spec, const RunContext& ctx = {});
// The simulation step alone (no summary): for a caller that summarises its own way (the
// workbench computes the summary beside the timeline's layout).
// A live run's per-iteration measurements (predicted against measured) go to
// `live_iterations` when given.
RunLog simulatePrepared(const PreparedRun& p, const RunContext& ctx = {},
                        LiveBackend* live = nullptr, const PolicyConfig* policy_override = nullptr,
                        std::vector<Simulator::LiveIteration>* live_iterations = nullptr);

// The workload's transforms alone (arrivals regenerated at a rate, the trace's own rate
// scaled, budgets filled in, utility functions redrawn), on a copy of `base`.
Workload transformWorkload(const Workload& base, const RunSpec::WorkloadPart& w);
// `base` with the transforms of `w` applied: a new workload, or `base` itself when `w` asks
// for none.
std::shared_ptr<const Workload> transformedWorkload(const std::shared_ptr<const Workload>& base,
                                                    const RunSpec::WorkloadPart& w);

// The numbers a sweep, capacity and an experiment tabulate, by name, from a summary: the
// metric table's tabulatedMetrics (metrics/metric_table.h: completed, killed, the throughputs,
// goodput_fraction, slo_attainment, mean_ttft_ms, p99_ttft_ms, ..., utility_pct), NaN where
// the run does not measure one.
std::vector<std::pair<std::string, double>> summaryMetrics(const Summary& s);
// Where a re-run's summary differs from a stored one: (name, stored, re-run) for every
// metric both measured that differs by more than 1e-9 relative (a metric the stored run
// did not measure, NaN there, is skipped). Empty: the re-run reproduced the stored run.
struct MetricDifference {
    std::string name;
    double stored = 0, rerun = 0;
};
std::vector<MetricDifference> differingMetrics(const Summary& stored, const Summary& rerun);
// The names summaryMetrics gives for these percentiles, in its order.
std::vector<std::string> summaryMetricNames(const std::vector<double>& percentiles);

} // namespace kairos
