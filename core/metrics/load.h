#pragma once
// The load a run was under, and whether the system kept up with it.
//
// Offered rate: (N - 1) / (last arrival - first arrival), from the workload's arrivals
// (so --rate, which replaces them, is what it reports). Achieved rate: completed requests
// per second of the run (vLLM's request throughput).
//
// Saturation: a system that keeps up has a waiting queue that comes and goes; one that
// does not has a queue that grows for as long as requests arrive faster than it serves.
// The queue is every request that arrived and does not hold a seat (waiting for
// admission, preempted and waiting to recompute, or suspended); each arrival sees it
// (what an arriving request finds, before it joins). A policy that drops requests for
// time (TimeBill's Kill) keeps its queue short, so what it dropped after they spent at
// least half their time in the system waiting is added: the backlog. (A request killed
// because its budget is shorter than its own service time did not wait: that is not
// load.) The arrival window is cut into up to 64 bins; between the middles of any two
// bins lie A arrivals and a rise of the bins' mean backlog. Saturated when, over some
// stretch, the backlog rose by more than 10 % of the A requests that arrived (the
// service fell at least 10 % short of the offered rate all along) and by more than three
// standard deviations of the count of those arrivals, 3 sqrt(A cv^2), cv^2 the squared
// coefficient of variation of the inter-arrival times (at least 1: Poisson; bursty
// arrivals make the queue swing more). The verdict names the stretch that stood out
// most, and whether it lasted until the arrivals stopped or drained before.
// Measured on a single-seat queue of known capacity over 100 seeds each (2,000 Poisson
// arrivals): no run at 95 % of capacity flagged (largest score 0.81 of the threshold),
// 92 % at 110 %, all at 120 %; with bursty arrivals (gamma shape 0.2) none at 95 %, all
// at 150 % (tst_metrics checks 0.5 and 0.8 against 2 and 3). With fewer than 20 arrivals
// over every stretch, or every request arriving at once (an offline batch), there is no
// verdict.
#include "model/run_log.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kairos {

struct LoadReport {
    std::int64_t arrivals = 0;
    double arrival_span_s = 0;     // last arrival - first arrival
    double offered_rate = 0;       // req/s; +inf when all arrive at once; NaN for < 2
    std::optional<bool> saturated; // no verdict: offline batch, or too few arrivals
    // How far the queue came to saturating: the largest rise over any stretch divided by
    // that stretch's threshold (saturated above 1; 0 without a verdict). A run near 1 is
    // borderline, and a setting moved across it flips the verdict: the workbench says
    // "near saturation" from 0.8 to 1.25 rather than flipping between two verdicts.
    double score = 0;
    double queue_growth = 0;          // the backlog's rise over the stretch that decided
    double from_s = 0, to_s = 0;      // that stretch, from the first arrival
    double window_s = 0;              // its length
    double arrival_cv2 = 1;           // of the inter-arrival times (at least 1)
    std::int64_t window_arrivals = 0; // arrivals over it
    std::int64_t queue_at_last_arrival = 0;
    std::int64_t max_queue = 0;       // the most waiting that any arrival found
    std::int64_t dropped_waiting = 0; // of the rise: requests killed for time after
                                      // waiting at least half their time in the system
    double drain_s = 0;               // last arrival to the last request's end
    // Requests killed or dropped (a kill of any cause: TimeBill's Kill, load shedding, a
    // prompt that never fits): a run that ends most of its requests this way sheds load,
    // whatever its queue did (loadBand).
    std::int64_t killed = 0;
    // Of the finished requests, those that missed an SLO of the run's goodput (-1: the run
    // gave no SLO). What requests got beside kills: a run can keep up with its arrivals and
    // still serve most of them late.
    std::int64_t slo_missed = -1;
    std::int64_t finished = 0;
    std::string verdict; // one line, for tables and banners
};

LoadReport loadOf(const RunLog& log);

// How a run's load reads where a verdict that flips on a slider would mislead (the
// workbench's load strip): sheds load when more than half its requests were killed or
// dropped (what they got, whatever the queue did: a policy that kills keeps its queue
// short); else overloaded only when saturated with a score above kNearSaturation.second,
// near saturation from kNearSaturation.first (either side of the threshold at 1), keeping
// up below; no verdict without one. The core's `saturated` and verdict line stay two-way.
enum class LoadBand { NoVerdict, KeepsUp, NearSaturation, Overloaded, ShedsLoad };
inline constexpr std::pair<double, double> kNearSaturation{0.8, 1.25};
LoadBand loadBand(const LoadReport& r);
// "keeps up", "near saturation", "overloaded", "sheds load"; "" without a verdict.
const char* loadBandName(LoadBand b);
// The verdict's evidence without its leading word ("keeps up: ", "SATURATED: "), as a sentence
// of its own ("The backlog grew by ..."): for a banner that names the band itself (a report's
// "near saturation" beside "SATURATED: the backlog grew" read as a contradiction).
std::string loadEvidence(const LoadReport& r);

// What requests got beside the queue, where some were killed or dropped: "168 of 540
// requests (31 %) were killed or dropped before finishing; the latencies describe the rest"
// ("" when none were). The window's banner and the report's say it after their band.
std::string killedPhrase(const LoadReport& r);

// The waiting queue as each request found it on arrival: (arrival time, queue length),
// in arrival order. The series the verdict is fitted to.
std::vector<std::pair<double, std::int64_t>> queueAtArrivals(const RunLog& log);

} // namespace kairos
