#include "sim_runner.h"

#include "sim/engine.h"

#include <QMetaObject>
#include <QThreadPool>
#include <chrono>

namespace kairos::app {

SimResult SimRunner::run(const SimRequest& req, long job) {
    SimResult r;
    r.job = job;
    r.policy = req.policy;
    r.limits = req.limits;
    r.workload = req.workload;
    const auto t0 = std::chrono::steady_clock::now();
    try {
        auto sched = makeScheduler(req.policy);
        auto log =
            std::make_shared<RunLog>(simulate(*req.workload, *req.model, *sched, req.limits));
        SummaryOptions so = req.summary;
        so.workload = req.workload.get();
        r.summary = summarize(*log, so);
        r.rows =
            std::make_shared<const std::vector<lod::Row>>(lod::buildRows(*log, req.workload.get()));
        r.kv = std::make_shared<const std::vector<std::pair<double, double>>>(lod::kvSeries(*log));
        for (const Event& e : log->events)
            if (e.ev == Ev::Preempt) r.preemptions.push_back(e.t);
        r.log = std::move(log);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    }
    r.wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

long SimRunner::submit(SimRequest req) {
    const long job = ++latest_;
    QThreadPool::globalInstance()->start([this, job, req = std::move(req)] {
        auto result = std::make_shared<const SimResult>(run(req, job));
        QMetaObject::invokeMethod(
            this,
            [this, result] {
                if (result->job == latest_.load()) Q_EMIT finished(result); // stale: dropped
            },
            Qt::QueuedConnection);
    });
    return job;
}

} // namespace kairos::app
