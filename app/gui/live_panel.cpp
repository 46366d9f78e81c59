#include "live_panel.h"

#include "chart_tools.h"
#include "model_chart.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "workload/readers.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

namespace kairos::app {

LivePanel::LivePanel(JobTracker* jobs, QWidget* parent)
    : QWidget(parent), jobs_(jobs), e2el_median_(NAN) {
    if (!jobs_) {
        own_jobs_ = std::make_unique<JobTracker>();
        jobs_ = own_jobs_.get();
    }
    poll_ = new QTimer(this);
    poll_->setInterval(100);
    auto* v = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    model_ = new QComboBox;
    model_->setObjectName(QStringLiteral("liveModel"));
    model_->addItems({"tiny", "qwen2.5-0.5b", "llama-3-8b"});
    model_->setToolTip(tr("The transformer's shape (synthetic weights unless a folder is given)"));
    weights_ = new QLineEdit;
    weights_->setPlaceholderText(tr("synthetic (seeded)"));
    weights_->setToolTip(tr("A Hugging Face folder: config.json and *.safetensors"));
    auto* browse = new QPushButton(tr("…"));
    browse->setToolTip(tr("Choose a Hugging Face model folder"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(
            this, tr("Model folder"), views::dialogPath(QStringLiteral("model")));
        views::rememberDialogChoice(QStringLiteral("model"), d, true);
        if (!d.isEmpty()) weights_->setText(d);
    });
    auto* wrow = new QHBoxLayout;
    wrow->addWidget(weights_, 1);
    wrow->addWidget(browse);
    device_ = new QComboBox;
    device_->addItems({"cpu", "cuda"});
    threads_ = new QSpinBox;
    threads_->setRange(0, 256);
    threads_->setSpecialValueText(tr("libtorch's default"));
    limit_ = new QSpinBox;
    limit_->setObjectName(QStringLiteral("liveLimit"));
    limit_->setRange(1, 100000);
    limit_->setValue(24);
    limit_->setToolTip(tr("The first requests of the workload run live (a CPU is slow)"));
    quick_ = new QCheckBox(tr("quick grid"));
    quick_->setChecked(true);
    quick_->setToolTip(tr("Profile fewer settings: a first look in about a minute on a CPU "
                          "for the tiny model"));
    recalibrate_ = new QCheckBox(tr("recalibrate"));
    recalibrate_->setChecked(true);
    recalibrate_->setToolTip(tr("Before the live run, re-time the profile's reference step and "
                                "scale the model by how far this device's speed has drifted"));
    form->addRow(tr("Model"), model_);
    form->addRow(tr("Weights"), wrow);
    form->addRow(tr("Device"), device_);
    form->addRow(tr("Threads"), threads_);
    form->addRow(tr("Requests"), limit_);
    auto* checks = new QHBoxLayout;
    checks->addWidget(quick_);
    checks->addWidget(recalibrate_);
    checks->addStretch(1);
    form->addRow(QString(), checks);
    v->addLayout(form);
    profile_button_ = new QPushButton(tr("&Profile"));
    profile_button_->setToolTip(tr("Measure prefill and decode steps on this device, fit the ETE "
                                   "model and store both in the database"));
    compare_button_ = new QPushButton(tr("Run &live"));
    compare_button_->setToolTip(tr("Run the workload's first requests live and simulate them on "
                                   "the profile; plot live against simulated"));
    cancel_button_ = new QPushButton(tr("Cancel"));
    cancel_button_->setEnabled(false);
    connect(profile_button_, &QPushButton::clicked, this, &LivePanel::startProfile);
    connect(compare_button_, &QPushButton::clicked, this, &LivePanel::startCompare);
    connect(cancel_button_, &QPushButton::clicked, this, &LivePanel::cancel);
    auto* brow = new QHBoxLayout;
    brow->addWidget(profile_button_);
    brow->addWidget(compare_button_);
    brow->addWidget(cancel_button_);
    v->addLayout(brow);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setTextVisible(true);
    status_ = new QLabel(tr("Profile the model, then run the workload live."));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(progress_);
    v->addWidget(status_);
    chart_ = new views::ModelChart;
    views::addChartExport(chart_, QStringLiteral("live_vs_simulated"));
    chart_->setObjectName(QStringLiteral("liveChart"));
    views::sayWhenEmpty(chart_, tr("No live run yet. Profile the model, then Run live: each "
                                   "request's measured time against the simulation's is drawn "
                                   "here."));
    v->addWidget(chart_, 1);
}

LivePanel::~LivePanel() = default; // the tracker's shutdown ends a running child

QString LivePanel::cliPath() const {
    if (!cli_.isEmpty()) return cli_;
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("kairos-cli"));
}

void LivePanel::setWorkload(std::shared_ptr<const Workload> w) {
    workload_ = std::move(w);
}

bool LivePanel::busy() const {
    return jobs_->busy(kChannel);
}

QStringList LivePanel::modelArgs() const {
    QStringList a{QStringLiteral("--model"), model_->currentText(), QStringLiteral("--device"),
                  device_->currentText()};
    if (!weights_->text().trimmed().isEmpty()) a << QStringLiteral("--weights") << weights_->text();
    if (threads_->value() > 0)
        a << QStringLiteral("--threads") << QString::number(threads_->value());
    return a;
}

void LivePanel::setBusy(bool on) {
    profile_button_->setEnabled(!on);
    compare_button_->setEnabled(!on);
    cancel_button_->setEnabled(on);
    for (QWidget* w : std::initializer_list<QWidget*>{model_, weights_, device_, threads_, limit_,
                                                      quick_, recalibrate_})
        w->setEnabled(!on);
}

void LivePanel::startProfile() {
    if (busy()) return;
    QStringList args{QStringLiteral("profile")};
    args << modelArgs() << QStringLiteral("--progress-lines");
    if (quick_->isChecked()) args << QStringLiteral("--quick");
    if (!db_.isEmpty()) args << QStringLiteral("--db") << db_;
    const QString key = modelArgs().join(QLatin1Char(' '));
    run(tr("profiling"), args, [this, key](const QByteArray& out) {
        const auto m = QRegularExpression(QStringLiteral("stored as model (\\d+)")).match(out);
        if (m.hasMatch()) {
            model_id_ = m.captured(1).toLongLong();
            model_id_for_ = key;
        }
        const auto t = QRegularExpression(QStringLiteral("([0-9.]+) s of measuring")).match(out);
        status_->setText(m.hasMatch()
                             ? tr("Profiled: ETE model %1 stored (see Models), %2 s of measuring.")
                                   .arg(model_id_)
                                   .arg(t.captured(1))
                             : tr("Profiled (%1 s of measuring); no database, so nothing stored.")
                                   .arg(t.captured(1)));
        return true;
    });
}

void LivePanel::startCompare() {
    if (busy()) return;
    if (!workload_ || workload_->requests.empty()) {
        status_->setText(tr("Open or generate a workload first."));
        Q_EMIT finished(false);
        return;
    }
    tmp_ = std::make_unique<QTemporaryDir>();
    const QString wl = tmp_->filePath(QStringLiteral("live_workload.jsonl"));
    const QString js = tmp_->filePath(QStringLiteral("live_compare.json"));
    try {
        writeKairosFile(*workload_, wl.toStdString());
    } catch (const std::exception& e) {
        status_->setText(tr("Could not write the workload: %1").arg(QString::fromUtf8(e.what())));
        Q_EMIT finished(false);
        return;
    }
    QStringList args{QStringLiteral("validate"),
                     QStringLiteral("-w"),
                     wl,
                     QStringLiteral("--policy"),
                     policy_,
                     QStringLiteral("--limit"),
                     QString::number(limit_->value())};
    args << modelArgs() << QStringLiteral("--json") << js << QStringLiteral("--progress-lines");
    if (recalibrate_->isChecked()) args << QStringLiteral("--recalibrate");
    const QString key = modelArgs().join(QLatin1Char(' '));
    if (model_id_ > 0 && model_id_for_ == key && !db_.isEmpty())
        args << QStringLiteral("--exec-model") << QString::number(model_id_);
    else if (quick_->isChecked())
        args << QStringLiteral("--quick"); // profiles first
    if (!db_.isEmpty()) args << QStringLiteral("--db") << db_;
    run(tr("running live"), args, [this, js](const QByteArray&) { return showComparison(js); });
}

bool LivePanel::showComparison(const QString& json_path) {
    std::string body;
    try {
        body = readInputFile(json_path.toStdString(), limits::kSettings);
        forgetInput(
            json_path.toStdString()); // the panel's own scratch file, written anew by each run
    } catch (const std::exception& e) {
        status_->setText(
            tr("kairos-cli wrote no comparison (%1)").arg(QString::fromStdString(e.what())));
        return false;
    }
    const auto j = parseJsonLenient(body);
    if (!j.is_object() || !j.contains("requests")) {
        status_->setText(tr("The comparison file is not what kairos-cli validate writes."));
        return false;
    }
    auto err = [&](const char* key, const char* which) {
        const auto& e = j.value(key, nlohmann::json::object());
        return e.contains(which) && e[which].is_number() ? e[which].get<double>() : NAN;
    };
    nlohmann::json fits = nlohmann::json::array();
    for (const char* m : {"e2el", "ttft"}) {
        nlohmann::json pts = nlohmann::json::array();
        for (const auto& r : j["requests"])
            pts.push_back(
                {r.value(std::string(m) + "_live", 0.0), r.value(std::string(m) + "_sim", 0.0)});
        const std::string key = std::string(m) + "_error";
        const QString label = tr("%1: median %2 %, p90 %3 %")
                                  .arg(QString::fromLatin1(m).toUpper())
                                  .arg(100 * err(key.c_str(), "median"), 0, 'f', 1)
                                  .arg(100 * err(key.c_str(), "p90"), 0, 'f', 1);
        fits.push_back({{"fit", m}, {"label", label.toStdString()}, {"points", pts}});
    }
    e2el_median_ = err("e2el_error", "median");
    chart_->setModel(tr("Simulated against live, per request"), fits.dump(), tr("live (s)"),
                     tr("simulated (s)"));
    QString text = tr("%1 requests live on %2; simulated with %3 (%4).")
                       .arg(j["requests"].size())
                       .arg(QString::fromStdString(j.value("live", std::string())))
                       .arg(QString::fromStdString(j.value("simulator", std::string())))
                       .arg(QString::fromStdString(j.value("policy", std::string())));
    // How far the device's speed was from the profile's, before and after the run, and the
    // error left with the model scaled to the run's mean speed.
    const auto ref = j.value("reference", nlohmann::json::object());
    const double then = ref.value("profile", 0.0);
    if (then > 0 && ref.contains("before") && ref.contains("after"))
        text += tr(" Device speed against the profile: ×%1 before the run, ×%2 after; "
                   "E2EL median error at the run's mean speed %3 %.")
                    .arg(ref.value("before", 0.0) / then, 0, 'f', 3)
                    .arg(ref.value("after", 0.0) / then, 0, 'f', 3)
                    .arg(100 * j.value("bracketed", nlohmann::json::object())
                                   .value("e2el_error", nlohmann::json::object())
                                   .value("median", NAN),
                         0, 'f', 1);
    status_->setText(text);
    return true;
}

namespace {

// What the child said so far, shared between the job's thread and the GUI's poll.
struct ChildProgress {
    std::mutex m;
    int done = 0, total = -1; // -1: no progress line yet
    QString text;
};

// The last stderr lines that are not progress lines: the error shown on failure.
void keepTail(QByteArray* tail, const QByteArray& line) {
    *tail += line + '\n';
    if (tail->size() > 2000) *tail = tail->right(2000);
}

} // namespace

void LivePanel::run(const QString& what, const QStringList& args,
                    std::function<bool(const QByteArray&)> done) {
    const QString cli = cliPath();
    if (!QFileInfo::exists(cli)) {
        status_->setText(tr("kairos-cli not found at %1").arg(cli));
        Q_EMIT finished(false);
        return;
    }
    progress_->setRange(0, 0); // busy until the first progress line
    progress_->setValue(0);
    status_->setText(what + QStringLiteral("…"));
    setBusy(true);
    auto shared = std::make_shared<ChildProgress>();
    // The child runs on the window's job tracker: its pipes are read on a pool thread (the
    // GUI never waits on it), cancel ends it (terminate, then kill after 2 s), and closing
    // the window cancels it and waits for it to end.
    jobs_->start(kChannel, this, [this, cli, args, what, done, shared](JobTracker::Job& job) {
        QProcess p;
        p.start(cli, args);
        QByteArray err_buf, tail, out;
        bool started = p.waitForStarted(30000), cancelled = false;
        QElapsedTimer since_cancel;
        static const QRegularExpression re(QStringLiteral("^progress (\\d+)/(\\d+) ?(.*)$"));
        while (started && p.state() != QProcess::NotRunning) {
            if (job.cancel && !cancelled) {
                cancelled = true;
                p.terminate();
                since_cancel.start();
            }
            if (cancelled && since_cancel.elapsed() > 2000) p.kill();
            p.waitForReadyRead(50);
            out += p.readAllStandardOutput();
            err_buf += p.readAllStandardError();
            for (int nl; (nl = err_buf.indexOf('\n')) >= 0;) {
                const QByteArray line = err_buf.left(nl);
                err_buf.remove(0, nl + 1);
                const auto m = re.match(QString::fromUtf8(line));
                if (!m.hasMatch()) {
                    keepTail(&tail, line);
                    continue;
                }
                const std::lock_guard<std::mutex> lock(shared->m);
                shared->done = m.captured(1).toInt();
                shared->total = m.captured(2).toInt();
                shared->text = m.captured(3);
                job.progress = shared->total > 0 ? double(shared->done) / shared->total : 0.0;
            }
        }
        if (started) p.waitForFinished(-1);
        out += p.readAllStandardOutput();
        keepTail(&tail, err_buf + p.readAllStandardError());
        const int code = p.exitCode();
        const bool normal = started && p.exitStatus() == QProcess::NormalExit;
        const QString start_error = started ? QString() : p.errorString();
        return std::function<void()>(
            [this, what, done, code, normal, cancelled, out, tail, start_error] {
                poll_->stop();
                setBusy(false);
                progress_->setRange(0, 1);
                bool ok = false;
                if (!start_error.isEmpty()) {
                    status_->setText(tr("could not start %1: %2").arg(cliPath(), start_error));
                } else if (cancelled) {
                    status_->setText(tr("%1 cancelled.").arg(what));
                    progress_->setValue(0);
                } else if (!normal || code != 0) {
                    status_->setText(tr("%1 failed (exit %2): %3")
                                         .arg(what)
                                         .arg(code)
                                         .arg(QString::fromUtf8(tail.trimmed())));
                    progress_->setValue(0);
                } else {
                    progress_->setValue(1);
                    ok = done ? done(out) : true;
                }
                Q_EMIT finished(ok);
            });
    });
    // The bar and the status follow the child's progress lines.
    disconnect(poll_, nullptr, this, nullptr);
    connect(poll_, &QTimer::timeout, this, [this, what, shared] {
        const std::lock_guard<std::mutex> lock(shared->m);
        if (shared->total < 0) return;
        if (shared->total > 0) {
            progress_->setRange(0, shared->total);
            progress_->setValue(shared->done);
        } else {
            progress_->setRange(0, 0);
        }
        status_->setText(QStringLiteral("%1: %2").arg(what, shared->text));
    });
    poll_->start();
}

void LivePanel::cancel() {
    if (busy()) jobs_->cancel(kChannel);
}

} // namespace kairos::app
