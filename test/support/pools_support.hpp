/**
 *  @file   pools_support.hpp
 *  @brief  Helpers shared by the placement-aware pool tests (`colocated_test.cpp`, `distributed_test.cpp`): this
 *          machine's topology and the recorded ones, harvested once; running a body on a thread of its own (so
 *          the test runner's mask is never touched); what the kernel will let this process run on.
 */
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <forkunion/topology/topology.hpp>

#include "topology_support.hpp"
#include "windows_buffer.hpp"

namespace forkunion::testing {

/**  This machine, harvested once (the stand-in, one domain of the allowed cores, if the harvest fails). */
inline machine_topology_t const &live_topology() {
    static machine_topology_t const topology = [] {
        machine_topology_t harvested;
        (void)harvested.try_harvest();
        return harvested;
    }();
    return topology;
}

/**  A recorded machine of test/fixtures/sysfs, unpacked under the build tree, harvested once per name. */
inline machine_topology_t const &recorded(std::string const &machine) {
    static std::vector<std::pair<std::string, std::unique_ptr<machine_topology_t>>> cache;
    for (auto const &[name, topology] : cache)
        if (name == machine) return *topology;
    auto topology = std::make_unique<machine_topology_t>();
    std::string const root = std::string(FORKUNION_SYSFS_FIXTURES_ROOT) + "/" + machine;
    EXPECT_TRUE(topology->try_harvest_from_sysfs(root.c_str())) << root;
    cache.emplace_back(machine, std::move(topology));
    return *cache.back().second;
}

/**  2 sockets x 16 CPUs (SMT siblings +16): 2 compute domains of 16 cores, on nodes 0 and 1. */
inline constexpr char const *two_sockets_k = "32intel64-2p8co2t+8ve";
/**  4 sockets, 8 NUMA nodes of 8 CPUs, node numbering unlike CPU numbering: 8 compute domains. */
inline constexpr char const *eight_nodes_k = "64amd64-4p2n4ca2co";
/**  16 NUMA nodes of 8 CPUs, plus node 16 with memory and no CPU: 16 compute, 17 memory domains. */
inline constexpr char const *cpuless_node_k = "128ia64-17n4s2c";

/**
 *  A recorded machine of two compute domains for the pools that need two: on Linux the two-socket sysfs tree
 *  (`two_sockets_k`), elsewhere the recorded two-group, two-node `GetLogicalProcessorInformationEx` buffer, whose
 *  parser runs on every OS (the sysfs reader is Linux's alone). Harvested once.
 */
inline machine_topology_t const &recorded_two_domains() {
    if (os_linux_k) return recorded(two_sockets_k);
    static machine_topology_t const topology = [] {
        machine_topology_t harvested;
        std::vector<unsigned char> const buffer = two_groups_two_nodes_machine().write();
        EXPECT_TRUE(harvested.try_harvest_from_processor_information(buffer.data(), buffer.size()));
        return harvested;
    }();
    return topology;
}

/**  The ids of a topology's core list, as a set. */
inline std::set<std::size_t> set_of(core_ids_t cores) {
    return {cores.begin(), cores.end()};
}

/**  Whether the kernel lets the calling thread run on any CPU of `cores`. */
inline bool any_allowed(std::set<std::size_t> const &cores) {
    std::set<std::size_t> const allowed = kernel_affinity();
    for (std::size_t core : cores)
        if (allowed.count(core)) return true;
    return false;
}

} // namespace forkunion::testing
