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
// Hand-written: a call to mallopt, which no library wraps.
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kairos {

inline void keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
    (void)::mallopt(M_MMAP_THRESHOLD, 32 << 20);
    (void)::mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

} // namespace kairos
