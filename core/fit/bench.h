#pragma once
// LLM-Inference-Bench's table (seeds/004's data): its rows and their reader. Apart from
// ALA's fits (fit/ala.h), so that what only reads the table (repro's derived profiles)
// builds without Ceres and XGBoost.
#include <string>
#include <vector>

namespace kairos::ala {

// The largest throughput a fit can reach (ALA's bound on c), in tokens/s; the reader
// refuses rows above it.
constexpr double kMaxThroughput = 1e6;

// One row of LLM-Inference-Bench's table (throughput in tokens/s).
struct BenchRow {
    std::string framework, model, hardware, precision;
    int ii = 0, oo = 0, bb = 0;
    double thpt = 0;
    std::string group() const; // "framework | model | hardware | precision"
};

// Reads `framework,model,hardware,precision,input_len,output_len,batch,throughput` (any
// column order); with `average`, rows with the same (configuration, ii, oo, bb) are
// averaged into one (training data); without, every row is kept in its order (rows to
// predict). Bad rows throw InputError naming the file, line and field; a throughput must
// be in (0, 1e6] tokens/s (the fits' bound on c). With `need_throughput` false the
// throughput column may be absent or a row's field empty (rows to predict): 0 then.
std::vector<BenchRow> readBench(const std::string& path, bool need_throughput = true,
                                bool average = true);

} // namespace kairos::ala
