// The SQLite store: schema and migrations, runs written and read back exactly, workloads
// by content, deletion, profiles and models, bad databases, a writer killed mid-write
// (kill -9) and a reader beside a writer in another process.
#include "exec/execution_model.h"
#include "metrics/compare.h"
#include "metrics/request_metrics.h"
#include "metrics/summary.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "store/store.h"
#include "test_util.h"
#include "workload/generators.h"

#include <QtTest>
#include <cmath>
#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kairos;
using store::Store;

namespace {

struct Run {
    Workload w;
    RunLog log;
    Summary summary;
    std::vector<RequestMetrics> per;
};

Run simulateChat(std::size_t n, std::uint64_t seed, const char* policy = "fcfs") {
    Run r;
    GenerateSpec g;
    g.count = n;
    g.arrivals.rate = 8;
    g.arrivals.seed = seed;
    g.prompt = LengthDist::parse("lognormal:300,0.8,max=2000");
    g.output = LengthDist::parse("lognormal:100,0.9,max=800");
    r.w = generateWorkload(g);
    r.w.name = "chat" + std::to_string(seed);
    EngineLimits lim;
    lim.kv_capacity_tokens = 20000;
    auto s = test::policy(policy);
    r.log = simulate(r.w, EteModel(EteParams{0.02, 2e-4, 0, 0.03, 3e-4, 2e-7}), *s, lim);
    SummaryOptions so;
    so.workload = &r.w;
    r.summary = summarize(r.log, so);
    r.per = perRequest(r.log);
    return r;
}

store::RunRecord recordOf(const Run& r, const std::string& label = "") {
    store::RunRecord rec;
    rec.workload = &r.w;
    rec.policy = r.log.policy;
    rec.params_json = R"({"C":0.8})";
    rec.exec_model = r.log.exec_model;
    rec.label = label;
    rec.summary = &r.summary;
    rec.per_request = r.per;
    return rec;
}

std::string scratch(const std::string& name) {
    const std::string p = test::tempPath(name);
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((p + suffix).c_str());
    return p;
}

std::string pragma(sqlite3* db, const char* sql) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    std::string out;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return out;
}

bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// Every stored run is whole: as many request rows as its workload has requests.
void checkWhole(const Store& s) {
    QCOMPARE(pragma(s.handle(), "PRAGMA integrity_check"), std::string("ok"));
    QCOMPARE(pragma(s.handle(), "PRAGMA foreign_key_check"), std::string());
    for (const auto& r : s.listRuns())
        QCOMPARE(std::int64_t(s.runRequests(r.id).size()), r.num_requests);
}

} // namespace

class TestStore : public QObject {
    Q_OBJECT
private slots:
    // A new database: the current schema, WAL, foreign keys, the default path's rules.
    void freshSchema() {
        const std::string path = scratch("fresh/sub/kairos.db"); // folders are created
        Store s(path);
        QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
        QCOMPARE(pragma(s.handle(), "PRAGMA journal_mode"), std::string("wal"));
        QCOMPARE(pragma(s.handle(), "PRAGMA foreign_keys"), std::string("1"));
        QCOMPARE(s.countRuns(), std::int64_t(0));
        qputenv("KAIROS_DB", "/x/y.db");
        QCOMPARE(Store::defaultPath(), std::string("/x/y.db"));
        qunsetenv("KAIROS_DB");
        qputenv("XDG_DATA_HOME", "/data");
        QCOMPARE(Store::defaultPath(), std::string("/data/kairos/kairos.db"));
        qunsetenv("XDG_DATA_HOME");
    }

    // A run written and read back: settings, summary (its key metrics equal the
    // original's), and every request's numbers bit for bit (NaN stays NaN).
    void runRoundTrip() {
        const Run a = simulateChat(300, 1);
        Store s(scratch("rt.db"));
        const auto id = s.putRun(recordOf(a, "first"));
        const auto info = s.run(id);
        QVERIFY(info);
        QCOMPARE(info->policy, a.log.policy);
        QCOMPARE(info->label, std::string("first"));
        QCOMPARE(info->num_requests, std::int64_t(300));
        QCOMPARE(info->workload_name, std::string("chat1"));
        QCOMPARE(info->workload_hash, store::contentHash(a.w));
        QCOMPARE(nlohmann::json::parse(info->params_json).at("C").get<double>(), 0.8);
        QVERIFY(info->created_at.size() == 24 && info->created_at.back() == 'Z');
        const Summary back = Summary::fromJson(nlohmann::json::parse(info->summary_json));
        const auto k0 = keyMetrics(a.summary), k1 = keyMetrics(back);
        QCOMPARE(k1.size(), k0.size());
        for (std::size_t i = 0; i < k0.size(); ++i) {
            QCOMPARE(k1[i].key, k0[i].key);
            QVERIFY2(same(k1[i].value, k0[i].value), k0[i].key.c_str());
        }
        QVERIFY(std::isfinite(k1[6].value)); // p99 TTFT survives
        const auto rows = s.runRequests(id);
        QCOMPARE(rows.size(), a.per.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto& m = a.per[i];
            QCOMPARE(rows[i].req, m.id);
            QVERIFY(same(rows[i].arrival, m.arrival) && same(rows[i].first_token, m.first_token) &&
                    same(rows[i].end, m.end));
            QCOMPARE(rows[i].output, m.output_tokens);
            QCOMPARE(rows[i].preemptions, m.preemptions);
            QCOMPARE(rows[i].finished, m.finished);
        }
        // The CSV export: a header and a line per request.
        const std::string csv = store::requestsCsv(rows);
        QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 301L);
    }

    // Workloads by content: the same requests under another name are one workload; a
    // changed request is another. Deleting runs removes their requests and, with the
    // last run, the workload.
    void workloadsAndDelete() {
        Run a = simulateChat(200, 2);
        Store s(scratch("wl.db"));
        const auto r1 = s.putRun(recordOf(a));
        a.w.name = "renamed";
        const auto r2 = s.putRun(recordOf(a));
        QCOMPARE(s.run(r1)->workload_id, s.run(r2)->workload_id);
        Run b = a;
        b.w.requests[5].output_tokens += 1;
        QVERIFY(store::contentHash(b.w) != store::contentHash(a.w));
        const auto r3 = s.putRun(recordOf(b));
        QVERIFY(s.run(r3)->workload_id != s.run(r1)->workload_id);
        QCOMPARE(s.countRuns(), std::int64_t(3));
        QVERIFY(s.deleteRun(r1));
        QVERIFY(!s.deleteRun(r1));
        QVERIFY(s.runRequests(r1).empty());
        QCOMPARE(pragma(s.handle(), "SELECT count(*) FROM workloads"), std::string("2"));
        QVERIFY(s.deleteRun(r2));
        QCOMPARE(pragma(s.handle(), "SELECT count(*) FROM workloads"), std::string("1"));
        QCOMPARE(s.listRuns().size(), std::size_t(1));
        checkWhole(s);
    }

    // Profiles with measurements, and fitted models.
    void profilesAndModels() {
        Store s(scratch("pm.db"));
        const auto p = s.putProfile("cpu", "Xeon", "smollm-135m", "synthetic", R"({"a":1})",
                                    {{"prefill", 1, 128, 0, 0.5}, {"decode", 8, 1, 4096, 0.02}});
        const auto ps = s.listProfiles();
        QCOMPARE(ps.size(), std::size_t(1));
        QCOMPARE(ps[0].id, p);
        QCOMPARE(ps[0].measurements, std::int64_t(2));
        const auto m = s.measurements(p);
        QCOMPARE(m[1].kind, std::string("decode"));
        QCOMPARE(m[1].context, std::int64_t(4096));
        QCOMPARE(m[1].seconds, 0.02);
        // A bad measurement rolls the whole profile back.
        QVERIFY_THROWS_EXCEPTION(
            store::StoreError, s.putProfile("x", "d", "m", "", "{}", {{"prefill", 1, 1, 0, NAN}}));
        QCOMPARE(s.listProfiles().size(), std::size_t(1));
        store::ModelInfo mi;
        mi.kind = "ete";
        mi.name = "llama2-70b a100 tp2";
        mi.params = R"({"a":1e-7})";
        mi.training = R"({"file":"splitwise_perf_model.csv"})";
        mi.accuracy = R"({"mape":0.012})";
        const auto id = s.putModel(mi);
        QCOMPARE(s.model(id)->params, mi.params);
        QCOMPARE(s.listModels("ete").size(), std::size_t(1));
        QCOMPARE(s.listModels("ala").size(), std::size_t(0));
        mi.params = "{not json";
        QVERIFY_THROWS_EXCEPTION(store::StoreError, s.putModel(mi));
    }

    // A database at schema version 1 (built from the first migration, as an older Kairos
    // left it, with a run in it) is migrated forward on open; its run keeps its data. A
    // database from a newer Kairos is refused with a message naming the file.
    void migrationFromVersion1() {
        const std::string path = scratch("v1.db");
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            QCOMPARE(sqlite3_exec(db, store::migrationSql(1), nullptr, nullptr, nullptr),
                     SQLITE_OK);
            const char* fill =
                "PRAGMA user_version = 1;"
                "INSERT INTO workloads(hash, name, source, num_requests) VALUES ('00ff', 'old', "
                "'f.jsonl', 1);"
                "INSERT INTO runs(workload_id, policy, params, exec_model, limits, summary, "
                "created_at, kairos_version) VALUES (1, 'fcfs', '{}', 'ete', '{}', "
                "'{\"completed\": 1, \"mean_ttft_ms\": 12.5}', '2026-01-01T00:00:00.000Z', "
                "'0.0.9');"
                "INSERT INTO run_requests VALUES (1, 0, 0.0, 0.0125, 0.5, 10, 5, 0, 0, 1);";
            QCOMPARE(sqlite3_exec(db, fill, nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        {
            Store s(path);
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
            const auto runs = s.listRuns();
            QCOMPARE(runs.size(), std::size_t(1));
            QCOMPARE(runs[0].label, std::string()); // the column version 2 added
            QCOMPARE(runs[0].kairos_version, std::string("0.0.9"));
            QCOMPARE(Summary::fromJson(nlohmann::json::parse(runs[0].summary_json)).ttft_ms.mean,
                     12.5);
            QCOMPARE(s.runRequests(1).size(), std::size_t(1));
            checkWhole(s);
        }
        {
            sqlite3* db = nullptr;
            sqlite3_open(path.c_str(), &db);
            sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
            sqlite3_close(db);
        }
        try {
            Store s(path);
            QFAIL("a newer schema was accepted");
        } catch (const store::StoreError& e) {
            QVERIFY2(QString(e.what()).contains("v1.db") && QString(e.what()).contains("newer"),
                     e.what());
        }
    }

    // Not a database: a clear error naming the file, and the file is left alone.
    void notADatabase() {
        const std::string path = scratch("text.db");
        { std::ofstream(path) << "this is a workload, not a database\n"; }
        try {
            Store s(path);
            QFAIL("a text file opened as a database");
        } catch (const store::StoreError& e) {
            QVERIFY2(QString(e.what()).startsWith(QString::fromStdString(path)), e.what());
        }
        std::ifstream in(path);
        std::string line;
        std::getline(in, line);
        QCOMPARE(line, std::string("this is a workload, not a database"));
    }

    // kill -9 in the middle of a write (a child process stops itself halfway through a
    // run's 3,000 request rows and is killed there; then children killed at random
    // moments): the database is valid, every run written before is whole, the killed
    // run is absent, and the store keeps working.
    void killedWriterLeavesItValid() {
        const std::string path = scratch("crash.db");
        const Run a = simulateChat(3000, 3);
        {
            Store s(path);
            s.putRun(recordOf(a, "before 1"));
            s.putRun(recordOf(a, "before 2"));
        }
        int pipefd[2];
        QCOMPARE(pipe(pipefd), 0);
        const pid_t pid = fork();
        QVERIFY(pid >= 0);
        if (pid == 0) { // the writer
            close(pipefd[0]);
            Store s(path);
            s.putRun(recordOf(a, "killed"), [&](std::int64_t rows) {
                if (rows >= 1500) {
                    const char c = 'x';
                    if (write(pipefd[1], &c, 1) != 1) _exit(3);
                    for (;;) pause(); // halfway: wait to be killed
                }
            });
            _exit(0); // not reached
        }
        close(pipefd[1]);
        char c = 0;
        QCOMPARE(read(pipefd[0], &c, 1), ssize_t(1)); // the child is inside the transaction
        close(pipefd[0]);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        QVERIFY(WIFSIGNALED(status));
        {
            Store s(path);
            QCOMPARE(s.countRuns(), std::int64_t(2));
            for (const auto& r : s.listRuns()) QVERIFY(r.label.rfind("before", 0) == 0);
            checkWhole(s);
        }
        // Writers killed at random moments: whatever is stored is whole.
        std::srand(7);
        for (int round = 0; round < 6; ++round) {
            const pid_t w = fork();
            QVERIFY(w >= 0);
            if (w == 0) {
                Store s(path);
                for (;;) s.putRun(recordOf(a, "loop"));
            }
            usleep(useconds_t(20000 + std::rand() % 150000));
            kill(w, SIGKILL);
            waitpid(w, &status, 0);
            Store s(path);
            checkWhole(s);
        }
        Store s(path);
        qInfo("runs whole after 6 random kills: %lld (2 before)",
              static_cast<long long>(s.countRuns()));
        QVERIFY(s.countRuns() >= 2);
        s.putRun(recordOf(a, "after")); // still writable
        checkWhole(s);
    }

    // A reader in this process while another process writes: the reader never fails and
    // never sees a run without its requests (a snapshot per query), and sees the count
    // grow to what the writer wrote.
    void readerBesideWriter() {
        const std::string path = scratch("concurrent.db");
        const Run a = simulateChat(2000, 4);
        { Store s(path); }
        const int n = 25;
        const pid_t pid = fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            try {
                Store s(path);
                for (int i = 0; i < n; ++i) s.putRun(recordOf(a, "w" + std::to_string(i)));
            } catch (...) {
                _exit(1);
            }
            _exit(0);
        }
        Store reader(path);
        std::int64_t seen_max = 0, reads = 0;
        int status = 0;
        for (;;) {
            const bool done = waitpid(pid, &status, WNOHANG) == pid;
            const auto runs = reader.listRuns();
            seen_max = std::max<std::int64_t>(seen_max, std::int64_t(runs.size()));
            if (!runs.empty())
                QCOMPARE(std::int64_t(reader.runRequests(runs.front().id).size()),
                         runs.front().num_requests);
            ++reads;
            if (done) break;
        }
        QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        QCOMPARE(reader.countRuns(), std::int64_t(n));
        QCOMPARE(seen_max, std::int64_t(n));
        QVERIFY(reads > 1);
        checkWhole(reader);
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "tst_store.moc"
