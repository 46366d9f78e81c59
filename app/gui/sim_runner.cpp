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
        using Clock = std::chrono::steady_clock;
        auto ms = [](Clock::time_point a, Clock::time_point b) {
            return std::chrono::duration<double, std::milli>(b - a).count();
        };
        auto sched = makeScheduler(req.policy);
        const auto a = Clock::now();
        auto log =
            std::make_shared<RunLog>(simulate(*req.workload, *req.model, *sched, req.limits));
        const auto b = Clock::now();
        SummaryOptions so = req.summary;
        so.workload = req.workload.get();
        r.summary = summarize(*log, so);
        const auto c = Clock::now();
        r.rows =
            std::make_shared<const std::vector<lod::Row>>(lod::buildRows(*log, req.workload.get()));
        r.kv = std::make_shared<const std::vector<std::pair<double, double>>>(lod::kvSeries(*log));
        for (const Event& e : log->events)
            if (e.ev == Ev::Preempt) r.preemptions.push_back(e.t);
        const auto d = Clock::now();
        r.sim_ms = ms(a, b);
        r.summary_ms = ms(b, c);
        r.rows_ms = ms(c, d);
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
