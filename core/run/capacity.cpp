#include "run/capacity.h"

#include "metrics/stats.h"
#include "run/parallel.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace kairos::capacity {

namespace {

double offeredRate(const Workload& w) {
    if (w.requests.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    const double span = w.requests.back().arrival - w.requests.front().arrival;
    return span > 0 ? double(w.requests.size() - 1) / span
                    : std::numeric_limits<double>::infinity();
}

} // namespace

std::vector<Result> find(const RunSpec& base, const std::vector<std::string>& policies,
                         const Options& opt, const RunContext& ctx) {
    if (base.summary.goodput.empty())
        throw std::invalid_argument("capacity needs goodput SLOs (--goodput ttft:MS tpot:MS ...)");
    if (!(opt.target > 0 && opt.target <= 1))
        throw std::invalid_argument("--target must be in (0, 1]");
    if (!(opt.rel_tol >= kMinTolerance && opt.rel_tol <= kMaxTolerance))
        throw std::invalid_argument("--tolerance must be in [1e-06, 0.5]");
    if (opt.seeds < 1) throw std::invalid_argument("--seeds must be >= 1");
    WorkloadCache cache;
    const RunContext c = forManyRuns(ctx, cache, opt.cancel);
    // The trace's own rate (after any scale the base spec already applies).
    RunSpec probe = base;
    probe.workload.generate_arrivals = false;
    probe.workload.rate_scale = 1.0;
    const double trace_rate = offeredRate(*prepareRun(probe, c).workload);
    if (!opt.generate && !(std::isfinite(trace_rate) && trace_rate > 0))
        throw std::invalid_argument(
            "the trace's arrivals span no time (an offline batch): scaling them changes "
            "nothing; search generated arrivals instead (--arrivals poisson)");
    const double start = opt.start > 0                                 ? opt.start
                         : std::isfinite(trace_rate) && trace_rate > 0 ? trace_rate
                                                                       : 1.0;
    std::size_t gf_index = 0;
    {
        const auto names = summaryMetricNames(base.summary.percentiles);
        gf_index = static_cast<std::size_t>(
            std::find(names.begin(), names.end(), "goodput_fraction") - names.begin());
    }

    struct Task {
        std::size_t policy;
        int seed;
    };
    std::vector<Task> tasks;
    for (std::size_t p = 0; p < policies.size(); ++p)
        for (int s = 0; s < opt.seeds; ++s) tasks.push_back({p, s});
    std::vector<SeedResult> results(tasks.size());
    std::vector<std::string> notes(tasks.size());

    auto fraction = [&](const Task& t, double rate) {
        RunSpec s = base;
        s.policy.name = policies[t.policy];
        s.policy.params.clear(); // the policy's defaults (a sweep varies parameters)
        if (policies[t.policy] == base.policy.name) s.policy.params = base.policy.params;
        s.policy.seed = base.policy.seed + std::uint64_t(t.seed);
        if (opt.generate) {
            s.workload.generate_arrivals = true;
            s.workload.rate = rate;
            s.workload.rate_scale = 1.0;
            s.workload.arrival_seed = base.workload.arrival_seed + std::uint64_t(t.seed);
        } else {
            s.workload.generate_arrivals = false;
            s.workload.rate_scale = base.workload.rate_scale * rate / trace_rate;
        }
        double f = 0;
        try {
            const RunResult r = runSpec(s, c);
            f = summaryMetrics(r.summary).at(gf_index).second;
            if (!std::isfinite(f)) f = 0;
        } catch (const SchedulerLoop&) {
            f = 0; // a policy that cycles serves nothing well
        }
        if (opt.step) opt.step(policies[t.policy], t.seed, rate, f);
        return f;
    };
    auto search = [&](std::size_t i) {
        const Task& t = tasks[i];
        SeedResult& r = results[i];
        double lo = 0, hi = std::numeric_limits<double>::infinity();
        double rate = start;
        // Bracket.
        if (++r.runs, fraction(t, rate) >= opt.target) {
            lo = rate;
            while (true) {
                rate *= 2;
                if (rate > opt.max_rate) {
                    notes[i] = "above max_rate";
                    break;
                }
                ++r.runs;
                if (fraction(t, rate) >= opt.target) {
                    lo = rate;
                } else {
                    hi = rate;
                    break;
                }
            }
        } else {
            hi = rate;
            while (true) {
                rate /= 2;
                if (rate < opt.min_rate) {
                    notes[i] = "below min_rate";
                    break;
                }
                ++r.runs;
                if (fraction(t, rate) >= opt.target) {
                    lo = rate;
                    break;
                }
                hi = rate;
            }
        }
        // Bisect.
        while (lo > 0 && std::isfinite(hi) && hi / lo - 1 >= opt.rel_tol) {
            if (opt.cancel && opt.cancel->load()) throw SimulationCancelled();
            const double mid = 0.5 * (lo + hi);
            ++r.runs;
            if (fraction(t, mid) >= opt.target)
                lo = mid;
            else
                hi = mid;
        }
        r.capacity = lo;
        r.failed_at = hi;
    };

    parallelFor(tasks.size(), opt.threads, search);

    std::vector<Result> out;
    for (std::size_t p = 0; p < policies.size(); ++p) {
        Result r;
        r.policy = policies[p];
        r.base_rate = trace_rate;
        std::vector<double> caps;
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            if (tasks[i].policy != p) continue;
            r.seeds.push_back(results[i]);
            r.runs += results[i].runs;
            caps.push_back(results[i].capacity);
            if (!notes[i].empty()) r.note = notes[i];
        }
        const auto [mean, half] = meanInterval95(caps);
        r.capacity = mean;
        r.half = half;
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace kairos::capacity
