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
#include <cstdio>
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
// Parameters by name, each checked against its domain: a value outside it is an error
// naming the policy and the parameter, never a silent default or a reinterpretation
// (reset=7 is not "on", auto_k=0.5 is not "on", C=inf is sprpt, not sprpt_lp).
struct Params {
    PolicyParams& p;
    const std::string& policy;
    double raw(const std::string& key, double dflt) {
        const auto it = p.find(key);
        if (it == p.end()) return dflt;
        const double v = it->second;
        p.erase(it);
        return v;
    }
    [[noreturn]] void bad(const std::string& key, double v, const std::string& domain) {
        char b[64];
        std::snprintf(b, sizeof b, "%g", v);
        throw std::invalid_argument(policy + ": parameter " + key + "=" + b + " is outside " +
                                    domain);
    }
    // A finite number in [lo, hi] ((lo, hi] with lo_open).
    double number(const std::string& key, double dflt, double lo, double hi, bool lo_open = false) {
        const double v = raw(key, dflt);
        if (!std::isfinite(v) || v < lo || v > hi || (lo_open && v == lo)) {
            char b[96];
            std::snprintf(b, sizeof b, "%s%g, %g] (a finite number)", lo_open ? "(" : "[", lo, hi);
            bad(key, v, b);
        }
        return v;
    }
    // 0 or 1.
    bool flag(const std::string& key, bool dflt) {
        const double v = raw(key, dflt ? 1 : 0);
        if (v != 0 && v != 1) bad(key, v, "{0, 1} (off or on)");
        return v == 1;
    }
    // A whole number in [lo, hi].
    int whole(const std::string& key, int dflt, int lo, int hi) {
        const double v = raw(key, dflt);
        if (!(v >= lo && v <= hi) || v != std::floor(v))
            bad(key, v, "the whole numbers " + std::to_string(lo) + ".." + std::to_string(hi));
        return static_cast<int>(v);
    }
    void noneLeft() {
        if (!p.empty())
            throw std::invalid_argument("policy '" + policy + "' has no parameter '" +
                                        p.begin()->first + "'");
    }
};
} // namespace

std::unique_ptr<Scheduler> makeScheduler(const PolicyConfig& cfg) {
    PolicyParams params = cfg.params;
    const std::string& name = cfg.name;
    Params p{params, name};
    auto predictor = [&]() -> std::shared_ptr<LengthPredictor> {
        if (cfg.predictor_instance) return cfg.predictor_instance;
        return makePredictor(cfg.predictor, cfg.seed);
    };
    auto watermark = [&] { return p.number("watermark", 0.01, 0, 0.99); };
    std::unique_ptr<Scheduler> s;
    if (name == "fcfs") {
        FcfsOptions o;
        o.watermark = watermark();
        s = std::make_unique<FcfsScheduler>(o);
    } else if (name == "sjf" || name == "sprpt_lp" || name == "sprpt") {
        PriorityOptions o;
        o.policy = name;
        o.watermark = watermark();
        o.C = name == "sjf" ? 0.0 : name == "sprpt" ? INFINITY : p.number("C", 0.8, 0, 1e6);
        s = std::make_unique<PriorityScheduler>(o, predictor());
    } else if (name == "edf") {
        PriorityOptions o;
        o.policy = name;
        o.key = PriorityOptions::Key::Deadline;
        o.watermark = watermark();
        o.slack = p.number("slack", 10.0, 0, kMaxSeconds, true);
        o.C = p.flag("preemptive", false) ? INFINITY : 0.0;
        s = std::make_unique<PriorityScheduler>(o, nullptr);
    } else if (name == "mcsf") {
        s = std::make_unique<McsfScheduler>(predictor());
    } else if (name == "optimal") {
        s = std::make_unique<OptimalScheduler>();
    } else if (name == "protect_greedy" || name == "protect_clearing") {
        ProtectOptions o;
        o.alpha = p.number("alpha", 0.2, 0, 0.99);
        o.clearing = name == "protect_clearing";
        o.beta = o.clearing ? p.number("beta", 0.5, 0, 1, true) : 1.0;
        o.reset = p.flag("reset", false);
        o.seed = cfg.seed;
        s = std::make_unique<ProtectScheduler>(o);
    } else if (name == "timely" || name == "seg_fcfs" || name == "seg_edf" ||
               name == "vllm_stream") {
        TimelyOptions o;
        o.mode = name == "timely"     ? TimelyOptions::Mode::Pud
                 : name == "seg_fcfs" ? TimelyOptions::Mode::Fcfs
                 : name == "seg_edf"  ? TimelyOptions::Mode::Edf
                                      : TimelyOptions::Mode::Stream;
        o.segment_time = p.number("segment_time", o.segment_time, 0, 1e6);
        o.max_segment = static_cast<int>(p.whole("max_segment", o.max_segment, 1, 1 << 20));
        const bool adaptive = p.flag("adaptive_batch", true);
        const bool gain = p.flag("gain_admission", false);
        if (gain && !adaptive)
            throw std::invalid_argument(name + ": gain_admission=1 is an adaptive batching "
                                               "rule; it cannot go with adaptive_batch=0");
        o.batching = o.mode == TimelyOptions::Mode::Stream ? TimelyOptions::Batching::Fixed
                     : !adaptive                           ? TimelyOptions::Batching::Fixed
                     : gain                                ? TimelyOptions::Batching::UtilityGain
                                                           : TimelyOptions::Batching::Wcet;
        o.slack = p.number("slack", o.slack, 0, kMaxSeconds, true);
        o.watermark = watermark();
        s = std::make_unique<TimelyScheduler>(o);
    } else if (name == "timebill") {
        TimeBillOptions o;
        o.k = p.number("k", o.k, 1, 1e6);
        o.alpha_max = p.number("alpha_max", o.alpha_max, 0, 1);
        o.n_max = p.whole("n_max", o.n_max, 1, kMaxRequestTokens);
        o.t_predict = p.number("t_predict", o.t_predict, 0, kMaxSeconds);
        o.kill = !p.flag("skip_next", false);
        // -1: alpha* per request; a value in [0, 1]: the fixed-alpha baseline.
        o.fixed_alpha = p.number("alpha", -1, -1, 1);
        if (o.fixed_alpha < 0 && o.fixed_alpha != -1)
            throw std::invalid_argument("timebill: parameter alpha is -1 (alpha* per request) or "
                                        "in [0, 1] (a fixed ratio)");
        o.default_budget = p.number("budget", o.default_budget, 0, kMaxSeconds, true);
        o.batch_aware = p.flag("batch_aware", true);
        o.auto_k = p.flag("auto_k", false);
        o.auto_k_quantile = p.number("quantile", o.auto_k_quantile, 0, 1, true);
        if (o.auto_k_quantile >= 1)
            throw std::invalid_argument("timebill: parameter quantile must be below 1");
        o.watermark = watermark();
        s = std::make_unique<TimeBillScheduler>(o, predictor());
    } else {
        std::string known;
        for (const auto& n : policyNames()) known += (known.empty() ? "" : ", ") + n;
        throw std::invalid_argument("unknown policy '" + name + "' (known: " + known + ")");
    }
    p.noneLeft();
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
