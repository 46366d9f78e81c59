#pragma once
// The block-level prefix cache Kairos ran before its cache worked on runs of blocks: one
// physical block at a time (a hash per block, a free queue of blocks). Kept as the oracle
// the run-level cache (sim/prefix_cache.h) is checked against, operation by operation.
//
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
// Hand-written: vLLM's block pool is Python inside vLLM. The hash map is a small open-
// addressing table (BlockMap) because every block of every prompt passes through it (9 M
// for Mooncake's trace at 16-token blocks) and std::unordered_map's node allocations made
// caching cost 15x the run without it.
#include "sim/prefix_cache.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace kairos::oracle {

// Block hash -> block, open addressing with linear probing; the keys are hashes already,
// so their low bits index the table. Nothing is erased: an entry whose block was evicted
// (or reused) is stale, the cache checks each answer against the block (PrefixCache::
// lookup), a new entry for the same hash overwrites it, and the table is rebuilt from the
// live blocks once stale entries outnumber them.
class BlockMap {
public:
    std::int32_t find(std::uint64_t key) const;     // -1: absent
    void assign(std::uint64_t key, std::int32_t v); // inserts or overwrites
    void clear();
    std::size_t size() const { return size_; }

private:
    void grow();
    std::vector<std::uint64_t> keys_;
    std::vector<std::int32_t> vals_; // -1: empty slot
    std::size_t mask_ = 0, size_ = 0;
};

// The hashes of a request's blocks, in order (amortised O(1) per block walked forwards).
class BlockHashes {
public:
    BlockHashes(const Request& r, std::uint64_t own_salt, std::int32_t block_size);
    std::uint64_t at(std::int64_t j);

private:
    const Request& r_;
    std::uint64_t own_;
    std::int64_t bs_;
    std::int64_t covered_ = 0; // tokens the spans cover
    std::size_t k_ = 0;        // spans chained so far
    std::int64_t end_ = 0;     // tokens they cover
    std::uint64_t chain_ = 0;
    std::int64_t last_ = -1;
};

class BlockPoolCache {
public:
    // `requests`: the workload's size (ReqIds are 0 .. requests - 1).
    BlockPoolCache(std::int32_t block_size, std::int64_t capacity_blocks, std::size_t requests);

    struct Hit {
        std::int32_t blocks = 0;     // leading blocks of the context found cached
        std::int32_t referenced = 0; // of those, blocks running requests hold already
    };
    // What admitting `id` with a context of `context` tokens would find cached now.
    Hit probe(ReqId id, const Request& r, std::int64_t context) const;
    // Takes the hit's blocks (no request of `id` may hold any now); resize() adds the rest.
    void admit(ReqId id, const Request& r, std::int32_t hit_blocks);
    // The request now holds `tokens` logical tokens: new private blocks at the tail, or the
    // tail's blocks let go.
    void resize(ReqId id, std::int64_t tokens);
    // Hashes the request's blocks that the first `valid` tokens of its context fill (those
    // not hashed yet); a block whose hash is cached already (another request computed the
    // same tokens at the same time) stays private, as in vLLM.
    void publish(ReqId id, const Request& r, std::int64_t valid);
    // Lets all of its blocks go (tail first). `valid`: as for publish, which runs first;
    // negative: none of its blocks hold its context in order (compressed), none is cached.
    void release(ReqId id, const Request& r, std::int64_t valid);

    std::int64_t referencedBlocks() const { return referenced_; }
    // Blocks of the request that no other request references (what releasing it frees).
    std::int64_t exclusiveBlocks(ReqId id) const;
    // Blocks nobody references that still hold cached KV (the allocator may take them).
    std::int64_t idleCachedBlocks() const { return idle_cached_; }
    std::int64_t evictions() const { return evictions_; }
    // Blocks never used yet (the allocator takes them before evicting any cached block).
    std::int64_t unusedBlocks() const {
        return capacity_ - static_cast<std::int64_t>(hash_.size());
    }
    std::int32_t blockSize() const { return bs_; }
    // Changes whenever a probe's answer may change (a block cached or evicted, a cached
    // block referenced or let go).
    std::uint64_t version() const { return version_; }

private:
    // The block cached under `hash`, or -1 (the map's entry may be stale).
    std::int32_t lookup(std::uint64_t hash) const {
        const std::int32_t b = map_.find(hash);
        return b >= 0 && cached_[static_cast<std::size_t>(b)] &&
                       hash_[static_cast<std::size_t>(b)] == hash
                   ? b
                   : -1;
    }
    std::uint64_t salt(ReqId id) const { return mixHash(0x4b41495230534eULL, std::uint64_t(id)); }
    std::int32_t allocate();
    void unlinkFree(std::int32_t b);
    void pushFree(std::int32_t b);
    void unref(std::int32_t b);

    std::int32_t bs_;
    std::int64_t capacity_;
    // Per block.
    std::vector<std::uint64_t> hash_;
    std::vector<std::int32_t> ref_, prev_, next_;
    std::vector<char> cached_;           // its hash is in map_
    std::int32_t head_ = -1, tail_ = -1; // the free queue (ref 0), head taken first
    BlockMap map_;
    // Per request: its blocks in context order, and how many of them are hashed.
    std::vector<std::vector<std::int32_t>> table_;
    std::vector<std::int32_t> published_;
    std::int64_t referenced_ = 0, idle_cached_ = 0, evictions_ = 0, cached_count_ = 0;
    std::uint64_t version_ = 0;
};

} // namespace kairos::oracle
