#pragma once
// Device profiles for hardware the papers ran on and ../shared/data has no measurement
// of, derived from measurements of other hardware and from the papers' own figures. Each
// says so in its name ("(derived)") and its provenance.
#include "model/device_profile.h"
#include "repro/repro.h"

namespace kairos::repro {

// Llama3-8B on one A100-80GB (Trail's machine) and on one RTX 4090 (TimelyLLM's): see
// derived.cpp.
DeviceProfile llama3_8bA100(const Options& opt);
DeviceProfile llama3_8bRtx4090(const Options& opt);

} // namespace kairos::repro
