/**
 *  @file   respawn_stress_test.cpp
 *  @brief  Foreign dispatchers against a controller that terminates, respawns with another size and exclusivity,
 *          and changes the idle policy, at 1, 2, 3 and 64 threads, on the flat pool and on the distributed pool
 *          (whose respawns alternate between the live machine and a recorded two-socket one, so its layout is
 *          replaced while foreign threads may still read it).
 *
 *  Every accepted dispatch ran each of its tasks exactly once; every refused one ran nothing and answered
 *  `contended` or `not_spawned`; nothing hangs (every wait has a deadline); every incarnation of the pool serves at
 *  least one foreign dispatch, and `terminate` is never starved by the foreign stream (it refuses new claims while
 *  it waits: before it did, a loaded machine saw one respawn in 0.8 s and the run overran its deadline). Each
 *  configuration runs until its foreign threads made `FORKUNION_STRESS_ATTEMPTS` dispatch attempts (10^5 unless
 *  the build says fewer) and the controller respawned `FORKUNION_STRESS_RESPAWNS` times (100 unless the build says
 *  otherwise; a tenth of it for pools of more than 8 threads, whose spawn starts tens of threads): a refused attempt
 *  costs nanoseconds, so attempts alone would end the run after a handful of respawns.
 */
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#include "pools_support.hpp"
#include "test_support.hpp"

#if !defined(FORKUNION_STRESS_ATTEMPTS)
#define FORKUNION_STRESS_ATTEMPTS 100000
#endif
#if !defined(FORKUNION_STRESS_RESPAWNS)
#define FORKUNION_STRESS_RESPAWNS 100
#endif

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

constexpr std::size_t tasks_k = 16;

struct tally_t {
    std::atomic<std::size_t> attempts{0}, accepted{0}, refused{0}, mistakes{0}, odd_statuses{0};
    std::atomic<std::size_t> foreign_accepted{0};
};

/**  One dispatch with its own ledger: exactly-once if accepted, nothing if refused. Returns whether accepted. */
template <typename pool_t>
bool dispatch_once(pool_t &pool, tally_t &tally, std::size_t shape) {
    std::array<std::atomic<std::uint8_t>, tasks_k> ran{};
    auto mark = [&](auto task) noexcept { ran[static_cast<std::size_t>(task) % tasks_k].fetch_add(1); };
    fu::status_t status;
    switch (shape % 3) {
    case 0:
        status = pool.for_n(tasks_k, mark).join();
        break;
    case 1:
        status = pool.for_n_dynamic(tasks_k, mark).join();
        break;
    default:
        status = pool.for_slices(tasks_k,
                                 [&](auto first, auto count) noexcept {
                                     for (std::size_t i = 0; i != static_cast<std::size_t>(count); ++i)
                                         ran[(static_cast<std::size_t>(first) + i) % tasks_k].fetch_add(1);
                                 })
                     .join();
        break;
    }
    tally.attempts.fetch_add(1, std::memory_order_relaxed);
    std::uint8_t const expected = status ? 1 : 0;
    for (auto const &count : ran) tally.mistakes.fetch_add(count.load() != expected, std::memory_order_relaxed);
    if (status)
        tally.accepted.fetch_add(1, std::memory_order_relaxed);
    else if (status == fu::status_code_t::contended_k || status == fu::status_code_t::not_spawned_k)
        tally.refused.fetch_add(1, std::memory_order_relaxed);
    else
        tally.odd_statuses.fetch_add(1, std::memory_order_relaxed);
    return static_cast<bool>(status);
}

fu::idle_policy_t policy_of(std::uint32_t draw) {
    switch (draw % 5) {
    case 0:
        return fu::idle_policy_t::spin();
    case 1:
        return fu::idle_policy_t::adaptive(draw % 40);
    case 2:
        return fu::idle_policy_t::nap();
    case 3:
        return fu::idle_policy_t::sleep(0);
    default:
        return fu::idle_policy_t::sleep(1 + draw % 30);
    }
}

/**  Runs the controller's churn on `pool` against two foreign dispatchers until they made enough attempts. */
template <typename pool_t, typename spawn_t>
void churn(pool_t &pool, std::size_t threads, spawn_t &&spawn) {
    tally_t tally;
    std::atomic<bool> stop{false};
    std::vector<std::thread> foreign;
    for (std::size_t f = 0; f != 2; ++f)
        foreign.emplace_back([&, f] {
            for (std::size_t shape = f; !stop.load(std::memory_order_relaxed); ++shape)
                if (dispatch_once(pool, tally, shape)) tally.foreign_accepted.fetch_add(1);
        });
    std::mt19937 random(static_cast<std::uint32_t>(threads));
    auto const deadline = std::chrono::steady_clock::now() + deadline_k;
    std::size_t respawns = 0;
    std::size_t const respawns_wanted = threads > 8 ? (FORKUNION_STRESS_RESPAWNS + 9) / 10 : FORKUNION_STRESS_RESPAWNS;
    while ((tally.attempts.load() < FORKUNION_STRESS_ATTEMPTS || respawns < respawns_wanted) &&
           std::chrono::steady_clock::now() < deadline) {
        std::uint32_t const draw = random();
        pool.terminate();
        std::size_t const size = std::max<std::size_t>(1, threads + (draw % 3) - 1); // T - 1, T or T + 1
        auto const exclusivity = draw % 2 ? fu::caller_exclusive_k : fu::caller_inclusive_k;
        ASSERT_TRUE(pool.set_idle_policy(policy_of(draw >> 3)));
        fu::status_t const spawned = spawn(pool, size, exclusivity, draw);
        ASSERT_TRUE(spawned) << spawned.name();
        ++respawns;
        std::size_t const served_before = tally.foreign_accepted.load();
        for (std::size_t own = 0; own != 1 + draw % 4; ++own) dispatch_once(pool, tally, draw + own);
        ASSERT_TRUE(pool.set_idle_policy(policy_of(draw >> 7))); // while foreign dispatches run: never refused
        // `terminate` turns new claims away while it waits, so it always wins the pool soon; without this wait
        // the next respawn could follow before any foreign dispatch was served by this one.
        ASSERT_TRUE(eventually([&] { return tally.foreign_accepted.load() != served_before; }))
            << "no foreign dispatch was served between two respawns";
    }
    stop = true;
    for (auto &thread : foreign) thread.join();
    pool.terminate();
    EXPECT_GE(tally.attempts.load(), std::size_t(FORKUNION_STRESS_ATTEMPTS)) << "the deadline cut the run short";
    EXPECT_GE(respawns, respawns_wanted) << "the deadline cut the run short";
    EXPECT_EQ(tally.mistakes.load(), 0u) << "a task ran twice, never, or in a refused dispatch";
    EXPECT_EQ(tally.odd_statuses.load(), 0u) << "a refusal other than contended or not_spawned";
    EXPECT_GT(tally.accepted.load(), 0u);
    std::printf("%zu threads: %zu attempts, %zu accepted, %zu refused, %zu respawns\n", threads, tally.attempts.load(),
                tally.accepted.load(), tally.refused.load(), respawns);
}

class respawn_stress : public ::testing::TestWithParam<std::size_t> {};

} // namespace

TEST_P(respawn_stress, flat_pool_serves_or_refuses_cleanly) {
    FORKUNION_SKIP_UNLESS_THREADS(3); // two foreign dispatchers besides the controller
    fu::flat_pool_t pool;
    churn(pool, GetParam(),
          [](fu::flat_pool_t &p, std::size_t size, fu::caller_exclusivity_t exclusivity, std::uint32_t) {
              return p.spawn(size, exclusivity);
          });
}

TEST_P(respawn_stress, distributed_pool_serves_or_refuses_cleanly) {
    FORKUNION_SKIP_UNLESS_THREADS(3); // two foreign dispatchers besides the controller
    fu::machine_topology_t live;
    (void)live.try_harvest();
    fu::machine_topology_t const &recorded = recorded_two_domains();
    ASSERT_EQ(recorded.compute_domains_count(), 2u);
    fu::distributed_pool_t pool;
    churn(pool, GetParam(),
          [&](fu::distributed_pool_t &p, std::size_t size, fu::caller_exclusivity_t exclusivity, std::uint32_t draw) {
              fu::machine_topology_t const &topology = draw % 4 < 2 ? live : recorded;
              std::size_t const domains = topology.compute_domains_count();
              return p.spawn(topology, std::max(size, domains), exclusivity);
          });
}

INSTANTIATE_TEST_SUITE_P(threads, respawn_stress, ::testing::Values(1, 2, 3, 64),
                         [](auto const &info) { return std::to_string(info.param) + "_threads"; });
