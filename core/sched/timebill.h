#pragma once
// TimeBill (ARCHITECTURE.md, The papers): per-request time budgets. At admission each
// request gets the smallest KV eviction ratio alpha that makes its pessimistic worst-case
// execution time fit what is left of its budget:
//   N_W = min(k * N_hat, N_max)                      (pessimism factor k >= 1)
//   WCET(alpha) = t_prefill(N_x) + sum_{i=1}^{N_W - 1} [p((1 - alpha) N_x + i - 1) + q]
//   alpha* = min(alpha_max, 1 - (T - t_prefill - t_pred) / (p N_x (N_W - 1))
//                           + (N_W - 2) / (2 N_x) + q / (p N_x)),  clamped at 0.
// (The seed's text prints the middle term as (N_W - 2)/(2 p N_x); solving WCET = T for
// alpha gives (N_W - 2)/(2 N_x), as the paper's formula has it; tests check it numerically.)
// Overrun strategies: Kill (a request still running at its deadline is dropped, its
// response empty) and Skip-next (it runs on; requests released while it overruns are
// skipped, as the job releases of a real-time task that fall inside an overrun). Fixed-
// alpha baselines set `fixed_alpha`.
// Beyond the paper, which serves one request at a time: here requests share the engine,
// so by default the per-step time q includes the batch a request joins (q0 + q1 (B + 1)
// + p * KV of the others), the budget left is what remains after queueing, and `auto_k`
// adapts k to the observed ratio of true to predicted lengths (a high quantile over the
// last finished requests).
#include "predict/predictor.h"
#include "sched/scheduler.h"

#include <deque>
#include <memory>

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kTimeBillAdmit;
extern const RuleId kTimeBillAlpha;
extern const RuleId kTimeBillFixed;
extern const RuleId kTimeBillKill;
extern const RuleId kTimeBillSkip;
} // namespace rules

// TimeBill's single-request ETE: prefill a N^2 + b N + c, decode step p N_kv + q.
struct EteSingle {
    double a = 0, b = 0, c = 0; // prefill
    double p = 0, q = 0;        // decode step
    double prefill(double n_x) const { return a * n_x * n_x + b * n_x + c; }
    // With the first `cached` tokens from a prefix cache: only the rest is computed, its
    // attention still covering them.
    double prefill(double n_x, double cached) const {
        return cached > 0 ? a * (n_x * n_x - cached * cached) + b * (n_x - cached) + c
                          : prefill(n_x);
    }
};
// `cached`: prompt tokens a prefix cache serves (not prefilled).
double timebillWcet(const EteSingle& e, double n_x, double n_w, double alpha, double cached = 0);
double timebillAlpha(const EteSingle& e, double n_x, double n_w, double budget, double t_predict,
                     double alpha_max, double cached = 0);

struct TimeBillOptions {
    double k = 5; // the paper's best pessimism factor
    double alpha_max = 0.95;
    int n_max = 8192;
    double t_predict = 0;    // predictor latency (0: it runs beside the prefill)
    bool kill = true;        // false: Skip-next
    double fixed_alpha = -1; // >= 0: a fixed-alpha baseline
    double default_budget = 5;
    bool batch_aware = true;
    bool auto_k = false;
    double auto_k_quantile = 0.95;
    int auto_k_window = 200;
    double k_max = 8;
    double watermark = 0.01;
};

class TimeBillScheduler final : public Scheduler {
public:
    TimeBillScheduler(TimeBillOptions o, std::shared_ptr<LengthPredictor> predictor);
    std::string name() const override;
    double kvWatermark() const override { return opt_.watermark; }
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    void onFinish(const EngineView& view, ReqId id) override;
    double currentK() const { return k_; }
    void inspect(const EngineView& view, ReqId id, Insight& out) const override;
    std::string keyName() const override;
    long skipped() const { return skipped_; }

private:
    double budgetOf(const Request& r) const {
        return r.budget_s ? *r.budget_s : opt_.default_budget;
    }
    TimeBillOptions opt_;
    std::shared_ptr<LengthPredictor> pred_;
    double k_;
    std::deque<double> ratios_;
    long skipped_ = 0;
    // Skip-next: periods in which some request ran past its deadline (end = +inf while
    // it still runs); a request released inside one is skipped.
    std::vector<std::pair<double, double>> overruns_;
    std::vector<std::pair<ReqId, std::size_t>> open_overruns_;
    std::vector<ReqId> overrun_req_; // who overran, per entry of overruns_
    // Explaining: alpha and the WCET it gives, per request admitted (NaN before).
    std::vector<double> alpha_, wcet_;
};

} // namespace kairos
