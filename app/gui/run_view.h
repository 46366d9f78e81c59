#pragma once
// A run as the workbench shows it (what WorkbenchState holds and every panel draws): the
// RunSpec that made it, what the core's pipeline returned, and what the views draw from it.
// SimRunner (sim_runner.h) makes them.
#include "lod/timeline.h"
#include "metrics/explain_view.h"
#include "metrics/summary.h"
#include "metrics/waits.h"
#include "model/run_log.h"
#include "model/workload.h"
#include "run/run_spec.h"
#include "sched/registry.h"
#include "timeline_view.h"
#include "tuf_chart.h"

#include <QString>
#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kairos::app {

// A run as the workbench shows it: the RunSpec that made it, what the core's pipeline
// returned, and what the views draw from it (timeline rows, KV series, CDFs, the Inspector's
// index), computed once off the GUI thread.
struct RunView {
    long job = 0;
    RunSpec spec;        // what ran (its workload part may name the window's in-memory one)
    PolicyConfig policy; // the spec's policy and limits as the engine had them
    EngineLimits limits;
    std::shared_ptr<const Workload> workload; // transformed, as it ran
    std::shared_ptr<const RunLog> log;
    Summary summary;
    SummaryOptions summary_options; // what the summary measured (SLOs, percentiles)
    std::shared_ptr<const std::vector<RequestMetrics>> requests; // perRequest(log), by id
    std::shared_ptr<const std::vector<lod::Row>> rows;           // one per request, by id
    std::shared_ptr<const std::vector<lod::Row>> agent_rows;     // agent lanes; null without agents
    std::pair<double, double> extent{0, 0};                      // lod::timeExtent(rows)
    std::shared_ptr<const std::vector<std::pair<double, double>>> kv;
    // With prefix caching: KV holding data (in use plus cached blocks nobody references).
    std::shared_ptr<const std::vector<std::pair<double, double>>> kv_held;
    // A disaggregated run: its prefill pool's KV in use (kv is both pools').
    std::shared_ptr<const std::vector<std::pair<double, double>>> kv_prefill;
    // The run's decisions with their reasons, indexed (the Inspector; it keeps the log):
    // built on a thread of its own once the run is done (8 ms at 20,000 requests), so the
    // run is shown without waiting for it; explain() waits for it on first use.
    std::shared_future<std::shared_ptr<const ExplainIndex>> explain_index;
    std::shared_ptr<const ExplainIndex> explain() const {
        return explain_index.valid() ? explain_index.get() : nullptr;
    }
    std::vector<double> preemptions;
    // The timeline's next frame, built beside the summary for the view as it was when the
    // run was asked for (SimRunner::FrameJob); the view takes it if it still looks so.
    std::optional<views::TimelineView::PrebuiltFrame> frame;
    // Latency CDFs of finished requests (ms, lod::ecdf) and the utility view's data.
    std::vector<std::pair<double, double>> cdf_ttft, cdf_tpot, cdf_e2el;
    std::vector<views::TufClass> tufs;
    // Whether seats or KV ever bound (what preemption C can act on; the banner's hint says).
    RoomUse room;
    double wall_ms = 0;                             // prepare + simulate + summarise + rows
    double sim_ms = 0, summary_ms = 0, rows_ms = 0; // the parts (rows: after the summary)
    double layout_wait_ms = 0; // of rows_ms: waiting for the timeline layout's thread
    QString error;             // set when the run failed (bad parameter, scheduler loop)
};

} // namespace kairos::app
