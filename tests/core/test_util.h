#pragma once
#include "run/pipeline.h"
// Helpers shared by the core suites.
#include "model/request.h"
#include "sched/registry.h"
#include "workload/generators.h"

#include <QProcessEnvironment>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

namespace kairos::test {

// A request for hand-computed scenarios.
// The hand-derivable execution model of tst_prefix_cache and tst_fleet: prefill = 1 +
// 0.01 sum(L) + 1e-4 sum(L^2) s; decode = 1 s.
inline EteModel handModel() {
    EteParams p;
    p.a = 1;
    p.b = 0.01;
    p.c = 1e-4;
    p.q0 = 1;
    return EteModel(p);
}

inline Request req(double arrival, int prompt, int output, std::optional<double> budget = {}) {
    Request r;
    r.arrival = arrival;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    r.budget_s = budget;
    return r;
}

// `count` requests arriving at `rate` per second (Poisson, arrival seed `seed`), with
// lengths drawn from the distributions `prompt` and `output` ("uniform:5,30",
// "lognormal:300,0.8,max=2000": LengthDist::parse).
inline Workload generated(std::size_t count, double rate, const char* prompt, const char* output,
                          std::uint64_t seed = 0) {
    GenerateSpec g;
    g.count = count;
    g.arrivals.rate = rate;
    g.arrivals.seed = seed;
    g.prompt = LengthDist::parse(prompt);
    g.output = LengthDist::parse(output);
    return generateWorkload(g);
}

// Writes `text` to the file at `path` (replacing it); false when it cannot be written.
inline bool writeText(const QString& path, const QByteArray& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(text) == text.size();
}
inline bool writeText(const std::string& path, const std::string& text) {
    return writeText(QString::fromStdString(path), QByteArray::fromStdString(text));
}

// Real public traces live in ../shared/data beside the checkout (never copied here).
// KAIROS_DATA_DIR overrides the folder.
inline std::string dataPath(const std::string& file) {
    const char* env = std::getenv("KAIROS_DATA_DIR");
    return std::string(env && *env ? env : KAIROS_SHARED_DATA) + "/" + file;
}

// The environment of a program run in the folder `cwd` for a test: drawn offscreen, its
// default database, data and cache folders inside `cwd` (nothing of the user's touched).
inline QProcessEnvironment programEnvironment(const QString& cwd) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("KAIROS_DB"), cwd + QStringLiteral("/default.db"));
    env.insert(QStringLiteral("XDG_DATA_HOME"), cwd + QStringLiteral("/xdg"));
    env.insert(QStringLiteral("XDG_CACHE_HOME"), cwd + QStringLiteral("/cache"));
    return env;
}

inline std::string tempPath(const std::string& name) {
    static QTemporaryDir dir;
    return (dir.path() + "/" + QString::fromStdString(name)).toStdString();
}

// A policy by name, as the CLI makes it.
inline std::unique_ptr<Scheduler> policy(const std::string& name, PolicyParams params = {},
                                         const std::string& predictor = "oracle",
                                         std::uint64_t seed = 0) {
    PolicyConfig c;
    c.name = name;
    c.params = std::move(params);
    c.predictor = predictor;
    c.seed = seed;
    return makeScheduler(c);
}

// The same with vLLM's admission watermark at 0, for hand-computed scenarios.
inline std::unique_ptr<Scheduler> policyNoWatermark(const std::string& name,
                                                    PolicyParams params = {},
                                                    const std::string& predictor = "oracle",
                                                    std::uint64_t seed = 0) {
    params["watermark"] = 0;
    return policy(name, std::move(params), predictor, seed);
}

// A run context finding device profiles in the source tree's resources/profiles (what the
// application's resolver does for a build run in place).
inline RunContext sourceProfiles() {
    RunContext ctx;
    ctx.resolve_profile = [](const std::string& name, std::string* found) {
        const std::string path = KAIROS_SOURCE_DIR "/resources/profiles/" + name + ".json";
        if (found) *found = path;
        return DeviceProfile::load(path);
    };
    return ctx;
}

// Where two run logs' events first differ: the same request, kind and value exactly, the
// time to rounding (1e-9 relative: a skipped-ahead stretch sums its iteration times in
// closed form); then the same count. "" when they agree.
inline QString firstEventDifference(const RunLog& x, const RunLog& y) {
    const auto &a = x.events, &b = y.events;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        if (!(a[i].req == b[i].req && a[i].ev == b[i].ev && a[i].value == b[i].value &&
              std::fabs(a[i].t - b[i].t) <= 1e-9 * std::max(1.0, std::fabs(b[i].t))))
            return QString("event %1: %2 req %3 (%4) at %5 vs %6 req %7 (%8) at %9")
                .arg(i)
                .arg(evName(a[i].ev))
                .arg(a[i].req)
                .arg(a[i].value)
                .arg(a[i].t, 0, 'g', 17)
                .arg(evName(b[i].ev))
                .arg(b[i].req)
                .arg(b[i].value)
                .arg(b[i].t, 0, 'g', 17);
    if (a.size() != b.size()) return QString("%1 vs %2 events").arg(a.size()).arg(b.size());
    return {};
}

} // namespace kairos::test

// Float comparison with an explicit absolute tolerance, printing both values.
#define KAIROS_COMPARE_NEAR(actual, expected, tol)                                                 \
    do {                                                                                           \
        const double a_ = (actual), e_ = (expected);                                               \
        if (!(std::fabs(a_ - e_) <= (tol)))                                                        \
            QFAIL(qPrintable(QString("%1 = %2, expected %3 (tolerance %4)")                        \
                                 .arg(#actual)                                                     \
                                 .arg(a_, 0, 'g', 12)                                              \
                                 .arg(e_, 0, 'g', 12)                                              \
                                 .arg(tol)));                                                      \
    } while (0)
