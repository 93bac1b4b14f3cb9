/**
 *  @file   windows_buffer.hpp
 *  @brief  A writer of `GetLogicalProcessorInformationEx(RelationAll)` buffers, from Microsoft's documented
 *          layout of `SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX` (winnt.h of the Windows 11 SDK), independent of the
 *          library's reader: it shares no code, constant or struct with `processor_information_windows.hpp`.
 *
 *  A machine is described by its groups, cores, caches, NUMA nodes and packages; `write()` lays them out as
 *  64-bit Windows does: every field little-endian, each record 8-byte aligned, the sizes below.
 *
 *  | record (Relationship)  | bytes                | fields written                                           |
 *  | ---------------------- | -------------------- | -------------------------------------------------------- |
 *  | core (0), package (3)  | 32 + 16 x affinities | Flags @8, EfficiencyClass @9, GroupCount @30, masks @32  |
 *  | NUMA node (1)          | 32 + 16 x affinities | NodeNumber @8, GroupCount @30, masks @32                 |
 *  | cache (2)              | 40 + 16 x affinities | Level @8, Associativity @9, LineSize @10, CacheSize @12, |
 *  |                        |                      | Type @16, GroupCount @38, masks @40                      |
 *  | group (4)              | 32 + 48 x groups     | MaximumGroupCount @8, ActiveGroupCount @10, then per     |
 *  |                        |                      | group MaximumProcessorCount @+0, ActiveProcessorCount @+1, |
 *  |                        |                      | ActiveProcessorMask @+40                                 |
 *  | a group affinity       | 16                   | Mask @0 (8 bytes), Group @8 (2 bytes), 6 reserved        |
 *
 *  `legacy` writes what Windows before build 20348 wrote: GroupCount 0 (then reserved) with a single affinity,
 *  and EfficiencyClass 0. The order of records is Windows': packages, then each core followed by the caches it
 *  is the first member of, then the nodes, then the group record last.
 */
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace forkunion::testing {

/**  One processor group's share of a record: its number and its processor bits. */
struct windows_affinity_t {
    unsigned group = 0;
    std::uint64_t mask = 0;
};

struct windows_machine_t {
    struct group_t {
        unsigned maximum = 0;     ///< MaximumProcessorCount
        std::uint64_t active = 0; ///< ActiveProcessorMask
    };
    struct core_t {
        windows_affinity_t affinity;
        unsigned efficiency = 0;
        bool smt = false;
    };
    struct cache_t {
        unsigned level = 1;
        unsigned type = 0; ///< 0 unified, 1 instruction, 2 data, 3 trace
        std::uint32_t bytes = 0;
        unsigned line = 64;
        unsigned associativity = 8;
        std::vector<windows_affinity_t> sharers;
    };
    struct node_t {
        unsigned number = 0;
        std::vector<windows_affinity_t> affinities;
    };

    std::vector<group_t> groups;
    std::vector<std::vector<windows_affinity_t>> packages;
    std::vector<core_t> cores;
    std::vector<cache_t> caches;
    std::vector<node_t> nodes;
    bool legacy = false;

    std::vector<unsigned char> write() const {
        std::vector<unsigned char> out;
        for (auto const &package : packages) processor_(out, 3, package, 0, false);
        for (std::size_t c = 0; c != cores.size(); ++c) {
            processor_(out, 0, {cores[c].affinity}, cores[c].efficiency, cores[c].smt);
            for (cache_t const &cache : caches)
                if (first_core_of_(cache) == c) cache_(out, cache);
        }
        for (cache_t const &cache : caches)
            if (first_core_of_(cache) == cores.size()) cache_(out, cache); // caches of no listed core
        for (node_t const &node : nodes) {
            std::size_t const at = record_(out, 1, 32, node.affinities);
            put_(out, at + 8, node.number, 4);
        }
        std::size_t const at = begin_(out, 4, 32 + 48 * groups.size());
        put_(out, at + 8, groups.size(), 2);
        put_(out, at + 10, groups.size(), 2);
        for (std::size_t g = 0; g != groups.size(); ++g) {
            std::size_t const entry = at + 32 + 48 * g;
            std::size_t active = 0;
            for (std::uint64_t bits = groups[g].active; bits; bits &= bits - 1) ++active;
            put_(out, entry + 0, groups[g].maximum, 1);
            put_(out, entry + 1, active, 1);
            put_(out, entry + 40, groups[g].active, 8);
        }
        return out;
    }

private:
    static void put_(std::vector<unsigned char> &out, std::size_t at, std::uint64_t value, std::size_t bytes) {
        for (std::size_t i = 0; i != bytes; ++i) out[at + i] = static_cast<unsigned char>(value >> (8 * i));
    }
    /**  Appends a zeroed record of `size` bytes with its header; returns its offset. */
    static std::size_t begin_(std::vector<unsigned char> &out, unsigned relationship, std::size_t size) {
        std::size_t const at = out.size();
        out.resize(at + size, 0);
        put_(out, at, relationship, 4);
        put_(out, at + 4, size, 4);
        return at;
    }
    /**  A record whose affinities start at `first` and whose GroupCount sits 2 bytes before them. */
    std::size_t record_(std::vector<unsigned char> &out, unsigned relationship, std::size_t first,
                        std::vector<windows_affinity_t> const &affinities) const {
        std::size_t const count = legacy ? 1 : affinities.size();
        std::size_t const at = begin_(out, relationship, first + 16 * count);
        if (!legacy) put_(out, at + first - 2, count, 2);
        for (std::size_t i = 0; i != count && i != affinities.size(); ++i) {
            put_(out, at + first + 16 * i, affinities[i].mask, 8);
            put_(out, at + first + 16 * i + 8, affinities[i].group, 2);
        }
        return at;
    }
    void processor_(std::vector<unsigned char> &out, unsigned relationship,
                    std::vector<windows_affinity_t> const &affinities, unsigned efficiency, bool smt) const {
        std::size_t const at = record_(out, relationship, 32, affinities);
        put_(out, at + 8, smt ? 1 : 0, 1);
        if (!legacy) put_(out, at + 9, efficiency, 1);
    }
    void cache_(std::vector<unsigned char> &out, cache_t const &cache) const {
        std::size_t const at = record_(out, 2, 40, cache.sharers);
        put_(out, at + 8, cache.level, 1);
        put_(out, at + 9, cache.associativity, 1);
        put_(out, at + 10, cache.line, 2);
        put_(out, at + 12, cache.bytes, 4);
        put_(out, at + 16, cache.type, 4);
    }
    /**  The index of the first core whose processors the cache's first affinity covers, or `cores.size()`. */
    std::size_t first_core_of_(cache_t const &cache) const {
        for (std::size_t c = 0; c != cores.size(); ++c)
            if (!cache.sharers.empty() && cores[c].affinity.group == cache.sharers[0].group &&
                (cores[c].affinity.mask & cache.sharers[0].mask))
                return c;
        return cores.size();
    }
};

/**
 *  A two-socket server of 2 x 20 cores x 2 threads (80 logical processors), which Windows splits into two
 *  processor groups of 40, one per NUMA node: group g, node g, ids 40 g .. 40 g + 39. Per core: 48 KiB L1d,
 *  32 KiB L1i, 2 MiB L2 (both threads); per socket: a 30 MiB L3. One class (EfficiencyClass 0).
 */
inline windows_machine_t two_groups_two_nodes_machine() {
    windows_machine_t machine;
    for (unsigned g = 0; g != 2; ++g) {
        machine.groups.push_back({40, (std::uint64_t(1) << 40) - 1});
        machine.packages.push_back({{g, (std::uint64_t(1) << 40) - 1}});
        machine.nodes.push_back({g, {{g, (std::uint64_t(1) << 40) - 1}}});
        for (unsigned core = 0; core != 20; ++core) {
            std::uint64_t const threads = std::uint64_t(3) << (2 * core);
            machine.cores.push_back({{g, threads}, 0, true});
            machine.caches.push_back({1, 2, 48u << 10, 64, 12, {{g, threads}}});
            machine.caches.push_back({1, 1, 32u << 10, 64, 8, {{g, threads}}});
            machine.caches.push_back({2, 0, 2u << 20, 64, 16, {{g, threads}}});
            if (core == 0) machine.caches.push_back({3, 0, 30u << 20, 64, 15, {{g, (std::uint64_t(1) << 40) - 1}}});
        }
    }
    return machine;
}

/**
 *  A hybrid laptop chip in one group and one node: 6 performance cores x 2 threads (ids 0-11, EfficiencyClass 1,
 *  a private 2 MiB L2 each) and 8 efficiency cores (ids 12-19, class 0, a 4 MiB L2 per cluster of 4), all sharing
 *  a 24 MiB L3.
 */
inline windows_machine_t hybrid_machine() {
    windows_machine_t machine;
    machine.groups.push_back({20, (std::uint64_t(1) << 20) - 1});
    machine.packages.push_back({{0, (std::uint64_t(1) << 20) - 1}});
    machine.nodes.push_back({0, {{0, (std::uint64_t(1) << 20) - 1}}});
    for (unsigned core = 0; core != 6; ++core) {
        std::uint64_t const threads = std::uint64_t(3) << (2 * core);
        machine.cores.push_back({{0, threads}, 1, true});
        machine.caches.push_back({1, 2, 48u << 10, 64, 12, {{0, threads}}});
        machine.caches.push_back({2, 0, 2u << 20, 64, 16, {{0, threads}}});
        if (core == 0) machine.caches.push_back({3, 0, 24u << 20, 64, 12, {{0, (std::uint64_t(1) << 20) - 1}}});
    }
    for (unsigned core = 0; core != 8; ++core) {
        std::uint64_t const thread = std::uint64_t(1) << (12 + core);
        machine.cores.push_back({{0, thread}, 0, false});
        machine.caches.push_back({1, 2, 32u << 10, 64, 8, {{0, thread}}});
        if (core % 4 == 0) machine.caches.push_back({2, 0, 4u << 20, 64, 16, {{0, std::uint64_t(0xF) << (12 + core)}}});
    }
    return machine;
}

/**
 *  One NUMA node of 96 logical processors that Windows splits into two groups of 48: the node record lists both
 *  groups (GroupCount 2, Windows 11 and Server 2022). 48 cores x 2 threads, a 2 MiB L2 per core, and one 96 MiB
 *  L3 listed with both groups' affinities.
 */
inline windows_machine_t one_node_two_groups_machine() {
    windows_machine_t machine;
    std::uint64_t const all = (std::uint64_t(1) << 48) - 1;
    machine.groups = {{48, all}, {48, all}};
    machine.packages.push_back({{0, all}, {1, all}});
    machine.nodes.push_back({0, {{0, all}, {1, all}}});
    for (unsigned g = 0; g != 2; ++g)
        for (unsigned core = 0; core != 24; ++core) {
            std::uint64_t const threads = std::uint64_t(3) << (2 * core);
            machine.cores.push_back({{g, threads}, 0, true});
            machine.caches.push_back({2, 0, 2u << 20, 64, 16, {{g, threads}}});
        }
    machine.caches.push_back({3, 0, 96u << 20, 64, 16, {{0, all}, {1, all}}});
    return machine;
}

} // namespace forkunion::testing
