#pragma once
// Policies that rank requests by one key and run the best-ranked ones:
//   sjf       shortest predicted job first, never preempts (Trail's SPJF baseline);
//   sprpt_lp  shortest predicted remaining processing time with limited preemption
//             (Trail): a running request may be preempted only while its age (tokens
//             generated) is below C times its initial prediction; C = 1 is plain SPRPT,
//             C = 0 never preempts (= sjf);
//   edf       earliest deadline first (deadline = arrival + budget, else + the TUF's
//             expected response time, else + `slack`), non-preemptive unless asked.
// Every decision ranks running, suspended and waiting requests together. Running
// requests that may be preempted and fall outside the top max_num_seqs are suspended
// with their KV kept; when a better-ranked waiting request needs KV that is not free,
// kept KV is released (suspended requests first, then the running ones being displaced,
// worst-ranked first) and those requests will recompute. Ties keep running requests.
#include "predict/predictor.h"
#include "sched/scheduler.h"

#include <cmath>
#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace kairos {

// The rules its reasons cite (model/explain.h).
namespace rules {
extern const RuleId kRankAdmit;
extern const RuleId kRankResume;
extern const RuleId kSprptSuspend;
extern const RuleId kSprptDrop;
extern const RuleId kSuspendedDrop;
} // namespace rules

struct PriorityOptions {
    enum class Key { PredictedRemaining, Deadline };
    Key key = Key::PredictedRemaining;
    double C = 0.0;          // preemption limit (sprpt_lp); 0: never preempt; inf: always may
    double watermark = 0.01; // as vLLM, see AdmissionBudget
    double slack = 10.0;     // EDF: deadline offset for requests without budget or TUF
    std::string policy = "sprpt_lp";
    // With refined predictions and nothing to preempt, run until the first token at which
    // a refined prediction could change a decision (the predictor reads ahead), not one
    // refresh period at a time. Off: re-rank after every token, the reference that tests
    // compare with (it changes no decision).
    bool look_ahead = true;
    // Where the engine has a decode clock (EngineView::decodeClock) and keys do not depend
    // on refined predictions, keep running requests in rank order between decisions
    // instead of reading and sorting every one at each (see ranked_). Off: the scan, the
    // reference that tests compare with (it changes no decision).
    bool clocked = true;
    // With refined predictions, keep the running requests that may still be preempted in a
    // list between decisions (see pre_) instead of reading every running request at every
    // decision. Off: the scan over every running request, the reference that tests compare
    // with (it changes no decision).
    bool tracked = true;
};

class PriorityScheduler final : public Scheduler {
public:
    PriorityScheduler(PriorityOptions o, std::shared_ptr<LengthPredictor> predictor);
    std::string name() const override;
    double kvWatermark() const override { return opt_.watermark; }
    void reset(const Workload& w) override;
    void schedule(const EngineView& view, Decision& out) override;
    ReqId overflowVictim(const EngineView& view) override;
    void onEnqueue(const EngineView& view, ReqId id) override;
    void onFinish(const EngineView& view, ReqId id) override;

    double key(const EngineView& view, ReqId id) const;
    bool preemptible(const EngineView& view, ReqId id) const;
    void inspect(const EngineView& view, ReqId id, Insight& out) const override;
    std::string keyName() const override;
    bool keyCountsDown() const override { return opt_.key != PriorityOptions::Key::Deadline; }
    bool runningStateVaries() const override {
        return opt_.key != PriorityOptions::Key::Deadline && pred_->refreshEvery() > 0;
    }
    RuleId overflowRule() const override { return RuleId::RankOverflow; }
    // Whether this run kept its running requests in order by the engine's decode clock
    // (PriorityOptions::clocked) rather than scanning them at every decision.
    bool clocked() const { return clocked_; }

private:
    // r of Trail's a < C*r: the initial prediction (EDF: the output length).
    double initialOf(ReqId id) const { return initial_[static_cast<std::size_t>(id)]; }
    static constexpr int kLookAhead = 64; // tokens lookAhead reads ahead at most
    // The iterations until a refined prediction can change a decision (see schedule()).
    // Reads preemptible_now_, which schedule() filled at this decision.
    std::int32_t lookAhead(const EngineView& view, double threshold);
    std::vector<std::pair<double, ReqId>> preemptible_now_; // (key, id), reused per decision
    // What lookAhead learnt of each request's refined key (refined predictors only): at every
    // token in [from, at) it is at or below T, and `at` is the first token in (from, to]
    // above T, or to + 1 when there is none. A refined prediction depends only on the
    // request and its token count, so this stays true for the run. A decision whose best
    // candidate ranks at or after T knows such a request is not movable without asking the
    // predictor, and when the threshold is T again (no admission since: most decisions
    // under load) lookAhead knows its answer; a higher threshold searches on from `at`.
    struct Crossing {
        double T = -INFINITY; // -inf: nothing known
        int from = 0, at = 0, to = 0;
    };
    std::vector<Crossing> crossing_;
    // firstAbove(id, generated, near, T) through crossing_.
    int firstAboveKnown(ReqId id, int generated, int near, double T);
    PriorityOptions opt_;
    std::shared_ptr<LengthPredictor> pred_;
    // Per request: r of Trail's a < C*r (initialOf), kept at reset: asked of every running
    // request at every decision (a million-request run asks 150 million times). When the
    // predictor's remaining() is r less what was generated (count_down_), keys are computed
    // from it too, without two virtual calls per running request per decision.
    std::vector<double> initial_;
    bool count_down_ = false;
    // Keys of running requests never rise (count_down_, or deadlines), and a request that
    // stops being preemptible never becomes so again: then the largest key of a
    // preemptible running request at the last scan, raised by every admission and
    // resumption since, bounds the keys of all preemptible running requests. While it ranks
    // at or before the best candidate no running request is movable, and schedule() skips
    // the scan of the running requests (nine decisions in ten on a saturated
    // million-request trace). +inf: unknown, scan.
    bool keys_fall_ = false;
    double running_bound_ = INFINITY;
    // key() and preemptible() of a state already looked up.
    double keyOf(const ReqState& s) const;
    bool preemptibleState(const ReqState& s) const {
        if (opt_.C <= 0) return false;
        if (std::isinf(opt_.C)) return true;
        return s.generated < opt_.C * initialOf(s.id);
    }
    // Waiting requests by (key, id): a binary min-heap (std::push_heap with std::greater),
    // whose only operations are the best entry, taking it and adding one; a red-black tree
    // of the 100,000s that queue on an overloaded trace cost a tenth of the run in cache
    // misses. Suspended requests by (key, id) in order (releasing kept KV walks them from
    // the worst). Entries of requests that moved on are dropped lazily.
    std::vector<std::pair<double, ReqId>> waiting_;
    std::set<std::pair<double, ReqId>> suspended_;
    // The best waiting entry whose request still waits (stale ones are dropped), or null;
    // taking it drops every copy of that (key, id) pair, as a set holds one.
    const std::pair<double, ReqId>* waitingFront(const EngineView& view);
    void takeWaitingFront();
    // Running requests in rank order, kept between decisions where the engine has a decode
    // clock D and keys are not refined (clocked_). A running request past its prefill gains
    // as many tokens as D between decisions, so its key less D (count_down_: initial less
    // generated less D) or its key (deadlines) stays constant: ranked_ holds (that anchor,
    // id), sorted, and the requests a decision may move, those ranked after its best
    // candidate, are the tail from a binary search, instead of a scan and a sort of every
    // running request at every decision (a third of sprpt_lp's time on an overloaded
    // 20,000-request trace). Requests taken in wait in unanchored_ until their prefill is
    // done (they are read at each decision till then); entries leave as their requests
    // finish, are preempted, suspended or stop being preemptible. anchor_[id]: the
    // request's anchor in ranked_, NaN when it has none.
    bool clocked_ = false;
    std::vector<std::pair<double, ReqId>> ranked_;
    std::vector<ReqId> unanchored_;
    std::vector<double> anchor_;
    std::vector<char> taken_; // per request: in unanchored_
    // The running requests that may still be preempted, where predictions are refined
    // (PriorityOptions::tracked): a request joins as it is admitted or resumed and leaves
    // when a scan meets it no longer running or no longer preemptible (its age only grows,
    // so one that stops being preemptible is never again while it runs). Under load most
    // running requests are past C times their prediction: the scan of a decision reads the
    // few that are not (at C = 0.3 on an overloaded 20,000-request trace, one in five)
    // instead of every seat. in_pre_[id]: the request is in pre_.
    bool tracked_ = false;
    std::vector<ReqId> pre_;
    std::vector<char> in_pre_;
    void takenIn(ReqId id); // admitted or resumed now
    void unrank(ReqId id);  // left the running requests
    void collectClocked(const EngineView& view, double best, std::int64_t D);
    // Buffers of schedule(), reused.
    struct Cand {
        double key;
        ReqId id;
    };
    static bool candBefore(const Cand& a, const Cand& b) {
        return a.key < b.key || (a.key == b.key && a.id < b.id);
    }
    std::vector<Cand> movable_;                          // ranked after the best candidate
    std::vector<char> dropped_, displaced_;              // per movable_ entry
    std::vector<std::pair<ReqId, double>> displaced_by_; // (who, its key) per movable_ entry
    bool gone(std::size_t j) const { return dropped_[j] || displaced_[j]; }

    // The steps of schedule(); Round is one decision's state (priority.cpp).
    struct Round;
    std::set<std::pair<double, ReqId>>::iterator suspendedFront(const EngineView& view);
    void collectMovable(const EngineView& view, double best, bool not_refined);
    void takeCandidates(Round& r);
    bool seatFor(Round& r, double k, ReqId for_id);
    void reclaim(Round& r, double k, ReqId for_id, std::int64_t need);
    void suspendDisplaced(Round& r);
    void setHold(Round& r, double best);
};

} // namespace kairos
