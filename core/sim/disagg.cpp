#include "sim/disagg.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <stdexcept>

namespace kairos {

namespace {
struct Preset {
    const char* name;
    double gbs, latency_s;
};
// Per GPU, one direction. NVLink 3 (A100): 600 GB/s both directions (NVIDIA A100 datasheet);
// NVLink 4 (H100 SXM): 900 GB/s both directions (NVIDIA H100 datasheet); InfiniBand HDR
// 200 Gb/s and NDR 400 Gb/s per port (NVIDIA ConnectX-6 / ConnectX-7), one port per GPU;
// PCIe 4.0 and 5.0 x16: 32 and 64 GB/s per direction (PCI-SIG). Latencies: a few
// microseconds for an RDMA or NVLink transfer to start, 10 us here for the software that
// starts it (Mooncake's transfer engine and NIXL report microseconds, not more).
constexpr Preset kPresets[] = {{"nvlink-a100", 300, 10e-6}, {"nvlink-h100", 450, 10e-6},
                               {"ib-hdr", 25, 10e-6},       {"ib-ndr", 50, 10e-6},
                               {"pcie4", 32, 10e-6},        {"pcie5", 64, 10e-6}};
} // namespace

const char* LinkModel::presetList() {
    return "nvlink-a100, nvlink-h100, ib-hdr, ib-ndr, pcie4, pcie5, or GBS:US (GB/s per GPU "
           "and microseconds)";
}

LinkModel LinkModel::parse(const std::string& text) {
    for (const Preset& p : kPresets)
        if (text == p.name) return {p.name, p.gbs, p.latency_s};
    const auto colon = text.find(':');
    if (colon != std::string::npos) {
        char* end = nullptr;
        const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
        const double gbs = std::strtod(a.c_str(), &end);
        const bool a_ok = !a.empty() && end && *end == '\0';
        const double us = std::strtod(b.c_str(), &end);
        const bool b_ok = !b.empty() && end && *end == '\0';
        if (a_ok && b_ok) {
            // At least 1 MB/s: slower, a long prompt's transfer outlasts any clock (and 1e-300
            // GB/s was read as a bandwidth).
            if (!(gbs >= 1e-3 && gbs <= 1e6))
                throw std::invalid_argument("link '" + text +
                                            "': the bandwidth must be in [0.001, 1e6] GB/s");
            if (!(us >= 0 && us <= 1e9))
                throw std::invalid_argument("link '" + text +
                                            "': the latency must be in [0, 1e9] microseconds");
            return {text, gbs, us * 1e-6};
        }
    }
    throw std::invalid_argument("unknown link '" + text + "' (" + presetList() + ")");
}

std::pair<int, int> parseDisaggregate(const std::string& text) {
    const auto colon = text.find(':');
    const auto whole = [&](const std::string& s) {
        if (s.empty() || s.size() > 5 || !std::all_of(s.begin(), s.end(), ::isdigit))
            throw std::invalid_argument("'" + text +
                                        "': expected P:D, the prefill and decode replicas "
                                        "(whole numbers >= 1, " +
                                        std::to_string(kMaxReplicas) + " in all at most)");
        return std::atoi(s.c_str());
    };
    if (colon == std::string::npos) whole("");
    const int p = whole(text.substr(0, colon)), d = whole(text.substr(colon + 1));
    if (p < 1 || d < 1)
        throw std::invalid_argument("'" + text + "': a pool of no replicas (P and D must be >= 1)");
    if (p + d > kMaxReplicas)
        throw std::invalid_argument("'" + text + "': more than " + std::to_string(kMaxReplicas) +
                                    " replicas in all");
    return {p, d};
}

namespace {
// A log of one engine or of a fleet, as a fleet's: its replicas' indices shifted by `base`.
void asFleet(RunLog& log, int base) {
    if (!log.fleet()) {
        log.replica_of.assign(static_cast<std::size_t>(log.num_requests), 0);
        log.iter_replica.assign(log.iters.size(), 0);
        log.kv_idle_replica.assign(log.kv_idle.size(), 0);
    }
    for (auto* v : {&log.replica_of, &log.iter_replica, &log.kv_idle_replica})
        for (auto& r : *v) r = static_cast<std::int16_t>(r + base);
}
} // namespace

RunLog simulateDisaggregated(const DisaggRun& run) {
    const Workload& w = *run.prefill.workload;
    const int P = run.prefill.fleet.replicas, D = run.decode.fleet.replicas;
    if (P < 1 || D < 1)
        throw std::invalid_argument("disaggregation: a pool of no replicas (P and D must be >= 1)");
    if (!(run.link.bandwidth_gbs > 0))
        throw std::invalid_argument("disaggregation: the link has no bandwidth");
    if (run.prefill.explain || run.decode.explain)
        throw std::invalid_argument(
            "disaggregation does not record decisions yet: run it without --explain");
    std::int64_t largest = 0;
    for (const Request& r : w.requests) largest = std::max<std::int64_t>(largest, r.prompt_tokens);
    if (largest + 1 > run.decode.limits.kv_capacity_tokens)
        throw std::invalid_argument(
            "disaggregation: a transfer larger than a decode replica's KV (a prompt of " +
            std::to_string(largest) + " tokens, " +
            std::to_string(run.decode.limits.kv_capacity_tokens) +
            " tokens of KV: --kv-capacity, or the decode pool's profile, --decode-profile or "
            "else --profile)");

    // The prefill pool: every prompt, one output token (the prefill instance's).
    Workload wp = w;
    for (Request& r : wp.requests) {
        r.output_tokens = 1;
        r.segments = {};
    }
    FleetRun pf = run.prefill;
    pf.workload = &wp;
    RunLog lp = simulateFleet(pf);

    // Its prefills' ends, then the transfers: the decode pool's arrivals.
    const std::size_t n = w.requests.size();
    std::vector<double> done(n, NAN);
    std::vector<char> killed(n, 0);
    for (const Event& e : lp.events) {
        if (e.ev == Ev::PrefillEnd && std::isnan(done[static_cast<std::size_t>(e.req)]))
            done[static_cast<std::size_t>(e.req)] = e.t;
        if (e.ev == Ev::Kill) killed[static_cast<std::size_t>(e.req)] = 1;
    }
    std::vector<std::size_t> order; // the requests that reach the decode pool, by arrival there
    std::vector<double> there(n, NAN);
    for (std::size_t i = 0; i < n; ++i) {
        if (killed[i] || std::isnan(done[i])) continue;
        const double bytes = double(w.requests[i].prompt_tokens) * double(run.kv_bytes_per_token);
        there[i] = done[i] + run.link.transferTime(bytes, run.transferGpus());
        order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return there[a] < there[b]; });
    Workload wd;
    wd.name = w.name;
    wd.requests.reserve(order.size());
    std::vector<std::int32_t> preloaded;
    preloaded.reserve(order.size());
    for (std::size_t i : order) {
        Request r = w.requests[i];
        r.arrival = there[i];
        wd.requests.push_back(r);
        preloaded.push_back(std::max(0, r.prompt_tokens - 1)); // the last is computed there
    }
    RunLog ld;
    if (!wd.requests.empty()) {
        FleetRun df = run.decode;
        df.workload = &wd;
        df.preloaded = &preloaded;
        ld = simulateFleet(df);
    }

    // One log in the workload's ids.
    asFleet(lp, 0);
    RunLog out = std::move(lp);
    out.replicas = P + D;
    out.router = routerName(run.prefill.fleet.router);
    out.events.erase(std::remove_if(out.events.begin(), out.events.end(),
                                    [&](const Event& e) {
                                        // The prefill instance's own token and end: not the
                                        // request's (its tokens come from the decode side).
                                        const bool on = !killed[static_cast<std::size_t>(e.req)];
                                        return on && (e.ev == Ev::FirstToken ||
                                                      e.ev == Ev::Finish || e.ev == Ev::PrefillEnd);
                                    }),
                     out.events.end());
    out.prefill_replicas = P;
    out.prefill_of = out.replica_of;
    if (!wd.requests.empty()) {
        asFleet(ld, P);
        // The transfers, before the decode side's events (at one time, its KV arrives
        // before the decode replica takes the request in).
        for (std::size_t i : order) {
            const std::int32_t tokens = w.requests[i].prompt_tokens;
            out.events.push_back({done[i], static_cast<ReqId>(i), Ev::Transfer, tokens});
            out.events.push_back({there[i], static_cast<ReqId>(i), Ev::KvArrive, tokens});
        }
        for (Event e : ld.events) {
            if (e.ev == Ev::Arrive || e.ev == Ev::Budget || e.ev == Ev::Dispatch) continue;
            e.req = static_cast<ReqId>(order[static_cast<std::size_t>(e.req)]);
            out.events.push_back(e);
        }
        std::stable_sort(out.events.begin(), out.events.end(),
                         [](const Event& x, const Event& y) { return x.t < y.t; });
        for (std::size_t k = 0; k < order.size(); ++k) out.replica_of[order[k]] = ld.replica_of[k];
        // Iteration records of both pools, by start.
        std::vector<IterSpan> iters;
        std::vector<std::int16_t> tags;
        std::size_t a = 0, b = 0;
        while (a < out.iters.size() || b < ld.iters.size()) {
            const bool from_a =
                b >= ld.iters.size() || (a < out.iters.size() && out.iters[a].t0 <= ld.iters[b].t0);
            iters.push_back(from_a ? out.iters[a] : ld.iters[b]);
            tags.push_back(from_a ? out.iter_replica[a++] : ld.iter_replica[b++]);
        }
        out.iters = std::move(iters);
        out.iter_replica = std::move(tags);
        // The idle-gap records of both pools, by time.
        std::vector<std::pair<RunLog::KvIdle, std::int16_t>> idle;
        for (std::size_t k = 0; k < out.kv_idle.size(); ++k)
            idle.emplace_back(out.kv_idle[k], out.kv_idle_replica[k]);
        for (std::size_t k = 0; k < ld.kv_idle.size(); ++k)
            idle.emplace_back(ld.kv_idle[k], ld.kv_idle_replica[k]);
        std::stable_sort(idle.begin(), idle.end(),
                         [](const auto& x, const auto& y) { return x.first.t < y.first.t; });
        out.kv_idle.clear();
        out.kv_idle_replica.clear();
        for (const auto& [k, r] : idle) {
            out.kv_idle.push_back(k);
            out.kv_idle_replica.push_back(r);
        }
        out.cache_evictions += ld.cache_evictions;
        for (const auto& x : ld.warnings) out.warnings.push_back("decode pool: " + x);
        out.sim_wall_ms += ld.sim_wall_ms;
    }
    return out;
}

} // namespace kairos
