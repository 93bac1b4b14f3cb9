/**
 *  @file   distributed_test.cpp
 *  @brief  Tests of `include/forkunion/pools/distributed.hpp`: the shared pool suite on this machine's domains and on a
 *          recorded two-socket machine, plus what spanning domains adds: the proportional split (by hand, and on
 *          recorded machines: two sockets, eight nodes, CPU-less nodes, and a synthetic big.LITTLE chip),
 *          exactly-once execution with the right domain in every prong, `locate_thread_in` round trips, dynamic
 *          stealing that stays in its domain until the domain runs dry (with the count of tasks run outside their
 *          home domain printed), refused pins counted on recorded machines, global names, and the caller's mask.
 *
 *  Recorded machines name CPUs this one lacks, so their pins are refused (and counted) and their thread counts
 *  exceed this machine's cores: every pool here is oversubscribed and its idle threads yield.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <forkunion/pools/distributed.hpp>
#include <forkunion/topology/topology.hpp>

#include "pool_suite.hpp"
#include "pools_support.hpp"

#include "test_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

template <typename index_t>
struct distributed_live_config {
    using pool_t = fu::basic_distributed_pool_t<fu::default_micro_yield_t, index_t>;
    static constexpr bool thread_zero_forks = false;
    static std::size_t minimum_threads() { return live_topology().compute_domains_count(); }
    static fu::status_t spawn(pool_t &pool, std::size_t threads, fu::caller_exclusivity_t exclusivity) {
        return pool.spawn(live_topology(), static_cast<index_t>(threads), exclusivity);
    }
};

template <typename index_t>
struct distributed_two_sockets_config {
    using pool_t = fu::basic_distributed_pool_t<fu::default_micro_yield_t, index_t>;
    static constexpr bool thread_zero_forks = false;
    static std::size_t minimum_threads() { return 2; }
    static fu::status_t spawn(pool_t &pool, std::size_t threads, fu::caller_exclusivity_t exclusivity) {
        fu::thread_placement_t placement;
        placement.name = nullptr;
        return pool.spawn(recorded_two_domains(), static_cast<index_t>(threads), exclusivity, placement);
    }
};

using distributed_configs =
    ::testing::Types<distributed_live_config<std::uint8_t>, distributed_live_config<std::size_t>,
                     distributed_two_sockets_config<std::uint16_t>, distributed_two_sockets_config<std::size_t>>;

using pool_t = fu::distributed_pool_t;
using prong_t = pool_t::prong_t;

/**  The thread whose block of `static_slice(n, threads, ·)` holds `task`, worked out independently. */
std::size_t owner_of(std::size_t task, std::size_t n, std::size_t threads) {
    std::size_t const q = n / threads, r = n % threads;
    return task < r * (q + 1) ? task / (q + 1) : r + (task - r * (q + 1)) / q;
}

/**  Spawns `pool` on `topology` with `threads` threads, checking success; names off, domain pinning. */
void spawn_or_fail(pool_t &pool, fu::machine_topology_t const &topology, std::size_t threads,
                   fu::caller_exclusivity_t exclusivity = fu::caller_inclusive_k) {
    fu::thread_placement_t placement;
    placement.name = nullptr;
    fu::status_t const status = pool.spawn(topology, threads, exclusivity, placement);
    ASSERT_TRUE(status) << status.name();
}

/**  The per-domain thread counts of a spawned pool. */
std::vector<std::size_t> split_of(pool_t const &pool) {
    std::vector<std::size_t> split;
    for (std::size_t d = 0; d != pool.compute_domains_count(); ++d) split.push_back(pool.threads_count_in(d));
    return split;
}

/**  Every dispatch kind runs each task once, on a thread of the pool, with that thread's domain in the prong. */
void check_every_dispatch(pool_t &pool) {
    std::size_t const threads = pool.threads_count();
    auto domain_of = [&](std::size_t thread) { return pool.locate_thread(thread).compute_domain; };
    for (std::size_t n : {std::size_t(0), std::size_t(1), threads - 1, threads, 3 * threads + 1, std::size_t(1000)}) {
        SCOPED_TRACE(::testing::Message() << "n = " << n);
        std::atomic<std::size_t> wrong_domain{0}, wrong_block{0}, wrong_thread{0};
        auto check = [&](prong_t prong) noexcept {
            if (prong.thread >= threads) return void(wrong_thread.fetch_add(1));
            if (prong.compute_domain != domain_of(prong.thread)) wrong_domain.fetch_add(1);
        };
        {
            task_ledger ledger(n);
            forkunion::testing::require_ran(pool.for_n(n,
                                                       [&](prong_t prong) noexcept {
                                                           ledger.record(prong.task);
                                                           check(prong);
                                                           if (prong.task < n &&
                                                               owner_of(prong.task, n, threads) != prong.thread)
                                                               wrong_block.fetch_add(1);
                                                       })
                                                .join());
            EXPECT_EQ(ledger.mistakes(), 0u) << "for_n";
        }
        {
            task_ledger ledger(n);
            forkunion::testing::require_ran(pool.for_n_dynamic(n,
                                                               [&](prong_t prong) noexcept {
                                                                   ledger.record(prong.task);
                                                                   check(prong);
                                                               })
                                                .join());
            EXPECT_EQ(ledger.mistakes(), 0u) << "for_n_dynamic";
        }
        {
            task_ledger ledger(n);
            forkunion::testing::require_ran(pool.for_slices(n,
                                                            [&](prong_t first, std::size_t count) noexcept {
                                                                fu::slice_t<std::size_t> const block =
                                                                    fu::static_slice(n, threads, first.thread);
                                                                if (block.first != first.task || block.count != count)
                                                                    wrong_block.fetch_add(1);
                                                                for (std::size_t i = 0; i != count; ++i)
                                                                    ledger.record(first.task + i);
                                                                check(first);
                                                            })
                                                .join());
            EXPECT_EQ(ledger.mistakes(), 0u) << "for_slices";
        }
        {
            task_ledger ledger(threads);
            forkunion::testing::require_ran(pool.for_threads([&](prong_t prong) noexcept {
                                                    ledger.record(prong.thread);
                                                    check(prong);
                                                })
                                                .join());
            EXPECT_EQ(ledger.mistakes(), 0u) << "for_threads";
        }
        EXPECT_EQ(wrong_domain.load(), 0u) << "a prong named another domain than its thread's";
        EXPECT_EQ(wrong_block.load(), 0u) << "the static split is global: static_slice(n, threads, thread)";
        EXPECT_EQ(wrong_thread.load(), 0u);
    }
}

/**  A one-node big.LITTLE chip: CPUs 0-1 at capacity 1024, 2-7 at 446 (two compute domains on one node). */
struct big_little_t {
    synthetic_tree_t tree;
    fu::machine_topology_t topology;
    big_little_t() {
        synthetic_machine_t machine;
        machine.nodes = 1;
        machine.cpus_per_node = 8;
        machine.capacities = {1024, 1024, 446, 446, 446, 446, 446, 446};
        machine.write_to(tree);
        EXPECT_TRUE(topology.try_harvest_from_sysfs(tree.root().c_str()));
    }
};

} // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(distributed, pool_suite, distributed_configs);

TEST(distributed, split_threads_by_cores_follows_the_quotas) {
    // Each expectation worked out by hand: quota = threads * cores / total, floors, at least one, then the
    // largest remainders (ties: more cores, then the lower index).
    struct case_t {
        std::vector<std::size_t> cores;
        std::size_t threads;
        std::vector<std::size_t> expected;
    };
    std::vector<case_t> const cases = {
        {{16, 16}, 2, {1, 1}},
        {{16, 16}, 5, {3, 2}},
        {{16, 16}, 32, {16, 16}},
        {{16, 16}, 33, {17, 16}},
        {{2, 6}, 8, {2, 6}},
        {{2, 6}, 4, {1, 3}},
        {{2, 6}, 3, {1, 2}},
        {{6, 2}, 3, {2, 1}},
        {{1, 7}, 4, {1, 3}},
        {{1, 7}, 16, {2, 14}},
        {{10, 5, 1}, 3, {1, 1, 1}},
        {{10, 5, 1}, 4, {2, 1, 1}},
        {{10, 5, 1}, 6, {3, 2, 1}},
        {{10, 5, 1}, 16, {10, 5, 1}},
        {{1, 1, 1, 100}, 4, {1, 1, 1, 1}},
        {{1, 1, 1, 100}, 10, {1, 1, 1, 7}},
        {{8, 8, 8, 8}, 6, {2, 2, 1, 1}},
        {{0, 4}, 4, {1, 3}},
    };
    for (case_t const &c : cases) {
        std::vector<std::size_t> split(c.cores.size(), 0);
        ASSERT_TRUE(fu::split_threads_by_cores(c.cores.data(), c.cores.size(), c.threads, split.data()));
        EXPECT_EQ(split, c.expected) << c.threads << " threads";
    }
    std::size_t const cores[] = {16, 16};
    std::size_t split[2] = {7, 7};
    EXPECT_FALSE(fu::split_threads_by_cores(cores, 2, 1, split)) << "fewer threads than domains";
    EXPECT_FALSE(fu::split_threads_by_cores(cores, 0, 4, split)) << "no domain";
    EXPECT_EQ(split[0], 7u) << "a refused split writes nothing";
}

TEST(distributed, threads_follow_the_cores_on_recorded_machines) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    struct case_t {
        char const *machine;
        std::size_t threads;
        std::vector<std::size_t> expected;
    };
    // Recorded facts (test/fixtures/sysfs/*/expected.json): two sockets of 16 CPUs; eight nodes of 8 CPUs;
    // sixteen nodes of 8 CPUs plus a CPU-less node 16, which gets no thread.
    std::vector<case_t> const cases = {
        {two_sockets_k, 2, {1, 1}},
        {two_sockets_k, 5, {3, 2}},
        {two_sockets_k, 32, {16, 16}},
        {eight_nodes_k, 8, {1, 1, 1, 1, 1, 1, 1, 1}},
        {eight_nodes_k, 12, {2, 2, 2, 2, 1, 1, 1, 1}},
        {eight_nodes_k, 64, {8, 8, 8, 8, 8, 8, 8, 8}},
        {cpuless_node_k, 16, std::vector<std::size_t>(16, 1)},
        {cpuless_node_k, 20, {2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
    };
    for (case_t const &c : cases) {
        SCOPED_TRACE(::testing::Message() << c.machine << ", " << c.threads << " threads");
        pool_t pool;
        spawn_or_fail(pool, recorded(c.machine), c.threads);
        EXPECT_EQ(split_of(pool), c.expected);
        EXPECT_EQ(pool.threads_count(), c.threads);
        EXPECT_TRUE(pool.oversubscribed()) << "more threads than this machine's cores, or shared cores";
    }
    fu::machine_topology_t const &cpuless = recorded(cpuless_node_k);
    EXPECT_EQ(cpuless.memory_domains_count(), 17u);
    EXPECT_EQ(cpuless.compute_domains_count(), 16u);
}

TEST(distributed, big_and_little_domains_get_threads_by_their_cores) {
    FORKUNION_SKIP_WITHOUT_SYSFS(); // a synthetic sysfs tree
    big_little_t machine;
    ASSERT_EQ(machine.topology.compute_domains_count(), 2u);
    std::size_t const big = machine.topology.compute_capacity_in(0) == 1024 ? 0 : 1, little = 1 - big;
    ASSERT_EQ(machine.topology.logical_cores_count_in(big), 2u);
    ASSERT_EQ(machine.topology.logical_cores_count_in(little), 6u);
    for (auto [threads, on_big, on_little] : std::vector<std::array<std::size_t, 3>>{{8, 2, 6}, {4, 1, 3}, {2, 1, 1}}) {
        pool_t pool;
        spawn_or_fail(pool, machine.topology, threads);
        EXPECT_EQ(pool.threads_count_in(big), on_big) << threads << " threads";
        EXPECT_EQ(pool.threads_count_in(little), on_little) << threads << " threads";
        check_every_dispatch(pool);
    }
}

TEST(distributed, each_task_runs_once_with_its_threads_domain) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    for (auto [machine, threads] : std::vector<std::pair<char const *, std::size_t>>{
             {two_sockets_k, 5}, {eight_nodes_k, 12}, {cpuless_node_k, 17}})
        for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
            SCOPED_TRACE(::testing::Message() << machine << ", " << exclusivity_name(exclusivity));
            pool_t pool;
            spawn_or_fail(pool, recorded(machine), threads, exclusivity);
            check_every_dispatch(pool);
        }
    pool_t pool;
    spawn_or_fail(pool, live_topology(), std::max<std::size_t>(2, live_topology().compute_domains_count()));
    check_every_dispatch(pool);
}

TEST(distributed, locate_thread_in_round_trips) {
    FORKUNION_SKIP_WITHOUT_SYSFS();
    for (auto [machine, threads] : std::vector<std::pair<char const *, std::size_t>>{
             {two_sockets_k, 5}, {eight_nodes_k, 12}, {cpuless_node_k, 20}}) {
        SCOPED_TRACE(machine);
        pool_t pool;
        spawn_or_fail(pool, recorded(machine), threads);
        std::size_t const domains = pool.compute_domains_count();
        std::size_t next = 0; // global indices are dense, domain by domain
        for (std::size_t d = 0; d != domains; ++d) {
            EXPECT_EQ(pool.first_thread_in(d), next) << "domain " << d;
            next += pool.threads_count_in(d);
        }
        EXPECT_EQ(next, threads);
        for (std::size_t thread = 0; thread != threads; ++thread) {
            auto const location = pool.locate_thread(thread);
            ASSERT_LT(location.compute_domain, domains);
            EXPECT_LT(location.local_thread, pool.threads_count_in(location.compute_domain));
            EXPECT_EQ(pool.first_thread_in(location.compute_domain) + location.local_thread, thread);
            for (std::size_t d = 0; d != domains; ++d)
                EXPECT_EQ(pool.locate_thread_in(thread, d),
                          d == location.compute_domain ? location.local_thread : pool_t::npos_k)
                    << "thread " << thread << ", domain " << d;
        }
        EXPECT_EQ(pool.locate_thread_in(threads, 0), pool_t::npos_k) << "past the last thread";
        EXPECT_EQ(pool.threads_count_in(domains), 0u) << "a domain out of range";
        pool.terminate();
        EXPECT_EQ(pool.compute_domains_count(), 0u);
        EXPECT_EQ(pool.threads_count_in(0), 0u);
    }
}

namespace {

/**  How one `for_n_dynamic` went: tasks that ran outside their home domain, and the steals that left a domain
 *   before it ran dry (must be 0). */
struct stealing_t {
    std::size_t outside = 0;
    std::size_t early = 0;
    std::size_t mistakes = 0;
};

/**
 *  One `for_n_dynamic` of `n` tasks on `pool`. A task's home domain is the domain of the thread whose static block
 *  holds it. Whenever a task runs outside its home, the thief's own domain must be dry: every claim cursor of that
 *  domain at or past its block (cursors only grow during a dispatch, so a later look cannot see it un-dry). With
 *  `stall_domain` < domains, that domain's threads hold their first task until a task has left its home domain.
 */
stealing_t steal_once(pool_t &pool, std::size_t n, std::size_t stall_domain, std::size_t spin_per_task = 0) {
    std::size_t const threads = pool.threads_count();
    std::atomic<std::size_t> outside{0}, early{0};
    std::vector<std::atomic<bool>> started(threads);
    task_ledger ledger(n);
    forkunion::testing::require_ran(
        pool.for_n_dynamic(n,
                           [&](prong_t prong) noexcept {
                               ledger.record(prong.task);
                               std::size_t const home =
                                   pool.locate_thread(owner_of(prong.task, n, threads)).compute_domain;
                               if (home != prong.compute_domain) {
                                   outside.fetch_add(1, std::memory_order_relaxed);
                                   std::size_t const first = pool.first_thread_in(prong.compute_domain);
                                   for (std::size_t t = first; t != first + pool.threads_count_in(prong.compute_domain);
                                        ++t)
                                       if (pool.unsafe_claim_cursor(t).load(std::memory_order_relaxed) <
                                           fu::static_slice(n, threads, t).count)
                                           early.fetch_add(1, std::memory_order_relaxed);
                               }
                               if (prong.compute_domain == stall_domain && !started[prong.thread].exchange(true))
                                   (void)eventually([&] { return outside.load(std::memory_order_relaxed) != 0; });
                               for (std::size_t i = 0; i != spin_per_task; ++i)
                                   std::atomic_signal_fence(std::memory_order_seq_cst);
                           })
            .join());
    return {outside.load(), early.load(), ledger.mistakes()};
}

} // namespace

TEST(distributed, dynamic_stealing_stays_in_its_domain_until_the_domain_runs_dry) {
    FORKUNION_SKIP_UNLESS_THREADS(6);
    fu::machine_topology_t const &topology = recorded_two_domains();
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        SCOPED_TRACE(exclusivity_name(exclusivity));
        pool_t pool;
        spawn_or_fail(pool, topology, 6, exclusivity); // 3 + 3
        ASSERT_EQ(split_of(pool), (std::vector<std::size_t>{3, 3}));
        std::size_t const n = 600;

        // Domain 1's threads hold their first task, so domain 0 runs dry first and must cross over to finish.
        stealing_t const stalled = steal_once(pool, n, 1);
        EXPECT_EQ(stalled.mistakes, 0u);
        EXPECT_GT(stalled.outside, 0u) << "domain 0 stole from domain 1 once it ran dry";
        EXPECT_EQ(stalled.early, 0u) << "a thread left its domain while its domain still had work";
        pool.terminate(); // its idle threads would compete with the free runs below for this machine's cores

        // Free runs, one thread per domain (as many threads as this machine has cores, so both really run):
        // nothing but uneven progress moves tasks; report how many ran outside their home domain.
        pool_t pair;
        spawn_or_fail(pair, topology, 2, exclusivity);
        std::vector<std::size_t> outside;
        for (int run = 0; run != 21; ++run) {
            stealing_t const free = steal_once(pair, 10000, 2, 200);
            EXPECT_EQ(free.mistakes, 0u);
            EXPECT_EQ(free.early, 0u);
            outside.push_back(free.outside);
        }
        std::sort(outside.begin(), outside.end());
        std::printf("[ stealing ] %s: 2 domains x 3 threads, domain 1 stalled: %zu of %zu tasks ran outside their "
                    "home domain; 2 domains x 1 thread, 21 free runs of 10000 tasks: min %zu, median %zu, max %zu\n",
                    exclusivity_name(exclusivity), stalled.outside, n, outside.front(), outside[outside.size() / 2],
                    outside.back());
        ::testing::Test::RecordProperty(std::string("outside_home_stalled_") + exclusivity_name(exclusivity),
                                        std::to_string(stalled.outside));
        ::testing::Test::RecordProperty(std::string("outside_home_free_median_") + exclusivity_name(exclusivity),
                                        std::to_string(outside[outside.size() / 2]));
    }
}

TEST(distributed, refused_pins_are_counted_and_every_task_still_runs) {
    FORKUNION_SKIP_UNLESS_THREADS(2); // a thread of its own and its pool
    fu::machine_topology_t const &topology = recorded_two_domains();
    for (fu::pinning_t pinning : {fu::pinning_t::core_k, fu::pinning_t::domain_k})
        on_own_thread([&] {
            SCOPED_TRACE(fu::pinning_name(pinning));
            std::set<std::size_t> const original = kernel_affinity();
            std::size_t const threads = 6;
            std::vector<std::size_t> expected_unpinned(2, 0);
            for (std::size_t d = 0; d != 2; ++d) {
                std::vector<std::size_t> const cores(topology.cores_in(d).begin(), topology.cores_in(d).end());
                for (std::size_t local = 0; local != 3; ++local)
                    expected_unpinned[d] += !any_allowed(pinning == fu::pinning_t::core_k
                                                             ? std::set<std::size_t>{cores[local % cores.size()]}
                                                             : std::set<std::size_t>(cores.begin(), cores.end()));
            }
            std::size_t const refusals_before = fu::affinity_refusals_count();
            pool_t pool;
            fu::thread_placement_t placement;
            placement.pinning = pinning;
            placement.name = nullptr;
            ASSERT_TRUE(pool.spawn(topology, threads, fu::caller_inclusive_k, placement));
            EXPECT_EQ(pool.unpinned_threads_count_in(0), expected_unpinned[0]);
            EXPECT_EQ(pool.unpinned_threads_count_in(1), expected_unpinned[1]);
            EXPECT_EQ(pool.unpinned_threads_count(), expected_unpinned[0] + expected_unpinned[1]);
            EXPECT_GE(fu::affinity_refusals_count() - refusals_before, expected_unpinned[0] + expected_unpinned[1]);
            EXPECT_TRUE(pool.oversubscribed());
            check_every_dispatch(pool);
            pool.terminate();
            EXPECT_EQ(kernel_affinity(), original);
        });
}

TEST(distributed, spawn_refuses_bad_requests_and_leaves_nothing_behind) {
    FORKUNION_SKIP_UNLESS_THREADS(2); // a thread of its own
    std::size_t const threads_before = settled_live_threads();
    on_own_thread([&] {
        std::set<std::size_t> const original = kernel_affinity();
        pool_t pool;
        EXPECT_EQ(pool.spawn(recorded_two_domains(), 1).code(), fu::status_code_t::invalid_argument_k)
            << "fewer threads than domains";
        if (fu::os_linux_k) { // a recorded sysfs tree: 17 memory domains, 16 of them with CPUs
            EXPECT_EQ(pool.spawn(recorded(cpuless_node_k), 15).code(), fu::status_code_t::invalid_argument_k);
        }
        EXPECT_EQ(pool.spawn(live_topology(), 0).code(), fu::status_code_t::invalid_argument_k);
        EXPECT_EQ(pool.threads_count(), 0u);
        EXPECT_EQ(pool.compute_domains_count(), 0u);
        EXPECT_EQ(kernel_affinity(), original);
        ASSERT_TRUE(pool.spawn(recorded_two_domains(), 2));
        EXPECT_EQ(pool.spawn(recorded_two_domains(), 2).code(), fu::status_code_t::already_spawned_k);
        EXPECT_EQ(pool.threads_count(), 2u);
        pool.terminate();
        // Respawn on another machine shape: the previous layout is released, the new one used.
        if (!fu::os_linux_k) return; // a recorded sysfs tree: eight nodes of 8 CPUs
        ASSERT_TRUE(pool.spawn(recorded(eight_nodes_k), 9, fu::caller_exclusive_k));
        EXPECT_EQ(split_of(pool), (std::vector<std::size_t>{2, 1, 1, 1, 1, 1, 1, 1}));
        check_every_dispatch(pool);
    });
    EXPECT_TRUE(threads_settle_to(threads_before));
}

TEST(distributed, workers_are_named_by_global_index) {
    FORKUNION_SKIP_WITHOUT_THREAD_NAMES();
    std::size_t const domains = live_topology().compute_domains_count();
    std::size_t const threads = domains + 2;
    pool_t pool;
    fu::thread_placement_t placement;
    placement.name = "fu-dist";
    ASSERT_TRUE(pool.spawn(live_topology(), threads, fu::caller_exclusive_k, placement));
    std::multiset<std::string> const names = comms_of_this_process();
    for (std::size_t thread = 0; thread != threads; ++thread) {
        std::string const index = std::to_string(thread);
        std::string const expected = "fu-dist:" + std::string(index.size() < 3 ? 3 - index.size() : 0, '0') + index;
        EXPECT_EQ(names.count(expected), 1u) << expected;
    }
    pool.terminate();
    // On a recorded machine too: a refused pin does not stop the name.
    ASSERT_TRUE(pool.spawn(recorded_two_domains(), 4, fu::caller_exclusive_k, placement));
    std::multiset<std::string> const recorded_names = comms_of_this_process();
    for (char const *name : {"fu-dist:000", "fu-dist:001", "fu-dist:002", "fu-dist:003"})
        EXPECT_EQ(recorded_names.count(name), 1u) << name;
}

TEST(distributed, pinned_workers_report_their_domains_cores) {
    FORKUNION_SKIP_WITHOUT_KERNEL_AFFINITY();
    fu::machine_topology_t const &topology = live_topology();
    std::size_t const threads = topology.logical_cores_count() + 1;
    for (fu::pinning_t pinning : {fu::pinning_t::core_k, fu::pinning_t::domain_k})
        on_own_thread([&] {
            SCOPED_TRACE(fu::pinning_name(pinning));
            std::set<std::size_t> const original = kernel_affinity();
            pool_t pool;
            fu::thread_placement_t placement;
            placement.pinning = pinning;
            ASSERT_TRUE(pool.spawn(topology, threads, fu::caller_inclusive_k, placement));
            EXPECT_EQ(pool.unpinned_threads_count(), 0u);
            std::vector<std::set<std::size_t>> seen(threads);
            forkunion::testing::require_ran(
                pool.for_threads([&](std::size_t thread) noexcept { seen[thread] = kernel_affinity(); }).join());
            for (std::size_t thread = 0; thread != threads; ++thread) {
                auto const location = pool.locate_thread(thread);
                std::vector<std::size_t> const cores(topology.cores_in(location.compute_domain).begin(),
                                                     topology.cores_in(location.compute_domain).end());
                std::set<std::size_t> const expected =
                    pinning == fu::pinning_t::core_k
                        ? std::set<std::size_t>{cores[location.local_thread % cores.size()]}
                        : std::set<std::size_t>(cores.begin(), cores.end());
                EXPECT_EQ(seen[thread], expected) << "thread " << thread;
            }
            pool.terminate();
            EXPECT_EQ(kernel_affinity(), original) << "the caller, thread 0, gets its mask back";
        });
}

TEST(distributed, per_domain_state_lives_on_each_domains_node) {
    FORKUNION_SKIP_UNLESS_THREADS(2); // a thread per domain
    auto binds = [](fu::numa_node_id_t node) {
        fu::domain_allocator_t<char> const allocator(node);
        auto const probe = allocator.try_allocate_at_least(1);
        if (probe.status) allocator.deallocate(probe.ptr, probe.count);
        return static_cast<bool>(probe.status);
    };
    fu::machine_topology_t const &live = live_topology();
    pool_t pool;
    spawn_or_fail(pool, live, live.compute_domains_count());
    for (std::size_t d = 0; d != live.compute_domains_count(); ++d)
        EXPECT_EQ(pool.memory_placed_in(d),
                  binds(static_cast<fu::numa_node_id_t>(live.memory_node_id(live.local_memory_of(d)))))
            << "domain " << d;
    EXPECT_GT(pool.memory_usage(), sizeof(pool_t));
    pool.terminate();
    spawn_or_fail(pool, recorded_two_domains(), 2);
    EXPECT_EQ(pool.memory_placed_in(0), binds(0));
    EXPECT_EQ(pool.memory_placed_in(1), binds(1));
    EXPECT_FALSE(pool.memory_placed_in(2)) << "out of range";
}

TEST(distributed, set_idle_policy_during_respawn_never_reads_past_the_table_nor_loses_the_update) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    using pool_t = fu::distributed_pool_t;
    // Two layouts of different domain counts: every respawn replaces the table under the setter's feet.
    fu::machine_topology_t const &many = fu::os_linux_k ? recorded("128ia64-17n4s2c") : recorded_two_domains();
    fu::machine_topology_t const &few = live_topology();
    if (many.compute_domains_count() <= few.compute_domains_count()) GTEST_SKIP() << "no layout with more domains";
    fu::thread_placement_t placement;
    placement.name = nullptr;
    placement.pinning = fu::pinning_t::none_k;
    pool_t pool;
    std::atomic<bool> done{false};
    std::atomic<std::size_t> changes{0};
    std::thread setter([&] {
        for (std::size_t turn = 0; !done.load(std::memory_order_acquire); ++turn) {
            EXPECT_TRUE(pool.set_idle_policy(turn % 2 ? fu::idle_policy_t::spin() : fu::idle_policy_t::nap()));
            (void)pool.parked_threads_count();
            changes.fetch_add(1, std::memory_order_relaxed);
        }
        // The last word, set while the controlling thread may still respawn: every domain's workers must obey it.
        EXPECT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep()));
    });
    for (std::size_t respawn = 0; respawn != 40; ++respawn) {
        fu::machine_topology_t const &topology = respawn % 2 ? few : many;
        std::size_t const threads = topology.compute_domains_count() + 1;
        ASSERT_TRUE(pool.spawn(topology, static_cast<pool_t::index_t>(threads), fu::caller_inclusive_k, placement));
        if (respawn + 1 == 40)
            done.store(true, std::memory_order_release);
        else
            pool.terminate();
    }
    setter.join();
    EXPECT_GT(changes.load(), 0u);
    EXPECT_EQ(pool.idle_policy().mode, fu::idle_mode_t::sleep_k);
    // Sleep parks every idle worker at once; a domain that kept the spin or nap policy never would.
    std::size_t const workers = pool.threads_count() - 1;
    EXPECT_TRUE(eventually([&] { return pool.parked_threads_count() == workers; }))
        << pool.parked_threads_count() << " of " << workers << " workers parked";
    pool.terminate();
}
