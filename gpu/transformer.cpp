#include "transformer.h"

#include "kernels/kernels.h"
#include "util/input_error.h"
#include "weights/llama2c.h"
#include "weights/safetensors.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h> // at::NoGradGuard (not reached transitively in PyTorch 2.x)
#include <algorithm>
#include <cmath>
#include <filesystem>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <numeric>
#include <stdexcept>

namespace kairos::gpu {

bool settleHostAllocator() {
#if defined(__GLIBC__)
    // 32 MiB is the largest M_MMAP_THRESHOLD glibc takes on 64-bit (4 * 1024 * 1024 *
    // sizeof(long)); setting it also turns off its dynamic adjustment.
    const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1;
    const bool trim_ok = mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024) == 1;
    return mmap_ok && trim_ok;
#else
    return false;
#endif
}

namespace {

kernels::Elem elemOf(at::ScalarType t) {
    switch (t) {
    case at::kFloat:
        return kernels::Elem::F32;
    case at::kHalf:
        return kernels::Elem::F16;
    case at::kBFloat16:
        return kernels::Elem::BF16;
    default:
        throw std::invalid_argument("the live engine runs in fp32, fp16 or bf16");
    }
}

at::ScalarType scalarOf(safetensors::DType d) {
    switch (d) {
    case safetensors::DType::F32:
        return at::kFloat;
    case safetensors::DType::F16:
        return at::kHalf;
    case safetensors::DType::BF16:
        return at::kBFloat16;
    default:
        return at::kByte; // refused by the caller
    }
}

} // namespace

std::int64_t SeqCache::bytes() const {
    std::int64_t b = 0;
    for (const auto& t : k) b += t.numel() * t.element_size();
    for (const auto& t : v) b += t.numel() * t.element_size();
    return b;
}

void SeqCache::clear() {
    k.clear();
    v.clear();
    kept.clear();
    len = cap = next_pos = 0;
}

Transformer::Transformer(const LlmConfig& cfg, const TransformerOptions& opt)
    : cfg_(cfg), opt_(opt) {
    cfg_.validate();
    elemOf(opt_.dtype);
    // Rotary frequencies, with Llama 3.1's scaling when the config asks for it.
    const int half = cfg_.head_dim / 2;
    std::vector<float> f(static_cast<std::size_t>(half));
    for (int i = 0; i < half; ++i) {
        double freq = 1.0 / std::pow(cfg_.rope_theta, 2.0 * i / cfg_.head_dim);
        if (cfg_.rope_factor > 0) {
            const double old_len = cfg_.rope_original_max_positions;
            const double low_wavelen = old_len / cfg_.rope_low_freq_factor;
            const double high_wavelen = old_len / cfg_.rope_high_freq_factor;
            const double wavelen = 2.0 * M_PI / freq;
            if (wavelen > low_wavelen) {
                freq /= cfg_.rope_factor;
            } else if (wavelen >= high_wavelen) {
                const double smooth = (old_len / wavelen - cfg_.rope_low_freq_factor) /
                                      (cfg_.rope_high_freq_factor - cfg_.rope_low_freq_factor);
                freq = (1.0 - smooth) * freq / cfg_.rope_factor + smooth * freq;
            }
        }
        f[static_cast<std::size_t>(i)] = static_cast<float>(freq);
    }
    inv_freq_ = at::tensor(f, at::TensorOptions(at::kFloat)).to(opt_.device);
    if (opt_.weights_dir.empty())
        loadSynthetic();
    else if (llama2cWeights())
        loadLlama2c();
    else
        loadCheckpoint();
}

bool Transformer::llama2cWeights() const {
    return !opt_.weights_dir.empty() && std::filesystem::is_regular_file(opt_.weights_dir);
}

void Transformer::loadLlama2c() {
    const llama2c::Weights w = llama2c::read(opt_.weights_dir);
    const LlmConfig want = llama2cConfig(w.h, cfg_.name);
    if (want.hidden != cfg_.hidden || want.layers != cfg_.layers || want.heads != cfg_.heads ||
        want.kv_heads != cfg_.kv_heads || want.vocab != cfg_.vocab ||
        want.intermediate != cfg_.intermediate)
        throw InputError(opt_.weights_dir, 0, "header",
                         "the checkpoint's shape does not match the configuration " + cfg_.name +
                             " (build the configuration with llama2cConfig)");
    const auto cpu = at::TensorOptions(at::kFloat);
    // run.c's arrays are row-major [out][in], as a Linear weight; copied, then moved to the
    // device and dtype.
    const auto tensor = [&](const std::vector<float>& v, std::int64_t offset,
                            std::vector<std::int64_t> shape) {
        return at::from_blob(const_cast<float*>(v.data() + offset), shape, cpu).clone();
    };
    // llama2.c rotates adjacent pairs (2j, 2j+1) of each head; this transformer rotates
    // halves (j, j + head_dim / 2) with the same frequency for j. Reordering each head's
    // rows of wq and wk to [even rows, odd rows] makes the two the same map: q.k is a sum
    // over a head's dimensions, so the same reordering of q and k leaves scores unchanged
    // (the conversion Hugging Face applies to Meta's Llama checkpoints).
    const auto pairsToHalves = [&](const at::Tensor& wt, int heads) {
        const std::int64_t hd = cfg_.head_dim, in = wt.size(1);
        return wt.view({heads, hd / 2, 2, in}).transpose(1, 2).reshape({heads * hd, in});
    };
    const std::int64_t d = cfg_.hidden, hd = cfg_.intermediate,
                       kv = std::int64_t(cfg_.kv_heads) * cfg_.head_dim;
    const auto dev = [&](const at::Tensor& t) { return t.to(tensorOptions()).contiguous(); };
    embed_ = dev(tensor(w.token_embedding, 0, {cfg_.vocab, d}));
    for (int l = 0; l < cfg_.layers; ++l) {
        Layer L;
        L.attn_norm = dev(tensor(w.rms_att, l * d, {d}));
        L.wq = dev(pairsToHalves(tensor(w.wq, l * d * d, {d, d}), cfg_.heads));
        L.wk = dev(pairsToHalves(tensor(w.wk, l * kv * d, {kv, d}), cfg_.kv_heads));
        L.wv = dev(tensor(w.wv, l * kv * d, {kv, d}));
        L.wo = dev(tensor(w.wo, l * d * d, {d, d}));
        L.mlp_norm = dev(tensor(w.rms_ffn, l * d, {d}));
        L.wg = dev(tensor(w.w1, l * hd * d, {hd, d}));
        L.wd = dev(tensor(w.w2, l * d * hd, {d, hd}));
        L.wu = dev(tensor(w.w3, l * hd * d, {hd, d}));
        layers_.push_back(std::move(L));
    }
    final_norm_ = dev(tensor(w.rms_final, 0, {d}));
    lm_head_ = w.h.shared_classifier ? embed_ : dev(tensor(w.wcls, 0, {cfg_.vocab, d}));
}

void Transformer::loadSynthetic() {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(opt_.seed);
    const auto cpu = at::TensorOptions(at::kFloat);
    const auto normal = [&](std::vector<std::int64_t> shape, double std) {
        return at::normal(0.0, std, shape, gen, cpu).to(tensorOptions());
    };
    // Norm gains near one so that activations keep a sane scale through the layers.
    const auto gain = [&](std::int64_t n) {
        return (at::normal(0.0, 0.02, {n}, gen, cpu) + 1.0).to(tensorOptions());
    };
    const std::int64_t h = cfg_.hidden, q = std::int64_t(cfg_.heads) * cfg_.head_dim,
                       kv = std::int64_t(cfg_.kv_heads) * cfg_.head_dim, m = cfg_.intermediate;
    embed_ = normal({cfg_.vocab, h}, 1.0);
    for (int l = 0; l < cfg_.layers; ++l) {
        Layer L;
        L.attn_norm = gain(h);
        L.wq = normal({q, h}, 1.0 / std::sqrt(double(h)));
        L.wk = normal({kv, h}, 1.0 / std::sqrt(double(h)));
        L.wv = normal({kv, h}, 1.0 / std::sqrt(double(h)));
        if (cfg_.qkv_bias) {
            L.bq = normal({q}, 0.02);
            L.bk = normal({kv}, 0.02);
            L.bv = normal({kv}, 0.02);
        }
        L.wo = normal({h, q}, 0.5 / std::sqrt(double(q) * cfg_.layers));
        L.mlp_norm = gain(h);
        L.wg = normal({m, h}, 1.0 / std::sqrt(double(h)));
        L.wu = normal({m, h}, 1.0 / std::sqrt(double(h)));
        L.wd = normal({h, m}, 0.5 / std::sqrt(double(m) * cfg_.layers));
        layers_.push_back(std::move(L));
    }
    final_norm_ = gain(h);
    lm_head_ = cfg_.tie_embeddings ? embed_ : normal({cfg_.vocab, h}, 1.0 / std::sqrt(double(h)));
}

void Transformer::loadCheckpoint() {
    const safetensors::Checkpoint ck(opt_.weights_dir);
    const auto load = [&](const std::string& name, std::vector<std::int64_t> shape) {
        const auto e = ck.get(name);
        const at::ScalarType st = scalarOf(e.info->dtype);
        if (st == at::kByte)
            throw InputError(e.file->path(), 0, name,
                             std::string("dtype ") + safetensors::dtypeName(e.info->dtype) +
                                 " is not supported (F32, F16, BF16 are)");
        if (e.info->shape != shape) {
            std::string want, got;
            for (auto s : shape) want += (want.empty() ? "" : "x") + std::to_string(s);
            for (auto s : e.info->shape) got += (got.empty() ? "" : "x") + std::to_string(s);
            throw InputError(e.file->path(), 0, name,
                             "shape " + got + " does not match the config's " + want);
        }
        // The mapping is read-only: the blob is only read by the copy below.
        const at::Tensor view = at::from_blob(const_cast<std::byte*>(e.file->data(*e.info)), shape,
                                              at::TensorOptions(st));
        // A NaN or an infinity in the weights poisons every answer: refused, as the llama2.c
        // reader refuses it, naming the tensor.
        if (!at::isfinite(view).all().item<bool>())
            throw InputError(e.file->path(), 0, name, "holds a value that is not finite");
        return view.to(tensorOptions(), /*non_blocking=*/false, /*copy=*/true);
    };
    const std::int64_t h = cfg_.hidden, q = std::int64_t(cfg_.heads) * cfg_.head_dim,
                       kv = std::int64_t(cfg_.kv_heads) * cfg_.head_dim, m = cfg_.intermediate;
    embed_ = load("model.embed_tokens.weight", {cfg_.vocab, h});
    for (int l = 0; l < cfg_.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        Layer L;
        L.attn_norm = load(p + "input_layernorm.weight", {h});
        L.wq = load(p + "self_attn.q_proj.weight", {q, h});
        L.wk = load(p + "self_attn.k_proj.weight", {kv, h});
        L.wv = load(p + "self_attn.v_proj.weight", {kv, h});
        if (cfg_.qkv_bias) {
            L.bq = load(p + "self_attn.q_proj.bias", {q});
            L.bk = load(p + "self_attn.k_proj.bias", {kv});
            L.bv = load(p + "self_attn.v_proj.bias", {kv});
        }
        L.wo = load(p + "self_attn.o_proj.weight", {h, q});
        L.mlp_norm = load(p + "post_attention_layernorm.weight", {h});
        L.wg = load(p + "mlp.gate_proj.weight", {m, h});
        L.wu = load(p + "mlp.up_proj.weight", {m, h});
        L.wd = load(p + "mlp.down_proj.weight", {h, m});
        layers_.push_back(std::move(L));
    }
    final_norm_ = load("model.norm.weight", {h});
    lm_head_ = cfg_.tie_embeddings && !ck.has("lm_head.weight")
                   ? embed_
                   : load("lm_head.weight", {cfg_.vocab, h});
}

std::int64_t Transformer::weightBytes() const {
    std::int64_t b = 0;
    const auto add = [&](const at::Tensor& t) {
        if (t.defined()) b += t.numel() * t.element_size();
    };
    add(embed_);
    add(final_norm_);
    if (!lm_head_.is_same(embed_)) add(lm_head_);
    for (const auto& L : layers_)
        for (const auto* t : {&L.attn_norm, &L.wq, &L.bq, &L.wk, &L.bk, &L.wv, &L.bv, &L.wo,
                              &L.mlp_norm, &L.wg, &L.wu, &L.wd})
            add(*t);
    return b;
}

at::Tensor Transformer::rmsnorm(const at::Tensor& x, const at::Tensor& w) const {
    const at::Tensor xf = x.to(at::kFloat);
    const at::Tensor r = at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + cfg_.rms_eps);
    return (xf * r).to(x.scalar_type()) * w;
}

at::Tensor Transformer::rope(const at::Tensor& x, const at::Tensor& pos) const {
    // x [T, heads, d]; Llama's rotate-half convention.
    const std::int64_t half = cfg_.head_dim / 2;
    const at::Tensor ang = pos.to(at::kFloat).unsqueeze(1) * inv_freq_.unsqueeze(0); // [T, half]
    const at::Tensor c = ang.cos().unsqueeze(1), s = ang.sin().unsqueeze(1);         // [T, 1, half]
    const at::Tensor xf = x.to(at::kFloat);
    const at::Tensor x1 = xf.narrow(-1, 0, half), x2 = xf.narrow(-1, half, half);
    return at::cat({x1 * c - x2 * s, x2 * c + x1 * s}, -1).to(x.scalar_type());
}

void Transformer::ensureCapacity(SeqCache& c, std::int64_t need) const {
    if (need <= c.cap && !c.k.empty()) return;
    std::int64_t cap = std::max<std::int64_t>(16, c.cap);
    while (cap < need) cap *= 2;
    const auto opts = tensorOptions();
    for (int l = 0; l < cfg_.layers; ++l) {
        at::Tensor k = at::empty({cfg_.kv_heads, cap, cfg_.head_dim}, opts);
        at::Tensor v = at::empty({cfg_.kv_heads, cap, cfg_.head_dim}, opts);
        if (c.len > 0) {
            k.narrow(1, 0, c.len).copy_(c.k[std::size_t(l)].narrow(1, 0, c.len));
            v.narrow(1, 0, c.len).copy_(c.v[std::size_t(l)].narrow(1, 0, c.len));
        }
        if (c.k.size() <= std::size_t(l)) {
            c.k.push_back(k);
            c.v.push_back(v);
        } else {
            c.k[std::size_t(l)] = k;
            c.v[std::size_t(l)] = v;
        }
    }
    c.cap = cap;
}

void Transformer::fillCache(SeqCache& c, std::int64_t n) const {
    c.clear();
    ensureCapacity(c, n);
    for (int l = 0; l < cfg_.layers; ++l) {
        c.k[std::size_t(l)].normal_(0.0, 1.0);
        c.v[std::size_t(l)].normal_(0.0, 1.0);
    }
    c.len = c.next_pos = n;
}

at::Tensor Transformer::forward(std::vector<Step>& steps, int layers) {
    at::NoGradGuard no_grad;
    const int n_layers = layers <= 0 ? cfg_.layers : std::min(layers, cfg_.layers);
    if (steps.empty()) return at::empty({0, cfg_.vocab}, at::kFloat);
    const std::int64_t heads = cfg_.heads, kvh = cfg_.kv_heads, d = cfg_.head_dim,
                       group = heads / kvh;
    // Token layout of the iteration.
    std::vector<std::int64_t> ids, pos, offset(steps.size()), last(steps.size());
    std::vector<std::size_t> decoders, chunks;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        Step& s = steps[i];
        if (!s.cache || s.tokens.empty()) throw std::invalid_argument("forward: empty step");
        offset[i] = std::int64_t(ids.size());
        for (std::size_t t = 0; t < s.tokens.size(); ++t) {
            const auto tok = s.tokens[t];
            if (tok < 0 || tok >= cfg_.vocab)
                throw std::invalid_argument("forward: token id " + std::to_string(tok) +
                                            " outside the vocabulary");
            ids.push_back(tok);
            pos.push_back(s.cache->next_pos + std::int64_t(t));
        }
        last[i] = std::int64_t(ids.size()) - 1;
        (s.tokens.size() == 1 ? decoders : chunks).push_back(i);
        ensureCapacity(*s.cache, s.cache->len + std::int64_t(s.tokens.size()));
        if (s.snap) {
            s.snap->window = std::min<int>(s.snap_window, int(s.tokens.size()));
            s.snap->per_layer.clear();
        }
        if (s.hidden && (s.hidden_layer < 1 || s.hidden_layer > cfg_.layers))
            throw std::invalid_argument("forward: hidden_layer " + std::to_string(s.hidden_layer) +
                                        " outside 1.." + std::to_string(cfg_.layers));
    }
    const auto T = std::int64_t(ids.size());
    const auto dev = opt_.device;
    const at::Tensor id_t = at::tensor(ids, at::TensorOptions(at::kLong)).to(dev);
    const at::Tensor pos_t = at::tensor(pos, at::TensorOptions(at::kLong)).to(dev);
    at::Tensor x = at::embedding(embed_, id_t); // [T, hidden]

    // The decode kernel's per-request arguments (same for every layer but the pointers).
    const auto B = std::int64_t(decoders.size());
    std::vector<std::int32_t> lens, caps;
    for (std::size_t i : decoders) {
        lens.push_back(std::int32_t(steps[i].cache->len + 1));
        caps.push_back(std::int32_t(steps[i].cache->cap));
    }
    const bool on_cuda = dev.is_cuda();
    const bool use_kernel =
        B > 0 &&
        (!on_cuda || (kernels::cudaKernelsBuilt() && kernels::decodeAttentionCovers(int(d))));
    at::Tensor lens_dev, caps_dev, dec_rows;
    if (B > 0) {
        std::vector<std::int64_t> rows;
        for (std::size_t i : decoders) rows.push_back(offset[i]);
        dec_rows = at::tensor(rows, at::TensorOptions(at::kLong)).to(dev);
        if (on_cuda && use_kernel) {
            lens_dev = at::tensor(lens, at::TensorOptions(at::kInt)).to(dev);
            caps_dev = at::tensor(caps, at::TensorOptions(at::kInt)).to(dev);
        }
    }
    const float scale = 1.0f / std::sqrt(float(d));

    for (int l = 0; l < n_layers; ++l) {
        const Layer& L = layers_[std::size_t(l)];
        const at::Tensor hN = rmsnorm(x, L.attn_norm);
        at::Tensor q = at::linear(hN, L.wq, L.bq).view({T, heads, d});
        at::Tensor k = at::linear(hN, L.wk, L.bk).view({T, kvh, d});
        const at::Tensor v = at::linear(hN, L.wv, L.bv).view({T, kvh, d});
        q = rope(q, pos_t);
        k = rope(k, pos_t);
        // Append the new keys and values to each request's cache.
        for (std::size_t i = 0; i < steps.size(); ++i) {
            SeqCache& c = *steps[i].cache;
            const auto n = std::int64_t(steps[i].tokens.size());
            c.k[std::size_t(l)]
                .narrow(1, c.len, n)
                .copy_(k.narrow(0, offset[i], n).transpose(0, 1));
            c.v[std::size_t(l)]
                .narrow(1, c.len, n)
                .copy_(v.narrow(0, offset[i], n).transpose(0, 1));
        }
        at::Tensor attn = at::empty({T, heads, d}, x.options());
        // Chunks (prefill, or several tokens): causal attention with ATen, in blocks of
        // queries. A whole chunk's scores are [heads, n, total] floats, several live at once
        // (scores, masked, softmax): past ~700 tokens of a 14-head model each is above
        // glibc's largest mmap threshold (32 MiB, settleHostAllocator), so every one was a
        // fresh mapping faulted in page by page, and a long prompt cost more per token
        // than the ETE form's a*N^2 allows. Blocks keep each score matrix near
        // score_block_bytes (reused from the heap, cache-sized), and a block attends only
        // to the keys its queries can see, skipping the masked upper triangle's arithmetic.
        for (std::size_t i : chunks) {
            Step& s = steps[i];
            SeqCache& c = *s.cache;
            const auto n = std::int64_t(s.tokens.size());
            const std::int64_t total = c.len + n;
            const at::Tensor K = c.k[std::size_t(l)]; // [kvh, cap, d]
            const at::Tensor V = c.v[std::size_t(l)];
            const std::int64_t rows = std::clamp<std::int64_t>(
                opt_.score_block_bytes / (heads * total * 4), std::min<std::int64_t>(16, n), n);
            const int w = s.snap ? s.snap->window : 0;
            at::Tensor snap_sum; // [kvh, total] float: the last w queries' attention
            if (s.snap) snap_sum = at::zeros({kvh, total}, x.options().dtype(at::kFloat));
            for (std::int64_t q0 = 0; q0 < n; q0 += rows) {
                const std::int64_t nb = std::min(rows, n - q0);
                const std::int64_t seen = c.len + q0 + nb; // keys these queries can see
                const at::Tensor Kb = K.narrow(1, 0, seen), Vb = V.narrow(1, 0, seen);
                // Queries grouped by their KV head: [kvh, group * nb, d].
                const at::Tensor qs = q.narrow(0, offset[i] + q0, nb)
                                          .view({nb, kvh, group, d})
                                          .permute({1, 2, 0, 3})
                                          .reshape({kvh, group * nb, d});
                at::Tensor sc = at::matmul(qs, Kb.transpose(1, 2)).to(at::kFloat);
                sc.mul_(scale);
                sc = sc.view({kvh, group, nb, seen});
                if (nb > 1) {
                    const at::Tensor qi =
                        at::arange(nb, at::TensorOptions(at::kLong).device(dev)) + (c.len + q0);
                    const at::Tensor kj =
                        at::arange(seen, at::TensorOptions(at::kLong).device(dev));
                    sc.masked_fill_(kj.unsqueeze(0) > qi.unsqueeze(1), // [nb, seen]
                                    -std::numeric_limits<float>::infinity());
                }
                const at::Tensor p = at::softmax(sc, -1); // float
                if (s.snap && q0 + nb > n - w) {
                    const std::int64_t r0 = std::max<std::int64_t>(n - w - q0, 0);
                    snap_sum.narrow(1, 0, seen).add_(p.narrow(2, r0, nb - r0).sum({1, 2}));
                }
                const at::Tensor o =
                    at::matmul(p.to(x.scalar_type()).view({kvh, group * nb, seen}), Vb);
                attn.narrow(0, offset[i] + q0, nb)
                    .copy_(
                        o.view({kvh, group, nb, d}).permute({2, 0, 1, 3}).reshape({nb, heads, d}));
            }
            if (s.snap) s.snap->per_layer.push_back(snap_sum.to(at::kCPU).contiguous());
        }
        // Single-token decodes: one call of the ragged decode-attention kernel.
        if (B > 0) {
            const at::Tensor qd = q.index_select(0, dec_rows).contiguous(); // [B, heads, d]
            at::Tensor od = at::empty_like(qd);
            std::vector<const void*> kp, vp;
            for (std::size_t i : decoders) {
                kp.push_back(steps[i].cache->k[std::size_t(l)].data_ptr());
                vp.push_back(steps[i].cache->v[std::size_t(l)].data_ptr());
            }
            kernels::DecodeAttention a;
            a.batch = int(B), a.heads = int(heads), a.kv_heads = int(kvh), a.head_dim = int(d);
            a.scale = scale, a.q = qd.data_ptr(), a.out = od.data_ptr();
            if (!on_cuda) {
                a.k = kp.data(), a.v = vp.data(), a.lens = lens.data(), a.caps = caps.data();
                kernels::decodeAttentionHost(a, elemOf(opt_.dtype));
            } else if (use_kernel) {
                std::vector<std::int64_t> ptrs;
                for (auto* p : kp)
                    ptrs.push_back(std::int64_t(reinterpret_cast<std::uintptr_t>(p)));
                for (auto* p : vp)
                    ptrs.push_back(std::int64_t(reinterpret_cast<std::uintptr_t>(p)));
                const at::Tensor ptr_dev = at::tensor(ptrs, at::TensorOptions(at::kLong)).to(dev);
                const auto* base = static_cast<const void* const*>(ptr_dev.data_ptr());
                a.k = base, a.v = base + B;
                a.lens = lens_dev.data_ptr<std::int32_t>(),
                a.caps = caps_dev.data_ptr<std::int32_t>();
                const int err = kernels::decodeAttentionCuda(a, elemOf(opt_.dtype), nullptr);
                if (err != 0)
                    throw std::runtime_error("decode-attention kernel failed (CUDA error " +
                                             std::to_string(err) + ")");
            } else {
                // A CUDA device without the kernels: the same attention with ATen.
                for (std::int64_t j = 0; j < B; ++j) {
                    SeqCache& c = *steps[decoders[std::size_t(j)]].cache;
                    const std::int64_t total = c.len + 1;
                    const at::Tensor K = c.k[std::size_t(l)].narrow(1, 0, total);
                    const at::Tensor V = c.v[std::size_t(l)].narrow(1, 0, total);
                    const at::Tensor qs = qd[j].view({kvh, group, d});
                    const at::Tensor p =
                        at::softmax(at::matmul(qs, K.transpose(1, 2)).to(at::kFloat) * scale, -1);
                    od[j].copy_(at::matmul(p.to(x.scalar_type()), V).view({heads, d}));
                }
            }
            attn.index_copy_(0, dec_rows, od);
        }
        x = x + at::linear(attn.view({T, heads * d}), L.wo);
        const at::Tensor h2 = rmsnorm(x, L.mlp_norm);
        x = x + at::linear(at::silu(at::linear(h2, L.wg)) * at::linear(h2, L.wu), L.wd);
        for (std::size_t i = 0; i < steps.size(); ++i)
            if (steps[i].hidden && steps[i].hidden_layer == l + 1)
                // One copy, float on the CPU: not a view of the whole iteration's x.
                *steps[i].hidden = x.narrow(0, offset[i], std::int64_t(steps[i].tokens.size()))
                                       .to(at::TensorOptions(at::kFloat).device(at::kCPU),
                                           /*non_blocking=*/false, /*copy=*/true);
    }
    for (auto& s : steps) {
        const auto n = std::int64_t(s.tokens.size());
        s.cache->len += n;
        s.cache->next_pos += n;
    }
    if (n_layers < cfg_.layers) return {};
    const at::Tensor last_t = at::tensor(last, at::TensorOptions(at::kLong)).to(dev);
    const at::Tensor xl = rmsnorm(x.index_select(0, last_t), final_norm_);
    return at::linear(xl, lm_head_).to(at::kFloat);
}

at::Tensor Transformer::hiddenStates(const std::vector<std::int64_t>& tokens, int layer) {
    SeqCache c;
    at::Tensor h;
    std::vector<Step> s{{&c, tokens}};
    s[0].hidden_layer = layer;
    s[0].hidden = &h;
    forward(s, layer);
    return h;
}

std::vector<std::int64_t> Transformer::keptPositions(const std::vector<float>& scores, int keep,
                                                     int window, int pool) {
    const auto n = int(scores.size());
    keep = std::clamp(keep, 0, n);
    window = std::clamp(window, 0, keep);
    const int prefix = n - window; // candidates: positions before the window
    std::vector<float> pooled(static_cast<std::size_t>(prefix));
    const int r = std::max(0, pool / 2);
    for (int i = 0; i < prefix; ++i) {
        float m = -std::numeric_limits<float>::infinity();
        for (int j = std::max(0, i - r); j <= std::min(prefix - 1, i + r); ++j)
            m = std::max(m, scores[static_cast<std::size_t>(j)]);
        pooled[static_cast<std::size_t>(i)] = m;
    }
    std::vector<std::int64_t> order(static_cast<std::size_t>(prefix));
    std::iota(order.begin(), order.end(), 0);
    const auto chosen = static_cast<std::size_t>(keep - window);
    std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(chosen), order.end(),
                      [&](std::int64_t a, std::int64_t b) {
                          const float pa = pooled[static_cast<std::size_t>(a)];
                          const float pb = pooled[static_cast<std::size_t>(b)];
                          return pa != pb ? pa > pb : a < b;
                      });
    order.resize(chosen);
    for (int i = prefix; i < n; ++i) order.push_back(i);
    std::sort(order.begin(), order.end());
    return order;
}

void Transformer::evict(SeqCache& c, double alpha, const SnapScores& scores,
                        std::int64_t prompt_len, int pool) const {
    alpha = std::clamp(alpha, 0.0, 1.0);
    if (alpha <= 0.0 || c.len == 0) return;
    if (int(scores.per_layer.size()) != cfg_.layers)
        throw std::invalid_argument("evict: SnapKV scores missing (prefill with snap_window > 0)");
    const std::int64_t scored = scores.per_layer[0].size(1);
    if (scored != c.len)
        throw std::invalid_argument("evict: the scores are not of this cache's positions");
    const std::int64_t prompt = prompt_len < 0 ? scored : std::min(prompt_len, scored);
    const std::int64_t keep =
        prompt - static_cast<std::int64_t>(std::floor(alpha * double(prompt) + 1e-9));
    const std::int64_t after = c.len - prompt; // positions after the prompt, all kept
    const std::int64_t new_len = keep + after;
    const std::int64_t new_cap = new_len + 64;
    const auto kvh = cfg_.kv_heads;
    c.kept.clear();
    const bool on_cuda = opt_.device.is_cuda();
    for (int l = 0; l < cfg_.layers; ++l) {
        const at::Tensor sc = scores.per_layer[std::size_t(l)].contiguous();
        std::vector<std::int32_t> index;
        std::vector<std::int64_t> kept_all;
        for (std::int64_t g = 0; g < kvh; ++g) {
            const float* p = sc[g].data_ptr<float>(); // the prompt's positions come first
            std::vector<float> row(p, p + prompt);
            const auto kept = keptPositions(row, int(keep), scores.window, pool);
            kept_all.insert(kept_all.end(), kept.begin(), kept.end());
            for (auto k : kept) index.push_back(std::int32_t(k));
            for (std::int64_t j = prompt; j < c.len; ++j) index.push_back(std::int32_t(j));
        }
        c.kept.push_back(at::tensor(kept_all, at::TensorOptions(at::kLong)).view({kvh, keep}));
        at::Tensor& K = c.k[std::size_t(l)];
        at::Tensor& V = c.v[std::size_t(l)];
        // The compacted cache is allocated smaller (the point of evicting), with room for
        // new_cap - new_len tokens before it grows again.
        at::Tensor K2 = at::empty({kvh, new_cap, cfg_.head_dim}, K.options());
        at::Tensor V2 = at::empty({kvh, new_cap, cfg_.head_dim}, V.options());
        kernels::KvCompact a;
        a.kv_heads = int(kvh), a.head_dim = cfg_.head_dim, a.keep = int(new_len);
        a.src_cap = int(c.cap), a.dst_cap = int(new_cap);
        if (!on_cuda) {
            a.index = index.data();
            a.src = K.data_ptr(), a.dst = K2.data_ptr();
            kernels::kvCompactHost(a, elemOf(opt_.dtype));
            a.src = V.data_ptr(), a.dst = V2.data_ptr();
            kernels::kvCompactHost(a, elemOf(opt_.dtype));
        } else if (kernels::cudaKernelsBuilt()) {
            const at::Tensor idx = at::tensor(index, at::TensorOptions(at::kInt)).to(opt_.device);
            a.index = idx.data_ptr<std::int32_t>();
            a.src = K.data_ptr(), a.dst = K2.data_ptr();
            int err = kernels::kvCompactCuda(a, elemOf(opt_.dtype), nullptr);
            a.src = V.data_ptr(), a.dst = V2.data_ptr();
            if (err == 0) err = kernels::kvCompactCuda(a, elemOf(opt_.dtype), nullptr);
            if (err != 0)
                throw std::runtime_error("KV compaction kernel failed (CUDA error " +
                                         std::to_string(err) + ")");
        } else {
            const at::Tensor idx = at::tensor(index, at::TensorOptions(at::kLong))
                                       .view({kvh, new_len})
                                       .to(opt_.device);
            const auto gidx = idx.unsqueeze(-1).expand({kvh, new_len, cfg_.head_dim});
            K2.narrow(1, 0, new_len).copy_(at::gather(K, 1, gidx));
            V2.narrow(1, 0, new_len).copy_(at::gather(V, 1, gidx));
        }
        K = K2;
        V = V2;
    }
    c.len = new_len; // next_pos is unchanged: new tokens keep their true positions
    c.cap = new_cap;
}

} // namespace kairos::gpu
