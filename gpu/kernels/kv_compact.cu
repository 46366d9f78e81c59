// KV compaction after SnapKV-style eviction: each KV head gathers its kept positions into
// a new buffer. Semantics: kvCompactHost in reference.cpp. Rows are copied as 32-bit
// words (head_dim is even, so a row of 16-bit elements is a whole number of words).
// Out of place: gathering in place races when a kept position's source row is another
// block's destination.
#include "kernels.h"

#include <cuda_runtime.h>

namespace kairos::gpu::kernels {

namespace {

__global__ void kvCompactKernel(int keep, int words, const unsigned* __restrict__ src, int src_cap,
                                unsigned* __restrict__ dst, int dst_cap,
                                const int* __restrict__ index) {
    const int j = blockIdx.x;
    const int g = blockIdx.y;
    const size_t from = (static_cast<size_t>(g) * src_cap + index[g * keep + j]) * words;
    const size_t to = (static_cast<size_t>(g) * dst_cap + j) * words;
    for (int w = threadIdx.x; w < words; w += blockDim.x) dst[to + w] = src[from + w];
}

} // namespace

int kvCompactCuda(const KvCompact& a, Elem e, void* stream) {
    if (a.keep <= 0) return 0;
    const int bytes = a.head_dim * (e == Elem::F32 ? 4 : 2);
    if (bytes % 4 != 0 || a.dst_cap < a.keep) return static_cast<int>(cudaErrorInvalidValue);
    const int words = bytes / 4;
    const dim3 grid(static_cast<unsigned>(a.keep), static_cast<unsigned>(a.kv_heads));
    const int threads = words < 128 ? ((words + 31) / 32) * 32 : 128;
    kvCompactKernel<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(
        a.keep, words, static_cast<const unsigned*>(a.src), a.src_cap,
        static_cast<unsigned*>(a.dst), a.dst_cap, a.index);
    return static_cast<int>(cudaGetLastError());
}

} // namespace kairos::gpu::kernels
