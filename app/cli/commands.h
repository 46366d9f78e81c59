#pragma once
#include <CLI/CLI.hpp>

namespace kairos::cli {

void addSimulate(CLI::App& app);
void addGenerate(CLI::App& app);
void addFitProfile(CLI::App& app);
void addProfiles(CLI::App& app);
void addProfileCpu(CLI::App& app);
void addBench(CLI::App& app);
void addReproduce(CLI::App& app);

} // namespace kairos::cli
