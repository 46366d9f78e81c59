#pragma once
// The Kairos store: one embedded SQLite database of device profiles with their raw
// measurements, fitted models, workloads, and runs with their per-request results.
//
// WAL journal (a reader never waits for a writer: the GUI reads while the CLI writes),
// foreign keys on, synchronous=FULL, a busy timeout for two writers, every write one
// transaction (an interrupted write leaves the database as it was before it), and a schema
// version (PRAGMA user_version) with forward migrations applied on open. The schema is in
// store.cpp, one migration per version; docs in sample_traces/README.md ("The store").
#include "fit/ete_fit.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "sched/registry.h"
#include "sched/scheduler.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace kairos::store {

// Anything the database refused, naming the database file.
class StoreError : public std::runtime_error {
public:
    StoreError(const std::string& path, const std::string& what)
        : std::runtime_error(path + ": " + what) {}
};

// 64-bit FNV-1a over the workload's native serialization, as 16 hex digits: identifies a
// workload's content (two files with the same requests are one workload). Not a security
// hash; the store also checks the request count on a match.
std::string contentHash(const Workload& w);

// What a run is stored with: its per-request results are `per_request` (perRequest(log)).
struct RunRecord {
    const Workload* workload = nullptr; // required
    std::string workload_source;        // the file it came from, or how it was generated
    std::string policy;                 // name with parameters, as the run log has it
    std::string params_json = "{}";     // the policy's parameters, by name
    std::string exec_model;             // execution model / profile description
    std::string limits_json = "{}";     // engine limits
    std::string label;                  // optional user label
    std::string spec_json;              // the RunSpec (JSON) that re-runs it; "" if none
    const Summary* summary = nullptr;   // required
    std::vector<RequestMetrics> per_request;
    const Explanation* explain = nullptr; // its reasons, when it recorded them
};

// A run's record from what a simulation used and produced: the policy's parameters (and
// its predictor) and the engine limits as JSON, per-request results from the log. What
// kairos-cli simulate --db and the workbench's Save store alike. `w` and `summary` must
// outlive the record.
RunRecord makeRunRecord(const Workload& w, const std::string& source, const RunLog& log,
                        const Summary& summary, const PolicyConfig& policy,
                        const EngineLimits& limits, const std::string& label);

struct RunInfo {
    std::int64_t id = 0, workload_id = 0;
    std::string workload_name, workload_hash, policy, params_json, exec_model, limits_json, label,
        created_at, kairos_version;
    std::int64_t num_requests = 0;
    std::string summary_json; // Summary::toJson()
    std::string spec_json;    // the RunSpec that re-runs it ("" for runs stored before it)
};

// One run of a sweep: its point, seed, the spec that re-runs it and its numbers.
struct SweepRun {
    std::int64_t job = 0, seed = 0;
    std::string point_json, spec_json, status, metrics_json;
};

// A sweep: its definition, its result table and (in sweep_runs) its runs.
struct SweepInfo {
    std::int64_t id = 0;
    std::string name, definition_json, results_json, created_at, kairos_version;
    std::int64_t runs = 0;
};

// One stored request result (a row of run_requests).
struct RequestRow {
    std::int32_t req = 0;
    double arrival = 0, first_token = 0, end = 0; // NaN where undefined
    std::int32_t prompt = 0, output = 0, preemptions = 0, suspensions = 0;
    bool finished = false, killed = false;
};

struct ProfileInfo {
    std::int64_t id = 0;
    std::string name, device, model, weights, json, created_at;
    std::int64_t measurements = 0;
};

// A raw measurement of a profile (fit/ete_fit.h): prefill (batch, tokens = N_x), decode
// (batch, context = total KV tokens) or any other kind; seconds measured.
using Measurement = kairos::Measurement;

struct ModelInfo {
    std::int64_t id = 0;
    std::string kind;     // "ete", "ala", ...
    std::string name;     // what it models (e.g. "llama2-70b a100-80gb tp4")
    std::string params;   // JSON: the fitted parameters
    std::string training; // JSON: what it was trained on (file, rows, groups, seed)
    std::string accuracy; // JSON: errors (MAPE, max, per group)
    std::string created_at;
};

class Store {
public:
    static constexpr int kSchemaVersion = 6;

    // How a missing database is met: created (commands that store), or refused
    // (commands that only read one: a mistyped path must not leave an empty database).
    enum class Open { Create, Existing };
    // Opens the database at `path`, creating it (and its folder) when missing if `mode`
    // allows, and brings its schema up to kSchemaVersion. A database from a newer Kairos is
    // refused.
    explicit Store(const std::string& path, Open mode = Open::Create);
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    // $KAIROS_DB, else $XDG_DATA_HOME/kairos/kairos.db, else ~/.local/share/kairos/kairos.db;
    // "" when none of them is set (opening "" is then an error that says so, rather than a
    // database made under the current folder).
    static std::string defaultPath();
    // True for an SQLite file with a Kairos schema (user_version > 0 and its runs table):
    // what may be deleted when a command is asked to start a database anew.
    static bool isKairosDatabase(const std::string& path);
    // Opened read-only (the file or its folder cannot be written): reading works, storing
    // fails with an error that says so.
    bool readOnly() const { return read_only_; }
    const std::string& path() const { return path_; }
    int schemaVersion() const;

    // Runs. putRun writes the workload (if its content is new), the run and its requests
    // in one transaction; `progress` (may be empty) is called with the rows written so
    // far. Returns the run's id.
    std::int64_t putRun(const RunRecord& r,
                        const std::function<void(std::int64_t rows)>& progress = {});
    // Newest first. `limit` 0: all.
    std::vector<RunInfo> listRuns(std::int64_t limit = 0) const;
    std::optional<RunInfo> run(std::int64_t id) const;
    std::vector<RequestRow> runRequests(std::int64_t id) const;
    // Its decisions with their reasons, calls and states (Explanation::on false when the
    // run did not record them).
    Explanation runExplanation(std::int64_t id) const;
    // False when there is no such run.
    bool deleteRun(std::int64_t id);
    std::int64_t countRuns() const;

    // A sweep with its runs, in one transaction. Returns the sweep's id.
    std::int64_t putSweep(const std::string& name, const std::string& definition_json,
                          const std::string& results_json, const std::vector<SweepRun>& runs);
    std::vector<SweepRun> sweepRuns(std::int64_t id) const;
    std::vector<SweepInfo> listSweeps() const; // newest first
    std::optional<SweepInfo> sweep(std::int64_t id) const;

    // Profiles and their measurements (one transaction).
    std::int64_t putProfile(const std::string& name, const std::string& device,
                            const std::string& model, const std::string& weights,
                            const std::string& json, const std::vector<Measurement>& m);
    std::vector<ProfileInfo> listProfiles() const;
    std::vector<Measurement> measurements(std::int64_t profile_id) const;

    // Fitted models.
    std::int64_t putModel(const ModelInfo& m);
    std::vector<ModelInfo> listModels(const std::string& kind = "") const;
    std::optional<ModelInfo> model(std::int64_t id) const;

    // The underlying connection (for tests and one-off queries).
    sqlite3* handle() const { return db_; }

private:
    std::int64_t insertRun(const RunRecord& r,
                           const std::function<void(std::int64_t rows)>& progress);
    void insertExplanation(std::int64_t run_id, const Explanation& ex);
    void migrate();
    // Refuses a user_version that is not a Kairos schema this build reads (negative, newer, or
    // 0 on a database that already has tables), naming the database.
    void checkSchemaVersion(int have) const;
    std::string path_;
    bool read_only_ = false;
    sqlite3* db_ = nullptr;
};

// The SQL that takes a database from schema version v - 1 to v (1 <= v <= kSchemaVersion);
// for tests that build an older database.
const char* migrationSql(int v);

// What a stored model's own held-out errors say against trusting it (fit/ete_fit.h's
// rule: a held-out median above 20 % or p90 above 50 %), one line each; empty when
// nothing. An "ete" model: its two batched fits (what the simulator uses). An "ala"
// model: the configuration `config` (every configuration when empty), or that it was
// never evaluated on held-out pairs. Older models without the median/p90 keys are judged
// from their stored held-out points.
std::vector<std::string> modelFitWarnings(const ModelInfo& m, const std::string& config = "");

// Stored rows as per-request results (what comparisons need: which requests finished,
// and their latencies).
std::vector<RequestMetrics> toRequestMetrics(const std::vector<RequestRow>& rows);

// Per-request rows of a run as CSV (the columns of run_requests).
std::string requestsCsv(const std::vector<RequestRow>& rows);

#if !KAIROS_HAVE_STORE
// Built without SQLite (KAIROS_WITH_STORE=OFF): no Store is ever opened (the options that
// would open one refuse themselves, app/cli/checks.h), but code that holds an empty
// std::unique_ptr<Store> still names its destructor.
inline Store::~Store() = default;
#endif

} // namespace kairos::store
