#pragma once
// What the reproduction experiments share: running many simulations in parallel, small
// text tables, and fitting a line.
#include "exec/execution_model.h"
#include "metrics/robot_metrics.h"
#include "metrics/summary.h"
#include "model/workload.h"
#include "predict/trail_predictor.h"
#include "repro/repro.h"
#include "sched/registry.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kairos::repro {

// One simulation to run: a workload (shared, read-only), a policy, limits.
struct Job {
    const Workload* workload = nullptr;
    PolicyConfig policy;
    EngineLimits limits;
    SummaryOptions summary; // its `workload` is set to the job's
    // Set: the run is also scored by the TimelyLLM authors' metric (Outcome::authors).
    std::optional<AuthorsMetricOptions> authors = std::nullopt;
    // Set: the job runs on this model instead of runAll's (a derived device's level moved
    // for its device readings, Claim::device_readings). Must outlive the run.
    const ExecutionModel* model = nullptr;
};

struct Outcome {
    Summary summary;
    std::optional<AuthorsMetric> authors; // where the job asked for it
    bool looped = false;                  // the scheduler threw SchedulerLoop
    std::string error;
};

// Runs every job on `model` with up to opt.threads threads; results in job order.
std::vector<Outcome> runAll(const std::vector<Job>& jobs, const ExecutionModel& model,
                            const Options& opt);

// Least-squares slope of y on x.
double slope(const std::vector<double>& x, const std::vector<double>& y);

// A plain text table: a header row, then rows; columns padded to their widest cell.
class Table {
public:
    explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
    std::string str() const;

private:
    std::vector<std::vector<std::string>> rows_;
};

std::string fmt(double v, int digits = 3); // %.{digits}g, "inf"/"nan" spelled out
std::string fixed(double v, int decimals);
// The band origin of a stated figure judged by Band::measured: `precision` says what the
// tolerance is made of ("two decimals: +-0.005").
std::string precisionOrigin(const std::string& precision);
// How a figure measured under a changed factor (a row's cause) reads in the row's band:
// " (agrees)" or " (still disagrees)".
std::string readsInBand(const Band& band, const nlohmann::json& paper, double value);

// The paper's figure as [lo, hi] (a number is [v, v]); false when it has none.
bool paperRange(const nlohmann::json& p, double& lo, double& hi);

// Adds `what` to the substitutes of rows[from..]: the rows of one setting rest on it.
void restOn(std::vector<Claim>& rows, std::size_t from, const std::vector<Substitute>& what);

// The first n requests of the Azure conversation trace (its lengths) with seeded Poisson
// arrivals at `rate` instead of its timestamps.
Workload conversationTrace(const Options& opt, double rate, std::size_t n);
// The first n ShareGPT conversations whose prompt is at most 256 tokens (single questions:
// median prompt 55 tokens, the closest here to Alpaca's instructions and LMSYS-Chat-1M's
// questions), arrivals Poisson at `rate` (all at 0 when rate is infinite: a burst).
Workload shortPromptConversations(const Options& opt, double rate, std::size_t n);

// Trail's prediction model as the paper's predictors (trail.cpp): the per-token classifier's
// noise set so that the prompt-only predictions' MAE is `mae_ratio` times the refined ones'
// on n short-prompt conversations (arrivals at 1 req/s; the seed's). `refined` and
// `prompt_only` are predictor specs (predict/predictor.h); `mae` both MAEs as measured.
struct TrailPredictors {
    std::string refined, prompt_only;
    TrailMae mae;
};
TrailPredictors trailPredictors(const Options& opt, double mae_ratio, std::size_t n);

// make() once per key for the process (thread-safe; two threads may both make a missing
// key, the first kept): the calibrations that experiments in code and in files repeat at
// each seed. Each call site (its `make`'s type) has its own store.
template <class Key, class Make> auto remembered(const Key& key, Make make) -> decltype(make()) {
    using Value = decltype(make());
    static std::mutex m;
    static std::map<Key, Value> known;
    {
        std::lock_guard<std::mutex> lock(m);
        if (const auto it = known.find(key); it != known.end()) return it->second;
    }
    Value v = make();
    std::lock_guard<std::mutex> lock(m);
    return known.emplace(key, std::move(v)).first->second;
}

// A length predictor's MAE on `w` (initialMae, its noise seeded by `seed`).
double predictorMae(const std::string& spec, const Workload& w, std::uint64_t seed);

// The predictor spec "lognormal:SIGMA" whose MAE on `w`'s lengths (initialMae, the noise
// seeded by opt.seed) is `mae` tokens: SIGMA by bisection over [0.001, 3] (TimeBill's RLP
// error, timebill.cpp). Remembered per seed and lengths for the process.
std::string lognormalAtMae(const Options& opt, const Workload& w, double mae);

// A claim with no band yet (set it, or a flag, before the report is judged).
inline Claim makeClaim(std::string paper, std::string claim, nlohmann::json paper_value,
                       double value, std::string unit, std::string setting) {
    Claim c;
    c.paper = std::move(paper);
    c.claim = std::move(claim);
    c.paper_value = std::move(paper_value);
    c.kairos_value = value;
    c.unit = std::move(unit);
    c.setting = std::move(setting);
    return c;
}

std::string dataFile(const Options& opt, const std::string& name); // throws InputError if missing
void say(const Options& opt, const std::string& line);

} // namespace kairos::repro
