/**
 *  @file   algorithms_fuzz_test.cpp
 *  @brief  A differential fuzzer of `include/forkunion/algorithms/algorithms.hpp` against the standard library:
 *          random sizes around the grain and the 16 lanes, random grains and thread counts, integer keys with many
 *          duplicates, doubles with NaNs, and comparators that are consistent, inconsistent or random.
 *
 *  Results must equal `std::` wherever the standard defines them (integer reductions, searches, counts, extremes,
 *  scans, sorts under a strict weak order, stable sorts' order of equal keys); under any other comparator a sort
 *  must stay in its range (guard cells, and ASan in sanitized builds) and leave a permutation of its input.
 *  Seeded: `FORKUNION_FUZZ_SEED` picks the seed (else the clock does) and `FORKUNION_FUZZ_ROUNDS` the length; the
 *  seed is printed first, so a failure reproduces with it.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>

#include "algorithms_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

std::uint64_t from_environment(char const *name, std::uint64_t otherwise) {
    char const *text = std::getenv(name);
    return text && *text ? std::strtoull(text, nullptr, 0) : otherwise;
}

/**  Answers at random from any thread. */
struct random_answers_t {
    std::atomic<std::uint64_t> *counter;
    template <typename value_t>
    bool operator()(value_t const &, value_t const &) const noexcept {
        return mix(counter->fetch_add(1, std::memory_order_relaxed)) & 1;
    }
};

} // namespace

TEST(algorithms_fuzz, results_equal_std_and_sorts_permute_under_any_comparator) {
    std::uint64_t const seed = from_environment(
        "FORKUNION_FUZZ_SEED", static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::uint64_t const rounds = from_environment("FORKUNION_FUZZ_ROUNDS", 300);
    std::printf("algorithms_fuzz: FORKUNION_FUZZ_SEED=%llu FORKUNION_FUZZ_ROUNDS=%llu\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(rounds));
    std::fflush(stdout);
    std::uint64_t draws = 0;
    auto draw = [&](std::uint64_t below) { return mix(seed * 0x100000001B3ull + draws++) % below; };

    std::vector<std::unique_ptr<fu::basic_pool_t<>>> pools;
    for (std::size_t threads = 1; threads <= 4; ++threads) {
        if (!can_spawn(threads, fu::caller_inclusive_k)) break;
        pools.push_back(std::make_unique<fu::basic_pool_t<>>());
        ASSERT_TRUE(pools.back()->spawn(threads));
    }
    std::atomic<std::uint64_t> counter{seed};
    std::size_t const grains[] = {1, 2, 7, 16, 17, 32, 33, 100, fu::default_grain_k};
    for (std::uint64_t round = 0; round < rounds; ++round) {
        auto &pool = *pools[draw(pools.size())];
        std::size_t const grain = grains[draw(sizeof grains / sizeof grains[0])];
        // Sizes near multiples of the grain and of the 16 lanes, and a few anywhere.
        std::size_t const base = draw(2) ? grain * draw(40) : 16 * draw(64);
        std::size_t n = base + draw(5) - std::min<std::size_t>(base, 2);
        n = std::min<std::size_t>(n, 20000);
        std::uint64_t const keys = 1 + draw(draw(2) ? 8 : 100000); // few keys: many duplicates
        SCOPED_TRACE(::testing::Message() << "seed " << seed << ", round " << round << ", n = " << n
                                          << ", grain = " << grain << ", threads = " << pool.threads_count());
        auto grained = fu::with_grain(pool, grain);
        std::vector<std::int64_t> ints(n);
        for (auto &value : ints) value = static_cast<std::int64_t>(draw(keys)) - static_cast<std::int64_t>(keys / 2);

        EXPECT_EQ(fu::reduce(grained, ints.begin(), ints.end(), std::int64_t(7)),
                  std::accumulate(ints.begin(), ints.end(), std::int64_t(7)));
        auto is_odd = [](std::int64_t v) { return (v & 1) != 0; };
        EXPECT_EQ(fu::count_if(grained, ints.begin(), ints.end(), is_odd),
                  std::count_if(ints.begin(), ints.end(), is_odd));
        std::int64_t const wanted = n ? ints[draw(n)] : 0;
        auto is_wanted = [wanted](std::int64_t v) { return v == wanted; };
        EXPECT_EQ(fu::find_if(grained, ints.begin(), ints.end(), is_wanted),
                  std::find_if(ints.begin(), ints.end(), is_wanted));
        EXPECT_EQ(fu::min_element(grained, ints.begin(), ints.end()), std::min_element(ints.begin(), ints.end()));
        EXPECT_EQ(fu::max_element(grained, ints.begin(), ints.end()), std::max_element(ints.begin(), ints.end()));
        std::vector<std::int64_t> ours(n), theirs(n);
        fu::inclusive_scan(grained, ints.begin(), ints.end(), ours.begin());
        std::inclusive_scan(ints.begin(), ints.end(), theirs.begin());
        EXPECT_EQ(ours, theirs) << "inclusive_scan";

        // Sorts under a strict weak order equal std's; stable ones keep equal keys in input order.
        ours = ints, theirs = ints;
        fu::sort(grained, ours.begin(), ours.end());
        std::sort(theirs.begin(), theirs.end());
        EXPECT_EQ(ours, theirs) << "sort";
        std::vector<std::pair<std::int64_t, std::size_t>> tagged(n);
        for (std::size_t i = 0; i < n; ++i) tagged[i] = {ints[i] % 5, i};
        auto by_key = [](auto const &a, auto const &b) { return a.first < b.first; };
        auto expected = tagged;
        std::stable_sort(expected.begin(), expected.end(), by_key);
        fu::stable_sort(grained, tagged.begin(), tagged.end(), by_key);
        EXPECT_EQ(tagged, expected) << "stable_sort";

        // Any other comparator: in bounds (guards) and a permutation.
        std::vector<double> doubles(n + 2, 4242.0);
        for (std::size_t i = 1; i <= n; ++i)
            doubles[i] = draw(4) ? static_cast<double>(ints[i - 1]) : std::numeric_limits<double>::quiet_NaN();
        std::vector<std::uint64_t> before;
        for (std::size_t i = 1; i <= n; ++i) before.push_back(bits_of(doubles[i]));
        std::sort(before.begin(), before.end());
        random_answers_t random{&counter};
        auto always = [](double, double) { return true; };
        switch (draw(4)) {
        case 0:
            fu::sort(grained, doubles.begin() + 1, doubles.end() - 1);
            break;
        case 1:
            fu::stable_sort(grained, doubles.begin() + 1, doubles.end() - 1);
            break;
        case 2:
            fu::sort(grained, doubles.begin() + 1, doubles.end() - 1, random);
            break;
        default:
            fu::stable_sort(grained, doubles.begin() + 1, doubles.end() - 1, always);
            break;
        }
        EXPECT_EQ(bits_of(doubles.front()), bits_of(4242.0)) << "wrote before the range";
        EXPECT_EQ(bits_of(doubles.back()), bits_of(4242.0)) << "wrote past the range";
        std::vector<std::uint64_t> after;
        for (std::size_t i = 1; i <= n; ++i) after.push_back(bits_of(doubles[i]));
        std::sort(after.begin(), after.end());
        EXPECT_EQ(after, before) << "not a permutation";
        if (::testing::Test::HasFailure()) break;
    }
}
