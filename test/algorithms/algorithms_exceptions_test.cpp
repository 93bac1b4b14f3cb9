/**
 *  @file   algorithms_exceptions_test.cpp
 *  @brief  User functions that throw, in every algorithm of `include/forkunion/algorithms/`: a comparator, an
 *          operation, a transform or a predicate throws at a random call (so on whichever thread makes that call),
 *          at 1 to 4 threads and on a `std::uint8_t` pool. The exception's type and message must reach the
 *          caller, after every worker finished, with nothing leaked (ASan in sanitized builds), no
 *          `std::terminate`, a sort's range still a permutation of its input, and the pool usable afterwards.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>

#include "algorithms_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

namespace {

/**  Throws `std::runtime_error("trap at call K")` from its K-th call, whichever thread makes it; counts calls. */
struct trap_t {
    std::atomic<std::size_t> calls{0};
    std::size_t at = std::numeric_limits<std::size_t>::max();
    void hit() {
        if (calls.fetch_add(1, std::memory_order_relaxed) == at)
            throw std::runtime_error("trap at call " + std::to_string(at));
    }
};

/**  Strings longer than the small-string buffer: a lost or doubled one shows under ASan and in the multiset. */
std::vector<std::string> strings(std::size_t n, std::uint64_t seed) {
    std::vector<std::string> values(n);
    for (std::size_t i = 0; i < n; ++i)
        values[i] = std::to_string(mix(seed + i) % 997) + " is a string longer than the SSO buffer";
    return values;
}

std::vector<std::string> sorted_copy(std::vector<std::string> values) {
    std::sort(values.begin(), values.end());
    return values;
}

template <typename pool_t>
void run_cases(pool_t &pool, std::size_t n, std::size_t grain) {
    auto grained = fu::with_grain(pool, grain);
    std::vector<double> const doubles = exact_doubles(n);
    std::vector<std::string> const input = strings(n, n);
    std::vector<std::string> const expected = sorted_copy(input);
    std::vector<std::string> data, out(n);
    std::vector<double> numbers(n);
    auto permutes = [&] { EXPECT_EQ(sorted_copy(data), expected) << "not a permutation of the input"; };
    auto nothing = [] {};
    auto copy_in = [&] { data = input; };

    auto check = [&](char const *name, auto run, auto after) {
        SCOPED_TRACE(name);
        // A dry run counts the calls (the algorithms are deterministic: the same n and grain make the same calls).
        trap_t dry;
        copy_in();
        run(dry);
        std::size_t const calls = dry.calls.load();
        if (calls == 0) return; // nothing to throw from (a sort or an extreme of one element)
        for (std::uint64_t seed = 0; seed != 6; ++seed) {
            trap_t trap;
            trap.at = seed == 0 ? 0 : seed == 1 ? calls - 1 : mix(seed * 7777 + n) % calls;
            SCOPED_TRACE(::testing::Message() << "throws at call " << trap.at << " of " << calls);
            copy_in();
            bool caught = false;
            try {
                run(trap);
            } catch (std::runtime_error const &error) {
                caught = true;
                EXPECT_EQ(std::string(error.what()), "trap at call " + std::to_string(trap.at));
            }
            EXPECT_TRUE(caught) << "the exception did not reach the caller";
            after();
        }
        // The pool still works: a dispatch after the exceptions gives the serial result.
        EXPECT_EQ(
            fu::reduce(grained, doubles.begin(), doubles.end(), 0.0),
            rule_reduce<double>(
                n, grain, 0.0, [&](std::size_t i) { return doubles[i]; }, [](double a, double b) { return a + b; }));
    };

    check(
        "for_each",
        [&](trap_t &t) { fu::for_each(grained, data.begin(), data.end(), [&](std::string &) { t.hit(); }); }, nothing);
    check(
        "transform",
        [&](trap_t &t) {
            fu::transform(grained, data.begin(), data.end(), out.begin(), [&](std::string const &s) {
                t.hit();
                return s + "!";
            });
        },
        nothing);
    check(
        "transform of two ranges",
        [&](trap_t &t) {
            fu::transform(grained, doubles.begin(), doubles.end(), doubles.begin(), numbers.begin(),
                          [&](double a, double b) {
                              t.hit();
                              return a * b;
                          });
        },
        nothing);
    check(
        "reduce of strings",
        [&](trap_t &t) {
            (void)fu::reduce(grained, data.begin(), data.end(), std::string(), [&](std::string a, std::string b) {
                t.hit();
                return a.size() < b.size() ? b : a;
            });
        },
        nothing);
    check(
        "transform_reduce, the transform throws",
        [&](trap_t &t) {
            (void)fu::transform_reduce(grained, doubles.begin(), doubles.end(), 0.0, std::plus<double>(),
                                       [&](double x) {
                                           t.hit();
                                           return x * 2;
                                       });
        },
        nothing);
    check(
        "transform_reduce of two ranges",
        [&](trap_t &t) {
            (void)fu::transform_reduce(
                grained, doubles.begin(), doubles.end(), doubles.begin(), 0.0,
                [&](double a, double b) {
                    t.hit();
                    return a + b;
                },
                std::multiplies<double>());
        },
        nothing);
    check(
        "count_if",
        [&](trap_t &t) {
            (void)fu::count_if(grained, doubles.begin(), doubles.end(), [&](double x) {
                t.hit();
                return x > 0;
            });
        },
        nothing);
    auto trapped_less = [](trap_t &t) {
        return [&t](auto const &a, auto const &b) {
            t.hit();
            return a < b;
        };
    };
    check(
        "min_element", [&](trap_t &t) { (void)fu::min_element(grained, data.begin(), data.end(), trapped_less(t)); },
        nothing);
    check(
        "max_element", [&](trap_t &t) { (void)fu::max_element(grained, data.begin(), data.end(), trapped_less(t)); },
        nothing);
    // The searches' predicates never match, so every call is made whatever the schedule.
    auto never = [](trap_t &t) {
        return [&t](auto const &) {
            t.hit();
            return false;
        };
    };
    check(
        "find_if", [&](trap_t &t) { (void)fu::find_if(grained, data.begin(), data.end(), never(t)); }, nothing);
    check(
        "any_of", [&](trap_t &t) { (void)fu::any_of(grained, data.begin(), data.end(), never(t)); }, nothing);
    check(
        "none_of", [&](trap_t &t) { (void)fu::none_of(grained, data.begin(), data.end(), never(t)); }, nothing);
    check(
        "all_of",
        [&](trap_t &t) {
            (void)fu::all_of(grained, data.begin(), data.end(), [&](std::string const &) {
                t.hit();
                return true;
            });
        },
        nothing);
    auto concatenate = [](trap_t &t) {
        return [&t](std::string const &a, std::string const &b) {
            t.hit();
            return a.substr(0, 8) + b.substr(0, 8);
        };
    };
    check(
        "inclusive_scan",
        [&](trap_t &t) { fu::inclusive_scan(grained, data.begin(), data.end(), out.begin(), concatenate(t)); },
        nothing);
    check(
        "inclusive_scan with init",
        [&](trap_t &t) {
            fu::inclusive_scan(grained, data.begin(), data.end(), out.begin(), concatenate(t), std::string("init"));
        },
        nothing);
    check(
        "exclusive_scan in place",
        [&](trap_t &t) {
            fu::exclusive_scan(grained, data.begin(), data.end(), data.begin(), std::string("init"), concatenate(t));
        },
        nothing);
    check(
        "sort", [&](trap_t &t) { fu::sort(grained, data.begin(), data.end(), trapped_less(t)); }, permutes);
    check(
        "stable_sort", [&](trap_t &t) { fu::stable_sort(grained, data.begin(), data.end(), trapped_less(t)); },
        permutes);
}

template <typename pool_t>
void on_pools_of_1_to_4(void (*body)(pool_t &)) {
    for (std::size_t threads = 1; threads <= 4; ++threads) {
        if (!can_spawn(threads, fu::caller_inclusive_k)) continue;
        SCOPED_TRACE(::testing::Message() << threads << " threads");
        pool_t pool;
        ASSERT_TRUE(pool.spawn(static_cast<typename pool_t::index_t>(threads)));
        body(pool);
    }
}

} // namespace

TEST(algorithms_exceptions, the_first_exception_reaches_the_caller_and_sorts_permute) {
    on_pools_of_1_to_4<fu::basic_pool_t<>>(+[](fu::basic_pool_t<> &pool) {
        for (std::size_t grain : {std::size_t(7), std::size_t(64)})
            for (std::size_t n : {std::size_t(1), std::size_t(50), std::size_t(1000)}) {
                SCOPED_TRACE(::testing::Message() << "n = " << n << ", grain = " << grain);
                run_cases(pool, n, grain);
            }
    });
}

TEST(algorithms_exceptions, on_a_uint8_pool_with_more_chunks_than_tasks) {
    using u8_pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t>;
    on_pools_of_1_to_4<u8_pool_t>(+[](u8_pool_t &pool) {
        SCOPED_TRACE("n = 512, grain = 2: 256 chunks of one block in 255 tasks");
        run_cases(pool, 512, 2);
    });
}
