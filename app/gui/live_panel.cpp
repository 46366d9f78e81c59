#include "live_panel.h"

#include "chart_tools.h"
#include "model_chart.h"
#include "workload/readers.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>
#include <nlohmann/json.hpp>

namespace kairos::app {

LivePanel::LivePanel(QWidget* parent) : QWidget(parent), e2el_median_(NAN) {
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
        const QString d = QFileDialog::getExistingDirectory(this, tr("Model folder"));
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
    v->addWidget(chart_, 1);
}

LivePanel::~LivePanel() {
    if (proc_ && proc_->state() != QProcess::NotRunning) {
        proc_->kill();
        proc_->waitForFinished(3000);
    }
}

QString LivePanel::cliPath() const {
    if (!cli_.isEmpty()) return cli_;
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("kairos-cli"));
}

void LivePanel::setWorkload(std::shared_ptr<const Workload> w) {
    workload_ = std::move(w);
}

bool LivePanel::busy() const {
    return proc_ && proc_->state() != QProcess::NotRunning;
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
    QFile f(json_path);
    if (!f.open(QIODevice::ReadOnly)) {
        status_->setText(tr("kairos-cli wrote no comparison (%1)").arg(json_path));
        return false;
    }
    const auto j = nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
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

void LivePanel::run(const QString& what, const QStringList& args,
                    std::function<bool(const QByteArray&)> done) {
    const QString cli = cliPath();
    if (!QFileInfo::exists(cli)) {
        status_->setText(tr("kairos-cli not found at %1").arg(cli));
        Q_EMIT finished(false);
        return;
    }
    delete proc_;
    proc_ = new QProcess(this);
    job_ = what;
    on_done_ = std::move(done);
    cancelled_ = false;
    err_buf_.clear();
    err_tail_.clear();
    progress_->setRange(0, 0); // busy until the first progress line
    status_->setText(what + QStringLiteral("…"));
    setBusy(true);
    connect(proc_, &QProcess::readyReadStandardError, this, &LivePanel::readProgress);
    connect(proc_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus st) {
        readProgress();
        setBusy(false);
        progress_->setRange(0, 1);
        bool ok = false;
        if (cancelled_) {
            status_->setText(tr("%1 cancelled.").arg(job_));
            progress_->setValue(0);
        } else if (st != QProcess::NormalExit || code != 0) {
            status_->setText(tr("%1 failed (exit %2): %3")
                                 .arg(job_)
                                 .arg(code)
                                 .arg(QString::fromUtf8(err_tail_.trimmed())));
            progress_->setValue(0);
        } else {
            progress_->setValue(1);
            ok = on_done_ ? on_done_(proc_->readAllStandardOutput()) : true;
        }
        Q_EMIT finished(ok);
    });
    connect(proc_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return;
        setBusy(false);
        progress_->setRange(0, 1);
        status_->setText(tr("could not start %1: %2").arg(cliPath(), proc_->errorString()));
        Q_EMIT finished(false);
    });
    proc_->start(cli, args);
}

void LivePanel::readProgress() {
    if (!proc_) return;
    err_buf_ += proc_->readAllStandardError();
    int nl;
    while ((nl = err_buf_.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(err_buf_.left(nl));
        err_buf_.remove(0, nl + 1);
        static const QRegularExpression re(QStringLiteral("^progress (\\d+)/(\\d+) ?(.*)$"));
        const auto m = re.match(line);
        if (!m.hasMatch()) {
            // Keep the last lines that are not progress: the error to show on failure.
            err_tail_ += line.toUtf8() + '\n';
            if (err_tail_.size() > 2000) err_tail_ = err_tail_.right(2000);
            continue;
        }
        const int done = m.captured(1).toInt(), total = m.captured(2).toInt();
        if (total > 0) {
            progress_->setRange(0, total);
            progress_->setValue(done);
        } else {
            progress_->setRange(0, 0);
        }
        status_->setText(QStringLiteral("%1: %2").arg(job_, m.captured(3)));
    }
}

void LivePanel::cancel() {
    if (!busy()) return;
    cancelled_ = true;
    proc_->terminate();
    QPointer<QProcess> p = proc_;
    QTimer::singleShot(2000, this, [p] {
        if (p && p->state() != QProcess::NotRunning) p->kill();
    });
}

} // namespace kairos::app
