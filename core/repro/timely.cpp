// TimelyLLM (seeds/001): utility per class, response and robot waiting time of the
// segmented PUD scheduler against vLLM FCFS, vLLM-stream, segmented FCFS and segmented
// EDF, on the authors' 25-agent workload and on WID1-3-like generated ones.
#include "repro/common.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <algorithm>
#include <cmath>

namespace kairos::repro {
namespace {

const RobotClassSummary* cls(const Summary& s, const std::string& name) {
    for (const auto& c : s.robot)
        if (c.cls == name) return &c;
    return nullptr;
}

double pct(const Summary& s, const std::string& name) {
    const auto* c = cls(s, name);
    return c ? c->utilityPercent() : std::nan("");
}

} // namespace

Report reproduceTimely(const Options& opt) {
    Report rep;
    // The fastest profile shipped: no Llama3-8B profile is fitted yet (the paper's model).
    const DeviceProfile prof = opt.profile("llama2-70b-h100x4");
    const auto model = makeExecutionModel(prof);
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    lim.block_size = 16;

    const std::vector<RobotTrace> traces =
        readRobotTraces(dataFile(opt, "timelyllm/timelyllm_drone_trace_set_extracted.json"));
    struct Named {
        std::string name;
        Workload w;
    };
    std::vector<Named> ws;
    ws.push_back({"authors' 25 agents",
                  readWorkload(dataFile(opt, "timelyllm/timelyllm_workload_25agents.json"))});
    for (const char* p : {"wid1", "wid2", "wid3"}) {
        RobotWorkloadSpec spec = RobotWorkloadSpec::preset_(p);
        spec.seed = opt.seed;
        if (opt.quick) spec.duration_s /= 2;
        ws.push_back({std::string(p) + "-like", generateRobotWorkload(spec, traces)});
    }
    const std::vector<std::string> pols{"fcfs", "vllm_stream", "seg_fcfs", "seg_edf", "timely"};
    std::vector<Job> jobs;
    for (const auto& nw : ws)
        for (const auto& p : pols) {
            PolicyConfig pc;
            pc.name = p;
            jobs.push_back({&nw.w, pc, lim, {}});
        }
    say(opt, "timely: " + std::to_string(jobs.size()) + " runs");
    const auto res = runAll(jobs, *model, opt);

    const std::string setting =
        "Llama2-70B on 4x H100 (profile llama2-70b-h100x4, the fastest shipped; the paper "
        "ran Llama3-8B, about 3-4x faster per token, so every response here is slower and "
        "utilities are lower for all policies); prompts carry TypeFly's 1,176-token system "
        "prompt; plans 3 characters per token; segments at each skill";
    Table t({"workload", "policy", "urgent %", "normal %", "all %", "mean W(s0) s", "robot wait s",
             "completion s"});
    for (std::size_t k = 0; k < ws.size(); ++k)
        for (std::size_t p = 0; p < pols.size(); ++p) {
            const Summary& s = res[k * pols.size() + p].summary;
            const auto* all = cls(s, "all");
            t.add({ws[k].name, pols[p] == "fcfs" ? "vLLM fcfs" : pols[p],
                   fixed(pct(s, "urgent"), 1), fixed(pct(s, "normal"), 1), fixed(pct(s, "all"), 1),
                   all ? fixed(all->mean_response, 2) : "-",
                   all ? fixed(all->mean_robot_wait, 2) : "-",
                   all ? fixed(all->mean_completion, 2) : "-"});
        }
    rep.details += "TimelyLLM: utility (% of the maximum) per class (" + setting + ")\n" + t.str();

    auto at = [&](std::size_t k, const std::string& p) -> const Summary& {
        const auto i = std::find(pols.begin(), pols.end(), p) - pols.begin();
        return res[k * pols.size() + static_cast<std::size_t>(i)].summary;
    };
    for (std::size_t k : {std::size_t(0), std::size_t(1)}) {
        const std::string where = ws[k].name + " workload; " + setting;
        rep.claims.push_back({"timely", "TimelyLLM urgent utility, " + ws[k].name, 81.5,
                              pct(at(k, "timely"), "urgent"), "% of max", where});
        rep.claims.push_back({"timely", "vLLM FCFS urgent utility, " + ws[k].name, 59.5,
                              pct(at(k, "fcfs"), "urgent"), "% of max", where});
    }
    // Heavy load: WID2 (up to 16 tasks per event).
    const double heavy = pct(at(2, "timely"), "urgent") / pct(at(2, "fcfs"), "urgent") - 1;
    rep.claims.push_back({"timely",
                          "urgent utility gain over vLLM FCFS under heavy load (wid2-like)", 191.0,
                          100 * heavy, "%", "wid2-like workload; " + setting});
    // Robot arm (WID3): utility ratio and waiting time.
    const Summary &a_t = at(3, "timely"), &a_f = at(3, "fcfs");
    rep.claims.push_back({"timely", "utility TimelyLLM / vLLM FCFS, arm task (wid3-like)", 1.97,
                          pct(a_t, "all") / pct(a_f, "all"), "x",
                          "wid3-like workload; " + setting});
    const auto *wt = cls(a_t, "all"), *wf = cls(a_f, "all");
    const double wait_change = wt && wf && wf->mean_response + wf->mean_robot_wait > 0
                                   ? 100 * ((wt->mean_response + wt->mean_robot_wait) /
                                                (wf->mean_response + wf->mean_robot_wait) -
                                            1)
                                   : std::nan("");
    rep.claims.push_back({"timely",
                          "change of waiting time (response + robot wait) vs vLLM FCFS, arm task",
                          -84.0, wait_change, "%", "wid3-like workload; " + setting});
    rep.details += "\n";
    return rep;
}

} // namespace kairos::repro
