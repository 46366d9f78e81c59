#pragma once
// Automatic prefix caching as current vLLM (V1) runs it, for the simulator's KV cache.
// Modelled on vllm-project/vllm's block pool and KV cache manager as read at these commits
// (docs/upstream/vllm_v1_prefix_cache.md, our reading in our words, no code copied):
//   vllm/v1/core/block_pool.py                     c59cb7941357443da7c5eef75cfa8697d683d228
//   vllm/v1/core/kv_cache_manager.py               ace980e6de0540f49b0c63248437a1a7807590c1
//   vllm/v1/core/single_type_kv_cache_manager.py   129ab7c60cbb8eb11e875373e67f7e521b74aa30
//   vllm/v1/core/sched/scheduler.py                b4622cf924bc72504aed99e486062d6633fde39e
// with the free queue of PR #42656 (merged 2026-05: blocks without a hash go to its head).
//  - The cache is a pool of blocks of `block_size` tokens (capacity / block_size of them).
//  - A full block is identified by a hash of its tokens chained to its parent's: here, of
//    the request's prefix spans (model/request.h) that cover the block's last token,
//    chained, and the block's index; a block holding tokens past the spans is the
//    request's own (a hash of the request and the index), so only the request itself
//    finds it again (after a preemption by recompute).
//  - Each block has a reference count: the running or suspended requests holding it.
//  - Blocks are hashed ("registered") when the engine schedules the tokens that fill them
//    (vLLM's allocate_slots -> cache_blocks), before the step computes them: a prompt's
//    blocks as its chunk is scheduled, a block filled by decoding in the step that feeds
//    its last token. A second request in the same step finds them.
//  - A block whose hash is registered already (another request computed the same tokens)
//    is registered too, a second block under the hash: vLLM does not deduplicate. A
//    lookup finds the first registered; evicting one leaves the others findable.
//  - Freed blocks (a request's, tail first) go to the free queue: those with a hash to its
//    tail (least recently freed evicted first, of one request the chain's tail first),
//    those without to its head (reused at once, PR #42656). The allocator takes the head:
//    blocks without a hash, then blocks never used, then cached blocks (evicting them).
//  - A request takes its longest run of cached leading blocks, at most (context - 1)
//    tokens (vLLM's max_cache_hit_length: one token is always computed, for its logits),
//    when the engine first schedules tokens of it (the engine looks again at its first
//    chunk: sim/engine.cpp, Simulator::lookUp).
// Blocks compressed by a KV eviction ratio (TimeBill's alpha) hold a request's own
// selection of the prompt: they are never cached (the prompt's blocks are, as computed
// before the compression).
//
// How it is kept (hand-written: vLLM's block pool is Python inside vLLM): one record per
// physical block, made when first used (a large KV capacity costs nothing until it is
// filled); the hash -> block table is chained through the block records (buckets by the
// hash's low bits, the keys being hashes already; a bucket's chain is in registration
// order, so the first block of a hash in it is the one registered first), so a block
// leaves it in O(1) when evicted; the free queue is a doubly linked list over the records.
#include "model/request.h"
#include "util/hash.h"
#include "util/huge_pages.h"

#include <algorithm>
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
    // A request admitted with a hit of fewer blocks, none of whose other blocks is hashed
    // yet (it has not been scheduled), takes the longer hit `hit_blocks`: its own blocks
    // there are let go and the cached ones taken instead.
    void extend(ReqId id, std::int32_t hit_blocks);
    // The request now holds `tokens` logical tokens: new blocks at the tail, or the tail's
    // blocks let go.
    void resize(ReqId id, std::int64_t tokens) {
        // Called for every token decoded; a new block is needed once per block's tokens.
        if ((tokens + bs_ - 1) / bs_ != static_cast<std::int64_t>(tables_[idx(id)].blocks.size()))
            resizeBlocks(id, tokens);
    }
    // Registers the request's blocks that the first `valid` tokens of its context fill
    // (those not hashed yet), duplicates included.
    void publish(ReqId id, std::int64_t valid) {
        if (std::min<std::int64_t>(valid / bs_, std::int64_t(tables_[idx(id)].blocks.size())) >
            tables_[idx(id)].hashed)
            publishBlocks(id, valid);
    }
    // Lets all of its blocks go (tail first). `valid`: as for publish, which runs first;
    // negative: none of its blocks hold its context in order (compressed), none is cached.
    void release(ReqId id, std::int64_t valid);

    std::int64_t referencedBlocks() const { return referenced_; }
    // Blocks of the request that no other request references (what releasing it frees).
    std::int64_t exclusiveBlocks(ReqId id) const;
    // Of the request's first `n` blocks, those another request references too.
    std::int64_t sharedBlocks(ReqId id, std::int32_t n) const;
    // Blocks nobody references that still hold cached KV (the allocator may take them).
    std::int64_t idleCachedBlocks() const { return idle_cached_; }
    std::int64_t evictions() const { return evictions_; }
    // Blocks holding nothing (never used, or freed without a hash): taken before any
    // cached block is evicted.
    std::int64_t unusedBlocks() const {
        return capacity_ - std::int64_t(blocks_.size()) + hashless_free_;
    }
    std::int32_t blockSize() const { return bs_; }
    // Changes whenever a probe's answer may change (a block cached or evicted, a cached
    // block referenced or let go).
    std::uint64_t version() const { return version_; }

    // The hashes of request `id`'s first `n` blocks (what identifies their content).
    std::vector<std::uint64_t> blockHashes(ReqId id, std::int32_t n) const;
    // Called as a hash is first registered (request, the block's index in its context,
    // its hash) and as the last block under a hash is evicted (its hash): a live run's
    // backend keeps the blocks' KV meanwhile (sim/engine.h).
    void onCached(std::function<void(ReqId, std::int32_t, std::uint64_t)> f) {
        on_cached_ = std::move(f);
    }
    void onEvicted(std::function<void(std::uint64_t)> f) { on_evicted_ = std::move(f); }

private:
    static std::size_t idx(ReqId id) { return static_cast<std::size_t>(id); }
    struct Block {
        std::uint64_t hash = 0;
        std::int32_t ref = 0;
        std::int32_t qprev = -1, qnext = -1; // the free queue (ref 0)
        std::int32_t hprev = -1, hnext = -1; // its bucket's chain (when hashed)
        bool hashed = false;
    };
    struct Table {
        std::vector<std::int32_t> blocks; // in context order
        std::int32_t hashed = 0;          // its leading blocks registered (or found)
    };
    // Block j's hash for request `id`, walking its parts forwards (a cursor per walk).
    struct HashCursor {
        const PrefixCache& c;
        const PrefixPart *p, *end;
        std::uint64_t at(std::int32_t j);
    };
    HashCursor cursor(ReqId id) const;
    // The hash table: hash -> the first block registered under it (-1: none).
    std::int32_t find(std::uint64_t h) const {
        for (std::int32_t b = buckets_[h & mask_]; b >= 0;
             b = blocks_[static_cast<std::size_t>(b)].hnext)
            if (blocks_[static_cast<std::size_t>(b)].hash == h) return b;
        return -1;
    }
    void insert(std::uint64_t h, std::int32_t b); // at the end of its bucket's chain
    void erase(std::int32_t b);                   // out of its bucket's chain
    void link(std::int32_t b);                    // at the end of its bucket's chain
    void grow();

    void pushFront(std::int32_t b);
    void pushBack(std::int32_t b);
    void unlink(std::int32_t b);
    std::int32_t allocate(); // one block: the queue's head or a new one, evicting if cached
    void touch(std::int32_t b);
    void unref(std::int32_t b);
    void resizeBlocks(ReqId id, std::int64_t tokens);
    void publishBlocks(ReqId id, std::int64_t valid);

    std::int32_t bs_;
    std::int64_t capacity_;
    std::shared_ptr<const PrefixLayout> layout_;
    std::vector<Block> blocks_; // those used so far
    std::int32_t qhead_ = -1, qtail_ = -1;
    std::vector<std::int32_t> buckets_, tails_; // each chain's first and last block (-1: empty)
    std::size_t mask_ = 0, hashed_count_ = 0;
    std::vector<Table> tables_;
    std::int64_t referenced_ = 0, idle_cached_ = 0, hashless_free_ = 0, evictions_ = 0;
    std::uint64_t version_ = 0;
    std::function<void(ReqId, std::int32_t, std::uint64_t)> on_cached_;
    std::function<void(std::uint64_t)> on_evicted_;
};

} // namespace kairos
