#include "sim/prefix_cache.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace kairos {

namespace {
// A request's own blocks (past its spans) chain to this: only the request finds them.
std::uint64_t ownKey(ReqId id) {
    return mixHash(0x4b41495230534eULL, std::uint64_t(id));
}
constexpr std::int32_t kEnd = std::numeric_limits<std::int32_t>::max();
} // namespace

std::shared_ptr<const PrefixLayout> PrefixLayout::build(const std::vector<Request>& requests,
                                                        std::int32_t bs) {
    if (bs < 2) throw std::invalid_argument("prefix caching needs blocks of >= 2 tokens");
    auto out = std::make_shared<PrefixLayout>();
    out->block_size = bs;
    auto& parts_ = out->parts;
    auto& part_at_ = out->part_at;
    auto& keys = out->keys;
    // Every request's partition into nodes, and the nodes, once: block j belongs to the
    // span holding its last token, (j + 1) * bs - 1, so a span [start, end) has the blocks
    // [start / bs, end / bs); those past the spans are the request's own node.
    std::size_t spans = 0;
    for (const Request& r : requests) spans += r.prefix.size();
    if (spans + requests.size() >= std::size_t(std::numeric_limits<std::int32_t>::max()))
        throw std::invalid_argument("prefix caching: more than 2^31 prefix spans");
    parts_.reserve(spans + requests.size());
    part_at_.reserve(requests.size() + 1);
    keys.reserve(spans + requests.size());
    // Chain hash -> node, open addressing at a load of at most 2/3. A slot holds a node's
    // index and the high half of its key (a mismatch needs no look at the node). This is
    // the constructor's cost: one random access per span, so each request's slots (and
    // then the nodes its tags match) are prefetched together before they are resolved.
    struct Slot {
        std::uint32_t tag;
        std::int32_t node;
    };
    std::size_t size = 64;
    while (2 * size < 3 * spans) size *= 2;
    HugeVector<Slot> map(size, Slot{0, -1});
    const std::size_t mask = size - 1;
    struct Pending {
        std::uint64_t key;
        std::int32_t a, b;
    };
    std::vector<Pending> pend;
    for (std::size_t id = 0; id < requests.size(); ++id) {
        part_at_.push_back(static_cast<std::uint32_t>(parts_.size()));
        std::uint64_t chain = 0;
        std::int64_t start = 0;
        pend.clear();
        for (const PrefixSpan& sp : requests[id].prefix) {
            chain = mixHash(mixHash(chain, sp.id), std::uint64_t(sp.tokens));
            const std::int64_t end = start + sp.tokens;
            const auto a = static_cast<std::int32_t>(start / bs),
                       b = static_cast<std::int32_t>(end / bs);
            start = end;
            if (b > a) pend.push_back({chain, a, b});
        }
        for (const Pending& q : pend) __builtin_prefetch(&map[q.key & mask]);
        for (const Pending& q : pend) {
            const Slot& m = map[q.key & mask];
            if (m.node >= 0 && m.tag == std::uint32_t(q.key >> 32))
                __builtin_prefetch(&keys[static_cast<std::size_t>(m.node)]);
        }
        for (const Pending& q : pend) {
            const auto tag = std::uint32_t(q.key >> 32);
            std::size_t i = q.key & mask;
            while (map[i].node >= 0 &&
                   (map[i].tag != tag || keys[static_cast<std::size_t>(map[i].node)] != q.key))
                i = (i + 1) & mask;
            if (map[i].node < 0) {
                map[i] = {tag, static_cast<std::int32_t>(keys.size())};
                keys.push_back(q.key);
            }
            parts_.push_back({map[i].node, q.a, q.b});
        }
        // Its own blocks: only this request finds them (after a preemption).
        parts_.push_back(
            {static_cast<std::int32_t>(keys.size()), static_cast<std::int32_t>(start / bs), kEnd});
        keys.push_back(ownKey(static_cast<ReqId>(id)));
    }
    part_at_.push_back(static_cast<std::uint32_t>(parts_.size()));
    return out;
}

PrefixCache::PrefixCache(std::int32_t block_size, std::int64_t capacity_blocks,
                         const std::vector<Request>& requests,
                         std::shared_ptr<const PrefixLayout> layout)
    : bs_(block_size),
      layout_(layout ? std::move(layout) : PrefixLayout::build(requests, block_size)),
      held_(requests.size()), fresh_(capacity_blocks) {
    if (layout_->block_size != block_size || layout_->part_at.size() != requests.size() + 1)
        throw std::logic_error("prefix cache: a layout of another workload or block size");
    first_.reserve(layout_->keys.size());
    adviseHugePages(first_);
    first_.assign(layout_->keys.size(), -1);
}

std::int32_t PrefixCache::newRun(std::int32_t node, std::int32_t lo, std::int32_t hi,
                                 std::int32_t ref) {
    std::int32_t i = free_runs_;
    if (i >= 0) {
        free_runs_ = runs_[static_cast<std::size_t>(i)].next;
    } else {
        i = static_cast<std::int32_t>(runs_.size());
        runs_.emplace_back();
    }
    Run& r = runs_[static_cast<std::size_t>(i)];
    r = Run{};
    r.lo = lo;
    r.hi = hi;
    r.ref = ref;
    r.node = node;
    return i;
}

void PrefixCache::freeRun(std::int32_t i) {
    runs_[static_cast<std::size_t>(i)].next = free_runs_;
    free_runs_ = i;
}

void PrefixCache::qPushBack(std::int32_t i) {
    Run& r = runs_[static_cast<std::size_t>(i)];
    r.qprev = qtail_;
    r.qnext = -1;
    (qtail_ >= 0 ? runs_[static_cast<std::size_t>(qtail_)].qnext : qhead_) = i;
    qtail_ = i;
}

void PrefixCache::qInsertBefore(std::int32_t i, std::int32_t at) {
    Run& r = runs_[static_cast<std::size_t>(i)];
    Run& a = runs_[static_cast<std::size_t>(at)];
    r.qprev = a.qprev;
    r.qnext = at;
    (a.qprev >= 0 ? runs_[static_cast<std::size_t>(a.qprev)].qnext : qhead_) = i;
    a.qprev = i;
}

void PrefixCache::qUnlink(std::int32_t i) {
    Run& r = runs_[static_cast<std::size_t>(i)];
    (r.qprev >= 0 ? runs_[static_cast<std::size_t>(r.qprev)].qnext : qhead_) = r.qnext;
    (r.qnext >= 0 ? runs_[static_cast<std::size_t>(r.qnext)].qprev : qtail_) = r.qprev;
    r.qprev = r.qnext = -1;
}

void PrefixCache::nodeUnlink(std::int32_t node, std::int32_t i) {
    std::int32_t* at = &first_[static_cast<std::size_t>(node)];
    while (*at != i) at = &runs_[static_cast<std::size_t>(*at)].next;
    *at = runs_[static_cast<std::size_t>(i)].next;
}

void PrefixCache::splitAt(std::int32_t node, std::int32_t x) {
    for (std::int32_t i = first_[static_cast<std::size_t>(node)]; i >= 0;
         i = runs_[static_cast<std::size_t>(i)].next) {
        const Run r = runs_[static_cast<std::size_t>(i)];
        if (r.lo >= x) return;
        if (r.hi <= x) continue;
        // [lo, x) stays i; [x, hi) is new, after it in the node and, when idle, ahead of it
        // in the queue (a run's highest block is the one taken first).
        const std::int32_t s = newRun(node, x, r.hi, r.ref);
        runs_[static_cast<std::size_t>(s)].next = r.next;
        runs_[static_cast<std::size_t>(i)].next = s;
        runs_[static_cast<std::size_t>(i)].hi = x;
        if (r.ref == 0) qInsertBefore(s, i);
        return;
    }
}

void PrefixCache::coalesce(std::int32_t node) {
    std::int32_t i = first_[static_cast<std::size_t>(node)];
    while (i >= 0) {
        Run& r = runs_[static_cast<std::size_t>(i)];
        const std::int32_t s = r.next;
        if (s < 0) return;
        const Run& n = runs_[static_cast<std::size_t>(s)];
        // Idle runs are one only where the queue has them as one: the upper right ahead.
        if (n.lo == r.hi && n.ref == r.ref && (r.ref > 0 || n.qnext == i)) {
            r.hi = n.hi;
            r.next = n.next;
            if (r.ref == 0) qUnlink(s);
            freeRun(s);
        } else {
            i = s;
        }
    }
}

void PrefixCache::addRef(std::int32_t node, std::int32_t lo, std::int32_t hi) {
    splitAt(node, lo);
    splitAt(node, hi);
    std::int32_t covered = 0;
    for (std::int32_t i = first_[static_cast<std::size_t>(node)]; i >= 0;
         i = runs_[static_cast<std::size_t>(i)].next) {
        Run& r = runs_[static_cast<std::size_t>(i)];
        if (r.hi <= lo) continue;
        if (r.lo >= hi) break;
        if (r.lo != lo + covered) break; // a gap
        if (r.ref++ == 0) {
            qUnlink(i);
            idle_cached_ -= r.size();
            referenced_ += r.size();
            ++version_;
        }
        covered += r.size();
    }
    if (covered != hi - lo) throw std::logic_error("prefix cache: hit block not cached");
    coalesce(node);
}

void PrefixCache::dropRef(std::int32_t node, std::int32_t lo, std::int32_t hi) {
    splitAt(node, lo);
    splitAt(node, hi);
    std::int32_t in[64];
    std::vector<std::int32_t> more;
    std::size_t n = 0;
    std::int32_t covered = 0;
    for (std::int32_t i = first_[static_cast<std::size_t>(node)]; i >= 0;
         i = runs_[static_cast<std::size_t>(i)].next) {
        const Run& r = runs_[static_cast<std::size_t>(i)];
        if (r.hi <= lo) continue;
        if (r.lo >= hi) break;
        covered += r.size();
        if (!(r.ref > 0)) throw std::logic_error("prefix cache: letting go of blocks not held");
        if (n < 64)
            in[n++] = i;
        else
            more.push_back(i);
    }
    if (covered != hi - lo) throw std::logic_error("prefix cache: letting go of blocks not held");
    // Tail first: the highest run goes into the queue first.
    const auto drop = [&](std::int32_t i) {
        Run& r = runs_[static_cast<std::size_t>(i)];
        if (--r.ref > 0) return;
        referenced_ -= r.size();
        idle_cached_ += r.size();
        ++version_;
        qPushBack(i);
    };
    for (auto it = more.rbegin(); it != more.rend(); ++it) drop(*it);
    while (n > 0) drop(in[--n]);
    coalesce(node);
}

void PrefixCache::cacheGaps(ReqId id, std::int32_t node, std::int32_t lo, std::int32_t hi,
                            std::vector<std::pair<std::int32_t, std::int32_t>>& made) {
    const std::uint64_t key = layout_->keys[static_cast<std::size_t>(node)];
    // prev: the run before the gap looked at (-1: the node's first); indices, not pointers,
    // as newRun may move the runs.
    const auto nextOf = [&](std::int32_t prev) {
        return prev < 0 ? first_[static_cast<std::size_t>(node)]
                        : runs_[static_cast<std::size_t>(prev)].next;
    };
    std::int32_t prev = -1, j = lo;
    while (j < hi) {
        std::int32_t at = nextOf(prev);
        while (at >= 0 && runs_[static_cast<std::size_t>(at)].hi <= j) {
            prev = at;
            at = runs_[static_cast<std::size_t>(at)].next;
        }
        const std::int32_t next_lo = at >= 0 ? runs_[static_cast<std::size_t>(at)].lo : kEnd;
        if (next_lo <= j) { // cached already (computed twice): stays the request's own
            j = runs_[static_cast<std::size_t>(at)].hi;
            continue;
        }
        const std::int32_t g1 = std::min(hi, next_lo);
        const std::int32_t s = newRun(node, j, g1, 1);
        runs_[static_cast<std::size_t>(s)].next = at;
        (prev < 0 ? first_[static_cast<std::size_t>(node)]
                  : runs_[static_cast<std::size_t>(prev)].next) = s;
        prev = s;
        cached_count_ += g1 - j;
        ++version_;
        if (on_cached_)
            for (std::int32_t b = j; b < g1; ++b) on_cached_(id, b, mixHash(key, std::uint64_t(b)));
        made.emplace_back(j, g1);
        j = g1;
    }
    coalesce(node);
}

void PrefixCache::take(std::int64_t blocks) {
    std::int64_t need = blocks;
    const std::int64_t f = std::min(need, fresh_);
    fresh_ -= f;
    need -= f;
    while (need > 0) {
        const std::int32_t h = qhead_;
        if (h < 0) throw std::logic_error("prefix cache: every KV block is referenced");
        Run& r = runs_[static_cast<std::size_t>(h)];
        const auto k = static_cast<std::int32_t>(std::min<std::int64_t>(need, r.size()));
        if (r.node >= 0) { // cached blocks evicted, the highest first
            if (on_evicted_)
                for (std::int32_t b = r.hi - 1; b >= r.hi - k; --b)
                    on_evicted_(
                        mixHash(layout_->keys[static_cast<std::size_t>(r.node)], std::uint64_t(b)));
            evictions_ += k;
            idle_cached_ -= k;
            cached_count_ -= k;
            ++version_;
        }
        r.hi -= k;
        need -= k;
        if (r.size() == 0) {
            qUnlink(h);
            if (r.node >= 0) nodeUnlink(r.node, h);
            freeRun(h);
        }
    }
    referenced_ += blocks;
}

void PrefixCache::markShared(std::vector<Seg>& segs,
                             const std::vector<std::pair<std::int32_t, std::int32_t>>& made) {
    // `made`: ascending ranges, each inside one of the segments (a private one).
    std::vector<Seg>& out = seg_scratch_;
    out.clear();
    const auto emit = [&](std::int32_t lo, std::int32_t hi, bool shared) {
        if (hi <= lo) return;
        if (!out.empty() && out.back().shared == shared && out.back().hi == lo)
            out.back().hi = hi;
        else
            out.push_back({lo, hi, shared});
    };
    std::size_t k = 0;
    for (const Seg& s : segs) {
        std::int32_t at = s.lo;
        for (; k < made.size() && made[k].first < s.hi; ++k) {
            emit(at, made[k].first, s.shared);
            emit(made[k].first, made[k].second, true);
            at = made[k].second;
        }
        emit(at, s.hi, s.shared);
    }
    segs.swap(out);
}

void PrefixCache::letGo(ReqId id, std::int32_t from) {
    Held& h = held_[static_cast<std::size_t>(id)];
    const Parts parts = layout(id);
    while (!h.segs.empty() && h.segs.back().hi > from) {
        Seg& g = h.segs.back();
        const std::int32_t lo = std::max(g.lo, from), hi = g.hi;
        if (g.shared) {
            for (const Part* p = parts.end(); p-- != parts.begin();)
                if (p->a < hi && p->b > lo)
                    dropRef(p->node, std::max(lo, p->a), std::min(hi, p->b));
        } else {
            // Blocks holding nothing cached: any later allocation may take them.
            referenced_ -= hi - lo;
            if (qtail_ >= 0 && runs_[static_cast<std::size_t>(qtail_)].node < 0)
                runs_[static_cast<std::size_t>(qtail_)].hi += hi - lo;
            else
                qPushBack(newRun(-1, 0, hi - lo, 0));
        }
        if (lo > g.lo)
            g.hi = lo;
        else
            h.segs.pop_back();
    }
    h.n = std::min(h.n, from);
    h.published = std::min(h.published, from);
}

PrefixCache::Hit PrefixCache::probe(ReqId id, std::int64_t context) const {
    Hit hit;
    if (cached_count_ == 0 || context < 2) return hit;
    const auto most = static_cast<std::int32_t>(
        std::min<std::int64_t>((context - 1) / bs_, std::numeric_limits<std::int32_t>::max()));
    for (const Part& p : layout(id)) {
        if (p.a >= most) break;
        const std::int32_t node = p.node;
        const std::int32_t end = std::min(p.b, most);
        std::int32_t j = p.a;
        for (std::int32_t i = first_[static_cast<std::size_t>(node)]; i >= 0 && j < end;
             i = runs_[static_cast<std::size_t>(i)].next) {
            const Run& run = runs_[static_cast<std::size_t>(i)];
            if (run.hi <= j) continue;
            if (run.lo > j) break;
            const std::int32_t k = std::min(run.hi, end) - j;
            hit.blocks += k;
            if (run.ref > 0) hit.referenced += k;
            j += k;
        }
        if (j < end) break;
    }
    return hit;
}

std::int64_t PrefixCache::exclusiveBlocks(ReqId id) const {
    const Held& h = held_[static_cast<std::size_t>(id)];
    std::int64_t n = 0;
    for (const Seg& g : h.segs) {
        if (!g.shared) {
            n += g.hi - g.lo;
            continue;
        }
        for (const Part& p : layout(id)) {
            const std::int32_t lo = std::max(g.lo, p.a), hi = std::min(g.hi, p.b);
            if (lo >= hi) continue;
            for (std::int32_t i = first_[static_cast<std::size_t>(p.node)]; i >= 0;
                 i = runs_[static_cast<std::size_t>(i)].next) {
                const Run& run = runs_[static_cast<std::size_t>(i)];
                if (run.lo >= hi) break;
                if (run.ref == 1) n += std::max(0, std::min(run.hi, hi) - std::max(run.lo, lo));
            }
        }
    }
    return n;
}

void PrefixCache::admit(ReqId id, std::int32_t hit_blocks) {
    Held& h = held_[static_cast<std::size_t>(id)];
    if (h.n != 0) throw std::logic_error("prefix cache: admitted twice");
    for (const Part& p : layout(id)) {
        if (p.a >= hit_blocks) break;
        addRef(p.node, p.a, std::min(p.b, hit_blocks));
    }
    if (hit_blocks > 0) h.segs.push_back({0, hit_blocks, true});
    h.n = h.published = hit_blocks;
}

void PrefixCache::resizeBlocks(ReqId id, std::int64_t tokens) {
    Held& h = held_[static_cast<std::size_t>(id)];
    const auto want = static_cast<std::int32_t>((tokens + bs_ - 1) / bs_);
    if (want > h.n) {
        take(want - h.n);
        if (!h.segs.empty() && !h.segs.back().shared)
            h.segs.back().hi = want;
        else
            h.segs.push_back({h.n, want, false});
        h.n = want;
    } else if (want < h.n) {
        letGo(id, want);
    }
}

void PrefixCache::publish(ReqId id, std::int64_t valid) {
    Held& h = held_[static_cast<std::size_t>(id)];
    const auto full = static_cast<std::int32_t>(std::min<std::int64_t>(valid / bs_, h.n));
    if (h.published >= full) return;
    auto& made = made_scratch_;
    made.clear();
    for (const Seg& g : h.segs) {
        const std::int32_t x = std::max(g.lo, h.published), y = std::min(g.hi, full);
        if (g.shared || x >= y) continue;
        for (const Part& p : layout(id)) {
            const std::int32_t lo = std::max(x, p.a), hi = std::min(y, p.b);
            if (lo < hi) cacheGaps(id, p.node, lo, hi, made);
        }
    }
    if (!made.empty()) markShared(h.segs, made);
    h.published = full;
}

void PrefixCache::release(ReqId id, std::int64_t valid) {
    if (valid > 0) publish(id, valid);
    letGo(id, 0);
    Held& h = held_[static_cast<std::size_t>(id)];
    h.segs.clear();
    h.n = h.published = 0;
}

std::vector<std::uint64_t> PrefixCache::blockHashes(ReqId id, std::int32_t n) const {
    std::vector<std::uint64_t> out;
    out.reserve(static_cast<std::size_t>(std::max(0, n)));
    for (const Part& p : layout(id))
        for (std::int32_t j = p.a; j < std::min(p.b, n); ++j)
            out.push_back(
                mixHash(layout_->keys[static_cast<std::size_t>(p.node)], std::uint64_t(j)));
    return out;
}

} // namespace kairos
