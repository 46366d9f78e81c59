#pragma once
#include "metrics/summary.h"
#include "model/run_log.h"
#include "model/workload.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kairos::cli {

void addSimulate(CLI::App& app);
void addGenerate(CLI::App& app);
void addFitProfile(CLI::App& app);
void addProfiles(CLI::App& app);
void addProfileCpu(CLI::App& app);
void addBench(CLI::App& app);
void addReproduce(CLI::App& app);
void addReport(CLI::App& app);
void addRuns(CLI::App& app);
void addFit(CLI::App& app);

// What a simulate/report run produced, for the report writer.
struct RunOutputs {
    Workload workload;
    RunLog log;
    Summary summary;
    std::vector<std::pair<std::string, std::string>> config;
    std::int64_t run_id = 0; // when stored (--db/--store)
};
// Writes the HTML and/or PDF report (empty path: skip), comparing with `pinned` when it
// is not null. Set by a build with the GUI libraries (report_qt.cpp); empty otherwise.
using ReportWriter = std::function<void(const RunOutputs&, const RunOutputs* pinned,
                                        const std::string& html, const std::string& pdf)>;
ReportWriter& reportWriter();

} // namespace kairos::cli
