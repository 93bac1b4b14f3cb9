/**
 *  @file   examples/c/fabric.c
 *  @brief  The memory fabric as measured: latency, bandwidth, distance and level of every compute -> memory edge,
 *          harvested through a pool's pinned threads.
 */
#include <stdio.h> /* `printf` */

#include <forkunion.h>
#include "usage.h" /* `forkunion_usage`: `--help`, unknown arguments refused */

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0, "\nThe measured fabric through the C API. Reads no environment variable.\n");
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("fabric", fu_capabilities_all_k);
    fu_fabric_t fabric = fu_fabric_new();
    fu_status_t status;
    size_t compute, memory;
    if (!topology || !pool || !fabric) return 1;
    if (fu_pool_spawn(topology, pool, fu_logical_cores_count(topology), fu_caller_inclusive_k) != fu_success_k)
        return 1;

    /* 16 MiB buffers keep this example short; 0 sizes them from the caches (64 MiB to 1 GiB) for real figures. */
    status = fu_fabric_harvest(fabric, topology, pool, 16u << 20);
    if (status != fu_success_k) return printf("fabric: %s\n", fu_status_to_string(status)), 1;
    for (compute = 0; compute != fu_compute_domains_count(topology); ++compute)
        for (memory = 0; memory != fu_memory_domains_count(topology); ++memory)
            printf("compute %zu -> memory %zu: %.0f ns, %.1f GB/s, distance %zu, memory level %zu of %zu\n", compute,
                   memory, fu_fabric_memory_latency_ns(fabric, compute, memory),
                   fu_fabric_memory_bandwidth(fabric, compute, memory) * 1e-9,
                   fu_fabric_memory_distance(fabric, compute, memory), fu_fabric_memory_level_in(fabric, memory),
                   fu_fabric_memory_levels_count(fabric));

    fu_fabric_delete(fabric);
    fu_pool_delete(pool);
    fu_topology_delete(topology);
    return 0;
}
