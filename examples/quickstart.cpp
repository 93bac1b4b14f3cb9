// Quick start: a pool on every allowed core, the four dispatch forms, and their serial equivalents.
#include <atomic>  // `std::atomic`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <vector>  // `std::vector`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nThe four dispatch forms next to their serial loops. Reads no environment variable.\n");
    fu::flat_pool_t pool;
    if (fu::status_t status = pool.spawn(fu::allowed_cores_count()); !status) {
        std::fprintf(stderr, "spawn failed: %s\n", status.name());
        return EXIT_FAILURE;
    }

    // for (t = 0; t < threads; ++t) f(t);  The guard joins when it goes out of scope or on `join()`.
    if (!pool.for_threads([&](std::size_t thread) noexcept { std::printf("thread %zu is up\n", thread); }).join())
        return EXIT_FAILURE;

    // #pragma omp parallel for schedule(static): one contiguous block per thread.
    std::vector<double> squares(1000);
    if (!pool.for_n(squares.size(), [&](std::size_t i) noexcept { squares[i] = double(i) * double(i); }).join())
        return EXIT_FAILURE;

    // #pragma omp parallel for schedule(dynamic, 1): uneven tasks, idle threads steal single tasks.
    std::atomic<std::size_t> primes{0};
    if (!pool.for_n_dynamic(10000,
                            [&](std::size_t n) noexcept {
                                bool prime = n > 1;
                                for (std::size_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
                                if (prime) primes.fetch_add(1, std::memory_order_relaxed);
                            })
             .join())
        return EXIT_FAILURE;

    // One call per thread with its whole block: hoist per-thread setup out of the inner loop.
    std::atomic<double> total{0};
    if (!pool.for_slices(squares.size(),
                         [&](std::size_t first, std::size_t count) noexcept {
                             double partial = 0;
                             for (std::size_t i = first; i != first + count; ++i) partial += squares[i];
                             total.fetch_add(partial, std::memory_order_relaxed);
                         })
             .join())
        return EXIT_FAILURE;

    // Callbacks may take a prong instead of an index: task, thread and compute domain.
    if (!pool.for_n(4,
                    [](fu::flat_pool_t::prong_t prong) noexcept {
                        std::printf("task %zu ran on thread %zu\n", prong.task, prong.thread);
                    })
             .join())
        return EXIT_FAILURE;

    std::printf("%zu primes below 10000, sum of squares below 1000 = %.0f\n", primes.load(), total.load());
    return primes.load() == 1229 && total.load() == 332833500.0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
