/**
 *  @file   algorithms_ranges_test.cpp
 *  @brief  The algorithms of `include/forkunion/algorithms/` over ranges (`std::vector`, `std::span`,
 *          `std::views::iota`, the library's `sharded_array_t`) against the same calls over iterator pairs, and a
 *          `std::uint8_t` pool given more chunks than its index type counts.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <numeric>
#include <ranges>
#include <span>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>
#include <forkunion/memory/allocators.hpp>

#include "algorithms_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

/**  Three memory domains on any node: a sharded array of three uneven shards on any machine. */
struct three_domains_t {
    std::size_t memory_domains_count() const noexcept { return 3; }
    fu::numa_node_id_t memory_node_id(std::size_t) const noexcept { return fu::any_numa_node_k; }
};

using sharded_t = fu::sharded_array_t<double, fu::detail::portable_memory_backend_t>;

static_assert(fu::sized_random_access_range<sharded_t &>);
static_assert(fu::sized_random_access_range<sharded_t const &>);
static_assert(fu::sized_random_access_range<std::span<double>>);
static_assert(fu::borrowed_random_access_range<std::span<double>>);
static_assert(!fu::borrowed_random_access_range<std::vector<double>>, "a temporary vector's iterators dangle");
static_assert(std::random_access_iterator<sharded_t::iterator>);

/**  0, 1, … n − 1 as a sized random-access range of prvalues, as `std::views::iota(0, n)` (which clang 14 cannot
 *   compile against libstdc++ 12's `<ranges>` and emscripten's libc++ lacks; it is checked below where the standard
 *   library has it). */
struct counting_range_t {
    struct iterator {
        using value_type = std::int64_t;
        using difference_type = std::ptrdiff_t;
        std::int64_t at = 0;
        std::int64_t operator*() const { return at; }
        std::int64_t operator[](difference_type n) const { return at + n; }
        iterator &operator++() { return ++at, *this; }
        iterator &operator--() { return --at, *this; }
        iterator operator++(int) { return {at++}; }
        iterator operator--(int) { return {at--}; }
        iterator &operator+=(difference_type n) { return at += n, *this; }
        iterator &operator-=(difference_type n) { return at -= n, *this; }
        iterator operator+(difference_type n) const { return {at + n}; }
        iterator operator-(difference_type n) const { return {at - n}; }
        friend iterator operator+(difference_type n, iterator it) { return it + n; }
        difference_type operator-(iterator const &other) const { return at - other.at; }
        bool operator==(iterator const &) const = default;
        auto operator<=>(iterator const &) const = default;
    };
    std::int64_t n;
    iterator begin() const { return {0}; }
    iterator end() const { return {n}; }
    std::size_t size() const { return static_cast<std::size_t>(n); }
};
static_assert(fu::sized_random_access_range<counting_range_t>);

#if defined(__cpp_lib_ranges) && !(defined(__clang__) && __clang_major__ < 15 && defined(__GLIBCXX__))
static_assert(fu::borrowed_random_access_range<decltype(std::views::iota(0, 10))>);
#define FORKUNION_TEST_HAS_IOTA 1
#else
#define FORKUNION_TEST_HAS_IOTA 0
#endif

} // namespace

TEST(algorithms_ranges, a_sharded_array_reduces_to_the_bits_of_a_vector_of_its_values) {
    for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000), std::size_t(10007)}) {
        SCOPED_TRACE(::testing::Message() << "n = " << n);
        std::vector<double> const values = general_doubles(n);
        sharded_t sharded;
        ASSERT_TRUE(sharded.try_allocate(three_domains_t{}, n));
        for (std::size_t i = 0; i < n; ++i) sharded[i] = values[i];
        for_threads_1_to_4([&](auto &pool) {
            for (std::size_t grain : {std::size_t(7), fu::default_grain_k}) {
                auto grained = fu::with_grain(pool, grain);
                double const expected = rule_reduce<double>(
                    n, grain, 0.0, [&](std::size_t i) { return values[i]; }, std::plus<double>());
                EXPECT_EQ(bits_of(fu::reduce(grained, sharded)), bits_of(expected));
                EXPECT_EQ(bits_of(fu::reduce(grained, std::as_const(sharded), 0.0)), bits_of(expected));
                EXPECT_EQ(bits_of(fu::reduce(grained, values)), bits_of(expected));
                EXPECT_EQ(bits_of(fu::reduce(grained, std::span<double const>(values), 0.0, std::plus<double>())),
                          bits_of(expected));
                EXPECT_EQ(fu::count_if(grained, sharded, [](double x) { return x > 0; }),
                          std::count_if(values.begin(), values.end(), [](double x) { return x > 0; }));
                if (n == 0) continue;
                EXPECT_EQ(fu::min_element(grained, sharded) - sharded.begin(),
                          std::min_element(values.begin(), values.end()) - values.begin());
                EXPECT_EQ(&*fu::max_element(grained, std::span<double const>(values)) - values.data(),
                          std::max_element(values.begin(), values.end()) - values.begin());
            }
        });
    }
}

TEST(algorithms_ranges, every_algorithm_takes_a_range_and_matches_its_iterator_pair) {
    std::size_t const n = 5003;
    std::vector<std::int64_t> const input = integers(n, 101);
    for_threads_1_to_4([&](auto &pool) {
        auto grained = fu::with_grain(pool, 64);
        counting_range_t const iota{static_cast<std::int64_t>(n)};
        EXPECT_EQ(fu::reduce(grained, iota), static_cast<std::int64_t>(n * (n - 1) / 2));
        EXPECT_EQ(*(std::ptrdiff_t(3) + iota.begin()), 3);
#if FORKUNION_TEST_HAS_IOTA
        EXPECT_EQ(fu::reduce(grained, std::views::iota(std::int64_t(0), static_cast<std::int64_t>(n))),
                  static_cast<std::int64_t>(n * (n - 1) / 2));
#endif
        EXPECT_EQ(
            fu::transform_reduce(grained, iota, std::int64_t(0), std::plus<>(), [](std::int64_t i) { return 2 * i; }),
            static_cast<std::int64_t>(n * (n - 1)));
        EXPECT_EQ(fu::transform_reduce(grained, input, input.begin(), std::int64_t(0)),
                  std::inner_product(input.begin(), input.end(), input.begin(), std::int64_t(0)));
        EXPECT_EQ(*fu::find_if(grained, iota, [](std::int64_t i) { return i * i > 1000; }), 32);
        EXPECT_EQ(fu::find_if(grained, std::span<std::int64_t const>(input), [](std::int64_t x) { return x == 50; }) -
                      std::span<std::int64_t const>(input).begin(),
                  std::find(input.begin(), input.end(), 50) - input.begin());
        EXPECT_TRUE(fu::any_of(grained, input, [](std::int64_t x) { return x == -50; }));
        EXPECT_TRUE(fu::all_of(grained, iota, [](std::int64_t i) { return i >= 0; }));
        EXPECT_TRUE(fu::none_of(grained, input, [](std::int64_t x) { return x > 50; }));

        std::vector<std::int64_t> ours(n), theirs(n);
        fu::transform(grained, input, ours.begin(), [](std::int64_t x) { return x * 3; });
        std::transform(input.begin(), input.end(), theirs.begin(), [](std::int64_t x) { return x * 3; });
        EXPECT_EQ(ours, theirs);
        fu::transform(grained, input, iota.begin(), ours.begin(), std::plus<>());
        std::transform(input.begin(), input.end(), iota.begin(), theirs.begin(), std::plus<>());
        EXPECT_EQ(ours, theirs);
        fu::inclusive_scan(grained, input, ours.begin());
        std::inclusive_scan(input.begin(), input.end(), theirs.begin());
        EXPECT_EQ(ours, theirs);
        fu::inclusive_scan(grained, input, ours.begin(), std::plus<>(), std::int64_t(7));
        std::inclusive_scan(input.begin(), input.end(), theirs.begin(), std::plus<>(), std::int64_t(7));
        EXPECT_EQ(ours, theirs);
        fu::exclusive_scan(grained, input, ours.begin(), std::int64_t(7));
        std::exclusive_scan(input.begin(), input.end(), theirs.begin(), std::int64_t(7));
        EXPECT_EQ(ours, theirs);

        std::atomic<std::int64_t> sum{0};
        fu::for_each(grained, input, [&](std::int64_t x) { sum.fetch_add(x, std::memory_order_relaxed); });
        EXPECT_EQ(sum.load(), std::accumulate(input.begin(), input.end(), std::int64_t(0)));

        ours = input, theirs = input;
        fu::sort(grained, ours);
        std::sort(theirs.begin(), theirs.end());
        EXPECT_EQ(ours, theirs);
        ours = input, theirs = input;
        auto by_tens = [](std::int64_t a, std::int64_t b) { return a / 10 < b / 10; };
        fu::stable_sort(grained, std::span<std::int64_t>(ours), by_tens);
        std::stable_sort(theirs.begin(), theirs.end(), by_tens);
        EXPECT_EQ(ours, theirs);
    });
}

TEST(algorithms_ranges, a_sharded_array_sorts_and_scans_across_its_shards) {
    std::size_t const n = 4099;
    std::vector<double> const values = exact_doubles(n);
    sharded_t sharded;
    ASSERT_TRUE(sharded.try_allocate(three_domains_t{}, n));
    for_threads_1_to_4([&](auto &pool) {
        auto grained = fu::with_grain(pool, 100);
        for (std::size_t i = 0; i < n; ++i) sharded[i] = values[i];
        std::vector<double> expected = values;
        std::stable_sort(expected.begin(), expected.end(), std::greater<>());
        fu::stable_sort(grained, sharded, std::greater<>());
        EXPECT_TRUE(std::equal(sharded.begin(), sharded.end(), expected.begin()));
        std::vector<double> scanned(n);
        fu::inclusive_scan(grained, sharded, scanned.begin());
        std::inclusive_scan(expected.begin(), expected.end(), expected.begin());
        EXPECT_EQ(scanned, expected); // small integers: every partial sum is exact
    });
}

TEST(algorithms_ranges, a_uint8_pool_runs_256_chunks_in_255_tasks_each_element_once) {
    using u8_pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t>;
    for (std::size_t threads : {std::size_t(2), std::size_t(3)}) {
        if (!can_spawn(threads, fu::caller_inclusive_k)) continue;
        u8_pool_t pool;
        ASSERT_TRUE(pool.spawn(static_cast<std::uint8_t>(threads)));
        // 256 blocks of one element: one chunk each, more than the 255 tasks the index type counts.
        for (std::size_t n : {std::size_t(256), std::size_t(257), std::size_t(100000)}) {
            SCOPED_TRACE(::testing::Message() << threads << " threads, n = " << n);
            auto grained = fu::with_grain(pool, n == 100000 ? 391 : 1);
            std::vector<std::atomic<int>> visits(n);
            fu::for_each(grained, visits, [](std::atomic<int> &v) { v.fetch_add(1, std::memory_order_relaxed); });
            EXPECT_TRUE(std::all_of(visits.begin(), visits.end(), [](std::atomic<int> const &v) { return v == 1; }));
            counting_range_t const iota{static_cast<std::int64_t>(n)};
            std::int64_t const count = static_cast<std::int64_t>(n); // `n * (n - 1)` overflows a 32-bit size_t
            EXPECT_EQ(fu::reduce(grained, iota), count * (count - 1) / 2);
        }
    }
}
