// The split dispatch: dispatch without blocking, overlap the caller's own work, poll, join.
#include <atomic>  // `std::atomic`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nDispatches without blocking, overlaps the caller's work, polls, joins. Reads no environment variable.\n");
    // Caller-exclusive: 2 workers run every slice; the caller only submits, polls and joins.
    fu::flat_pool_t pool;
    if (!pool.spawn(2, fu::caller_exclusive_k)) return EXIT_FAILURE;

    std::atomic<std::size_t> visits{0};
    auto work = [&](std::size_t) noexcept { visits.fetch_add(1, std::memory_order_relaxed); };
    fu::flat_pool_t::generation_t const generation = pool.unsafe_for_threads(work); // `work` must outlive it
    if (generation == 0) return EXIT_FAILURE; // refused: contended or not spawned; generations are odd

    std::size_t own_work = 0;
    while (!pool.is_complete(generation)) ++own_work; // overlap anything here
    pool.unsafe_join(generation);                     // returns at once: already complete

    // A second dispatch while one is in flight is refused, never queued and never blocking.
    auto const held = pool.unsafe_for_threads(work);
    auto refused = pool.for_n(10, [](std::size_t) noexcept {});
    std::printf("second dispatch: %s\n", refused.status().name()); // "contended" unless `held` already finished
    pool.unsafe_join(held);

    std::printf("%zu visits, %zu polls of own work\n", visits.load(), own_work);
    return visits.load() == 4 ? EXIT_SUCCESS : EXIT_FAILURE;
}
