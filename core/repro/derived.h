#pragma once
// Device profiles for hardware the papers ran on and ../shared/data has no measurement
// of, derived from measurements of other hardware and from the papers' own figures. Each
// says so in its name ("(derived)") and its provenance.
#include "model/device_profile.h"
#include "repro/repro.h"

#include <cstddef>

namespace kairos::repro {

struct DerivedProfile {
    DeviceProfile profile;
    double decode_scale = 1;         // the A100 decode step times this on the 4090
    double a100_decode_mape_pct = 0; // the shape's fit to the bench rows
    std::size_t rows = 0;            // bench rows used
};

// Llama3-8B on one RTX 4090 (TimelyLLM's machine): see derived.cpp.
DerivedProfile llama3_8bRtx4090(const Options& opt);

} // namespace kairos::repro
