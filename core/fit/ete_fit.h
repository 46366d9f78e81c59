#pragma once
// Least-squares fit of the ETE-batched coefficients from measured iterations.
// Minimises the squared *relative* error (each row divided by its measured time), so
// short and long iterations weigh alike and the fit targets MAPE, the paper's metric.
// Coefficients are kept >= 0, and rows more than 50 % off a first fit are reported as
// outliers and left out of the second (robust) fit.
#include "model/device_profile.h"

#include <string>
#include <vector>

namespace kairos {

struct PrefillSample {
    double sum_l;  // sum of prompt lengths in the batch
    double sum_l2; // sum of squared prompt lengths
    double seconds;
};
struct DecodeSample {
    double batch;   // decoding requests
    double sum_kv;  // sum of their KV lengths
    double seconds; // one iteration
};

struct EteFit {
    EteParams params;
    double mape_prefill_pct = 0, mape_decode_pct = 0;         // over the rows kept
    double mape_prefill_all_pct = 0, mape_decode_all_pct = 0; // over every row
    std::size_t prefill_rows = 0, decode_rows = 0;
    std::size_t prefill_outliers = 0, decode_outliers = 0; // rows > 50 % off, left out
};

EteFit fitEte(const std::vector<PrefillSample>& pre, const std::vector<DecodeSample>& dec);

// Splitwise's perf_model.csv (model, hardware, prompt_size, batch_size, token_size, ...,
// prompt_time, token_time in ms, tensor_parallel): a batch of batch_size prompts of
// prompt_size tokens each is prefilled in prompt_time; each decode step of that batch
// takes token_time while the context grows from prompt_size to prompt_size+token_size,
// so the mean KV per request is prompt_size + token_size/2.
struct SplitwiseRows {
    std::vector<PrefillSample> prefill;
    std::vector<DecodeSample> decode;
};
SplitwiseRows readSplitwise(const std::string& path, const std::string& model,
                            const std::string& hardware, int tensor_parallel);

} // namespace kairos
