#pragma once
// Trail's refined length prediction (ARCHITECTURE.md, The papers). A classifier gives
// probabilities over k equal bins of *remaining* length in [0, L_max): once from the
// prompt (Trail: BERT), then every s generated tokens from an intermediate layer's
// embedding (a 2-layer MLP). Bayesian smoothing across tokens (the authors' code):
//   p = min(1, k / L_max);  T[0][0] = 1, T[i][i] = 1 - p, T[i][i-1] = p;
//   prior_t = post_{t-s} T^s;   post_t ∝ prior_t ⊙ q_t;   estimate = sum_i post_i mid_i.
// In simulation the classifier outputs are modelled: q is a discretised Gaussian over
// the bins centred on the true remaining bin plus a per-call Gaussian offset (sd
// `prompt_noise` bins for the prompt classifier, `token_noise` for the per-token one) of
// width `spread` bins; draws are seeded per (request, token), so predictions do not
// depend on who asks when. The centre is read to 1/256 of a bin (a fifth of a token at
// the default bins): the Gaussian's values come from a table built once. trailMae()
// measures both MAEs and calibrateTrail() sets token_noise so that the refined MAE is the
// paper's 2.66x below the prompt-only one.
#include "predict/predictor.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace kairos {

struct TrailOptions {
    int bins = 10;
    double l_max = 512;
    int every = 1;             // classifier period s (tokens)
    double prompt_noise = 2.0; // bins
    double token_noise = 0.7;  // bins
    double spread = 0.8;       // bins
};

// One smoothing step over s tokens: post <- normalise((post T^s) ⊙ q).
std::vector<double> trailSmooth(const std::vector<double>& post, const std::vector<double>& q,
                                double p, int s);
// The filter's two implementations over consecutive calls of period 1, for tst_trail: the
// generic step (any bins) and the register-resident one at 10 bins (the default), from
// the same unnormalised posterior and likelihood rows; each returns the estimates and
// leaves its posterior in `post`. They must agree to the bit.
std::vector<double> trailFilterGeneric(std::vector<double>& post,
                                       const std::vector<std::vector<float>>& rows, double p,
                                       double width);
std::vector<double> trailFilterRegisters(std::vector<double>& post,
                                         const std::vector<std::vector<float>>& rows, double p,
                                         double width);
// The standard normal's quantile at u in (0, 1) (the classifier's noise draws).
double trailNormalQuantile(double u);

class TrailPredictor final : public LengthPredictor {
public:
    TrailPredictor(TrailOptions o, std::uint64_t seed);
    std::string name() const override;
    void reset(const Workload& w) override;
    double initial(ReqId id) const override;
    double remaining(ReqId id, int generated) const override;
    int refreshEvery() const override { return opt_.every; }
    bool remainingFromInitial() const override { return false; }
    // Reads ahead in the shared table (the modelled classifier's outputs are known).
    int firstAbove(ReqId id, int generated, int limit, double threshold) const override;
    const TrailOptions& options() const { return opt_; }
    // Its table: an estimate per classifier call of every request (every `every` tokens),
    // 18 B a call with the blocks' maxima and the allocator's share (352 MiB over 19.25
    // million tokens at every = 1, 42 MiB at every = 16), and each request's posterior.
    double memoryFor(double requests, double output_tokens) const override {
        return (output_tokens / std::max(1, opt_.every) + requests * kFillAhead) * 18 +
               requests * (double(opt_.bins) * 8 * 3 + 96);
    }
    // The modelled classifier output for request `id` after `generated` tokens.
    std::vector<double> classifier(ReqId id, int generated) const;
    // The prompt-only estimate of the remaining length after `generated` tokens.
    double promptOnlyRemaining(ReqId id, int generated) const;

public:
    struct Table; // estimates shared across runs (trail_predictor.cpp)
    // A request's estimates after each classifier call, filled as far as any run has asked:
    // est[k] is valid for k < filled (published with release, read with acquire); the
    // writer extends under the row's stripe lock from `post`, the posterior after the last
    // filled call. est is allocated once, to the request's last call, so it never moves
    // under a reader.
    struct TableRow {
        double* est = nullptr;
        double* block_max = nullptr; // max of est over each kBlock calls
        double* post = nullptr;      // bins values
        std::atomic<int> filled{0};
    };

private:
    // The estimate after classifier call k (k * every tokens): read from the table when a
    // run has filled it (inline: the scheduler asks for every running request at every
    // decision), else filled through k first.
    double tableEstimate(ReqId id, int k) const {
        const TableRow& r = rows_[static_cast<std::size_t>(id)];
        if (r.filled.load(std::memory_order_acquire) > k) return r.est[static_cast<std::size_t>(k)];
        return fillTable(id, k);
    }
    double fillTable(ReqId id, int k) const;
    // The classifier call at or before token count g (no division at the default period:
    // the scheduler asks for every running request at most decisions).
    int callAt(int g) const { return opt_.every == 1 ? g : g / opt_.every; }
    static constexpr int kFillAhead = 16; // calls filled at least, when a row is extended
    std::shared_ptr<Table> table_;
    TableRow* rows_ = nullptr; // table_'s rows
    double estimate(const std::vector<double>& post) const;
    // The centre of the modelled classifier's output after `generated` tokens, in bins.
    double centreOf(ReqId id, int generated) const;
    // The classifier's output for that centre up to a constant factor (it cancels in the
    // filter): its row in the Gaussian table, q_i = row[i] for the bins i, or nullptr when
    // there is no table (a very wide spread) or the centre is absurdly far (then
    // likelihoodExact computes the values).
    const float* likelihoodRow(double centre) const;
    void likelihoodExact(double centre, double* q) const;
    void likelihoodInto(ReqId id, int generated, double* q) const;
    void buildGaussTable();
    // The Gaussian's values at the centre's fraction m / kGaussRes of a bin (rows) and
    // bin offsets -(bins + reach_) .. bins + reach_ (columns; beyond reach_ the floor), so
    // that a row covers every bin for any centre: one farther than reach_ outside the bins
    // reads the row of the nearest such centre, all floor as it should be. Empty for a
    // spread or a bin count so large that the table would exceed kMaxGaussTable entries
    // (then exponentials per call). Single precision (to 6e-8 of each value, far below the
    // classifier's noise): the table then stays in the processor's caches (42 KB at the
    // default spread and bins).
    static constexpr int kGaussRes = 256;
    static constexpr double kReachSd = 10.1; // exp(-10.1^2 / 2) < 1e-22
    static constexpr std::size_t kMaxGaussTable = std::size_t(1) << 20;
    static constexpr double kFloor = 1e-6; // every bin keeps some likelihood
    std::vector<float> gauss_;
    int reach_ = 0;
    int half_width_ = 0; // bins + reach_: a row's columns are offsets -half_width_..half_width_
    static constexpr std::size_t kMaxStackBins = 64;
    mutable std::vector<double> q_; // scratch for remaining()
    TrailOptions opt_;
    std::uint64_t seed_;
    double k_;         // exp(-1 / spread^2), the ratio of successive bins' ratios
    double inv_width_; // bins / l_max: 1 / the bin width in tokens
    std::vector<int> truth_;
    std::vector<double> initial_;
    struct Cache {
        int at = -1;
        std::vector<double> post;
        double est = 0; // estimate(post)
    };
    mutable std::vector<Cache> cache_;
};

struct TrailMae {
    double prompt_only = 0, refined = 0;
    double ratio() const { return refined > 0 ? prompt_only / refined : 0; }
};
// MAE of remaining-length predictions over every token of every request (tokens).
TrailMae trailMae(const Workload& w, const TrailOptions& o, std::uint64_t seed);
// token_noise making prompt_only / refined = target (bisection); the other options kept.
TrailOptions calibrateTrail(const Workload& w, TrailOptions o, double target_ratio,
                            std::uint64_t seed);

} // namespace kairos
