#include "device_choice.h"

#include "profiles.h"

#include <QLabel>

namespace kairos::app {

DeviceChoice::DeviceChoice(JobTracker* jobs, const std::string& profile, QObject* parent)
    : QObject(parent), jobs_(jobs), automatic_(profile == kAutoProfile), label_(new QLabel) {
    label_->setObjectName(QStringLiteral("execLabel"));
    // A gap before it: the status message it follows is cut, not ended, at its
    // left ("...bins=10, evdevice: llama2-70b").
    label_->setContentsMargins(12, 0, 0, 0);
    label_->setFrameShape(QFrame::NoFrame);
    resolveNow(profileFor(profile, nullptr));
}

void DeviceChoice::resolveNow(const std::string& profile) {
    RunSpec::ExecPart e;
    e.profile = profile;
    resolved_ = std::make_shared<const ResolvedExec>(resolveExec(e, runContext()));
    exec_ = {};
    exec_.profile = resolved_->profile.name;
    showLabel();
}

bool DeviceChoice::followWorkload(const Workload& w) {
    if (!automatic_ || exec_.model_id > 0) return false;
    const std::string name = profileFor(kAutoProfile, &w);
    if (name == resolved_->profile.name) return false;
    resolveNow(name);
    return true;
}

void DeviceChoice::use(const RunSpec::ExecPart& exec) {
    automatic_ = false;
    Q_EMIT message(tr("loading the execution model…"));
    jobs_->start(QStringLiteral("exec"), this, [this, exec](JobTracker::Job&) {
        auto r = std::make_shared<ResolvedExec>();
        QString error;
        try {
            *r = resolveExec(exec, runContext());
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        return std::function<void()>([this, exec, r, error] {
            if (!error.isEmpty()) {
                Q_EMIT message(tr("cannot use that device: %1").arg(error));
                Q_EMIT changed(false);
                return;
            }
            for (const auto& w : r->model_warnings) Q_EMIT message(QString::fromStdString(w));
            set(exec, r);
        });
    });
}

void DeviceChoice::set(const RunSpec::ExecPart& exec, std::shared_ptr<const ResolvedExec> r) {
    automatic_ = false;
    exec_ = exec;
    resolved_ = std::move(r);
    showLabel();
    Q_EMIT changed(true);
}

void DeviceChoice::showLabel() {
    const DeviceProfile& p = resolved_->profile;
    // Short in the status bar (the model's name), whole in the tooltip (its parameters).
    const QString full = QString::fromStdString(resolved_->model->describe());
    QString name = full.section(QStringLiteral(" ["), 0, 0);
    if (exec_.model_id > 0) name += tr(" on %1").arg(QString::fromStdString(p.name));
    // The KV capacity the shown run had (the report's, the KV chart's, the Inspector's): the
    // profile's scaled by the KV slider, in whole blocks with prefix caching. Before a run,
    // the profile's.
    const std::int64_t kv = run_kv_ > 0 ? run_kv_ : p.kvCapacityTokens();
    label_->setText(
        run_decode_kv_ > 0
            ? tr("device: %1 · KV %L2 tokens per prefill replica × %3, %L4 per decode replica × "
                 "%5")
                  .arg(name)
                  .arg(qlonglong(kv))
                  .arg(run_prefill_replicas_)
                  .arg(qlonglong(run_decode_kv_))
                  .arg(run_replicas_ - run_prefill_replicas_)
        : run_replicas_ > 1 ? tr("device: %1 · KV %L2 tokens per replica × %3")
                                  .arg(name)
                                  .arg(qlonglong(kv))
                                  .arg(run_replicas_)
                            : tr("device: %1 · KV %L2 tokens").arg(name).arg(qlonglong(kv)));
    label_->setToolTip(
        tr("%1<br>The execution model the simulations use. KV: %2 (the device profile has "
           "%L3 tokens; the KV slider scales it, and prefix caching rounds it to whole blocks)")
            .arg(full.toHtmlEscaped(), run_kv_ > 0 ? tr("the shown run's capacity per replica")
                                                   : tr("the device profile's capacity"))
            .arg(qlonglong(p.kvCapacityTokens())));
}

void DeviceChoice::showRunCapacity(std::int64_t tokens, int replicas, std::int64_t decode_tokens,
                                   int prefill_replicas) {
    if (tokens == run_kv_ && replicas == run_replicas_ && decode_tokens == run_decode_kv_ &&
        prefill_replicas == run_prefill_replicas_)
        return;
    run_kv_ = tokens;
    run_replicas_ = replicas;
    run_decode_kv_ = decode_tokens;
    run_prefill_replicas_ = prefill_replicas;
    showLabel();
}

} // namespace kairos::app
