#pragma once
// A RunSpec says everything one simulation needs, as data: the workload and its transforms,
// the policy with its parameters and predictor, the execution model, the engine limits and
// what the summary measures. runSpec() (run/pipeline.h) turns it into a run; the CLI, the
// workbench, `reproduce`, `bench`, sweeps and capacity searches all go through it, and every
// stored run keeps its spec, so a stored run can be re-run exactly.
//
// It round-trips through JSON and TOML (the same tables and keys in both; an infinite
// arrival rate is JSON null and a missing key in TOML; `arrivals` is "trace" or "generated").
// Reading is strict: an unknown key, a value of the wrong type or out of range is an InputError
// naming the file and the key.
#include "model/device_profile.h"
#include "sched/engine_limits.h"

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kairos {

struct Workload;

// A run that names no device profile ("auto") gets the setting of the paper its workload
// belongs to: robot plans (requests of agents, with plan segments) TimelyLLM's, Llama3-8B
// on one RTX 4090 (derived: `kairos-cli derive-profile timelyllm`); every other workload
// MC-SF's, Llama2-70B on 2x A100. On the 70B model a robot plan's first segment waits
// seconds, and TimelyLLM's utility reads -1,237 % of its maximum on the WID1 sample (30 %
// on the RTX 4090).
inline constexpr const char* kAutoProfile = "auto";
inline constexpr const char* kDefaultProfileName = "llama2-70b-a100x2";
inline constexpr const char* kRobotProfileName = "llama3-8b-rtx4090";
bool hasRobotPlans(const Workload& w);
// `asked`, unless it is "auto": then the profile for `w` (no workload: the default).
std::string profileFor(const std::string& asked, const Workload* w);

struct RunSpec {
    static constexpr int kVersion = 1; // "kairos_run_spec" in the files

    struct WorkloadPart {
        std::string path;            // the trace file
        std::string format = "auto"; // readers.h's names
        std::size_t limit = 0;       // read at most this many requests (0: all)
        // Arrivals: the file's own, or (generate_arrivals) Poisson/gamma at `rate` with
        // `burstiness` and `arrival_seed`, replacing the file's (rate = inf: all at once).
        bool generate_arrivals = false;
        double rate = std::numeric_limits<double>::infinity();
        double burstiness = 1.0;
        std::uint64_t arrival_seed = 0;
        double rate_scale = 1.0; // the file's own gaps divided by this (not with generated ones)
        double budget = 0;       // time budget (s) of every request without one (0: none)
        // Time-utility functions redrawn per request class (TimelyLLM's TUF, model/request.h):
        // the class keeps its utility beta up to `ert` seconds, which then falls linearly to 0
        // at `zero` (> ert). The workbench's TUF sliders; written only when set.
        struct TufOverride {
            double ert = 0, zero = 0;
            // The override a pair of sliders draws: the zero time kept at least 1 ms after ERT.
            static TufOverride drawn(double ert, double zero) {
                return {ert, zero > ert + 1e-3 ? zero : ert + 1e-3};
            }
        };
        std::map<std::string, TufOverride> tuf;
    } workload;

    struct PolicyPart {
        std::string name = "fcfs";
        std::map<std::string, double> params; // as given; the registry fills in defaults
        std::string predictor = "oracle";
        std::uint64_t seed = 0; // noisy predictors and randomised policies
    } policy;

    struct ExecPart {
        std::string profile = kAutoProfile; // a shipped name, a JSON file, or auto
        double gpu_mem_gib = 0;             // > 0 replaces the profile's
        double mem_fraction = 0;            // > 0 replaces the profile's
        std::int64_t model_id = 0;          // > 0: a fitted ETE/ALA model from the store `db`
        std::string model_config;           // an ALA model's configuration
        std::string db;                     // the store holding model_id ("" : the default store)
    } exec;

    // The engine's limits, but kv_capacity_tokens 0 means the profile's. prefix_caching
    // (needs block_size >= 2) is written to JSON/TOML only when on, so that specs without
    // it read and hash as before.
    struct LimitsPart : EngineLimits {

        // The engine's limits with `kv_tokens` of KV cache (this part's own when > 0 is
        // resolved by the caller: the profile's otherwise), and back.
        EngineLimits engine(std::int64_t kv_tokens) const;
        static LimitsPart of(const EngineLimits& l);
    } limits;

    // Replicas behind a router (sim/fleet.h). Written only when not the default (one
    // replica, round robin), so that specs without it read and hash as before.
    struct FleetPart {
        int replicas = 1;
        std::string router = "round_robin";
        // prefix_aware / prefix_oracle (sim/fleet.h); negative: the router's default.
        double cache_threshold = -1;
        std::int64_t balance_abs = -1;
        double balance_rel = -1;
        // Prefill/decode disaggregation (sim/disagg.h): "P:D", empty for none; the link the
        // KV moves over (LinkModel::parse).
        std::string disaggregate;
        std::string link = "ib-hdr";
        // With disaggregation, the decode pool's device profile (other hardware for the same
        // model: its KV capacity, iteration times and GPUs per replica); empty: the run's
        // profile for both pools. Resolved as exec.profile is, with exec's memory overrides
        // and the profile's own execution model.
        std::string decode_profile;
    } fleet;

    struct SummaryPart {
        std::vector<std::string> goodput; // "ttft:MS", "tpot:MS", "e2el:MS"
        std::vector<double> percentiles{50, 90, 99};
        std::string quality; // "A:Q,..."; empty: the default curve
    } summary;

    struct RecordPart {
        // Every decision with its reason, the schedule() calls and the per-request state
        // the policy decided on (RunLog::explain, model/explain.h; `--explain`).
        bool explain = false;
    } record;

    // Throws InputError (file `where`, the key) for a value out of range, an unknown
    // policy or parameter, a malformed goodput, quality or predictor.
    void validate(const std::string& where = "run spec") const;

    nlohmann::json toJson() const;
    std::string toToml() const;
    // `where` names the source in errors (a file name).
    static RunSpec fromJson(const nlohmann::json& j, const std::string& where = "run spec");
    static RunSpec fromToml(const std::string& text, const std::string& where = "run spec");
    // By the file's extension: .toml is TOML, anything else JSON.
    static RunSpec load(const std::string& path);
    void save(const std::string& path) const; // atomically; .toml or JSON by extension
    // The text save() writes to `path`: TOML for a .toml path, else JSON.
    std::string textFor(const std::string& path) const;

    bool operator==(const RunSpec& o) const;
    bool operator!=(const RunSpec& o) const { return !(*this == o); }
};

// TOML text <-> JSON (tables as objects, arrays as arrays; an integer stays an integer).
// Errors are InputError with the TOML parser's line. Shared by RunSpec, sweep and experiment
// files. `lines` (optional) gets each value's line by its path: "a.b" for a key, "a[2].b"
// inside an array's third element.
nlohmann::json tomlToJson(const std::string& text, const std::string& where,
                          std::map<std::string, long>* lines = nullptr);
// The line of `field` (a path as above) or of the nearest table around it; 0 if none.
long tomlLine(const std::map<std::string, long>& lines, std::string field);
std::string jsonToToml(const nlohmann::json& j);

} // namespace kairos
