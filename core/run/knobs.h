#pragma once
// The run's own knobs: the settings of a run that are not a policy's parameters (those are
// the policy registry's, sched/registry.h). Each knob says once what it is (name, label,
// help, unit), the range a user explores (the workbench's slider, a sweep of it), how it
// reads and writes a RunSpec, and how a sweep varies it. The workbench's Policy panel builds
// its run sliders from this list and sets and restores a RunSpec (a session, a stored run)
// through it; the Sweep panel sweeps a knob through it.
//
// Adding a knob: one entry in knobs.cpp (and the RunSpec field it sets, when it is new).
#include "run/run_spec.h"
#include "run/sweep.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kairos {

struct RunKnob {
    std::string name, label, help, unit;
    double lo = 0, hi = 1, dflt = 0; // the explored range and the default
    int decimals = 2;                // shown with this many decimals (0: whole numbers)
    bool log = false;                // explored on a log scale
    // The knob's value in `spec`, and `spec` with it set to `v`. `profile_kv` is the device
    // profile's KV capacity in tokens (the unit of a knob relative to it).
    std::function<double(const RunSpec& spec, std::int64_t profile_kv)> get;
    std::function<void(RunSpec& spec, double v, std::int64_t profile_kv)> set;
    // How a sweep varies it: the axis kind and the axis value text for knob value `v`
    // (nullopt: not swept, as the goodput SLOs, which change what is measured, not the run).
    std::optional<sweep::AxisKind> axis;
    std::function<std::string(double v, std::int64_t profile_kv)> axis_value;
};

const std::vector<RunKnob>& runKnobs();
const RunKnob* findRunKnob(std::string_view name); // nullptr: no such knob

} // namespace kairos
