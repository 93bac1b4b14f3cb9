/**
 *  @file   hotpath_alloc_test.cpp
 *  @brief  Proof that dispatching allocates nothing: the global allocation functions are replaced with counting
 *          ones, and 10^5 dispatches after `spawn` (10^4 under TSan and qemu-user) must leave the count unchanged,
 *          on the flat pool and on the distributed pool (whose per-domain state is mapped at spawn).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>

#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "counting_new.hpp"
#include "test_support.hpp"

#if !defined(FORKUNION_TEST_DISPATCH_DIVISOR)
#define FORKUNION_TEST_DISPATCH_DIVISOR 1 // 10 under TSan and qemu-user (a dispatch costs ~20x more), 100 under Node.js
#endif

namespace fu = forkunion;

TEST(hot_path, the_counter_sees_allocations) {
    std::size_t const before = allocations.load();
    static int *volatile escape = nullptr; // keeps the compiler from eliding the pair
    escape = new int(7);
    delete escape;
    EXPECT_EQ(allocations.load() - before, 1u) << "the replaced operator new is the one in use";
}

TEST(hot_path, spawn_allocates_once) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::flat_pool_t pool;
    std::size_t const before = allocations.load();
    ASSERT_TRUE(pool.spawn(2));
    // One slot table from the pool; the rest, if any, is `std::thread` start-up state of the C++ runtime.
    EXPECT_GE(allocations.load() - before, 1u);
}

/**  Dispatches every loop kind on a spawned `pool` many times, checking that none allocates. */
template <typename pool_t>
void expect_no_allocations(pool_t &pool, std::size_t threads, std::size_t cores, std::size_t divisor = 1) {
    using index_t = typename pool_t::index_t;
    std::atomic<std::size_t> sink{0};
    auto add = [&](index_t task) noexcept { sink.fetch_add(task, std::memory_order_relaxed); };
    auto slices = [&](index_t first, index_t count) noexcept { sink.fetch_add(first + count); };
    forkunion::testing::require_ran(pool.for_n(64, add).join()); // warm up
    // Oversubscribed pools yield, so fewer rounds keep the test fast; the claim is the same.
    std::size_t const dispatches = (threads > cores ? 10'000 : 100'000) / divisor / FORKUNION_TEST_DISPATCH_DIVISOR;
    std::size_t const before = allocations.load();
    for (std::size_t i = 0; i != dispatches / 4; ++i) {
        forkunion::testing::require_ran(pool.for_n(64, add).join());
        forkunion::testing::require_ran(pool.for_n_dynamic(64, add).join());
        forkunion::testing::require_ran(pool.for_slices(64, slices).join());
        forkunion::testing::require_ran(pool.for_threads(add).join());
    }
    EXPECT_EQ(allocations.load() - before, 0u) << "heap allocations during " << dispatches << " dispatches";
    EXPECT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(0)));
    EXPECT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
    EXPECT_TRUE(pool.set_idle_policy(fu::idle_policy_t::spin()));
    forkunion::testing::require_ran(pool.for_n(64, add).join());
    EXPECT_EQ(allocations.load() - before, 0u) << "idle-mode changes allocate nothing either";
}

TEST(hot_path, dispatches_make_no_heap_allocations) {
    std::size_t const cores = fu::allowed_cores_count();
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        for (std::size_t threads : {std::size_t(1), std::size_t(2), cores, 3 * cores}) {
            if (!forkunion::testing::can_spawn(threads, exclusivity)) continue; // a build without threads
            SCOPED_TRACE(::testing::Message() << threads << " threads, exclusive: " << int(exclusivity));
            fu::flat_pool_t pool;
            ASSERT_TRUE(pool.spawn(threads, exclusivity));
            expect_no_allocations(pool, threads, cores);
        }
    }
}

TEST(hot_path, distributed_dispatches_make_no_heap_allocations) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    std::size_t const cores = fu::allowed_cores_count(), domains = topology.compute_domains_count();
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        for (std::size_t threads : {std::max<std::size_t>(2, domains), std::max(3 * cores, domains)}) {
            SCOPED_TRACE(::testing::Message() << threads << " threads, exclusive: " << int(exclusivity));
            fu::distributed_pool_t pool;
            ASSERT_TRUE(pool.spawn(topology, threads, exclusivity));
            expect_no_allocations(pool, threads, cores, 10); // the flat pool's proof runs 10x as many
        }
    }
}
