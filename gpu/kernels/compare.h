#pragma once
// The CUDA kernels against their host references, on random ragged batches in every
// element type: what kairos-gpu-check prints and tst_kernels asserts. Needs no libtorch
// and no Qt, so a GPU machine with only CUDA, CMake and PyTorch can run it.
#include "kernels/kernels.h"

#include <string>
#include <vector>

namespace kairos::gpu::kernels {

struct KernelCase {
    std::string name; // e.g. "decode attention bf16, 32 heads / 8 KV heads, d 128"
    double worst = 0; // largest |cuda - host| / max(1, |host|) over the outputs
    double tolerance = 0;
    bool passed() const { return worst <= tolerance; }
};

struct KernelComparison {
    bool ran = false;
    std::string why_not; // when !ran: no nvcc at build time, or no GPU here
    std::string error;   // a CUDA call that failed (then ran is true and the check fails)
    std::vector<KernelCase> cases;
    bool passed() const;
};

// Decode attention for (heads, KV heads, head_dim) in {(14,2,64), (32,8,128), (8,8,32),
// (4,1,256)} over lengths {1, 3, 31, 32, 33, 500, 4097} in f32 (tolerance 1e-4), f16
// (4e-3) and bf16 (2e-2); KV compaction in f32, exact.
KernelComparison compareCudaWithHost();

} // namespace kairos::gpu::kernels
