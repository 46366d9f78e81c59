#pragma once
// Measures the reference decoder (exec/reference_decoder.h) on this CPU over a grid of
// prefill and decode batches, and fits the ETE coefficients to the measurements.
#include "fit/ete_fit.h"
#include "model/model_config.h"

#include <functional>
#include <string>
#include <vector>

namespace kairos {

struct CpuProfileGrid {
    std::vector<int> prefill_lengths{16, 32, 64, 128, 256};
    std::vector<int> prefill_batches{1, 2, 4}; // batches > 1 only at the two shortest lengths
    std::vector<int> decode_batches{1, 2, 4, 8, 16};
    std::vector<int> decode_contexts{32, 256, 1024, 2048};
    int repeats = 3; // the median of this many timings is kept
};

struct CpuProfileResult {
    std::vector<PrefillSample> prefill;
    std::vector<DecodeSample> decode;
    EteFit fit;
    double seconds_spent = 0;
};

// This machine's CPU model ("model name" in /proc/cpuinfo), or "this CPU".
std::string cpuModelName();

// `progress` (may be empty) is told each measured point: a line of text.
CpuProfileResult
profileReferenceDecoder(const ModelConfig& shape, const CpuProfileGrid& grid,
                        const std::function<void(const std::string&)>& progress = {});

} // namespace kairos
