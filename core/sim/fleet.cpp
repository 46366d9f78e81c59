#include "sim/fleet.h"

#include "sim/engine.h"
#include "sim/router_tree.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace kairos {

namespace {

constexpr double kForever = std::numeric_limits<double>::infinity();

// The replica minimising `score` (ties to the lowest index).
template <class F> int argmin(int n, F&& score) {
    int best = 0;
    auto s0 = score(0);
    for (int r = 1; r < n; ++r) {
        const auto s = score(r);
        if (s < s0) {
            s0 = s;
            best = r;
        }
    }
    return best;
}

// One replica's record at a time: records of every replica in time order (a stable sort:
// equal times keep the replicas' order, and each replica's own order).
struct At {
    double t;
    std::int16_t r;  // replica
    std::uint32_t i; // the record's index in that replica's list
};
template <class Time, class Count>
std::vector<At> timeOrder(const std::vector<RunLog>& logs, Time time, Count count) {
    std::vector<At> order;
    for (std::size_t r = 0; r < logs.size(); ++r)
        for (std::size_t i = 0; i < count(logs[r]); ++i)
            order.push_back(
                {time(logs[r], i), static_cast<std::int16_t>(r), static_cast<std::uint32_t>(i)});
    std::stable_sort(order.begin(), order.end(),
                     [](const At& x, const At& y) { return x.t < y.t; });
    return order;
}

class Fleet {
public:
    explicit Fleet(const FleetRun& run) : run_(run), n_(run.fleet.replicas) {
        const RouterThresholds d = routerDefaults(run.fleet.router);
        th_ = {run.fleet.cache_threshold >= 0 ? run.fleet.cache_threshold : d.cache_threshold,
               run.fleet.balance_abs >= 0 ? run.fleet.balance_abs : d.balance_abs,
               run.fleet.balance_rel >= 0 ? run.fleet.balance_rel : d.balance_rel};
        if (run.fleet.router == Router::PrefixAware) tree_ = std::make_unique<RouterTree>(n_);
        scheds_.reserve(static_cast<std::size_t>(n_));
        sims_.reserve(static_cast<std::size_t>(n_));
        for (int r = 0; r < n_; ++r) {
            scheds_.push_back(run.make_scheduler());
            // The replicas share one prefix layout (the workload's, sim/prefix_cache.h).
            sims_.push_back(std::make_unique<Simulator>(
                *run.workload, *run.model, *scheds_.back(), run.limits, nullptr,
                sims_.empty() ? nullptr : sims_.front()->prefixLayout()));
            sims_.back()->setPreloaded(run.preloaded);
            sims_.back()->setCancelFlag(run.cancel);
            sims_.back()->explain(run.explain);
            sims_.back()->joinFleet();
        }
    }

    RunLog run() {
        const auto t0 = std::chrono::steady_clock::now();
        const auto& reqs = run_.workload->requests;
        std::vector<std::int16_t> replica_of(reqs.size(), 0);
        for (auto& s : sims_) s->start();
        double at = -kForever;
        for (std::size_t k = 0; k < reqs.size(); ++k) {
            const double t = reqs[k].arrival;
            if (t != at) { // every replica to its first boundary at or after t
                at = t;
                for (auto& s : sims_) {
                    s->setFleetNext(t);
                    s->advance(t);
                }
                if (run_.progress)
                    run_.progress->store(double(k) / double(reqs.size()),
                                         std::memory_order_relaxed);
            }
            const int r = run_.routes ? (*run_.routes)[k] : choose(static_cast<ReqId>(k));
            sims_[static_cast<std::size_t>(r)]->route(static_cast<ReqId>(k));
            replica_of[k] = static_cast<std::int16_t>(r);
        }
        std::vector<RunLog> logs;
        logs.reserve(sims_.size());
        for (auto& s : sims_) {
            s->setFleetNext(kForever);
            s->advance(kForever);
            logs.push_back(s->finish());
        }
        RunLog out = merge(std::move(logs), std::move(replica_of));
        out.sim_wall_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        return out;
    }

private:
    std::int64_t load(int r) const { return sims_[static_cast<std::size_t>(r)]->outstanding(); }
    // SGLang's balance check: max - min > abs and max > rel * min, both strict.
    bool imbalanced() const {
        std::int64_t lo = load(0), hi = lo;
        for (int r = 1; r < n_; ++r) {
            lo = std::min(lo, load(r));
            hi = std::max(hi, load(r));
        }
        return hi - lo > th_.balance_abs && double(hi) > double(lo) * th_.balance_rel;
    }

    int choose(ReqId id) {
        const FleetOptions& o = run_.fleet;
        switch (o.router) {
        case Router::RoundRobin:
            return static_cast<int>(next_rr_++ % static_cast<std::uint64_t>(n_));
        case Router::LeastOutstanding:
            return argmin(n_, [&](int r) { return load(r); });
        case Router::LeastKv:
            return argmin(n_, [&](int r) {
                const Simulator& s = *sims_[static_cast<std::size_t>(r)];
                return std::make_pair(s.kvUsed() + s.queuedContext(), s.outstanding());
            });
        case Router::PrefixAware: {
            const Request& r = run_.workload->requests[static_cast<std::size_t>(id)];
            const double t = r.arrival;
            // The tree's upkeep, at the sweeps' times passed since the last arrival.
            if (t >= next_sweep_) {
                tree_->evict(kTreeTokens);
                next_sweep_ = (std::floor(t / kTreeEvictionInterval) + 1) * kTreeEvictionInterval;
            }
            const int least = argmin(n_, [&](int x) { return load(x); });
            int to = least;
            if (!imbalanced()) {
                const RouterTree::Match m = tree_->match(r, id, t);
                if (m.tenant >= 0 && r.prompt_tokens > 0 &&
                    double(m.tokens) / double(r.prompt_tokens) > th_.cache_threshold)
                    to = m.tenant;
            }
            tree_->insert(r, id, to, t);
            return to;
        }
        case Router::PrefixOracle: {
            const int least = argmin(n_, [&](int r) { return load(r); });
            if (imbalanced()) return least;
            // The longest cached prefix (each replica's cache walked once); ties to the less
            // loaded, then the lower index.
            hits_.resize(static_cast<std::size_t>(n_));
            for (int r = 0; r < n_; ++r)
                hits_[static_cast<std::size_t>(r)] =
                    sims_[static_cast<std::size_t>(r)]->cachedPrefix(id);
            const int best = argmin(n_, [&](int r) {
                return std::make_pair(-hits_[static_cast<std::size_t>(r)], load(r));
            });
            const double hit = double(hits_[static_cast<std::size_t>(best)]);
            const double prompt =
                double(run_.workload->requests[static_cast<std::size_t>(id)].prompt_tokens);
            return prompt > 0 && hit > th_.cache_threshold * prompt ? best : least;
        }
        }
        return 0;
    }

    RunLog merge(std::vector<RunLog> logs, std::vector<std::int16_t> replica_of) const {
        RunLog out;
        const RunLog& a = logs.front();
        out.workload = a.workload;
        out.policy = a.policy;
        out.exec_model = a.exec_model;
        out.kv_capacity_tokens = a.kv_capacity_tokens;
        out.num_requests = a.num_requests;
        out.prefix_caching = a.prefix_caching;
        out.cache_block_size = a.cache_block_size;
        out.replicas = n_;
        out.router = routerName(run_.fleet.router);
        std::size_t events = 0, iters = 0;
        for (const auto& l : logs) {
            events += l.events.size();
            iters += l.iters.size();
            out.cache_evictions += l.cache_evictions;
        }
        // Events in time order (a stable sort: each replica's order among equal times,
        // and each request's own order, are kept).
        out.events.reserve(events);
        for (const auto& l : logs)
            out.events.insert(out.events.end(), l.events.begin(), l.events.end());
        std::stable_sort(out.events.begin(), out.events.end(),
                         [](const Event& x, const Event& y) { return x.t < y.t; });
        // Iteration records by start, tagged with their replica.
        const std::vector<At> order = timeOrder(
            logs, [](const RunLog& l, std::size_t i) { return l.iters[i].t0; },
            [](const RunLog& l) { return l.iters.size(); });
        out.iters.reserve(iters);
        out.iter_replica.reserve(iters);
        for (const At& x : order) {
            out.iters.push_back(logs[static_cast<std::size_t>(x.r)].iters[x.i]);
            out.iter_replica.push_back(x.r);
        }
        for (const At& x : timeOrder(
                 logs, [](const RunLog&l, std::size_t i) { return l.kv_idle[i].t; },
                 [](const RunLog&l) { return l.kv_idle.size(); })) {
            out.kv_idle.push_back(logs[static_cast<std::size_t>(x.r)].kv_idle[x.i]);
            out.kv_idle_replica.push_back(x.r);
        }
        for (std::size_t r = 0; r < logs.size(); ++r)
            for (const auto& w : logs[r].warnings)
                out.warnings.push_back("replica " + std::to_string(r) + ": " + w);
        out.replica_of = std::move(replica_of);
        if (a.explain.on) out.explain = mergeExplanations(logs);
        return out;
    }

    // Every replica's decisions in one stream: calls in time order (a stable sort: equal
    // times keep the replicas' order), each tagged with its replica; reasons grouped by
    // their merged call, in the order each engine applied them; states in time order.
    static Explanation mergeExplanations(const std::vector<RunLog>& logs) {
        Explanation ex;
        const Explanation& a = logs.front().explain;
        ex.on = true;
        ex.key_name = a.key_name;
        ex.key_descending = a.key_descending;
        ex.key_counts_down = a.key_counts_down;
        ex.limits = a.limits;
        const std::vector<At> order = timeOrder(
            logs, [](const RunLog& l, std::size_t i) { return l.explain.calls[i].t; },
            [](const RunLog& l) { return l.explain.calls.size(); });
        std::size_t reasons = 0, insights = 0;
        for (const auto& l : logs) {
            reasons += l.explain.reasons.size();
            insights += l.explain.insights.size();
        }
        std::vector<std::vector<std::uint32_t>> merged(logs.size()); // replica's call -> merged
        for (std::size_t r = 0; r < logs.size(); ++r)
            merged[r].resize(logs[r].explain.calls.size());
        ex.calls.reserve(order.size());
        ex.call_replica.reserve(order.size());
        for (const At& x : order) {
            merged[static_cast<std::size_t>(x.r)][x.i] =
                static_cast<std::uint32_t>(ex.calls.size());
            ex.calls.push_back(logs[static_cast<std::size_t>(x.r)].explain.calls[x.i]);
            ex.call_replica.push_back(x.r);
        }
        ex.reasons.reserve(reasons);
        for (std::size_t r = 0; r < logs.size(); ++r)
            for (Reason why : logs[r].explain.reasons) {
                why.call = merged[r][why.call];
                ex.reasons.push_back(why);
            }
        std::stable_sort(ex.reasons.begin(), ex.reasons.end(),
                         [](const Reason& x, const Reason& y) { return x.call < y.call; });
        ex.insights.reserve(insights);
        for (const auto& l : logs)
            ex.insights.insert(ex.insights.end(), l.explain.insights.begin(),
                               l.explain.insights.end());
        std::stable_sort(ex.insights.begin(), ex.insights.end(),
                         [](const Insight& x, const Insight& y) { return x.t < y.t; });
        return ex;
    }

    const FleetRun& run_;
    int n_;
    std::vector<std::unique_ptr<Scheduler>> scheds_;
    std::vector<std::unique_ptr<Simulator>> sims_;
    std::uint64_t next_rr_ = 0;
    std::vector<std::int64_t> hits_; // prefix_oracle: each replica's cached prefix of a request
    RouterThresholds th_{};
    std::unique_ptr<RouterTree> tree_; // prefix_aware
    double next_sweep_ = kTreeEvictionInterval;
};

} // namespace

RunLog simulateFleet(const FleetRun& run) {
    if (!run.workload || !run.model || !run.make_scheduler)
        throw std::invalid_argument("simulateFleet: workload, model and schedulers are needed");
    const FleetOptions& o = run.fleet;
    if (o.replicas < 1 || o.replicas > kMaxReplicas)
        throw std::invalid_argument("replicas must be 1 to " + std::to_string(kMaxReplicas));
    if ((o.router == Router::PrefixAware || o.router == Router::PrefixOracle) &&
        !run.limits.prefix_caching)
        throw std::invalid_argument(std::string("the ") + routerName(o.router) +
                                    " router routes by prefix caches: it needs prefix caching on");
    if (o.replicas == 1) {
        auto sched = run.make_scheduler();
        Simulator engine(*run.workload, *run.model, *sched, run.limits);
        engine.setPreloaded(run.preloaded);
        engine.setCancelFlag(run.cancel);
        engine.setProgress(run.progress);
        engine.explain(run.explain);
        return engine.run();
    }
    if (run.routes) {
        if (run.routes->size() != run.workload->size())
            throw std::invalid_argument("simulateFleet: a route for every request is needed");
        for (std::int16_t r : *run.routes)
            if (r < 0 || r >= o.replicas)
                throw std::invalid_argument("simulateFleet: a route to replica " +
                                            std::to_string(r) + " of " +
                                            std::to_string(o.replicas));
    }
    // Every replica keeps its state for every request of the workload (ids stay the fleet's:
    // about 200 bytes each), so a fleet's memory grows with replicas x requests.
    const double states = double(o.replicas) * double(run.workload->size());
    if (states > kMaxFleetStates)
        throw std::invalid_argument(
            std::to_string(o.replicas) + " replicas x " + std::to_string(run.workload->size()) +
            " requests: every replica keeps state for every request (about " +
            std::to_string(static_cast<long long>(states * 200 / 1e9)) + " GB here; at most " +
            std::to_string(static_cast<long long>(kMaxFleetStates / 1e6)) +
            " million replica-requests): fewer replicas or a shorter trace (--limit)");
    Fleet f(run);
    return f.run();
}

} // namespace kairos
