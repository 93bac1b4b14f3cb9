/**
 *  @file   test/pools/fork_test.cpp
 *  @brief  `fork()` from inside a dispatch, for every pool kind: the caller of a caller-inclusive pool forking
 *          inside its own slice, and a dispatcher forking between the dispatch and its join. In the child the
 *          other slices' threads do not exist, so the join must return `forked` at once (never wait for them),
 *          and the inherited pool must then behave as any inherited pool: refuse, terminate at once, respawn.
 *          In the parent the same join completes every slice and reports success.
 *
 *  Every child is waited for within the test deadline (a watchdog): a hung child is killed and fails the test.
 */
#include <gtest/gtest.h>

#include <algorithm> // `std::max`
#include <atomic>    // `std::atomic`
#include <chrono>    // `std::chrono::seconds`
#include <cstdio>    // `std::fflush`
#include <thread>    // `std::thread`, `std::this_thread::yield`
#include <vector>    // `std::vector`

#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "test_support.hpp"

#if FORKUNION_OS_LINUX
#include <signal.h>   // `kill`
#include <sys/wait.h> // `waitpid`
#include <unistd.h>   // `fork`, `_exit`
#endif

#if !defined(FORKUNION_TEST_EMULATED)
#define FORKUNION_TEST_EMULATED 0 // 1 under qemu-user (cross builds)
#endif

namespace fu = forkunion;
using namespace forkunion::testing;

#if FORKUNION_OS_LINUX
namespace {

/**  Waits, within the test deadline, for `child`; a hung one is killed. The exit code, or -1 if it hung or died. */
int reap_child(pid_t child) {
    int status = 0;
    if (!eventually([&] { return ::waitpid(child, &status, WNOHANG) == child; }, std::chrono::seconds(20))) {
        ::kill(child, SIGKILL), ::waitpid(child, &status, 0);
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/**  The child's checks after its join returned: the inherited pool refuses, terminates at once, and respawns. */
template <typename pool_t, typename spawn_t>
int inherited_pool_checks(pool_t &pool, spawn_t &respawn) {
    if (!pool.forked()) return 30;
    std::atomic<std::size_t> ran{0};
    auto count = [&](std::size_t) noexcept { ran.fetch_add(1); };
    if (pool.for_n(10, count).join().code() != fu::status_code_t::forked_k) return 31;
    pool.terminate();
    if (pool.threads_count() != 0) return 32;
    if (!respawn(pool)) return 33;
    if (!pool.for_n(30, count).join() || ran.load() != 30) return 34;
    pool.terminate();
    return 0;
}

char const *exclusivity_name(fu::caller_exclusivity_t exclusivity) {
    return exclusivity == fu::caller_inclusive_k ? "caller-inclusive" : "caller-exclusive";
}

/**  The verbs a forking callback runs in: each runs `fork_once(thread)` on every prong. */
enum class verb_t { for_threads, for_n, for_n_dynamic, for_slices };
constexpr verb_t verbs_k[] = {verb_t::for_threads, verb_t::for_n, verb_t::for_n_dynamic, verb_t::for_slices};
constexpr char const *verb_name(verb_t verb) {
    return verb == verb_t::for_threads     ? "for_threads"
           : verb == verb_t::for_n         ? "for_n"
           : verb == verb_t::for_n_dynamic ? "for_n_dynamic"
                                           : "for_slices";
}

template <typename pool_t, typename fn_t>
fu::status_t join_verb(pool_t &pool, verb_t verb, fn_t &&fn) {
    using prong_t = typename pool_t::prong_t;
    using index_t = typename pool_t::index_t;
    constexpr std::size_t tasks_k = 64;
    switch (verb) {
    case verb_t::for_threads:
        return pool.for_threads([&](prong_t prong) noexcept { fn(prong.thread); }).join();
    case verb_t::for_n:
        return pool.for_n(tasks_k, [&](prong_t prong) noexcept { fn(prong.thread); }).join();
    case verb_t::for_n_dynamic:
        return pool.for_n_dynamic(tasks_k, [&](prong_t prong) noexcept { fn(prong.thread); }).join();
    case verb_t::for_slices:
        return pool.for_slices(tasks_k, [&](prong_t prong, index_t) noexcept { fn(prong.thread); }).join();
    }
    return fu::status_code_t::invalid_argument_k;
}

/**
 *  Thread 0 of a caller-inclusive pool, the caller itself, forks inside its slice of each verb. The child's join
 *  returns `forked` (exit code 10 if it returned anything else; a hang is killed), then the inherited-pool checks.
 */
template <typename pool_t, typename spawn_t>
void expect_fork_inside_the_callers_slice(spawn_t &&spawn) {
    for (verb_t verb : verbs_k) {
        SCOPED_TRACE(verb_name(verb));
        pool_t pool;
        ASSERT_TRUE(spawn(pool, fu::caller_inclusive_k));
        // Every worker past its start-up (where a sanitizer's runtime may hold its allocator lock across the fork).
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
        std::fflush(nullptr);
        pid_t child = -1; // written by thread 0 only, which is this thread
        // The other threads hold their first task until thread 0 forked, so that `for_n_dynamic`'s workers cannot
        // drain thread 0's block before it runs (it then runs at least its first task, and forks there).
        std::atomic<bool> forked{false};
        fu::status_t const status = join_verb(pool, verb, [&](std::size_t thread) noexcept {
            if (thread == 0 && child == -1) child = ::fork(), forked.store(true, std::memory_order_release);
            while (!forked.load(std::memory_order_acquire)) std::this_thread::yield();
        });
        if (child == 0) {
            if (status.code() != fu::status_code_t::forked_k) ::_exit(10);
            auto respawn = [&](pool_t &p) { return spawn(p, fu::caller_inclusive_k); };
            ::_exit(inherited_pool_checks(pool, respawn));
        }
        ASSERT_GT(child, 0);
        EXPECT_TRUE(status) << "the parent's join: " << status.name();
        EXPECT_FALSE(pool.forked());
        ASSERT_EQ(reap_child(child), 0) << "-1: the child's join hung (killed) or the child died; 10: its join did "
                                           "not say forked; 30..34: an inherited-pool check failed";
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join()); // the parent's pool is untouched
    }
}

/**  The dispatcher forks after the dispatch and before its join, on either exclusivity: the child's join too. */
template <typename pool_t, typename spawn_t>
void expect_fork_before_the_join(spawn_t &&spawn) {
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity_name(exclusivity));
        pool_t pool;
        ASSERT_TRUE(spawn(pool, exclusivity));
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join()); // every worker past its start-up
        std::atomic<std::size_t> ran{0};
        std::fflush(nullptr);
        auto guard = pool.for_n(64, [&](std::size_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); });
        pid_t const child = ::fork();
        if (child == 0) {
            if (guard.join().code() != fu::status_code_t::forked_k) ::_exit(10);
            auto respawn = [&](pool_t &p) { return spawn(p, exclusivity); };
            ::_exit(inherited_pool_checks(pool, respawn));
        }
        ASSERT_GT(child, 0);
        EXPECT_TRUE(guard.join());
        EXPECT_EQ(ran.load(), 64u);
        ASSERT_EQ(reap_child(child), 0) << "-1: the child's join hung (killed) or the child died; 10: its join did "
                                           "not say forked; 30..34: an inherited-pool check failed";
    }
}

/**
 *  A worker (thread 1, never the caller) forks inside its slice, on either exclusivity. The child's only thread is
 *  that worker: when its slice returns it has no caller to return to, and must exit with
 *  `forked_worker_exit_status_k` (a hang is killed, -1). The parent's dispatch completes every slice.
 */
template <typename pool_t, typename spawn_t>
void expect_fork_inside_a_workers_slice(spawn_t &&spawn) {
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity_name(exclusivity));
        pool_t pool;
        ASSERT_TRUE(spawn(pool, exclusivity));
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join()); // every worker past its start-up
        std::fflush(nullptr);
        std::atomic<pid_t> child{-1};
        std::atomic<std::size_t> ran{0};
        fu::status_t const status = pool.for_threads([&](std::size_t thread) noexcept {
                                            ran.fetch_add(1, std::memory_order_relaxed);
                                            if (thread == 1) child.store(::fork(), std::memory_order_relaxed);
                                        })
                                        .join();
        // Only the parent gets here: the child's thread 1 returned into its worker loop, which exits.
        ASSERT_GT(child.load(), 0);
        EXPECT_TRUE(status) << status.name();
        EXPECT_EQ(ran.load(), pool.threads_count()) << "every slice ran once in the parent";
        EXPECT_EQ(reap_child(child.load()), fu::forked_worker_exit_status_k)
            << "-1: the child hung (killed) or died by a signal";
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join()); // the parent's pool is untouched
    }
}

/**  Why the fork tests cannot run in this build, or null. */
char const *fork_tests_skip_reason() {
    if (FORKUNION_TEST_EMULATED)
        return "qemu-user aborts in a forked child of a multi-threaded process; the native build runs this";
    if (fu::sanitize_thread_k) return "TSan's runtime cannot start threads after a multi-threaded fork";
    return nullptr;
}

} // namespace

TEST(fork, a_caller_forking_inside_its_own_slice_gets_forked_from_join_at_once) {
    if (char const *why = fork_tests_skip_reason()) GTEST_SKIP() << why;
    expect_fork_inside_the_callers_slice<fu::flat_pool_t>(
        [](fu::flat_pool_t &p, fu::caller_exclusivity_t e) { return bool(p.spawn(3, e)); });
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    expect_fork_inside_the_callers_slice<fu::colocated_pool_t>(
        [&](fu::colocated_pool_t &p, fu::caller_exclusivity_t e) { return bool(p.spawn_on(topology, 0, 2, e)); });
    expect_fork_inside_the_callers_slice<fu::distributed_pool_t>(
        [&](fu::distributed_pool_t &p, fu::caller_exclusivity_t e) {
            return bool(p.spawn(topology, std::max<std::size_t>(2, topology.compute_domains_count()), e));
        });
}

TEST(fork, a_dispatcher_forking_before_its_join_gets_forked_from_join_at_once) {
    if (char const *why = fork_tests_skip_reason()) GTEST_SKIP() << why;
    expect_fork_before_the_join<fu::flat_pool_t>(
        [](fu::flat_pool_t &p, fu::caller_exclusivity_t e) { return bool(p.spawn(3, e)); });
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    expect_fork_before_the_join<fu::colocated_pool_t>(
        [&](fu::colocated_pool_t &p, fu::caller_exclusivity_t e) { return bool(p.spawn_on(topology, 0, 2, e)); });
    expect_fork_before_the_join<fu::distributed_pool_t>([&](fu::distributed_pool_t &p, fu::caller_exclusivity_t e) {
        return bool(p.spawn(topology, std::max<std::size_t>(2, topology.compute_domains_count()), e));
    });
}

TEST(fork, a_child_forked_by_a_worker_inside_its_slice_exits_when_the_slice_returns) {
    if (char const *why = fork_tests_skip_reason()) GTEST_SKIP() << why;
    expect_fork_inside_a_workers_slice<fu::flat_pool_t>(
        [](fu::flat_pool_t &p, fu::caller_exclusivity_t e) { return bool(p.spawn(3, e)); });
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    expect_fork_inside_a_workers_slice<fu::colocated_pool_t>(
        [&](fu::colocated_pool_t &p, fu::caller_exclusivity_t e) { return bool(p.spawn_on(topology, 0, 2, e)); });
    expect_fork_inside_a_workers_slice<fu::distributed_pool_t>(
        [&](fu::distributed_pool_t &p, fu::caller_exclusivity_t e) {
            return bool(p.spawn(topology, std::max<std::size_t>(2, topology.compute_domains_count()), e));
        });
}

TEST(fork, concurrent_forks_are_each_counted_in_their_child) {
    if (char const *why = fork_tests_skip_reason()) GTEST_SKIP() << why;
    // Several threads fork at once, so one fork's parent handler runs while another fork is between its prepare
    // and child handlers. Every child must still see the generation move past what its parent read before it
    // forked: a child that does not would take its inherited pools' workers for alive.
    fu::watch_forks();
    constexpr std::size_t threads_k = 4, forks_per_thread_k = 100;
    std::atomic<std::size_t> uncounted{0}, hung{0};
    std::vector<std::thread> forkers;
    for (std::size_t t = 0; t != threads_k; ++t)
        forkers.emplace_back([&] {
            for (std::size_t i = 0; i != forks_per_thread_k; ++i) {
                std::uint32_t const before = fu::fork_generation();
                pid_t const child = ::fork();
                if (child == 0) ::_exit(fu::fork_generation() != before ? 0 : 1);
                int const code = reap_child(child);
                if (code == 1) uncounted.fetch_add(1);
                if (code == -1) hung.fetch_add(1);
            }
        });
    for (std::thread &forker : forkers) forker.join();
    EXPECT_EQ(uncounted.load(), 0u) << "children whose fork was not counted, of " << threads_k * forks_per_thread_k;
    EXPECT_EQ(hung.load(), 0u);
}
#else
TEST(fork, a_caller_forking_inside_its_own_slice_gets_forked_from_join_at_once) {
    GTEST_SKIP() << "needs fork(), which this OS does not have";
}
TEST(fork, a_dispatcher_forking_before_its_join_gets_forked_from_join_at_once) {
    GTEST_SKIP() << "needs fork(), which this OS does not have";
}
TEST(fork, a_child_forked_by_a_worker_inside_its_slice_exits_when_the_slice_returns) {
    GTEST_SKIP() << "needs fork(), which this OS does not have";
}
TEST(fork, concurrent_forks_are_each_counted_in_their_child) {
    GTEST_SKIP() << "needs fork(), which this OS does not have";
}
#endif
