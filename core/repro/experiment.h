#pragma once
// Reproductions as data: an experiment file (TOML) holds one experiment of a paper whole,
// so that a reader sees each claim's setting in one place: the workload, the device, the
// engine's limits, one RunSpec per arm (a policy with its parameters and predictor, limits
// of its own, a swept policy parameter), the seeds, and per claim its figure as a formula
// of the arms' metrics, the paper's value and its source, the quote, the band and its
// origin, the null model, the premises and the measured cause. Every run goes through the
// sweep pipeline as a RunSpec (sweep::expand, then runSpec: prepareRun is the only maker of
// a prepared run), on the experiment's workload and device held in memory (inMemory).
//
// The shipped files live in resources/experiments (installed to share/kairos/experiments);
// `kairos-cli reproduce --list` lists them and `reproduce FILE` runs one. `reproduce
// PAPER` runs the paper's experiments in code, then its files, in file-name order.
//
// The format (docs/experiments.md has it whole, with an example):
//   [experiment]  paper, title, setting (text), [[experiment.substitute]] paper_used /
//                 measured_instead
//   [workload]    builder = "short_prompt_conversations" | "conversation_trace" | "trace";
//                 requests, requests_quick, rate (a number or "inf"; Poisson, seeded by the
//                 run's seed), file (trace: a file of the data folder); loads = { of, fractions,
//                 rates } (every arm at each load: a fraction of a service_rate calibration, a
//                 rate read as one), paper_length = { requests, requests_quick }
//   [device]      profile: a shipped name, or "derived:trail" / "derived:timelyllm" /
//                 "derived:h100" (repro/derived.h)
//   [limits]      a RunSpec's limits table (kv_capacity_tokens 0: the device's)
//   [calibrate.NAME]  kind = "trail_predictor" (mae_ratio, requests, requests_quick): text
//                 values ${NAME.refined}, ${NAME.prompt_only}; numbers NAME.mae_refined,
//                 NAME.mae_prompt_only, NAME.mae_ratio; "lognormal_mae" (mae): ${NAME.spec};
//                 "service_rate" (policy): the number NAME.rate
//   [[arm]]       id, label, policy = { a RunSpec's policy table }, limits = {...},
//                 mem_fraction (the device's share of memory for this arm's KV cache),
//                 vary = { PARAM = [values] } (one policy parameter or budget, a sweep axis)
//   [select.NAME] where (a formula read at each load), at_least, otherwise = "most_loaded"
//   [figure]      NAME = a formula (below), for texts
//   [report]      metrics: the columns of the table behind the claims
//   [[claim]]     claim, unit, value = a formula, paper_value (number, [lo, hi]; absent: none),
//                 paper_value_source, quote, band = { kind, tol, no_effect | pivot },
//                 band_origin, null_model, null_value (a formula), not_comparable, calibrated,
//                 setting (added to the experiment's), cause (text), at (a load: the claim's
//                 row), baseline_queue_share (a formula at the row), [[claim.premise]] what,
//                 value (a formula), at_least, why; [[claim.reading]] what, value;
//                 [[claim.paper_reading]] what, paper_value; [claim.at_length] compared,
//                 what, why_same, why_differs, why_below
// A formula is a number or a table with one of: metric = REF, ratio = [REF, REF],
// difference = [REF, REF], sum = [REF, REF], calibration = "NAME.OUTPUT", argmin / argmax /
// spread = REF (over the arm's varied parameter: the value at the least / greatest metric, the
// first on ties; greatest over least), figure = NAME; then optionally offset and scale
// ((x + offset) * scale), reciprocal (1 / that), over = SELECT with take = "min" | "max" |
// "share_above" (and above). A REF is "ARM:METRIC", "ARM@PARAM=VALUE:METRIC", with loads
// "ARM@load=FRACTION:METRIC" / "ARM@rate=RATE:METRIC" (or "ARM:METRIC" read at a claim's row);
// METRIC a name of summaryMetrics (run/pipeline.h). Texts take ${NAME} placeholders:
// profile.provenance, profile.kv_capacity_tokens, workload.requests, length.requests, seed,
// arm.ID.kv_capacity_tokens, a calibration's values and numbers, row.load, row.value,
// row.value_at_length (in a claim with a row), and a REF or figure.NAME with an optional
// ":DECIMALS" (without: three significant digits).
//
// Errors (an unknown key, a wrong type, an arm or metric a formula names that is not there,
// a placeholder that names nothing) are InputError naming the file, the line and the key.
#include "repro/repro.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kairos::repro {

namespace experiment_file {
struct Parsed; // the file's parts, checked (experiment.cpp)
}

struct Experiment {
    std::string path;
    std::string paper, title;
    std::size_t arms = 0, runs = 0, claims = 0;            // runs: arms times their varied values
    nlohmann::json doc;                                    // the file as JSON
    std::map<std::string, long> lines;                     // each key's line (tomlLine)
    std::shared_ptr<const experiment_file::Parsed> parsed; // read once, run at every seed
};

// Reads and checks a file whole (every formula, reference and placeholder), running
// nothing. Throws InputError.
Experiment loadExperiment(const std::string& path);
// Runs it at opt.seed (one seed; reproduce() aggregates seeds) and returns its claims
// (unjudged) and the table behind them.
Report runExperiment(const Experiment& e, const Options& opt);
// The experiment files of `dir` (*.toml), sorted by name; of one paper when `paper` is
// given (read to know: a file that does not load throws).
std::vector<std::string> experimentFiles(const std::string& dir, const std::string& paper = "");
// The experiment files of `dir` read, sorted by name; of one paper when `paper` is given.
// A file that does not read throws.
std::vector<Experiment> loadExperiments(const std::string& dir, const std::string& paper = "");
// Whether `name` names a file rather than a paper: it is neither a paper's name nor "all".
bool isExperimentPath(const std::string& name);

} // namespace kairos::repro
