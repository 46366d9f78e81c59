#pragma once
// vLLM's block pool written the plain way, as the specification the simulator's cache
// (sim/prefix_cache.h) is checked against operation by operation: every block made at the
// start and queued in id order, the free queue a std::list (blocks without a hash pushed
// at its head, blocks with one at its tail, PR #42656), the hash table a std::map from a
// hash to the blocks registered under it in registration order, a request's blocks a
// vector. No laziness, no open addressing, nothing clever: slow and obviously what the
// reading in docs/upstream/vllm_v1_prefix_cache.md says.
#include "model/request.h"

#include <cstdint>
#include <list>
#include <map>
#include <vector>

namespace kairos::oracle {

class VllmBlockPool {
public:
    VllmBlockPool(std::int32_t block_size, std::int64_t capacity_blocks,
                  const std::vector<Request>& requests);

    struct Hit {
        std::int32_t blocks = 0, referenced = 0;
    };
    Hit probe(ReqId id, std::int64_t context) const;
    void admit(ReqId id, std::int32_t hit_blocks);
    void extend(ReqId id, std::int32_t hit_blocks);
    void resize(ReqId id, std::int64_t tokens);
    void publish(ReqId id, std::int64_t valid);
    void release(ReqId id, std::int64_t valid);

    std::int64_t referencedBlocks() const;
    std::int64_t idleCachedBlocks() const;
    std::int64_t unusedBlocks() const; // in the free queue without a hash
    std::int64_t exclusiveBlocks(ReqId id) const;
    std::int64_t evictions() const { return evictions_; }

private:
    // Block j's hash for request `id`: the chain of the spans up to the one holding the
    // block's last token, and j; past the spans the request's own.
    std::uint64_t hashOf(ReqId id, std::int32_t j) const;
    void freeBlock(std::int32_t b);

    std::int32_t bs_;
    const std::vector<Request>& requests_;
    struct Block {
        std::int32_t ref = 0;
        bool hashed = false;
        std::uint64_t hash = 0;
    };
    std::vector<Block> blocks_;
    std::list<std::int32_t> queue_;
    std::map<std::uint64_t, std::vector<std::int32_t>> cached_;
    std::vector<std::vector<std::int32_t>> tables_;
    std::vector<std::int32_t> hashed_; // per request: leading blocks registered or found
    std::int64_t evictions_ = 0;
};

} // namespace kairos::oracle
