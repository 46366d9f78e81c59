#include "metrics/request_metrics.h"

#include "util/huge_pages.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kairos {

std::vector<RequestMetrics> perRequest(const RunLog& log) {
    std::vector<RequestMetrics> m;
    m.reserve(static_cast<std::size_t>(log.num_requests));
    adviseHugePages(m); // before it is written (util/huge_pages.h)
    m.resize(static_cast<std::size_t>(log.num_requests));
    for (std::size_t i = 0; i < m.size(); ++i) m[i].id = static_cast<ReqId>(i);
    HandBacks hand_backs(m.size());
    for (const Event& e : log.events) {
        RequestMetrics& r = m[static_cast<std::size_t>(e.req)];
        const bool hand_back = hand_backs.handBack(e);
        switch (e.ev) {
        case Ev::Arrive:
            r.arrival = e.t;
            r.prompt_tokens = e.value;
            break;
        case Ev::PrefillStart:
            if (std::isnan(r.queue_delay)) r.queue_delay = e.t - r.arrival;
            break;
        case Ev::FirstToken:
            r.first_token = e.t;
            break;
        case Ev::Preempt:
            if (!hand_back)
                ++r.preemptions;
            else if (r.resubmissions < std::numeric_limits<std::uint16_t>::max())
                ++r.resubmissions;
            break;
        case Ev::Budget:
            r.budget = e.value / 1e3;
            break;
        case Ev::Evict:
            r.alpha = e.value / 1e4;
            break;
        case Ev::Suspend:
            ++r.suspensions;
            break;
        case Ev::Finish:
        case Ev::Kill: // its end, with the tokens it had generated
            (e.ev == Ev::Finish ? r.finished : r.killed) = true;
            r.end = e.t;
            r.output_tokens = e.value;
            break;
        case Ev::KillCause:
            r.kill_cause = static_cast<KillCause>(e.value);
            break;
        case Ev::CacheHit:
            // The engine logs it right after the Admit or Resume it belongs to: the first
            // admission is the one before any prefill began.
            if (std::isnan(r.queue_delay))
                r.cached_tokens = e.value;
            else
                r.recompute_cached_tokens += e.value;
            break;
        default:
            break;
        }
    }
    return m;
}

std::vector<double> decodeEnds(const RunLog& log) {
    if (log.fleet())
        throw std::invalid_argument("decodeEnds: a fleet's log has one stream of iterations per "
                                    "replica (replicaLog)");
    if (log.iter_digest.on) return log.iter_digest.decode_ends;
    std::vector<double> e;
    std::int64_t n = 0;
    for (const IterSpan& s : log.iters)
        if (s.decode_seqs > 0) n += s.n;
    e.reserve(static_cast<std::size_t>(n));
    adviseHugePages(e);
    for (const IterSpan& s : log.iters) s.appendDecodeEnds(e);
    return e;
}

namespace {

// A decode run: after `anchor` the request emits `count` tokens at the next decode
// iteration ends, ends[first] onwards; `prev` is its emission just before the run (NaN if
// none).
struct Run {
    ReqId id;
    double anchor;
    double prev;
    std::int32_t count;
    std::size_t first;
};

// Walks each request's events and yields its decode runs and its prefill-end emissions.
template <class OnEmit, class OnRun>
void walk(const RunLog& log, const std::vector<double>& ends, OnEmit&& onEmit, OnRun&& onRun) {
    struct Open {
        double anchor = 0;
        double last = std::numeric_limits<double>::quiet_NaN(); // last emission time
        std::size_t first = 0; // upper_bound(ends, anchor): its first decode end
        std::int32_t at = 0;   // tokens generated at the anchor
        bool active = false;
        bool recompute = false; // preempted: the next emission comes from a prefill
    };
    std::vector<Open> open(static_cast<std::size_t>(log.num_requests));
    // upper_bound(ends, t) for the anchors as they come: events are in time order, so a
    // cursor moves forward through the ends (a binary search per decode run, twice, was
    // most of a million-request summary's time here); a time before the last one (a log
    // out of order) is searched for.
    std::size_t cursor = 0;
    double cursor_t = -std::numeric_limits<double>::infinity();
    auto firstEndAfter = [&](double t) {
        if (t >= cursor_t) {
            while (cursor < ends.size() && ends[cursor] <= t) ++cursor;
        } else {
            cursor = static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), t) -
                                              ends.begin());
        }
        cursor_t = t;
        return cursor;
    };
    // A decode run starts at the event: its tokens come at the iteration ends after it.
    auto startDecoding = [&](Open& o, const Event& e) {
        o.active = true;
        o.anchor = e.t;
        o.first = firstEndAfter(e.t);
        o.at = e.value;
    };
    auto close = [&](ReqId id, std::int32_t tokens) {
        Open& o = open[static_cast<std::size_t>(id)];
        if (!o.active) return;
        o.active = false;
        const std::int32_t count = tokens - o.at;
        if (count <= 0) return;
        // The run's tokens come at the next `count` decode iteration ends after its anchor;
        // a log that claims more (events that do not match its iterations, or iteration
        // times that stop advancing) is refused rather than read past its end.
        const std::size_t i = o.first;
        if (i + static_cast<std::size_t>(count) > ends.size())
            throw std::invalid_argument("inconsistent run log: request " + std::to_string(id) +
                                        " emits " + std::to_string(count) +
                                        " decode token(s) after t = " + std::to_string(o.anchor) +
                                        " s, but only " + std::to_string(ends.size() - i) +
                                        " decode iteration(s) end after it");
        onRun(Run{id, o.anchor, o.last, count, i});
        // Remember the last emission of the run for the next gap.
        o.last = ends[i + static_cast<std::size_t>(count) - 1];
    };
    for (const Event& e : log.events) {
        Open& o = open[static_cast<std::size_t>(e.req)];
        switch (e.ev) {
        case Ev::PrefillEnd:
            o.recompute = false;
            onEmit(e.req, e.t, o.last);
            o.last = e.t;
            startDecoding(o, e);
            break;
        case Ev::Resume:
            // From suspension the KV is there: decoding continues at the next iteration.
            // After a preemption the request first recomputes (a PrefillEnd follows).
            if (!std::isnan(o.last) && !o.active && !o.recompute) startDecoding(o, e);
            break;
        case Ev::Preempt:
            close(e.req, e.value);
            o.recompute = true;
            break;
        case Ev::Suspend:
        case Ev::Finish:
        case Ev::Kill:
            close(e.req, e.value);
            break;
        default:
            break;
        }
    }
}

} // namespace

std::vector<std::pair<double, std::int64_t>> interTokenLatencies(const RunLog& log) {
    if (log.fleet()) { // each replica's tokens come at its own iterations' ends
        std::vector<std::pair<double, std::int64_t>> all;
        for (int r = 0; r < log.replicas; ++r) {
            const auto part = interTokenLatencies(replicaLog(log, r));
            all.insert(all.end(), part.begin(), part.end());
        }
        return all;
    }
    std::vector<double> computed; // a digest has them already
    if (!log.iter_digest.on) computed = decodeEnds(log);
    const std::vector<double>& ends = log.iter_digest.on ? log.iter_digest.decode_ends : computed;
    std::vector<std::int64_t> diff = hugeFilled<std::int64_t>(ends.size() + 1, 0);
    std::vector<std::pair<double, std::int64_t>> out;
    out.reserve(static_cast<std::size_t>(log.num_requests) + ends.size());
    adviseHugePages(out);
    // As vLLM, only requests that completed contribute.
    std::vector<char> done = hugeFilled<char>(static_cast<std::size_t>(log.num_requests), 0);
    for (const Event& e : log.events)
        if (e.ev == Ev::Finish) done[static_cast<std::size_t>(e.req)] = 1;
    walk(
        log, ends,
        [&](ReqId id, double t, double prev) {
            if (done[static_cast<std::size_t>(id)] && !std::isnan(prev))
                out.emplace_back(t - prev, 1);
        },
        [&](const Run& r) {
            if (!done[static_cast<std::size_t>(r.id)]) return;
            const std::size_t i = r.first;
            const double prev = std::isnan(r.prev) ? r.anchor : r.prev;
            out.emplace_back(ends[i] - prev, 1);
            // Gaps ends[k] - ends[k-1] for k in (i, i + count).
            if (r.count > 1) {
                diff[i + 1] += 1;
                diff[i + static_cast<std::size_t>(r.count)] -= 1;
            }
        });
    std::int64_t w = 0;
    for (std::size_t k = 1; k < ends.size(); ++k) {
        w += diff[k];
        if (w > 0) out.emplace_back(ends[k] - ends[k - 1], w);
    }
    return out;
}

std::vector<std::vector<double>> allTokenTimes(const RunLog& log) {
    if (log.fleet()) {
        std::vector<std::vector<double>> all(static_cast<std::size_t>(log.num_requests));
        for (int r = 0; r < log.replicas; ++r) {
            std::vector<ReqId> members;
            auto part = allTokenTimes(replicaLog(log, r, &members));
            for (std::size_t i = 0; i < members.size(); ++i)
                all[static_cast<std::size_t>(members[i])] = std::move(part[i]);
        }
        return all;
    }
    const std::vector<double> ends = decodeEnds(log);
    std::vector<std::vector<double>> out(static_cast<std::size_t>(log.num_requests));
    walk(
        log, ends,
        [&](ReqId id, double t, double) { out[static_cast<std::size_t>(id)].push_back(t); },
        [&](const Run& r) {
            const std::size_t i = r.first;
            auto& v = out[static_cast<std::size_t>(r.id)];
            for (std::int32_t k = 0; k < r.count; ++k)
                v.push_back(ends[i + static_cast<std::size_t>(k)]);
        });
    return out;
}

std::vector<double> tokenTimes(const RunLog& log, ReqId id) {
    return allTokenTimes(log)[static_cast<std::size_t>(id)];
}

} // namespace kairos
