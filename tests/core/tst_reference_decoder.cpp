// The CPU reference decoder computes a real forward pass: incremental decoding over its
// KV cache, chunked prefill and batching must give the logits of one full pass.
#include "exec/reference_decoder.h"
#include "fit/cpu_profile.h"
#include "test_util.h"

#include <QtTest>

using namespace kairos;

namespace {
ModelConfig tiny() {
    ModelConfig m;
    m.name = "tiny";
    m.layers = 2;
    m.hidden = 16;
    m.heads = 4;
    m.kv_heads = 2;
    m.head_dim = 4;
    m.intermediate = 32;
    m.vocab = 50;
    m.params = 1;
    return m;
}
double maxDiff(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b) {
    return (a - b).cwiseAbs().maxCoeff();
}
} // namespace

class TestReferenceDecoder : public QObject {
    Q_OBJECT
private slots:
    void incrementalEqualsFullPass() {
        ReferenceDecoder d(tiny(), 3);
        const std::vector<int> toks{5, 17, 3, 42, 8, 23};
        auto full = d.newSequence();
        const Eigen::MatrixXf ref = d.forward({&full}, {toks});
        QCOMPARE(full.len, 6);

        auto inc = d.newSequence();
        d.forward({&inc}, {{5, 17, 3, 42}});
        d.forward({&inc}, {{8}});
        const Eigen::MatrixXf step = d.forward({&inc}, {{23}});
        QCOMPARE(inc.len, 6);
        QVERIFY2(maxDiff(step, ref) < 1e-4, qPrintable(QString::number(maxDiff(step, ref))));

        auto chunked = d.newSequence();
        d.forward({&chunked}, {{5, 17, 3}});
        const Eigen::MatrixXf ch = d.forward({&chunked}, {{42, 8, 23}});
        QVERIFY(maxDiff(ch, ref) < 1e-4);
        // A different history changes the result (the cache is really used).
        auto other = d.newSequence();
        d.forward({&other}, {{6, 17, 3, 42, 8}});
        QVERIFY(maxDiff(d.forward({&other}, {{23}}), ref) > 1e-3);
    }

    void batchEqualsSeparate() {
        ReferenceDecoder d(tiny(), 4);
        auto a = d.newSequence(), b = d.newSequence(), a2 = d.newSequence(), b2 = d.newSequence();
        const Eigen::MatrixXf ra = d.forward({&a}, {{1, 2, 3}});
        const Eigen::MatrixXf rb = d.forward({&b}, {{9, 8}});
        const Eigen::MatrixXf both = d.forward({&a2, &b2}, {{1, 2, 3}, {9, 8}});
        QVERIFY(maxDiff(both.col(0), ra) < 1e-4);
        QVERIFY(maxDiff(both.col(1), rb) < 1e-4);
        // A mixed iteration: one decode token for a, a prefill chunk for a new c.
        auto c = d.newSequence(), c2 = d.newSequence();
        const Eigen::MatrixXf mixed = d.forward({&a2, &c}, {{4}, {7, 7, 7}});
        QVERIFY(maxDiff(mixed.col(0), d.forward({&a}, {{4}})) < 1e-4);
        QVERIFY(maxDiff(mixed.col(1), d.forward({&c2}, {{7, 7, 7}})) < 1e-4);
    }

    void badInput() {
        ModelConfig m = tiny();
        m.heads = 3; // 3 * 4 != 16
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ReferenceDecoder(m, 1));
        ReferenceDecoder d(tiny(), 1);
        auto s = d.newSequence();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, d.forward({&s}, {{50}}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, d.forward({&s}, {{}}));
    }

    // The profiler measures every grid point and fits non-negative coefficients.
    void profilerCoversGrid() {
        ModelConfig m = tiny();
        m.hidden = 64;
        m.head_dim = 16;
        m.intermediate = 128;
        m.vocab = 256;
        CpuProfileGrid g;
        g.prefill_lengths = {8, 16, 32, 64};
        g.prefill_batches = {1, 2};
        g.decode_batches = {1, 2, 4};
        g.decode_contexts = {16, 64};
        g.repeats = 1;
        int lines = 0;
        const CpuProfileResult r =
            profileReferenceDecoder(m, g, [&](const std::string&) { ++lines; });
        QCOMPARE(r.prefill.size(), std::size_t(4 + 2)); // batch 2 only at the two shortest lengths
        QCOMPARE(r.decode.size(), std::size_t(6));
        QCOMPARE(lines, 12);
        QCOMPARE(r.decode[5].batch, 4.0);
        QCOMPARE(r.decode[5].sum_kv, 4.0 * 65);
        const EteParams& p = r.fit.params;
        QVERIFY(p.a >= 0 && p.b >= 0 && p.c >= 0 && p.q0 >= 0 && p.q1 >= 0 && p.p >= 0);
    }
};

QTEST_GUILESS_MAIN(TestReferenceDecoder)
#include "tst_reference_decoder.moc"
