// NUMA memory: a vector on a chosen node, the real size of an allocation, huge pages with fallback, and arrays
// sharded or replicated over the memory domains, filled by a pool.
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <vector>  // `std::vector`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nNUMA vectors, huge pages and sharded and replicated arrays. Reads no environment variable.\n");
    // Node ids are the OS's (Linux: /sys/devices/system/node/nodeN). A real program takes them from
    // `machine_topology_t`, which every call below also accepts in place of a node list; node 0 keeps this short.
    std::vector<fu::numa_node_id_t> const nodes{0};

    // An STL container whose pages live on node 0, whichever thread touches them first.
    using floats_allocator_t = fu::domain_allocator_t<float>;
    std::vector<float, floats_allocator_t> values(1'000'000, 1.f, floats_allocator_t(nodes[0]));

    // `allocate_at_least` says what it really gave: whole pages, and which page size.
    floats_allocator_t const allocator(nodes[0]);
    auto const [pointer, count, page_bytes, status] = allocator.try_allocate_at_least(1000);
    if (!status) return std::fprintf(stderr, "node %d refused: %s\n", nodes[0], status.name()), EXIT_FAILURE;
    std::printf("asked for 1000 floats, got %zu on %zu-byte pages\n", count, page_bytes);
    allocator.deallocate(pointer, count);

    // Huge pages where reserved (echo 16 > /proc/sys/vm/nr_hugepages), base pages otherwise: `page_bytes` tells.
    fu::domain_allocator_t<char> const huge(nodes[0], fu::huge_page_2mib_k);
    auto const big = huge.try_allocate_at_least(3 << 20);
    if (!big.status) return std::fprintf(stderr, "huge allocation refused: %s\n", big.status.name()), EXIT_FAILURE;
    std::printf("3 MiB asked, %zu bytes on %s\n", big.count,
                big.page_bytes == fu::huge_page_2mib_k ? "2 MiB pages" : "base pages");
    huge.deallocate(big.ptr, big.count);

    fu::flat_pool_t pool;
    if (!pool.spawn(fu::allowed_cores_count())) return EXIT_FAILURE;

    // One shard per memory domain: shard d holds `for_n`'s block d and sits on domain d's node.
    fu::sharded_array_t<double> shards;
    if (fu::status_t const sharded = shards.try_allocate(nodes, 1'000'000); !sharded)
        return std::fprintf(stderr, "sharding refused: %s\n", sharded.name()), EXIT_FAILURE;
    if (!pool.for_n(shards.size(), [&](std::size_t i) noexcept { shards[i] = 0.5 * double(i); }).join())
        return EXIT_FAILURE;
    double sum = 0;
    for (std::size_t shard = 0; shard != shards.shards_count(); ++shard)
        for (double value : shards.shard(shard)) sum += value;

    // A full copy per memory domain: write one replica, broadcast it, read the local one.
    fu::replicated_array_t<int> lookup;
    if (fu::status_t const replicated = lookup.try_allocate(nodes, 256); !replicated)
        return std::fprintf(stderr, "replication refused: %s\n", replicated.name()), EXIT_FAILURE;
    for (std::size_t i = 0; i != lookup.size(); ++i) lookup.replica(0)[i] = int(i * i);
    lookup.broadcast(0);
    int const last = lookup.replica(lookup.replicas_count() - 1)[255];

    std::printf("%zu shards, sum %.1f; %zu replicas, last square %d\n", shards.shards_count(), sum,
                lookup.replicas_count(), last);
    return sum == 0.5 * 999'999.0 * 1'000'000.0 / 2 && last == 255 * 255 && values[999'999] == 1.f ? EXIT_SUCCESS
                                                                                                   : EXIT_FAILURE;
}
