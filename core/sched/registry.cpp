#include "sched/registry.h"

#include "sched/fcfs.h"
#include "sched/mcsf.h"
#include "sched/optimal.h"
#include "sched/priority.h"
#include "sched/protect.h"
#include "sched/timebill.h"
#include "sched/timely.h"
#include "sched/timely_code.h"
#include "util/text.h"

#include <algorithm>
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
            !text::parseNumberStrict(std::string_view(it).substr(eq + 1), &v)) {
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

std::string num(double v) {
    char b[48];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

// A whole bound in full (1048576, not 1.04858e+06, which reads as a fraction).
std::string whole(double v) {
    if (!(std::abs(v) < 1e15)) return num(v);
    char b[48];
    std::snprintf(b, sizeof b, "%.0f", v);
    return b;
}

} // namespace

std::string ParamSpec::domainText() const {
    switch (kind) {
    case Kind::Flag:
        return "{0, 1}";
    case Kind::Whole:
        return "whole numbers " + whole(lo) + ".." + whole(hi);
    case Kind::Number:
        break;
    }
    return std::string(lo_open ? "(" : "[") + num(lo) + ", " + num(hi) + "]";
}

void ParamSpec::check(const std::string& policy, double v) const {
    bool ok = std::isfinite(v) && v >= lo && v <= hi && !(lo_open && v == lo);
    if (kind == Kind::Flag) ok = v == 0 || v == 1;
    if (kind == Kind::Whole) ok = ok && v == std::floor(v);
    if (!ok)
        throw std::invalid_argument(policy + ": parameter " + name + "=" + num(v) + " is outside " +
                                    domainText() +
                                    (kind == Kind::Number ? " (a finite number)" : ""));
}

double ParamValues::number(const std::string& key) const {
    const auto it = v_.find(key);
    // A constructor asking for a parameter its spec does not declare is a bug here.
    if (it == v_.end())
        throw std::logic_error("registry: policy " + policy_ + " reads undeclared parameter " +
                               key);
    return it->second;
}

const ParamSpec* PolicySpec::param(const std::string& n) const {
    for (const auto& p : params)
        if (p.name == n) return &p;
    return nullptr;
}

namespace {

using Kind = ParamSpec::Kind;

ParamSpec number(std::string name, double dflt, double lo, double hi, double explore_lo,
                 double explore_hi, std::string unit, std::string help) {
    ParamSpec p;
    p.name = std::move(name);
    p.dflt = dflt;
    p.lo = lo;
    p.hi = hi;
    p.explore_lo = explore_lo;
    p.explore_hi = explore_hi;
    p.unit = std::move(unit);
    p.help = std::move(help);
    return p;
}
ParamSpec whole(std::string name, int dflt, int lo, int hi, int explore_lo, int explore_hi,
                std::string unit, std::string help) {
    ParamSpec p = number(std::move(name), dflt, lo, hi, explore_lo, explore_hi, std::move(unit),
                         std::move(help));
    p.kind = Kind::Whole;
    p.decimals = 0;
    return p;
}
ParamSpec flag(std::string name, bool dflt, std::string help) {
    ParamSpec p = number(std::move(name), dflt ? 1 : 0, 0, 1, 0, 1, "", std::move(help));
    p.kind = Kind::Flag;
    p.decimals = 0;
    return p;
}
ParamSpec watermark() {
    return number("watermark", 0.01, 0, 0.99, 0, 0.1, "fraction of KV",
                  "share of the KV cache kept free when admitting (vLLM's watermark)");
}
std::shared_ptr<LengthPredictor> predictorOf(const PolicyConfig& cfg) {
    if (cfg.predictor_instance) return cfg.predictor_instance;
    return makePredictor(cfg.predictor, cfg.seed);
}

std::unique_ptr<Scheduler> makePriority(const std::string& name, const ParamValues& v,
                                        const PolicyConfig& cfg) {
    PriorityOptions o;
    o.policy = name;
    o.watermark = v.number("watermark");
    o.C = name == "sjf" ? 0.0 : name == "sprpt" ? INFINITY : v.number("C");
    return std::make_unique<PriorityScheduler>(o, predictorOf(cfg));
}

std::unique_ptr<Scheduler> makeTimely(TimelyOptions::Mode mode, const ParamValues& v) {
    TimelyOptions o;
    o.mode = mode;
    o.watermark = v.number("watermark");
    if (mode == TimelyOptions::Mode::Stream) {
        o.batching = TimelyOptions::Batching::Fixed;
        return std::make_unique<TimelyScheduler>(o);
    }
    o.slack = v.number("slack");
    o.segment_time = v.number("segment_time");
    o.max_segment = v.whole("max_segment");
    if (mode == TimelyOptions::Mode::Pud) o.literal_eq4 = v.flag("literal_eq4");
    o.serial_joins = v.flag("wcet_serial");
    const bool adaptive = v.flag("adaptive_batch"), gain = v.flag("gain_admission");
    if (gain && !adaptive)
        throw std::invalid_argument(v.policy() + ": gain_admission=1 is an adaptive batching "
                                                 "rule; it cannot go with adaptive_batch=0");
    o.batching = !adaptive ? TimelyOptions::Batching::Fixed
                 : gain    ? TimelyOptions::Batching::UtilityGain
                           : TimelyOptions::Batching::Wcet;
    return std::make_unique<TimelyScheduler>(o);
}

std::vector<ParamSpec> timelyParams() {
    const TimelyOptions d;
    ParamSpec slack_p = number("slack", d.slack, 0, kMaxSeconds, 0.1, 100, "s",
                               "due time of a first segment without a TUF, after its arrival");
    slack_p.lo_open = true;
    slack_p.log = true;
    return {
        number("segment_time", d.segment_time, 0, 1e6, 0, 0.5, "s",
               "G, the time of a segment for PUD priorities (the paper's 90 ms; 0: from the "
               "execution model)"),
        whole("max_segment", d.max_segment, 1, 1 << 20, 1, 64, "tokens",
              "longest segment the WCET batching assumes (the paper's 10)"),
        flag("adaptive_batch", true,
             "1: the paper's latency-guided (WCET) batching; 0: a fixed batch of max_num_seqs"),
        flag("wcet_serial", true,
             "1: under the WCET batching one generation joins at a time, the next once the "
             "batch has shown its rate with it; 0: the rate is one generation late and every "
             "ready segment may join while the most urgent running one can still finish"),
        flag("gain_admission", false,
             "1: Kairos's utility-gain admission instead of the WCET batching"),
        slack_p,
        watermark(),
    };
}

using Maker = std::function<std::unique_ptr<Scheduler>(const ParamValues&, const PolicyConfig&)>;
void add(std::vector<PolicySpec>& s, std::string name, std::string summary, bool predicts,
         bool general, std::vector<ParamSpec> params, Maker make, std::string loops_when = {}) {
    PolicySpec p;
    p.name = std::move(name);
    p.summary = std::move(summary);
    p.predicts = predicts;
    p.general = general;
    p.params = std::move(params);
    p.make = std::move(make);
    p.loops_when = std::move(loops_when);
    s.push_back(std::move(p));
}

std::vector<PolicySpec> buildSpecs() {
    std::vector<PolicySpec> s;
    // The baselines: vLLM's order, the two length-aware orders of Trail and MC-SF's
    // memory-aware one.
    auto baseline = [&s] { s.back().baseline = true; };
    add(s, "fcfs", "first come, first served; new prefills first (vLLM's default)", false, true,
        {watermark()}, [](const ParamValues& v, const PolicyConfig&) {
            FcfsOptions o;
            o.watermark = v.number("watermark");
            return std::unique_ptr<Scheduler>(std::make_unique<FcfsScheduler>(o));
        });
    baseline();
    add(s, "sjf",
        "shortest predicted job first among waiting requests; a running one is never "
        "preempted (Trail's vLLM-SJF)",
        true, true, {watermark()},
        [](const ParamValues& v, const PolicyConfig& c) { return makePriority("sjf", v, c); });
    baseline();
    {
        ParamSpec C = number("C", 0.8, 0, 1e6, 0, 1, "",
                             "a running request may be preempted only while its generated "
                             "tokens are under C x its first prediction (1: SPRPT, 0: SJF)");
        C.slider = true;
        C.label = "preemption C";
        add(s, "sprpt_lp",
            "Trail: shortest predicted remaining time first, with limited preemption", true, true,
            {C, watermark()}, [](const ParamValues& v, const PolicyConfig& c) {
                return makePriority("sprpt_lp", v, c);
            });
        baseline();
    }
    add(s, "sprpt", "shortest predicted remaining time first, preempting at any time", true, true,
        {watermark()},
        [](const ParamValues& v, const PolicyConfig& c) { return makePriority("sprpt", v, c); });
    {
        ParamSpec sl = number("slack", 10, 0, kMaxSeconds, 0.1, 100, "s",
                              "deadline of a request without a budget, after its arrival");
        sl.lo_open = true;
        sl.log = true;
        add(s, "edf", "earliest deadline (arrival + budget) first", false, true,
            {sl, flag("preemptive", false, "1: a later deadline is preempted"), watermark()},
            [](const ParamValues& v, const PolicyConfig&) {
                PriorityOptions o;
                o.policy = "edf";
                o.key = PriorityOptions::Key::Deadline;
                o.watermark = v.number("watermark");
                o.slack = v.number("slack");
                o.C = v.flag("preemptive") ? INFINITY : 0.0;
                return std::unique_ptr<Scheduler>(std::make_unique<PriorityScheduler>(o, nullptr));
            });
    }
    add(s, "mcsf",
        "MC-SF: shortest predicted first, admitting only what fits the KV limit at "
        "every future completion time",
        true, true, {}, [](const ParamValues&, const PolicyConfig& c) {
            return std::unique_ptr<Scheduler>(std::make_unique<McsfScheduler>(predictorOf(c)));
        });
    baseline();
    for (const bool clearing : {false, true}) {
        ParamSpec alpha = number("alpha", 0.2, 0, 0.99, 0, 0.9, "fraction of KV",
                                 "share of the KV limit kept free for running requests to grow");
        alpha.slider = true;
        alpha.label = "α-protection";
        std::vector<ParamSpec> ps{alpha};
        if (clearing) {
            ParamSpec beta = number("beta", 0.5, 0, 1, 0.05, 1, "probability",
                                    "chance that each running request is cleared on overflow");
            beta.lo_open = true;
            beta.slider = true;
            beta.label = "β-clearing";
            ps.push_back(beta);
        }
        ps.push_back(flag("reset", false,
                          "1: cleared requests start over, as in the paper (may loop for ever)"));
        add(
            s, clearing ? "protect_clearing" : "protect_greedy",
            clearing ? "MC-SF's beta-clearing baseline: alpha-protection, clearing "
                       "running requests at random on overflow"
                     : "MC-SF's alpha-protection baseline: greedy admission under "
                       "(1 - alpha) of the KV limit",
            false, true, ps,
            [clearing](const ParamValues& v, const PolicyConfig& c) {
                ProtectOptions o;
                o.alpha = v.number("alpha");
                o.clearing = clearing;
                o.beta = clearing ? v.number("beta") : 1.0;
                o.reset = v.flag("reset");
                o.seed = c.seed;
                return std::unique_ptr<Scheduler>(std::make_unique<ProtectScheduler>(o));
            },
            "reset=1");
    }
    {
        const TimeBillOptions d;
        ParamSpec k = number("k", d.k, 1, 1e6, 1, 8, "",
                             "pessimism: the budget assumes k x the predicted decode time");
        k.slider = true;
        k.label = "pessimism k";
        k.decimals = 1;
        ParamSpec budget = number("budget", d.default_budget, 0, kMaxSeconds, 0.1, 60, "s",
                                  "time budget of a request the workload gives none");
        budget.lo_open = true;
        budget.log = true;
        budget.slider = true; // the budget k is judged against: in the window, beside k
        budget.label = "budget (s)";
        ParamSpec quantile =
            number("quantile", d.auto_k_quantile, 0, 0.999999, 0.5, 0.99, "fraction",
                   "auto_k: the quantile of observed/predicted decode time");
        quantile.lo_open = true;
        add(s, "timebill",
            "TimeBill: per-request time budgets, KV eviction ratio alpha* and Kill / Skip-next",
            true, true,
            {k,
             number("alpha_max", d.alpha_max, 0, 1, 0, 1, "fraction", "largest KV eviction ratio"),
             whole("n_max", d.n_max, 1, kMaxRequestTokens, 256, 32768, "tokens",
                   "longest response the budget arithmetic assumes"),
             number("t_predict", d.t_predict, 0, kMaxSeconds, 0, 0.1, "s",
                    "predictor latency (0: it runs beside the prefill)"),
             flag("skip_next", false, "1: Skip-next instead of Kill for a request past budget"),
             number("alpha", d.fixed_alpha, -1, 1, 0, 1, "fraction",
                    "-1: alpha* per request; a value in [0, 1]: the fixed-alpha baseline"),
             budget, flag("batch_aware", d.batch_aware, "1: decode time at the batch's size"),
             flag("auto_k", d.auto_k, "1: k learned from observed/predicted decode times"),
             quantile, watermark()},
            [](const ParamValues& v, const PolicyConfig& c) {
                TimeBillOptions o;
                o.k = v.number("k");
                o.alpha_max = v.number("alpha_max");
                o.n_max = v.whole("n_max");
                o.t_predict = v.number("t_predict");
                o.kill = !v.flag("skip_next");
                o.fixed_alpha = v.number("alpha");
                if (o.fixed_alpha < 0 && o.fixed_alpha != -1)
                    throw std::invalid_argument("timebill: parameter alpha is -1 (alpha* per "
                                                "request) or in [0, 1] (a fixed ratio)");
                o.default_budget = v.number("budget");
                o.batch_aware = v.flag("batch_aware");
                o.auto_k = v.flag("auto_k");
                o.auto_k_quantile = v.number("quantile");
                o.watermark = v.number("watermark");
                return std::unique_ptr<Scheduler>(
                    std::make_unique<TimeBillScheduler>(o, predictorOf(c)));
            });
    }
    const std::pair<const char*, const char*> timely[] = {
        {"timely", "TimelyLLM as Kairos reads the paper: segmented generation, PUD priorities, "
                   "latency-guided batching (as the authors' code runs it: timely_code)"},
        {"seg_fcfs", "TimelyLLM's segments dispatched first come, first served (its baseline, "
                     "as Kairos reads the paper; the code's: fcfs_code)"},
        {"seg_edf", "TimelyLLM's segments dispatched earliest deadline first (its baseline, as "
                    "Kairos reads the paper; the code's: edf_code)"},
    };
    for (const auto& [name, summary] : timely) {
        const std::string n = name;
        const auto mode = n == "timely"     ? TimelyOptions::Mode::Pud
                          : n == "seg_fcfs" ? TimelyOptions::Mode::Fcfs
                                            : TimelyOptions::Mode::Edf;
        std::vector<ParamSpec> ps = timelyParams();
        if (mode == TimelyOptions::Mode::Pud)
            ps.push_back(flag("literal_eq4", false,
                              "1: PUD exactly as the paper's Eq. 4 is written, late segments "
                              "included (L signed, the TUF negative past the cut-off); 0: "
                              "Kairos's reading (L at least 1 ms, the TUF at least 0)"));
        add(s, n, summary, false, true, ps,
            [mode](const ParamValues& v, const PolicyConfig&) { return makeTimely(mode, v); });
    }
    {
        std::vector<ParamSpec> ps;
        for (auto& p : timelyParams())
            if (p.name == "watermark") ps.push_back(p); // it never suspends nor batches by WCET
        add(s, "vllm_stream",
            "TimelyLLM's vLLM baseline as Kairos reads the paper: whole plans streamed, fixed "
            "batch (the code's: vllm_code)",
            false, true, ps, [](const ParamValues& v, const PolicyConfig&) {
                return makeTimely(TimelyOptions::Mode::Stream, v);
            });
    }
    // TimelyLLM as the authors' code runs it (sched/timely_code.h): their harness's arms.
    {
        const TimelyCodeOptions d;
        auto common = [&](bool ranked) {
            std::vector<ParamSpec> ps;
            if (ranked) {
                ps.push_back(whole("lmax", d.lmax, 1, 1 << 20, 1, 64, "tokens",
                                   "segment length the adaptive admission assumes (the "
                                   "code's 10 for drones, 20 for the robot arm)"));
                ps.push_back(number("seg_exe", d.seg_exe, 0, 1e6, 0, 0.5, "s",
                                    "a segment's generation time in the priority (the code's "
                                    "90 ms for drones, 160 ms for the arm)"));
                ps.push_back(flag("shed", d.shed,
                                  "1: drop a queued task whose utility fell to 0 (the code's "
                                  "load shedding); 0: keep it"));
            }
            ps.push_back(number("comm", d.comm, 0, 1e6, 0, 0.1, "s",
                                "hand-off to the robot in the due times (the code's 8 ms)"));
            ParamSpec slack_p = number("slack", d.slack, 0, kMaxSeconds, 0.1, 100, "s",
                                       "ERT of a request without a TUF");
            slack_p.lo_open = true;
            slack_p.log = true;
            ps.push_back(slack_p);
            ps.push_back(watermark());
            return ps;
        };
        auto opts = [](const ParamValues& v, TimelyCodeOptions::Mode mode) {
            TimelyCodeOptions o;
            o.mode = mode;
            o.batch = v.whole("batch");
            if (mode == TimelyCodeOptions::Mode::Rtllm) {
                o.lmax = v.whole("lmax");
                o.seg_exe = v.number("seg_exe");
                o.shed = v.flag("shed");
            }
            o.comm = v.number("comm");
            o.slack = v.number("slack");
            o.watermark = v.number("watermark");
            return std::unique_ptr<Scheduler>(std::make_unique<TimelyCodeScheduler>(o));
        };
        std::vector<ParamSpec> ps = common(true);
        ps.insert(ps.begin(), whole("batch", 0, 0, 1 << 20, 0, 16, "requests",
                                    "0: the adaptive batching (the code's rtllm); N: at most "
                                    "N added requests unfinished (rtllm-fixed, exp743: 6)"));
        add(s, "timely_code",
            "TimelyLLM as its authors' code runs it: one task added per step, token-rate "
            "admission, TUF priority, load shedding, segments re-queued",
            false, true, ps, [opts](const ParamValues& v, const PolicyConfig&) {
                return opts(v, TimelyCodeOptions::Mode::Rtllm);
            });
        for (const auto& [name, mode, summary] :
             {std::tuple{"edf_code", TimelyCodeOptions::Mode::Edf,
                         "the TimelyLLM code's EDF arm (exp743): segments by arrival + ERT, a "
                         "fixed batch"},
              std::tuple{"fcfs_code", TimelyCodeOptions::Mode::Fcfs,
                         "the TimelyLLM code's FCFS arm (exp743): segments by arrival, then "
                         "by when the last ended, a fixed batch"}}) {
            std::vector<ParamSpec> q = common(false);
            q.insert(q.begin(), whole("batch", 6, 1, 1 << 20, 1, 16, "requests",
                                      "added requests unfinished at most (exp743: 6)"));
            const auto m = mode;
            add(s, name, summary, false, true, q,
                [opts, m](const ParamValues& v, const PolicyConfig&) { return opts(v, m); });
        }
        std::vector<ParamSpec> q;
        q.push_back(watermark());
        add(s, "vllm_code",
            "the TimelyLLM code's vLLM arm: whole plans, first come first served, one task "
            "added per step",
            false, true, q, [](const ParamValues& v, const PolicyConfig&) {
                TimelyCodeOptions o;
                o.mode = TimelyCodeOptions::Mode::Vllm;
                o.watermark = v.number("watermark");
                return std::unique_ptr<Scheduler>(std::make_unique<TimelyCodeScheduler>(o));
            });
    }
    add(s, "optimal",
        "hindsight optimum of MC-SF's discrete model (<= 8 requests, unit model; for "
        "checking)",
        false, false, {}, [](const ParamValues&, const PolicyConfig&) {
            return std::unique_ptr<Scheduler>(std::make_unique<OptimalScheduler>());
        });
    return s;
}

} // namespace

const std::vector<PolicySpec>& policySpecs() {
    static const std::vector<PolicySpec> specs = buildSpecs();
    return specs;
}

const PolicySpec* findPolicy(const std::string& name) {
    for (const auto& s : policySpecs())
        if (s.name == name) return &s;
    return nullptr;
}

std::string policyNameList() {
    return policyNameList(policyNames());
}

std::string policyNameList(const std::vector<std::string>& names) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return known;
}

const PolicySpec& policySpec(const std::string& name) {
    if (const PolicySpec* s = findPolicy(name)) return *s;
    throw std::invalid_argument("unknown policy '" + name + "' (known: " + policyNameList() + ")");
}

PolicyParams resolvePolicyParams(const std::string& policy, const PolicyParams& given) {
    const PolicySpec& spec = policySpec(policy);
    for (const auto& [k, v] : given)
        if (!spec.param(k)) {
            std::string names;
            for (const auto& p : spec.params) names += (names.empty() ? "" : ", ") + p.name;
            throw std::invalid_argument(
                "policy '" + policy + "' has no parameter '" + k + "'" +
                (names.empty() ? " (it has none)" : " (its parameters: " + names + ")"));
        }
    PolicyParams out;
    for (const auto& p : spec.params) {
        const auto it = given.find(p.name);
        const double v = it == given.end() ? p.dflt : it->second;
        p.check(policy, v);
        out[p.name] = v;
    }
    return out;
}

std::unique_ptr<Scheduler> makeScheduler(const PolicyConfig& cfg) {
    const PolicySpec& spec = policySpec(cfg.name);
    return spec.make(ParamValues(cfg.name, resolvePolicyParams(cfg.name, cfg.params)), cfg);
}

std::unique_ptr<Scheduler> makeScheduler(const std::string& name, const PolicyParams& params) {
    PolicyConfig c;
    c.name = name;
    c.params = params;
    return makeScheduler(c);
}

std::vector<std::string> policyNames() {
    std::vector<std::string> out;
    for (const auto& s : policySpecs())
        if (s.general) out.push_back(s.name);
    return out;
}

std::vector<std::string> baselinePolicies() {
    std::vector<std::string> out;
    for (const auto& s : policySpecs())
        if (s.baseline) out.push_back(s.name);
    return out;
}

std::string policyTable(bool markdown) {
    std::string o;
    if (markdown)
        o += "# Policies\n\nGenerated by `kairos-cli policies --markdown` from the registry "
             "(core/sched/registry.cpp); tests/core/tst_policies checks that this file is "
             "current.\n\nSet a parameter with `--param NAME=VALUE`; sweep it with `kairos-cli "
             "sweep --param NAME=LO:HI:STEP`. The domain is what is accepted; the explored "
             "range is what the GUI's slider and a sweep without a range cover.\n";
    for (const auto& s : policySpecs()) {
        if (markdown) {
            o += "\n## `" + s.name + "`\n\n" + s.summary + ".";
            if (s.predicts) o += " Uses the length predictor (`--predictor`).";
            if (!s.general) o += " Not run on general workloads (constructed by name only).";
            if (!s.loops_when.empty())
                o += " With " + s.loops_when +
                     " it may cycle for ever: the run stops with a "
                     "named error.";
            o += "\n";
            if (s.params.empty()) {
                o += "\nNo parameters.\n";
                continue;
            }
            o += "\n| parameter | default | domain | explored | unit | meaning |\n"
                 "|---|---|---|---|---|---|\n";
            for (const auto& p : s.params)
                o += "| `" + p.name + "` | " + num(p.dflt) + " | " + p.domainText() + " | " +
                     num(p.explore_lo) + " .. " + num(p.explore_hi) + (p.log ? " (log)" : "") +
                     " | " + p.unit + " | " + p.help + (p.slider ? " (slider)" : "") + " |\n";
        } else {
            o += s.name + (s.predicts ? " (predicts)" : "") + "\n    " + s.summary + "\n";
            for (const auto& p : s.params)
                o += "    " + p.name + "=" + num(p.dflt) + "  " + p.domainText() +
                     (p.unit.empty() ? "" : " " + p.unit) + "  " + p.help + "\n";
        }
    }
    return o;
}

void linkPolicyRules() {}

} // namespace kairos
