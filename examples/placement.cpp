// Topology and thread placement: harvest the machine, walk its domains, pin and name a thread, restore it.
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "", 0,
        "\nHarvests the topology, walks its domains, pins and names a thread. Reads no environment variable.\n");
    fu::machine_topology_t topology; // before a harvest: one domain of the allowed cores
    if (!topology.try_harvest()) std::puts("nothing harvested: one domain of all allowed cores");
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d) {
        std::size_t const memory = topology.local_memory_of(d);
        std::printf("compute domain %zu: %zu cores from CPU %u, level %zu, cache %llu B, local node %zu (%llu B)\n", d,
                    topology.logical_cores_count_in(d), topology.cores_in(d)[0], topology.compute_level_in(d),
                    static_cast<unsigned long long>(topology.compute_cache_bytes_in(d)),
                    topology.memory_node_id(memory), static_cast<unsigned long long>(topology.volume_ram_in(memory)));
    }

    fu::saved_affinity_t saved; // this thread and its mask, to put back later
    if (!saved.try_save()) std::puts("cannot read this thread's affinity");
    if (fu::status_t status = fu::try_pin_current_thread(topology.cores_in(0)); !status)
        std::printf("pinning refused: %s\n", status.name()); // counted, never fatal
    char name[fu::thread_name_capacity_k];
    fu::compose_thread_name(name, "reader", 7); // "reader:007": at most 15 bytes, the index kept whole
    if (!fu::try_name_current_thread(name)) std::puts("naming refused");
    if (saved.saved() && !saved.try_restore()) return EXIT_FAILURE;

    std::printf("%zu affinity or naming calls refused\n", fu::affinity_refusals_count());
    return fu::affinity_refusals_count() == 0 || !fu::affinity_supported_k ? EXIT_SUCCESS : EXIT_FAILURE;
}
