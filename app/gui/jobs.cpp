#include "jobs.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QEventLoop>
#include <QThread>
#include <QTimer>
#include <exception>

namespace kairos::app {

JobTracker::JobTracker(QObject* parent) : QObject(parent) {
    // Its own pool: shutdown waits for this window's work only, never for whatever else
    // the process runs on the global pool.
    pool_.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
}

JobTracker::~JobTracker() {
    shutdown();
}

long JobTracker::start(const QString& channel, QObject* context, Work work, Keep keep) {
    auto job = std::make_shared<Job>();
    job->id = ++next_id_;
    job->channel = channel;
    job->started_ms = QDateTime::currentMSecsSinceEpoch();
    if (shutting_down_) return job->id; // never started, never delivered
    auto& slot = latest_[channel];
    if (slot && keep == Keep::Latest) slot->cancel = true; // stale: stop spending the CPU on it
    slot = job;
    ++pending_;
    QPointer<QObject> ctx(context);
    pool_.start([this, job, ctx, keep, work = std::move(work)] {
        std::function<void()> then;
        try {
            then = work(*job);
        } catch (const std::exception& e) {
            // The work reports its own errors through its continuation; one that escapes
            // is a bug, said rather than lost.
            qWarning("internal error in background job %ld (%s): %s", job->id,
                     qPrintable(job->channel), e.what());
        }
        job->done = true;
        // Queued on the tracker: dropped by Qt if the tracker is gone (it is not: its
        // destructor waits for this pool), run on the GUI thread otherwise.
        QMetaObject::invokeMethod(
            this, [this, job, ctx, keep, then = std::move(then)] { finish(job, ctx, keep, then); },
            Qt::QueuedConnection);
    });
    return job->id;
}

void JobTracker::finish(const std::shared_ptr<Job>& job, QPointer<QObject> ctx, Keep keep,
                        std::function<void()> then) {
    --pending_;
    const auto it = latest_.find(job->channel);
    const bool current = keep == Keep::All || (it != latest_.end() && it->second == job);
    if (current && ctx && !shutting_down_ && then) then();
    if (pending_ == 0) Q_EMIT idle();
}

void JobTracker::cancel(const QString& channel) {
    if (auto it = latest_.find(channel); it != latest_.end() && it->second)
        it->second->cancel = true;
}

void JobTracker::cancelAll() {
    for (auto& [channel, job] : latest_)
        if (job) job->cancel = true;
}

void JobTracker::shutdown() {
    shutting_down_ = true;
    cancelAll();
    pool_.waitForDone();
}

std::shared_ptr<const JobTracker::Job> JobTracker::latest(const QString& channel) const {
    const auto it = latest_.find(channel);
    return it == latest_.end() ? nullptr : it->second;
}

bool JobTracker::busy(const QString& channel) const {
    const auto j = latest(channel);
    return j && !j->done.load();
}

bool JobTracker::waitIdle(int ms) {
    if (pending_ == 0) return true;
    QEventLoop loop;
    connect(this, &JobTracker::idle, &loop, &QEventLoop::quit);
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
    return pending_ == 0;
}

} // namespace kairos::app
