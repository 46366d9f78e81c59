#pragma once
// The Runs panel: the database's stored runs, newest first, read on the window's job
// tracker and re-read only when the database files changed (another process storing runs:
// a file watcher throttled to one read per 300 ms, the files' state after each read kept
// so the panel's own reads, which create and remove SQLite's WAL, do not trigger another);
// the selection survives re-reads. Save this run, Compare with selected (or a double
// click) and Sweeps… are asked of the window. The same read lists the fitted models for
// the Models panel (modelsRead).
#include "jobs.h"
#include "store/store.h"

#include <QStringList>
#include <QWidget>
#include <vector>

class QFileSystemWatcher;
class QLabel;
class QTableView;
class QTimer;

namespace kairos::views {
class RunsModel;
}

namespace kairos::app {

// What one read of the database gives the Runs and Models panels.
struct RunsSnapshot {
    bool exists = false;
    std::vector<store::RunInfo> runs;
    std::vector<store::ModelInfo> models;
    QString error;
    QString state; // the files' state after the read's connection closed
    // Reads `db` (creating nothing when it does not exist); on a pool thread.
    static RunsSnapshot read(const QString& db);
    // The database files' state (sizes, times): a change by another process tells from it.
    static QString filesState(const QString& db);
};

class RunsPanel : public QWidget {
    Q_OBJECT
public:
    RunsPanel(JobTracker* jobs, QString db, QWidget* parent = nullptr);
    // Reads the database off the GUI thread (a newer read supersedes it): refreshed().
    void refresh();
    // Shows a read (the window's save reads after storing, on the same job).
    void apply(const RunsSnapshot& snap);
    views::RunsModel* model() const { return model_; }
    QTableView* view() const { return view_; }
    // The selected run's id, or -1.
    qint64 selectedRun() const;
    // The columns shown (RunsModel::Column); the header's context menu chooses them.
    bool columnShown(int column) const;
    void showColumn(int column, bool shown);

Q_SIGNALS:
    void refreshed();
    void modelsRead(const std::vector<kairos::store::ModelInfo>& models);
    void saveRequested();
    void compareRequested(qint64 id);
    void sweepsRequested();

private:
    void filesChanged();
    void applyColumns();
    void fitColumns();

    JobTracker* jobs_;
    QString db_;
    views::RunsModel* model_ = nullptr;
    QTableView* view_ = nullptr;
    QLabel* label_ = nullptr;
    QTimer* throttle_ = nullptr;
    QFileSystemWatcher* watch_ = nullptr;
    QString seen_;                                  // the database files' state after the last read
    QStringList runs_signature_, models_signature_; // what the tables show (ids, times)
    // Columns hidden by the user's choice (remembered); empty optional: the defaults.
    QList<int> hidden_;
    bool columns_chosen_ = false;
};

} // namespace kairos::app
