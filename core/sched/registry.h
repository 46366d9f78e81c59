#pragma once
// Policies described by data: each policy registers its name, a one-line summary, its
// parameters (default, accepted domain, the range a user explores, linear or log scale,
// unit, one-line help) and its constructor in one place (registry.cpp). Everything that
// lists policies or their parameters is generated from policySpecs(): the CLI help and
// `kairos-cli policies`, the GUI's sliders and tooltips, the sweep grammar's range checks,
// the liveness test's parameter draws and docs/policies.md. Adding a policy touches its
// own files and its entry in registry.cpp, nothing else.
#include "predict/predictor.h"
#include "sched/scheduler.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kairos {

using PolicyParams = std::map<std::string, double>;

// Parses "key=value" items (value a number or "inf"); throws std::invalid_argument
// naming the bad item.
PolicyParams parsePolicyParams(const std::vector<std::string>& items);

struct PolicyConfig {
    std::string name = "fcfs";
    PolicyParams params;
    std::string predictor = "oracle"; // makePredictor spec, for policies that predict
    std::uint64_t seed = 0;           // for noisy predictors and randomised policies
    // When set, the predicting policies use this one (a live run's trained heads) and
    // `predictor` only names it.
    std::shared_ptr<LengthPredictor> predictor_instance;
};

// One parameter of a policy.
struct ParamSpec {
    enum class Kind { Number, Whole, Flag };
    std::string name;
    double dflt = 0;
    Kind kind = Kind::Number;
    // Accepted values: [lo, hi] ((lo, hi] with lo_open); a Flag is 0 or 1; a Whole is an
    // integer. A value outside is an error naming the policy and the parameter.
    double lo = 0, hi = 1;
    bool lo_open = false;
    // The range a user explores (slider, a sweep's default range, random tests), inside
    // the domain, and whether it is explored on a log scale.
    double explore_lo = 0, explore_hi = 1;
    bool log = false;
    std::string unit;    // "s", "tokens", "fraction of KV", "" (a pure number)
    std::string help;    // one line
    std::string label;   // the GUI's slider label ("pessimism k"); empty: the name
    bool slider = false; // the GUI gives it a slider (the others are set with --param)
    int decimals = 2;    // shown with this many decimals

    // Throws std::invalid_argument naming `policy` and the parameter when `v` is outside
    // the domain.
    void check(const std::string& policy, double v) const;
    std::string domainText() const; // "[0, 1]", "{0, 1}", "whole numbers 1..8192"
};

// The values of a policy's parameters, every one present (defaults filled in).
class ParamValues {
public:
    ParamValues(const std::string& policy, PolicyParams values)
        : policy_(policy), v_(std::move(values)) {}
    double number(const std::string& key) const;
    int whole(const std::string& key) const { return static_cast<int>(number(key)); }
    bool flag(const std::string& key) const { return number(key) == 1; }
    const std::string& policy() const { return policy_; }

private:
    std::string policy_;
    PolicyParams v_;
};

struct PolicySpec {
    std::string name;
    std::string summary;   // one line, naming the paper where there is one
    bool predicts = false; // uses the length predictor (--predictor)
    // Runs on any workload (every command lists it); false for `optimal` (<= 8 requests,
    // unit model), which is constructed by name only.
    bool general = true;
    // One of the comparison set: what a sweep over a run-level axis (rate, KV, seats) draws
    // "every policy" as, and what bench's capacity search compares.
    bool baseline = false;
    std::vector<ParamSpec> params;
    std::function<std::unique_ptr<Scheduler>(const ParamValues&, const PolicyConfig&)> make;
    // Where the policy may cycle for ever (detected: it throws SchedulerLoop), the settings
    // that allow it ("reset=1"); empty: it never does.
    std::string loops_when;

    const ParamSpec* param(const std::string& name) const;
};

// Every registered policy, in the order the CLI and the GUI list them.
const std::vector<PolicySpec>& policySpecs();
// Null when there is no such policy.
const PolicySpec* findPolicy(const std::string& name);
// Throws std::invalid_argument for an unknown policy, an unknown parameter or a value
// outside its domain, naming the policy and the parameter.
const PolicySpec& policySpec(const std::string& name);

// The policy's values: `given` checked against the spec and the defaults filled in.
PolicyParams resolvePolicyParams(const std::string& policy, const PolicyParams& given);

std::unique_ptr<Scheduler> makeScheduler(const PolicyConfig& cfg);
std::unique_ptr<Scheduler> makeScheduler(const std::string& name, const PolicyParams& params = {});
// The general policies' names (every spec with general = true), in registry order.
std::vector<std::string> policyNames();
// The baselines' names (baseline = true), in registry order.
std::vector<std::string> baselinePolicies();
// "fcfs, sjf, ..." (general policies).
std::string policyNameList();
// The names given, as "a, b, c".
std::string policyNameList(const std::vector<std::string>& names);
// Every policy's rules are in the rule book (model/explain.h) where this file is linked: it
// names every policy, and their files register their rules as the program starts. Readers
// of rule codes (run logs, the store) call it, so that a program that reads runs without
// scheduling any still knows every rule. It does nothing at run time.
void linkPolicyRules();
// A table of every policy and its parameters: plain text for the terminal, or Markdown
// (docs/policies.md is this output).
std::string policyTable(bool markdown);

} // namespace kairos
