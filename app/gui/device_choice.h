#pragma once
// The device the window's runs use: a shipped profile, or a fitted model from the store
// (exec.model_id, its configuration, its database) on a profile's KV capacity. A new choice
// is resolved off the GUI thread (a profile file read, a stored model read and an ALA model
// parsed); a failure leaves the device as it was. The status bar's label names it.
#include "jobs.h"
#include "run/pipeline.h"

#include <QObject>
#include <memory>

class QLabel;

namespace kairos::app {

class DeviceChoice : public QObject {
    Q_OBJECT
public:
    // Starts on a shipped profile (or a profile file), resolved now. "auto" (kAutoProfile):
    // the default profile, and each workload opened picks its own (followWorkload) until a
    // device is chosen.
    DeviceChoice(JobTracker* jobs, const std::string& profile, QObject* parent = nullptr);
    // While no device was chosen: the profile `w` asks for (profileFor, run_spec.h),
    // resolved now (a shipped profile's JSON: no wait worth a thread). True when it changed
    // (no changed(): the caller runs the new workload on it).
    bool followWorkload(const Workload& w);
    bool automatic() const { return automatic_; }
    const RunSpec::ExecPart& exec() const { return exec_; }
    const std::shared_ptr<const ResolvedExec>& resolved() const { return resolved_; }
    const DeviceProfile& profile() const { return resolved_->profile; }
    // Resolves `exec` in the background: changed(ok).
    void use(const RunSpec::ExecPart& exec);
    // Takes a device resolved already (a session's); changed(true).
    void set(const RunSpec::ExecPart& exec, std::shared_ptr<const ResolvedExec> resolved);
    // "device: NAME · KV N tokens" (the model's parameters in its tooltip).
    QLabel* label() const { return label_; }
    // The KV capacity the label says: the shown run's (per replica; 0: the profile's), so
    // that the status bar, the KV chart, the Inspector and the report say one number.
    // With the decode pool of a disaggregated run on other hardware: its replicas' capacity
    // (`decode_tokens`) and how many of the `replicas` prefill (the others decode).
    void showRunCapacity(std::int64_t tokens, int replicas = 1, std::int64_t decode_tokens = 0,
                         int prefill_replicas = 0);

Q_SIGNALS:
    void changed(bool ok);
    void message(const QString& text); // for the status bar

private:
    // A shipped profile (or a profile file) resolved on this thread: its JSON is small.
    void resolveNow(const std::string& profile);
    void showLabel();

    JobTracker* jobs_;
    bool automatic_ = false;
    RunSpec::ExecPart exec_; // what resolved_ was resolved from
    std::shared_ptr<const ResolvedExec> resolved_;
    QLabel* label_;
    std::int64_t run_kv_ = 0;
    int run_replicas_ = 1;
    std::int64_t run_decode_kv_ = 0; // showRunCapacity's decode pool, 0: none of its own
    int run_prefill_replicas_ = 0;
};

} // namespace kairos::app
