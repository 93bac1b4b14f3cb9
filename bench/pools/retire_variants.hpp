/**
 *  @file   retire_variants.hpp
 *  @brief  The flat pool's retirement variants that the hand-off model and the retirement timing compare, and
 *          the critical path each one's tree shape implies.
 *
 *  - `tree`: `include/forkunion/pools/flat.hpp` as shipped: contributor t > 0 reports to (t - 1) / F, F =
 *    `retire_fan_in_k`, and each parent waits for its children from the first to the last;
 *  - `last_child_first`: the same tree, each parent waiting for its children from the last to the first;
 *  - `flat_fan_in`: F = 4096, so the root waits for every contributor itself.
 *  Each variant is the shipped pool with another `retirement_type_` (`retirement_t` below, in the variant's
 *  namespace); each variant's translation units define the objects declared here in `forkunion::bench::<variant>`.
 *
 *  The critical path of the fan-in, in line transfers, from the shape alone: every slice ends at time 0, a
 *  parent waits for one child at a time (a spin on one word does not start the load of the next), and a
 *  transfer takes one step. So a parent's clock, folding its children c in the order it waits for them, is
 *  clock = max(clock, finish(c)) + 1 from 0, and finish(leaf) = 0. A single shared counter instead serializes
 *  T - 1 transfers.
 */
#pragma once
#include <algorithm> // `std::min`, `std::max`
#include <chrono>    // `std::chrono::nanoseconds`
#include <cstddef>   // `std::size_t`
#include <cstdint>   // `std::uint64_t`
#include <vector>    // `std::vector`

#include <forkunion/pools/retirement.hpp>

#include "handoff_atomic.hpp"

namespace forkunion::bench {

/**  When contributor `node` has seen its whole subtree retire (see the file comment). */
inline std::uint64_t subtree_finish(std::size_t node, std::size_t threads, std::size_t fan_in, child_order_t order) {
    std::size_t const first = node * fan_in + 1;
    std::size_t const last = std::min(first + fan_in, threads); // children: [first, last)
    std::uint64_t clock = 0;
    for (std::size_t step = 0; first + step < last; ++step) {
        std::size_t const child = order == child_order_t::first_to_last_k ? first + step : last - 1 - step;
        clock = std::max(clock, subtree_finish(child, threads, fan_in, order)) + 1;
    }
    return clock;
}

/**
 *  The fan-in's critical path of a dispatch of `threads` contributors: the root's finish, and on caller-exclusive
 *  pools two more transfers, the claim line to the root (worker 0, which releases the pool) and back to the caller.
 */
inline std::uint64_t retirement_critical_path(std::size_t threads, std::size_t fan_in, child_order_t order,
                                              bool exclusive) {
    return subtree_finish(0, threads, fan_in, order) + (exclusive ? 2 : 0);
}

/**  One model run of one pool: a fresh spawn, warm-up, then two counted dispatches of each loop. */
struct handoff_counts_t {
    handoff_tally_t for_n, for_threads;
    handoff_tally_t for_n_shared_counter; ///< `for_n` whose body increments one shared word: T transfers more
    bool spawned = false, accepted = true, steady = true; ///< spawn, no refusal, equal consecutive dispatches
    friend bool operator==(handoff_counts_t const &, handoff_counts_t const &) = default;
};

/**  Padding of the model pool: the library's default (lines counted by it), or 64 bytes (counted by 64). */
enum class padding_t { default_k, hardware_line_k };

/**  What a variant's model translation unit (`handoff_model.cpp`, built with the test hooks) exports. */
struct handoff_variant_t {
    std::size_t fan_in; ///< the variant's `retire_fan_in_k`
    /**  Counts the hand-offs of `threads` contributors of a `std::uint8_t` pool of this variant under the model. */
    handoff_counts_t (*count)(padding_t padding, std::size_t threads, bool exclusive);
};

/**  What a variant's timing translation unit (`retire_pool.cpp`, a release build of the pool) exports. */
struct retire_variant_t {
    std::size_t fan_in; ///< the variant's `retire_fan_in_k`
    /**  Spawns a spinning caller-inclusive pool of `threads` (`std::size_t` indices, default padding), dispatches
     *   for `warmup`, then times `for_n(threads)` of an empty body in batches for `window`: nanoseconds per
     *   dispatch, one value per batch; empty if the pool did not spawn or refused a dispatch. */
    std::vector<double> (*time_for_n)(std::size_t threads, std::chrono::nanoseconds warmup,
                                      std::chrono::nanoseconds window);
};

namespace tree {
using retirement_t = retirement_tree_t<>;
extern handoff_variant_t const handoff_variant;
extern retire_variant_t const retire_variant;
} // namespace tree
namespace last_child_first {
using retirement_t = retirement_tree_t<tree::retirement_t::fan_in_k, child_order_t::last_to_first_k>;
extern handoff_variant_t const handoff_variant;
extern retire_variant_t const retire_variant;
} // namespace last_child_first
namespace flat_fan_in {
using retirement_t = retirement_tree_t<4096>;
extern handoff_variant_t const handoff_variant;
extern retire_variant_t const retire_variant;
} // namespace flat_fan_in

} // namespace forkunion::bench
