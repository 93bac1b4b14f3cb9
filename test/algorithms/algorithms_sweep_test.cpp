/**
 *  @file   algorithms_sweep_test.cpp
 *  @brief  `std::uint8_t` pools against sizes at the block and chunk boundaries of a grain of 3: around 1, 2 and
 *          255 blocks (the most tasks such a pool counts), 256 and 257 (where chunk 255 shares task 0, then chunks
 *          start holding two blocks). Thread counts 1..255 run them (every `FORKUNION_SWEEP_STRIDE`-th one and
 *          every count where a pool changes shape: `sweep_runs_thread_count`; none above a build's
 *          `FORKUNION_SWEEP_MAX_THREADS`, which always runs). Odd thread counts run
 *          caller-exclusive, even ones inclusive. A second test takes 10007 elements (scans and sorts over 209 chunks
 * of 16 blocks) and `large_k` elements (10^6 in release builds: 333,334 blocks in 163 chunks of 2048 blocks, far more
 * elements than the index type counts) at a fixed set of thread counts: the block-to-task mapping there depends on n
 * and the grain only, and the per-thread-count properties are the first test's.
 *
 *  Each size's expected answers are computed once, serially, with `std::` and the rule's reference; each pool
 *  must reproduce all of them: reductions (exact on integers, bitwise on doubles), `count_if`, `min_element`,
 *  `find_if` at a block's first element and with no match, `for_each` exactly once, `inclusive_scan` and `sort`.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>

#include "algorithms_support.hpp"

#ifndef FORKUNION_SWEEP_STRIDE
#define FORKUNION_SWEEP_STRIDE 1
#endif
#ifndef FORKUNION_SWEEP_MAX_THREADS
#define FORKUNION_SWEEP_MAX_THREADS 255 // fewer where every thread is expensive (a Web Worker under Node.js)
#endif

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

constexpr std::size_t grain_k = 3;

/**  One size's inputs and the answers every pool must give. */
struct case_t {
    std::size_t n = 0;
    bool small = false; // scans and sorts run on small sizes only
    std::vector<std::int64_t> ints;
    std::vector<double> reals;
    std::int64_t sum = 0;
    std::uint64_t real_sum_bits = 0;
    std::ptrdiff_t negatives = 0, smallest = 0, match = 0, found = 0;
    std::vector<std::int64_t> scanned, sorted;
};

std::vector<case_t> make_cases(std::vector<std::size_t> const &sizes) {
    std::vector<case_t> cases;
    std::size_t const g = grain_k;
    for (std::size_t n : sizes) {
        case_t c;
        c.n = n;
        c.small = n <= 10007;
        c.ints = integers(n, 64);
        c.reals = general_doubles(n);
        c.sum = std::accumulate(c.ints.begin(), c.ints.end(), std::int64_t(0));
        auto load = [&](std::size_t i) { return c.reals[i]; };
        c.real_sum_bits = bits_of(rule_reduce(n, g, 0.0, load, std::plus<>{}));
        c.negatives = std::count_if(c.ints.begin(), c.ints.end(), [](std::int64_t v) { return v < 0; });
        c.smallest = std::min_element(c.ints.begin(), c.ints.end()) - c.ints.begin();
        c.match = static_cast<std::ptrdiff_t>(n / 2 / g * g); // the first element of a block
        c.found = static_cast<std::ptrdiff_t>(std::min(n, static_cast<std::size_t>(c.match)));
        if (c.small) {
            c.scanned.resize(n);
            std::inclusive_scan(c.ints.begin(), c.ints.end(), c.scanned.begin());
            c.sorted = c.ints;
            std::sort(c.sorted.begin(), c.sorted.end());
        }
        cases.push_back(std::move(c));
    }
    return cases;
}

using u8_pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t>;

/**  Spawns a `u8_pool_t` of `threads` and checks every case on it; returns how many cases ran every algorithm. */
std::size_t check_cases(unsigned threads, std::vector<case_t> const &cases) {
    // A build without threads has inclusive pools of one only: its one count runs inclusive.
    fu::caller_exclusivity_t const exclusivity = forkunion::testing::spawnable_exclusivity(
        threads, threads % 2 ? fu::caller_exclusive_k : fu::caller_inclusive_k);
    u8_pool_t pool;
    if (!pool.spawn(static_cast<std::uint8_t>(threads), exclusivity)) {
        ADD_FAILURE() << "spawn(" << threads << ") failed";
        return 0;
    }
    // Idle workers sleep until a dispatch wakes them: with up to 255 threads on a few cores, idle workers that spin
    // take the cores from the working ones (the adaptive default made this sweep ~6x slower on 2 cores).
    if (!pool.set_idle_policy(fu::idle_policy_t::sleep(0))) ADD_FAILURE() << "a valid idle policy was refused";
    auto grained = fu::with_grain(pool, grain_k);
    std::size_t checked = 0;
    for (case_t const &c : cases) {
        SCOPED_TRACE(::testing::Message() << threads << " threads, n = " << c.n);
        auto const &ints = c.ints;
        EXPECT_EQ(fu::reduce(grained, ints.begin(), ints.end()), c.sum);
        EXPECT_EQ(bits_of(fu::reduce(grained, c.reals.begin(), c.reals.end(), 0.0)), c.real_sum_bits);
        EXPECT_EQ(fu::count_if(grained, ints.begin(), ints.end(), [](std::int64_t v) noexcept { return v < 0; }),
                  c.negatives);
        EXPECT_EQ(fu::min_element(grained, ints.begin(), ints.end()) - ints.begin(), c.smallest);
        std::size_t const match = static_cast<std::size_t>(c.match);
        auto at_match = [&](std::int64_t const &v) noexcept {
            return static_cast<std::size_t>(&v - ints.data()) == match;
        };
        EXPECT_EQ(fu::find_if(grained, ints.begin(), ints.end(), at_match) - ints.begin(), c.found);
        EXPECT_FALSE(fu::any_of(grained, ints.begin(), ints.end(), [](std::int64_t v) noexcept { return v > 99; }));
        if (!c.small) continue;
        std::vector<std::atomic<std::uint8_t>> visits(c.n);
        fu::for_each(grained, visits.begin(), visits.end(),
                     [](std::atomic<std::uint8_t> &v) noexcept { v.fetch_add(1, std::memory_order_relaxed); });
        EXPECT_EQ(std::count_if(visits.begin(), visits.end(), [](auto const &v) { return v.load() != 1; }), 0);
        std::vector<std::int64_t> scanned(c.n), sorted = ints;
        fu::inclusive_scan(grained, ints.begin(), ints.end(), scanned.begin());
        EXPECT_EQ(scanned, c.scanned);
        fu::sort(grained, sorted.begin(), sorted.end());
        EXPECT_EQ(sorted, c.sorted);
        ++checked;
    }
    return checked;
}

} // namespace

TEST(algorithms_sweep, u8_pools_agree_with_serial_answers_at_block_boundaries_for_every_thread_count) {
    std::size_t const g = grain_k;
    std::vector<case_t> const cases =
        make_cases({0, 1, g - 1, g, g + 1, 2 * g - 1, 2 * g, 2 * g + 1, 255 * g - 1, 255 * g, 255 * g + 1, 256 * g - 1,
                    256 * g, 256 * g + 1, 257 * g + 1});
    std::size_t checked = 0, pools = 0;
    for (unsigned threads = 1; threads <= FORKUNION_SWEEP_MAX_THREADS; ++threads) {
        if (threads != FORKUNION_SWEEP_MAX_THREADS &&
            !forkunion::testing::sweep_runs_thread_count(threads, FORKUNION_SWEEP_STRIDE))
            continue;
        checked += check_cases(threads, cases);
        ++pools;
    }
    EXPECT_EQ(checked, cases.size() * pools) << "every case ran every algorithm on every pool";
}

TEST(algorithms_sweep, u8_pools_handle_ranges_longer_than_their_index_counts) {
    std::vector<case_t> const cases = make_cases({10007, large_k, large_k + 1});
    for (unsigned threads : {1u, 2u, 3u, 4u, 16u, 17u, 128u, 254u, 255u})
        if (threads <= FORKUNION_SWEEP_MAX_THREADS) check_cases(threads, cases);
}
