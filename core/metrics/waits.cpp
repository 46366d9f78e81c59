#include "metrics/waits.h"

#include "util/enum_names.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace kairos {

constexpr EnumName<WaitState> kStateNames[] = {{WaitState::Queued, "queued"},
                                               {WaitState::Admitted, "admitted"},
                                               {WaitState::Preempted, "preempted"},
                                               {WaitState::Suspended, "suspended"}};
constexpr EnumName<WaitCause> kCauseNames[] = {{WaitCause::Step, "step"},
                                               {WaitCause::Seats, "seats"},
                                               {WaitCause::Kv, "kv"},
                                               {WaitCause::TokenBudget, "token_budget"},
                                               {WaitCause::Router, "router"},
                                               {WaitCause::Order, "order"},
                                               {WaitCause::Policy, "policy"},
                                               {WaitCause::Suspended, "suspended"},
                                               {WaitCause::Unrecorded, "unrecorded"}};
constexpr EnumName<WaitCause> kCauseWords[] = {
    {WaitCause::Step, "an iteration in progress"},
    {WaitCause::Seats, "every seat taken"},
    {WaitCause::Kv, "KV full"},
    {WaitCause::TokenBudget, "no token budget left"},
    {WaitCause::Router, "its replica full while another had room"},
    {WaitCause::Order, "others taken in first"},
    {WaitCause::Policy, "the policy took none in"},
    {WaitCause::Suspended, "suspended by the policy"},
    {WaitCause::Unrecorded, "no decisions recorded"}};

const char* waitStateName(WaitState s) {
    return enumName(kStateNames, s);
}
const char* waitCauseName(WaitCause c) {
    return enumName(kCauseNames, c);
}
const char* waitCauseWords(WaitCause c) {
    return enumName(kCauseWords, c);
}

namespace {
// A reservation of `tokens` in whole blocks of `block_size` (EngineView::kvCost's rule, for
// a log: the engine is gone).
std::int64_t inBlocks(std::int64_t tokens, std::int32_t block_size) {
    const std::int64_t bs = std::max<std::int32_t>(1, block_size);
    return (tokens + bs - 1) / bs * bs;
}
} // namespace

// What a WaitIndex keeps (named, not anonymous: WaitIndex::Impl holds them).
namespace wait_detail {

// The log's calls and iteration records, per replica (one engine: replica 0), in time order.
struct PerReplica {
    std::vector<std::vector<std::uint32_t>> calls, iters;
    explicit PerReplica(const RunLog& log) {
        const std::size_t n = static_cast<std::size_t>(std::max(1, log.replicas));
        calls.resize(n);
        iters.resize(n);
        const auto& ex = log.explain;
        for (std::size_t i = 0; i < ex.calls.size(); ++i)
            calls[ex.call_replica.empty() ? 0 : std::size_t(ex.call_replica[i])].push_back(
                static_cast<std::uint32_t>(i));
        for (std::size_t i = 0; i < log.iters.size(); ++i)
            iters[log.iter_replica.empty() ? 0 : std::size_t(log.iter_replica[i])].push_back(
                static_cast<std::uint32_t>(i));
    }
};

// The queue after call k, in the policy's order by the last recorded keys: each waiting
// request and its reservation. Built once per call (viewAt replays the events up to it) and
// shared by every request that stood through that decision.
using Queue = std::vector<std::pair<ReqId, std::int64_t>>;

} // namespace wait_detail

namespace {

using wait_detail::PerReplica;
using wait_detail::Queue;

struct Stretch {
    WaitState state;
    double from, to;
};

// The stretches `id` spent not running, from its events (see timeNotRunning).
std::vector<Stretch> stretchesOf(const ExplainIndex& ix, ReqId id) {
    const RunLog& log = ix.log();
    std::vector<Stretch> out;
    bool open = false;
    Stretch cur{WaitState::Queued, 0, 0};
    auto close = [&](double t) {
        if (!open) return;
        cur.to = t;
        out.push_back(cur);
        open = false;
    };
    auto start = [&](WaitState s, double t) {
        close(t);
        cur = {s, t, t};
        open = true;
    };
    for (std::uint32_t i : ix.eventsOf(id)) {
        const Event& e = log.events[i];
        switch (e.ev) {
        case Ev::Arrive:
            start(WaitState::Queued, e.t);
            break;
        case Ev::Admit:
            if (open && cur.state == WaitState::Queued) start(WaitState::Admitted, e.t);
            break;
        case Ev::Resume:
            if (!open) break;
            if (cur.state == WaitState::Suspended)
                close(e.t);
            else if (cur.state == WaitState::Preempted || cur.state == WaitState::Queued)
                start(WaitState::Admitted, e.t);
            break;
        case Ev::PrefillStart:
            close(e.t);
            break;
        case Ev::Preempt:
            start(WaitState::Preempted, e.t);
            break;
        case Ev::Suspend:
            start(WaitState::Suspended, e.t);
            break;
        case Ev::Finish:
        case Ev::Kill:
            close(e.t);
            break;
        default:
            break;
        }
    }
    // A log cut short (a live run stopped): the wait runs to the log's last event.
    if (open) close(log.events.empty() ? cur.from : std::max(cur.from, log.events.back().t));
    return out;
}

} // namespace

double timeNotRunning(const ExplainIndex& ix, ReqId id) {
    if (id < 0 || id >= ix.log().num_requests)
        throw std::out_of_range("no request " + std::to_string(id) + " in the run log");
    double s = 0;
    for (const Stretch& st : stretchesOf(ix, id)) s += st.to - st.from;
    return s;
}

namespace {

// The most cited of a span's rule codes.
std::string mostCited(const std::map<std::string, int>& codes) {
    std::string best;
    int n = 0;
    for (const auto& [code, k] : codes)
        if (k > n) {
            best = code;
            n = k;
        }
    return best;
}

// A piece of a wait as one decision (or the iteration before the first) left it, with
// whom it saw taken in and the rules they were taken in by; merged into spans after.
struct Piece {
    Wait w;
    std::unordered_set<ReqId> ahead;
    std::map<std::string, int> cited;
};

class Explainer {
public:
    Explainer(const ExplainIndex& ix, const PerReplica& per,
              std::unordered_map<std::uint32_t, Queue>& queues, ReqId id)
        : ix_(ix), log_(ix.log()), ex_(log_.explain), per_(per), queues_(queues), id_(id),
          replica_(log_.fleet() ? log_.replica_of[std::size_t(id)] : 0) {}

    std::vector<Wait> all() {
        std::vector<Wait> out;
        for (const Stretch& s : stretchesOf(ix_, id_)) {
            if (!(s.to > s.from)) continue; // taken in (or resumed) at once
            std::vector<Piece> pieces = explain(s);
            for (Wait& w : merge(pieces)) out.push_back(std::move(w));
        }
        return out;
    }

private:
    const ExplainIndex& ix_;
    const RunLog& log_;
    const Explanation& ex_;
    const PerReplica& per_;
    std::unordered_map<std::uint32_t, Queue>& queues_;
    ReqId id_;
    int replica_;

    const Queue& queueAfter(std::uint32_t k, double t) const {
        const auto it = queues_.find(k);
        if (it != queues_.end()) return it->second;
        const SchedulerView v = viewAt(ix_, t, log_.fleet() ? replica_ : -1);
        Queue q;
        q.reserve(v.waiting.size());
        for (const ViewRow& h : v.waiting)
            q.emplace_back(
                h.req, inBlocks(std::int64_t(h.prompt) + h.generated + 1, ex_.limits.block_size));
        return queues_.emplace(k, std::move(q)).first->second;
    }

    bool recorded() const {
        return ex_.on && ex_.limits.known() && !ex_.calls.empty() && ex_.calls.front().running >= 0;
    }
    // Its reservation at t: context + 1 tokens in whole blocks.
    std::int64_t need(double t) const {
        return inBlocks(std::int64_t(ix_.promptOf(id_)) + ix_.generatedAt(id_, t) + 1,
                        ex_.limits.block_size);
    }
    // KV free above the policy's watermark once call `c` was applied.
    std::int64_t kvFree(const CallRecord& c) const {
        const auto cap = log_.kv_capacity_tokens;
        return cap - static_cast<std::int64_t>(ex_.limits.watermark * double(cap)) - c.kv_used;
    }
    // The iteration record of replica `r` in force at t (started at or before it), or -1.
    std::int64_t iterAt(int r, double t) const {
        const auto& v = per_.iters[std::size_t(r)];
        const auto it = std::upper_bound(
            v.begin(), v.end(), t, [&](double x, std::uint32_t i) { return x < log_.iters[i].t0; });
        if (it == v.begin()) return -1;
        const std::uint32_t i = *std::prev(it);
        return t < log_.iters[i].tEnd() ? std::int64_t(i) : -1;
    }
    // Another replica had room for the request at t: its latest decision left a seat and
    // the KV it needs (or it had decided nothing yet: empty).
    bool roomElsewhere(double t, std::int64_t need_kv) const {
        for (int r = 0; r < int(per_.calls.size()); ++r) {
            if (r == replica_) continue;
            const auto& v = per_.calls[std::size_t(r)];
            const auto it = std::upper_bound(v.begin(), v.end(), t, [&](double x, std::uint32_t i) {
                return x < ex_.calls[i].t;
            });
            if (it == v.begin()) return true;
            const CallRecord& c = ex_.calls[*std::prev(it)];
            if (c.running < ex_.limits.seats && need_kv <= kvFree(c)) return true;
        }
        return false;
    }
    // Whom call `k` took in (admitted or resumed) other than the request: into the piece.
    bool tookOthers(std::uint32_t k, Piece& p) const {
        const auto [r0, r1] = ix_.reasonsOfCall(k);
        bool took = false;
        for (std::size_t i = r0; i < r1; ++i) {
            const Reason& r = ex_.reasons[i];
            if (r.req == id_ || (r.act != Act::Admit && r.act != Act::Resume)) continue;
            took = true;
            p.ahead.insert(r.req);
            ++p.cited[ruleOf(r.rule).code];
        }
        return took;
    }
    // The calls of its replica in [from, to), as iterators into its list.
    std::pair<std::vector<std::uint32_t>::const_iterator,
              std::vector<std::uint32_t>::const_iterator>
    callsIn(double from, double to) const {
        const auto& calls = per_.calls[std::size_t(replica_)];
        auto lt = [&](std::uint32_t i, double x) { return ex_.calls[i].t < x; };
        return {std::lower_bound(calls.begin(), calls.end(), from, lt),
                std::lower_bound(calls.begin(), calls.end(), to, lt)};
    }

    std::vector<Piece> explain(const Stretch& s) const {
        Piece base;
        base.w.state = s.state;
        base.w.from = s.from;
        base.w.to = s.to;
        if (!recorded()) {
            base.w.cause = WaitCause::Unrecorded;
            return {base};
        }
        const auto [first, last] = callsIn(s.from, s.to);
        if (s.state == WaitState::Suspended || s.state == WaitState::Admitted) {
            // Suspended: by the rule of its suspension, against the request it named.
            // Admitted: it holds a seat and its KV; its prefill waits for the iteration's
            // token budget behind the prefills admitted before it.
            if (s.state == WaitState::Suspended) {
                base.w.cause = WaitCause::Suspended;
                for (std::uint32_t i : ix_.reasonsOf(id_)) {
                    const Reason& r = ex_.reasons[i];
                    if (r.req == id_ && r.act == Act::Suspend && r.t == s.from) {
                        base.w.rule = ruleOf(r.rule).code;
                        if (r.other >= 0) base.ahead.insert(r.other);
                    }
                }
            } else {
                base.w.cause = WaitCause::TokenBudget;
                base.w.rule = "max_num_batched_tokens";
            }
            for (auto it = first; it != last; ++it) {
                ++base.w.decisions;
                base.w.passed_over += tookOthers(*it, base);
            }
            return {base};
        }
        std::vector<Piece> out;
        // Before its first decision: the iteration that ran when it came.
        const double t1 = first == last ? s.to : ex_.calls[*first].t;
        if (t1 > s.from) {
            Piece p = base;
            p.w.to = t1;
            p.w.cause = WaitCause::Step;
            p.w.rule = "iteration";
            if (const std::int64_t k = iterAt(replica_, s.from); k >= 0) {
                const IterSpan& sp = log_.iters[std::size_t(k)];
                p.w.running = sp.decode_seqs + sp.prefill_seqs;
                // The prefills it carries (they start at the record's start).
                const auto lo = std::lower_bound(log_.events.begin(), log_.events.end(), sp.t0,
                                                 [](const Event& e, double x) { return e.t < x; });
                for (auto e = lo; e != log_.events.end() && e->t == sp.t0; ++e)
                    if (e->ev == Ev::PrefillStart && e->req != id_ &&
                        (!log_.fleet() || log_.replica_of[std::size_t(e->req)] == replica_))
                        p.ahead.insert(e->req);
            }
            out.push_back(std::move(p));
        }
        for (auto it = first; it != last; ++it) {
            const std::uint32_t k = *it;
            const CallRecord& c = ex_.calls[k];
            Piece p = base;
            Wait& w = p.w;
            w.from = c.t;
            w.to = std::next(it) == last ? s.to : ex_.calls[*std::next(it)].t;
            w.decisions = 1;
            const bool took = tookOthers(k, p);
            w.passed_over = took ? 1 : 0;
            w.running = c.running;
            w.seats = ex_.limits.seats;
            w.kv_free = kvFree(c);
            w.kv_need = need(c.t);
            // The iteration this decision started.
            const std::int64_t ik = iterAt(replica_, c.t);
            const IterSpan* sp = ik >= 0 && log_.iters[std::size_t(ik)].t0 == c.t
                                     ? &log_.iters[std::size_t(ik)]
                                     : nullptr;
            const std::int64_t tokens =
                sp ? std::int64_t(sp->prefill_tokens) + std::int64_t(sp->decode_seqs) : 0;
            if (c.running >= ex_.limits.seats)
                w.cause = WaitCause::Seats;
            else if (w.kv_need > w.kv_free)
                w.cause = WaitCause::Kv;
            else if (sp && sp->prefill_tokens > 0 &&
                     (ex_.limits.chunked
                          ? tokens >= ex_.limits.token_budget
                          : tokens + w.kv_need - 1 > std::int64_t(ex_.limits.token_budget)))
                w.cause = WaitCause::TokenBudget;
            else
                w.cause = took ? WaitCause::Order : WaitCause::Policy;
            if (w.cause == WaitCause::Policy) {
                // Room for it and nobody taken in. Of the requests ahead of it in the policy's
                // order (by their last recorded keys), the first that does not fit: admission
                // stopped at it (vLLM's rule: head of line), and it waits on KV behind it.
                // Without one, the policy held (its own rule), whoever it ranks first. (When
                // others were taken in, it was passed over: the policy's order.)
                const Queue& q = queueAfter(k, c.t);
                for (const auto& [req, need] : q) {
                    if (req == id_) break;
                    if (need > w.kv_free) {
                        w.cause = WaitCause::Kv;
                        w.blocked_by = req;
                        w.blocked_need = need;
                        break;
                    }
                }
                if (w.cause != WaitCause::Kv && !q.empty() && q.front().first != id_)
                    w.blocked_by = q.front().first;
            }
            // The router placed it (queued, never run): its replica had no room for it
            // itself while another did. A preempted request waits in its own replica's
            // queue, as does one behind another's head of line.
            if (log_.fleet() && s.state == WaitState::Queued && w.blocked_by < 0 &&
                (w.cause == WaitCause::Seats || w.cause == WaitCause::Kv ||
                 w.cause == WaitCause::TokenBudget) &&
                roomElsewhere(c.t, w.kv_need)) {
                w.cause = WaitCause::Router;
                w.rule = log_.router;
            }
            switch (w.cause) {
            case WaitCause::Seats:
                w.rule = "max_num_seqs";
                break;
            case WaitCause::Kv:
                w.rule = "kv_cache";
                break;
            case WaitCause::TokenBudget:
                w.rule = "max_num_batched_tokens";
                break;
            default:
                break;
            }
            out.push_back(std::move(p));
        }
        return out;
    }

    // Pieces into spans: a zero-length piece (decisions at one instant) folds into the
    // next; neighbours alike in state, cause and bound merge.
    static std::vector<Wait> merge(std::vector<Piece>& pieces) {
        std::vector<Piece> spans;
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            Piece& p = pieces[i];
            const bool instant = p.w.to <= p.w.from && i + 1 < pieces.size();
            if (instant) {
                Piece& n = pieces[i + 1];
                n.w.decisions += p.w.decisions;
                n.w.passed_over += p.w.passed_over;
                n.ahead.insert(p.ahead.begin(), p.ahead.end());
                for (const auto& [code, k] : p.cited) n.cited[code] += k;
                if (n.w.running < 0) n.w.running = p.w.running;
                continue;
            }
            if (!spans.empty()) {
                Piece& b = spans.back();
                // Alike: the same state, cause, bound and request ahead (a long span says
                // what held it all along). The numbers are its first decision's.
                const bool ordered = p.w.cause == WaitCause::Order;
                if (b.w.state == p.w.state && b.w.cause == p.w.cause &&
                    (ordered || b.w.rule == p.w.rule) && b.w.blocked_by == p.w.blocked_by &&
                    b.w.to == p.w.from) {
                    b.w.to = p.w.to;
                    b.w.decisions += p.w.decisions;
                    b.w.passed_over += p.w.passed_over;
                    b.ahead.insert(p.ahead.begin(), p.ahead.end());
                    for (const auto& [code, k] : p.cited) b.cited[code] += k;
                    b.w.peak_running = std::max(b.w.peak_running, p.w.running);
                    continue;
                }
            }
            p.w.peak_running = p.w.running;
            spans.push_back(std::move(p));
        }
        std::vector<Wait> out;
        for (Piece& p : spans) {
            Wait& w = p.w;
            w.passed_by = mostCited(p.cited);
            if (w.cause == WaitCause::Order) w.rule = w.passed_by;
            w.ahead_count = std::int64_t(p.ahead.size());
            w.ahead.assign(p.ahead.begin(), p.ahead.end());
            std::sort(w.ahead.begin(), w.ahead.end());
            if (w.ahead.size() > Wait::kAheadShown) w.ahead.resize(Wait::kAheadShown);
            out.push_back(std::move(w));
        }
        return out;
    }
};

std::string duration(double s) {
    char b[48];
    if (s >= 120)
        std::snprintf(b, sizeof b, "%.1f min", s / 60);
    else if (s >= 1)
        std::snprintf(b, sizeof b, "%.2f s", s);
    else
        std::snprintf(b, sizeof b, "%.0f ms", s * 1e3);
    return b;
}

} // namespace

struct WaitIndex::Impl {
    explicit Impl(const ExplainIndex& ix_) : ix(ix_), per(ix_.log()) {}
    const ExplainIndex& ix;
    wait_detail::PerReplica per;
    std::unordered_map<std::uint32_t, wait_detail::Queue> queues;
};

WaitIndex::WaitIndex(const ExplainIndex& ix) : impl_(std::make_unique<Impl>(ix)) {}
WaitIndex::~WaitIndex() = default;

std::vector<Wait> WaitIndex::of(ReqId id) const {
    if (id < 0 || id >= impl_->ix.log().num_requests)
        throw std::out_of_range("no request " + std::to_string(id) + " in the run log");
    return Explainer(impl_->ix, impl_->per, impl_->queues, id).all();
}

std::vector<Wait> waitsOf(const ExplainIndex& ix, ReqId id) {
    return WaitIndex(ix).of(id);
}

std::string describeWait(const Wait& w, const Workload* wl) {
    const auto id = [&](ReqId r) {
        return static_cast<long long>(wl ? wl->idOf(static_cast<std::size_t>(r)) : r);
    };
    std::string s =
        duration(w.seconds()) + " " + waitStateName(w.state) + ": " + waitCauseWords(w.cause);
    char b[160];
    switch (w.cause) {
    case WaitCause::Seats:
        std::snprintf(b, sizeof b, " (%d of %d running)", w.running, w.seats);
        s += b;
        break;
    case WaitCause::Kv: {
        // Free KV above the admission watermark; below zero when running requests grew
        // past it.
        const std::string free_kv =
            w.kv_free >= 0
                ? std::to_string(w.kv_free) + " free"
                : "none free (in use " + std::to_string(-w.kv_free) + " over the admission limit)";
        if (w.blocked_by >= 0)
            std::snprintf(b, sizeof b,
                          " (behind req %lld, ahead of it in the policy's order, which needs %lld "
                          "tokens, %s; %d running)",
                          id(w.blocked_by), static_cast<long long>(w.blocked_need), free_kv.c_str(),
                          w.running);
        else
            std::snprintf(b, sizeof b, " (needs %lld tokens, %s; %d running)",
                          static_cast<long long>(w.kv_need), free_kv.c_str(), w.running);
        s += b;
        break;
    }
    case WaitCause::Policy:
        if (w.blocked_by >= 0) {
            std::snprintf(b, sizeof b, " (room for it; req %lld first by its last recorded key)",
                          id(w.blocked_by));
            s += b;
        }
        break;
    case WaitCause::Step:
        if (w.running >= 0) {
            std::snprintf(b, sizeof b, " (%d requests in it", w.running);
            s += b;
            if (!w.ahead.empty()) {
                s += "; prefilling req";
                for (std::size_t i = 0; i < std::min<std::size_t>(4, w.ahead.size()); ++i)
                    s += (i ? ", " : " ") + std::to_string(id(w.ahead[i]));
                if (w.ahead_count > 4) s += ", ...";
            }
            s += ")";
        }
        break;
    default:
        break;
    }
    if (!w.rule.empty() && w.cause != WaitCause::Order) s += " [" + w.rule + "]";
    if (w.passed_over > 0) {
        std::snprintf(b, sizeof b, "; passed over %d time%s by %lld request%s", w.passed_over,
                      w.passed_over == 1 ? "" : "s", static_cast<long long>(w.ahead_count),
                      w.ahead_count == 1 ? "" : "s");
        s += b;
        if (!w.passed_by.empty()) s += " (" + w.passed_by + ")";
    }
    return s;
}

std::string waitStory(const std::vector<Wait>& waits) {
    double total = 0;
    std::map<WaitCause, double> by;
    std::map<WaitCause, std::int32_t> running;
    int passed = 0;
    std::map<std::string, int> passed_by;
    for (const Wait& w : waits) {
        total += w.seconds();
        by[w.cause] += w.seconds();
        running[w.cause] = std::max(running[w.cause], w.peak_running);
        passed += w.passed_over;
        if (!w.passed_by.empty()) passed_by[w.passed_by] += w.passed_over;
    }
    if (total <= 0 && passed == 0) return "";
    std::vector<std::pair<double, WaitCause>> parts;
    for (const auto& [c, t] : by) // a part too short to read is left out
        if (t >= Wait::kShortestTold) parts.emplace_back(t, c);
    std::sort(parts.rbegin(), parts.rend());
    std::string s = "waited " + duration(total);
    const char* sep = ": ";
    for (const auto& [t, c] : parts) {
        s += sep + std::string(waitCauseWords(c)) + " for " + duration(t);
        if ((c == WaitCause::Seats || c == WaitCause::Kv) && running[c] > 0)
            s += " behind as many as " + std::to_string(running[c]) + " running requests";
        sep = "; ";
    }
    if (passed > 0) {
        s += std::string(sep) + "passed over " + std::to_string(passed) +
             (passed == 1 ? " time" : " times");
        const std::string rule = mostCited(passed_by);
        if (!rule.empty()) s += " (" + rule + ")";
    }
    return s;
}

RoomUse roomUse(const RunLog& log, std::int32_t seats, std::int32_t block_size, double watermark) {
    RoomUse u;
    u.seats = seats;
    const std::int64_t cap = log.kv_capacity_tokens;
    u.kv_limit = cap - static_cast<std::int64_t>(watermark * double(cap));
    std::vector<std::int32_t> prompts;
    for (const Event& e : log.events)
        if (e.ev == Ev::Arrive) prompts.push_back(e.value);
    if (!prompts.empty()) {
        auto mid = prompts.begin() + std::ptrdiff_t(prompts.size() / 2);
        std::nth_element(prompts.begin(), mid, prompts.end());
        u.typical_need = inBlocks(std::int64_t(*mid) + 1, block_size);
    }
    for (const IterSpan& sp : log.iters) {
        u.kv_peak = std::max(u.kv_peak, sp.kvPeak());
        u.peak_running = std::max(u.peak_running, sp.decode_seqs + sp.prefill_seqs);
    }
    if (log.iters.empty()) u.kv_peak = log.iterTotals().kv_peak;
    u.seats_bound = seats > 0 && u.peak_running >= seats;
    u.kv_bound = u.kv_peak + u.typical_need > u.kv_limit;
    u.binds = u.seats_bound || u.kv_bound;
    return u;
}

} // namespace kairos
