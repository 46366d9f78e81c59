// The bad-input corpus (tests/badinput/*.cases): malformed files, options out of their
// domain, broken configurations and profiles, corrupt databases, hostile output paths,
// each run through the real programs (kairos-cli, and kairos for its options), and the
// run-log reader in-process. Every case states the exit code it must end with and what
// its message must say; on top, for every case: no "internal error", no sanitizer report
// (CI runs this suite in the ASan + UBSan build too), a user mistake (exit 2) starts with
// the program's "error:", and files a failed command must not touch stay as they were.
//
// Case format (one file holds many):
//   === NAME
//   # comments
//   prog: cli | gui | runlog        (default cli; runlog reads {in} in-process)
//   args: ARGUMENTS                 (split on blanks, "quoted" kept together)
//   expect: CODE
//   stderr: TEXT                    (repeatable: each must appear in what it printed)
//   stdout: TEXT                    (repeatable: the same for standard output)
//   needs: live | gui | no-sanitizer (skipped in builds without libtorch / the GUI / in
//                                    the sanitizer build)
//   absent: PATH                    (repeatable: must not exist afterwards)
//   unchanged: PATH                 (repeatable: its bytes the same afterwards)
//   setup: ARGUMENTS                (repeatable: kairos-cli commands run first, exit 0)
//   sql: PATH STATEMENT             (run on a database after the setup)
//   symlink: LINK TARGET            (made before the run)
//   hardlink: LINK TARGET           (a second name of TARGET, made before the run)
//   contains: FILE TEXT             (after the run FILE holds TEXT)
//   islink: PATH                    (after the run PATH is still a symbolic link)
//   fuzz: TARGET                    (the case's first file also seeds this fuzz target)
//   fifo: PATH                      (a FIFO made before the run; nobody writes or reads it)
//   device: PATH                    (a character device like /dev/full, 1:7, made with mknod
//                                    in the case's folder, never a real node; the case is
//                                    skipped where mknod is not allowed; after the run it
//                                    must still be that device)
//   chmod: PATH OCTAL               (permissions set before the run)
//   mode: PATH OCTAL                (after the run PATH has these permissions)
//   env: NAME=VALUE                 (repeatable; VALUE may be empty: set to "")
//   wrap: PROGRAM ARGS              (the program runs under this one, e.g. prlimit --as=N --)
//   --- FILE [escaped]              (a file, its lines up to the next --- or ===, FILE may
//                                    name subfolders (made); with
//                                    "escaped", \n \t \\ and \xNN are decoded)
// Placeholders: {FILE} the path of a file section, {tmp} the case's folder, {src} the
// source tree, {data} ../shared/data. In file contents, ${repeat TEXT N} stands for TEXT
// N times.
#include "export/runlog_jsonl.h"
#include "metrics/summary.h"
#include "test_util.h"
#include "util/input_error.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

namespace {

struct Case {
    QString name, source;
    QString prog = QStringLiteral("cli");
    QString args;
    int expect = 2;
    QStringList stderr_has, stdout_has, absent, unchanged, setup, sql, symlinks, needs, contains,
        links, fifos, chmods, modes, envs, devices, hardlinks;
    QString wrap;
    QString fuzz;
    std::vector<std::pair<QString, QByteArray>> files;
};

QByteArray unescape(const QByteArray& in) {
    QByteArray out;
    for (int i = 0; i < in.size(); ++i) {
        if (in[i] != '\\' || i + 1 >= in.size()) {
            out += in[i];
            continue;
        }
        const char c = in[++i];
        if (c == 'n')
            out += '\n';
        else if (c == 't')
            out += '\t';
        else if (c == 'r')
            out += '\r';
        else if (c == '0')
            out += '\0';
        else if (c == 'x' && i + 2 < in.size() + 0) {
            out += char(in.mid(i + 1, 2).toInt(nullptr, 16));
            i += 2;
        } else
            out += c;
    }
    return out;
}

// ${repeat TEXT N}
QByteArray expand(QByteArray text) {
    static const QRegularExpression re(QStringLiteral(R"(\$\{repeat (\S+) (\d+)\})"));
    while (true) {
        const auto m = re.match(QString::fromUtf8(text));
        if (!m.hasMatch()) return text;
        const QByteArray piece = m.captured(1).toUtf8().repeated(m.captured(2).toInt());
        const QByteArray whole = m.captured(0).toUtf8();
        const int at = text.indexOf(whole);
        text.replace(at, whole.size(), piece);
    }
}

std::vector<Case> readCases(const QString& dir) {
    std::vector<Case> cases;
    const auto files = QDir(dir).entryList({QStringLiteral("*.cases")}, QDir::Files, QDir::Name);
    for (const QString& f : files) {
        QFile in(dir + QLatin1Char('/') + f);
        if (!in.open(QIODevice::ReadOnly)) continue;
        const QList<QByteArray> lines = in.readAll().split('\n');
        Case* c = nullptr;
        QByteArray* body = nullptr;
        bool escaped = false;
        auto closeBody = [&] {
            if (body && escaped) *body = unescape(*body);
            if (body) *body = expand(*body);
            body = nullptr;
        };
        for (const QByteArray& raw : lines) {
            const QString line = QString::fromUtf8(raw);
            if (line.startsWith(QStringLiteral("=== "))) {
                closeBody();
                cases.emplace_back();
                c = &cases.back();
                c->name = line.mid(4).trimmed();
                c->source = f;
                continue;
            }
            if (!c) continue;
            if (line.startsWith(QStringLiteral("--- "))) {
                closeBody();
                QStringList h = line.mid(4).split(QLatin1Char(' '), Qt::SkipEmptyParts);
                escaped = h.size() > 1 && h[1] == QStringLiteral("escaped");
                c->files.emplace_back(h.value(0), QByteArray());
                body = &c->files.back().second;
                continue;
            }
            if (body) {
                *body += raw + '\n';
                continue;
            }
            const auto colon = line.indexOf(QLatin1Char(':'));
            if (line.startsWith(QLatin1Char('#')) || colon < 0) continue;
            const QString key = line.left(colon), val = line.mid(colon + 1).trimmed();
            if (key == QStringLiteral("prog"))
                c->prog = val;
            else if (key == QStringLiteral("args"))
                c->args = val;
            else if (key == QStringLiteral("expect"))
                c->expect = val.toInt();
            else if (key == QStringLiteral("stderr"))
                c->stderr_has << val;
            else if (key == QStringLiteral("stdout"))
                c->stdout_has << val;
            else if (key == QStringLiteral("needs"))
                c->needs << val;
            else if (key == QStringLiteral("fuzz"))
                c->fuzz = val;
            else if (key == QStringLiteral("absent"))
                c->absent << val;
            else if (key == QStringLiteral("unchanged"))
                c->unchanged << val;
            else if (key == QStringLiteral("setup"))
                c->setup << val;
            else if (key == QStringLiteral("sql"))
                c->sql << val;
            else if (key == QStringLiteral("symlink"))
                c->symlinks << val;
            else if (key == QStringLiteral("contains"))
                c->contains << val;
            else if (key == QStringLiteral("islink"))
                c->links << val;
            else if (key == QStringLiteral("fifo"))
                c->fifos << val;
            else if (key == QStringLiteral("device"))
                c->devices << val;
            else if (key == QStringLiteral("hardlink"))
                c->hardlinks << val;
            else if (key == QStringLiteral("chmod"))
                c->chmods << val;
            else if (key == QStringLiteral("mode"))
                c->modes << val;
            else if (key == QStringLiteral("env"))
                c->envs << val;
            else if (key == QStringLiteral("wrap"))
                c->wrap = val;
        }
        closeBody();
    }
    return cases;
}

QStringList splitArgs(const QString& s) {
    QStringList out;
    QString cur;
    bool quoted = false, any = false;
    for (const QChar ch : s) {
        if (ch == QLatin1Char('"')) {
            quoted = !quoted;
            any = true;
        } else if (ch.isSpace() && !quoted) {
            if (any || !cur.isEmpty()) out << cur;
            cur.clear();
            any = false;
        } else {
            cur += ch;
        }
    }
    if (any || !cur.isEmpty()) out << cur;
    return out;
}

struct Run {
    int code = -1;
    QString out, err;
    bool finished = false;
};

Run runProgram(const QString& program, const QStringList& args, const QString& cwd,
               const QStringList& envs = {}, const QString& wrap = {}) {
    QProcess p;
    p.setWorkingDirectory(cwd);
    QProcessEnvironment env = kairos::test::programEnvironment(cwd);
    for (const QString& e : envs) {
        const int eq = int(e.indexOf(QLatin1Char('=')));
        if (e.mid(eq + 1) == QStringLiteral("<unset>"))
            env.remove(e.left(eq));
        else
            env.insert(e.left(eq), e.mid(eq + 1));
    }
    p.setProcessEnvironment(env);
    if (wrap.isEmpty()) {
        p.start(program, args);
    } else {
        QStringList w = splitArgs(wrap);
        const QString first = w.takeFirst();
        p.start(first, w + QStringList{program} + args);
    }
    Run r;
    r.finished = p.waitForFinished(120000);
    if (!r.finished) p.kill();
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

QByteArray contents(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("<missing>");
}

// One case run: what it printed and how it ended, and what the checks found (messages,
// empty when fine). Cases run on several threads at once (each a separate process;
// starting kairos-cli, which links libtorch, is most of a case's time).
struct Outcome {
    bool skipped = false;
    QString skip_why;
    QStringList failures;
    int code = -1;
};

Outcome runCase(const Case& c) {
    Outcome o;
#ifndef KAIROS_WITH_LIVE
    if (c.needs.contains(QStringLiteral("live"))) {
        o.skipped = true;
        o.skip_why = QStringLiteral("built without libtorch");
        return o;
    }
#endif
#ifdef KAIROS_SANITIZED
    if (c.needs.contains(QStringLiteral("no-sanitizer"))) {
        o.skipped = true;
        o.skip_why = QStringLiteral("AddressSanitizer reserves terabytes of address space: an "
                                    "address-space limit cannot be tried under it");
        return o;
    }
#endif
    if ((c.prog == QStringLiteral("gui") || c.needs.contains(QStringLiteral("gui"))) &&
        QString(KAIROS_GUI).isEmpty()) {
        o.skipped = true;
        o.skip_why = QStringLiteral("built without the GUI");
        return o;
    }
    QTemporaryDir dir;
    if (!dir.isValid()) {
        o.failures << QStringLiteral("no temporary folder");
        return o;
    }
    const QString tmp = dir.path();
    auto subst = [&](QString s) {
        for (const auto& [name, body] : c.files)
            s.replace(QLatin1Char('{') + name + QLatin1Char('}'), tmp + QLatin1Char('/') + name);
        s.replace(QStringLiteral("{tmp}"), tmp);
        s.replace(QStringLiteral("{src}"), QStringLiteral(KAIROS_SOURCE_DIR));
        s.replace(QStringLiteral("{data}"), QString::fromStdString(kairos::test::dataPath("")));
        return s;
    };
    for (const auto& [name, body] : c.files) {
        QDir().mkpath(QFileInfo(tmp + QLatin1Char('/') + name).absolutePath());
        QFile f(tmp + QLatin1Char('/') + name);
        if (!f.open(QIODevice::WriteOnly)) o.failures << QStringLiteral("cannot write ") + name;
        f.write(body);
    }
    for (const QString& s : c.setup) {
        const Run r = runProgram(QStringLiteral(KAIROS_CLI), splitArgs(subst(s)), tmp);
        if (r.code != 0) o.failures << QStringLiteral("setup '") + s + "': " + r.err;
    }
    for (const QString& s : c.sql) {
        const QString line = subst(s);
        const int sp = line.indexOf(QLatin1Char(' '));
        sqlite3* db = nullptr;
        char* msg = nullptr;
        int rc = sqlite3_open(line.left(sp).toUtf8().constData(), &db);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(db, line.mid(sp + 1).toUtf8().constData(), nullptr, nullptr, &msg);
        if (rc != SQLITE_OK)
            o.failures << QStringLiteral("sql '") + s +
                              "': " + (msg ? QString::fromUtf8(msg) : QString());
        sqlite3_free(msg);
        sqlite3_close(db);
    }
    for (const QString& s : c.symlinks) {
        const QStringList p = subst(s).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (p.size() == 2) QDir().mkpath(QFileInfo(p[0]).absolutePath());
        if (p.size() != 2 || !QFile::link(p[1], p[0])) o.failures << QStringLiteral("symlink ") + s;
    }
    for (const QString& s : c.hardlinks) {
        const QStringList p = subst(s).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (p.size() != 2 ||
            ::link(p[1].toLocal8Bit().constData(), p[0].toLocal8Bit().constData()) != 0)
            o.failures << QStringLiteral("hardlink ") + s;
    }
    for (const QString& s : c.fifos) {
        QDir().mkpath(QFileInfo(subst(s)).absolutePath());
        if (::mkfifo(subst(s).toLocal8Bit().constData(), 0600) != 0)
            o.failures << QStringLiteral("fifo ") + s;
    }
    for (const QString& s : c.devices)
        if (::mknod(subst(s).toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
            o.skipped = true;
            o.skip_why = QStringLiteral("mknod is not allowed here (run as root to try a device "
                                        "node as an output)");
            return o;
        }
    for (const QString& s : c.chmods) {
        const QStringList p = subst(s).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (p.size() != 2 ||
            ::chmod(p[0].toLocal8Bit().constData(), mode_t(p[1].toUInt(nullptr, 8))) != 0)
            o.failures << QStringLiteral("chmod ") + s;
    }
    if (!o.failures.isEmpty()) return o;
    std::vector<std::pair<QString, QByteArray>> before;
    for (const QString& u : c.unchanged) before.emplace_back(subst(u), contents(subst(u)));

    Run r;
    if (c.prog == QStringLiteral("runlog")) {
        // In-process: read and summarise; only InputError or invalid_argument may stop it.
        const std::string path = subst(QStringLiteral("{in}")).toStdString();
        std::ifstream in(path);
        try {
            kairos::summarize(kairos::readRunLogJsonl(in, path));
            r.code = 0;
        } catch (const kairos::InputError& e) {
            r.code = 2;
            r.err = QStringLiteral("error: ") + QString::fromStdString(e.what());
        } catch (const std::invalid_argument& e) {
            r.code = 2;
            r.err = QStringLiteral("error: ") + QString::fromStdString(e.what());
        }
        r.finished = true;
    } else {
        const QString program = c.prog == QStringLiteral("gui") ? QStringLiteral(KAIROS_GUI)
                                                                : QStringLiteral(KAIROS_CLI);
        QStringList envs;
        for (const QString& e : c.envs) envs << subst(e);
        r = runProgram(program, splitArgs(subst(c.args)), tmp, envs, subst(c.wrap));
    }
    o.code = r.code;
    const QString what =
        QStringLiteral("exit ") + QString::number(r.code) + QStringLiteral("\n") + r.err.left(2000);
    auto check = [&](bool ok, const QString& why) {
        if (!ok) o.failures << why + QStringLiteral("\n") + what;
    };
    check(r.finished, QStringLiteral("did not finish in 120 s"));
    check(!r.err.contains(QStringLiteral("internal error")), QStringLiteral("internal error"));
    check(!r.err.contains(QStringLiteral("AddressSanitizer")) &&
              !r.err.contains(QStringLiteral("runtime error:")) &&
              !r.err.contains(QStringLiteral("LeakSanitizer")),
          QStringLiteral("a sanitizer report"));
    check(r.code == c.expect, QStringLiteral("expected exit ") + QString::number(c.expect));
    if (c.expect == 2)
        check(r.err.contains(QStringLiteral("error: ")), QStringLiteral("no 'error: ' message"));
    for (const QString& s : c.stderr_has)
        check(r.err.contains(subst(s)), QStringLiteral("expected on stderr: ") + subst(s));
    for (const QString& s : c.stdout_has)
        check(r.out.contains(subst(s)),
              QStringLiteral("expected on stdout: ") + subst(s) + "\n" + r.out.left(3000));
    // Nothing raw reaches a terminal: no escape character in what a program printed.
    check(!r.out.contains(QChar(0x1b)) && !r.err.contains(QChar(0x1b)),
          QStringLiteral("an escape character was printed"));
    for (const QString& a : c.absent)
        check(!QFileInfo::exists(subst(a)), QStringLiteral("left behind: ") + subst(a));
    for (const auto& [path, bytes] : before)
        check(contents(path) == bytes, QStringLiteral("changed: ") + path);
    for (const QString& m : c.modes) {
        const QStringList p = subst(m).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        struct stat st {};
        const bool ok = p.size() == 2 && ::stat(p[0].toLocal8Bit().constData(), &st) == 0 &&
                        (st.st_mode & 07777) == mode_t(p[1].toUInt(nullptr, 8));
        check(ok, QStringLiteral("mode of ") + m + QStringLiteral(": ") +
                      QString::number(st.st_mode & 07777, 8));
    }
    for (const QString& s : c.contains) { // "FILE TEXT": the file holds TEXT after the run
        const QString v = subst(s);
        const auto sp = v.indexOf(QLatin1Char(' '));
        check(sp > 0 && contents(v.left(sp)).contains(v.mid(sp + 1).toUtf8()),
              QStringLiteral("expected in the file: ") + v);
    }
    for (const QString& l : c.links)
        check(QFileInfo(subst(l)).isSymLink(), QStringLiteral("no longer a link: ") + subst(l));
    for (const QString& d : c.devices) {
        struct stat st;
        check(::lstat(subst(d).toLocal8Bit().constData(), &st) == 0 && S_ISCHR(st.st_mode) &&
                  st.st_rdev == makedev(1, 7),
              QStringLiteral("no longer the device node: ") + subst(d));
    }
    // Nothing left behind but what the case made: no temporaries beside the outputs.
    for (const QString& f : QDir(tmp).entryList(QDir::Files | QDir::Hidden | QDir::System))
        check(!f.contains(QStringLiteral(".kairos-")), QStringLiteral("temporary left: ") + f);
    return o;
}

} // namespace

class TestBadInput : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        cases_ = readCases(QStringLiteral(KAIROS_SOURCE_DIR "/tests/badinput"));
        QVERIFY(cases_.size() >= 100);
        // tests/fuzz/run.sh: KAIROS_FUZZ_SEEDS=DIR writes each case's first file into
        // DIR/TARGET/ for the cases that name a fuzz target, and runs nothing.
        if (const QString seeds = qEnvironmentVariable("KAIROS_FUZZ_SEEDS"); !seeds.isEmpty()) {
            int written = 0;
            for (const Case& c : cases_) {
                if (c.fuzz.isEmpty() || c.files.empty()) continue;
                QDir().mkpath(seeds + QLatin1Char('/') + c.fuzz);
                QFile f(seeds + QLatin1Char('/') + c.fuzz + QStringLiteral("/corpus-") + c.name);
                if (f.open(QIODevice::WriteOnly) && f.write(c.files.front().second) >= 0) ++written;
            }
            std::printf("wrote %d fuzz seeds to %s\n", written, qPrintable(seeds));
            QSKIP("wrote the fuzz seeds");
        }
        outcomes_.resize(cases_.size());
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t i; (i = next++) < cases_.size();) outcomes_[i] = runCase(cases_[i]);
        };
        const int n = std::max(2, QThread::idealThreadCount());
        std::vector<std::thread> pool;
        for (int k = 1; k < n; ++k) pool.emplace_back(work);
        work();
        for (auto& t : pool) t.join();
    }

    void corpus_data() {
        QTest::addColumn<int>("index");
        for (int i = 0; i < int(cases_.size()); ++i)
            QTest::newRow(qPrintable(cases_[std::size_t(i)].source + QLatin1Char('/') +
                                     cases_[std::size_t(i)].name))
                << i;
    }

    void corpus() {
        QFETCH(int, index);
        const Outcome& o = outcomes_[std::size_t(index)];
        if (o.skipped) QSKIP(qPrintable(o.skip_why));
        QVERIFY2(o.failures.isEmpty(), qPrintable(cases_[std::size_t(index)].name + ": " +
                                                  o.failures.join(QStringLiteral("\n"))));
        ++count_[cases_[std::size_t(index)].expect];
    }

    void cleanupTestCase() {
        int total = 0;
        for (const auto& [code, n] : count_) total += n;
        qInfo("bad-input corpus: %d cases passed; %d clean exit-2 errors, %d rightly accepted "
              "(exit 0), %d other expected exits; 0 crashes, 0 internal errors",
              total, count_[2], count_[0], total - count_[2] - count_[0]);
    }

private:
    std::vector<Case> cases_;
    std::vector<Outcome> outcomes_;
    std::map<int, int> count_;
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "tst_badinput.moc"
