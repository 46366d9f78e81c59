#include "prefix_cache_oracle.h"

#include "sim/prefix_cache.h"

#include <algorithm>
#include <stdexcept>

namespace kairos::oracle {

VllmBlockPool::VllmBlockPool(std::int32_t block_size, std::int64_t capacity_blocks,
                             const std::vector<Request>& requests)
    : bs_(block_size), requests_(requests), blocks_(static_cast<std::size_t>(capacity_blocks)),
      tables_(requests.size()), hashed_(requests.size(), 0) {
    for (std::int32_t b = 0; b < static_cast<std::int32_t>(capacity_blocks); ++b)
        queue_.push_back(b);
}

std::uint64_t VllmBlockPool::hashOf(ReqId id, std::int32_t j) const {
    // The same identities as PrefixLayout::build: a span's chain hash names the blocks
    // whose last token it holds; past the spans the request's own key.
    const Request& r = requests_[static_cast<std::size_t>(id)];
    std::uint64_t chain = 0;
    std::int64_t start = 0;
    const std::int64_t last = (std::int64_t(j) + 1) * bs_ - 1;
    for (const PrefixSpan& sp : r.prefix) {
        chain = mixHash(mixHash(chain, sp.id), std::uint64_t(sp.tokens));
        start += sp.tokens;
        if (last < start) return mixHash(chain, std::uint64_t(j));
    }
    return mixHash(mixHash(0x4b41495230534eULL, std::uint64_t(id)), std::uint64_t(j));
}

VllmBlockPool::Hit VllmBlockPool::probe(ReqId id, std::int64_t context) const {
    Hit hit;
    if (context < 2) return hit;
    const auto most = static_cast<std::int32_t>((context - 1) / bs_);
    for (std::int32_t j = 0; j < most; ++j) {
        const auto it = cached_.find(hashOf(id, j));
        if (it == cached_.end()) break;
        ++hit.blocks;
        hit.referenced += blocks_[static_cast<std::size_t>(it->second.front())].ref > 0;
    }
    return hit;
}

void VllmBlockPool::admit(ReqId id, std::int32_t hit_blocks) {
    auto& t = tables_[static_cast<std::size_t>(id)];
    for (std::int32_t j = 0; j < hit_blocks; ++j) {
        const std::int32_t b = cached_.at(hashOf(id, j)).front();
        if (blocks_[static_cast<std::size_t>(b)].ref++ == 0) queue_.remove(b);
        t.push_back(b);
    }
    hashed_[static_cast<std::size_t>(id)] = hit_blocks;
}

void VllmBlockPool::extend(ReqId id, std::int32_t hit_blocks) {
    auto& t = tables_[static_cast<std::size_t>(id)];
    for (std::int32_t j = hashed_[static_cast<std::size_t>(id)]; j < hit_blocks; ++j) {
        const std::int32_t b = cached_.at(hashOf(id, j)).front();
        if (blocks_[static_cast<std::size_t>(b)].ref++ == 0) queue_.remove(b);
        freeBlock(t[static_cast<std::size_t>(j)]);
        t[static_cast<std::size_t>(j)] = b;
    }
    hashed_[static_cast<std::size_t>(id)] =
        std::max(hashed_[static_cast<std::size_t>(id)], hit_blocks);
}

void VllmBlockPool::freeBlock(std::int32_t b) {
    Block& blk = blocks_[static_cast<std::size_t>(b)];
    if (--blk.ref > 0) return;
    if (blk.hashed)
        queue_.push_back(b);
    else
        queue_.push_front(b);
}

void VllmBlockPool::resize(ReqId id, std::int64_t tokens) {
    auto& t = tables_[static_cast<std::size_t>(id)];
    const auto want = static_cast<std::size_t>((tokens + bs_ - 1) / bs_);
    while (t.size() < want) {
        if (queue_.empty()) throw std::logic_error("oracle: no free block");
        const std::int32_t b = queue_.front();
        queue_.pop_front();
        Block& blk = blocks_[static_cast<std::size_t>(b)];
        if (blk.hashed) { // evicted: it leaves its hash's blocks
            auto& v = cached_[blk.hash];
            v.erase(std::find(v.begin(), v.end(), b));
            if (v.empty()) cached_.erase(blk.hash);
            blk.hashed = false;
            ++evictions_;
        }
        blk.ref = 1;
        t.push_back(b);
    }
    while (t.size() > want) {
        freeBlock(t.back());
        t.pop_back();
    }
    auto& h = hashed_[static_cast<std::size_t>(id)];
    h = std::min<std::int32_t>(h, static_cast<std::int32_t>(want));
}

void VllmBlockPool::publish(ReqId id, std::int64_t valid) {
    auto& t = tables_[static_cast<std::size_t>(id)];
    auto& h = hashed_[static_cast<std::size_t>(id)];
    const auto full = static_cast<std::int32_t>(std::min<std::int64_t>(valid / bs_, t.size()));
    for (std::int32_t j = h; j < full; ++j) {
        Block& blk = blocks_[static_cast<std::size_t>(t[static_cast<std::size_t>(j)])];
        if (blk.hashed) continue;
        blk.hashed = true;
        blk.hash = hashOf(id, j);
        cached_[blk.hash].push_back(t[static_cast<std::size_t>(j)]);
    }
    h = std::max(h, full);
}

void VllmBlockPool::release(ReqId id, std::int64_t valid) {
    if (valid > 0) publish(id, valid);
    auto& t = tables_[static_cast<std::size_t>(id)];
    for (auto it = t.rbegin(); it != t.rend(); ++it) freeBlock(*it);
    t.clear();
    hashed_[static_cast<std::size_t>(id)] = 0;
}

std::int64_t VllmBlockPool::referencedBlocks() const {
    return std::count_if(blocks_.begin(), blocks_.end(), [](const Block& b) { return b.ref > 0; });
}

std::int64_t VllmBlockPool::idleCachedBlocks() const {
    return std::count_if(blocks_.begin(), blocks_.end(),
                         [](const Block& b) { return b.ref == 0 && b.hashed; });
}

std::int64_t VllmBlockPool::unusedBlocks() const {
    return std::count_if(blocks_.begin(), blocks_.end(),
                         [](const Block& b) { return b.ref == 0 && !b.hashed; });
}

std::int64_t VllmBlockPool::exclusiveBlocks(ReqId id) const {
    const auto& t = tables_[static_cast<std::size_t>(id)];
    return std::count_if(t.begin(), t.end(), [&](std::int32_t b) {
        return blocks_[static_cast<std::size_t>(b)].ref == 1;
    });
}

} // namespace kairos::oracle
