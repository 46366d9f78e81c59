// Decode attention over a ragged batch (each request its own KV length), grouped-query.
// Semantics: decodeAttentionHost in reference.cpp; the GPU test compares the two.
//
// One thread block per (request, query head). Its warps stride over the request's cached
// positions; inside a warp each lane holds head_dim/32 consecutive elements of the query
// and of the output accumulator, the dot product is reduced with warp shuffles, and the
// warp keeps an online softmax (running maximum and sum, accumulator rescaled when the
// maximum grows). The warps' partial results are merged through shared memory at the end,
// the reduction flash-decoding uses across splits. Memory traffic is one read of the
// request's K and V for the group's heads per query head (GQA heads re-read from L2).
#include "kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace kairos::gpu::kernels {

namespace {

constexpr int kWarps = 4;

template <class T> __device__ __forceinline__ float toFloat(T x);
template <> __device__ __forceinline__ float toFloat<float>(float x) {
    return x;
}
template <> __device__ __forceinline__ float toFloat<__half>(__half x) {
    return __half2float(x);
}
template <> __device__ __forceinline__ float toFloat<__nv_bfloat16>(__nv_bfloat16 x) {
    return __bfloat162float(x);
}
template <class T> __device__ __forceinline__ T fromFloat(float x);
template <> __device__ __forceinline__ float fromFloat<float>(float x) {
    return x;
}
template <> __device__ __forceinline__ __half fromFloat<__half>(float x) {
    return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
    return __float2bfloat16_rn(x);
}

template <class T, int VEC>
__global__ void __launch_bounds__(kWarps * 32)
    decodeAttentionKernel(int heads, int group, float scale, const T* __restrict__ q,
                          T* __restrict__ out, const T* const* __restrict__ kp,
                          const T* const* __restrict__ vp, const int* __restrict__ lens,
                          const int* __restrict__ caps) {
    constexpr int D = VEC * 32;
    const int b = blockIdx.x / heads;
    const int h = blockIdx.x % heads;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const int len = lens[b];
    const size_t head_off = static_cast<size_t>(h / group) * caps[b] * D;
    const T* K = kp[b] + head_off;
    const T* V = vp[b] + head_off;
    const T* qrow = q + (static_cast<size_t>(b) * heads + h) * D;

    float qv[VEC], acc[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
        qv[i] = toFloat(qrow[lane * VEC + i]);
        acc[i] = 0.0f;
    }
    float m = -INFINITY, s = 0.0f;
    for (int t = warp; t < len; t += kWarps) {
        const T* krow = K + static_cast<size_t>(t) * D + lane * VEC;
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < VEC; ++i) dot += qv[i] * toFloat(krow[i]);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffU, dot, off);
        const float x = dot * scale;
        const float mn = fmaxf(m, x);
        const float corr = __expf(m - mn); // 0 on the first position (m = -inf)
        const float p = __expf(x - mn);
        s = s * corr + p;
        const T* vrow = V + static_cast<size_t>(t) * D + lane * VEC;
#pragma unroll
        for (int i = 0; i < VEC; ++i) acc[i] = acc[i] * corr + p * toFloat(vrow[i]);
        m = mn;
    }

    __shared__ float s_max[kWarps], s_sum[kWarps];
    __shared__ float s_acc[kWarps][D];
    if (lane == 0) {
        s_max[warp] = m;
        s_sum[warp] = s;
    }
#pragma unroll
    for (int i = 0; i < VEC; ++i) s_acc[warp][lane * VEC + i] = acc[i];
    __syncthreads();
    if (warp != 0) return;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) M = fmaxf(M, s_max[w]);
    float S = 0.0f, o[VEC];
#pragma unroll
    for (int i = 0; i < VEC; ++i) o[i] = 0.0f;
    for (int w = 0; w < kWarps; ++w) {
        if (s_max[w] == -INFINITY) continue; // this warp saw no position
        const float c = __expf(s_max[w] - M);
        S += s_sum[w] * c;
#pragma unroll
        for (int i = 0; i < VEC; ++i) o[i] += s_acc[w][lane * VEC + i] * c;
    }
    T* orow = out + (static_cast<size_t>(b) * heads + h) * D;
#pragma unroll
    for (int i = 0; i < VEC; ++i) orow[lane * VEC + i] = fromFloat<T>(S > 0.0f ? o[i] / S : 0.0f);
}

template <class T, int VEC> int launch(const DecodeAttention& a, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(a.batch * a.heads));
    decodeAttentionKernel<T, VEC><<<grid, kWarps * 32, 0, stream>>>(
        a.heads, a.heads / a.kv_heads, a.scale, static_cast<const T*>(a.q), static_cast<T*>(a.out),
        reinterpret_cast<const T* const*>(a.k), reinterpret_cast<const T* const*>(a.v), a.lens,
        a.caps);
    return static_cast<int>(cudaGetLastError());
}

template <class T> int byDim(const DecodeAttention& a, cudaStream_t stream) {
    switch (a.head_dim) {
    case 32:
        return launch<T, 1>(a, stream);
    case 64:
        return launch<T, 2>(a, stream);
    case 128:
        return launch<T, 4>(a, stream);
    case 256:
        return launch<T, 8>(a, stream);
    default:
        return static_cast<int>(cudaErrorInvalidValue);
    }
}

} // namespace

bool cudaKernelsBuilt() {
    return true;
}

int decodeAttentionCuda(const DecodeAttention& a, Elem e, void* stream) {
    if (a.batch <= 0) return 0;
    if (a.kv_heads <= 0 || a.heads % a.kv_heads != 0)
        return static_cast<int>(cudaErrorInvalidValue);
    const auto st = static_cast<cudaStream_t>(stream);
    switch (e) {
    case Elem::F32:
        return byDim<float>(a, st);
    case Elem::F16:
        return byDim<__half>(a, st);
    case Elem::BF16:
        return byDim<__nv_bfloat16>(a, st);
    }
    return static_cast<int>(cudaErrorInvalidValue);
}

} // namespace kairos::gpu::kernels
