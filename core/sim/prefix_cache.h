#pragma once
// Automatic prefix caching with vLLM's (V1) semantics, for the simulator's KV cache:
//  - the cache is a pool of blocks of `block_size` tokens (capacity / block_size of them);
//  - a full block is identified by a hash of its tokens chained to its parent's: here, of
//    the request's prefix spans (model/request.h) that cover the block's last token,
//    chained, and the block's index; a block holding tokens past the spans is the
//    request's own (a hash of the request and the index), so only the request itself
//    can find it again (after a preemption by recompute);
//  - each block has a reference count: the running or suspended requests holding it;
//  - a block nobody references stays cached (its hash still finds it) in a free queue,
//    and the allocator takes the queue's head when it needs a block: least recently
//    released first, and of one request's blocks the tail of its chain first (vLLM frees
//    a request's blocks in reverse order);
//  - at admission a request takes its longest run of cached leading blocks, at most
//    (context - 1) tokens (one prompt token is always computed, for its logits: vLLM's
//    max_cache_hit_length), neither computed nor allocated again.
// Where Kairos departs from vLLM: blocks filled by decoding are hashed when the request
// lets them go (it finishes or is preempted), not as each fills: another request can find
// them only when its prompt names that answer, which a conversation's next turn does after
// the answer is complete. Blocks compressed by a KV eviction ratio (TimeBill's alpha) hold
// a request's own selection of the prompt: they are never cached (the prompt's blocks are,
// as computed before the compression).
//
// How it is kept (hand-written: vLLM's block pool is Python inside vLLM, and a pool of
// single blocks cost 15x the run without caching on Mooncake's trace, 9 M blocks of
// 16 tokens): the blocks whose last token falls in the same span of the same chain of
// spans share a *node* (the chain's hash), and a node holds the same block indices for
// every request that has it. A node's cached blocks are kept as runs [lo, hi) of one
// reference count each; the free queue holds runs (a node's idle run, whose highest block
// is taken first, or a count of blocks holding nothing cached); a request holds a list of
// segments, each either references to cached runs or blocks of its own. Every operation
// then costs per node and per run, not per block. Its answers are those of the pool of
// single blocks, operation by operation (tests/core/prefix_cache_oracle.h keeps that pool;
// tst_prefix_cache compares them on random operations and whole runs).
#include "model/request.h"
#include "util/hash.h"
#include "util/huge_pages.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace kairos {

// The block size with prefix caching when none is given: vLLM's 16 tokens.
inline constexpr std::int32_t kPrefixCacheBlockSize = 16;

// The chain step of block hashes: a 64-bit mix of two words (SplitMix64 over a combined
// with b as boost's hash_combine does).
inline std::uint64_t mixHash(std::uint64_t a, std::uint64_t b) {
    return splitmix64(a ^ (b + (a << 6) + (a >> 2)));
}

// Request i's context cut into nodes: blocks [a, b) of node `node` (a request's own
// blocks are its last part, to the end).
struct PrefixPart {
    std::int32_t node, a, b;
};

// What the caches of every replica of one workload share: the nodes (their chain hashes)
// and each request's parts, for one block size. Built once (PrefixCache's constructor says
// how); a fleet's replicas hold one between them.
struct PrefixLayout {
    std::int32_t block_size = 0;
    HugeVector<std::uint64_t> keys;    // per node
    HugeVector<PrefixPart> parts;      // every request's, in request order
    HugeVector<std::uint32_t> part_at; // request i's are [part_at[i], part_at[i + 1])
    static std::shared_ptr<const PrefixLayout> build(const std::vector<Request>& requests,
                                                     std::int32_t block_size);
};

class PrefixCache {
public:
    // `requests`: the workload (ReqId i is requests[i]); it must outlive the cache.
    // `layout`: the workload's, when another cache has it already (else built here).
    PrefixCache(std::int32_t block_size, std::int64_t capacity_blocks,
                const std::vector<Request>& requests,
                std::shared_ptr<const PrefixLayout> layout = nullptr);
    const std::shared_ptr<const PrefixLayout>& layout() const { return layout_; }

    struct Hit {
        std::int32_t blocks = 0;     // leading blocks of the context found cached
        std::int32_t referenced = 0; // of those, blocks running requests hold already
    };
    // What admitting `id` with a context of `context` tokens would find cached now.
    Hit probe(ReqId id, std::int64_t context) const;
    // Takes the hit's blocks (no request of `id` may hold any now); resize() adds the rest.
    void admit(ReqId id, std::int32_t hit_blocks);
    // The request now holds `tokens` logical tokens: new private blocks at the tail, or the
    // tail's blocks let go.
    void resize(ReqId id, std::int64_t tokens) {
        // Called for every token decoded; a new block is needed once per block's tokens.
        if ((tokens + bs_ - 1) / bs_ != held_[static_cast<std::size_t>(id)].n)
            resizeBlocks(id, tokens);
    }
    // Hashes the request's blocks that the first `valid` tokens of its context fill (those
    // not hashed yet); a block whose hash is cached already (another request computed the
    // same tokens at the same time) stays private, as in vLLM.
    void publish(ReqId id, std::int64_t valid);
    // Lets all of its blocks go (tail first). `valid`: as for publish, which runs first;
    // negative: none of its blocks hold its context in order (compressed), none is cached.
    void release(ReqId id, std::int64_t valid);

    std::int64_t referencedBlocks() const { return referenced_; }
    // Blocks of the request that no other request references (what releasing it frees).
    std::int64_t exclusiveBlocks(ReqId id) const;
    // Blocks nobody references that still hold cached KV (the allocator may take them).
    std::int64_t idleCachedBlocks() const { return idle_cached_; }
    std::int64_t evictions() const { return evictions_; }
    // Blocks never used yet (the allocator takes them before evicting any cached block).
    std::int64_t unusedBlocks() const { return fresh_; }
    std::int32_t blockSize() const { return bs_; }
    // Changes whenever a probe's answer may change (a block cached or evicted, a cached
    // block referenced or let go).
    std::uint64_t version() const { return version_; }

    // The hashes of request `id`'s first `n` blocks (what identifies their content).
    std::vector<std::uint64_t> blockHashes(ReqId id, std::int32_t n) const;
    // Called as each block is cached (request, the block's index in its context, its hash)
    // and as each cached block is evicted (its hash): a live run's backend keeps the
    // blocks' KV meanwhile (sim/engine.h).
    void onCached(std::function<void(ReqId, std::int32_t, std::uint64_t)> f) {
        on_cached_ = std::move(f);
    }
    void onEvicted(std::function<void(std::uint64_t)> f) { on_evicted_ = std::move(f); }

private:
    // A run of cached blocks [lo, hi) of `node` with one reference count; with ref 0 it
    // is in the free queue. A queue entry with node -1 is (hi - lo) blocks holding nothing.
    struct Run {
        std::int32_t lo = 0, hi = 0, ref = 0, node = -1;
        std::int32_t next = -1;              // the node's next run
        std::int32_t qprev = -1, qnext = -1; // the free queue
        std::int32_t size() const { return hi - lo; }
    };
    // A request's blocks: its context's partition into nodes (from its spans), computed
    // for every request at the start, and what it holds: segments [lo, hi), references to
    // cached runs or its own.
    using Part = PrefixPart;
    struct Seg {
        std::int32_t lo, hi;
        bool shared;
    };
    struct Held {
        std::vector<Seg> segs;
        std::int32_t n = 0, published = 0;
    };

    struct Parts {
        const Part *first, *last;
        const Part* begin() const { return first; }
        const Part* end() const { return last; }
    };
    Parts layout(ReqId id) const {
        const auto i = static_cast<std::size_t>(id);
        return {layout_->parts.data() + layout_->part_at[i],
                layout_->parts.data() + layout_->part_at[i + 1]};
    }
    std::int32_t newRun(std::int32_t node, std::int32_t lo, std::int32_t hi, std::int32_t ref);
    void freeRun(std::int32_t i);
    void qPushBack(std::int32_t i);
    void qInsertBefore(std::int32_t i, std::int32_t at);
    void qUnlink(std::int32_t i);
    void nodeUnlink(std::int32_t node, std::int32_t i);
    // Splits the node's run holding block x (lo < x < hi) at x.
    void splitAt(std::int32_t node, std::int32_t x);
    void coalesce(std::int32_t node);
    void addRef(std::int32_t node, std::int32_t lo, std::int32_t hi);
    void dropRef(std::int32_t node, std::int32_t lo, std::int32_t hi);
    // Caches [lo, hi) of `node` where it holds nothing yet, for request `id`, whose blocks
    // they become; returns the runs made (ascending) in `made`.
    void cacheGaps(ReqId id, std::int32_t node, std::int32_t lo, std::int32_t hi,
                   std::vector<std::pair<std::int32_t, std::int32_t>>& made);
    void resizeBlocks(ReqId id, std::int64_t tokens);
    void take(std::int64_t blocks);          // for new private blocks: fresh, then the queue's head
    void letGo(ReqId id, std::int32_t from); // the request's blocks from `from` on, tail first
    void markShared(std::vector<Seg>& segs,
                    const std::vector<std::pair<std::int32_t, std::int32_t>>& made);

    std::int32_t bs_;
    std::shared_ptr<const PrefixLayout> layout_;
    HugeVector<std::int32_t> first_; // per node: its cached runs, ascending by lo (-1: none)
    HugeVector<Run> runs_;
    std::int32_t free_runs_ = -1;          // unused Run slots, linked by next
    std::int32_t qhead_ = -1, qtail_ = -1; // the free queue, head taken first
    std::vector<Held> held_;
    std::vector<Seg> seg_scratch_;
    std::vector<std::pair<std::int32_t, std::int32_t>> made_scratch_;
    std::int64_t fresh_ = 0, referenced_ = 0, idle_cached_ = 0, evictions_ = 0, cached_count_ = 0;
    std::uint64_t version_ = 0;
    std::function<void(ReqId, std::int32_t, std::uint64_t)> on_cached_;
    std::function<void(std::uint64_t)> on_evicted_;
};

} // namespace kairos
