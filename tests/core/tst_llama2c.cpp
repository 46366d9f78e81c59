// llama2.c checkpoints: the reader against the format (the real stories260K file's header
// and size; every malformed header and size refused with the field named), the plain
// reference forward pass (by hand on a model whose blocks add nothing; on the real model, a
// trained model's confidence on its own stories), and the seeded sampler's distribution.
#include "test_util.h"
#include "util/input_error.h"
#include "weights/llama2c.h"

#include <QtTest/QtTest>
#include <array>
#include <cmath>
#include <fstream>
#include <numeric>

using namespace kairos;

namespace {

std::string modelPath() {
    return test::dataPath("models/stories260K.bin");
}

// A checkpoint file from a header and its floats, as given.
std::string writeCheckpoint(const std::string& name, const std::vector<std::int32_t>& header,
                            const std::vector<float>& floats) {
    const std::string path = test::tempPath(name);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size() * 4));
    out.write(reinterpret_cast<const char*>(floats.data()), std::streamsize(floats.size() * 4));
    return path;
}

std::string fieldOfError(const std::string& path) {
    try {
        llama2c::read(path);
    } catch (const InputError& e) {
        if (e.file() != path) return "wrong file";
        return e.field();
    }
    return "accepted";
}

} // namespace

class TestLlama2c : public QObject {
    Q_OBJECT
private slots:
    // The shipped model as ../shared/data/README.md describes it: dim 64, hidden 172, 5
    // layers, 8 query and 4 KV heads, vocabulary 512 (shared classifier), context 512;
    // 264,128 floats after the header of which 4,096 are the legacy RoPE tables.
    void readsStories260K() {
        const llama2c::Weights w = llama2c::read(modelPath());
        QCOMPARE(w.h.dim, 64);
        QCOMPARE(w.h.hidden_dim, 172);
        QCOMPARE(w.h.n_layers, 5);
        QCOMPARE(w.h.n_heads, 8);
        QCOMPARE(w.h.n_kv_heads, 4);
        QCOMPARE(w.h.vocab_size, 512);
        QCOMPARE(w.h.seq_len, 512);
        QVERIFY(w.h.shared_classifier);
        QCOMPARE(w.h.headSize(), 8);
        QCOMPARE(w.h.kvDim(), 32);
        QCOMPARE(w.h.floatsExpected(), std::int64_t(264128));
        QCOMPARE(w.parameters(), std::int64_t(264128 - 4096));
        QCOMPARE(&w.classifier(), &w.token_embedding);
    }

    // Malformed files, each refused with the field at fault.
    void badFiles_data() {
        QTest::addColumn<int>("field");
        QTest::addColumn<int>("value");
        QTest::addColumn<QString>("want");
        QTest::newRow("dim 0") << 0 << 0 << "dim";
        QTest::newRow("hidden negative") << 1 << -3 << "hidden_dim";
        QTest::newRow("heads do not divide dim") << 3 << 7 << "n_heads";
        QTest::newRow("kv heads do not divide heads") << 4 << 3 << "n_kv_heads";
        QTest::newRow("odd head size") << 3 << 64 << "n_heads"; // 64 / 64 = 1
        QTest::newRow("seq_len huge") << 6 << (1 << 30) << "seq_len";
        QTest::newRow("size: more layers") << 2 << 6 << "size";
    }
    void badFiles() {
        QFETCH(int, field);
        QFETCH(int, value);
        QFETCH(QString, want);
        std::vector<std::int32_t> h{64, 172, 5, 8, 4, 512, 512};
        h[std::size_t(field)] = value;
        const std::vector<float> floats(264128, 0.01f);
        const std::string path = writeCheckpoint("bad.bin", h, floats);
        QCOMPARE(QString::fromStdString(fieldOfError(path)), want);
    }
    void truncatedAndOdd() {
        QCOMPARE(QString::fromStdString(fieldOfError(writeCheckpoint("short.bin", {64, 172}, {}))),
                 QStringLiteral("header"));
        const std::vector<std::int32_t> h{64, 172, 5, 8, 4, 512, 512};
        QCOMPARE(QString::fromStdString(
                     fieldOfError(writeCheckpoint("cut.bin", h, std::vector<float>(264127)))),
                 QStringLiteral("size"));
        // A separate classifier (negative vocab_size) needs 512 x 64 more floats.
        const std::vector<std::int32_t> sep{64, 172, 5, 8, 4, -512, 512};
        QCOMPARE(QString::fromStdString(
                     fieldOfError(writeCheckpoint("sep.bin", sep, std::vector<float>(264128)))),
                 QStringLiteral("size"));
        const auto w = llama2c::read(
            writeCheckpoint("sep_ok.bin", sep, std::vector<float>(264128 + 512 * 64, 0.5f)));
        QVERIFY(!w.h.shared_classifier);
        QCOMPARE(&w.classifier(), &w.wcls);
        std::vector<float> nan(264128, 0.0f);
        nan[100] = std::nanf("");
        QCOMPARE(QString::fromStdString(fieldOfError(writeCheckpoint("nan.bin", h, nan))),
                 QStringLiteral("token_embedding"));
        QCOMPARE(QString::fromStdString(fieldOfError(test::tempPath("missing.bin"))),
                 QStringLiteral(""));
    }

    // By hand: with every attention and FFN output matrix zero, each block adds nothing, so
    // the logits are the classifier times rmsnorm(embedding) scaled by the final gain,
    // whatever the position. dim 4, 2 heads, 1 KV head, vocab 3, context 4.
    void referenceByHand() {
        const int dim = 4, hidden = 2, vocab = 3, seq = 4;
        const std::vector<std::int32_t> h{dim, hidden, 1, 2, 1, vocab, seq};
        std::vector<float> f;
        const std::vector<float> emb{1, 2, 3, 4, 0, 0, 0, 2, -1, 1, -1, 1};
        f.insert(f.end(), emb.begin(), emb.end());
        f.insert(f.end(), dim, 1.0f);                // rms_att
        f.insert(f.end(), dim * dim, 0.3f);          // wq
        f.insert(f.end(), 2 * dim * 2, 0.2f);        // wk, wv (kv_dim 2)
        f.insert(f.end(), dim * dim, 0.0f);          // wo: attention adds nothing
        f.insert(f.end(), dim, 1.0f);                // rms_ffn
        f.insert(f.end(), hidden * dim, 0.5f);       // w1
        f.insert(f.end(), dim * hidden, 0.0f);       // w2: the FFN adds nothing
        f.insert(f.end(), hidden * dim, 0.5f);       // w3
        f.insert(f.end(), {2.0f, 2.0f, 2.0f, 2.0f}); // rms_final
        f.insert(f.end(), seq * 2, 0.0f); // two RoPE tables of seq x head_size / 2 = 4 x 1
        const auto w = llama2c::read(writeCheckpoint("hand.bin", h, f));
        llama2c::Reference ref(w);
        // Token 0, embedding (1, 2, 3, 4): mean square 7.5; normed x 2 = 2 x / sqrt(7.5 + 1e-5).
        const double s = 2.0 / std::sqrt(7.5 + 1e-5);
        const double want[3] = {s * (1 + 4 + 9 + 16), s * (0 + 0 + 0 + 8), s * (-1 + 2 - 3 + 4)};
        for (int pos = 0; pos < 3; ++pos) {
            const auto& logits = ref.step(0, pos);
            for (int i = 0; i < 3; ++i) QVERIFY(std::abs(logits[std::size_t(i)] - want[i]) < 1e-4);
        }
    }

    // The real model is trained: sampling its own stories at temperature 1 from BOS, the
    // mean negative log-likelihood of the sampled tokens (the model's entropy on its own
    // text) is far under a uniform guess's ln 512 = 6.24. Measured over 12 seeds x 300
    // tokens: 2.90 nats with run.c's semantics (mean entropy 2.94); an entropy of 4.77 with
    // the KV heads mapped h mod 4 instead of h / 2 (a plausible slip), so the bound 3.8 tells them
    // apart. Rotating halves instead of adjacent pairs changes little on this model (2.88): that
    // one is caught by the libtorch transformer agreeing with this pass to 1e-4 (tst_live_model,
    // whose loader permutes wq and wk for its half rotation).
    void referenceOnTheRealModel() {
        const llama2c::Weights w = llama2c::read(modelPath());
        llama2c::Reference ref(w);
        double sum = 0;
        int ends = 0;
        for (int seed = 1; seed <= 12; ++seed) {
            ref.reset();
            llama2c::Sampler sampler(1.0, 1.0, std::uint64_t(seed)); // the full distribution
            double nll = 0;
            int n = 0, token = llama2c::kBos;
            for (int pos = 0; pos < 300; ++pos) {
                const auto& logits = ref.step(token, pos);
                const float mx = *std::max_element(logits.begin(), logits.end());
                double z = 0;
                for (float l : logits) z += std::exp(double(l) - mx);
                const int next = sampler.sample(logits.data(), int(logits.size()));
                nll += -(double(logits[std::size_t(next)]) - mx - std::log(z));
                ++n;
                if (next == llama2c::kBos) { // the story ended
                    ++ends;
                    break;
                }
                token = next;
            }
            sum += nll / n;
        }
        const double mean = sum / 12;
        qInfo("stories260K, 12 self-sampled stories (300 tokens at most): mean NLL %.3f nats "
              "(uniform %.2f), %d ended",
              mean, std::log(512.0), ends);
        QVERIFY2(mean > 0.3 && mean < 3.8, qPrintable(QString::number(mean)));
    }

    // The sampler: temperature 0 is argmax; a tiny top-p keeps only the most likely token;
    // at temperature 1 and top-p 1 the frequencies over 40,000 draws match the softmax
    // (each within 4 standard errors); at top-p 0.75 over probabilities (0.5, 0.3, 0.2)
    // only the first two are drawn, renormalised to 0.625 / 0.375.
    void sampler() {
        const float logits[3] = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
        llama2c::Sampler greedy(0.0, 0.9, 1);
        QCOMPARE(greedy.sample(logits, 3), 0);
        llama2c::Sampler narrow(1.0, 1e-6, 1);
        for (int i = 0; i < 100; ++i) QCOMPARE(narrow.sample(logits, 3), 0);
        auto freq = [&](double top_p) {
            llama2c::Sampler s(1.0, top_p, 42);
            std::array<int, 3> c{};
            for (int i = 0; i < 40000; ++i) ++c[std::size_t(s.sample(logits, 3))];
            return c;
        };
        auto near = [](int count, double p) {
            const double se = std::sqrt(40000 * p * (1 - p));
            return std::abs(count - 40000 * p) < 4 * se;
        };
        const auto all = freq(1.0);
        QVERIFY(near(all[0], 0.5) && near(all[1], 0.3) && near(all[2], 0.2));
        const auto nucleus = freq(0.75);
        QCOMPARE(nucleus[2], 0);
        QVERIFY(near(nucleus[0], 0.625) && near(nucleus[1], 0.375));
    }
};

QTEST_GUILESS_MAIN(TestLlama2c)
#include "tst_llama2c.moc"
