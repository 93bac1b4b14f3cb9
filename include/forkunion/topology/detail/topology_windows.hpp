/**
 *  @file   forkunion/topology/detail/topology_windows.hpp
 *  @brief  The Windows back end of `forkunion/topology/topology.hpp`: `windows_topology_parser_t` turns a
 *          `GetLogicalProcessorInformationEx(RelationAll)` buffer into topology facts (on every OS, so recorded
 *          buffers are tested anywhere), and `windows_topology_source_t` harvests the running Windows.
 *
 *  @section rules What is read, and what wins (the byte layout is in `processor_information_windows.hpp`)
 *  - Processor groups: the first group record. A buffer without one is refused: ids cannot be named without it.
 *    Online CPUs are the active processors of every group; usable = online ∩ `allowed`.
 *  - NUMA nodes: the node records (`NodeNumber`, its group affinities); ids at or above `max_numa_nodes_k` are
 *    dropped. Each usable CPU belongs to the lowest node that lists it; CPUs no node lists form the last compute
 *    domains, with memory domain 0 as local. No node record at all means one memory domain, node 0.
 *  - Compute levels: the `EfficiencyClass` of each core record (higher = faster, as Windows defines it), ranked
 *    densely over the usable CPUs: level 0 is the lowest class present. A CPU no core record lists has class 0.
 *    Windows publishes no capacity figure, so `compute_capacity_in` reads 0 (unknown).
 *  - Compute domains: (node, class, processor group) triples with cores, by node id, then class, then group. The
 *    group split keeps every domain inside one group, the most one Windows thread can be pinned to at once.
 *  - A domain's cache: the largest data or unified cache record whose online sharers are all cores of the domain.
 *  - Memory: no RAM, huge pages or distances are in the buffer; a recorded buffer reads them as unknown (0), the
 *    diagonal of distances as 10. The live harvest adds the installed RAM when there is one node
 *    (`GlobalMemoryStatusEx`); Windows offers no per-node total, nor any SLIT distance, to user code.
 *  Records that are too short for what they declare are skipped; a record whose `Size` breaks the framing ends
 *  the walk, and what came before it still counts (the group record must come before it).
 *
 *  @section cost Cost
 *  Scratch of ~24 KiB (a node, a class and a domain per possible CPU) plus the results, and the buffer of the
 *  live call (a few KiB: about 50 bytes per core, cache and node). May throw `std::bad_alloc`, caught by
 *  `topology.hpp`. Reentrant.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/hardware/detail/processor_information_windows.hpp>
#include <forkunion/topology/topology_facts.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
#include <vector> // `std::vector`, the live call's buffer (the parser needs none)

#include <forkunion/hardware/detail/cores_windows.hpp>
#include <forkunion/hardware/detail/system_windows.hpp>
#endif

namespace forkunion::detail {

/**  @brief  `GetLogicalProcessorInformationEx` buffers to topology facts; see the file comment. Pure. */
struct windows_topology_parser_t {
    /**
     *  @brief  Parses `buffer[0, length)` into `facts`, narrowed to `allowed` when it is not null. On false
     *          (no group record, no usable CPU), `facts` is untouched.
     *  @throws std::bad_alloc
     */
    template <typename harvest_t>
    static bool try_parse(void const *buffer, std::size_t length, cpu_mask_t const *allowed, harvest_t &facts) {
        windows_groups_t groups;
        if (!groups.try_read_buffer(buffer, length)) return false;
        cpu_mask_t online;
        groups.add_active(online);
        cpu_mask_t usable = online;
        if (allowed) usable.intersect_with(*allowed);
        if (usable.empty()) return false;

        harvest_t harvest;
        harvest.online_cores = online.count();
        using ids_t = decltype(harvest.cores);
        constexpr std::uint32_t unclaimed_k = ~std::uint32_t(0);

        // Nodes (lowest id wins a CPU) and efficiency classes, in one walk.
        ids_t node_of(max_cpus_k, unclaimed_k);
        ids_t class_of(max_cpus_k, 0);
        cpu_mask_t node_set;
        bool classes_seen[256] = {};
        (void)for_each_windows_record(buffer, length, [&](windows_record_t const &record) noexcept {
            cpu_mask_t cpus;
            switch (record.relation) {
            case windows_relation_t::numa_node_k:
            case windows_relation_t::numa_node_ex_k: {
                std::size_t const node = static_cast<std::size_t>(record.read(8, 4));
                if (node >= max_numa_nodes_k || !read_windows_affinities(record, 30, 32, groups, cpus)) return;
                node_set.set(node);
                cpus.intersect_with(usable);
                for (std::size_t cpu = cpus.first(); cpu != cpu_mask_t::npos_k; cpu = cpus.next_from(cpu + 1))
                    if (node_of[cpu] == unclaimed_k || node < node_of[cpu])
                        node_of[cpu] = static_cast<std::uint32_t>(node);
                return;
            }
            case windows_relation_t::processor_core_k: {
                if (!read_windows_affinities(record, 30, 32, groups, cpus)) return;
                std::uint32_t const efficiency = static_cast<std::uint32_t>(record.read(9, 1));
                cpus.intersect_with(usable);
                for (std::size_t cpu = cpus.first(); cpu != cpu_mask_t::npos_k; cpu = cpus.next_from(cpu + 1))
                    class_of[cpu] = efficiency;
                return;
            }
            default:
                return;
            }
        });
        for (std::size_t cpu = usable.first(); cpu != cpu_mask_t::npos_k; cpu = usable.next_from(cpu + 1))
            classes_seen[class_of[cpu]] = true;
        std::size_t level_of_class[256] = {};
        std::size_t classes = 0;
        for (std::size_t efficiency = 0; efficiency != 256; ++efficiency)
            if (classes_seen[efficiency]) level_of_class[efficiency] = classes++;

        ids_t nodes;
        for (std::size_t node = node_set.first(); node < max_numa_nodes_k; node = node_set.next_from(node + 1))
            nodes.push_back(static_cast<std::uint32_t>(node));
        bool const numa = !nodes.empty();
        if (!numa) nodes.push_back(0);

        // Compute domains: by node (the unlisted CPUs last), then class, then group.
        ids_t domain_of(max_cpus_k, unclaimed_k);
        for (std::size_t index = 0; index <= nodes.size(); ++index) {
            bool const unlisted = index == nodes.size();
            for (std::size_t level = 0; level != classes; ++level)
                for (std::size_t group = 0; group != groups.count; ++group) {
                    compute_domain_facts_t domain;
                    domain.first_core = harvest.cores.size();
                    domain.memory_domain = unlisted ? 0 : index;
                    domain.level = level;
                    for (std::size_t cpu = usable.first(); cpu != cpu_mask_t::npos_k; cpu = usable.next_from(cpu + 1)) {
                        bool const in_node =
                            numa ? (unlisted ? node_of[cpu] == unclaimed_k : node_of[cpu] == nodes[index]) : !unlisted;
                        std::size_t cpu_group = 0, bit = 0;
                        if (!in_node || level_of_class[class_of[cpu]] != level ||
                            !groups.try_locate(cpu, cpu_group, bit) || cpu_group != group)
                            continue;
                        domain_of[cpu] = static_cast<std::uint32_t>(harvest.compute.size());
                        harvest.cores.push_back(static_cast<std::uint32_t>(cpu));
                    }
                    domain.cores_count = harvest.cores.size() - domain.first_core;
                    if (domain.cores_count) harvest.compute.push_back(domain);
                }
        }
        harvest.compute_levels = classes;

        // Caches: the largest data or unified cache whose online sharers all lie in one domain.
        bool caches_listed = false; // any cache record: then a domain's 0 means "none private", source os_k
        (void)for_each_windows_record(buffer, length, [&](windows_record_t const &record) noexcept {
            if (record.relation != windows_relation_t::cache_k) return;
            caches_listed = true;
            std::uint32_t const type = static_cast<std::uint32_t>(record.read(16, 4));
            std::uint64_t const bytes = record.read(12, 4);
            cpu_mask_t sharers;
            if ((type != 0 && type != 2) || !read_windows_affinities(record, 38, 40, groups, sharers)) return;
            sharers.intersect_with(online);
            std::uint32_t domain = unclaimed_k;
            for (std::size_t cpu = sharers.first(); cpu != cpu_mask_t::npos_k; cpu = sharers.next_from(cpu + 1)) {
                if (domain_of[cpu] == unclaimed_k || (domain != unclaimed_k && domain_of[cpu] != domain)) return;
                domain = domain_of[cpu];
            }
            if (domain != unclaimed_k && harvest.compute[domain].cache_bytes < bytes)
                harvest.compute[domain].cache_bytes = bytes;
        });
        if (caches_listed)
            for (compute_domain_facts_t &domain : harvest.compute) domain.cache_source = fact_source_t::os_k;

        // Memory domains: the nodes, RAM unknown; distances declared only on the diagonal.
        for (std::uint32_t node : nodes) {
            memory_domain_facts_t memory;
            memory.node_id = node;
            harvest.memory.push_back(memory);
        }
        std::size_t const count = nodes.size();
        harvest.distances.assign(count * count, 0);
        for (std::size_t a = 0; a != count; ++a) harvest.distances[a * count + a] = harvest_t::local_distance_k;

        harvest.harvested = true;
        facts = static_cast<harvest_t &&>(harvest);
        return true;
    }
};

} // namespace forkunion::detail

#if FORKUNION_OS_WINDOWS
namespace forkunion::detail {

/**  @brief  The Windows topology back end. A static-only interface type. */
struct windows_topology_source_t {
    static constexpr bool harvests_structure_k = true;
    using facts_t = topology_facts_t;

    /**  The cores this process may run on, across every processor group (see `cores_windows.hpp`). */
    static void allowed_cores(cpu_mask_t &mask) noexcept { windows_cores_t::allowed_cores(mask); }

    /**  The live harvest: `RelationAll`, narrowed to this process's cores. @throws std::bad_alloc */
    template <typename harvest_t = facts_t>
    static bool try_harvest_live(harvest_t &facts) {
        std::vector<unsigned char> buffer(4096);
        std::size_t needed = 0, length = 0;
        // The answer can grow between the two calls (hot-add): retry a few times with what Windows asked for.
        for (int attempt = 0; attempt != 4 && length == 0; ++attempt) {
            length = windows_processor_information(RelationAll, buffer.data(), buffer.size(), needed);
            if (length == 0 && needed <= buffer.size()) return false; // a failure other than the size
            if (length == 0) buffer.resize(needed);
        }
        cpu_mask_t allowed;
        allowed_cores(allowed);
        harvest_t harvest;
        if (length == 0 || !windows_topology_parser_t::try_parse(buffer.data(), length, &allowed, harvest))
            return false;
        MEMORYSTATUSEX status{};
        status.dwLength = sizeof(status);
        if (harvest.memory.size() == 1 && ::GlobalMemoryStatusEx(&status))
            harvest.memory[0].ram_bytes = status.ullTotalPhys;
        facts = static_cast<harvest_t &&>(harvest);
        return true;
    }

    /**  Recorded sysfs trees are a Linux notion. */
    template <typename harvest_t = facts_t>
    static bool try_harvest_sysfs(char const *, cpu_mask_t const *, harvest_t &) noexcept {
        return false;
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
