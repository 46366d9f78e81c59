// Host references for the live engine's kernels: plain loops that define what the CUDA
// versions compute; the CPU engine runs these.
#include "kernels.h"
#include "weights/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace kairos::gpu::kernels {

namespace {

float load(const void* p, std::size_t i, Elem e) {
    switch (e) {
    case Elem::F32:
        return static_cast<const float*>(p)[i];
    case Elem::F16:
        return safetensors::halfToFloat(static_cast<const std::uint16_t*>(p)[i]);
    case Elem::BF16:
        return safetensors::bf16ToFloat(static_cast<const std::uint16_t*>(p)[i]);
    }
    return 0.0f;
}

void store(void* p, std::size_t i, float x, Elem e) {
    switch (e) {
    case Elem::F32:
        static_cast<float*>(p)[i] = x;
        break;
    case Elem::F16:
        static_cast<std::uint16_t*>(p)[i] = safetensors::floatToHalf(x);
        break;
    case Elem::BF16:
        static_cast<std::uint16_t*>(p)[i] = safetensors::floatToBf16(x);
        break;
    }
}

std::size_t elemSize(Elem e) {
    return e == Elem::F32 ? 4 : 2;
}

} // namespace

void decodeAttentionHost(const DecodeAttention& a, Elem e) {
    const int group = a.heads / a.kv_heads;
    const auto d = static_cast<std::size_t>(a.head_dim);
    std::vector<float> q(d), acc(d), scores;
    for (int b = 0; b < a.batch; ++b) {
        const auto len = static_cast<std::size_t>(a.lens[b]);
        const auto cap = static_cast<std::size_t>(a.caps[b]);
        scores.resize(len);
        for (int h = 0; h < a.heads; ++h) {
            const std::size_t qoff = (static_cast<std::size_t>(b) * a.heads + h) * d;
            for (std::size_t i = 0; i < d; ++i) q[i] = load(a.q, qoff + i, e);
            const std::size_t base = static_cast<std::size_t>(h / group) * cap * d;
            float m = -std::numeric_limits<float>::infinity();
            for (std::size_t t = 0; t < len; ++t) {
                float s = 0.0f;
                for (std::size_t i = 0; i < d; ++i) s += q[i] * load(a.k[b], base + t * d + i, e);
                scores[t] = s * a.scale;
                m = std::max(m, scores[t]);
            }
            float sum = 0.0f;
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (std::size_t t = 0; t < len; ++t) {
                const float p = std::exp(scores[t] - m);
                sum += p;
                for (std::size_t i = 0; i < d; ++i) acc[i] += p * load(a.v[b], base + t * d + i, e);
            }
            for (std::size_t i = 0; i < d; ++i)
                store(a.out, qoff + i, len > 0 ? acc[i] / sum : 0.0f, e);
        }
    }
}

void kvCompactHost(const KvCompact& a, Elem e) {
    const std::size_t row = static_cast<std::size_t>(a.head_dim) * elemSize(e);
    const auto* src = static_cast<const unsigned char*>(a.src);
    auto* dst = static_cast<unsigned char*>(a.dst);
    for (int g = 0; g < a.kv_heads; ++g)
        for (int j = 0; j < a.keep; ++j) {
            const auto from = static_cast<std::size_t>(g) * a.src_cap +
                              static_cast<std::size_t>(a.index[g * a.keep + j]);
            const auto to = static_cast<std::size_t>(g) * a.dst_cap + static_cast<std::size_t>(j);
            std::memmove(dst + to * row, src + from * row, row);
        }
}

} // namespace kairos::gpu::kernels
