#pragma once
// Keeps freed memory in the process for the next allocation, for a program that runs the
// same large job again and again (the window re-simulates on every slider move). glibc
// returns a freed block over its mmap threshold to the kernel at once, and trims the heap's
// top beyond 128 KiB; the next run faults the same pages back in, and on this project's VM
// a 4 KiB fault costs about 9 us (util/huge_pages.h). A 20,000-request re-run spent more
// than half its time in those faults: simulate 68 ms with glibc's defaults, 28 ms with
// these (tst_workbench's sliderToRepaint20k, overloaded row, same build and machine).
//
// Blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap, and up to
// 512 MiB freed at its top stays there. Larger arrays are still mapped and unmapped (they
// are advised as huge pages instead). A hint where the C library is not glibc: nothing.
//
// One heap for every thread (M_ARENA_MAX 1). A thread's own arena lives in heaps of at most
// 64 MiB, and glibc unmaps such a heap whenever all of it is freed, whatever the trim
// threshold: the window's simulation, layout and summary threads freed whole heaps between
// runs and faulted them in again (up to 900 faults, 8 ms, in one move). The same benchmark:
// 32,900 page faults with per-thread arenas, 23,900 with one; three runs each, alternated:
// p95 56-62 -> 49-57 ms, median 36.1 -> 37.9 ms (the threads share the heap's lock).
// Hand-written: calls to mallopt, which no library wraps.
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kairos {

inline void keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
    (void)::mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)::mallopt(M_TRIM_THRESHOLD, 512 << 20);
    (void)::mallopt(M_ARENA_MAX, 1);
#endif
}

} // namespace kairos
