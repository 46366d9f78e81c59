#pragma once
// Device profiles for hardware the papers ran on and ../shared/data has no measurement
// of, derived from measurements of other hardware and from the papers' own figures. Each
// says so in its name ("(derived)") and its provenance.
#include "model/device_profile.h"
#include "repro/repro.h"

#include <limits>

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
    // The derivation's level (the factor on the A100 shape) and its standard error as a
    // ratio estimator over the plans (NaN where the profile was not fitted to them).
    double scale = std::numeric_limits<double>::quiet_NaN();
    double scale_se = std::numeric_limits<double>::quiet_NaN();
};
PlanTimes planTimes(const Options& opt, const DeviceProfile& p);
// `fit` (optional): the plan times the profile was fitted to, against it.
DeviceProfile llama3_8bRtx4090(const Options& opt, PlanTimes* fit = nullptr);
// The same derivation at `factor` times its level: decode steps and the prefill pass
// (the weights streamed once) scaled, the per-token prefill still making the paper's
// 133.31 ms for 1,300 tokens (what the derivation pins). Throws InputError where that
// leaves no per-token cost.
DeviceProfile llama3_8bRtx4090AtLevel(const DeviceProfile& p, double factor);
// How a decode step grows with the batch on the other single cards LLM-Inference-Bench
// measured Llama-3-8B on with vLLM (H100, GH200, MI250, MI300X): each card's fitted share of
// its batch-1 step that each added request costs, q1 / (q0 + q1). The A100's is the derived
// cards' own.
struct GrowthShare {
    std::string card;
    double share = 0;
};
std::vector<GrowthShare> otherGrowthShares(const Options& opt);
// The derived RTX 4090 with another card's growth with the batch: its batch-1 step (q0 + q1)
// and KV cost kept (what its level was fitted to), the step's share per added request set to
// `share`.
DeviceProfile llama3_8bRtx4090WithGrowth(const DeviceProfile& p, const GrowthShare& g);

// Llama3-8B on one H100-80GB (the TimelyLLM code's real runs), derived the same way.
DeviceProfile llama3_8bH100(const Options& opt);

} // namespace kairos::repro
