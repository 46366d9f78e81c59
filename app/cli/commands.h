#pragma once
#include "fit/ete_fit.h"
#include "metrics/summary.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "predict/predictor.h"
#include "run/memory_estimate.h"
#include "run/run_spec.h"
#include "sim/engine.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kairos::store {
class Store;
}

namespace kairos::cli {

// Thrown by a command that finished and has a verdict to give as its exit status (e.g.
// runs rerun: 1 when a metric differs); main returns the code, printing nothing more.
struct ExitCode {
    int code;
};

void addSimulate(CLI::App& app);
void addGenerate(CLI::App& app);
void addFitProfile(CLI::App& app);
void addPolicies(CLI::App& app);
void addMetrics(CLI::App& app);
void addFormats(CLI::App& app);
void addProfiles(CLI::App& app);
void addProfileCpu(CLI::App& app);
void addBench(CLI::App& app);
void addReproduce(CLI::App& app);
void addDeriveProfile(CLI::App& app);
void addReport(CLI::App& app);
void addRuns(CLI::App& app);
void addFit(CLI::App& app);
void addLive(CLI::App& app);
void addExplain(CLI::App& app);

// The ETE fits of one group of measurements, printed as a table; stored as an "ete" model
// in `db` when it is not null and both batched forms were fitted. Returns the group's JSON
// (with "model_id" when stored); `report` (may be null) receives the fits.
nlohmann::json fitEteGroup(const std::string& name, const std::vector<Measurement>& ms,
                           const std::string& source, double test_fraction, std::uint64_t seed,
                           store::Store* db, EteReport* report = nullptr);

// What a simulate/report run produced, for the report writer.
struct RunOutputs {
    std::shared_ptr<const Workload> workload; // the run's, shared (a million requests: no copy)
    RunLog log;
    Summary summary;
    std::vector<std::pair<std::string, std::string>> config;
    std::int64_t run_id = 0;             // when stored (--db/--store)
    MemoryEstimate memory;               // what the run was expected to hold (prepareRun)
    std::string spec_json, profile_json; // the RunSpec and the device profile (reports)
    GoodputSlo goodput;                  // the SLOs the summary used
};
// The HTML and/or PDF report's bytes (an empty string where not asked for), comparing
// with `pinned` when it is not null. Set in kairos-report and kairos-mpi (report_qt.cpp,
// which paints with Qt's widgets); empty in kairos-cli, which hands such a command over.
using ReportWriter = std::function<std::pair<std::string, std::string>(
    const RunOutputs&, const RunOutputs* pinned, bool html, bool pdf)>;
ReportWriter& reportWriter();
// Where the writers are not in this program: a hand-over to the program that has them
// (kairos-cli execs kairos-report with its own arguments; it does not return), or empty.
std::function<void()>& reportHandOver();
// Called by a command that draws charts (`what`: its options) before it does any work: returns
// when this program has the writers, else hands the command over, else throws (a build
// without the GUI libraries).
void needReportWriters(const char* what);

// `kairos-cli live`: the options of the real model, beside simulate's.
struct LiveArgs {
    std::string model = "tiny";
    std::string weights; // a Hugging Face folder (config.json + safetensors)
    std::string device = "cpu";
    std::string dtype; // fp32 | bf16 | fp16; default fp32 on the CPU, bf16 on CUDA
    std::uint64_t weight_seed = 1, prompt_seed = 1;
    int snap_window = 32;
    double kv_mem_gib = 0;             // KV memory budget (0: 4 GiB on the CPU, 16 GiB on CUDA)
    int threads = 0;                   // CPU threads for libtorch (0: its default)
    bool default_allocator = false;    // leave glibc's allocator as it is (for comparison)
    int length_cue = 0;                // the synthetic length task's bucket width (0: off)
    bool stop_at_eos = false;          // end answers at the model's EOS (real weights)
    double temperature = 0.0;          // 0: greedy; above: seeded sampling
    double top_p = 1.0;                // nucleus sampling's mass (1: the whole vocabulary)
    std::uint64_t sample_seed = 1;     // each request's sampling stream: this and its id
    std::string prompts = "random";    // random ids, or "stories": the model's own openings
    std::string length_heads;          // trained length heads (kairos-cli lengths)
    std::string length_mode = "trail"; // rlp | trail
};
// A live run's model and backend (live.cpp, in builds with libtorch).
// The options of a simulate/report/live run (and the base of sweep and capacity).
struct SimulateArgs {
    std::string workload, format = "auto", policy = "fcfs", profile = kAutoProfile,
                          predictor = "oracle";
    std::uint64_t policy_seed = 0;
    std::vector<std::string> params, goodput;
    std::vector<double> percentiles{50, 90, 99};
    double rate = std::numeric_limits<double>::infinity(), burstiness = 1.0, rate_scale = 1.0;
    std::uint64_t seed = 0;
    bool rate_given = false;
    long long kv_capacity = 0;
    double gpu_mem_gib = 0, mem_fraction = 0, budget = 0;
    std::string quality;
    // 0: not given (1 token, or 16 with prefix caching on)
    int block_size = 0, max_num_seqs = 256, max_num_batched_tokens = 8192;
    std::string prefix_caching = "off";  // on|off
    std::string engine_rules = "kairos"; // kairos|vllm-v0 (EngineRules)
    int replicas = 1;
    std::string router = "round_robin";
    double cache_threshold = -1, balance_rel = -1; // -1: the router's default
    std::int64_t balance_abs = -1;
    std::string disaggregate, link = "ib-hdr", decode_profile;
    bool chunked = false, no_skip = false, tokens = false, quiet = false;
    bool explain = false; // record every decision with its reason (RunSpec record.explain)
    std::size_t limit = 0;
    std::string json_out, runlog_out, requests_csv, perfetto;
    std::string html, pdf, compare;   // report only
    std::string db, label;            // store the run (--db FILE, or --store: the default)
    std::string spec_file, save_spec; // --spec: run this RunSpec; --save-spec: write it
    bool reference_policy = false;    // report --compare's run: `policy` replaces the spec's
    bool store = false;
    // The caller reads the run's events after runSimulate (report: its charts, --compare);
    // otherwise only the outputs asked for keep them (RunContext::keep_log).
    bool keep_log = false;
    std::int64_t exec_model = 0; // a stored ETE or ALA model instead of the profile's
    std::string exec_config;     // an ALA model's configuration
    bool live = false;           // kairos-cli live: run on a real model
    LiveArgs live_args;
};

// The run options simulate, report and live share with sweep and capacity.
void addSharedRunOptions(CLI::App* c, SimulateArgs& a);
void addFleetOptions(CLI::App* c, SimulateArgs& a);
// The RunSpec the options describe, or the --spec file's; options are checked.
RunSpec specFromArgs(const SimulateArgs& a);
// Checks a RunSpec a command built from its options; an error names the option.
void checkCliSpec(const RunSpec& s);
// Runs `f`; an InputError naming a RunSpec key (workload.format, exec.gpu_mem_gib) is thrown
// again naming its option, when the run came from options (not --spec).
void runWithCliFields(const SimulateArgs& a, const std::function<void()>& f);

// Where this process stands in a distributed sweep (kairos-mpi sets it under mpirun/srun):
// its rank of `size`, and how to gather every rank's text to rank 0 (rank 0 gets them all,
// in rank order; the others an empty list).
struct Distribution {
    int rank = 0, size = 1;
    std::function<std::vector<std::string>(const std::string&)> gather;
    // Ends every rank (a rank that fails alone would leave the others waiting).
    std::function<void(int code)> abort;
};
Distribution& distribution();
// A sweep's HTML report (settings, a chart per metric, the table); set by builds with the
// GUI libraries (report_qt.cpp), empty otherwise.
} // namespace kairos::cli
namespace kairos::sweep {
struct Definition;
struct Table;
} // namespace kairos::sweep
namespace kairos::cli {
using SweepReportWriter = std::function<std::string(const sweep::Definition&, const sweep::Table&)>;
SweepReportWriter& sweepReportWriter();
void addSweep(CLI::App& app);
void addCapacity(CLI::App& app);

class LiveSession {
public:
    virtual ~LiveSession() = default;
    virtual LiveBackend& backend() = 0;
    virtual std::vector<std::pair<std::string, std::string>> config() const = 0;
    // The trained length heads' predictor (--length-heads), or null.
    virtual std::shared_ptr<LengthPredictor> predictor() const { return nullptr; }
};
// Builds the session for a workload; sets lim.kv_capacity_tokens from the device's memory
// unless `kv_given`. Empty in builds without libtorch.
// The model options of live, profile and validate.
void addLiveModelOptions(CLI::App* c, LiveArgs& l);
// How answers are decoded and end: --stop-at-eos, --temperature, --top-p, --sample-seed.
void addLiveDecodingOptions(CLI::App* c, LiveArgs& l);
using LiveMaker = std::function<std::unique_ptr<LiveSession>(const LiveArgs&, const Workload&,
                                                             EngineLimits& lim, bool kv_given)>;
LiveMaker& liveMaker();

} // namespace kairos::cli
