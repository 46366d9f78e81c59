#pragma once
// A workbench session on disk: the shown run's RunSpec, the workload itself when it is not
// a file (generated in the window), the pinned run (a stored run by id, or this window's by
// its RunSpec) and the view (workbench state the panels restore). No widgets: the window
// (File › Save / Open session) writes it from its state and applies what was read.
//
//   {"kairos_session": 2,
//    "run": RunSpec,                        // workload.path: the trace, or kMemoryWorkload
//    "workload": {"label": ..., "embedded": "<Kairos JSONL>", "name": ...},
//    "pinned": {"stored": ID, "db": PATH} | {"spec": RunSpec},
//    "view": {...}}
//
// Version 1 (sliders by name) is still read: its sliders become the RunSpec they set.
#include "run/pipeline.h"
#include "run/run_spec.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kairos::app {

// The workload part's path of a run on a workload that lives in the window only.
inline constexpr const char* kMemoryWorkload = "kairos-workbench:memory";

struct SessionFile {
    static constexpr int kVersion = 2;
    RunSpec run;
    std::string label;    // the workload's name as the window shows it
    std::string embedded; // the workload as Kairos JSONL when run.workload.path is memory
    std::string embedded_name;
    std::optional<RunSpec> pinned_spec; // this window's pinned run
    std::int64_t pinned_stored = -1;    // or a stored run of `pinned_db`
    std::string pinned_db;
    nlohmann::json view = nlohmann::json::object();

    nlohmann::json toJson() const;
};

// A session read, with its workload and device ready (what the window applies).
struct OpenedSession {
    SessionFile file;
    std::shared_ptr<const Workload> workload; // as read (the run's transforms not applied)
    std::shared_ptr<const ResolvedExec> device;
    std::string device_error; // the session's device cannot be resolved: why
};

// Reads a session and its workload (bounded; a workload's limits, as it may embed one) and
// resolves its device in `ctx`. Throws InputError / std::runtime_error naming `path`;
// ReadCancelled when `cancel` is set.
OpenedSession readSession(const std::string& path, const RunContext& ctx,
                          std::atomic<double>* progress, const std::atomic<bool>* cancel);

} // namespace kairos::app
