#include "model/compact.h"

#include <array>
#include <atomic>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace kairos {

namespace {
// The label table: chunks of 1,024 strings, published through atomic pointers so that
// str() reads without a lock; the index (text -> label) is used under the lock only.
constexpr std::uint32_t kChunkBits = 10;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::uint32_t kChunks = 1u << 14; // 2^24 labels

struct LabelTable {
    std::mutex mutex;
    std::unordered_map<std::string_view, std::uint32_t> index; // views into the chunks
    std::array<std::atomic<std::string*>, kChunks> chunks{};
    std::uint32_t next = 1; // 0 is the empty label
};

// Never destroyed: labels outlive every static that may hold one.
LabelTable& labelTable() {
    static LabelTable* t = new LabelTable;
    return *t;
}

const std::string& emptyLabel() {
    static const std::string* e = new std::string;
    return *e;
}
} // namespace

ClassLabel::ClassLabel(std::string_view s) {
    if (s.empty()) return;
    LabelTable& t = labelTable();
    std::lock_guard<std::mutex> lock(t.mutex);
    if (auto it = t.index.find(s); it != t.index.end()) {
        idx_ = it->second;
        return;
    }
    if (t.next >= kChunks * kChunkSize)
        throw std::length_error("more than 16,777,215 distinct request class labels");
    const std::uint32_t idx = t.next++;
    std::string* chunk = t.chunks[idx >> kChunkBits].load(std::memory_order_relaxed);
    if (!chunk) {
        chunk = new std::string[kChunkSize];
        t.chunks[idx >> kChunkBits].store(chunk, std::memory_order_release);
    }
    std::string& slot = chunk[idx & (kChunkSize - 1)];
    slot.assign(s);
    t.index.emplace(std::string_view(slot), idx);
    idx_ = idx;
}

const std::string& ClassLabel::str() const {
    if (idx_ == 0) return emptyLabel();
    const std::string* chunk =
        labelTable().chunks[idx_ >> kChunkBits].load(std::memory_order_acquire);
    return chunk[idx_ & (kChunkSize - 1)];
}

} // namespace kairos
