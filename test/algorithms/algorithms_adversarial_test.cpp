/**
 *  @file   algorithms_adversarial_test.cpp
 *  @brief  The contracts of `include/forkunion/algorithms/algorithms.hpp` under hostile inputs:
 *  - whatever a sort's comparator answers (NaNs under `<`, random answers, always `true`, always `false`), the sort
 *    stays inside its range and leaves a permutation of its input, at sizes around the grain, the insertion runs
 *    and the merge slices, at 1 to 4 threads (meant to run under ASan, which sees any stray access);
 *  - `reduce` and `transform_reduce` with the default operations give the same bits at every thread count and
 *    grain when the data holds NaNs of different payloads, signed zeros and infinities.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>

#include "algorithms_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

/**  Sizes around the grain `g`, the 32-element insertion runs and the merge slices of `g`-sized chunks. */
std::vector<std::size_t> edge_sizes(std::size_t g) {
    std::vector<std::size_t> sizes{2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129};
    for (std::size_t m : {1, 2, 3, 5, 33})
        for (std::size_t n : {m * g - 1, m * g, m * g + 1}) sizes.push_back(n);
    sizes.push_back(std::min<std::size_t>(large_k, 4097));
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

/**  A double with the bits `bits`. */
double from_bits(std::uint64_t bits) {
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

/**  Doubles of which every fifth is a NaN (of varying payload and sign), the rest repeating keys. */
std::vector<double> doubles_with_nans(std::size_t n, std::uint64_t seed) {
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t const r = mix(seed * 1000003 + i);
        values[i] = r % 5 == 0 ? from_bits(0x7ff8000000000000ull | (r >> 8 & 0xfffff) | (r & 0x80) << 56)
                               : static_cast<double>(r % 97) - 48.0;
    }
    return values;
}

/**  The input's bit patterns, sorted: equal for two ranges exactly when one is a permutation of the other. */
std::vector<std::uint64_t> multiset_of(std::vector<double> const &values) {
    std::vector<std::uint64_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = bits_of(values[i]);
    std::sort(bits.begin(), bits.end());
    return bits;
}

/**  Answers at random, from any thread (a shared atomic counter hashed): no order at all. */
struct random_answers_t {
    std::atomic<std::uint64_t> *counter;
    template <typename value_t>
    bool operator()(value_t const &, value_t const &) const noexcept {
        return mix(counter->fetch_add(1, std::memory_order_relaxed)) & 1;
    }
};

} // namespace

TEST(algorithms_adversarial, sorts_with_any_comparator_stay_in_bounds_and_permute) {
    std::atomic<std::uint64_t> counter{0};
    for_threads_1_to_4([&](auto &pool) {
        for (std::size_t grain : {std::size_t(7), std::size_t(32), std::size_t(100)}) {
            auto grained = fu::with_grain(pool, grain);
            for (std::size_t n : edge_sizes(grain)) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                std::vector<double> const input = doubles_with_nans(n, n + grain);
                std::vector<std::uint64_t> const expected = multiset_of(input);
                auto check = [&](char const *what, auto sort_with) {
                    // Guard values around the range: a sort that writes past either end changes them.
                    std::vector<double> padded(n + 2, 12345.0);
                    std::copy(input.begin(), input.end(), padded.begin() + 1);
                    sort_with(padded.begin() + 1, padded.end() - 1);
                    EXPECT_EQ(bits_of(padded.front()), bits_of(12345.0)) << what << ": wrote before the range";
                    EXPECT_EQ(bits_of(padded.back()), bits_of(12345.0)) << what << ": wrote past the range";
                    std::vector<double> const range(padded.begin() + 1, padded.end() - 1);
                    EXPECT_EQ(multiset_of(range), expected) << what << ": not a permutation of the input";
                };
                auto less = [](double a, double b) { return a < b; };
                auto always = [](double, double) { return true; };
                auto never = [](double, double) { return false; };
                random_answers_t random{&counter};
                check("sort, NaNs under <", [&](auto f, auto l) { fu::sort(grained, f, l); });
                check("stable_sort, NaNs under <", [&](auto f, auto l) { fu::stable_sort(grained, f, l); });
                check("sort, random", [&](auto f, auto l) { fu::sort(grained, f, l, random); });
                check("stable_sort, random", [&](auto f, auto l) { fu::stable_sort(grained, f, l, random); });
                check("sort, always true", [&](auto f, auto l) { fu::sort(grained, f, l, always); });
                check("stable_sort, always true", [&](auto f, auto l) { fu::stable_sort(grained, f, l, always); });
                check("sort, always false", [&](auto f, auto l) { fu::sort(grained, f, l, never); });
                check("sort, <", [&](auto f, auto l) { fu::sort(grained, f, l, less); });
            }
        }
    });
}

TEST(algorithms_adversarial, sorts_of_strings_with_random_answers_lose_and_duplicate_nothing) {
    std::atomic<std::uint64_t> counter{0};
    for_threads_1_to_4([&](auto &pool) {
        auto grained = fu::with_grain(pool, 33);
        for (std::size_t n : edge_sizes(33)) {
            SCOPED_TRACE(::testing::Message() << "n = " << n);
            std::vector<std::string> input(n);
            for (std::size_t i = 0; i < n; ++i) input[i] = std::to_string(i) + " is longer than SSO holds";
            std::vector<std::string> expected = input;
            std::sort(expected.begin(), expected.end());
            random_answers_t random{&counter};
            for (bool stable : {false, true}) {
                std::vector<std::string> ours = input;
                if (stable)
                    fu::stable_sort(grained, ours.begin(), ours.end(), random);
                else
                    fu::sort(grained, ours.begin(), ours.end(), random);
                std::sort(ours.begin(), ours.end());
                EXPECT_EQ(ours, expected) << (stable ? "stable_sort" : "sort") << ": not a permutation";
            }
        }
    });
}

namespace {

/**  The documented default `+` and `*` on doubles: a NaN operand decides the result, the left one first, quieted. */
double quiet(double nan) {
    return from_bits(bits_of(nan) | 0x0008000000000000ull);
}
double left_nan_plus(double a, double b) {
    return a != a ? quiet(a) : b != b ? quiet(b) : a + b;
}
double left_nan_times(double a, double b) {
    return a != a ? quiet(a) : b != b ? quiet(b) : a * b;
}

/**  NaNs of two payloads and both signs, signed zeros, infinities of both signs and ordinary values. */
std::vector<double> special_doubles(std::size_t n, std::uint64_t seed) {
    double const specials[] = {from_bits(0x7ff8000000000123ull),
                               from_bits(0xfff8000000000456ull),
                               from_bits(0x7ff0000000000789ull), // signalling
                               0.0,
                               -0.0,
                               std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity(),
                               1.5,
                               -2.25};
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t const r = mix(seed * 7919 + i);
        values[i] = r % 4 == 0 ? specials[r / 4 % (sizeof specials / sizeof specials[0])] : static_cast<double>(r % 7);
    }
    return values;
}

} // namespace

TEST(algorithms_adversarial, nan_payloads_reduce_to_the_same_bits_at_every_thread_count) {
    for (std::size_t grain : {std::size_t(1), std::size_t(3), std::size_t(16), std::size_t(17), fu::default_grain_k})
        for (std::size_t n : {std::size_t(2), std::size_t(17), std::size_t(100), std::size_t(5000)})
            for (std::uint64_t seed : {1, 2, 3}) {
                std::vector<double> const x = special_doubles(n, seed), y = special_doubles(n, seed + 100);
                // Two NaNs of different payloads side by side, and the same pair swapped, in every input.
                std::vector<double> xs = x;
                xs[0] = from_bits(0x7ff8000000000123ull), xs[1] = from_bits(0xfff8000000000456ull);
                std::vector<double> sx = xs;
                std::swap(sx[0], sx[1]);
                for (std::vector<double> const *input : {&x, static_cast<std::vector<double> const *>(&xs),
                                                         static_cast<std::vector<double> const *>(&sx)}) {
                    auto const &v = *input;
                    double const sum = rule_reduce<double>(
                        n, grain, 0.0, [&](std::size_t i) { return v[i]; }, left_nan_plus);
                    double const dot = rule_reduce<double>(
                        n, grain, 0.0, [&](std::size_t i) { return left_nan_times(v[i], y[i]); }, left_nan_plus);
                    for_threads_1_to_4([&](auto &pool) {
                        SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain << ", seed " << seed);
                        auto grained = fu::with_grain(pool, grain);
                        EXPECT_EQ(bits_of(fu::reduce(grained, v.begin(), v.end(), 0.0)), bits_of(sum))
                            << std::hex << "reduce";
                        EXPECT_EQ(bits_of(fu::transform_reduce(grained, v.begin(), v.end(), y.begin(), 0.0)),
                                  bits_of(dot))
                            << std::hex << "transform_reduce (dot)";
                    });
                }
            }
}
