#include "stored_runs.h"

#include "lod/timeline.h"
#include "metrics/cdf.h"
#include "profiles.h"
#include "runs_panel.h"
#include "store/store.h"
#include "util/json_line.h"
#include "workbench_state.h"

#include <nlohmann/json.hpp>
#include <optional>

namespace kairos::app {

StoredRuns::StoredRuns(JobTracker* jobs, WorkbenchState* state, RunsPanel* panel, QString db,
                       QObject* parent)
    : QObject(parent), jobs_(jobs), state_(state), panel_(panel), db_(std::move(db)) {}

void StoredRuns::save(std::shared_ptr<const RunView> r, std::string spec_json) {
    const QString path = db_;
    // Every save matters (Keep::All); the same connection then lists the runs, so the
    // Runs panel shows the new run when saved arrives.
    jobs_->start(
        QStringLiteral("save"), this,
        [this, r, path, spec_json](JobTracker::Job&) {
            qint64 id = -1;
            QString error;
            try {
                store::RunRecord rec =
                    store::makeRunRecord(*r->workload, r->workload->source, *r->log, r->summary,
                                         r->policy, r->limits, "saved from the workbench");
                rec.spec_json = spec_json;
                store::Store db(path.toStdString());
                id = db.putRun(rec);
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            auto snap = std::make_shared<const RunsSnapshot>(RunsSnapshot::read(path));
            return std::function<void()>([this, id, error, snap] {
                Q_EMIT message(id < 0 ? tr("cannot save the run: %1").arg(error)
                                      : tr("saved as run %1").arg(id));
                panel_->apply(*snap);
                Q_EMIT saved(id);
            });
        },
        JobTracker::Keep::All);
}

void StoredRuns::pin(qint64 id, const SummaryOptions& window_so) {
    const QString path = db_;
    const auto shown = state_->run() ? state_->run()->workload : nullptr;
    Q_EMIT message(tr("reading stored run %1…").arg(id));
    jobs_->start(
        QStringLiteral("pin"), this, [this, path, id, shown, window_so](JobTracker::Job& job) {
            std::shared_ptr<RunView> r;
            std::optional<store::RunInfo> info;
            QString error, other, overlay_note;
            try {
                const store::Store db(path.toStdString());
                info = db.run(id);
                if (!info)
                    throw std::invalid_argument("no run " + std::to_string(id) + " in " +
                                                path.toStdString());
                const Summary stored = Summary::fromJson(
                    parseJsonDocument(info->summary_json, path.toStdString() + ": run summary"));
                if (!info->spec_json.empty()) {
                    try {
                        const RunSpec spec = RunSpec::fromJson(
                            parseJsonDocument(info->spec_json, path.toStdString()),
                            path.toStdString() + ": run " + std::to_string(id));
                        RunContext ctx = runContext();
                        ctx.cancel = &job.cancel;
                        ctx.progress = &job.progress;
                        // Measured as the stored run was (its inter-token latency too).
                        auto full = std::make_shared<RunView>(
                            SimRunner::run(spec, ctx, job.id, /*itl=*/true));
                        if (!full->error.isEmpty())
                            throw std::runtime_error(full->error.toStdString());
                        const auto diffs = differingMetrics(stored, full->summary);
                        if (full->summary.policy != stored.policy) {
                            overlay_note =
                                tr("re-running its RunSpec ran %1, not the stored %2, so "
                                   "it has no timeline or KV overlay")
                                    .arg(QString::fromStdString(full->summary.policy),
                                         QString::fromStdString(stored.policy));
                        } else if (diffs.empty()) {
                            SummaryOptions so = window_so;
                            so.workload = full->workload.get();
                            full->summary = summarize(*full->log, *full->requests, so);
                            full->summary_options = so;
                            r = std::move(full);
                        } else {
                            overlay_note =
                                tr("re-running its RunSpec gave other figures (%1: %2 stored, %3 "
                                   "re-run; %4 metric(s) differ), so it has no timeline or KV "
                                   "overlay")
                                    .arg(QString::fromStdString(diffs.front().name))
                                    .arg(diffs.front().stored, 0, 'g', 6)
                                    .arg(diffs.front().rerun, 0, 'g', 6)
                                    .arg(diffs.size());
                        }
                    } catch (const std::exception& e) {
                        if (job.cancel) return std::function<void()>();
                        overlay_note = tr("its RunSpec cannot be re-run here (%1), so it has no "
                                          "timeline or KV overlay")
                                           .arg(QString::fromStdString(e.what()));
                    }
                } else {
                    overlay_note = tr("it was stored without its RunSpec (a generated workload, or "
                                      "edited utility functions), so it has no timeline or KV "
                                      "overlay");
                }
                if (!r) { // the stored figures and per-request rows only
                    r = std::make_shared<RunView>();
                    r->summary = stored;
                    r->requests = std::make_shared<const std::vector<RequestMetrics>>(
                        store::toRequestMetrics(db.runRequests(id)));
                    auto cdfs = lod::latencyCdfs(*r->requests);
                    r->cdf_ttft = std::move(cdfs.ttft);
                    r->cdf_tpot = std::move(cdfs.tpot);
                    r->cdf_e2el = std::move(cdfs.e2el);
                }
                // Of the shown workload? The store keys workloads by their content.
                if (shown && store::contentHash(*shown) != info->workload_hash)
                    other = tr("The pinned run (stored run %1) is of another workload: %2 (%3 "
                               "requests), not the shown one (%4 requests). Its figures are shown "
                               "beside, but the change column compares different requests.")
                                .arg(id)
                                .arg(QString::fromStdString(info->workload_name))
                                .arg(info->num_requests)
                                .arg(shown->size());
            } catch (const std::exception& e) {
                error = QString::fromStdString(e.what());
            }
            return std::function<void()>([this, id, r, info, error, other, overlay_note] {
                if (!error.isEmpty()) {
                    Q_EMIT message(tr("cannot read run %1: %2").arg(id).arg(error));
                    Q_EMIT pinned(id, false);
                    return;
                }
                state_->setPinned(r, id,
                                  overlay_note.isEmpty()
                                      ? QString()
                                      : tr("Stored run %1: %2.").arg(id).arg(overlay_note),
                                  other);
                Q_EMIT message((other.isEmpty()
                                    ? tr("pinned stored run %1: %2 on %3")
                                    : tr("pinned stored run %1: %2 on %3, ANOTHER workload"))
                                   .arg(id)
                                   .arg(QString::fromStdString(info->policy))
                                   .arg(QString::fromStdString(info->workload_name)));
                Q_EMIT pinned(id, true);
            });
        });
}

} // namespace kairos::app
