#include <forkunion.hpp> // `flat_pool_t`
#include "usage.h"       // `forkunion_usage`: `--help`, unknown arguments refused
#include <cstdio>        // `stderr`
#include <cstdlib>       // `EXIT_SUCCESS`

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nFire-and-forget dispatches whose guards join on destruction. Reads no environment variable.\n");
    alignas(fu::default_alignment_k) fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) {
        std::fprintf(stderr, "Failed to fork the threads\n");
        return EXIT_FAILURE;
    }

    // Dispatch a callback to each thread in the pool
    pool.for_threads([&](std::size_t thread_index) noexcept {
        std::printf("Hello from thread # %zu (of %zu)\n", thread_index + 1, pool.threads_count());
    });

    // Execute 1000 tasks in parallel, expecting them to have comparable runtimes
    // and mostly co-locating subsequent tasks on the same thread. Analogous to:
    //
    //      #pragma omp parallel for schedule(static)
    //      for (int i = 0; i < 1000; ++i) { ... }
    //
    // You can also think about it as a shortcut for the `for_slices` + `for`.
    pool.for_n(1000,
               [](std::size_t task_index) noexcept { std::printf("Running task %zu of 1000\n", task_index + 1); });
    pool.for_slices(1000, [](std::size_t first_index, std::size_t count) noexcept {
        std::printf("Running slice [%zu, %zu)\n", first_index, first_index + count);
    });

    // Like `for_n`, but each thread greedily steals tasks, without waiting for
    // the others or expecting individual tasks to have same runtimes. Analogous to:
    //
    //      #pragma omp parallel for schedule(dynamic, 1)
    //      for (int i = 0; i < 3; ++i) { ... }
    pool.for_n_dynamic(
        3, [](std::size_t task_index) noexcept { std::printf("Running dynamic task %zu of 3\n", task_index + 1); });
    return EXIT_SUCCESS;
}
