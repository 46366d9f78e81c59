#include "store/store.h"

#include "fit/ete_fit.h"
#include "metrics/stats.h"
#include "sched/registry.h"
#include "util/hash.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "util/json_number.h"
#include "util/text.h"
#include "workload/readers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sstream>
#include <sys/stat.h>
#include <tuple>
#include <type_traits>
#include <unistd.h>

#ifndef KAIROS_VERSION
#define KAIROS_VERSION "unknown"
#endif

namespace kairos::store {

namespace {

// The schema, one entry per version: migrations[v - 1] takes a database from version
// v - 1 to v. Never edit a released entry; add one.
const char* const kMigrations[] = {
    // 1: the tables.
    R"sql(
CREATE TABLE profiles(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  device TEXT NOT NULL,
  model TEXT NOT NULL,
  weights TEXT NOT NULL,          -- "real" or "synthetic" (live engine), "" when imported
  json TEXT NOT NULL,             -- the DeviceProfile
  created_at TEXT NOT NULL);
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  profile_id INTEGER NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,             -- prefill, decode, ...
  batch INTEGER NOT NULL,
  tokens INTEGER NOT NULL,
  context INTEGER NOT NULL,
  seconds REAL NOT NULL);
CREATE INDEX measurements_profile ON measurements(profile_id);
CREATE TABLE models(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,             -- ete, ala
  name TEXT NOT NULL,
  params TEXT NOT NULL,           -- JSON
  training TEXT NOT NULL,         -- JSON: the training data
  accuracy TEXT NOT NULL,         -- JSON: errors
  created_at TEXT NOT NULL);
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,      -- contentHash()
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  num_requests INTEGER NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  workload_id INTEGER NOT NULL REFERENCES workloads(id),
  policy TEXT NOT NULL,
  params TEXT NOT NULL,           -- JSON
  exec_model TEXT NOT NULL,
  limits TEXT NOT NULL,           -- JSON
  summary TEXT NOT NULL,          -- JSON: Summary::toJson()
  created_at TEXT NOT NULL,
  kairos_version TEXT NOT NULL);
CREATE TABLE run_requests(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  req INTEGER NOT NULL,
  arrival REAL, first_token REAL, end_time REAL,
  prompt INTEGER NOT NULL, output INTEGER NOT NULL,
  preemptions INTEGER NOT NULL, suspensions INTEGER NOT NULL,
  status INTEGER NOT NULL,        -- 0 unfinished, 1 finished, 2 killed
  PRIMARY KEY(run_id, req)) WITHOUT ROWID;
)sql",
    // 2: runs get an optional label; runs by workload and time are indexed (the list).
    R"sql(
ALTER TABLE runs ADD COLUMN label TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_workload ON runs(workload_id);
CREATE INDEX runs_created ON runs(created_at);
)sql",
    // 3: a run keeps the RunSpec that re-runs it; sweeps (kairos-cli sweep, the workbench's
    // Sweep view) group their runs and keep their definition and result table.
    R"sql(
ALTER TABLE runs ADD COLUMN spec TEXT NOT NULL DEFAULT '';
CREATE TABLE sweeps(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,       -- JSON: the sweep's base RunSpec, axes and seeds
  results TEXT NOT NULL,          -- JSON: the table (a row per point, mean and interval)
  created_at TEXT NOT NULL,
  kairos_version TEXT NOT NULL);
CREATE TABLE sweep_runs(          -- a sweep's runs: the spec that re-runs each, its numbers
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  job INTEGER NOT NULL,
  point TEXT NOT NULL,            -- JSON: axis -> value
  seed INTEGER NOT NULL,
  spec TEXT NOT NULL,             -- JSON: the RunSpec
  status TEXT NOT NULL,           -- ok, loop
  metrics TEXT NOT NULL,          -- JSON: metric -> value (null for NaN)
  PRIMARY KEY(sweep_id, job)) WITHOUT ROWID;
)sql",
    // 4: a run recorded with its reasons (--explain, model/explain.h) keeps them: its
    // decisions (each action with the rule that fired and its numbers), the schedule()
    // calls (what a replay needs) and the per-request state the policy decided on.
    R"sql(
ALTER TABLE runs ADD COLUMN explain TEXT NOT NULL DEFAULT '';  -- JSON: key, or '' if none
CREATE TABLE run_calls(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  t REAL NOT NULL,
  hold INTEGER NOT NULL,
  wake_at REAL,                   -- NULL: none (infinity)
  restart INTEGER NOT NULL,
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE TABLE run_decisions(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,           -- the order the engine applied them
  t REAL NOT NULL,
  call INTEGER NOT NULL,          -- run_calls.seq
  req INTEGER NOT NULL,
  act TEXT NOT NULL,              -- admit, preempt, suspend, resume, kill, evict, dispatch
  rule TEXT NOT NULL,             -- the rule's code (kairos-cli explain --rules lists them)
  other INTEGER,                  -- the request it was compared against
  value INTEGER NOT NULL,         -- kill: cause; dispatch: segment
  x TEXT NOT NULL,                -- JSON: the rule's numbers ("inf" for infinity)
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE INDEX run_decisions_req ON run_decisions(run_id, req);
CREATE TABLE run_states(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  t REAL NOT NULL,
  req INTEGER NOT NULL,
  generated INTEGER,              -- tokens generated when sampled (remaining counts are as of then)
  key REAL, predicted REAL, deadline REAL, alpha REAL, wcet REAL,  -- NULL: none
  PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
)sql",
    // 5: a fleet's run (replicas behind a router) records every replica's decisions: each
    // call names the replica that made it.
    R"sql(
ALTER TABLE run_calls ADD COLUMN replica INTEGER;  -- NULL: one engine's call
)sql",
    // 6: a call records the engine as its decision left it (seats taken, KV allocated),
    // which a wait is measured against (metrics/waits.h); the run's limits are in `explain`.
    R"sql(
ALTER TABLE run_calls ADD COLUMN running INTEGER;  -- NULL: not recorded
ALTER TABLE run_calls ADD COLUMN kv_used INTEGER;
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == Store::kSchemaVersion,
              "one migration per schema version");

std::string nowIso() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
    return buf;
}

// A prepared statement (RAII), with the few bind/column helpers the store needs.
class Stmt {
public:
    Stmt(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
        if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
            throw StoreError(path, std::string("cannot prepare: ") + sqlite3_errmsg(db));
    }
    ~Stmt() { sqlite3_finalize(s_); }
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    Stmt& bind(int i, std::int64_t v) {
        check(sqlite3_bind_int64(s_, i, v));
        return *this;
    }
    Stmt& bind(int i, double v) { // NaN is stored as NULL
        check(std::isnan(v) ? sqlite3_bind_null(s_, i) : sqlite3_bind_double(s_, i, v));
        return *this;
    }
    Stmt& bind(int i, const std::string& v) {
        check(sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    // Every row, each read by `from` (a function of the statement standing at the row).
    template <class F> auto rows(F from) {
        std::vector<std::decay_t<decltype(from(*this))>> out;
        while (step()) out.push_back(from(*this));
        return out;
    }
    // The first row read by `from`; none when there is no row.
    template <class F> auto first(F from) -> std::optional<std::decay_t<decltype(from(*this))>> {
        if (!step()) return std::nullopt;
        return from(*this);
    }
    // True while there is a row.
    bool step() {
        const int rc = sqlite3_step(s_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        throw StoreError(path_, sqlite3_errmsg(db_));
    }
    void reset() {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }
    Stmt& bindNull(int i) {
        check(sqlite3_bind_null(s_, i));
        return *this;
    }
    std::int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
    bool isNull(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
    double real(int c) const {
        return sqlite3_column_type(s_, c) == SQLITE_NULL ? std::nan("")
                                                         : sqlite3_column_double(s_, c);
    }
    std::string text(int c) const {
        const auto* p = sqlite3_column_text(s_, c);
        return p ? std::string(reinterpret_cast<const char*>(p),
                               size_t(sqlite3_column_bytes(s_, c)))
                 : std::string();
    }

private:
    void check(int rc) {
        if (rc != SQLITE_OK) throw StoreError(path_, sqlite3_errmsg(db_));
    }
    sqlite3* db_;
    const std::string& path_;
    sqlite3_stmt* s_ = nullptr;
};

void exec(sqlite3* db, const std::string& path, const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        const std::string msg = err ? err : sqlite3_errmsg(db);
        sqlite3_free(err);
        throw StoreError(path, msg);
    }
}

// BEGIN IMMEDIATE (the write lock up front: no deadlock between two writers that both
// read first) ... COMMIT; rolled back unless committed.
class Transaction {
public:
    Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) {
        exec(db_, path_, "BEGIN IMMEDIATE");
    }
    ~Transaction() {
        if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    void commit() {
        exec(db_, path_, "COMMIT");
        done_ = true;
    }

private:
    sqlite3* db_;
    const std::string& path_;
    bool done_ = false;
};

RunInfo runFrom(const Stmt& s) {
    RunInfo r;
    r.id = s.i64(0);
    r.workload_id = s.i64(1);
    r.workload_name = s.text(2);
    r.workload_hash = s.text(3);
    r.num_requests = s.i64(4);
    r.policy = s.text(5);
    r.params_json = s.text(6);
    r.exec_model = s.text(7);
    r.limits_json = s.text(8);
    r.summary_json = s.text(9);
    r.created_at = s.text(10);
    r.kairos_version = s.text(11);
    r.label = s.text(12);
    r.spec_json = s.text(13);
    return r;
}

constexpr const char* kRunColumns =
    "SELECT r.id, r.workload_id, w.name, w.hash, w.num_requests, r.policy, r.params, "
    "r.exec_model, r.limits, r.summary, r.created_at, r.kairos_version, r.label, r.spec "
    "FROM runs r "
    "JOIN workloads w ON w.id = r.workload_id ";

ModelInfo modelFrom(const Stmt& s) {
    ModelInfo m;
    m.id = s.i64(0);
    m.kind = s.text(1);
    m.name = s.text(2);
    m.params = s.text(3);
    m.training = s.text(4);
    m.accuracy = s.text(5);
    m.created_at = s.text(6);
    return m;
}

} // namespace

RunRecord makeRunRecord(const Workload& w, const std::string& source, const RunLog& log,
                        const Summary& summary, const PolicyConfig& policy,
                        const EngineLimits& limits, const std::string& label) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : policy.params) params[k] = v;
    params["predictor"] = policy.predictor;
    RunRecord rec;
    rec.workload = &w;
    rec.workload_source = source;
    rec.policy = log.policy;
    rec.params_json = params.dump();
    rec.exec_model = log.exec_model;
    nlohmann::json lj{{"kv_capacity_tokens", limits.kv_capacity_tokens},
                      {"block_size", limits.block_size},
                      {"max_num_seqs", limits.max_num_seqs},
                      {"max_num_batched_tokens", limits.max_num_batched_tokens},
                      {"chunked_prefill", limits.chunked_prefill}};
    if (limits.rules != EngineRules::Kairos) lj["rules"] = engineRulesName(limits.rules);
    rec.limits_json = lj.dump();
    rec.label = label;
    rec.summary = &summary;
    rec.per_request = perRequest(log);
    if (log.explain.on) rec.explain = &log.explain;
    return rec;
}

const char* migrationSql(int v) {
    if (v < 1 || v > Store::kSchemaVersion) throw std::out_of_range("no such schema version");
    return kMigrations[v - 1];
}

std::string contentHash(const Workload& w) {
    // FNV-1a (util/text.h) over the native serialization without its header (name and
    // source do not change the content).
    Workload body = w;
    body.name.clear();
    body.source.clear();
    body.meta.clear();
    std::ostringstream out;
    writeKairos(body, out);
    return fnv1a64Hex(out.str());
}

Store::Store(const std::string& path, Open mode) : path_(path) {
    namespace fs = std::filesystem;
    if (path.empty())
        throw StoreError("<database>",
                         "no database path: give --db FILE (the default database needs HOME, "
                         "XDG_DATA_HOME or KAIROS_DB)");
    const fs::path p(path);
    // What is there: a database is a regular file (through a link only to an existing one);
    // a device, a FIFO or a dangling link is never made into one (SQLite would create
    // "/dev/null-journal" beside a device, or a file where a dangling link points).
    struct stat st;
    const bool there = ::stat(path.c_str(), &st) == 0;
    struct stat lst;
    if (!there && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
        throw StoreError(path, "is a link to nothing: no database is created through it");
    if (there && S_ISDIR(st.st_mode)) throw StoreError(path, "is a folder, not a database");
    if (there && !S_ISREG(st.st_mode))
        throw StoreError(path, "is not a regular file (a device or a pipe): not a database");
    // SQLite opens its -wal, -shm and -journal files beside the database by name: a link
    // planted there would have it write through the link.
    // A FIFO there would be waited on (or removed), a device written into, and a file with
    // other names (a hard link) would have another file overwritten.
    for (const char* suffix : {"-wal", "-shm", "-journal"}) {
        const std::string side = path + suffix;
        if (::lstat(side.c_str(), &lst) != 0) continue;
        if (S_ISLNK(lst.st_mode))
            throw StoreError(path, side + " is a symbolic link: SQLite would write through it");
        if (!S_ISREG(lst.st_mode))
            throw StoreError(path,
                             side + " is not a regular file (" +
                                 (S_ISFIFO(lst.st_mode)  ? std::string("a FIFO")
                                  : S_ISDIR(lst.st_mode) ? std::string("a folder")
                                                         : std::string("a device or socket")) +
                                 "): SQLite keeps its journal there; remove it");
        if (lst.st_nlink > 1)
            throw StoreError(path, side + " has other names (hard links): SQLite would write "
                                          "into the files they name; remove it");
    }
    // An input of this command: no output of it may replace the database (a RunSpec's
    // exec.db names it where no --db option does).
    noteInput(path);
    if (mode == Open::Existing && !there)
        throw StoreError(path, "no database here (a command that stores, e.g. simulate --db, "
                               "creates one)");
    if (!there && p.has_parent_path()) {
        std::error_code ec;
        fs::create_directories(p.parent_path(), ec);
        if (ec) throw StoreError(path, "cannot create its folder: " + ec.message());
    }
    // A database this process may not write (its file or folder), opened to read: listing
    // and showing work; a command that stores fails naming the file.
    const std::string folder = p.has_parent_path() ? p.parent_path().string() : ".";
    read_only_ =
        there && (::access(path.c_str(), W_OK) != 0 || ::access(folder.c_str(), W_OK) != 0);
    const int flags = read_only_
                          ? SQLITE_OPEN_READONLY
                          : SQLITE_OPEN_READWRITE | (mode == Open::Create ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw StoreError(path, "cannot open: " + msg);
    }
    try {
        sqlite3_busy_timeout(db_, 10000);
        // Not a database at all (a text file given by mistake) fails here, clearly.
        exec(db_, path_, "PRAGMA foreign_keys = ON");
        if (read_only_) {
            int have = 0;
            try {
                have = schemaVersion();
            } catch (const StoreError&) {
                // A WAL database closed cleanly has no -shm file, and one cannot be made in a
                // folder this process may not write: read the file as it is (immutable).
                sqlite3_close(db_);
                db_ = nullptr;
                std::string uri = "file:";
                for (char c : path) {
                    if (c == '%' || c == '?' || c == '#') {
                        char b[4];
                        std::snprintf(b, sizeof b, "%%%02X", static_cast<unsigned char>(c));
                        uri += b;
                    } else {
                        uri += c;
                    }
                }
                uri += "?immutable=1";
                if (sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                    nullptr) != SQLITE_OK)
                    throw StoreError(path_, std::string("cannot open read-only: ") +
                                                (db_ ? sqlite3_errmsg(db_) : "out of memory"));
                have = schemaVersion();
            }
            checkSchemaVersion(have);
            if (have != kSchemaVersion)
                throw StoreError(path_, "is read-only and has schema version " +
                                            std::to_string(have) + ", not " +
                                            std::to_string(kSchemaVersion) +
                                            ": it cannot be upgraded (make it writable)");
        } else {
            // Judged before anything is written (the switch to WAL rewrites the file's
            // header): a database that is not Kairos's is left byte for byte as it was.
            checkSchemaVersion(schemaVersion());
            {
                Stmt s(db_, path_, "PRAGMA journal_mode = WAL");
                if (!s.step() || s.text(0) != "wal")
                    throw StoreError(path_, "cannot switch to WAL journaling");
            }
            exec(db_, path_, "PRAGMA synchronous = FULL");
            migrate();
        }
    } catch (...) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
    }
}

bool Store::isKairosDatabase(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    // SQLite's own header first: SQLite reads a short text file as an empty database.
    {
        char head[16] = {};
        std::FILE* f = std::fopen(path.c_str(), "rb");
        const bool ok = f && std::fread(head, 1, sizeof head, f) == sizeof head &&
                        std::memcmp(head, "SQLite format 3", 16) == 0;
        if (f) std::fclose(f);
        if (!ok) return false;
    }
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(db);
        return false;
    }
    bool ok = false;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT user_version FROM pragma_user_version) > 0 AND "
                           "EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'runs')",
                           -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        ok = sqlite3_column_int(s, 0) != 0;
    sqlite3_finalize(s);
    sqlite3_close(db);
    return ok;
}

Store::~Store() {
    sqlite3_close(db_);
}

std::string Store::defaultPath() {
    if (const char* e = std::getenv("KAIROS_DB"); e && *e) return e;
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x)
        return std::string(x) + "/kairos/kairos.db";
    const char* home = std::getenv("HOME");
    if (!home || !*home) return ""; // never the current folder by default
    return std::string(home) + "/.local/share/kairos/kairos.db";
}

int Store::schemaVersion() const {
    Stmt s(db_, path_, "PRAGMA user_version");
    s.step();
    return int(s.i64(0));
}

void Store::checkSchemaVersion(int have) const {
    // SQLite's user_version is any 32-bit integer a tool may have set: only 0 (a new, empty
    // database) and the versions this build migrates from are Kairos's.
    if (have < 0)
        throw StoreError(path_, "has schema version " + std::to_string(have) +
                                    ", which no Kairos writes: not a Kairos database (or a "
                                    "damaged one); give another --db");
    if (have > kSchemaVersion)
        throw StoreError(path_, "the database has schema version " + std::to_string(have) +
                                    ", newer than this Kairos knows (" +
                                    std::to_string(kSchemaVersion) + "); use a newer Kairos");
    if (have == 0) {
        // Version 0 is a database nobody has set up; one that already holds tables belongs
        // to another program, whose file Kairos would otherwise fill with its own tables.
        Stmt s(db_, path_, "SELECT count(*) FROM sqlite_master");
        s.step();
        if (s.i64(0) > 0)
            throw StoreError(path_, "has tables but schema version 0: another program's "
                                    "SQLite database, not a Kairos one; give another --db");
    }
}

void Store::migrate() {
    const int have = schemaVersion();
    checkSchemaVersion(have);
    for (int v = have + 1; v <= kSchemaVersion; ++v) {
        Transaction t(db_, path_);
        // Another process may have migrated meanwhile: look again under the write lock.
        if (schemaVersion() >= v) continue;
        exec(db_, path_, kMigrations[v - 1]);
        exec(db_, path_, ("PRAGMA user_version = " + std::to_string(v)).c_str());
        t.commit();
    }
}

std::int64_t Store::putRun(const RunRecord& r,
                           const std::function<void(std::int64_t rows)>& progress) {
    Transaction t(db_, path_);
    const std::int64_t id = insertRun(r, progress);
    t.commit();
    return id;
}

std::int64_t Store::putSweep(const std::string& name, const std::string& definition_json,
                             const std::string& results_json, const std::vector<SweepRun>& runs) {
    for (const auto* j : {&definition_json, &results_json})
        if (!nlohmann::json::accept(*j)) throw StoreError(path_, "a sweep's tables are not JSON");
    Transaction t(db_, path_);
    Stmt ins(db_, path_,
             "INSERT INTO sweeps(name, definition, results, created_at, kairos_version) VALUES "
             "(?, ?, ?, ?, ?)");
    ins.bind(1, name)
        .bind(2, definition_json)
        .bind(3, results_json)
        .bind(4, nowIso())
        .bind(5, std::string(KAIROS_VERSION));
    ins.step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    Stmt row(db_, path_,
             "INSERT INTO sweep_runs(sweep_id, job, point, seed, spec, status, metrics) VALUES "
             "(?, ?, ?, ?, ?, ?, ?)");
    for (const SweepRun& r : runs) {
        row.bind(1, id)
            .bind(2, r.job)
            .bind(3, r.point_json)
            .bind(4, r.seed)
            .bind(5, r.spec_json)
            .bind(6, r.status)
            .bind(7, r.metrics_json);
        row.step();
        row.reset();
    }
    t.commit();
    return id;
}

namespace {
SweepInfo sweepFrom(const Stmt& s) {
    SweepInfo w;
    w.id = s.i64(0);
    w.name = s.text(1);
    w.definition_json = s.text(2);
    w.results_json = s.text(3);
    w.created_at = s.text(4);
    w.kairos_version = s.text(5);
    w.runs = s.i64(6);
    return w;
}
constexpr const char* kSweepColumns =
    "SELECT s.id, s.name, s.definition, s.results, s.created_at, s.kairos_version, "
    "(SELECT COUNT(*) FROM sweep_runs r WHERE r.sweep_id = s.id) FROM sweeps s ";
} // namespace

std::vector<SweepInfo> Store::listSweeps() const {
    return Stmt(db_, path_, (std::string(kSweepColumns) + "ORDER BY s.id DESC").c_str())
        .rows(sweepFrom);
}

std::optional<SweepInfo> Store::sweep(std::int64_t id) const {
    return Stmt(db_, path_, (std::string(kSweepColumns) + "WHERE s.id = ?").c_str())
        .bind(1, id)
        .first(sweepFrom);
}

std::vector<SweepRun> Store::sweepRuns(std::int64_t id) const {
    Stmt s(db_, path_,
           "SELECT job, point, seed, spec, status, metrics FROM sweep_runs WHERE sweep_id = ? "
           "ORDER BY job");
    return s.bind(1, id).rows([](const Stmt& row) {
        SweepRun r;
        r.job = row.i64(0);
        r.point_json = row.text(1);
        r.seed = row.i64(2);
        r.spec_json = row.text(3);
        r.status = row.text(4);
        r.metrics_json = row.text(5);
        return r;
    });
}

std::int64_t Store::insertRun(const RunRecord& r,
                              const std::function<void(std::int64_t rows)>& progress) {
    if (!r.workload || !r.summary) throw StoreError(path_, "a run needs its workload and summary");
    const std::string hash = contentHash(*r.workload);
    const std::string summary = r.summary->toJson().dump();
    for (const auto* j : {&r.params_json, &r.limits_json})
        if (!nlohmann::json::accept(*j)) throw StoreError(path_, "run parameters are not JSON");
    if (!r.spec_json.empty() && !nlohmann::json::accept(r.spec_json))
        throw StoreError(path_, "a run's spec is not JSON");
    std::int64_t workload_id = 0;
    {
        Stmt find(db_, path_, "SELECT id, num_requests FROM workloads WHERE hash = ?");
        find.bind(1, hash);
        if (find.step()) {
            workload_id = find.i64(0);
            if (find.i64(1) != std::int64_t(r.workload->size()))
                throw StoreError(path_, "workload hash " + hash +
                                            " is stored with another request count (a hash "
                                            "collision); not storing the run");
        }
    }
    if (!workload_id) {
        Stmt ins(db_, path_,
                 "INSERT INTO workloads(hash, name, source, num_requests) VALUES (?, ?, ?, ?)");
        ins.bind(1, hash)
            .bind(2, r.workload->name)
            .bind(3, r.workload_source.empty() ? r.workload->source : r.workload_source)
            .bind(4, std::int64_t(r.workload->size()));
        ins.step();
        workload_id = sqlite3_last_insert_rowid(db_);
    }
    std::int64_t run_id = 0;
    {
        Stmt ins(db_, path_,
                 "INSERT INTO runs(workload_id, policy, params, exec_model, limits, summary, "
                 "created_at, kairos_version, label, spec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                 "?)");
        ins.bind(1, workload_id)
            .bind(2, r.policy)
            .bind(3, r.params_json)
            .bind(4, r.exec_model)
            .bind(5, r.limits_json)
            .bind(6, summary)
            .bind(7, nowIso())
            .bind(8, std::string(KAIROS_VERSION))
            .bind(9, r.label)
            .bind(10, r.spec_json);
        ins.step();
        run_id = sqlite3_last_insert_rowid(db_);
    }
    Stmt row(db_, path_,
             "INSERT INTO run_requests(run_id, req, arrival, first_token, end_time, prompt, "
             "output, preemptions, suspensions, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    std::int64_t n = 0;
    for (const RequestMetrics& m : r.per_request) {
        row.bind(1, run_id)
            .bind(2, std::int64_t(m.id))
            .bind(3, m.arrival)
            .bind(4, m.first_token)
            .bind(5, m.end)
            .bind(6, std::int64_t(m.prompt_tokens))
            .bind(7, std::int64_t(m.output_tokens))
            .bind(8, std::int64_t(m.preemptions))
            .bind(9, std::int64_t(m.suspensions))
            .bind(10, std::int64_t(m.killed     ? 2
                                   : m.finished ? 1
                                                : 0));
        row.step();
        row.reset();
        if (progress && ++n % 1024 == 0) progress(n);
    }
    if (progress) progress(std::int64_t(r.per_request.size()));
    if (r.explain && r.explain->on) insertExplanation(run_id, *r.explain);
    return run_id;
}

namespace {
// A reason's numbers as JSON ("inf" / "-inf" for infinities, as the run log writes them).
std::string reasonNumbers(const Reason& r) {
    nlohmann::json x = nlohmann::json::array();
    const int n = r.rule == RuleId::Unexplained ? 1 : ruleVarCount(r.rule);
    for (int i = 0; i < n; ++i) {
        x.push_back(jsonNumberOrInf(r.x[static_cast<std::size_t>(i)]));
    }
    return x.dump();
}
} // namespace

void Store::insertExplanation(std::int64_t run_id, const Explanation& ex) {
    {
        Stmt up(db_, path_, "UPDATE runs SET explain = ? WHERE id = ?");
        nlohmann::json head = {{"key", ex.key_name},
                               {"key_descending", ex.key_descending},
                               {"key_counts_down", ex.key_counts_down}};
        if (ex.limits.known()) head["limits"] = limitsJson(ex.limits);
        up.bind(1, head.dump()).bind(2, run_id);
        up.step();
    }
    Stmt call(db_, path_,
              "INSERT INTO run_calls(run_id, seq, t, hold, wake_at, restart, replica, running, "
              "kv_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < ex.calls.size(); ++i) {
        const CallRecord& c = ex.calls[i];
        call.bind(1, run_id).bind(2, std::int64_t(i)).bind(3, c.t).bind(4, std::int64_t(c.hold));
        if (std::isinf(c.wake_at))
            call.bindNull(5);
        else
            call.bind(5, c.wake_at);
        call.bind(6, std::int64_t(c.restart));
        if (ex.call_replica.empty())
            call.bindNull(7);
        else
            call.bind(7, std::int64_t(ex.call_replica[i]));
        if (c.running < 0)
            call.bindNull(8);
        else
            call.bind(8, std::int64_t(c.running));
        if (c.kv_used < 0)
            call.bindNull(9);
        else
            call.bind(9, c.kv_used);
        call.step();
        call.reset();
    }
    Stmt why(db_, path_,
             "INSERT INTO run_decisions(run_id, seq, t, call, req, act, rule, other, value, x) "
             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < ex.reasons.size(); ++i) {
        const Reason& r = ex.reasons[i];
        why.bind(1, run_id)
            .bind(2, std::int64_t(i))
            .bind(3, r.t)
            .bind(4, std::int64_t(r.call))
            .bind(5, std::int64_t(r.req))
            .bind(6, std::string(actName(r.act)))
            .bind(7, std::string(ruleOf(r.rule).code));
        if (r.other >= 0)
            why.bind(8, std::int64_t(r.other));
        else
            why.bindNull(8);
        why.bind(9, std::int64_t(r.value)).bind(10, reasonNumbers(r));
        why.step();
        why.reset();
    }
    Stmt state(db_, path_,
               "INSERT INTO run_states(run_id, seq, t, req, key, predicted, deadline, alpha, "
               "wcet, generated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (std::size_t i = 0; i < ex.insights.size(); ++i) {
        const Insight& in = ex.insights[i];
        // Infinite keys (a request a policy never ranks) are stored as the largest double.
        auto fin = [](double v) {
            return std::isinf(v) ? std::copysign(std::numeric_limits<double>::max(), v) : v;
        };
        state.bind(1, run_id)
            .bind(2, std::int64_t(i))
            .bind(3, in.t)
            .bind(4, std::int64_t(in.req))
            .bind(5, fin(in.key))
            .bind(6, fin(in.predicted))
            .bind(7, fin(in.deadline))
            .bind(8, fin(in.alpha))
            .bind(9, fin(in.wcet));
        if (in.generated >= 0)
            state.bind(10, std::int64_t(in.generated));
        else
            state.bindNull(10);
        state.step();
        state.reset();
    }
}

Explanation Store::runExplanation(std::int64_t id) const {
    Explanation ex;
    {
        Stmt s(db_, path_, "SELECT explain FROM runs WHERE id = ?");
        s.bind(1, id);
        if (!s.step()) throw StoreError(path_, "no run " + std::to_string(id));
        const std::string head = s.text(0);
        if (head.empty()) return ex;
        const auto j = parseJsonLenient(head);
        if (!j.is_object()) throw StoreError(path_, "run " + std::to_string(id) + ": bad explain");
        ex.on = true;
        ex.key_name = j.value("key", std::string());
        ex.key_descending = j.value("key_descending", false);
        ex.key_counts_down = j.value("key_counts_down", false);
        if (const auto l = j.find("limits"); l != j.end()) {
            try {
                ex.limits = limitsFromJson(*l, path_, 0);
            } catch (const InputError& e) {
                throw StoreError(path_, "run " + std::to_string(id) + ": " + e.what());
            }
        }
    }
    {
        Stmt s(db_, path_,
               "SELECT t, hold, wake_at, restart, replica, running, kv_used FROM run_calls WHERE "
               "run_id = ? ORDER BY seq");
        s.bind(1, id);
        while (s.step()) {
            CallRecord c;
            c.t = s.real(0);
            c.hold = std::int32_t(s.i64(1));
            c.wake_at = s.isNull(2) ? std::numeric_limits<double>::infinity() : s.real(2);
            c.restart = s.i64(3) != 0;
            // A fleet's calls name their replica, all of them (a mix is a damaged database).
            if (!s.isNull(4)) ex.call_replica.push_back(std::int16_t(s.i64(4)));
            if (!s.isNull(5))
                c.running = std::int32_t(std::clamp<std::int64_t>(s.i64(5), 0, INT32_MAX));
            if (!s.isNull(6)) c.kv_used = std::max<std::int64_t>(0, s.i64(6));
            ex.calls.push_back(c);
        }
        if (!ex.call_replica.empty() && ex.call_replica.size() != ex.calls.size())
            throw StoreError(path_, "run " + std::to_string(id) +
                                        ": some of its calls name a replica and some do not");
    }
    {
        linkPolicyRules(); // its reasons may cite any policy's rule
        Stmt s(db_, path_,
               "SELECT t, call, req, act, rule, other, value, x FROM run_decisions WHERE run_id = "
               "? ORDER BY seq");
        s.bind(1, id);
        while (s.step()) {
            Reason r;
            r.t = s.real(0);
            r.call = std::uint32_t(s.i64(1));
            r.req = ReqId(s.i64(2));
            if (!actFromName(s.text(3), &r.act) || !ruleFromCode(s.text(4), &r.rule))
                throw StoreError(path_, "run " + std::to_string(id) + ": unknown action or rule '" +
                                            s.text(3) + "', '" + s.text(4) + "'");
            r.other = s.isNull(5) ? -1 : ReqId(s.i64(5));
            r.value = std::int32_t(s.i64(6));
            const auto x = parseJsonLenient(s.text(7));
            if (x.is_array())
                for (std::size_t i = 0; i < std::min<std::size_t>(x.size(), r.x.size()); ++i)
                    r.x[i] = numberOrInf(x[i]).value_or(std::nan(""));
            ex.reasons.push_back(r);
        }
    }
    {
        Stmt s(db_, path_,
               "SELECT t, req, key, predicted, deadline, alpha, wcet, generated FROM run_states "
               "WHERE run_id = ? ORDER BY seq");
        s.bind(1, id);
        auto unfin = [](double v) {
            return std::fabs(v) == std::numeric_limits<double>::max()
                       ? std::copysign(std::numeric_limits<double>::infinity(), v)
                       : v;
        };
        while (s.step()) {
            Insight in;
            in.t = s.real(0);
            in.req = ReqId(s.i64(1));
            in.key = unfin(s.real(2));
            in.predicted = unfin(s.real(3));
            in.deadline = unfin(s.real(4));
            in.alpha = unfin(s.real(5));
            in.wcet = unfin(s.real(6));
            in.generated = s.isNull(7) ? -1 : std::int32_t(s.i64(7));
            ex.insights.push_back(in);
        }
    }
    return ex;
}

std::vector<RunInfo> Store::listRuns(std::int64_t limit) const {
    const std::string sql = std::string(kRunColumns) + "ORDER BY r.id DESC" +
                            (limit > 0 ? " LIMIT " + std::to_string(limit) : "");
    return Stmt(db_, path_, sql.c_str()).rows(runFrom);
}

std::optional<RunInfo> Store::run(std::int64_t id) const {
    return Stmt(db_, path_, (std::string(kRunColumns) + "WHERE r.id = ?").c_str())
        .bind(1, id)
        .first(runFrom);
}

std::vector<RequestRow> Store::runRequests(std::int64_t id) const {
    Stmt s(db_, path_,
           "SELECT req, arrival, first_token, end_time, prompt, output, preemptions, "
           "suspensions, status FROM run_requests WHERE run_id = ? ORDER BY req");
    return s.bind(1, id).rows([](const Stmt& row) {
        RequestRow r;
        r.req = std::int32_t(row.i64(0));
        r.arrival = row.real(1);
        r.first_token = row.real(2);
        r.end = row.real(3);
        r.prompt = std::int32_t(row.i64(4));
        r.output = std::int32_t(row.i64(5));
        r.preemptions = std::int32_t(row.i64(6));
        r.suspensions = std::int32_t(row.i64(7));
        r.finished = row.i64(8) == 1;
        r.killed = row.i64(8) == 2;
        return r;
    });
}

bool Store::deleteRun(std::int64_t id) {
    Transaction t(db_, path_);
    Stmt s(db_, path_, "DELETE FROM runs WHERE id = ?"); // its requests cascade
    s.bind(1, id);
    s.step();
    const bool any = sqlite3_changes(db_) > 0;
    // A workload no run refers to any more goes too.
    exec(db_, path_,
         "DELETE FROM workloads WHERE id NOT IN (SELECT DISTINCT workload_id FROM runs)");
    t.commit();
    return any;
}

std::int64_t Store::countRuns() const {
    Stmt s(db_, path_, "SELECT count(*) FROM runs");
    s.step();
    return s.i64(0);
}

std::int64_t Store::putProfile(const std::string& name, const std::string& device,
                               const std::string& model, const std::string& weights,
                               const std::string& json, const std::vector<Measurement>& ms) {
    if (!nlohmann::json::accept(json)) throw StoreError(path_, "the profile is not JSON");
    Transaction t(db_, path_);
    Stmt ins(db_, path_,
             "INSERT INTO profiles(name, device, model, weights, json, created_at) VALUES (?, "
             "?, ?, ?, ?, ?)");
    ins.bind(1, name)
        .bind(2, device)
        .bind(3, model)
        .bind(4, weights)
        .bind(5, json)
        .bind(6, nowIso());
    ins.step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    Stmt m(db_, path_,
           "INSERT INTO measurements(profile_id, kind, batch, tokens, context, seconds) VALUES "
           "(?, ?, ?, ?, ?, ?)");
    for (const Measurement& x : ms) {
        if (!(x.seconds >= 0) || !std::isfinite(x.seconds))
            throw StoreError(path_, "a measurement of '" + x.kind + "' has no valid time");
        m.bind(1, id)
            .bind(2, x.kind)
            .bind(3, x.batch)
            .bind(4, x.tokens)
            .bind(5, x.context)
            .bind(6, x.seconds);
        m.step();
        m.reset();
    }
    t.commit();
    return id;
}

std::vector<ProfileInfo> Store::listProfiles() const {
    Stmt s(db_, path_,
           "SELECT p.id, p.name, p.device, p.model, p.weights, p.json, p.created_at, "
           "(SELECT count(*) FROM measurements m WHERE m.profile_id = p.id) FROM profiles p "
           "ORDER BY p.id");
    return s.rows([](const Stmt& r) {
        return ProfileInfo{r.i64(0),  r.text(1), r.text(2), r.text(3),
                           r.text(4), r.text(5), r.text(6), r.i64(7)};
    });
}

std::vector<Measurement> Store::measurements(std::int64_t profile_id) const {
    Stmt s(db_, path_,
           "SELECT kind, batch, tokens, context, seconds FROM measurements WHERE profile_id = ? "
           "ORDER BY id");
    return s.bind(1, profile_id).rows([](const Stmt& r) {
        return Measurement{r.text(0), r.i64(1), r.i64(2), r.i64(3), r.real(4)};
    });
}

std::int64_t Store::putModel(const ModelInfo& m) {
    for (const auto* j : {&m.params, &m.training, &m.accuracy})
        if (!nlohmann::json::accept(*j)) throw StoreError(path_, "model fields must be JSON");
    Transaction t(db_, path_);
    Stmt s(db_, path_,
           "INSERT INTO models(kind, name, params, training, accuracy, created_at) VALUES (?, ?, "
           "?, ?, ?, ?)");
    s.bind(1, m.kind)
        .bind(2, m.name)
        .bind(3, m.params)
        .bind(4, m.training)
        .bind(5, m.accuracy)
        .bind(6, nowIso());
    s.step();
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    t.commit();
    return id;
}

std::vector<ModelInfo> Store::listModels(const std::string& kind) const {
    Stmt s(db_, path_,
           "SELECT id, kind, name, params, training, accuracy, created_at FROM models WHERE ? = "
           "'' OR kind = ? ORDER BY id");
    return s.bind(1, kind).bind(2, kind).rows(modelFrom);
}

std::optional<ModelInfo> Store::model(std::int64_t id) const {
    Stmt s(
        db_, path_,
        "SELECT id, kind, name, params, training, accuracy, created_at FROM models WHERE id = ?");
    return s.bind(1, id).first(modelFrom);
}

namespace {
// The median and p90 of absolute % errors (NaN for none), numpy's definitions.
std::pair<double, double> medianP90(std::vector<double> e) {
    const Stats st = describe(std::move(e), {50, 90});
    return {st.percentile(50), st.percentile(90)};
}
std::string pctText(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f %%", v);
    return b;
}
} // namespace

std::vector<std::string> modelFitWarnings(const ModelInfo& m, const std::string& config) {
    std::vector<std::string> out;
    const auto acc = parseJsonLenient(m.accuracy);
    const std::string who = "model " + std::to_string(m.id) + " (" + m.name + ")";
    auto number = [](const nlohmann::json& j, const char* k) {
        const auto it = j.find(k);
        return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
    };
    if (m.kind == "ete") {
        if (!acc.is_array()) return {who + ": no held-out errors stored: its accuracy is unknown"};
        for (const auto& f : acc) {
            if (!f.is_object()) continue;
            const auto name = f.find("fit");
            if (name == f.end() || !name->is_string() ||
                name->get<std::string>().find("batched") == std::string::npos)
                continue;
            double med = number(f, "held_out_median_pct"), p90 = number(f, "held_out_p90_pct");
            if (std::isnan(med)) { // stored before the median was: from the held-out points
                std::vector<double> e;
                if (const auto pts = f.find("held_out_points"); pts != f.end() && pts->is_array())
                    for (const auto& pt : *pts)
                        if (pt.is_array() && pt.size() == 2 && pt[0].is_number() &&
                            pt[1].is_number() && pt[0].get<double>() > 0)
                            e.push_back(100 * std::fabs(pt[1].get<double>() - pt[0].get<double>()) /
                                        pt[0].get<double>());
                std::tie(med, p90) = medianP90(std::move(e));
            }
            if (std::isnan(med))
                out.push_back(who + ", " + name->get<std::string>() +
                              ": no held-out settings, its accuracy is unknown");
            else if (poorFit(med, p90))
                out.push_back(who + ", " + name->get<std::string>() + ": held-out error median " +
                              pctText(med) + ", p90 " + pctText(p90) +
                              " (above 20 % / 50 %): a poor fit, simulations with it are not "
                              "to be trusted");
        }
        return out;
    }
    if (m.kind == "ala") {
        const auto cfgs = acc.is_object() ? acc.find("configurations") : acc.end();
        if (!acc.is_object() || cfgs == acc.end() || !cfgs->is_array())
            return {who + ": no held-out errors stored: its accuracy is unknown"};
        bool found = false;
        for (const auto& c : *cfgs) {
            if (!c.is_object()) continue;
            const auto key = c.find("configuration");
            if (key == c.end() || !key->is_string()) continue;
            if (!config.empty() && key->get<std::string>() != config) continue;
            found = true;
            std::vector<double> e;
            if (const auto v = c.find("ala_pct"); v != c.end() && v->is_array())
                for (const auto& x : *v)
                    if (x.is_number() && std::isfinite(x.get<double>()))
                        e.push_back(x.get<double>());
            const auto [med, p90] = medianP90(std::move(e));
            if (!std::isnan(med) && poorFit(med, p90))
                out.push_back(who + ", configuration " + key->get<std::string>() +
                              ": held-out error median " + pctText(med) + ", p90 " + pctText(p90) +
                              " (above 20 % / 50 %): a poor fit, simulations with it are not to "
                              "be trusted");
        }
        if (!found && !config.empty())
            out.push_back(who + ", configuration " + config +
                          ": not evaluated on held-out pairs (a single measured pair): its "
                          "accuracy is unknown");
        return out;
    }
    return out;
}

std::vector<RequestMetrics> toRequestMetrics(const std::vector<RequestRow>& rows) {
    std::vector<RequestMetrics> out;
    out.reserve(rows.size());
    for (const RequestRow& r : rows) {
        RequestMetrics m;
        m.id = r.req;
        m.arrival = r.arrival;
        m.first_token = r.first_token;
        m.end = r.end;
        m.prompt_tokens = r.prompt;
        m.output_tokens = r.output;
        m.finished = r.finished;
        m.killed = r.killed;
        m.preemptions = r.preemptions;
        m.suspensions = r.suspensions;
        out.push_back(m);
    }
    return out;
}

std::string requestsCsv(const std::vector<RequestRow>& rows) {
    std::string out = "req,arrival_s,first_token_s,end_s,ttft_ms,e2el_ms,prompt_tokens,"
                      "output_tokens,preemptions,suspensions,status\n";
    char buf[512];
    auto num = [](double v, double scale) {
        if (std::isnan(v)) return std::string();
        char b[40];
        std::snprintf(b, sizeof b, "%.9g", v * scale);
        return std::string(b);
    };
    for (const RequestRow& r : rows) {
        std::snprintf(buf, sizeof buf, "%d,%s,%s,%s,%s,%s,%d,%d,%d,%d,%s\n", r.req,
                      num(r.arrival, 1).c_str(), num(r.first_token, 1).c_str(),
                      num(r.end, 1).c_str(), num(r.first_token - r.arrival, 1e3).c_str(),
                      num(r.end - r.arrival, 1e3).c_str(), r.prompt, r.output, r.preemptions,
                      r.suspensions,
                      r.killed     ? "killed"
                      : r.finished ? "finished"
                                   : "unfinished");
        out += buf;
    }
    return out;
}

} // namespace kairos::store
