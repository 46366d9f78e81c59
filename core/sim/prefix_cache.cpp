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
    : bs_(block_size), capacity_(capacity_blocks),
      layout_(layout ? std::move(layout) : PrefixLayout::build(requests, block_size)),
      tables_(requests.size()) {
    if (layout_->block_size != block_size || layout_->part_at.size() != requests.size() + 1)
        throw std::logic_error("prefix cache: a layout of another workload or block size");
    buckets_.assign(64, -1);
    tails_.assign(64, -1);
    mask_ = 63;
}

std::uint64_t PrefixCache::HashCursor::at(std::int32_t j) {
    while (p != end && p->b <= j) ++p;
    return mixHash(c.layout_->keys[static_cast<std::size_t>(p->node)], std::uint64_t(j));
}

PrefixCache::HashCursor PrefixCache::cursor(ReqId id) const {
    const auto i = idx(id);
    return {*this, layout_->parts.data() + layout_->part_at[i],
            layout_->parts.data() + layout_->part_at[i + 1]};
}

// ---- the hash table -------------------------------------------------------------------

void PrefixCache::link(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    const std::size_t k = blk.hash & mask_;
    blk.hnext = -1;
    blk.hprev = tails_[k];
    (tails_[k] >= 0 ? blocks_[static_cast<std::size_t>(tails_[k])].hnext : buckets_[k]) = b;
    tails_[k] = b;
}

void PrefixCache::grow() {
    // Twice the buckets; every chain re-linked in its order (duplicates keep theirs).
    const std::vector<std::int32_t> old = std::move(buckets_);
    buckets_.assign(old.size() * 2, -1);
    tails_.assign(old.size() * 2, -1);
    mask_ = buckets_.size() - 1;
    for (std::int32_t head : old)
        for (std::int32_t b = head; b >= 0;) {
            const std::int32_t next = blocks_[static_cast<std::size_t>(b)].hnext;
            link(b);
            b = next;
        }
}

void PrefixCache::insert(std::uint64_t h, std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    blk.hash = h;
    blk.hashed = true;
    ++version_;
    link(b);
    if (++hashed_count_ > buckets_.size()) grow();
}

void PrefixCache::erase(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    const std::size_t k = blk.hash & mask_;
    (blk.hprev >= 0 ? blocks_[static_cast<std::size_t>(blk.hprev)].hnext : buckets_[k]) = blk.hnext;
    (blk.hnext >= 0 ? blocks_[static_cast<std::size_t>(blk.hnext)].hprev : tails_[k]) = blk.hprev;
    blk.hprev = blk.hnext = -1;
    blk.hashed = false;
    --hashed_count_;
    ++version_;
    if (on_evicted_ && find(blk.hash) < 0) on_evicted_(blk.hash); // its hash's last block
}

// ---- the free queue -------------------------------------------------------------------

void PrefixCache::pushFront(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    blk.qprev = -1;
    blk.qnext = qhead_;
    (qhead_ >= 0 ? blocks_[static_cast<std::size_t>(qhead_)].qprev : qtail_) = b;
    qhead_ = b;
}

void PrefixCache::pushBack(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    blk.qnext = -1;
    blk.qprev = qtail_;
    (qtail_ >= 0 ? blocks_[static_cast<std::size_t>(qtail_)].qnext : qhead_) = b;
    qtail_ = b;
}

void PrefixCache::unlink(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    (blk.qprev >= 0 ? blocks_[static_cast<std::size_t>(blk.qprev)].qnext : qhead_) = blk.qnext;
    (blk.qnext >= 0 ? blocks_[static_cast<std::size_t>(blk.qnext)].qprev : qtail_) = blk.qprev;
    blk.qprev = blk.qnext = -1;
}

std::int32_t PrefixCache::allocate() {
    // The queue is [freed without a hash][never used][freed with a hash]: vLLM's order,
    // where the never-used blocks are records not made yet.
    std::int32_t b = qhead_;
    if (b >= 0 && !blocks_[static_cast<std::size_t>(b)].hashed) {
        unlink(b);
        --hashless_free_;
    } else if (std::int64_t(blocks_.size()) < capacity_) {
        if (blocks_.size() >= std::size_t(std::numeric_limits<std::int32_t>::max()))
            throw std::invalid_argument("prefix caching: more than 2^31 KV blocks in use");
        b = static_cast<std::int32_t>(blocks_.size());
        blocks_.emplace_back();
    } else {
        if (b < 0) throw std::logic_error("prefix cache: every KV block is referenced");
        unlink(b);
        --idle_cached_;
        ++evictions_;
        erase(b);
    }
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    blk.ref = 1;
    ++referenced_;
    return b;
}

void PrefixCache::touch(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    if (blk.ref++ > 0) return;
    unlink(b);
    --idle_cached_;
    ++referenced_;
    ++version_;
}

void PrefixCache::unref(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    if (--blk.ref > 0) return;
    --referenced_;
    if (blk.hashed) {
        pushBack(b);
        ++idle_cached_;
        ++version_;
    } else {
        pushFront(b);
        ++hashless_free_;
    }
}

// ---- requests -------------------------------------------------------------------------

PrefixCache::Hit PrefixCache::probe(ReqId id, std::int64_t context) const {
    Hit hit;
    if (hashed_count_ == 0 || context < 2) return hit;
    const auto most = static_cast<std::int32_t>(
        std::min<std::int64_t>((context - 1) / bs_, std::numeric_limits<std::int32_t>::max()));
    HashCursor c = cursor(id);
    for (std::int32_t j = 0; j < most; ++j) {
        const std::int32_t b = find(c.at(j));
        if (b < 0) break;
        ++hit.blocks;
        if (blocks_[static_cast<std::size_t>(b)].ref > 0) ++hit.referenced;
    }
    return hit;
}

void PrefixCache::admit(ReqId id, std::int32_t hit_blocks) {
    Table& t = tables_[idx(id)];
    if (!t.blocks.empty()) throw std::logic_error("prefix cache: admitted twice");
    HashCursor c = cursor(id);
    for (std::int32_t j = 0; j < hit_blocks; ++j) {
        const std::int32_t b = find(c.at(j));
        if (b < 0) throw std::logic_error("prefix cache: hit block not cached");
        touch(b);
        t.blocks.push_back(b);
    }
    t.hashed = hit_blocks;
}

void PrefixCache::extend(ReqId id, std::int32_t hit_blocks) {
    Table& t = tables_[idx(id)];
    if (hit_blocks <= t.hashed) return;
    if (hit_blocks > std::int32_t(t.blocks.size()))
        throw std::logic_error("prefix cache: a hit longer than the blocks held");
    HashCursor c = cursor(id);
    for (std::int32_t j = t.hashed; j < hit_blocks; ++j) {
        std::int32_t& at = t.blocks[static_cast<std::size_t>(j)];
        if (blocks_[static_cast<std::size_t>(at)].hashed)
            throw std::logic_error("prefix cache: extending the hit of a scheduled request");
        const std::int32_t b = find(c.at(j));
        if (b < 0) throw std::logic_error("prefix cache: hit block not cached");
        touch(b);
        unref(at);
        at = b;
    }
    t.hashed = hit_blocks;
}

void PrefixCache::resizeBlocks(ReqId id, std::int64_t tokens) {
    Table& t = tables_[idx(id)];
    const auto want = static_cast<std::size_t>((tokens + bs_ - 1) / bs_);
    while (t.blocks.size() < want) t.blocks.push_back(allocate());
    while (t.blocks.size() > want) { // the tail first
        unref(t.blocks.back());
        t.blocks.pop_back();
    }
    t.hashed = std::min(t.hashed, static_cast<std::int32_t>(want));
}

void PrefixCache::publishBlocks(ReqId id, std::int64_t valid) {
    Table& t = tables_[idx(id)];
    const auto full = static_cast<std::int32_t>(
        std::min<std::int64_t>(valid / bs_, std::int64_t(t.blocks.size())));
    HashCursor c = cursor(id);
    for (std::int32_t j = t.hashed; j < full; ++j) {
        const std::int32_t b = t.blocks[static_cast<std::size_t>(j)];
        if (blocks_[static_cast<std::size_t>(b)].hashed) continue; // found in the cache
        const std::uint64_t h = c.at(j);
        const bool first = on_cached_ && find(h) < 0;
        insert(h, b);
        if (first && on_cached_) on_cached_(id, j, h);
    }
    t.hashed = std::max(t.hashed, full);
}

void PrefixCache::release(ReqId id, std::int64_t valid) {
    if (valid > 0) publish(id, valid);
    Table& t = tables_[idx(id)];
    for (auto it = t.blocks.rbegin(); it != t.blocks.rend(); ++it) unref(*it);
    t.blocks.clear();
    t.blocks.shrink_to_fit();
    t.hashed = 0;
}

std::int64_t PrefixCache::exclusiveBlocks(ReqId id) const {
    std::int64_t n = 0;
    for (std::int32_t b : tables_[idx(id)].blocks)
        n += blocks_[static_cast<std::size_t>(b)].ref == 1;
    return n;
}

std::int64_t PrefixCache::sharedBlocks(ReqId id, std::int32_t n) const {
    const auto& t = tables_[idx(id)].blocks;
    std::int64_t k = 0;
    for (std::size_t j = 0; j < std::min(t.size(), static_cast<std::size_t>(std::max(0, n))); ++j)
        k += blocks_[static_cast<std::size_t>(t[j])].ref > 1;
    return k;
}

std::vector<std::uint64_t> PrefixCache::blockHashes(ReqId id, std::int32_t n) const {
    std::vector<std::uint64_t> out;
    out.reserve(static_cast<std::size_t>(std::max(0, n)));
    HashCursor c = cursor(id);
    for (std::int32_t j = 0; j < n; ++j) out.push_back(c.at(j));
    return out;
}

} // namespace kairos
