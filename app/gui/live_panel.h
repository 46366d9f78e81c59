#pragma once
// The workbench's Live panel: profile the live engine's transformer on this machine (the
// ETE fit stored in the workbench's database, so the Models panel shows it), and run the
// shown workload live beside its simulation on that profile, per-request TTFT and E2EL
// plotted live against simulated with the simulator's median and p90 errors.
//
// The work runs in a kairos-cli child process (profile / validate --progress-lines), watched
// from a job of the window's tracker (its pipes read off the GUI thread), not in the
// workbench: libtorch stays out of the GUI process (Debian's libtorch loads Qt 5
// through OpenCV, and a crash or a stuck kernel in the model cannot take the workbench
// down), and cancelling is ending the process (its outputs are written atomically and
// the database in transactions, so a cancelled job leaves nothing half-written).
#include "jobs.h"
#include "model/workload.h"

#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTemporaryDir;
class QTimer;

namespace kairos::views {
class ModelChart;
}

namespace kairos::app {

class LivePanel : public QWidget {
    Q_OBJECT
public:
    // Its child processes are watched on `jobs` (the window's tracker; without one, on a
    // tracker of its own).
    explicit LivePanel(JobTracker* jobs = nullptr, QWidget* parent = nullptr);
    ~LivePanel() override;

    void setDatabase(const QString& path) { db_ = path; }
    // The workload a live run uses (written to a temporary file for the child).
    void setWorkload(std::shared_ptr<const Workload> w);
    void setPolicy(const QString& policy) { policy_ = policy; }
    // kairos-cli beside the workbench's executable unless set.
    void setCliPath(const QString& path) { cli_ = path; }
    QString cliPath() const;

    void startProfile(); // the Profile button
    void startCompare(); // the Run live button
    void cancel();
    bool busy() const;

    // For tests and the window.
    QComboBox* modelBox() const { return model_; }
    QCheckBox* quickBox() const { return quick_; }
    QCheckBox* recalibrateBox() const { return recalibrate_; }
    QSpinBox* limitBox() const { return limit_; }
    QProgressBar* progressBar() const { return progress_; }
    QLabel* statusLabel() const { return status_; }
    views::ModelChart* chart() const { return chart_; }
    qint64 profiledModelId() const { return model_id_; }
    // The last comparison's errors (NaN before one).
    double e2elMedianError() const { return e2el_median_; }

Q_SIGNALS:
    // A job ended: ok, or failed / cancelled (the status label says which).
    void finished(bool ok);

private:
    QStringList modelArgs() const;
    void run(const QString& what, const QStringList& args,
             std::function<bool(const QByteArray& out)> done);
    void setBusy(bool on);
    bool showComparison(const QString& json_path);

    QString db_, policy_ = QStringLiteral("fcfs"), cli_;
    std::shared_ptr<const Workload> workload_;
    QComboBox *model_ = nullptr, *device_ = nullptr;
    QLineEdit* weights_ = nullptr;
    QSpinBox *threads_ = nullptr, *limit_ = nullptr;
    QCheckBox* quick_ = nullptr;
    QCheckBox* recalibrate_ = nullptr;
    QPushButton *profile_button_ = nullptr, *compare_button_ = nullptr, *cancel_button_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    views::ModelChart* chart_ = nullptr;
    static inline const QString kChannel = QStringLiteral("live");
    JobTracker* jobs_;
    std::unique_ptr<JobTracker> own_jobs_;
    QTimer* poll_ = nullptr; // the running child's progress into the bar and status
    qint64 model_id_ = -1;
    QString model_id_for_; // the model options the stored profile was measured with
    double e2el_median_;
    std::unique_ptr<QTemporaryDir> tmp_;
};

} // namespace kairos::app
