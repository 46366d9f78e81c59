// Verdicts on reproduced claims: bands, the seed aggregation and its interval, the tally,
// and the headline claims no experiment measures.
#include "metrics/stats.h"
#include "repro/common.h"
#include "repro/repro.h"
#include "util/enum_names.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kairos::repro {

bool paperRange(const nlohmann::json& p, double& lo, double& hi) {
    if (p.is_number()) {
        lo = hi = p.get<double>();
        return true;
    }
    if (p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number()) {
        lo = p[0].get<double>();
        hi = p[1].get<double>();
        return true;
    }
    return false;
}

namespace {

int sign(double v) {
    return v > 0 ? 1 : v < 0 ? -1 : 0;
}

} // namespace

std::string Band::text() const {
    switch (kind) {
    case Kind::None:
        return "-";
    case Kind::Relative:
        return "within " + fmt(100 * tol, 3) + " %";
    case Kind::Absolute:
        return tol == 0 ? "exactly" : "within +-" + fmt(tol, 3);
    case Kind::Direction:
        return "same side of " + fmt(pivot, 3);
    case Kind::AtMost:
        return tol == 0 ? "at most" : "at most +" + fmt(tol, 3);
    case Kind::AtLeast:
        return tol == 0 ? "at least" : "at least -" + fmt(tol, 3);
    case Kind::Measured:
        return "+-" + fmt(tol, 3) + " meets the 95 % interval";
    }
    return "-";
}

bool Band::contains(const nlohmann::json& paper, double v) const {
    double lo, hi;
    if (!paperRange(paper, lo, hi) || !std::isfinite(v)) return false;
    switch (kind) {
    case Kind::None:
        return false;
    case Kind::Relative:
        return v >= std::min(lo * (1 - tol), lo * (1 + tol)) &&
               v <= std::max(hi * (1 + tol), hi * (1 - tol));
    case Kind::Absolute:
        return v >= lo - tol - 1e-12 && v <= hi + tol + 1e-12;
    case Kind::Direction:
        return sign(v - pivot) == sign(0.5 * (lo + hi) - pivot);
    case Kind::AtMost:
        return v <= hi + tol + 1e-12;
    case Kind::AtLeast:
        return v >= lo - tol - 1e-12;
    case Kind::Measured:
        return meets(paper, v, v);
    }
    return false;
}

bool Band::meets(const nlohmann::json& paper, double klo, double khi) const {
    if (kind != Kind::Measured) return contains(paper, 0.5 * (klo + khi));
    double lo, hi;
    if (!paperRange(paper, lo, hi) || !std::isfinite(klo) || !std::isfinite(khi)) return false;
    return klo - tol <= hi + 1e-12 && khi + tol >= lo - 1e-12;
}

constexpr EnumName<Verdict> kVerdictNames[] = {{Verdict::Agrees, "agrees"},
                                               {Verdict::Disagrees, "disagrees"},
                                               {Verdict::Calibrated, "calibrated"},
                                               {Verdict::NotComparable, "not comparable"}};

const char* verdictName(Verdict v) {
    return enumName(kVerdictNames, v);
}

namespace {
// The value a side claim turns on: a direction's pivot, an "at least" / "at most" band's
// bound; NaN for a band that is not one-sided or a paper figure that is not one number.
double sideEdge(const Claim& c) {
    switch (c.band.kind) {
    case Band::Kind::Direction:
        return c.band.pivot;
    case Band::Kind::AtLeast:
        return c.paper_value.is_number() ? c.paper_value.get<double>() - c.band.tol : NAN;
    case Band::Kind::AtMost:
        return c.paper_value.is_number() ? c.paper_value.get<double>() + c.band.tol : NAN;
    case Band::Kind::Measured:
        return c.band.pivot; // no effect, or NaN
    default:
        return NAN;
    }
}

// The side of the edge the paper's figure claims (+1 above, -1 below; 0: none).
int paperSide(const Claim& c, double edge) {
    double lo, hi;
    if (std::isnan(edge) || !paperRange(c.paper_value, lo, hi)) return 0;
    if (c.band.kind == Band::Kind::AtLeast) return 1;
    if (c.band.kind == Band::Kind::AtMost) return -1;
    return sign(0.5 * (lo + hi) - edge);
}

// Kairos's figure wholly on the other side of the edge from the paper's (the seeds'
// interval; one seed: the value): a direction no setting can excuse.
// Only where the edge is no effect (a direction's pivot, a gain's no-effect value): below
// an "at least 8" bound is a smaller effect, not the other direction.
bool oppositeSide(const Claim& c) {
    if (c.band.kind != Band::Kind::Direction && c.band.kind != Band::Kind::Measured) return false;
    const double edge = sideEdge(c);
    const int p = paperSide(c, edge);
    if (p == 0) return false;
    const double lo = c.seeds > 1 ? c.ci_low : c.kairos_value,
                 hi = c.seeds > 1 ? c.ci_high : c.kairos_value;
    return p > 0 ? hi < edge : lo > edge;
}

// Whether the row's figure has an interval over seeds to judge by.
bool hasInterval(const Claim& c) {
    return c.seeds > 1 && std::isfinite(c.ci_low) && std::isfinite(c.ci_high);
}

// The band's verdict on a figure with its interval [lo, hi] (`interval`: over seeds).
Verdict byBand(const Claim& c, double value, double lo, double hi, bool interval,
               std::string* rule) {
    if (c.band.kind == Band::Kind::Measured) {
        if (rule)
            *rule = "band: the paper's figure +- " + fmt(c.band.tol, 3) +
                    " (its precision) meets Kairos's " +
                    (interval ? "95 % interval over the seeds" : "value (one seed)");
        return c.band.meets(c.paper_value, interval ? lo : value, interval ? hi : value)
                   ? Verdict::Agrees
                   : Verdict::Disagrees;
    }
    if (rule) *rule = "band: " + c.band.text() + " of the paper's figure";
    if (!c.band.contains(c.paper_value, value)) return Verdict::Disagrees;
    // A side claim: a figure at the edge is on no side; over seeds the interval must
    // exclude the edge (rule 7's test).
    const double edge = sideEdge(c);
    if (!std::isnan(edge) && value == edge) return Verdict::Disagrees;
    if (interval && !std::isnan(edge) && lo <= edge && hi >= edge) return Verdict::Disagrees;
    return Verdict::Agrees;
}

// A verdict reached is no verdict after all: `rule`, and `why` after what it would have said.
void overrule(Claim& c, const char* rule, const std::string& why) {
    const std::string was = verdictName(c.verdict);
    c.untallied = c.verdict; // the summary counts the verdicts set aside, by rule
    c.verdict = Verdict::NotComparable;
    c.rule = rule;
    c.ruled_out = true;
    c.not_comparable = "as run Kairos " + was + " (" + fmt(c.kairos_value, 4) + "), but " + why;
}

void disagreeByDirection(Claim& c, const std::string& excluded) {
    c.verdict = Verdict::Disagrees;
    c.rule = "direction: " + excluded +
             " excludes a magnitude, never a direction; Kairos's figure lies wholly on the "
             "other side of " +
             fmt(sideEdge(c), 4) + " from the paper's";
}
} // namespace

void judge(Claim& c) {
    if (c.ruled_out) { // a reason an earlier judge() gave: the rules decide again
        c.not_comparable.clear();
        c.ruled_out = false;
    }
    c.untallied = Verdict::NotComparable;
    double lo, hi;
    const auto num = c.compared.find("numerator"), den = c.compared.find("denominator");
    const bool is_ratio =
        num != c.compared.end() && den != c.compared.end() && num->is_number() && den->is_number();
    if (c.calibrated) {
        c.verdict = Verdict::Calibrated;
        c.rule = "calibrated: the figure was tuned to the paper's, not found";
    } else if (!c.not_comparable.empty()) {
        c.verdict = Verdict::NotComparable;
        c.rule = "not comparable: the experiment says why";
    } else if (!paperRange(c.paper_value, lo, hi)) {
        c.verdict = Verdict::NotComparable;
        c.not_comparable = "the paper gives no figure (a measurement of ours)";
        c.ruled_out = true;
        c.rule = "no paper figure";
    } else if (!std::isfinite(c.kairos_value)) {
        c.verdict = Verdict::NotComparable;
        c.rule = "no number: Kairos's figure is not a number";
        c.ruled_out = true;
        c.not_comparable = "Kairos's figure is not a number (a run that failed, a division by "
                           "zero): nothing to judge";
    } else if (c.band.kind == Band::Kind::None) {
        throw std::logic_error("reproduce: claim '" + c.claim + "' has a figure but no band");
    } else if (is_ratio && !(num->get<double>() > 0 && den->get<double>() > 0)) {
        c.verdict = Verdict::NotComparable;
        c.rule = "ratio: judged only when both sides are positive";
        c.ruled_out = true;
        c.not_comparable = "a ratio of " + fmt(num->get<double>(), 4) + " to " +
                           fmt(den->get<double>(), 4) +
                           ": with a side at or below zero the ratio does not say which is "
                           "better (both values are in `compared`)";
    } else if (c.baseline_queue_share < Claim::kMinQueueShare && oppositeSide(c)) {
        disagreeByDirection(c, "a load where the baseline barely queues");
    } else if (c.baseline_queue_share < Claim::kMinQueueShare) { // false for NaN
        c.verdict = Verdict::NotComparable;
        c.rule = "gain: judged only where the baseline queues (at least " +
                 fmt(100 * Claim::kMinQueueShare, 2) + " % of its latency)";
        c.ruled_out = true;
        c.not_comparable = "at load " + fmt(c.load, 3) + " the baseline spends " +
                           fmt(100 * c.baseline_queue_share, 3) +
                           " % of its mean latency queueing: no order can gain there";
    } else if (const auto unmet =
                   std::find_if(c.premises.begin(), c.premises.end(),
                                [](const Premise& q) { return !(q.value >= q.at_least); });
               unmet != c.premises.end() && oppositeSide(c)) {
        disagreeByDirection(c, "a premise (" + unmet->what + ") not met");
    } else if (const auto p =
                   std::find_if(c.premises.begin(), c.premises.end(),
                                [](const Premise& q) { return !(q.value >= q.at_least); });
               p != c.premises.end()) {
        c.verdict = Verdict::NotComparable;
        c.rule = "premise: judged only where the setting has what the claim rests on (" + p->what +
                 ", at least " + fmt(p->at_least, 4) + ")";
        c.ruled_out = true;
        c.not_comparable = p->what + " is " + fmt(p->value, 4) + " here, under the " +
                           fmt(p->at_least, 4) + " the claim needs: " + p->why;
    } else if (const double no_effect = sideEdge(c);
               c.seeds > 1 && c.band.kind == Band::Kind::Measured && !std::isnan(no_effect) &&
               c.ci_low <= no_effect && c.ci_high >= no_effect &&
               !c.band.meets(c.paper_value, c.ci_low, c.ci_high)) {
        // No effect is not excluded, but the paper's figure is: whatever the sign, the
        // effect is smaller than the paper's (the gate hides an unresolved side, never a
        // magnitude the seeds exclude).
        c.verdict = Verdict::Disagrees;
        c.rule = "gain: the seeds' 95 % interval holds no effect and excludes the paper's "
                 "figure (widened by its precision): the paper's magnitude is excluded";
    } else if (const double edge = sideEdge(c);
               c.seeds > 1 && !std::isnan(edge) && c.ci_low <= edge && c.ci_high >= edge) {
        c.verdict = Verdict::NotComparable;
        c.rule = c.band.kind == Band::Kind::Direction
                     ? "direction: judged only when the seeds' 95 % interval excludes the pivot"
                 : c.band.kind == Band::Kind::Measured
                     ? "gain: judged only when the seeds' 95 % interval excludes no effect"
                     : "one-sided: judged only when the seeds' 95 % interval excludes the bound";
        c.ruled_out = true;
        c.not_comparable = "the seeds' 95 % interval " + fmt(c.ci_low, 4) + " .. " +
                           fmt(c.ci_high, 4) + " contains " + fmt(edge, 4) +
                           (c.band.kind == Band::Kind::Measured
                                ? ", no effect: whether there is a gain at all is not resolved"
                                : ": which side the figure lies on is not resolved");
    } else {
        c.verdict = byBand(c, c.kairos_value, c.ci_low, c.ci_high, hasInterval(c), &c.rule);
    }
    // Rule 9: the null model; a side claim's is no effect (its edge) unless the experiment
    // names a stronger one.
    if (c.null_model.empty() && !std::isnan(sideEdge(c))) {
        c.null_model = "no effect";
        c.null_value = sideEdge(c);
    }
    if (!c.null_model.empty() && std::isfinite(c.null_value)) {
        const bool interval = c.null_seed_values.size() > 1 && std::isfinite(c.null_ci_low) &&
                              std::isfinite(c.null_ci_high);
        c.null_verdict =
            paperRange(c.paper_value, lo, hi) && c.band.kind != Band::Kind::None
                ? byBand(c, c.null_value, c.null_ci_low, c.null_ci_high, interval, nullptr)
                : Verdict::NotComparable;
        if (c.verdict == Verdict::Agrees && c.null_verdict == Verdict::Agrees) {
            c.verdict = Verdict::NotComparable;
            c.rule = "null model: an agreement counts only where the null model's does not";
            c.ruled_out = true;
            c.not_comparable =
                "the null model (" + c.null_model + ") reaches the paper's figure " +
                "too: " + fmt(c.null_value, 4) +
                (interval ? " (" + fmt(c.null_ci_low, 4) + " .. " + fmt(c.null_ci_high, 4) + ")"
                          : std::string()) +
                ", so Kairos's agreement is no evidence";
        }
    }
    // A null model named but without a number (a division by zero in its runs) cannot make
    // an agreement evidence: not comparable.
    if (c.verdict == Verdict::Agrees && !c.null_model.empty() && !std::isfinite(c.null_value)) {
        c.verdict = Verdict::NotComparable;
        c.rule = "null model: an agreement counts only against a null model's number";
        c.ruled_out = true;
        c.not_comparable = "the null model (" + c.null_model +
                           ") gives no number, so Kairos's "
                           "agreement cannot be weighed against it";
    }
    // Rule 12: from 10 seeds on, a side agrees only where the seeds are on it by a sign
    // count (one-sided binomial test at 5 %: 9 of 10, 15 of 20), not only their mean: a few
    // seeds far out can carry a mean across the edge (an outsider's audit: ALA below
    // XGBoost with 4 of 10 seeds at or above it).
    if (c.verdict == Verdict::Agrees && c.seed_values.size() >= kBootstrapSeeds) {
        const double edge = sideEdge(c);
        const int side = paperSide(c, edge);
        if (side != 0) {
            const std::size_t n = c.seed_values.size();
            std::size_t k = 0;
            for (double v : c.seed_values) k += side > 0 ? v > edge : v < edge;
            // P(X >= k) for X ~ Binomial(n, 1/2).
            double tail = 0, term = std::pow(0.5, double(n)); // P(X = 0)
            for (std::size_t j = 0; j <= n; ++j) {
                if (j >= k) tail += term;
                term *= double(n - j) / double(j + 1);
            }
            if (tail >= 0.05) {
                c.verdict = Verdict::NotComparable;
                c.rule = "sign count: from 10 seeds on, a side needs the seeds on it (one-sided "
                         "binomial test at 5 %)";
                c.ruled_out = true;
                c.not_comparable = "only " + std::to_string(k) + " of " + std::to_string(n) +
                                   " seeds lie on the paper's side of " + fmt(edge, 4) +
                                   " (p = " + fmt(tail, 3) +
                                   "): the mean's side rests on a few seeds";
            }
        }
    }
    // Rule 11: a verdict that a reading of an unstated choice flips is no verdict.
    if (c.verdict == Verdict::Agrees || c.verdict == Verdict::Disagrees) {
        std::string flips;
        for (const Claim::Reading& r : c.readings) {
            if (!std::isfinite(r.value)) continue;
            const Verdict v = byBand(c, r.value, r.value, r.value, false, nullptr);
            if (v != c.verdict)
                flips += std::string(flips.empty() ? "" : "; ") + r.what + ": " + fmt(r.value, 4) +
                         " (" + verdictName(v) + ")";
        }
        for (const Claim::PaperReading& r : c.paper_readings) {
            Claim other = c; // the same figure against the paper's value as read otherwise
            other.paper_value = r.paper_value;
            const Verdict v =
                byBand(other, c.kairos_value, c.ci_low, c.ci_high, hasInterval(c), nullptr);
            if (v != c.verdict)
                flips += std::string(flips.empty() ? "" : "; ") + r.what + ": the paper's " +
                         r.paper_value.dump() + " (" + verdictName(v) + ")";
        }
        if (!flips.empty())
            overrule(c,
                     "readings: a verdict stands only if every reading of what the paper leaves "
                     "unstated gives it",
                     "another reading of what the paper does not state flips it: " + flips);
    }
    // Rule 13: on a derived device, a verdict its own uncertainty can flip is no verdict.
    if ((c.verdict == Verdict::Agrees || c.verdict == Verdict::Disagrees) &&
        !c.device_readings.empty()) {
        const bool many = hasInterval(c);
        double low = many ? c.ci_low : c.kairos_value, high = many ? c.ci_high : c.kairos_value;
        std::string values;
        bool every_agrees = true;
        for (const Claim::Reading& r : c.device_readings) {
            values += std::string(values.empty() ? "" : "; ") + r.what + ": " + fmt(r.value, 4);
            if (!std::isfinite(r.value)) {
                every_agrees = false;
                continue;
            }
            low = std::min(low, r.value);
            high = std::max(high, r.value);
            every_agrees = every_agrees &&
                           byBand(c, r.value, r.value, r.value, false, nullptr) == Verdict::Agrees;
        }
        // Whether some figure in [low, high] would agree: the band met by the range (a
        // stated figure's), or the paper's figure clamped into the range contained by it.
        double p_lo = 0, p_hi = 0;
        paperRange(c.paper_value, p_lo, p_hi);
        const double nearest = std::clamp(0.5 * (p_lo + p_hi), low, high);
        const bool reachable = c.band.kind == Band::Kind::Measured
                                   ? c.band.meets(c.paper_value, low, high)
                                   : c.band.contains(c.paper_value, nearest);
        const bool flips = c.verdict == Verdict::Agrees ? !every_agrees : reachable;
        if (flips)
            overrule(c,
                     "device: on a derived device a verdict stands only if the device's own "
                     "uncertainty cannot flip it",
                     "at the derived device's other plausible levels the figure moves to " +
                         fmt(low, 4) + " .. " + fmt(high, 4) + " (" + values +
                         "): the device's uncertainty, not the method, decides at the paper's "
                         "precision");
    }
    // Rule 10: a figure that is not the paper's text is judged but not tallied.
    if (!c.paper_value_source.empty() &&
        (c.verdict == Verdict::Agrees || c.verdict == Verdict::Disagrees)) {
        const char* would = verdictName(c.verdict);
        c.untallied = c.verdict;
        c.verdict = Verdict::NotComparable;
        c.rule = "source: a figure not in the paper's text is not tallied";
        c.ruled_out = true;
        c.not_comparable = "the paper's figure comes from " + c.paper_value_source +
                           ", not the paper's text; by the band Kairos " + would + " (not tallied)";
    }
}

namespace {
// The mean of per-seed values and its 95 % interval: from 10 seeds on a percentile
// bootstrap of the mean (4,000 resamples, a fixed stream: the same seeds give the same
// interval), which assumes no shape of the seeds' spread; below 10, Student's t (a
// bootstrap of so few values is too narrow).
void interval95(const std::vector<double>& v, double& mean, double& lo, double& hi) {
    const std::size_t n = v.size();
    mean = 0;
    for (double x : v) mean += x / double(n);
    if (n < 2) {
        lo = hi = mean;
        return;
    }
    if (n < kBootstrapSeeds) {
        double ss = 0;
        for (double x : v) ss += (x - mean) * (x - mean);
        const double half = studentT975(int(n) - 1) * std::sqrt(ss / double(n - 1) / double(n));
        lo = mean - half;
        hi = mean + half;
        return;
    }
    constexpr int kResamples = 4000;
    std::vector<double> means(kResamples);
    std::uint64_t state = 0x9E3779B97F4A7C15ull; // splitmix64: portable, unlike std:: engines
    auto next = [&state] {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    for (double& m : means) {
        double s = 0;
        for (std::size_t k = 0; k < n; ++k) s += v[next() % n];
        m = s / double(n);
    }
    std::sort(means.begin(), means.end());
    lo = means[std::size_t(0.025 * kResamples)];
    hi = means[std::size_t(0.975 * kResamples) - 1];
}
} // namespace

namespace {
// c's list `field` (premises, readings: entries with a `value`) with each value the mean of
// row i's over the seeds; every seed must have as many entries.
template <class Entry>
void meanOverSeeds(Claim& c, const std::vector<std::vector<Claim>>& runs, std::size_t i,
                   std::vector<Entry> Claim::*field, const char* what) {
    std::vector<Entry>& out = c.*field;
    for (const auto& r : runs)
        if ((r[i].*field).size() != out.size())
            throw std::logic_error("reproduce: '" + c.claim + "' has different " + what +
                                   " between seeds");
    for (std::size_t k = 0; k < out.size(); ++k) {
        double m = 0;
        for (const auto& r : runs) m += (r[i].*field)[k].value / double(runs.size());
        out[k].value = m;
    }
}
} // namespace

std::vector<Claim> aggregate(const std::vector<std::vector<Claim>>& runs) {
    if (runs.empty()) return {};
    std::vector<Claim> out = runs[0];
    const int n = static_cast<int>(runs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::vector<double> v;
        for (const auto& r : runs) {
            if (r.size() != out.size() || r[i].claim != out[i].claim || r[i].paper != out[i].paper)
                throw std::logic_error("reproduce: the rows differ between seeds at '" +
                                       out[i].claim + "'");
            v.push_back(r[i].kairos_value);
        }
        double mean = 0, lo95 = 0, hi95 = 0;
        interval95(v, mean, lo95, hi95);
        Claim& c = out[i];
        c.kairos_value = mean;
        c.seeds = n;
        c.seed_values = v;
        {
            double l = 0, q = 0;
            for (const auto& r : runs) {
                l += r[i].load / n;
                q += r[i].baseline_queue_share / n;
            }
            c.load = l;
            c.baseline_queue_share = q;
        }
        // Each premise's and each reading's value: the mean over the seeds (the rules judge
        // the mean).
        meanOverSeeds(c, runs, i, &Claim::premises, "premises");
        meanOverSeeds(c, runs, i, &Claim::readings, "readings");
        meanOverSeeds(c, runs, i, &Claim::device_readings, "device readings");
        // The values compared, each the mean over the seeds (a ratio's sides too: the rules
        // judge the mean numerator against the mean denominator).
        for (auto it = c.compared.begin(); it != c.compared.end(); ++it) {
            if (!it->is_number()) continue;
            double m = 0;
            for (const auto& r : runs) {
                const auto f = r[i].compared.find(it.key());
                if (f == r[i].compared.end() || !f->is_number())
                    throw std::logic_error("reproduce: '" + c.claim + "' compares '" + it.key() +
                                           "' in one seed only");
                m += f->get<double>() / n;
            }
            *it = m;
        }
        c.ci_low = lo95;
        c.ci_high = hi95;
        // The null model's value, the same way (every seed must have one).
        c.null_seed_values.clear();
        for (const auto& r : runs)
            if (std::isfinite(r[i].null_value)) c.null_seed_values.push_back(r[i].null_value);
        if (!c.null_seed_values.empty() && c.null_seed_values.size() != runs.size()) {
            // The null model gave no number at some seeds (a division by zero): it cannot
            // show the agreement to be evidence or not.
            c.not_comparable = "the null model (" + c.null_model + ") gives no number at " +
                               std::to_string(runs.size() - c.null_seed_values.size()) + " of " +
                               std::to_string(runs.size()) + " seeds: nothing to weigh the row by";
            c.null_seed_values.clear();
            c.null_value = std::numeric_limits<double>::quiet_NaN();
        }
        if (!c.null_seed_values.empty())
            interval95(c.null_seed_values, c.null_value, c.null_ci_low, c.null_ci_high);
        // A cause measured under any seed is kept (the first one that has it).
        for (const auto& r : runs)
            if (c.cause.empty() && !r[i].cause.empty()) c.cause = r[i].cause;
        judge(c);
    }
    return out;
}

Tally tally(const std::vector<Claim>& claims) {
    Tally t;
    for (const Claim& c : claims) {
        if (c.verdict == Verdict::Calibrated) ++t.calibrated;
        if (c.verdict == Verdict::NotComparable) ++t.not_comparable;
        if (c.verdict == Verdict::Agrees || c.verdict == Verdict::Disagrees) ++t.comparable;
        if (c.verdict == Verdict::Agrees) ++t.agree;
        if (c.verdict != Verdict::NotComparable || c.untallied == Verdict::NotComparable) continue;
        t.untallied_agree += c.untallied == Verdict::Agrees;
        t.untallied_disagree += c.untallied == Verdict::Disagrees;
        t.by_source += c.rule.rfind("source:", 0) == 0;
        t.by_reading += c.rule.rfind("readings:", 0) == 0;
        t.by_device += c.rule.rfind("device:", 0) == 0;
    }
    return t;
}

// Headline claims of the five papers (abstracts, introductions, evaluation sections) that
// no row measures, each with the reason. Kept beside the experiments so that a claim moves
// from here to a row when it becomes measurable.
std::vector<Uncovered> uncoveredClaims() {
    return {
        {"timebill", "RLP: SLM-based predictor reduces MAE by 60 % compared to BERT-based ones",
         "needs the fine-tuned Qwen2.5-0.5B and BERT predictors on LongBench; neither model "
         "nor the data is here"},
        {"timebill", "512 buckets 2.5x more accurate than 5/10-bucket schemes (ProxyModel, S3)",
         "the MAE figures are of trained classifiers on LongBench responses; Kairos's bucket "
         "predictor is a noise model of its own, so a bucket-count ablation would measure "
         "the noise model, not a classifier"},
        {"timebill", "AWQ marginally above vanilla, composable with TimeBill",
         "needs a quantised model and its quality; no quality is measured here"},
        {"timebill", "TimeBill's rank and the best k by average score",
         "needs a measured quality curve q(alpha) of a real model under SnapKV eviction; the "
         "rows that need it are listed as not comparable"},
        {"trail", "overhead of the length predictor (a ~1M-parameter MLP on an 8B model)",
         "a GPU measurement of a trained probe; Kairos's Trail predictor is a noise model"},
        {"trail", "M/G/1 closed form of SPRPT with limited preemption",
         "a formula, not a measurement; the simulator's SPRPT is checked by tests instead"},
        {"timely", "scheduling overhead 13-24 ms per decision (Table of section 7.5)",
         "a wall-clock measurement of the authors' Python scheduler on their machine"},
        {"timely", "chatbot application on Phi-3-mini (reading-time segments)",
         "the paper gives its results only as a figure without numbers in the text here"},
        {"timely", "KV context transfer 9.50 ms vs re-prefill 133.31 ms (Llama3-8B)",
         "a GPU memory-transfer measurement; the simulator keeps suspended KV in place"},
        {"mcsf", "LMSYS-Chat-1M experiments",
         "the dataset is not in ../shared/data; the Azure conversation trace stands in"},
        {"ala",
         "Table I: predicted error and confidence against the actual error on data unlike "
         "the training (Qwen2-7B on Intel PVC: 20.3 % predicted, 39.9 % actual, 0.67)",
         "kairos-cli fit ala --evaluate-uncertainty measures it (hardware left out whole: the "
         "rank correlation of the predicted error and of the confidence with the actual "
         "error); its trainings take about 6 minutes on two cores, beyond reproduce's budget"},
        {"ala", "RQ1: error under the four training-set shapes (Experiments 2-4)",
         "the splits are given only as figures; only Experiment 1's median (4 %) is a number"},
    };
}

std::string uncoveredTable() {
    Table t({"paper", "claim not reproduced", "why"});
    for (const auto& u : uncoveredClaims()) t.add({u.paper, u.claim, u.reason});
    return t.str();
}

} // namespace kairos::repro
