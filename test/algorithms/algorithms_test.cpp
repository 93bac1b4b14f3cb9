/**
 *  @file   algorithms_test.cpp
 *  @brief  Tests of `include/forkunion/algorithms/algorithms.hpp` on every pool kind (flat with `std::size_t` and
 *          `std::uint8_t` indices, colocated, distributed over this machine and over two recorded sockets), at
 *          1, 2, 3 and 8 threads, caller-inclusive and caller-exclusive:
 *  - every algorithm equals its `std::` serial counterpart at n ∈ {0, 1, g − 1, g, g + 1, large}, exactly on
 *    integers and exactly representable doubles;
 *  - floating-point reductions equal a serial evaluation of the documented rule bit for bit, and `std::accumulate`
 *    within the stated bound; scans are bitwise the same at every thread count and within the bound of `std::`;
 *  - searches make at most (first match + 1) + (T − 1) × grain predicate calls;
 *  - `stable_sort` keeps equivalent elements in order, on trivial and non-trivial types;
 *  - a busy pool (a call from inside a callback, or from a second thread while a dispatch holds it) gives the
 *    same results, computed on the calling thread.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>

#include "algorithms_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

/**  Small grains make every size cross many blocks and chunks; the default grain is checked too. */
constexpr std::size_t small_grain_k = 7;

/**  Whether two doubles are the same bits (so NaN-free results compare exactly and print readably). */
::testing::AssertionResult same_bits(double actual, double expected) {
    if (bits_of(actual) == bits_of(expected)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::hexfloat << actual << " differs from " << expected;
}

struct sum_and_max_t {
    double sum;
    double max;
};

} // namespace

template <typename config_t>
class algorithms : public ::testing::Test {};
TYPED_TEST_SUITE(algorithms, algorithm_configs);

TYPED_TEST(algorithms, reductions_equal_std_on_exact_inputs) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t) {
        for (std::size_t grain : {small_grain_k, fu::default_grain_k}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : sizes_for(grain)) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                std::vector<std::int64_t> const ints = integers(n);
                std::vector<double> const reals = exact_doubles(n);
                EXPECT_EQ(fu::reduce(grained, ints.begin(), ints.end(), std::int64_t(5)),
                          std::accumulate(ints.begin(), ints.end(), std::int64_t(5)));
                EXPECT_EQ(fu::reduce(grained, ints.begin(), ints.end()),
                          std::accumulate(ints.begin(), ints.end(), std::int64_t(0)));
                EXPECT_EQ(fu::reduce(grained, reals.begin(), reals.end(), 0.5, std::plus<>{}),
                          std::accumulate(reals.begin(), reals.end(), 0.5));
                auto square = [](std::int64_t v) noexcept { return v * v; };
                EXPECT_EQ(
                    fu::transform_reduce(grained, ints.begin(), ints.end(), std::int64_t(0), std::plus<>{}, square),
                    std::transform_reduce(ints.begin(), ints.end(), std::int64_t(0), std::plus<>{}, square));
                EXPECT_EQ(fu::transform_reduce(grained, ints.begin(), ints.end(), ints.rbegin(), std::int64_t(1)),
                          std::inner_product(ints.begin(), ints.end(), ints.rbegin(), std::int64_t(1)));
                auto difference = [](double a, std::int64_t b) noexcept { return a - static_cast<double>(b); };
                EXPECT_EQ(
                    fu::transform_reduce(grained, reals.begin(), reals.end(), ints.begin(), 0.0, std::plus<>{},
                                         difference),
                    std::transform_reduce(reals.begin(), reals.end(), ints.begin(), 0.0, std::plus<>{}, difference));
                auto negative = [](std::int64_t v) { return v < 0; }; // not noexcept, on purpose
                EXPECT_EQ(fu::count_if(grained, ints.begin(), ints.end(), negative),
                          std::count_if(ints.begin(), ints.end(), negative));
                // Values from a small set, so equal elements abound: the first of equals must win.
                std::vector<std::int64_t> const few = integers(n, 5);
                EXPECT_EQ(fu::min_element(grained, few.begin(), few.end()), std::min_element(few.begin(), few.end()));
                EXPECT_EQ(fu::max_element(grained, few.begin(), few.end()), std::max_element(few.begin(), few.end()));
                EXPECT_EQ(fu::min_element(grained, few.begin(), few.end(), std::greater<>{}),
                          std::min_element(few.begin(), few.end(), std::greater<>{}));
                EXPECT_EQ(fu::max_element(grained, reals.begin(), reals.end(), std::less<>{}),
                          std::max_element(reals.begin(), reals.end(), std::less<>{}));
            }
        }
    });
}

TYPED_TEST(algorithms, several_values_reduce_in_one_pass) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t) {
        for (std::size_t n : sizes_for(fu::default_grain_k)) {
            SCOPED_TRACE(::testing::Message() << "n = " << n);
            std::vector<double> const x = exact_doubles(n);
            double const lowest = -std::numeric_limits<double>::infinity();
            // A struct: the sum and the max.
            auto combine = [](sum_and_max_t a, sum_and_max_t b) noexcept {
                return sum_and_max_t{a.sum + b.sum, a.max < b.max ? b.max : a.max};
            };
            auto spread = [](double v) noexcept { return sum_and_max_t{v, v}; };
            sum_and_max_t const both =
                fu::transform_reduce(pool, x.begin(), x.end(), sum_and_max_t{0.0, lowest}, combine, spread);
            EXPECT_EQ(both.sum, std::accumulate(x.begin(), x.end(), 0.0));
            EXPECT_EQ(both.max, n ? *std::max_element(x.begin(), x.end()) : lowest);
            // A tuple: the count of negatives, the min and the sum of squares.
            using triple_t = std::tuple<std::size_t, double, double>;
            auto per_value = [](double v) noexcept { return triple_t{v < 0 ? 1 : 0, v, v * v}; };
            auto merge = [](triple_t const &a, triple_t const &b) noexcept {
                return triple_t{std::get<0>(a) + std::get<0>(b), std::min(std::get<1>(a), std::get<1>(b)),
                                std::get<2>(a) + std::get<2>(b)};
            };
            auto const [negatives, smallest, squares] = fu::transform_reduce(
                pool, x.begin(), x.end(), triple_t{0, std::numeric_limits<double>::infinity(), 0.0}, merge, per_value);
            EXPECT_EQ(negatives,
                      static_cast<std::size_t>(std::count_if(x.begin(), x.end(), [](double v) { return v < 0; })));
            EXPECT_EQ(smallest, n ? *std::min_element(x.begin(), x.end()) : std::numeric_limits<double>::infinity());
            EXPECT_EQ(squares, std::inner_product(x.begin(), x.end(), x.begin(), 0.0));
        }
    });
}

TYPED_TEST(algorithms, floating_point_reductions_follow_the_documented_rule) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t) {
        for (std::size_t grain : {small_grain_k, std::size_t(1000), fu::default_grain_k}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : sizes_for(grain)) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                std::vector<double> const x = general_doubles(n);
                auto load = [&](std::size_t i) { return x[i]; };
                double const expected = rule_reduce(n, grain, 0.25, load, std::plus<>{});
                double const ours = fu::reduce(grained, x.begin(), x.end(), 0.25, std::plus<>{});
                EXPECT_TRUE(same_bits(ours, expected));
                double magnitude = 0.25;
                for (double v : x) magnitude += std::fabs(v);
                double const serial = std::accumulate(x.begin(), x.end(), 0.25);
                EXPECT_LE(std::fabs(ours - serial), sum_bound(n, grain, magnitude));
                auto doubled = [](double v) noexcept { return 2 * v; };
                auto doubled_load = [&](std::size_t i) { return 2 * x[i]; };
                EXPECT_TRUE(same_bits(fu::transform_reduce(grained, x.begin(), x.end(), 0.0, std::plus<>{}, doubled),
                                      rule_reduce(n, grain, 0.0, doubled_load, std::plus<>{})));
                // A 16-byte value gets 4 lanes, not 16: its sum rounds in another order than the `double` sum's.
                static_assert(fu::reduction_lanes_for_k<sum_and_max_t> == 4 && fu::reduction_lanes_for_k<double> == 16);
                auto combine = [](sum_and_max_t a, sum_and_max_t b) noexcept {
                    return sum_and_max_t{a.sum + b.sum, a.max < b.max ? b.max : a.max};
                };
                auto spread = [](double v) noexcept { return sum_and_max_t{v, v}; };
                auto spread_load = [&](std::size_t i) { return spread(x[i]); };
                sum_and_max_t const init{0.25, -1.0};
                sum_and_max_t const both = fu::transform_reduce(grained, x.begin(), x.end(), init, combine, spread);
                sum_and_max_t const rule = rule_reduce(n, grain, init, spread_load, combine);
                EXPECT_TRUE(same_bits(both.sum, rule.sum));
                EXPECT_TRUE(same_bits(both.max, rule.max));
                EXPECT_LE(std::fabs(both.sum - serial), sum_bound(n, grain, magnitude, 4));
            }
        }
    });
}

TYPED_TEST(algorithms, searches_find_the_first_match) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t) {
        for (std::size_t grain : {small_grain_k, fu::default_grain_k}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : sizes_for(grain)) {
                std::vector<std::size_t> values(n);
                std::iota(values.begin(), values.end(), std::size_t(0));
                // Matches at the edges of blocks and of the range, in the middle, twice, and nowhere.
                for (std::size_t match : {std::size_t(0), grain - 1, grain, grain + 1, n / 2, n - 1, n}) {
                    SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain << ", match " << match);
                    auto at_or_after = [match](std::size_t v) { return v >= match && v % 3 == match % 3; };
                    EXPECT_EQ(fu::find_if(grained, values.begin(), values.end(), at_or_after),
                              std::find_if(values.begin(), values.end(), at_or_after));
                    EXPECT_EQ(fu::any_of(grained, values.begin(), values.end(), at_or_after),
                              std::any_of(values.begin(), values.end(), at_or_after));
                    EXPECT_EQ(fu::none_of(grained, values.begin(), values.end(), at_or_after),
                              std::none_of(values.begin(), values.end(), at_or_after));
                    auto before = [match](std::size_t v) { return v < match; };
                    EXPECT_EQ(fu::all_of(grained, values.begin(), values.end(), before),
                              std::all_of(values.begin(), values.end(), before));
                }
            }
        }
    });
}

TYPED_TEST(algorithms, searches_stop_within_the_predicate_call_bound) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t threads) {
        std::size_t const grain = 64, n = 200 * grain;
        std::vector<std::size_t> values(n);
        std::iota(values.begin(), values.end(), std::size_t(0));
        auto grained = fu::with_grain(pool, grain);
        for (int round = 0; round != 4; ++round)
            for (std::size_t match : {std::size_t(0), grain - 1, 5 * grain + 3, 77 * grain, n - 1, n}) {
                SCOPED_TRACE(::testing::Message() << "match at " << match << ", round " << round);
                std::atomic<std::size_t> calls{0};
                auto counted = [&](std::size_t v) noexcept {
                    calls.fetch_add(1, std::memory_order_relaxed);
                    return v == match;
                };
                std::size_t const bound = match == n ? n : (match + 1) + (threads - 1) * grain;
                EXPECT_EQ(fu::find_if(grained, values.begin(), values.end(), counted) - values.begin(),
                          static_cast<std::ptrdiff_t>(match));
                EXPECT_LE(calls.load(), bound) << "find_if";
                if (match == n) {
                    EXPECT_EQ(calls.load(), n) << "no match: every element is tested once";
                }
                calls.store(0);
                EXPECT_EQ(fu::any_of(grained, values.begin(), values.end(), counted), match != n);
                EXPECT_LE(calls.load(), bound) << "any_of";
                calls.store(0);
                EXPECT_EQ(fu::all_of(grained, values.begin(), values.end(), [&](std::size_t v) { return !counted(v); }),
                          match == n);
                EXPECT_LE(calls.load(), bound) << "all_of";
            }
    });
}

TYPED_TEST(algorithms, element_wise_loops_visit_each_element_once) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t) {
        for (std::size_t grain : {small_grain_k, fu::default_grain_k}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : sizes_for(grain)) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                std::vector<std::atomic<unsigned>> visits(n);
                fu::for_each(grained, visits.begin(), visits.end(),
                             [](std::atomic<unsigned> &v) noexcept { v.fetch_add(1, std::memory_order_relaxed); });
                EXPECT_EQ(std::count_if(visits.begin(), visits.end(), [](auto const &v) { return v.load() != 1; }), 0);
                std::vector<std::int64_t> const ints = integers(n);
                std::vector<std::int64_t> ours(n), theirs(n);
                auto triple = [](std::int64_t v) noexcept { return 3 * v + 1; };
                EXPECT_EQ(fu::transform(grained, ints.begin(), ints.end(), ours.begin(), triple), ours.end());
                std::transform(ints.begin(), ints.end(), theirs.begin(), triple);
                EXPECT_EQ(ours, theirs);
                std::vector<std::int64_t> in_place = ints; // `out == first` is allowed
                fu::transform(grained, in_place.begin(), in_place.end(), in_place.begin(), triple);
                EXPECT_EQ(in_place, theirs);
                EXPECT_EQ(
                    fu::transform(grained, ints.begin(), ints.end(), theirs.begin(), ours.begin(), std::minus<>{}),
                    ours.end());
                std::transform(ints.begin(), ints.end(), theirs.begin(), theirs.begin(), std::minus<>{});
                EXPECT_EQ(ours, theirs);
            }
        }
    });
}

TYPED_TEST(algorithms, scans_equal_std_and_reproduce) {
    std::vector<std::vector<double>> reference; // per (grain, n): the first pool's floating-point scan
    std::size_t shape = 0;
    for_each_pool<TypeParam>([&](auto &pool, std::size_t) {
        std::size_t slot = 0;
        for (std::size_t grain : {small_grain_k, fu::default_grain_k}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : sizes_for(grain)) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                std::vector<std::int64_t> const ints = integers(n);
                std::vector<std::int64_t> ours(n), theirs(n);
                EXPECT_EQ(fu::inclusive_scan(grained, ints.begin(), ints.end(), ours.begin()), ours.end());
                std::inclusive_scan(ints.begin(), ints.end(), theirs.begin());
                EXPECT_EQ(ours, theirs) << "inclusive";
                fu::inclusive_scan(grained, ints.begin(), ints.end(), ours.begin(), std::plus<>{}, std::int64_t(-9));
                std::inclusive_scan(ints.begin(), ints.end(), theirs.begin(), std::plus<>{}, std::int64_t(-9));
                EXPECT_EQ(ours, theirs) << "inclusive with init";
                EXPECT_EQ(fu::exclusive_scan(grained, ints.begin(), ints.end(), ours.begin(), std::int64_t(4)),
                          ours.end());
                std::exclusive_scan(ints.begin(), ints.end(), theirs.begin(), std::int64_t(4));
                EXPECT_EQ(ours, theirs) << "exclusive";
                // Associative but not commutative: 2x2 integer matrices packed as a quadruple (mod 2^64).
                using matrix_t = std::array<std::uint64_t, 4>;
                auto product = [](matrix_t const &a, matrix_t const &b) noexcept {
                    return matrix_t{a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                                    a[2] * b[1] + a[3] * b[3]};
                };
                std::vector<matrix_t> matrices(n);
                for (std::size_t i = 0; i < n; ++i) matrices[i] = {mix(i) % 5, 1, 1, mix(i + n) % 3};
                std::vector<matrix_t> ours_m(n), theirs_m(n);
                fu::exclusive_scan(grained, matrices.begin(), matrices.end(), ours_m.begin(), matrix_t{1, 0, 0, 1},
                                   product);
                std::exclusive_scan(matrices.begin(), matrices.end(), theirs_m.begin(), matrix_t{1, 0, 0, 1}, product);
                EXPECT_EQ(ours_m, theirs_m) << "exclusive, non-commutative";
                std::vector<matrix_t> expected_m(n);
                std::inclusive_scan(matrices.begin(), matrices.end(), expected_m.begin(), product);
                fu::inclusive_scan(grained, matrices.begin(), matrices.end(), matrices.begin(), product); // in place
                EXPECT_EQ(matrices, expected_m) << "inclusive, in place, non-commutative";
                // Floating point: within the bound of std::, and the same bits at every thread count and pool.
                std::vector<double> const x = general_doubles(n);
                std::vector<double> ours_x(n), theirs_x(n);
                fu::inclusive_scan(grained, x.begin(), x.end(), ours_x.begin());
                std::inclusive_scan(x.begin(), x.end(), theirs_x.begin());
                double magnitude = 0;
                for (std::size_t i = 0; i < n; ++i) {
                    magnitude += std::fabs(x[i]);
                    if (!(std::fabs(ours_x[i] - theirs_x[i]) <= sum_bound(i + 1, grain, magnitude))) {
                        ADD_FAILURE() << "element " << i << ": " << ours_x[i] << " against " << theirs_x[i];
                        break;
                    }
                }
                if (shape == 0)
                    reference.push_back(ours_x);
                else
                    EXPECT_TRUE(std::equal(ours_x.begin(), ours_x.end(), reference[slot].begin(),
                                           [](double a, double b) { return bits_of(a) == bits_of(b); }))
                        << "the scan differs from the first shape's";
                ++slot;
            }
        }
        ++shape;
    });
}

TYPED_TEST(algorithms, sorts_equal_std_and_stable_sort_is_stable) {
    for_each_pool<TypeParam>([](auto &pool, std::size_t) {
        for (std::size_t grain : {small_grain_k, std::size_t(100), fu::default_grain_k}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : sizes_for(grain)) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                std::vector<double> ours = general_doubles(n), theirs = ours;
                fu::sort(grained, ours.begin(), ours.end());
                std::sort(theirs.begin(), theirs.end());
                EXPECT_EQ(ours, theirs) << "sort";
                std::vector<std::int64_t> ints = integers(std::min<std::size_t>(n, 100000), 50), sorted_ints = ints;
                fu::sort(grained, ints.begin(), ints.end(), std::greater<>{});
                std::sort(sorted_ints.begin(), sorted_ints.end(), std::greater<>{});
                EXPECT_EQ(ints, sorted_ints) << "sort, descending, many equal";
                // Stability: keys with many repeats, tagged by their input position.
                std::vector<std::pair<int, std::size_t>> tagged(n);
                for (std::size_t i = 0; i < n; ++i) tagged[i] = {static_cast<int>(mix(i) % 31), i};
                auto by_key = [](auto const &a, auto const &b) { return a.first < b.first; };
                std::vector<std::pair<int, std::size_t>> expected = tagged;
                std::stable_sort(expected.begin(), expected.end(), by_key);
                fu::stable_sort(grained, tagged.begin(), tagged.end(), by_key);
                EXPECT_EQ(tagged, expected) << "stable_sort: equal keys keep their input order";
            }
            // A type whose moves leave something behind: long strings, heap-allocated.
            std::size_t const n = std::min<std::size_t>(large_k, 5000);
            std::vector<std::string> words(n);
            for (std::size_t i = 0; i < n; ++i) words[i] = std::to_string(mix(i) % 997) + " is longer than SSO holds";
            std::vector<std::string> ours = words, theirs = words;
            fu::stable_sort(grained, ours.begin(), ours.end());
            std::stable_sort(theirs.begin(), theirs.end());
            EXPECT_EQ(ours, theirs) << "stable_sort of strings";
            ours = words, theirs = words;
            fu::sort(grained, ours.begin(), ours.end());
            std::sort(theirs.begin(), theirs.end());
            EXPECT_EQ(ours, theirs) << "sort of strings";
        }
    });
}

TYPED_TEST(algorithms, a_busy_pool_gives_the_same_results_on_the_caller) {
    using pool_t = typename TypeParam::pool_t;
    using index_t = typename pool_t::index_t;
    std::size_t const n = std::min<std::size_t>(large_k, 100000), grain = 1000;
    std::vector<double> const x = general_doubles(n);
    std::vector<std::int64_t> const ints = integers(n);
    auto load = [&](std::size_t i) { return x[i]; };
    double const expected_sum = rule_reduce(n, grain, 0.0, load, std::plus<>{});
    std::vector<std::int64_t> expected_scan(n), expected_sorted = ints;
    std::inclusive_scan(ints.begin(), ints.end(), expected_scan.begin());
    std::sort(expected_sorted.begin(), expected_sorted.end());
    std::size_t const expected_first = static_cast<std::size_t>(
        std::find_if(ints.begin(), ints.end(), [](std::int64_t v) { return v == 999; }) - ints.begin());

    // Runs every algorithm on `pool` from the calling thread and reports how many results were wrong, and how
    // many `for_each` callbacks ran on another thread than the caller.
    struct outcome_t {
        std::size_t wrong = 0;
        std::size_t elsewhere = 0;
    };
    auto run_all = [&](pool_t &pool) noexcept {
        outcome_t outcome;
        auto grained = fu::with_grain(pool, grain);
        outcome.wrong += bits_of(fu::reduce(grained, x.begin(), x.end(), 0.0, std::plus<>{})) != bits_of(expected_sum);
        auto hit = fu::find_if(grained, ints.begin(), ints.end(), [](std::int64_t v) noexcept { return v == 999; });
        outcome.wrong += static_cast<std::size_t>(hit - ints.begin()) != expected_first;
        outcome.wrong += fu::count_if(grained, ints.begin(), ints.end(), [](std::int64_t v) noexcept {
                             return v < 0;
                         }) != std::count_if(ints.begin(), ints.end(), [](std::int64_t v) { return v < 0; });
        std::vector<std::int64_t> scanned(n), sorted = ints;
        fu::inclusive_scan(grained, ints.begin(), ints.end(), scanned.begin());
        outcome.wrong += scanned != expected_scan;
        fu::sort(grained, sorted.begin(), sorted.end());
        outcome.wrong += sorted != expected_sorted;
        std::thread::id const caller = std::this_thread::get_id();
        std::atomic<std::size_t> elsewhere{0};
        fu::for_each(grained, ints.begin(), ints.end(), [&](std::int64_t) noexcept {
            if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1, std::memory_order_relaxed);
        });
        outcome.elsewhere = elsewhere.load();
        return outcome;
    };

    for_each_pool<TypeParam>([&](pool_t &pool, std::size_t threads) {
        outcome_t const free = run_all(pool);
        EXPECT_EQ(free.wrong, 0u) << "an idle pool";
        // From inside a callback of the same pool: thread 1 (never allowed to fork) runs everything there.
        if (threads >= 2) {
            outcome_t nested;
            forkunion::testing::require_ran(pool.for_threads([&](index_t thread) noexcept {
                                                    if (thread == 1) nested = run_all(pool);
                                                })
                                                .join());
            EXPECT_EQ(nested.wrong, 0u) << "from inside a callback";
            EXPECT_EQ(nested.elsewhere, 0u) << "a refused dispatch runs on the calling thread alone";
        }
        // From a second thread while a dispatch holds the pool.
        if (forkunion::testing::spawnable_threads() < 2) return; // a build without threads has no second thread
        std::atomic<bool> release{false};
        auto blocker = [&](index_t) noexcept {
            (void)eventually([&] { return release.load(std::memory_order_acquire); });
        };
        auto const held = pool.unsafe_for_threads(blocker);
        ASSERT_NE(held, 0u);
        outcome_t racing;
        std::thread([&] { racing = run_all(pool); }).join();
        release.store(true, std::memory_order_release);
        pool.unsafe_join(held);
        EXPECT_EQ(racing.wrong, 0u) << "from a second thread while the pool is busy";
        EXPECT_EQ(racing.elsewhere, 0u) << "the busy pool's threads ran none of it";
    });
}

// ---- Properties that do not depend on the pool kind ----

TEST(algorithms_reproducibility, a_large_double_sum_is_bitwise_identical_everywhere) {
    std::size_t const n = 10 * large_k; // 10^7 in release builds
    std::vector<double> const x = general_doubles(n, 7);
    auto load = [&](std::size_t i) { return x[i]; };
    double const expected = rule_reduce(n, fu::default_grain_k, 0.0, load, std::plus<>{});
    std::vector<std::uint64_t> seen;
    auto check = [&](auto &pool, char const *kind, std::size_t threads) {
        double const sum = fu::reduce(pool, x.begin(), x.end(), 0.0);
        EXPECT_TRUE(same_bits(sum, expected)) << kind << " pool, " << threads << " threads";
        seen.push_back(bits_of(sum));
    };
    for (std::size_t threads : algorithm_thread_counts()) {
        fu::flat_pool_t flat;
        ASSERT_TRUE(flat.spawn(threads));
        check(flat, "flat", threads);
        fu::colocated_pool_t colocated;
        ASSERT_TRUE(colocated.spawn_on(live_topology(), 0, threads));
        check(colocated, "colocated", threads);
        if (threads >= 2) {
            fu::distributed_pool_t distributed;
            fu::thread_placement_t placement;
            placement.name = nullptr;
            ASSERT_TRUE(distributed.spawn(recorded_two_domains(), threads, fu::caller_inclusive_k, placement));
            check(distributed, "distributed (2 domains)", threads);
        }
    }
    fu::flat_pool_t unspawned; // refuses every dispatch: the calling thread alone
    check(unspawned, "unspawned", 0);
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(std::unique(seen.begin(), seen.end()) - seen.begin(), 1) << "one bit pattern across every run";
    std::printf("[ reproducible ] the sum of %zu doubles is %a in all %zu runs (1, 2, 3 and 8 threads; flat, "
                "colocated, distributed over 2 domains; unspawned)\n",
                n, expected, seen.size());
}

TEST(algorithms_contract, grain_zero_means_the_default) {
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(forkunion::testing::spawnable_up_to(2)));
    EXPECT_EQ(fu::with_grain(pool, 0).grain(), fu::default_grain_k);
    std::vector<double> const x = general_doubles(3 * fu::default_grain_k + 5);
    EXPECT_TRUE(same_bits(fu::reduce(fu::with_grain(pool, 0), x.begin(), x.end(), 0.0),
                          fu::reduce(pool, x.begin(), x.end(), 0.0)));
}

TEST(algorithms_contract, the_grain_changes_the_grouping_only) {
    // Integers: any grouping gives the same answer; doubles: each grain has its own (documented) answer.
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(forkunion::testing::spawnable_up_to(3)));
    std::vector<std::int64_t> const ints = integers(100000);
    std::vector<double> const x = general_doubles(100000);
    std::int64_t const expected = std::accumulate(ints.begin(), ints.end(), std::int64_t(0));
    for (std::size_t grain : {1, 2, 3, 16, 17, 255, 256, 257, 4096, 100000, 1000000}) {
        SCOPED_TRACE(::testing::Message() << "grain " << grain);
        EXPECT_EQ(fu::reduce(fu::with_grain(pool, grain), ints.begin(), ints.end()), expected);
        auto load = [&](std::size_t i) { return x[i]; };
        EXPECT_TRUE(same_bits(fu::reduce(fu::with_grain(pool, grain), x.begin(), x.end(), 0.0),
                              rule_reduce(x.size(), grain, 0.0, load, std::plus<>{})));
    }
}

TEST(algorithms_contract, a_throwing_callable_reaches_the_caller) {
    auto throwing = [](double a, double b) -> double {
        if (a + b > 100) throw std::runtime_error("thrown from a reduction");
        return a + b;
    };
    std::vector<double> const x(100000, 1.0);
    fu::flat_pool_t pool;
    // Unspawned: the call runs on the calling thread; then spawned: the throw happens on a worker or here.
    for (bool spawned : {false, true}) {
        SCOPED_TRACE(spawned ? "spawned pool" : "unspawned pool");
        if (spawned) {
            ASSERT_TRUE(pool.spawn(std::min<std::size_t>(2, forkunion::testing::spawnable_threads())));
        }
        try {
            (void)fu::reduce(pool, x.begin(), x.end(), 0.0, throwing);
            ADD_FAILURE() << "no exception reached the caller";
        } catch (std::runtime_error const &error) {
            EXPECT_STREQ(error.what(), "thrown from a reduction");
        }
    }
}
