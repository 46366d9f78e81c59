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

// The TimelyLLM authors' measured plan-generation times of the drone traces
// (timelyllm_plan_times.csv, matched to the trace set by index) against a profile's: each
// plan alone, its task text prefilled (TypeFly's prompt stored) and its tokens decoded at
// batch 1. `measured_mean` and `predicted_mean` in seconds; `mape` in %.
struct PlanTimes {
    int plans = 0;
    double measured_mean = 0, predicted_mean = 0, mape = 0;
};
PlanTimes planTimes(const Options& opt, const DeviceProfile& p);
// `fit` (optional): the plan times the profile was fitted to, against it.
DeviceProfile llama3_8bRtx4090(const Options& opt, PlanTimes* fit = nullptr);
// Llama3-8B on one H100-80GB (the TimelyLLM code's real runs), derived the same way.
DeviceProfile llama3_8bH100(const Options& opt);

} // namespace kairos::repro
