// One manager thread hands a multi-step job to thread 0 of a caller-exclusive pool, which forks the rest of
// the pool as it goes; the manager only polls a status word that the job stores at its end.
#include <atomic>  // `std::atomic`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <thread>  // `std::this_thread::yield`
#include <vector>  // `std::vector`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nA manager thread polls a job that a caller-exclusive pool runs. Reads no environment variable.\n");
    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count() + 1, fu::caller_exclusive_k)) return EXIT_FAILURE;

    std::vector<double> values(1 << 16, 1.0);
    std::atomic<int> job_status{0}; // 0 = running, 1 = done, -1 = a step was refused

    auto job = [&](std::size_t thread) noexcept {
        if (thread != 0) return; // everyone else just returns, making room for thread 0's forks
        for (int step = 0; step != 3; ++step) {
            // A fork from thread 0 of an exclusive pool waits for the enclosing slices, runs on all threads,
            // and returns complete.
            auto guard = pool.for_n(values.size(), [&](std::size_t i) noexcept { values[i] *= 2; });
            if (!guard) job_status.store(-1, std::memory_order_release);
        }
        if (job_status.load(std::memory_order_relaxed) == 0) job_status.store(1, std::memory_order_release);
    };
    auto const generation = pool.unsafe_for_threads(job);
    while (job_status.load(std::memory_order_acquire) == 0) std::this_thread::yield(); // or serve other pools
    pool.unsafe_join(generation);

    std::printf("job status %d, values[0] = %.0f\n", job_status.load(), values[0]);
    return job_status.load() == 1 && values[0] == 8.0 && values.back() == 8.0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
