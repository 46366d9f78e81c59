#include "sched/registry.h"

#include "sched/fcfs.h"
#include "sched/mcsf.h"
#include "sched/optimal.h"
#include "sched/priority.h"
#include "sched/protect.h"
#include "sched/timebill.h"
#include "sched/timely.h"
#include "workload/text.h"

#include <cmath>
#include <stdexcept>

namespace kairos {

PolicyParams parsePolicyParams(const std::vector<std::string>& items) {
    PolicyParams p;
    for (const auto& it : items) {
        const auto eq = it.find('=');
        double v;
        if (eq == std::string::npos || eq == 0 ||
            !text::parseDouble(std::string_view(it).substr(eq + 1), &v)) {
            if (eq != std::string::npos && std::string_view(it).substr(eq + 1) == "inf")
                v = INFINITY;
            else
                throw std::invalid_argument("policy parameter '" + it + "': expected NAME=NUMBER");
        }
        p[it.substr(0, eq)] = v;
    }
    return p;
}

namespace {
double take(PolicyParams& p, const std::string& key, double dflt) {
    const auto it = p.find(key);
    if (it == p.end()) return dflt;
    const double v = it->second;
    p.erase(it);
    return v;
}
void noneLeft(const PolicyParams& p, const std::string& policy) {
    if (!p.empty())
        throw std::invalid_argument("policy '" + policy + "' has no parameter '" +
                                    p.begin()->first + "'");
}
double watermark(PolicyParams& p, const std::string& policy) {
    const double w = take(p, "watermark", 0.01);
    if (w < 0 || w >= 1) throw std::invalid_argument(policy + ": watermark must be in [0, 1)");
    return w;
}
} // namespace

std::unique_ptr<Scheduler> makeScheduler(const PolicyConfig& cfg) {
    PolicyParams p = cfg.params;
    const std::string& name = cfg.name;
    auto predictor = [&]() -> std::shared_ptr<LengthPredictor> {
        if (cfg.predictor_instance) return cfg.predictor_instance;
        return makePredictor(cfg.predictor, cfg.seed);
    };
    std::unique_ptr<Scheduler> s;
    if (name == "fcfs") {
        FcfsOptions o;
        o.watermark = watermark(p, name);
        s = std::make_unique<FcfsScheduler>(o);
    } else if (name == "sjf" || name == "sprpt_lp" || name == "sprpt") {
        PriorityOptions o;
        o.policy = name;
        o.watermark = watermark(p, name);
        o.C = name == "sjf" ? 0.0 : name == "sprpt" ? INFINITY : take(p, "C", 0.8);
        if (!(o.C >= 0)) throw std::invalid_argument(name + ": C must be >= 0");
        s = std::make_unique<PriorityScheduler>(o, predictor());
    } else if (name == "edf") {
        PriorityOptions o;
        o.policy = name;
        o.key = PriorityOptions::Key::Deadline;
        o.watermark = watermark(p, name);
        o.slack = take(p, "slack", 10.0);
        o.C = take(p, "preemptive", 0.0) != 0 ? INFINITY : 0.0;
        if (!(o.slack > 0)) throw std::invalid_argument("edf: slack must be > 0 seconds");
        s = std::make_unique<PriorityScheduler>(o, nullptr);
    } else if (name == "mcsf") {
        s = std::make_unique<McsfScheduler>(predictor());
    } else if (name == "optimal") {
        s = std::make_unique<OptimalScheduler>();
    } else if (name == "protect_greedy" || name == "protect_clearing") {
        ProtectOptions o;
        o.alpha = take(p, "alpha", 0.2);
        o.clearing = name == "protect_clearing";
        o.beta = o.clearing ? take(p, "beta", 0.5) : 1.0;
        o.reset = take(p, "reset", 0) != 0;
        o.seed = cfg.seed;
        s = std::make_unique<ProtectScheduler>(o);
    } else if (name == "timely" || name == "seg_fcfs" || name == "seg_edf" ||
               name == "vllm_stream") {
        TimelyOptions o;
        o.mode = name == "timely"     ? TimelyOptions::Mode::Pud
                 : name == "seg_fcfs" ? TimelyOptions::Mode::Fcfs
                 : name == "seg_edf"  ? TimelyOptions::Mode::Edf
                                      : TimelyOptions::Mode::Stream;
        o.segment_time = take(p, "segment_time", o.segment_time);
        o.adaptive_batch = take(p, "adaptive_batch", 1) != 0;
        o.slack = take(p, "slack", o.slack);
        o.watermark = watermark(p, name);
        s = std::make_unique<TimelyScheduler>(o);
    } else if (name == "timebill") {
        TimeBillOptions o;
        o.k = take(p, "k", o.k);
        o.alpha_max = take(p, "alpha_max", o.alpha_max);
        o.n_max = static_cast<int>(take(p, "n_max", o.n_max));
        o.t_predict = take(p, "t_predict", o.t_predict);
        o.kill = take(p, "skip_next", 0) == 0;
        o.fixed_alpha = take(p, "alpha", -1);
        o.default_budget = take(p, "budget", o.default_budget);
        o.batch_aware = take(p, "batch_aware", 1) != 0;
        o.auto_k = take(p, "auto_k", 0) != 0;
        o.auto_k_quantile = take(p, "quantile", o.auto_k_quantile);
        o.watermark = watermark(p, name);
        s = std::make_unique<TimeBillScheduler>(o, predictor());
    } else {
        std::string known;
        for (const auto& n : policyNames()) known += (known.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown policy '" + name + "' (known: " + known + ")");
    }
    noneLeft(p, name);
    return s;
}

std::unique_ptr<Scheduler> makeScheduler(const std::string& name, const PolicyParams& params) {
    PolicyConfig c;
    c.name = name;
    c.params = params;
    return makeScheduler(c);
}

std::vector<std::string> policyNames() {
    return {"fcfs",       "sjf",    "sprpt_lp",       "sprpt",
            "edf",        "mcsf",   "protect_greedy", "protect_clearing",
            "timebill",   "timely", "seg_fcfs",       "seg_edf",
            "vllm_stream"};
}

} // namespace kairos
