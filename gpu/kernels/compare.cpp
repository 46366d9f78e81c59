#include "kernels/compare.h"

#include "weights/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>

#ifdef KAIROS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace kairos::gpu::kernels {

bool KernelComparison::passed() const {
    if (!ran || !error.empty()) return false;
    return std::all_of(cases.begin(), cases.end(), [](const KernelCase& c) { return c.passed(); });
}

#ifndef KAIROS_HAVE_CUDA

KernelComparison compareCudaWithHost() {
    KernelComparison r;
    r.why_not = "built without nvcc: no CUDA kernels (the engine uses the host references)";
    return r;
}

#else

namespace {

namespace st = kairos::safetensors;

const char* elemName(Elem e) {
    return e == Elem::F32 ? "f32" : (e == Elem::F16 ? "f16" : "bf16");
}

// Element bytes of float values in type e.
std::vector<unsigned char> bytesOf(const std::vector<float>& x, Elem e) {
    const std::size_t es = e == Elem::F32 ? 4 : 2;
    std::vector<unsigned char> out(x.size() * es);
    if (e == Elem::F32) {
        std::memcpy(out.data(), x.data(), out.size());
        return out;
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
        const std::uint16_t h = e == Elem::F16 ? st::floatToHalf(x[i]) : st::floatToBf16(x[i]);
        std::memcpy(out.data() + i * 2, &h, 2);
    }
    return out;
}

float valueAt(const std::vector<unsigned char>& b, std::size_t i, Elem e) {
    if (e == Elem::F32) {
        float f;
        std::memcpy(&f, b.data() + i * 4, 4);
        return f;
    }
    std::uint16_t h;
    std::memcpy(&h, b.data() + i * 2, 2);
    return e == Elem::F16 ? st::halfToFloat(h) : st::bf16ToFloat(h);
}

// Device buffers freed on every path out (a failed check must not leak the GPU's memory
// into the next one).
class DeviceBuffers {
public:
    ~DeviceBuffers() {
        for (void* p : held_) cudaFree(p);
    }
    // A device copy of n host bytes; nullptr (and `failed`) when CUDA refuses.
    void* up(const void* host, std::size_t n) {
        void* d = nullptr;
        if (check(cudaMalloc(&d, n), "cudaMalloc")) return nullptr;
        held_.push_back(d);
        if (host && check(cudaMemcpy(d, host, n, cudaMemcpyHostToDevice), "cudaMemcpy to device"))
            return nullptr;
        return d;
    }
    bool down(void* host, const void* dev, std::size_t n) {
        return !check(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
    }
    // True when `e` is an error (recorded once).
    bool check(cudaError_t e, const char* what) {
        if (e == cudaSuccess) return false;
        if (error.empty()) error = std::string(what) + ": " + cudaGetErrorString(e);
        return true;
    }
    std::string error;

private:
    std::vector<void*> held_;
};

KernelCase decodeCase(int heads, int kvh, int d, Elem e, DeviceBuffers& dev) {
    const std::vector<int> lens = {1, 3, 31, 32, 33, 500, 4097};
    const int batch = int(lens.size());
    std::mt19937 rng(unsigned(d + heads));
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<int> caps;
    for (int len : lens) caps.push_back(len + 3 + len % 5); // capacity past the length
    std::vector<float> q(std::size_t(batch) * std::size_t(heads) * std::size_t(d));
    for (auto& x : q) x = n(rng);
    std::vector<std::vector<unsigned char>> kb, vb;
    for (int r = 0; r < batch; ++r) {
        std::vector<float> k(std::size_t(kvh) * std::size_t(caps[std::size_t(r)]) * std::size_t(d)),
            v(k.size());
        for (auto& x : k) x = n(rng);
        for (auto& x : v) x = n(rng);
        kb.push_back(bytesOf(k, e));
        vb.push_back(bytesOf(v, e));
    }
    const auto qb = bytesOf(q, e);
    std::vector<const void*> kp, vp, kd, vd;
    for (int r = 0; r < batch; ++r) {
        const auto i = std::size_t(r);
        kp.push_back(kb[i].data());
        vp.push_back(vb[i].data());
        kd.push_back(dev.up(kb[i].data(), kb[i].size()));
        vd.push_back(dev.up(vb[i].data(), vb[i].size()));
    }
    std::vector<unsigned char> host_out(qb.size()), dev_out(qb.size());
    DecodeAttention a;
    a.batch = batch, a.heads = heads, a.kv_heads = kvh, a.head_dim = d;
    a.scale = float(1.0 / std::sqrt(double(d)));
    a.q = qb.data(), a.out = host_out.data(), a.k = kp.data(), a.v = vp.data();
    a.lens = lens.data(), a.caps = caps.data();
    decodeAttentionHost(a, e);

    KernelCase c;
    c.name = std::string("decode attention ") + elemName(e) + ", " + std::to_string(heads) +
             " heads / " + std::to_string(kvh) + " KV heads, d " + std::to_string(d);
    c.tolerance = e == Elem::F32 ? 1e-4 : (e == Elem::F16 ? 4e-3 : 2e-2);
    c.worst = INFINITY;
    DecodeAttention g = a;
    g.q = dev.up(qb.data(), qb.size());
    void* od = dev.up(nullptr, dev_out.size());
    g.out = od;
    g.k = static_cast<const void* const*>(dev.up(kd.data(), kd.size() * sizeof(void*)));
    g.v = static_cast<const void* const*>(dev.up(vd.data(), vd.size() * sizeof(void*)));
    g.lens = static_cast<const std::int32_t*>(dev.up(lens.data(), lens.size() * 4));
    g.caps = static_cast<const std::int32_t*>(dev.up(caps.data(), caps.size() * 4));
    if (!dev.error.empty()) return c;
    if (dev.check(cudaError_t(decodeAttentionCuda(g, e, nullptr)), "decodeAttentionCuda")) return c;
    if (!dev.down(dev_out.data(), od, dev_out.size())) return c;
    double worst = 0;
    for (std::size_t i = 0; i < q.size(); ++i) {
        const float x = valueAt(host_out, i, e), y = valueAt(dev_out, i, e);
        worst = std::max(worst, double(std::abs(x - y)) / std::max(1.0, double(std::abs(x))));
    }
    c.worst = worst;
    return c;
}

KernelCase compactCase(DeviceBuffers& dev) {
    const int kvh = 2, d = 64, cap = 40, keep = 9;
    std::vector<float> src(std::size_t(kvh) * cap * d), want(std::size_t(kvh) * cap * d, 0.0f),
        got(want.size());
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = float(i);
    std::vector<std::int32_t> index;
    for (int g = 0; g < kvh; ++g)
        for (int j = 0; j < keep; ++j) index.push_back(j * 4 + g);
    KvCompact c;
    c.kv_heads = kvh, c.head_dim = d, c.keep = keep, c.src = src.data(), c.src_cap = cap;
    c.dst = want.data(), c.dst_cap = cap, c.index = index.data();
    kvCompactHost(c, Elem::F32);
    KernelCase k;
    k.name = "KV compaction f32, 2 KV heads, d 64, keep 9 of 40";
    k.tolerance = 0; // a copy: exact
    k.worst = INFINITY;
    KvCompact cg = c;
    cg.src = dev.up(src.data(), src.size() * 4);
    void* dd = dev.up(got.data(), got.size() * 4);
    cg.dst = dd;
    cg.index = static_cast<const std::int32_t*>(dev.up(index.data(), index.size() * 4));
    if (!dev.error.empty()) return k;
    if (dev.check(cudaError_t(kvCompactCuda(cg, Elem::F32, nullptr)), "kvCompactCuda")) return k;
    if (!dev.down(got.data(), dd, got.size() * 4)) return k;
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        worst = std::max(worst, double(std::abs(got[i] - want[i])));
    k.worst = worst;
    return k;
}

} // namespace

KernelComparison compareCudaWithHost() {
    KernelComparison r;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        r.why_not = "the CUDA kernels are compiled, but there is no GPU here to run them";
        return r;
    }
    r.ran = true;
    for (Elem e : {Elem::F32, Elem::F16, Elem::BF16})
        for (const auto& [heads, kvh, d] : std::vector<std::tuple<int, int, int>>{
                 {14, 2, 64}, {32, 8, 128}, {8, 8, 32}, {4, 1, 256}}) {
            DeviceBuffers dev;
            r.cases.push_back(decodeCase(heads, kvh, d, e, dev));
            if (!dev.error.empty()) {
                r.error = r.cases.back().name + ": " + dev.error;
                return r;
            }
        }
    DeviceBuffers dev;
    r.cases.push_back(compactCase(dev));
    if (!dev.error.empty()) r.error = r.cases.back().name + ": " + dev.error;
    return r;
}

#endif

} // namespace kairos::gpu::kernels
