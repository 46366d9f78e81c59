#include "run/capacity.h"

#include "metrics/stats.h"
#include "model/router.h"
#include "util/input_error.h"
#include "util/parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
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

void checkOptions(const RunSpec& base, const Options& opt) {
    if (base.summary.goodput.empty())
        throw std::invalid_argument("capacity needs goodput SLOs (--goodput ttft:MS tpot:MS ...)");
    if (!(opt.target > 0 && opt.target <= 1))
        throw std::invalid_argument("--target must be in (0, 1]");
    if (opt.seeds < 1) throw std::invalid_argument("--seeds must be >= 1");
}

std::size_t attainmentIndex(const RunSpec& base) {
    const auto names = summaryMetricNames(base.summary.percentiles);
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), "slo_attainment") -
                                    names.begin());
}

// `base` for policy `policy` (its own parameters when it is the base's policy, else the
// defaults) and seed offset `seed` (the policy's seed; the arrivals' when generated).
RunSpec forPolicy(const RunSpec& base, const std::string& policy, int seed) {
    RunSpec s = base;
    s.policy.name = policy;
    s.policy.params.clear(); // the policy's defaults (a sweep varies parameters)
    if (policy == base.policy.name) s.policy.params = base.policy.params;
    s.policy.seed = base.policy.seed + std::uint64_t(seed);
    if (s.workload.generate_arrivals)
        s.workload.arrival_seed = base.workload.arrival_seed + std::uint64_t(seed);
    return s;
}

// The run's SLO attainment (0 when not finite, or when the policy cycles).
double attainment(const RunSpec& s, const RunContext& c, std::size_t gf_index) {
    try {
        const RunResult r = runSpec(s, c);
        const double f = summaryMetrics(r.summary).at(gf_index).second;
        return std::isfinite(f) ? f : 0.0;
    } catch (const SchedulerLoop&) {
        return 0.0; // a policy that cycles serves nothing well
    }
}

} // namespace

std::vector<Result> find(const RunSpec& base, const std::vector<std::string>& policies,
                         const Options& opt, const RunContext& ctx) {
    checkOptions(base, opt);
    if (!(opt.rel_tol >= kMinTolerance && opt.rel_tol <= kMaxTolerance))
        throw std::invalid_argument("--tolerance must be in [1e-06, 0.5]");
    WorkloadCache cache;
    const RunContext c = forManyRuns(ctx, cache, opt.cancel);
    // The trace's own rate (after any scale the base spec already applies).
    RunSpec probe = base;
    probe.workload.generate_arrivals = false;
    probe.workload.rate_scale = 1.0;
    const double trace_rate = offeredRate(*prepareRun(probe, c).workload);
    const MemoryEstimate need = checkConcurrentRuns(
        base, c, parallelThreads(policies.size() * std::size_t(opt.seeds), opt.threads),
        "the capacity search", "fewer searches at once (--threads) or fewer requests (--limit)");
    if (opt.memory) opt.memory(need);
    if (!opt.generate && !(std::isfinite(trace_rate) && trace_rate > 0))
        throw std::invalid_argument(
            "the trace's arrivals span no time (an offline batch): scaling them changes "
            "nothing; search generated arrivals instead (--arrivals poisson)");
    const double start = opt.start > 0                                 ? opt.start
                         : std::isfinite(trace_rate) && trace_rate > 0 ? trace_rate
                                                                       : 1.0;
    const std::size_t gf_index = attainmentIndex(base);

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
        RunSpec s = forPolicy(base, policies[t.policy], t.seed);
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
            f = attainment(s, c, gf_index);
        } catch (const InputError& e) {
            // The search's own rate, not one the user gave: say so, with what to change.
            if (e.field() != "workload.rate_scale") throw;
            char b[96];
            std::snprintf(b, sizeof b, "%.3g req/s (the trace's arrivals scaled by %.3g)", rate,
                          s.workload.rate_scale);
            throw std::invalid_argument(
                "the capacity search went down to " + std::string(b) +
                " without meeting --target, and the trace's arrivals would then pass 1e9 s: no "
                "rate of this trace meets the SLOs; relax --goodput or --target, or search "
                "Poisson arrivals (--arrivals poisson)");
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

std::vector<ReplicaResult> fewestReplicas(const RunSpec& base,
                                          const std::vector<std::string>& policies,
                                          const Options& opt, const RunContext& ctx,
                                          int max_replicas) {
    checkOptions(base, opt);
    if (max_replicas < 1 || max_replicas > kMaxReplicas)
        throw std::invalid_argument("--max-replicas must be 1 to " + std::to_string(kMaxReplicas));
    WorkloadCache cache;
    const RunContext c = forManyRuns(ctx, cache, opt.cancel);
    const double rate = offeredRate(*prepareRun(base, c).workload);
    {
        // The largest fleet the search may try, as many at once as it runs.
        RunSpec worst = base;
        worst.fleet.replicas = max_replicas;
        worst.fleet.disaggregate.clear(); // both pools together: as many replicas at most
        worst.fleet.decode_profile.clear();
        worst.fleet.link = RunSpec().fleet.link;
        const MemoryEstimate need = checkConcurrentRuns(
            worst, c, parallelThreads(policies.size() * std::size_t(opt.seeds), opt.threads),
            "the search up to --max-replicas " + std::to_string(max_replicas),
            "a smaller --max-replicas, fewer searches at once (--threads), fewer "
            "requests (--limit)");
        if (opt.memory) opt.memory(need);
    }
    const std::size_t gf_index = attainmentIndex(base);
    // With disaggregation the question is the fewest prefill + decode replicas, each total
    // at its best split.
    const bool split = !base.fleet.disaggregate.empty();
    if (split && max_replicas < 2)
        throw std::invalid_argument("--max-replicas: disaggregation needs at least 2 (1:1)");
    struct Task {
        std::size_t policy;
        int seed;
        int replicas = 0, runs = 0, prefill = 0;
        double met = 0;
        bool above = false;
        std::map<int, int> best_prefill; // per total tried, its best split's prefill replicas
    };
    std::vector<Task> tasks;
    for (std::size_t p = 0; p < policies.size(); ++p)
        for (int s = 0; s < opt.seeds; ++s) {
            tasks.emplace_back();
            tasks.back().policy = p;
            tasks.back().seed = s;
        }
    auto search = [&](std::size_t i) {
        Task& t = tasks[i];
        auto run = [&](int n, int prefill) {
            if (opt.cancel && opt.cancel->load()) throw SimulationCancelled();
            RunSpec s = forPolicy(base, policies[t.policy], t.seed);
            if (prefill > 0)
                s.fleet.disaggregate = std::to_string(prefill) + ":" + std::to_string(n - prefill);
            else
                s.fleet.replicas = n;
            ++t.runs;
            const double f = attainment(s, c, gf_index);
            if (opt.step) opt.step(policies[t.policy], t.seed, double(n), f);
            return f;
        };
        auto fraction = [&](int n) {
            if (!split) return run(n, 0);
            // The best split of n. Attainment against prefill replicas P = 1 .. n - 1 rises
            // while prefills queue and falls once decodes do, so a ternary search narrows it
            // to a few, which are all tried. A tie says nothing about the side of the peak
            // (both probes on one flat side of it), so then every split left is tried. Any
            // split that attains the target answers for n.
            std::map<int, double> f;
            int best = 1;
            const auto at = [&](int p) {
                const auto it = f.find(p);
                const double v = it != f.end() ? it->second : (f[p] = run(n, p));
                if (!f.count(best) || v > f.at(best)) best = p;
                return v;
            };
            int a = 1, b = n - 1;
            bool met = false;
            while (b - a > 3 && !met) {
                const int m1 = a + (b - a) / 3, m2 = b - (b - a) / 3;
                const double f1 = at(m1), f2 = at(m2);
                if (std::max(f1, f2) >= opt.target)
                    met = true;
                else if (f1 < f2)
                    a = m1 + 1;
                else if (f1 > f2)
                    b = m2 - 1;
                else
                    break;
            }
            for (int p = a; p <= b && !met; ++p) met = at(p) >= opt.target;
            t.best_prefill[n] = best;
            return f[best];
        };
        int lo = split ? 1 : 0, hi = split ? 2 : 1; // lo failed (or impossible), hi to try
        double f = fraction(hi);
        while (f < opt.target) {
            lo = hi;
            if (hi >= max_replicas) {
                t.above = true;
                return;
            }
            hi = std::min(2 * hi, max_replicas);
            f = fraction(hi);
        }
        double met = f;
        while (hi - lo > 1) {
            const int mid = lo + (hi - lo) / 2;
            const double fm = fraction(mid);
            if (fm >= opt.target) {
                hi = mid;
                met = fm;
            } else {
                lo = mid;
            }
        }
        t.replicas = hi;
        t.met = met;
        if (split) t.prefill = t.best_prefill[hi];
    };
    parallelFor(tasks.size(), opt.threads, search);
    std::vector<ReplicaResult> out;
    for (std::size_t p = 0; p < policies.size(); ++p) {
        ReplicaResult r;
        r.policy = policies[p];
        r.rate = rate;
        bool all = true;
        for (const Task& t : tasks) {
            if (t.policy != p) continue;
            r.seeds.push_back(t.replicas);
            r.prefill.push_back(t.prefill);
            r.met_at.push_back(t.met);
            r.runs += t.runs;
            if (t.above) {
                all = false;
                r.note = "above max_replicas";
            }
            r.replicas = std::max(r.replicas, t.replicas);
        }
        if (!all) r.replicas = 0;
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace kairos::capacity
