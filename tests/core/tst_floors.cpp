// The core's folders are floors (ARCHITECTURE.md): a folder includes only from its own
// floor and the floors below, and no two folders include each other, directly or round a
// loop. Read from the source tree, every #include "folder/..." of every file under core/.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

// The floors, lowest first (ARCHITECTURE.md's table).
const std::map<std::string, int>& floors() {
    static const std::map<std::string, int> f = {
        {"util", 0},    {"model", 1},   {"workload", 2}, {"exec", 2},  {"lod", 2},
        {"weights", 2}, {"predict", 3}, {"metrics", 3},  {"sched", 4}, {"export", 4},
        {"sim", 5},     {"fit", 5},     {"store", 6},    {"run", 6},   {"repro", 7}};
    return f;
}

struct Include {
    std::string from_folder, to_folder, file;
};

std::vector<Include> coreIncludes() {
    std::vector<Include> out;
    const QString core = QStringLiteral(KAIROS_SOURCE_DIR "/core");
    const QRegularExpression inc(QStringLiteral("^\\s*#\\s*include\\s+\"([a-z_0-9]+)/"));
    QDirIterator it(core, {"*.h", "*.cpp", "*.in"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const QString rel = QDir(core).relativeFilePath(path);
        if (!rel.contains(QLatin1Char('/'))) continue; // core/CMakeLists.txt and the like
        const std::string folder = rel.section(QLatin1Char('/'), 0, 0).toStdString();
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) continue;
        while (!f.atEnd()) {
            const QString line = QString::fromUtf8(f.readLine());
            const auto m = inc.match(line);
            if (!m.hasMatch()) continue;
            const std::string to = m.captured(1).toStdString();
            if (to != folder && QDir(core + QLatin1Char('/') + m.captured(1)).exists())
                out.push_back({folder, to, rel.toStdString()});
        }
    }
    return out;
}

} // namespace

class TestFloors : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // Every folder of core/ has a floor (a new folder must be placed in the table).
    void everyFolderHasAFloor() {
        QDir core(QStringLiteral(KAIROS_SOURCE_DIR "/core"));
        QStringList missing;
        for (const QString& d : core.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
            if (!floors().count(d.toStdString())) missing << d;
        QVERIFY2(missing.isEmpty(), qPrintable("core folders without a floor in tst_floors.cpp and "
                                               "ARCHITECTURE.md: " +
                                               missing.join(QStringLiteral(", "))));
    }

    void noIncludeRunsUp() {
        const auto includes = coreIncludes();
        QVERIFY2(includes.size() > 100, "too few includes found: is KAIROS_SOURCE_DIR right?");
        QStringList up;
        for (const auto& i : includes) {
            const auto a = floors().find(i.from_folder), b = floors().find(i.to_folder);
            if (a == floors().end() || b == floors().end()) continue; // everyFolderHasAFloor
            if (b->second > a->second)
                up << QString::fromStdString(i.file + " includes " + i.to_folder + "/ (floor " +
                                             std::to_string(b->second) + " above " +
                                             std::to_string(a->second) + ")");
        }
        QVERIFY2(up.isEmpty(), qPrintable(up.join(QLatin1Char('\n'))));
    }

    // Folders of the same floor may use each other, but not round a loop.
    void noLoopBetweenFolders() {
        std::map<std::string, std::set<std::string>> g;
        for (const auto& i : coreIncludes()) g[i.from_folder].insert(i.to_folder);
        std::map<std::string, int> state; // 1: on the path, 2: done
        std::vector<std::string> path;
        QString loop;
        std::function<void(const std::string&)> visit = [&](const std::string& u) {
            state[u] = 1;
            path.push_back(u);
            for (const auto& v : g[u]) {
                if (!loop.isEmpty()) break;
                if (state[v] == 1) {
                    for (auto it = std::find(path.begin(), path.end(), v); it != path.end(); ++it)
                        loop += QString::fromStdString(*it) + QStringLiteral(" -> ");
                    loop += QString::fromStdString(v);
                } else if (state[v] == 0) {
                    visit(v);
                }
            }
            path.pop_back();
            state[u] = 2;
        };
        for (const auto& [u, vs] : g)
            if (state[u] == 0 && loop.isEmpty()) visit(u);
        QVERIFY2(loop.isEmpty(), qPrintable(QStringLiteral("a loop of includes: ") + loop));
    }
};

QTEST_GUILESS_MAIN(TestFloors)
#include "tst_floors.moc"
