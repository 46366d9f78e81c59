#include "predict/trail_predictor.h"

#include "util/hash.h"
#include "util/huge_pages.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace kairos {

// The filter's per-call helpers are inlined into its batch loop, so that the processor
// overlaps a batch's independent draws (a cold refined run makes millions of calls).
#if defined(__GNUC__)
#define KAIROS_TRAIL_INLINE inline __attribute__((always_inline))
#else
#define KAIROS_TRAIL_INLINE inline
#endif

namespace {
// post <- (post T^s) ⊙ q, in place, n bins, returning the estimate
// sum_i post_i mid_i / sum_i post_i (mid_i = (i + 1/2) width). Neither q nor post is
// normalised: a constant factor in either cancels in the estimate, and dividing every step
// put a division on the chain from each step to the next (the scheduler refines every
// running request's prediction every token, so this runs millions of times in a run).
// T keeps the total and q is at most 1 + 1e-6, so the total only shrinks (or grows by a
// millionth): it is scaled back to 1 when it falls below 2^-600, long before underflow.
// q is the Gaussian table's row (float) or values computed per call (double); a float is
// widened exactly, so both give the bits the same values would.
template <class Q>
double smoothInPlace(double* post, const Q* q, std::size_t n, double p, int s, double width) {
    for (int step = 0; step + 1 < s; ++step)
        // prior_i <- prior_i (1 - p) + prior_{i+1} p, bin 0 absorbing; ascending, so
        // prior_{i+1} is still the old value when bin i is written.
        for (std::size_t i = 0; i < n; ++i)
            post[i] = post[i] * (i == 0 ? 1.0 : 1.0 - p) + (i + 1 < n ? post[i + 1] * p : 0.0);
    // The last step, weighed by q: bin 0 (absorbing) and the last bin (nothing above it)
    // apart, so that the loop between has no branch.
    const double keep = 1.0 - p;
    double v = (post[0] + (n > 1 ? post[1] * p : 0.0)) * double(q[0]);
    post[0] = v;
    double sum = v, weighted = 0.5 * v;
    for (std::size_t i = 1; i + 1 < n; ++i) {
        v = (post[i] * keep + post[i + 1] * p) * double(q[i]);
        post[i] = v;
        sum += v;
        weighted += v * (static_cast<double>(i) + 0.5);
    }
    if (n > 1) {
        v = post[n - 1] * keep * double(q[n - 1]);
        post[n - 1] = v;
        sum += v;
        weighted += v * (static_cast<double>(n - 1) + 0.5);
    }
    if (!(sum > 0)) {
        for (std::size_t i = 0; i < n; ++i) post[i] = 1.0 / static_cast<double>(n);
        return 0.5 * static_cast<double>(n) * width;
    }
    if (sum < 0x1p-600) {
        const double inv = 1.0 / sum;
        for (std::size_t i = 0; i < n; ++i) post[i] *= inv;
    }
    return weighted / sum * width;
}

// smoothInPlace over `count` consecutive calls of one classifier period (s = 1) with N
// bins known at compile time, the posterior held in registers from one call to the next
// (through memory, each call waited for the last one's stores: the filter's chain is what
// a cold refined run spends its time on). The same operations in the same order as
// smoothInPlace, so the same bits (tst_trail compares the two paths).
template <int N>
void smoothRun(double* post, const float* const* rows, int count, double p, double width,
               double* out) {
    static_assert(N >= 3, "bins 0 and N - 1 are written apart");
    const double keep = 1.0 - p;
    double x[N];
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) x[i] = post[i];
    for (int j = 0; j < count; ++j) {
        const float* q = rows[j];
        double v[N];
        v[0] = (x[0] + x[1] * p) * double(q[0]);
        double sum = v[0], weighted = 0.5 * v[0];
#pragma GCC unroll 32
        for (int i = 1; i + 1 < N; ++i) {
            v[i] = (x[i] * keep + x[i + 1] * p) * double(q[i]);
            sum += v[i];
            weighted += v[i] * (static_cast<double>(i) + 0.5);
        }
        v[N - 1] = x[N - 1] * keep * double(q[N - 1]);
        sum += v[N - 1];
        weighted += v[N - 1] * (static_cast<double>(N - 1) + 0.5);
        if (!(sum > 0)) {
#pragma GCC unroll 32
            for (int i = 0; i < N; ++i) x[i] = 1.0 / static_cast<double>(N);
            out[j] = 0.5 * static_cast<double>(N) * width;
            continue;
        }
        if (sum < 0x1p-600) {
            const double inv = 1.0 / sum;
#pragma GCC unroll 32
            for (int i = 0; i < N; ++i) v[i] *= inv;
        }
#pragma GCC unroll 32
        for (int i = 0; i < N; ++i) x[i] = v[i];
        out[j] = weighted / sum * width;
    }
#pragma GCC unroll 32
    for (int i = 0; i < N; ++i) post[i] = x[i];
}

// The standard normal's quantile function, by Acklam's rational approximation (relative
// error below 1.2e-9; tst_trail checks it against the CDF from std::erfc). Written here
// because no library the project uses has one, and because it draws a normal from one
// uniform without a logarithm or cosine for 95 % of draws: Box-Muller was a third of a
// refined run's time.
KAIROS_TRAIL_INLINE double normalQuantile(double u) {
    static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                   -2.759285104469687e+02, 1.383577518672690e+02,
                                   -3.066479806614716e+01, 2.506628277459239e+00};
    static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                   -1.556989798598866e+02, 6.680131188771972e+01,
                                   -1.328068155288572e+01};
    static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                   -2.400758277161838e+00, -2.549732539343734e+00,
                                   4.374664141464968e+00,  2.938163982698783e+00};
    static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                   2.445134137142996e+00, 3.754408661907416e+00};
    constexpr double low = 0.02425;
    if (u > low && u < 1 - low) {
        const double q = u - 0.5, r = q * q;
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
               (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
    const double q = std::sqrt(-2 * std::log(u <= low ? u : 1 - u));
    const double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
                     ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    return u <= low ? x : -x;
}
} // namespace

double trailNormalQuantile(double u) {
    return normalQuantile(u);
}

std::vector<double> trailSmooth(const std::vector<double>& post, const std::vector<double>& q,
                                double p, int s) {
    std::vector<double> out = post;
    smoothInPlace(out.data(), q.data(), out.size(), p, s, 1.0);
    double sum = 0;
    for (double v : out) sum += v;
    for (double& v : out) v /= sum;
    return out;
}

std::vector<double> trailFilterGeneric(std::vector<double>& post,
                                       const std::vector<std::vector<float>>& rows, double p,
                                       double width) {
    std::vector<double> est;
    for (const auto& q : rows)
        est.push_back(smoothInPlace(post.data(), q.data(), post.size(), p, 1, width));
    return est;
}

std::vector<double> trailFilterRegisters(std::vector<double>& post,
                                         const std::vector<std::vector<float>>& rows, double p,
                                         double width) {
    if (post.size() != 10) throw std::invalid_argument("trailFilterRegisters: 10 bins");
    std::vector<double> est(rows.size());
    std::vector<const float*> ptr;
    for (const auto& q : rows) ptr.push_back(q.data());
    smoothRun<10>(post.data(), ptr.data(), static_cast<int>(rows.size()), p, width, est.data());
    return est;
}

TrailPredictor::TrailPredictor(TrailOptions o, std::uint64_t seed)
    : opt_(o), seed_(seed), k_(std::exp(-1.0 / (o.spread * o.spread))),
      inv_width_(o.bins / o.l_max) {
    if (o.bins < 2 || !(o.l_max > 0) || o.every < 1 || !(o.spread > 0) || o.prompt_noise < 0 ||
        o.token_noise < 0)
        throw std::invalid_argument(
            "trail predictor: bins >= 2, l_max > 0, every >= 1, spread > 0, noise >= 0");
    buildGaussTable();
}

std::string TrailPredictor::name() const {
    char b[120];
    std::snprintf(b, sizeof b, "trail(bins=%d, every=%d, prompt_noise=%g, token_noise=%g)",
                  opt_.bins, opt_.every, opt_.prompt_noise, opt_.token_noise);
    return b;
}

void TrailPredictor::buildGaussTable() {
    // g(x) = exp(-x^2 / (2 spread^2)) + floor at the offsets x = d - m / R of bin d from
    // the centre, for d within reach (beyond kReachSd spreads g is below 2^-53 of the
    // floor, so q is the floor to the last bit) and the centre's fraction m / R; the
    // columns beyond reach, out to bins + reach, hold the floor.
    const double sd = opt_.spread;
    reach_ = static_cast<int>(std::ceil(kReachSd * sd)) + 1;
    half_width_ = opt_.bins + reach_;
    const std::size_t width = 2 * static_cast<std::size_t>(half_width_) + 1;
    if (width * (kGaussRes + 1) > kMaxGaussTable) { // a very wide spread: exps per call
        gauss_.clear();
        return;
    }
    gauss_.assign(width * (kGaussRes + 1), static_cast<float>(kFloor));
    const double d2 = 1.0 / (sd * sd);
    for (int m = 0; m <= kGaussRes; ++m)
        for (int d = -reach_; d <= reach_; ++d) {
            const double x = d - static_cast<double>(m) / kGaussRes;
            gauss_[static_cast<std::size_t>(m) * width +
                   static_cast<std::size_t>(d + half_width_)] =
                static_cast<float>(std::exp(-0.5 * d2 * x * x) + kFloor);
        }
}

KAIROS_TRAIL_INLINE double TrailPredictor::centreOf(ReqId id, int generated) const {
    const int rem = std::max(0, truth_[static_cast<std::size_t>(id)] - generated);
    const double true_bin = std::min<double>(opt_.bins - 1, std::floor(rem * inv_width_));
    // One normal draw per (request, token), from a hash of both (SplitMix64) through the
    // normal's quantile: the same call gives the same output, whoever asks first, and it
    // costs nothing like seeding a generator per call.
    const std::uint64_t h =
        splitmix64(seed_ ^ splitmix64(static_cast<std::uint64_t>(id) * 0x100000001B3ULL +
                                      static_cast<std::uint64_t>(generated)));
    const double u = (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; // in (0, 1)
    return true_bin + (generated == 0 ? opt_.prompt_noise : opt_.token_noise) * normalQuantile(u);
}

KAIROS_TRAIL_INLINE const float* TrailPredictor::likelihoodRow(double centre) const {
    // The centre is read to 1/kGaussRes of a bin (a fifth of a token at the default
    // 51-token bins, far below the classifier's noise), so that the weights come from the
    // table built once: a refined run makes millions of these calls, and three
    // exponentials each were most of their cost.
    if (gauss_.empty() || !(std::fabs(centre) < 1e9)) return nullptr;
    const double cf = std::floor(centre);
    int i0 = static_cast<int>(cf);
    int m = static_cast<int>((centre - cf) * kGaussRes + 0.5);
    if (m == kGaussRes) {
        m = 0;
        ++i0;
    }
    // Farther than reach_ outside the bins every bin reads the floor, as it does from
    // the nearest such centre's row.
    i0 = std::clamp(i0, -reach_ - 1, opt_.bins + reach_);
    const std::size_t w = 2 * static_cast<std::size_t>(half_width_) + 1;
    return gauss_.data() + static_cast<std::size_t>(m) * w + half_width_ - i0;
}

void TrailPredictor::likelihoodExact(double centre, double* q) const {
    // g_i = exp(-(i - centre)^2 / (2 spread^2)) by its ratios, outwards from the bin i0
    // nearest the centre (both directions only shrink, so nothing overflows; far from
    // every bin g underflows to 0 and the floor makes q flat, as it should).
    const int n = opt_.bins;
    const double d2 = 1.0 / (opt_.spread * opt_.spread), K = k_;
    const int i0 = centre <= 0 ? 0 : centre >= n - 1 ? n - 1 : static_cast<int>(centre + 0.5);
    const double x = i0 - centre;
    const double g0 = std::exp(-0.5 * d2 * x * x);
    q[i0] = g0 + kFloor;
    double g = g0, r = std::exp(-d2 * x - 0.5 * d2);
    for (int i = i0 + 1; i < n; ++i) {
        g *= r;
        r *= K;
        q[i] = g + kFloor;
    }
    g = g0;
    double l = std::exp(d2 * x - 0.5 * d2);
    for (int i = i0 - 1; i >= 0; --i) {
        g *= l;
        l *= K;
        q[i] = g + kFloor;
    }
}

void TrailPredictor::likelihoodInto(ReqId id, int generated, double* q) const {
    const double centre = centreOf(id, generated);
    if (const float* row = likelihoodRow(centre)) {
        for (int i = 0; i < opt_.bins; ++i) q[i] = row[i];
        return;
    }
    likelihoodExact(centre, q);
}

std::vector<double> TrailPredictor::classifier(ReqId id, int generated) const {
    std::vector<double> q(static_cast<std::size_t>(opt_.bins));
    likelihoodInto(id, generated, q.data());
    double sum = 0;
    for (double v : q) sum += v;
    for (double& v : q) v /= sum;
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
    using Row = TableRow;
    static constexpr int kBlock = 16; // firstAbove skips blocks that stay at or below
    explicit Table(std::size_t n) : rows(n) {}
    std::vector<Row> rows;
    std::mutex stripes[64];
    std::atomic<std::size_t> bytes{0};

    // Rows' storage: carved from 2 MiB chunks, never freed before the table. A refined run
    // fills millions of estimates; one allocation per row (malloc) and a page fault per
    // 4 KiB written were a third of its time on this project's VM. The chunks are offered
    // to the kernel as transparent huge pages (one fault per chunk where it agrees).
    double* carve(std::size_t n) {
        std::lock_guard<std::mutex> lock(arena_m);
        if (n > chunk_left) {
            std::size_t size = 0;
            void* p = allocateHugePages(std::max(n, kChunkDoubles) * sizeof(double), &size);
            chunks.emplace_back(static_cast<double*>(p));
            chunk_next = static_cast<double*>(p);
            chunk_left = size / sizeof(double);
            bytes += size;
        }
        double* out = chunk_next;
        chunk_next += n;
        chunk_left -= n;
        return out;
    }
    static constexpr std::size_t kChunkDoubles = kHugePageBytes / sizeof(double);
    struct FreeChunk {
        void operator()(double* p) const { std::free(p); }
    };
    std::mutex arena_m;
    std::vector<std::unique_ptr<double, FreeChunk>> chunks;
    double* chunk_next = nullptr;
    std::size_t chunk_left = 0;
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
    // The lengths' fingerprint (FNV-1a over their bytes): the cache's key.
    const std::uint64_t fp = fnv1a64(truth_.data(), truth_.size() * sizeof(truth_[0]));
    table_ = tableCache().get({fp, truth_.size(), opt_.bins, opt_.every, opt_.l_max,
                               opt_.prompt_noise, opt_.token_noise, opt_.spread, seed_});
    rows_ = table_->rows.data();
}

double TrailPredictor::fillTable(ReqId id, int k) const {
    const auto i = static_cast<std::size_t>(id);
    Table::Row& r = table_->rows[i];
    std::lock_guard<std::mutex> lock(table_->stripes[i % 64]);
    int f = r.filled.load(std::memory_order_relaxed);
    if (f > k) return r.est[static_cast<std::size_t>(k)];
    // The same steps, in the same order, as the incremental filter in remaining(): the
    // same bits.
    const int s = opt_.every;
    const auto bins = static_cast<std::size_t>(opt_.bins);
    if (!r.est) {
        const std::size_t cap = static_cast<std::size_t>(truth_[i] / s) + 1;
        double* mem = table_->carve(cap + cap / Table::kBlock + 1 + bins);
        r.est = mem;
        r.block_max = mem + cap;
        r.post = r.block_max + cap / Table::kBlock + 1;
        const std::vector<double> q0 = classifier(id, 0);
        std::copy(q0.begin(), q0.end(), r.post);
        r.block_max[0] = r.est[0] = estimate(q0);
        f = 1;
    }
    const double p = std::min(1.0, opt_.bins / opt_.l_max);
    const double width = opt_.l_max / opt_.bins;
    // The classifier's outputs for a batch of calls first (independent of one another, so
    // the processor overlaps them), then the filter through them: from the table's rows,
    // with the posterior in registers at the default 10 bins and one call per period.
    constexpr int kBatch = 16;
    double q[kBatch * kMaxStackBins]; // values computed per call, where a row is not
    std::vector<double> heap;
    double* qp = q;
    if (bins > kMaxStackBins) {
        heap.resize(bins * kBatch);
        qp = heap.data();
    }
    const float* rows[kBatch];
    double e[kBatch];
    // At least kFillAhead calls at a time (to the row's end): the scheduler asks for each
    // running request's estimate a token or a few further at every decision, and a request
    // asked about once is usually asked about again soon. On the Azure conversation trace
    // at 4 req/s this makes 160,000 fills of 21 calls where there were 440,000 of 8, for
    // 2 % more calls in all.
    const int row_end = truth_[i] / s;
    const int to = std::min(row_end, std::max(k, f + kFillAhead - 1));
    while (f <= to) {
        const int n = std::min(kBatch, to - f + 1);
        bool all_rows = true;
        for (int j = 0; j < n; ++j) {
            const double centre = centreOf(id, (f + j) * s);
            rows[j] = likelihoodRow(centre);
            if (!rows[j]) {
                likelihoodExact(centre, qp + static_cast<std::size_t>(j) * bins);
                all_rows = false;
            }
        }
        if (s == 1 && bins == 10 && all_rows)
            smoothRun<10>(r.post, rows, n, p, width, e);
        else
            for (int j = 0; j < n; ++j)
                e[j] = rows[j] ? smoothInPlace(r.post, rows[j], bins, p, s, width)
                               : smoothInPlace(r.post, qp + static_cast<std::size_t>(j) * bins,
                                               bins, p, s, width);
        for (int j = 0; j < n; ++j, ++f) {
            r.est[static_cast<std::size_t>(f)] = e[j];
            double& m = r.block_max[static_cast<std::size_t>(f / Table::kBlock)];
            m = f % Table::kBlock == 0 ? e[j] : std::max(m, e[j]);
        }
    }
    r.filled.store(f, std::memory_order_release);
    return r.est[static_cast<std::size_t>(k)];
}

int TrailPredictor::firstAbove(ReqId id, int generated, int limit, double threshold) const {
    const int s = opt_.every;
    // At its true length a request has finished; tokens past it are not asked about.
    const int last = std::min(limit, truth_[static_cast<std::size_t>(id)] - 1);
    if (!table_ || generated >= last) return limit + 1;
    // Within a classifier period the estimate falls by one per token (at least 1), so in
    // the current period only the next token can be the first above; after it, only the
    // classifier calls at multiples of s can raise it.
    const int k0 = callAt(generated) + 1, k1 = callAt(last);
    if (s > 1 && generated + 1 < k0 * s && remaining(id, generated + 1) > threshold)
        return generated + 1;
    if (k0 > k1) return limit + 1;
    if (threshold < 1.0) return k0 * s; // remaining() is at least 1
    tableEstimate(id, k1);              // the row, filled through call k1
    const TableRow& r = rows_[static_cast<std::size_t>(id)];
    const double* est = r.est;
    constexpr int B = Table::kBlock;
    // A block that ends within [k0, k1] is complete (filled > k1), and no writer touches
    // it again: where its maximum is at or below the threshold the rest of it is skipped,
    // from wherever in it the search starts. The block holding k1 may still be extended by
    // another run's writer, so it is read entry by entry.
    const int last_full = (k1 + 1) / B; // blocks before it end at or before k1
    for (int k = k0; k <= k1;) {
        const int b = k / B;
        if (b < last_full && !(r.block_max[b] > threshold)) {
            k = (b + 1) * B;
            continue;
        }
        const int end = std::min(k1, (b + 1) * B - 1);
        for (; k <= end; ++k)
            if (est[k] > threshold) return k * s;
    }
    return limit + 1;
}

double TrailPredictor::initial(ReqId id) const {
    return initial_[static_cast<std::size_t>(id)];
}

double TrailPredictor::promptOnlyRemaining(ReqId id, int generated) const {
    return std::max(1.0, initial(id) - generated);
}

double TrailPredictor::remaining(ReqId id, int generated) const {
    const int s = opt_.every;
    const int call = callAt(generated), target = call * s; // the last call at or before
    if (target == 0) // the prompt's prediction (a request waiting): no filter needed
        // initial_ is max(1, that estimate): the same once `generated` is taken off.
        return std::max(1.0, initial_[static_cast<std::size_t>(id)] - generated);
    if (table_ && target <= truth_[static_cast<std::size_t>(id)])
        return std::max(1.0, tableEstimate(id, call) - (generated - target));
    // Past its true length (a caller probing): the filter, step by step.
    Cache& c = cache_[static_cast<std::size_t>(id)];
    if (c.at < 0 || c.at > target) {
        c.at = 0;
        c.post = classifier(id, 0);
        c.est = estimate(c.post);
    }
    const double p = std::min(1.0, opt_.bins / opt_.l_max), width = opt_.l_max / opt_.bins;
    q_.resize(static_cast<std::size_t>(opt_.bins));
    while (c.at < target) {
        c.at += s;
        likelihoodInto(id, c.at, q_.data());
        c.est = smoothInPlace(c.post.data(), q_.data(), c.post.size(), p, s, width);
    }
    return std::max(1.0, c.est - (generated - target));
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
