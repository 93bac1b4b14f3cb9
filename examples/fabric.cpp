// The measured fabric: latency, bandwidth and distance of every compute->memory edge, and the memory levels,
// harvested through a pool whose threads are pinned to each compute domain in turn.
//
//   forkunion_example_fabric           the default harvest: buffers of 4x the last-level cache (64 MiB to 1 GiB)
//   forkunion_example_fabric --quick   64 MiB buffers and 1 ms windows (what its test runs)
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <cstring> // `std::strcmp`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "--quick", 0,
                    "[--quick]\nThe measured fabric of this machine; --quick: 64 MiB buffers and 1 ms windows.\n"
                    "Reads no environment variable.\n");
    bool const quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    fu::machine_topology_t topology;
    if (!topology.try_harvest()) std::puts("no topology: one domain of all allowed cores");

    // One thread per allowed core: each compute domain gets as many readers as it has cores.
    fu::flat_pool_t pool;
    if (!pool.spawn(topology.allowed_cores_count())) return EXIT_FAILURE;

    fu::fabric_options_t const options = quick ? fu::fabric_options_t::quick() : fu::fabric_options_t{};
    fu::fabric_t fabric; // every query reads 0 until a harvest succeeds
    if (fu::status_t const status = fabric.try_harvest(topology, pool, options); !status)
        return std::fprintf(stderr, "fabric refused: %s\n", status.name()), EXIT_FAILURE;
    if (fabric.unreachable_edges_count()) // the harvest measured what it could: the rest reads 0
        std::printf("%zu edges unreachable (%zu pins, %zu buffers refused)\n", fabric.unreachable_edges_count(),
                    fabric.pinning_refusals_count(), fabric.binding_refusals_count());

    for (std::size_t c = 0; c != topology.compute_domains_count(); ++c)
        for (std::size_t m = 0; m != topology.memory_domains_count(); ++m)
            std::printf("compute %zu -> memory %zu (node %zu): %.1f ns, %.2f GB/s with %zu readers, distance %zu\n", c,
                        m, topology.memory_node_id(m), fabric.memory_latency_ns(c, m),
                        fabric.memory_bandwidth_bytes_per_second(c, m) / 1e9, fabric.edge(c, m).readers,
                        fabric.memory_distance(c, m));

    // Memory levels rank the media, 0 = fastest; a domain no thread reached reads `memory_levels_count()`.
    for (std::size_t m = 0; m != topology.memory_domains_count(); ++m)
        if (std::size_t const level = fabric.memory_level_in(m); level < fabric.memory_levels_count())
            std::printf("memory %zu: level %zu of %zu\n", m, level, fabric.memory_levels_count());
        else
            std::printf("memory %zu: unreachable, no level\n", m);

    // Where should compute domain 0 keep its hottest data? On the fastest level it reaches, nearest first.
    std::size_t best = topology.local_memory_of(0);
    for (std::size_t m = 0; m != topology.memory_domains_count(); ++m)
        if (fabric.memory_distance(0, m) && (fabric.memory_level_in(m) < fabric.memory_level_in(best) ||
                                             (fabric.memory_level_in(m) == fabric.memory_level_in(best) &&
                                              fabric.memory_distance(0, m) < fabric.memory_distance(0, best))))
            best = m;
    std::printf("compute domain 0 keeps its hot data on memory domain %zu (node %zu)\n", best,
                topology.memory_node_id(best));
    return EXIT_SUCCESS;
}
