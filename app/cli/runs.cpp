// kairos-cli runs list|show|compare|delete|export and models list|show: what a Kairos
// database holds.
#include "checks.h"
#include "commands.h"
#include "metrics/compare.h"
#include "profiles.h"
#include "run/pipeline.h"
#include "run/sweep.h"
#include "store/store.h"
#include "util/atomic_file.h"
#include "util/json_line.h"
#include "util/json_number.h"
#include "util/text.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kairos::cli {

namespace {

struct RunsArgs {
    std::string db;
    std::int64_t limit = 0;
    bool json = false;
    std::vector<std::int64_t> ids;
    std::string csv_out, json_out;
    bool spec_only = false, toml = false, quiet = false;
};

std::string dbPath(const RunsArgs& a) {
    return a.db.empty() ? store::Store::defaultPath() : a.db;
}

store::RunInfo need(const store::Store& s, std::int64_t id) {
    auto r = s.run(id);
    if (!r) throw std::invalid_argument("no run " + std::to_string(id) + " in " + s.path());
    return *r;
}

// A stored JSON column, or an error naming the database, the run and the column when it
// is not valid JSON (a database changed outside Kairos).
// `row` names it ("run 3", "sweep 1").
nlohmann::json storedJson(const std::string& db, const std::string& row, const char* name,
                          const std::string& text) {
    auto j = parseJsonLenient(text);
    if (j.is_discarded() || jsonDepth(text) > kMaxJsonDepth)
        throw store::StoreError(db, row + ": its stored " + name +
                                        " is not valid JSON (changed outside Kairos?)");
    return j;
}

nlohmann::json column(const std::string& db, const store::RunInfo& r, const char* name,
                      const std::string& text) {
    return storedJson(db, "run " + std::to_string(r.id), name, text);
}

// What a stored column's JSON reads as, or an error naming the database and the row when
// it has the wrong shape (a string where a number was, a missing member): nlohmann's own
// errors are not a bug of Kairos but a database changed outside it.
template <class F> auto fromStored(const std::string& db, const std::string& row, F&& read) {
    try {
        return read();
    } catch (const nlohmann::json::exception& e) {
        throw store::StoreError(db, row + ": its stored JSON has the wrong shape (" +
                                        std::string(e.what()) + "; changed outside Kairos?)");
    }
}

// A stored JSON text as JSON, or its text as a string when it is not valid JSON (what a
// listing shows of a corrupt row instead of failing on every row).
nlohmann::json lenient(const std::string& text) {
    auto j = parseJsonLenient(text);
    if (j.is_discarded() || jsonDepth(text) > kMaxJsonDepth)
        return nlohmann::json{{"invalid_json", text.substr(0, 200)}};
    return j;
}

Summary summaryOf(const std::string& db, const store::RunInfo& r) {
    return fromStored(db, "run " + std::to_string(r.id),
                      [&] { return Summary::fromJson(column(db, r, "summary", r.summary_json)); });
}

nlohmann::json infoJson(const std::string& db, const store::RunInfo& r, bool with_summary) {
    nlohmann::json j = {{"id", r.id},
                        {"created_at", r.created_at},
                        {"workload", r.workload_name},
                        {"workload_hash", r.workload_hash},
                        {"num_requests", r.num_requests},
                        {"policy", r.policy},
                        {"params", column(db, r, "params", r.params_json)},
                        {"exec_model", r.exec_model},
                        {"limits", column(db, r, "limits", r.limits_json)},
                        {"label", r.label},
                        {"spec", r.spec_json.empty() ? nlohmann::json(nullptr)
                                                     : column(db, r, "spec", r.spec_json)},
                        {"kairos_version", r.kairos_version}};
    if (with_summary) j["summary"] = column(db, r, "summary", r.summary_json);
    return j;
}

// Names from the database printed to a terminal: escaped (text::printable).
std::string term(const std::string& s) {
    return text::printable(s);
}

std::string fmt(double v, const char* f) {
    if (!std::isfinite(v)) return "-";
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

void list(const RunsArgs& a) {
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    const auto runs = s.listRuns(a.limit);
    if (a.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& r : runs) {
            try {
                j.push_back(infoJson(s.path(), r, false));
            } catch (const store::StoreError& e) {
                j.push_back({{"id", r.id}, {"error", e.what()}});
            }
        }
        std::printf("%s\n", j.dump(2).c_str());
        return;
    }
    std::printf("%6s  %-24s  %-22s %8s  %-28s %9s %12s %12s  %s\n", "id", "created (UTC)",
                "workload", "requests", "policy", "completed", "mean TTFT", "p99 E2EL", "label");
    for (const auto& r : runs) {
        const auto j = lenient(r.summary_json);
        auto num = [&](const char* k) {
            const auto it = j.find(k);
            return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
        };
        std::printf("%6lld  %-24s  %-22.22s %8lld  %-28.28s %9s %9s ms %9s ms  %s\n",
                    static_cast<long long>(r.id), term(r.created_at).c_str(),
                    term(r.workload_name).c_str(), static_cast<long long>(r.num_requests),
                    term(r.policy).c_str(), fmt(num("completed"), "%.0f").c_str(),
                    fmt(num("mean_ttft_ms"), "%.1f").c_str(),
                    fmt(num("p99_e2el_ms"), "%.1f").c_str(), term(r.label).c_str());
    }
    std::printf("%zu run(s) in %s\n", runs.size(), s.path().c_str());
}

void show(const RunsArgs& a) {
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    for (std::int64_t id : a.ids) {
        const auto r = need(s, id);
        if (a.json) {
            std::printf("%s\n", infoJson(s.path(), r, true).dump(2).c_str());
            continue;
        }
        std::printf("run %lld (%s, Kairos %s)%s\nworkload: %s (%lld requests, content %s)\n"
                    "params: %s\nlimits: %s\n",
                    static_cast<long long>(r.id), term(r.created_at).c_str(),
                    term(r.kairos_version).c_str(),
                    r.label.empty() ? "" : (" \"" + term(r.label) + "\"").c_str(),
                    term(r.workload_name).c_str(), static_cast<long long>(r.num_requests),
                    term(r.workload_hash).c_str(), term(r.params_json).c_str(),
                    term(r.limits_json).c_str());
        std::fputs(summaryOf(s.path(), r).table().c_str(), stdout);
    }
}

// Runs a stored run's RunSpec again and says whether every metric came out the same.
void rerun(const RunsArgs& a) {
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    const auto r = need(s, a.ids.at(0));
    if (r.spec_json.empty())
        throw std::invalid_argument("run " + std::to_string(r.id) +
                                    " was stored without its RunSpec (before Kairos stored "
                                    "them): it cannot be re-run exactly");
    const std::string row = "run " + std::to_string(r.id);
    const RunSpec spec = fromStored(s.path(), row, [&] {
        return RunSpec::fromJson(column(s.path(), r, "spec", r.spec_json), s.path() + ": " + row);
    });
    if (a.spec_only) {
        std::fputs(a.toml ? spec.toToml().c_str() : (spec.toJson().dump(2) + "\n").c_str(), stdout);
        return;
    }
    const RunResult res = runSpec(spec, app::runContext());
    const Summary stored = summaryOf(s.path(), r);
    const auto diffs = differingMetrics(stored, res.summary);
    const auto differ = diffs.size();
    if (differ) std::printf("%-24s %16s %16s\n", "metric", "stored", "re-run");
    for (const MetricDifference& d : diffs)
        std::printf("%-24s %16.6g %16.6g\n", d.name.c_str(), d.stored, d.rerun);
    if (!a.quiet) std::fputs(res.summary.table().c_str(), stdout);
    std::printf("run %lld re-run: %s\n", static_cast<long long>(r.id),
                differ ? (std::to_string(differ) + " metrics differ from the stored run").c_str()
                       : "every metric equals the stored run's");
    if (differ && r.kairos_version != KAIROS_VERSION)
        std::printf("(stored by Kairos %s; this is %s)\n", term(r.kairos_version).c_str(),
                    KAIROS_VERSION);
    if (differ) throw ExitCode{1};
}

// The stored sweeps, newest first; or one sweep's table (as kairos-cli sweep printed it,
// or as CSV) and, with --runs, each run's point, seed and status.
void sweeps(const RunsArgs& a) {
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    if (a.ids.empty()) {
        const auto all = s.listSweeps();
        if (a.json) {
            nlohmann::json j = nlohmann::json::array();
            for (const auto& w : all)
                j.push_back({{"id", w.id},
                             {"name", w.name},
                             {"runs", w.runs},
                             {"created_at", w.created_at},
                             {"kairos_version", w.kairos_version}});
            std::printf("%s\n", j.dump(2).c_str());
            return;
        }
        std::printf("%-5s %-24s %6s  %s\n", "id", "created", "runs", "name");
        for (const auto& w : all)
            std::printf("%-5lld %-24s %6lld  %s\n", static_cast<long long>(w.id),
                        term(w.created_at).c_str(), static_cast<long long>(w.runs),
                        term(w.name).c_str());
        return;
    }
    const auto w = s.sweep(a.ids.front());
    if (!w)
        throw std::invalid_argument("no sweep " + std::to_string(a.ids.front()) + " in " +
                                    s.path());
    const std::string row = "sweep " + std::to_string(w->id);
    const auto def = fromStored(s.path(), row, [&] {
        return sweep::Definition::fromJson(
            storedJson(s.path(), row, "definition", w->definition_json), s.path() + ": " + row);
    });
    const nlohmann::json results = storedJson(s.path(), row, "results", w->results_json);
    // The table again from its stored JSON (the numbers as they were written).
    const sweep::Table t = fromStored(
        s.path(), row, [&] { return sweep::Table::fromJson(results, s.path() + ": " + row); });
    if (a.json) {
        std::printf("%s\n", nlohmann::json{{"id", w->id},
                                           {"name", w->name},
                                           {"definition", def.toJson()},
                                           {"results", results}}
                                .dump(2)
                                .c_str());
        return;
    }
    if (!a.csv_out.empty()) {
        writeFileAtomically(a.csv_out, [&](std::ostream& o) { o << t.csv(); });
        return;
    }
    std::printf("sweep %lld \"%s\" (%s, Kairos %s): %lld runs, %d seed%s\n",
                static_cast<long long>(w->id), term(w->name).c_str(), term(w->created_at).c_str(),
                term(w->kairos_version).c_str(), static_cast<long long>(w->runs), def.seeds,
                def.seeds == 1 ? "" : "s");
    std::fputs(t.text().c_str(), stdout);
}

void compare(const RunsArgs& a) {
    if (a.ids.size() != 2) throw std::invalid_argument("runs compare takes two run ids: A B");
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    const auto ra = need(s, a.ids[0]), rb = need(s, a.ids[1]);
    const Summary sa = summaryOf(s.path(), ra), sb = summaryOf(s.path(), rb);
    const auto qa = store::toRequestMetrics(s.runRequests(ra.id));
    const auto qb = store::toRequestMetrics(s.runRequests(rb.id));
    const Comparison c =
        kairos::compare({&sa, &qa, ra.workload_hash}, {&sb, &qb, rb.workload_hash});
    if (a.json) {
        nlohmann::json d = nlohmann::json::array();
        for (const auto& x : c.deltas)
            d.push_back({{"key", x.key},
                         {"label", x.label},
                         {"a", jsonNumber(x.before)},
                         {"b", jsonNumber(x.after)},
                         {"change", jsonNumber(x.change)},
                         {"relative", jsonNumber(x.relative)},
                         {"verdict", x.verdict},
                         {"basis", basisName(x.basis)}});
        std::printf("%s\n", nlohmann::json{{"a", infoJson(s.path(), ra, false)},
                                           {"b", infoJson(s.path(), rb, false)},
                                           {"same_workload", c.same_workload},
                                           {"same_completed", c.same_completed},
                                           {"common_completed", c.common},
                                           {"only_a", c.only_before},
                                           {"only_b", c.only_after},
                                           {"note", c.note},
                                           {"deltas", d}}
                                .dump(2)
                                .c_str());
        return;
    }
    std::printf("A: run %lld, %s on %s\nB: run %lld, %s on %s\n", static_cast<long long>(ra.id),
                term(ra.policy).c_str(), term(ra.workload_name).c_str(),
                static_cast<long long>(rb.id), term(rb.policy).c_str(),
                term(rb.workload_name).c_str());
    std::fputs(deltaTable(c, "A (run " + std::to_string(ra.id) + ")",
                          "B (run " + std::to_string(rb.id) + ")")
                   .c_str(),
               stdout);
}

void remove(const RunsArgs& a) {
    store::Store s(dbPath(a), store::Store::Open::Existing);
    for (std::int64_t id : a.ids)
        if (!s.deleteRun(id))
            throw std::invalid_argument("no run " + std::to_string(id) + " in " + s.path());
        else
            std::printf("deleted run %lld\n", static_cast<long long>(id));
}

void exportRun(const RunsArgs& a) {
    if (a.ids.size() != 1) throw std::invalid_argument("runs export takes one run id");
    if (a.csv_out.empty() && a.json_out.empty())
        throw std::invalid_argument("runs export: give --csv FILE and/or --json FILE");
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    const auto r = need(s, a.ids[0]);
    if (!a.csv_out.empty()) {
        const std::string text = store::requestsCsv(s.runRequests(r.id));
        writeFileAtomically(a.csv_out, [&](std::ostream& out) { out << text; });
    }
    if (!a.json_out.empty()) {
        const std::string text = infoJson(s.path(), r, true).dump(2) + "\n";
        writeFileAtomically(a.json_out, [&](std::ostream& out) { out << text; });
    }
}

void listModels(const RunsArgs& a) {
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    const auto models = s.listModels();
    if (a.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const auto& m : models)
            j.push_back({{"id", m.id},
                         {"kind", m.kind},
                         {"name", m.name},
                         {"created_at", m.created_at},
                         {"params", lenient(m.params)},
                         {"training", lenient(m.training)}});
        std::printf("%s\n", j.dump(2).c_str());
        return;
    }
    std::printf("%6s  %-6s %-36s %-24s  %s\n", "id", "kind", "name", "created (UTC)", "training");
    for (const auto& m : models) {
        const auto t = parseJsonLenient(m.training);
        const std::string src = t.is_object() && t.contains("source") && t["source"].is_string()
                                    ? t["source"].get<std::string>()
                                    : std::string();
        std::printf("%6lld  %-6s %-36.36s %-24s  %s\n", static_cast<long long>(m.id),
                    term(m.kind).c_str(), term(m.name).c_str(), term(m.created_at).c_str(),
                    term(src).c_str());
    }
    std::printf("%zu model(s) in %s\n", models.size(), s.path().c_str());
}

void showModel(const RunsArgs& a) {
    const store::Store s(dbPath(a), store::Store::Open::Existing);
    for (std::int64_t id : a.ids) {
        const auto m = s.model(id);
        if (!m) throw std::invalid_argument("no model " + std::to_string(id) + " in " + s.path());
        const nlohmann::json j = {{"id", m->id},
                                  {"kind", m->kind},
                                  {"name", m->name},
                                  {"created_at", m->created_at},
                                  {"params", lenient(m->params)},
                                  {"training", lenient(m->training)},
                                  {"accuracy", lenient(m->accuracy)}};
        std::printf("%s\n", j.dump(2).c_str());
    }
}

} // namespace

constexpr long long kMaxId = std::numeric_limits<std::int64_t>::max();

void addRuns(CLI::App& app) {
    auto a = std::make_shared<RunsArgs>();
    auto* c = app.add_subcommand("runs", "The runs stored in a Kairos database");
    c->require_subcommand(1);
    auto dbOpt = [&](CLI::App* s) {
        s->add_option("--db", a->db,
                      "Database file (default $KAIROS_DB, else ~/.local/share/kairos/kairos.db)");
    };
    auto* l = c->add_subcommand("list", "The stored runs, newest first");
    dbOpt(l);
    l->add_option("--limit", a->limit, "At most this many")->check(whole(1, 1000000000000LL));
    l->add_flag("--json", a->json, "As JSON");
    l->callback([a] { list(*a); });
    auto* sh = c->add_subcommand("show", "A run's settings and summary");
    dbOpt(sh);
    sh->add_option("id", a->ids, "Run id(s)")->required()->check(whole(1, kMaxId));
    sh->add_flag("--json", a->json, "As JSON");
    sh->callback([a] { show(*a); });
    auto* cmp = c->add_subcommand("compare", "Two runs' metrics and the change from A to B");
    dbOpt(cmp);
    cmp->add_option("ids", a->ids, "A B")->required()->expected(2)->check(whole(1, kMaxId));
    cmp->add_flag("--json", a->json, "As JSON");
    cmp->callback([a] { compare(*a); });
    auto* rr = c->add_subcommand(
        "rerun", "Run a stored run's RunSpec again and check every metric against the stored "
                 "one (exit 1 if any differs); --spec prints the spec instead");
    dbOpt(rr);
    rr->add_option("id", a->ids, "Run id")->required()->expected(1)->check(whole(1, kMaxId));
    rr->add_flag("--spec", a->spec_only, "Print the run's RunSpec (JSON) and run nothing");
    rr->add_flag("--toml", a->toml, "With --spec: as TOML");
    rr->add_flag("--quiet,-q", a->quiet, "Print only what differs");
    rr->callback([a] { rerun(*a); });
    auto* sw = c->add_subcommand(
        "sweeps", "Stored sweeps (kairos-cli sweep --db); with an id, that sweep's table");
    dbOpt(sw);
    sw->add_option("id", a->ids, "Sweep id")->expected(0, 1)->check(whole(1, kMaxId));
    sw->add_flag("--json", a->json, "As JSON (with an id: the definition and the table)");
    sw->add_option("--csv", a->csv_out, "With an id: write the table as CSV here");
    sw->callback([a] { sweeps(*a); });
    auto* del = c->add_subcommand("delete", "Delete runs (and workloads no run uses)");
    dbOpt(del);
    del->add_option("id", a->ids, "Run id(s)")->required()->check(whole(1, kMaxId));
    del->callback([a] { remove(*a); });
    auto* ex = c->add_subcommand("export", "A run's per-request results (CSV) and summary (JSON)");
    dbOpt(ex);
    ex->add_option("id", a->ids, "Run id")->required()->expected(1)->check(whole(1, kMaxId));
    ex->add_option("--csv", a->csv_out, "Per-request results as CSV");
    ex->add_option("--json", a->json_out, "Settings and summary as JSON");
    ex->callback([a] { exportRun(*a); });

    auto* models = app.add_subcommand("models", "The fitted models stored in a Kairos database");
    models->require_subcommand(1);
    auto* ml = models->add_subcommand("list", "Stored models: id, kind, name, training data");
    dbOpt(ml);
    ml->add_flag("--json", a->json, "As JSON");
    ml->callback([a] { listModels(*a); });
    auto* ms =
        models->add_subcommand("show", "A model's parameters, training data and errors (JSON)");
    dbOpt(ms);
    ms->add_option("id", a->ids, "Model id(s)")->required()->check(whole(1, kMaxId));
    ms->callback([a] { showModel(*a); });
}

} // namespace kairos::cli
