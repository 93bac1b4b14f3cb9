/**
 *  @file   sweep_test.cpp
 *  @brief  Exhaustive scheduling sweeps (Catch2 generators) over `std::uint8_t` pools and arithmetic.
 *
 *  - The pure functions of `types.hpp` at every input a `std::uint8_t` pool can produce: the static split for
 *    every (n, T, thread), and the coprime stealing walk for every (count, start, seed).
 *  - Real `std::uint8_t` pools for thread counts 1..255 (every `FORKUNION_SWEEP_STRIDE`-th one plus every count
 *    where the retirement tree or the byte changes shape: `sweep_runs_thread_count`) and every task count 0..255,
 *    for `for_n`, `for_n_dynamic` and `for_slices`: each task exactly once and in bounds, n = 255
 *    and T = 255 included. Odd thread counts run caller-exclusive, even ones inclusive.
 *  - `std::uint16_t` pools whose generation wraps twice.
 */
#define FORKUNION_CATCH2_MAIN
#include "catch_compat.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include <forkunion/pools/flat.hpp>

#include "test_support.hpp"

#ifndef FORKUNION_SWEEP_STRIDE
#define FORKUNION_SWEEP_STRIDE 1
#endif
/*  The most threads a real-thread sweep spawns: 255 everywhere but WebAssembly, whose threads are Web Workers
 *  (the toolchain files say why they cap it), and whose builds without threads have the caller only. */
#ifndef FORKUNION_SWEEP_MAX_THREADS
#define FORKUNION_SWEEP_MAX_THREADS 255
#endif

namespace fu = forkunion;

TEST_CASE("static split partitions [0, n) by the formula for every u8 input", "[sweep][arithmetic]") {
    std::uint64_t checked = 0;
    for (unsigned threads = 1; threads <= 255; ++threads) {
        for (unsigned n = 0; n <= 255; ++n) {
            unsigned expected_first = 0;
            for (unsigned thread = 0; thread < threads; ++thread) {
                auto const got =
                    fu::static_slice<std::uint8_t>(std::uint8_t(n), std::uint8_t(threads), std::uint8_t(thread));
                unsigned const q = n / threads, r = n % threads;
                unsigned const first = q * thread + (thread < r ? thread : r);
                unsigned const count = q + (thread < r ? 1 : 0);
                if (got.first != first || got.count != count || first != expected_first) {
                    INFO("n = " << n << ", T = " << threads << ", thread = " << thread);
                    REQUIRE(unsigned(got.first) == first);
                    REQUIRE(unsigned(got.count) == count);
                    REQUIRE(first == expected_first);
                }
                expected_first += count;
                ++checked;
            }
            REQUIRE(expected_first == n);
        }
    }
    CHECK(checked == 255u * 256u * 256u / 2u);
}

TEST_CASE("coprime walks visit every other thread once for every u8 count, start and seed", "[sweep][arithmetic]") {
    std::uint64_t walks = 0;
    for (unsigned count = 1; count <= 255; ++count) {
        for (unsigned seed = 0; seed <= 255; ++seed) {
            std::uint8_t const stride = fu::coprime_stride<std::uint8_t>(std::uint8_t(count), std::uint8_t(seed));
            REQUIRE(stride >= 1);
            REQUIRE((count == 1 || stride < count));
            for (unsigned start = 0; start < count; ++start) {
                std::array<std::uint8_t, 256> seen{};
                std::uint8_t position = std::uint8_t(start);
                for (unsigned step = 1; step < count; ++step) {
                    position = fu::next_in_coprime_order<std::uint8_t>(position, stride, std::uint8_t(count));
                    if (position >= count || position == start || seen[position]) {
                        INFO("count = " << count << ", seed = " << seed << ", start = " << start);
                        REQUIRE(unsigned(position) < count);
                        REQUIRE(unsigned(position) != start);
                        REQUIRE(seen[position] == 0);
                    }
                    seen[position] = 1;
                }
                if (count > 1)
                    REQUIRE(fu::next_in_coprime_order<std::uint8_t>(position, stride, std::uint8_t(count)) == start);
                ++walks;
            }
        }
    }
    CHECK(walks == 256u * 255u * 256u / 2u);
}

namespace {

using u8_pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t>;

/**  Exactly-once ledger for up to 255 tasks, reused across dispatches. */
struct u8_ledger {
    std::array<std::atomic<std::uint16_t>, 256> counts{};
    std::atomic<std::uint32_t> out_of_bounds{0};
    void reset() noexcept {
        for (auto &count : counts) count.store(0, std::memory_order_relaxed);
        out_of_bounds.store(0, std::memory_order_relaxed);
    }
    void record(unsigned task, unsigned n, unsigned thread, unsigned threads) noexcept {
        if (task >= n || thread >= threads)
            out_of_bounds.fetch_add(1, std::memory_order_relaxed);
        else
            counts[task].fetch_add(1, std::memory_order_relaxed);
    }
    bool exactly_once(unsigned n) const noexcept {
        if (out_of_bounds.load(std::memory_order_relaxed)) return false;
        for (unsigned task = 0; task < 256; ++task)
            if (counts[task].load(std::memory_order_relaxed) != (task < n ? 1 : 0)) return false;
        return true;
    }
};

} // namespace

TEST_CASE("u8 pools run every task exactly once for every thread and task count", "[sweep][pools]") {
    auto const threads = GENERATE(range(1, 256));
    if (threads > FORKUNION_SWEEP_MAX_THREADS) return; // the most this build's threads allow
    // Sanitized and emulated builds thin the grid, and keep its largest count.
    if (threads != FORKUNION_SWEEP_MAX_THREADS &&
        !forkunion::testing::sweep_runs_thread_count(unsigned(threads), FORKUNION_SWEEP_STRIDE))
        return;
    // A build without threads has inclusive pools of one only: its one count runs inclusive.
    fu::caller_exclusivity_t const exclusivity = forkunion::testing::spawnable_exclusivity(
        std::size_t(threads), threads % 2 ? fu::caller_exclusive_k : fu::caller_inclusive_k);
    u8_pool_t pool;
    REQUIRE(pool.spawn(std::uint8_t(threads), exclusivity));
    u8_ledger ledger;
    unsigned const t = unsigned(threads);
    for (unsigned n = 0; n <= 255; ++n) {
        INFO("T = " << t << ", n = " << n);
        ledger.reset();
        forkunion::testing::require_ran(
            pool.for_n(std::uint8_t(n),
                       [&](u8_pool_t::prong_t prong) noexcept { ledger.record(prong.task, n, prong.thread, t); })
                .join());
        REQUIRE(ledger.exactly_once(n));

        ledger.reset();
        forkunion::testing::require_ran(pool.for_n_dynamic(std::uint8_t(n),
                                                           [&](u8_pool_t::prong_t prong) noexcept {
                                                               ledger.record(prong.task, n, prong.thread, t);
                                                           })
                                            .join());
        REQUIRE(ledger.exactly_once(n));

        ledger.reset();
        forkunion::testing::require_ran(
            pool.for_slices(std::uint8_t(n),
                            [&](u8_pool_t::prong_t first, std::uint8_t count) noexcept {
                                if (count == 0) ledger.out_of_bounds.fetch_add(1, std::memory_order_relaxed);
                                for (unsigned i = 0; i < count; ++i)
                                    ledger.record(unsigned(first.task) + i, n, first.thread, t);
                            })
                .join());
        REQUIRE(ledger.exactly_once(n));
    }
}

TEST_CASE("u16 pools wrap their generation twice without losing a dispatch", "[sweep][generation]") {
    using u16_pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint16_t>;
    auto const exclusivity = GENERATE(fu::caller_inclusive_k, fu::caller_exclusive_k);
    // Two threads, or the caller alone where no thread can start (an exclusive pool needs a worker: not there).
    std::uint16_t const threads = FORKUNION_SWEEP_MAX_THREADS >= 2 ? 2 : 1;
    if (threads == 1 && exclusivity == fu::caller_exclusive_k) return;
    u16_pool_t pool;
    REQUIRE(pool.spawn(threads, exclusivity));
    // Each dispatch moves the generation by 2, so 2^16 dispatches wrap a 16-bit generation twice.
    constexpr std::uint32_t dispatches = 65536 + 1024;
    std::atomic<std::uint32_t> runs{0};
    std::uint16_t previous = 0;
    std::uint32_t wraps = 0, bad_generations = 0, incomplete = 0;
    auto count = [&](std::uint16_t) noexcept { runs.fetch_add(1, std::memory_order_relaxed); };
    for (std::uint32_t i = 0; i != dispatches; ++i) {
        std::uint16_t const generation = pool.unsafe_for_threads(count);
        if (generation % 2 != 1 || (i && std::uint16_t(previous + 2) != generation)) ++bad_generations;
        if (i && generation < previous) ++wraps;
        pool.unsafe_join(generation);
        if (!pool.is_complete(generation)) ++incomplete;
        previous = generation;
    }
    CHECK(bad_generations == 0);
    CHECK(incomplete == 0);
    CHECK(wraps >= 2);
    CHECK(runs.load() == threads * dispatches);
}
