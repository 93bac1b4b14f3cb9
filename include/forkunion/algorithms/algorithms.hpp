/**
 *  @file   forkunion/algorithms/algorithms.hpp
 *  @brief  Parallel algorithms over random-access ranges on any pool: `for_each`, `transform`, `reduce`,
 *          `transform_reduce`, `find_if`, `any_of`, `all_of`, `none_of`, `count_if`, `min_element`, `max_element`,
 *          `inclusive_scan`, `exclusive_scan`, `sort`, `stable_sort`.
 *
 *  Each takes a pool (`flat_pool_t`, `colocated_pool_t`, `distributed_pool_t`, any index type) or a pool with a
 *  grain (`with_grain(pool, elements)`) as its first argument, then the arguments of the `std::` algorithm of the
 *  same name, and has that algorithm's semantics:
 *
 *  @code
 *  namespace fu = forkunion;
 *  double sum = fu::reduce(pool, x.begin(), x.end(), 0.0, std::plus<>{});    // bit-identical at any thread count
 *  auto hit = fu::find_if(fu::with_grain(pool, 256), x.begin(), x.end(), is_bad); // the first match, as std::
 *  fu::sort(pool, x.begin(), x.end());
 *  @endcode
 *
 *  | call                                                     | serial loop it stands for                        |
 *  | -------------------------------------------------------- | ------------------------------------------------ |
 *  | `for_each(p, f, l, fn)`                                  | `for (i) fn(f[i]);`                              |
 *  | `transform(p, f, l, out, fn)` (also two ranges)          | `for (i) out[i] = fn(f[i]);` returns `out + n`  |
 *  | `reduce(p, f, l[, init[, op]])`                          | `init ⊕ f[0] ⊕ … ⊕ f[n-1]` (grouping: below)    |
 *  | `transform_reduce(p, f, l, init, op, fn)`                | `init ⊕ fn(f[0]) ⊕ …`                            |
 *  | `transform_reduce(p, f1, l1, f2, init[, op, fn2])`       | `init ⊕ fn2(f1[0], f2[0]) ⊕ …` (default: dot)    |
 *  | `count_if(p, f, l, pred)`                                | `Σ pred(f[i]) ? 1 : 0`                           |
 *  | `min_element` / `max_element(p, f, l[, comp])`          | the first smallest / first largest, or `l`       |
 *  | `find_if(p, f, l, pred)`                                 | the first `i` with `pred(f[i])`, or `l`          |
 *  | `any_of` / `all_of` / `none_of(p, f, l, pred)`          | `find_if(…) != l`, and its negations             |
 *  | `inclusive_scan(p, f, l, out[, op[, init]])`             | `acc = (init ⊕) f[0]; out[0] = acc; …`           |
 *  | `exclusive_scan(p, f, l, out, init[, op])`               | `acc = init; for (i) { t = f[i]; out[i] = acc;`  |
 *  |                                                          | `acc = acc ⊕ t; }`                               |
 *  | `sort` / `stable_sort(p, f, l[, comp])`                  | `std::sort` / `std::stable_sort`                 |
 *
 *  As for `std::reduce`, `op` must be associative and commutative for `reduce` and `transform_reduce` (lanes
 *  interleave the elements); the scans only need associativity (they never reorder operands). Callables are
 *  called concurrently from several threads, through references to the caller's objects (never copies).
 *  Pass function objects (lambdas, `std::plus<>`), not a function's name: a name decays to a function pointer,
 *  which the pool's type-erased dispatch keeps the compiler from resolving, so every element pays an indirect call
 *  and its loop cannot vectorize. `bench/algorithms` measures a sum-and-max given `combine` and `spread` by name
 *  at 4-6x the time of the same functions wrapped in lambdas (`fu:fn-pointers`); `std::execution::par` pays the same.
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
 *  @section grain Grain
 *  `with_grain(pool, g)` sets the block size in elements; the default, `default_grain_k` = 4096, is a constant:
 *  it depends on neither the thread count nor the machine, or reductions would not reproduce across them. The
 *  grain is the unit of everything: the reduction rule's blocks, the early-exit window of searches (below), the
 *  scans' chunks and the sorts' smallest runs. Use a smaller grain for expensive per-element work (more tasks to
 *  balance), a larger one to lower a search's synchronization (one block claim per g predicate calls).
 *
 *  @section search Early exit
 *  `find_if` and the `*_of` family claim blocks in increasing order; block k may start only once block k − L has
 *  finished (L = min(threads, `search_window_k`)), and blocks start in claim order. So by the time a block L past
 *  the first match could start, the match is published and the block is skipped: a search makes at most
 *  (index of the first match + 1) + (L − 1) × g ≤ (first + 1) + (T − 1) × g predicate calls. `find_if` scans
 *  every block before the match (it must prove there is none earlier); `any_of`, `all_of` and `none_of` stop
 *  at any match. A thread whose block L back has not finished waits for it (the price of the bound).
 *
 *  @section busy A busy pool is not an error
 *  When the pool refuses the dispatch (the call comes from inside one of its callbacks, another thread's
 *  dispatch holds it, or it is not spawned), the algorithm runs on the calling thread alone, through the same
 *  blocks, chunks and tree, and returns the same result. Thread 0 of a caller-exclusive flat or colocated pool
 *  forking from its own slice is accepted by the pool and runs on it.
 *
 *  @section memory Allocation and stack
 *  `reduce`, `transform_reduce`, `count_if`, `min_element`, `max_element`, `find_if`, the `*_of` family,
 *  `for_each`, `transform` and the scans allocate nothing. Their state lives on the calling thread's stack: at
 *  most `max_chunks_k` partial values (≤ 16 KiB, or 16 values when larger), W lanes per working thread, and for
 *  searches three padded words and a window of `search_window_k` words (2 KiB). The sorts allocate one scratch
 *  buffer of n values per call (`operator new(std::nothrow)`) and free it before returning; if that allocation
 *  fails they sort on the calling thread, in place: `sort` by introsort, `stable_sort` by merging in place
 *  (O(n log² n)). A `sort` of one chunk (n ≤ g) is an in-place introsort and allocates nothing.
 *
 *  @section threads Which threads may call, and memory ordering
 *  Any thread; the call blocks until the result is complete. Every write made by a callback (outputs of
 *  `for_each`, `transform`, the scans and the sorts) happens-before the return: the pool's join orders them. The
 *  algorithms never read a range while they write it except where the `std::` algorithm allows (`out == first`
 *  for `transform` and the scans).
 *
 *  @section comparators Comparators without a strict weak order
 *  Whatever a sort's comparator answers (`double`s with NaNs under `<`, inconsistent or random answers, always
 *  `true`), the sorts read and write only inside `[first, last)` and their own scratch buffer, terminate, and leave
 *  a permutation of the input: nothing lost, nothing duplicated. Only the order is then unspecified. The same holds
 *  for `min_element` and `max_element` (some iterator in the range, or `last` for an empty one).

 *  @section exceptions Exceptions
 *  Every algorithm is `noexcept`: a callable or comparator that throws (`std::less` is not declared `noexcept`,
 *  and that is fine) calls `std::terminate`, as `std::execution::par` does. Nothing rejects such callables.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <new>         // placement `new`, `std::nothrow`, `std::align_val_t`
#include <thread>      // `std::this_thread::yield`
#include <type_traits> // `std::is_trivially_destructible_v`, `std::remove_cvref_t`, `std::is_floating_point_v`
#include <utility>     // `std::move`, `std::forward`
// Compile cost: `<iterator>` adds the stream iterators and `<streambuf>`, and `<algorithm>` (for `std::sort`) the
// ranges and parallel algorithms, ~4% and ~20% of a hello world's compile time; libstdc++ declares the iterator
// concepts in a smaller header, and the sorts here bring their own serial kernels (introsort, in-place merging).
#if defined(__GLIBCXX__) && __has_include(<bits/iterator_concepts.h>)
#include <bits/iterator_concepts.h> // `std::random_access_iterator`, `std::iter_value_t`, `std::iter_difference_t`
#else
#include <iterator> // `std::random_access_iterator`, `std::iter_value_t`, `std::iter_difference_t`
#endif

#include <forkunion/algorithms/sort.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/pools/flat.hpp>

namespace forkunion {

/**  @brief  Elements per block when no grain is given: a constant, so that reductions reproduce on every machine. */
inline constexpr std::size_t default_grain_k = 4096;

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

/**  @brief  Most chunks (pool tasks) one call splits its blocks into; fewer for values over 64 bytes. */
inline constexpr std::size_t max_chunks_k = 256;

/**  @brief  Most blocks a search keeps in flight past its oldest unfinished one: at most this many threads search. */
inline constexpr std::size_t search_window_k = 256;

/**
 *  @brief  A pool and the grain (block size, in elements) the algorithms should use on it; `with_grain` makes
 *          one. A grain of 0 means `default_grain_k`. A plain value holding a reference to the pool.
 */
template <typename pool_type_>
class grained_pool_t {
public:
    using pool_t = pool_type_;

    grained_pool_t(pool_t &pool, std::size_t grain) noexcept : pool_(&pool), grain_(grain ? grain : default_grain_k) {}

    [[nodiscard]] pool_t &pool() const noexcept { return *pool_; }
    [[nodiscard]] std::size_t grain() const noexcept { return grain_; }

private:
    pool_t *pool_;
    std::size_t grain_;
};

/**  @brief  `pool` with blocks of `grain` elements for the algorithms (0: the default grain). */
template <typename pool_type_>
[[nodiscard]] grained_pool_t<pool_type_> with_grain(pool_type_ &pool, std::size_t grain) noexcept {
    return {pool, grain};
}

namespace detail {

template <typename type_>
struct is_grained_pool_t : std::false_type {};
template <typename pool_type_>
struct is_grained_pool_t<grained_pool_t<pool_type_>> : std::true_type {};

} // namespace detail

/**  @brief  What the algorithms take first: a pool (`threads_count`, `oversubscribed`, `for_threads`,
 *          `for_n_dynamic`), or one wrapped by `with_grain`. */
template <typename type_>
concept pool_like = detail::is_grained_pool_t<std::remove_cvref_t<type_>>::value ||
    requires(std::remove_cvref_t<type_> &pool) {
    pool.threads_count();
    pool.oversubscribed();
};

namespace detail {

/**  The pool and the grain of one call. */
template <typename pool_type_>
struct target_t {
    pool_type_ &pool;
    std::size_t grain;
};

template <typename pool_like_type_>
auto target_of(pool_like_type_ &pool) noexcept {
    using plain_t = std::remove_cvref_t<pool_like_type_>;
    if constexpr (is_grained_pool_t<plain_t>::value)
        return target_t<typename plain_t::pool_t>{pool.pool(), pool.grain()};
    else
        return target_t<plain_t>{pool, default_grain_k};
}

/**  Raw, aligned room for `capacity_` values constructed and destroyed one by one; no heap, no default value. */
template <typename value_type_, std::size_t capacity_>
struct uninitialized_array_t {
    union {
        value_type_ values[capacity_];
    };
    uninitialized_array_t() noexcept {}
    ~uninitialized_array_t() noexcept {}
    uninitialized_array_t(uninitialized_array_t const &) = delete;
    uninitialized_array_t &operator=(uninitialized_array_t const &) = delete;

    template <typename... args_types_>
    void construct(std::size_t i, args_types_ &&...args) noexcept {
        ::new (static_cast<void *>(values + i)) value_type_(std::forward<args_types_>(args)...);
    }
    void destroy(std::size_t count) noexcept {
        if constexpr (!std::is_trivially_destructible_v<value_type_>)
            for (std::size_t i = 0; i != count; ++i) values[i].~value_type_();
    }
    value_type_ &operator[](std::size_t i) noexcept { return values[i]; }
    value_type_ *data() noexcept { return values; }
};

/**  Chunks a call may split into for values of this type: `max_chunks_k`, or 16 KiB of partials, at least 16. */
template <typename value_type_>
constexpr std::size_t chunk_capacity() noexcept {
    constexpr std::size_t by_size_k = (16u << 10) / sizeof(value_type_);
    return by_size_k > max_chunks_k ? max_chunks_k : by_size_k < 16 ? 16 : by_size_k;
}

/**  Blocks of `grain` elements over `[0, count)`, grouped into chunks of `2^shift` blocks (at most a capacity). */
struct block_plan_t {
    std::size_t count = 0;
    std::size_t grain = 1;
    std::size_t blocks = 0;
    std::size_t shift = 0;
    std::size_t chunks = 0;

    constexpr std::size_t block_first(std::size_t block) const noexcept { return block * grain; }
    /**  Elements of `blocks_count` blocks from `block`, without overflow: `min(blocks_count · g, n − first)`. */
    constexpr std::size_t elements_of(std::size_t block, std::size_t blocks_count) const noexcept {
        std::size_t const left = count - block * grain;
        return left / grain >= blocks_count ? blocks_count * grain : left;
    }
    constexpr std::size_t chunk_first_block(std::size_t chunk) const noexcept { return chunk << shift; }
    constexpr std::size_t chunk_blocks(std::size_t chunk) const noexcept {
        std::size_t const first = chunk << shift, full = std::size_t(1) << shift;
        return blocks - first < full ? blocks - first : full;
    }
    constexpr std::size_t chunk_first(std::size_t chunk) const noexcept { return block_first(chunk << shift); }
    constexpr std::size_t chunk_size(std::size_t chunk) const noexcept {
        return elements_of(chunk << shift, chunk_blocks(chunk));
    }
};

constexpr block_plan_t plan_blocks(std::size_t count, std::size_t grain, std::size_t capacity) noexcept {
    block_plan_t plan;
    plan.count = count;
    plan.grain = grain;
    plan.blocks = count / grain + (count % grain != 0);
    if (plan.blocks == 0) return plan;
    while (((plan.blocks - 1) >> plan.shift) + 1 > capacity) ++plan.shift;
    plan.chunks = ((plan.blocks - 1) >> plan.shift) + 1;
    return plan;
}

// ---- Dispatch: the one place a refusal turns into serial work on the calling thread ----

/**
 *  Calls `fn(chunk)` for every chunk in `[0, chunks)` as tasks of `for_n_dynamic` (chunk k in task
 *  `k mod tasks` when the index type counts fewer tasks); a pool of one thread, or one chunk, runs them on the
 *  calling thread in order, undispatched. A refused dispatch (`contended`, `not_spawned`, `forked`) runs the same
 *  tasks on the calling thread through `join_or_run_on_caller`. Returns after every call finished: the join
 *  orders their writes before the return.
 */
template <typename pool_type_, typename fn_type_>
void run_chunks(pool_type_ &pool, std::size_t chunks, fn_type_ &fn) noexcept {
    using index_t = typename pool_type_::index_t;
    if (chunks <= 1 || pool.threads_count() <= 1) {
        for (std::size_t chunk = 0; chunk != chunks; ++chunk) fn(chunk);
        return;
    }
    constexpr std::size_t index_limit_k = static_cast<std::size_t>(static_cast<index_t>(~index_t(0)));
    std::size_t const tasks = chunks < index_limit_k ? chunks : index_limit_k;
    auto task = [&fn, chunks, tasks](index_t first) noexcept {
        for (std::size_t chunk = first; chunk < chunks; chunk += tasks) fn(chunk);
    };
    pool.for_n_dynamic(static_cast<index_t>(tasks), task).join_or_run_on_caller();
}

/**  Calls `fn(thread)` once on every thread of the pool, or `fn(0)` once on the calling thread when it refuses. */
template <typename pool_type_, typename fn_type_>
void run_threads(pool_type_ &pool, fn_type_ &fn) noexcept {
    using index_t = typename pool_type_::index_t;
    auto task = [&fn](index_t thread) noexcept { fn(static_cast<std::size_t>(thread)); };
    pool.for_threads(task).join_or_run_on_caller();
}

// ---- Reductions ----

/**  Step 3 of the rule, in place over `values[0..count)`; returns `values[0]` (moved). @pre `count ≥ 1`. */
template <typename value_type_, typename op_type_>
value_type_ combine_tree(value_type_ *values, std::size_t count, op_type_ &op) noexcept {
    for (std::size_t step = 1; step < count; step *= 2)
        for (std::size_t i = 0; i + step < count; i += 2 * step)
            values[i] = op(std::move(values[i]), std::move(values[i + step]));
    return std::move(values[0]);
}

/**  Steps 2 and 4: the value of the block `[first, first + count)`. @pre `count ≥ 1`. */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ reduce_block(std::size_t first, std::size_t count, load_type_ &load, op_type_ &op) noexcept {
    constexpr std::size_t lanes_k = reduction_lanes_for_k<value_type_>;
    uninitialized_array_t<value_type_, lanes_k> lane;
    std::size_t const used = count < lanes_k ? count : lanes_k;
    for (std::size_t j = 0; j != used; ++j) lane.construct(j, load(first + j));
    std::size_t offset = used;
    for (; offset + lanes_k <= count; offset += lanes_k) {
        // Unrolled so that GCC's -O2 (whose cheap cost model skips this loop otherwise) vectorizes it as -O3 does;
        // 16, the most lanes, unrolls every lane count completely.
        static_assert(lanes_k <= 16, "the unroll count below covers every lane count");
#pragma GCC unroll 16
        for (std::size_t j = 0; j != lanes_k; ++j) lane[j] = op(std::move(lane[j]), load(first + offset + j));
    }
    for (std::size_t j = 0; offset + j < count; ++j) lane[j] = op(std::move(lane[j]), load(first + offset + j));
    value_type_ result = combine_tree(lane.data(), used, op);
    lane.destroy(used);
    return result;
}

/**  The tree over blocks `[block, block + count)`, recursing at the largest power of two below `count`. */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ reduce_blocks(block_plan_t const &plan, std::size_t block, std::size_t count, load_type_ &load,
                          op_type_ &op) noexcept {
    if (count == 1) return reduce_block<value_type_>(plan.block_first(block), plan.elements_of(block, 1), load, op);
    std::size_t half = 1;
    while (half * 2 < count) half *= 2;
    value_type_ left = reduce_blocks<value_type_>(plan, block, half, load, op);
    return op(std::move(left), reduce_blocks<value_type_>(plan, block + half, count - half, load, op));
}

/**  The rule's tree of `load(0) … load(count − 1)` (no init), on the pool. @pre `count ≥ 1`. */
template <typename value_type_, typename pool_type_, typename load_type_, typename op_type_>
value_type_ reduce_indices(target_t<pool_type_> target, std::size_t count, load_type_ &load, op_type_ &op) noexcept {
    constexpr std::size_t capacity_k = chunk_capacity<value_type_>();
    block_plan_t const plan = plan_blocks(count, target.grain, capacity_k);
    if (plan.chunks == 1 || target.pool.threads_count() <= 1)
        return reduce_blocks<value_type_>(plan, 0, plan.blocks, load, op);
    // One slot per chunk, each written once by whichever thread runs that chunk; neighbours may share a line, but
    // only one store per chunk touches it.
    uninitialized_array_t<value_type_, capacity_k> partials;
    auto chunk = [&](std::size_t c) noexcept {
        partials.construct(c,
                           reduce_blocks<value_type_>(plan, plan.chunk_first_block(c), plan.chunk_blocks(c), load, op));
    };
    run_chunks(target.pool, plan.chunks, chunk);
    value_type_ result = combine_tree(partials.data(), plan.chunks, op);
    partials.destroy(plan.chunks);
    return result;
}

// ---- Searches ----

/**
 *  The shared state of one search, on the calling thread's stack.
 *
 *      started  s        blocks claimed so far; block b is claimed by the one CAS that takes s from b to b + 1
 *      finished[b mod w] b + 1 once block b's scan is over (w = `search_window_k`)
 *      found    f        the lowest match published so far, or n; it only decreases
 *
 *  S1  Block b is claimed only after block b − L finished (L = min(threads, w) ≤ w), and blocks are claimed in
 *      order (the CAS takes s from b exactly), so claiming b + L happens after b finished, and claiming any later
 *      block happens after claiming b + L (each CAS reads the previous one's value: a release sequence).
 *  S2  A block's match is published (f lowered) before the block is marked finished (release), so the claimer of
 *      any block ≥ b + L sees it and skips: at most L − 1 blocks past the first match's block are ever scanned.
 *  S3  A slot is reused by block b + w only after block b finished: claiming b + w needs b + w − L ≥ b finished.
 *  S4  Every claimed block is finished, so a waiter for block b − L (claimed: s > b − L) never waits forever;
 *      a thread that would skip returns without claiming, as every later block would be skipped too.
 *  A thread never waits for another one to claim a block: a claimer that is descheduled holds nothing, and a lost
 *  CAS means another thread claimed that block (so the loop is lock-free). Only the block L back must finish.
 */
struct search_state_t {
    alignas(default_alignment_k) std::atomic<std::size_t> started{0};
    alignas(default_alignment_k) std::atomic<std::size_t> found{0};
    alignas(default_alignment_k) std::atomic<std::size_t> finished[search_window_k] = {};
};

/**  Spins with the micro-wait; an oversubscribed pool's waiter also yields its core once it spun a while. */
struct search_backoff_t {
    default_micro_yield_t micro_yield;
    std::size_t spins = 0;
    bool yields = false;
    void operator()() noexcept {
        micro_yield();
        if (yields && ++spins >= flat_pool_t::oversubscribed_spins_k) std::this_thread::yield();
    }
};

/**  One thread's share of a search over `count` indices in blocks of `grain`; `stop_at_any_k` for the `*_of`s. */
template <bool stop_at_any_k, typename predicate_type_>
void search_blocks(search_state_t &state, std::size_t count, std::size_t grain, std::size_t window, bool yields,
                   predicate_type_ &predicate) noexcept {
    std::size_t const blocks = count / grain + (count % grain != 0);
    search_backoff_t backoff{{}, 0, yields};
    // Acquire pairs with the release half of the previous claim's CAS (S1).
    std::size_t block = state.started.load(std::memory_order_acquire);
    for (;;) {
        if (block >= blocks) return;
        if (block >= window) {
            std::atomic<std::size_t> const &slot = state.finished[(block - window) % search_window_k];
            // Acquire pairs with the release in the finish below: that block's published match is visible (S2).
            while (slot.load(std::memory_order_acquire) != block - window + 1) {
                backoff();
                std::size_t const now = state.started.load(std::memory_order_acquire);
                if (now != block) { // another thread claimed this block meanwhile: try the next one
                    block = now;
                    break;
                }
            }
            if (slot.load(std::memory_order_relaxed) != block - window + 1) continue; // moved on to a new block
        }
        std::size_t const first = block * grain;
        auto skips = [&](std::size_t best) noexcept { return stop_at_any_k ? best != count : best < first; };
        // A cheap early look: a match already seen means every block from here on is skipped (S4).
        if (skips(state.found.load(std::memory_order_relaxed))) return;
        // S1. Acq_rel: acquires the previous claim (and what it saw), releases ours to the next claimer. A failure
        // reloads `block` with the claims made meanwhile, and the window is checked again for that block.
        if (!state.started.compare_exchange_strong(block, block + 1, std::memory_order_acq_rel,
                                                   std::memory_order_acquire))
            continue;
        // S2. Relaxed: the claim's acquire (or, for the block L past a match, the window's) ordered every match
        // that must stop this block. A claimed block is always finished, skipped or not (S4).
        bool const skip = skips(state.found.load(std::memory_order_relaxed));
        std::size_t const end = skip ? first : first + (count - first < grain ? count - first : grain);
        for (std::size_t i = first; i != end; ++i) {
            if (!predicate(i)) continue;
            // Lower `found` to `i`: a strong CAS fails only when another thread lowered it meanwhile, so this loop
            // runs at most once per thread that published a match. Relaxed: the finish below releases it.
            std::size_t seen = state.found.load(std::memory_order_relaxed);
            while (i < seen && !state.found.compare_exchange_strong(seen, i, std::memory_order_relaxed,
                                                                    std::memory_order_relaxed)) {}
            break;
        }
        // S2. Release pairs with the acquire of the claimer of block + window.
        state.finished[block % search_window_k].store(block + 1, std::memory_order_release);
        if (skip) return;
        ++block; // the next candidate; a failed CAS or the window wait corrects it
    }
}

/**  The lowest `i < count` with `predicate(i)` (or, with `stop_at_any_k`, any such `i`), or `count`. */
template <bool stop_at_any_k, typename pool_type_, typename predicate_type_>
std::size_t search_indices(target_t<pool_type_> target, std::size_t count, predicate_type_ &predicate) noexcept {
    std::size_t const threads = static_cast<std::size_t>(target.pool.threads_count());
    if (count <= target.grain || threads <= 1) {
        for (std::size_t i = 0; i != count; ++i)
            if (predicate(i)) return i;
        return count;
    }
    search_state_t state;
    state.found.store(count, std::memory_order_relaxed); // published to the workers by the dispatch
    std::size_t const window = threads < search_window_k ? threads : search_window_k;
    bool const yields = target.pool.oversubscribed();
    auto thread = [&](std::size_t) noexcept {
        search_blocks<stop_at_any_k>(state, count, target.grain, window, yields, predicate);
    };
    run_threads(target.pool, thread);
    return state.found.load(std::memory_order_relaxed); // the join ordered every store
}

// ---- Scans ----

/**
 *  `load(first) ⊕ … ⊕ load(first + count − 1)` in order (only associativity assumed), with W contiguous pieces
 *  folded side by side for instruction-level parallelism and then combined in order by the tree.
 */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ fold_in_order(std::size_t first, std::size_t count, load_type_ &load, op_type_ &op) noexcept {
    constexpr std::size_t lanes_k = reduction_lanes_k;
    std::size_t const piece = count / lanes_k;
    if (piece < 2) {
        value_type_ result = load(first);
        for (std::size_t i = 1; i != count; ++i) result = op(std::move(result), load(first + i));
        return result;
    }
    uninitialized_array_t<value_type_, lanes_k> lane;
    for (std::size_t j = 0; j != lanes_k; ++j) lane.construct(j, load(first + j * piece));
    for (std::size_t k = 1; k != piece; ++k)
        for (std::size_t j = 0; j != lanes_k; ++j) lane[j] = op(std::move(lane[j]), load(first + j * piece + k));
    for (std::size_t i = lanes_k * piece; i != count; ++i) // the remainder continues the last piece
        lane[lanes_k - 1] = op(std::move(lane[lanes_k - 1]), load(first + i));
    value_type_ result = combine_tree(lane.data(), lanes_k, op);
    lane.destroy(lanes_k);
    return result;
}

/**
 *  The scan engine. Chunks come from n and the grain only (never from the thread count), so the result is the
 *  same at every thread count: (1) the totals of chunks 0 … C−2, in parallel; (2) on the calling thread, the
 *  offset of chunk c, `init ⊕ total[0] ⊕ … ⊕ total[c−1]` folded left; (3) each chunk scanned from its offset,
 *  in parallel. Without an init (inclusive only), chunk 0 starts from its first element.
 */
template <bool inclusive_k, bool has_init_k, typename value_type_, typename pool_type_, typename input_type_,
          typename output_type_, typename op_type_>
output_type_ scan(target_t<pool_type_> target, input_type_ first, input_type_ last, output_type_ out, op_type_ &op,
                  value_type_ *init) noexcept {
    using difference_t = std::iter_difference_t<input_type_>;
    using out_difference_t = std::iter_difference_t<output_type_>;
    std::size_t const count = static_cast<std::size_t>(last - first);
    if (count == 0) return out;
    constexpr std::size_t capacity_k = chunk_capacity<value_type_>();
    block_plan_t const plan = plan_blocks(count, target.grain, capacity_k);
    uninitialized_array_t<value_type_, capacity_k> offsets; // offsets[c] for c ≥ 1
    auto load = [&first](std::size_t i) noexcept -> value_type_ { return first[static_cast<difference_t>(i)]; };
    // Scans chunk `c` from `seed` (null: from its first element).
    auto scan_chunk = [&](std::size_t c, value_type_ *seed) noexcept {
        std::size_t i = plan.chunk_first(c);
        std::size_t const end = i + plan.chunk_size(c);
        if constexpr (inclusive_k) {
            value_type_ acc = seed ? op(*seed, first[static_cast<difference_t>(i)]) : load(i);
            out[static_cast<out_difference_t>(i)] = acc;
            for (++i; i != end; ++i) {
                acc = op(std::move(acc), first[static_cast<difference_t>(i)]);
                out[static_cast<out_difference_t>(i)] = acc;
            }
        } else {
            value_type_ acc = *seed;
            for (; i != end; ++i) {
                value_type_ element = load(i); // read before the write: `out` may be `first`
                out[static_cast<out_difference_t>(i)] = acc;
                acc = op(std::move(acc), std::move(element));
            }
        }
    };
    if (plan.chunks > 1) {
        auto total = [&](std::size_t c) noexcept {
            if (c + 1 == plan.chunks) return; // the last chunk's total is never needed
            offsets.construct(c + 1, fold_in_order<value_type_>(plan.chunk_first(c), plan.chunk_size(c), load, op));
        };
        run_chunks(target.pool, plan.chunks, total);
        for (std::size_t c = 1; c != plan.chunks; ++c) {
            if (c == 1 && !has_init_k) continue; // offset 1 is total 0 itself
            value_type_ &previous = c == 1 ? *init : offsets[c - 1];
            offsets[c] = op(previous, std::move(offsets[c]));
        }
    }
    auto chunk = [&](std::size_t c) noexcept { scan_chunk(c, c == 0 ? init : &offsets[c]); };
    run_chunks(target.pool, plan.chunks, chunk);
    if (plan.chunks > 1) {
        for (std::size_t c = 1; c != plan.chunks; ++c) offsets.values[c].~value_type_();
    }
    return out + static_cast<out_difference_t>(count);
}

// ---- Sorts (the serial pieces are in sort.hpp) ----

/**  The run-time pieces of one sort: the pool, the plan, the two buffers and where the sorted runs are. */
template <typename pool_type_, typename iterator_type_, typename comp_type_>
struct sorter_t {
    using value_t = std::iter_value_t<iterator_type_>;
    using difference_t = std::iter_difference_t<iterator_type_>;

    target_t<pool_type_> target;
    iterator_type_ data;
    comp_type_ &comp;
    block_plan_t plan;
    value_t *scratch = nullptr;
    bool in_scratch = false;   // the sorted runs are in `scratch`
    bool scratch_live = false; // every slot of `scratch` holds a constructed value

    /**  One merge pass over all `count` values from runs of `width` into runs of `2 · width`. */
    void merge_pass(std::size_t width) noexcept {
        std::size_t const count = plan.count, slices = plan.chunks, slice = count / slices + (count % slices != 0);
        auto bound = [&](std::size_t s) noexcept { return s * slice < count ? s * slice : count; };
        // Every slice boundary's split first, on the calling thread: ~log2(n) comparisons each.
        std::size_t splits[max_chunks_k + 1];
        // A comparator without a strict weak order may answer the searches inconsistently: `monotone_split` keeps
        // every slice's share of each run non-negative, so the slices stay inside their ranges and disjoint.
        for (std::size_t s = 0; s <= slices; ++s) {
            splits[s] = in_scratch ? merge_split_at(scratch, 0, count, width, bound(s), comp)
                                   : merge_split_at(data_pointer(), 0, count, width, bound(s), comp);
            if (s != 0) splits[s] = monotone_split(0, count, width, bound(s - 1), splits[s - 1], bound(s), splits[s]);
        }
        auto pass = [&](std::size_t s) noexcept {
            std::size_t const low = bound(s), high = bound(s + 1);
            if (in_scratch)
                merge_pass_slice<false>(scratch, data_pointer(), 0, count, width, low, high, splits[s], splits[s + 1],
                                        comp);
            else if (scratch_live)
                merge_pass_slice<false>(data_pointer(), scratch, 0, count, width, low, high, splits[s], splits[s + 1],
                                        comp);
            else
                merge_pass_slice<true>(data_pointer(), scratch, 0, count, width, low, high, splits[s], splits[s + 1],
                                       comp);
        };
        run_chunks(target.pool, slices, pass);
        if (!in_scratch) scratch_live = true;
        in_scratch = !in_scratch;
    }

    /**  `data` as an indexable by `std::size_t`. */
    struct indexed_t {
        iterator_type_ first;
        decltype(auto) operator[](std::size_t i) const noexcept { return first[static_cast<difference_t>(i)]; }
        indexed_t operator+(std::size_t i) const noexcept { return {first + static_cast<difference_t>(i)}; }
    };
    indexed_t data_pointer() const noexcept { return {data}; }
};

template <bool stable_k, typename pool_type_, typename iterator_type_, typename comp_type_>
void sort(target_t<pool_type_> target, iterator_type_ first, iterator_type_ last, comp_type_ &comp) noexcept {
    using one_sorter_t = sorter_t<pool_type_, iterator_type_, comp_type_>;
    using value_t = typename one_sorter_t::value_t;
    std::size_t const count = static_cast<std::size_t>(last - first);
    if (count < 2) return;
    block_plan_t const plan = plan_blocks(count, target.grain, max_chunks_k);
    if (!stable_k && plan.chunks == 1) return introsort(first, last, comp);
    // Over-aligned types get an aligned allocation; both forms return null instead of throwing.
    void *memory = alignof(value_t) > __STDCPP_DEFAULT_NEW_ALIGNMENT__
                       ? ::operator new(count * sizeof(value_t), std::align_val_t(alignof(value_t)), std::nothrow)
                       : ::operator new(count * sizeof(value_t), std::nothrow);
    if (!memory) {
        if constexpr (stable_k)
            stable_sort_in_place(first, last, comp);
        else
            introsort(first, last, comp);
        return;
    }
    one_sorter_t sorter{target, first, comp, plan, static_cast<value_t *>(memory)};
    auto data = sorter.data_pointer();
    // Leaves: each chunk sorted on its own, all leaves ending in the same buffer.
    std::size_t const run_size = plan.chunk_size(0);
    std::size_t leaf_passes = 0;
    for (std::size_t width = 32; width < run_size; width *= 2) ++leaf_passes;
    auto leaf = [&](std::size_t c) noexcept {
        std::size_t const from = plan.chunk_first(c), size = plan.chunk_size(c);
        if constexpr (stable_k)
            stable_sort_run(data, sorter.scratch, from, size, leaf_passes, false, comp);
        else
            introsort(first + static_cast<std::iter_difference_t<iterator_type_>>(from),
                      first + static_cast<std::iter_difference_t<iterator_type_>>(from + size), comp);
    };
    run_chunks(target.pool, plan.chunks, leaf);
    if (stable_k && leaf_passes) {
        sorter.scratch_live = true;
        sorter.in_scratch = leaf_passes % 2 == 1;
    }
    for (std::size_t width = run_size; width < count; width *= 2) sorter.merge_pass(width);
    if (sorter.in_scratch) {
        auto back = [&](std::size_t c) noexcept {
            for (std::size_t i = plan.chunk_first(c), end = i + plan.chunk_size(c); i != end; ++i)
                data[i] = std::move(sorter.scratch[i]);
        };
        run_chunks(target.pool, plan.chunks, back);
    }
    if (sorter.scratch_live && !std::is_trivially_destructible_v<value_t>)
        for (std::size_t i = 0; i != count; ++i) sorter.scratch[i].~value_t();
    if (alignof(value_t) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
        ::operator delete(memory, std::align_val_t(alignof(value_t)));
    else
        ::operator delete(memory);
}

/**
 *  `a ⊕ b` as `std::plus<>`, `a ⊗ b` as `std::multiplies<>`, without their header, except that on floating-point
 *  operands a NaN `a` decides the result: `a + (a != a ? a : b)`. IEEE-754 leaves open which of two NaN operands
 *  the result carries, and compilers swap the operands of `+` and `*` freely, so the bare operator could give
 *  different NaN payloads in the serial and the parallel code of the same rule; here both operands are the same
 *  NaN whenever `a` is one, and with one NaN or none the order does not matter.
 */
struct plus_t {
    template <typename left_type_, typename right_type_>
    constexpr auto operator()(left_type_ &&a, right_type_ &&b) const noexcept(noexcept(a + b)) {
        if constexpr (std::is_floating_point_v<std::remove_cvref_t<left_type_>> &&
                      std::is_same_v<std::remove_cvref_t<left_type_>, std::remove_cvref_t<right_type_>>)
            return a + (a != a ? a : b);
        else
            return std::forward<left_type_>(a) + std::forward<right_type_>(b);
    }
};
struct multiplies_t {
    template <typename left_type_, typename right_type_>
    constexpr auto operator()(left_type_ &&a, right_type_ &&b) const noexcept(noexcept(a *b)) {
        if constexpr (std::is_floating_point_v<std::remove_cvref_t<left_type_>> &&
                      std::is_same_v<std::remove_cvref_t<left_type_>, std::remove_cvref_t<right_type_>>)
            return a * (a != a ? a : b);
        else
            return std::forward<left_type_>(a) * std::forward<right_type_>(b);
    }
};
struct less_t {
    template <typename left_type_, typename right_type_>
    constexpr bool operator()(left_type_ const &a, right_type_ const &b) const noexcept(noexcept(a < b)) {
        return a < b;
    }
};

template <typename iterator_type_>
constexpr std::size_t distance(iterator_type_ first, iterator_type_ last) noexcept {
    return static_cast<std::size_t>(last - first);
}

/**
 *  The first smallest (`largest_k`: the first largest) element of `[first, last)` by `comp`, or `last`: a
 *  reduction of indices by the rule, whose step keeps the lower index unless the higher one's element is strictly
 *  smaller (larger), an associative and commutative choice.
 */
template <bool largest_k, typename pool_type_, typename iterator_type_, typename comp_type_>
iterator_type_ extreme_element(target_t<pool_type_> target, iterator_type_ first, iterator_type_ last,
                               comp_type_ &comp) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return last;
    auto load = [](std::size_t i) noexcept { return i; };
    auto pick = [&](std::size_t a, std::size_t b) noexcept {
        std::size_t const low = a < b ? a : b, high = a < b ? b : a;
        auto &&at_low = first[static_cast<difference_t>(low)];
        auto &&at_high = first[static_cast<difference_t>(high)];
        return (largest_k ? comp(at_low, at_high) : comp(at_high, at_low)) ? high : low;
    };
    return first + static_cast<difference_t>(reduce_indices<std::size_t>(target, count, load, pick));
}

} // namespace detail

// ---- Element-wise loops ----

/**
 *  @brief  Calls `fn(first[i])` for every i in `[0, n)`, in chunks of blocks on the pool's threads.
 *  Serial equivalent: `for (i = 0; i < n; ++i) fn(first[i]);`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename fn_type_>
void for_each(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, fn_type_ fn) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    auto target = detail::target_of(pool);
    detail::block_plan_t const plan = detail::plan_blocks(detail::distance(first, last), target.grain, max_chunks_k);
    auto chunk = [&](std::size_t c) noexcept {
        iterator_type_ it = first + static_cast<difference_t>(plan.chunk_first(c));
        for (iterator_type_ end = it + static_cast<difference_t>(plan.chunk_size(c)); it != end; ++it) fn(*it);
    };
    detail::run_chunks(target.pool, plan.chunks, chunk);
}

/**
 *  @brief  `out[i] = fn(first[i])` for every i in `[0, n)`; returns `out + n`. `out` may equal `first`.
 *  Serial equivalent: `for (i = 0; i < n; ++i) out[i] = fn(first[i]);`
 */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename fn_type_>
output_type_ transform(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out, fn_type_ fn) noexcept {
    using in_t = std::iter_difference_t<input_type_>;
    using out_t = std::iter_difference_t<output_type_>;
    auto target = detail::target_of(pool);
    std::size_t const count = detail::distance(first, last);
    detail::block_plan_t const plan = detail::plan_blocks(count, target.grain, max_chunks_k);
    auto chunk = [&](std::size_t c) noexcept {
        for (std::size_t i = plan.chunk_first(c), end = i + plan.chunk_size(c); i != end; ++i)
            out[static_cast<out_t>(i)] = fn(first[static_cast<in_t>(i)]);
    };
    detail::run_chunks(target.pool, plan.chunks, chunk);
    return out + static_cast<out_t>(count);
}

/**
 *  @brief  `out[i] = fn(first1[i], first2[i])` for every i in `[0, n)`; returns `out + n`.
 *  Serial equivalent: `for (i = 0; i < n; ++i) out[i] = fn(first1[i], first2[i]);`
 */
template <pool_like pool_type_, std::random_access_iterator input1_type_, std::random_access_iterator input2_type_,
          std::random_access_iterator output_type_, typename fn_type_>
output_type_ transform(pool_type_ &&pool, input1_type_ first1, input1_type_ last1, input2_type_ first2,
                       output_type_ out, fn_type_ fn) noexcept {
    using in1_t = std::iter_difference_t<input1_type_>;
    using in2_t = std::iter_difference_t<input2_type_>;
    using out_t = std::iter_difference_t<output_type_>;
    auto target = detail::target_of(pool);
    std::size_t const count = detail::distance(first1, last1);
    detail::block_plan_t const plan = detail::plan_blocks(count, target.grain, max_chunks_k);
    auto chunk = [&](std::size_t c) noexcept {
        for (std::size_t i = plan.chunk_first(c), end = i + plan.chunk_size(c); i != end; ++i)
            out[static_cast<out_t>(i)] = fn(first1[static_cast<in1_t>(i)], first2[static_cast<in2_t>(i)]);
    };
    detail::run_chunks(target.pool, plan.chunks, chunk);
    return out + static_cast<out_t>(count);
}

// ---- Reductions: the rule of the file comment ----

/**
 *  @brief  `init ⊕ transform(first[0]) ⊕ … ⊕ transform(first[n − 1])`, grouped by the reduction rule.
 *  Serial equivalent (up to grouping): `for (i) init = op(init, transform(first[i])); return init;`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename value_type_, typename op_type_,
          typename transform_type_>
value_type_ transform_reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, value_type_ init,
                             op_type_ op, transform_type_ transform) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return init;
    auto load = [&](std::size_t i) noexcept -> value_type_ { return transform(first[static_cast<difference_t>(i)]); };
    return op(std::move(init), detail::reduce_indices<value_type_>(detail::target_of(pool), count, load, op));
}

/**
 *  @brief  `init ⊕ transform(first1[0], first2[0]) ⊕ …`, grouped by the reduction rule.
 *  Serial equivalent (up to grouping): `for (i) init = op(init, transform(first1[i], first2[i]));`
 */
template <pool_like pool_type_, std::random_access_iterator iterator1_type_,
          std::random_access_iterator iterator2_type_, typename value_type_, typename op_type_,
          typename transform_type_>
value_type_ transform_reduce(pool_type_ &&pool, iterator1_type_ first1, iterator1_type_ last1, iterator2_type_ first2,
                             value_type_ init, op_type_ op, transform_type_ transform) noexcept {
    using difference1_t = std::iter_difference_t<iterator1_type_>;
    using difference2_t = std::iter_difference_t<iterator2_type_>;
    std::size_t const count = detail::distance(first1, last1);
    if (count == 0) return init;
    auto load = [&](std::size_t i) noexcept -> value_type_ {
        return transform(first1[static_cast<difference1_t>(i)], first2[static_cast<difference2_t>(i)]);
    };
    return op(std::move(init), detail::reduce_indices<value_type_>(detail::target_of(pool), count, load, op));
}

/**  @brief  The dot product `init + Σ first1[i] · first2[i]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator1_type_,
          std::random_access_iterator iterator2_type_, typename value_type_>
value_type_ transform_reduce(pool_type_ &&pool, iterator1_type_ first1, iterator1_type_ last1, iterator2_type_ first2,
                             value_type_ init) noexcept {
    return transform_reduce(pool, first1, last1, first2, std::move(init), detail::plus_t{}, detail::multiplies_t{});
}

/**  @brief  `init ⊕ first[0] ⊕ … ⊕ first[n − 1]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename value_type_, typename op_type_>
value_type_ reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, value_type_ init,
                   op_type_ op) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return init;
    auto load = [&first](std::size_t i) noexcept -> value_type_ { return first[static_cast<difference_t>(i)]; };
    return op(std::move(init), detail::reduce_indices<value_type_>(detail::target_of(pool), count, load, op));
}

/**  @brief  `init + first[0] + … + first[n − 1]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename value_type_>
value_type_ reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, value_type_ init) noexcept {
    return reduce(pool, first, last, std::move(init), detail::plus_t{});
}

/**  @brief  `value_t{} + first[0] + … + first[n − 1]`, grouped by the reduction rule. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
std::iter_value_t<iterator_type_> reduce(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) noexcept {
    return reduce(pool, first, last, std::iter_value_t<iterator_type_>{}, detail::plus_t{});
}

/**
 *  @brief  How many i in `[0, n)` have `pred(first[i])`: an exact integer sum over the reduction rule's blocks.
 *  Serial equivalent: `for (i) count += pred(first[i]) ? 1 : 0;`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
std::iter_difference_t<iterator_type_> count_if(pool_type_ &&pool, iterator_type_ first, iterator_type_ last,
                                                predicate_type_ pred) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    if (count == 0) return 0;
    auto load = [&](std::size_t i) noexcept -> difference_t {
        return pred(first[static_cast<difference_t>(i)]) ? 1 : 0;
    };
    detail::plus_t plus;
    return detail::reduce_indices<difference_t>(detail::target_of(pool), count, load, plus);
}

/**
 *  @brief  The first smallest element (no j with `comp(first[j], first[i])`, and i the lowest such), or `last`.
 *  Serial equivalent: `std::min_element(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
iterator_type_ min_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) noexcept {
    return detail::extreme_element<false>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `min_element` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
iterator_type_ min_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) noexcept {
    return min_element(pool, first, last, detail::less_t{});
}

/**
 *  @brief  The first largest element (no j with `comp(first[i], first[j])`, and i the lowest such), or `last`.
 *  Serial equivalent: `std::max_element(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
iterator_type_ max_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) noexcept {
    return detail::extreme_element<true>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `max_element` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
iterator_type_ max_element(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) noexcept {
    return max_element(pool, first, last, detail::less_t{});
}

// ---- Searches: the early-exit window of the file comment ----

/**
 *  @brief  The first i with `pred(first[i])`, or `last`; at most (i + 1) + (T − 1) × grain predicate calls.
 *  Serial equivalent: `for (i = 0; i < n; ++i) if (pred(first[i])) return first + i; return last;`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
iterator_type_ find_if(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    auto test = [&](std::size_t i) noexcept -> bool { return pred(first[static_cast<difference_t>(i)]); };
    std::size_t const found =
        detail::search_indices<false>(detail::target_of(pool), detail::distance(first, last), test);
    return first + static_cast<difference_t>(found);
}

/**  @brief  Whether some `pred(first[i])` holds; stops at any match. Serial: `std::any_of(first, last, pred)`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
bool any_of(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    auto test = [&](std::size_t i) noexcept -> bool { return pred(first[static_cast<difference_t>(i)]); };
    return detail::search_indices<true>(detail::target_of(pool), count, test) != count;
}

/**  @brief  Whether no `pred(first[i])` holds; stops at any match. Serial: `std::none_of(first, last, pred)`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
bool none_of(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) noexcept {
    return !any_of(pool, first, last, std::move(pred));
}

/**  @brief  Whether every `pred(first[i])` holds; stops at any miss. Serial: `std::all_of(first, last, pred)`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
bool all_of(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) noexcept {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    auto miss = [&](std::size_t i) noexcept -> bool { return !pred(first[static_cast<difference_t>(i)]); };
    return detail::search_indices<true>(detail::target_of(pool), count, miss) == count;
}

// ---- Scans: chunks from n and the grain, so every thread count gives the same result ----

/**
 *  @brief  `out[i] = init ⊕ first[0] ⊕ … ⊕ first[i]`; returns `out + n`. `out` may equal `first`.
 *  Serial equivalent: `acc = init; for (i) { acc = op(acc, first[i]); out[i] = acc; }`
 */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename op_type_, typename value_type_>
output_type_ inclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out, op_type_ op,
                            value_type_ init) noexcept {
    return detail::scan<true, true, value_type_>(detail::target_of(pool), first, last, out, op, &init);
}

/**  @brief  `out[i] = first[0] ⊕ … ⊕ first[i]`; returns `out + n`. */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename op_type_>
output_type_ inclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out,
                            op_type_ op) noexcept {
    using value_t = std::iter_value_t<input_type_>;
    return detail::scan<true, false, value_t>(detail::target_of(pool), first, last, out, op,
                                              static_cast<value_t *>(nullptr));
}

/**  @brief  `out[i] = first[0] + … + first[i]`; returns `out + n`. */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_>
output_type_ inclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out) noexcept {
    return inclusive_scan(pool, first, last, out, detail::plus_t{});
}

/**
 *  @brief  `out[i] = init ⊕ first[0] ⊕ … ⊕ first[i − 1]` (`out[0] = init`); returns `out + n`. `out` may equal
 *          `first`. Serial equivalent: `acc = init; for (i) { t = first[i]; out[i] = acc; acc = op(acc, t); }`
 */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename value_type_, typename op_type_>
output_type_ exclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out, value_type_ init,
                            op_type_ op) noexcept {
    return detail::scan<false, true, value_type_>(detail::target_of(pool), first, last, out, op, &init);
}

/**  @brief  `out[i] = init + first[0] + … + first[i − 1]`; returns `out + n`. */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename value_type_>
output_type_ exclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out,
                            value_type_ init) noexcept {
    return exclusive_scan(pool, first, last, out, std::move(init), detail::plus_t{});
}

// ---- Sorts: sorted chunks, then merge passes split by merge path; one scratch buffer of n values ----

/**
 *  @brief  Sorts `[first, last)` by `comp` (a strict weak order), equivalent elements in an unspecified but
 *          deterministic order (it depends on n and the grain only). Allocates one scratch buffer of n values.
 *  Serial equivalent: `std::sort(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
void sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) noexcept {
    detail::sort<false>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `sort` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
void sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) noexcept {
    detail::less_t less;
    detail::sort<false>(detail::target_of(pool), first, last, less);
}

/**
 *  @brief  Sorts `[first, last)` by `comp`, keeping equivalent elements in their input order. Allocates one
 *          scratch buffer of n values. Serial equivalent: `std::stable_sort(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
void stable_sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) noexcept {
    detail::sort<true>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `stable_sort` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
void stable_sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) noexcept {
    detail::less_t less;
    detail::sort<true>(detail::target_of(pool), first, last, less);
}

} // namespace forkunion
