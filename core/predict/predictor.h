#pragma once
// Length predictors (simulation side). A predictor knows the true lengths (it is given
// the workload) and models what a real predictor would have said: exactly (oracle), with
// noise, in buckets, or refined while generating (Trail). The live engine plugs real
// predictors into the same interface.
#include "model/workload.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kairos {

class LengthPredictor {
public:
    virtual ~LengthPredictor() = default;
    virtual std::string name() const = 0;
    // Called once before a run; predictions are drawn here (seeded), so they do not depend
    // on the order in which a scheduler asks.
    virtual void reset(const Workload& w) = 0;
    // Predicted output length (tokens, >= 1) known at arrival, from the prompt.
    virtual double initial(ReqId id) const = 0;
    // Predicted tokens still to come after `generated` tokens (>= 1 while unfinished).
    // Default: the initial prediction minus what was generated, at least 1.
    virtual double remaining(ReqId id, int generated) const;
    // Whether remaining(id, g) is that default, max(1, initial(id) - g), for every g: a
    // scheduler may then compute it from the initial predictions. A predictor that
    // overrides remaining() says false (tst_policies checks every predictor that says true).
    virtual bool remainingFromInitial() const { return true; }
    // 0 when predictions change only at events (arrival, finish); k > 0 when they are
    // refined every k generated tokens (schedulers then re-rank that often).
    virtual int refreshEvery() const { return 0; }
    // The first token count g in (generated, limit] at which remaining(id, g) exceeds
    // `threshold`, or limit + 1 when there is none (the request finishing first counts as
    // none). Schedulers use it to run until a refined prediction can change a decision
    // instead of re-ranking every token. Default, for predictors that cannot see ahead
    // (a live model's head): the next refresh point, where the caller looks again.
    virtual int firstAbove(ReqId id, int generated, int limit, double threshold) const;
    // The memory (bytes) its state will hold over a run of `requests` requests generating
    // `output_tokens` tokens in all, for the run's memory estimate (run/memory_estimate.h).
    // Default: a prediction per request.
    virtual double memoryFor(double requests, double output_tokens) const {
        (void)output_tokens;
        return requests * 16;
    }
};

// Mean absolute error of the initial predictions over a workload (tokens).
double initialMae(const LengthPredictor& p, const Workload& w);

// The predictors makePredictor knows, as its grammar (for help texts and errors).
inline constexpr const char* kPredictorGrammar =
    "oracle, lognormal[:SIGMA], exponential, bucket[:B[,ACC[,NMAX]]], "
    "trail[:PROMPT_NOISE,TOKEN_NOISE[,EVERY[,BINS[,L_MAX]]]]";
// "oracle", "lognormal:SIGMA", "exponential", "bucket:B[,ACC[,NMAX]]", "trail[:...]" (Trail's
// refined predictions, predict/trail_predictor.h); `seed` makes the
// noisy ones reproducible. Throws std::invalid_argument.
std::unique_ptr<LengthPredictor> makePredictor(const std::string& spec, std::uint64_t seed);

} // namespace kairos
