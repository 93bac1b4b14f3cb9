/**
 *  @file   algorithms_support.hpp
 *  @brief  What the algorithm tests share: the pool kinds they run on, the thread shapes, input generators, an
 *          independent serial evaluation of the documented reduction rule, and the floating-point error bound.
 *
 *  The reference below is written from the rule's description in `forkunion/algorithms/algorithms.hpp` (blocks, lanes, the
 *  tree as "split at the largest power of two below m, recursively"), not from its code: the header evaluates the
 *  tree level by level and chunk by chunk, so a bitwise match also checks that those are the same tree.
 */
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <forkunion/algorithms/algorithms.hpp>
#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>

#include "pools_support.hpp"
#include "test_support.hpp"

#ifndef FORKUNION_ALGORITHMS_LARGE
#define FORKUNION_ALGORITHMS_LARGE 1000000 // 10^4 in sanitized builds (set by test/algorithms/CMakeLists.txt)
#endif

namespace forkunion::testing {

/**  The large size of every property: 10^6 in release builds, 10^4 under the sanitizers. */
inline constexpr std::size_t large_k = FORKUNION_ALGORITHMS_LARGE;

// ---- Pool kinds ----

template <typename index_t>
struct flat_config {
    using pool_t = basic_pool_t<std::allocator<std::thread>, default_micro_yield_t, index_t>;
    static constexpr char const *name = "flat";
    static std::size_t minimum_threads() { return 1; }
    static status_t spawn(pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        return pool.spawn(static_cast<index_t>(threads), exclusivity);
    }
};

struct colocated_config {
    using pool_t = colocated_pool_t;
    static constexpr char const *name = "colocated";
    static std::size_t minimum_threads() { return 1; }
    static status_t spawn(pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        return pool.spawn_on(live_topology(), 0, threads, exclusivity);
    }
};

/**  A distributed pool over this machine's compute domains. */
struct distributed_config {
    using pool_t = distributed_pool_t;
    static constexpr char const *name = "distributed";
    static std::size_t minimum_threads() { return live_topology().compute_domains_count(); }
    static status_t spawn(pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        return pool.spawn(live_topology(), threads, exclusivity);
    }
};

/**  A distributed pool over a recorded two-socket machine: two domains (their pins refused here, and counted). */
struct two_domains_config {
    using pool_t = distributed_pool_t;
    static constexpr char const *name = "distributed over two recorded sockets";
    static std::size_t minimum_threads() { return 2; }
    static status_t spawn(pool_t &pool, std::size_t threads, caller_exclusivity_t exclusivity) {
        thread_placement_t placement;
        placement.name = nullptr;
        return pool.spawn(recorded_two_domains(), threads, exclusivity, placement);
    }
};

using algorithm_configs = ::testing::Types<flat_config<std::size_t>, flat_config<std::uint8_t>, colocated_config,
                                           distributed_config, two_domains_config>;

/**  Thread counts of every property: 1, 2, 3 and 8 (oversubscribed on small machines); 1 alone where the build
 *   has no threads. */
inline std::vector<std::size_t> const &algorithm_thread_counts() {
    static std::vector<std::size_t> const counts = sorted_unique_up_to({1, 2, 3, 8}, spawnable_threads());
    return counts;
}

/**  Spawns a pool of `config_t` for each thread count (at least its minimum) and exclusivity, calls
 *   `body(pool, threads)`, and terminates it. */
template <typename config_t, typename body_t>
void for_each_pool(body_t &&body) {
    for (caller_exclusivity_t exclusivity : {caller_inclusive_k, caller_exclusive_k}) {
        for (std::size_t threads : algorithm_thread_counts()) {
            if (threads < config_t::minimum_threads() || !can_spawn(threads, exclusivity)) continue;
            SCOPED_TRACE(::testing::Message() << config_t::name << " pool, " << threads << " threads, "
                                              << (exclusivity == caller_exclusive_k ? "exclusive" : "inclusive"));
            typename config_t::pool_t pool;
            status_t const spawned = config_t::spawn(pool, threads, exclusivity);
            ASSERT_TRUE(spawned) << spawned.name();
            body(pool, threads);
        }
    }
}

/**  The sizes every algorithm is checked at for grain `g`: 0, 1, g − 1, g, g + 1, and the large size for the
 *   default grain (~10^4 for smaller grains, which already cross hundreds of blocks and every chunk shape). */
inline std::vector<std::size_t> sizes_for(std::size_t grain) {
    std::size_t const large = grain >= default_grain_k ? large_k : std::min<std::size_t>(large_k, 10007);
    return sorted_unique_up_to({0, 1, grain - 1, grain, grain + 1, large}, std::numeric_limits<std::size_t>::max());
}

// ---- Inputs ----

/**  SplitMix64's output for `counter`: the same inputs on every machine. */
constexpr std::uint64_t mix(std::uint64_t counter) noexcept {
    std::uint64_t x = (counter + 1) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/**  Doubles of both signs over ~40 binades: every addition rounds, and the order of additions shows. */
inline std::vector<double> general_doubles(std::size_t n, std::uint64_t seed = 1) {
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t const bits = mix(seed * 0x100000000ull + i);
        double const unit = static_cast<double>(bits >> 11) * 0x1p-53; // [0, 1)
        values[i] = std::ldexp(unit - 0.5, static_cast<int>(bits % 41) - 20);
    }
    return values;
}

/**  Small integers stored as doubles: every partial sum of up to 2^40 of them is exact, in any order. */
inline std::vector<double> exact_doubles(std::size_t n, std::uint64_t seed = 2) {
    std::vector<double> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<double>(static_cast<int>(mix(seed + i) % 2001) - 1000);
    return values;
}

inline std::vector<std::int64_t> integers(std::size_t n, std::uint64_t modulo = 2001, std::uint64_t seed = 3) {
    std::vector<std::int64_t> values(n);
    for (std::size_t i = 0; i < n; ++i)
        values[i] = static_cast<std::int64_t>(mix(seed + i) % modulo) - static_cast<std::int64_t>(modulo / 2);
    return values;
}

// ---- The reduction rule, evaluated serially from its description ----

/**  The tree of `leaf(first) … leaf(first + count − 1)`: split at the largest power of two below `count`. */
template <typename value_t, typename leaf_t, typename op_t>
value_t rule_tree(std::size_t first, std::size_t count, leaf_t &leaf, op_t &op) {
    if (count == 1) return leaf(first);
    std::size_t half = 1;
    while (half * 2 < count) half *= 2;
    value_t left = rule_tree<value_t>(first, half, leaf, op);
    value_t right = rule_tree<value_t>(first + half, count - half, leaf, op);
    return op(left, right);
}

/**  `init ⊕ tree(blocks)` of the values `load(0) … load(n − 1)` with blocks of `grain` and W lanes each. */
template <typename value_t, typename load_t, typename op_t>
value_t rule_reduce(std::size_t n, std::size_t grain, value_t init, load_t load, op_t op) {
    if (n == 0) return init;
    // The documented W: 16 lanes of values of 8 bytes or less, else as many as 64 bytes hold, at least 1.
    constexpr std::size_t lanes = sizeof(value_t) <= 8 ? 16 : std::max<std::size_t>(1, 64 / sizeof(value_t));
    static_assert(reduction_lanes_for_k<value_t> == lanes, "the documented rule's lane count");
    auto block = [&](std::size_t b) {
        std::size_t const first = b * grain, length = std::min(grain, n - first);
        std::vector<value_t> lane;
        for (std::size_t k = 0; k < length; ++k) {
            if (k < lanes)
                lane.push_back(load(first + k));
            else
                lane[k % lanes] = op(lane[k % lanes], load(first + k));
        }
        auto lane_leaf = [&](std::size_t j) { return lane[j]; };
        return rule_tree<value_t>(0, lane.size(), lane_leaf, op);
    };
    std::size_t const blocks = (n + grain - 1) / grain;
    return op(init, rule_tree<value_t>(0, blocks, block, op));
}

/**  Depth of the rule's evaluation of a sum with `lanes` lanes (16 for `double`s), in roundings from an input to
 *   the result (init included). */
inline double rule_depth(std::size_t n, std::size_t grain, std::size_t lanes = 16) {
    std::size_t const blocks = (n + grain - 1) / grain;
    return std::ceil(static_cast<double>(std::min(n, grain)) / static_cast<double>(lanes)) +
           std::ceil(std::log2(static_cast<double>(lanes))) + std::ceil(std::log2(blocks + 1.0)) + 1.0;
}

/**
 *  The stated bound between the rule's floating-point sum and `std::accumulate`'s: each is within
 *  depth · u · Σ|x| of the exact sum (first order, u = 2^-53), the rule's depth `rule_depth`, the left fold's n,
 *  so they differ by at most (n + depth) · u · Σ|x|, written here with a 1 % margin for the second-order terms.
 */
inline double sum_bound(std::size_t n, std::size_t grain, double magnitude_sum, std::size_t lanes = 16) {
    return 1.01 * (static_cast<double>(n) + rule_depth(n, grain, lanes)) * 0x1p-53 * magnitude_sum;
}

/**  The bits of a double, to compare results exactly (and print them). */
inline std::uint64_t bits_of(double value) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

/**  Runs `body(pool)` on flat pools of 1 to 4 threads (oversubscribed on small machines). */
template <typename body_t>
void for_threads_1_to_4(body_t &&body) {
    for (std::size_t threads = 1; threads <= 4; ++threads) {
        if (!can_spawn(threads, caller_inclusive_k)) continue;
        SCOPED_TRACE(::testing::Message() << threads << " threads");
        basic_pool_t<> pool;
        ASSERT_TRUE(pool.spawn(threads));
        body(pool);
    }
}

} // namespace forkunion::testing
