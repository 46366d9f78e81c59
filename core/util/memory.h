#pragma once
// What this process may still allocate, and what it has used: the memory side of "nothing
// ends in bad_alloc". A command states the memory a piece of work will need before it starts
// (run/memory_estimate.h) and refuses what exceeds the budget read here:
//   - RLIMIT_AS (ulimit -v, prlimit --as), less the address space already mapped: what makes
//     malloc fail and std::bad_alloc be thrown;
//   - RLIMIT_DATA, less the data segment already in use;
//   - the memory cgroup's limit (cgroup v2 memory.max, v1 memory.limit_in_bytes), less its
//     current use: past it the kernel's OOM killer ends the process without a word;
//   - MemAvailable of /proc/meminfo: what the machine can give without swapping;
//   - the user's --max-memory, when given: the budget is then the smallest of it and the
//     hard limits above (not MemAvailable: the user may know better, with swap).
// Read by hand from /proc and getrlimit(2): no library reports these together.
#include <cstdint>
#include <string>

namespace kairos {

struct MemoryBudget {
    double bytes = 0;   // what may still be allocated (infinity: nothing limits it)
    std::string source; // what sets it: "RLIMIT_AS (4 GiB, 0.3 GiB in use)", "--max-memory 2 GiB"
};

// The budget of this process: the hard limits, and --max-memory when the command line set
// it (setMaxMemory), else the machine's available memory.
MemoryBudget memoryBudget();
// --max-memory: `bytes` > 0 is the user's budget for every piece of work of this process;
// 0 goes back to the machine's.
void setMaxMemory(double bytes);

// Throws std::invalid_argument when `need` bytes exceed memoryBudget(): "`what` needs about
// N; M is available (its source): `remedy`". The one refusal every estimate ends in.
void checkMemoryNeed(double need, const std::string& what, const std::string& remedy);

// This process's use (bytes), from /proc/self/status: VmSize now, VmPeak, VmHWM (peak RSS).
struct MemoryUse {
    std::uint64_t vm_now = 0, vm_peak = 0, rss_peak = 0;
};
MemoryUse memoryUse();

// "512 MiB", "3.75 GiB" (binary units, three significant digits).
std::string bytesText(double bytes);

// --max-memory's value: a number of bytes with an optional unit K, M, G, T (binary: 1024)
// and an optional "B" or "iB" ("4G", "512MiB", "1.5 GiB", "2000000000"). Throws
// std::invalid_argument naming the text when it is not one, or is below 1 MiB or above 1 PiB.
double parseMemorySize(const std::string& text);

} // namespace kairos
