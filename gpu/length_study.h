#pragma once
// `kairos-cli lengths` without its command line: a workload run live while a collector
// records each request's prompt and generated tokens' embeddings; the samples split into
// training requests and held-out ones (the last by id); TimeBill's RLP and Trail's probe
// trained (the temper chosen on a validation split of the training requests when asked),
// evaluated against the baselines from the same data; the RLP alone at other bucket
// widths; with sampling, the same prompts answered again to give the best any predictor
// from the prompt alone could do. The study's report, as text and as JSON, is here too,
// so the command only reads its arguments, builds the model and writes the files.
#include "length_heads.h"
#include "model/run_log.h"
#include "sched/registry.h"
#include "sim/engine.h"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kairos::gpu {

// The collecting run: `w` run live under `policy` with `lim`, readings taken after
// `layer` layers every `every` tokens.
struct LengthCollection {
    std::vector<LengthSample> samples; // one per request, in id order
    RunLog log;
    long long iterations = 0;
    std::string device; // the backend's description
};
LengthCollection collectLengths(Transformer& m, const Workload& w, const LiveOptions& live,
                                const PolicyConfig& policy, const EngineLimits& lim, int layer,
                                int every);
// The output lengths of the requests `ids` when `w` is run live again with `live` (another
// sample seed, say).
std::vector<int> answerLengths(Transformer& m, const Workload& w, const LiveOptions& live,
                               const PolicyConfig& policy, const EngineLimits& lim,
                               const std::vector<ReqId>& ids);

// The requests held out of `n`: round(fraction * n). Throws std::invalid_argument unless
// the fraction is in (0, 1) and leaves at least one training and one held-out request.
std::size_t heldOutCount(std::size_t n, double fraction);

// The best a predictor from the prompt alone could do: each answer's error against the
// median of the lengths of the same prompt's other answers, averaged over all answers.
// `answers[i]`: the output lengths of prompt i's answers (at least 2 each; throws
// std::invalid_argument otherwise).
double bestFromPromptMae(const std::vector<std::vector<int>>& answers);

struct LengthStudyOptions {
    LengthHeadOptions heads; // layer set (>= 1)
    double test_fraction = 0.25;
    bool choose_temper = false;
    std::vector<int> bucket_sweep; // the RLP alone at these B
    int length_cue = 0;            // the synthetic task's bucket width: its floor (0: none)
};

// The RLP alone at one bucket width.
struct BucketResult {
    int bucket = 0, buckets = 0;
    double mae = 0, rmse = 0, r2 = 0, bucket_accuracy = 0;
};

struct LengthStudy {
    LengthHeadOptions options; // as trained (the temper chosen, if it was)
    std::size_t train_requests = 0;
    std::vector<ReqId> held_out;       // the held-out requests' ids
    std::vector<int> held_out_lengths; // and their output lengths
    double train_mean = 0;
    std::optional<TemperChoice> temper_choice;
    TrainLog train_log;
    std::optional<LengthHeads> heads;
    LengthEval eval;
    std::vector<BucketResult> bucket_sweep;
    double bucket_floor = 0;                // NaN without the synthetic task
    std::optional<double> best_from_prompt; // bestFromPromptMae over the held-out prompts
    int prompt_answers = 0;                 // answers per held-out prompt behind it
};
// Splits, trains and evaluates. `hidden`: the prompt features' width.
LengthStudy studyLengths(const std::vector<LengthSample>& samples, int hidden,
                         const LengthStudyOptions& o);

// The report, as `kairos-cli lengths` prints it (the temper line, when chosen, first).
std::string lengthStudyText(const LengthStudy& s);
// The evaluation as `--json` writes it; `model` names the served model.
nlohmann::json lengthStudyJson(const LengthStudy& s, const std::string& model);

} // namespace kairos::gpu
