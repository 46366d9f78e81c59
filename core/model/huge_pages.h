#pragma once
// An allocator for large arrays that offers their memory to the kernel as transparent huge
// pages. Hand-written because the standard library has none and glibc asks for huge pages
// only when told by an environment variable (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) read
// at process start. On this project's VM a 4 KiB page fault costs about 9 us: a 12 MB
// table written once (the prefix cache's nodes) took 25 ms in faults, and a million
// requests' 570 MB several seconds. With THP in "madvise" mode (Debian's default) an
// advised 2 MiB-aligned region faults once per 2 MiB.
//
// Allocations under 2 MiB go to operator new as usual; larger ones are 2 MiB-aligned and
// rounded up to whole 2 MiB pages (at most 2 MiB - 1 bytes wasted, under half of them).
// The advice is a hint: where the kernel refuses it (THP "never", not Linux) the memory
// is ordinary.
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace kairos {

inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

template <class T>
struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() noexcept = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugePageBytes) return static_cast<T*>(::operator new(bytes));
        const std::size_t size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
        void* p = std::aligned_alloc(kHugePageBytes, size);
        if (!p) throw std::bad_alloc();
#ifdef __linux__
        (void)::madvise(p, size, MADV_HUGEPAGE);
#endif
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < kHugePageBytes)
            ::operator delete(p);
        else
            std::free(p);
    }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const noexcept {
        return true;
    }
    template <class U>
    bool operator!=(const HugePageAllocator<U>&) const noexcept {
        return false;
    }
};

// A vector whose large buffers are huge pages.
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

} // namespace kairos
