/**
 *  @file   forkunion/algorithms/reduce.hpp
 *  @brief  The reductions of `algorithms.hpp`: `reduce`, `transform_reduce`, `count_if`, `min_element`,
 *          `max_element`, all evaluated by one reduction rule that fixes every grouping of the operation.
 *
 *  Include `<forkunion/algorithms/algorithms.hpp>`: the contracts shared by every algorithm (grain, busy pools,
 *  exceptions, threads) are documented there; the rule is documented here.
 *
 *  @section rule The reduction rule: what `reduce`, `transform_reduce`, `count_if`, `min_element` and
 *           `max_element` compute, bit for bit
 *  Given the values x[0..n) (after the transform), of type V, the operation ⊕, the grain g ≥ 1 and
 *  W = `reduction_lanes_for_k<V>`: 16 when sizeof(V) ≤ 8, else max(1, 64 / sizeof(V)) (4 lanes of a 16-byte
 *  struct, 2 of a 32-byte one, 1 above 32 bytes):
 *    1. Blocks: block b holds x[b·g .. min((b+1)·g, n)), for b in [0, B), B = ⌈n / g⌉.
 *    2. Lanes: in a block of L values y[0..L), lane j in [0, min(W, L)) folds y[j], y[j+W], y[j+2W], … from the
 *       left: a_j = y[j], then a_j = a_j ⊕ y[j+W], then a_j = a_j ⊕ y[j+2W], … (each ⊕ takes the lane first).
 *    3. Tree of m values v[0..m): for s = 1, 2, 4, … while s < m, for i = 0, 2s, 4s, … while i + s < m:
 *       v[i] = v[i] ⊕ v[i+s]. The tree's value is v[0]. (The same tree: split at the largest power of two below
 *       m, left part ⊕ right part, recursively.)
 *    4. A block's value is the tree of its lanes a[0..min(W, L)); the result is init ⊕ (tree of the B block values).
 *       For n = 0 the result is init.
 *  The rule depends on n and g only: not on the thread count, the pool kind, the schedule, the machine or the run,
 *  so a `double` sum is bit-identical wherever each `+` rounds to `double` (IEEE-754, no `-ffast-math`, and not x87:
 *  32-bit x86 needs `-msse2 -mfpmath=sse`). W independent lane chains vectorize without reassociating anything, and
 *  W depends on the type alone, so it reproduces like everything else. The
 *  serial path (one thread, a busy pool) evaluates the same rule. The Rust crate's `sum`/`reduce` follows it too.
 *  NaNs: the default ⊕ (`+`) and ⊗ (`*`) of `reduce` and `transform_reduce` on floating-point values take a NaN
 *  left operand as the result (quieted), else a NaN right one, so NaN payloads and signs reproduce too. A
 *  caller's own `op` built on the bare `+` (`std::plus<>`) does not: IEEE-754 leaves open which NaN a sum of two
 *  NaNs carries and the compiler may swap the operands, so then only the bits of NaN-free results are promised
 *  (a NaN result stays a NaN; signed zeros and infinities are exact either way).
 *
 *  @section tasks How blocks map onto tasks
 *  A call splits its B blocks into chunks of 2^c consecutive blocks, c the smallest exponent that leaves at most
 *  `max_chunks_k` chunks (fewer for values larger than 64 bytes, see `detail::chunk_capacity`). Each chunk's blocks
 * form a subtree of the rule's tree (an aligned power-of-two run of leaves), so evaluating chunk by chunk and then the
 *  tree of the chunks' values gives the whole tree exactly, whatever c is. Chunks are the pool's tasks, taken
 *  with `for_n_dynamic`; a pool whose index type counts fewer tasks (`std::uint8_t`: 255) runs chunk k in task
 *  `k mod tasks`. Element offsets are `std::size_t`, so a `std::uint8_t` pool reduces 10^6 elements in ≤ 255
 *  tasks of 2^c blocks each. One chunk (n ≤ g) or a pool of one thread runs on the calling thread, undispatched.
 *
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <utility> // `std::move`

#include <forkunion/algorithms/chunks.hpp>

namespace forkunion {

/**
 *  @brief  The most lanes of the reduction rule: 16 independent chains per block, which values of 8 bytes or less
 *          get. Measured on Zen 5 with GCC 12 `-O3` (`bench/algorithms`, in-cache `double` sums): 16 lanes run at
 *          ~0.15 ns per element, 8 at ~0.25, 1 at ~1.8 (one dependent add chain).
 */
inline constexpr std::size_t reduction_lanes_k = 16;

/**
 *  @brief  W, the lanes of the reduction rule for values of type `value_type_`: 16 for values of 8 bytes or less,
 *          else max(1, 64 / sizeof). Either way the lanes take at most 8 of x86-64's 16 SSE registers: scalar
 *          lanes vectorize two to a register, while an aggregate's fields stay scalar, one to a register. 16 lanes
 *          of a 16-byte sum-and-max kept 32 `double`s live and GCC 12 spilled them on every element: over 5·10^7
 *          doubles at 2 threads that ran 1.19-1.33x `std::transform_reduce(par)`, 8 lanes 1.02-1.04x, 4 lanes
 *          0.99-1.02x (`docs/benchmarks.md`). Changing it changes every floating-point result of that type.
 */
template <typename value_type_>
inline constexpr std::size_t reduction_lanes_for_k = sizeof(value_type_) <= 8
                                                         ? reduction_lanes_k
                                                         : (sizeof(value_type_) > 64 ? 1 : 64 / sizeof(value_type_));

namespace detail {

// ---- Reductions ----

// GCC 12 at -O3 cannot see that every block builds its lane 0 (`count ≥ 1`) once `reduce_block` inlines two
// evaluations of it, and warns that `values[0]` may be read uninitialized; it never is.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/**  Step 3 of the rule, in place over `values[0..count)`; returns `values[0]` (moved). @pre `count ≥ 1`. */
template <typename value_type_, typename op_type_>
value_type_ combine_tree(value_type_ *values, std::size_t count, op_type_ &op) {
    for (std::size_t step = 1; step < count; step *= 2)
        for (std::size_t i = 0; i + step < count; i += 2 * step)
            values[i] = call_as<value_type_>(op, std::move(values[i]), std::move(values[i + step]));
    return std::move(values[0]);
}

/**  `fn.unordered()`, the twin of `plus_t` and `multiplies_t` (and of loads built on them), or `fn` itself. */
template <typename fn_type_>
decltype(auto) unordered_of(fn_type_ &fn) noexcept {
    if constexpr (requires { fn.unordered(); })
        return fn.unordered();
    else
        return (fn);
}

/**  A load whose values come from `exact` and, in `reduce_block`'s first try, from `fast` (see `plus_t`). */
template <typename exact_type_, typename fast_type_>
struct twin_load_t {
    exact_type_ &exact;
    fast_type_ &fast;
    decltype(auto) operator()(std::size_t i) const { return exact(i); }
    fast_type_ &unordered() const noexcept { return fast; }
};

/**  Steps 2 and 4 with the operations given. */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ reduce_lanes(std::size_t first, std::size_t count, load_type_ &load, op_type_ &op) {
    constexpr std::size_t lanes_k = reduction_lanes_for_k<value_type_>;
    uninitialized_array_t<value_type_, lanes_k> lane; // destroys the lanes built, also when `load` or `op` throws
    std::size_t const used = count < lanes_k ? count : lanes_k;
    for (std::size_t j = 0; j != used; ++j) lane.construct(j, load(first + j));
    std::size_t offset = used;
    for (; offset + lanes_k <= count; offset += lanes_k) {
        // Unrolled so that GCC's -O2 (whose cheap cost model skips this loop otherwise) vectorizes it as -O3 does;
        // 16, the most lanes, unrolls every lane count completely.
        static_assert(lanes_k <= 16, "the unroll count below covers every lane count");
#pragma GCC unroll 16
        for (std::size_t j = 0; j != lanes_k; ++j)
            lane[j] = call_as<value_type_>(op, std::move(lane[j]), load(first + offset + j));
    }
    for (std::size_t j = 0; offset + j < count; ++j)
        lane[j] = call_as<value_type_>(op, std::move(lane[j]), load(first + offset + j));
    return combine_tree(lane.data(), used, op);
}

/**
 *  Steps 2 and 4: the value of the block `[first, first + count)`. @pre `count ≥ 1`. A floating-point `op` with an
 *  `unordered()` twin (the default `+` and `*`) runs the block with the twins first, and again with `op` only
 *  when that gives a NaN: the same bits as `op` throughout, at the bare operator's speed (see `plus_t`).
 */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ reduce_block(std::size_t first, std::size_t count, load_type_ &load, op_type_ &op) {
    if constexpr (std::is_floating_point_v<value_type_> && requires { op.unordered(); }) {
        auto &&fast_load = unordered_of(load);
        auto &&fast_op = unordered_of(op);
        value_type_ const result = reduce_lanes<value_type_>(first, count, fast_load, fast_op);
        if (result == result) return result;
    }
    return reduce_lanes<value_type_>(first, count, load, op);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/**  The tree over blocks `[block, block + count)`, recursing at the largest power of two below `count`. */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ reduce_blocks(block_plan_t const &plan, std::size_t block, std::size_t count, load_type_ &load,
                          op_type_ &op) {
    if (count == 1) return reduce_block<value_type_>(plan.block_first(block), plan.elements_of(block, 1), load, op);
    std::size_t half = 1;
    while (half * 2 < count) half *= 2;
    value_type_ left = reduce_blocks<value_type_>(plan, block, half, load, op);
    return call_as<value_type_>(op, std::move(left),
                                reduce_blocks<value_type_>(plan, block + half, count - half, load, op));
}

/**
 *  The rule's tree of `load(0) … load(count − 1)` (no init), on the pool. @pre `count ≥ 1`. The first exception
 *  of `load` or `op` on any thread is rethrown here once every chunk finished; chunks not started by then are
 *  skipped, and every partial built is destroyed.
 */
template <typename value_type_, typename pool_type_, typename load_type_, typename op_type_>
value_type_ reduce_indices(target_t<pool_type_> target, std::size_t count, load_type_ &load, op_type_ &op) {
    constexpr std::size_t capacity_k = chunk_capacity<value_type_>();
    block_plan_t const plan = plan_blocks(count, target.grain, capacity_k);
    if (plan.chunks == 1 || target.pool.threads_count() <= 1)
        return reduce_blocks<value_type_>(plan, 0, plan.blocks, load, op);
    // One slot per chunk, each written once by whichever thread runs that chunk; neighbours may share a line, but
    // only one store per chunk touches it.
    uninitialized_array_t<value_type_, capacity_k> partials;
    failure_t failure;
    auto chunk = [&](std::size_t c) noexcept {
        failure.guard([&] {
            partials.construct(
                c, reduce_blocks<value_type_>(plan, plan.chunk_first_block(c), plan.chunk_blocks(c), load, op));
        });
    };
    run_chunks(target.pool, plan.chunks, chunk);
    failure.rethrow_if_failed();
    return combine_tree(partials.data(), plan.chunks, op);
}

/**
 *  The first smallest (`largest_k`: the first largest) element of `[first, last)` by `comp`, or `last`: a
 *  reduction of indices by the rule, whose step keeps the lower index unless the higher one's element is strictly
 *  smaller (larger), an associative and commutative choice.
 */
template <bool largest_k, typename pool_type_, typename iterator_type_, typename comp_type_>
iterator_type_ extreme_element(target_t<pool_type_> target, iterator_type_ first, iterator_type_ last,
                               comp_type_ &comp) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return last;
    auto load = [](std::size_t i) noexcept { return i; };
    auto pick = [&](std::size_t a, std::size_t b) {
        std::size_t const low = a < b ? a : b, high = a < b ? b : a;
        auto &&at_low = first[static_cast<difference_t>(low)];
        auto &&at_high = first[static_cast<difference_t>(high)];
        return (largest_k ? comp(at_low, at_high) : comp(at_high, at_low)) ? high : low;
    };
    return first + static_cast<difference_t>(reduce_indices<std::size_t>(target, count, load, pick));
}

} // namespace detail

// ---- Reductions: the rule of the file comment ----

/**
 *  @brief  `init ⊕ transform(first[0]) ⊕ … ⊕ transform(first[n − 1])`, grouped by the reduction rule.
 *  Serial equivalent (up to grouping): `for (i) init = op(init, transform(first[i])); return init;`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename value_type_, typename op_type_,
          typename transform_type_>
value_type_ transform_reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, value_type_ init,
                             op_type_ op, transform_type_ transform) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return init;
    auto load = [&](std::size_t i) -> value_type_ {
        return detail::call_as<value_type_>(transform, first[static_cast<difference_t>(i)]);
    };
    return detail::call_as<value_type_>(op, std::move(init),
                                        detail::reduce_indices<value_type_>(detail::target_of(pool), count, load, op));
}

/**
 *  @brief  `init ⊕ transform(first1[0], first2[0]) ⊕ …`, grouped by the reduction rule.
 *  Serial equivalent (up to grouping): `for (i) init = op(init, transform(first1[i], first2[i]));`
 */
template <pool_like pool_type_, std::random_access_iterator iterator1_type_,
          std::random_access_iterator iterator2_type_, typename value_type_, typename op_type_,
          typename transform_type_>
value_type_ transform_reduce(pool_type_ &&pool, iterator1_type_ first1, iterator1_type_ last1, iterator2_type_ first2,
                             value_type_ init, op_type_ op, transform_type_ transform) {
    using difference1_t = std::iter_difference_t<iterator1_type_>;
    using difference2_t = std::iter_difference_t<iterator2_type_>;
    std::size_t const count = detail::distance(first1, last1);
    if (count == 0) return init;
    auto load = [&](std::size_t i) -> value_type_ {
        return detail::call_as<value_type_>(transform, first1[static_cast<difference1_t>(i)],
                                            first2[static_cast<difference2_t>(i)]);
    };
    if constexpr (requires { transform.unordered(); }) { // the dot product: a `multiplies_t` has a twin
        auto twin = transform.unordered();
        auto fast = [&](std::size_t i) -> value_type_ {
            return detail::call_as<value_type_>(twin, first1[static_cast<difference1_t>(i)],
                                                first2[static_cast<difference2_t>(i)]);
        };
        detail::twin_load_t<decltype(load), decltype(fast)> loads{load, fast};
        return detail::call_as<value_type_>(
            op, std::move(init), detail::reduce_indices<value_type_>(detail::target_of(pool), count, loads, op));
    } else
        return detail::call_as<value_type_>(
            op, std::move(init), detail::reduce_indices<value_type_>(detail::target_of(pool), count, load, op));
}

/**  @brief  The dot product `init + Σ first1[i] · first2[i]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator1_type_,
          std::random_access_iterator iterator2_type_, typename value_type_>
value_type_ transform_reduce(pool_type_ &&pool, iterator1_type_ first1, iterator1_type_ last1, iterator2_type_ first2,
                             value_type_ init) {
    return transform_reduce(pool, first1, last1, first2, std::move(init), detail::plus_t{}, detail::multiplies_t{});
}

/**  @brief  `init ⊕ first[0] ⊕ … ⊕ first[n − 1]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename value_type_, typename op_type_>
value_type_ reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, value_type_ init, op_type_ op) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return init;
    auto load = [&first](std::size_t i) -> value_type_ { return first[static_cast<difference_t>(i)]; };
    return detail::call_as<value_type_>(op, std::move(init),
                                        detail::reduce_indices<value_type_>(detail::target_of(pool), count, load, op));
}

/**  @brief  `init + first[0] + … + first[n − 1]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename value_type_>
value_type_ reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, value_type_ init) {
    return reduce(pool, first, last, std::move(init), detail::plus_t{});
}

/**  @brief  `value_t{} + first[0] + … + first[n − 1]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
std::iter_value_t<iterator_type_> reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) {
    return reduce(pool, first, last, std::iter_value_t<iterator_type_>{}, detail::plus_t{});
}

/**
 *  @brief  How many i in `[0, n)` have `pred(first[i])`: an exact integer sum over the reduction rule's blocks.
 *  Serial equivalent: `for (i) count += pred(first[i]) ? 1 : 0;`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
std::iter_difference_t<iterator_type_> count_if(pool_type_ &&pool, iterator_type_ first, iterator_type_ last,
                                                predicate_type_ pred) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return 0;
    auto load = [&](std::size_t i) -> difference_t { return pred(first[static_cast<difference_t>(i)]) ? 1 : 0; };
    detail::plus_t plus;
    return detail::reduce_indices<difference_t>(detail::target_of(pool), count, load, plus);
}

/**
 *  @brief  The first smallest element (no j with `comp(first[j], first[i])`, and i the lowest such), or `last`.
 *  Serial equivalent: `std::min_element(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
iterator_type_ min_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) {
    return detail::extreme_element<false>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `min_element` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
iterator_type_ min_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) {
    return min_element(pool, first, last, detail::less_t{});
}

/**
 *  @brief  The first largest element (no j with `comp(first[i], first[j])`, and i the lowest such), or `last`.
 *  Serial equivalent: `std::max_element(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
iterator_type_ max_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) {
    return detail::extreme_element<true>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `max_element` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
iterator_type_ max_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) {
    return max_element(pool, first, last, detail::less_t{});
}

// ---- The same over ranges: `r` stands for `std::ranges::begin(r)`, `std::ranges::begin(r) + size(r)` ----

/**  @brief  `transform_reduce(pool, first, last, init, op, transform)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename value_type_, typename op_type_,
          typename transform_type_>
value_type_ transform_reduce(pool_type_ &&pool, range_type_ &&range, value_type_ init, op_type_ op,
                             transform_type_ transform) {
    return transform_reduce(pool, std::ranges::begin(range), detail::range_end(range), std::move(init), std::move(op),
                            std::move(transform));
}

/**  @brief  `transform_reduce(pool, first1, last1, first2, init, op, transform)` with the first input a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator iterator2_type_,
          typename value_type_, typename op_type_, typename transform_type_>
value_type_ transform_reduce(pool_type_ &&pool, range_type_ &&range, iterator2_type_ first2, value_type_ init,
                             op_type_ op, transform_type_ transform) {
    return transform_reduce(pool, std::ranges::begin(range), detail::range_end(range), first2, std::move(init),
                            std::move(op), std::move(transform));
}

/**  @brief  The dot product `init + Σ range[i] · first2[i]`. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator iterator2_type_,
          typename value_type_>
value_type_ transform_reduce(pool_type_ &&pool, range_type_ &&range, iterator2_type_ first2, value_type_ init) {
    return transform_reduce(pool, std::ranges::begin(range), detail::range_end(range), first2, std::move(init));
}

/**  @brief  `reduce(pool, first, last, init, op)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename value_type_, typename op_type_>
value_type_ reduce(pool_type_ &&pool, range_type_ &&range, value_type_ init, op_type_ op) {
    return reduce(pool, std::ranges::begin(range), detail::range_end(range), std::move(init), std::move(op));
}

/**  @brief  `reduce(pool, first, last, init)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename value_type_>
value_type_ reduce(pool_type_ &&pool, range_type_ &&range, value_type_ init) {
    return reduce(pool, std::ranges::begin(range), detail::range_end(range), std::move(init));
}

/**  @brief  `reduce(pool, first, last)` over a range: from `range_value_t{}`. */
template <pool_like pool_type_, sized_random_access_range range_type_>
std::ranges::range_value_t<range_type_> reduce(pool_type_ &&pool, range_type_ &&range) {
    return reduce(pool, std::ranges::begin(range), detail::range_end(range));
}

/**  @brief  `count_if(pool, first, last, pred)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename predicate_type_>
std::ranges::range_difference_t<range_type_> count_if(pool_type_ &&pool, range_type_ &&range, predicate_type_ pred) {
    return count_if(pool, std::ranges::begin(range), detail::range_end(range), std::move(pred));
}

/**  @brief  `min_element(pool, first, last[, comp])` over a range whose iterators outlive the call. */
template <pool_like pool_type_, borrowed_random_access_range range_type_, typename comp_type_ = detail::less_t>
std::ranges::iterator_t<range_type_> min_element(pool_type_ &&pool, range_type_ &&range, comp_type_ comp = {}) {
    return min_element(pool, std::ranges::begin(range), detail::range_end(range), std::move(comp));
}

/**  @brief  `max_element(pool, first, last[, comp])` over a range whose iterators outlive the call. */
template <pool_like pool_type_, borrowed_random_access_range range_type_, typename comp_type_ = detail::less_t>
std::ranges::iterator_t<range_type_> max_element(pool_type_ &&pool, range_type_ &&range, comp_type_ comp = {}) {
    return max_element(pool, std::ranges::begin(range), detail::range_end(range), std::move(comp));
}

} // namespace forkunion
