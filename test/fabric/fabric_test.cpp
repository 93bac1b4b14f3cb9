/**
 *  @file   fabric_test.cpp
 *  @brief  `include/forkunion/fabric*.hpp`: the measured memory fabric.
 *
 *  - The derivations (media, memory levels, distances) on synthetic edge tables: ties, CPU-less nodes,
 *    unreachable edges, a single domain, fast-but-far HBM, chains of small steps.
 *  - The kernels: Sattolo's cycle is one cycle and uniform over the cyclic permutations; the walk and the stream.
 *  - Live harvests on this machine (short options, at 1 thread and at every allowed core): structure, finite
 *    positive figures, local distance 10, and the saved masks come back.
 *  - A harvest of a recorded two-socket Xeon, whose cores and nodes this machine partly lacks: the edges it cannot
 *    reach read 0 and are counted, and expectations come from the kernel's view of this machine, not the library.
 *  - The portable platform (no pinning, no placement), refusals and the whole-or-nothing rule.
 *  Timing figures are never compared with constants: the machines are shared. The figures themselves are printed
 *  by `forkunion_bench_fabric` and `forkunion_topology --fabric`.
 */
#include <algorithm> // `std::sort`, `std::clamp`, `std::count`
#include <cmath>     // `std::isfinite`
#include <cstdio>    // `std::printf`
#include <fstream>   // `std::ifstream`
#include <limits>    // `std::numeric_limits`
#include <map>       // `std::map`
#include <set>       // `std::set`
#include <string>    // `std::string`
#include <vector>    // `std::vector`

#include <gtest/gtest.h>

#include <forkunion.hpp>
#include <forkunion/fabric/detail/fabric_portable.hpp>

#include "topology_support.hpp"

#include <forkunion/hardware/detail/system_windows.hpp> // `GetNumaHighestNodeNumber`, on Windows only
#include "test_support.hpp"

namespace fu = forkunion;
namespace fut = forkunion::testing;

namespace {

constexpr double gb_k = 1e9;
std::string const fixtures_root = FORKUNION_SYSFS_FIXTURES_ROOT;
std::string const two_socket_xeon = fixtures_root + "/32intel64-2p8co2t+8ve";

// ---- Synthetic edge tables ----

/**  A C×M edge table built row by row: `table.set(c, m, latency_ns, gigabytes_per_second)`. */
struct edge_table_t {
    std::size_t compute = 0, memory = 0;
    std::vector<fu::fabric_edge_t> edges;
    edge_table_t(std::size_t c, std::size_t m) : compute(c), memory(m), edges(c * m) {}
    edge_table_t &set(std::size_t c, std::size_t m, double latency_ns, double gigabytes_per_second) {
        edges[c * memory + m].latency_ns = latency_ns;
        edges[c * memory + m].bandwidth_bytes_per_second = gigabytes_per_second * gb_k;
        return *this;
    }
    /**  The levels, and their count in `.second`, with the default tolerances. */
    std::pair<std::vector<std::size_t>, std::size_t> levels(double bandwidth_tolerance = 0.25,
                                                            double latency_tolerance = 0.25) const {
        std::vector<fu::memory_medium_t> media(memory);
        fu::summarize_memory_media(edges.data(), compute, memory, media.data());
        std::vector<std::size_t> levels(memory, 12345);
        std::size_t const count =
            fu::derive_memory_levels(media.data(), memory, bandwidth_tolerance, latency_tolerance, levels.data());
        return {levels, count};
    }
    std::vector<std::uint8_t> distances(std::vector<std::size_t> const &local) const {
        std::vector<std::uint8_t> distances(compute * memory, 77);
        fu::derive_memory_distances(edges.data(), compute, memory, local.data(), distances.data());
        return distances;
    }
};

TEST(fabric_levels, a_single_domain_is_level_zero_of_one) {
    auto const [levels, count] = edge_table_t(1, 1).set(0, 0, 90, 20).levels();
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{0}));
}

TEST(fabric_levels, nothing_reached_gives_no_levels_and_every_domain_reads_the_count) {
    auto const [levels, count] = edge_table_t(2, 3).levels();
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{0, 0, 0}));
}

TEST(fabric_levels, the_ddr_of_two_sockets_shares_one_level_whoever_asks) {
    // Local edges 100 ns / 20 GB/s, remote edges 170 ns / 12 GB/s: the same medium seen from two places.
    auto const [levels, count] =
        edge_table_t(2, 2).set(0, 0, 100, 20).set(0, 1, 170, 12).set(1, 0, 172, 12).set(1, 1, 103, 19.5).levels();
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{0, 0}));
}

TEST(fabric_levels, hbm_outranks_ddr_at_equal_latency) {
    auto const [levels, count] = edge_table_t(1, 2).set(0, 0, 100, 20).set(0, 1, 100, 80).levels();
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{1, 0})); // domain 1 is the HBM: level 0
}

TEST(fabric_levels, fast_but_far_hbm_still_outranks_ddr) {
    // HBM behind a longer path: 40% more latency than DDR, 4x the bandwidth. Bandwidth keys first.
    auto const [levels, count] = edge_table_t(1, 2).set(0, 0, 100, 20).set(0, 1, 140, 80).levels();
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{1, 0}));
}

TEST(fabric_levels, a_bandwidth_tie_is_split_by_latency) {
    // Same bandwidth (within 25%), twice the latency: two levels, the faster first.
    auto const [levels, count] = edge_table_t(1, 3).set(0, 0, 210, 20).set(0, 1, 100, 21).set(0, 2, 105, 19).levels();
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{1, 0, 0}));
}

TEST(fabric_levels, ties_within_tolerance_share_a_level_and_beyond_it_do_not) {
    auto const within = edge_table_t(1, 2).set(0, 0, 100, 20).set(0, 1, 124, 16.1).levels(); // 20 <= 16.1*1.25
    EXPECT_EQ(within.second, 1u);
    auto const beyond = edge_table_t(1, 2).set(0, 0, 100, 20).set(0, 1, 100, 15.9).levels(); // 20 > 15.9*1.25
    EXPECT_EQ(beyond.second, 2u);
    EXPECT_EQ(beyond.first, (std::vector<std::size_t>{0, 1}));
    auto const zero_tolerance = edge_table_t(1, 2).set(0, 0, 100, 20).set(0, 1, 100, 19.99).levels(0, 0);
    EXPECT_EQ(zero_tolerance.second, 2u);
}

TEST(fabric_levels, classes_are_anchored_so_small_steps_do_not_chain) {
    // 100, 85, 72, 61 GB/s: each within 25% of the next, but the class anchored at 100 stops above 80.
    auto const [levels, count] =
        edge_table_t(1, 4).set(0, 0, 100, 100).set(0, 1, 100, 85).set(0, 2, 100, 72).set(0, 3, 100, 61).levels();
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{0, 0, 1, 1}));
}

TEST(fabric_levels, a_cpu_less_cxl_node_sits_below_the_ddr_of_both_sockets) {
    // Two sockets (domains 0, 1) and a CPU-less CXL expander (domain 2) reached from both, slower from both.
    auto const [levels, count] = edge_table_t(2, 3)
                                     .set(0, 0, 100, 20)
                                     .set(0, 1, 170, 12)
                                     .set(0, 2, 250, 8)
                                     .set(1, 0, 170, 12)
                                     .set(1, 1, 100, 20)
                                     .set(1, 2, 240, 9)
                                     .levels();
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{0, 0, 1}));
}

TEST(fabric_levels, a_medium_keys_on_its_best_initiator) {
    // Domain 1 is slow from compute domain 0 but as fast as domain 0 from compute domain 1: the same tier.
    auto const [levels, count] = edge_table_t(2, 2).set(0, 0, 100, 20).set(0, 1, 300, 5).set(1, 1, 101, 20).levels();
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{0, 0}));
}

TEST(fabric_levels, unreachable_domains_have_no_level_and_do_not_shift_the_others) {
    // Domain 1 is reached by nobody; domain 3 only by compute domain 1; a half-measured edge does not count.
    edge_table_t table(2, 4);
    table.set(0, 0, 100, 20).set(0, 2, 100, 80).set(1, 3, 250, 8);
    table.edges[1 * 4 + 1].latency_ns = 100; // latency without bandwidth: not reached
    auto const [levels, count] = table.levels();
    EXPECT_EQ(count, 3u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{1, 3, 0, 2}));
}

TEST(fabric_levels, levels_are_dense_and_grow_with_distance) {
    // Four media, none within tolerance of another: HBM, DDR, far DDR (same bandwidth class, slower), CXL.
    auto const [levels, count] = edge_table_t(1, 4)
                                     .set(0, 0, 250, 8)   // CXL
                                     .set(0, 1, 100, 20)  // DDR
                                     .set(0, 2, 130, 400) // HBM
                                     .set(0, 3, 160, 19)  // DDR behind a slower controller
                                     .levels();
    EXPECT_EQ(count, 4u);
    EXPECT_EQ(levels, (std::vector<std::size_t>{3, 1, 0, 2}));
    std::set<std::size_t> const distinct(levels.begin(), levels.end());
    EXPECT_EQ(distinct, (std::set<std::size_t>{0, 1, 2, 3}));
}

TEST(fabric_levels, the_media_summary_takes_the_best_of_every_initiator) {
    edge_table_t table(3, 2);
    table.set(0, 0, 120, 10).set(1, 0, 90, 7).set(2, 0, 150, 15);
    std::vector<fu::memory_medium_t> media(2);
    fu::summarize_memory_media(table.edges.data(), 3, 2, media.data());
    EXPECT_DOUBLE_EQ(media[0].latency_ns, 90);                        // from compute domain 1
    EXPECT_DOUBLE_EQ(media[0].bandwidth_bytes_per_second, 15 * gb_k); // from compute domain 2
    EXPECT_EQ(media[1].latency_ns, 0);
    EXPECT_EQ(media[1].bandwidth_bytes_per_second, 0);
}

// ---- Distances ----

TEST(fabric_distances, local_is_ten_and_remote_is_ten_times_the_latency_ratio_rounded) {
    edge_table_t table(2, 2);
    table.set(0, 0, 100, 20).set(0, 1, 214, 12).set(1, 0, 162, 12).set(1, 1, 108, 20);
    auto const distances = table.distances({0, 1});
    EXPECT_EQ(distances, (std::vector<std::uint8_t>{10, 21, 15, 10})); // 21.4 -> 21, 15.0 -> 15
}

TEST(fabric_distances, faster_than_local_reads_ten_and_huge_ratios_clamp_to_254) {
    edge_table_t table(1, 3);
    table.set(0, 0, 100, 20).set(0, 1, 80, 90).set(0, 2, 100 * 40, 0.1);
    EXPECT_EQ(table.distances({0}), (std::vector<std::uint8_t>{10, 10, 254}));
}

TEST(fabric_distances, unreached_edges_read_zero) {
    edge_table_t table(2, 2);
    table.set(0, 0, 100, 20).set(1, 1, 100, 20);
    EXPECT_EQ(table.distances({0, 1}), (std::vector<std::uint8_t>{10, 0, 0, 10}));
}

TEST(fabric_distances, an_unreached_local_edge_makes_the_fastest_reached_edge_the_reference) {
    edge_table_t table(1, 3);
    table.set(0, 1, 150, 20).set(0, 2, 300, 10); // local memory 0 not reached (say, memory-less)
    EXPECT_EQ(table.distances({0}), (std::vector<std::uint8_t>{0, 10, 20}));
    EXPECT_EQ(table.distances({99}), (std::vector<std::uint8_t>{0, 10, 20})); // out-of-range local index too
}

// ---- Kernels ----

/**  The node indices a walk from node 0 visits until it returns, or an empty vector if it never does. */
std::vector<std::size_t> walk_cycle(std::vector<fu::chase_node_t> const &nodes) {
    std::vector<std::size_t> visited;
    fu::chase_node_t const *node = nodes.data();
    for (std::size_t step = 0; step <= nodes.size(); ++step) {
        visited.push_back(static_cast<std::size_t>(node - nodes.data()));
        node = fu::next_in_chase(node);
        if (node == nodes.data()) return visited;
    }
    return {};
}

TEST(fabric_kernels, sattolo_links_one_cycle_through_every_node) {
    for (std::size_t count : {1u, 2u, 3u, 5u, 64u, 1000u, 4099u})
        for (std::uint64_t seed : {0ull, 1ull, 42ull, ~0ull}) {
            std::vector<fu::chase_node_t> nodes(count);
            fu::link_random_cycle(nodes.data(), count, seed);
            std::vector<std::size_t> visited = walk_cycle(nodes);
            ASSERT_EQ(visited.size(), count) << "count " << count << " seed " << seed;
            std::sort(visited.begin(), visited.end());
            for (std::size_t i = 0; i != count; ++i) ASSERT_EQ(visited[i], i);
            for (fu::chase_node_t const &node : nodes)
                for (std::size_t k = 1; k != fu::chase_node_t::words_k; ++k) ASSERT_EQ(node.words[k], 0u);
        }
}

TEST(fabric_kernels, sattolo_draws_every_cyclic_permutation_about_equally) {
    // 4 nodes have (4-1)! = 6 cyclic orders; 6000 seeds should give each ~1000 times (binomial sd ~29).
    // Keyed by the walk as a base-4 number, not by the vector: libstdc++ 12's `vector<unsigned long>::operator<`
    // (its big-endian memcmp path) answers "neither is less" for different vectors under qemu-s390x.
    std::map<std::size_t, std::size_t> seen;
    for (std::uint64_t seed = 0; seed != 6000; ++seed) {
        std::vector<fu::chase_node_t> nodes(4);
        fu::link_random_cycle(nodes.data(), 4, seed);
        std::vector<std::size_t> const cycle = walk_cycle(nodes);
        ASSERT_EQ(cycle.size(), 4u) << "seed " << seed;
        std::size_t key = 0;
        for (std::size_t node : cycle) key = key * 4 + node;
        ++seen[key];
    }
    ASSERT_EQ(seen.size(), 6u);
    for (auto const &[cycle, times] : seen) {
        EXPECT_GT(times, 850u);
        EXPECT_LT(times, 1150u);
    }
}

TEST(fabric_kernels, a_walk_of_the_cycle_length_returns_home) {
    std::vector<fu::chase_node_t> nodes(777);
    fu::link_random_cycle(nodes.data(), nodes.size(), 7);
    EXPECT_EQ(fu::chase(nodes.data(), 0), nodes.data());
    EXPECT_EQ(fu::chase(nodes.data(), nodes.size()), nodes.data());
    EXPECT_EQ(fu::chase(nodes.data(), 3 * nodes.size()), nodes.data());
    EXPECT_NE(fu::chase(nodes.data(), nodes.size() - 1), nodes.data());
    EXPECT_EQ(fu::chase(nodes.data(), 5), fu::next_in_chase(fu::chase(nodes.data(), 4)));
}

TEST(fabric_kernels, the_stream_reads_every_word) {
    std::vector<fu::chase_node_t> nodes(37);
    std::uintptr_t expected = 0;
    for (std::size_t i = 0; i != nodes.size(); ++i)
        for (std::size_t k = 0; k != fu::chase_node_t::words_k; ++k)
            expected += nodes[i].words[k] = static_cast<std::uintptr_t>(i * 1000 + k + 1);
    EXPECT_EQ(fu::stream_read(nodes.data(), nodes.size()), expected);
    EXPECT_EQ(fu::stream_read(nodes.data(), 0), 0u);
}

// ---- Queries before a harvest ----

template <typename fabric_t>
void expect_unharvested(fabric_t const &fabric) {
    EXPECT_FALSE(fabric.harvested());
    EXPECT_EQ(fabric.compute_domains_count(), 0u);
    EXPECT_EQ(fabric.memory_domains_count(), 0u);
    EXPECT_EQ(fabric.memory_levels_count(), 0u);
    EXPECT_EQ(fabric.edges_count(), 0u);
    EXPECT_EQ(fabric.reached_edges_count(), 0u);
    EXPECT_EQ(fabric.unreachable_edges_count(), 0u);
    EXPECT_EQ(fabric.pinning_refusals_count(), 0u);
    EXPECT_EQ(fabric.binding_refusals_count(), 0u);
    EXPECT_EQ(fabric.buffer_bytes(), 0u);
    for (std::size_t c : {0u, 1u, 1000u})
        for (std::size_t m : {0u, 1u, 1000u}) {
            EXPECT_EQ(fabric.memory_latency_ns(c, m), 0);
            EXPECT_EQ(fabric.memory_bandwidth_bytes_per_second(c, m), 0);
            EXPECT_EQ(fabric.memory_distance(c, m), 0u);
            EXPECT_EQ(fabric.edge(c, m).readers, 0u);
            EXPECT_EQ(fabric.memory_level_in(m), 0u);
            EXPECT_EQ(fabric.memory_medium_of(m).latency_ns, 0);
        }
}

TEST(fabric_queries, every_query_reads_zero_before_a_harvest) {
    fu::fabric_t fabric;
    expect_unharvested(fabric);
    fu::basic_fabric_t<fu::detail::portable_fabric_platform_t> portable;
    expect_unharvested(portable);
}

// ---- What the kernel says, independent of the library ----

/**  Each pool thread's CPU mask, as the kernel reports it (read on the thread itself). */
template <typename pool_t>
std::vector<std::set<std::size_t>> masks_of(pool_t &pool) {
    std::vector<std::set<std::size_t>> masks(pool.threads_count());
    fut::require_ran(
        pool.for_threads([&](std::size_t thread) noexcept { masks[thread] = fut::kernel_affinity(); }).join());
    return masks;
}

#if FORKUNION_OS_WINDOWS
/**  The NUMA nodes of this machine, from Windows: 0 .. `GetNumaHighestNodeNumber()`. */
std::set<std::size_t> live_memory_nodes() {
    ULONG highest = 0;
    if (!::GetNumaHighestNodeNumber(&highest)) highest = 0;
    std::set<std::size_t> nodes;
    for (ULONG node = 0; node <= highest; ++node) nodes.insert(node);
    return nodes;
}
#else
/**  The NUMA nodes with memory on this machine, from the kernel (node 0 where the kernel has no NUMA, and on
 *   targets with no kernel view at all). */
std::set<std::size_t> live_memory_nodes() {
    std::ifstream file("/sys/devices/system/node/has_memory");
    std::string list;
    if (!file || !std::getline(file, list) || list.empty()) return {0};
    return fut::cpus_of(list);
}
#endif

// ---- Live harvests ----

template <typename fabric_t>
void expect_structure_of_live_harvest(fabric_t const &fabric, fu::machine_topology_t const &topology,
                                      std::size_t threads) {
    std::size_t const compute = topology.compute_domains_count(), memory = topology.memory_domains_count();
    ASSERT_TRUE(fabric.harvested());
    EXPECT_EQ(fabric.compute_domains_count(), compute);
    EXPECT_EQ(fabric.memory_domains_count(), memory);
    EXPECT_EQ(fabric.edges_count(), compute * memory);
    EXPECT_EQ(fabric.pinning_refusals_count(), 0u); // every core of a live topology is allowed to this process
    std::set<std::size_t> const nodes = live_memory_nodes();
    for (std::size_t c = 0; c != compute; ++c)
        for (std::size_t m = 0; m != memory; ++m) {
            fu::fabric_edge_t const edge = fabric.edge(c, m);
            if (!nodes.count(topology.memory_node_id(m))) { // a memory-less node: nothing to bind
                EXPECT_FALSE(edge.reached());
                continue;
            }
            ASSERT_TRUE(edge.reached()) << c << " -> " << m;
            EXPECT_GT(edge.latency_ns, 0.5);       // a dependent load takes at least a cycle or two
            EXPECT_LT(edge.latency_ns, 100'000.0); // 100 µs of CPU time per load: a unit error, not noise
            EXPECT_TRUE(std::isfinite(edge.bandwidth_bytes_per_second));
            EXPECT_GT(edge.bandwidth_bytes_per_second, 0);
            EXPECT_EQ(edge.readers, std::min(threads, topology.logical_cores_count_in(c)));
            EXPECT_EQ(edge.buffer_bytes, fabric.buffer_bytes());
            EXPECT_EQ(fabric.memory_latency_ns(c, m), edge.latency_ns);
            EXPECT_EQ(fabric.memory_bandwidth_bytes_per_second(c, m), edge.bandwidth_bytes_per_second);
            EXPECT_GE(fabric.memory_distance(c, m), 10u);
            EXPECT_LE(fabric.memory_distance(c, m), 254u);
            EXPECT_LT(fabric.memory_level_in(m), fabric.memory_levels_count());
        }
    for (std::size_t c = 0; c != compute; ++c) {
        if (nodes.count(topology.memory_node_id(topology.local_memory_of(c)))) {
            EXPECT_EQ(fabric.memory_distance(c, topology.local_memory_of(c)), 10u);
        }
    }
    EXPECT_GE(fabric.memory_levels_count(), 1u);
    EXPECT_LE(fabric.memory_levels_count(), memory);
    // Out of range: zeros, and the level of a domain that does not exist is the count.
    EXPECT_EQ(fabric.memory_latency_ns(compute, 0), 0);
    EXPECT_EQ(fabric.memory_bandwidth_bytes_per_second(0, memory), 0);
    EXPECT_EQ(fabric.memory_distance(compute, memory), 0u);
    EXPECT_EQ(fabric.memory_level_in(memory), fabric.memory_levels_count());
}

class fabric_live : public ::testing::TestWithParam<std::size_t> {};

TEST_P(fabric_live, harvest_measures_every_edge_and_restores_every_mask) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    std::size_t const threads = GetParam() ? GetParam() : topology.allowed_cores_count();
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(threads));
    // A mask of its own on the last thread (when there is a choice), to see that it comes back as it was.
    if (threads > 1 && topology.allowed_cores_count() > 1) {
        fu::core_ids_t const cores = topology.cores_in(topology.compute_domains_count() - 1);
        std::uint32_t const last_core = cores[cores.size() - 1];
        forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept {
                                                if (thread == threads - 1)
                                                    (void)fu::try_pin_current_thread(fu::core_ids_t(&last_core, 1));
                                            })
                                            .join());
    }
    std::vector<std::set<std::size_t>> const masks_before = masks_of(pool);

    fu::fabric_t fabric;
    fu::fabric_options_t const options = fu::fabric_options_t::quick();
    ASSERT_EQ(fabric.try_harvest(topology, pool, options), fu::status_code_t::success_k);
    EXPECT_EQ(masks_of(pool), masks_before);
    EXPECT_EQ(fabric.buffer_bytes(), options.buffer_bytes);
    expect_structure_of_live_harvest(fabric, topology, threads);

    // Figures are never compared with constants or with baselines timed here (the machines are shared):
    // `forkunion_bench_fabric` prints them next to a hand-written pointer chase and `memcpy`.
    std::size_t const c = 0, m = topology.local_memory_of(0);
    if (!fabric.edge(c, m).reached()) GTEST_SKIP() << "the local memory of compute domain 0 has no memory";
    std::printf("fabric: local edge %.1f ns, %.2f GB/s with %zu readers, over %zu MiB\n",
                fabric.memory_latency_ns(c, m), fabric.memory_bandwidth_bytes_per_second(c, m) / gb_k,
                fabric.edge(c, m).readers, fabric.buffer_bytes() >> 20);
}

INSTANTIATE_TEST_SUITE_P(threads, fabric_live, ::testing::Values(std::size_t(1), std::size_t(0)),
                         [](auto const &info) { return info.param ? "one_thread" : "every_allowed_core"; });

TEST(fabric_harvest, an_exclusive_pool_with_narrow_indices_measures_too_and_leaves_the_caller_alone) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t> pool;
    FORKUNION_SKIP_UNLESS_THREADS(2);
    ASSERT_TRUE(pool.spawn(2, fu::caller_exclusive_k));
    std::set<std::size_t> const caller_before = fut::kernel_affinity();
    std::vector<std::set<std::size_t>> const masks_before = masks_of(pool);
    fu::fabric_t fabric;
    ASSERT_EQ(fabric.try_harvest(topology, pool, fu::fabric_options_t::quick()), fu::status_code_t::success_k);
    EXPECT_EQ(fut::kernel_affinity(), caller_before);
    EXPECT_EQ(masks_of(pool), masks_before);
    expect_structure_of_live_harvest(fabric, topology, 2);
}

TEST(fabric_harvest, a_pool_of_its_own_measures_and_leaves_the_caller_as_it_was) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    std::set<std::size_t> const caller_before = fut::kernel_affinity();
    fu::fabric_t fabric;
    ASSERT_EQ(fabric.try_harvest(topology, fu::fabric_options_t::quick()), fu::status_code_t::success_k);
    EXPECT_EQ(fut::kernel_affinity(), caller_before);
    std::size_t largest = 0;
    for (std::size_t c = 0; c != topology.compute_domains_count(); ++c)
        largest = std::max(largest, topology.logical_cores_count_in(c));
    expect_structure_of_live_harvest(fabric, topology, largest);
}

TEST(fabric_harvest, the_default_buffer_is_a_multiple_of_the_largest_cache_clamped) {
    // The rule of `fabric_options_t::buffer_bytes == 0`, with a 96 MiB ceiling to keep the test short.
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    std::uint64_t largest = 0;
    for (std::size_t c = 0; c != topology.compute_domains_count(); ++c)
        largest = std::max(largest, topology.compute_cache_bytes_in(c));
    fu::fabric_options_t options;
    options.repeats = 1;
    options.latency_window_ns = 1000;
    options.max_buffer_bytes = 96ull << 20;
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(1));
    fu::fabric_t fabric;
    ASSERT_EQ(fabric.try_harvest(topology, pool, options), fu::status_code_t::success_k);
    EXPECT_EQ(fabric.buffer_bytes(), std::clamp<std::uint64_t>(4 * largest, 64ull << 20, 96ull << 20) /
                                         fu::fabric_node_bytes_k * fu::fabric_node_bytes_k);
}

// ---- Refusals: whole or nothing ----

TEST(fabric_harvest, bad_options_and_unspawned_pools_are_refused_and_change_nothing) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    fu::flat_pool_t pool;
    fu::fabric_t fabric;
    EXPECT_EQ(fabric.try_harvest(topology, pool, fu::fabric_options_t::quick()), fu::status_code_t::not_spawned_k);
    expect_unharvested(fabric);

    ASSERT_TRUE(pool.spawn(1));
    ASSERT_EQ(fabric.try_harvest(topology, pool, fu::fabric_options_t::quick()), fu::status_code_t::success_k);
    double const latency = fabric.memory_latency_ns(0, topology.local_memory_of(0));
    std::size_t const levels = fabric.memory_levels_count();

    auto const refused = [&](auto change) {
        fu::fabric_options_t options = fu::fabric_options_t::quick();
        change(options);
        EXPECT_FALSE(options.valid());
        EXPECT_EQ(fabric.try_harvest(topology, pool, options), fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(fabric.memory_latency_ns(0, topology.local_memory_of(0)), latency); // the previous harvest stays
        EXPECT_EQ(fabric.memory_levels_count(), levels);
    };
    refused([](fu::fabric_options_t &o) { o.repeats = 0; });
    refused([](fu::fabric_options_t &o) { o.latency_window_ns = 999; });
    refused([](fu::fabric_options_t &o) { o.cache_multiple = 0; });
    refused([](fu::fabric_options_t &o) { o.min_buffer_bytes = o.max_buffer_bytes + 1; });
    refused([](fu::fabric_options_t &o) { o.bandwidth_tolerance = -0.1; });
    refused([](fu::fabric_options_t &o) { o.latency_tolerance = std::numeric_limits<double>::quiet_NaN(); });
    refused([](fu::fabric_options_t &o) { o.latency_tolerance = std::numeric_limits<double>::infinity(); });

    pool.terminate();
    EXPECT_EQ(fabric.try_harvest(topology, pool), fu::status_code_t::not_spawned_k);
    EXPECT_EQ(fabric.memory_latency_ns(0, topology.local_memory_of(0)), latency);
}

TEST(fabric_harvest, a_harvest_from_inside_a_callback_of_its_pool_is_contended_and_changes_nothing) {
    fu::machine_topology_t topology;
    ASSERT_TRUE(topology.try_harvest());
    fu::flat_pool_t pool;
    FORKUNION_SKIP_UNLESS_THREADS(2);
    ASSERT_TRUE(pool.spawn(2));
    std::vector<std::set<std::size_t>> const masks_before = masks_of(pool);
    fu::fabric_t fabric;
    fu::status_t inner;
    forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept {
                                            if (thread == 0)
                                                inner =
                                                    fabric.try_harvest(topology, pool, fu::fabric_options_t::quick());
                                        })
                                        .join());
    EXPECT_EQ(inner, fu::status_code_t::contended_k);
    expect_unharvested(fabric);
    EXPECT_EQ(masks_of(pool), masks_before);
}

// ---- A recorded machine this one only partly is ----

/**  Which edges of `recorded` this machine can measure, from the kernel's view: compute domain c needs one of
 *  its first `threads` cores in this thread's mask, memory domain m a node with memory here. */
std::vector<bool> expected_reach(fu::machine_topology_t const &recorded, std::size_t threads,
                                 std::size_t &pinnable_domains) {
    std::set<std::size_t> const allowed = fut::kernel_affinity(), nodes = live_memory_nodes();
    std::size_t const compute = recorded.compute_domains_count(), memory = recorded.memory_domains_count();
    std::vector<bool> reach(compute * memory, false);
    pinnable_domains = 0;
    for (std::size_t c = 0; c != compute; ++c) {
        fu::core_ids_t const cores = recorded.cores_in(c);
        bool pinnable = false;
        for (std::size_t t = 0; t != std::min(threads, cores.size()); ++t) pinnable |= allowed.count(cores[t]) > 0;
        pinnable_domains += pinnable;
        for (std::size_t m = 0; m != memory; ++m)
            reach[c * memory + m] = pinnable && nodes.count(recorded.memory_node_id(m));
    }
    return reach;
}

TEST(fabric_recorded, a_two_socket_xeon_this_machine_partly_lacks_reports_what_it_cannot_reach) {
    if (!fu::os_linux_k) GTEST_SKIP() << "recorded sysfs trees are read by the Linux back end only";
    fu::machine_topology_t recorded;
    ASSERT_TRUE(recorded.try_harvest_from_sysfs(two_socket_xeon.c_str()));
    ASSERT_EQ(recorded.compute_domains_count(), 2u);
    ASSERT_EQ(recorded.memory_domains_count(), 2u);
    std::size_t const threads = 2;
    std::size_t pinnable_domains = 0;
    std::vector<bool> const reach = expected_reach(recorded, threads, pinnable_domains);
    std::size_t const expected_reached = std::size_t(std::count(reach.begin(), reach.end(), true));
    std::set<std::size_t> const nodes = live_memory_nodes();
    std::size_t const bindable = nodes.count(0) + nodes.count(1);

    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(threads));
    std::vector<std::set<std::size_t>> const masks_before = masks_of(pool);
    fu::fabric_t fabric;
    fu::status_t const status = fabric.try_harvest(recorded, pool, fu::fabric_options_t::quick());
    EXPECT_EQ(masks_of(pool), masks_before);
    if (expected_reached == 0) { // this machine has neither CPU 0 nor CPU 8 (nor their neighbours), or no node
        EXPECT_EQ(status, fu::status_code_t::placement_refused_k);
        expect_unharvested(fabric);
        return;
    }
    ASSERT_EQ(status, fu::status_code_t::success_k);
    EXPECT_EQ(fabric.edges_count(), 4u);
    EXPECT_EQ(fabric.reached_edges_count(), expected_reached);
    EXPECT_EQ(fabric.unreachable_edges_count(), 4u - expected_reached);
    EXPECT_EQ(fabric.binding_refusals_count(), 2u - bindable);
    if (pinnable_domains < 2) { // a socket this machine lacks
        EXPECT_GT(fabric.pinning_refusals_count(), 0u);
    }
    for (std::size_t c = 0; c != 2; ++c)
        for (std::size_t m = 0; m != 2; ++m) {
            bool const reached = reach[c * 2 + m];
            EXPECT_EQ(fabric.edge(c, m).reached(), reached) << c << " -> " << m;
            EXPECT_EQ(fabric.memory_latency_ns(c, m) > 0, reached);
            EXPECT_EQ(fabric.memory_bandwidth_bytes_per_second(c, m) > 0, reached);
            EXPECT_EQ(fabric.memory_distance(c, m) >= 10, reached);
            if (!reached) {
                EXPECT_EQ(fabric.memory_distance(c, m), 0u);
            }
        }
    for (std::size_t m = 0; m != 2; ++m) {
        bool const reached = reach[m] || reach[2 + m];
        if (reached) {
            EXPECT_LT(fabric.memory_level_in(m), fabric.memory_levels_count());
        } else {
            EXPECT_EQ(fabric.memory_level_in(m), fabric.memory_levels_count());
        }
    }
}

// ---- The portable platform: no pinning, no placement ----

TEST(fabric_portable, one_compute_domain_is_measured_where_the_threads_run) {
    fu::machine_topology_t stand_in; // not harvested: one domain over this thread's cores, node 0
    fu::flat_pool_t pool;
    FORKUNION_SKIP_UNLESS_THREADS(2);
    ASSERT_TRUE(pool.spawn(2));
    fu::basic_fabric_t<fu::detail::portable_fabric_platform_t> fabric;
    ASSERT_EQ(fabric.try_harvest(stand_in, pool, fu::fabric_options_t::quick()), fu::status_code_t::success_k);
    EXPECT_EQ(fabric.reached_edges_count(), 1u);
    EXPECT_EQ(fabric.memory_distance(0, 0), 10u);
    EXPECT_EQ(fabric.memory_levels_count(), 1u);
    EXPECT_EQ(fabric.memory_level_in(0), 0u);
    EXPECT_EQ(fabric.edge(0, 0).readers, std::min<std::size_t>(2, stand_in.logical_cores_count_in(0)));
}

TEST(fabric_portable, a_machine_of_two_compute_domains_cannot_be_measured_without_pinning) {
    if (!fu::os_linux_k) GTEST_SKIP() << "recorded sysfs trees are read by the Linux back end only";
    fu::machine_topology_t recorded;
    ASSERT_TRUE(recorded.try_harvest_from_sysfs(two_socket_xeon.c_str()));
    fu::flat_pool_t pool;
    FORKUNION_SKIP_UNLESS_THREADS(2);
    ASSERT_TRUE(pool.spawn(2));
    fu::basic_fabric_t<fu::detail::portable_fabric_platform_t> fabric;
    EXPECT_EQ(fabric.try_harvest(recorded, pool, fu::fabric_options_t::quick()),
              fu::status_code_t::placement_refused_k);
    expect_unharvested(fabric);
}

} // namespace
