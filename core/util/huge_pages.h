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
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>
#ifdef __linux__
#include <sys/mman.h>
#endif

namespace kairos {

inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

// KAIROS_NO_HUGE_PAGES=1 in the environment: no advice (to measure what it gains).
inline bool hugePagesOff() {
    static const bool off = [] {
        const char* e = std::getenv("KAIROS_NO_HUGE_PAGES");
        return e && *e && *e != '0';
    }();
    return off;
}

// `bytes` rounded up to whole 2 MiB pages, 2 MiB-aligned, advised as huge pages; the
// rounded size in `*size`. Freed with std::free.
inline void* allocateHugePages(std::size_t bytes, std::size_t* size) {
    *size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* p = std::aligned_alloc(kHugePageBytes, *size);
    if (!p) throw std::bad_alloc();
#ifdef __linux__
    if (!hugePagesOff()) (void)::madvise(p, *size, MADV_HUGEPAGE);
#endif
    return p;
}

template <class T> struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() noexcept = default;
    template <class U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        if (bytes < kHugePageBytes) return static_cast<T*>(::operator new(bytes));
        std::size_t size = 0;
        return static_cast<T*>(allocateHugePages(bytes, &size));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < kHugePageBytes)
            ::operator delete(p);
        else
            std::free(p);
    }
    template <class U> bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
    template <class U> bool operator!=(const HugePageAllocator<U>&) const noexcept { return false; }
};

// A vector whose large buffers are huge pages.
template <class T> using HugeVector = std::vector<T, HugePageAllocator<T>>;

// Advises the 2 MiB pages inside an ordinary vector's buffer (after reserve or resize; a
// later reallocation loses the advice) as huge pages: for arrays of millions of elements
// whose type is shared too widely to take an allocator (a run log's events, a workload's
// requests). Buffers under 4 MiB are left alone. A hint, as above.
inline void adviseHugePages(const void* data, std::size_t bytes) {
#ifdef __linux__
    const auto begin = reinterpret_cast<std::uintptr_t>(data);
    if (bytes < 2 * kHugePageBytes) return;
    const std::uintptr_t lo = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    const std::uintptr_t hi = (begin + bytes) / kHugePageBytes * kHugePageBytes;
    if (hi > lo && !hugePagesOff())
        (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}
template <class T, class A> void adviseHugePages(std::vector<T, A>& v) {
    adviseHugePages(v.data(), v.capacity() * sizeof(T));
}

// n copies of `value`, in a buffer advised before it is written.
template <class T> std::vector<T> hugeFilled(std::size_t n, const T& value) {
    std::vector<T> v;
    v.reserve(n);
    adviseHugePages(v);
    v.assign(n, value);
    return v;
}

} // namespace kairos
