#include "predict/trail_predictor.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace kairos {

namespace {
// post <- normalise((post T^s) ⊙ q), in place, n bins: the arithmetic of trailSmooth in the
// same order (so both give the same bits), without allocating (the scheduler refines every
// running request's prediction every token).
void smoothInPlace(double* post, const double* q, std::size_t n, double p, int s) {
    for (int step = 0; step < s; ++step) {
        // prior_i <- prior_i (1 - p) + prior_{i+1} p, bin 0 absorbing; ascending, so
        // prior_{i+1} is still the old value when bin i is written.
        for (std::size_t i = 0; i < n; ++i) {
            const double stay = i == 0 ? 1.0 : 1.0 - p;
            double v = 0.0;
            v += post[i] * stay;
            if (i + 1 < n) v += post[i + 1] * p;
            post[i] = v;
        }
    }
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += (post[i] *= q[i]);
    if (sum <= 0) {
        for (std::size_t i = 0; i < n; ++i) post[i] = 1.0 / static_cast<double>(n);
        return;
    }
    for (std::size_t i = 0; i < n; ++i) post[i] /= sum;
}
} // namespace

std::vector<double> trailSmooth(const std::vector<double>& post, const std::vector<double>& q,
                                double p, int s) {
    std::vector<double> out = post;
    smoothInPlace(out.data(), q.data(), out.size(), p, s);
    return out;
}

TrailPredictor::TrailPredictor(TrailOptions o, std::uint64_t seed) : opt_(o), seed_(seed) {
    if (o.bins < 2 || !(o.l_max > 0) || o.every < 1 || !(o.spread > 0) || o.prompt_noise < 0 ||
        o.token_noise < 0)
        throw std::invalid_argument(
            "trail predictor: bins >= 2, l_max > 0, every >= 1, spread > 0, noise >= 0");
}

std::string TrailPredictor::name() const {
    char b[120];
    std::snprintf(b, sizeof b, "trail(bins=%d, every=%d, prompt_noise=%g, token_noise=%g)",
                  opt_.bins, opt_.every, opt_.prompt_noise, opt_.token_noise);
    return b;
}

void TrailPredictor::classifierInto(ReqId id, int generated, double* q) const {
    const double width = opt_.l_max / opt_.bins;
    const int rem = std::max(0, truth_[static_cast<std::size_t>(id)] - generated);
    const double true_bin = std::min<double>(opt_.bins - 1, std::floor(rem / width));
    // One normal draw per (request, token), from a hash of both (SplitMix64 and
    // Box-Muller): the same call gives the same output, whoever asks first, and it costs
    // nothing like seeding a generator per call.
    auto mix = [](std::uint64_t z) {
        z += 0x9E3779B97F4A7C15ULL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    };
    const std::uint64_t h1 = mix(seed_ ^ mix(static_cast<std::uint64_t>(id) * 0x100000001B3ULL +
                                             static_cast<std::uint64_t>(generated)));
    const std::uint64_t h2 = mix(h1);
    const double u1 = (static_cast<double>(h1 >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(h2 >> 11) * 0x1.0p-53;
    const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    const double centre =
        true_bin + (generated == 0 ? opt_.prompt_noise : opt_.token_noise) * normal;
    double sum = 0;
    for (int i = 0; i < opt_.bins; ++i) {
        const double z = (i - centre) / opt_.spread;
        sum += (q[static_cast<std::size_t>(i)] = std::exp(-0.5 * z * z) + 1e-6);
    }
    for (int i = 0; i < opt_.bins; ++i) q[i] /= sum;
}

std::vector<double> TrailPredictor::classifier(ReqId id, int generated) const {
    std::vector<double> q(static_cast<std::size_t>(opt_.bins));
    classifierInto(id, generated, q.data());
    return q;
}

double TrailPredictor::estimate(const std::vector<double>& post) const {
    const double width = opt_.l_max / opt_.bins;
    double e = 0;
    for (std::size_t i = 0; i < post.size(); ++i)
        e += post[i] * (static_cast<double>(i) + 0.5) * width;
    return e;
}

// Every run of a sweep that predicts with the same options and seed on the same output
// lengths asks for the same estimates (the modelled classifier's output depends only on the
// request, its true length and the token): one table per such key, shared by every
// predictor in the process and filled lazily, a request's row (its estimate after each
// classifier call) only as far as any run has asked. A
// sweep of 105 runs then pays for the Bayesian filter once per seed, not once per run.
struct TrailPredictor::Table {
    // A request's estimates after each classifier call, filled as far as any run has asked:
    // est[k] is valid for k < filled (published with release, read with acquire); the
    // writer extends under the row's stripe lock from `post`, the posterior after the last
    // filled call. est is allocated once, to the request's last call, so it never moves
    // under a reader.
    struct Row {
        std::unique_ptr<double[]> est;
        std::atomic<int> filled{0};
        std::vector<double> post;
    };
    explicit Table(std::size_t n) : rows(n) {}
    std::vector<Row> rows;
    std::mutex stripes[64];
    std::atomic<std::size_t> bytes{0};
};

namespace {

struct TableKey {
    std::uint64_t lengths; // fingerprint of the output lengths, in request order
    std::size_t n;
    int bins, every;
    double l_max, prompt_noise, token_noise, spread;
    std::uint64_t seed;
    auto tie() const {
        return std::tie(lengths, n, bins, every, l_max, prompt_noise, token_noise, spread, seed);
    }
    bool operator<(const TableKey& o) const { return tie() < o.tie(); }
};

// The tables, least recently used first out once they hold more than kCacheBytes (a table
// still used by a predictor lives on through its shared_ptr).
class TableCache {
public:
    static constexpr std::size_t kCacheBytes = std::size_t(512) << 20;
    std::shared_ptr<TrailPredictor::Table> get(const TableKey& key) {
        std::lock_guard<std::mutex> lock(m_);
        ++clock_;
        if (auto it = tables_.find(key); it != tables_.end()) {
            it->second.used = clock_;
            return it->second.table;
        }
        std::size_t total = 0;
        for (const auto& [k, e] : tables_) total += e.table->bytes.load();
        while (total > kCacheBytes && !tables_.empty()) {
            auto oldest = tables_.begin();
            for (auto it = tables_.begin(); it != tables_.end(); ++it)
                if (it->second.used < oldest->second.used) oldest = it;
            total -= oldest->second.table->bytes.load();
            tables_.erase(oldest);
        }
        auto t = std::make_shared<TrailPredictor::Table>(key.n);
        tables_[key] = {t, clock_};
        return t;
    }

private:
    struct Entry {
        std::shared_ptr<TrailPredictor::Table> table;
        std::uint64_t used = 0;
    };
    std::mutex m_;
    std::map<TableKey, Entry> tables_;
    std::uint64_t clock_ = 0;
};

TableCache& tableCache() {
    static TableCache c;
    return c;
}

} // namespace

void TrailPredictor::reset(const Workload& w) {
    truth_.clear();
    initial_.clear();
    for (const auto& r : w.requests) truth_.push_back(r.output_tokens);
    cache_.assign(truth_.size(), Cache{});
    for (std::size_t i = 0; i < truth_.size(); ++i)
        initial_.push_back(std::max(1.0, estimate(classifier(static_cast<ReqId>(i), 0))));
    std::uint64_t fp = 1469598103934665603ULL; // FNV-1a over the lengths
    for (int t : truth_) {
        fp ^= static_cast<std::uint64_t>(static_cast<std::uint32_t>(t));
        fp *= 1099511628211ULL;
    }
    table_ = tableCache().get({fp, truth_.size(), opt_.bins, opt_.every, opt_.l_max,
                               opt_.prompt_noise, opt_.token_noise, opt_.spread, seed_});
}

double TrailPredictor::tableEstimate(ReqId id, int k) const {
    const auto i = static_cast<std::size_t>(id);
    Table::Row& r = table_->rows[i];
    if (r.filled.load(std::memory_order_acquire) > k) return r.est[static_cast<std::size_t>(k)];
    std::lock_guard<std::mutex> lock(table_->stripes[i % 64]);
    int f = r.filled.load(std::memory_order_relaxed);
    if (f > k) return r.est[static_cast<std::size_t>(k)];
    // The same steps, in the same order, as the incremental filter below: the same bits.
    const int s = opt_.every;
    if (!r.est) {
        const std::size_t cap = static_cast<std::size_t>(truth_[i] / s) + 1;
        r.est = std::make_unique<double[]>(cap);
        r.post = classifier(id, 0);
        r.est[0] = estimate(r.post);
        f = 1;
        table_->bytes += cap * sizeof(double) + r.post.size() * sizeof(double);
    }
    const double p = std::min(1.0, opt_.bins / opt_.l_max);
    std::vector<double> q(r.post.size());
    for (; f <= k; ++f) {
        classifierInto(id, f * s, q.data());
        smoothInPlace(r.post.data(), q.data(), r.post.size(), p, s);
        r.est[static_cast<std::size_t>(f)] = estimate(r.post);
    }
    r.filled.store(f, std::memory_order_release);
    return r.est[static_cast<std::size_t>(k)];
}

double TrailPredictor::initial(ReqId id) const {
    return initial_[static_cast<std::size_t>(id)];
}

double TrailPredictor::promptOnlyRemaining(ReqId id, int generated) const {
    return std::max(1.0, initial(id) - generated);
}

double TrailPredictor::remaining(ReqId id, int generated) const {
    const int s = opt_.every;
    const int target = generated / s * s; // the last classifier call at or before `generated`
    if (target == 0) // the prompt's prediction (a request waiting): no filter needed
        return std::max(1.0, estimate(classifier(id, 0)) - generated);
    if (table_ && target <= truth_[static_cast<std::size_t>(id)])
        return std::max(1.0, tableEstimate(id, target / s) - (generated - target));
    // Past its true length (a caller probing): the filter, step by step.
    Cache& c = cache_[static_cast<std::size_t>(id)];
    if (c.at < 0 || c.at > target) {
        c.at = 0;
        c.post = classifier(id, 0);
    }
    const double p = std::min(1.0, opt_.bins / opt_.l_max);
    q_.resize(static_cast<std::size_t>(opt_.bins));
    while (c.at < target) {
        c.at += s;
        classifierInto(id, c.at, q_.data());
        smoothInPlace(c.post.data(), q_.data(), c.post.size(), p, s);
    }
    return std::max(1.0, estimate(c.post) - (generated - target));
}

TrailMae trailMae(const Workload& w, const TrailOptions& o, std::uint64_t seed) {
    TrailPredictor t(o, seed);
    t.reset(w);
    TrailMae m;
    double n = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        const int out = w.requests[i].output_tokens;
        for (int g = 0; g < out; ++g) {
            const double truth = out - g;
            m.prompt_only += std::fabs(t.promptOnlyRemaining(static_cast<ReqId>(i), g) - truth);
            m.refined += std::fabs(t.remaining(static_cast<ReqId>(i), g) - truth);
            n += 1;
        }
    }
    if (n > 0) {
        m.prompt_only /= n;
        m.refined /= n;
    }
    return m;
}

TrailOptions calibrateTrail(const Workload& w, TrailOptions o, double target_ratio,
                            std::uint64_t seed) {
    // The refined MAE grows with token_noise (the prompt-only one does not depend on it),
    // so the ratio falls monotonically: bisect.
    double lo = 0.0, hi = 8.0;
    for (int it = 0; it < 22; ++it) { // 8 / 2^22: far finer than the noise it sets
        o.token_noise = (lo + hi) / 2;
        (trailMae(w, o, seed).ratio() > target_ratio ? lo : hi) = o.token_noise;
    }
    o.token_noise = (lo + hi) / 2;
    return o;
}

} // namespace kairos
