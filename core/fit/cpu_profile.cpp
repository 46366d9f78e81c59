#include "fit/cpu_profile.h"

#include "exec/reference_decoder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

namespace kairos {
namespace {
using Clock = std::chrono::steady_clock;

template <class Setup, class Run> double medianSeconds(int repeats, Setup&& setup, Run&& run) {
    std::vector<double> t;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        setup();
        const auto a = Clock::now();
        run();
        t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}
} // namespace

CpuProfileResult profileReferenceDecoder(const ModelConfig& shape, const CpuProfileGrid& grid,
                                         const std::function<void(const std::string&)>& progress) {
    const auto t0 = Clock::now();
    ReferenceDecoder dec(shape, 1234);
    CpuProfileResult res;
    char line[160];
    std::vector<ReferenceDecoder::Sequence> seqs;
    std::vector<ReferenceDecoder::Sequence*> ptrs;
    std::vector<std::vector<int>> toks;
    auto prepare = [&](int batch, int cached, int new_tokens) {
        seqs.assign(static_cast<std::size_t>(batch), dec.newSequence());
        ptrs.clear();
        toks.assign(static_cast<std::size_t>(batch),
                    std::vector<int>(static_cast<std::size_t>(new_tokens)));
        for (int b = 0; b < batch; ++b) {
            if (cached > 0) dec.fillCache(seqs[static_cast<std::size_t>(b)], cached);
            ptrs.push_back(&seqs[static_cast<std::size_t>(b)]);
            for (int t = 0; t < new_tokens; ++t)
                toks[static_cast<std::size_t>(b)][static_cast<std::size_t>(t)] =
                    (b * 7919 + t * 104729) % shape.vocab;
        }
    };
    const std::size_t short_lengths = std::min<std::size_t>(2, grid.prefill_lengths.size());
    for (std::size_t li = 0; li < grid.prefill_lengths.size(); ++li) {
        const int len = grid.prefill_lengths[li];
        for (int batch : grid.prefill_batches) {
            if (batch > 1 && li >= short_lengths) continue;
            const double s = medianSeconds(
                grid.repeats, [&] { prepare(batch, 0, len); }, [&] { dec.forward(ptrs, toks); });
            const double l = len, b = batch;
            res.prefill.push_back({b * l, b * l * l, s});
            std::snprintf(line, sizeof line, "prefill batch %d x %d tokens: %.2f ms", batch, len,
                          s * 1e3);
            if (progress) progress(line);
        }
    }
    for (int batch : grid.decode_batches)
        for (int ctx : grid.decode_contexts) {
            const double s = medianSeconds(
                grid.repeats, [&] { prepare(batch, ctx, 1); }, [&] { dec.forward(ptrs, toks); });
            // The step attends to the cached tokens and its own: ctx + 1 per request.
            res.decode.push_back(
                {static_cast<double>(batch), static_cast<double>(batch) * (ctx + 1), s});
            std::snprintf(line, sizeof line, "decode batch %d at context %d: %.2f ms", batch, ctx,
                          s * 1e3);
            if (progress) progress(line);
        }
    res.fit = fitEte(res.prefill, res.decode);
    res.seconds_spent = std::chrono::duration<double>(Clock::now() - t0).count();
    return res;
}

std::string cpuModelName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "this CPU";
}

} // namespace kairos
