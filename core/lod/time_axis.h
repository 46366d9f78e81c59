#pragma once
// The mapping between time (seconds) and horizontal pixels that every view shares. A
// plain value: views hold one, the zoom/pan object hands it out, tests check it with
// data tables.
#include <algorithm>
#include <cmath>
#include <vector>

namespace kairos::lod {

struct TimeAxis {
    double t0 = 0.0;    // time at the left edge (x = 0)
    double t1 = 1.0;    // time at the right edge (x = width)
    double width = 1.0; // pixels

    double secondsPerPixel() const { return (t1 - t0) / width; }
    double toX(double t) const { return (t - t0) / (t1 - t0) * width; }
    double toT(double x) const { return t0 + x / width * (t1 - t0); }

    // Zoom by `factor` (> 1 zooms in) keeping the time under pixel `x` fixed; the span
    // never gets shorter than `min_span` seconds.
    void zoom(double x, double factor, double min_span = 1e-6) {
        const double anchor = toT(x);
        const double span = std::max(min_span, (t1 - t0) / factor);
        const double left = (x / width) * span;
        t0 = anchor - left;
        t1 = t0 + span;
    }
    // Move the view right by `dx` pixels (content moves left).
    void pan(double dx) {
        const double dt = dx * secondsPerPixel();
        t0 += dt;
        t1 += dt;
    }
    // Keep [t0, t1] inside [lo, hi] (shifting first, shrinking only if it is wider).
    void clampTo(double lo, double hi) {
        const double span = std::min(t1 - t0, hi - lo);
        if (t0 < lo) t0 = lo, t1 = lo + span;
        if (t1 > hi) t1 = hi, t0 = hi - span;
        t1 = t0 + span;
    }
};

// Tick positions for an axis over [from, to]: multiples of 1, 2 or 5 x 10^k, as many as fit
// in `max_ticks` (the finest such step that gives at most that many; at least 2 ticks for
// any non-empty range). 0-230 s in 5 gives 0, 50, ..., 200 (a step from the range over
// max - 1 gave 0, 100, 200: three labels on a 500-pixel ruler).
inline std::vector<double> niceTicks(double from, double to, int max_ticks) {
    std::vector<double> ticks;
    if (!(to > from) || max_ticks < 2) return ticks;
    const auto count = [&](double step) {
        return std::floor(to / step + 1e-9) - std::ceil(from / step - 1e-9) + 1;
    };
    const auto fill = [&](double step) {
        for (double t = std::ceil(from / step - 1e-9) * step; t <= to + step * 1e-9; t += step)
            ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
    };
    // The coarsest step that certainly gives 2..max_ticks ticks (range / (max - 1), rounded
    // up to 1, 2 or 5 x 10^k), then finer ones while they still fit.
    const double raw = (to - from) / (max_ticks - 1);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * mag >= raw) {
            step = m * mag;
            break;
        }
    for (;;) {
        // The next finer nice step: 10 -> 5 -> 2 -> 1 (x 10^k).
        const double e = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
        const double lead = step / e;
        const double finer = lead > 7 ? 5 * e : lead > 3 ? 2 * e : lead > 1.5 ? e : 0.5 * e;
        const double n = count(finer);
        if (n > max_ticks || n < 2) break;
        step = finer;
    }
    fill(step);
    return ticks;
}

} // namespace kairos::lod
