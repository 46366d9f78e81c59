#pragma once
// ALA judged on what is truly new to it: every row of a held-out group (a vendor, a
// framework, a hardware) predicted by models trained on the other groups only, beside the
// baselines a performance engineer would try first.
#include "fit/ala.h"
#include "fit/ala_transfer.h"

#include <string>
#include <vector>

namespace kairos::ala {

// The roofline bound (fit/descriptors.h) times the efficiency the training rows reach
// under it: the median of throughput / bound over the training rows of the same
// framework (over all of them for a framework never trained on). NaN where the
// configuration has no roofline.
class RooflineBaseline {
public:
    void train(const std::vector<BenchRow>& rows, const hw::Descriptors& d);
    double predict(const BenchRow& r) const;
    double efficiency(const std::string& framework) const;

private:
    const hw::Descriptors* d_ = nullptr;
    std::map<std::string, double> by_framework_;
    double all_ = 0;
};

// Methods compared on every held-out row.
enum HoldoutMethod : std::size_t {
    kAla,        // ALA with the roofline prior
    kAlaNoPrior, // ALA as before the prior
    kRoofline,   // RooflineBaseline
    kLinearWide, // dataset-wide linear regression (the paper's baseline)
    kXgbWide,    // dataset-wide XGBoost (the paper's baseline)
    kSpec,       // SpecModel: roofline x efficiency learned from spec-sheet descriptors
    kHoldoutMethods
};
const char* holdoutMethodName(std::size_t m);

struct HoldoutRow {
    BenchRow row;
    std::string group, config; // the held-out group it belongs to; its configuration key
    std::array<double, kHoldoutMethods> predicted{}; // tokens/s (NaN: no prediction)
    bool suspect = false; // suspectRows over the whole table: counts against every method
    // Calibrated from `calibration_rows` measured rows of the same configuration (chosen at
    // random, seeded): those rows are marked and not scored; the rest carry each method's
    // calibrated prediction and the calibration's leave-one-out log error (its predicted
    // error).
    bool calibration_row = false;
    std::array<double, kHoldoutMethods> calibrated{}, loo_log_error{};
    // The unseen estimate's interval (UnseenEstimator learned on the training groups only,
    // its residuals from hold-outs inside them), zero-shot and calibrated, at `coverage`.
    Novelty novelty = Novelty::Pair;
    double lo = NAN, hi = NAN, cal_lo = NAN, cal_hi = NAN;
    // The zero-shot range as before the new-vendor rule (ResidualTable::interval of the
    // row's novelty): the baseline of that rule, measured in the same run.
    double plain_lo = NAN, plain_hi = NAN;
    std::string interval_note;
};
struct HoldoutEvaluation {
    double coverage = 0.8;
    std::string regime; // "vendor", "framework" or "hardware"
    std::vector<std::string> groups;
    std::vector<HoldoutRow> rows;
};
// Each group of `regime` held out in turn (a group with every configuration of one vendor,
// framework or hardware); models trained on the rest, every held-out row predicted.
// "chip-as-vendor": each chip held out as "hardware" does, its rows' range read as a vendor's
// never measured (ResidualTable::newVendorInterval) while every vendor stays in training:
// the case of a third vendor where the data has two.
// Throws std::invalid_argument for an unknown regime or fewer than two groups.
HoldoutEvaluation evaluateHoldout(const std::vector<BenchRow>& rows, const AlaOptions& o,
                                  const std::string& regime, std::size_t calibration_rows = 3,
                                  std::uint64_t seed = 1, double coverage = 0.8,
                                  const std::function<void(const std::string&)>& progress = {});

// Absolute % error of a prediction (NaN when there is none).
double pctError(double predicted, double actual);

// How the unseen estimate's range did on one held-out group: the share of rows inside the
// interval, zero-shot and calibrated (calibration rows not scored), the median width
// (hi / lo), and per configuration whether the calibrated error follows what the rows
// predicted of it: Spearman of the predicted error (calibratedErrorPct) and of the
// calibrated interval's width against the actual median error.
struct IntervalSummary {
    std::string group;
    std::size_t rows = 0, inside = 0, calibrated_rows = 0, calibrated_inside = 0;
    std::size_t plain_inside = 0; // of `rows`, inside the range before the new-vendor rule
    double median_width = NAN, calibrated_median_width = NAN;
    double spearman_predicted = NAN, spearman_width = NAN;
    std::size_t configurations = 0;
    std::string interval_from; // where the intervals came from, in words ("; " between)
    double coverage() const { return rows ? double(inside) / double(rows) : NAN; }
    double plainCoverage() const { return rows ? double(plain_inside) / double(rows) : NAN; }
    double calibratedCoverage() const {
        return calibrated_rows ? double(calibrated_inside) / double(calibrated_rows) : NAN;
    }
};
// An empty `group`: every held-out row pooled (no interval_from).
IntervalSummary summarizeIntervals(const HoldoutEvaluation& ev, const std::string& group);

} // namespace kairos::ala
