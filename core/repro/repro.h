#pragma once
// `kairos-cli reproduce`: each paper's experiment run on the closest workload Kairos has,
// with the paper's figure next to the one measured here, claim by claim.
//
// A Claim's paper_value is a number, a [low, high] range, or null where the paper gives
// no figure (then the claim is a measurement the paper only describes in words); the
// setting says where ours differs from the paper's and why. Experiments are seeded: the
// same options give the same claims on every machine (simulated time, not wall time).
#include "model/device_profile.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kairos::repro {

// How close a Kairos figure must be to the paper's to agree with it. A reviewer's reading
// of the claim: a ratio the paper reports to two digits agrees within a relative band; a
// ranking or a best setting within a step; a claim in words ("grows", "minimal benefit")
// by its direction.
struct Band {
    // Measured: the paper's figure, widened by its stated precision (tol: half its last digit,
    // plus any grid step of the measurement), meets Kairos's 95 % interval over the seeds
    // (one seed: the value itself). The band a stated figure gets; Relative / Absolute are
    // kept for readings of the paper's words and for checks of a calibration.
    enum class Kind { None, Relative, Absolute, Direction, AtMost, AtLeast, Measured };
    Kind kind = Kind::None;
    double tol = 0;   // Relative: a fraction of the paper's figure; Absolute / AtMost /
                      // AtLeast: in the claim's unit
    double pivot = 0; // Direction: the value between the two directions (1 for a ratio);
                      // Measured: no effect (NaN: the figure is not a gain)
    static Band relative(double fraction) { return {Kind::Relative, fraction, 0}; }
    static Band absolute(double tol) { return {Kind::Absolute, tol, 0}; }
    static Band direction(double pivot) { return {Kind::Direction, 0, pivot}; }
    static Band atMost(double tol = 0) { return {Kind::AtMost, tol, 0}; }
    static Band atLeast(double tol = 0) { return {Kind::AtLeast, tol, 0}; }
    // no_effect: for a gain or a change, its value when there is none (1 for a ratio, 0 for
    // a difference); a gain whose seeds' interval holds it is not resolved (judge()).
    static Band measured(double precision, double no_effect = NAN) {
        return {Kind::Measured, precision, no_effect};
    }
    std::string text() const; // "within 25 %", "same side of 1", ...
    // Whether `value` agrees with `paper` (a number or a [lo, hi] range) in this band
    // (Measured: `value` alone, an interval of zero width).
    bool contains(const nlohmann::json& paper, double value) const;
    // The same for an interval of Kairos's figure [lo, hi] (Measured: whether it meets the
    // paper's figure widened by the precision; the other kinds judge the midpoint).
    bool meets(const nlohmann::json& paper, double lo, double hi) const;
};

enum class Verdict { Agrees, Disagrees, Calibrated, NotComparable };
const char* verdictName(Verdict v); // "agrees", "disagrees", "calibrated", "not comparable"

// A condition of the paper's setting that its claim rests on, measured in Kairos's: e.g.
// "the baseline leaves room for the gain", "memory binds", "the curve places a peak". Where
// the measured value (over several seeds: their mean) is below `at_least`, the setting
// lacks what the claim needs and judge() does not judge the row (rule 6); the row says
// which premise failed, by how much, and `why` it matters.
struct Premise {
    std::string what; // the condition, in words (the value's meaning)
    double value = std::numeric_limits<double>::quiet_NaN();
    double at_least = 0;
    std::string why; // what the claim needs it for
};

// Data, hardware or a model the paper's figure was measured on that is not here, and what
// Kairos measured with instead. A row resting on one is a measurement in a substitute
// setting: its verdict says how far the substitute reproduces the paper, and the row names
// what would settle it.
struct Substitute {
    std::string paper_used;
    std::string measured_instead;
};

struct Claim {
    std::string paper;          // "mcsf", "trail", "timely", "timebill", "ala"
    std::string claim;          // what is compared, in words
    nlohmann::json paper_value; // number, [lo, hi] or null
    double kairos_value = 0;    // over several seeds: their mean
    std::string unit;
    std::string setting; // the setting of our measurement and how it differs from the paper's
    Band band;
    // Set by the experiment: the figure was tuned to the paper's (not found), or the row
    // cannot be compared (the reason; e.g. it rests on an invented curve). A row without a
    // paper figure is not comparable by itself.
    bool calibrated = false;
    std::string not_comparable;
    // Why Kairos disagrees, as measured by the experiment (it sets this when it has
    // measured a cause, whatever the verdict turns out to be; shown for `disagrees`).
    std::string cause;
    // Where the paper's figure comes from: its own words or table cell, with the seed file
    // and section. Empty: not quoted yet (the audit says so).
    std::string quote;
    // The values compared, by name: "numerator" and "denominator" for a ratio (judged only
    // when both are positive: see judge()), else one key per system. Set with ratio().
    nlohmann::json compared = nlohmann::json::object();
    // Where the band comes from (the paper's stated precision, its figure's readable
    // resolution, the spread over seeds). Empty: not stated yet (the audit says so).
    std::string band_origin;
    // What the paper used that is not here, and what stands for it (JSON `missing_data`).
    std::vector<Substitute> substitutes;
    // A gain of one order over a baseline: the offered load where it was measured (rate over
    // the baseline's service rate) and the share of the baseline's mean latency spent
    // queueing there. NaN: not a gain claim. Where the baseline barely queues no order can
    // gain, and judge() does not judge the row (rule 5).
    double load = std::numeric_limits<double>::quiet_NaN();
    double baseline_queue_share = std::numeric_limits<double>::quiet_NaN();
    static constexpr double kMinQueueShare = 0.05;
    // The setting's conditions the claim rests on (rule 6 of judge()).
    std::vector<Premise> premises;
    // Filled by judge() / the seed aggregation.
    Verdict verdict = Verdict::NotComparable;
    std::string rule;       // the verdict rule that decided, in words
    bool ruled_out = false; // not_comparable was set by judge()'s rules (judged again: cleared)
    // The verdict a rule set aside (rule 10: a figure not from the paper's text; 11: another
    // reading flips it; 13: the derived card's error does): not tallied, counted apart by the
    // summary. NotComparable otherwise.
    Verdict untallied = Verdict::NotComparable;
    // The null model of the row: what a trivial answer (a constant model, FCFS order, no
    // effect, the paper's own baseline) gives in the same setting, and its value (over
    // several seeds: their mean, with its interval). A row agrees only where Kairos agrees
    // and the null model does not (rule 9 of judge()). Empty: none named.
    std::string null_model;
    double null_value = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> null_seed_values;
    double null_ci_low = std::numeric_limits<double>::quiet_NaN(),
           null_ci_high = std::numeric_limits<double>::quiet_NaN();
    Verdict null_verdict = Verdict::NotComparable; // the band's verdict on the null value
    // Where the paper's figure comes from when it is not the paper's text (the seed file):
    // e.g. "PAPERS.md's notes (lost in the seed's text conversion)". Such a row is judged
    // but not tallied (rule 10). Empty: the seed text.
    std::string paper_value_source;
    // The figure under other readings of a choice the paper leaves unstated (rule 11 of
    // judge()): e.g. the system prompt cached or computed, a batching's joins serialised or
    // not. A verdict stands only if every reading gives the same one; else the row is not
    // comparable and says which reading flips it. Over several seeds: each the mean.
    struct Reading {
        std::string what;
        double value = 0;
    };
    std::vector<Reading> readings;
    // Other readings of the paper's own words (rule 11 too): the same figure judged against
    // the paper's value as another reading of its text gives it (e.g. "183 % relative to"
    // read as an increase, 2.83, rather than a ratio, 1.83).
    struct PaperReading {
        std::string what;
        nlohmann::json paper_value;
    };
    std::vector<PaperReading> paper_readings;
    // The figure on the derived device's other plausible levels (rule 13 of judge()): a row
    // measured on a device profile derived rather than measured (derived.h) runs again with
    // its iteration times moved by the derivation's own uncertainty, each way. A paper's
    // figure printed to a precision finer than that uncertainty can then neither agree nor
    // disagree by that precision alone. Over several seeds: each the mean.
    std::vector<Reading> device_readings;
    int seeds = 1;
    std::vector<double> seed_values; // each seed's kairos_value
    // 95 % interval of the mean over the seeds: a percentile bootstrap from 10 seeds on,
    // Student's t below (the row's rule says which).
    double ci_low = 0, ci_high = 0;

    // This claim's figure is numerator / denominator: kairos_value is set to it and both are
    // kept in `compared` for the verdict rules.
    void ratio(double numerator, double denominator) {
        compared["numerator"] = numerator;
        compared["denominator"] = denominator;
        kairos_value = numerator / denominator;
    }
};

// Sets the verdict (and `rule`, which says why) from the flags, the paper's figure, the
// values compared and the band, by these rules in order:
//  1. calibrated (tuned to the paper's figure): not counted;
//  2. the experiment says why the row cannot be compared: not comparable;
//  3. the paper gives no figure: not comparable;
//     (then: a figure that is not a number, a run failed or a division by zero: not
//     comparable)
//  4. a ratio whose numerator or denominator is not positive: not comparable. A ratio of
//     negative utilities reads backwards (-202 / -152 = 1.33 "more" although -202 is worse)
//     and one over zero means nothing; the row keeps both values in `compared`;
//  5. a gain over a baseline measured where the baseline spends under kMinQueueShare of its
//     mean latency queueing: not comparable (no order can gain where nothing waits);
//  6. a premise of the claim (Premise) whose measured value is below its threshold: not
//     comparable (the setting lacks what the claim needs; the row says which and by how much);
//  7. a side claim (a direction: which side of a pivot; or "at least" / "at most" a bound)
//     over several seeds whose 95 % interval contains the pivot or bound: not comparable
//     (the seeds do not resolve the side);
//  8. otherwise the band decides: agrees or disagrees;
//  9. a row that agrees while its null model's value agrees too (by the same band, over
//     its own seeds' interval), or while the null model it names gives no number: not
//     comparable (the agreement is no evidence);
// 10. a paper figure that is not in the paper's text (paper_value_source): not comparable,
//     the verdict it would have said in the reason (not tallied);
// 11. a verdict that another reading of what the paper leaves unstated flips (readings):
//     not comparable;
// 12. from 10 seeds on, a side agrees only where a sign count of the seeds puts them on it;
// 13. on a derived device (device_readings): an agreement stands only if the figure agrees
//     at every level of the device, a disagreement only if no figure between the lowest and
//     the highest of Kairos's interval and the device readings would agree; else not
//     comparable (the device's own uncertainty, not the method, decides).
// Rules 5 and 6 exclude a magnitude, never a direction: where the seeds' interval lies
// wholly on the other side of no effect (or of the bound) from the paper's figure, the row
// disagrees whatever the load or the premises.
void judge(Claim& c);
// From this many seeds on, the intervals are a bootstrap's (Claim::ci_low).
constexpr std::size_t kBootstrapSeeds = 10;
// Claims of one experiment run over several seeds: the same rows in the same order, each
// one's kairos_value the mean, with its 95 % interval (and its null model's value the same); the
// first run's words. Throws std::logic_error when the runs' rows differ.
std::vector<Claim> aggregate(const std::vector<std::vector<Claim>>& runs);

// A headline claim of a paper that no row measures, and why.
struct Uncovered {
    std::string paper, claim, reason;
};
std::vector<Uncovered> uncoveredClaims();
std::string uncoveredTable();

struct Options {
    std::string data_dir;   // ../shared/data: the real traces the experiments use
    bool quick = false;     // smaller instances (tests, a first look): same claims, noisier
    std::uint64_t seed = 1; // arrivals, predictors, random instances
    int seeds = 1;          // reproduce(): run each experiment with seeds seed .. seed+seeds-1
    int threads = 0;        // simulations run in parallel; 0: the hardware's count
    // TimelyLLM: a workload in the authors' data format (a JSON list of jobs, the trace set
    // beside it) instead of their WID1 sample, for every claim made on that sample.
    std::string timely_workload;
    // TimelyLLM: the profile the code's arms run on (reproduce timely --profile).
    std::string timely_profile = "llama3-8b-h100";
    // The folder of the experiment files (repro/experiment.h): reproduce(PAPER) runs the
    // paper's files there after its experiments in code. Empty: none.
    std::string experiments_dir;
    // Finds a shipped device profile by name (the CLI's resolver).
    std::function<DeviceProfile(const std::string&)> profile;
    std::function<void(const std::string&)> progress; // one line per step; may be empty
};

struct Report {
    std::vector<Claim> claims;
    std::string details; // the tables behind the claims, for people
    // Set by the experiments that run the engine: whether they ran it with prefix caching
    // (sim/prefix_cache.h). reproduce() then ends every row's setting saying which.
    std::optional<bool> prefix_caching;
    // TimelyLLM: each arm of the authors' code on the main workload, by their metric
    // (`reproduce timely --json` writes it beside the claims); empty for other papers.
    nlohmann::json systems;
};

// "mcsf", "trail", "timely", "timebill", "ala"; "all" runs each in that order; a path to an
// experiment file (isExperimentPath, repro/experiment.h) runs that file alone. A paper's
// experiments in code come first, then its files in opt.experiments_dir. Throws
// std::invalid_argument for another name and InputError when a data file is missing or an
// experiment file is malformed.
Report reproduce(const std::string& paper, const Options& opt);
std::vector<std::string> paperNames();
// Whether a paper has experiments in code (core/repro/PAPER.cpp) beside its files; Trail's are
// all files.
bool hasExperimentsInCode(const std::string& paper);

nlohmann::json toJson(const std::vector<Claim>& claims);
// Every row as an auditor reads it: the paper's words, both figures (each seed's), the
// values compared, the setting, the band and where it comes from, the rule that decided
// and the verdict with its reason (`reproduce --audit`).
std::string auditText(const std::vector<Claim>& claims);
// The claims, their verdicts, the causes of disagreements, the settings, and the count
// "N of M comparable claims agree".
std::string claimsTable(const std::vector<Claim>& claims);
struct Tally {
    int agree = 0, comparable = 0, calibrated = 0, not_comparable = 0;
    // Rows whose as-run verdict a rule set aside (not tallied): how they read as run, and
    // by which rule (10: a figure not from the paper's text; 11: another reading; 13: the
    // derived card's own error).
    int untallied_agree = 0, untallied_disagree = 0;
    int by_source = 0, by_reading = 0, by_device = 0;
};
Tally tally(const std::vector<Claim>& claims);

Report reproduceMcsf(const Options& opt);
Report reproduceTimely(const Options& opt);
Report reproduceTimebill(const Options& opt);
Report reproduceAla(const Options& opt);

} // namespace kairos::repro
