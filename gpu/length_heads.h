#pragma once
// Length predictors on the live model (PAPERS.md sections 1 and 3), in libtorch:
//
// - TimeBill's response length predictor (RLP): a classifier over buckets of B tokens,
//   trained with cross-entropy on (prompt, ceil(N / B)); N_hat = min(N_max, bucket * B).
//   TimeBill fine-tunes a whole small LM (Qwen2.5-0.5B) with a classification head. Here
//   the head (an MLP) sits on the served model itself, frozen: its input is the residual
//   stream after `layer` layers averaged over the prompt. Training the backbone is out of
//   reach on a CPU, and the head on a frozen model is what serving systems can afford to
//   refresh from their own traffic.
// - Trail's probe: a 2-layer MLP (hidden 512) reading an intermediate layer's embedding
//   of the newest token and giving probabilities over k equal bins of *remaining* length
//   in [0, L_max). Trail's prompt classifier (a BERT model there) is the RLP here: its
//   bucket probabilities, re-binned, start the posterior. The probe's outputs are smoothed across
//   tokens by the core's trailSmooth (Bayesian, with the transition p = min(1, k / L_max)). One
//   input beside the embedding: the age (generated / L_max). A trained LLM's embeddings carry where
//   in its answer it is; a synthetic-weights model's do not, and the age is known to any server
//   anyway.
//
// Training data comes from live runs: LengthCollector observes the engine (TokenObserver)
// and turns each finished request into a LengthSample. LivePredictor plugs trained heads
// into the schedulers (LengthPredictor): the RLP's or the probe's prompt reading at
// arrival (a partial forward of the prompt, on the wall clock like any other work), then,
// for Trail, a reading every `every` tokens from the engine's own decode steps.
//
// Heads are saved as safetensors (the core's writer) with their options in the metadata.
#include "live_engine.h"
#include "predict/predictor.h"

#include <ATen/ATen.h>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kairos::gpu {

struct LengthHeadOptions {
    int layer = 0;      // residual stream after this many layers: 1 .. layers, set by the caller
    int bucket = 16;    // TimeBill's B
    int n_max = 512;    // TimeBill's N_max: buckets = n_max / bucket
    int bins = 10;      // Trail's k
    double l_max = 512; // Trail's range of remaining length
    int every = 1;      // Trail's classifier period s (tokens)
    // The probe's outputs enter the smoothing raised to this power. 1 is Trail's rule,
    // which counts every reading as independent evidence; the readings of one answer are
    // not, and with a sure prompt prior they can pull it off (tempering, < 1, weighs
    // each less). Not in the paper.
    double temper = 1.0;
    int rlp_hidden = 256, probe_hidden = 512;
    int rlp_epochs = 300, probe_epochs = 30; // probe 0: the RLP alone (probe untrained)
    int batch = 64;
    double lr = 1e-3;
    std::uint64_t seed = 1;
    // Throws std::invalid_argument naming the bad field.
    void validate() const;
    int buckets() const { return n_max / bucket; }
};

// One finished request of a live run.
struct LengthSample {
    ReqId id = 0;
    int length = 0;                     // output tokens
    at::Tensor prompt;                  // [hidden]: the prompt's mean embedding
    std::map<int, at::Tensor> readings; // generated -> [hidden] (1 <= generated < length)
};

// The prompt's mean embedding after `layer` layers (the RLP's input).
at::Tensor promptFeature(Transformer& m, const std::vector<std::int64_t>& prompt, int layer);

// Collects readings during a live run; samples() adds the prompt features after it.
class LengthCollector final : public TokenObserver {
public:
    LengthCollector(int layer, int every) : layer_(layer), every_(every) {}
    int layer() const override { return layer_; }
    int every() const override { return every_; }
    void observe(ReqId id, int generated, const at::Tensor& h) override;
    // One sample per request of `w` (in id order); prompts from `backend`.
    std::vector<LengthSample> samples(Transformer& m, const TorchBackend& backend,
                                      const Workload& w) const;

private:
    int layer_, every_;
    std::map<ReqId, std::map<int, at::Tensor>> readings_;
};

struct TrainLog {
    double rlp_loss = 0, probe_loss = 0; // final epoch's mean cross-entropy
    int rlp_examples = 0, probe_examples = 0;
    double seconds = 0;
};

class LengthHeads {
public:
    // Trains both heads on `train` (prompt features of `hidden` floats).
    static LengthHeads train(const std::vector<LengthSample>& train, int hidden,
                             const LengthHeadOptions& o, TrainLog* log = nullptr);
    // Throws InputError naming the file when it is not a heads file or is inconsistent.
    static LengthHeads load(const std::string& path);
    // Atomic write; `meta` joins the options in the metadata.
    void save(const std::string& path, const std::map<std::string, std::string>& meta) const;

    LengthHeads(LengthHeads&&) noexcept;
    LengthHeads& operator=(LengthHeads&&) noexcept;
    ~LengthHeads();

    const LengthHeadOptions& options() const;
    int hidden() const;
    const std::map<std::string, std::string>& metadata() const; // as loaded or saved

    // RLP: bucket probabilities and N_hat = min(N_max, (argmax + 1) * B).
    std::vector<double> rlpProbs(const at::Tensor& prompt) const;
    double rlpPredict(const at::Tensor& prompt) const;
    // The RLP's buckets as probabilities over the probe's bins of remaining length at
    // age 0 (each bucket spread evenly over its lengths): Trail's prompt classifier.
    std::vector<double> promptBins(const at::Tensor& prompt) const;
    // Probe: probabilities over the bins of remaining length, from the embedding of the
    // newest token after `generated` >= 1 tokens.
    std::vector<double> probe(const at::Tensor& h, int generated) const;
    // Sum of posterior x bin midpoints.
    double binEstimate(const std::vector<double>& post) const;
    // One smoothing step over `steps` tokens with the reading `q` (tempered).
    std::vector<double> smooth(const std::vector<double>& post, const std::vector<double>& q,
                               int steps) const;
    double transition() const;         // Trail's p = min(1, k / L_max)
    int bucketOf(int length) const;    // the RLP's class of an output length
    int binOf(double remaining) const; // the probe's bin of a remaining length
    // N_hat of a bucket-probability vector: min(N_max, (argmax + 1) * B).
    double rlpEstimate(const std::vector<double>& probs) const;

private:
    struct Impl;
    explicit LengthHeads(std::unique_ptr<Impl> d);
    std::unique_ptr<Impl> d_;
};

// Held-out accuracy, in tokens, over the given samples. Baselines from the same data:
// the training lengths' mean (a constant) for the RLP; the probe's prompt reading
// counted down without refinement for Trail.
struct LengthEval {
    int requests = 0;
    double rlp_mae = 0, rlp_bucket_accuracy = 0, mean_baseline_mae = 0;
    double rlp_rmse = 0, mean_baseline_rmse = 0;
    double rlp_r2 = 0, mean_baseline_r2 = 0; // against the held-out requests' mean
    // Remaining length at every generated token 0 .. length-1 of every request:
    double trail_prompt_only_mae = 0, trail_refined_mae = 0, rlp_countdown_mae = 0,
           mean_countdown_mae = 0;
    double probe_bin_accuracy = 0; // readings whose argmax bin is right
    // The refined MAE at other tempers (the options' own included): how much Trail's
    // independence assumption costs on these requests. Held-out figures, to choose by;
    // not a tuned result.
    std::vector<std::pair<double, double>> temper_mae;
    long readings = 0;
    long tokens = 0;
};
LengthEval evaluateHeads(const LengthHeads& h, const std::vector<LengthSample>& test,
                         double train_mean_length);
// The samples' mean output length (0 when there are none): the constant baseline.
double meanLength(const std::vector<LengthSample>& samples);

// Trail's temper chosen on data the test never sees: heads trained on the first
// (1 - val_fraction) of `train` (in order) are evaluated on the rest at each temper of
// evaluateHeads' sweep, and the temper with the lowest refined MAE is returned (ties: the
// larger, nearer Trail's rule). Throws std::invalid_argument when either part is empty.
struct TemperChoice {
    double temper = 1.0;
    std::vector<std::pair<double, double>> validation_mae; // (temper, refined MAE)
    int validation_requests = 0;
};
TemperChoice chooseTemper(const std::vector<LengthSample>& train, int hidden,
                          const LengthHeadOptions& o, double val_fraction = 0.2);

// The synthetic length task's floor: the remaining-length MAE over the same tokens of a
// predictor told the true bucket of `width` tokens that answers, after g tokens, the
// median of the lengths in the bucket above g (within a bucket lengths are uniform and
// nothing reveals them, so no predictor does better on average).
double bucketOracleMae(const std::vector<LengthSample>& test, int width);

// The trained heads as a predictor for a live run. `mode`: "rlp" (TimeBill: the bucket
// prediction, counted down) or "trail" (probe and smoothing, refreshed every `every`).
// Observes `backend` (set as its observer by the constructor).
class LivePredictor final : public LengthPredictor, public TokenObserver {
public:
    LivePredictor(std::shared_ptr<const LengthHeads> heads, std::string mode, Transformer& m,
                  TorchBackend& backend);
    std::string name() const override;
    void reset(const Workload& w) override;
    double initial(ReqId id) const override;
    double remaining(ReqId id, int generated) const override;
    int refreshEvery() const override;
    bool remainingFromInitial() const override { return false; }

    int layer() const override;
    int every() const override;
    void observe(ReqId id, int generated, const at::Tensor& h) override;

private:
    struct State {
        bool ready = false;
        double initial = 1;
        std::vector<double> prompt_post; // the probe's prompt reading
        std::vector<double> post;
        int at = 0; // generated tokens at the last reading
    };
    State& state(ReqId id) const; // computes the prompt reading on first use

    std::shared_ptr<const LengthHeads> heads_;
    std::string mode_;
    Transformer& m_;
    TorchBackend& backend_;
    mutable std::vector<State> states_;
};

} // namespace kairos::gpu
