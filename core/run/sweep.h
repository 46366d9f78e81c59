#pragma once
// Sweeps: a base RunSpec, axes of values (policies, any registered policy parameter, the
// arrival rate, the trace's rate scale, the KV capacity, the device profile, the seats, the
// replicas and their router, every request's time budget) and
// a number of seeds. Every combination x seed is a RunSpec; the table has a row per
// combination with each metric's mean and 95 % interval over the seeds.
//
// Determinism: a job's result depends on its RunSpec only, and the table is assembled in
// job order, so 1 thread, N threads and N MPI ranks (jobs dealt round-robin over ranks,
// gathered to rank 0) give the same bytes.
//
// A parameter axis applies to the policies that register that parameter; for the others
// the point is run once with the value "-" (sjf has no C: one sjf row, not 21 copies).
#include "run/pipeline.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kairos::sweep {

// "LO:HI:STEP" (linear, HI included when it falls on the grid), "LO:HI:xF" (geometric,
// F > 1), "A,B,C" or a single value. Values are rounded to 12 significant digits, so
// 0:1:0.1 gives 0.3, not 0.30000000000000004. Throws std::invalid_argument naming `arg`
// (LO > HI, a step <= 0, a factor <= 1, more than 100,000 values, not a number).
std::vector<double> parseRange(const std::string& text, const std::string& arg);
// The text of a value in tables and keys (%.12g).
std::string formatValue(double v);

enum class AxisKind {
    Policy,
    Param,
    Rate,
    RateScale,
    KvCapacity,
    Profile,
    MaxNumSeqs,
    Replicas,
    Router,
    Budget // every request's time budget (s): the workload's `budget`
};

struct Axis {
    AxisKind kind = AxisKind::Param;
    std::string name;                // column name: "policy", "C", "rate", "kv_capacity", ...
    std::vector<std::string> values; // as written in the table and the RunSpec
    std::string arg;                 // the argument it came from, for errors
};

// --param NAME=RANGE (or a bare NAME: its registered explored range, 21 points, geometric
// when the registry says log). `policies`: the sweep's policies; the parameter must belong
// to at least one, and every value must lie in each such policy's domain.
Axis paramAxis(const std::string& arg, const std::vector<std::string>& policies);

struct Definition {
    RunSpec base;
    std::vector<Axis> axes;
    int seeds = 1;
    std::vector<std::string> metrics; // the table's columns (summaryMetrics names)

    nlohmann::json toJson() const;
    static Definition fromJson(const nlohmann::json& j, const std::string& where);
    // The metrics shown when none are asked for.
    static std::vector<std::string> defaultMetrics(const RunSpec& base);
};

struct Point {
    std::vector<std::string> values; // per axis; "-" where the axis does not apply
    RunSpec spec;                    // seed 0's; seed s adds s to both seeds
};
std::vector<Point> expand(const Definition& d);
// The RunSpec of job j (point j / seeds, seed j % seeds).
RunSpec jobSpec(const Definition& d, const std::vector<Point>& points, std::size_t job);

struct Outcome {
    std::vector<double> metrics; // summaryMetrics order (every metric, not only the shown)
    std::string status = "ok";   // "ok", "loop" (the policy cycles: SchedulerLoop)
};
// One line, exact (doubles as hexadecimal floats), with its metric count and a checksum of
// the line: journals and MPI messages.
std::string encode(std::size_t job, const Outcome& o);
// False for a line that is not one (a torn last line of a journal: its checksum or count
// does not match).
bool decode(const std::string& line, std::size_t* job, Outcome* o);

struct RunOptions {
    int threads = 0; // 0: every core
    int rank = 0, ranks = 1;
    const std::atomic<bool>* cancel = nullptr;
    // Called (from worker threads, serialised) after each job: (jobs done, jobs of this rank).
    std::function<void(std::size_t done, std::size_t total)> progress;
    // Called (serialised) with each finished job: the resume journal.
    std::function<void(std::size_t job, const Outcome&)> finished;
    // Called once before any job runs with what the runs at once will hold (checked
    // against the budget first: run/memory_estimate.h).
    std::function<void(const MemoryEstimate&)> memory;
};
// Runs this rank's jobs not in `done` (resumed); returns those it ran. Cancelled jobs are
// left out. An error other than a policy loop stops the sweep and is rethrown.
std::map<std::size_t, Outcome> runJobs(const Definition& d, const std::vector<Point>& points,
                                       const RunContext& ctx, const RunOptions& opt,
                                       const std::map<std::size_t, Outcome>& done = {});

struct Table {
    std::vector<std::string> axes, metrics;
    struct Row {
        std::vector<std::string> values;
        int runs = 0, ok = 0;           // seeds run, of which ended without a loop
        std::vector<double> mean, half; // per metric: mean over seeds and 95 % half-width
    };
    std::vector<Row> rows;
    // Row r's 95 % band of metric column c: mean -/+ half, the low end cut at the metric's
    // floor (metricFloor). What the CSV, the JSON and the window's chart draw.
    double lo(std::size_t r, std::size_t c) const;
    double hi(std::size_t r, std::size_t c) const { return rows[r].mean[c] + rows[r].half[c]; }
    // CSV: the axes, runs, ok, then per metric its mean, _lo and _hi (%.10g; empty for NaN).
    std::string csv() const;
    nlohmann::json toJson() const;
    // The inverse of toJson (a stored sweep's table); throws InputError naming `where`.
    static Table fromJson(const nlohmann::json& j, const std::string& where);
    std::string text() const; // aligned, for the terminal
    // Each row's value on the last axis as a number; rows by position when that axis is
    // not numeric (a policy or profile axis). `numeric` (may be null) says which.
    std::vector<double> lastAxisNumbers(bool* numeric = nullptr) const;
};
// Every job must be in `outcomes`.
Table aggregate(const Definition& d, const std::vector<Point>& points,
                const std::map<std::size_t, Outcome>& outcomes);

// Whether more is better for a summaryMetrics name (throughput, goodput, completions,
// budgets met, quality, utility) or less (latencies, queueing, KV, preemptions, kills).
bool higherIsBetter(const std::string& metric);
// The least value a summaryMetrics name can take: 0 for every count, rate, latency, share
// and size; -infinity for a utility (a late urgent task's utility is negative). A 95 %
// band is cut there: mean - half of a latency near 0 went below it in the Sweep chart.
double metricFloor(const std::string& metric);
// The points no other point beats on both coordinates (at least as good on both and better
// on one), as indices sorted by x; NaN points are never on it.
std::vector<std::size_t> paretoFront(const std::vector<std::pair<double, double>>& points,
                                     bool x_higher_better, bool y_higher_better);

} // namespace kairos::sweep
