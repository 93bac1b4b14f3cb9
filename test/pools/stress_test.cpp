/**
 *  @file   stress_test.cpp
 *  @brief  Randomized stress (Catch2): several threads race to dispatch on one pool while idle modes change.
 *
 *  Each racer picks a random API and task count; a dispatch that wins the claim must run every task exactly
 *  once, and one that loses must be refused with `contended` and run nothing. Under TSan this exercises every
 *  happens-before edge of the claim protocol (T1-T3 in `flat.hpp`).
 */
#include "catch_compat.hpp"

#include <atomic>
#include <cstdio>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include <forkunion/pools/flat.hpp>

#include "test_support.hpp"

namespace fu = forkunion;

#ifndef FORKUNION_STRESS_ROUNDS
#define FORKUNION_STRESS_ROUNDS 2000
#endif

TEST_CASE("racing dispatchers are either served exactly once or refused", "[stress]") {
    if (fu::testing::spawnable_threads() < 2) { // ctest's SKIP_REGULAR_EXPRESSION reads this line
        std::puts("SKIPPED: racing dispatchers need threads; this WebAssembly build has none (no -pthread)");
        return;
    }
    auto const exclusivity = GENERATE(fu::caller_inclusive_k, fu::caller_exclusive_k);
    std::size_t const threads = fu::allowed_cores_count();
    fu::flat_pool_t pool;
    REQUIRE(pool.spawn(threads, exclusivity));

    constexpr std::size_t racers = 3;
    std::atomic<std::size_t> served{0}, refused{0}, corrupted{0}, wrong_refusals{0};
    std::vector<std::thread> racer_threads;
    for (std::size_t racer = 0; racer != racers; ++racer) {
        racer_threads.emplace_back([&, racer] {
            std::mt19937 random(static_cast<std::uint32_t>(racer * 7919 + 1));
            for (std::size_t round = 0; round != FORKUNION_STRESS_ROUNDS; ++round) {
                std::size_t const n = random() % 300;
                std::vector<std::atomic<std::uint32_t>> counts(n);
                auto record = [&](std::size_t task) noexcept { counts[task].fetch_add(1, std::memory_order_relaxed); };
                fu::status_t status;
                switch (random() % 4) {
                case 0: {
                    auto guard = pool.for_n(n, record);
                    status = guard.status();
                    break;
                }
                case 1: {
                    auto guard = pool.for_n_dynamic(n, record);
                    status = guard.status();
                    break;
                }
                case 2: {
                    auto guard = pool.for_slices(n, [&](std::size_t first, std::size_t count) noexcept {
                        for (std::size_t i = 0; i != count; ++i) record(first + i);
                    });
                    status = guard.status();
                    break;
                }
                default: {
                    auto guard = pool.for_threads([&](std::size_t thread) noexcept {
                        for (std::size_t task = thread; task < n; task += threads) record(task);
                    });
                    status = guard.status();
                    break;
                }
                }
                std::size_t runs_expected = status ? 1 : 0;
                for (auto &count : counts)
                    if (count.load(std::memory_order_relaxed) != runs_expected) corrupted.fetch_add(1);
                if (status)
                    served.fetch_add(1);
                else if (status == fu::status_code_t::contended_k)
                    refused.fetch_add(1);
                else
                    wrong_refusals.fetch_add(1);
            }
        });
    }
    for (auto &racer : racer_threads) racer.join();
    INFO("served " << served.load() << ", refused " << refused.load());
    CHECK(corrupted.load() == 0);
    CHECK(wrong_refusals.load() == 0);
    CHECK(served.load() + refused.load() == racers * FORKUNION_STRESS_ROUNDS);
    CHECK(served.load() > 0);
}

TEST_CASE("idle mode changes interleaved with dispatches lose nothing", "[stress]") {
    auto const exclusivity = GENERATE(fu::caller_inclusive_k, fu::caller_exclusive_k);
    std::size_t const threads = fu::allowed_cores_count() + 1;
    fu::flat_pool_t pool;
    REQUIRE(pool.spawn(threads, exclusivity));
    std::mt19937 random(42);
    std::size_t mistakes = 0;
    for (std::size_t round = 0; round != FORKUNION_STRESS_ROUNDS; ++round) {
        switch (random() % 6) {
        case 0:
            mistakes += !pool.set_idle_policy(fu::idle_policy_t::nap());
            break;
        case 1:
            mistakes += !pool.set_idle_policy(fu::idle_policy_t::sleep(0));
            break;
        case 2:
            mistakes += !pool.set_idle_policy(fu::idle_policy_t::sleep(1 + random() % 50));
            break;
        case 3:
            mistakes += !pool.set_idle_policy(fu::idle_policy_t::adaptive(random() % 20));
            break;
        case 4:
            mistakes += !pool.set_idle_policy(fu::idle_policy_t::spin());
            break;
        default:
            break;
        }
        fu::testing::task_ledger ledger(random() % 64);
        forkunion::testing::require_ran(
            pool.for_n_dynamic(ledger.size(), [&](std::size_t task) noexcept { ledger.record(task); }).join());
        mistakes += ledger.mistakes();
    }
    CHECK(mistakes == 0);
}
