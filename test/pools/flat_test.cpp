/**
 *  @file   flat_test.cpp
 *  @brief  Tests of `include/forkunion/pools/flat.hpp`: the shared pool suite at every index width, plus what is
 *          specific to the flat pool (the exact static split, spawn failures, idle CPU, layout).
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <thread>

#include <forkunion/pools/flat.hpp>

#if FORKUNION_OS_LINUX
#include <sys/resource.h> // `setrlimit`
#include <sys/wait.h>     // `waitpid`
#include <signal.h>       // `kill`
#include <unistd.h>       // `fork`, `setuid`, `gettid`
#include <dirent.h>       // `opendir`
#endif

#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "pool_suite.hpp"

#if FORKUNION_OS_LINUX
/**  Waits, within the test deadline, for a forked child to exit; a hung one is killed and reaped. Returns whether
 *   it exited on its own; `status` is its `waitpid` status either way. */
[[maybe_unused]] static bool reap_child(pid_t child, int &status) {
    bool const exited = forkunion::testing::eventually([&] { return ::waitpid(child, &status, WNOHANG) == child; });
    if (!exited) ::kill(child, SIGKILL), ::waitpid(child, &status, 0);
    return exited;
}
#endif

#if !defined(FORKUNION_TEST_EMULATED)
#define FORKUNION_TEST_EMULATED 0 // 1 under qemu-user (cross builds)
#endif
namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

template <typename index_t>
struct flat_config {
    using pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, index_t>;
    static fu::status_t spawn(pool_t &pool, std::size_t threads, fu::caller_exclusivity_t exclusivity) {
        return pool.spawn(static_cast<index_t>(threads), exclusivity);
    }
};

using flat_configs = ::testing::Types<flat_config<std::uint8_t>, flat_config<std::uint16_t>, flat_config<std::uint32_t>,
                                      flat_config<std::size_t>>;

} // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(flat, pool_suite, flat_configs);

namespace {

template <typename index_t>
using flat_pool_of = typename flat_config<index_t>::pool_t;

template <typename index_t>
void check_static_split_is_exact() {
    using pool_t = flat_pool_of<index_t>;
    using prong_t = typename pool_t::prong_t;
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        for (std::size_t threads : thread_counts<index_t>()) {
            if (!can_spawn(threads, exclusivity)) continue; // a build without threads: inclusive pools of one
            pool_t pool;
            ASSERT_TRUE(pool.spawn(static_cast<index_t>(threads), exclusivity));
            for (std::size_t n : task_counts<index_t>(threads)) {
                SCOPED_TRACE(::testing::Message()
                             << exclusivity_name(exclusivity) << ", T = " << threads << ", n = " << n);
                std::vector<std::atomic<std::size_t>> owner(n);
                forkunion::testing::require_ran(pool.for_n(static_cast<index_t>(n),
                                                           [&](prong_t prong) noexcept {
                                                               owner[prong.task].store(prong.thread,
                                                                                       std::memory_order_relaxed);
                                                           })
                                                    .join());
                std::vector<fu::slice_t<index_t>> slices(threads, fu::slice_t<index_t>{0, 0});
                std::vector<std::atomic<std::size_t>> calls(threads);
                forkunion::testing::require_ran(pool.for_slices(static_cast<index_t>(n),
                                                                [&](prong_t first, index_t count) noexcept {
                                                                    slices[first.thread] = {first.task, count};
                                                                    calls[first.thread].fetch_add(
                                                                        1, std::memory_order_relaxed);
                                                                })
                                                    .join());
                std::size_t const q = n / threads, r = n % threads;
                for (std::size_t thread = 0; thread != threads; ++thread) {
                    std::size_t const first = q * thread + std::min(thread, r);
                    std::size_t const count = q + (thread < r);
                    EXPECT_EQ(calls[thread].load(), count ? 1u : 0u) << "thread " << thread;
                    if (count) {
                        EXPECT_EQ(std::size_t(slices[thread].first), first) << "thread " << thread;
                        EXPECT_EQ(std::size_t(slices[thread].count), count) << "thread " << thread;
                    }
                    for (std::size_t task = first; task != first + count; ++task)
                        EXPECT_EQ(owner[task].load(), thread) << "task " << task;
                }
            }
        }
    }
}

} // namespace

TEST(flat, static_split_follows_the_formula_exactly) {
    check_static_split_is_exact<std::uint8_t>();
    check_static_split_is_exact<std::uint16_t>();
    check_static_split_is_exact<std::size_t>();
}

// ---- Spawn failures, injected through the allocator ----

namespace {

struct injection_t {
    std::atomic<bool> fail_allocate{false};
    std::atomic<long> constructs_until_failure{-1}; // -1: never fail
    std::atomic<std::size_t> constructs{0};         // slots constructed so far (each starts a worker but one)
};
injection_t injection;

template <typename value_type_>
struct injecting_allocator {
    using value_type = value_type_;
    injecting_allocator() noexcept = default;
    template <typename other_type_>
    injecting_allocator(injecting_allocator<other_type_> const &) noexcept {}

    value_type *allocate(std::size_t n) {
        if (injection.fail_allocate.load()) throw std::bad_alloc();
        return std::allocator<value_type>{}.allocate(n);
    }
    void deallocate(value_type *pointer, std::size_t n) noexcept {
        std::allocator<value_type>{}.deallocate(pointer, n);
    }

    /**  The pool starts each worker while constructing its slot, so a throwing `construct` is a refused thread. */
    template <typename object_type_, typename... args_types_>
    void construct(object_type_ *pointer, args_types_ &&...args) {
        injection.constructs.fetch_add(1);
        if (injection.constructs_until_failure.fetch_sub(1) == 0)
            throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
        ::new (static_cast<void *>(pointer)) object_type_(std::forward<args_types_>(args)...);
    }
    template <typename other_type_>
    bool operator==(injecting_allocator<other_type_> const &) const noexcept {
        return true;
    }
};

using injected_pool_t = fu::basic_pool_t<injecting_allocator<std::thread>>;

} // namespace

TEST(flat, failed_allocation_refuses_spawn_and_leaks_nothing) {
    FORKUNION_SKIP_UNLESS_THREADS(4);
    std::size_t const threads_before = settled_live_threads();
    injected_pool_t pool;
    injection.fail_allocate = true;
    EXPECT_EQ(pool.spawn(4).code(), fu::status_code_t::bad_alloc_k);
    injection.fail_allocate = false;
    EXPECT_EQ(pool.threads_count(), 0u);
    EXPECT_TRUE(threads_settle_to(threads_before));
    ASSERT_TRUE(pool.spawn(4)) << "a refused spawn leaves the pool spawnable";
    std::atomic<std::size_t> ran{0};
    forkunion::testing::require_ran(pool.for_n(100, [&](std::size_t) noexcept { ran.fetch_add(1); }).join());
    EXPECT_EQ(ran.load(), 100u);
}

TEST(flat, refused_thread_stops_and_joins_the_started_ones) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    std::size_t const threads_before = settled_live_threads();
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        for (long fail_at : {0L, 1L, 3L, 5L}) {
            SCOPED_TRACE(::testing::Message() << exclusivity_name(exclusivity) << ", slot " << fail_at << " fails");
            injected_pool_t pool;
            injection.constructs_until_failure = fail_at;
            fu::status_t const status = pool.spawn(6, exclusivity);
            injection.constructs_until_failure = -1;
            EXPECT_EQ(status.code(), fu::status_code_t::thread_refused_k) << status.name();
            EXPECT_EQ(pool.threads_count(), 0u);
            EXPECT_TRUE(threads_settle_to(threads_before)) << "threads started before the refusal were joined";
            ASSERT_TRUE(pool.spawn(3, exclusivity));
            std::atomic<std::size_t> ran{0};
            forkunion::testing::require_ran(pool.for_threads([&](std::size_t) noexcept { ran.fetch_add(1); }).join());
            EXPECT_EQ(ran.load(), 3u);
        }
    }
    EXPECT_TRUE(threads_settle_to(threads_before));
}

#if FORKUNION_OS_LINUX
TEST(flat, thread_limit_refuses_spawn_in_a_child_process) {
    // A child process lowers RLIMIT_NPROC so that only a few threads can start; root is exempt from that limit,
    // so a root child first becomes `nobody`. Exit codes name the failed check.
    std::fflush(nullptr);
    pid_t const child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        std::size_t const threads_before = settled_live_threads(); // before the limit: runtime helpers exist
        rlimit const limit{4, 4};
        if (::setrlimit(RLIMIT_NPROC, &limit) != 0) ::_exit(10);
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(11);
        fu::flat_pool_t pool;
        fu::status_t const status = pool.spawn(32);
        if (status.code() != fu::status_code_t::thread_refused_k) ::_exit(12);
        if (!threads_settle_to(threads_before)) ::_exit(13);
        if (!pool.spawn(1)) ::_exit(14); // a caller-inclusive pool of one starts no thread
        std::atomic<std::size_t> ran{0};
        forkunion::testing::require_ran(pool.for_n(10, [&](std::size_t) noexcept { ran.fetch_add(1); }).join());
        ::_exit(ran.load() == 10 ? 0 : 15);
    }
    int child_status = 0;
    bool const exited = reap_child(child, child_status);
    ASSERT_TRUE(exited) << "the child hung";
    ASSERT_TRUE(WIFEXITED(child_status)) << "the child crashed with signal " << WTERMSIG(child_status);
    EXPECT_EQ(WEXITSTATUS(child_status), 0) << "child check " << WEXITSTATUS(child_status) << " failed";
}
#else
TEST(flat, thread_limit_refuses_spawn_in_a_child_process) {
    GTEST_SKIP() << "needs fork() and RLIMIT_NPROC, which only Linux has here (the refusal path itself is covered by "
                    "refused_thread_stops_and_joins_the_started_ones)";
}
#endif

// ---- Idle modes ----

TEST(flat, parked_workers_burn_no_cpu) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    std::size_t const cores = fu::allowed_cores_count();
    for (std::size_t threads : {std::size_t(2), 3 * cores}) {
        for (fu::idle_policy_t policy :
             {fu::idle_policy_t::sleep(0), fu::idle_policy_t::sleep(1'500'000), fu::idle_policy_t{}}) {
            SCOPED_TRACE(::testing::Message() << threads << " threads, " << fu::idle_mode_name(policy.mode) << " "
                                              << policy.microseconds << " us");
            fu::flat_pool_t pool;
            ASSERT_TRUE(pool.set_idle_policy(policy));
            ASSERT_TRUE(pool.spawn(threads));
            forkunion::testing::require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
            // The default, adaptive, parks too once its window passes: idle CPU is the default's job as well.
            ASSERT_TRUE(eventually([&] { return pool.parked_threads_count() == threads - 1; }))
                << pool.parked_threads_count() << " of " << threads - 1 << " workers parked";
            // The window is a measurement, not synchronization: spinning workers would burn `threads - 1`
            // cores for all of it (up to the cores available); blocked ones burn nothing.
            double const cpu_before = process_cpu_seconds();
            auto const wall_before = std::chrono::steady_clock::now();
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            double const wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
            double const cpu = process_cpu_seconds() - cpu_before;
            EXPECT_LT(cpu, 0.1 * wall) << "workers burned " << cpu << " s of CPU in " << wall << " s asleep";
            std::atomic<std::size_t> ran{0};
            forkunion::testing::require_ran(
                pool.for_n(threads * 3, [&](std::size_t) noexcept { ran.fetch_add(1); }).join());
            EXPECT_EQ(ran.load(), threads * 3);
            EXPECT_EQ(pool.idle_policy(), policy) << "the policy outlives the dispatch";
        }
    }
}

#if FORKUNION_OS_LINUX
namespace {
/**  Threads of this process, other than the caller, that the kernel holds blocked (state S or D in their stat). */
std::size_t blocked_threads_but_self() {
    std::size_t blocked = 0;
    std::string const self = std::to_string(::gettid());
    if (DIR *dir = ::opendir("/proc/self/task")) {
        while (dirent *entry = ::readdir(dir)) {
            if (entry->d_name[0] == '.' || self == entry->d_name) continue;
            std::string const path = std::string("/proc/self/task/") + entry->d_name + "/stat";
            char line[512] = {};
            if (std::FILE *file = std::fopen(path.c_str(), "r")) {
                std::size_t const length = std::fread(line, 1, sizeof(line) - 1, file);
                std::fclose(file);
                line[length] = 0;
            }
            // "tid (comm) S ...": the state follows the last ')', since `comm` may hold one.
            char const *state = std::strrchr(line, ')');
            if (state && (state[2] == 'S' || state[2] == 'D')) ++blocked;
        }
        ::closedir(dir);
    }
    return blocked;
}
} // namespace

TEST(flat, leaving_sleep_wakes_the_kernel_sleepers) {
    // Regression: `nap()` after `sleep(0)` stored its idle mode without waking the workers already blocked in the
    // kernel, and the next dispatch saw `nap`, not `sleep`, so it woke nobody and hung. The window is only open
    // once the workers really block, which is what the poll below waits for. Policy changes now wake parked
    // workers themselves, and dispatches wake whoever is parked whatever the policy says.
    std::size_t const cores = fu::allowed_cores_count();
    for (std::size_t threads : {std::size_t(2), 3 * cores}) {
        for (bool to_nap : {true, false}) {
            SCOPED_TRACE(::testing::Message()
                         << threads << " threads, sleep(0) then " << (to_nap ? "nap()" : "sleep(1 s)"));
            fu::flat_pool_t pool;
            ASSERT_TRUE(pool.spawn(threads, fu::caller_exclusive_k));
            forkunion::testing::require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
            ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(0)));
            ASSERT_TRUE(eventually([&] { return blocked_threads_but_self() + 1 == live_threads(); }))
                << "the workers never blocked in the kernel";
            ASSERT_TRUE(pool.set_idle_policy(to_nap ? fu::idle_policy_t::nap() : fu::idle_policy_t::sleep(1'000'000)));
            if (!to_nap) { // the sleepers are back in the kernel, now with a period
                ASSERT_TRUE(eventually([&] { return blocked_threads_but_self() + 1 == live_threads(); }));
            }
            std::atomic<std::size_t> ran{0};
            auto guard = pool.for_n(threads * 3, [&](std::size_t) noexcept { ran.fetch_add(1); });
            if (!eventually([&] { return guard.is_complete(); })) {
                // The pool cannot be destroyed with its workers lost in the kernel: report and leave.
                ADD_FAILURE() << "the dispatch after the idle-mode change never completed: a lost kernel wake-up";
                std::fflush(nullptr);
                std::_Exit(EXIT_FAILURE);
            }
            (void)guard.join();
            EXPECT_EQ(ran.load(), threads * 3);
        }
    }
}
#else
TEST(flat, leaving_sleep_wakes_the_kernel_sleepers) {
    GTEST_SKIP() << "needs /proc/self/task/*/stat to see the workers blocked in the kernel before changing the mode";
}
#endif

// ---- Contracts and layout ----

TEST(flat, terminate_from_a_callback_is_ignored) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(3, exclusivity));
        forkunion::testing::require_ran(pool.for_threads([&](std::size_t) noexcept { pool.terminate(); }).join());
        EXPECT_EQ(pool.threads_count(), 3u);
        std::atomic<std::size_t> ran{0};
        forkunion::testing::require_ran(pool.for_n(9, [&](std::size_t) noexcept { ran.fetch_add(1); }).join());
        EXPECT_EQ(ran.load(), 9u);
    }
}

TEST(flat, terminate_completes_an_unjoined_dispatch) {
    FORKUNION_SKIP_UNLESS_THREADS(4);
    std::atomic<std::size_t> ran{0};
    auto count = [&](std::size_t) noexcept { ran.fetch_add(1); };
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        ran = 0;
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(4, exclusivity));
        EXPECT_NE(pool.unsafe_for_threads(count), 0u);
        pool.terminate(); // runs the caller's owed slice on inclusive pools, waits for the workers on exclusive ones
        EXPECT_EQ(ran.load(), 4u) << exclusivity_name(exclusivity);
    }
}

// A sole claim (no compare-and-swap) must order like the CAS: the caller's plain stores before the publication
// reach every slice, and the slices' plain stores reach the joiner. Sole dispatches alternate with ordinary ones,
// so each kind of claim follows the other. Under TSan a missing happens-before is a report; without it, a wrong
// value or a lost slice fails the counts.
TEST(flat, sole_claims_order_like_compare_and_swap_claims) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    constexpr std::size_t threads_k = 3, rounds_k = 400;
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(threads_k, exclusivity));
        std::size_t results[threads_k] = {}; // plain: each slot written by one slice per round, read by the joiner
        std::size_t argument = 0;            // plain: the caller's store right before each publication
        auto slice = [&](std::size_t thread) noexcept { results[thread] = argument + thread; };
        std::size_t wrong = 0, sole_rounds = 0;
        for (std::size_t round = 0; round != rounds_k; ++round) {
            argument = round * 7;
            bool const sole = round % 2 == 0;
            auto const publication = sole ? pool.unsafe_for_threads_sole(slice) : pool.unsafe_for_threads(slice);
            ASSERT_TRUE(publication) << publication.status.name();
            sole_rounds += sole;
            pool.unsafe_join(publication);
            EXPECT_TRUE(pool.is_complete(publication));
            for (std::size_t thread = 0; thread != threads_k; ++thread) wrong += results[thread] != round * 7 + thread;
        }
        EXPECT_EQ(wrong, 0u) << exclusivity_name(exclusivity);
        EXPECT_EQ(sole_rounds, rounds_k / 2);
        // The claim word's sequence stayed consistent: an ordinary dispatch still claims and runs everywhere.
        std::atomic<std::size_t> ran{0};
        forkunion::testing::require_ran(pool.for_n(9, [&](std::size_t) noexcept { ran.fetch_add(1); }).join());
        EXPECT_EQ(ran.load(), 9u);
    }
}

// `is_complete` is an acquire from any thread: an observer that hears "complete" reads every slice's plain stores.
// The observer may read the claim word while the dispatch still holds it and `outer` only once the next hold has
// replaced it; `outer`'s release and acquire order that answer (with both relaxed, TSan reported this test in about
// half the runs on an idle 2-core machine, and in 1 of 15 under load). Both kinds of claim, both exclusivities.
TEST(flat, is_complete_from_another_thread_sees_every_slice) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    constexpr std::size_t threads_k = 3, rounds_k = 500;
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(threads_k, exclusivity));
        auto results = std::make_unique<std::size_t[]>(rounds_k * threads_k); // plain: written once, by one slice
        std::size_t round = 0;
        auto slice = [&](std::size_t thread) noexcept { results[round * threads_k + thread] = round * 7 + thread; };
        std::atomic<std::size_t> published{0}; // rounds published so far
        std::atomic<std::uint64_t> generation_of{0};
        std::atomic<bool> done{false};
        std::size_t observed = 0, observed_wrong = 0;
        std::thread observer([&] {
            while (!done.load(std::memory_order_acquire)) {
                std::size_t const seen = published.load(std::memory_order_acquire);
                // Stored before `published`: this round's generation, or a later one.
                std::uint64_t const generation = generation_of.load(std::memory_order_acquire);
                if (!seen || !pool.is_complete(generation) || published.load(std::memory_order_acquire) != seen)
                    continue;
                for (std::size_t thread = 0; thread != threads_k; ++thread)
                    observed_wrong += results[(seen - 1) * threads_k + thread] != (seen - 1) * 7 + thread;
                ++observed;
            }
        });
        for (round = 0; round != rounds_k; ++round) {
            auto const publication = round % 2 ? pool.unsafe_for_threads(slice) : pool.unsafe_for_threads_sole(slice);
            ASSERT_TRUE(publication) << publication.status.name();
            generation_of.store(publication.generation, std::memory_order_release);
            published.store(round + 1, std::memory_order_release);
            pool.unsafe_join(publication);
        }
        done.store(true, std::memory_order_release);
        observer.join();
        EXPECT_EQ(observed_wrong, 0u) << exclusivity_name(exclusivity) << " after " << observed << " observations";
    }
}

// A sole claim refuses like the ordinary one where the pool cannot take it: unspawned, or already held.
TEST(flat, sole_claims_refuse_like_compare_and_swap_claims) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::flat_pool_t pool;
    auto noop = [](std::size_t) noexcept {};
    EXPECT_EQ(pool.unsafe_for_threads_sole(noop).status.code(), fu::status_code_t::not_spawned_k);
    ASSERT_TRUE(pool.spawn(2, fu::caller_inclusive_k));
    auto const held = pool.unsafe_for_threads(noop);
    ASSERT_TRUE(held);
    // Held by the dispatch above (its slice 0 waits for this thread's join): refused, and nothing ran twice.
    EXPECT_EQ(pool.unsafe_for_threads_sole(noop).status.code(), fu::status_code_t::contended_k);
    pool.unsafe_join(held);
    auto const next = pool.unsafe_for_threads_sole(noop);
    EXPECT_TRUE(next);
    pool.unsafe_join(next);
}

TEST(flat, memory_usage_and_oversubscription_are_reported) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    std::size_t const cores = fu::allowed_cores_count();
    fu::flat_pool_t pool;
    EXPECT_EQ(pool.memory_usage(), sizeof(fu::flat_pool_t));
    EXPECT_EQ(sizeof(fu::flat_pool_t) % fu::default_alignment_k, 0u);
    EXPECT_EQ(alignof(fu::flat_pool_t), fu::default_alignment_k);
    ASSERT_TRUE(pool.spawn(3 * cores));
    // Two lines per thread: its claim cursor, and its retirement word beside its handle.
    EXPECT_EQ(pool.memory_usage(), sizeof(fu::flat_pool_t) + 3 * cores * 2 * fu::default_alignment_k);
    EXPECT_TRUE(pool.oversubscribed());
    pool.terminate();
    ASSERT_TRUE(pool.spawn(1));
    EXPECT_FALSE(pool.oversubscribed());
    pool.terminate();
    ASSERT_TRUE(pool.spawn(cores, fu::caller_exclusive_k));
    EXPECT_TRUE(pool.oversubscribed()) << "an exclusive caller spins in join(), so it counts as a spinner";
}

TEST(flat, status_names_and_bool) {
    fu::status_t const ok;
    EXPECT_TRUE(ok);
    EXPECT_STREQ(ok.name(), "success");
    fu::status_t const contended = fu::status_code_t::contended_k;
    EXPECT_FALSE(contended);
    EXPECT_STREQ(fu::to_string(contended), "contended");
    EXPECT_EQ(static_cast<int>(contended.code()), -6);
}

// ---- Processes ----

#if FORKUNION_OS_LINUX
namespace {
/**  In a `fork()`ed child: the inherited pool refuses with `forked`, its fallback runs on the caller, terminate
 *   returns at once (nothing to join), and a new spawn serves. Exit codes name the failed check. */
template <typename pool_t, typename spawn_t>
int inherited_pool_checks(pool_t &pool, spawn_t &&respawn) {
    std::atomic<std::size_t> ran{0};
    auto count = [&](std::size_t) noexcept { ran.fetch_add(1); };
    if (pool.for_n(10, count).join().code() != fu::status_code_t::forked_k) return 20;
    if (pool.unsafe_for_threads(count).status.code() != fu::status_code_t::forked_k) return 21;
    if (ran.load() != 0) return 22;
    pool.for_n(10, count).join_or_run_on_caller();
    if (ran.load() != 10) return 23;
    pool.terminate();
    if (pool.threads_count() != 0) return 24;
    if (!respawn(pool)) return 25;
    ran = 0;
    if (!pool.for_n(30, count).join() || ran.load() != 30) return 26;
    return 0;
}

template <typename pool_t, typename spawn_t>
void expect_fork_safe(spawn_t &&spawn) {
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity_name(exclusivity));
        pool_t pool;
        ASSERT_TRUE(spawn(pool, exclusivity));
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
        std::fflush(nullptr);
        pid_t const child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) ::_exit(inherited_pool_checks(pool, [&](pool_t &p) { return bool(spawn(p, exclusivity)); }));
        int status = 0;
        bool const exited = reap_child(child, status);
        ASSERT_TRUE(exited) << "the child hung";
        ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
        EXPECT_EQ(WEXITSTATUS(status), 0) << "child check " << WEXITSTATUS(status) << " failed";
        require_ran(pool.for_threads([](std::size_t) noexcept {}).join()); // the parent's pool is untouched
    }
}
} // namespace

TEST(flat, a_forked_child_refuses_inherited_pools_and_destroys_them_cleanly) {
    if (FORKUNION_TEST_EMULATED)
        GTEST_SKIP() << "qemu-user aborts in a forked child of a multi-threaded process; the native build runs this";
    if (fu::sanitize_thread_k) GTEST_SKIP() << "TSan's runtime cannot start threads after a multi-threaded fork";
    expect_fork_safe<fu::flat_pool_t>([](fu::flat_pool_t &p, fu::caller_exclusivity_t e) { return p.spawn(3, e); });
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    expect_fork_safe<fu::colocated_pool_t>(
        [&](fu::colocated_pool_t &p, fu::caller_exclusivity_t e) { return p.spawn_on(topology, 0, 2, e); });
    expect_fork_safe<fu::distributed_pool_t>([&](fu::distributed_pool_t &p, fu::caller_exclusivity_t e) {
        return p.spawn(topology, std::max<std::size_t>(2, topology.compute_domains_count()), e);
    });
}
#else
TEST(flat, a_forked_child_refuses_inherited_pools_and_destroys_them_cleanly) {
    GTEST_SKIP() << "needs fork(), which this OS does not have";
}
#endif

// ---- Spawns the OS cannot satisfy ----

#if FORKUNION_OS_LINUX
TEST(flat, a_spawn_beyond_the_published_limits_starts_no_thread) {
    // 10^6 threads: more than `kernel.threads-max`, `pid_max` or two mappings each under `vm.max_map_count` allow on
    // any default Linux, root included (RLIMIT_NPROC does not bind root). The limits are read before the first
    // thread starts, so not one slot is constructed.
    injection.constructs_until_failure = -1;
    std::size_t const constructs_before = injection.constructs.load();
    injected_pool_t pool;
    fu::status_t const status = pool.spawn(1'000'000);
    EXPECT_EQ(status.code(), fu::status_code_t::thread_refused_k) << status.name();
    EXPECT_EQ(injection.constructs.load() - constructs_before, 0u) << "threads were started before the refusal";
    EXPECT_EQ(pool.threads_count(), 0u);
    ASSERT_TRUE(pool.spawn(2)) << "a refused spawn leaves the pool spawnable";
    require_ran(pool.for_threads([](std::size_t) noexcept {}).join());
}
#else
TEST(flat, a_spawn_beyond_the_published_limits_starts_no_thread) {
    GTEST_SKIP() << "the thread limits are read from /proc and the cgroup tree, which only Linux publishes";
}
#endif
