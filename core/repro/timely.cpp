// TimelyLLM (seeds/001) in its setting: Llama3-8B on one RTX 4090 (a profile derived for
// it, core/repro/derived.cpp), the authors' 25-agent drone workload (their WID1 data
// sample) and WID1-3-like generated ones; the paper's metric, the time utility of the
// first response W(s0) (negative past the cut-off), per class as % of the maximum; the
// paper's baselines: vLLM (plain FCFS, the plan delivered whole), vLLM-stream, segmented
// FCFS and EDF with the initial priority kept (section 7.3.2). Figures 5, 7 and 8 and the
// arm task of Figure 9.
#include "exec/execution_model.h"
#include "metrics/robot_metrics.h"
#include "metrics/stats.h"
#include "repro/common.h"
#include "repro/derived.h"
#include "sched/registry.h"
#include "sim/engine.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "util/json_line.h"
#include "util/json_number.h"
#include "workload/llama3_counts.h"
#include "workload/readers.h"
#include "workload/robot_generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kairos::repro {
namespace {

// A model plus host time the harness spends outside the GPU: `step_s` on every engine step
// (the scheduler's re-scoring and fetch, between steps of the synchronous loop) and
// `prefill_s` for each request whose prefill the step runs (a resubmitted segment's
// stop-check, token-id and KV caching and retrieval: charged to every prefill, a plan's
// first included, which Table 4's per-plan figure also covers). The paper measured both
// (section 7.5, Tables 4 and 5); TimelyLLM's arm on the WID1 row runs with them beside.
class OverheadModel final : public ExecutionModel {
public:
    OverheadModel(const ExecutionModel& m, double step_s, double prefill_s)
        : m_(m), step_(step_s), prefill_(prefill_s) {}
    double iterationTime(const BatchShape& s) const override {
        return m_.iterationTime(s) + step_ + prefill_ * s.prefill_seqs;
    }
    std::optional<DecodeRamp> decodeRamp(std::int32_t b, std::int64_t kv) const override {
        auto r = m_.decodeRamp(b, kv);
        if (r) r->d0 += step_;
        return r;
    }
    std::string describe() const override {
        return m_.describe() + " + " + std::to_string(step_) + " s a step + " +
               std::to_string(prefill_) + " s a prefill";
    }

private:
    const ExecutionModel& m_;
    double step_, prefill_;
};

// The paper's Table 4: segmented-generation overhead of each of the eight drone traces (ms).
constexpr double kSegmentedOverheadMs[] = {13.7, 24.1, 19.9, 19.9, 16.0, 13.1, 14.4, 14.8};
// Table 5: scheduling overhead (ms) at 1 and at 8 queued tasks (0.58, 0.83, 1.25, 1.58, 2.03
// at 1, 2, 4, 6, 8).
constexpr double kSchedulingOverheadMs[2] = {0.58, 2.03};

const RobotClassSummary* cls(const Summary& s, const std::string& name) {
    for (const auto& c : s.robot)
        if (c.cls == name) return &c;
    return nullptr;
}

double pct(const Summary& s, const std::string& name) {
    const auto* c = cls(s, name);
    return c ? c->utilityPercent() : std::nan("");
}

double meanUtility(const Summary& s, const std::string& name) {
    const auto* c = cls(s, name);
    return c ? c->meanUtility() : std::nan("");
}

// Waiting time as the paper defines it: completion minus the robot's execution, i.e. the
// response time plus the robot's idle time between segments.
double waiting(const Summary& s) {
    const auto* c = cls(s, "all");
    return c ? c->mean_response + c->mean_robot_wait : std::nan("");
}

PolicyConfig pol(const std::string& name, int fixed_batch = 0) {
    PolicyConfig p;
    p.name = name;
    // vLLM's batch is always fixed.
    if (fixed_batch > 0 && findPolicy(name)->param("adaptive_batch"))
        p.params["adaptive_batch"] = 0;
    return p;
}

// A user's workload (reproduce timely --workload) in the authors' format, named by its file
// and how many of its jobs had no plan text beside them.
std::string userWorkloadName(const std::string& path, const Workload& w) {
    std::string name =
        std::filesystem::path(path).filename().string() + " (" + std::to_string(w.size()) + " jobs";
    const auto plans = w.meta.find("jobs_without_plan_text");
    if (plans != w.meta.end() && plans->second != "0")
        name += ", " + plans->second + " without plan text: 20 tokens each";
    return name + ")";
}

// Each request's task type (the file's trace_id, by job_id), -1 where it has none.
std::vector<int> traceTypes(const std::string& path, const Workload& w) {
    const nlohmann::json j = parseJsonDocument(readInputFile(path, limits::kWorkload), path);
    std::map<std::int64_t, int> of;
    if (j.is_array())
        for (std::size_t k = 0; k < j.size(); ++k) {
            const auto& job = j[k];
            if (!job.is_object() || !job.contains("trace_id") ||
                !job["trace_id"].is_number_integer())
                continue;
            const std::int64_t id = job.contains("job_id") && job["job_id"].is_number()
                                        ? static_cast<std::int64_t>(job["job_id"].get<double>())
                                        : static_cast<std::int64_t>(k);
            of[id] = job["trace_id"].get<int>();
        }
    std::vector<int> type(w.size(), -1);
    for (std::size_t i = 0; i < w.size(); ++i) {
        const auto f = of.find(w.requests[i].id);
        if (f != of.end()) type[i] = f->second;
    }
    return type;
}

// The engine of the TimelyLLM authors' harness (EngineArgs in their RequestScheduler,
// timelyllm/config.py): max_num_seqs 8, gpu_memory_utilization 0.8, prefix caching on
// (16-token blocks). `v0`: vLLM 0.5 as their code pins it (0.5.4), no chunked prefill, a
// prefill step of at most max_model_len (4,000) tokens, vLLM 0.5's scheduler rules; else
// vLLM V1's chunked prefill, 8,192 tokens a step, as a third party's port of the code runs.
EngineLimits harnessLimits(const DeviceProfile& prof, bool v0) {
    EngineLimits lim;
    lim.kv_capacity_tokens =
        kvCapacityFromMemory(prof.model, prof.gpu_count * prof.gpu_mem_gib * 1073741824.0, 0.8);
    lim.block_size = 16;
    lim.prefix_caching = true;
    lim.max_num_seqs = 8;
    lim.chunked_prefill = !v0;
    lim.rules = v0 ? EngineRules::VllmV0 : EngineRules::Kairos;
    lim.max_num_batched_tokens = v0 ? 4000 : 8192;
    return lim;
}

// The TimelyLLM code's arms (sched/timely_code.h) on one workload, as their harness runs
// them, scored by their own metric (metrics/robot_metrics.h): the object `systems` of
// `reproduce timely --json`, and a table.
struct CodeArms {
    nlohmann::json systems = nlohmann::json::object();
    std::string table;
};
CodeArms runCodeArms(const Workload& w, const std::vector<int>& types, const DeviceProfile& prof,
                     const std::string& workload_name) {
    const auto model = makeExecutionModel(prof);
    // The port's engine (vLLM V1, chunked prefill), where the code's real runs on an H100
    // were made; beside it the upstream's vLLM 0.5.
    const EngineLimits lim = harnessLimits(prof, false), v0 = harnessLimits(prof, true);
    struct Arm {
        const char* key;
        const char* policy;
        int batch;
        const char* label;
    };
    const Arm arms[] = {{"vllm", "vllm_code", 0, "vLLM (whole plans, FCFS)"},
                        {"timely", "timely_code", 0, "TimelyLLM (rtllm, adaptive)"},
                        {"timely_fixed", "timely_code", 6, "TimelyLLM fixed batch 6"},
                        {"edf_fixed", "edf_code", 6, "EDF fixed batch 6"},
                        {"fcfs_fixed", "fcfs_code", 6, "FCFS fixed batch 6"}};
    AuthorsMetricOptions mo;
    mo.type = types;
    Table t({"arm", "urgent %", "normal %", "urgent resp ms", "normal resp ms", "urgent wait ms",
             "normal wait ms", "scored", "dropped", "urgent % (V0)", "normal % (V0)"});
    CodeArms out;
    for (const Arm& a : arms) {
        PolicyParams params;
        if (a.batch > 0) params["batch"] = a.batch;
        auto sched = makeScheduler(a.policy, params);
        const RunLog log = simulate(w, *model, *sched, lim);
        const AuthorsMetric m = authorsMetric(log, w, mo);
        auto sched_v0 = makeScheduler(a.policy, params);
        const AuthorsMetric m0 = authorsMetric(simulate(w, *model, *sched_v0, v0), w, mo);
        auto ms = [](double s) { return jsonNumber(1e3 * s); };
        out.systems[a.key] = {{"policy", sched->name()},
                              {"urgent_utility_pct", jsonNumber(m.urgent.utility_pct)},
                              {"normal_utility_pct", jsonNumber(m.normal.utility_pct)},
                              {"urgent_response_ms", ms(m.urgent.response_s)},
                              {"normal_response_ms", ms(m.normal.response_s)},
                              {"urgent_waiting_ms", ms(m.urgent.waiting_s)},
                              {"normal_waiting_ms", ms(m.normal.waiting_s)},
                              {"scored", m.all.scored},
                              {"dropped", m.all.dropped}};
        t.add({a.label, fixed(m.urgent.utility_pct, 1), fixed(m.normal.utility_pct, 1),
               fixed(1e3 * m.urgent.response_s, 0), fixed(1e3 * m.normal.response_s, 0),
               fixed(1e3 * m.urgent.waiting_s, 0), fixed(1e3 * m.normal.waiting_s, 0),
               std::to_string(m.all.scored), std::to_string(m.all.dropped),
               fixed(m0.urgent.utility_pct, 1), fixed(m0.normal.utility_pct, 1)});
    }
    out.systems["setting"] = {
        {"workload", workload_name},
        {"profile", prof.name},
        {"engine", "max_num_seqs 8, gpu_memory_utilization 0.8 (" +
                       std::to_string(lim.kv_capacity_tokens) +
                       " KV tokens), prefix caching, 16-token blocks, chunked prefill 8192"},
        {"metric", "the authors' (resdata.py): response = first robot start - arrival, TUF "
                   "without floor as % of beta, first 10 tasks skipped, tasks never started "
                   "not scored (dropped), mean per trace type then over the class's types"}};
    out.table = "\n  The TimelyLLM code's arms as their harness runs them (sched/timely_code.h) "
                "on " +
                workload_name + ", " + prof.name + " (" + prof.provenance +
                "), their metric (metrics/robot_metrics.h authorsMetric)\n" + t.str();
    return out;
}

} // namespace

Report reproduceTimely(const Options& opt) {
    Report rep;
    PlanTimes plan_fit;
    const DeviceProfile prof = llama3_8bRtx4090(opt, &plan_fit);
    const auto model = makeExecutionModel(prof);
    // The paper's server keeps TypeFly's fixed system prompt stored (a 1,308-token prefix
    // of every task, section 4.1's "1,300-token" robot-control context): the main runs
    // cache it (vLLM's automatic prefix caching, 16-token blocks); the diagnosis runs
    // compute it for every task, the factor a disagreement is checked against.
    EngineLimits lim;
    lim.kv_capacity_tokens = prof.kvCapacityTokens();
    lim.block_size = 16; // vLLM's paged blocks (TimelyLLM is built on vLLM)
    lim.prefix_caching = true;
    rep.prefix_caching = lim.prefix_caching;

    const std::vector<RobotTrace> traces =
        readRobotTraces(dataFile(opt, "timelyllm/timelyllm_drone_trace_set_extracted.json"));
    struct Named {
        std::string name;
        Workload w;
    };
    std::vector<Named> ws;
    // The main workload's file: the one given, or the authors' WID1 sample.
    const std::string main_path = opt.timely_workload.empty()
                                      ? dataFile(opt, "timelyllm/timelyllm_workload_25agents.json")
                                      : opt.timely_workload;
    if (opt.timely_workload.empty()) {
        ws.push_back({"authors' WID1 sample (25 agents)", readWorkload(main_path)});
    } else {
        Workload w = readWorkload(opt.timely_workload);
        if (w.meta.count("format") == 0 || w.meta.at("format") != "timelyllm")
            throw InputError(opt.timely_workload, 0, "",
                             "not in the TimelyLLM data format (a JSON list of jobs with "
                             "'trigger time', 'tuf' and 'exe_time_detail')");
        if (w.meta.count("jobs_without_plan_text") && w.meta.at("jobs_without_plan_text") != "0") {
            // No trace set beside it for some jobs: the shipped drone trace set's plans,
            // for the jobs whose task text is that trace's.
            std::istringstream in(readInputFile(opt.timely_workload, limits::kWorkload));
            Workload again = readTimelyLlmFile(
                in, opt.timely_workload, 0,
                dataFile(opt, "timelyllm/timelyllm_drone_trace_set_extracted.json"));
            again.meta["format"] = w.meta.at("format");
            w = std::move(again);
        }
        std::string name = userWorkloadName(opt.timely_workload, w);
        ws.push_back({std::move(name), std::move(w)});
    }
    // Each workload's task types (the authors' trace ids), what their metric averages over.
    std::vector<std::vector<int>> types;
    types.push_back(traceTypes(main_path, ws[0].w));
    for (const char* p : {"wid1", "wid2", "wid3"}) {
        RobotWorkloadSpec spec = RobotWorkloadSpec::preset_(p);
        spec.seed = opt.seed;
        if (opt.quick) spec.duration_s /= 2;
        std::map<std::int64_t, int> trace_of;
        ws.push_back(
            {std::string(p) + "-like",
             generateRobotWorkload(
                 spec, std::string(p) == "wid3" ? std::vector<RobotTrace>{} : traces, &trace_of)});
        std::vector<int> type;
        for (const Request& r : ws.back().w.requests) {
            const auto f = trace_of.find(r.id);
            type.push_back(f == trace_of.end() ? -1 : f->second);
        }
        types.push_back(std::move(type));
    }
    const std::vector<std::string> pols{"fcfs", "vllm_stream", "seg_fcfs", "seg_edf", "timely"};
    // Figure 7: WID2 with a fixed maximum batch size, TimelyLLM without its adaptive
    // batching and vLLM capped the same way.
    const std::vector<int> batches{1, 2, 4, 6, 8, 10, 12, 14, 16};
    const int kSystemPrompt = llama3::typeflySystemPromptTokens();

    // Kairos's reading of the paper (sched/timely.h), beside the code's: every policy on each
    // workload, then Figure 7's fixed batches on WID2. Reported in the tables and each row's
    // cause; the claims are judged on the code's arms below.
    struct Block {
        std::size_t main, fig7; // first job of each part
    };
    std::vector<Job> jobs;
    Block full{jobs.size(), 0};
    for (const auto& nw : ws)
        for (const auto& p : pols) jobs.push_back({&nw.w, pol(p), lim, {}, {}});
    full.fig7 = jobs.size();
    for (int n : batches)
        for (const char* p : {"timely", "fcfs"}) {
            EngineLimits l = lim;
            l.max_num_seqs = n;
            jobs.push_back({&ws[2].w, pol(p, n), l, {}, {}});
        }
    // Kairos's reading's variants on the first workload and WID2: Eq. 4 read literally for
    // late segments (sched/timely.h), a fixed batch instead of the WCET batching
    // (adaptive_batch=0), the WCET batching with joins not serialised (wcet_serial=0).
    PolicyConfig literal = pol("timely"), fixed_batch = pol("timely"), free_joins = pol("timely");
    literal.params["literal_eq4"] = 1;
    fixed_batch.params["adaptive_batch"] = 0;
    free_joins.params["wcet_serial"] = 0;
    const std::vector<const PolicyConfig*> variant_pols{&literal, &fixed_batch, &free_joins};
    std::size_t variants_at[2];
    for (std::size_t k : {std::size_t(0), std::size_t(2)}) {
        variants_at[k / 2] = jobs.size();
        for (const PolicyConfig* v : variant_pols) jobs.push_back({&ws[k].w, *v, lim, {}, {}});
    }

    // The claims run on the authors' code's arms (sched/timely_code.h) as their harness
    // runs them (timelyllm/config.py: max_num_seqs 8, gpu_memory_utilization 0.8 "for a 24GB
    // RTX 4090", max_model_len 4000, prefix caching, 16-token blocks; the drone's lmax 10 and
    // 90 ms, the arm's (fltrnn) 20 and 160 ms), on the paper's card, scored by the authors'
    // metric (metrics/robot_metrics.h authorsMetric). The engine: vLLM 0.5 as the upstream
    // artifact pins it (0.5.4), no chunked prefill (a prefill step of at most max_model_len
    // tokens, vLLM 0.5's scheduler rules: --engine-rules vllm-v0). Beside it, for comparison
    // only (`compared.vllm_v1_chunked`, not a reading: the code settles the engine), vLLM V1
    // with chunked prefill, 8,192 tokens a step: a third party's port of the code.
    const EngineLimits code_lim = harnessLimits(prof, true), code_v1 = harnessLimits(prof, false);
    // The derived card's level is known to a standard error over the 8 plans it was scaled
    // to (a ratio estimator's, derived.h PlanTimes): each claim runs again on vLLM 0.5 with
    // the card re-derived at the ends of the level's 95 % interval (its device readings;
    // verdict rule 13), since the paper's figures are printed finer than that.
    // (Student's t with the plans' n - 1 degrees of freedom: 2.36 for 8 plans, not the normal
    // 1.96: an outside audit.)
    const double level_half =
        studentT975(std::max(1, plan_fit.plans - 1)) * plan_fit.scale_se / plan_fit.scale;
    const auto faster = makeExecutionModel(llama3_8bRtx4090AtLevel(prof, 1 - level_half)),
               slower = makeExecutionModel(llama3_8bRtx4090AtLevel(prof, 1 + level_half));
    // Its growth with the batch is the A100's, which a 4090 need not share (an outside
    // audit: Fig. 7 sweeps the batch): the flattest and the steepest growth of the other
    // single cards LLM-Inference-Bench measured (derived.h otherGrowthShares), the card's
    // batch-1 step kept, are two more device readings.
    const auto shares = otherGrowthShares(opt);
    const auto extremes = std::minmax_element(
        shares.begin(), shares.end(),
        [](const GrowthShare& a, const GrowthShare& b) { return a.share < b.share; });
    const GrowthShare *flattest = &*extremes.first, *steepest = &*extremes.second;
    const auto flatter = makeExecutionModel(llama3_8bRtx4090WithGrowth(prof, *flattest)),
               steeper = makeExecutionModel(llama3_8bRtx4090WithGrowth(prof, *steepest));
    const double own_share = prof.ete.q1 / (prof.ete.q0 + prof.ete.q1);
    // Job `i` again, on model `m`.
    auto onModel = [&](std::size_t i, const ExecutionModel* m) {
        jobs.push_back(jobs[i]);
        jobs.back().model = m;
    };
    // One arm on workload k, on both engines (the first job's index); `ablation`: scored as
    // their ablation script scores (fig_plot/ablation_study_sched.py: tasks pooled per class,
    // not per type).
    auto addCode = [&](std::size_t k, const std::string& policy, int batch, int seqs,
                       bool ablation) {
        const std::size_t first = jobs.size();
        PolicyConfig p;
        p.name = policy;
        if (batch > 0) p.params["batch"] = batch;
        if (k == 3 && policy == "timely_code") { // the robot arm: the code's fltrnn setting
            p.params["lmax"] = 20;
            p.params["seg_exe"] = 0.16;
        }
        AuthorsMetricOptions mo;
        mo.type = types[k];
        // (The script reads resdata's output, which has skipped the first 10 tasks already.)
        if (ablation) mo.pooled = true;
        for (const EngineLimits* l : {&code_lim, &code_v1}) {
            EngineLimits x = *l;
            if (seqs > 0) x.max_num_seqs = seqs;
            jobs.push_back({&ws[k].w, p, x, {}, mo});
        }
        // Engines 2 and 3: vLLM 0.5 on the card at its faster and its slower level; 4 and 5:
        // with the flattest and the steepest growth with the batch.
        for (const ExecutionModel* m : {faster.get(), slower.get(), flatter.get(), steeper.get()})
            onModel(first, m);
        return first;
    };
    // TimelyLLM on WID1 with the paper's measured host overheads (OverheadModel): Table 4's
    // mean per plan spread over a WID1 plan's mean number of segments, on each segment's
    // prefill; Table 5's at one and at eight queued tasks on every step.
    double plan_segments = 0;
    int segmented = 0;
    for (const Request& r : ws[0].w.requests)
        if (r.segments.size() > 1) {
            plan_segments += double(r.segments.size());
            ++segmented;
        }
    plan_segments = segmented ? plan_segments / segmented : 1.0;
    double table4 = 0;
    for (double x : kSegmentedOverheadMs) table4 += x / std::size(kSegmentedOverheadMs);
    const double per_segment_s = table4 / 1000 / plan_segments;
    const OverheadModel overhead_low(*model, kSchedulingOverheadMs[0] / 1000, per_segment_s),
        overhead_high(*model, kSchedulingOverheadMs[1] / 1000, per_segment_s);
    const std::size_t w1_timely = addCode(0, "timely_code", 0, 0, false),
                      w1_vllm = addCode(0, "vllm_code", 0, 0, false),
                      w2_timely = addCode(2, "timely_code", 0, 0, false),
                      w2_vllm = addCode(2, "vllm_code", 0, 0, false),
                      f8_timely = addCode(2, "timely_code", 6, 0, true),
                      f8_edf = addCode(2, "edf_code", 6, 0, true),
                      f8_fcfs = addCode(2, "fcfs_code", 6, 0, true);
    // Figure 7: rtllm-fixed at batch n against vLLM capped at n, both with n seats; segmented
    // FCFS at n (the share row's null model).
    std::vector<std::size_t> f7;
    for (int n : batches)
        for (const char* p : {"timely_code", "vllm_code", "fcfs_code"})
            f7.push_back(addCode(2, p, std::string(p) == "vllm_code" ? 0 : n, n, false));
    const std::size_t arm_timely = addCode(3, "timely_code", 0, 0, false),
                      arm_vllm = addCode(3, "vllm_code", 0, 0, false),
                      arm_fcfs = addCode(3, "fcfs_code", 8, 0, false);
    const std::size_t w1_overheads = jobs.size();
    for (const ExecutionModel* m : {&overhead_low, &overhead_high}) onModel(w1_timely, m);
    // And with the paper's simulated 8 ms network latency before each segment's execution
    // (7.2), alone and with the overheads at eight queued tasks: the paper's setting, which
    // the code's virtual executor leaves out.
    const std::size_t w1_network = jobs.size();
    for (const ExecutionModel* m : {static_cast<const ExecutionModel*>(nullptr),
                                    static_cast<const ExecutionModel*>(&overhead_high)}) {
        onModel(w1_timely, m);
        jobs.back().authors->network_s = 0.008;
    }
    say(opt, "timely: " + std::to_string(jobs.size()) + " runs");
    const auto res = runAll(jobs, *model, opt);
    // Run `first`'s authors' metric on engine e (0: vLLM 0.5, 1: V1 chunked, 2 and 3: vLLM
    // 0.5 on the card's faster and slower level, 4 and 5 with its flattest and steepest
    // growth with the batch); null if looped.
    auto code = [&](std::size_t first, int e) -> const AuthorsMetric* {
        const auto& o = res[first + static_cast<std::size_t>(e)].authors;
        return o ? &*o : nullptr;
    };
    // One figure of a code run (NaN where it looped).
    auto figureOf = [&](double (*get)(const AuthorsMetric&)) {
        return [&, get](std::size_t first, int e) {
            const AuthorsMetric* m = code(first, e);
            return m ? get(*m) : std::nan("");
        };
    };
    const auto urgentPct = figureOf([](const AuthorsMetric& m) { return m.urgent.utility_pct; });
    const auto normalPct = figureOf([](const AuthorsMetric& m) { return m.normal.utility_pct; });
    const auto taskUtility = figureOf([](const AuthorsMetric& m) { return m.task_utility; });
    const auto waitingOf = figureOf([](const AuthorsMetric& m) { return m.all.waiting_s; });
    auto at = [&](const Block& b, std::size_t k, const std::string& p) -> const Summary& {
        const auto i = std::find(pols.begin(), pols.end(), p) - pols.begin();
        return res[b.main + k * pols.size() + static_cast<std::size_t>(i)].summary;
    };
    // Figure 7's curves, Kairos's reading: mean utility per task at the i-th batch size.
    auto fig7At = [&](const Block& b, std::size_t i, bool timely) {
        return meanUtility(res[b.fig7 + 2 * i + (timely ? 0 : 1)].summary, "all");
    };
    // The code's: arm 0 TimelyLLM, 1 vLLM, 2 segmented FCFS at the i-th batch size.
    auto codeFig7 = [&](std::size_t i, int arm, int e) {
        return taskUtility(f7[3 * i + static_cast<std::size_t>(arm)], e);
    };
    struct Peaks {
        double best_t = -INFINITY, best_v = -INFINITY;
        int at_t = 0, at_v = 0, above = 0;
    };
    auto peaksOf = [&](const std::function<double(std::size_t, bool)>& curve) {
        Peaks k;
        for (std::size_t i = 0; i < batches.size(); ++i) {
            const double ut = curve(i, true), uv = curve(i, false);
            if (ut > k.best_t) k.best_t = ut, k.at_t = batches[i];
            if (uv > k.best_v) k.best_v = uv, k.at_v = batches[i];
            k.above += ut > uv;
        }
        return k;
    };
    auto codePeaks = [&](int e) {
        return peaksOf([&, e](std::size_t i, bool t) { return codeFig7(i, t ? 0 : 1, e); });
    };
    // The other reading of Fig. 7's unit (rule 11): the mean per task type, then over the
    // types, as their Fig. 5 scores (Kairos reads Fig. 7 per task: no script of theirs
    // computes it, and "utility" there is in TUF units, not a share of the maximum).
    const auto typeUtility = figureOf([](const AuthorsMetric& m) { return m.all.utility; });
    const Peaks type_peaks =
        peaksOf([&](std::size_t i, bool t) { return typeUtility(f7[3 * i + (t ? 0 : 1)], 0); });
    const Peaks kairos_peaks = peaksOf([&](std::size_t i, bool t) { return fig7At(full, i, t); });
    const EteModel ete(prof.ete);

    const std::string kairos_setting =
        "Llama3-8B on one RTX 4090 as the paper, by a derived profile (" + prof.provenance + "; " +
        std::to_string(lim.kv_capacity_tokens) + " KV tokens); TypeFly's " +
        std::to_string(kSystemPrompt) +
        "-token system prompt cached (prefix caching, the paper's stored context); task texts "
        "and plans in Llama 3 tokens (" +
        llama3::tokenizerName() +
        "; a plan is its count plus EOS), cut into segments by the authors' stop rule; "
        "robot-arm tasks with the normal TUF (section 7.1); TimelyLLM with the paper's WCET "
        "batching (max segment 10 "
        "tokens) and G = 90 ms; utility = TUF of the first response W(s0), negative past the "
        "cut-off. No 8 ms network delay is added";
    const std::string setting =
        "the authors' code's arms as their harness runs them (sched/timely_code.h: one task "
        "added per engine step, rtllm's token-rate admission, priority, load shedding, segments "
        "re-queued; lmax 10 and 90 ms for drones, 20 and 160 ms for the arm) on vLLM 0.5 "
        "without chunked prefill (--engine-rules vllm-v0), max_num_seqs 8, "
        "gpu_memory_utilization 0.8 of the 4090's 24 GB (" +
        std::to_string(code_lim.kv_capacity_tokens) +
        " KV tokens), prefix caching on, 16-token blocks; Llama3-8B on one RTX 4090 by a derived "
        "profile (" +
        prof.provenance +
        "); the authors' metric (their resdata.py: response = the robot's first start - "
        "arrival, the TUF without floor, the first 10 tasks skipped, tasks never started not "
        "scored, a mean per task type then over the class's types)";
    Table t({"workload", "policy", "urgent %", "normal %", "all %", "summed %", "mean W(s0) s",
             "waiting s", "completion s"});
    for (std::size_t k = 0; k < ws.size(); ++k)
        for (const auto& p : pols) {
            const Summary& s = at(full, k, p);
            const auto* all = cls(s, "all");
            t.add({ws[k].name, p == "fcfs" ? "vLLM (fcfs)" : p, fixed(pct(s, "urgent"), 1),
                   fixed(pct(s, "normal"), 1), fixed(pct(s, "all"), 1),
                   all ? fixed(all->segmentUtilityPercent(), 1) : "-",
                   all ? fixed(all->mean_response, 3) : "-", fixed(waiting(s), 3),
                   all ? fixed(all->mean_completion, 2) : "-"});
        }
    rep.details += "TimelyLLM as Kairos reads the paper (sched/timely.h; not what the claims are "
                   "judged on): first-response utility (% of the maximum) per class; 'summed' is "
                   "Kairos's utility summed over segments (" +
                   kairos_setting + ")\n" + t.str();
    {
        Table ct({"workload", "arm", "urgent %", "normal %", "utility / task", "waiting ms",
                  "scored", "dropped", "urgent % (V1)", "normal % (V1)"});
        struct Shown {
            std::size_t k, first;
            const char* label;
        };
        for (const Shown& s :
             {Shown{0, w1_timely, "TimelyLLM (rtllm)"}, Shown{0, w1_vllm, "vLLM"},
              Shown{2, w2_timely, "TimelyLLM (rtllm)"}, Shown{2, w2_vllm, "vLLM"},
              Shown{2, f8_timely, "rtllm-fixed 6 *"}, Shown{2, f8_edf, "EDF fixed 6 *"},
              Shown{2, f8_fcfs, "FCFS fixed 6 *"},
              Shown{3, arm_timely, "TimelyLLM (rtllm, fltrnn)"}, Shown{3, arm_vllm, "vLLM"},
              Shown{3, arm_fcfs, "FCFS fixed 8"}}) {
            const AuthorsMetric* m = code(s.first, 0);
            if (!m) continue;
            ct.add({ws[s.k].name, s.label, fixed(m->urgent.utility_pct, 1),
                    fixed(m->normal.utility_pct, 1), fixed(m->task_utility, 3),
                    fixed(1e3 * m->all.waiting_s, 0), std::to_string(m->all.scored),
                    std::to_string(m->all.dropped), fixed(urgentPct(s.first, 1), 1),
                    fixed(normalPct(s.first, 1), 1)});
        }
        rep.details += "\n  The claims' runs: the authors' code's arms, their metric (* their "
                       "ablation script's: every task, pooled); V1: a port to vLLM V1 with chunked "
                       "prefill (a third party's, for comparison)\n" +
                       ct.str();
    }
    // TimelyLLM as Kairos reads it against its three variants, per workload.
    struct Variants {
        const Summary *main, *literal, *fixed, *free_joins;
    };
    auto variantsOf = [&](std::size_t k) {
        const std::size_t j = variants_at[k / 2];
        return Variants{&at(full, k, "timely"), &res[j].summary, &res[j + 1].summary,
                        &res[j + 2].summary};
    };
    {
        Table lt({"workload", "urgent %: as run / Eq. 4 literal / fixed batch / free joins",
                  "all %: as run / Eq. 4 literal / fixed batch / free joins"});
        for (std::size_t k : {std::size_t(0), std::size_t(2)}) {
            const Variants v = variantsOf(k);
            auto three = [&](const char* c) {
                return fixed(pct(*v.main, c), 1) + " / " + fixed(pct(*v.literal, c), 1) + " / " +
                       fixed(pct(*v.fixed, c), 1) + " / " + fixed(pct(*v.free_joins, c), 1);
            };
            lt.add({ws[k].name, three("urgent"), three("all")});
        }
        rep.details += "\n  Kairos's reading's variants: PUD as Kairos reads Eq. 4 (L >= 1 ms, "
                       "TUF >= 0) with the WCET batching, as run above; Eq. 4 as written "
                       "(literal_eq4=1); a fixed batch (adaptive_batch=0); the WCET batching "
                       "with joins not serialised (wcet_serial=0)\n" +
                       lt.str();
    }

    // One row: the figure on the code's arms (engine 0), the same on V1 (engine 1, compared
    // only), and beside its cause what Kairos's reading of the paper gives.
    const Band tenth = Band::measured(0.05), change = Band::measured(0.5, 0),
               ratio = Band::measured(0.005, 1);
    auto row = [&](std::string what, const nlohmann::json& paper,
                   const std::function<double(int)>& figure, std::string unit, std::string where,
                   Band band, const std::string& kairos_reads) -> Claim& {
        Claim c = makeClaim("timely", std::move(what), paper, figure(0), unit, std::move(where));
        c.band = band;
        c.cause = "for comparison, not a cause: Kairos's own reading of the paper (policy timely, "
                  "sched/timely.h) gives " +
                  kairos_reads + " on seed " + std::to_string(opt.seed);
        c.compared["vllm_v1_chunked"] = figure(1);
        c.device_readings = {
            {"the card's level " + fixed(100 * level_half, 1) + " % lower (faster)", figure(2)},
            {"the card's level " + fixed(100 * level_half, 1) + " % higher (slower)", figure(3)},
            {"the card's growth with the batch as " + flattest->card + "'s (each added request " +
                 fixed(100 * flattest->share, 1) + " % of a batch-1 step, the A100's " +
                 fixed(100 * own_share, 1) + " %)",
             figure(4)},
            {"the card's growth with the batch as " + steepest->card + "'s (" +
                 fixed(100 * steepest->share, 1) + " %)",
             figure(5)}};
        rep.claims.push_back(std::move(c));
        return rep.claims.back();
    };
    // A gain over a baseline needs room: the utility is at most 100 % of the maximum, so
    // where the baseline already scores B %, no order reaches more than 100 / B times it.
    auto needsRoom = [&](Claim& c, double paper_ratio, double baseline_pct) {
        c.premises.push_back(
            {"the highest ratio any order can reach over the baseline (100 / its % of the "
             "maximum)",
             baseline_pct > 0 ? 100.0 / baseline_pct : INFINITY, paper_ratio,
             "the paper's gain needs the contention that cost its baseline utility, which "
             "this setting lacks"});
    };
    // A level measured under contention (TimelyLLM's utility while vLLM loses much of its
    // own) is tested only where the setting contends as the paper's did: vLLM's loss here
    // (1 - its share of the reference) at least half the paper's.
    auto needsContention = [&](Claim& c, double vllm_share_here, double vllm_share_paper) {
        c.premises.push_back(
            {"vLLM's loss of utility here over the paper's vLLM's loss",
             (1 - vllm_share_here) / (1 - vllm_share_paper), 0.5,
             "TimelyLLM's figure was measured under the contention that cost the paper's vLLM "
             "its utility; where vLLM loses far less, that figure is not tested here (the vLLM "
             "row carries the measured cause)"});
    };
    // Figure 5(a): WID1, the authors' own sample of it.
    {
        // A file, not a draw: every seed runs the same tasks (a zero-width interval).
        const std::string where =
            ws[0].name + " (a fixed file: every seed runs it alike); " + setting;
        const std::string quote =
            "seeds/001 (TimelyLLM), 7.2: \"our method achieves the maximum utility for normal "
            "tasks, and 81.5% of the maximum time utility for urgent tasks, whereas the baseline "
            "vLLM achieves only 59.5% of the maximum time utility for urgent tasks\"";
        // (Each row's fields are set before the next row: a later push_back may move it.)
        const std::string origin = precisionOrigin("one decimal: +-0.05 points");
        const double vllm_urgent = urgentPct(w1_vllm, 0);
        Claim& tu = row(
            "TimelyLLM urgent utility, WID1 (Fig. 5a)", 81.5,
            [&](int e) { return urgentPct(w1_timely, e); }, "% of max", where, tenth,
            fixed(pct(at(full, 0, "timely"), "urgent"), 1) +
                " % (vLLM: " + fixed(pct(at(full, 0, "fcfs"), "urgent"), 1) + " %)");
        tu.quote = quote;
        tu.band_origin = origin;
        needsContention(tu, vllm_urgent / 100, 0.595);
        // The host overheads the paper measured and the code's arms leave out.
        const double with_low = urgentPct(w1_overheads, 0),
                     with_high = urgentPct(w1_overheads + 1, 0);
        tu.compared["with_paper_overheads_low"] = with_low;
        tu.compared["with_paper_overheads_high"] = with_high;
        tu.cause += "; with the host overheads the paper measured and this model leaves out "
                    "(Table 4's segmented generation, " +
                    fixed(table4, 1) + " ms a plan over a WID1 plan's " + fixed(plan_segments, 2) +
                    " segments, on each segment's prefill; Table 5's scheduling, 0.58 ms at one "
                    "queued task to 2.03 ms at eight, on every engine step) TimelyLLM's urgent "
                    "utility is " +
                    fixed(with_low, 1) + " % (0.58 ms) and " + fixed(with_high, 1) +
                    " % (2.03 ms), of " + fixed(urgentPct(w1_timely, 0), 1) +
                    " % without: they close " + fixed(urgentPct(w1_timely, 0) - with_high, 1) +
                    " of the " + fixed(urgentPct(w1_timely, 0) - 81.5, 1) +
                    " points to the paper's 81.5 %";
        const double with_net = urgentPct(w1_network, 0), with_both = urgentPct(w1_network + 1, 0);
        tu.compared["with_paper_network_8ms"] = with_net;
        tu.compared["with_paper_network_and_overheads"] = with_both;
        tu.cause += "; with the 8 ms network latency the paper simulated before each segment's "
                    "execution (7.2), which the code's virtual executor leaves out, " +
                    fixed(with_net, 1) + " %, and with both " + fixed(with_both, 1) +
                    " %: the paper's setting as far as its text states it closes " +
                    fixed(urgentPct(w1_timely, 0) - with_both, 1) + " points";
        Claim& v = row(
            "vLLM urgent utility, WID1 (Fig. 5a)", 59.5,
            [&](int e) { return urgentPct(w1_vllm, e); }, "% of max", where, tenth,
            fixed(pct(at(full, 0, "fcfs"), "urgent"), 1) + " %");
        v.quote = quote;
        v.band_origin = origin;
        Claim& n = row(
            "TimelyLLM normal utility, WID1 (Fig. 5a: the maximum)", 100.0,
            [&](int e) { return normalPct(w1_timely, e); }, "% of max", where, Band::absolute(5),
            fixed(pct(at(full, 0, "timely"), "normal"), 1) + " %");
        n.quote = quote;
        n.band_origin = "Kairos's reading of 'the maximum' (at least 95 %)";
        n.null_model = "the code's vLLM arm in TimelyLLM's place";
        n.null_value = normalPct(w1_vllm, 0);
        needsContention(n, vllm_urgent / 100, 0.595);
    }
    // Figure 5(d): WID2, heavy contention.
    {
        // The authors' improvement (performance_compare_vllm.py print_stats): the difference
        // over the baseline's magnitude, defined for a negative baseline too.
        auto gain = [&](int e) {
            const double v = urgentPct(w2_vllm, e);
            return 100 * (urgentPct(w2_timely, e) - v) / std::abs(v);
        };
        const double u_f = urgentPct(w2_vllm, 0);
        Claim& c = row(
            "urgent utility gain over vLLM, WID2 (Fig. 5d)", 191.0, gain, "%",
            ws[2].name + "; " + setting, change,
            fixed(100 * (pct(at(full, 2, "timely"), "urgent") / pct(at(full, 2, "fcfs"), "urgent") -
                         1),
                  1) +
                " %");
        c.quote = "seeds/001 (TimelyLLM), 7.2: \"our method still improves the average time "
                  "utility of urgent tasks (5-8) by 191% relative to the baseline\"";
        c.band_origin = precisionOrigin("a whole percent: +-0.5");
        // The other reading of "by 191 % relative to", as Fig. 8's rows carry theirs: 191 %
        // of the baseline, a gain of 91 % (rule 11; an outside audit).
        c.paper_readings.push_back(
            {"'by 191% relative to the baseline' read as 191 % of it: a gain of 91 %", 91.0});
        c.compared["timely_urgent_pct"] = urgentPct(w2_timely, 0);
        c.compared["vllm_urgent_pct"] = u_f;
        c.compared["difference"] = urgentPct(w2_timely, 0) - u_f; // in points of the maximum
        // The paper's +191 % is a ratio to a vLLM that kept about a third of TimelyLLM's
        // urgent utility (1 / 2.91), and a ratio to a vLLM near zero is large whatever the
        // order. A premise on vLLM over TimelyLLM would be the figure itself (2.91 / (1 +
        // gain): an outside audit), ruling out large gains only: the only premise is on the
        // baseline alone (room for the paper's ratio), and the derived card's uncertainty
        // (rule 13) and the difference in points (compared) say the rest.
        needsRoom(c, 2.91, u_f);
    }
    // Figure 8: the scheduling ablation (exp743: rtllm-fixed, EDF and FCFS at batch 6 on their
    // high workload, WID2), scored as their ablation script scores it.
    {
        const std::string where = ws[2].name + "; batch 6 (exp743); " + setting +
                                  "; as their ablation script scores (every task, pooled)";
        for (const bool fcfs : {true, false}) {
            const std::size_t other = fcfs ? f8_fcfs : f8_edf, stand_in = fcfs ? f8_edf : f8_fcfs;
            const char* kairos_other = fcfs ? "seg_fcfs" : "seg_edf";
            Claim& c = row(
                fcfs ? "urgent utility TimelyLLM / segmented FCFS (Fig. 8: 183 %)"
                     : "urgent utility TimelyLLM / segmented EDF (Fig. 8: 142 %)",
                fcfs ? 1.83 : 1.42,
                [&, other](int e) {
                    // (A ratio of utilities at or below zero says nothing: NaN, as judge()'s
                    // rule 4 treats the row's own.)
                    const double n = urgentPct(f8_timely, e), d = urgentPct(other, e);
                    return n > 0 && d > 0 ? n / d : std::nan("");
                },
                "x", where, ratio,
                fixed(pct(at(full, 2, "timely"), "urgent") /
                          pct(at(full, 2, kairos_other), "urgent"),
                      2) +
                    "x");
            c.ratio(urgentPct(f8_timely, 0), urgentPct(other, 0));
            c.quote = "seeds/001 (TimelyLLM), 7.3.2: \"TIMELYLLM achieves better time utility "
                      "for urgent tasks (183% relative to FCFS and 142% relative to EDF)\"";
            c.band_origin = precisionOrigin("a whole percent of the ratio: +-0.005");
            needsRoom(c, fcfs ? 1.83 : 1.42, urgentPct(other, 0));
            // The null model: the other order in TimelyLLM's place (does any order of
            // segments reach the ratio, without TimelyLLM's priorities?).
            c.null_model =
                std::string("the code's ") + (fcfs ? "EDF" : "FCFS") + " arm in TimelyLLM's place";
            c.null_value = urgentPct(stand_in, 0) / urgentPct(other, 0);
            // "183 % relative to FCFS" as a ratio (1.83) or as an increase (2.83), as 7.2 reads
            // "by 191 % relative to" (the WID2 row); their ablation script only plots the
            // utilities (fig_plot/ablation_study_sched.py), so the text is all there is.
            c.paper_readings.push_back(
                {std::string("'") + (fcfs ? "183 % relative to FCFS" : "142 % relative to EDF") +
                     "' read as an increase, not a ratio",
                 fcfs ? 2.83 : 2.42});
        }
    }
    // Figure 7: utility (mean per task, the figure's unit) against a fixed batch size.
    {
        Table ft({"max batch", "TimelyLLM (code)", "vLLM (code)", "seg. FCFS (code)",
                  "TimelyLLM (V1)", "vLLM (V1)", "TimelyLLM (Kairos)", "vLLM (Kairos)"});
        for (std::size_t i = 0; i < batches.size(); ++i)
            ft.add({std::to_string(batches[i]), fixed(codeFig7(i, 0, 0), 3),
                    fixed(codeFig7(i, 1, 0), 3), fixed(codeFig7(i, 2, 0), 3),
                    fixed(codeFig7(i, 0, 1), 3), fixed(codeFig7(i, 1, 1), 3),
                    fixed(fig7At(full, i, true), 3), fixed(fig7At(full, i, false), 3)});
        rep.details += "\n  Fig. 7: mean utility per task (every scored task), " + ws[2].name +
                       ", a fixed batch of n with n seats (the code's rtllm-fixed; vLLM capped "
                       "at n seats)\n" +
                       ft.str();
        const std::string where =
            ws[2].name + "; fixed batch sizes " + std::to_string(batches.front()) + "-" +
            std::to_string(batches.back()) + ", max_num_seqs = n in place of 8; " + setting +
            "; except that Fig. 7's figure is the utility per task over every scored task (no "
            "script of theirs computes it), not per type";
        const std::string fig7_quote =
            "seeds/001 (TimelyLLM), 7.3.1: \"Upon reaching a batch size of 6, TIMELYLLM achieves "
            "its highest utility at 1.21, whereas vLLM reaches its peak utility of 0.74 at a "
            "batch size of 12 ... Overall, TIMELYLLM consistently outperforms vLLM across all "
            "tested batch sizes\"";
        for (const bool timely : {true, false}) {
            Claim& c = row(
                timely ? "TimelyLLM peak utility over fixed batch sizes (Fig. 7)"
                       : "vLLM peak utility over fixed batch sizes (Fig. 7)",
                timely ? 1.21 : 0.74,
                [&, timely](int e) {
                    const Peaks k = codePeaks(e);
                    return timely ? k.best_t : k.best_v;
                },
                "per task", where, Band::measured(0.005),
                fixed(timely ? kairos_peaks.best_t : kairos_peaks.best_v, 3));
            c.quote = fig7_quote;
            c.band_origin = precisionOrigin("two decimals: +-0.005");
            c.readings.push_back({"Fig. 7's utility a mean per task type, then over the types "
                                  "(their Fig. 5's unit), not per task",
                                  timely ? type_peaks.best_t : type_peaks.best_v});
            if (timely) {
                const Peaks k = codePeaks(0);
                needsContention(c, k.best_v / k.best_t, 0.74 / 1.21);
                // Not the card (an outside audit asked): its level's ends and the flattest and
                // steepest growth with the batch of the measured cards all leave the peak
                // above the paper's; what is left is the workload.
                double lo = INFINITY, hi = -INFINITY;
                for (int e : {0, 2, 3, 4, 5}) {
                    lo = std::min(lo, codePeaks(e).best_t);
                    hi = std::max(hi, codePeaks(e).best_t);
                }
                c.cause = "not the card: at its level's 95 % ends and with the flattest and the "
                          "steepest growth with the batch of the cards LLM-Inference-Bench "
                          "measured, TimelyLLM's peak is " +
                          fixed(lo, 3) + " to " + fixed(hi, 3) + " on seed " +
                          std::to_string(opt.seed) +
                          " (the paper's 1.21); what is left is the workload, a generated "
                          "WID2-like one (the authors' WID2 file is not here) with its plan "
                          "lengths and urgent share, and the plans' own text. " +
                          c.cause;
            }
        }
        // Where a peak sits is a claim only where the curve has one: its prominence, how far
        // the maximum stands above every point more than one grid step from it (a share of
        // the maximum). A flat curve's argmax is noise.
        auto prominence = [&](bool timely) {
            const Peaks k = codePeaks(0);
            const int at_peak = timely ? k.at_t : k.at_v;
            const double best = timely ? k.best_t : k.best_v;
            const auto ip =
                std::size_t(std::find(batches.begin(), batches.end(), at_peak) - batches.begin());
            double rest = -INFINITY;
            for (std::size_t i = 0; i < batches.size(); ++i)
                if (i + 1 < ip || i > ip + 1) rest = std::max(rest, codeFig7(i, timely ? 0 : 1, 0));
            return best > 0 ? (best - rest) / best : 0.0;
        };
        for (const bool timely : {true, false}) {
            const int paper_batch = timely ? 6 : 12;
            Claim& c = row(
                timely ? "batch size of TimelyLLM's peak (Fig. 7)"
                       : "batch size of vLLM's peak (Fig. 7)",
                double(paper_batch),
                [&, timely](int e) {
                    const Peaks k = codePeaks(e);
                    return double(timely ? k.at_t : k.at_v);
                },
                "requests", where, Band::absolute(2),
                std::to_string(timely ? kairos_peaks.at_t : kairos_peaks.at_v));
            c.quote = fig7_quote;
            c.band_origin = "the next grid point either side (the paper does not give its grid; "
                            "Kairos's steps by 2 from 2 to 16)";
            c.premises.push_back(
                {"the peak's prominence (how far the maximum stands above every point more than "
                 "one grid step from it, a share of the maximum)",
                 prominence(timely), 0.01,
                 "a curve flatter than that does not place a peak: its argmax is noise"});
            // The null model: where the code's segmented FCFS peaks on the same engine (is the
            // place the engine's, whatever the order?).
            {
                double best = -INFINITY;
                int at_best = 0;
                for (std::size_t i = 0; i < batches.size(); ++i)
                    if (codeFig7(i, 2, 0) > best) best = codeFig7(i, 2, 0), at_best = batches[i];
                c.null_model = "where the code's segmented FCFS peaks (the same engine, another "
                               "order)";
                c.null_value = double(at_best);
            }
            // What a larger batch costs here: the derived profile's decode step at the
            // paper's peak and at the largest batch tried, for ~1,400-token contexts.
            auto step = [&](int n) { return ete.decodeTime(n, std::int64_t(n) * 1400); };
            c.cause += "; the derived profile's decode step grows from " + fixed(1e3 * step(1), 1) +
                       " ms at batch 1 to " + fixed(1e3 * step(paper_batch), 1) + " ms at " +
                       std::to_string(paper_batch) + " and " + fixed(1e3 * step(16), 1) +
                       " ms at 16 (+" + fixed(100 * (step(16) / step(1) - 1), 0) +
                       " %: the A100's shape, scaled; how the paper's 4090 grows with the batch "
                       "is not known, and a flatter growth favours larger batches)";
        }
        Claim& all = row(
            "share of batch sizes where TimelyLLM beats vLLM (Fig. 7: all)", 1.0,
            [&](int e) { return double(codePeaks(e).above) / double(batches.size()); }, "fraction",
            where, Band::absolute(0),
            fixed(double(kairos_peaks.above) / double(batches.size()), 2));
        all.quote = fig7_quote;
        all.band_origin = "exact: the paper says all";
        {
            int seg_above = 0;
            for (std::size_t i = 0; i < batches.size(); ++i)
                seg_above += codeFig7(i, 2, 0) > codeFig7(i, 1, 0);
            all.null_model = "the code's segmented FCFS in TimelyLLM's place (any segmented order "
                             "against whole plans)";
            all.null_value = double(seg_above) / double(batches.size());
        }
    }
    // Figure 9 / abstract: the robot arm (WID3).
    {
        const std::string where = ws[3].name + " (robot arm, longer plans); " + setting;
        const double uf = taskUtility(arm_vllm, 0), ut = taskUtility(arm_timely, 0);
        Claim& c = row(
            "utility TimelyLLM / vLLM, arm task (abstract: up to 1.97x)", 1.97,
            [&](int e) { return taskUtility(arm_timely, e) / taskUtility(arm_vllm, e); }, "x",
            where, ratio,
            fixed(meanUtility(at(full, 3, "timely"), "all") /
                      meanUtility(at(full, 3, "fcfs"), "all"),
                  2) +
                "x");
        c.ratio(ut, uf);
        // The paper's figure is its best task's ('Desk Clean', trace id 10), which a mean over
        // generated arm tasks cannot stand for: best case against best case needs the arm
        // traces (ids 9-11), which ../shared/data does not hold. Both readings of the figure
        // (a ratio, the abstract's "up to 1.97x"; a difference, 7.4.1's "by 1.97") are given
        // for the mean.
        c.compared["difference"] = ut - uf;
        c.quote = "seeds/001 (TimelyLLM), abstract: \"improves the time utility up to 1.97x\"; "
                  "7.4.1: \"For the best case ('Desk Clean' task), TIMELYLLM increases utility by "
                  "1.97 and reduces waiting time by 84% compared to vLLM\"";
        c.band_origin = precisionOrigin("two decimals: +-0.005");
        c.not_comparable =
            "the paper's figure is its best task ('Desk Clean'); the robot-arm traces (ids "
            "9-11) are not in ../shared/data, so Kairos's arm tasks are generated (about 100-"
            "token plans, 2-4 objects moved, one segment per skill: no plan text to cut) and "
            "only their mean is measured; read as a ratio it is one to a negative vLLM utility "
            "(no gain), read as 7.4.1's difference it is compared.difference (seed " +
            std::to_string(opt.seed) + ": TimelyLLM / vLLM = " + fixed(ut / uf, 2) +
            "x, TimelyLLM - vLLM = " + fixed(ut - uf, 2) + " per task)";
        Claim& w = row(
            "change of waiting time vs vLLM, arm task (abstract: -84 %)", -84.0,
            [&](int e) { return 100 * (waitingOf(arm_timely, e) / waitingOf(arm_vllm, e) - 1); },
            "%", where, change,
            fixed(100 * (waiting(at(full, 3, "timely")) / waiting(at(full, 3, "fcfs")) - 1), 1) +
                " %");
        // Two readings in the paper: the abstract's "overall" waiting time, and 7.4.1's best
        // task. Kairos's figure is the overall (all tasks') waiting time.
        w.quote = "seeds/001 (TimelyLLM), abstract: \"reduces the overall waiting time by 84%\"; "
                  "7.4.1: \"For the best case ('Desk Clean' task), TIMELYLLM ... reduces waiting "
                  "time by 84%\" (Kairos's figure: all tasks, the abstract's reading)";
        w.band_origin = precisionOrigin("a whole percent: +-0.5");
        w.null_model = "the code's segmented FCFS (batch 8) in TimelyLLM's place (does any "
                       "segmented order reach it?)";
        w.null_value = 100 * (waitingOf(arm_fcfs, 0) / waitingOf(arm_vllm, 0) - 1);
    }
    for (Claim& c : rep.claims)
        if (c.claim.find("WID1") == std::string::npos)
            c.substitutes.push_back(
                {"the authors' WID2 and WID3 workloads and robot-arm traces (ids 9-11)",
                 "WID2- and WID3-like workloads generated from the drone traces, with Kairos's "
                 "arm tasks"});
    // The derived profile against the paper's own timings of its machine: calibrated.
    {
        const PlanTimes& pt = plan_fit;
        Claim c = makeClaim("timely",
                            "derived RTX 4090 profile: mean plan time of the drone traces, alone",
                            1e3 * pt.measured_mean, 1e3 * pt.predicted_mean, "ms", prof.provenance);
        c.band = Band::relative(0.05);
        c.calibrated = true;
        c.quote = "../shared/data/timelyllm/timelyllm_plan_times.csv: the authors' measured "
                  "plan-generation times (MarkoMile/TimelyLLM dataset/), matched to the drone "
                  "trace set by index (the profile's level is set from these)";
        c.band_origin = "a check of the calibration (5 %), not evidence";
        c.paper_value_source = "the authors' measurements (timelyllm_plan_times.csv), not the "
                               "paper's text";
        rep.claims.push_back(std::move(c));
    }
    rep.details += "\n";
    restOn(rep.claims, 0,
           {{"Llama3-8B measured on the authors' RTX 4090 at each batch size",
             "a derived RTX 4090 profile: its level from the authors' plan times, its decode "
             "step's growth with the batch from A100 rows"}});
    {
        // The code's arms on the main workload, on the profile of their real runs.
        const DeviceProfile code_prof = opt.profile(opt.timely_profile);
        CodeArms arms = runCodeArms(ws[0].w, types[0], code_prof, ws[0].name);
        rep.systems = std::move(arms.systems);
        rep.details += arms.table;
    }
    return rep;
}

} // namespace kairos::repro
