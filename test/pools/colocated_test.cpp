/**
 *  @file   colocated_test.cpp
 *  @brief  Tests of `include/forkunion/pools/colocated.hpp`: the shared pool suite on a pool pinned to this machine's
 *          first compute domain, plus what placement adds: worker names in `/proc`, masks read back from the
 *          kernel inside callbacks, the caller's mask put back by `terminate` (also after refused pins and failed
 *          spawns), refused pins counted on a recorded machine whose CPUs this one lacks, the domain in prongs,
 *          oversubscription decided from the domain's cores, and the thread table's node.
 *
 *  Tests that pin the calling thread do it on a thread of their own, so the test runner's mask is never touched.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <forkunion/pools/colocated.hpp>
#include <forkunion/topology/topology.hpp>

#include "pool_suite.hpp"
#include "pools_support.hpp"

#include "test_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

template <typename index_t>
struct colocated_config {
    using pool_t = fu::basic_colocated_pool_t<fu::default_micro_yield_t, index_t>;
    static fu::status_t spawn(pool_t &pool, std::size_t threads, fu::caller_exclusivity_t exclusivity) {
        return pool.spawn_on(live_topology(), 0, static_cast<index_t>(threads), exclusivity);
    }
};

using colocated_configs = ::testing::Types<colocated_config<std::uint8_t>, colocated_config<std::size_t>>;

} // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(colocated, pool_suite, colocated_configs);

TEST(colocated, workers_are_named_in_proc) {
    FORKUNION_SKIP_WITHOUT_THREAD_NAMES();
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        fu::colocated_pool_t pool;
        fu::thread_placement_t placement;
        placement.name = "fu-test";
        ASSERT_TRUE(pool.spawn_on(live_topology(), 0, 3, exclusivity, placement));
        std::multiset<std::string> const names = comms_of_this_process();
        bool const exclusive = exclusivity == fu::caller_exclusive_k;
        // Workers only: the caller of an inclusive pool is thread 0 and keeps its own name.
        EXPECT_EQ(names.count("fu-test:000"), exclusive ? 1u : 0u);
        EXPECT_EQ(names.count("fu-test:001"), 1u);
        EXPECT_EQ(names.count("fu-test:002"), 1u);
        pool.terminate();
        EXPECT_TRUE(eventually([] { return comms_of_this_process().count("fu-test:001") == 0; }));
    }
}

TEST(colocated, long_prefixes_keep_the_index_whole) {
    FORKUNION_SKIP_WITHOUT_THREAD_NAMES();
    fu::colocated_pool_t pool;
    fu::thread_placement_t placement;
    placement.name = "a-very-long-pool-name";
    placement.first_name_index = 41;
    ASSERT_TRUE(pool.spawn_on(live_topology(), 0, 2, fu::caller_exclusive_k, placement));
    std::multiset<std::string> const names = comms_of_this_process();
    EXPECT_EQ(names.count("a-very-long:041"), 1u); // 15 bytes: the prefix is cut, not the index
    EXPECT_EQ(names.count("a-very-long:042"), 1u);
}

TEST(colocated, pinned_workers_report_their_cores) {
    FORKUNION_SKIP_WITHOUT_KERNEL_AFFINITY();
    fu::machine_topology_t const &topology = live_topology();
    std::set<std::size_t> const domain = set_of(topology.cores_in(0));
    ASSERT_FALSE(domain.empty());
    std::vector<std::size_t> const cores(domain.begin(), domain.end());
    for (fu::pinning_t pinning : {fu::pinning_t::core_k, fu::pinning_t::domain_k})
        for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k})
            on_own_thread([&] {
                SCOPED_TRACE(::testing::Message()
                             << fu::pinning_name(pinning) << ", " << exclusivity_name(exclusivity));
                std::size_t const threads = 2 * cores.size() + 1; // wraps around the cores in `core_k`
                fu::colocated_pool_t pool;
                fu::thread_placement_t placement;
                placement.pinning = pinning;
                ASSERT_TRUE(pool.spawn_on(topology, 0, threads, exclusivity, placement));
                EXPECT_EQ(pool.unpinned_threads_count(), 0u);
                EXPECT_EQ(pool.pinning(), pinning);
                std::vector<std::set<std::size_t>> seen(threads);
                // Each thread reads its own mask from the kernel, inside a callback: what it really runs with.
                forkunion::testing::require_ran(
                    pool.for_threads([&](std::size_t thread) noexcept { seen[thread] = kernel_affinity(); }).join());
                for (std::size_t thread = 0; thread != threads; ++thread) {
                    std::set<std::size_t> const expected =
                        pinning == fu::pinning_t::core_k ? std::set<std::size_t>{cores[thread % cores.size()]} : domain;
                    EXPECT_EQ(seen[thread], expected) << "thread " << thread;
                }
            });
}

TEST(colocated, the_callers_mask_is_restored_after_terminate) {
    FORKUNION_SKIP_WITHOUT_KERNEL_AFFINITY();
    fu::machine_topology_t const &topology = live_topology();
    std::set<std::size_t> const cores = set_of(topology.cores_in(0));
    on_own_thread([&] {
        std::set<std::size_t> const original = kernel_affinity();
        {
            fu::colocated_pool_t pool;
            fu::thread_placement_t placement;
            placement.pinning = fu::pinning_t::core_k;
            ASSERT_TRUE(pool.spawn_on(topology, 0, 2, fu::caller_inclusive_k, placement));
            EXPECT_EQ(kernel_affinity(), std::set<std::size_t>{*cores.begin()}) << "the caller is thread 0, pinned";
            pool.terminate();
            EXPECT_EQ(kernel_affinity(), original);
            // The destructor terminates too.
            ASSERT_TRUE(pool.spawn_on(topology, 0, 2, fu::caller_inclusive_k, placement));
            EXPECT_EQ(kernel_affinity(), std::set<std::size_t>{*cores.begin()});
        }
        EXPECT_EQ(kernel_affinity(), original) << "after the destructor";

        // An exclusive pool leaves the caller alone.
        fu::colocated_pool_t pool;
        fu::thread_placement_t placement;
        placement.pinning = fu::pinning_t::core_k;
        ASSERT_TRUE(pool.spawn_on(topology, 0, 2, fu::caller_exclusive_k, placement));
        EXPECT_EQ(kernel_affinity(), original);
        pool.terminate();
        EXPECT_EQ(kernel_affinity(), original);

        // A failed spawn changes nothing.
        EXPECT_EQ(pool.spawn_on(topology, 0, 0).code(), fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(pool.spawn_on(topology, topology.compute_domains_count(), 2).code(),
                  fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(kernel_affinity(), original);
    });
}

TEST(colocated, refused_pins_are_counted_and_the_pool_still_runs_everything) {
    FORKUNION_SKIP_UNLESS_THREADS(4); // a thread of its own, and a pool of more threads than the domain has cores
    fu::machine_topology_t const &topology = recorded_two_domains();
    ASSERT_EQ(topology.compute_domains_count(), 2u);
    for (std::size_t domain = 0; domain != 2; ++domain)
        for (fu::pinning_t pinning : {fu::pinning_t::core_k, fu::pinning_t::domain_k})
            on_own_thread([&] {
                SCOPED_TRACE(::testing::Message() << "domain " << domain << ", " << fu::pinning_name(pinning));
                std::set<std::size_t> const original = kernel_affinity();
                std::vector<std::size_t> const cores(topology.cores_in(domain).begin(),
                                                     topology.cores_in(domain).end());
                std::size_t const threads = cores.size() + 3; // more than this machine's cores, too
                // What the kernel will refuse, worked out from the recorded cores and this process's mask.
                std::size_t expected_unpinned = 0;
                for (std::size_t thread = 0; thread != threads; ++thread) {
                    std::set<std::size_t> const target = pinning == fu::pinning_t::core_k
                                                             ? std::set<std::size_t>{cores[thread % cores.size()]}
                                                             : std::set<std::size_t>(cores.begin(), cores.end());
                    expected_unpinned += !any_allowed(target);
                }
                std::size_t const refusals_before = fu::affinity_refusals_count();
                fu::colocated_pool_t pool;
                fu::thread_placement_t placement;
                placement.pinning = pinning;
                placement.name = nullptr; // names are not what this test counts
                ASSERT_TRUE(pool.spawn_on(topology, domain, threads, fu::caller_inclusive_k, placement));
                EXPECT_EQ(pool.unpinned_threads_count(), expected_unpinned);
                EXPECT_GE(fu::affinity_refusals_count() - refusals_before, expected_unpinned);
                EXPECT_TRUE(pool.oversubscribed()) << threads << " threads on " << original.size() << " cores";
                task_ledger ledger(10 * threads);
                forkunion::testing::require_ran(
                    pool.for_n_dynamic(ledger.size(), [&](std::size_t task) noexcept { ledger.record(task); }).join());
                EXPECT_EQ(ledger.mistakes(), 0u);
                pool.terminate();
                EXPECT_EQ(kernel_affinity(), original) << "restored, whether the caller's pin was refused or not";
            });
}

TEST(colocated, prongs_carry_the_pools_domain) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    fu::machine_topology_t const &topology = recorded_two_domains();
    fu::colocated_pool_t pool;
    ASSERT_TRUE(pool.spawn_on(topology, 1, 3, fu::caller_exclusive_k));
    EXPECT_EQ(pool.compute_domain(), 1u);
    using prong_t = fu::colocated_pool_t::prong_t;
    std::atomic<std::size_t> wrong{0}, calls{0};
    auto check = [&](prong_t prong) noexcept {
        calls.fetch_add(1);
        if (prong.compute_domain != 1 || prong.thread >= 3) wrong.fetch_add(1);
    };
    forkunion::testing::require_ran(pool.for_threads(check).join());
    forkunion::testing::require_ran(pool.for_n(10, check).join());
    forkunion::testing::require_ran(pool.for_n_dynamic(10, check).join());
    forkunion::testing::require_ran(
        pool.for_slices(10, [&](prong_t prong, std::size_t) noexcept { check(prong); }).join());
    EXPECT_EQ(calls.load(), 3u + 10u + 10u + 3u);
    EXPECT_EQ(wrong.load(), 0u);
    // Index-shaped and generic callbacks keep working through the adapter.
    task_ledger ledger(10);
    forkunion::testing::require_ran(pool.for_n(10, [&](std::size_t task) noexcept { ledger.record(task); }).join());
    EXPECT_EQ(ledger.mistakes(), 0u);
    task_ledger generic(10);
    forkunion::testing::require_ran(pool.for_slices(10,
                                                    [&](auto first, auto count) noexcept {
                                                        for (std::size_t i = 0; i != count; ++i)
                                                            generic.record(first + i);
                                                    })
                                        .join());
    EXPECT_EQ(generic.mistakes(), 0u);
}

TEST(colocated, oversubscription_counts_the_domains_usable_cores) {
    FORKUNION_SKIP_WITHOUT_KERNEL_AFFINITY();
    fu::machine_topology_t const &topology = live_topology();
    std::size_t const usable = kernel_affinity().size(); // the live domains partition the allowed cores
    std::size_t const cores = set_of(topology.cores_in(0)).size();
    ASSERT_LE(cores, usable);
    fu::colocated_pool_t pool;
    ASSERT_TRUE(pool.spawn_on(topology, 0, cores, fu::caller_inclusive_k));
    EXPECT_FALSE(pool.oversubscribed()) << "one thread per core of the domain";
    pool.terminate();
    ASSERT_TRUE(pool.spawn_on(topology, 0, cores + 1, fu::caller_inclusive_k));
    EXPECT_TRUE(pool.oversubscribed());
    pool.terminate();
    ASSERT_TRUE(pool.spawn_on(topology, 0, cores, fu::caller_exclusive_k));
    EXPECT_TRUE(pool.oversubscribed()) << "the exclusive caller spins in join too";
    pool.terminate();
    // An explicit core count overrides the domain's.
    fu::thread_placement_t placement;
    placement.cores = 1;
    ASSERT_TRUE(pool.spawn_on(topology, 0, 2, fu::caller_inclusive_k, placement));
    EXPECT_TRUE(pool.oversubscribed());
}

TEST(colocated, the_thread_table_lives_on_the_domains_node) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    // Whether the kernel binds memory to a node is probed independently, with one page of the domain allocator.
    auto binds = [](fu::numa_node_id_t node) {
        fu::domain_allocator_t<char> const allocator(node);
        auto const probe = allocator.try_allocate_at_least(1);
        if (probe.status) allocator.deallocate(probe.ptr, probe.count);
        return static_cast<bool>(probe.status);
    };
    fu::machine_topology_t const &live = live_topology();
    fu::colocated_pool_t pool;
    ASSERT_TRUE(pool.spawn_on(live, 0, 2));
    fu::numa_node_id_t const node = static_cast<fu::numa_node_id_t>(live.memory_node_id(live.local_memory_of(0)));
    EXPECT_EQ(pool.memory_node(), node);
    EXPECT_EQ(pool.memory_placed(), binds(node));
    pool.terminate();
    EXPECT_FALSE(pool.memory_placed()) << "nothing is placed while unspawned";

    // Node 1 of the recorded two-socket machine: placed only if this machine has a node 1 that binds.
    fu::machine_topology_t const &recorded_machine = recorded_two_domains();
    ASSERT_TRUE(pool.spawn_on(recorded_machine, 1, 2));
    EXPECT_EQ(pool.memory_node(), 1);
    EXPECT_EQ(pool.memory_placed(), binds(1));
    task_ledger ledger(100);
    forkunion::testing::require_ran(
        pool.for_n_dynamic(100, [&](std::size_t task) noexcept { ledger.record(task); }).join());
    EXPECT_EQ(ledger.mistakes(), 0u) << "an unplaced table works the same";
}
