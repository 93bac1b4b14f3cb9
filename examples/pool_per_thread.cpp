// Several application threads that each dispatch loops: one pool shared between them starves all but one (a
// dispatch is refused while another holds the pool, never queued), so each thread owns a pool of its share of
// the cores.
#include <algorithm> // `std::max`
#include <array>     // `std::array`
#include <atomic>    // `std::atomic`
#include <cstdio>    // `std::printf`
#include <cstdlib>   // `EXIT_FAILURE`
#include <thread>    // `std::thread`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nTwo threads dispatch 1000 loops each: first on one shared pool, then each on a pool of its own;\n"
        "prints how many dispatches the shared pool refused. Reads no environment.\n");

    constexpr std::size_t clients = 2, requests = 1000, tasks = 64;
    std::size_t const share = std::max<std::size_t>(1, fu::allowed_cores_count() / clients);
    std::array<std::atomic<std::size_t>, clients> totals{}, refused{};

    // One pool, two dispatching threads: whichever holds the pool runs; the other's dispatch is refused at once.
    fu::flat_pool_t shared;
    if (!shared.spawn(fu::allowed_cores_count())) return EXIT_FAILURE;
    auto share_one = [&](std::size_t client) {
        for (std::size_t request = 0; request != requests; ++request)
            if (!shared.for_n(tasks, [&](std::size_t) noexcept { totals[client].fetch_add(1); }).join())
                refused[client].fetch_add(1); // `contended`: ran nothing; join_or_run_on_caller() runs it serially
    };
    std::thread first_sharer(share_one, 0), second_sharer(share_one, 1);
    first_sharer.join(), second_sharer.join();
    std::printf("one shared pool: %zu and %zu of %zu dispatches refused\n", refused[0].load(), refused[1].load(),
                requests);
    shared.terminate();

    // Each application thread owns its pool: its dispatches never meet another thread's, and run side by side.
    auto serve = [&](std::size_t client) {
        fu::flat_pool_t pool; // one per thread, over its share of the cores: no other thread dispatches on it
        if (pool.spawn(share))
            for (std::size_t request = 0; request != requests; ++request)
                refused[client] += !pool.for_n(tasks, [&](std::size_t) noexcept { totals[client]++; }).join();
    };
    totals[0] = totals[1] = refused[0] = refused[1] = 0;
    std::thread first(serve, 0), second(serve, 1);
    first.join(), second.join();
    std::printf("a pool per thread (%zu threads each): %zu and %zu refused\n", share, refused[0].load(),
                refused[1].load());
    bool const all_ran = totals[0] == requests * tasks && totals[1] == requests * tasks;
    return all_ran && refused[0] == 0 && refused[1] == 0 ? 0 : EXIT_FAILURE;
}
