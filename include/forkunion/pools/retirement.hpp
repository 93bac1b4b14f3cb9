/**
 *  @file   forkunion/pools/retirement.hpp
 *  @brief  The shape of the flat pool's retirement tree, a template parameter of `basic_pool_t` (defaulted, as the
 *          atomic type is), so that a benchmark can build a pool with another shape beside the shipped one.
 *
 *  Contributor t > 0 reports to parent (t - 1) / F, F = `fan_in_k`; a parent waits for its children, each one's
 *  retirement word in turn, in `order_k`. The tree is fixed at spawn; pools of F + 1 contributors or fewer are flat
 *  (thread 0, the root, watches everyone). Watching F children costs F line transfers on one thread, in sequence,
 *  so a tree of fan-in F costs F · log_F(T) on its critical path. The default, 8 from the first child to the last,
 *  keeps pools of up to 9 contributors flat (no extra hop for the common case) and makes a 255-thread pool three
 *  levels deep; `bench/pools/retire.cpp` times it against a flat fan-in and against the reversed order.
 */
#pragma once
#include <cstddef> // `std::size_t`

namespace forkunion {

/**  The order in which a parent of the retirement tree waits for its children. */
enum class child_order_t { first_to_last_k, last_to_first_k };

/**
 *  @brief  A retirement tree of fan-in `fan_in_` whose parents wait for their children in `order_`.
 *  Stateless: every member is a pure function of its arguments, callable from any thread.
 */
template <std::size_t fan_in_ = 8, child_order_t order_ = child_order_t::first_to_last_k>
struct retirement_tree_t {
    static_assert(fan_in_ > 0, "a retirement tree needs a fan-in of at least 1");
    static constexpr std::size_t fan_in_k = fan_in_;
    static constexpr child_order_t order_k = order_;

    /**  The first child of contributor `thread`; its children are [first, first + F) ∩ [1, threads). */
    static constexpr std::size_t first_child(std::size_t thread) noexcept { return thread * fan_in_k + 1; }

    /**
     *  Calls `wait(child)` for every child of contributor `thread` in a pool of `threads` contributors, in
     *  `order_k`, one after the other: the serial loop the parent's retirement runs.
     */
    template <typename wait_type_>
    static void for_each_child(std::size_t thread, std::size_t threads, wait_type_ &&wait) noexcept {
        std::size_t const first = first_child(thread);
        std::size_t const last = first + fan_in_k < threads ? first + fan_in_k : threads;
        if constexpr (order_k == child_order_t::first_to_last_k)
            for (std::size_t child = first; child < last; ++child) wait(child);
        else
            for (std::size_t child = last; child-- > first;) wait(child);
    }
};

} // namespace forkunion
