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
 *  @section ranges Ranges
 *  Each algorithm also takes a range where the `std::` one takes `first, last` (`fu::reduce(pool, v)`,
 *  `fu::sort(pool, std::span(v))`, `fu::reduce(pool, std::views::iota(0, n))`): any `sized_random_access_range`
 *  (`chunks.hpp`), read as `std::ranges::begin(r)` and `begin + std::ranges::size(r)`. Those returning an iterator
 *  into the range (`find_if`, `min_element`, `max_element`) take only ranges whose iterators outlive the call.
 *  A `sharded_array_t` is such a range: its random-access iterators walk the global index order, shard after shard,
 *  so every algorithm sees the same n elements as over a `std::vector` of the same values, and a reduction gives the
 *  same bits. That is why the array is not taken shard by shard: the reduction rule is defined over global
 *  indices, and per-shard evaluation would make the result depend on the domain count. The price is a lookup per
 *  access (`locate`: two divisions); a loop that wants each domain's threads on their own shard's memory runs the
 *  algorithm per shard, over `array.shard(d)` (contiguous).
 *
 *  @section rule The reduction rule, and how blocks map onto tasks
 *  `reduce`, `transform_reduce`, `count_if`, `min_element` and `max_element` group their operation by one rule that
 *  depends on n and the grain only, documented in `reduce.hpp` (where they are declared): a `double` sum gives the
 *  same bits at any thread count, on any pool kind. Every algorithm cuts its range into the same blocks and chunks.
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
 *
 *  @section exceptions Exceptions
 *  User functions (comparators, operations, transforms, predicates) may throw; `std::less<double>` is not
 *  `noexcept`, and need not be. The first exception thrown on any thread reaches the caller of the algorithm,
 *  rethrown (the same object: its type and message) once every task of the call has finished; an exception thrown
 *  later on another thread is dropped. The other threads stop early where it is cheap: a chunk, a search block or
 *  a sort leaf not started yet is skipped; one under way runs to its end. Nothing leaks: every partial value, lane
 *  and scan offset built is destroyed, and a sort's scratch buffer is freed. The pool stays usable. What the
 *  range holds afterwards:
 *  - `sort`, `stable_sort`: a permutation of the input (nothing lost, nothing duplicated), in an unspecified
 *    order. This needs the element type's moves, move assignments and `swap` not to throw; the merges finish by
 *    moving their remaining inputs uncompared, and the values are moved back from the scratch buffer.
 *  - `for_each`, `transform`, the scans: some elements were visited or written and others not; no element of
 *    the input is moved from (`exclusive_scan` in place: an output written holds its scan value, an input not yet
 *    reached its input value).
 *  - the reductions, searches and counts only read the range.
 *  When nothing throws this costs nothing measurable: no allocation, no system call, a relaxed load per task
 *  (`failure.hpp`). Built with `-fno-exceptions` it compiles out. Moves and destructors of the value type must not
 *  throw, as in the standard's parallel algorithms.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <new>         // placement `new`, `std::nothrow`, `std::align_val_t`
#include <thread>      // `std::this_thread::yield`
#include <type_traits> // `std::is_trivially_destructible_v`
#include <utility>     // `std::move`
// Compile cost: `<iterator>` adds the stream iterators and `<streambuf>`, and `<algorithm>` (for `std::sort`) the
// ranges and parallel algorithms, ~4% and ~20% of a hello world's compile time; libstdc++ declares the iterator
// concepts in a smaller header, and the sorts here bring their own serial kernels (introsort, in-place merging).
#if defined(__GLIBCXX__) && __has_include(<bits/iterator_concepts.h>)
#include <bits/iterator_concepts.h> // `std::random_access_iterator`, `std::iter_value_t`, `std::iter_difference_t`
#else
#include <iterator> // `std::random_access_iterator`, `std::iter_value_t`, `std::iter_difference_t`
#endif

#include <forkunion/algorithms/chunks.hpp>
#include <forkunion/algorithms/failure.hpp>
#include <forkunion/algorithms/reduce.hpp>
#include <forkunion/algorithms/sort.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/pools/flat.hpp>

namespace forkunion {
namespace detail {

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
                   predicate_type_ &predicate, failure_t &failure) noexcept {
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
        auto skips = [&](std::size_t best) noexcept {
            return (stop_at_any_k ? best != count : best < first) || failure.failed();
        };
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
        // A predicate that throws ends the block here, kept by `failure`: the block is still finished (S4), and
        // every later claim skips (`skips`).
        failure.guard([&] {
            for (std::size_t i = first; i != end; ++i) {
                if (!predicate(i)) continue;
                // Lower `found` to `i`: a strong CAS fails only when another thread lowered it meanwhile, so this
                // loop runs at most once per thread that published a match. Relaxed: the finish below releases it.
                std::size_t seen = state.found.load(std::memory_order_relaxed);
                while (i < seen && !state.found.compare_exchange_strong(seen, i, std::memory_order_relaxed,
                                                                        std::memory_order_relaxed)) {}
                break;
            }
        });
        // S2. Release pairs with the acquire of the claimer of block + window.
        state.finished[block % search_window_k].store(block + 1, std::memory_order_release);
        if (skip || failure.failed()) return;
        ++block; // the next candidate; a failed CAS or the window wait corrects it
    }
}

/**  The lowest `i < count` with `predicate(i)` (or, with `stop_at_any_k`, any such `i`), or `count`. */
template <bool stop_at_any_k, typename pool_type_, typename predicate_type_>
std::size_t search_indices(target_t<pool_type_> target, std::size_t count, predicate_type_ &predicate) {
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
    failure_t failure;
    auto thread = [&](std::size_t) noexcept {
        search_blocks<stop_at_any_k>(state, count, target.grain, window, yields, predicate, failure);
    };
    run_threads(target.pool, thread);
    failure.rethrow_if_failed();
    return state.found.load(std::memory_order_relaxed); // the join ordered every store
}

// ---- Scans ----

/**
 *  `load(first) ⊕ … ⊕ load(first + count − 1)` in order (only associativity assumed), with W contiguous pieces
 *  folded side by side for instruction-level parallelism and then combined in order by the tree.
 */
template <typename value_type_, typename load_type_, typename op_type_>
value_type_ fold_in_order(std::size_t first, std::size_t count, load_type_ &load, op_type_ &op) {
    constexpr std::size_t lanes_k = reduction_lanes_k;
    std::size_t const piece = count / lanes_k;
    if (piece < 2) {
        value_type_ result = load(first);
        for (std::size_t i = 1; i != count; ++i) result = call_as<value_type_>(op, std::move(result), load(first + i));
        return result;
    }
    uninitialized_array_t<value_type_, lanes_k> lane;
    for (std::size_t j = 0; j != lanes_k; ++j) lane.construct(j, load(first + j * piece));
    for (std::size_t k = 1; k != piece; ++k)
        for (std::size_t j = 0; j != lanes_k; ++j)
            lane[j] = call_as<value_type_>(op, std::move(lane[j]), load(first + j * piece + k));
    for (std::size_t i = lanes_k * piece; i != count; ++i) // the remainder continues the last piece
        lane[lanes_k - 1] = call_as<value_type_>(op, std::move(lane[lanes_k - 1]), load(first + i));
    return combine_tree(lane.data(), lanes_k, op);
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
                  value_type_ *init) {
    using difference_t = std::iter_difference_t<input_type_>;
    using out_difference_t = std::iter_difference_t<output_type_>;
    std::size_t const count = static_cast<std::size_t>(last - first);
    if (count == 0) return out;
    constexpr std::size_t capacity_k = chunk_capacity<value_type_>();
    block_plan_t const plan = plan_blocks(count, target.grain, capacity_k);
    uninitialized_array_t<value_type_, capacity_k> offsets; // offsets[c] for c ≥ 1
    failure_t failure;
    auto load = [&first](std::size_t i) -> value_type_ { return first[static_cast<difference_t>(i)]; };
    // Scans chunk `c` from `seed` (null: from its first element).
    auto scan_chunk = [&](std::size_t c, value_type_ *seed) {
        std::size_t i = plan.chunk_first(c);
        std::size_t const end = i + plan.chunk_size(c);
        if constexpr (inclusive_k) {
            value_type_ acc = seed ? call_as<value_type_>(op, *seed, first[static_cast<difference_t>(i)]) : load(i);
            out[static_cast<out_difference_t>(i)] = acc;
            for (++i; i != end; ++i) {
                acc = call_as<value_type_>(op, std::move(acc), first[static_cast<difference_t>(i)]);
                out[static_cast<out_difference_t>(i)] = acc;
            }
        } else {
            value_type_ acc = *seed;
            for (; i != end; ++i) {
                value_type_ element = load(i); // read before the write: `out` may be `first`
                out[static_cast<out_difference_t>(i)] = acc;
                acc = call_as<value_type_>(op, std::move(acc), std::move(element));
            }
        }
    };
    if (plan.chunks > 1) {
        auto total = [&](std::size_t c) noexcept {
            if (c + 1 == plan.chunks) return; // the last chunk's total is never needed
            failure.guard([&] {
                offsets.construct(c + 1, fold_in_order<value_type_>(plan.chunk_first(c), plan.chunk_size(c), load, op));
            });
        };
        run_chunks(target.pool, plan.chunks, total);
        failure.rethrow_if_failed(); // before any offset is read: some may be missing
        for (std::size_t c = 1; c != plan.chunks; ++c) {
            if (c == 1 && !has_init_k) continue; // offset 1 is total 0 itself
            value_type_ &previous = c == 1 ? *init : offsets[c - 1];
            offsets[c] = call_as<value_type_>(op, previous, std::move(offsets[c]));
        }
    }
    auto chunk = [&](std::size_t c) noexcept { failure.guard([&] { scan_chunk(c, c == 0 ? init : &offsets[c]); }); };
    run_chunks(target.pool, plan.chunks, chunk);
    failure.rethrow_if_failed();
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
    failure_t &failure;
    block_plan_t plan;
    value_t *scratch = nullptr;
    bool in_scratch = false;   // the sorted runs are in `scratch`
    bool scratch_live = false; // every slot of `scratch` holds a constructed value

    /**
     *  One merge pass over all `count` values from runs of `width` into runs of `2 · width`. Once `failure` holds
     *  an exception (a split search threw here, or a merge on any thread), the pass still moves every value, in
     *  run order, uncompared: its splits become "all of the left run first", and each merge finishes by moving.
     */
    void merge_pass(std::size_t width) noexcept {
        std::size_t const count = plan.count, slices = plan.chunks, slice = count / slices + (count % slices != 0);
        auto bound = [&](std::size_t s) noexcept { return s * slice < count ? s * slice : count; };
        // Every slice boundary's split first, on the calling thread: ~log2(n) comparisons each.
        std::size_t splits[max_chunks_k + 1];
        // A comparator without a strict weak order may answer the searches inconsistently: `monotone_split` keeps
        // every slice's share of each run non-negative, so the slices stay inside their ranges and disjoint.
        failure.guard([&] {
            for (std::size_t s = 0; s <= slices; ++s) {
                splits[s] = in_scratch ? merge_split_at(scratch, 0, count, width, bound(s), comp)
                                       : merge_split_at(data_pointer(), 0, count, width, bound(s), comp);
                if (s != 0)
                    splits[s] = monotone_split(0, count, width, bound(s - 1), splits[s - 1], bound(s), splits[s]);
            }
        });
        if (failure.failed())
            for (std::size_t s = 0; s <= slices; ++s) {
                merge_pair_t const pair = merge_pair_of(0, count, width, bound(s));
                splits[s] = bound(s) - pair.first < pair.left ? bound(s) - pair.first : pair.left;
            }
        auto pass = [&](std::size_t s) noexcept {
            std::size_t const low = bound(s), high = bound(s + 1);
            if (in_scratch)
                merge_pass_slice<false>(scratch, data_pointer(), 0, count, width, low, high, splits[s], splits[s + 1],
                                        comp, failure);
            else if (scratch_live)
                merge_pass_slice<false>(data_pointer(), scratch, 0, count, width, low, high, splits[s], splits[s + 1],
                                        comp, failure);
            else
                merge_pass_slice<true>(data_pointer(), scratch, 0, count, width, low, high, splits[s], splits[s + 1],
                                       comp, failure);
        };
        run_chunks(target.pool, slices, pass);
        if (!in_scratch) scratch_live = true;
        in_scratch = !in_scratch;
    }

    /**  `data` as an indexable by `std::size_t`. */
    struct indexed_t {
        iterator_type_ first;
        decltype(auto) operator[](std::size_t i) const noexcept { return first[static_cast<difference_t>(i)]; }
        decltype(auto) operator*() const noexcept { return *first; }
        indexed_t operator+(std::size_t i) const noexcept { return {first + static_cast<difference_t>(i)}; }
    };
    indexed_t data_pointer() const noexcept { return {data}; }
};

/**
 *  The parallel sort. A comparator that throws: the serial paths (one chunk, no scratch) let the exception pass
 *  through `sort.hpp`'s pieces, which keep the range a permutation; the parallel path keeps the first exception
 *  in `failure`, skips the leaves of `sort` not started yet, runs every remaining merge pass already under way as
 *  moves (the stable leaves run all their passes, so that every run ends in the same buffer), moves the values
 *  back from the scratch buffer if they are there, frees it, and rethrows.
 */
template <bool stable_k, typename pool_type_, typename iterator_type_, typename comp_type_>
void sort(target_t<pool_type_> target, iterator_type_ first, iterator_type_ last, comp_type_ &comp) {
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
    failure_t failure;
    one_sorter_t sorter{target, first, comp, failure, plan, static_cast<value_t *>(memory)};
    auto data = sorter.data_pointer();
    // Leaves: each chunk sorted on its own, all leaves ending in the same buffer.
    std::size_t const run_size = plan.chunk_size(0);
    std::size_t leaf_passes = 0;
    for (std::size_t width = 32; width < run_size; width *= 2) ++leaf_passes;
    auto leaf = [&](std::size_t c) noexcept {
        std::size_t const from = plan.chunk_first(c), size = plan.chunk_size(c);
        if constexpr (stable_k)
            stable_sort_run(data, sorter.scratch, from, size, leaf_passes, false, comp, failure);
        else
            failure.guard([&] {
                introsort(first + static_cast<std::iter_difference_t<iterator_type_>>(from),
                          first + static_cast<std::iter_difference_t<iterator_type_>>(from + size), comp);
            });
    };
    run_chunks(target.pool, plan.chunks, leaf);
    if (stable_k && leaf_passes) {
        sorter.scratch_live = true;
        sorter.in_scratch = leaf_passes % 2 == 1;
    }
    for (std::size_t width = run_size; width < count && !failure.failed(); width *= 2) sorter.merge_pass(width);
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
    failure.rethrow_if_failed();
}

} // namespace detail

// ---- Element-wise loops ----

/**
 *  @brief  Calls `fn(first[i])` for every i in `[0, n)`, in chunks of blocks on the pool's threads.
 *  Serial equivalent: `for (i = 0; i < n; ++i) fn(first[i]);`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename fn_type_>
void for_each(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, fn_type_ fn) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    auto target = detail::target_of(pool);
    detail::block_plan_t const plan = detail::plan_blocks(detail::distance(first, last), target.grain, max_chunks_k);
    detail::failure_t failure;
    auto chunk = [&](std::size_t c) noexcept {
        failure.guard([&] {
            iterator_type_ it = first + static_cast<difference_t>(plan.chunk_first(c));
            for (iterator_type_ end = it + static_cast<difference_t>(plan.chunk_size(c)); it != end; ++it) fn(*it);
        });
    };
    detail::run_chunks(target.pool, plan.chunks, chunk);
    failure.rethrow_if_failed();
}

/**
 *  @brief  `out[i] = fn(first[i])` for every i in `[0, n)`; returns `out + n`. `out` may equal `first`.
 *  Serial equivalent: `for (i = 0; i < n; ++i) out[i] = fn(first[i]);`
 */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename fn_type_>
output_type_ transform(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out, fn_type_ fn) {
    using in_t = std::iter_difference_t<input_type_>;
    using out_t = std::iter_difference_t<output_type_>;
    auto target = detail::target_of(pool);
    std::size_t const count = detail::distance(first, last);
    detail::block_plan_t const plan = detail::plan_blocks(count, target.grain, max_chunks_k);
    detail::failure_t failure;
    auto chunk = [&](std::size_t c) noexcept {
        failure.guard([&] {
            for (std::size_t i = plan.chunk_first(c), end = i + plan.chunk_size(c); i != end; ++i)
                out[static_cast<out_t>(i)] = fn(first[static_cast<in_t>(i)]);
        });
    };
    detail::run_chunks(target.pool, plan.chunks, chunk);
    failure.rethrow_if_failed();
    return out + static_cast<out_t>(count);
}

/**
 *  @brief  `out[i] = fn(first1[i], first2[i])` for every i in `[0, n)`; returns `out + n`.
 *  Serial equivalent: `for (i = 0; i < n; ++i) out[i] = fn(first1[i], first2[i]);`
 */
template <pool_like pool_type_, std::random_access_iterator input1_type_, std::random_access_iterator input2_type_,
          std::random_access_iterator output_type_, typename fn_type_>
output_type_ transform(pool_type_ &&pool, input1_type_ first1, input1_type_ last1, input2_type_ first2,
                       output_type_ out, fn_type_ fn) {
    using in1_t = std::iter_difference_t<input1_type_>;
    using in2_t = std::iter_difference_t<input2_type_>;
    using out_t = std::iter_difference_t<output_type_>;
    auto target = detail::target_of(pool);
    std::size_t const count = detail::distance(first1, last1);
    detail::block_plan_t const plan = detail::plan_blocks(count, target.grain, max_chunks_k);
    detail::failure_t failure;
    auto chunk = [&](std::size_t c) noexcept {
        failure.guard([&] {
            for (std::size_t i = plan.chunk_first(c), end = i + plan.chunk_size(c); i != end; ++i)
                out[static_cast<out_t>(i)] = fn(first1[static_cast<in1_t>(i)], first2[static_cast<in2_t>(i)]);
        });
    };
    detail::run_chunks(target.pool, plan.chunks, chunk);
    failure.rethrow_if_failed();
    return out + static_cast<out_t>(count);
}

// ---- Searches: the early-exit window of the file comment ----

/**
 *  @brief  The first i with `pred(first[i])`, or `last`; at most (i + 1) + (T − 1) × grain predicate calls.
 *  Serial equivalent: `for (i = 0; i < n; ++i) if (pred(first[i])) return first + i; return last;`
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
iterator_type_ find_if(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    auto test = [&](std::size_t i) -> bool { return pred(first[static_cast<difference_t>(i)]); };
    std::size_t const found =
        detail::search_indices<false>(detail::target_of(pool), detail::distance(first, last), test);
    return first + static_cast<difference_t>(found);
}

/**  @brief  Whether some `pred(first[i])` holds; stops at any match. Serial: `std::any_of(first, last, pred)`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
bool any_of(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    auto test = [&](std::size_t i) -> bool { return pred(first[static_cast<difference_t>(i)]); };
    return detail::search_indices<true>(detail::target_of(pool), count, test) != count;
}

/**  @brief  Whether no `pred(first[i])` holds; stops at any match. Serial: `std::none_of(first, last, pred)`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
bool none_of(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) {
    return !any_of(pool, first, last, std::move(pred));
}

/**  @brief  Whether every `pred(first[i])` holds; stops at any miss. Serial: `std::all_of(first, last, pred)`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename predicate_type_>
bool all_of(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, predicate_type_ pred) {
    using difference_t = std::iter_difference_t<iterator_type_>;
    std::size_t const count = detail::distance(first, last);
    auto miss = [&](std::size_t i) -> bool { return !pred(first[static_cast<difference_t>(i)]); };
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
                            value_type_ init) {
    return detail::scan<true, true, value_type_>(detail::target_of(pool), first, last, out, op, &init);
}

/**  @brief  `out[i] = first[0] ⊕ … ⊕ first[i]`; returns `out + n`. */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename op_type_>
output_type_ inclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out, op_type_ op) {
    using value_t = std::iter_value_t<input_type_>;
    return detail::scan<true, false, value_t>(detail::target_of(pool), first, last, out, op,
                                              static_cast<value_t *>(nullptr));
}

/**  @brief  `out[i] = first[0] + … + first[i]`; returns `out + n`. */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_>
output_type_ inclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out) {
    return inclusive_scan(pool, first, last, out, detail::plus_t{});
}

/**
 *  @brief  `out[i] = init ⊕ first[0] ⊕ … ⊕ first[i − 1]` (`out[0] = init`); returns `out + n`. `out` may equal
 *          `first`. Serial equivalent: `acc = init; for (i) { t = first[i]; out[i] = acc; acc = op(acc, t); }`
 */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename value_type_, typename op_type_>
output_type_ exclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out, value_type_ init,
                            op_type_ op) {
    return detail::scan<false, true, value_type_>(detail::target_of(pool), first, last, out, op, &init);
}

/**  @brief  `out[i] = init + first[0] + … + first[i − 1]`; returns `out + n`. */
template <pool_like pool_type_, std::random_access_iterator input_type_, std::random_access_iterator output_type_,
          typename value_type_>
output_type_ exclusive_scan(pool_type_ &&pool, input_type_ first, input_type_ last, output_type_ out,
                            value_type_ init) {
    return exclusive_scan(pool, first, last, out, std::move(init), detail::plus_t{});
}

// ---- Sorts: sorted chunks, then merge passes split by merge path; one scratch buffer of n values ----

/**
 *  @brief  Sorts `[first, last)` by `comp` (a strict weak order), equivalent elements in an unspecified but
 *          deterministic order (it depends on n and the grain only). Allocates one scratch buffer of n values.
 *  Serial equivalent: `std::sort(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
void sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) {
    detail::sort<false>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `sort` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
void sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) {
    detail::less_t less;
    detail::sort<false>(detail::target_of(pool), first, last, less);
}

/**
 *  @brief  Sorts `[first, last)` by `comp`, keeping equivalent elements in their input order. Allocates one
 *          scratch buffer of n values. Serial equivalent: `std::stable_sort(first, last, comp)`.
 */
template <pool_like pool_type_, std::random_access_iterator iterator_type_, typename comp_type_>
void stable_sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last, comp_type_ comp) {
    detail::sort<true>(detail::target_of(pool), first, last, comp);
}

/**  @brief  `stable_sort` with `<`. */
template <pool_like pool_type_, std::random_access_iterator iterator_type_>
void stable_sort(pool_type_ &&pool, iterator_type_ first, iterator_type_ last) {
    detail::less_t less;
    detail::sort<true>(detail::target_of(pool), first, last, less);
}

// ---- The same over ranges: `r` stands for `std::ranges::begin(r)`, `std::ranges::begin(r) + size(r)` ----

/**  @brief  `for_each(pool, first, last, fn)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename fn_type_>
void for_each(pool_type_ &&pool, range_type_ &&range, fn_type_ fn) {
    for_each(pool, std::ranges::begin(range), detail::range_end(range), std::move(fn));
}

/**  @brief  `transform(pool, first, last, out, fn)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator output_type_,
          typename fn_type_>
output_type_ transform(pool_type_ &&pool, range_type_ &&range, output_type_ out, fn_type_ fn) {
    return transform(pool, std::ranges::begin(range), detail::range_end(range), out, std::move(fn));
}

/**  @brief  `transform(pool, first1, last1, first2, out, fn)` with the first input a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator input2_type_,
          std::random_access_iterator output_type_, typename fn_type_>
output_type_ transform(pool_type_ &&pool, range_type_ &&range, input2_type_ first2, output_type_ out, fn_type_ fn) {
    return transform(pool, std::ranges::begin(range), detail::range_end(range), first2, out, std::move(fn));
}

/**  @brief  `find_if(pool, first, last, pred)` over a range whose iterators outlive the call. */
template <pool_like pool_type_, borrowed_random_access_range range_type_, typename predicate_type_>
std::ranges::iterator_t<range_type_> find_if(pool_type_ &&pool, range_type_ &&range, predicate_type_ pred) {
    return find_if(pool, std::ranges::begin(range), detail::range_end(range), std::move(pred));
}

/**  @brief  `any_of(pool, first, last, pred)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename predicate_type_>
bool any_of(pool_type_ &&pool, range_type_ &&range, predicate_type_ pred) {
    return any_of(pool, std::ranges::begin(range), detail::range_end(range), std::move(pred));
}

/**  @brief  `none_of(pool, first, last, pred)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename predicate_type_>
bool none_of(pool_type_ &&pool, range_type_ &&range, predicate_type_ pred) {
    return none_of(pool, std::ranges::begin(range), detail::range_end(range), std::move(pred));
}

/**  @brief  `all_of(pool, first, last, pred)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename predicate_type_>
bool all_of(pool_type_ &&pool, range_type_ &&range, predicate_type_ pred) {
    return all_of(pool, std::ranges::begin(range), detail::range_end(range), std::move(pred));
}

/**  @brief  `inclusive_scan(pool, first, last, out, op, init)` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator output_type_,
          typename op_type_, typename value_type_>
output_type_ inclusive_scan(pool_type_ &&pool, range_type_ &&range, output_type_ out, op_type_ op, value_type_ init) {
    return inclusive_scan(pool, std::ranges::begin(range), detail::range_end(range), out, std::move(op),
                          std::move(init));
}

/**  @brief  `inclusive_scan(pool, first, last, out[, op])` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator output_type_,
          typename op_type_ = detail::plus_t>
output_type_ inclusive_scan(pool_type_ &&pool, range_type_ &&range, output_type_ out, op_type_ op = {}) {
    return inclusive_scan(pool, std::ranges::begin(range), detail::range_end(range), out, std::move(op));
}

/**  @brief  `exclusive_scan(pool, first, last, out, init[, op])` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, std::random_access_iterator output_type_,
          typename value_type_, typename op_type_ = detail::plus_t>
output_type_ exclusive_scan(pool_type_ &&pool, range_type_ &&range, output_type_ out, value_type_ init,
                            op_type_ op = {}) {
    return exclusive_scan(pool, std::ranges::begin(range), detail::range_end(range), out, std::move(init),
                          std::move(op));
}

/**  @brief  `sort(pool, first, last[, comp])` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename comp_type_ = detail::less_t>
void sort(pool_type_ &&pool, range_type_ &&range, comp_type_ comp = {}) {
    sort(pool, std::ranges::begin(range), detail::range_end(range), std::move(comp));
}

/**  @brief  `stable_sort(pool, first, last[, comp])` over a range. */
template <pool_like pool_type_, sized_random_access_range range_type_, typename comp_type_ = detail::less_t>
void stable_sort(pool_type_ &&pool, range_type_ &&range, comp_type_ comp = {}) {
    stable_sort(pool, std::ranges::begin(range), detail::range_end(range), std::move(comp));
}

} // namespace forkunion
