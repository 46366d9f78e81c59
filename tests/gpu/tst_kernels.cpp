// The live engine's kernels: the host references against computations written out here in
// double precision, and (with a GPU) the CUDA kernels against the host references.
#include "kernels/compare.h"
#include "kernels/kernels.h"
#include "weights/safetensors.h"

#include <QtTest/QtTest>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kairos::gpu::kernels;
namespace st = kairos::safetensors;

namespace {

// A ragged batch in float with its expected outputs computed in double.
struct Batch {
    int batch = 0, heads = 0, kv_heads = 0, d = 0;
    std::vector<int> lens, caps;
    std::vector<float> q;
    std::vector<std::vector<float>> k, v; // per request [kv_heads, cap, d]
    std::vector<double> expect;           // [batch, heads, d]
};

// out = softmax(q.K * scale) . V in double, from the batch's (possibly rounded) inputs.
void computeExpected(Batch& b) {
    const int heads = b.heads, d = b.d, group = b.heads / b.kv_heads;
    const double scale = 1.0 / std::sqrt(double(d));
    b.expect.assign(b.q.size(), 0.0);
    for (int r = 0; r < b.batch; ++r) {
        const auto len = std::size_t(b.lens[std::size_t(r)]);
        for (int h = 0; h < heads; ++h) {
            const std::size_t base =
                std::size_t(h / group) * std::size_t(b.caps[std::size_t(r)]) * std::size_t(d);
            const std::size_t qo =
                (std::size_t(r) * std::size_t(heads) + std::size_t(h)) * std::size_t(d);
            std::vector<double> s(len);
            double m = -1e300;
            for (std::size_t t = 0; t < len; ++t) {
                double dot = 0;
                for (std::size_t i = 0; i < std::size_t(d); ++i)
                    dot += double(b.q[qo + i]) * b.k[std::size_t(r)][base + t * std::size_t(d) + i];
                s[t] = dot * scale;
                m = std::max(m, s[t]);
            }
            double sum = 0;
            for (auto& x : s) sum += (x = std::exp(x - m));
            for (std::size_t i = 0; i < std::size_t(d); ++i) {
                double o = 0;
                for (std::size_t t = 0; t < len; ++t)
                    o += s[t] * b.v[std::size_t(r)][base + t * std::size_t(d) + i];
                b.expect[qo + i] = o / sum;
            }
        }
    }
}

Batch makeBatch(int heads, int kv_heads, int d, std::vector<int> lens, unsigned seed) {
    Batch b;
    b.batch = int(lens.size()), b.heads = heads, b.kv_heads = kv_heads, b.d = d;
    b.lens = lens;
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    for (int len : lens) b.caps.push_back(len + 3 + len % 5); // capacity past the length
    b.q.resize(std::size_t(b.batch) * heads * d);
    for (auto& x : b.q) x = n(rng);
    for (int r = 0; r < b.batch; ++r) {
        std::vector<float> k(std::size_t(kv_heads) * b.caps[std::size_t(r)] * d), v(k.size());
        for (auto& x : k) x = n(rng);
        for (auto& x : v) x = n(rng);
        b.k.push_back(k);
        b.v.push_back(v);
    }
    computeExpected(b);
    return b;
}

std::vector<std::uint16_t> narrow(const std::vector<float>& x, Elem e) {
    std::vector<std::uint16_t> out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        out[i] = e == Elem::F16 ? st::floatToHalf(x[i]) : st::floatToBf16(x[i]);
    return out;
}

float widen(std::uint16_t x, Elem e) {
    return e == Elem::F16 ? st::halfToFloat(x) : st::bf16ToFloat(x);
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void halfAndBf16Conversions();
    void decodeAttentionHostF32();
    void decodeAttentionHost16();
    void kvCompactHostExact();
    void cudaKernelsMatchHost();
};

void TestKernels::halfAndBf16Conversions() {
    // Exact values of IEEE half: 1, -2, 65504 (largest), 2^-14 (smallest normal),
    // 2^-24 (smallest subnormal); rounding to nearest even.
    QCOMPARE(st::floatToHalf(1.0f), std::uint16_t(0x3C00));
    QCOMPARE(st::floatToHalf(-2.0f), std::uint16_t(0xC000));
    QCOMPARE(st::floatToHalf(65504.0f), std::uint16_t(0x7BFF));
    QCOMPARE(st::floatToHalf(65536.0f), std::uint16_t(0x7C00));
    QCOMPARE(st::floatToHalf(std::ldexp(1.0f, -14)), std::uint16_t(0x0400));
    QCOMPARE(st::floatToHalf(std::ldexp(1.0f, -24)), std::uint16_t(0x0001));
    QCOMPARE(st::floatToHalf(std::ldexp(1.0f, -26)), std::uint16_t(0x0000));
    QCOMPARE(st::floatToHalf(1.0f + std::ldexp(1.0f, -11)), std::uint16_t(0x3C00)); // tie: even
    QCOMPARE(st::floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), std::uint16_t(0x3C02));
    QCOMPARE(st::halfToFloat(0x0001), std::ldexp(1.0f, -24));
    QCOMPARE(st::halfToFloat(0x3555), 0.333251953125f);
    QVERIFY(std::isinf(st::halfToFloat(0x7C00)));
    QVERIFY(std::isnan(st::halfToFloat(0x7E00)));
    QCOMPARE(st::floatToBf16(1.0f), std::uint16_t(0x3F80));
    QCOMPARE(st::floatToBf16(1.0f + std::ldexp(1.0f, -8)), std::uint16_t(0x3F80)); // tie: even
    QCOMPARE(st::floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), std::uint16_t(0x3F82));
    QCOMPARE(st::bf16ToFloat(0xC040), -3.0f);
    // Every half value survives half -> float -> half.
    for (std::uint32_t h = 0; h < 0x10000; ++h) {
        const float f = st::halfToFloat(std::uint16_t(h));
        if (std::isnan(f)) continue;
        QCOMPARE(st::floatToHalf(f), std::uint16_t(h));
    }
}

void TestKernels::decodeAttentionHostF32() {
    for (const auto& [heads, kvh, d] :
         std::vector<std::tuple<int, int, int>>{{4, 2, 16}, {14, 2, 64}, {8, 8, 32}}) {
        Batch b = makeBatch(heads, kvh, d, {1, 7, 33, 2, 128}, unsigned(heads * 100 + d));
        std::vector<float> out(b.q.size(), -99.0f);
        std::vector<const void*> kp, vp;
        for (int r = 0; r < b.batch; ++r) {
            kp.push_back(b.k[std::size_t(r)].data());
            vp.push_back(b.v[std::size_t(r)].data());
        }
        DecodeAttention a;
        a.batch = b.batch, a.heads = heads, a.kv_heads = kvh, a.head_dim = d;
        a.scale = float(1.0 / std::sqrt(double(d)));
        a.q = b.q.data(), a.out = out.data(), a.k = kp.data(), a.v = vp.data();
        a.lens = b.lens.data(), a.caps = b.caps.data();
        decodeAttentionHost(a, Elem::F32);
        double worst = 0;
        for (std::size_t i = 0; i < out.size(); ++i)
            worst = std::max(worst, std::abs(out[i] - b.expect[i]));
        QVERIFY2(worst < 2e-5, qPrintable(QString("max abs error %1").arg(worst)));
        // A request with one position returns that position's value row.
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < d; ++i)
                QCOMPARE(out[std::size_t(h) * d + i],
                         b.v[0][std::size_t(h / (heads / kvh)) * b.caps[0] * d + i]);
    }
}

void TestKernels::decodeAttentionHost16() {
    // In half and bfloat16 the inputs are rounded first; the result must match the double
    // computation on the rounded inputs to within the output's own rounding.
    for (Elem e : {Elem::F16, Elem::BF16}) {
        Batch b = makeBatch(8, 2, 64, {5, 64, 300}, 7);
        const auto round = [&](std::vector<float>& x) {
            for (auto& y : x)
                y = widen(e == Elem::F16 ? st::floatToHalf(y) : st::floatToBf16(y), e);
        };
        round(b.q);
        for (auto& k : b.k) round(k);
        for (auto& v : b.v) round(v);
        computeExpected(b); // on the rounded inputs
        const auto q16 = narrow(b.q, e);
        std::vector<std::vector<std::uint16_t>> k16, v16;
        std::vector<const void*> kp, vp;
        for (int r = 0; r < b.batch; ++r) {
            k16.push_back(narrow(b.k[std::size_t(r)], e));
            v16.push_back(narrow(b.v[std::size_t(r)], e));
        }
        for (int r = 0; r < b.batch; ++r) {
            kp.push_back(k16[std::size_t(r)].data());
            vp.push_back(v16[std::size_t(r)].data());
        }
        std::vector<std::uint16_t> out(b.q.size());
        DecodeAttention a;
        a.batch = b.batch, a.heads = 8, a.kv_heads = 2, a.head_dim = 64, a.scale = 0.125f;
        a.q = q16.data(), a.out = out.data(), a.k = kp.data(), a.v = vp.data();
        a.lens = b.lens.data(), a.caps = b.caps.data();
        decodeAttentionHost(a, e);
        const double ulp = e == Elem::F16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
        for (std::size_t i = 0; i < out.size(); ++i) {
            const double want = b.expect[i];
            const double got = widen(out[i], e);
            QVERIFY2(std::abs(got - want) <= ulp * std::max(std::abs(want), 0.0625) + 1e-6,
                     qPrintable(QString("elem %1: %2 vs %3").arg(i).arg(got).arg(want)));
        }
    }
}

void TestKernels::kvCompactHostExact() {
    const int kvh = 3, d = 8, cap = 20, keep = 6;
    std::vector<float> src(std::size_t(kvh) * cap * d), dst(std::size_t(kvh) * 10 * d, -1.0f);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = float(i);
    const std::vector<std::int32_t> index = {0, 2, 3, 9,  17, 19, 1,  4,  5,
                                             6, 7, 8, 10, 11, 12, 13, 18, 19};
    KvCompact a;
    a.kv_heads = kvh, a.head_dim = d, a.keep = keep, a.src = src.data(), a.src_cap = cap;
    a.dst = dst.data(), a.dst_cap = 10, a.index = index.data();
    kvCompactHost(a, Elem::F32);
    for (int g = 0; g < kvh; ++g)
        for (int j = 0; j < 10; ++j)
            for (int i = 0; i < d; ++i) {
                const float got = dst[(std::size_t(g) * 10 + j) * d + i];
                if (j >= keep) {
                    QCOMPARE(got, -1.0f); // rows past `keep` untouched
                    continue;
                }
                QCOMPARE(got, float((g * cap + index[std::size_t(g * keep + j)]) * d + i));
            }
}

void TestKernels::cudaKernelsMatchHost() {
    // The comparison itself lives with the kernels (kernels/compare.h), where
    // kairos-gpu-check runs it on a GPU machine without Qt.
#ifndef KAIROS_HAVE_CUDA
    QVERIFY(!cudaKernelsBuilt());
#else
    QVERIFY(cudaKernelsBuilt());
#endif
    const KernelComparison r = compareCudaWithHost();
    if (!r.ran) QSKIP(r.why_not.c_str());
    QVERIFY2(r.error.empty(), r.error.c_str());
    QCOMPARE(r.cases.size(), std::size_t(13)); // 3 element types x 4 shapes, and compaction
    for (const KernelCase& c : r.cases)
        QVERIFY2(c.passed(), qPrintable(QString::fromStdString(c.name) +
                                        QString(": %1 > %2").arg(c.worst).arg(c.tolerance)));
}

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
