#include "metrics/load.h"

#include "util/huge_pages.h"
#include "util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kairos {

namespace {
constexpr int kMinArrivals = 20;
}

namespace {
// The queue at each arrival, and which requests left it dropped (killed while waiting
// or suspended).
struct QueueWalk {
    std::vector<std::pair<double, std::int64_t>> at_arrivals;
    std::vector<double> arrival;              // by request id (NaN: never arrived)
    std::vector<char> dropped_waiting;        // by request id: see LoadReport::dropped_waiting
    std::vector<std::int64_t> dropped_before; // per arrival sample: such drops so far
};

QueueWalk walkQueue(const RunLog& log) {
    enum : char { None, Queued, Running, Gone };
    const auto n = static_cast<std::size_t>(std::max(0, log.num_requests));
    // Arrays of a million requests are in huge pages (util/huge_pages.h says why).
    std::vector<char> st = hugeFilled<char>(n, None);
    std::vector<double> since = hugeFilled(n, 0.0), queued = hugeFilled(n, 0.0); // queued so far
    std::vector<KillCause> cause = hugeFilled(n, KillCause::Unknown);
    QueueWalk w;
    w.arrival = hugeFilled(n, std::numeric_limits<double>::quiet_NaN());
    w.dropped_waiting = hugeFilled<char>(n, 0);
    auto& out = w.at_arrivals;
    out.reserve(n); // one sample per arrival (growing, the copy doubled its peak)
    adviseHugePages(out);
    w.dropped_before.reserve(n);
    adviseHugePages(w.dropped_before);
    std::int64_t q = 0, dropped = 0;
    // It joins the queue at t (arriving, or displaced from the batch).
    const auto enqueue = [&](char& s, std::size_t i, double t) {
        s = Queued;
        since[i] = t;
        ++q;
    };
    for (const Event& e : log.events) {
        if (e.req < 0 || static_cast<std::size_t>(e.req) >= st.size()) continue;
        const auto i = static_cast<std::size_t>(e.req);
        char& s = st[i];
        switch (e.ev) {
        case Ev::Arrive:
            out.emplace_back(e.t, q);
            w.dropped_before.push_back(dropped);
            w.arrival[i] = e.t;
            if (s == None) enqueue(s, i, e.t);
            break;
        case Ev::Admit:
        case Ev::Resume:
            if (s == Queued) {
                s = Running;
                queued[i] += e.t - since[i];
                --q;
            }
            break;
        case Ev::Preempt:
        case Ev::Suspend:
            if (s == Running) enqueue(s, i, e.t);
            break;
        case Ev::KillCause:
            cause[i] = static_cast<KillCause>(e.value);
            break;
        case Ev::Finish:
        case Ev::Kill:
            if (s == Queued) {
                queued[i] += e.t - since[i];
                --q;
            }
            // Dropped for time (not for its size) after waiting at least half its time.
            if (e.ev == Ev::Kill && cause[i] != KillCause::NeverFits &&
                cause[i] != KillCause::CannotGrow && s != Gone && !std::isnan(w.arrival[i]))
                w.dropped_waiting[i] =
                    queued[i] >= 0.5 * (e.t - w.arrival[i]) && e.t > w.arrival[i];
            dropped += w.dropped_waiting[i];
            s = Gone;
            break;
        default:
            break;
        }
    }
    return w;
}
} // namespace

std::vector<std::pair<double, std::int64_t>> queueAtArrivals(const RunLog& log) {
    return walkQueue(log).at_arrivals;
}

LoadReport loadOf(const RunLog& log) {
    LoadReport r;
    const QueueWalk walk = walkQueue(log);
    const auto& q = walk.at_arrivals;
    r.arrivals = static_cast<std::int64_t>(q.size());
    double last_end = -std::numeric_limits<double>::infinity();
    for (const Event& e : log.events) {
        if (e.ev == Ev::Finish || e.ev == Ev::Kill) last_end = std::max(last_end, e.t);
        r.killed += e.ev == Ev::Kill;
    }
    char buf[512];
    if (q.size() < 2) {
        r.offered_rate = std::numeric_limits<double>::quiet_NaN();
        r.verdict = "no verdict: fewer than two requests";
        return r;
    }
    // Arrivals are logged in time order (the run-log reader checks it).
    const double t0 = q.front().first, t1 = q.back().first;
    r.arrival_span_s = t1 - t0;
    r.queue_at_last_arrival = q.back().second;
    for (const auto& [t, n] : q) r.max_queue = std::max(r.max_queue, n);
    r.drain_s = std::isfinite(last_end) ? std::max(0.0, last_end - t1) : 0.0;
    if (!(r.arrival_span_s > 0)) {
        r.offered_rate = std::numeric_limits<double>::infinity();
        std::snprintf(buf, sizeof buf,
                      "no verdict: an offline batch (all %lld requests arrive at once)",
                      static_cast<long long>(r.arrivals));
        r.verdict = buf;
        return r;
    }
    r.offered_rate = static_cast<double>(q.size() - 1) / r.arrival_span_s;
    // Burstiness of the arrivals: cv^2 of the inter-arrival times, at least 1.
    {
        double sg = 0, sgg = 0;
        for (std::size_t i = 1; i < q.size(); ++i) {
            const double g = q[i].first - q[i - 1].first;
            sg += g;
            sgg += g * g;
        }
        const double n = static_cast<double>(q.size() - 1), mean = sg / n;
        r.arrival_cv2 = mean > 0 ? std::max(1.0, (sgg / n - mean * mean) / (mean * mean)) : 1.0;
    }
    // The backlog an arrival finds: the queue, plus what was dropped after waiting so far.
    // Binned in time (the mean backlog of each bin's arrivals), every pair of bins is a
    // stretch of the arrivals; the one whose rise stands furthest above its threshold
    // decides.
    const std::size_t nq = q.size();
    const int bins = static_cast<int>(std::clamp<std::size_t>(nq / 10, 2, 64));
    std::vector<double> sum(static_cast<std::size_t>(bins), 0.0), qsum = sum, dsum = sum;
    std::vector<std::int64_t> cnt(static_cast<std::size_t>(bins), 0);
    for (std::size_t i = 0; i < nq; ++i) {
        const auto b = static_cast<std::size_t>(
            std::min<double>(bins - 1, std::floor((q[i].first - t0) / r.arrival_span_s * bins)));
        const double dropped = static_cast<double>(walk.dropped_before[i]);
        sum[b] += static_cast<double>(q[i].second) + dropped;
        qsum[b] += static_cast<double>(q[i].second);
        dsum[b] += dropped;
        ++cnt[b];
    }
    std::vector<std::int64_t> cum(static_cast<std::size_t>(bins) + 1, 0);
    for (std::size_t b = 0; b < cnt.size(); ++b) cum[b + 1] = cum[b] + cnt[b];
    // Which stretch speaks for the run: of those whose rise clears its threshold, the
    // shortest whose rise is within 10 % of the largest (the whole overload, not its
    // sharpest burst, and not the calm before it); when none does, the one that came
    // closest.
    double best = -std::numeric_limits<double>::infinity();
    std::size_t bi = 0, bj = 0;
    double best_a = 0, best_thr = 0, best_rise = 0;
    bool best_clears = false;
    // The stretch from bin i to bin j: the arrivals between the two bins' middles, the
    // queue's rise and the threshold it must clear.
    struct Stretch {
        double a, rise, thr;
    };
    const auto stretch = [&](std::size_t i, std::size_t j) {
        const double a =
            (double(cum[j]) + double(cnt[j]) / 2) - (double(cum[i]) + double(cnt[i]) / 2);
        return Stretch{a, sum[j] / double(cnt[j]) - sum[i] / double(cnt[i]),
                       std::max(0.1 * a, 3 * std::sqrt(a * r.arrival_cv2))};
    };
    for (std::size_t i = 0; i < cnt.size(); ++i) {
        if (cnt[i] == 0) continue;
        for (std::size_t j = i + 1; j < cnt.size(); ++j) {
            if (cnt[j] == 0) continue;
            const auto [a, rise, thr] = stretch(i, j);
            if (a < kMinArrivals) continue;
            r.score = std::max(r.score, rise / thr);
            const bool clears = rise > thr;
            const bool better =
                clears ? !best_clears || rise > best_rise : !best_clears && rise / thr > best;
            if (better) {
                best_clears = clears;
                best = rise / thr;
                bi = i;
                bj = j;
                best_a = a;
                best_thr = thr;
                best_rise = rise;
            }
        }
    }
    if (best_clears) {
        const double floor = 0.9 * best_rise;
        for (std::size_t i = 0; i < cnt.size(); ++i) {
            if (cnt[i] == 0) continue;
            for (std::size_t j = i + 1; j < cnt.size(); ++j) {
                if (cnt[j] == 0) continue;
                const auto [a, rise, thr] = stretch(i, j);
                if (a < kMinArrivals || a >= best_a) continue;
                if (rise > thr && rise >= floor) {
                    bi = i;
                    bj = j;
                    best_a = a;
                    best_thr = thr;
                    best_rise = rise;
                    best = rise / thr;
                }
            }
        }
    }
    if (!std::isfinite(best)) {
        std::snprintf(buf, sizeof buf,
                      "no verdict: %lld arrivals (at least %d over a stretch are needed to tell "
                      "a growing queue from noise)",
                      static_cast<long long>(r.arrivals), kMinArrivals);
        r.verdict = buf;
        return r;
    }
    const double width = r.arrival_span_s / bins;
    r.from_s = (static_cast<double>(bi) + 0.5) * width;
    r.to_s = (static_cast<double>(bj) + 0.5) * width;
    r.window_s = r.to_s - r.from_s;
    r.window_arrivals = static_cast<std::int64_t>(std::llround(best_a));
    r.queue_growth = best_rise;
    r.dropped_waiting = static_cast<std::int64_t>(
        std::llround(dsum[bj] / double(cnt[bj]) - dsum[bi] / double(cnt[bi])));
    r.saturated = best_clears;
    // Still backed up when arrivals stopped: the last bin's backlog at least half the
    // highest bin's.
    double peak = 0;
    for (std::size_t b = 0; b < cnt.size(); ++b)
        if (cnt[b] > 0) peak = std::max(peak, sum[b] / double(cnt[b]));
    std::size_t last = cnt.size() - 1;
    while (last > 0 && cnt[last] == 0) --last;
    const bool to_end = sum[last] / double(cnt[last]) >= 0.5 * peak;
    if (*r.saturated) {
        const bool drops = 2 * double(r.dropped_waiting) > best_rise;
        std::snprintf(buf, sizeof buf,
                      "SATURATED: the backlog grew by %.0f requests between %.0f s and %.0f s "
                      "of the arrivals (%.0f %% of the %lld that arrived then%s)%s; %lld waiting "
                      "when the last request arrived, %.1f s to drain",
                      best_rise, r.from_s, r.to_s, 100 * best_rise / best_a,
                      static_cast<long long>(r.window_arrivals),
                      drops ? ", most of them dropped by the policy after waiting" : "",
                      to_end ? ", still backed up when arrivals stopped" : ", then it drained",
                      static_cast<long long>(r.queue_at_last_arrival), r.drain_s);
    } else {
        std::snprintf(buf, sizeof buf,
                      "keeps up: over no stretch of the arrivals did the backlog grow beyond "
                      "noise (largest rise %+.0f over %lld arrivals; saturated above +%.0f); "
                      "at most %lld waiting at once",
                      best_rise, static_cast<long long>(r.window_arrivals), best_thr,
                      static_cast<long long>(r.max_queue));
    }
    r.verdict = buf;
    return r;
}

LoadBand loadBand(const LoadReport& r) {
    if (r.arrivals > 0 && 2 * r.killed > r.arrivals) return LoadBand::ShedsLoad;
    if (!r.saturated.has_value()) return LoadBand::NoVerdict;
    if (*r.saturated && r.score > kNearSaturation.second) return LoadBand::Overloaded;
    return r.score >= kNearSaturation.first ? LoadBand::NearSaturation : LoadBand::KeepsUp;
}

std::string loadEvidence(const LoadReport& r) {
    std::string v = r.verdict;
    for (const char* lead : {"keeps up: ", "SATURATED: "})
        if (v.rfind(lead, 0) == 0) v.erase(0, std::char_traits<char>::length(lead));
    if (!v.empty() && v[0] >= 'a' && v[0] <= 'z') v[0] = static_cast<char>(v[0] - 'a' + 'A');
    return v;
}

std::string killedPhrase(const LoadReport& r) {
    if (r.killed <= 0 || r.arrivals <= 0) return {};
    return std::to_string(r.killed) + " of " + std::to_string(r.arrivals) + " requests (" +
           text::formatted("%.0f", 100.0 * double(r.killed) / double(r.arrivals)) +
           " %) were killed or dropped before finishing; the latencies describe the rest";
}

const char* loadBandName(LoadBand b) {
    switch (b) {
    case LoadBand::KeepsUp:
        return "keeps up";
    case LoadBand::NearSaturation:
        return "near saturation";
    case LoadBand::Overloaded:
        return "overloaded";
    case LoadBand::ShedsLoad:
        return "sheds load";
    case LoadBand::NoVerdict:
        break;
    }
    return "";
}

} // namespace kairos
