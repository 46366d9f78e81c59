#pragma once
// The live engine's two custom kernels, on raw pointers so that they build without
// libtorch (nvcc alone compiles the CUDA side; tests and the CPU engine use the host
// references, which define the semantics the CUDA versions are checked against).
//
// Layout of one request's KV cache in one layer: keys and values each [kv_heads, cap,
// head_dim], row-major; positions 0..len-1 are valid. Grouped-query attention: query head
// h reads KV head h / (heads / kv_heads).
#include <cstdint>

namespace kairos::gpu::kernels {

enum class Elem : std::uint8_t { F32, F16, BF16 };

// Decode attention over a ragged batch: request b has one query per head and attends to
// its own lens[b] cached positions (which include the token being decoded).
//   out[b, h, :] = softmax(q[b, h, :] . K_b[g(h), t, :] * scale over t < lens[b]) . V_b
struct DecodeAttention {
    int batch = 0, heads = 0, kv_heads = 0, head_dim = 0;
    float scale = 1.0f;
    const void* q = nullptr;        // [batch, heads, head_dim]
    void* out = nullptr;            // [batch, heads, head_dim]
    const void* const* k = nullptr; // [batch] pointers to [kv_heads, caps[b], head_dim]
    const void* const* v = nullptr;
    const std::int32_t* lens = nullptr; // [batch]
    const std::int32_t* caps = nullptr; // [batch]
};

// KV compaction for eviction: dst[g, j, :] = src[g, index[g * keep + j], :] for j < keep,
// separately for each KV head g (each head keeps its own positions).
struct KvCompact {
    int kv_heads = 0, head_dim = 0, keep = 0;
    const void* src = nullptr; // [kv_heads, src_cap, head_dim]
    int src_cap = 0;
    void* dst = nullptr; // [kv_heads, dst_cap, head_dim], dst_cap >= keep
    int dst_cap = 0;
    const std::int32_t* index = nullptr; // [kv_heads, keep], each < src length
};

// Host references (every pointer in host memory). Softmax in float with the running
// maximum subtracted; accumulation in float; the result rounded to the element type.
void decodeAttentionHost(const DecodeAttention& a, Elem e);
void kvCompactHost(const KvCompact& a, Elem e);

// Whether decodeAttentionCuda has a kernel for heads this wide.
constexpr bool decodeAttentionCovers(int head_dim) {
    return head_dim == 32 || head_dim == 64 || head_dim == 128 || head_dim == 256;
}
// Whether this build has the CUDA kernels (nvcc was found at configure time).
bool cudaKernelsBuilt();
// CUDA versions (every pointer, including the k/v pointer arrays, lens, caps and index,
// in device memory). Return 0 on success, else a CUDA error code; -1 where not built.
// Decode attention covers head_dim 32, 64, 128 and 256 (decodeAttentionCovers); any other
// returns cudaErrorInvalidValue, and the transformer attends with ATen instead (stories260K's
// heads are 8 wide).
int decodeAttentionCuda(const DecodeAttention& a, Elem e, void* stream);
int kvCompactCuda(const KvCompact& a, Elem e, void* stream);

} // namespace kairos::gpu::kernels
