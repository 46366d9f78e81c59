#pragma once
// Runs f(0) .. f(n - 1) on `threads` threads (0: every core), each index once, in no
// particular order; the first exception any call throws stops the others taking new
// indices and is rethrown here once all have stopped. The one pool of the Qt-free core
// (sweeps, capacity searches, reproduce's experiments), so its rules live in one place.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kairos {

template <class F> void parallelFor(std::size_t n, int threads, F&& f) {
    unsigned k = threads > 0 ? static_cast<unsigned>(threads)
                             : std::max(1u, std::thread::hardware_concurrency());
    k = std::min<unsigned>(k, static_cast<unsigned>(std::max<std::size_t>(1, n)));
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    std::mutex m;
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < k; ++t)
        pool.emplace_back([&] {
            try {
                for (std::size_t i = next++; i < n; i = next++) f(i);
            } catch (...) {
                std::lock_guard<std::mutex> lock(m);
                if (!failure) failure = std::current_exception();
                next = n;
            }
        });
    for (auto& t : pool) t.join();
    if (failure) std::rethrow_exception(failure);
}

} // namespace kairos
