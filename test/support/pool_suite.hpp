/**
 *  @file   pool_suite.hpp
 *  @brief  One typed GoogleTest suite of the properties every fork-join pool kind must hold.
 *
 *  Instantiate it with configurations that say how to spawn a pool:
 *
 *      struct my_config {
 *          using pool_t = ...;                       // exposes index_t, prong_t and the dispatch API
 *          static forkunion::status_t spawn(pool_t &, std::size_t threads, forkunion::caller_exclusivity_t);
 *      };
 *      using my_configs = ::testing::Types<my_config, ...>;
 *      INSTANTIATE_TYPED_TEST_SUITE_P(my_pools, pool_suite, my_configs);
 *
 *  Every property runs for both exclusivities and for every count of `thread_counts<index_t>()` (1, 2, the
 *  cores, one more, 3x the cores), spawning and terminating a fresh pool each time.
 *
 *  Switches, for properties that legitimately differ between pool kinds (a configuration that omits one gets the
 *  flat pool's behaviour, so the flat pool's configurations say nothing and are checked exactly as before):
 *  - `static std::size_t minimum_threads()` (default 1): the fewest threads the pool spawns with. A distributed
 *    pool over D domains needs one thread per domain (D is known at run time); shapes below it are skipped, and
 *    the requests the suite makes itself use at least this many threads.
 *  - `static constexpr bool thread_zero_forks` (default true): thread 0 of an exclusive pool may dispatch from its
 *    own slice (flat and colocated pools). When false (the distributed pool), the suite checks instead that such
 *    a fork is refused with `contended`, runs nothing, and leaves the enclosing dispatch and the pool intact.
 */
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include <forkunion/base/types.hpp>

#include "test_support.hpp"

namespace forkunion::testing {

inline char const *exclusivity_name(caller_exclusivity_t exclusivity) {
    return exclusivity == caller_exclusive_k ? "exclusive" : "inclusive";
}

/**  The configuration's `minimum_threads()`, or 1. */
template <typename config_t>
std::size_t minimum_threads() {
    if constexpr (requires { config_t::minimum_threads(); })
        return config_t::minimum_threads();
    else
        return 1;
}

/**  The configuration's `thread_zero_forks`, or true. */
template <typename config_t>
constexpr bool thread_zero_forks() {
    if constexpr (requires { config_t::thread_zero_forks; })
        return config_t::thread_zero_forks;
    else
        return true;
}

/**  `thread_counts<index_t>()` without the counts below the configuration's `minimum_threads`. */
template <typename config_t>
std::vector<std::size_t> config_thread_counts() {
    std::vector<std::size_t> counts = thread_counts<typename config_t::pool_t::index_t>();
    counts.erase(
        std::remove_if(counts.begin(), counts.end(), [](std::size_t c) { return c < minimum_threads<config_t>(); }),
        counts.end());
    return counts;
}

/**  Spawns a pool for each (exclusivity, thread count) of the grid, calls `body(pool, threads, exclusivity)`,
 *   and terminates it, checking that no thread outlives the pool. */
template <typename config_t, typename body_t>
void for_each_shape(body_t &&body) {
    using pool_t = typename config_t::pool_t;
    // GoogleTest on Windows starts a thread the first time this thread's trace stack is touched, which watches this
    // thread and lives as long as it: touch it before the baseline, so the first `SCOPED_TRACE` below adds none.
    { SCOPED_TRACE("the baseline counts GoogleTest's own threads"); }
    std::size_t const threads_before = settled_live_threads();
    std::size_t shapes = 0;
    for (caller_exclusivity_t exclusivity : {caller_inclusive_k, caller_exclusive_k}) {
        for (std::size_t threads : config_thread_counts<config_t>()) {
            if (!can_spawn(threads, exclusivity)) continue; // a build without threads: inclusive pools of one only
            ++shapes;
            SCOPED_TRACE(::testing::Message() << exclusivity_name(exclusivity) << " pool of " << threads << " threads");
            pool_t pool;
            status_t const spawned = config_t::spawn(pool, threads, exclusivity);
            ASSERT_TRUE(spawned) << spawned.name();
            ASSERT_EQ(static_cast<std::size_t>(pool.threads_count()), threads);
            body(pool, threads, exclusivity);
            pool.terminate();
            EXPECT_TRUE(threads_settle_to(threads_before))
                << "a worker outlived terminate(): " << live_threads() << " threads, " << threads_before << " before";
        }
    }
    if (shapes == 0) GTEST_SKIP() << "no shape of this configuration can spawn in this build (no threads)";
}

template <typename config_t>
class pool_suite : public ::testing::Test {};
TYPED_TEST_SUITE_P(pool_suite);

TYPED_TEST_P(pool_suite, each_task_runs_exactly_once) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    using prong_t = typename pool_t::prong_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t) {
        for (std::size_t n : task_counts<index_t>(threads)) {
            SCOPED_TRACE(::testing::Message() << "n = " << n);
            index_t const tasks = static_cast<index_t>(n);
            std::atomic<std::size_t> wrong_thread{0};
            auto check_thread = [&](std::size_t thread) noexcept {
                if (thread >= threads) wrong_thread.fetch_add(1, std::memory_order_relaxed);
            };
            {
                task_ledger ledger(n);
                auto guard = pool.for_n(tasks, [&](prong_t prong) noexcept {
                    ledger.record(prong.task);
                    check_thread(prong.thread);
                });
                EXPECT_TRUE(guard) << guard.status().name();
                (void)guard.join();
                EXPECT_EQ(ledger.mistakes(), 0u) << "for_n";
            }
            {
                task_ledger ledger(n);
                forkunion::testing::require_ran(
                    pool.for_n(tasks, [&](index_t task) noexcept { ledger.record(task); }).join());
                EXPECT_EQ(ledger.mistakes(), 0u) << "for_n, index callback";
            }
            {
                task_ledger ledger(n);
                auto guard = pool.for_n_dynamic(tasks, [&](prong_t prong) noexcept {
                    ledger.record(prong.task);
                    check_thread(prong.thread);
                });
                EXPECT_TRUE(guard) << guard.status().name();
                (void)guard.join();
                EXPECT_EQ(ledger.mistakes(), 0u) << "for_n_dynamic";
            }
            {
                task_ledger ledger(n);
                forkunion::testing::require_ran(
                    pool.for_n_dynamic(tasks, [&](auto task) noexcept { ledger.record(task); }).join());
                EXPECT_EQ(ledger.mistakes(), 0u) << "for_n_dynamic, generic callback";
            }
            {
                task_ledger ledger(n);
                std::atomic<std::size_t> empty_calls{0};
                auto guard = pool.for_slices(tasks, [&](prong_t first, index_t count) noexcept {
                    if (count == 0) empty_calls.fetch_add(1, std::memory_order_relaxed);
                    for (std::size_t i = 0; i < count; ++i) ledger.record(std::size_t(first.task) + i);
                    check_thread(first.thread);
                });
                EXPECT_TRUE(guard) << guard.status().name();
                (void)guard.join();
                EXPECT_EQ(ledger.mistakes(), 0u) << "for_slices";
                EXPECT_EQ(empty_calls.load(), 0u) << "threads with empty slices are not called";
            }
            EXPECT_EQ(wrong_thread.load(), 0u) << "a prong named a thread outside the pool";
        }
    });
}

TYPED_TEST_P(pool_suite, for_threads_visits_each_thread_once) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    using prong_t = typename pool_t::prong_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t) {
        for (int round = 0; round != 3; ++round) {
            task_ledger ledger(threads);
            auto guard = pool.for_threads([&](index_t thread) noexcept { ledger.record(thread); });
            EXPECT_TRUE(guard);
            (void)guard.join();
            EXPECT_EQ(ledger.mistakes(), 0u);
        }
        task_ledger ledger(threads);
        std::atomic<std::size_t> mismatched{0};
        forkunion::testing::require_ran(pool.for_threads([&](prong_t prong) noexcept {
                                                ledger.record(prong.thread);
                                                if (prong.task != prong.thread)
                                                    mismatched.fetch_add(1, std::memory_order_relaxed);
                                            })
                                            .join());
        EXPECT_EQ(ledger.mistakes(), 0u) << "prong-shaped for_threads";
        EXPECT_EQ(mismatched.load(), 0u) << "for_threads prongs carry the thread as their task";
    });
}

TYPED_TEST_P(pool_suite, generations_are_odd_and_joins_are_idempotent) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        bool const exclusive = exclusivity == caller_exclusive_k;
        EXPECT_TRUE(pool.is_complete(0)) << "generation 0 names no dispatch";

        task_ledger first_ledger(threads);
        auto first_fn = [&](index_t thread) noexcept { first_ledger.record(thread); };
        auto const first = pool.unsafe_for_threads(first_fn);
        EXPECT_EQ(first % 2, 1u) << "generations are odd";
        if (exclusive) {
            EXPECT_TRUE(eventually([&] { return pool.is_complete(first); })) << "exclusive dispatches complete alone";
            EXPECT_EQ(first_ledger.mistakes(), 0u) << "is_complete() publishes every slice's writes";
        } else {
            EXPECT_FALSE(pool.is_complete(first)) << "thread 0's slice only runs inside unsafe_join";
        }
        pool.unsafe_join(first);
        EXPECT_TRUE(pool.is_complete(first));
        EXPECT_EQ(first_ledger.mistakes(), 0u);
        pool.unsafe_join(first); // a repeated join returns at once
        EXPECT_EQ(first_ledger.mistakes(), 0u) << "a repeated join runs nothing again";

        // A stale generation returns at once, even while a newer dispatch is in flight.
        std::atomic<bool> release{false};
        std::atomic<std::size_t> second_runs{0};
        auto second_fn = [&](index_t) noexcept {
            second_runs.fetch_add(1, std::memory_order_relaxed);
            (void)eventually([&] { return release.load(std::memory_order_acquire); });
        };
        auto const second = pool.unsafe_for_threads(second_fn);
        EXPECT_EQ(second % 2, 1u);
        EXPECT_NE(second, first);
        pool.unsafe_join(first);
        EXPECT_TRUE(pool.is_complete(first));
        EXPECT_FALSE(pool.is_complete(second)) << "the newer dispatch is still blocked";
        release.store(true, std::memory_order_release);
        pool.unsafe_join(second);
        EXPECT_TRUE(pool.is_complete(second));
        EXPECT_EQ(second_runs.load(), threads);

        // Guards report their generation and agree with the pool.
        auto guard = pool.for_n(static_cast<index_t>(threads), [](index_t) noexcept {});
        EXPECT_EQ(guard.generation() % 2, 1u);
        (void)guard.join();
        (void)guard.join();
        EXPECT_TRUE(guard.is_complete());
        EXPECT_TRUE(pool.is_complete(guard.generation()));
    });
}

TYPED_TEST_P(pool_suite, guard_timing_follows_exclusivity) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        std::atomic<bool> zero_ran{false};
        std::atomic<std::size_t> others_ran{0};
        auto guard = pool.for_threads([&](index_t thread) noexcept {
            if (thread == 0)
                zero_ran.store(true, std::memory_order_relaxed);
            else
                others_ran.fetch_add(1, std::memory_order_relaxed);
        });
        ASSERT_TRUE(guard);
        // Every worker starts at the guard's construction, without a join.
        EXPECT_TRUE(eventually([&] { return others_ran.load() == threads - 1; }));
        if (exclusivity == caller_exclusive_k) {
            EXPECT_TRUE(eventually([&] { return guard.is_complete(); })) << "exclusive guards complete before join";
            EXPECT_TRUE(zero_ran.load());
        } else {
            EXPECT_FALSE(zero_ran.load()) << "the caller's slice runs inside join()";
            EXPECT_FALSE(guard.is_complete());
        }
        (void)guard.join();
        EXPECT_TRUE(zero_ran.load());
        EXPECT_TRUE(guard.is_complete());
    });
}

TYPED_TEST_P(pool_suite, nested_dispatch_is_refused) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        // Thread 0 of an exclusive pool may fork where the pool allows it: tested below.
        bool const zero_forks = exclusivity == caller_exclusive_k && thread_zero_forks<TypeParam>();
        std::atomic<std::size_t> refused{0}, accepted{0}, generations{0}, ran{0};
        auto noop = [](index_t) noexcept {};
        forkunion::testing::require_ran(
            pool.for_threads([&](index_t thread) noexcept {
                    if (zero_forks && thread == 0) return;
                    auto inner = pool.for_n(3, [&](index_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); });
                    if (inner.status() == status_code_t::contended_k)
                        refused.fetch_add(1, std::memory_order_relaxed);
                    else
                        accepted.fetch_add(1, std::memory_order_relaxed);
                    if (pool.unsafe_for_threads(noop) != 0) generations.fetch_add(1, std::memory_order_relaxed);
                })
                .join());
        EXPECT_EQ(refused.load(), zero_forks ? threads - 1 : threads);
        EXPECT_EQ(accepted.load(), 0u);
        EXPECT_EQ(generations.load(), 0u) << "a refused unsafe_for_threads returns generation 0";
        EXPECT_EQ(ran.load(), 0u) << "a refused dispatch runs nothing";

        task_ledger ledger(3 * threads);
        forkunion::testing::require_ran(
            pool.for_n_dynamic(static_cast<index_t>(3 * threads), [&](index_t task) noexcept { ledger.record(task); })
                .join());
        EXPECT_EQ(ledger.mistakes(), 0u) << "the pool stays usable after refusals";
    });
}

TYPED_TEST_P(pool_suite, racing_dispatch_is_refused) {
    FORKUNION_SKIP_UNLESS_THREADS(2); // the racer is a thread of its own
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t) {
        std::atomic<bool> release{false};
        auto blocker = [&](index_t) noexcept {
            (void)eventually([&] { return release.load(std::memory_order_acquire); });
        };
        auto const held = pool.unsafe_for_threads(blocker);
        ASSERT_NE(held, 0u);

        status_t racer_status;
        std::size_t racer_token = 1;
        std::atomic<std::size_t> racer_ran{0};
        std::thread racer([&] {
            auto noop = [](index_t) noexcept {};
            auto guard = pool.for_n(7, [&](index_t) noexcept { racer_ran.fetch_add(1); });
            racer_status = guard.status();
            racer_token = pool.unsafe_for_threads(noop);
        });
        racer.join();
        EXPECT_EQ(racer_status, status_code_t::contended_k) << racer_status.name();
        EXPECT_EQ(racer_token, 0u);
        EXPECT_EQ(racer_ran.load(), 0u);

        release.store(true, std::memory_order_release);
        pool.unsafe_join(held);

        // The racer can dispatch once the pool is free.
        task_ledger ledger(2 * threads + 3);
        std::thread second([&] {
            forkunion::testing::require_ran(
                pool.for_n(static_cast<index_t>(ledger.size()), [&](index_t task) noexcept { ledger.record(task); })
                    .join());
        });
        (void)second.join();
        EXPECT_EQ(ledger.mistakes(), 0u);
    });
}

TYPED_TEST_P(pool_suite, exclusive_thread_zero_forks_at_any_depth) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    using prong_t = typename pool_t::prong_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        if (exclusivity != caller_exclusive_k) return;
        if constexpr (!thread_zero_forks<TypeParam>()) {
            // The pool refuses thread-0 forks: each attempt is `contended`, runs nothing, and the enclosing
            // dispatch, still in flight meanwhile, completes on every thread.
            task_ledger ledger(threads);
            std::atomic<std::size_t> refused{0}, ran{0}, generations{0}, outer_complete{0};
            std::atomic<bool> attempted{false};
            auto noop = [](index_t) noexcept {};
            auto generation_box = std::make_unique<std::atomic<std::size_t>>(0);
            auto job = [&](index_t thread) noexcept {
                ledger.record(thread);
                if (thread != 0) return;
                (void)eventually([&] { return generation_box->load(std::memory_order_acquire) != 0; });
                for (bool const dynamic : {false, true}) {
                    auto body = [&](index_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); };
                    status_t const status =
                        dynamic ? pool.for_n_dynamic(7, body).status() : pool.for_n(7, body).status();
                    if (status == status_code_t::contended_k) refused.fetch_add(1, std::memory_order_relaxed);
                }
                if (pool.unsafe_for_threads(noop) != 0) generations.fetch_add(1, std::memory_order_relaxed);
                if (pool.is_complete(static_cast<index_t>(generation_box->load(std::memory_order_acquire))))
                    outer_complete.fetch_add(1, std::memory_order_relaxed);
                attempted.store(true, std::memory_order_release);
            };
            auto const generation = pool.unsafe_for_threads(job);
            ASSERT_NE(generation, 0u);
            generation_box->store(generation, std::memory_order_release);
            EXPECT_TRUE(eventually([&] { return pool.is_complete(generation); }));
            pool.unsafe_join(generation);
            EXPECT_TRUE(attempted.load(std::memory_order_acquire));
            EXPECT_EQ(refused.load(), 2u) << "a thread-0 fork is refused with contended";
            EXPECT_EQ(ran.load(), 0u) << "a refused fork runs nothing";
            EXPECT_EQ(generations.load(), 0u) << "a refused unsafe_for_threads returns generation 0";
            EXPECT_EQ(outer_complete.load(), 0u) << "the enclosing dispatch is in flight while thread 0 runs";
            EXPECT_EQ(ledger.mistakes(), 0u) << "the enclosing dispatch ran on every thread";
            task_ledger after(threads + 1);
            forkunion::testing::require_ran(
                pool.for_n(static_cast<index_t>(after.size()), [&](index_t task) noexcept { after.record(task); })
                    .join());
            EXPECT_EQ(after.mistakes(), 0u) << "the pool stays usable";
            return;
        }
        for (bool const dynamic : {false, true})
            for (int depth = 1; depth <= 3; ++depth) {
                SCOPED_TRACE(::testing::Message() << (dynamic ? "for_n_dynamic" : "for_n") << ", depth " << depth);
                std::size_t const tasks = 2 * threads + 1;
                std::vector<std::unique_ptr<task_ledger>> ledgers;
                for (int level = 0; level != depth; ++level) ledgers.push_back(std::make_unique<task_ledger>(tasks));
                std::vector<std::atomic<bool>> forked(std::size_t(depth) + 1);
                std::atomic<std::size_t> refused{0}, incomplete{0}, early{0};
                std::vector<std::atomic<bool>> outer_done(threads);

                // Level L runs on every thread; thread 0 forks level L + 1 from inside the first task it runs at
                // level L, down to `depth`. With `for_n_dynamic` at every level, each fork resets the claim
                // cursors that the enclosing level's drain resumes on afterwards.
                auto fork = [&](auto &self, int level) noexcept -> void {
                    auto body = [&](prong_t prong) noexcept {
                        if (level == 1) // a fork first waits for every other slice of the enclosing dispatch
                            for (std::size_t t = 1; t < threads; ++t)
                                if (!outer_done[t].load(std::memory_order_acquire))
                                    early.fetch_add(1, std::memory_order_relaxed);
                        ledgers[std::size_t(level - 1)]->record(prong.task);
                        if (level == depth) return;
                        if (prong.thread == 0) {
                            if (!forked[std::size_t(level)].exchange(true)) self(self, level + 1);
                        } else {
                            // Hold this task until thread 0 forked: otherwise the other threads may take every task
                            // of a dynamic level before thread 0 runs one, and the next level never starts. They
                            // hold at most T - 1 tasks, so thread 0 still gets one of the 2T + 1.
                            (void)eventually([&] { return forked[std::size_t(level)].load(); });
                        }
                    };
                    auto check = [&](auto &guard) noexcept {
                        if (!guard) refused.fetch_add(1, std::memory_order_relaxed);
                        if (!guard.is_complete()) incomplete.fetch_add(1, std::memory_order_relaxed);
                    };
                    if (dynamic) {
                        auto guard = pool.for_n_dynamic(static_cast<index_t>(tasks), body);
                        check(guard);
                    } else {
                        auto guard = pool.for_n(static_cast<index_t>(tasks), body);
                        check(guard);
                    }
                };
                // The submitter hands the whole job to thread 0 and only polls.
                auto job = [&](index_t thread) noexcept {
                    if (thread == 0)
                        fork(fork, 1);
                    else
                        outer_done[thread].store(true, std::memory_order_release);
                };
                auto const generation = pool.unsafe_for_threads(job);
                ASSERT_NE(generation, 0u);
                EXPECT_TRUE(eventually([&] { return pool.is_complete(generation); }));
                pool.unsafe_join(generation);
                EXPECT_EQ(refused.load(), 0u) << "thread 0's forks are not refused";
                EXPECT_EQ(incomplete.load(), 0u) << "a thread-0 fork returns complete";
                EXPECT_EQ(early.load(), 0u) << "a fork ran before the enclosing slices finished";
                for (int level = 0; level != depth; ++level) {
                    EXPECT_EQ(ledgers[std::size_t(level)]->mistakes(), 0u) << "level " << level + 1;
                }
            }
        // The pool is still usable by its submitter afterwards.
        task_ledger ledger(threads + 1);
        forkunion::testing::require_ran(
            pool.for_n(static_cast<index_t>(ledger.size()), [&](index_t task) noexcept { ledger.record(task); })
                .join());
        EXPECT_EQ(ledger.mistakes(), 0u);
    });
}

TYPED_TEST_P(pool_suite, spawn_and_dispatch_refuse_bad_requests) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    std::size_t const threads_before = settled_live_threads();
    for (caller_exclusivity_t exclusivity : {caller_inclusive_k, caller_exclusive_k}) {
        // Two threads (or the configuration's minimum); a pool of one where the build has no threads.
        std::size_t const wanted = std::max<std::size_t>(2, minimum_threads<TypeParam>());
        std::size_t const two = can_spawn(wanted, exclusivity) ? wanted : 1;
        bool const spawnable = can_spawn(two, exclusivity) && two >= minimum_threads<TypeParam>();
        pool_t pool;
        std::atomic<std::size_t> ran{0};
        auto count = [&](index_t) noexcept { ran.fetch_add(1); };
        EXPECT_EQ(TypeParam::spawn(pool, 0, exclusivity).code(), status_code_t::invalid_argument_k);
        EXPECT_EQ(pool.threads_count(), 0u);
        {
            auto guard = pool.for_n(5, count);
            EXPECT_FALSE(guard);
            EXPECT_EQ(guard.status(), status_code_t::not_spawned_k);
            EXPECT_TRUE(guard.is_complete());
        }
        {
            auto const publication = pool.unsafe_for_threads(count);
            EXPECT_EQ(publication.generation, 0u);
            EXPECT_EQ(publication.status, status_code_t::not_spawned_k) << publication.status.name();
        }
        // The idle policy is a property of the pool, not of its threads: settable unspawned, kept by the spawn.
        ASSERT_TRUE(pool.set_idle_policy(idle_policy_t::sleep(0)));
        if (!spawnable) continue; // the refusals above are what a build without threads can check
        ASSERT_TRUE(TypeParam::spawn(pool, two, exclusivity));
        EXPECT_EQ(pool.idle_policy(), idle_policy_t::sleep(0)) << "the spawn kept the policy set before it";
        EXPECT_EQ(TypeParam::spawn(pool, two, exclusivity).code(), status_code_t::already_spawned_k);
        EXPECT_EQ(pool.threads_count(), two) << "a refused spawn leaves the pool as it was";
        forkunion::testing::require_ran(pool.for_n(5, count).join());
        EXPECT_EQ(ran.load(), 5u);
        pool.terminate();
        pool.terminate(); // idempotent
        EXPECT_EQ(pool.threads_count(), 0u);
        {
            auto guard = pool.for_threads(count);
            EXPECT_EQ(guard.status(), status_code_t::not_spawned_k);
        }
        EXPECT_EQ(ran.load(), 5u) << "refused dispatches run nothing";
    }
    EXPECT_TRUE(threads_settle_to(threads_before));
}

TYPED_TEST_P(pool_suite, respawn_churn_alternates_exclusivity) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    std::size_t const threads_before = settled_live_threads();
    auto const counts = config_thread_counts<TypeParam>();
    if (counts.empty()) GTEST_SKIP() << "no thread count of this configuration can spawn in this build (no threads)";
    pool_t pool;
    for (std::size_t round = 0; round != 16; ++round) {
        std::size_t const threads = counts[round % counts.size()];
        caller_exclusivity_t const exclusivity =
            spawnable_exclusivity(threads, round % 2 ? caller_exclusive_k : caller_inclusive_k);
        SCOPED_TRACE(::testing::Message() << "round " << round << ", " << threads << " threads");
        ASSERT_TRUE(TypeParam::spawn(pool, threads, exclusivity));
        EXPECT_EQ(pool.caller_exclusivity(), exclusivity);
        task_ledger ledger(3 * threads + 1);
        forkunion::testing::require_ran(
            pool.for_n_dynamic(static_cast<index_t>(ledger.size()), [&](index_t task) noexcept { ledger.record(task); })
                .join());
        EXPECT_EQ(ledger.mistakes(), 0u);
        pool.terminate();
        EXPECT_TRUE(threads_settle_to(threads_before));
    }
}

TYPED_TEST_P(pool_suite, idle_modes_wake_for_the_next_dispatch) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        std::size_t const workers = exclusivity == caller_exclusive_k ? threads : threads - 1;
        auto dispatch_once = [&] {
            task_ledger ledger(2 * threads);
            forkunion::testing::require_ran(
                pool.for_n(static_cast<index_t>(ledger.size()), [&](index_t task) noexcept { ledger.record(task); })
                    .join());
            return ledger.mistakes();
        };
        // Every policy survives the dispatches it governs (it no longer lasts one dispatch).
        for (idle_policy_t const policy : {idle_policy_t::spin(), idle_policy_t::nap(), idle_policy_t::adaptive(1),
                                           idle_policy_t::sleep(1), idle_policy_t::adaptive()}) {
            ASSERT_TRUE(pool.set_idle_policy(policy));
            EXPECT_EQ(dispatch_once(), 0u) << idle_mode_name(policy.mode);
            EXPECT_EQ(dispatch_once(), 0u) << idle_mode_name(policy.mode);
            EXPECT_EQ(pool.idle_policy(), policy) << "the policy persists across dispatches";
        }
        // Parked with no timer at all, and with one far beyond the test's time limit: only the dispatch's wake-up
        // can bring them back, so a lost one hangs the test (and ctest fails it) instead of passing late.
        for (idle_policy_t const policy :
             {idle_policy_t::sleep(0), idle_policy_t::sleep(3'600'000'000ull), idle_policy_t::adaptive(0)}) {
            ASSERT_TRUE(pool.set_idle_policy(policy));
            EXPECT_EQ(dispatch_once(), 0u);
            EXPECT_TRUE(eventually([&] { return pool.parked_threads_count() == workers; }))
                << workers << " workers should be parked, " << pool.parked_threads_count() << " are";
            EXPECT_EQ(dispatch_once(), 0u) << "the dispatch woke the parked workers";
        }
        // A policy change is never refused by a dispatch in flight, and parked workers wake to follow it.
        ASSERT_TRUE(pool.set_idle_policy(idle_policy_t::sleep(0)));
        EXPECT_EQ(dispatch_once(), 0u);
        EXPECT_TRUE(eventually([&] { return pool.parked_threads_count() == workers; }));
        ASSERT_TRUE(pool.set_idle_policy(idle_policy_t::spin()));
        EXPECT_TRUE(eventually([&] { return pool.parked_threads_count() == 0; })) << "spinning workers are not parked";
        std::atomic<bool> release{false};
        auto blocker = [&](index_t) noexcept {
            (void)eventually([&] { return release.load(std::memory_order_acquire); });
        };
        auto const held = pool.unsafe_for_threads(blocker);
        EXPECT_TRUE(pool.set_idle_policy(idle_policy_t::nap())) << "never refused by a dispatch in flight";
        EXPECT_EQ(pool.set_idle_policy(idle_policy_t{static_cast<idle_mode_t>(7), 0}).code(),
                  status_code_t::invalid_argument_k);
        release.store(true, std::memory_order_release);
        pool.unsafe_join(held);
        EXPECT_EQ(pool.idle_policy(), idle_policy_t::nap()) << "a refused change changed nothing";
        EXPECT_EQ(dispatch_once(), 0u);
        ASSERT_TRUE(pool.set_idle_policy(idle_policy_t{}));
    });
}

TYPED_TEST_P(pool_suite, stalled_thread_tasks_are_stolen) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    using prong_t = typename pool_t::prong_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t) {
        if (threads < 2) return;
        // The first task of the last thread's block stalls until every other task is done: the tasks queued
        // behind it in that block can only finish if other threads steal them. A broken steal fails by deadline
        // instead of hanging. The owner normally takes its first task before any thief reaches its cursor.
        std::size_t const tasks = std::min<std::size_t>(8 * threads, std::numeric_limits<index_t>::max());
        auto const block = static_slice<index_t>(static_cast<index_t>(tasks), static_cast<index_t>(threads),
                                                 static_cast<index_t>(threads - 1));
        std::size_t const stall_task = block.first;
        task_ledger ledger(tasks);
        std::atomic<std::size_t> done{0};
        std::atomic<std::size_t> stalled_thread{threads};
        std::atomic<bool> timed_out{false};
        std::vector<std::atomic<std::size_t>> runner(tasks);
        forkunion::testing::require_ran(
            pool.for_n_dynamic(static_cast<index_t>(tasks),
                               [&](prong_t prong) noexcept {
                                   runner[prong.task].store(prong.thread, std::memory_order_relaxed);
                                   if (prong.task == stall_task) {
                                       stalled_thread.store(prong.thread, std::memory_order_relaxed);
                                       if (!eventually(
                                               [&] { return done.load(std::memory_order_acquire) == tasks - 1; }))
                                           timed_out.store(true);
                                   } else {
                                       done.fetch_add(1, std::memory_order_acq_rel);
                                   }
                                   ledger.record(prong.task);
                               })
                .join());
        EXPECT_FALSE(timed_out.load()) << "the stalled thread's tasks were not stolen";
        EXPECT_EQ(ledger.mistakes(), 0u);
        if (stalled_thread.load() == threads - 1) { // the owner stalled: the rest of its block was stolen
            for (std::size_t task = stall_task + 1; task < std::size_t(block.first) + block.count; ++task) {
                EXPECT_NE(runner[task].load(), threads - 1) << "task " << task << " waited for its stalled owner";
            }
        }
    });
}

TYPED_TEST_P(pool_suite, guard_joined_from_another_thread_never_reports_unrun_work) {
    FORKUNION_SKIP_UNLESS_THREADS(2); // the foreign joiner is a thread of its own
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t threads, caller_exclusivity_t) {
        task_ledger ledger(2 * threads + 1);
        std::atomic<std::size_t> ran{0};
        auto guard = pool.for_n(static_cast<index_t>(ledger.size()), [&](index_t task) noexcept {
            ledger.record(task);
            ran.fetch_add(1, std::memory_order_relaxed);
        });
        ASSERT_TRUE(guard.status());
        status_t foreign;
        std::thread joiner([&] { foreign = guard.join(); });
        joiner.join();
        // Only the creator may join: another thread's join is refused as misuse, runs nothing, changes nothing.
        EXPECT_EQ(foreign, status_code_t::invalid_argument_k) << foreign.name();
        if (std::size_t const done = ran.load(); done != ledger.size()) {
            EXPECT_FALSE(guard.is_complete()) << "complete with " << done << " of " << ledger.size() << " tasks run";
        }
        EXPECT_TRUE(guard.join()) << "the creator's join still runs and joins every slice";
        EXPECT_TRUE(guard.is_complete());
        EXPECT_EQ(ledger.mistakes(), 0u);
        task_ledger next(threads + 2);
        require_ran(
            pool.for_n(static_cast<index_t>(next.size()), [&](index_t task) noexcept { next.record(task); }).join());
        EXPECT_EQ(next.mistakes(), 0u) << "the pool is free for the next dispatch";
    });
}

TYPED_TEST_P(pool_suite, a_count_the_index_type_cannot_hold_is_refused) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    for_each_shape<TypeParam>([](pool_t &pool, std::size_t, caller_exclusivity_t) {
        std::atomic<std::size_t> ran{0};
        auto count_task = [&](index_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); };
        auto count_slice = [&](index_t, index_t count) noexcept { ran.fetch_add(count, std::memory_order_relaxed); };
        constexpr std::uint64_t max = std::numeric_limits<index_t>::max();
        auto check = [&](auto n) {
            SCOPED_TRACE(::testing::Message() << "count " << static_cast<long long>(n));
            for (int verb = 0; verb != 3; ++verb) {
                SCOPED_TRACE(::testing::Message() << "verb " << verb);
                ran.store(0);
                status_t joined;
                bool run = true;
                auto run_on_caller = [&](auto &&guard) {
                    run = guard.join_or_run_on_caller();
                    EXPECT_EQ(guard.status(), status_code_t::invalid_argument_k) << guard.status().name();
                };
                if (verb == 0) {
                    joined = pool.for_n(n, count_task).join();
                    run_on_caller(pool.for_n(n, count_task));
                } else if (verb == 1) {
                    joined = pool.for_n_dynamic(n, count_task).join();
                    run_on_caller(pool.for_n_dynamic(n, count_task));
                } else {
                    joined = pool.for_slices(n, count_slice).join();
                    run_on_caller(pool.for_slices(n, count_slice));
                }
                EXPECT_EQ(joined, status_code_t::invalid_argument_k) << joined.name();
                EXPECT_FALSE(run) << "join_or_run_on_caller cannot run a loop whose indices do not fit";
                EXPECT_EQ(ran.load(), 0u) << "a refused count runs nothing";
            }
        };
        check(-1);
        check(std::numeric_limits<long long>::min());
        if constexpr (max < std::numeric_limits<std::uint64_t>::max()) {
            check(std::uint64_t(max) + 1);
            check(std::numeric_limits<std::uint64_t>::max());
            if constexpr (max < 1000) check(1000);
        }
        if constexpr (max <= std::numeric_limits<std::uint16_t>::max()) {
            // The largest count the index type holds runs every task once.
            task_ledger ledger(static_cast<std::size_t>(max));
            require_ran(
                pool.for_n_dynamic(std::uint64_t(max), [&](index_t task) noexcept { ledger.record(task); }).join());
            EXPECT_EQ(ledger.mistakes(), 0u);
        }
    });
}

REGISTER_TYPED_TEST_SUITE_P(pool_suite, each_task_runs_exactly_once, for_threads_visits_each_thread_once,
                            generations_are_odd_and_joins_are_idempotent, guard_timing_follows_exclusivity,
                            nested_dispatch_is_refused, racing_dispatch_is_refused,
                            exclusive_thread_zero_forks_at_any_depth, spawn_and_dispatch_refuse_bad_requests,
                            respawn_churn_alternates_exclusivity, idle_modes_wake_for_the_next_dispatch,
                            stalled_thread_tasks_are_stolen, guard_joined_from_another_thread_never_reports_unrun_work,
                            a_count_the_index_type_cannot_hold_is_refused);

} // namespace forkunion::testing
