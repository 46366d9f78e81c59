#pragma once
// TimeBill's trade-off measured on a real model: how much an answer changes when a fraction
// alpha of its prompt's KV cache is evicted (SnapKV, as the live engine evicts) instead of
// assumed (the core's default curve q = 1 - alpha^2).
//
// For each prompt (an opening of a story the model itself samples, seeded, so the prompts
// are the model's kind of text) the full-cache answer is decoded greedily for `answer`
// tokens. Then, per alpha, the prompt is prefilled again, `alpha` of it evicted, and:
//   - agreement: the full-cache answer fed back token by token (teacher forcing), the
//     fraction of its tokens the evicted cache also ranks first: 1 at alpha = 0;
//   - log-likelihood: the mean log-probability (nats per token) of the full-cache answer
//     under the evicted cache;
//   - prefix: free-running greedy decoding from the evicted cache, the fraction of the
//     answer's tokens before the first one that differs.
// The quality curve is the agreement (in [0, 1], what `--quality A:Q,...` takes).
#include "transformer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kairos::gpu {

struct QualityOptions {
    int prompts = 32;        // prompts measured
    int prompt_tokens = 128; // tokens per prompt (BOS and the story's opening)
    int answer_tokens = 64;  // tokens per answer
    std::vector<double> alphas{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
    int snap_window = 8; // SnapKV: the prompt's last queries that score positions
    int snap_pool = 7;
    std::uint64_t seed = 1; // the prompts' sampling (temperature 1, top-p 0.9)
};

struct QualityPoint {
    double alpha = 0;
    double agreement = 0;      // teacher-forced top-1 agreement, mean over prompts
    double log_likelihood = 0; // nats per token of the full-cache answer, mean
    double prefix = 0;         // free-running common prefix / answer tokens, mean
};

struct QualityCurveMeasured {
    std::vector<QualityPoint> points;
    std::string curve() const; // "A:Q,..." from the agreement
};

// Openings of the model's own stories: BOS then tokens sampled at temperature 1, top-p
// 0.9 (seeded), `tokens` in all, for `count` prompts.
std::vector<std::vector<std::int64_t>> sampleOpenings(Transformer& m, int count, int tokens,
                                                      std::uint64_t seed);

QualityCurveMeasured measureQuality(Transformer& m, const QualityOptions& opt);

} // namespace kairos::gpu
