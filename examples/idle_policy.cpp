// Idle policy: what pool threads do between dispatches, set once and kept across dispatches and respawns.
// The calls: `set_idle_policy`, `idle_policy` and the `idle_policy_t` value they take and return.
#include <atomic>  // `std::atomic`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nSets a pool's idle policy and keeps it across dispatches and respawns. Reads no environment variable.\n");
    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) return EXIT_FAILURE;
    fu::idle_policy_t const by_default = pool.idle_policy(); // adaptive: spin a short window, then park

    // A latency-critical loop: spin between dispatches (burns the cores it holds, makes no system call).
    if (!pool.set_idle_policy({fu::idle_mode_t::spin_k, 0})) return EXIT_FAILURE;
    // Sharing the machine with other threaded code: spin 200 us after each dispatch, then block in the kernel.
    if (!pool.set_idle_policy({fu::idle_mode_t::adaptive_k, 200})) return EXIT_FAILURE;
    // Long idle phases: block in the kernel until the next dispatch wakes the workers.
    if (!pool.set_idle_policy({fu::idle_mode_t::sleep_k, 0})) return EXIT_FAILURE;

    std::atomic<std::size_t> ran{0};
    pool.for_threads([&](std::size_t thread) noexcept { ran += thread == 0; }).join_or_run_on_caller();
    std::printf("default: mode %d, %llu us; now: mode %d\n", static_cast<int>(by_default.mode),
                static_cast<unsigned long long>(by_default.microseconds), static_cast<int>(pool.idle_policy().mode));
    return ran == 1 && by_default.mode == fu::idle_mode_t::adaptive_k &&
                   pool.idle_policy().mode == fu::idle_mode_t::sleep_k
               ? EXIT_SUCCESS
               : EXIT_FAILURE;
}
