#pragma once
// One tracker for all of the workbench's background work: simulations, workload files
// read, database reads (runs, models, a stored run to compare with, sweeps), model
// parsing, saves and sweeps, so that no job holds a raw pointer to a widget that may be
// gone and no result arrives after its window.
//
// Every job has an id, a channel ("simulate", "load", "runs", ...) and a Job record its
// work polls (cancel) and writes (progress). A job's work runs on the tracker's own pool
// and returns a continuation; the continuation runs on the GUI thread, and only when
//   - the job is still its channel's latest (a newer one in the channel cancels it:
//     a slider moved ten times repaints once), unless the channel keeps every job
//     (Keep::All: saves, where each one matters);
//   - the context object it was started for still exists;
//   - the tracker is not shutting down.
// shutdown() (the window's close) cancels every job and waits for the pool, so no work
// outlives the window and nothing arrives after it.
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <map>
#include <memory>

namespace kairos::app {

class JobTracker : public QObject {
    Q_OBJECT
public:
    struct Job {
        long id = 0;
        QString channel;
        qint64 started_ms = 0; // when it was started (QDateTime's epoch milliseconds)
        std::atomic<bool> cancel{false}, done{false};
        std::atomic<double> progress{0}; // in [0, 1], where the work can say
    };
    enum class Keep { Latest, All };
    // The work, on a pool thread: returns what to do with its result on the GUI thread
    // (empty: nothing).
    using Work = std::function<std::function<void()>(Job&)>;

    explicit JobTracker(QObject* parent = nullptr);
    ~JobTracker() override; // shutdown()

    // Starts `work` in `channel` for `context` (its continuation is dropped once the
    // context is destroyed). With Keep::Latest the channel's previous job is cancelled.
    long start(const QString& channel, QObject* context, Work work, Keep keep = Keep::Latest);
    // Cancels the channel's latest job (its continuation still runs: it can say
    // "cancelled"); every job of every channel with cancelAll().
    void cancel(const QString& channel);
    void cancelAll();
    // Cancels everything, waits for the work to end and drops what it would deliver.
    void shutdown();
    // The channel's latest job (null when none was started), and whether it still runs.
    std::shared_ptr<const Job> latest(const QString& channel) const;
    bool busy(const QString& channel) const;
    // Jobs started and not yet delivered or dropped, in every channel.
    int pending() const { return pending_; }
    // Blocks the calling (GUI) thread until nothing is pending or `ms` passed, delivering
    // continuations meanwhile: for tests and scripted runs. True when idle.
    bool waitIdle(int ms);

Q_SIGNALS:
    void idle(); // the last pending job was delivered or dropped

private:
    void finish(const std::shared_ptr<Job>& job, QPointer<QObject> ctx, Keep keep,
                std::function<void()> then);

    QThreadPool pool_;
    std::map<QString, std::shared_ptr<Job>> latest_; // GUI thread only
    long next_id_ = 0;
    int pending_ = 0;
    bool shutting_down_ = false;
};

} // namespace kairos::app
