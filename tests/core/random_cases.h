#pragma once
// Random cases for property tests over every registered policy (tst_liveness, tst_explain):
// a workload drawn from one of the generators (chat lengths at random rates and
// burstiness, TimelyLLM-like robot plans wid1/wid2/wid3, chat with reading-time segments),
// time budgets on some requests, random engine limits and execution model; and a random
// setting of a policy's parameters drawn from the registry.
#include "exec/execution_model.h"
#include "sched/registry.h"
#include "test_util.h"
#include "workload/generators.h"
#include "workload/random.h"
#include "workload/robot_generator.h"

#include <QtTest>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace kairos::test {

struct Case {
    Workload w;
    EngineLimits lim; // kv_capacity_tokens set per run
    bool unit = false;
    EteParams ete;
    std::int64_t largest_need = 0; // max over requests of prompt + output + 1 (tokens)
    std::string label;
};

inline const std::vector<RobotTrace>& droneTraces() {
    static const std::vector<RobotTrace> t =
        readRobotTraces(dataPath("timelyllm/timelyllm_drone_trace_set_extracted.json"));
    return t;
}

inline Case makeCase(std::uint64_t seed) {
    Rng rng(seed * 7919 + 13);
    Case c;
    std::ostringstream label;
    label << "seed " << seed << ": ";
    const int kind = static_cast<int>(rng.uniformInt(0, 3));
    if (kind <= 1) { // chat lengths, possibly with reading-time segments
        GenerateSpec g;
        g.count = static_cast<std::size_t>(rng.uniformInt(1, 150));
        g.arrivals.rate = rng.bernoulli(0.15) ? INFINITY : 0.2 + 30 * rng.uniform();
        g.arrivals.burstiness = rng.bernoulli(0.5) ? 1.0 : 0.2 + 2 * rng.uniform();
        g.arrivals.seed = seed;
        g.length_seed = seed + 1;
        g.prompt = LengthDist::parse(rng.bernoulli(0.5)
                                         ? "lognormal:" + std::to_string(rng.uniformInt(2, 600)) +
                                               ",1.0,max=3000"
                                         : "uniform:1," + std::to_string(rng.uniformInt(1, 900)));
        g.output = LengthDist::parse(rng.bernoulli(0.5)
                                         ? "lognormal:" + std::to_string(rng.uniformInt(1, 300)) +
                                               ",1.1,max=1500"
                                         : "uniform:1," + std::to_string(rng.uniformInt(1, 400)));
        c.w = generateWorkload(g);
        label << "chat n=" << g.count << " rate=" << g.arrivals.rate;
        if (kind == 1) {
            addReadingTime(c.w, 200 + 400 * rng.uniform());
            label << " +reading";
        }
    } else { // robot plans
        static const char* presets[] = {"wid1", "wid2", "wid3"};
        const std::string preset = presets[rng.uniformInt(0, 2)];
        RobotWorkloadSpec spec = RobotWorkloadSpec::preset_(preset);
        spec.seed = seed;
        spec.agents = static_cast<int>(rng.uniformInt(spec.max_tasks_per_event, 25));
        spec.duration_s = 10 + 70 * rng.uniform();
        c.w = generateRobotWorkload(spec,
                                    preset == "wid3" ? std::vector<RobotTrace>{} : droneTraces());
        label << preset << " n=" << c.w.size();
    }
    // Time budgets on some requests (TimeBill plans with them; the others ignore them).
    if (rng.bernoulli(0.5)) {
        const double scale = 0.05 + 20 * rng.uniform();
        for (auto& r : c.w.requests)
            if (rng.bernoulli(0.7)) r.budget_s = scale * (0.5 + rng.uniform());
        label << " budgets~" << scale;
    }
    c.w.sortByArrival();
    c.lim.block_size = rng.bernoulli(0.5) ? 1 : 16;
    c.lim.max_num_seqs = static_cast<std::int32_t>(rng.uniformInt(1, 48));
    c.lim.max_num_batched_tokens = static_cast<std::int32_t>(rng.uniformInt(8, 4096));
    c.lim.chunked_prefill = rng.bernoulli(0.5);
    c.unit = rng.bernoulli(0.2);
    c.ete =
        EteParams{0.005 + 0.05 * rng.uniform(), 1e-5 + 4e-4 * rng.uniform(), 1e-8 * rng.uniform(),
                  0.005 + 0.05 * rng.uniform(), 4e-4 * rng.uniform(),        4e-7 * rng.uniform()};
    // Prefix caching on a third of the cases (16-token blocks), with shared prefixes: each
    // request draws one of a few prefix groups (a system prompt, a document) and some a
    // second span after it (a conversation's earlier turn), so blocks are shared, reused,
    // evicted and recomputed. Drawn last, so that the other cases stay as they were.
    if (rng.bernoulli(1.0 / 3)) {
        c.lim.block_size = 16;
        c.lim.prefix_caching = true;
        const int groups = static_cast<int>(rng.uniformInt(1, 6));
        std::vector<std::int32_t> len(static_cast<std::size_t>(groups));
        for (auto& l : len) l = static_cast<std::int32_t>(rng.uniformInt(1, 1500));
        for (auto& r : c.w.requests) {
            const auto g = static_cast<std::size_t>(rng.uniformInt(0, groups));
            if (g == std::size_t(groups)) continue; // its own prompt only
            r.prefix.clear(); // a robot task's TypeFly span: the groups stand for it here
            const std::int64_t room = std::int64_t(r.prompt_tokens) + r.output_tokens;
            if (len[g] > room) continue;
            r.prefix.push_back({g + 1, len[g]});
            const auto more = static_cast<std::int32_t>(rng.uniformInt(1, 400));
            if (rng.bernoulli(0.5) && len[g] + more <= room)
                r.prefix.push_back({std::uint64_t(100 + rng.uniformInt(0, 3)), more});
        }
        label << " prefix-caching groups=" << groups;
    }
    // vLLM v0's engine rules on a quarter of the cases (drawn after the rest, so that the
    // other cases stay as they were).
    if (rng.bernoulli(0.25)) {
        c.lim.rules = EngineRules::VllmV0;
        label << " rules=vllm-v0";
    }
    for (const auto& r : c.w.requests)
        c.largest_need = std::max<std::int64_t>(c.largest_need, std::int64_t(r.prompt_tokens) +
                                                                    r.output_tokens + 1);
    label << " block=" << c.lim.block_size << " seqs=" << c.lim.max_num_seqs
          << " tokens=" << c.lim.max_num_batched_tokens << " chunked=" << c.lim.chunked_prefill
          << " unit=" << c.unit;
    c.label = label.str();
    return c;
}

// A random setting of the policy's parameters, drawn from the registry: each parameter,
// with probability 1/2, gets a value from the range its spec says users explore (log-
// uniform on a log scale; a flag 0 or 1), so a new policy or parameter is covered here
// without anyone editing this file. Combinations the policy rejects as documented (e.g.
// timely's gain_admission=1 with adaptive_batch=0) are drawn again.
inline PolicyParams variation(const std::string& policy, Rng& rng) {
    const PolicySpec& spec = policySpec(policy);
    for (int attempt = 0; attempt < 20; ++attempt) {
        PolicyParams p;
        for (const ParamSpec& ps : spec.params) {
            if (rng.uniformInt(0, 1) == 0) continue;
            double v;
            if (ps.kind == ParamSpec::Kind::Flag) {
                v = double(rng.uniformInt(0, 1));
            } else if (ps.log && ps.explore_lo > 0) {
                v = ps.explore_lo * std::pow(ps.explore_hi / ps.explore_lo, rng.uniform());
            } else {
                v = ps.explore_lo + (ps.explore_hi - ps.explore_lo) * rng.uniform();
            }
            if (ps.kind == ParamSpec::Kind::Whole) v = std::round(v);
            if (ps.lo_open && v <= ps.lo) v = ps.explore_hi;
            p[ps.name] = v;
        }
        try {
            (void)makeScheduler(policy, p);
            return p;
        } catch (const std::invalid_argument&) {
        }
    }
    return {};
}

// A parameter's value in this run: given, or the registry's default.
inline double valueOf(const PolicyConfig& pc, const std::string& name, double if_none) {
    const ParamSpec* ps = policySpec(pc.name).param(name);
    if (!ps) return if_none;
    const auto it = pc.params.find(name);
    return it == pc.params.end() ? ps->dflt : it->second;
}

// Seeds to run: the environment variable `env` if set, else `dflt` (CI's share).
inline int seedCount(int dflt, const char* env = "KAIROS_LIVENESS_SEEDS") {
    return qEnvironmentVariableIsSet(env) ? qEnvironmentVariableIntValue(env) : dflt;
}

inline const char* const kPredictors[] = {"oracle", "lognormal:0.5", "exponential", "bucket:16,0.8",
                                          "trail"};

// A row per registered policy (a test's _data function): column "policy".
inline void policyRows() {
    QTest::addColumn<QString>("policy");
    for (const auto& n : policyNames()) QTest::newRow(n.c_str()) << QString::fromStdString(n);
}

// Policy `name` with a random setting of its parameters (variation) and a random predictor,
// seeded with `seed`.
inline PolicyConfig randomConfig(const std::string& name, std::uint64_t seed, Rng& rng) {
    PolicyConfig pc;
    pc.name = name;
    pc.params = variation(name, rng);
    pc.predictor = kPredictors[rng.uniformInt(0, 4)];
    pc.seed = seed;
    return pc;
}

// What a failure names: the policy, its parameters and predictor, the case, the capacity.
inline QString describeRun(const PolicyConfig& pc, const Case& c, std::int64_t cap) {
    std::ostringstream params;
    for (const auto& [k, v] : pc.params) params << k << "=" << v << " ";
    return QString::fromStdString(pc.name + " " + params.str() + "predictor=" + pc.predictor +
                                  ", " + c.label + " cap=" + std::to_string(cap));
}

} // namespace kairos::test
