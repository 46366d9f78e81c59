#include "model/run_log.h"

#include "util/enum_names.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kairos {
namespace {
constexpr const char* kNames[] = {
    "arrive",  "admit",  "prefill_start", "prefill_end", "first_token", "preempt",
    "suspend", "resume", "dispatch",      "finish",      "kill",        "token",
    "budget",  "evict",  "kill_cause",    "cache_hit",   "transfer",    "kv_arrive"};
constexpr int kCount = sizeof(kNames) / sizeof(kNames[0]);
} // namespace

const char* evName(Ev e) {
    const int i = static_cast<int>(e);
    return i >= 0 && i < kCount ? kNames[i] : "?";
}

bool evFromName(const std::string& s, Ev* out) {
    for (int i = 0; i < kCount; ++i)
        if (s == kNames[i]) {
            *out = static_cast<Ev>(i);
            return true;
        }
    return false;
}

constexpr EnumName<KillCause> kKillCauseNames[] = {{KillCause::NeverFits, "never_fits"},
                                                   {KillCause::CannotGrow, "cannot_grow"},
                                                   {KillCause::Deadline, "deadline"},
                                                   {KillCause::SkipNext, "skip_next"},
                                                   {KillCause::Shed, "shed"}};

const char* killCauseName(KillCause c) {
    return enumName(kKillCauseNames, c, "unknown");
}

std::string eventValueText(const Event& e) {
    const std::string v = std::to_string(e.value);
    switch (e.ev) {
    case Ev::Arrive:
        return v + " prompt tokens";
    case Ev::PrefillStart:
        return v + " context tokens to compute";
    case Ev::PrefillEnd:
    case Ev::Preempt:
    case Ev::Suspend:
    case Ev::Resume:
    case Ev::Finish:
    case Ev::Kill:
        return v + " generated";
    case Ev::Dispatch:
        return "segment " + v;
    case Ev::Token:
        return "token " + v;
    case Ev::Budget:
        return "budget " + v + " ms";
    case Ev::Evict: {
        char b[48];
        std::snprintf(b, sizeof b, "KV eviction ratio alpha = %.4g", e.value / 10000.0);
        return b;
    }
    case Ev::KillCause:
        return killCauseName(static_cast<KillCause>(e.value));
    case Ev::CacheHit:
        return v + " tokens cached";
    case Ev::Transfer:
        return v + " tokens of KV sent";
    case Ev::KvArrive:
        return v + " tokens of KV received";
    case Ev::Admit:
    case Ev::FirstToken:
        return {};
    }
    return v;
}

std::string RunLog::replicaName(int replica) const {
    if (!disaggregated()) return "replica " + std::to_string(replica);
    return replica < prefill_replicas ? "prefill " + std::to_string(replica)
                                      : "decode " + std::to_string(replica - prefill_replicas);
}

IterTotals RunLog::iterTotals() const {
    if (iter_digest.on) return iter_digest.totals;
    IterTotals t;
    for (const auto& s : iters) t.add(s);
    return t;
}

RunLog replicaLog(const RunLog& fleet, int replica, std::vector<ReqId>* members) {
    if (!fleet.fleet()) {
        if (replica != 0)
            throw std::invalid_argument("replica " + std::to_string(replica) +
                                        ": the run had one replica");
        if (members) {
            members->resize(static_cast<std::size_t>(fleet.num_requests));
            for (std::size_t i = 0; i < members->size(); ++i) (*members)[i] = ReqId(i);
        }
        return fleet;
    }
    if (replica < 0 || replica >= fleet.replicas)
        throw std::invalid_argument("replica " + std::to_string(replica) + ": the run had " +
                                    std::to_string(fleet.replicas) + " (0 to " +
                                    std::to_string(fleet.replicas - 1) + ")");
    const auto r16 = static_cast<std::int16_t>(replica);
    // With disaggregation a prefill replica's requests are those it prefilled, and each
    // request's part on it ends when its KV leaves; a decode replica's begins when the KV
    // has arrived.
    const bool prefill_side = fleet.disaggregated() && replica < fleet.prefill_replicas;
    const auto& whose = prefill_side ? fleet.prefill_of : fleet.replica_of;
    std::vector<ReqId> local(whose.size(), -1), ids;
    for (std::size_t i = 0; i < whose.size(); ++i)
        if (whose[i] == r16) {
            local[i] = static_cast<ReqId>(ids.size());
            ids.push_back(static_cast<ReqId>(i));
        }
    RunLog out;
    out.workload = fleet.workload;
    out.policy = fleet.policy;
    out.exec_model = fleet.exec_model;
    out.kv_capacity_tokens = fleet.decode_kv_capacity_tokens > 0 && fleet.disaggregated() &&
                                     replica >= fleet.prefill_replicas
                                 ? fleet.decode_kv_capacity_tokens
                                 : fleet.kv_capacity_tokens;
    out.num_requests = static_cast<std::int32_t>(ids.size());
    out.prefix_caching = fleet.prefix_caching;
    out.cache_block_size = fleet.cache_block_size;
    // Counted first: grown by doubling, a million-request replica's events were copied and
    // faulted in again at every step (most of a 16-replica summary's time).
    {
        std::size_t n = 0;
        for (const Event& e : fleet.events) n += local[static_cast<std::size_t>(e.req)] >= 0;
        out.events.reserve(n + (fleet.disaggregated() ? 2 * ids.size() : 0));
        std::size_t k = 0;
        for (const std::int16_t r : fleet.iter_replica) k += r == r16;
        out.iters.reserve(k);
    }
    if (!fleet.disaggregated()) {
        for (const Event& e : fleet.events) {
            const ReqId l = local[static_cast<std::size_t>(e.req)];
            if (l >= 0) out.events.push_back({e.t, l, e.ev, e.value});
        }
    } else {
        // Each request's events on this side of its transfer. The prefill instance's own
        // log ends the request with its one token when the KV leaves; the decode
        // instance's starts it (its whole prompt) when the KV arrives.
        std::vector<std::int32_t> prompt(ids.size(), 0);
        std::vector<char> here(ids.size(), prefill_side ? 1 : 0);
        for (const Event& e : fleet.events) {
            const ReqId l = local[static_cast<std::size_t>(e.req)];
            if (l < 0) continue;
            const auto k = static_cast<std::size_t>(l);
            if (e.ev == Ev::Arrive) prompt[k] = e.value;
            if (prefill_side && here[k] && e.ev == Ev::Transfer) {
                out.events.push_back({e.t, l, Ev::PrefillEnd, 1});
                out.events.push_back({e.t, l, Ev::FirstToken, 1});
                out.events.push_back({e.t, l, Ev::Finish, 1});
                here[k] = 0;
                continue;
            }
            if (!prefill_side && e.ev == Ev::KvArrive) {
                out.events.push_back({e.t, l, Ev::Arrive, prompt[k]});
                here[k] = 1;
                continue;
            }
            if (here[k]) out.events.push_back({e.t, l, e.ev, e.value});
        }
    }
    for (std::size_t i = 0; i < fleet.iters.size(); ++i)
        if (fleet.iter_replica[i] == r16) out.iters.push_back(fleet.iters[i]);
    for (std::size_t i = 0; i < fleet.kv_idle.size(); ++i)
        if (fleet.kv_idle_replica[i] == r16) out.kv_idle.push_back(fleet.kv_idle[i]);
    const std::string tag = "replica " + std::to_string(replica) + ": ";
    for (const auto& w : fleet.warnings)
        if (w.compare(0, tag.size(), tag) == 0) out.warnings.push_back(w.substr(tag.size()));
    if (members) *members = std::move(ids);
    return out;
}

} // namespace kairos
