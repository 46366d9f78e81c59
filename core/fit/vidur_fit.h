#pragma once
// A Vidur execution model (exec/vidur_model.h) from the operator timings Vidur's profiler
// writes: mlp.csv and attention.csv of a model on a device, all_reduce.csv of the
// network (docs/upstream/vidur_execution_model.md, sections 1-3).
//
// Each operator is predicted from its `time_stats.<op>.median` column by two candidates,
// and the one with the lower error on held-out rows is kept:
//  - interpolation: linear between the profiled points (in the token count; for attention,
//    in the batch size or cached tokens and then in the context or the chunk's square),
//    flat beyond them;
//  - xgboost: gradient-boosted trees (fit/xgb.h) on Vidur's own features, the nearest
//    thing in this project to Vidur's random forests (only where XGBoost is built in).
// The kept one is refitted on every row and tabulated on Vidur's lookup grid.
#include "model/model_config.h"
#include "model/vidur_tables.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kairos::fit {

struct VidurFitOptions {
    std::string compute_dir; // holds mlp.csv and attention.csv
    std::string network_dir; // holds all_reduce.csv (read when tp > 1)
    ModelConfig model;       // layers, hidden, heads, kv_heads, intermediate (the filters)
    int tp = 2;
    int block_size = 16;           // attention.csv rows of this paged-KV block size
    int max_tokens = 4096;         // token tables up to this many tokens in one batch
    int max_batch = 128;           // decode table up to this many requests
    int max_kv = 4096;             // decode and prefill tables up to this KV length
    int max_chunk = 4096;          // prefill table up to this equivalent chunk
    int max_request_tokens = 4096; // Vidur's memory planner: KV reserved per request
    double gpu_mem_gib = 80;       // per device, for the memory planner
    double holdout = 0.2;          // share of each operator's rows held out to choose
    std::uint64_t seed = 1;
    bool xgboost = true; // try XGBoost too (when built in)
};

struct VidurOpFit {
    std::string op;                        // "mlp_up_proj", "attn_decode", "all_reduce", ...
    std::string file;                      // the CSV it came from
    int rows = 0;                          // distinct feature points after Vidur's filters
    double interp_mape = 0, xgb_mape = -1; // held-out MAPE (%); -1: not tried
    std::string chosen;
};

struct VidurFit {
    VidurTables tables;
    std::vector<VidurOpFit> ops;
    std::int64_t kv_capacity_tokens = 0; // Vidur's memory planner
    int planner_requests = 0;            // requests of max_request_tokens that fit
    std::string report() const;          // a table of ops, for people
};

// Throws InputError naming the file, line and column for a bad row or a missing file.
VidurFit fitVidur(const VidurFitOptions& o);

} // namespace kairos::fit
