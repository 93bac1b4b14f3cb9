// The topology report: compute domains, memory domains, declared distances and capabilities, at a glance.
//
//   forkunion_topology                 the live machine (as this process may use it)
//   forkunion_topology <root>          a recorded sysfs tree in which <root> stands for /
//   forkunion_topology --fabric [...]  also the measured fabric: latency, bandwidth and distance of every edge,
//                                      and the memory levels (seconds: buffers of 4x the last-level cache)
//   forkunion_topology --fabric --quick  the same over 64 MiB buffers and 1 ms windows
#include <chrono>    // `std::chrono::steady_clock`
#include <cinttypes> // `PRIu64`
#include <cstdio>    // `std::printf`
#include <cstdlib>   // `EXIT_FAILURE`
#include <cstring>   // `std::strcmp`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

namespace {

/**  `bytes` with a binary unit, e.g. "300 MiB", "45.7 GiB"; "-" for 0 (unknown). */
char const *human(std::uint64_t bytes, char (&out)[32]) {
    if (!bytes) return std::snprintf(out, sizeof out, "-"), out;
    char const *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = double(bytes);
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < sizeof units / sizeof *units) value /= 1024, ++unit;
    if (value == double(std::uint64_t(value)))
        std::snprintf(out, sizeof out, "%.0f %s", value, units[unit]);
    else
        std::snprintf(out, sizeof out, "%.1f %s", value, units[unit]);
    return out;
}

/**  The cores of domain `d` in the kernel's list syntax, e.g. "0-7,16-23". */
char const *cpus(fu::core_ids_t cores, char (&out)[256]) {
    std::size_t const length = fu::format_cpulist(cores.data(), cores.size(), out, sizeof out);
    if (length >= sizeof out) std::snprintf(out + sizeof out - 4, 4, "..."); // cut: say so
    return out;
}

void print_compute(fu::machine_topology_t const &topology) {
    std::printf("compute domains: %zu, levels: %zu (higher = faster)\n", topology.compute_domains_count(),
                topology.compute_levels_count());
    std::printf("  %6s %5s %5s %8s %5s %9s  %s\n", "domain", "node", "level", "capacity", "cores", "cache", "cpus");
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d) {
        char cache[32], list[256], capacity[24];
        if (topology.compute_capacity_in(d))
            std::snprintf(capacity, sizeof capacity, "%zu", topology.compute_capacity_in(d));
        else
            std::snprintf(capacity, sizeof capacity, "-");
        std::printf("  %6zu %5zu %5zu %8s %5zu %9s  %s\n", d, topology.memory_node_id(topology.local_memory_of(d)),
                    topology.compute_level_in(d), capacity, topology.logical_cores_count_in(d),
                    human(topology.compute_cache_bytes_in(d), cache), cpus(topology.cores_in(d), list));
    }
}

void print_memory(fu::machine_topology_t const &topology) {
    char ram[32], pages[32];
    std::printf("memory domains: %zu, %s of RAM, %zu free huge pages (%s)\n", topology.memory_domains_count(),
                human(topology.volume_ram(), ram), topology.huge_pages_count(),
                human(topology.volume_huge_pages(), pages));
    std::printf("  %6s %5s %10s %-16s %s\n", "domain", "node", "ram", "compute domains", "free huge pages");
    for (std::size_t m = 0; m != topology.memory_domains_count(); ++m) {
        char sizes[160] = "-", local[128] = "none (CPU-less)";
        std::size_t used = 0, local_used = 0;
        for (std::size_t i = 0; i != topology.huge_page_sizes_count_in(m) && used < sizeof sizes; ++i) {
            char size[32];
            std::uint64_t const bytes = topology.huge_page_size_in(m, i);
            used += std::snprintf(sizes + used, sizeof sizes - used, "%s%s: %zu", i ? ", " : "", human(bytes, size),
                                  topology.huge_pages_count_in(m, bytes));
        }
        for (std::size_t d = 0; d != topology.compute_domains_count() && local_used < sizeof local; ++d)
            if (topology.local_memory_of(d) == m)
                local_used +=
                    std::snprintf(local + local_used, sizeof local - local_used, "%s%zu", local_used ? ", " : "", d);
        std::printf("  %6zu %5zu %10s %-16s %s\n", m, topology.memory_node_id(m), human(topology.volume_ram_in(m), ram),
                    local, sizes);
    }
    std::printf("declared distances (firmware SLIT, 10 = local, - = undeclared):\n  %5s", "node");
    for (std::size_t b = 0; b != topology.memory_domains_count(); ++b) std::printf(" %4zu", topology.memory_node_id(b));
    std::printf("\n");
    for (std::size_t a = 0; a != topology.memory_domains_count(); ++a) {
        std::printf("  %5zu", topology.memory_node_id(a));
        for (std::size_t b = 0; b != topology.memory_domains_count(); ++b)
            if (topology.declared_distance(a, b))
                std::printf(" %4zu", topology.declared_distance(a, b));
            else
                std::printf(" %4s", "-");
        std::printf("\n");
    }
}

/**  Harvests the fabric of `topology` through a pool of one thread per core of its largest compute domain, and
 *  prints every edge and the memory levels. A recorded topology is measured on this machine: the cores and nodes
 *  it lacks are refused, and their edges print as unreachable. */
bool print_fabric(fu::machine_topology_t const &topology, bool quick) {
    std::size_t threads = 1;
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        if (topology.logical_cores_count_in(d) > threads) threads = topology.logical_cores_count_in(d);
    fu::flat_pool_t pool;
    if (fu::status_t const spawned = pool.spawn(threads); !spawned)
        return std::printf("fabric: a pool of %zu threads could not spawn: %s\n", threads, spawned.name()), false;
    fu::fabric_t fabric;
    auto const start = std::chrono::steady_clock::now();
    fu::status_t const status =
        fabric.try_harvest(topology, pool, quick ? fu::fabric_options_t::quick() : fu::fabric_options_t{});
    double const seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!status) return std::printf("fabric: not measured: %s\n", status.name()), false;

    char buffer[32];
    std::printf("fabric (measured through pinned threads, %s buffers, %.1f s): %zu of %zu edges reached",
                human(fabric.buffer_bytes(), buffer), seconds, fabric.reached_edges_count(), fabric.edges_count());
    if (fabric.unreachable_edges_count())
        std::printf(" (%zu pins and %zu buffers refused)", fabric.pinning_refusals_count(),
                    fabric.binding_refusals_count());
    std::printf("\n  %7s %6s %5s %11s %11s %7s %8s\n", "compute", "memory", "node", "latency", "bandwidth", "readers",
                "distance");
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        for (std::size_t m = 0; m != topology.memory_domains_count(); ++m) {
            if (!fabric.edge(d, m).reached()) {
                std::printf("  %7zu %6zu %5zu %11s %11s %7s %8s\n", d, m, topology.memory_node_id(m), "-", "-", "-",
                            "-");
                continue;
            }
            std::printf("  %7zu %6zu %5zu %8.1f ns %6.2f GB/s %7zu %8zu\n", d, m, topology.memory_node_id(m),
                        fabric.memory_latency_ns(d, m), fabric.memory_bandwidth_bytes_per_second(d, m) / 1e9,
                        fabric.edge(d, m).readers, fabric.memory_distance(d, m));
        }
    std::printf("memory levels: %zu (0 = fastest medium: best bandwidth from any compute domain, then best latency)\n",
                fabric.memory_levels_count());
    std::printf("  %6s %5s %5s %14s %12s\n", "domain", "node", "level", "best bandwidth", "best latency");
    for (std::size_t m = 0; m != topology.memory_domains_count(); ++m) {
        fu::memory_medium_t const medium = fabric.memory_medium_of(m);
        if (fabric.memory_level_in(m) < fabric.memory_levels_count())
            std::printf("  %6zu %5zu %5zu %9.2f GB/s %9.1f ns\n", m, topology.memory_node_id(m),
                        fabric.memory_level_in(m), medium.bandwidth_bytes_per_second / 1e9, medium.latency_ns);
        else
            std::printf("  %6zu %5zu %5s %14s %12s\n", m, topology.memory_node_id(m), "-", "unreachable", "-");
    }
    return true;
}

/**  The kernel's total RAM (`/proc/meminfo` `MemTotal`), 0 if unreadable. */
std::uint64_t meminfo_total_bytes() {
    std::FILE *file = std::fopen("/proc/meminfo", "r");
    if (!file) return 0;
    char line[256];
    unsigned long long kib = 0;
    while (std::fgets(line, sizeof line, file))
        if (std::sscanf(line, "MemTotal: %llu kB", &kib) == 1) break;
    std::fclose(file);
    return std::uint64_t(kib) * 1024;
}

/**  Says so when the nodes' RAM and the kernel's total disagree by more than 5%: some hypervisors describe one
 *   NUMA node smaller than the memory they give the guest (a 2-vCPU KVM guest showed node 0 with 15 GiB of 23.5),
 *   and a memory-only node hidden by the cpuset also makes the sum smaller. The per-node figures are what
 *   placement can rely on. */
void note_memory_disagreement(fu::machine_topology_t const &topology) {
    std::uint64_t const nodes = topology.volume_ram(), kernel = meminfo_total_bytes();
    if (!nodes || !kernel) return;
    std::uint64_t const gap = nodes > kernel ? nodes - kernel : kernel - nodes;
    if (gap * 20 <= kernel) return;
    char a[32], b[32];
    std::printf("note: the NUMA nodes report %s of RAM but /proc/meminfo says %s: the firmware's NUMA description "
                "covers only part of memory (common in virtual machines); node figures are what placement can use\n",
                human(nodes, a), human(kernel, b));
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "--fabric --quick", 1,
                    "[--fabric [--quick]] [SYSFS_ROOT]\n"
                    "The topology of this machine, or of a recorded one (SYSFS_ROOT/sys/devices/system/...).\n"
                    "  --fabric  also measures the fabric: latency and bandwidth of every compute-memory edge\n"
                    "  --quick   with --fabric: 64 MiB buffers and 1 ms windows\n"
                    "Reads no environment variable.\n");
    bool fabric = false, quick = false;
    char const *root = nullptr;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--fabric") == 0)
            fabric = true;
        else if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            root = argv[i];
    }

    fu::machine_topology_t topology;
    bool const harvested = root ? topology.try_harvest_from_sysfs(root) : topology.try_harvest();
    if (root && !harvested) {
        std::fprintf(stderr, "no usable CPU found under %s/sys/devices/system/cpu\n", root);
        return EXIT_FAILURE;
    }
    std::printf("machine: %s%s, %zu of %zu online cores usable\n", root ? root : "this one",
                root        ? " (recorded sysfs)"
                : harvested ? " (live)"
                            : " (nothing harvested: one domain)",
                topology.logical_cores_count(), topology.online_cores_count());

    char names[512];
    fu::name_capabilities(fu::runtime_capabilities(), names, sizeof names);
    std::printf("cpu capabilities: %s; os:%s%s\n", names[0] ? names : "-",
                fu::topology_source_t::harvests_structure_k ? " topology" : "",
                fu::affinity_supported_k ? " thread-pinning thread-naming" : "");
    std::printf("\n");
    print_compute(topology);
    std::printf("\n");
    print_memory(topology);
    if (!root && harvested) note_memory_disagreement(topology);

    if (fabric) {
        std::printf("\n");
        // A recorded machine may be out of this one's reach entirely; the live one must be measurable.
        if (!print_fabric(topology, quick) && !root) return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}
