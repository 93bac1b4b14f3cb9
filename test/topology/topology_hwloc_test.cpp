/**
 *  @file   topology_hwloc_test.cpp
 *  @brief  The live harvest against hwloc's `lstopo-no-graphics --of xml` on this machine: PU count, NUMA node
 *          count and ids, each node's RAM, and every L3 that lies inside a compute domain.
 *
 *  Registered only where `lstopo-no-graphics` exists (CI installs `hwloc`). hwloc reads the same kernel files
 *  through its own, independent code, so agreement is evidence; its cpusets are parsed here by hand.
 */
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <forkunion/topology/topology.hpp>

#if !defined(FORKUNION_TEST_EMULATED)
#define FORKUNION_TEST_EMULATED 0 // 1 under qemu-user (cross builds)
#endif

namespace fu = forkunion;

namespace {

struct hwloc_object_t {
    std::string type;
    std::set<std::size_t> cpus;
    std::size_t os_index = 0;
    std::uint64_t cache_size = 0, local_memory = 0;
};

/**  hwloc's bitmap syntax: comma-separated `0x` words of 32 bits, most significant first. */
std::set<std::size_t> cpus_of_hwloc_set(std::string const &text) {
    std::vector<std::string> words;
    std::size_t start = 0;
    for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
        words.push_back(text.substr(start, comma - start));
    words.push_back(text.substr(start));
    std::set<std::size_t> cpus;
    for (std::size_t i = 0; i != words.size(); ++i) {
        unsigned long const bits = std::stoul(words[i], nullptr, 16);
        std::size_t const base = (words.size() - 1 - i) * 32;
        for (std::size_t bit = 0; bit != 32; ++bit)
            if (bits >> bit & 1) cpus.insert(base + bit);
    }
    return cpus;
}

std::vector<hwloc_object_t> lstopo_objects() {
    std::string xml;
    std::unique_ptr<FILE, int (*)(FILE *)> pipe(::popen(FORKUNION_LSTOPO " --of xml -", "r"), ::pclose);
    if (!pipe) return {};
    char chunk[4096];
    for (std::size_t got; (got = std::fread(chunk, 1, sizeof chunk, pipe.get())) != 0;) xml.append(chunk, got);
    // Each `<object attr="value" ...>` tag; hwloc writes attributes as name="value" with no '"' inside values.
    std::vector<hwloc_object_t> objects;
    for (std::size_t tag = xml.find("<object "); tag != std::string::npos; tag = xml.find("<object ", tag + 1)) {
        std::size_t const end = xml.find('>', tag);
        if (end == std::string::npos) break;
        std::string const attributes = xml.substr(tag + 8, end - tag - 8);
        hwloc_object_t object;
        for (std::size_t equals = attributes.find("=\""); equals != std::string::npos;
             equals = attributes.find("=\"", equals + 2)) {
            std::size_t const name_start =
                attributes.rfind(' ', equals) == std::string::npos ? 0 : attributes.rfind(' ', equals) + 1;
            std::size_t const value_end = attributes.find('"', equals + 2);
            if (value_end == std::string::npos) break;
            std::string const name = attributes.substr(name_start, equals - name_start);
            std::string const value = attributes.substr(equals + 2, value_end - equals - 2);
            if (name == "type")
                object.type = value;
            else if (name == "cpuset")
                object.cpus = cpus_of_hwloc_set(value);
            else if (name == "os_index")
                object.os_index = std::stoul(value);
            else if (name == "cache_size")
                object.cache_size = std::stoull(value);
            else if (name == "local_memory")
                object.local_memory = std::stoull(value);
            equals = value_end - 1;
        }
        objects.push_back(object);
    }
    return objects;
}

TEST(hwloc, the_live_harvest_agrees_with_lstopo) {
    std::vector<hwloc_object_t> const objects = lstopo_objects();
    ASSERT_FALSE(objects.empty()) << "lstopo-no-graphics printed no objects";
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());

    std::set<std::size_t> pus;
    std::vector<hwloc_object_t> nodes, l3s;
    for (hwloc_object_t const &object : objects) {
        if (object.type == "PU") pus.insert(object.os_index);
        if (object.type == "NUMANode") nodes.push_back(object);
        if (object.type == "L3Cache") l3s.push_back(object);
    }
    std::set<std::size_t> cores;
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        for (std::uint32_t core : topology.cores_in(d)) cores.insert(core);
    EXPECT_EQ(cores, pus) << "hwloc lists the PUs this process may use";
    EXPECT_EQ(topology.logical_cores_count(), pus.size());

    ASSERT_EQ(topology.memory_domains_count(), nodes.size());
    for (std::size_t m = 0; m != nodes.size(); ++m) {
        EXPECT_EQ(topology.memory_node_id(m), nodes[m].os_index);
        EXPECT_EQ(topology.volume_ram_in(m), nodes[m].local_memory) << "node " << nodes[m].os_index;
    }

    std::size_t compared = 0, unknown = 0;
    for (hwloc_object_t const &l3 : l3s)
        for (std::size_t d = 0; d != topology.compute_domains_count(); ++d) {
            fu::core_ids_t const domain = topology.cores_in(d);
            std::set<std::size_t> const inside(domain.begin(), domain.end());
            bool contained = !l3.cpus.empty();
            for (std::size_t cpu : l3.cpus) contained = contained && inside.count(cpu);
            if (!contained) continue;
            // Compare only what both know: a domain whose cache no source described (0, `unknown_k`) is skipped,
            // and so is a CPUID answer under qemu-user, which describes the emulated CPU, not the host hwloc reads.
            if (topology.compute_cache_source_in(d) == fu::fact_source_t::unknown_k) {
                std::printf("hwloc: domain %zu's cache is unknown here (no sysfs caches, no CPUID answer)\n", d);
                ++unknown;
                continue;
            }
            if (FORKUNION_TEST_EMULATED && topology.compute_cache_source_in(d) == fu::fact_source_t::cpuid_k) {
                std::printf("hwloc: domain %zu's cache comes from the emulator's CPUID, not the host's\n", d);
                ++unknown;
                continue;
            }
            // An L3 inside a domain is private to it; only a larger private cache (an L4) could beat it.
            EXPECT_GE(topology.compute_cache_bytes_in(d), l3.cache_size) << "domain " << d;
            bool larger = false;
            for (hwloc_object_t const &object : objects)
                larger |= object.type == "L4Cache" && object.cache_size > l3.cache_size;
            if (!larger) {
                EXPECT_EQ(topology.compute_cache_bytes_in(d), l3.cache_size) << "domain " << d;
            }
            ++compared;
        }
    std::printf(
        "hwloc: %zu PUs, %zu NUMA nodes, %zu L3 caches (%zu inside a compute domain, %zu of them unknown here)\n",
        pus.size(), nodes.size(), l3s.size(), compared + unknown, unknown);
    if (!l3s.empty() && topology.compute_domains_count() == 1) {
        EXPECT_GT(compared + unknown, 0u) << "a machine-wide L3 lies inside the only domain";
    }
}

} // namespace
