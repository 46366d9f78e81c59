#include "live_profile.h"

#include "fit/cpu_profile.h"

#include <ATen/Parallel.h>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <torch/version.h>

namespace kairos::gpu {

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double spreadPct(const std::vector<double>& v) {
    if (v.empty()) return 0;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return 100 * (*hi - *lo) / median(v);
}

std::vector<std::int64_t> tokens(int n, int vocab, std::int64_t salt) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
        t[std::size_t(i)] = (salt * 7919 + std::int64_t(i) * 104729) % vocab;
    return t;
}

// Waits for the device (a small copy to the host synchronises a CUDA stream).
void sync(const at::Tensor& t) {
    (void)t.sum().item<float>();
}

} // namespace

double timeDecodeStep(Transformer& m, int batch, int context, int warmup, int repeats,
                      std::int64_t* kv_out, double* spread_pct) {
    const int vocab = m.config().vocab;
    std::vector<SeqCache> caches(static_cast<std::size_t>(batch));
    for (auto& c : caches) m.fillCache(c, context);
    std::vector<double> t;
    std::int64_t kv = 0;
    for (int r = 0; r < warmup + repeats; ++r) {
        std::vector<Transformer::Step> s;
        kv = 0;
        for (auto& c : caches) {
            s.push_back({&c, {std::int64_t(r % vocab)}});
            kv += c.len + 1; // the step attends to the cache and its own token
        }
        const double a = now();
        sync(m.forward(s));
        if (r >= warmup) t.push_back(now() - a);
    }
    if (kv_out) *kv_out = kv;
    if (spread_pct) *spread_pct = spreadPct(t);
    return median(t);
}

double timePrefillStep(Transformer& m, int batch, int len, int warmup, int repeats,
                       double* spread_pct) {
    const int vocab = m.config().vocab;
    std::vector<double> t;
    for (int r = 0; r < warmup + repeats; ++r) {
        std::vector<SeqCache> caches(static_cast<std::size_t>(batch));
        std::vector<Transformer::Step> s;
        for (int b = 0; b < batch; ++b)
            s.push_back({&caches[std::size_t(b)], tokens(len, vocab, b + r)});
        const double a = now();
        sync(m.forward(s));
        if (r >= warmup) t.push_back(now() - a);
    }
    if (spread_pct) *spread_pct = spreadPct(t);
    return median(t);
}

LiveProfileGrid LiveProfileGrid::quick() {
    // Enough settings for all four ETE forms with a fifth held out, in seconds on a CPU.
    LiveProfileGrid g;
    g.prefill_lengths = {16, 32, 64, 128, 256};
    g.prefill_batches = {2, 4};
    g.prefill_batch_lengths = {32, 64};
    g.decode_contexts = {16, 128, 512, 1024, 2048};
    g.decode_batches = {2, 4, 8};
    g.decode_batch_contexts = {64, 256};
    g.bench_lengths = {32};
    g.bench_batches = {1, 4};
    g.repeats = 3;
    g.warmup = 1;
    return g;
}

ReferenceStep::ReferenceStep(Transformer& m, int context) : m_(m), context_(context) {
    m_.fillCache(cache_, context_);
}

double ReferenceStep::time() {
    const int vocab = m_.config().vocab;
    std::vector<double> t;
    for (int r = 0; r < 1 + 3; ++r) {
        cache_.len = cache_.next_pos = context_;
        std::vector<Transformer::Step> s{{&cache_, {std::int64_t(r % vocab)}}};
        const double a = now();
        sync(m_.forward(s));
        if (r >= 1) t.push_back(now() - a);
    }
    return median(t);
}

double ReferenceStep::steadyTime(int n) {
    std::vector<double> t;
    for (int i = 0; i < std::max(1, n); ++i) t.push_back(time());
    return median(t);
}

LiveProfile profileTransformer(Transformer& m, const LiveProfileGrid& g,
                               const std::function<void(int, int, const std::string&)>& progress,
                               const std::atomic<bool>* cancel) {
    const double t_start = now();
    const int vocab = m.config().vocab;
    const int total =
        int(g.prefill_lengths.size() + g.prefill_batches.size() * g.prefill_batch_lengths.size() +
            g.decode_contexts.size() + g.decode_batches.size() * g.decode_batch_contexts.size() +
            g.bench_lengths.size() * g.bench_batches.size());
    int done = 0;
    LiveProfile out;
    ReferenceStep ref(m, g.reference_context);
    std::vector<double> refs;
    const auto reference = [&] { refs.push_back(ref.time()); };
    reference();
    const auto step = [&](const std::string& what) {
        ++done;
        reference();
        if (progress) progress(done, total, what);
        if (cancel && cancel->load()) throw std::runtime_error("cancelled");
    };
    // A point whose repeats disagree by more than max_spread_pct is timed again, up to
    // `retries` times; the attempt with the least spread is kept. `time(spread)` returns
    // one attempt's median.
    const auto settled = [&](const auto& time) {
        double best = 0, best_spread = std::numeric_limits<double>::infinity();
        for (int attempt = 0; attempt <= g.retries; ++attempt) {
            double spread = 0;
            const double t = time(spread);
            if (spread < best_spread) {
                best = t;
                best_spread = spread;
            }
            if (best_spread <= g.max_spread_pct) break;
            if (attempt < g.retries) ++out.retimed;
        }
        out.spread_pct.push_back(best_spread);
        return best;
    };
    // Prefill: `batch` prompts of `len` tokens in one iteration, fresh caches each time.
    const auto prefill = [&](int batch, int len) {
        const double secs = settled([&](double& spread) {
            return timePrefillStep(m, batch, len, g.warmup, g.repeats, &spread);
        });
        out.measurements.push_back({"prefill", batch, len, 0, secs});
        step("prefill " + std::to_string(batch) + " x " + std::to_string(len) + " tokens");
    };
    // Decode: one step of `batch` requests holding `context` positions each.
    const auto decode = [&](int batch, int context) {
        std::int64_t kv = 0;
        const double secs = settled([&](double& spread) {
            return timeDecodeStep(m, batch, context, g.warmup, g.repeats, &kv, &spread);
        });
        out.measurements.push_back({"decode", batch, 0, kv, secs});
        step("decode " + std::to_string(batch) + " x " + std::to_string(context) + " context");
    };
    for (int len : g.prefill_lengths) prefill(1, len);
    for (int b : g.prefill_batches)
        for (int len : g.prefill_batch_lengths) prefill(b, len);
    for (int ctx : g.decode_contexts) decode(1, ctx);
    for (int b : g.decode_batches)
        for (int ctx : g.decode_batch_contexts) decode(b, ctx);
    // Throughput, end to end: a batch prefilled together, then decoded to `len` tokens.
    for (int len : g.bench_lengths)
        for (int b : g.bench_batches) {
            std::vector<SeqCache> caches(static_cast<std::size_t>(b));
            std::vector<Transformer::Step> s;
            for (int i = 0; i < b; ++i)
                s.push_back({&caches[std::size_t(i)], tokens(len, vocab, i)});
            const double a = now();
            at::Tensor next = m.forward(s).argmax(-1).to(at::kCPU);
            for (int k = 1; k < len; ++k) {
                std::vector<Transformer::Step> d;
                for (int i = 0; i < b; ++i)
                    d.push_back({&caches[std::size_t(i)], {next[i].item<std::int64_t>()}});
                next = m.forward(d).argmax(-1).to(at::kCPU);
            }
            const double secs = now() - a;
            out.bench.push_back({len, len, b, secs, double(b) * len / secs});
            step("throughput batch " + std::to_string(b) + ", " + std::to_string(len) + " in / " +
                 std::to_string(len) + " out");
        }
    // Point k was timed between references k and k + 1; its factor is the median of the
    // `reference_window` references from k - w/2 to k + w/2.
    const double ref_median = median(refs);
    out.reference_seconds = ref_median;
    out.reference_spread_pct = spreadPct(refs);
    const std::size_t n_meas = out.measurements.size();
    const std::ptrdiff_t half = std::max(1, g.reference_window) / 2,
                         n_refs = std::ptrdiff_t(refs.size());
    for (std::ptrdiff_t k = 0; k + 1 < n_refs; ++k) {
        const std::ptrdiff_t lo = std::max<std::ptrdiff_t>(k - half, 0),
                             hi = std::min<std::ptrdiff_t>(k + half, n_refs - 1);
        const double f = median({refs.begin() + lo, refs.begin() + hi + 1}) / ref_median;
        out.speed.push_back(f);
        if (!g.normalise) continue;
        if (std::size_t(k) < n_meas) {
            out.measurements[std::size_t(k)].seconds /= f;
        } else {
            BenchPoint& b = out.bench[std::size_t(k) - n_meas];
            b.seconds /= f;
            b.throughput = double(b.batch) * b.output / b.seconds;
        }
    }
    for (double r : refs)
        out.measurements.push_back({"reference", 1, 0, g.reference_context + 1, r});
    out.seconds_spent = now() - t_start;
    return out;
}

std::string deviceName(const Transformer& m) {
    if (m.options().device.is_cuda())
        return "CUDA device " + std::to_string(m.options().device.index());
    const std::string cpu = cpuModelName();
    const int n = at::get_num_threads();
    return cpu + ", " + std::to_string(n) + (n == 1 ? " thread" : " threads");
}

std::string libraryVersions() {
    return std::string("libtorch ") + TORCH_VERSION;
}

} // namespace kairos::gpu
