#include "prefix_cache_oracle.h"

#include <algorithm>
#include <stdexcept>

namespace kairos::oracle {

std::int32_t BlockMap::find(std::uint64_t key) const {
    if (size_ == 0) return -1;
    for (std::size_t i = key & mask_;; i = (i + 1) & mask_) {
        if (vals_[i] < 0) return -1;
        if (keys_[i] == key) return vals_[i];
    }
}

void BlockMap::assign(std::uint64_t key, std::int32_t v) {
    if (2 * (size_ + 1) > keys_.size()) grow();
    std::size_t i = key & mask_;
    for (; vals_[i] >= 0; i = (i + 1) & mask_)
        if (keys_[i] == key) {
            vals_[i] = v;
            return;
        }
    keys_[i] = key;
    vals_[i] = v;
    ++size_;
}

void BlockMap::clear() {
    std::fill(vals_.begin(), vals_.end(), -1);
    size_ = 0;
}

void BlockMap::grow() {
    std::vector<std::uint64_t> keys;
    std::vector<std::int32_t> vals;
    keys.swap(keys_);
    vals.swap(vals_);
    const std::size_t n = std::max<std::size_t>(64, 2 * keys.size());
    keys_.assign(n, 0);
    vals_.assign(n, -1);
    mask_ = n - 1;
    size_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
        if (vals[i] >= 0) assign(keys[i], vals[i]);
}

BlockHashes::BlockHashes(const Request& r, std::uint64_t own_salt, std::int32_t block_size)
    : r_(r), own_(own_salt), bs_(block_size) {
    for (const PrefixSpan& s : r.prefix) covered_ += s.tokens;
}

std::uint64_t BlockHashes::at(std::int64_t j) {
    const std::int64_t last_token = (j + 1) * bs_ - 1;
    if (last_token >= covered_) return mixHash(own_, std::uint64_t(j));
    if (j < last_) { // walking backwards: start the chain again
        k_ = 0;
        end_ = 0;
        chain_ = 0;
    }
    last_ = j;
    while (end_ <= last_token) {
        const PrefixSpan& s = r_.prefix[k_++];
        chain_ = mixHash(mixHash(chain_, s.id), std::uint64_t(s.tokens));
        end_ += s.tokens;
    }
    return mixHash(chain_, std::uint64_t(j));
}

BlockPoolCache::BlockPoolCache(std::int32_t block_size, std::int64_t capacity_blocks,
                               std::size_t requests)
    : bs_(block_size), capacity_(capacity_blocks), table_(requests), published_(requests, 0) {
    if (block_size < 2) throw std::invalid_argument("prefix caching needs blocks of >= 2 tokens");
}

BlockPoolCache::Hit BlockPoolCache::probe(ReqId id, const Request& r, std::int64_t context) const {
    Hit h;
    if (cached_count_ == 0 || context < 2) return h;
    const std::int64_t most = (context - 1) / bs_;
    BlockHashes hashes(r, salt(id), bs_);
    for (std::int64_t j = 0; j < most; ++j) {
        const std::int32_t b = lookup(hashes.at(j));
        if (b < 0) break;
        ++h.blocks;
        if (ref_[static_cast<std::size_t>(b)] > 0) ++h.referenced;
    }
    return h;
}

std::int64_t BlockPoolCache::exclusiveBlocks(ReqId id) const {
    std::int64_t n = 0;
    for (std::int32_t b : table_[static_cast<std::size_t>(id)])
        n += ref_[static_cast<std::size_t>(b)] == 1;
    return n;
}

void BlockPoolCache::unlinkFree(std::int32_t b) {
    const auto i = static_cast<std::size_t>(b);
    const std::int32_t p = prev_[i], n = next_[i];
    (p >= 0 ? next_[static_cast<std::size_t>(p)] : head_) = n;
    (n >= 0 ? prev_[static_cast<std::size_t>(n)] : tail_) = p;
    prev_[i] = next_[i] = -1;
}

void BlockPoolCache::pushFree(std::int32_t b) {
    const auto i = static_cast<std::size_t>(b);
    prev_[i] = tail_;
    next_[i] = -1;
    (tail_ >= 0 ? next_[static_cast<std::size_t>(tail_)] : head_) = b;
    tail_ = b;
}

std::int32_t BlockPoolCache::allocate() {
    std::int32_t b;
    if (static_cast<std::int64_t>(hash_.size()) < capacity_) {
        // A block never used yet (vLLM's free queue holds them ahead of any freed block).
        b = static_cast<std::int32_t>(hash_.size());
        hash_.push_back(0);
        ref_.push_back(0);
        prev_.push_back(-1);
        next_.push_back(-1);
        cached_.push_back(0);
    } else {
        b = head_;
        if (b < 0) throw std::logic_error("prefix cache: every KV block is referenced");
        unlinkFree(b);
        const auto i = static_cast<std::size_t>(b);
        if (cached_[i]) {
            cached_[i] = 0; // its map entry is stale from now
            --cached_count_;
            ++version_;
            --idle_cached_;
            ++evictions_;
        }
    }
    ref_[static_cast<std::size_t>(b)] = 1;
    ++referenced_;
    return b;
}

void BlockPoolCache::unref(std::int32_t b) {
    const auto i = static_cast<std::size_t>(b);
    if (--ref_[i] > 0) return;
    --referenced_;
    if (cached_[i]) {
        ++idle_cached_;
        ++version_;
    }
    pushFree(b);
}

void BlockPoolCache::admit(ReqId id, const Request& r, std::int32_t hit_blocks) {
    auto& t = table_[static_cast<std::size_t>(id)];
    if (!t.empty()) throw std::logic_error("prefix cache: admitted twice");
    // Every block it can come to hold (what it may grow to), allocated once.
    t.reserve(
        static_cast<std::size_t>((std::int64_t(r.prompt_tokens) + r.output_tokens + bs_) / bs_));
    BlockHashes hashes(r, salt(id), bs_);
    for (std::int32_t j = 0; j < hit_blocks; ++j) {
        const std::int32_t b = lookup(hashes.at(j));
        if (b < 0) throw std::logic_error("prefix cache: hit block not cached");
        const auto i = static_cast<std::size_t>(b);
        if (ref_[i]++ == 0) {
            unlinkFree(b);
            --idle_cached_;
            ++referenced_;
            ++version_;
        }
        t.push_back(b);
    }
    published_[static_cast<std::size_t>(id)] = hit_blocks;
}

void BlockPoolCache::resize(ReqId id, std::int64_t tokens) {
    auto& t = table_[static_cast<std::size_t>(id)];
    const auto want = static_cast<std::size_t>((tokens + bs_ - 1) / bs_);
    while (t.size() < want) t.push_back(allocate());
    while (t.size() > want) {
        unref(t.back());
        t.pop_back();
    }
    auto& p = published_[static_cast<std::size_t>(id)];
    p = std::min<std::int32_t>(p, static_cast<std::int32_t>(t.size()));
}

void BlockPoolCache::publish(ReqId id, const Request& r, std::int64_t valid) {
    auto& t = table_[static_cast<std::size_t>(id)];
    auto& p = published_[static_cast<std::size_t>(id)];
    const auto full = std::min<std::int64_t>(valid / bs_, static_cast<std::int64_t>(t.size()));
    if (p >= full) return;
    BlockHashes hashes(r, salt(id), bs_);
    for (std::int64_t j = p; j < full; ++j) {
        const std::uint64_t h = hashes.at(j);
        const std::int32_t b = t[static_cast<std::size_t>(j)];
        const auto i = static_cast<std::size_t>(b);
        if (cached_[i] || lookup(h) >= 0) continue; // cached, or computed twice
        map_.assign(h, b);
        hash_[i] = h;
        cached_[i] = 1;
        ++cached_count_;
        ++version_;
    }
    p = static_cast<std::int32_t>(full);
    if (map_.size() > 4 * static_cast<std::size_t>(cached_count_) + 4096) {
        // Mostly stale entries: rebuild from the blocks that are cached.
        map_.clear();
        for (std::size_t b = 0; b < cached_.size(); ++b)
            if (cached_[b]) map_.assign(hash_[b], static_cast<std::int32_t>(b));
    }
}

void BlockPoolCache::release(ReqId id, const Request& r, std::int64_t valid) {
    if (valid > 0) publish(id, r, valid);
    auto& t = table_[static_cast<std::size_t>(id)];
    for (auto it = t.rbegin(); it != t.rend(); ++it) unref(*it);
    std::vector<std::int32_t>().swap(t); // its reservation too
    published_[static_cast<std::size_t>(id)] = 0;
}

} // namespace kairos::oracle
