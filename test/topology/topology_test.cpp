/**
 *  @file   topology_test.cpp
 *  @brief  Tests of `include/forkunion/topology/topology.hpp` (and its back ends): recorded machines against their
 *          `expected.json`, synthetic trees for the corner cases, garbage in every file, the live harvest, the
 *          single-domain stand-in and the portable back end.
 *
 *  Expected facts never come from the library: the fixtures' `expected.json` files were written by a script that
 *  never saw it, lists are read with `cpus_of` (not `parse_cpulist`), and the domain rules of `topology_linux.hpp`
 *  (partition by node, 10% capacity classes, largest private cache) are re-derived here from those facts.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <forkunion/hardware/caches.hpp>
#include <forkunion/hardware/cores.hpp>
#include <forkunion/topology/topology.hpp>

#if FORKUNION_OS_LINUX
#include <sched.h>    // `sched_getaffinity`
#include <sys/stat.h> // `mkfifo`
#include <unistd.h>   // `symlink`
#elif FORKUNION_OS_WINDOWS
#include <forkunion/hardware/detail/system_windows.hpp> // `GetActiveProcessorCount`, `SetThreadGroupAffinity`
#endif

#include "json_reader.hpp"
#include "topology_support.hpp"

namespace fu = forkunion;
namespace fut = forkunion::testing;

namespace {

std::string const fixtures_source = FORKUNION_SYSFS_FIXTURES_SOURCE; // tarballs and expected.json
std::string const fixtures_root = FORKUNION_SYSFS_FIXTURES_ROOT;     // extracted trees

std::set<std::size_t> cores_of(fu::machine_topology_t const &topology, std::size_t domain) {
    fu::core_ids_t const cores = topology.cores_in(domain);
    return {cores.begin(), cores.end()};
}

/**  Properties every topology must have, whatever it was harvested from. */
void expect_invariants(fu::machine_topology_t const &topology) {
    std::size_t const compute = topology.compute_domains_count(), memory = topology.memory_domains_count();
    ASSERT_GE(compute, 1u);
    ASSERT_GE(memory, 1u);
    ASSERT_GE(topology.compute_levels_count(), 1u);
    std::set<std::size_t> all_cores, levels;
    std::size_t total = 0;
    for (std::size_t d = 0; d != compute; ++d) {
        fu::core_ids_t const cores = topology.cores_in(d);
        EXPECT_EQ(cores.size(), topology.logical_cores_count_in(d));
        EXPECT_GE(cores.size(), 1u) << "domain " << d << " is empty";
        EXPECT_TRUE(std::is_sorted(cores.begin(), cores.end())) << "domain " << d;
        for (std::uint32_t core : cores) EXPECT_TRUE(all_cores.insert(core).second) << "core " << core << " twice";
        total += cores.size();
        EXPECT_LT(topology.local_memory_of(d), memory);
        EXPECT_LT(topology.compute_level_in(d), topology.compute_levels_count());
        EXPECT_LE(topology.compute_capacity_in(d), 1024u);
        levels.insert(topology.compute_level_in(d));
    }
    EXPECT_EQ(levels.size(), topology.compute_levels_count()) << "levels are dense";
    EXPECT_EQ(total, topology.logical_cores_count());
    EXPECT_EQ(topology.allowed_cores_count(), topology.logical_cores_count());
    EXPECT_LE(topology.logical_cores_count(), topology.online_cores_count());
    std::uint64_t ram = 0;
    for (std::size_t m = 0; m != memory; ++m) {
        if (m) {
            EXPECT_GT(topology.memory_node_id(m), topology.memory_node_id(m - 1));
        }
        ram += topology.volume_ram_in(m);
        EXPECT_EQ(topology.declared_distance(m, m), 10u);
        for (std::size_t i = 1; i < topology.huge_page_sizes_count_in(m); ++i)
            EXPECT_LT(topology.huge_page_size_in(m, i - 1), topology.huge_page_size_in(m, i));
    }
    EXPECT_EQ(ram, topology.volume_ram());
    // Out-of-range indices answer 0 (or an empty view), never undefined behaviour.
    EXPECT_TRUE(topology.cores_in(compute).empty());
    EXPECT_EQ(topology.logical_cores_count_in(compute), 0u);
    EXPECT_EQ(topology.compute_capacity_in(compute), 0u);
    EXPECT_EQ(topology.compute_cache_bytes_in(compute), 0u);
    EXPECT_EQ(topology.compute_level_in(compute), 0u);
    EXPECT_EQ(topology.local_memory_of(compute), 0u);
    EXPECT_EQ(topology.volume_ram_in(memory), 0u);
    EXPECT_EQ(topology.memory_node_id(memory), 0u);
    EXPECT_EQ(topology.huge_pages_count_in(memory), 0u);
    EXPECT_EQ(topology.volume_huge_pages_in(memory), 0u);
    EXPECT_EQ(topology.huge_page_size_in(memory, 0), 0u);
    EXPECT_EQ(topology.declared_distance(memory, 0), 0u);
    EXPECT_EQ(topology.declared_distance(0, memory), 0u);
    EXPECT_EQ(topology.declared_distance(~std::size_t(0), ~std::size_t(0)), 0u);
}

/**  The 10% capacity classes, re-derived: class index per distinct value, and each class's largest value. */
struct capacity_classes_t {
    std::map<std::size_t, std::size_t> class_of;
    std::vector<std::size_t> top;
};
capacity_classes_t classes_of(std::set<std::size_t> const &values) {
    capacity_classes_t classes;
    std::size_t smallest = 0;
    for (std::size_t value : values) {
        if (classes.top.empty() || double(value) > double(smallest) * 1.1) classes.top.push_back(0), smallest = value;
        classes.class_of[value] = classes.top.size() - 1;
        classes.top.back() = value;
    }
    return classes;
}

// ---------------------------------------------------------------------------------------------------------------
// Recorded machines

std::vector<std::string> fixture_machines() {
    std::vector<std::string> machines;
    for (auto const &entry : std::filesystem::directory_iterator(fixtures_source))
        if (std::filesystem::exists(entry.path() / "expected.json"))
            machines.push_back(entry.path().filename().string());
    std::sort(machines.begin(), machines.end());
    return machines;
}

class recorded_machine : public ::testing::TestWithParam<std::string> {};

TEST(recorded_machines, every_tarball_is_extracted_and_tested) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    std::size_t tarballs = 0;
    for (auto const &entry : std::filesystem::recursive_directory_iterator(fixtures_source))
        if (entry.path().string().ends_with(".tar.gz")) {
            ++tarballs;
            std::string const machine = entry.path().parent_path().filename().string();
            EXPECT_TRUE(std::filesystem::is_directory(fixtures_root + "/" + machine + "/sys")) << machine;
        }
    EXPECT_EQ(tarballs, fixture_machines().size());
    EXPECT_GE(tarballs, 9u) << "test/fixtures/sysfs/README.md lists 9 machines";
}

TEST_P(recorded_machine, harvests_to_the_expected_facts) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    std::string const machine = GetParam();
    fut::json_t const expected = fut::read_json_file(fixtures_source + "/" + machine + "/expected.json");
    fut::json_t const &summary = expected["summary"];

    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest_from_sysfs((fixtures_root + "/" + machine).c_str()));
    ASSERT_TRUE(topology.harvested());
    expect_invariants(topology);

    // CPUs and nodes.
    std::set<std::size_t> const online = fut::cpus_of(summary["online_cpulist"].as_string());
    ASSERT_EQ(online.size(), std::size_t(summary["num_online_cpus"].as_integer()));
    EXPECT_EQ(topology.online_cores_count(), online.size());
    EXPECT_EQ(topology.logical_cores_count(), online.size()) << "every online CPU sits in one compute domain";
    std::vector<std::size_t> nodes;
    for (fut::json_t const &node : summary["numa_nodes"].array) nodes.push_back(std::size_t(node.as_integer()));
    bool const numa = !nodes.empty();
    if (!numa) nodes.push_back(0); // no `node/` directory: one memory domain, node 0
    ASSERT_EQ(topology.memory_domains_count(), nodes.size());
    for (std::size_t m = 0; m != nodes.size(); ++m) EXPECT_EQ(topology.memory_node_id(m), nodes[m]);

    // Each online CPU belongs to the lowest node that lists it.
    std::map<std::size_t, std::size_t> memory_of_cpu;
    std::vector<std::set<std::size_t>> node_cpus(nodes.size());
    for (std::size_t m = 0; m != nodes.size(); ++m) {
        if (numa)
            for (std::size_t cpu : fut::cpus_of(summary["node_online_cpulist"][std::to_string(nodes[m])].as_string()))
                if (online.count(cpu) && !memory_of_cpu.count(cpu)) memory_of_cpu[cpu] = m, node_cpus[m].insert(cpu);
    }
    if (numa) {
        for (std::size_t cpu : online)
            if (!memory_of_cpu.count(cpu)) ADD_FAILURE() << "CPU " << cpu << " is in no node of " << machine;
    } else
        node_cpus[0] = online;

    // Capacity classes.
    std::map<std::size_t, std::size_t> capacity_of;
    bool capacities_known = !expected["cpu_capacity"].is_null();
    for (std::size_t cpu : online) {
        if (capacities_known && expected["cpu_capacity"].has(std::to_string(cpu)))
            capacity_of[cpu] = std::size_t(expected["cpu_capacity"][std::to_string(cpu)].as_integer());
        else
            capacities_known = false;
    }
    std::set<std::size_t> values;
    for (std::size_t cpu : online) values.insert(capacities_known ? capacity_of[cpu] : 0);
    capacity_classes_t const classes = classes_of(values);
    EXPECT_EQ(topology.compute_levels_count(), classes.top.size());

    // Compute domains: by node, then class; each with its largest private data or unified cache.
    std::size_t d = 0;
    for (std::size_t m = 0; m != nodes.size(); ++m)
        for (std::size_t level = 0; level != classes.top.size(); ++level) {
            std::set<std::size_t> cores;
            for (std::size_t cpu : node_cpus[m])
                if (classes.class_of.at(capacities_known ? capacity_of[cpu] : 0) == level) cores.insert(cpu);
            if (cores.empty()) continue;
            ASSERT_LT(d, topology.compute_domains_count());
            EXPECT_EQ(cores_of(topology, d), cores) << "domain " << d;
            EXPECT_EQ(topology.local_memory_of(d), m) << "domain " << d;
            EXPECT_EQ(topology.compute_level_in(d), level) << "domain " << d;
            EXPECT_EQ(topology.compute_capacity_in(d), capacities_known ? classes.top[level] : 0u) << "domain " << d;
            std::uint64_t cache = 0;
            bool listed = false; // any cache directory among the domain's cores: then the OS is the source
            for (std::size_t cpu : cores) {
                fut::json_t const &record = expected["per_cpu"][std::to_string(cpu)];
                if (!record.has("caches")) continue;
                listed |= !record["caches"].array.empty();
                for (fut::json_t const &entry : record["caches"].array) {
                    if (entry["type"].as_string() == "Instruction") continue;
                    std::set<std::size_t> sharers = fut::cpus_of(entry["shared_cpu_list"].as_string());
                    if (!sharers.count(cpu)) continue;
                    bool inside = true;
                    for (std::size_t sharer : sharers)
                        inside = inside && (!online.count(sharer) || cores.count(sharer));
                    if (inside) cache = std::max<std::uint64_t>(cache, std::uint64_t(entry["size_bytes"].as_integer()));
                }
            }
            EXPECT_EQ(topology.compute_cache_bytes_in(d), cache) << "domain " << d;
            EXPECT_EQ(topology.compute_cache_source_in(d),
                      listed ? fu::fact_source_t::os_k : fu::fact_source_t::unknown_k)
                << "domain " << d;
            ++d;
        }
    EXPECT_EQ(topology.compute_domains_count(), d);

    // CPU-less nodes: the firmware's (a node with an empty list) plus the ones whose CPUs a lower node claimed.
    std::set<std::size_t> cpuless, expected_cpuless;
    for (std::size_t m = 0; m != nodes.size(); ++m) {
        bool has_compute = false;
        for (std::size_t c = 0; c != topology.compute_domains_count(); ++c)
            has_compute |= topology.local_memory_of(c) == m;
        if (!has_compute) cpuless.insert(nodes[m]);
        if (node_cpus[m].empty()) expected_cpuless.insert(nodes[m]);
    }
    EXPECT_EQ(cpuless, expected_cpuless);
    bool overlapping = false;
    for (fut::json_t const &note : expected["notes"].array)
        overlapping |= note.as_string().find("more than one node cpulist") != std::string::npos;
    if (!overlapping) {
        std::set<std::size_t> declared;
        for (fut::json_t const &node : summary["cpuless_nodes"].array) declared.insert(std::size_t(node.as_integer()));
        EXPECT_EQ(cpuless, declared);
    }

    // Memory: RAM, free huge pages, declared distances.
    std::uint64_t ram = 0;
    for (std::size_t m = 0; m != nodes.size(); ++m) {
        std::string const id = std::to_string(nodes[m]);
        std::uint64_t const bytes = numa && summary["node_memtotal_bytes"].has(id)
                                        ? std::uint64_t(summary["node_memtotal_bytes"][id].as_integer())
                                        : 0; // a recorded tree without NUMA has no /proc/meminfo
        EXPECT_EQ(topology.volume_ram_in(m), bytes) << "node " << id;
        ram += bytes;
        std::uint64_t pages = 0, volume = 0;
        fut::json_t const &huge = summary["node_hugepages_free"];
        fut::json_t const *sizes =
            numa ? (huge.has(id) ? &huge[id] : nullptr)
                 : (summary["global_hugepages_free"].is_null() ? nullptr : &summary["global_hugepages_free"]);
        if (sizes)
            for (auto const &[kib, free] : sizes->object) {
                pages += std::uint64_t(free.as_integer());
                volume += std::uint64_t(free.as_integer()) * std::stoull(kib) * 1024;
                EXPECT_EQ(topology.huge_pages_count_in(m, std::stoull(kib) * 1024), std::uint64_t(free.as_integer()));
            }
        EXPECT_EQ(topology.huge_page_sizes_count_in(m), sizes ? sizes->object.size() : 0u);
        EXPECT_EQ(topology.huge_pages_count_in(m), pages) << "node " << id;
        EXPECT_EQ(topology.volume_huge_pages_in(m), volume) << "node " << id;
    }
    EXPECT_EQ(topology.volume_ram(), ram);
    std::uint64_t global_pages = 0, global_volume = 0;
    if (!summary["global_hugepages_free"].is_null())
        for (auto const &[kib, free] : summary["global_hugepages_free"].object)
            global_pages += std::uint64_t(free.as_integer()),
                global_volume += std::uint64_t(free.as_integer()) * std::stoull(kib) * 1024;
    EXPECT_EQ(topology.huge_pages_count(), global_pages);
    EXPECT_EQ(topology.volume_huge_pages(), global_volume);
    if (numa) {
        fut::json_t const &matrix = summary["distance_matrix"];
        for (std::size_t a = 0; a != nodes.size(); ++a)
            for (std::size_t b = 0; b != nodes.size(); ++b)
                EXPECT_EQ(topology.declared_distance(a, b), std::size_t(matrix[a][b].as_integer())) << a << "→" << b;
    } else {
        EXPECT_EQ(topology.declared_distance(0, 0), 10u);
    }
}

INSTANTIATE_TEST_SUITE_P(sysfs, recorded_machine, ::testing::ValuesIn(fixture_machines()),
                         [](::testing::TestParamInfo<std::string> const &info) {
                             std::string name = info.param;
                             for (char &c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

TEST(recorded_machines, an_allowed_mask_narrows_a_recorded_tree) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    std::string const root = fixtures_root + "/32intel64-2p8co2t+8ve"; // node 0: 0-7,16-23; node 1: 8-15,24-31
    fu::cpu_mask_t allowed;
    allowed.set(0), allowed.set(16), allowed.set(8), allowed.set(4000);
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest_from_sysfs(root.c_str(), allowed));
    expect_invariants(topology);
    ASSERT_EQ(topology.compute_domains_count(), 2u);
    EXPECT_EQ(cores_of(topology, 0), (std::set<std::size_t>{0, 16}));
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{8}));
    EXPECT_EQ(topology.memory_domains_count(), 2u);
    EXPECT_EQ(topology.online_cores_count(), 32u);
    EXPECT_EQ(topology.logical_cores_count(), 3u);
    // The node's L3 (0-7,16-23) is shared with cores outside {0, 16}; the L2 of the SMT pair (0,16) is not.
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 1024u * 1024u);
    EXPECT_EQ(topology.compute_cache_bytes_in(1), 0u) << "CPU 8 shares every cache with its sibling 24";
}

TEST(recorded_machines, a_failed_harvest_leaves_the_previous_answers) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest_from_sysfs((fixtures_root + "/64amd64-4p2n4ca2co").c_str()));
    fu::topology_facts_t const before = topology.facts();
    fu::cpu_mask_t elsewhere;
    elsewhere.set(4095);
    EXPECT_FALSE(topology.try_harvest_from_sysfs((fixtures_root + "/64amd64-4p2n4ca2co").c_str(), elsewhere));
    EXPECT_FALSE(topology.try_harvest_from_sysfs("/nonexistent/forkunion/root"));
    EXPECT_FALSE(topology.try_harvest_from_sysfs(nullptr));
    EXPECT_FALSE(topology.try_harvest_from_sysfs(std::string(5000, 'x').c_str())) << "a root longer than PATH_MAX";
    EXPECT_TRUE(topology.harvested());
    EXPECT_EQ(topology.facts().cores, before.cores);
    EXPECT_EQ(topology.facts().distances, before.distances);
    EXPECT_EQ(topology.compute_domains_count(), 8u);
    EXPECT_EQ(topology.memory_domains_count(), 8u);
}

TEST(recorded_machines, a_trailing_slash_on_the_root_is_harmless) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fu::machine_topology_t plain, slashed;
    ASSERT_TRUE(plain.try_harvest_from_sysfs((fixtures_root + "/256ppc-8n8s4t").c_str()));
    ASSERT_TRUE(slashed.try_harvest_from_sysfs((fixtures_root + "/256ppc-8n8s4t//").c_str()));
    EXPECT_EQ(plain.facts().cores, slashed.facts().cores);
    EXPECT_EQ(slashed.memory_node_id(2), 4u) << "sparse node ids 0,1,4,5,…";
}

TEST(recorded_machines, copies_and_moves_answer_alike) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fu::machine_topology_t original;
    ASSERT_TRUE(original.try_harvest_from_sysfs((fixtures_root + "/128ia64-17n4s2c").c_str()));
    fu::machine_topology_t copy = original;
    EXPECT_EQ(copy.facts().cores, original.facts().cores);
    EXPECT_NE(copy.cores_in(0).data(), original.cores_in(0).data()) << "a copy owns its cores";
    fu::machine_topology_t moved = std::move(copy);
    EXPECT_EQ(moved.memory_domains_count(), 17u);
    EXPECT_EQ(moved.volume_ram_in(16), original.volume_ram_in(16));
}

// ---------------------------------------------------------------------------------------------------------------
// Synthetic trees

fu::machine_topology_t harvest(fut::synthetic_tree_t const &tree) {
    fu::machine_topology_t topology;
    EXPECT_TRUE(topology.try_harvest_from_sysfs(tree.root().c_str())) << tree.root();
    return topology;
}

TEST(synthetic, a_plain_two_node_machine) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    fu::machine_topology_t const topology = harvest(tree);
    expect_invariants(topology);
    ASSERT_EQ(topology.compute_domains_count(), 2u);
    EXPECT_EQ(cores_of(topology, 0), (std::set<std::size_t>{0, 1, 2, 3}));
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 5, 6, 7}));
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 16u << 20) << "the node's L3";
    EXPECT_EQ(topology.compute_capacity_in(0), 0u) << "no cpu_capacity: unknown";
    EXPECT_EQ(topology.compute_levels_count(), 1u);
    EXPECT_EQ(topology.volume_ram_in(1), 1u << 30);
    EXPECT_EQ(topology.huge_pages_count_in(0), 6u);
    EXPECT_EQ(topology.huge_pages_count_in(0, 2u << 20), 5u);
    EXPECT_EQ(topology.huge_pages_count_in(0, 1u << 30), 1u);
    EXPECT_EQ(topology.huge_pages_count_in(0, 4096), 0u);
    EXPECT_EQ(topology.huge_page_size_in(0, 0), 2u << 20);
    EXPECT_EQ(topology.huge_page_size_in(0, 1), 1u << 30);
    EXPECT_EQ(topology.volume_huge_pages_in(0), 5 * (2ull << 20) + (1ull << 30));
    EXPECT_EQ(topology.huge_pages_count(), 12u);
    EXPECT_EQ(topology.volume_huge_pages(), 2 * (5 * (2ull << 20) + (1ull << 30)));
    EXPECT_EQ(topology.declared_distance(0, 1), 20u);
}

TEST(synthetic, offline_cpus_are_left_out) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    tree.write("sys/devices/system/cpu/online", "0-2,4-6\n");
    fu::machine_topology_t topology = harvest(tree);
    expect_invariants(topology);
    EXPECT_EQ(cores_of(topology, 0), (std::set<std::size_t>{0, 1, 2}));
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 5, 6}));
    EXPECT_EQ(topology.online_cores_count(), 6u);
    // A shared L3 whose only outside sharer is offline still counts as the domain's own.
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 16u << 20);

    // Old kernels: no cpu/online; an offline CPU's folder holds just `online` = 0.
    fut::synthetic_tree_t legacy;
    fut::synthetic_machine_t{}.write_to(legacy);
    legacy.remove("sys/devices/system/cpu/online");
    legacy.remove("sys/devices/system/cpu/cpu5");
    legacy.write("sys/devices/system/cpu/cpu5/online", "0\n");
    legacy.remove("sys/devices/system/cpu/cpu2/online"); // no file: online, like cpu0 on every kernel
    topology = harvest(legacy);
    expect_invariants(topology);
    EXPECT_EQ(cores_of(topology, 0), (std::set<std::size_t>{0, 1, 2, 3}));
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 6, 7}));
    EXPECT_EQ(topology.online_cores_count(), 7u);
}

TEST(synthetic, the_legacy_layout_reads_hex_masks) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    machine.legacy = true;
    machine.nodes = 2, machine.cpus_per_node = 40; // masks of two 32-bit words
    fut::synthetic_tree_t tree;
    machine.write_to(tree);
    fu::machine_topology_t const topology = harvest(tree);
    expect_invariants(topology);
    ASSERT_EQ(topology.compute_domains_count(), 2u);
    EXPECT_EQ(topology.cores_in(0).size(), 40u);
    EXPECT_EQ(topology.cores_in(1)[0], 40u);
    EXPECT_EQ(topology.cores_in(1)[39], 79u);
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 1u << 20) << "no L3 in this dump: the private L2";
}

TEST(synthetic, holes_in_node_numbering) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    machine.nodes = 3;
    machine.node_ids = {0, 2, 7};
    fut::synthetic_tree_t tree;
    machine.write_to(tree);
    tree.write("sys/devices/system/node/node7/distance", "30 20 10\n");
    fu::machine_topology_t topology = harvest(tree);
    expect_invariants(topology);
    ASSERT_EQ(topology.memory_domains_count(), 3u);
    EXPECT_EQ(topology.memory_node_id(1), 2u);
    EXPECT_EQ(topology.memory_node_id(2), 7u);
    EXPECT_EQ(topology.local_memory_of(2), 2u);
    EXPECT_EQ(cores_of(topology, 2), (std::set<std::size_t>{8, 9, 10, 11}));
    EXPECT_EQ(topology.declared_distance(2, 0), 30u);
    EXPECT_EQ(topology.declared_distance(2, 1), 20u);
    // Without node/online, the nodeN folders give the same list.
    tree.remove("sys/devices/system/node/online");
    fu::machine_topology_t const listed = harvest(tree);
    EXPECT_EQ(listed.facts().cores, topology.facts().cores);
    EXPECT_EQ(listed.memory_node_id(2), 7u);
    // A row of the wrong length is not trusted; the others still are.
    tree.write("sys/devices/system/node/node2/distance", "20 10\n");
    topology = harvest(tree);
    EXPECT_EQ(topology.declared_distance(1, 0), 0u);
    EXPECT_EQ(topology.declared_distance(1, 1), 10u);
    EXPECT_EQ(topology.declared_distance(0, 1), 20u);
}

TEST(synthetic, a_node_without_cpulist) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    tree.remove("sys/devices/system/node/node1/cpulist");
    fu::machine_topology_t topology = harvest(tree);
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 5, 6, 7})) << "falls back to the hex cpumap";

    tree.remove("sys/devices/system/node/node1/cpumap");
    topology = harvest(tree);
    expect_invariants(topology);
    ASSERT_EQ(topology.compute_domains_count(), 2u);
    EXPECT_EQ(topology.memory_domains_count(), 2u) << "the node keeps its memory";
    EXPECT_EQ(topology.volume_ram_in(1), 1u << 30);
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 5, 6, 7})) << "CPUs no node lists come last";
    EXPECT_EQ(topology.local_memory_of(1), 0u) << "…with memory domain 0 as their local memory";
    EXPECT_EQ(topology.logical_cores_count(), 8u);
}

TEST(synthetic, overlapping_node_lists_give_each_cpu_to_the_lowest_node) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    tree.write("sys/devices/system/node/node1/cpulist", "2-7\n");
    fu::machine_topology_t const topology = harvest(tree);
    expect_invariants(topology);
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 5, 6, 7}));
}

TEST(synthetic, capacity_classes_split_nodes_and_rank_levels) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    //                      node 0: 0     1     2    3  | node 1: 4    5    6     7
    machine.capacities = {1024, 1024, 980, 160, 170, 446, 480, 1024};
    fut::synthetic_tree_t tree;
    machine.write_to(tree);
    fu::machine_topology_t topology = harvest(tree);
    expect_invariants(topology);
    // Distinct values 160 170 | 446 480 | 980 1024: three classes, each within 10% of its smallest.
    EXPECT_EQ(topology.compute_levels_count(), 3u);
    ASSERT_EQ(topology.compute_domains_count(), 5u);
    std::vector<std::set<std::size_t>> const cores = {{3}, {0, 1, 2}, {4}, {5, 6}, {7}};
    std::vector<std::size_t> const levels = {0, 2, 0, 1, 2}, capacities = {170, 1024, 170, 480, 1024};
    for (std::size_t d = 0; d != 5; ++d) {
        EXPECT_EQ(cores_of(topology, d), cores[d]) << d;
        EXPECT_EQ(topology.compute_level_in(d), levels[d]) << d;
        EXPECT_EQ(topology.compute_capacity_in(d), capacities[d]) << d;
        EXPECT_EQ(topology.local_memory_of(d), d < 2 ? 0u : 1u) << d;
    }
    // The L3 of node 0 is shared by cores of two classes, so each domain's own cache is the L2.
    EXPECT_EQ(topology.compute_cache_bytes_in(1), 1u << 20);

    // Exactly 10% above stays in the class, more starts a new one; classes chain from their smallest value.
    machine.capacities = {100, 110, 100, 110, 200, 219, 221, 241};
    fut::synthetic_tree_t edges;
    machine.write_to(edges);
    topology = harvest(edges);
    EXPECT_EQ(topology.compute_levels_count(), 3u); // {100, 110} {200, 219} {221, 241}
    EXPECT_EQ(cores_of(topology, 0), (std::set<std::size_t>{0, 1, 2, 3}));
    EXPECT_EQ(cores_of(topology, 1), (std::set<std::size_t>{4, 5}));
    EXPECT_EQ(cores_of(topology, 2), (std::set<std::size_t>{6, 7}));
    EXPECT_EQ(topology.compute_capacity_in(2), 241u);
}

TEST(synthetic, one_untrusted_capacity_means_none_is_trusted) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    machine.capacities = {1024, 1024, 400, 400, 1024, 1024, 400, 400};
    fut::synthetic_tree_t tree;
    machine.write_to(tree);
    EXPECT_EQ(harvest(tree).compute_domains_count(), 4u);
    for (char const *garbage : {"0\n", "1025\n", "big\n", ""}) {
        tree.write("sys/devices/system/cpu/cpu6/cpu_capacity", garbage);
        fu::machine_topology_t const topology = harvest(tree);
        EXPECT_EQ(topology.compute_domains_count(), 2u) << garbage;
        EXPECT_EQ(topology.compute_levels_count(), 1u) << garbage;
        EXPECT_EQ(topology.compute_capacity_in(0), 0u) << garbage;
    }
}

TEST(synthetic, caches_are_the_largest_private_one) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    machine.l3_shared = "0-7"; // one L3 over both nodes: private to neither
    fut::synthetic_tree_t tree;
    machine.write_to(tree);
    fu::machine_topology_t topology = harvest(tree);
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 1u << 20);
    // An instruction cache is never the answer, however large.
    tree.write("sys/devices/system/cpu/cpu0/cache/index1/size", "64M\n");
    EXPECT_EQ(harvest(tree).compute_cache_bytes_in(0), 1u << 20);
    // A cache whose sharers do not include its own CPU is inconsistent, and skipped.
    tree.write("sys/devices/system/cpu/cpu0/cache/index2/size", "8M\n");
    tree.write("sys/devices/system/cpu/cpu0/cache/index2/shared_cpu_list", "1\n");
    EXPECT_EQ(harvest(tree).compute_cache_bytes_in(0), 1u << 20);
    tree.write("sys/devices/system/cpu/cpu0/cache/index2/shared_cpu_list", "0\n");
    EXPECT_EQ(harvest(tree).compute_cache_bytes_in(0), 8u << 20);
}

/**  A tree whose CPUs have no `cache/` directory, as some hypervisors publish it. */
void remove_cache_directories(fut::synthetic_tree_t const &tree, std::size_t cpus) {
    for (std::size_t cpu = 0; cpu != cpus; ++cpu)
        tree.remove("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache");
}

TEST(synthetic, no_cache_directories_leave_caches_unknown_and_say_so) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    fut::synthetic_tree_t tree;
    machine.write_to(tree);
    fu::machine_topology_t topology = harvest(tree);
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        EXPECT_EQ(topology.compute_cache_source_in(d), fu::fact_source_t::os_k) << "domain " << d;
    EXPECT_EQ(topology.compute_cache_source_in(topology.compute_domains_count()), fu::fact_source_t::unknown_k);

    remove_cache_directories(tree, machine.cpus());
    topology = harvest(tree);
    expect_invariants(topology);
    ASSERT_EQ(topology.compute_domains_count(), 2u);
    for (std::size_t d = 0; d != 2; ++d) {
        EXPECT_EQ(topology.compute_cache_bytes_in(d), 0u) << "domain " << d << ": nothing to read, nothing invented";
        EXPECT_EQ(topology.compute_cache_source_in(d), fu::fact_source_t::unknown_k) << "domain " << d;
    }
    // One node: the domain holds every online core, yet a recorded tree never asks this machine's processor.
    tree.remove("sys/devices/system/node");
    topology = harvest(tree);
    ASSERT_EQ(topology.compute_domains_count(), 1u);
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 0u);
    EXPECT_EQ(topology.compute_cache_source_in(0), fu::fact_source_t::unknown_k);
    // Caches listed but none private to the domain: known to be none, from the OS.
    fut::synthetic_tree_t shared_only;
    machine.write_to(shared_only);
    for (std::size_t cpu = 0; cpu != machine.cpus(); ++cpu)
        for (char const *index : {"/cache/index0", "/cache/index1", "/cache/index2"})
            shared_only.remove("sys/devices/system/cpu/cpu" + std::to_string(cpu) + index);
    for (std::size_t cpu = 0; cpu != machine.cpus(); ++cpu)
        shared_only.write("sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index3/shared_cpu_list",
                          "0-7\n");
    topology = harvest(shared_only);
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 0u);
    EXPECT_EQ(topology.compute_cache_source_in(0), fu::fact_source_t::os_k);
}

#if FORKUNION_OS_LINUX
TEST(synthetic, processor_caches_fill_only_unknown_domains_of_every_online_core) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    using source_t = fu::detail::linux_topology_source_t;
    fu::cpu_caches_t processor;
    processor.caches[0] = {48u << 10, 2, 1, fu::cpu_cache_kind_t::data_k};
    processor.caches[1] = {256u << 20, 0, 1, fu::cpu_cache_kind_t::instruction_k}; // never the answer
    processor.caches[2] = {32u << 20, 16, 3, fu::cpu_cache_kind_t::unified_k};
    processor.count = 3;
    fut::synthetic_machine_t machine;

    fut::synthetic_tree_t two_nodes;
    machine.write_to(two_nodes);
    remove_cache_directories(two_nodes, machine.cpus());
    fu::topology_facts_t facts;
    ASSERT_TRUE(source_t::try_harvest_sysfs(two_nodes.root().c_str(), nullptr, facts));
    source_t::add_processor_caches(facts, processor);
    for (fu::compute_domain_facts_t const &domain : facts.compute) {
        EXPECT_EQ(domain.cache_bytes, 0u) << "CPUID does not say whether the other node shares its L3";
        EXPECT_EQ(domain.cache_source, fu::fact_source_t::unknown_k);
    }

    fut::synthetic_tree_t one_node;
    machine.write_to(one_node);
    remove_cache_directories(one_node, machine.cpus());
    one_node.remove("sys/devices/system/node");
    ASSERT_TRUE(source_t::try_harvest_sysfs(one_node.root().c_str(), nullptr, facts));
    ASSERT_EQ(facts.compute.size(), 1u);
    source_t::add_processor_caches(facts, fu::cpu_caches_t{});
    EXPECT_EQ(facts.compute[0].cache_source, fu::fact_source_t::unknown_k) << "no processor answer: still unknown";
    source_t::add_processor_caches(facts, processor);
    EXPECT_EQ(facts.compute[0].cache_bytes, 32u << 20);
    EXPECT_EQ(facts.compute[0].cache_source, fu::fact_source_t::cpuid_k);

    // An allowed mask narrower than the online CPUs: others may share every cache.
    fu::cpu_mask_t allowed;
    allowed.set(0), allowed.set(1);
    ASSERT_TRUE(source_t::try_harvest_sysfs(one_node.root().c_str(), &allowed, facts));
    source_t::add_processor_caches(facts, processor);
    EXPECT_EQ(facts.compute[0].cache_bytes, 0u);
    EXPECT_EQ(facts.compute[0].cache_source, fu::fact_source_t::unknown_k);

    // Where sysfs lists caches, it wins.
    fut::synthetic_tree_t listed;
    machine.write_to(listed);
    listed.remove("sys/devices/system/node");
    ASSERT_TRUE(source_t::try_harvest_sysfs(listed.root().c_str(), nullptr, facts));
    source_t::add_processor_caches(facts, processor);
    EXPECT_EQ(facts.compute[0].cache_bytes, 16u << 20);
    EXPECT_EQ(facts.compute[0].cache_source, fu::fact_source_t::os_k);
}
#endif

// ---------------------------------------------------------------------------------------------------------------
// The processor's own cache description (`forkunion/hardware/caches.hpp`)

TEST(cpuid_caches, amd_legacy_leaves_decode_to_hwlocs_sizes) {
    // Leaves 0x80000005 and 0x80000006 of an AMD EPYC KVM guest without TopologyExtensions; hwloc 2 read
    // L1d 49152, L1i 32768, L2 1048576 and L3 532676608 bytes from the same registers.
    using cpuid_t = fu::detail::x86_cache_decoder_t::cpuid_t;
    fu::cpu_caches_t caches;
    fu::detail::x86_cache_decoder_t::add_amd_legacy_leaves(cpuid_t{0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140},
                                                           cpuid_t{0x40802040, 0x60804040, 0x04006140, 0x0fe09140},
                                                           caches);
    ASSERT_EQ(caches.count, 4u);
    std::map<std::pair<int, int>, std::uint64_t> found;
    for (std::size_t i = 0; i != caches.count; ++i) {
        found[{caches.caches[i].level, int(caches.caches[i].kind)}] = caches.caches[i].bytes;
        EXPECT_EQ(caches.caches[i].sharing_threads, 0u) << "the legacy leaves do not count sharers";
    }
    EXPECT_EQ((found[{1, int(fu::cpu_cache_kind_t::data_k)}]), 49152u);
    EXPECT_EQ((found[{1, int(fu::cpu_cache_kind_t::instruction_k)}]), 32768u);
    EXPECT_EQ((found[{2, int(fu::cpu_cache_kind_t::unified_k)}]), 1048576u);
    EXPECT_EQ((found[{3, int(fu::cpu_cache_kind_t::unified_k)}]), 532676608u);
    EXPECT_EQ(caches.largest_data_bytes(), 532676608u);
    // An associativity of 0 disables the L2 and the L3 whatever their size fields say.
    fu::cpu_caches_t disabled;
    fu::detail::x86_cache_decoder_t::add_amd_legacy_leaves(cpuid_t{}, cpuid_t{0, 0, 0x04000140, 0x0fe00140}, disabled);
    EXPECT_EQ(disabled.count, 0u);
}

TEST(cpuid_caches, deterministic_leaves_decode_and_end_at_type_zero) {
    using decoder_t = fu::detail::x86_cache_decoder_t;
    using cpuid_t = decoder_t::cpuid_t;
    // A 30 MiB L3 shared by 16 threads: 20 ways, 1 partition, 64-byte lines, 24576 sets (SDM leaf-4 layout).
    cpuid_t const l3{3u | 3u << 5 | 15u << 14, 19u << 22 | 0u << 12 | 63u, 24575u, 0};
    cpuid_t const l1d{1u | 1u << 5 | 1u << 14, 11u << 22 | 0u << 12 | 63u, 63u, 0};
    fu::cpu_caches_t caches;
    EXPECT_TRUE(decoder_t::add_deterministic_leaf(l1d, caches));
    EXPECT_TRUE(decoder_t::add_deterministic_leaf(l3, caches));
    EXPECT_TRUE(decoder_t::add_deterministic_leaf(cpuid_t{7u | 1u << 5, ~0u, ~0u, 0}, caches)) << "unknown type";
    EXPECT_FALSE(decoder_t::add_deterministic_leaf(cpuid_t{0u, ~0u, ~0u, ~0u}, caches)) << "type 0 ends the list";
    ASSERT_EQ(caches.count, 2u);
    EXPECT_EQ(caches.caches[0].bytes, 12u * 64 * 64);
    EXPECT_EQ(caches.caches[0].kind, fu::cpu_cache_kind_t::data_k);
    EXPECT_EQ(caches.caches[0].sharing_threads, 2u);
    EXPECT_EQ(caches.caches[1].bytes, 20ull * 64 * 24576);
    EXPECT_EQ(caches.caches[1].level, 3u);
    EXPECT_EQ(caches.caches[1].sharing_threads, 16u);
    EXPECT_EQ(caches.largest_data_bytes(), 30u << 20);
    // Every field at its largest, 1024 ways x 1024 partitions x 4096 bytes x 2^32 sets = 2^64 bytes, wraps a
    // 64-bit product to 0: such a leaf is malformed and skipped, never a wrapped size.
    fu::cpu_caches_t huge;
    EXPECT_TRUE(decoder_t::add_deterministic_leaf(cpuid_t{3u | 1u << 5, ~0u, ~0u, 0}, huge));
    EXPECT_EQ(huge.count, 0u);
    EXPECT_TRUE(decoder_t::add_deterministic_leaf(cpuid_t{3u | 1u << 5, ~0u, ~0u >> 1, 0}, huge));
    ASSERT_EQ(huge.count, 1u);
    EXPECT_EQ(huge.caches[0].bytes, 1ull << 63);
    // A full list refuses more, and a hypervisor that never ends the list cannot overrun it.
    fu::cpu_caches_t full;
    for (std::size_t i = 0; i != fu::cpu_caches_t::capacity_k; ++i)
        EXPECT_TRUE(decoder_t::add_deterministic_leaf(l3, full));
    EXPECT_FALSE(decoder_t::add_deterministic_leaf(l3, full));
    EXPECT_EQ(full.count, fu::cpu_caches_t::capacity_k);
}

TEST(synthetic, no_node_directory_means_one_memory_domain) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    tree.remove("sys/devices/system/node");
    tree.write("proc/meminfo", "MemTotal:        2097152 kB\nMemFree:          100 kB\n");
    fu::machine_topology_t const topology = harvest(tree);
    expect_invariants(topology);
    EXPECT_EQ(topology.compute_domains_count(), 1u);
    EXPECT_EQ(topology.memory_domains_count(), 1u);
    EXPECT_EQ(topology.logical_cores_count(), 8u);
    EXPECT_EQ(topology.volume_ram(), 2u << 30) << "from /proc/meminfo";
    EXPECT_EQ(topology.huge_pages_count_in(0), 12u) << "the global pools";
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 16u << 20);
}

TEST(synthetic, no_cpu_directory_is_a_failed_harvest) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    tree.remove("sys/devices/system/cpu");
    fu::machine_topology_t topology;
    EXPECT_FALSE(topology.try_harvest_from_sysfs(tree.root().c_str()));
    EXPECT_FALSE(topology.harvested());
    EXPECT_EQ(topology.compute_domains_count(), 1u);
}

/**  Contents that no sysfs parser may trust, and files that are not files. */
enum class garbage_t { text, dir, fifo, link_to_zero, link_loop };
struct garbage_case_t {
    garbage_t kind;
    std::string bytes;
};

std::vector<garbage_case_t> garbage_cases() {
    std::vector<garbage_case_t> cases;
    for (std::string bytes :
         {std::string(), std::string("\n"), std::string("garbage\n"), std::string("\xff\xfe\x00\x01", 4),
          std::string("-1\n"), std::string("0-\n"), std::string("3-1\n"), std::string(",\n"), std::string("8192\n"),
          std::string("99999999999999999999999999\n"), std::string("0x10\n"), std::string("1 2 3 4 5 6 7 8 9 10\n"),
          std::string(100 * 1024, '7')})
        cases.push_back({garbage_t::text, bytes});
    std::string repeated;
    for (int i = 0; i != 20000; ++i) repeated += "0,";
    cases.push_back({garbage_t::text, repeated + "0\n"}); // 40 KB, valid but silly: within the size limit
    cases.push_back({garbage_t::dir, {}});
    cases.push_back({garbage_t::fifo, {}});
    cases.push_back({garbage_t::link_to_zero, {}});
    cases.push_back({garbage_t::link_loop, {}});
    return cases;
}

#if FORKUNION_OS_LINUX
/**  Plants a FIFO or a symbolic link at `path` (POSIX only). */
void plant_special(std::filesystem::path const &path, garbage_t kind) {
    if (kind == garbage_t::fifo) {
        ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0);
    }
    if (kind == garbage_t::link_to_zero) {
        ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
    }
    if (kind == garbage_t::link_loop) {
        ASSERT_EQ(::symlink(path.filename().c_str(), path.c_str()), 0);
    }
}
#else
/**  Never reached: the garbage tests skip where no back end reads sysfs trees. */
void plant_special(std::filesystem::path const &, garbage_t) {
    ADD_FAILURE() << "special files are planted only where sysfs trees are read";
}
#endif

void plant(fut::synthetic_tree_t const &tree, std::string const &file, garbage_case_t const &garbage) {
    std::filesystem::path const path = tree.path(file);
    std::filesystem::remove_all(path);
    switch (garbage.kind) {
    case garbage_t::text:
        tree.write(file, garbage.bytes);
        break;
    case garbage_t::dir:
        std::filesystem::create_directories(path / "inner");
        break;
    default:
        plant_special(path, garbage.kind);
        break;
    }
}

TEST(synthetic, garbage_in_every_file_is_skipped_and_never_trusted) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_machine_t machine;
    machine.capacities = {1024, 1024, 512, 512, 1024, 1024, 512, 512};
    fut::synthetic_tree_t pristine;
    machine.write_to(pristine);
    fu::machine_topology_t const reference = harvest(pristine);
    std::vector<std::string> const files = pristine.files();
    ASSERT_GT(files.size(), 100u);
    std::size_t harvests = 0, refused = 0;
    for (garbage_case_t const &garbage : garbage_cases()) {
        fut::synthetic_tree_t tree;
        machine.write_to(tree);
        for (std::string const &file : files) {
            plant(tree, file, garbage);
            fu::machine_topology_t topology;
            fu::topology_facts_t const stand_in = topology.facts();
            bool const harvested = topology.try_harvest_from_sysfs(tree.root().c_str());
            SCOPED_TRACE(file + " <- " + std::to_string(static_cast<int>(garbage.kind)) + ":" +
                         garbage.bytes.substr(0, 16));
            expect_invariants(topology);
            ++harvests;
            if (!harvested) {
                ++refused;
                EXPECT_EQ(topology.facts().cores, stand_in.cores) << "a failed harvest changes nothing";
            } else {
                // Garbage never adds cores, RAM, page sizes or distances the pristine tree did not declare. (A
                // garbage file that happens to be a valid number, like "8192" free pages, is indistinguishable
                // from the truth and may change a value; it cannot add one.)
                std::set<std::size_t> all;
                for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
                    for (std::uint32_t core : topology.cores_in(d)) all.insert(core);
                for (std::size_t core : all) EXPECT_LT(core, 8u);
                EXPECT_LE(topology.volume_ram(), reference.volume_ram());
                for (std::size_t m = 0; m != topology.memory_domains_count(); ++m)
                    EXPECT_LE(topology.huge_page_sizes_count_in(m), 2u);
                for (std::size_t d = 0; d != topology.compute_domains_count(); ++d) {
                    EXPECT_LE(topology.compute_cache_bytes_in(d), 16u << 20);
                    EXPECT_TRUE(topology.compute_capacity_in(d) == 0 || topology.compute_capacity_in(d) == 512 ||
                                topology.compute_capacity_in(d) == 1024);
                }
                for (std::size_t a = 0; a != topology.memory_domains_count(); ++a)
                    for (std::size_t b = 0; b != topology.memory_domains_count(); ++b)
                        EXPECT_TRUE(topology.declared_distance(a, b) == 0 || topology.declared_distance(a, b) == 10 ||
                                    topology.declared_distance(a, b) == 20);
                // Facts this file does not feed survive it. (`node/online` garbage such as "0,0,…,0" is a valid
                // list of one node: plausible, hence believed.)
                if (file.find("node0/meminfo") == std::string::npos && file.find("node/online") == std::string::npos) {
                    EXPECT_EQ(topology.memory_domains_count(), 2u);
                    EXPECT_EQ(topology.volume_ram_in(0), 1u << 30);
                }
            }
            tree.remove(file); // restore the pristine file for the next round
            std::filesystem::copy_file(pristine.path(file), tree.path(file));
        }
    }
    std::printf("garbage: %zu harvests of a %zu-file tree, %zu refused (no usable CPU found)\n", harvests, files.size(),
                refused);
}

TEST(synthetic, specific_garbage_leaves_its_fact_unknown) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    fut::synthetic_tree_t tree;
    fut::synthetic_machine_t{}.write_to(tree);
    std::string const node0 = "sys/devices/system/node/node0/";
    tree.write(node0 + "meminfo", "Node 0 MemTotal: lots kB\n");
    tree.write(node0 + "distance", "10 twenty\n");
    tree.write(node0 + "hugepages/hugepages-2048kB/free_hugepages", "-5\n");
    tree.write("sys/devices/system/cpu/cpu0/cache/index3/size", "16Q\n");
    tree.write("sys/devices/system/cpu/online", "0-3,\n"); // malformed: fall back to the cpuN folders
    fu::machine_topology_t const topology = harvest(tree);
    expect_invariants(topology);
    EXPECT_EQ(topology.logical_cores_count(), 8u);
    EXPECT_EQ(topology.volume_ram_in(0), 0u);
    EXPECT_EQ(topology.volume_ram_in(1), 1u << 30);
    EXPECT_EQ(topology.declared_distance(0, 1), 0u);
    EXPECT_EQ(topology.declared_distance(1, 0), 20u);
    EXPECT_EQ(topology.huge_pages_count_in(0, 2u << 20), 0u);
    EXPECT_EQ(topology.huge_page_sizes_count_in(0), 1u) << "only the 1 GiB size remains";
    EXPECT_EQ(topology.compute_cache_bytes_in(0), 16u << 20) << "CPUs 1-3 still report the L3";
}

// ---------------------------------------------------------------------------------------------------------------
// The live machine, the stand-in, and the portable back end

#if FORKUNION_OS_WINDOWS
/**  Every active processor of every group, asked of Windows group by group (active processors are numbered
 *   densely from bit 0 within a group), as dense ids: not through the library's buffer parser. */
std::set<std::size_t> process_cores() {
    std::set<std::size_t> ids;
    std::size_t first = 0;
    for (WORD group = 0; group != ::GetActiveProcessorGroupCount(); ++group) {
        for (DWORD bit = 0; bit != ::GetActiveProcessorCount(group); ++bit) ids.insert(first + bit);
        first += ::GetMaximumProcessorCount(group);
    }
    return ids;
}
#elif FORKUNION_OS_WASM
/**  The threads the host can run, ids 0 .. n-1 (WebAssembly has no affinity). */
std::set<std::size_t> process_cores() {
    std::set<std::size_t> ids;
    std::size_t const count = fu::detail::wasm_threads_k ? std::max(1u, std::thread::hardware_concurrency()) : 1;
    for (std::size_t id = 0; id != count; ++id) ids.insert(id);
    return ids;
}
#else
std::set<std::size_t> process_cores() {
    return fut::kernel_affinity();
}
#endif

TEST(live, the_stand_in_is_one_domain_of_the_allowed_cores) {
    fu::machine_topology_t const topology;
    EXPECT_FALSE(topology.harvested());
    expect_invariants(topology);
    EXPECT_EQ(topology.compute_domains_count(), 1u);
    EXPECT_EQ(topology.memory_domains_count(), 1u);
    EXPECT_EQ(cores_of(topology, 0), process_cores());
    EXPECT_EQ(topology.logical_cores_count(), fu::allowed_cores_count());
    EXPECT_EQ(topology.compute_capacity_in(0), 0u);
    EXPECT_EQ(topology.volume_ram(), 0u);
    EXPECT_EQ(topology.declared_distance(0, 0), 10u);
}

#if FORKUNION_OS_LINUX
TEST(live, the_harvest_matches_this_process) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    expect_invariants(topology);
    std::set<std::size_t> all;
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        for (std::uint32_t core : topology.cores_in(d)) all.insert(core);
    std::ifstream online_file("/sys/devices/system/cpu/online");
    std::string online_list;
    std::getline(online_file, online_list);
    std::set<std::size_t> expected;
    for (std::size_t id : fut::kernel_affinity())
        if (fut::cpus_of(online_list).count(id)) expected.insert(id);
    EXPECT_EQ(all, expected);
    EXPECT_EQ(topology.online_cores_count(), fut::cpus_of(online_list).size());
    std::size_t nodes = 0;
    if (std::filesystem::exists("/sys/devices/system/node"))
        for (auto const &entry : std::filesystem::directory_iterator("/sys/devices/system/node"))
            nodes += entry.path().filename().string().rfind("node", 0) == 0 && entry.is_directory();
    EXPECT_EQ(topology.memory_domains_count(), std::max<std::size_t>(nodes, 1));
    EXPECT_GT(topology.volume_ram(), 0u);
}

TEST(live, the_cache_figures_say_where_they_came_from) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    std::uint64_t const processor = fu::calling_cpu_caches().largest_data_bytes();
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d) {
        bool listed = false; // any `indexK` directory under a core's `cache/`, read without the library
        for (std::uint32_t core : topology.cores_in(d)) {
            std::error_code error;
            std::filesystem::directory_iterator entries("/sys/devices/system/cpu/cpu" + std::to_string(core) + "/cache",
                                                        error);
            if (!error)
                for (auto const &entry : entries) listed |= entry.path().filename().string().rfind("index", 0) == 0;
        }
        fu::fact_source_t const source = topology.compute_cache_source_in(d);
        std::uint64_t const bytes = topology.compute_cache_bytes_in(d);
        if (listed) {
            EXPECT_EQ(source, fu::fact_source_t::os_k) << "domain " << d;
        } else if (topology.logical_cores_count_in(d) == topology.online_cores_count() && processor) {
            EXPECT_EQ(source, fu::fact_source_t::cpuid_k) << "domain " << d;
            EXPECT_EQ(bytes, processor) << "domain " << d;
        } else {
            EXPECT_EQ(source, fu::fact_source_t::unknown_k) << "domain " << d;
            EXPECT_EQ(bytes, 0u) << "domain " << d;
        }
        std::printf("live: domain %zu cache %llu bytes from %s\n", d, static_cast<unsigned long long>(bytes),
                    source == fu::fact_source_t::os_k      ? "the OS"
                    : source == fu::fact_source_t::cpuid_k ? "CPUID"
                                                           : "nowhere");
    }
}

TEST(live, the_harvest_follows_the_calling_threads_mask) {
    std::set<std::size_t> const allowed = fut::kernel_affinity();
    std::size_t const last = *allowed.rbegin();
    std::size_t cores = 0, first = ~std::size_t(0);
    std::thread([&] {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(last, &set);
        ASSERT_EQ(::sched_setaffinity(0, sizeof(set), &set), 0);
        fu::machine_topology_t topology;
        ASSERT_TRUE(topology.try_harvest());
        cores = topology.logical_cores_count();
        first = topology.cores_in(0)[0];
    }).join();
    EXPECT_EQ(cores, 1u);
    EXPECT_EQ(first, last);
}
#elif FORKUNION_OS_WINDOWS
TEST(live, the_harvest_matches_this_process) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    EXPECT_TRUE(topology.harvested());
    expect_invariants(topology);
    std::set<std::size_t> all;
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        for (std::uint32_t core : topology.cores_in(d)) all.insert(core);
    EXPECT_EQ(all, process_cores()) << "every active processor of every group";
    EXPECT_EQ(topology.online_cores_count(), ::GetActiveProcessorCount(ALL_PROCESSOR_GROUPS));
    ULONG highest = 0;
    ASSERT_TRUE(::GetNumaHighestNodeNumber(&highest));
    EXPECT_EQ(topology.memory_domains_count(), highest + 1);
    MEMORYSTATUSEX status{};
    status.dwLength = sizeof(status);
    ASSERT_TRUE(::GlobalMemoryStatusEx(&status));
    if (highest == 0) {
        EXPECT_EQ(topology.volume_ram(), status.ullTotalPhys);
    }
    std::printf("live: %zu compute domains, %zu cores, %zu levels, largest private cache of domain 0: %llu bytes\n",
                topology.compute_domains_count(), topology.logical_cores_count(), topology.compute_levels_count(),
                static_cast<unsigned long long>(topology.compute_cache_bytes_in(0)));
}

TEST(live, the_harvest_spans_every_group_whatever_the_threads_mask) {
    // A Windows thread runs in one group; the process may use all of them, and the topology describes them all.
    std::set<std::size_t> const cores = process_cores();
    std::size_t harvested = 0;
    std::thread([&] {
        GROUP_AFFINITY one{};
        one.Group = 0;
        one.Mask = 1;
        ASSERT_TRUE(::SetThreadGroupAffinity(::GetCurrentThread(), &one, nullptr));
        fu::machine_topology_t topology;
        ASSERT_TRUE(topology.try_harvest());
        harvested = topology.logical_cores_count();
    }).join();
    EXPECT_EQ(harvested, cores.size());
    EXPECT_EQ(fu::allowed_cores_count(), cores.size());
}
#else
TEST(live, the_harvest_matches_this_process) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    EXPECT_TRUE(topology.harvested());
    expect_invariants(topology);
    EXPECT_EQ(topology.compute_domains_count(), 1u);
    EXPECT_EQ(topology.memory_domains_count(), 1u);
    EXPECT_EQ(cores_of(topology, 0), process_cores());
    EXPECT_EQ(fu::allowed_cores_count(), process_cores().size());
}
#endif

TEST(portable, the_portable_source_is_one_domain_of_hardware_threads) {
    fu::basic_machine_topology_t<fu::detail::portable_topology_source_t> topology;
    std::size_t const threads = std::max(1u, std::thread::hardware_concurrency());
    EXPECT_EQ(topology.logical_cores_count(), threads);
    EXPECT_FALSE(topology.harvested());
    ASSERT_TRUE(topology.try_harvest());
    EXPECT_TRUE(topology.harvested());
    EXPECT_EQ(topology.compute_domains_count(), 1u);
    EXPECT_EQ(topology.memory_domains_count(), 1u);
    EXPECT_EQ(topology.logical_cores_count(), threads);
    EXPECT_EQ(topology.cores_in(0)[threads - 1], threads - 1);
    EXPECT_FALSE(topology.try_harvest_from_sysfs((fixtures_root + "/2arm-2c").c_str()));
    EXPECT_EQ(topology.logical_cores_count(), threads) << "the failed harvest changed nothing";
}

} // namespace
