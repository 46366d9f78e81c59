#include "sched/discrete_model.h"

#include "workload/random.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace kairos::discrete {

std::int64_t usage(const Instance& in, const Job& j, int p, int t) {
    if (in.occupancy == Occupancy::Paper)
        return t >= p && t <= p + j.output ? j.prompt + (t - p) : 0;
    return t >= p && t < p + j.output ? j.prompt + (t - p) + 1 : 0;
}

namespace {
int lastRound(const Instance& in, const Job& j, int p) {
    return in.occupancy == Occupancy::Paper ? p + j.output : p + j.output - 1;
}
} // namespace

bool feasible(const Instance& in, const std::vector<int>& start) {
    int end = 0;
    for (std::size_t i = 0; i < in.jobs.size(); ++i) {
        if (start[i] < in.jobs[i].arrival) return false;
        end = std::max(end, lastRound(in, in.jobs[i], start[i]));
    }
    for (int t = 0; t <= end; ++t) {
        std::int64_t m = 0;
        for (std::size_t i = 0; i < in.jobs.size(); ++i) m += usage(in, in.jobs[i], start[i], t);
        if (m > in.capacity) return false;
    }
    return true;
}

Instance randomInstance(Rng& r, int n_min, int n_max, int s_max, int o_max, int extra,
                        int max_arrival, Occupancy occ) {
    Instance in;
    in.occupancy = occ;
    const auto n = r.uniformInt(n_min, n_max);
    std::int64_t need = 0;
    for (int i = 0; i < n; ++i) {
        Job j{static_cast<int>(r.uniformInt(0, max_arrival)),
              static_cast<int>(r.uniformInt(1, s_max)), static_cast<int>(r.uniformInt(1, o_max))};
        in.jobs.push_back(j);
        need = std::max<std::int64_t>(need, j.prompt + j.output + 1);
    }
    in.capacity = need + r.uniformInt(0, extra);
    return in;
}

std::int64_t totalLatency(const Instance& in, const std::vector<int>& start) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < in.jobs.size(); ++i)
        s += start[i] + in.jobs[i].output - in.jobs[i].arrival;
    return s;
}

namespace {
// Memory over rounds [t, ...) of the jobs started so far plus `extra` started at t is
// within M. Memory only grows between a job's start and its last round, so checking the
// last rounds (>= t) of every active job suffices.
bool fitsFrom(const Instance& in, const std::vector<int>& start, int t,
              const std::vector<int>& extra) {
    std::vector<int> checks;
    for (std::size_t i = 0; i < in.jobs.size(); ++i)
        if (start[i] >= 0) {
            const int last = lastRound(in, in.jobs[i], start[i]);
            if (last >= t) checks.push_back(last);
        }
    for (int i : extra) checks.push_back(lastRound(in, in.jobs[static_cast<std::size_t>(i)], t));
    for (int c : checks) {
        std::int64_t m = 0;
        for (std::size_t i = 0; i < in.jobs.size(); ++i)
            if (start[i] >= 0) m += usage(in, in.jobs[i], start[i], c);
        for (int i : extra) m += usage(in, in.jobs[static_cast<std::size_t>(i)], t, c);
        if (m > in.capacity) return false;
    }
    return true;
}

void checkInstance(const Instance& in) {
    for (const Job& j : in.jobs)
        if (j.prompt < 0 || j.output < 1 || j.arrival < 0)
            throw std::invalid_argument("discrete: bad job");
}
} // namespace

std::vector<int> mcsf(const Instance& in) {
    checkInstance(in);
    const std::size_t n = in.jobs.size();
    std::vector<int> start(n, -1);
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return in.jobs[static_cast<std::size_t>(a)].output <
               in.jobs[static_cast<std::size_t>(b)].output;
    });
    std::size_t left = n;
    for (int t = 0; left > 0; ++t) {
        if (t > 1000000) throw std::runtime_error("discrete mcsf: a job can never fit");
        std::vector<int> add;
        for (int i : order) {
            const Job& j = in.jobs[static_cast<std::size_t>(i)];
            if (start[static_cast<std::size_t>(i)] >= 0 || j.arrival > t) continue;
            add.push_back(i);
            if (!fitsFrom(in, start, t, add)) {
                add.pop_back();
                break;
            }
        }
        for (int i : add) start[static_cast<std::size_t>(i)] = t;
        left -= add.size();
    }
    return start;
}

namespace {
struct Search {
    const Instance& in;
    std::vector<int> start, best;
    std::int64_t best_cost = std::numeric_limits<std::int64_t>::max();
    int horizon;

    std::int64_t lowerBound(int t) const {
        std::int64_t lb = 0;
        for (std::size_t i = 0; i < in.jobs.size(); ++i) {
            const Job& j = in.jobs[i];
            lb += (start[i] >= 0 ? start[i] : std::max(t, j.arrival)) + j.output - j.arrival;
        }
        return lb;
    }

    void dfs(int t) {
        if (lowerBound(t) >= best_cost) return;
        std::vector<int> avail;
        bool all_started = true;
        for (std::size_t i = 0; i < in.jobs.size(); ++i) {
            if (start[i] >= 0) continue;
            all_started = false;
            if (in.jobs[i].arrival <= t) avail.push_back(static_cast<int>(i));
        }
        if (all_started) {
            best_cost = totalLatency(in, start);
            best = start;
            return;
        }
        if (t > horizon) return;
        // Every subset of the arrived jobs, larger subsets first (good solutions early).
        const int k = static_cast<int>(avail.size());
        std::vector<unsigned> masks;
        for (unsigned m = 0; m < (1u << k); ++m) masks.push_back(m);
        std::stable_sort(masks.begin(), masks.end(), [](unsigned a, unsigned b) {
            return __builtin_popcount(a) > __builtin_popcount(b);
        });
        for (unsigned m : masks) {
            std::vector<int> add;
            for (int b = 0; b < k; ++b)
                if (m & (1u << b)) add.push_back(avail[static_cast<std::size_t>(b)]);
            if (!fitsFrom(in, start, t, add)) continue;
            for (int i : add) start[static_cast<std::size_t>(i)] = t;
            dfs(t + 1);
            for (int i : add) start[static_cast<std::size_t>(i)] = -1;
        }
    }
};
} // namespace

std::vector<int> optimal(const Instance& in) {
    checkInstance(in);
    if (in.jobs.size() > 10) throw std::invalid_argument("discrete optimal: at most 10 jobs");
    Search s{
        in, std::vector<int>(in.jobs.size(), -1), {}, std::numeric_limits<std::int64_t>::max(), 0};
    // Horizon: in an optimal schedule no job completes later than MC-SF's total latency
    // after its arrival (each job's latency is at most the total), so no start is later
    // than that plus the last arrival.
    const auto m = mcsf(in);
    int last_arrival = 0;
    for (const Job& j : in.jobs) last_arrival = std::max(last_arrival, j.arrival);
    s.horizon = static_cast<int>(totalLatency(in, m)) + last_arrival;
    s.best = m;
    s.best_cost = totalLatency(in, m) + 1; // admit equal-cost schedules too
    s.dfs(0);
    return s.best;
}

std::vector<int> bruteForce(const Instance& in, int horizon) {
    checkInstance(in);
    const std::size_t n = in.jobs.size();
    std::vector<int> start(n), best;
    std::int64_t best_cost = std::numeric_limits<std::int64_t>::max();
    for (std::size_t i = 0; i < n; ++i) start[i] = in.jobs[i].arrival;
    for (;;) {
        if (feasible(in, start)) {
            const auto c = totalLatency(in, start);
            if (c < best_cost) best_cost = c, best = start;
        }
        std::size_t i = 0;
        while (i < n && ++start[i] > horizon) {
            start[i] = in.jobs[i].arrival;
            ++i;
        }
        if (i == n) break;
    }
    return best;
}

} // namespace kairos::discrete
