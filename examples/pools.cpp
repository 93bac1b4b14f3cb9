// Placement-aware pools: a colocated pool on one compute domain, a distributed pool over all of them.
#include <atomic>  // `std::atomic`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <vector>  // `std::vector`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nA colocated pool on one compute domain, a distributed pool over all. Reads no environment variable.\n");
    fu::machine_topology_t topology;
    (void)topology.try_harvest(); // on failure: one domain of the allowed cores

    // One domain: threads pinned to its cores, named "forkunion:001"..., the caller's mask restored on terminate.
    fu::colocated_pool_t near;
    if (!near.spawn_on(topology, 0, topology.logical_cores_count_in(0))) return EXIT_FAILURE;
    std::atomic<std::size_t> sum{0};
    if (!near.for_n(1000, [&](std::size_t task) noexcept { sum.fetch_add(task, std::memory_order_relaxed); }).join())
        return EXIT_FAILURE;
    std::printf("colocated: %zu threads on domain 0, %zu unpinned, sum %zu\n", near.threads_count(),
                static_cast<std::size_t>(near.unpinned_threads_count()), sum.load());
    near.terminate();

    // Every domain: threads split in proportion to each domain's cores, at least one each.
    std::size_t const cores = fu::allowed_cores_count(), domains = topology.compute_domains_count();
    std::size_t const threads = cores < domains ? domains : cores; // at least one thread per domain
    fu::distributed_pool_t pool;
    if (!pool.spawn(topology, threads)) return EXIT_FAILURE;
    for (std::size_t d = 0; d != pool.compute_domains_count(); ++d)
        std::printf("domain %zu: threads %zu..%zu\n", d, static_cast<std::size_t>(pool.first_thread_in(d)),
                    static_cast<std::size_t>(pool.first_thread_in(d) + pool.threads_count_in(d) - 1));

    // Uneven tasks: each thread drains its own block, steals inside its domain, and only then across domains.
    std::vector<std::atomic<std::size_t>> runs(10'000);
    std::atomic<std::size_t> misplaced{0};
    if (!pool.for_n_dynamic(
                 runs.size(),
                 [&](fu::distributed_pool_t::prong_t prong) noexcept {
                     runs[prong.task].fetch_add(1, std::memory_order_relaxed);
                     if (pool.locate_thread_in(prong.thread, prong.compute_domain) == fu::distributed_pool_t::npos_k)
                         misplaced.fetch_add(1, std::memory_order_relaxed); // never: a prong names its thread's domain
                 })
             .join())
        return EXIT_FAILURE;
    std::size_t wrong = misplaced.load();
    for (auto const &count : runs) wrong += count.load() != 1;
    std::printf("distributed: %zu threads over %zu domains, %zu mistakes\n",
                static_cast<std::size_t>(pool.threads_count()), static_cast<std::size_t>(pool.compute_domains_count()),
                wrong);
    return sum.load() == 999 * 1000 / 2 && wrong == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
