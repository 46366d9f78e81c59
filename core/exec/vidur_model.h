#pragma once
// Vidur's batch execution-time model (docs/upstream/vidur_execution_model.md) over the
// operator tables of a profile (model/vidur_tables.h), which `kairos-cli derive-profile
// vidur` tabulated from the fitted per-operator predictors (fit/vidur_fit.h) on Vidur's own
// lookup grid, so a lookup here is a lookup there.
#include "exec/execution_model.h"
#include "model/vidur_tables.h"

#include <cstdint>
#include <memory>
#include <string>

namespace kairos {

class VidurModel final : public ExecutionModel {
public:
    VidurModel(std::shared_ptr<const VidurTables> t, std::string label);
    double iterationTime(const BatchShape& s) const override;
    // Flat while the batch's mean context stays under its next multiple of 64 (the mean
    // grows by one token per iteration): exact for that many iterations.
    std::optional<DecodeRamp> decodeRamp(std::int32_t b, std::int64_t kv) const override;
    std::string describe() const override;

private:
    std::shared_ptr<const VidurTables> t_;
    std::string label_;
};

} // namespace kairos
