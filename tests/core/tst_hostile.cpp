// The generated hostile-input suite: every option of every kairos-cli command, as the
// program itself lists them (kairos-cli --option-table: command, name, kind, whether a path
// is read or written), tried at its boundaries and beyond, and every path option with
// links, FIFOs, devices, folders and the paths of the command's own inputs. Nobody has to
// remember to add a case for a new option: it is in the table, so it is tried.
//
// Each case runs one command: a base invocation of that command that is quick (below), with
// one option replaced or added. Every case must
//   - end with exit 0 or 2 (a verdict such as `runs rerun`'s 1 is allowed where stated);
//   - never print "internal error" or a sanitizer report, nor an escape character;
//   - when it fails (2), say "error:" and name the option, its value or the path at fault;
//   - leave the case's input workload and the planted victim file byte for byte as they were;
//   - finish within its time (a case still running then is a hang), except for the slow
//     commands (bench, reproduce, fit ala, the live model's commands), which are given a
//     few seconds and, when still working then, are stopped and counted as "accepted"; they
//     are tried on their own options (those shared with a quick command, the same
//     registration, are tried there) with fewer values.
// The ASan build runs a deterministic twelfth of the quick commands' cases
// (KAIROS_HOSTILE_SHARE) to keep CI's time; the dev build runs them all.
#include "test_util.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace {

struct Option {
    std::string command, name, type, role, help;
    bool flag = false, positional = false, multiple = false;
};

struct HostileCase {
    std::string command, option, value, label;
    QStringList args;
    bool slow = false;
    bool pair_json = false; // also --json on the same path: two outputs on one file
};

struct Result {
    int code = -1;
    bool finished = false, cut = false;
    QString out, err;
};

// Quick invocations of each command: {w} the case's workload (a copy, checked untouched),
// {db} a database with two runs and a sweep, {log} a run log with reasons, {tmp} the case's
// folder, {data} ../shared/data. A command missing here fails the suite (add one).
const std::map<std::string, std::string>& bases() {
    static const std::map<std::string, std::string> b = {
        {"simulate", "simulate --workload {w} --quiet"},
#if KAIROS_REPORT_CHARTS
        {"report", "report --workload {w} --html {tmp}/r.html"},
#else // built without the GUI libraries that draw the charts: --html is refused first
        {"report", "report --workload {w}"},
#endif
        {"generate", "generate --out {tmp}/g.jsonl --count 20"},
        {"explain", "explain {log} --at 1"},
        {"policies", "policies"},
        {"metrics", "metrics"},
        {"formats", "formats"},
        {"profiles", "profiles"},
        {"sweep", "sweep --workload {w} --quiet --policy fcfs"},
        {"capacity", "capacity --workload {w} --goodput ttft:2000 --quiet --tolerance 0.5"},
        {"runs", "runs list --db {db}"},
        {"runs list", "runs list --db {db}"},
        {"runs show", "runs show 1 --db {db}"},
        {"runs compare", "runs compare 1 2 --db {db}"},
        {"runs delete", "runs delete 2 --db {db}"},
        {"runs export", "runs export 1 --db {db} --csv {tmp}/e.csv"},
        {"runs rerun", "runs rerun 1 --db {db}"},
        {"runs sweeps", "runs sweeps --db {db}"},
        {"models", "models list --db {db}"},
        {"models list", "models list --db {db}"},
        {"models show", "models show 1 --db {db}"},
        {"fit", "fit ete --splitwise {data}/splitwise_perf_model.csv"},
        {"fit ete", "fit ete --splitwise {data}/splitwise_perf_model.csv"},
        {"fit ala", "fit ala --data {data}/llm_inference_bench.csv"},
        {"fit-profile", "fit-profile --splitwise {data}/splitwise_perf_model.csv --model "
                        "llama2-70b --hardware a100-80gb --name p --out {tmp}/p.json"},
        {"derive-profile", "derive-profile timelyllm --data {data} --out {tmp}/d.json"},
        {"profile-cpu", "profile-cpu --out {tmp}/cpu.json --repeats 1"},
        {"bench", "bench --requests 200"},
        // timely: the quickest experiment (0.1 s), and the one that takes --workload.
        {"reproduce", "reproduce timely --quick --quiet"},
        {"live", "live --workload {w} --limit 2 --quiet"},
        {"profile", "profile --quick --out {tmp}/prof.json"},
        {"validate", "validate --workload {w} --limit 2"},
        {"lengths", "lengths --workload {w} --out {tmp}/heads.safetensors --limit 8"},
        {"quality", "quality --prompts 2 --prompt-tokens 8 --answer-tokens 4"},
    };
    return b;
}

bool slowCommand(const std::string& c) {
    static const std::set<std::string> s = {"bench",   "reproduce", "fit ala",
                                            "live",    "profile",   "validate",
                                            "lengths", "quality",   "profile-cpu"};
    return s.count(c) > 0;
}

// Values tried on every option that takes one, by its kind.
// The slow commands (each case starts libtorch or trains a model) get the values that
// reach each kind of check once: empty, not a number, below and above every domain.
QStringList numberValues(bool slow) {
    if (slow) return {"nan", "-1", "1e308"};
    return {"0", "-1", "nan", "inf", "1e308", "", " 1", "1e-400"};
}
QStringList textValues(bool slow) {
    if (slow) return {"", ","};
    return {"", "junk", QStringLiteral("\x1b[31mred"), ",", QString(5000, QChar('x'))};
}
QStringList outputValues(bool slow) {
    if (slow) return {"", "{fifo}", "{w}"};
    return {"",           "{dir}", "{fifo}",      "/dev/full", "{tmp}/no/such/dir/f",
            "{dangling}", "{w}",   "{victimlink}"};
}
QStringList inputValues(bool slow) {
    if (slow) return {"", "{fifo}", "/dev/zero"};
    return {"",           "{dir}", "{fifo}",  "/dev/zero", "/dev/null", "{tmp}/missing",
            "{dangling}", "{nul}", "{victim}"};
}

QString runDir;

// The option table of kairos-cli, and of kairos-live (beside it, in a build with libtorch)
// for the commands kairos-cli hands over to it.
std::vector<Option> optionTable() {
    std::vector<Option> out;
    std::set<std::string> seen;
    const QString cli = QStringLiteral(KAIROS_CLI);
    const QString live = QFileInfo(cli).absolutePath() + QStringLiteral("/kairos-live");
    for (const QString& prog : {cli, live}) {
        if (prog == live && !QFileInfo::exists(live)) break;
        QProcess p;
        p.start(prog, {QStringLiteral("--option-table")});
        if (!p.waitForFinished(60000) || p.exitCode() != 0) return {};
        const auto j = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        std::set<std::string> mine;
        for (const auto& o : j) {
            const std::string cmd = o.at("command").get<std::string>();
            if (prog == live && seen.count(cmd)) continue;
            mine.insert(cmd);
            Option x;
            x.command = o.at("command").get<std::string>();
            x.name = o.at("name").get<std::string>();
            x.type = o.at("type").get<std::string>();
            x.role = o.at("role").get<std::string>();
            x.help = o.value("help", std::string());
            x.flag = o.at("flag").get<bool>();
            x.positional = o.at("positional").get<bool>();
            x.multiple = o.at("multiple").get<bool>();
            if (x.command.empty()) continue; // --config: tried through the commands below
            out.push_back(x);
        }
        seen.insert(mine.begin(), mine.end());
    }
    return out;
}

QStringList splitBase(const std::string& s) {
    return QString::fromStdString(s).split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

// CLI11's type name, with the domain after a colon ("FLOAT:[0.05, 10000]").
bool isNumberType(const std::string& t) {
    for (const char* k : {"INT", "UINT", "FLOAT", "NUMBER"})
        if (t.rfind(k, 0) == 0 &&
            (t.size() == std::strlen(k) || t[std::strlen(k)] == ':' || t[std::strlen(k)] == ' '))
            return true;
    return false;
}

// The base's arguments with `opt` set to `value` (replacing the base's own value, or added).
QStringList withOption(QStringList args, const Option& o, const QString& value) {
    const QString name = QString::fromStdString(o.name);
    if (o.positional) {
        // The positional's place: the first word after the command's words that is not an
        // option (the base gives one where the command needs it).
        // Right after the command's words when the base gives it (explain LOG, runs show 1),
        // else added at the end.
        const int words = int(splitBase(o.command).size());
        if (words < args.size() && !args[words].startsWith(QLatin1Char('-')))
            args[words] = value;
        else
            args << value;
        return args;
    }
    const int at = int(args.indexOf(name));
    if (at >= 0 && at + 1 < args.size() && !o.flag) {
        args[at + 1] = value;
        return args;
    }
    if (o.flag) {
        if (at < 0) args << name;
        return args;
    }
    args << name << value;
    return args;
}

std::vector<HostileCase> generate(const std::vector<Option>& table, QStringList* missing) {
    std::vector<HostileCase> cases;
    std::set<std::string> with_json;
    for (const Option& o : table)
        if (o.name == "--json") with_json.insert(o.command);
    // An option a slow command shares with a quick one (the same name, kind and domain: the
    // same registration, e.g. the run options of simulate and live) is tried on the quick one;
    // the slow command's own options are all tried.
    std::vector<Option> ordered = table;
    std::stable_sort(ordered.begin(), ordered.end(), [](const Option& a, const Option& b) {
        return slowCommand(a.command) < slowCommand(b.command);
    });
    std::set<std::string> seen;
    for (const Option& o : ordered) {
        const std::string key = o.name + "|" + o.type + "|" + o.role + "|" + (o.flag ? "f" : "");
        const bool shared = seen.count(key) > 0;
        seen.insert(key);
        if (shared && slowCommand(o.command)) continue;
        const auto b = bases().find(o.command);
        if (b == bases().end()) {
            if (!missing->contains(QString::fromStdString(o.command)))
                *missing << QString::fromStdString(o.command);
            continue;
        }
        const QStringList base = splitBase(b->second);
        auto add = [&](const QString& value, const QString& label) {
            HostileCase c;
            c.command = o.command;
            c.option = o.name;
            c.value = value.toStdString();
            c.label = label.toStdString();
            c.args = withOption(base, o, value);
            c.slow = slowCommand(o.command);
            cases.push_back(std::move(c));
        };
        if (o.flag) {
            add(QString(), QStringLiteral("flag"));
            continue;
        }
        const bool slow = slowCommand(o.command);
        if (o.role == "output") {
            for (const QString& v : outputValues(slow)) add(v, QStringLiteral("output"));
            if (with_json.count(o.command) && o.name != "--json") {
                add(QStringLiteral("{tmp}/same"), QStringLiteral("two outputs"));
                cases.back().pair_json = true;
            }
            continue;
        }
        if (o.role == "input" || o.role == "name-or-file" || o.role == "store" ||
            o.role == "folder") {
            for (const char* v : {"", "{dir}", "{fifo}", "/dev/zero", "/dev/null", "{tmp}/missing",
                                  "{dangling}", "{nul}", "{victim}"})
                add(QString::fromLatin1(v), QStringLiteral("path"));
            if (o.role != "store") continue;
            add(QStringLiteral("{w}"), QStringLiteral("path"));
            continue;
        }
        const QStringList values = isNumberType(o.type) ? numberValues(slow) : textValues(slow);
        for (const QString& v : values) add(v, QStringLiteral("value"));
    }
    return cases;
}

// Whether the case's command reads the workload {w} (its base names it).
bool b_reads_w(const HostileCase& c) {
    const auto b = bases().find(c.command);
    return b != bases().end() && b->second.find("{w}") != std::string::npos;
}

QByteArray bytesOf(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

struct Prepared {
    QString workload, db, log;
};

// One case in a folder of its own.
std::atomic<int> g_cut{0}; // slow cases still working at their cut-off (accepted)

QStringList runOne(const HostileCase& c, const Prepared& prep, int index) {
    QStringList failures;
    const QString tmp = runDir + QStringLiteral("/c") + QString::number(index);
    QDir().mkpath(tmp);
    const QString w = tmp + QStringLiteral("/w.jsonl");
    QFile::copy(prep.workload, w);
    const QString db = tmp + QStringLiteral("/runs.db");
    QFile::copy(prep.db, db);
    QFile::setPermissions(db, QFile::ReadOwner | QFile::WriteOwner);
    QDir().mkpath(tmp + QStringLiteral("/dir"));
    ::mkfifo((tmp + QStringLiteral("/fifo")).toLocal8Bit().constData(), 0600);
    {
        QFile v(tmp + QStringLiteral("/victim"));
        if (v.open(QIODevice::WriteOnly)) v.write("precious\n");
        QFile n(tmp + QStringLiteral("/nul"));
        if (n.open(QIODevice::WriteOnly)) n.write(QByteArray(4096, '\0'));
    }
    QFile::link(tmp + QStringLiteral("/nowhere/x"), tmp + QStringLiteral("/dangling"));
    QFile::link(tmp + QStringLiteral("/victim"), tmp + QStringLiteral("/victimlink"));
    auto subst = [&](QString s) {
        s.replace(QStringLiteral("{w}"), w);
        s.replace(QStringLiteral("{db}"), db);
        s.replace(QStringLiteral("{log}"), prep.log);
        s.replace(QStringLiteral("{dir}"), tmp + QStringLiteral("/dir"));
        s.replace(QStringLiteral("{fifo}"), tmp + QStringLiteral("/fifo"));
        s.replace(QStringLiteral("{dangling}"), tmp + QStringLiteral("/dangling"));
        s.replace(QStringLiteral("{victimlink}"), tmp + QStringLiteral("/victimlink"));
        s.replace(QStringLiteral("{victim}"), tmp + QStringLiteral("/victim"));
        s.replace(QStringLiteral("{nul}"), tmp + QStringLiteral("/nul"));
        s.replace(QStringLiteral("{tmp}"), tmp);
        s.replace(QStringLiteral("{data}"), QStringLiteral(KAIROS_SHARED_DATA));
        return s;
    };
    QStringList args;
    for (const QString& a : c.args) args << subst(a);
    // Two outputs on one path: the same value given to the case's option and to "--json"
    // where the base has none (the "{tmp}/same" value).
    if (c.pair_json) args << QStringLiteral("--json") << tmp + QStringLiteral("/same");
    const QByteArray w_before = bytesOf(w);
    const QByteArray victim_before = bytesOf(tmp + QStringLiteral("/victim"));
    QProcess p;
    p.setWorkingDirectory(tmp);
    QProcessEnvironment env = kairos::test::programEnvironment(tmp);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(KAIROS_CLI), args);
    Result r;
    const int limit_ms = c.slow ? 2500 : 60000;
    r.finished = p.waitForFinished(limit_ms);
    if (!r.finished) {
        p.kill();
        p.waitForFinished(5000);
        r.cut = c.slow;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    const QString what = QStringLiteral("kairos-cli ") + args.join(QLatin1Char(' ')).left(400) +
                         QStringLiteral("\n  exit ") + QString::number(r.code) +
                         QStringLiteral(": ") + r.err.left(600);
    auto check = [&](bool ok, const QString& why) {
        if (!ok) failures << why + QStringLiteral(": ") + what;
    };
    if (!r.finished && !r.cut) {
        check(false, QStringLiteral("did not finish (a hang)"));
        return failures;
    }
    check(!r.err.contains(QStringLiteral("internal error")), QStringLiteral("internal error"));
    check(!r.err.contains(QStringLiteral("AddressSanitizer")) &&
              !r.err.contains(QStringLiteral("runtime error:")) &&
              !r.err.contains(QStringLiteral("LeakSanitizer")),
          QStringLiteral("a sanitizer report"));
    check(!r.out.contains(QChar(0x1b)) && !r.err.contains(QChar(0x1b)),
          QStringLiteral("an escape character was printed"));
    // The workload must stay as it was where the command reads it (a command that does not,
    // bench, may write over it: it is just a file there).
    if (b_reads_w(c)) check(bytesOf(w) == w_before, QStringLiteral("the input workload changed"));
    check(bytesOf(tmp + QStringLiteral("/victim")) == victim_before ||
              c.value == "{victimlink}", // a link given as an output names its file
          QStringLiteral("the victim file changed"));
    if (r.cut) {
        ++g_cut;
        return failures;
    }
    const bool verdict = c.command == "runs rerun" && r.code == 1;
    check(r.code == 0 || r.code == 2 || verdict,
          QStringLiteral("exit ") + QString::number(r.code) + QStringLiteral(" (not 0 or 2)"));
    if (r.code == 2) {
        check(r.err.contains(QStringLiteral("error:")), QStringLiteral("no 'error:'"));
        const QString opt = QString::fromStdString(c.option);
        const QString val = subst(QString::fromStdString(c.value));
        const bool named =
            r.err.contains(opt) || (!val.isEmpty() && r.err.contains(val.left(200))) ||
            (!val.isEmpty() && r.err.contains(QFileInfo(val).fileName())) ||
            r.err.contains(QStringLiteral("w.jsonl")) || r.err.contains(QStringLiteral("runs.db"));
        check(named, QStringLiteral("the message names neither the option nor its value"));
    }
    QDir(tmp).removeRecursively();
    return failures;
}

// Data folders: every file a command reads in a folder it is given (the option table's
// "folder" role), found by running the command once with KAIROS_PRINT_INPUTS=1 (kairos-cli
// lists every file it read through the bounded reader at exit), then tried in a copy of
// the folder missing, as a FIFO, as a link to /dev/zero, empty, binary and as the command's
// own output. A data file added to a command is in the list because it is read, so it is
// tried without anyone adding a case.
enum class Spoil { Missing, Fifo, Zero, Empty, Binary, OwnOutput };
const char* spoilName(Spoil s) {
    switch (s) {
    case Spoil::Missing:
        return "missing";
    case Spoil::Fifo:
        return "a FIFO";
    case Spoil::Zero:
        return "a link to /dev/zero";
    case Spoil::Empty:
        return "empty";
    case Spoil::Binary:
        return "binary";
    case Spoil::OwnOutput:
        return "the command's own output";
    }
    return "";
}

// `dst` as a tree of the folders of `src` with a link to each of its files (a case may
// change any of them without touching ../shared/data).
bool mirrorTree(const QString& src, const QString& dst) {
    if (!QDir().mkpath(dst)) return false;
    for (const QFileInfo& e : QDir(src).entryInfoList(QDir::AllEntries | QDir::NoDotAndDotDot)) {
        const QString to = dst + QLatin1Char('/') + e.fileName();
        if (e.isDir() && !e.isSymLink()) {
            if (!mirrorTree(e.absoluteFilePath(), to)) return false;
        } else if (!QFile::link(e.absoluteFilePath(), to)) {
            return false;
        }
    }
    return true;
}

struct FolderInvocation {
    std::string command;
    QStringList args; // {data} the folder, {tmp} the case's folder
    Option output;    // the option that names its output (tried on a data file)
};

// Each command with a folder option, from its base invocation, the folder option set to
// {data}; a positional with choices (derive-profile's setting) tried with each, where the
// command is quick.
std::vector<FolderInvocation> folderInvocations(const std::vector<Option>& table) {
    std::vector<FolderInvocation> out;
    for (const Option& o : table) {
        if (o.role != "folder") continue;
        // A folder inside --data (derive-profile vidur's --compute and --network default to
        // DATA/vidur/...): its files are read, and spoiled, through the --data invocation.
        if (o.name != "--data" && std::any_of(table.begin(), table.end(), [&](const Option& p) {
                return p.command == o.command && p.name == "--data" && p.role == "folder";
            }))
            continue;
        const auto b = bases().find(o.command);
        if (b == bases().end()) continue;
        Option output;
        std::vector<QString> choices;
        for (const Option& p : table) {
            if (p.command != o.command) continue;
            if (p.role == "output" && output.name.empty()) output = p;
            const auto l = p.type.find('{'), r = p.type.find('}');
            if (p.positional && l != std::string::npos && r != std::string::npos &&
                !slowCommand(o.command))
                for (const QString& c : QString::fromStdString(p.type.substr(l + 1, r - l - 1))
                                            .split(QLatin1Char(',')))
                    choices.push_back(c);
        }
        QStringList base = withOption(splitBase(b->second), o, QStringLiteral("{data}"));
        if (choices.empty()) {
            out.push_back({o.command, base, output});
            continue;
        }
        const int at = int(splitBase(o.command).size()); // the positional's place
        for (const QString& c : choices) {
            QStringList args = base;
            args[at] = c;
            out.push_back({o.command, args, output});
        }
    }
    return out;
}

} // namespace

class TestHostile : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void everyFileOfEveryDataFolder() {
        const QString shared = QStringLiteral(KAIROS_SHARED_DATA);
        if (!QFileInfo(shared).isDir()) QSKIP("../shared/data is not here");
        const auto table = optionTable();
        QVERIFY(!table.empty());
        const auto invocations = folderInvocations(table);
        QVERIFY2(!invocations.empty(), "no command has a data folder in the option table");
        QTemporaryDir dir;
        auto run = [&](const QStringList& given, const QString& tmp, const QString& data,
                       bool list_inputs) {
            QStringList args;
            for (QString a : given) {
                a.replace(QStringLiteral("{data}"), data);
                a.replace(QStringLiteral("{tmp}"), tmp);
                args << a;
            }
            QProcess p;
            p.setWorkingDirectory(tmp);
            QProcessEnvironment env = kairos::test::programEnvironment(tmp);
            if (list_inputs) env.insert(QStringLiteral("KAIROS_PRINT_INPUTS"), QStringLiteral("1"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(KAIROS_CLI), args);
            Result r;
            r.finished = p.waitForFinished(60000);
            if (!r.finished) {
                p.kill();
                p.waitForFinished(5000);
            }
            r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
            r.out = QString::fromUtf8(p.readAllStandardOutput());
            r.err = QString::fromUtf8(p.readAllStandardError());
            return std::make_pair(r, QStringLiteral("kairos-cli ") + args.join(QLatin1Char(' ')));
        };
        QStringList failures;
        int cases = 0, files = 0;
        const Spoil spoils[] = {Spoil::Missing, Spoil::Fifo,   Spoil::Zero,
                                Spoil::Empty,   Spoil::Binary, Spoil::OwnOutput};
        for (std::size_t k = 0; k < invocations.size(); ++k) {
            const FolderInvocation& inv = invocations[k];
            // Which files it reads there: one run on an intact copy.
            const QString probe = dir.path() + QStringLiteral("/probe") + QString::number(k);
            const QString probe_data = probe + QStringLiteral("/data");
            QVERIFY(mirrorTree(shared, probe_data));
            const auto [first, what] = run(inv.args, probe, probe_data, true);
            QVERIFY2(first.finished && first.code == 0,
                     qPrintable(what + QStringLiteral(": exit ") + QString::number(first.code) +
                                QStringLiteral(" on the intact data: ") + first.err.left(600)));
            QStringList read;
            for (const QString& line : first.err.split(QLatin1Char('\n'))) {
                const QString tag = QStringLiteral("kairos-cli: input: ");
                if (!line.startsWith(tag)) continue;
                const QString path = QFileInfo(line.mid(tag.size())).absoluteFilePath();
                if (path.startsWith(probe_data + QLatin1Char('/')))
                    read << path.mid(probe_data.size() + 1);
            }
            read.removeDuplicates();
            QVERIFY2(!read.isEmpty(),
                     qPrintable(what + QStringLiteral(" read no file of its data folder")));
            files += int(read.size());
            for (const QString& rel : read)
                for (const Spoil s : spoils) {
                    const QString tmp =
                        dir.path() + QStringLiteral("/c") + QString::number(cases++);
                    const QString data = tmp + QStringLiteral("/data");
                    QVERIFY(mirrorTree(shared, data));
                    const QString f = data + QLatin1Char('/') + rel;
                    const QString source = QFileInfo(f).symLinkTarget();
                    QFile::remove(f);
                    QStringList args = inv.args;
                    QByteArray before;
                    switch (s) {
                    case Spoil::Missing:
                        break;
                    case Spoil::Fifo:
                        ::mkfifo(f.toLocal8Bit().constData(), 0600);
                        break;
                    case Spoil::Zero:
                        QFile::link(QStringLiteral("/dev/zero"), f);
                        break;
                    case Spoil::Empty: {
                        QFile e(f);
                        e.open(QIODevice::WriteOnly);
                        break;
                    }
                    case Spoil::Binary: {
                        QFile b(f);
                        if (b.open(QIODevice::WriteOnly)) {
                            QByteArray bytes(4096, '\0');
                            for (int i = 0; i < bytes.size(); ++i) bytes[i] = char((i * 131) % 256);
                            b.write(bytes);
                        }
                        break;
                    }
                    case Spoil::OwnOutput:
                        // A real copy (never the link: a write through it would reach
                        // ../shared/data), named as the command's output.
                        QFile::copy(source, f);
                        before = bytesOf(f);
                        args = withOption(args, inv.output, f);
                        break;
                    }
                    const auto [r, cmd] = run(args, tmp, data, false);
                    const QString where =
                        QStringLiteral("%1 with %2 %3: exit %4: %5")
                            .arg(cmd.left(300), rel, QString::fromLatin1(spoilName(s)))
                            .arg(r.code)
                            .arg(r.err.left(400));
                    auto check = [&](bool ok, const QString& why) {
                        if (!ok) failures << why + QStringLiteral(": ") + where;
                    };
                    if (!r.finished) {
                        check(false, QStringLiteral("did not finish (a hang)"));
                        continue;
                    }
                    check(!r.err.contains(QStringLiteral("internal error")) &&
                              !r.err.contains(QStringLiteral("AddressSanitizer")) &&
                              !r.err.contains(QStringLiteral("runtime error:")),
                          QStringLiteral("an internal error or a sanitizer report"));
                    // Nothing it reads may be missing, a FIFO, a device, binary or its own
                    // output; an empty file may be a table with no rows, where it says so.
                    const bool may_pass = s == Spoil::Empty;
                    check(r.code == 2 || (may_pass && r.code == 0),
                          QStringLiteral("exit ") + QString::number(r.code));
                    if (r.code == 2)
                        check(r.err.contains(QStringLiteral("error:")) &&
                                  r.err.contains(QFileInfo(rel).fileName()),
                              QStringLiteral("the message does not name the file"));
                    if (s == Spoil::OwnOutput)
                        check(bytesOf(f) == before, QStringLiteral("the data file was replaced"));
                    if (s == Spoil::Fifo)
                        check(QFileInfo(f).exists() && !QFileInfo(f).isFile(),
                              QStringLiteral("the FIFO was replaced"));
                    QDir(tmp).removeRecursively();
                }
        }
        qInfo("data folders: %d cases over %d files of %zu invocations, %d failures", cases, files,
              invocations.size(), int(failures.size()));
        for (const QString& f : failures) qWarning("%s", qPrintable(f));
        QVERIFY2(failures.isEmpty(),
                 qPrintable(QString::number(failures.size()) + QStringLiteral(" failures:\n") +
                            failures.mid(0, 30).join(QStringLiteral("\n"))));
    }

    // The suite tries paths on the options the table marks as read or written; a path
    // option left unmarked would escape it (fit ala --calibrate and --hardware did: an
    // --out on the same file was refused only after minutes of training). A text option
    // whose help speaks of a file must carry a role, or be named here as not a path.
    void fileOptionsHaveARole() {
        const auto table = optionTable();
        QVERIFY(!table.empty());
        const std::set<std::pair<std::string, std::string>> names_not_paths = {
            {"generate", "--name"},     // the workload's name (default: the file's)
            {"fit-profile", "--model"}, // a model as the file names it
        };
        const QRegularExpression speaks_of_files(
            QStringLiteral("\\b(file|FILE|CSV|JSONL?|folder|directory|path)\\b"));
        QStringList unmarked;
        for (const Option& o : table)
            if (!o.flag && o.role.empty() && o.type.rfind("TEXT", 0) == 0 &&
                speaks_of_files.match(QString::fromStdString(o.help)).hasMatch() &&
                !names_not_paths.count({o.command, o.name}))
                unmarked << QString::fromStdString(o.command + " " + o.name);
        QVERIFY2(unmarked.isEmpty(), qPrintable(QStringLiteral("path options without a role in "
                                                               "app/cli/path_rules.cpp: ") +
                                                unmarked.join(QStringLiteral(", "))));
    }

    void everyOptionOfEveryCommand() {
        QTemporaryDir dir;
        runDir = dir.path();
        const auto table = optionTable();
        QVERIFY2(table.size() > 100, "kairos-cli --option-table listed too few options");
        QStringList missing;
        std::vector<HostileCase> cases = generate(table, &missing);
        QVERIFY2(missing.isEmpty(),
                 qPrintable(QStringLiteral("commands without a base invocation in "
                                           "tst_hostile.cpp (add one): ") +
                            missing.join(QStringLiteral(", "))));
        // The ASan build runs a share of the cases, the same share every time.
        const int share = qEnvironmentVariableIntValue("KAIROS_HOSTILE_SHARE");
        if (share > 1) {
            std::vector<HostileCase> kept;
            // The slow commands' own options are tried in the normal build: under ASan each of
            // their cases is mostly libtorch starting.
            for (std::size_t i = 0; i < cases.size(); ++i)
                if (i % std::size_t(share) == 0 && !cases[i].slow) kept.push_back(cases[i]);
            cases.swap(kept);
        }
        // What every case starts from: a small workload, a database with two runs and a
        // sweep, a run log with reasons.
        Prepared prep;
        prep.workload = runDir + QStringLiteral("/small.jsonl");
        prep.db = runDir + QStringLiteral("/base.db");
        prep.log = runDir + QStringLiteral("/log.jsonl");
        auto cli = [](const QStringList& a) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("XDG_CACHE_HOME"), runDir + QStringLiteral("/cache"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(KAIROS_CLI), a);
            p.waitForFinished(120000);
            return p.exitCode() == 0 ? QString() : QString::fromUtf8(p.readAllStandardError());
        };
        QCOMPARE(cli({"generate", "-o", prep.workload, "-n", "40", "--rate", "2", "--seed", "1"}),
                 QString());
        QCOMPARE(cli({"simulate", "-w", prep.workload, "--db", prep.db, "-q"}), QString());
        QCOMPARE(cli({"simulate", "-w", prep.workload, "--db", prep.db, "-q", "--policy", "sjf"}),
                 QString());
        QCOMPARE(cli({"sweep", "-w", prep.workload, "--db", prep.db, "-q", "--policy", "fcfs,sjf"}),
                 QString());
        QCOMPARE(cli({"simulate", "-w", prep.workload, "--runlog", prep.log, "--explain", "-q"}),
                 QString());
        {
            std::map<std::string, int> n;
            for (const auto& c : cases) ++n[c.command];
            QString line;
            for (const auto& [cmd, k] : n)
                line += QString::fromStdString(cmd) + QStringLiteral(" ") + QString::number(k) +
                        QStringLiteral(", ");
            qInfo("hostile suite: %zu cases: %s", cases.size(), qPrintable(line));
        }
        std::atomic<int> next{0};
        std::mutex m;
        QStringList failures;
        std::map<std::string, int> per_command;
        std::atomic<std::size_t> at{0};
        auto worker = [&] {
            for (std::size_t i = at++; i < cases.size(); i = at++) {
                const QStringList f = runOne(cases[i], prep, int(i));
                std::lock_guard<std::mutex> lock(m);
                for (const QString& one : f) qWarning("%s", qPrintable(one));
                failures << f;
                ++per_command[cases[i].command];
                ++next;
            }
        };
        // Each case is a process of its own: more of them at once than cores, as most of a
        // case's time is starting the program.
        const unsigned n = std::max(2u, std::thread::hardware_concurrency() * 2);
        std::vector<std::thread> pool;
        for (unsigned k = 0; k < n; ++k) pool.emplace_back(worker);
        for (auto& t : pool) t.join();
        qInfo("hostile suite: %d cases over %zu options of %zu commands, %d failures (%d slow "
              "cases still working at their cut-off, counted as accepted)",
              next.load(), table.size(), per_command.size(), int(failures.size()), g_cut.load());
        if (!failures.isEmpty())
            QFAIL(qPrintable(QString::number(failures.size()) + QStringLiteral(" failures:\n") +
                             failures.mid(0, 40).join(QStringLiteral("\n"))));
    }
};

QTEST_GUILESS_MAIN(TestHostile)
#include "tst_hostile.moc"
