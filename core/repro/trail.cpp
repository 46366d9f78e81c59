// Trail (seeds/002): every experiment of the paper is a file (resources/experiments/trail_*.toml:
// Figure 5, the preemption limit C; Figure 6, the four systems against the rate; Figure 7, a
// burst). What they share is here: Trail's predictors calibrated to the paper's MAE ratio.
#include "predict/trail_predictor.h"
#include "repro/common.h"

#include <tuple>

namespace kairos::repro {

TrailPredictors trailPredictors(const Options& opt, double mae_ratio, std::size_t n) {
    // Remembered for the process: Trail's experiment files calibrate the same predictors at
    // each seed (2.5 s each).
    return remembered(std::make_tuple(opt.data_dir, opt.seed, mae_ratio, n), [&] {
        const Workload sample = shortPromptConversations(opt, 1.0, n);
        const TrailOptions to = calibrateTrail(sample, TrailOptions{}, mae_ratio, opt.seed);
        TrailPredictors p;
        p.mae = trailMae(sample, to, opt.seed);
        p.refined = "trail:" + fmt(to.prompt_noise, 6) + "," + fmt(to.token_noise, 6);
        p.prompt_only = p.refined + ",1000000"; // no classifier call after the prompt
        return p;
    });
}

} // namespace kairos::repro
