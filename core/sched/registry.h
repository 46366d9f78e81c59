#pragma once
// Policies by name, with parameters by name ("--param watermark=0.02").
#include "predict/predictor.h"
#include "sched/scheduler.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kairos {

using PolicyParams = std::map<std::string, double>;

// Parses "key=value" items (value a number or "inf"); throws std::invalid_argument
// naming the bad item.
PolicyParams parsePolicyParams(const std::vector<std::string>& items);

struct PolicyConfig {
    std::string name = "fcfs";
    PolicyParams params;
    std::string predictor = "oracle"; // makePredictor spec, for policies that predict
    std::uint64_t seed = 0;           // for noisy predictors and randomised policies
    // When set, the predicting policies use this one (a live run's trained heads) and
    // `predictor` only names it.
    std::shared_ptr<LengthPredictor> predictor_instance;
};

// Throws std::invalid_argument for an unknown policy or parameter.
//   fcfs      watermark=0.01
//   sjf       watermark                      (shortest predicted job first)
//   sprpt_lp  C=0.8, watermark               (Trail)
//   sprpt     watermark                      (sprpt_lp with unlimited preemption)
//   edf       slack=10, preemptive=0, watermark
//   mcsf      (memory-constrained shortest first; uses the predictor)
//   protect_greedy    alpha=0.2, reset=0 (1: cleared requests start over, as in the paper;
//                     throws SchedulerLoop when that cycles for ever)
//   protect_clearing  alpha=0.2, beta=0.5 (coin flips seeded by `seed`), reset=0
//   timebill  k=5, alpha_max=0.95, n_max=8192, t_predict=0, skip_next=0 (Kill), alpha=-1
//             (>= 0: fixed-alpha baseline), budget=5 (for requests without one),
//             batch_aware=1, auto_k=0, quantile=0.95
//   timely, seg_fcfs, seg_edf, vllm_stream   segment_time=0.09 (0: from the ETE model),
//             max_segment=10, adaptive_batch=1 (the paper's WCET batching; 0: fixed batch
//             of max_num_seqs), gain_admission=0 (1: Kairos's utility-gain admission
//             instead of WCET batching), slack=10
//   optimal   (hindsight optimum of the discrete model: <= 8 requests, unit model; not in
//             policyNames(), which lists the policies that run on any workload)
std::unique_ptr<Scheduler> makeScheduler(const PolicyConfig& cfg);
std::unique_ptr<Scheduler> makeScheduler(const std::string& name, const PolicyParams& params = {});
std::vector<std::string> policyNames();

} // namespace kairos
