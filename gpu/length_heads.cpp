#include "length_heads.h"

#include "predict/trail_predictor.h"
#include "util/input_error.h"
#include "weights/safetensors.h"

#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>

namespace kairos::gpu {

void LengthHeadOptions::validate() const {
    auto need = [](bool ok, const char* what) {
        if (!ok) throw std::invalid_argument(std::string("length heads: ") + what);
    };
    need(layer >= 1, "layer must be set (1 .. the model's layers)");
    need(bucket >= 1, "bucket must be >= 1");
    need(n_max >= 2 * bucket, "n_max must hold at least 2 buckets");
    need(bins >= 2, "bins must be >= 2");
    need(l_max > 0, "l_max must be > 0");
    need(every >= 1, "every must be >= 1");
    need(rlp_hidden >= 1 && probe_hidden >= 1, "hidden widths must be >= 1");
    need(rlp_epochs >= 1 && probe_epochs >= 0, "epochs must be >= 1 (the probe's >= 0)");
    need(batch >= 1, "batch must be >= 1");
    need(lr > 0, "lr must be > 0");
    need(temper > 0 && temper <= 1, "temper must be in (0, 1]");
}

at::Tensor promptFeature(Transformer& m, const std::vector<std::int64_t>& prompt, int layer) {
    if (prompt.empty()) throw std::invalid_argument("promptFeature: empty prompt");
    return m.hiddenStates(prompt, layer).mean(0);
}

void LengthCollector::observe(ReqId id, int generated, const at::Tensor& h) {
    readings_[id].emplace(generated, h.clone()); // a restart repeats counts: first kept
}

std::vector<LengthSample> LengthCollector::samples(Transformer& m, const TorchBackend& backend,
                                                   const Workload& w) const {
    std::vector<LengthSample> out;
    for (const auto& r : w.requests) {
        LengthSample s;
        s.id = r.id;
        // What the model generated: with --stop-at-eos an answer ends at the model's end
        // token, before the workload's length, which is then only its limit.
        const auto generated = static_cast<std::int32_t>(backend.generated(r.id).size());
        s.length = generated > 0 ? generated : r.output_tokens;
        s.prompt = promptFeature(m, backend.promptTokens(r.id), layer_);
        if (auto it = readings_.find(r.id); it != readings_.end()) s.readings = it->second;
        out.push_back(std::move(s));
    }
    return out;
}

namespace {

torch::nn::Sequential mlp(int in, int hidden, int out) {
    return torch::nn::Sequential(torch::nn::Linear(in, hidden), torch::nn::ReLU(),
                                 torch::nn::Linear(hidden, out));
}

// Column means and standard deviations (a floor keeps constant columns finite).
std::pair<at::Tensor, at::Tensor> moments(const at::Tensor& x) {
    const at::Tensor mean = x.mean(0);
    const at::Tensor sd = (x.var(0, /*unbiased=*/false) + 1e-8).sqrt().clamp_min(1e-4);
    return {mean, sd};
}

// Minibatch Adam on cross-entropy; returns the last epoch's mean loss. Batches are drawn
// from a seeded permutation, so training is reproducible on one thread.
double fitClassifier(torch::nn::Sequential& net, const at::Tensor& x, const at::Tensor& y,
                     const LengthHeadOptions& o, int epochs, std::uint64_t seed) {
    torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.lr));
    const auto n = x.size(0);
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    double last = 0;
    for (int e = 0; e < epochs; ++e) {
        std::shuffle(order.begin(), order.end(), rng);
        double sum = 0;
        for (std::int64_t b = 0; b < n; b += o.batch) {
            const auto len = std::min<std::int64_t>(o.batch, n - b);
            const at::Tensor idx = at::tensor(
                std::vector<std::int64_t>(order.begin() + b, order.begin() + b + len), at::kLong);
            opt.zero_grad();
            const at::Tensor loss = at::nll_loss(
                at::log_softmax(net->forward(x.index_select(0, idx)), 1), y.index_select(0, idx));
            loss.backward();
            opt.step();
            sum += loss.item<double>() * double(len);
        }
        last = sum / double(n);
    }
    return last;
}

std::vector<double> toVector(const at::Tensor& t) {
    const at::Tensor c = t.to(at::kDouble).contiguous();
    return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

std::vector<double> temperedSmooth(const std::vector<double>& post, std::vector<double> q, double p,
                                   int steps, double temper) {
    if (temper != 1.0)
        for (double& x : q) x = std::pow(x, temper);
    return trailSmooth(post, q, p, steps);
}

} // namespace

struct LengthHeads::Impl {
    LengthHeadOptions o;
    int hidden = 0;
    torch::nn::Sequential rlp{nullptr}, probe{nullptr};
    at::Tensor rlp_mean, rlp_sd, probe_mean, probe_sd;
    std::map<std::string, std::string> meta;

    void build() {
        rlp = mlp(hidden, o.rlp_hidden, o.buckets());
        probe = mlp(hidden + 1, o.probe_hidden, o.bins);
    }
    at::Tensor probeInput(const at::Tensor& h, const at::Tensor& age) const {
        return at::cat({(h - probe_mean) / probe_sd, age.unsqueeze(1) / o.l_max}, 1);
    }
    int rlpTarget(int length) const {
        return std::clamp((length + o.bucket - 1) / o.bucket - 1, 0, o.buckets() - 1);
    }
    int binOf(double remaining) const {
        return std::clamp(int(std::floor(remaining / (o.l_max / o.bins))), 0, o.bins - 1);
    }
    // Every tensor of the heads by its name in the file (the parameters' own storage).
    std::vector<std::pair<std::string, at::Tensor>> tensors() const {
        std::vector<std::pair<std::string, at::Tensor>> out;
        for (const auto& p : rlp->named_parameters()) out.emplace_back("rlp." + p.key(), p.value());
        for (const auto& p : probe->named_parameters())
            out.emplace_back("probe." + p.key(), p.value());
        out.emplace_back("rlp.mean", rlp_mean);
        out.emplace_back("rlp.sd", rlp_sd);
        out.emplace_back("probe.mean", probe_mean);
        out.emplace_back("probe.sd", probe_sd);
        return out;
    }
};

LengthHeads::LengthHeads(std::unique_ptr<Impl> d) : d_(std::move(d)) {}
LengthHeads::LengthHeads(LengthHeads&&) noexcept = default;
LengthHeads& LengthHeads::operator=(LengthHeads&&) noexcept = default;
LengthHeads::~LengthHeads() = default;
const LengthHeadOptions& LengthHeads::options() const {
    return d_->o;
}
int LengthHeads::hidden() const {
    return d_->hidden;
}
const std::map<std::string, std::string>& LengthHeads::metadata() const {
    return d_->meta;
}
double LengthHeads::transition() const {
    return std::min(1.0, d_->o.bins / d_->o.l_max);
}

LengthHeads LengthHeads::train(const std::vector<LengthSample>& train, int hidden,
                               const LengthHeadOptions& o, TrainLog* log) {
    o.validate();
    if (train.empty()) throw std::invalid_argument("length heads: no training requests");
    const auto t0 = std::chrono::steady_clock::now();
    auto d = std::make_unique<Impl>();
    d->o = o;
    d->hidden = hidden;
    at::manual_seed(o.seed);
    d->build();

    // RLP: one example per request.
    std::vector<at::Tensor> px;
    std::vector<std::int64_t> py;
    // Probe: the prompt (age 0) and every reading of every request.
    std::vector<at::Tensor> qx;
    std::vector<double> qage;
    std::vector<std::int64_t> qy;
    for (const auto& s : train) {
        if (s.prompt.numel() != hidden)
            throw std::invalid_argument(
                "length heads: request " + std::to_string(s.id) + "'s prompt feature has " +
                std::to_string(s.prompt.numel()) + " values, not " + std::to_string(hidden));
        px.push_back(s.prompt);
        py.push_back(d->rlpTarget(s.length));
        for (const auto& [g, h] : s.readings) {
            if (g <= 0 || g >= s.length) continue;
            qx.push_back(h);
            qage.push_back(g);
            qy.push_back(d->binOf(s.length - g));
        }
    }
    if (qx.empty())
        throw std::invalid_argument("length heads: no readings of generated tokens to train the "
                                    "probe on (every request generated a single token?)");
    const at::Tensor P = at::stack(px).to(at::kFloat);
    std::tie(d->rlp_mean, d->rlp_sd) = moments(P);
    const at::Tensor Q = at::stack(qx).to(at::kFloat);
    std::tie(d->probe_mean, d->probe_sd) = moments(Q);
    const at::Tensor age = at::tensor(qage, at::kDouble).to(at::kFloat);

    TrainLog l;
    l.rlp_examples = int(px.size());
    l.probe_examples = int(qx.size());
    l.rlp_loss = fitClassifier(d->rlp, (P - d->rlp_mean) / d->rlp_sd, at::tensor(py, at::kLong), o,
                               o.rlp_epochs, o.seed);
    if (o.probe_epochs > 0) // 0: the RLP alone (a bucket-width comparison)
        l.probe_loss = fitClassifier(d->probe, d->probeInput(Q, age), at::tensor(qy, at::kLong), o,
                                     o.probe_epochs, o.seed + 1);
    l.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (log) *log = l;
    return LengthHeads(std::move(d));
}

std::vector<double> LengthHeads::rlpProbs(const at::Tensor& prompt) const {
    at::NoGradGuard g;
    const at::Tensor x = ((prompt.to(at::kFloat) - d_->rlp_mean) / d_->rlp_sd).unsqueeze(0);
    return toVector(at::softmax(d_->rlp->forward(x), 1)[0]);
}

double LengthHeads::rlpEstimate(const std::vector<double>& p) const {
    const auto k = std::max_element(p.begin(), p.end()) - p.begin();
    return std::min<double>(d_->o.n_max, double(k + 1) * d_->o.bucket);
}

double LengthHeads::rlpPredict(const at::Tensor& prompt) const {
    return rlpEstimate(rlpProbs(prompt));
}

int LengthHeads::bucketOf(int length) const {
    return d_->rlpTarget(length);
}
int LengthHeads::binOf(double remaining) const {
    return d_->binOf(remaining);
}

std::vector<double> LengthHeads::probe(const at::Tensor& h, int generated) const {
    at::NoGradGuard g;
    const at::Tensor age = at::full({1}, double(generated), at::kFloat);
    const at::Tensor x = d_->probeInput(h.to(at::kFloat).unsqueeze(0), age);
    return toVector(at::softmax(d_->probe->forward(x), 1)[0]);
}

std::vector<double> LengthHeads::promptBins(const at::Tensor& prompt) const {
    // Each bucket's probability spread evenly over its lengths, then binned.
    const auto& o = d_->o;
    const auto probs = rlpProbs(prompt);
    std::vector<double> q(std::size_t(o.bins), 0.0);
    for (int k = 0; k < o.buckets(); ++k)
        for (int n = k * o.bucket + 1; n <= (k + 1) * o.bucket; ++n)
            q[std::size_t(d_->binOf(n))] += probs[std::size_t(k)] / o.bucket;
    return q;
}

std::vector<double> LengthHeads::smooth(const std::vector<double>& post,
                                        const std::vector<double>& q, int steps) const {
    return temperedSmooth(post, q, transition(), steps, d_->o.temper);
}

double LengthHeads::binEstimate(const std::vector<double>& post) const {
    const double w = d_->o.l_max / d_->o.bins;
    double e = 0;
    for (std::size_t i = 0; i < post.size(); ++i) e += post[i] * (double(i) + 0.5) * w;
    return e;
}

// ---- safetensors ----------------------------------------------------------------------

namespace {
const char* kFormat = "kairos-length-heads";
} // namespace

void LengthHeads::save(const std::string& path,
                       const std::map<std::string, std::string>& meta) const {
    const auto named = d_->tensors();
    std::vector<at::Tensor> keep; // contiguous float copies outlive the write
    std::vector<safetensors::TensorBytes> tb;
    for (const auto& [name, t] : named) {
        keep.push_back(t.detach().to(at::kFloat).contiguous());
        const at::Tensor& c = keep.back();
        tb.push_back({name, safetensors::DType::F32, c.sizes().vec(), c.data_ptr(),
                      std::size_t(c.numel()) * sizeof(float)});
    }
    std::map<std::string, std::string> m = meta;
    const auto& o = d_->o;
    m["format"] = kFormat;
    m["hidden"] = std::to_string(d_->hidden);
    m["layer"] = std::to_string(o.layer);
    m["bucket"] = std::to_string(o.bucket);
    m["n_max"] = std::to_string(o.n_max);
    m["bins"] = std::to_string(o.bins);
    m["l_max"] = std::to_string(o.l_max);
    m["every"] = std::to_string(o.every);
    m["temper"] = std::to_string(o.temper);
    m["rlp_hidden"] = std::to_string(o.rlp_hidden);
    m["probe_hidden"] = std::to_string(o.probe_hidden);
    safetensors::write(path, tb, m);
    d_->meta = m;
}

LengthHeads LengthHeads::load(const std::string& path) {
    safetensors::File f(path);
    const auto& meta = f.header().metadata;
    auto field = [&](const std::string& key) -> const std::string& {
        const auto it = meta.find(key);
        if (it == meta.end())
            throw InputError(path, 0, "__metadata__." + key,
                             "missing: not a Kairos length-heads file");
        return it->second;
    };
    if (field("format") != kFormat)
        throw InputError(path, 0, "__metadata__.format",
                         "'" + field("format") + "', expected '" + kFormat + "'");
    auto number = [&](const std::string& key) {
        const std::string& v = field(key);
        try {
            std::size_t used = 0;
            const double x = std::stod(v, &used);
            if (used != v.size()) throw std::invalid_argument(v);
            return x;
        } catch (const std::exception&) {
            throw InputError(path, 0, "__metadata__." + key, "'" + v + "' is not a number");
        }
    };
    auto d = std::make_unique<Impl>();
    d->meta = meta;
    d->hidden = int(number("hidden"));
    auto& o = d->o;
    o.layer = int(number("layer"));
    o.bucket = int(number("bucket"));
    o.n_max = int(number("n_max"));
    o.bins = int(number("bins"));
    o.l_max = number("l_max");
    o.every = int(number("every"));
    o.temper = meta.count("temper") ? number("temper") : 1.0; // files before it: Trail's
    o.rlp_hidden = int(number("rlp_hidden"));
    o.probe_hidden = int(number("probe_hidden"));
    try {
        o.validate();
        if (d->hidden < 1) throw std::invalid_argument("hidden must be >= 1");
    } catch (const std::invalid_argument& e) {
        throw InputError(path, 0, "__metadata__", e.what());
    }
    d->build();
    d->rlp_mean = at::empty({d->hidden}, at::kFloat);
    d->rlp_sd = at::empty({d->hidden}, at::kFloat);
    d->probe_mean = at::empty({d->hidden}, at::kFloat);
    d->probe_sd = at::empty({d->hidden}, at::kFloat);
    const auto named = d->tensors();
    at::NoGradGuard no_grad;
    for (const auto& [name, tensor] : named) {
        at::Tensor t = tensor; // shares the parameter's storage
        const auto* info = f.find(name);
        if (!info) throw InputError(path, 0, name, "tensor missing");
        if (info->dtype != safetensors::DType::F32 || info->shape != t.sizes().vec())
            throw InputError(path, 0, name,
                             std::string("expected F32 of shape ") + c10::str(t.sizes()) +
                                 ", found " + safetensors::dtypeName(info->dtype));
        const at::Tensor src =
            at::from_blob(const_cast<std::byte*>(f.data(*info)), t.sizes(), at::kFloat);
        t.copy_(src);
    }
    return LengthHeads(std::move(d));
}

// ---- evaluation -----------------------------------------------------------------------

LengthEval evaluateHeads(const LengthHeads& h, const std::vector<LengthSample>& test,
                         double train_mean_length) {
    LengthEval e;
    const auto& o = h.options();
    const double p = h.transition();
    double rlp_hits = 0;
    const std::vector<double> tempers{1.0, 0.5, 0.2, 0.1, 0.05};
    std::vector<double> lengths;
    std::vector<double> sweep_sum(tempers.size(), 0.0);
    for (const auto& s : test) {
        const int L = s.length;
        const auto probs = h.rlpProbs(s.prompt);
        const double rlp = h.rlpEstimate(probs);
        const auto k = std::max_element(probs.begin(), probs.end()) - probs.begin();
        rlp_hits += k == h.bucketOf(L);
        e.rlp_mae += std::fabs(rlp - L);
        e.rlp_rmse += (rlp - L) * (rlp - L);
        e.mean_baseline_mae += std::fabs(train_mean_length - L);
        e.mean_baseline_rmse += (train_mean_length - L) * (train_mean_length - L);
        lengths.push_back(L);
        auto binHit = [&](const std::vector<double>& q, double remaining) {
            const auto b = std::max_element(q.begin(), q.end()) - q.begin();
            e.probe_bin_accuracy += b == h.binOf(remaining);
            ++e.readings;
        };
        const std::vector<double> prior = h.promptBins(s.prompt);
        std::vector<double> post = prior;
        std::vector<std::vector<double>> swept(tempers.size(), prior);
        const double init = std::max(1.0, h.binEstimate(post));
        int at = 0;
        for (int g = 0; g < L; ++g) {
            if (g > 0 && g % o.every == 0)
                if (auto it = s.readings.find(g); it != s.readings.end()) {
                    const auto q = h.probe(it->second, g);
                    binHit(q, L - g);
                    post = h.smooth(post, q, g - at);
                    for (std::size_t t = 0; t < tempers.size(); ++t)
                        swept[t] = temperedSmooth(swept[t], q, p, g - at, tempers[t]);
                    at = g;
                }
            const double truth = L - g;
            e.trail_refined_mae += std::fabs(std::max(1.0, h.binEstimate(post) - (g - at)) - truth);
            for (std::size_t t = 0; t < tempers.size(); ++t)
                sweep_sum[t] +=
                    std::fabs(std::max(1.0, h.binEstimate(swept[t]) - (g - at)) - truth);
            e.trail_prompt_only_mae += std::fabs(std::max(1.0, init - g) - truth);
            e.rlp_countdown_mae += std::fabs(std::max(1.0, rlp - g) - truth);
            e.mean_countdown_mae += std::fabs(std::max(1.0, train_mean_length - g) - truth);
            ++e.tokens;
        }
        ++e.requests;
    }
    if (e.requests > 0) {
        // R^2 against the held-out requests' own mean (0: no better than it, below 0: worse).
        double m = 0, sst = 0;
        for (double L : lengths) m += L;
        m /= double(lengths.size());
        for (double L : lengths) sst += (L - m) * (L - m);
        e.rlp_r2 = sst > 0 ? 1 - e.rlp_rmse / sst : 0;
        e.mean_baseline_r2 = sst > 0 ? 1 - e.mean_baseline_rmse / sst : 0;
        e.rlp_rmse = std::sqrt(e.rlp_rmse / e.requests);
        e.mean_baseline_rmse = std::sqrt(e.mean_baseline_rmse / e.requests);
        e.rlp_mae /= e.requests;
        e.mean_baseline_mae /= e.requests;
        e.rlp_bucket_accuracy = rlp_hits / e.requests;
    }
    if (e.tokens > 0) {
        e.trail_refined_mae /= double(e.tokens);
        e.trail_prompt_only_mae /= double(e.tokens);
        e.rlp_countdown_mae /= double(e.tokens);
        e.mean_countdown_mae /= double(e.tokens);
        for (std::size_t t = 0; t < tempers.size(); ++t)
            e.temper_mae.emplace_back(tempers[t], sweep_sum[t] / double(e.tokens));
    }
    if (e.readings > 0) e.probe_bin_accuracy /= double(e.readings);
    return e;
}

double meanLength(const std::vector<LengthSample>& samples) {
    double sum = 0;
    for (const auto& s : samples) sum += s.length;
    return samples.empty() ? 0.0 : sum / double(samples.size());
}

TemperChoice chooseTemper(const std::vector<LengthSample>& train, int hidden,
                          const LengthHeadOptions& o, double val_fraction) {
    const auto n_val = std::size_t(std::lround(val_fraction * double(train.size())));
    if (!(val_fraction > 0 && val_fraction < 1) || n_val < 1 || n_val >= train.size())
        throw std::invalid_argument(
            "choosing the temper: a validation share of " + std::to_string(val_fraction) + " of " +
            std::to_string(train.size()) + " requests leaves one side empty");
    const std::vector<LengthSample> fit(train.begin(), train.end() - std::ptrdiff_t(n_val));
    const std::vector<LengthSample> val(train.end() - std::ptrdiff_t(n_val), train.end());
    const LengthEval e = evaluateHeads(LengthHeads::train(fit, hidden, o), val, meanLength(fit));
    TemperChoice c;
    c.validation_mae = e.temper_mae;
    c.validation_requests = e.requests;
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [t, mae] : e.temper_mae)
        if (mae < best) { // the sweep runs from 1 down: ties keep the larger temper
            best = mae;
            c.temper = t;
        }
    return c;
}

double bucketOracleMae(const std::vector<LengthSample>& test, int width) {
    double sum = 0;
    long n = 0;
    for (const auto& s : test) {
        const int lo = (s.length - 1) / width * width + 1, hi = lo + width - 1;
        for (int g = 0; g < s.length; ++g) {
            const int a = std::max(lo, g + 1);
            const double median = 0.5 * (a + hi);
            sum += std::fabs(std::max(1.0, median - g) - (s.length - g));
            ++n;
        }
    }
    return n > 0 ? sum / double(n) : 0.0;
}

// ---- the live predictor ---------------------------------------------------------------

LivePredictor::LivePredictor(std::shared_ptr<const LengthHeads> heads, std::string mode,
                             Transformer& m, TorchBackend& backend)
    : heads_(std::move(heads)), mode_(std::move(mode)), m_(m), backend_(backend) {
    if (mode_ != "rlp" && mode_ != "trail")
        throw std::invalid_argument("length predictor mode must be rlp or trail, not '" + mode_ +
                                    "'");
    if (heads_->hidden() != m.config().hidden)
        throw std::invalid_argument("length heads read " + std::to_string(heads_->hidden()) +
                                    "-wide embeddings; " + m.config().name + " has " +
                                    std::to_string(m.config().hidden));
    if (layer() < 1 || layer() > m.config().layers)
        throw std::invalid_argument("length heads read layer " + std::to_string(layer()) + "; " +
                                    m.config().name + " has " + std::to_string(m.config().layers));
    // Ready before reset(): a policy that never asks still has the engine's readings
    // delivered here.
    states_.assign(backend_.workload().size(), State{});
    if (mode_ == "trail") backend_.setObserver(this);
}

std::string LivePredictor::name() const {
    return mode_ + " (trained heads on layer " + std::to_string(layer()) + ")";
}

void LivePredictor::reset(const Workload& w) {
    states_.assign(w.size(), State{});
}

int LivePredictor::layer() const {
    return heads_->options().layer;
}
int LivePredictor::every() const {
    return heads_->options().every;
}
int LivePredictor::refreshEvery() const {
    return mode_ == "trail" ? every() : 0;
}

LivePredictor::State& LivePredictor::state(ReqId id) const {
    State& s = states_.at(static_cast<std::size_t>(id));
    if (!s.ready) {
        const at::Tensor f = promptFeature(m_, backend_.promptTokens(id), layer());
        s.prompt_post = heads_->promptBins(f);
        s.post = s.prompt_post;
        s.initial = std::max(1.0, mode_ == "rlp" ? heads_->rlpPredict(f)
                                                 : heads_->binEstimate(s.prompt_post));
        s.ready = true;
    }
    return s;
}

double LivePredictor::initial(ReqId id) const {
    return state(id).initial;
}

double LivePredictor::remaining(ReqId id, int generated) const {
    const State& s = state(id);
    if (mode_ == "rlp") return std::max(1.0, s.initial - generated);
    if (generated < s.at) // restarted, not read again yet
        return std::max(1.0, heads_->binEstimate(s.prompt_post) - generated);
    return std::max(1.0, heads_->binEstimate(s.post) - (generated - s.at));
}

void LivePredictor::observe(ReqId id, int generated, const at::Tensor& h) {
    State& s = state(id);
    if (generated <= s.at) { // a restart: smooth again from the prompt's reading
        s.post = s.prompt_post;
        s.at = 0;
    }
    s.post = heads_->smooth(s.post, heads_->probe(h, generated), generated - s.at);
    s.at = generated;
}

} // namespace kairos::gpu
