/**
 *  @file   algorithms_alloc_test.cpp
 *  @brief  Proof of the algorithms' allocation contract, with the global allocation functions replaced by
 *          counting ones: `reduce`, `transform_reduce`, `count_if`, `min_element`, `max_element`, `find_if`, the
 *          `*_of` family, `for_each`, `transform` and the scans allocate nothing (on an idle pool, and on the
 *          calling thread when the pool is busy); `sort` and `stable_sort` allocate exactly one scratch buffer.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/topology/topology.hpp>

#include "counting_new.hpp"
#include "test_support.hpp"

namespace fu = forkunion;

namespace {

std::atomic<std::size_t> results_sink{0};

struct sum_and_max_t {
    double sum;
    double max;
};

/**  Runs every non-allocating algorithm over inputs made beforehand; returns the allocations they made. */
template <typename pool_t>
std::size_t allocations_of_non_allocating(pool_t &pool, std::vector<double> const &x, std::vector<double> &out) {
    std::size_t const before = allocations.load();
    auto grained = fu::with_grain(pool, 1000);
    std::size_t sink = 0;
    for (int round = 0; round != 3; ++round) {
        sink += static_cast<std::size_t>(fu::reduce(pool, x.begin(), x.end(), 0.0));
        sink += static_cast<std::size_t>(fu::reduce(grained, x.begin(), x.end(), 0.0, std::plus<>{}));
        auto combine = [](sum_and_max_t a, sum_and_max_t b) noexcept {
            return sum_and_max_t{a.sum + b.sum, a.max < b.max ? b.max : a.max};
        };
        auto spread = [](double v) noexcept { return sum_and_max_t{v, v}; };
        sink += static_cast<std::size_t>(
            fu::transform_reduce(grained, x.begin(), x.end(), sum_and_max_t{0, 0}, combine, spread).max);
        sink += static_cast<std::size_t>(fu::transform_reduce(grained, x.begin(), x.end(), x.begin(), 0.0));
        sink += static_cast<std::size_t>(fu::count_if(grained, x.begin(), x.end(), [](double v) { return v > 0.5; }));
        sink += static_cast<std::size_t>(fu::min_element(grained, x.begin(), x.end()) - x.begin());
        sink += static_cast<std::size_t>(fu::max_element(grained, x.begin(), x.end(), std::less<>{}) - x.begin());
        sink += static_cast<std::size_t>(fu::find_if(grained, x.begin(), x.end(), [](double v) { return v > 0.999; }) -
                                         x.begin());
        sink += fu::any_of(grained, x.begin(), x.end(), [](double v) { return v > 2; });
        sink += fu::all_of(grained, x.begin(), x.end(), [](double v) { return v >= 0; });
        sink += fu::none_of(grained, x.begin(), x.end(), [](double v) { return v < 0; });
        fu::for_each(grained, out.begin(), out.end(), [](double &v) noexcept { v += 1; });
        fu::transform(grained, x.begin(), x.end(), out.begin(), [](double v) noexcept { return v * 2; });
        fu::inclusive_scan(grained, x.begin(), x.end(), out.begin());
        fu::exclusive_scan(grained, x.begin(), x.end(), out.begin(), 1.0, std::plus<>{});
    }
    std::size_t const made = allocations.load() - before;
    results_sink.fetch_add(sink, std::memory_order_relaxed); // keeps the results alive
    return made;
}

/**  The allocations one `sort` and one `stable_sort` make. */
template <typename pool_t>
std::pair<std::size_t, std::size_t> allocations_of_sorts(pool_t &pool, std::vector<double> &x) {
    std::size_t const before = allocations.load();
    fu::sort(fu::with_grain(pool, 1000), x.begin(), x.end(), std::greater<>{});
    std::size_t const middle = allocations.load();
    fu::stable_sort(fu::with_grain(pool, 1000), x.begin(), x.end());
    return {middle - before, allocations.load() - middle};
}

std::vector<double> inputs(std::size_t n) {
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>((i * 2654435761u) % 1000) / 1000.0;
    return x;
}

} // namespace

TEST(algorithms_allocations, the_counter_sees_allocations) {
    std::size_t const before = allocations.load();
    std::vector<double> made(3);
    EXPECT_EQ(allocations.load() - before, 1u) << "the replaced operator new is the one in use";
}

TEST(algorithms_allocations, reductions_searches_and_scans_allocate_nothing) {
    std::vector<double> const x = inputs(100000);
    std::vector<double> out(x.size());
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        for (std::size_t threads : {1, 2, 3}) {
            if (!forkunion::testing::can_spawn(threads, exclusivity)) continue; // a build without threads
            SCOPED_TRACE(::testing::Message() << threads << " threads, exclusive: " << int(exclusivity));
            fu::flat_pool_t pool;
            ASSERT_TRUE(pool.spawn(threads, exclusivity));
            EXPECT_EQ(allocations_of_non_allocating(pool, x, out), 0u) << "flat pool";
            fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t> small;
            ASSERT_TRUE(small.spawn(static_cast<std::uint8_t>(threads), exclusivity));
            EXPECT_EQ(allocations_of_non_allocating(small, x, out), 0u) << "uint8_t pool";
        }
    }
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    std::size_t const distributed_threads = std::max<std::size_t>(2, topology.compute_domains_count());
    if (forkunion::testing::can_spawn(distributed_threads, fu::caller_inclusive_k)) {
        fu::distributed_pool_t distributed;
        ASSERT_TRUE(distributed.spawn(topology, distributed_threads));
        EXPECT_EQ(allocations_of_non_allocating(distributed, x, out), 0u) << "distributed pool";
    }
    fu::flat_pool_t unspawned; // every dispatch refused: the calling thread alone
    EXPECT_EQ(allocations_of_non_allocating(unspawned, x, out), 0u) << "unspawned pool";
}

TEST(algorithms_allocations, a_busy_pool_allocates_nothing_either) {
    std::vector<double> const x = inputs(100000);
    std::vector<double> out(x.size());
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(2));
    std::size_t made = 1;
    forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept {
                                            if (thread == 1) made = allocations_of_non_allocating(pool, x, out);
                                        })
                                        .join());
    EXPECT_EQ(made, 0u) << "from inside a callback";
}

TEST(algorithms_allocations, sorts_allocate_one_scratch_buffer) {
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(forkunion::testing::spawnable_up_to(3)));
    std::vector<double> x = inputs(100000);
    auto const [sort, stable] = allocations_of_sorts(pool, x);
    EXPECT_EQ(sort, 1u) << "sort";
    EXPECT_EQ(stable, 1u) << "stable_sort";
    fu::flat_pool_t unspawned;
    auto const [serial_sort, serial_stable] = allocations_of_sorts(unspawned, x);
    EXPECT_EQ(serial_sort, 1u) << "sort on the calling thread";
    EXPECT_EQ(serial_stable, 1u) << "stable_sort on the calling thread";
    std::vector<double> one_chunk = inputs(500); // fewer elements than the grain: sorted in place
    std::size_t const before = allocations.load();
    fu::sort(fu::with_grain(pool, 1000), one_chunk.begin(), one_chunk.end());
    EXPECT_EQ(allocations.load() - before, 0u) << "a single chunk sorts in place";
}
