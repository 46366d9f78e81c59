#include "weights/llama2c.h"

#include "util/input_error.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

namespace kairos::llama2c {

namespace {

constexpr const char* kFields[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                    "n_kv_heads", "vocab_size", "seq_len"};

void rmsnorm(float* o, const float* x, const float* w, int n) {
    double ss = 0;
    for (int j = 0; j < n; ++j) ss += double(x[j]) * x[j];
    const float scale = 1.0f / std::sqrt(float(ss / n) + 1e-5f);
    for (int j = 0; j < n; ++j) o[j] = w[j] * (scale * x[j]);
}

// out[d] = W[d][n] x[n]
void matmul(float* out, const float* x, const float* w, int n, int d) {
    for (int i = 0; i < d; ++i) {
        const float* row = w + std::size_t(i) * n;
        float acc = 0;
        for (int j = 0; j < n; ++j) acc += row[j] * x[j];
        out[i] = acc;
    }
}

void softmax(float* x, int n) {
    const float mx = *std::max_element(x, x + n);
    float sum = 0;
    for (int i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - mx);
        sum += x[i];
    }
    for (int i = 0; i < n; ++i) x[i] /= sum;
}

} // namespace

std::int64_t Header::floatsExpected() const {
    const std::int64_t d = dim, hd = hidden_dim, L = n_layers, kv = kvDim(), v = vocab_size;
    std::int64_t n = v * d;                  // token embedding
    n += L * d;                              // rms_att
    n += L * d * d + 2 * L * kv * d;         // wq, wk, wv
    n += L * d * d;                          // wo
    n += L * d;                              // rms_ffn
    n += 3 * L * hd * d;                     // w1, w2, w3
    n += d;                                  // rms_final
    n += std::int64_t(seq_len) * headSize(); // two RoPE tables of seq_len x head_size / 2
    if (!shared_classifier) n += v * d;
    return n;
}

std::int64_t Weights::parameters() const {
    return std::int64_t(token_embedding.size() + rms_att.size() + wq.size() + wk.size() +
                        wv.size() + wo.size() + rms_ffn.size() + w1.size() + w2.size() + w3.size() +
                        rms_final.size() + wcls.size());
}

Weights read(const std::string& path) {
    // A regular file only (a FIFO would be waited on, a device read without end).
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        throw InputError(path, 0, "",
                         std::string("cannot open the checkpoint: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
        throw InputError(path, 0, "", "is not a regular file: not a llama2.c checkpoint");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path, 0, "", "cannot open the checkpoint");
    std::int32_t raw[7];
    if (!in.read(reinterpret_cast<char*>(raw), sizeof raw))
        throw InputError(path, 0, "header",
                         "shorter than llama2.c's header (7 int32: dim, hidden_dim, n_layers, "
                         "n_heads, n_kv_heads, vocab_size, seq_len)");
    Weights w;
    w.path = path;
    Header& h = w.h;
    int* fields[7] = {&h.dim,        &h.hidden_dim, &h.n_layers, &h.n_heads,
                      &h.n_kv_heads, &h.vocab_size, &h.seq_len};
    for (int i = 0; i < 7; ++i) *fields[i] = raw[i];
    h.shared_classifier = h.vocab_size > 0;
    if (h.vocab_size < 0 && h.vocab_size != std::numeric_limits<std::int32_t>::min())
        h.vocab_size = -h.vocab_size;
    // Bounds that keep every size below in 64 bits and reject files that are not llama2.c
    // checkpoints (a safetensors or GGUF file starts with other bytes).
    for (int i = 0; i < 7; ++i)
        if (*fields[i] <= 0 || *fields[i] > (1 << 20))
            throw InputError(path, 0, kFields[i],
                             "must be between 1 and 1048576, is " + std::to_string(raw[i]) +
                                 " (is this a llama2.c checkpoint?)");
    if (h.dim % h.n_heads)
        throw InputError(path, 0, "n_heads",
                         std::to_string(h.n_heads) + " heads do not divide dim " +
                             std::to_string(h.dim));
    if (h.n_heads % h.n_kv_heads)
        throw InputError(path, 0, "n_kv_heads",
                         std::to_string(h.n_kv_heads) + " KV heads do not divide " +
                             std::to_string(h.n_heads) + " query heads");
    if (h.headSize() % 2)
        throw InputError(path, 0, "n_heads",
                         "the head size dim / n_heads = " + std::to_string(h.headSize()) +
                             " is odd: rotary embeddings need pairs");
    in.seekg(0, std::ios::end);
    const std::int64_t bytes = std::int64_t(in.tellg()) - std::int64_t(sizeof raw);
    const std::int64_t want = h.floatsExpected();
    // Read whole into memory: at most half of this machine's memory (a sparse file can
    // claim any size its header asks for).
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    const double half = pages > 0 && page > 0 ? 0.5 * double(pages) * double(page) : 8e9;
    if (double(want) * 4 > half)
        throw InputError(path, 0, "size",
                         "the header asks for " + std::to_string(want * 4 / (1 << 20)) +
                             " MiB of float32 weights, more than half of this machine's memory "
                             "(the reference forward pass holds them all)");
    if (bytes != want * 4)
        throw InputError(path, 0, "size",
                         "the header asks for " + std::to_string(want) + " float32 (" +
                             std::to_string(want * 4) + " bytes after it) but the file has " +
                             std::to_string(bytes) + " bytes");
    in.seekg(sizeof raw);
    const std::int64_t d = h.dim, hd = h.hidden_dim, L = h.n_layers, kv = h.kvDim(),
                       v = h.vocab_size;
    auto take = [&](std::vector<float>& out, std::int64_t n, const char* name) {
        out.resize(std::size_t(n));
        if (!in.read(reinterpret_cast<char*>(out.data()), std::streamsize(n * 4)))
            throw InputError(path, 0, name, "cut short");
        for (float f : out)
            if (!std::isfinite(f))
                throw InputError(path, 0, name, "holds a value that is not finite");
    };
    take(w.token_embedding, v * d, "token_embedding");
    take(w.rms_att, L * d, "rms_att_weight");
    take(w.wq, L * d * d, "wq");
    take(w.wk, L * kv * d, "wk");
    take(w.wv, L * kv * d, "wv");
    take(w.wo, L * d * d, "wo");
    take(w.rms_ffn, L * d, "rms_ffn_weight");
    take(w.w1, L * hd * d, "w1");
    take(w.w2, L * d * hd, "w2");
    take(w.w3, L * hd * d, "w3");
    take(w.rms_final, d, "rms_final_weight");
    in.seekg(std::streamoff(std::int64_t(h.seq_len) * h.headSize() * 4), std::ios::cur);
    if (!h.shared_classifier) take(w.wcls, v * d, "wcls");
    return w;
}

Reference::Reference(const Weights& w) : w_(w) {
    const Header& h = w.h;
    x_.resize(std::size_t(h.dim));
    xb_.resize(std::size_t(h.dim));
    xb2_.resize(std::size_t(h.dim));
    hb_.resize(std::size_t(h.hidden_dim));
    hb2_.resize(std::size_t(h.hidden_dim));
    q_.resize(std::size_t(h.dim));
    att_.resize(std::size_t(h.n_heads) * h.seq_len);
    logits_.resize(std::size_t(h.vocab_size));
    const std::size_t cache = std::size_t(h.n_layers) * h.seq_len * h.kvDim();
    key_cache_.assign(cache, 0.0f);
    value_cache_.assign(cache, 0.0f);
}

void Reference::reset() {
    std::fill(key_cache_.begin(), key_cache_.end(), 0.0f);
    std::fill(value_cache_.begin(), value_cache_.end(), 0.0f);
}

const std::vector<float>& Reference::step(int token, int pos) {
    const Header& h = w_.h;
    if (token < 0 || token >= h.vocab_size || pos < 0 || pos >= h.seq_len)
        throw std::out_of_range("llama2c::Reference::step: token " + std::to_string(token) +
                                " or position " + std::to_string(pos) + " out of range");
    const int dim = h.dim, hs = h.headSize(), kv_dim = h.kvDim(), hidden = h.hidden_dim;
    const int kv_mul = h.n_heads / h.n_kv_heads;
    std::copy_n(w_.token_embedding.data() + std::size_t(token) * dim, dim, x_.data());
    for (int l = 0; l < h.n_layers; ++l) {
        rmsnorm(xb_.data(), x_.data(), w_.rms_att.data() + std::size_t(l) * dim, dim);
        const std::size_t off = (std::size_t(l) * h.seq_len + pos) * kv_dim;
        float* k = key_cache_.data() + off;
        float* v = value_cache_.data() + off;
        matmul(q_.data(), xb_.data(), w_.wq.data() + std::size_t(l) * dim * dim, dim, dim);
        matmul(k, xb_.data(), w_.wk.data() + std::size_t(l) * kv_dim * dim, dim, kv_dim);
        matmul(v, xb_.data(), w_.wv.data() + std::size_t(l) * kv_dim * dim, dim, kv_dim);
        // Rotary embeddings on adjacent pairs; the keys are the first kv_dim entries.
        for (int i = 0; i < dim; i += 2) {
            const int head_dim = i % hs;
            const float freq = 1.0f / std::pow(10000.0f, float(head_dim) / float(hs));
            const float val = float(pos) * freq, fcr = std::cos(val), fci = std::sin(val);
            for (int which = 0; which < (i < kv_dim ? 2 : 1); ++which) {
                float* vec = which == 0 ? q_.data() : k;
                const float v0 = vec[i], v1 = vec[i + 1];
                vec[i] = v0 * fcr - v1 * fci;
                vec[i + 1] = v0 * fci + v1 * fcr;
            }
        }
        const std::size_t layer_off = std::size_t(l) * h.seq_len * kv_dim;
        for (int hh = 0; hh < h.n_heads; ++hh) {
            const float* q = q_.data() + std::size_t(hh) * hs;
            float* att = att_.data() + std::size_t(hh) * h.seq_len;
            const int kvh = hh / kv_mul;
            for (int t = 0; t <= pos; ++t) {
                const float* kt =
                    key_cache_.data() + layer_off + std::size_t(t) * kv_dim + std::size_t(kvh) * hs;
                float score = 0;
                for (int i = 0; i < hs; ++i) score += q[i] * kt[i];
                att[t] = score / std::sqrt(float(hs));
            }
            softmax(att, pos + 1);
            float* out = xb_.data() + std::size_t(hh) * hs;
            std::fill(out, out + hs, 0.0f);
            for (int t = 0; t <= pos; ++t) {
                const float* vt = value_cache_.data() + layer_off + std::size_t(t) * kv_dim +
                                  std::size_t(kvh) * hs;
                for (int i = 0; i < hs; ++i) out[i] += att[t] * vt[i];
            }
        }
        matmul(xb2_.data(), xb_.data(), w_.wo.data() + std::size_t(l) * dim * dim, dim, dim);
        for (int i = 0; i < dim; ++i) x_[i] += xb2_[i];
        rmsnorm(xb_.data(), x_.data(), w_.rms_ffn.data() + std::size_t(l) * dim, dim);
        matmul(hb_.data(), xb_.data(), w_.w1.data() + std::size_t(l) * dim * hidden, dim, hidden);
        matmul(hb2_.data(), xb_.data(), w_.w3.data() + std::size_t(l) * dim * hidden, dim, hidden);
        for (int i = 0; i < hidden; ++i) {
            const float a = hb_[i];
            hb_[i] = a * (1.0f / (1.0f + std::exp(-a))) * hb2_[i];
        }
        matmul(xb_.data(), hb_.data(), w_.w2.data() + std::size_t(l) * dim * hidden, hidden, dim);
        for (int i = 0; i < dim; ++i) x_[i] += xb_[i];
    }
    rmsnorm(x_.data(), x_.data(), w_.rms_final.data(), dim);
    matmul(logits_.data(), x_.data(), w_.classifier().data(), dim, h.vocab_size);
    return logits_;
}

int Sampler::sample(const float* logits, int n) {
    if (n <= 0) return -1;
    if (temperature_ <= 0) return int(std::max_element(logits, logits + n) - logits);
    scratch_.resize(std::size_t(n));
    float mx = logits[0];
    for (int i = 1; i < n; ++i) mx = std::max(mx, logits[i]);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        const float p = float(std::exp((double(logits[i]) - mx) / temperature_));
        scratch_[std::size_t(i)] = {p, i};
        sum += p;
    }
    std::size_t keep = scratch_.size();
    double mass = sum;
    if (top_p_ > 0 && top_p_ < 1) {
        std::sort(scratch_.begin(), scratch_.end(), [](const auto& a, const auto& b) {
            return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        double acc = 0;
        for (std::size_t i = 0; i < scratch_.size(); ++i) {
            acc += scratch_[i].first;
            if (acc >= top_p_ * sum) {
                keep = i + 1;
                break;
            }
        }
        mass = 0;
        for (std::size_t i = 0; i < keep; ++i) mass += scratch_[i].first;
        // The draw walks the kept tokens in id order, not by probability (as run.c does):
        // two nearly equally likely tokens swapped by a rounding difference (a batch of
        // another size, a recompute) would otherwise trade intervals and change the draw;
        // measured on stories260K, one request in two changed its answer when batched 3
        // at a time instead of 8.
        std::sort(scratch_.begin(), scratch_.begin() + std::ptrdiff_t(keep),
                  [](const auto& a, const auto& b) { return a.second < b.second; });
    }
    const double r = std::uniform_real_distribution<double>(0.0, mass)(rng_);
    double acc = 0;
    for (std::size_t i = 0; i < keep; ++i) {
        acc += scratch_[i].first;
        if (r < acc) return scratch_[i].second;
    }
    return scratch_[keep - 1].second;
}

} // namespace kairos::llama2c
