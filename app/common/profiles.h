#pragma once
#include "model/device_profile.h"
#include "run/pipeline.h"
#include "run/run_spec.h"

#include <string>
#include <vector>

namespace kairos::app {

// The profile every command uses when none is named (MC-SF's setting: Llama2-70B, 2x A100).
inline constexpr const char* kDefaultProfile = kDefaultProfileName;

// Folders searched for NAME.json: $KAIROS_PROFILE_DIR, <exe>/../share/kairos/profiles,
// the source tree's resources/profiles.
std::vector<std::string> profileDirs();
// A path to a JSON file, or the name of a shipped profile. Throws InputError.
DeviceProfile resolveProfile(const std::string& name_or_path, std::string* found_at = nullptr);
std::vector<std::string> shippedProfileNames();
// The folder of the shipped experiment files (repro/experiment.h), searched as the
// profiles are: $KAIROS_EXPERIMENT_DIR, <exe>/../share/kairos/experiments, the source tree's
// resources/experiments. Empty when none exists.
std::string experimentsDir();
// A run context (run/pipeline.h) that finds profiles as resolveProfile does: what every
// command that runs a RunSpec uses.
RunContext runContext();

} // namespace kairos::app
