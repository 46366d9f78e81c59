#include "exec/reference_decoder.h"

#include "workload/random.h"

#include <cmath>
#include <stdexcept>

namespace kairos {
namespace {
Eigen::MatrixXf randomMatrix(Eigen::Index rows, Eigen::Index cols, Rng& rng) {
    // Scaled like an initialisation (std 1/sqrt(cols)) so activations stay finite.
    const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
    Eigen::MatrixXf w(rows, cols);
    float* p = w.data();
    for (Eigen::Index i = 0; i < rows * cols; ++i)
        p[i] = static_cast<float>(rng.uniform() * 2.0 - 1.0) * scale * 1.7f;
    return w;
}
// W * X. Eigen's GEMM repacks W on every call, which for a few columns costs more than
// the product (measured: 3x the GEMV time at 2 columns); a serving engine uses a
// matrix-vector kernel there, so this does too, per column, up to 3 columns.
Eigen::MatrixXf mul(const Eigen::MatrixXf& w, const Eigen::MatrixXf& x) {
    if (x.cols() > 3) return w * x;
    Eigen::MatrixXf y(w.rows(), x.cols());
    for (Eigen::Index c = 0; c < x.cols(); ++c) y.col(c).noalias() = w * x.col(c);
    return y;
}
} // namespace

ReferenceDecoder::ReferenceDecoder(const ModelConfig& shape, std::uint64_t seed) : m_(shape) {
    if (m_.layers <= 0 || m_.hidden <= 0 || m_.heads <= 0 || m_.kv_heads <= 0 || m_.head_dim <= 0 ||
        m_.intermediate <= 0 || m_.vocab <= 0 || m_.heads % m_.kv_heads != 0 ||
        m_.heads * m_.head_dim != m_.hidden)
        throw std::invalid_argument("reference decoder: incomplete or inconsistent model shape '" +
                                    m_.name + "'");
    kv_dim_ = m_.kv_heads * m_.head_dim;
    Rng rng(seed);
    embed_ = randomMatrix(m_.vocab, m_.hidden, rng);
    layers_.resize(static_cast<std::size_t>(m_.layers));
    for (Layer& l : layers_) {
        l.wq = randomMatrix(m_.hidden, m_.hidden, rng);
        l.wk = randomMatrix(kv_dim_, m_.hidden, rng);
        l.wv = randomMatrix(kv_dim_, m_.hidden, rng);
        l.wo = randomMatrix(m_.hidden, m_.hidden, rng);
        l.wg = randomMatrix(m_.intermediate, m_.hidden, rng);
        l.wu = randomMatrix(m_.intermediate, m_.hidden, rng);
        l.wd = randomMatrix(m_.hidden, m_.intermediate, rng);
        l.norm1 = Eigen::VectorXf::Ones(m_.hidden);
        l.norm2 = Eigen::VectorXf::Ones(m_.hidden);
    }
    final_norm_ = Eigen::VectorXf::Ones(m_.hidden);
}

ReferenceDecoder::Sequence ReferenceDecoder::newSequence() const {
    Sequence s;
    s.k.assign(static_cast<std::size_t>(m_.layers), Eigen::MatrixXf(kv_dim_, 0));
    s.v.assign(static_cast<std::size_t>(m_.layers), Eigen::MatrixXf(kv_dim_, 0));
    return s;
}

void ReferenceDecoder::fillCache(Sequence& s, int n, float value) const {
    for (int l = 0; l < m_.layers; ++l) {
        s.k[static_cast<std::size_t>(l)].setConstant(kv_dim_, n, value);
        s.v[static_cast<std::size_t>(l)].setConstant(kv_dim_, n, value);
    }
    s.len = n;
}

void ReferenceDecoder::rmsnorm(Eigen::MatrixXf& x, const Eigen::VectorXf& g) const {
    for (Eigen::Index c = 0; c < x.cols(); ++c) {
        const float rms = std::sqrt(x.col(c).squaredNorm() / static_cast<float>(x.rows()) + 1e-6f);
        x.col(c) = x.col(c).cwiseProduct(g) / rms;
    }
}

Eigen::MatrixXf ReferenceDecoder::forward(const std::vector<Sequence*>& seqs,
                                          const std::vector<std::vector<int>>& tokens) {
    if (seqs.size() != tokens.size() || seqs.empty())
        throw std::invalid_argument("forward: one token list per sequence");
    std::vector<Eigen::Index> start(seqs.size() + 1, 0);
    for (std::size_t i = 0; i < seqs.size(); ++i) {
        if (tokens[i].empty()) throw std::invalid_argument("forward: every sequence needs a token");
        start[i + 1] = start[i] + static_cast<Eigen::Index>(tokens[i].size());
    }
    const Eigen::Index total = start.back();
    Eigen::MatrixXf x(m_.hidden, total);
    for (std::size_t i = 0; i < seqs.size(); ++i)
        for (std::size_t t = 0; t < tokens[i].size(); ++t) {
            const int tok = tokens[i][t];
            if (tok < 0 || tok >= m_.vocab)
                throw std::invalid_argument("forward: token id out of range");
            x.col(start[i] + static_cast<Eigen::Index>(t)) = embed_.row(tok).transpose();
        }
    const int group = m_.heads / m_.kv_heads;
    const float inv_sqrt = 1.0f / std::sqrt(static_cast<float>(m_.head_dim));
    Eigen::MatrixXf attn(m_.hidden, total);
    for (int li = 0; li < m_.layers; ++li) {
        Layer& L = layers_[static_cast<std::size_t>(li)];
        Eigen::MatrixXf h = x;
        rmsnorm(h, L.norm1);
        const Eigen::MatrixXf q = mul(L.wq, h), k = mul(L.wk, h), v = mul(L.wv, h);
        for (std::size_t i = 0; i < seqs.size(); ++i) {
            Sequence& s = *seqs[i];
            const Eigen::Index n_new = start[i + 1] - start[i], past = s.len;
            Eigen::MatrixXf& K = s.k[static_cast<std::size_t>(li)];
            Eigen::MatrixXf& V = s.v[static_cast<std::size_t>(li)];
            K.conservativeResize(Eigen::NoChange, past + n_new);
            V.conservativeResize(Eigen::NoChange, past + n_new);
            K.rightCols(n_new) = k.middleCols(start[i], n_new);
            V.rightCols(n_new) = v.middleCols(start[i], n_new);
            for (int hd = 0; hd < m_.heads; ++hd) {
                const Eigen::Index kvo = static_cast<Eigen::Index>(hd / group) * m_.head_dim;
                const auto Kh = K.middleRows(kvo, m_.head_dim);
                const auto Vh = V.middleRows(kvo, m_.head_dim);
                const auto Qh = q.block(static_cast<Eigen::Index>(hd) * m_.head_dim, start[i],
                                        m_.head_dim, n_new);
                Eigen::MatrixXf scores = (Kh.transpose() * Qh) * inv_sqrt; // (past+n_new) x n_new
                for (Eigen::Index t = 0; t < n_new; ++t) {
                    const Eigen::Index visible = past + t + 1; // causal: itself and before
                    auto col = scores.col(t).head(visible);
                    const float mx = col.maxCoeff();
                    col = (col.array() - mx).exp().matrix();
                    col /= col.sum();
                    scores.col(t).tail(past + n_new - visible).setZero();
                }
                attn.block(static_cast<Eigen::Index>(hd) * m_.head_dim, start[i], m_.head_dim,
                           n_new) = Vh * scores;
            }
            if (li == m_.layers - 1) s.len = static_cast<int>(past + n_new);
        }
        x += mul(L.wo, attn);
        Eigen::MatrixXf h2 = x;
        rmsnorm(h2, L.norm2);
        const Eigen::MatrixXf g = mul(L.wg, h2);
        const Eigen::MatrixXf u = mul(L.wu, h2);
        const Eigen::MatrixXf a =
            (g.array() / (1.0f + (-g.array()).exp()) * u.array()).matrix(); // silu(g) * u
        x += mul(L.wd, a);
    }
    // LM head on each sequence's last position only (what generation needs).
    Eigen::MatrixXf last(m_.hidden, static_cast<Eigen::Index>(seqs.size()));
    for (std::size_t i = 0; i < seqs.size(); ++i)
        last.col(static_cast<Eigen::Index>(i)) = x.col(start[i + 1] - 1);
    rmsnorm(last, final_norm_);
    return mul(embed_, last);
}

} // namespace kairos
