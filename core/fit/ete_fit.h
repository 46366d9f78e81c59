#pragma once
// Least-squares fit of the ETE-batched coefficients from measured iterations.
// Minimises the squared *relative* error (each row divided by its measured time), so
// short and long iterations weigh alike and the fit targets MAPE, the paper's metric.
// Coefficients are kept >= 0, and rows more than 50 % off a first fit are reported as
// outliers and left out of the second (robust) fit.
#include "model/device_profile.h"

#include <array>
#include <cstdint>
#include <map>
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

// A raw timing, as profiles and the store keep them. `kind` "prefill": `batch` prompts of
// `tokens` tokens each prefilled together; "decode": one decode step of `batch` requests
// holding `context` KV tokens in total. Other kinds are carried but not fitted.
struct Measurement {
    std::string kind;
    std::int64_t batch = 1, tokens = 0, context = 0;
    double seconds = 0;
};

// Measurements from CSV with the header kind,batch,tokens,context,seconds (any column
// order); bad rows throw InputError naming the file, line and field.
std::vector<Measurement> readMeasurementsCsv(const std::string& path);
// Splitwise's perf model as measurements, one group per model, hardware and TP
// ("llama2-70b a100-80gb tp2"): each row gives one prefill (prompt_time) and one decode
// step (token_time at the mean context prompt + tokens/2 per request).
std::map<std::string, std::vector<Measurement>> splitwiseMeasurements(const std::string& path);

// One linear fit y = sum_k beta_k x_k on relative error, coefficients >= 0 (the robust
// screening of fitEte), with its errors on the rows it was fitted on and on held-out rows.
struct LinearFit {
    std::string name;               // e.g. "prefill, batch 1: a*N^2 + b*N + c"
    std::vector<std::string> terms; // coefficient names, in the order of `beta`
    std::vector<double> beta;
    std::size_t rows = 0, outliers = 0, test_rows = 0;
    double mape_pct = 0, max_pct = 0;             // training rows, all of them
    double test_mape_pct = 0, test_max_pct = 0;   // held-out rows (NaN when none)
    double test_median_pct = 0, test_p90_pct = 0; // of the held-out absolute % errors
    // Held-out error above kPoorMedianPct (median) or kPoorP90Pct (p90): a model that
    // must not be trusted; every front end warns (fit ete, profile, the Models panel,
    // simulate --exec-model).
    bool poor() const;
    std::vector<double> residuals_pct; // (predicted - measured) / measured, training rows
    // (measured, predicted) seconds per row, for plots: training rows, then held-out rows.
    std::vector<std::pair<double, double>> points, test_points;
};

// A fit is poor when its held-out error's median is above 20 % or its p90 above 50 %.
constexpr double kPoorMedianPct = 20, kPoorP90Pct = 50;
bool poorFit(double held_out_median_pct, double held_out_p90_pct);

struct EteReport {
    std::vector<LinearFit> fits; // the batch-1 forms first (when there are batch-1 rows)
    // Settings left out of every fit and of the held-out errors because they contradict
    // the others (suspectSettings), one line each saying why.
    std::vector<std::string> suspect;
    std::size_t suspect_rows = 0;
    EteParams params;                 // the batched forms, as the simulator uses them
    std::vector<std::string> skipped; // forms with too few training rows, and why
    bool batched_prefill = false, batched_decode = false; // `params` holds these fits
    double test_fraction = 0;
    std::uint64_t seed = 0;
};

// Measurements that contradict the others, whatever model is fitted to them: more work
// cannot take much less time on the same device. A setting s does at least the work of r
// when it prefills at least as many tokens with at least the same sum of squared lengths
// (prefill), or decodes at least as many requests over at least as much KV (decode); s
// and r contradict each other when s then took less than half of r's time (medians over
// repeats). The setting that contradicts the most others (two or more) is taken out, and
// again until none contradicts two; a lone contradicting pair is kept, since nothing says
// which of the two is wrong. (Splitwise's Llama-2-70B on 2x A100: 64 prompts of 512 tokens
// in 0.80 s, while 32 of them took 6.6 s and one of 8,192 tokens 3.0 s: 0.024 ms per
// token against 0.38-0.41 in every other setting, 5.7 PFLOP/s on two 312-TFLOP/s GPUs.)
// Returns, per measurement of `m`, a reason when it is suspect (empty when not).
std::vector<std::string> suspectSettings(const std::vector<Measurement>& m);

// The ETE fits of a set of measurements: prefill a*N^2 + b*N + c and decode p*N_kv + q at
// batch 1 (TimeBill's forms), and the simulator's batched forms a + b*sum L + c*sum L^2
// and q0 + q1*B + p*sum N_kv. `test_fraction` of the distinct settings (all repeats of a
// setting on one side) are held out, chosen by `seed`. Suspect settings (suspectSettings)
// are left out of both sides and listed.
EteReport fitEteReport(const std::vector<Measurement>& m, double test_fraction = 0.2,
                       std::uint64_t seed = 1);

} // namespace kairos
