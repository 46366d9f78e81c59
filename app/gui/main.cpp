// kairos: the workbench. `kairos --workload F --policy P [--param K=V ...] [--screenshot
// OUT.png --quit]` opens on a workload; with --screenshot the window is saved as soon as
// the first simulation is shown (for tests and docs).
#include "chart_area.h"
#include "chart_tools.h"
#include "inspector_panel.h"
#include "main_window.h"
#include "model/router.h"
#include "new_hardware_box.h"
#include "predict/predictor.h"
#include "run/run_spec.h"
#include "session_io.h"
#include "timeline_view.h"
#include "util/atomic_file.h"
#include "util/memory.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QLibraryInfo>
#include <QPixmap>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <csignal>
#include <cstdio>

namespace {

// Why Qt could not open a window here, or "" when it can: Qt aborts (qFatal) when its
// platform plugin is missing or cannot reach a display, so this is asked first, and the
// user gets an error and exit 2 instead of a core dump.
QString noDisplayReason() {
    QString platform = qEnvironmentVariable("QT_QPA_PLATFORM");
    platform = platform.section(QLatin1Char(':'), 0, 0).section(QLatin1Char(';'), 0, 0);
    const QString plugins =
        QLibraryInfo::path(QLibraryInfo::PluginsPath) + QStringLiteral("/platforms");
    if (!platform.isEmpty()) {
        if (!QFileInfo::exists(plugins + QStringLiteral("/libq") + platform +
                               QStringLiteral(".so"))) {
            QStringList known;
            for (const QString& f : QDir(plugins).entryList({QStringLiteral("libq*.so")}))
                known << f.mid(4, f.size() - 7);
            return QStringLiteral("QT_QPA_PLATFORM=%1: no such Qt platform (known: %2)")
                .arg(platform, known.join(QStringLiteral(", ")));
        }
        if (platform == QStringLiteral("xcb") && qEnvironmentVariableIsEmpty("DISPLAY"))
            return QStringLiteral("QT_QPA_PLATFORM=xcb but DISPLAY is not set");
        if (platform.startsWith(QStringLiteral("wayland")) &&
            qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
            return QStringLiteral("QT_QPA_PLATFORM=%1 but WAYLAND_DISPLAY is not set")
                .arg(platform);
        return {};
    }
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        return QStringLiteral("no display (DISPLAY and WAYLAND_DISPLAY are not set); to draw "
                              "without one: QT_QPA_PLATFORM=offscreen kairos ... --screenshot "
                              "OUT.png --quit, or kairos-cli for the analysis");
    return {};
}

} // namespace

int main(int argc, char** argv) {
    // A file past the size limit fails its write (a message, nothing replaced) instead of
    // the process being killed by SIGXFSZ (kairos-cli does the same).
    std::signal(SIGXFSZ, SIG_IGN);
    QStringList args;
    for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
    QCommandLineParser cl;
    cl.setApplicationDescription(QStringLiteral("Latency analysis of LLM serving under deadlines"));
    cl.addHelpOption();
    cl.addVersionOption();
    const QCommandLineOption workload({"w", "workload"}, "Workload file to open.", "file");
    const QCommandLineOption policy({"p", "policy"}, "Scheduling policy.", "name", "fcfs");
    const QCommandLineOption param("param", "Policy parameter NAME=VALUE (repeatable).", "k=v");
    const QCommandLineOption predictor("predictor", "Length predictor.", "spec", "oracle");
    const QCommandLineOption profile(
        "profile",
        QStringLiteral("Device profile (name or JSON file). Default: each workload's own, %1 "
                       "(TimelyLLM's setting) for robot plans, %2 (MC-SF's) otherwise.")
            .arg(QLatin1String(kairos::kRobotProfileName),
                 QLatin1String(kairos::kDefaultProfileName)),
        "name");
    const QCommandLineOption shot("screenshot", "Save the window to this PNG once shown.", "png");
    const QCommandLineOption quit("quit", "Quit after --screenshot.");
    const QCommandLineOption size(
        "size",
        "Window size WIDTHxHEIGHT (default: 1400x850, or the screen's available area "
        "where that is smaller).",
        "WxH", "1400x850");
    const QCommandLineOption tab("tab", "Chart shown under the timeline: kv, latency or utility.",
                                 "name", "kv");
    const QCommandLineOption compare(
        "compare", "Simulate this policy first and pin it; then show --policy against it.", "name");
    const QCommandLineOption rows("rows", "Timeline rows: request or agent.", "kind", "request");
    const QCommandLineOption dock(
        "dock",
        "Right-hand panel shown: metrics, runs, models, live, sweep, inspector or requests.",
        "name", "metrics");
    const QCommandLineOption inspect(
        "inspect",
        "Show the Inspector at time T (s), with the story of the request whose id in the trace "
        "is ID when given (T or T,ID).",
        "T[,ID]");
    const QCommandLineOption measurements(
        "measurements",
        "A CSV of measured rows (LLM-Inference-Bench's columns) of a configuration the ALA "
        "model never measured: the Models panel predicts it, fitted to them, with its range.",
        "csv");
    const QCommandLineOption db("db", "Kairos database of the runs browser (default: the user's).",
                                "file");
    const QCommandLineOption caching("prefix-caching",
                                     "Automatic prefix caching (16-token blocks): on or off.",
                                     "on|off", "off");
    const QCommandLineOption replicas(
        "replicas", QString("Replicas behind a router (1..%1).").arg(kairos::kMaxReplicas), "N",
        "1");
    const QCommandLineOption router(
        "router", QString::fromStdString("Router of the replicas: " + kairos::routerNames() + "."),
        "name", "round_robin");
    const QCommandLineOption open_file(
        "open",
        "Open a workload, a session or a run log (simulate --runlog, a fleet's, a live run's: "
        "shown as recorded, without simulating), told apart by content.",
        "file");
    const QCommandLineOption save_session(
        "save-session",
        "Write the session (run settings and view) to this file when the window "
        "closes (--quit included).",
        "file");
    cl.addOptions({workload, policy,   param,   predictor,    profile,   shot,        quit,
                   size,     tab,      compare, rows,         db,        dock,        inspect,
                   caching,  replicas, router,  measurements, open_file, save_session});
    // Parsed before any window exists: --help, --version and a mistake need no display.
    if (!cl.parse(args)) {
        std::fprintf(stderr, "kairos: error: %s (kairos --help lists the options)\n",
                     qPrintable(cl.errorText()));
        return 2;
    }
    if (cl.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(cl.helpText()), stdout);
        return std::fflush(stdout) == 0 ? 0 : 2;
    }
    if (cl.isSet(QStringLiteral("version"))) {
        std::printf("Kairos %s\n", KAIROS_VERSION);
        return std::fflush(stdout) == 0 ? 0 : 2;
    }
    if (!cl.positionalArguments().isEmpty()) {
        std::fprintf(stderr,
                     "kairos: error: unexpected argument '%s' (options only; kairos "
                     "--help lists them)\n",
                     qPrintable(cl.positionalArguments().front()));
        return 2;
    }
    // Each text option's value checked where it enters, as kairos-cli checks it.
    if (cl.isSet(workload) && cl.isSet(open_file)) {
        std::fprintf(stderr, "kairos: error: give --workload or --open, not both\n");
        return 2;
    }
    for (const auto* o :
         {&workload, &shot, &db, &profile, &measurements, &open_file, &save_session})
        if (cl.isSet(*o) && cl.value(*o).isEmpty()) {
            std::fprintf(stderr, "kairos: error: --%s: an empty value names nothing\n",
                         qPrintable(o->names().last()));
            return 2;
        }
    // Every file the window writes (the screenshot, a chart, a report, a session) goes through
    // the project's output rules with one more: a device or a pipe is refused, never
    // written into (nor replaced: a Save dialog names files).
    kairos::outputsFilesOnly(true);
    if (cl.isSet(save_session)) {
        // Judged before any window opens, as --screenshot is: nothing the window reads is
        // written over, and a device, a pipe or a folder is refused.
        std::vector<kairos::NamedPath> ins;
        for (const auto* o : {&workload, &db, &profile, &measurements, &open_file})
            if (cl.isSet(*o) && QFileInfo(cl.value(*o)).isFile())
                ins.push_back({"--" + o->names().last().toStdString(), cl.value(*o).toStdString()});
        std::vector<kairos::NamedPath> outs = {
            {"--save-session", cl.value(save_session).toStdString()}};
        if (cl.isSet(shot)) outs.push_back({"--screenshot", cl.value(shot).toStdString()});
        try {
            kairos::checkOutputRules(ins, outs); // its message names the option
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kairos: error: %s\n", e.what());
            return 2;
        }
        try {
            kairos::checkOutputTarget(cl.value(save_session).toStdString());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kairos: error: --save-session: %s\n", e.what());
            return 2;
        }
    }
    if (cl.isSet(shot)) {
        // Judged before any window opens: a device, a pipe, a folder, a link to nothing, or
        // a file this command reads (the workload, the database, a profile or measurements
        // file) is refused with exit 2 and nothing is written.
        std::vector<kairos::NamedPath> ins;
        for (const auto* o : {&workload, &db, &profile, &measurements})
            if (cl.isSet(*o) && QFileInfo(cl.value(*o)).isFile())
                ins.push_back({"--" + o->names().last().toStdString(), cl.value(*o).toStdString()});
        try {
            kairos::checkOutputRules(ins, {{"--screenshot", cl.value(shot).toStdString()}});
            kairos::checkOutputTarget(cl.value(shot).toStdString());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kairos: error: --screenshot: %s\n", e.what());
            return 2;
        }
    }
    try {
        kairos::makePredictor(cl.value(predictor).toStdString(), 0);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kairos: error: --predictor %s: %s\n", qPrintable(cl.value(predictor)),
                     e.what());
        return 2;
    }
    if (const QString why = noDisplayReason(); !why.isEmpty()) {
        std::fprintf(stderr, "kairos: error: %s\n", qPrintable(why));
        return 2;
    }

    {
        // The window's memory, judged before Qt starts (Qt cannot recover from a failed
        // allocation: under a tight ulimit -v it crashed or hung on a thread it could not
        // start): Qt and the panels (300 MiB of address space), each thread's stack (8 MiB)
        // and two allocator arenas (64 MiB each), and a picture of the window four times over
        // (--screenshot: the grab, its conversion and the PNG's buffers; 711 MB resident at
        // 8192x8192).
        // (A --size outside 200..8192 is refused with its own message further on.)
        const QStringList wh = cl.value(size).split('x');
        double w = wh.size() == 2 ? wh[0].toDouble() : 0, h = wh.size() == 2 ? wh[1].toDouble() : 0;
        if (!(w >= 200 && w <= 8192 && h >= 200 && h <= 8192)) w = 1400, h = 850;
        const double threads = std::max(2, QThread::idealThreadCount()) + 4;
        const double need =
            (300.0 + threads * 8 + 2 * 64) * 1024 * 1024 + (cl.isSet(shot) ? w * h * 4 * 4 : 0);
        try {
            kairos::checkMemoryNeed(need, "the workbench", "a smaller --size");
        } catch (const std::exception& e) {
            std::fprintf(stderr, "kairos: error: %s\n", e.what());
            return 2;
        }
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Kairos"));
    QApplication::setOrganizationName(QStringLiteral("Kairos"));
    QApplication::setApplicationVersion(QStringLiteral(KAIROS_VERSION));
    qRegisterMetaType<std::shared_ptr<const kairos::app::RunView>>();

    kairos::app::StartOptions opt;
    opt.workload = cl.value(workload);
    opt.open = cl.value(open_file);
    opt.policy = cl.value(policy);
    opt.params = cl.values(param);
    opt.predictor = cl.value(predictor);
    opt.profile = cl.value(profile);
    opt.compare = cl.value(compare);
    opt.db = cl.value(db);
    if (cl.value(rows) != "request" && cl.value(rows) != "agent") {
        std::fprintf(stderr, "kairos: error: --rows must be request or agent\n");
        return 2;
    }
    opt.agent_rows = cl.value(rows) == "agent";
    if (cl.value(caching) != "on" && cl.value(caching) != "off") {
        std::fprintf(stderr, "kairos: error: --prefix-caching %s: expected on or off\n",
                     qPrintable(cl.value(caching)));
        return 2;
    }
    opt.prefix_caching = cl.value(caching) == "on";
    opt.prefix_caching_given = cl.isSet(caching);
    opt.policy_follows_workload = !cl.isSet(policy);
    // A bare `kairos` opens the first-look sample (installed beside the profiles, in the
    // source tree of a build run in place, or beside a copied bin/ folder) where preemption C
    // visibly matters: 400 chat requests near saturation under Trail's SPRPT with limited
    // preemption.
    if (!cl.isSet(workload) && !cl.isSet(open_file)) {
        const QDir bin(QCoreApplication::applicationDirPath());
        for (const QString& rel :
             {QStringLiteral("../share/kairos/samples/chat_near_saturation.jsonl"),
              QStringLiteral("../../sample_traces/chat_near_saturation.jsonl"),
              QStringLiteral("../sample_traces/chat_near_saturation.jsonl")})
            if (QFileInfo(bin.filePath(rel)).isFile()) {
                opt.workload = QDir::cleanPath(bin.filePath(rel));
                if (!cl.isSet(policy)) opt.policy = QStringLiteral("sprpt_lp");
                if (!cl.isSet(predictor)) opt.predictor = QStringLiteral("trail");
                break;
            }
    }
    bool replicas_ok = false;
    opt.replicas = cl.value(replicas).toInt(&replicas_ok);
    if (!replicas_ok || opt.replicas < 1 || opt.replicas > kairos::kMaxReplicas) {
        std::fprintf(stderr, "kairos: error: --replicas %s: expected a whole number in 1..%d\n",
                     qPrintable(cl.value(replicas)), kairos::kMaxReplicas);
        return 2;
    }
    kairos::Router parsed_router{};
    if (!kairos::routerFromName(cl.value(router).toStdString(), &parsed_router)) {
        std::fprintf(stderr, "kairos: error: --router %s: expected one of %s\n",
                     qPrintable(cl.value(router)), kairos::routerNames().c_str());
        return 2;
    }
    if ((parsed_router == kairos::Router::PrefixAware ||
         parsed_router == kairos::Router::PrefixOracle) &&
        !opt.prefix_caching) {
        std::fprintf(stderr, "kairos: error: --router %s needs --prefix-caching on\n",
                     qPrintable(cl.value(router)));
        return 2;
    }
    opt.router = cl.value(router);
    // The window's size: WIDTHxHEIGHT, each 200..8192 pixels (a 100,000-pixel window hangs
    // the X server or the offscreen backend).
    const QStringList wh = cl.value(size).split('x');
    bool wok = false, hok = false;
    const int width = wh.size() == 2 ? wh[0].toInt(&wok) : 0;
    const int height = wh.size() == 2 ? wh[1].toInt(&hok) : 0;
    if (!wok || !hok || width < 200 || height < 200 || width > 8192 || height > 8192) {
        std::fprintf(stderr, "kairos: error: --size %s: expected WIDTHxHEIGHT, each 200..8192\n",
                     qPrintable(cl.value(size)));
        return 2;
    }
    const QStringList tabs_known{"kv", "latency", "utility"};
    if (!tabs_known.contains(cl.value(tab))) {
        std::fprintf(stderr, "kairos: error: --tab %s: expected kv, latency or utility\n",
                     qPrintable(cl.value(tab)));
        return 2;
    }
    std::unique_ptr<kairos::app::MainWindow> w;
    try {
        w = std::make_unique<kairos::app::MainWindow>(opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kairos: error: %s\n", e.what());
        return 2;
    }
    // An explicit --size is taken as it is (screenshots of a given size); otherwise the
    // window fits the screen.
    if (cl.isSet(size))
        w->resize(width, height);
    else
        w->fitToScreen();
    if (auto* tabs = w->findChild<QTabWidget*>(QStringLiteral("charts")))
        tabs->setCurrentIndex(int(tabs_known.indexOf(cl.value(tab))));
    {
        // The right-hand panels, as the window has them (the Policy panel, on the left, is
        // always shown).
        QStringList right;
        QDockWidget* chosen = nullptr;
        for (auto* d : w->findChildren<QDockWidget*>()) {
            if (w->dockWidgetArea(d) != Qt::RightDockWidgetArea) continue;
            right << d->objectName();
            if (d->objectName() == cl.value(dock)) chosen = d;
        }
        right.sort();
        if (!chosen) {
            std::fprintf(stderr, "kairos: error: --dock %s: no such right-hand panel (%s)\n",
                         qPrintable(cl.value(dock)), qPrintable(right.join(", ")));
            return 2;
        }
        chosen->raise();
    }
    if (cl.isSet(measurements)) {
        // Read now (a bad file is an error before any window shows); drawn once the
        // newest ALA model is loaded.
        auto* box = w->findChild<kairos::app::NewHardwareBox*>(QStringLiteral("newHardware"));
        QString error;
        if (!box || !box->importCsv(cl.value(measurements), &error)) {
            std::fprintf(stderr, "kairos: error: --measurements: %s\n", qPrintable(error));
            return 2;
        }
        if (auto* d = w->findChild<QDockWidget*>(QStringLiteral("models"))) d->raise();
    }
    if (cl.isSet(inspect)) {
        const QStringList parts = cl.value(inspect).split(',');
        bool tok = false, rok = true;
        const double t = parts.value(0).toDouble(&tok);
        const qlonglong id = parts.size() > 1 ? parts[1].trimmed().toLongLong(&rok) : 0;
        // T: seconds in [0, 1e9] (a run's clock never reaches further); ID: the trace's own
        // id for a request (as its file, the CSV and Perfetto name it), checked once the
        // workload is read.
        if (!tok || !rok || parts.size() > 2 || !(t >= 0 && t <= 1e9)) {
            std::fprintf(stderr,
                         "kairos: error: --inspect %s: expected T or T,ID (T in [0, 1e9] s, ID "
                         "a request's id in the trace)\n",
                         qPrintable(cl.value(inspect)));
            return 2;
        }
        const bool with_request = parts.size() > 1;
        // Once the first run is shown (before a --screenshot is taken: connected first).
        QObject::connect(
            w.get(), &kairos::app::MainWindow::ready, w.get(),
            [win = w.get(), t, id, with_request] {
                if (!with_request) {
                    win->inspector()->inspectAt(t);
                    win->showInspector();
                    return;
                }
                const auto& wl = win->state()->workload();
                const auto row = wl ? wl->rowOfId(id) : std::nullopt;
                if (!row) {
                    const std::size_t n = wl ? wl->size() : 0;
                    std::fprintf(
                        stderr,
                        "kairos: error: --inspect %g,%lld: no request has id %lld (the "
                        "workload has %zu requests, the first with id %lld, the last %lld)\n",
                        t, id, id, n, n ? static_cast<long long>(wl->idOf(0)) : 0LL,
                        n ? static_cast<long long>(wl->idOf(n - 1)) : 0LL);
                    QApplication::exit(2);
                    return;
                }
                win->state()->setSelection(static_cast<int>(*row), t);
                win->showInspector();
            },
            Qt::SingleShotConnection);
    }
    w->show();
    if (cl.isSet(shot)) {
        const QString out = cl.value(shot);
        const bool and_quit = cl.isSet(quit);
        auto save = [&w, out, and_quit] {
            // Layouts asked for by timers that fired in the same pass as this one (the
            // Inspector's first widening) are applied before the picture is taken.
            QCoreApplication::sendPostedEvents();
            w->charts()
                ->timeline()
                ->finishFrame(); // a large trace's frame is built off the GUI thread
            // Whole or not at all, through the output rules (chart_tools.h): a failed write
            // (a full disk, a path that became a device) leaves nothing and says why.
            bool ok = true;
            try {
                kairos::views::writeOutputFile(out, kairos::views::pngBytes(w->grab().toImage()));
                std::printf("kairos: saved %s\n", qPrintable(out));
            } catch (const std::exception& e) {
                ok = false;
                std::fprintf(stderr, "kairos: error: --screenshot: %s\n", e.what());
            }
            // A workload that could not be opened, or a first run that failed, is an error
            // for a script, whatever the picture shows.
            if (!w->startError().isEmpty())
                std::fprintf(stderr, "kairos: error: %s\n", qPrintable(w->startError()));
            if (and_quit) QApplication::exit(!ok || !w->startError().isEmpty() ? 2 : 0);
        };
        if (opt.workload.isEmpty() && opt.open.isEmpty())
            QTimer::singleShot(200, save);
        else
            QObject::connect(
                w.get(), &kairos::app::MainWindow::ready, w.get(),
                [save, win = w.get()] {
                    // Background work still under way (the Runs and Models panels' reads,
                    // an ALA model parsed): after all of it is shown.
                    if (win->jobs().pending() > 0)
                        QObject::connect(
                            &win->jobs(), &kairos::app::JobTracker::idle, win,
                            [save] { QTimer::singleShot(50, save); }, Qt::SingleShotConnection);
                    else
                        QTimer::singleShot(50, save);
                },
                Qt::SingleShotConnection);
    }
    const int rc = QApplication::exec();
    if (cl.isSet(save_session)) {
        QString error;
        if (!w->sessions()->save(cl.value(save_session), &error)) {
            std::fprintf(stderr, "kairos: error: --save-session %s: %s\n",
                         qPrintable(cl.value(save_session)), qPrintable(error));
            return 2;
        }
        std::fprintf(stderr, "kairos: saved session %s\n", qPrintable(cl.value(save_session)));
    }
    return rc;
}
