#pragma once
#include <cstdint>
#include <string>

namespace kairos {

// Shape of a decoder-only transformer, as far as memory and time models need it.
struct ModelConfig {
    std::string name;
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kv_heads = 0; // < heads with grouped-query attention
    int head_dim = 0;
    int dtype_bytes = 2;  // 2 for fp16/bf16
    double params = 0.0;  // parameter count
    int intermediate = 0; // MLP width (0: unknown; only the reference decoder needs it)
    int vocab = 0;        // vocabulary size (0: unknown)

    // K and V for every layer and KV head: 2 * layers * kv_heads * head_dim * dtype_bytes.
    std::int64_t kvBytesPerToken() const {
        return 2LL * layers * kv_heads * head_dim * dtype_bytes;
    }
    double weightBytes() const { return params * dtype_bytes; }
    bool valid() const {
        return layers > 0 && hidden > 0 && heads > 0 && kv_heads > 0 && head_dim > 0 &&
               dtype_bytes > 0 && params > 0;
    }
};

} // namespace kairos
