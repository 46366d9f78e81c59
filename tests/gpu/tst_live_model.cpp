// The live engine's transformer on the CPU (tiny model, fp32): the KV cache, batching,
// suspend/resume, recompute, SnapKV-style eviction and checkpoint loading, each against
// the computation it must equal. Torch headers come first and Qt's keywords are off
// (QT_NO_KEYWORDS): Qt's `slots` macro breaks them.
#include "quality.h"
#include "real_model.h"
#include "transformer.h"
#include "util/input_error.h"
#include "weights/llama2c.h"
#include "weights/safetensors.h"

#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace kairos::gpu;
namespace st = kairos::safetensors;

namespace {

std::vector<std::int64_t> randomTokens(int n, int vocab, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int64_t> u(0, vocab - 1);
    std::vector<std::int64_t> t(static_cast<std::size_t>(n));
    for (auto& x : t) x = u(rng);
    return t;
}

// Logits of the last token of `tokens`, computed by one prefill on a fresh cache.
at::Tensor recompute(Transformer& m, const std::vector<std::int64_t>& tokens) {
    SeqCache c;
    std::vector<Transformer::Step> s{{&c, tokens}};
    return m.forward(s)[0];
}

double maxDiff(const at::Tensor& a, const at::Tensor& b) {
    return (a - b).abs().max().item<double>();
}

double scaleOf(const at::Tensor& a) {
    return std::max(1.0, a.abs().max().item<double>());
}

// Tolerance for fp32 results that differ only in summation order (GEMM blocking differs
// with the number of rows), relative to the logits' scale.
constexpr double kTol = 2e-5;

} // namespace

class TestLiveModel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // After settleHostAllocator, a block of an iteration's size (8 MiB) comes from the
    // heap and stays there when freed; only blocks over 32 MiB are mapped on their own.
    void hostAllocatorSettled() {
#if !defined(__GLIBC__)
        QSKIP("not glibc");
#elif defined(__SANITIZE_ADDRESS__)
        QSKIP("AddressSanitizer replaces the allocator");
#else
        QVERIFY(settleHostAllocator());
        const auto mapped = [] { return mallinfo2().hblks; };
        const std::size_t before = mapped();
        void* mid = std::malloc(8u << 20);
        QVERIFY(mid);
        QCOMPARE(mapped(), before);
        void* big = std::malloc(64u << 20);
        QVERIFY(big);
        QCOMPARE(mapped(), before + 1);
        std::free(big);
        std::free(mid);
        QCOMPARE(mapped(), before);
#endif
    }

    void configs();
    void cachedDecodeEqualsRecompute();
    void chunkedPrefillEqualsWhole();
    void blockedAttentionEqualsWhole();
    void batchedDecodeEqualsOneByOne();
    void suspendResumeAndRecompute();
    void evictionAlphaZeroChangesNothing();
    void evictionKeepsStatedPositions();
    void checkpointRoundTrip();
    void llama2cMatchesReference();
    void qualityOnTheRealModel();
    void checkpointErrors();
};

void TestLiveModel::configs() {
    // Parameter counts of the real models (their model cards: 0.49 B and 8.03 B).
    QVERIFY(std::abs(builtinConfig("qwen2.5-0.5b").params() - 0.494e9) < 0.002e9);
    QVERIFY(std::abs(builtinConfig("llama-3-8b").params() - 8.03e9) < 0.01e9);
    const auto shape = builtinConfig("qwen2.5-0.5b").shape(2);
    QCOMPARE(shape.kvBytesPerToken(), std::int64_t(2 * 24 * 2 * 64 * 2)); // 12 KiB per token
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, builtinConfig("gpt-5"));
    Transformer m(builtinConfig("tiny"), {});
    QVERIFY(!m.realWeights());
    QCOMPARE(double(m.weightBytes()), builtinConfig("tiny").params() * 4);
    // Same seed, same weights; another seed, other logits.
    Transformer m2(builtinConfig("tiny"), {});
    TransformerOptions o3;
    o3.seed = 2;
    Transformer m3(builtinConfig("tiny"), o3);
    const auto toks = randomTokens(9, 512, 1);
    QCOMPARE(maxDiff(recompute(m, toks), recompute(m2, toks)), 0.0);
    QVERIFY(maxDiff(recompute(m, toks), recompute(m3, toks)) > 1e-3);
}

void TestLiveModel::cachedDecodeEqualsRecompute() {
    Transformer m(builtinConfig("tiny"), {});
    auto tokens = randomTokens(37, 512, 3);
    SeqCache c;
    std::vector<Transformer::Step> s{{&c, tokens}};
    at::Tensor logits = m.forward(s)[0];
    QVERIFY(maxDiff(logits, recompute(m, tokens)) <= kTol * scaleOf(logits));
    for (int i = 0; i < 20; ++i) {
        const std::int64_t next = logits.argmax().item<std::int64_t>(); // greedy
        tokens.push_back(next);
        std::vector<Transformer::Step> d{{&c, {next}}};
        logits = m.forward(d)[0];
        const at::Tensor full = recompute(m, tokens);
        QVERIFY2(maxDiff(logits, full) <= kTol * scaleOf(full),
                 qPrintable(QString("step %1: %2").arg(i).arg(maxDiff(logits, full))));
    }
    QCOMPARE(c.len, std::int64_t(tokens.size()));
    QCOMPARE(c.next_pos, c.len);
    QVERIFY(c.cap >= c.len);
}

void TestLiveModel::chunkedPrefillEqualsWhole() {
    Transformer m(builtinConfig("tiny"), {});
    const auto tokens = randomTokens(50, 512, 4);
    SeqCache c;
    at::Tensor logits;
    for (auto [from, n] : std::vector<std::pair<int, int>>{{0, 17}, {17, 1}, {18, 32}}) {
        std::vector<Transformer::Step> s{
            {&c, std::vector<std::int64_t>(tokens.begin() + from, tokens.begin() + from + n)}};
        logits = m.forward(s)[0];
    }
    const at::Tensor full = recompute(m, tokens);
    QVERIFY(maxDiff(logits, full) <= kTol * scaleOf(full));
}

void TestLiveModel::blockedAttentionEqualsWhole() {
    // The prefill's attention in blocks of queries (16 rows here: a 300-token prompt is 19
    // blocks, a later chunk of 40 is 3) against the same model with one block per chunk:
    // the same logits, and the same SnapKV scores with a window that spans blocks.
    TransformerOptions small, whole;
    small.score_block_bytes = 1; // clamped to 16 queries a block
    whole.score_block_bytes = std::int64_t(1) << 40;
    Transformer a(builtinConfig("tiny"), small), b(builtinConfig("tiny"), whole);
    const auto tokens = randomTokens(340, 512, 9);
    SeqCache ca, cb;
    for (auto [from, n] : std::vector<std::pair<int, int>>{{0, 300}, {300, 40}}) {
        const std::vector<std::int64_t> part(tokens.begin() + from, tokens.begin() + from + n);
        SnapScores sa, sb;
        std::vector<Transformer::Step> s1{{&ca, part, 37, &sa}}, s2{{&cb, part, 37, &sb}};
        const at::Tensor la = a.forward(s1)[0], lb = b.forward(s2)[0];
        QVERIFY(maxDiff(la, lb) <= kTol * scaleOf(lb));
        QCOMPARE(sa.per_layer.size(), sb.per_layer.size());
        for (std::size_t l = 0; l < sa.per_layer.size(); ++l) {
            QCOMPARE(sa.per_layer[l].sizes(), sb.per_layer[l].sizes());
            QCOMPARE(sa.per_layer[l].size(1), std::int64_t(from + n)); // every cached position
            QVERIFY(maxDiff(sa.per_layer[l], sb.per_layer[l]) <= 1e-5 * scaleOf(sb.per_layer[l]));
            // Each of the window's queries (of each query head) spends exactly 1 over the
            // positions: a KV head's scores add up to window x heads per KV head.
            const auto cfg = builtinConfig("tiny");
            const double mass = std::min(37, n) * double(cfg.heads / cfg.kv_heads);
            const at::Tensor per_head = sa.per_layer[l].sum(1);
            for (std::int64_t g = 0; g < per_head.size(0); ++g)
                QVERIFY(std::abs(per_head[g].item<double>() - mass) <= 1e-3 * mass);
        }
    }
    QVERIFY(maxDiff(recompute(a, tokens), recompute(b, tokens)) <=
            kTol * scaleOf(recompute(b, tokens)));
}

void TestLiveModel::batchedDecodeEqualsOneByOne() {
    Transformer m(builtinConfig("tiny"), {});
    const std::vector<int> lens = {5, 31, 12, 64, 1};
    std::vector<std::vector<std::int64_t>> toks;
    std::vector<SeqCache> batched(lens.size()), alone(lens.size());
    // Prefill: all prompts in one iteration, and each alone.
    std::vector<Transformer::Step> s;
    for (std::size_t i = 0; i < lens.size(); ++i) {
        toks.push_back(randomTokens(lens[i], 512, unsigned(10 + i)));
        s.push_back({&batched[i], toks[i]});
    }
    at::Tensor lb = m.forward(s);
    QCOMPARE(lb.size(0), std::int64_t(lens.size()));
    for (std::size_t i = 0; i < lens.size(); ++i) {
        std::vector<Transformer::Step> one{{&alone[i], toks[i]}};
        const at::Tensor la = m.forward(one)[0];
        QVERIFY(maxDiff(lb[std::int64_t(i)], la) <= kTol * scaleOf(la));
    }
    // Eight decode iterations: the batch (one kernel call per layer) against one by one,
    // and a mixed iteration (a prefill chunk beside the decodes) once.
    SeqCache extra_b, extra_a;
    const auto extra = randomTokens(9, 512, 99);
    for (int it = 0; it < 8; ++it) {
        std::vector<Transformer::Step> d;
        std::vector<std::int64_t> next;
        for (std::size_t i = 0; i < lens.size(); ++i) {
            next.push_back(lb[std::int64_t(i)].argmax().item<std::int64_t>());
            d.push_back({&batched[i], {next.back()}});
        }
        if (it == 3) d.push_back({&extra_b, extra});
        lb = m.forward(d);
        for (std::size_t i = 0; i < lens.size(); ++i) {
            std::vector<Transformer::Step> one{{&alone[i], {next[i]}}};
            const at::Tensor la = m.forward(one)[0];
            QVERIFY2(maxDiff(lb[std::int64_t(i)], la) <= kTol * scaleOf(la),
                     qPrintable(QString("iteration %1 request %2: %3")
                                    .arg(it)
                                    .arg(i)
                                    .arg(maxDiff(lb[std::int64_t(i)], la))));
        }
        if (it == 3) {
            std::vector<Transformer::Step> one{{&extra_a, extra}};
            QVERIFY(maxDiff(lb[std::int64_t(lens.size())], m.forward(one)[0]) <=
                    kTol * scaleOf(lb));
        }
    }
}

void TestLiveModel::suspendResumeAndRecompute() {
    Transformer m(builtinConfig("tiny"), {});
    const auto prompt = randomTokens(20, 512, 5);
    // Uninterrupted: 12 decode steps.
    std::vector<std::int64_t> seq = prompt;
    std::vector<at::Tensor> want;
    {
        SeqCache c;
        std::vector<Transformer::Step> s{{&c, prompt}};
        at::Tensor l = m.forward(s)[0];
        for (int i = 0; i < 12; ++i) {
            seq.push_back(l.argmax().item<std::int64_t>());
            std::vector<Transformer::Step> d{{&c, {seq.back()}}};
            l = m.forward(d)[0];
            want.push_back(l);
        }
    }
    // Suspended after 4 steps while two other requests run 10 iterations, then resumed
    // with its KV kept; and preempted after 8 steps with its KV dropped, then recomputed
    // from the prompt and its generated tokens (vLLM's recompute).
    SeqCache c, other1, other2;
    std::vector<Transformer::Step> s{{&c, prompt}};
    m.forward(s);
    for (int i = 0; i < 12; ++i) {
        if (i == 4) {
            std::vector<Transformer::Step> o{{&other1, randomTokens(30, 512, 6)},
                                             {&other2, randomTokens(3, 512, 7)}};
            at::Tensor lo = m.forward(o);
            for (int j = 0; j < 10; ++j) {
                std::vector<Transformer::Step> od{{&other1, {lo[0].argmax().item<std::int64_t>()}},
                                                  {&other2, {lo[1].argmax().item<std::int64_t>()}}};
                lo = m.forward(od);
            }
        }
        at::Tensor l;
        if (i == 8) {
            c.clear(); // preempted: KV dropped
            std::vector<Transformer::Step> r{
                {&c, std::vector<std::int64_t>(
                         seq.begin(), seq.begin() + std::ptrdiff_t(prompt.size()) + i + 1)}};
            l = m.forward(r)[0];
        } else {
            std::vector<Transformer::Step> d{{&c, {seq[prompt.size() + std::size_t(i)]}}};
            l = m.forward(d)[0];
        }
        QVERIFY2(maxDiff(l, want[std::size_t(i)]) <= kTol * scaleOf(l),
                 qPrintable(QString("step %1: %2").arg(i).arg(maxDiff(l, want[std::size_t(i)]))));
    }
}

void TestLiveModel::evictionAlphaZeroChangesNothing() {
    // Two identical requests computed the same way (each alone: the same GEMM shapes, so
    // bit for bit the same numbers); one is "evicted" with alpha = 0.
    Transformer m(builtinConfig("tiny"), {});
    const auto prompt = randomTokens(40, 512, 8);
    SeqCache a, b;
    SnapScores sa, sb;
    std::vector<Transformer::Step> pa{{&a, prompt, 8, &sa}}, pb{{&b, prompt, 8, &sb}};
    QCOMPARE(maxDiff(m.forward(pa)[0], m.forward(pb)[0]), 0.0);
    m.evict(a, 0.0, sa);
    QCOMPARE(a.len, std::int64_t(40));
    QVERIFY(a.kept.empty());
    for (std::size_t l = 0; l < 2; ++l) // the cached positions (capacity past them is unset)
        QVERIFY(at::equal(a.k[l].narrow(1, 0, a.len), b.k[l].narrow(1, 0, b.len)));
    for (std::int64_t t : {7, 300, 12}) {
        std::vector<Transformer::Step> da{{&a, {t}}}, db{{&b, {t}}};
        QCOMPARE(maxDiff(m.forward(da)[0], m.forward(db)[0]), 0.0);
    }
}

void TestLiveModel::evictionKeepsStatedPositions() {
    const auto cfg = builtinConfig("tiny");
    Transformer m(cfg, {});
    const int n = 50, window = 8, pool = 7;
    const double alpha = 0.4;
    const auto prompt = randomTokens(n, 512, 9);
    SeqCache c;
    SnapScores sc;
    std::vector<Transformer::Step> s{{&c, prompt, window, &sc}};
    m.forward(s);
    QCOMPARE(sc.window, window);
    QCOMPARE(int(sc.per_layer.size()), cfg.layers);
    std::vector<at::Tensor> k_before, v_before;
    for (int l = 0; l < cfg.layers; ++l) {
        k_before.push_back(c.k[std::size_t(l)].clone());
        v_before.push_back(c.v[std::size_t(l)].clone());
        // Every window query's probabilities sum to one, over the group's query heads.
        const double total = sc.per_layer[std::size_t(l)].sum().item<double>();
        QVERIFY(std::abs(total - double(cfg.heads) * window) < 1e-3);
    }
    m.evict(c, alpha, sc, -1, pool);
    const int keep = n - int(std::floor(alpha * n)); // 30
    QCOMPARE(keep, 30);
    QCOMPARE(c.len, std::int64_t(keep));
    QCOMPARE(c.next_pos, std::int64_t(n));
    for (int l = 0; l < cfg.layers; ++l) {
        const at::Tensor sl = sc.per_layer[std::size_t(l)];
        for (int g = 0; g < cfg.kv_heads; ++g) {
            // Expected, written out: the window, and the best (keep - window) of the
            // others by the maximum of the scores within +-3 positions (ties: earlier).
            std::vector<std::pair<float, int>> cand;
            for (int i = 0; i < n - window; ++i) {
                float best = -1;
                for (int j = std::max(0, i - pool / 2); j <= std::min(n - window - 1, i + pool / 2);
                     ++j)
                    best = std::max(best, sl[g][j].item<float>());
                cand.push_back({-best, i});
            }
            std::sort(cand.begin(), cand.end());
            std::vector<std::int64_t> expect;
            for (int i = 0; i < keep - window; ++i) expect.push_back(cand[std::size_t(i)].second);
            for (int i = n - window; i < n; ++i) expect.push_back(i);
            std::sort(expect.begin(), expect.end());
            const at::Tensor kept = c.kept[std::size_t(l)][g];
            QCOMPARE(kept.size(0), std::int64_t(keep));
            for (int j = 0; j < keep; ++j) {
                QCOMPARE(kept[j].item<std::int64_t>(), expect[std::size_t(j)]);
                // The cache rows are the original rows at the kept positions, bit for bit.
                QVERIFY(at::equal(c.k[std::size_t(l)][g][j],
                                  k_before[std::size_t(l)][g][expect[std::size_t(j)]]));
                QVERIFY(at::equal(c.v[std::size_t(l)][g][j],
                                  v_before[std::size_t(l)][g][expect[std::size_t(j)]]));
            }
        }
    }
    // Decoding goes on from the compressed cache, at the true positions.
    std::vector<Transformer::Step> d{{&c, {3}}};
    const at::Tensor l = m.forward(d);
    QVERIFY(at::isfinite(l).all().item<bool>());
    QCOMPARE(c.len, std::int64_t(keep + 1));
    QCOMPARE(c.next_pos, std::int64_t(n + 1));
    // alpha = 1 keeps only the window.
    SeqCache c1;
    SnapScores s1;
    std::vector<Transformer::Step> p1{{&c1, prompt, window, &s1}};
    m.forward(p1);
    m.evict(c1, 1.0, s1, -1, pool);
    QCOMPARE(c1.len, std::int64_t(0)); // floor(1.0 * 50) = 50 evicted: nothing kept
}

void TestLiveModel::checkpointRoundTrip() {
    // A checkpoint of the tiny shape written here (F32, BF16 and sharded), read back by
    // the transformer: its logits equal those of a synthetic model with the same numbers.
    const auto cfg = builtinConfig("tiny");
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString();
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 0.1f);
    std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<float>>> w;
    const auto add = [&](const std::string& name, std::vector<std::int64_t> shape, float base) {
        std::int64_t n = 1;
        for (auto x : shape) n *= x;
        std::vector<float> v(static_cast<std::size_t>(n));
        for (auto& x : v) x = base + nd(rng);
        w[name] = {shape, v};
    };
    const std::int64_t h = cfg.hidden, q = cfg.heads * cfg.head_dim,
                       kv = cfg.kv_heads * cfg.head_dim;
    add("model.embed_tokens.weight", {cfg.vocab, h}, 0);
    for (int l = 0; l < cfg.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        add(p + "input_layernorm.weight", {h}, 1);
        add(p + "self_attn.q_proj.weight", {q, h}, 0);
        add(p + "self_attn.q_proj.bias", {q}, 0);
        add(p + "self_attn.k_proj.weight", {kv, h}, 0);
        add(p + "self_attn.k_proj.bias", {kv}, 0);
        add(p + "self_attn.v_proj.weight", {kv, h}, 0);
        add(p + "self_attn.v_proj.bias", {kv}, 0);
        add(p + "self_attn.o_proj.weight", {h, q}, 0);
        add(p + "post_attention_layernorm.weight", {h}, 1);
        add(p + "mlp.gate_proj.weight", {cfg.intermediate, h}, 0);
        add(p + "mlp.up_proj.weight", {cfg.intermediate, h}, 0);
        add(p + "mlp.down_proj.weight", {h, cfg.intermediate}, 0);
    }
    add("model.norm.weight", {h}, 1);
    add("lm_head.weight", {cfg.vocab, h}, 0);
    // Single file, F32.
    const std::string single = root + "/single";
    std::filesystem::create_directories(single);
    std::vector<st::TensorBytes> all;
    for (const auto& [name, t] : w)
        all.push_back({name, st::DType::F32, t.first, t.second.data(), t.second.size() * 4});
    st::write(single + "/model.safetensors", all, {{"format", "pt"}});
    {
        std::ofstream cj(single + "/config.json");
        cj << R"({"model_type": "qwen2", "vocab_size": 512, "hidden_size": 64, "intermediate_size": 176,
                 "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "max_position_embeddings": 4096,
                 "tie_word_embeddings": false, "eos_token_id": 0})";
    }
    const LlmConfig read = readHfConfig(single + "/config.json");
    QCOMPARE(read.head_dim, 16);
    QVERIFY(read.qkv_bias);
    QCOMPARE(read.params(), cfg.params());
    // Sharded, BF16: two shards and an index.
    const std::string sharded = root + "/sharded";
    std::filesystem::create_directories(sharded);
    std::vector<std::vector<std::uint16_t>> bf(w.size());
    std::vector<st::TensorBytes> s1, s2;
    nlohmann::json index;
    std::size_t i = 0;
    for (const auto& [name, t] : w) {
        for (float x : t.second) bf[i].push_back(st::floatToBf16(x));
        const bool first = i % 2 == 0;
        (first ? s1 : s2)
            .push_back({name, st::DType::BF16, t.first, bf[i].data(), bf[i].size() * 2});
        index["weight_map"][name] =
            first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
        ++i;
    }
    st::write(sharded + "/model-00001-of-00002.safetensors", s1);
    st::write(sharded + "/model-00002-of-00002.safetensors", s2);
    std::ofstream(sharded + "/model.safetensors.index.json") << index.dump();
    std::filesystem::copy_file(single + "/config.json", sharded + "/config.json");

    TransformerOptions o;
    o.weights_dir = single;
    Transformer a(read, o);
    QVERIFY(a.realWeights());
    o.weights_dir = sharded;
    Transformer b(read, o);
    const auto toks = randomTokens(23, 512, 12);
    const at::Tensor la = recompute(a, toks), lb = recompute(b, toks);
    // BF16 weights: 8 significant bits.
    QVERIFY2(maxDiff(la, lb) < 0.05 * scaleOf(la), qPrintable(QString::number(maxDiff(la, lb))));
    // The F32 checkpoint holds exactly the numbers written: the embedding row of a token
    // feeds the first norm, and the file's bytes are the tensor's.
    const st::File f(single + "/model.safetensors");
    QCOMPARE(f.header().metadata.at("format"), std::string("pt"));
    const auto* info = f.find("model.norm.weight");
    QVERIFY(info);
    QCOMPARE(std::memcmp(f.data(*info), w["model.norm.weight"].second.data(), std::size_t(h) * 4),
             0);
}

void TestLiveModel::checkpointErrors() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString();
    TransformerOptions o;
    o.weights_dir = root; // no model.safetensors
    QVERIFY_THROWS_EXCEPTION(kairos::InputError, Transformer(builtinConfig("tiny"), o));
    // A checkpoint whose tensor has the wrong shape names the tensor.
    std::vector<float> tiny(4, 1.0f);
    st::write(root + "/model.safetensors",
              {{"model.embed_tokens.weight", st::DType::F32, {2, 2}, tiny.data(), 16}});
    try {
        Transformer t(builtinConfig("tiny"), o);
        QFAIL("loaded a checkpoint of the wrong shape");
    } catch (const kairos::InputError& e) {
        QCOMPARE(e.field(), std::string("model.embed_tokens.weight"));
        QVERIFY(QString(e.what()).contains("does not match"));
    }
}

void TestLiveModel::llama2cMatchesReference() {
    // stories260K (a llama2.c checkpoint, the real trained model) through the libtorch
    // transformer, whose rotary embedding rotates halves (its loader reorders wq and wk),
    // against the plain reference pass of core/weights/llama2c (run.c's adjacent pairs):
    // a 40-token prefill's last logits, then 60 decode steps, each within 1e-4. The tokens
    // are a story the reference samples (seeded), so they are the model's own text.
    const std::string path = kairos::test::storiesPath();
    const LlmConfig cfg = readLlama2cConfig(path);
    QCOMPARE(cfg.name, std::string("stories260K"));
    QCOMPARE(cfg.eos_token, kairos::llama2c::kBos);
    TransformerOptions o;
    o.weights_dir = path;
    Transformer m(cfg, o);
    QVERIFY(m.realWeights() && m.llama2cWeights());
    const kairos::llama2c::Weights w = kairos::llama2c::read(path);
    kairos::llama2c::Reference ref(w);
    kairos::llama2c::Sampler sampler(1.0, 0.9, 5);
    std::vector<std::int64_t> tokens{kairos::llama2c::kBos};
    std::vector<std::vector<float>> want;
    for (int pos = 0; pos < 100; ++pos) {
        want.push_back(ref.step(int(tokens.back()), pos));
        int next = sampler.sample(want.back().data(), int(want.back().size()));
        if (next == kairos::llama2c::kBos) next = 3; // keep one story going
        tokens.push_back(next);
    }
    const auto maxDiff = [](const at::Tensor& got, const std::vector<float>& ref_logits) {
        const at::Tensor r = at::tensor(ref_logits);
        return (got.reshape({-1}) - r).abs().max().item<double>();
    };
    SeqCache c;
    std::vector<Transformer::Step> prefill{
        {&c, std::vector<std::int64_t>(tokens.begin(), tokens.begin() + 40)}};
    double worst = maxDiff(m.forward(prefill), want[39]);
    for (int pos = 40; pos < 100; ++pos) {
        std::vector<Transformer::Step> step{{&c, {tokens[std::size_t(pos)]}}};
        worst = std::max(worst, maxDiff(m.forward(step), want[std::size_t(pos)]));
    }
    qInfo("stories260K: libtorch transformer vs reference, max |logit difference| %.2e", worst);
    QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
    // A shape that is not the checkpoint's is refused, naming the file.
    LlmConfig wrong = cfg;
    wrong.layers = 4;
    QVERIFY_THROWS_EXCEPTION(kairos::InputError, Transformer(wrong, o));
}

void TestLiveModel::qualityOnTheRealModel() {
    // The eviction-quality measurement on stories260K, small: openings are the model's own
    // stories (BOS first, no BOS after, the same for a seed, others for another); with no
    // eviction the answer agrees with itself exactly; evicting three quarters of the prompt
    // lowers both the agreement and the answer's likelihood, and not less than a quarter does.
    Transformer m = kairos::test::storiesModel();
    const auto a = sampleOpenings(m, 4, 24, 1), b = sampleOpenings(m, 4, 24, 1),
               c = sampleOpenings(m, 4, 24, 2);
    QCOMPARE(a, b);
    QVERIFY(a != c);
    for (const auto& p : a) {
        QCOMPARE(p.size(), std::size_t(24));
        QCOMPARE(p.front(), std::int64_t(kairos::llama2c::kBos));
        QCOMPARE(std::count(p.begin() + 1, p.end(), std::int64_t(kairos::llama2c::kBos)),
                 std::ptrdiff_t(0));
    }
    QualityOptions o;
    o.prompts = 6;
    o.prompt_tokens = 48;
    o.answer_tokens = 16;
    o.alphas = {0, 0.25, 0.75};
    const QualityCurveMeasured q = measureQuality(m, o);
    QCOMPARE(q.points.size(), std::size_t(3));
    QCOMPARE(q.points[0].agreement, 1.0);
    QCOMPARE(q.points[0].prefix, 1.0);
    QVERIFY(q.points[2].agreement < 1.0);
    QVERIFY(q.points[2].agreement <= q.points[1].agreement + 0.05);
    QVERIFY(q.points[2].log_likelihood < q.points[0].log_likelihood);
    QVERIFY(q.curve().rfind("0:1.0000,0.25:", 0) == 0);
    qInfo("stories260K, 6 prompts: agreement %.3f / %.3f / %.3f at alpha 0 / 0.25 / 0.75",
          q.points[0].agreement, q.points[1].agreement, q.points[2].agreement);
    o.prompt_tokens = 500; // with the answer, past the model's 512 positions
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureQuality(m, o));
}

QTEST_GUILESS_MAIN(TestLiveModel)
#include "tst_live_model.moc"
