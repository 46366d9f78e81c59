#include "fit/ala_holdout.h"

#include "metrics/stats.h"
#include "util/hash.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

namespace kairos::ala {
namespace {

std::string groupOf(const BenchRow& r, const std::string& regime) {
    if (regime == "vendor") return vendorOf(r.hardware);
    if (regime == "framework") return r.framework;
    if (regime == "hardware" || regime == "chip-as-vendor")
        return hw::splitHardware(r.hardware).first;
    throw std::invalid_argument("unknown held-out regime '" + regime +
                                "' (vendor, framework, hardware, chip-as-vendor)");
}

// Each held-out configuration: `k` of its rows (seeded by the configuration's name) fix
// each method's estimate; the others get the calibrated prediction.
void calibrateHeld(std::vector<HoldoutRow>& rows, std::size_t first, std::size_t k,
                   std::uint64_t seed) {
    if (k == 0) return;
    std::map<std::string, std::vector<std::size_t>> by;
    for (std::size_t i = first; i < rows.size(); ++i) by[rows[i].config].push_back(i);
    for (auto& [cfg, idx] : by) {
        if (idx.size() <= k) continue; // nothing left to score
        std::mt19937_64 rng(seed ^ fnv1a64(cfg));
        std::shuffle(idx.begin(), idx.end(), rng);
        const std::vector<std::size_t> pick(idx.begin(), idx.begin() + std::ptrdiff_t(k));
        for (std::size_t i : pick) rows[i].calibration_row = true;
        for (std::size_t m = 0; m < kHoldoutMethods; ++m) {
            std::vector<BenchRow> measured;
            std::vector<double> est;
            for (std::size_t i : pick)
                if (std::isfinite(rows[i].predicted[m]) && rows[i].predicted[m] > 0) {
                    measured.push_back(rows[i].row);
                    est.push_back(rows[i].predicted[m]);
                }
            if (measured.empty()) continue;
            const Calibration c = calibrate(measured, est);
            for (auto it = idx.begin() + std::ptrdiff_t(k); it != idx.end(); ++it) {
                HoldoutRow& h = rows[*it];
                if (!(std::isfinite(h.predicted[m]) && h.predicted[m] > 0)) continue;
                h.calibrated[m] = h.predicted[m] * c.factor(h.row);
                h.loo_log_error[m] = c.loo_log_error;
            }
        }
    }
}

} // namespace

const char* holdoutMethodName(std::size_t m) {
    static const char* names[kHoldoutMethods] = {"ALA (roofline prior)",   "ALA (no prior)",
                                                 "roofline x efficiency",  "linear (dataset-wide)",
                                                 "XGBoost (dataset-wide)", "spec-sheet XGBoost"};
    return m < kHoldoutMethods ? names[m] : "?";
}

double pctError(double predicted, double actual) {
    if (!std::isfinite(predicted) || !(actual > 0)) return NAN;
    return 100.0 * std::abs(predicted - actual) / actual;
}

void RooflineBaseline::train(const std::vector<BenchRow>& rows, const hw::Descriptors& d) {
    d_ = &d;
    std::map<std::string, std::vector<double>> by;
    std::vector<double> all;
    for (const BenchRow& r : rows) {
        const auto f = hw::roofline(d, r);
        if (!f) continue;
        const double e = r.thpt / f->throughput(r.ii, r.oo, r.bb);
        by[r.framework].push_back(e);
        all.push_back(e);
    }
    by_framework_.clear();
    for (auto& [k, v] : by) by_framework_[k] = finitePercentile(v, 50);
    all_ = finitePercentile(all, 50);
}

double RooflineBaseline::efficiency(const std::string& framework) const {
    const auto it = by_framework_.find(framework);
    return it == by_framework_.end() ? all_ : it->second;
}

double RooflineBaseline::predict(const BenchRow& r) const {
    if (!d_) return NAN;
    const auto f = hw::roofline(*d_, r);
    return f ? f->throughput(r.ii, r.oo, r.bb) * efficiency(r.framework) : NAN;
}

HoldoutEvaluation evaluateHoldout(const std::vector<BenchRow>& rows, const AlaOptions& o,
                                  const std::string& regime, std::size_t calibration_rows,
                                  std::uint64_t seed, double coverage,
                                  const std::function<void(const std::string&)>& progress) {
    HoldoutEvaluation ev;
    ev.regime = regime;
    ev.coverage = coverage;
    const bool as_vendor = regime == "chip-as-vendor";
    std::set<std::string> groups;
    for (const BenchRow& r : rows) groups.insert(groupOf(r, regime));
    if (groups.size() < 2)
        throw std::invalid_argument("holding out by " + regime + " needs at least two of them");
    ev.groups.assign(groups.begin(), groups.end());
    const auto suspect = suspectRows(rows, o.columns, o.screen_ratio);
    for (const std::string& g : ev.groups) {
        std::vector<BenchRow> train, clean;
        std::vector<std::size_t> held;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (groupOf(rows[i], regime) == g) {
                held.push_back(i);
                continue;
            }
            train.push_back(rows[i]);
            if (!suspect[i]) clean.push_back(rows[i]);
        }
        AlaModel ala;
        ala.train(train, o);
        RooflineBaseline roof;
        roof.train(clean, o.descriptors);
        DatasetWideBaseline wide;
        wide.train(clean, o.xgb);
        SpecModel spec;
        spec.train(clean, o.descriptors, o.xgb);
        const std::size_t first = ev.rows.size();
        for (std::size_t i : held) {
            HoldoutRow h;
            h.row = rows[i];
            h.group = g;
            h.config = configKey(rows[i], o.columns);
            h.suspect = suspect[i];
            auto guarded = [&](const AlaModel& m) {
                try {
                    return m.predict(rows[i]);
                } catch (const std::runtime_error&) {
                    return double(NAN); // nothing to predict it from
                }
            };
            ala.setRooflinePrior(true);
            h.predicted[kAla] = guarded(ala);
            ala.setRooflinePrior(false);
            h.predicted[kAlaNoPrior] = guarded(ala);
            h.predicted[kRoofline] = roof.predict(rows[i]);
            h.predicted[kLinearWide] = wide.predictLinear(rows[i]);
            h.predicted[kXgbWide] = wide.predictXgb(rows[i]);
            h.predicted[kSpec] = spec.predict(rows[i]);
            h.calibrated.fill(NAN);
            h.loo_log_error.fill(NAN);
            ev.rows.push_back(std::move(h));
        }
        calibrateHeld(ev.rows, first, calibration_rows, seed);
        // The range: residuals from hold-outs inside the training groups only.
        UnseenOptions uo;
        uo.calibration_rows = calibration_rows;
        uo.seed = seed;
        uo.pair_residuals = false; // no held-out row is a new pair of a trained configuration
        uo.xgb = o.xgb;            // the inner models as the outer ones
        const UnseenEstimator unseen = UnseenEstimator::learn(train, o, uo);
        for (std::size_t i = first; i < ev.rows.size(); ++i) {
            HoldoutRow& h = ev.rows[i];
            h.novelty = unseen.novelty(h.row);
            // chip-as-vendor: the chip's rows read as a vendor's never measured, with both
            // vendors of the data in training (what a third vendor meets; see the header).
            if (as_vendor && h.novelty == Novelty::Hardware) h.novelty = Novelty::Vendor;
            const auto z = h.novelty == Novelty::Vendor
                               ? unseen.residuals().newVendorInterval(coverage)
                               : unseen.residuals().interval(h.novelty, false, coverage);
            h.lo = h.predicted[kXgbWide] * z.lo;
            h.hi = h.predicted[kXgbWide] * z.hi;
            const auto plain = unseen.residuals().interval(h.novelty, false, coverage);
            h.plain_lo = h.predicted[kXgbWide] * plain.lo;
            h.plain_hi = h.predicted[kXgbWide] * plain.hi;
            h.interval_note = z.note;
            if (std::isfinite(h.calibrated[kXgbWide])) {
                const auto c = unseen.residuals().interval(h.novelty, true, coverage,
                                                           h.loo_log_error[kXgbWide]);
                h.cal_lo = h.calibrated[kXgbWide] * c.lo;
                h.cal_hi = h.calibrated[kXgbWide] * c.hi;
            }
        }
        if (progress)
            progress("held out " + g + " (" + std::to_string(held.size()) + " rows), trained on " +
                     std::to_string(train.size()));
    }
    return ev;
}

IntervalSummary summarizeIntervals(const HoldoutEvaluation& ev, const std::string& group) {
    IntervalSummary out;
    out.group = group;
    std::vector<double> widths, cwidths;
    // Per configuration: the calibrated rows' errors, predicted errors and interval widths.
    struct PerConfig {
        std::vector<double> actual, predicted, width;
    };
    std::map<std::string, PerConfig> per;
    std::set<std::string> notes;
    for (const HoldoutRow& h : ev.rows) {
        if (!group.empty() && h.group != group) continue;
        if (!group.empty()) notes.insert(h.interval_note);
        if (std::isfinite(h.lo)) {
            ++out.rows;
            out.inside += h.row.thpt >= h.lo && h.row.thpt <= h.hi;
            out.plain_inside += h.row.thpt >= h.plain_lo && h.row.thpt <= h.plain_hi;
            widths.push_back(h.hi / std::max(h.lo, 1e-300));
        }
        if (!h.calibration_row && std::isfinite(h.cal_lo)) {
            ++out.calibrated_rows;
            out.calibrated_inside += h.row.thpt >= h.cal_lo && h.row.thpt <= h.cal_hi;
            const double w = h.cal_hi / std::max(h.cal_lo, 1e-300);
            cwidths.push_back(w);
            PerConfig& p = per[h.config];
            p.actual.push_back(pctError(h.calibrated[kXgbWide], h.row.thpt));
            p.predicted.push_back(calibratedErrorPct(h.loo_log_error[kXgbWide],
                                                     h.calibrated[kXgbWide], h.calibrated[kSpec]));
            p.width.push_back(w);
        }
    }
    out.median_width = finitePercentile(widths, 50);
    out.calibrated_median_width = finitePercentile(cwidths, 50);
    std::vector<double> actual, predicted, width;
    for (const auto& [k, p] : per) {
        actual.push_back(finitePercentile(p.actual, 50));
        predicted.push_back(finitePercentile(p.predicted, 50));
        width.push_back(finitePercentile(p.width, 50));
    }
    out.configurations = per.size();
    out.spearman_predicted = spearman(predicted, actual);
    out.spearman_width = spearman(width, actual);
    for (const auto& x : notes) out.interval_from += (out.interval_from.empty() ? "" : "; ") + x;
    return out;
}

} // namespace kairos::ala
