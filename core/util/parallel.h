#pragma once
// Runs f(0) .. f(n - 1) on `threads` threads (0: every core), each index once, in no
// particular order; the first exception any call throws stops the others taking new
// indices and is rethrown here once all have stopped. The one pool of the Qt-free core
// (sweeps, capacity searches, reproduce's experiments), so its rules live in one place.
#include "util/input_error.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace kairos {

// A thread that cannot be started (too little address space for its stack, a process
// limit) is an error, not an abort: the threads already running stop taking indices and
// are joined, then InputError names --threads (exit 2 in the programs). Never more threads
// than indices, nor than kMaxThreads.
constexpr unsigned kMaxThreads = 1024;

// The threads parallelFor(n, threads, ...) runs on.
inline unsigned parallelThreads(std::size_t n, int threads) {
    const unsigned k = threads > 0 ? static_cast<unsigned>(threads)
                                   : std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(
        std::min<std::size_t>({k, kMaxThreads, std::max<std::size_t>(1, n)}));
}

template <class F> void parallelFor(std::size_t n, int threads, F&& f) {
    const unsigned k = parallelThreads(n, threads);
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex m;
    std::vector<std::thread> pool;
    pool.reserve(k);
    std::string start_failure;
    for (unsigned t = 0; t < k; ++t) {
        try {
            pool.emplace_back([&] {
                try {
                    for (std::size_t i = next++; i < n; i = next++) f(i);
                } catch (...) {
                    std::lock_guard<std::mutex> lock(m);
                    if (!failure) failure = std::current_exception();
                    next = n;
                }
            });
        } catch (const std::system_error& e) {
            next = n; // the started ones finish the index they hold and stop
            start_failure = "cannot start thread " + std::to_string(t + 1) + " of " +
                            std::to_string(k) + ": " + e.what() +
                            " (ask for fewer threads, or allow the process more memory)";
            break;
        }
    }
    for (auto& t : pool) t.join();
    if (!start_failure.empty()) throw InputError("--threads", 0, "", start_failure);
    if (failure) std::rethrow_exception(failure);
}

} // namespace kairos
