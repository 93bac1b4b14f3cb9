/**
 *  @file   refusal_test.cpp
 *  @brief  No refusal vanishes: the scenarios where work used to be lost without a trace, replayed.
 *
 *  - A nested `for_n` inside a callback: refused, and says so; `join_or_run_on_caller` runs it on the calling
 *    thread instead, so every task runs.
 *  - Four threads sharing one pool with the one-liner, 10^4 dispatches each: every dispatch either ran all its tasks
 *    or reported its refusal, and with `join_or_run_on_caller` every task of every dispatch ran.
 *  - A refused guard dropped without its status read aborts with a message when `FORKUNION_CHECK_REFUSALS` is on
 *    (this file is built with it, whatever the build type).
 *  That `pool.for_n(n, f).join());` and a discarded guard do not build under `-Werror` is checked at configure time
 *  by `refusal_compile_check.cmake`.
 */
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "test_support.hpp"

#if !defined(FORKUNION_TEST_EMULATED)
#define FORKUNION_TEST_EMULATED 0 // 1 under qemu-user (cross builds)
#endif
namespace fu = forkunion;
using namespace forkunion::testing;

static_assert(FORKUNION_CHECK_REFUSALS, "this suite checks the unread-refusal diagnosis");

namespace {

/**  Spawns each pool kind the same way: a flat pool, a colocated one on domain 0, a distributed one. */
template <typename pool_t>
fu::status_t spawn_any(pool_t &pool, std::size_t threads) {
    if constexpr (std::is_same_v<pool_t, fu::flat_pool_t>)
        return pool.spawn(threads);
    else {
        fu::machine_topology_t topology;
        (void)topology.try_harvest();
        if constexpr (std::is_same_v<pool_t, fu::colocated_pool_t>)
            return pool.spawn_on(topology, 0, threads);
        else
            return pool.spawn(topology,
                              threads < topology.compute_domains_count() ? topology.compute_domains_count() : threads);
    }
}

template <typename pool_t>
class refusal : public ::testing::Test {};
using pool_kinds = ::testing::Types<fu::flat_pool_t, fu::colocated_pool_t, fu::distributed_pool_t>;
TYPED_TEST_SUITE(refusal, pool_kinds);

} // namespace

TYPED_TEST(refusal, nested_for_n_reports_its_refusal_or_runs_on_the_caller) {
    TypeParam pool;
    // A pool of one (a WebAssembly build without threads) is busy inside its callback all the same.
    ASSERT_TRUE(spawn_any(pool, forkunion::testing::spawnable_up_to(3)));
    std::size_t const threads = pool.threads_count();
    std::atomic<std::size_t> refusals{0}, nested_ran{0}, fallback_ran{0};
    require_ran(pool.for_threads([&](std::size_t) noexcept {
                        // The README's one-liner, checked: the nested dispatch cannot run on a busy pool.
                        fu::status_t const status =
                            pool.for_n(10, [&](std::size_t) noexcept { nested_ran.fetch_add(1); }).join();
                        if (status.code() == fu::status_code_t::contended_k) refusals.fetch_add(1);
                        // Library code's form: the same loop always runs, here on this thread.
                        pool.for_n(10,
                                   [&](typename TypeParam::prong_t prong) noexcept {
                                       if (prong.thread == 0) fallback_ran.fetch_add(1); // a team of one: thread 0
                                   })
                            .join_or_run_on_caller();
                    })
                    .join());
    // Thread 0 of an exclusive pool may fork; these pools are inclusive, so every nested dispatch is refused.
    EXPECT_EQ(refusals.load(), threads) << "each refusal was reported";
    EXPECT_EQ(nested_ran.load(), 0u) << "a refused dispatch runs nothing";
    EXPECT_EQ(fallback_ran.load(), 10 * threads) << "the fallback ran every task, on the calling thread";
}

TYPED_TEST(refusal, threads_sharing_a_pool_lose_no_work) {
    constexpr std::size_t sharers = 4, dispatches = 10'000, tasks = 8;
    FORKUNION_SKIP_UNLESS_THREADS(sharers + 2);
    TypeParam pool;
    ASSERT_TRUE(spawn_any(pool, 2));
    for (bool fallback : {false, true}) {
        SCOPED_TRACE(fallback ? "join_or_run_on_caller" : "join, status checked");
        std::atomic<std::size_t> ran{0}, accepted{0}, refused{0}, wrong_status{0};
        std::vector<std::thread> threads;
        for (std::size_t sharer = 0; sharer != sharers; ++sharer)
            threads.emplace_back([&] {
                for (std::size_t d = 0; d != dispatches; ++d) {
                    auto count = [&](std::size_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); };
                    if (fallback) {
                        pool.for_n(tasks, count).join_or_run_on_caller();
                        continue;
                    }
                    fu::status_t const status = pool.for_n(tasks, count).join();
                    if (status)
                        accepted.fetch_add(1, std::memory_order_relaxed);
                    else if (status.code() == fu::status_code_t::contended_k)
                        refused.fetch_add(1, std::memory_order_relaxed);
                    else
                        wrong_status.fetch_add(1, std::memory_order_relaxed);
                }
            });
        for (auto &thread : threads) thread.join();
        if (fallback) {
            EXPECT_EQ(ran.load(), sharers * dispatches * tasks) << "every task of every dispatch ran";
        } else {
            EXPECT_EQ(wrong_status.load(), 0u);
            EXPECT_EQ(accepted.load() + refused.load(), sharers * dispatches) << "every dispatch has an answer";
            EXPECT_EQ(ran.load(), accepted.load() * tasks) << "accepted ones ran all their tasks, refused ones none";
            EXPECT_GT(accepted.load(), 0u);
        }
    }
}

#if defined(GTEST_HAS_DEATH_TEST) && GTEST_HAS_DEATH_TEST // GoogleTest leaves it undefined without death tests
TEST(refusal_check, an_unread_refusal_aborts_with_a_message) {
    if (FORKUNION_TEST_EMULATED)
        GTEST_SKIP() << "a death test re-executes the binary, which qemu-user cannot; the native build runs this";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            fu::flat_pool_t pool; // never spawned: every dispatch is refused with `not_spawned`
            auto guard = pool.for_n(10, [](std::size_t) noexcept {});
            (void)guard.generation(); // reading the generation is not reading the refusal
        },
        "refused \\(not_spawned\\).*never ran");
}

TEST(guard_destroyed_on_another_thread, an_inclusive_pools_guard_aborts_with_a_message) {
    if (FORKUNION_TEST_EMULATED)
        GTEST_SKIP() << "a death test re-executes the binary, which qemu-user cannot; the native build runs this";
    FORKUNION_SKIP_UNLESS_THREADS(2);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            fu::flat_pool_t pool;
            if (!pool.spawn(2, fu::caller_inclusive_k)) std::abort();
            // Thread 0's slice is owed by this thread; the guard dies on another one, unjoined.
            auto *const guard = new auto(pool.for_n(64, [](std::size_t) noexcept {}));
            std::thread([guard] { delete guard; }).join();
        },
        "destroyed, unjoined, on a thread other than the one that created it");
}
#else
TEST(refusal_check, an_unread_refusal_aborts_with_a_message) {
    GTEST_SKIP() << "GoogleTest has no death tests on this platform (no child processes)";
}
#endif

TEST(guard_destroyed_on_another_thread, an_exclusive_pools_guard_waits_for_every_slice) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    for (std::size_t threads : {std::size_t(1), std::size_t(2), std::size_t(3)}) {
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(threads, fu::caller_exclusive_k));
        std::vector<std::atomic<int>> runs(97);
        auto *const guard = new auto(pool.for_n(
            runs.size(), [&](std::size_t task) noexcept { runs[task].fetch_add(1, std::memory_order_relaxed); }));
        std::thread([guard] { delete guard; }).join(); // an exclusive pool's join waits from any thread
        for (std::size_t task = 0; task != runs.size(); ++task)
            EXPECT_EQ(runs[task].load(), 1) << "task " << task << " at " << threads << " threads";
        EXPECT_TRUE(pool.for_n(4, [](std::size_t) noexcept {}).join()) << "the pool is free again";
    }
}

TEST(refusal_check, a_read_refusal_is_quiet) {
    fu::flat_pool_t pool;
    {
        auto guard = pool.for_n(10, [](std::size_t) noexcept {});
        EXPECT_FALSE(guard);
    }
    {
        EXPECT_EQ(pool.for_n(10, [](std::size_t) noexcept {}).join().code(), fu::status_code_t::not_spawned_k);
    }
    std::atomic<std::size_t> ran{0};
    pool.for_n(10, [&](std::size_t) noexcept { ran.fetch_add(1); }).join_or_run_on_caller();
    EXPECT_EQ(ran.load(), 10u) << "an unspawned pool's loop runs on the caller too";
}

TEST(refusal_check, split_dispatches_say_why_they_were_refused) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::flat_pool_t pool;
    auto noop = [](std::size_t) noexcept {};
    auto const unspawned = pool.unsafe_for_threads(noop);
    EXPECT_EQ(unspawned.generation, 0u);
    EXPECT_EQ(unspawned.status.code(), fu::status_code_t::not_spawned_k);
    ASSERT_TRUE(pool.spawn(2, fu::caller_exclusive_k));
    std::atomic<bool> release{false};
    auto blocker = [&](std::size_t) noexcept { (void)eventually([&] { return release.load(); }); };
    auto const held = pool.unsafe_for_threads(blocker);
    ASSERT_TRUE(held);
    auto const busy = pool.unsafe_for_threads(noop);
    EXPECT_EQ(busy.generation, 0u);
    EXPECT_EQ(busy.status.code(), fu::status_code_t::contended_k) << busy.status.name();
    release = true;
    pool.unsafe_join(held);
}
