/**
 *  @file   forkunion/algorithms/sort.hpp
 *  @brief  The serial sorting pieces the parallel sorts of `algorithms.hpp` are built from: insertion sort, heap
 *          sort, introsort, the buffer-free stable merge, and the stable merge passes over run pairs, whose
 *          split points let every thread of a pass write a disjoint share of the output.
 *
 *  Everything here runs on the calling thread and allocates nothing. Every function reads and writes only inside
 *  the ranges it is given, whatever the comparator answers; with a strict weak order the results are sorted
 *  (stable where the name says so).
 *
 *  Exceptions: a comparator may throw; moves, move assignments and `swap` of the elements must not. Whenever a
 *  comparator throws, the ranges a function was given still hold exactly the values they held before (a
 *  permutation across them): the in-place pieces only swap, or hold one value out in a `hole_t` that puts it back
 *  as the exception passes; the merges take a `failure_t`, catch the exception there, keep it, and finish their
 *  output by moving the rest of their inputs in order, without comparing (so does a merge that starts after any
 *  thread of the same call failed).
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <new>     // placement `new`
#include <utility> // `std::move`, `std::swap`

#include <forkunion/algorithms/failure.hpp>

#if defined(__GLIBCXX__) && __has_include(<bits/iterator_concepts.h>)
#include <bits/iterator_concepts.h> // `std::iter_value_t`, `std::iter_difference_t`
#else
#include <iterator> // `std::iter_value_t`, `std::iter_difference_t`
#endif

namespace forkunion::detail {

/**  Swaps two elements through ADL, as `std::iter_swap` does. */
template <typename iterator_type_>
void swap_at(iterator_type_ a, iterator_type_ b) noexcept {
    using std::swap;
    swap(*a, *b);
}

/**
 *  A value taken out of its range while others move over the hole it left: the destructor moves it into the slot
 *  at `at`, which ends an insertion normally and, should a comparator throw meanwhile, leaves the range a
 *  permutation of what it held.
 */
template <typename at_type_, typename value_type_>
struct hole_t {
    at_type_ at;
    value_type_ value;
    ~hole_t() { *at = std::move(value); }
};

/**  Sorts `[first, last)` by straight insertion: the finishing pass of `introsort`, and small runs. */
template <typename iterator_type_, typename comp_type_>
void insertion_sort(iterator_type_ first, iterator_type_ last, comp_type_ &comp) {
    if (first == last) return;
    for (iterator_type_ i = first + 1; i != last; ++i) {
        if (!comp(*i, *(i - 1))) continue;
        hole_t<iterator_type_, std::iter_value_t<iterator_type_>> hole{i, std::move(*i)};
        for (; hole.at != first && comp(hole.value, *(hole.at - 1)); --hole.at) *hole.at = std::move(*(hole.at - 1));
    }
}

/**  Restores the max-heap property below `hole` in the heap `first[0..size)`. */
template <typename iterator_type_, typename comp_type_>
void sift_down(iterator_type_ first, std::iter_difference_t<iterator_type_> hole,
               std::iter_difference_t<iterator_type_> size, comp_type_ &comp) {
    hole_t<iterator_type_, std::iter_value_t<iterator_type_>> moving{first + hole, std::move(first[hole])};
    for (auto child = 2 * hole + 1; child < size; child = 2 * hole + 1) {
        if (child + 1 < size && comp(first[child], first[child + 1])) ++child;
        if (!comp(moving.value, first[child])) break;
        *moving.at = std::move(first[child]);
        hole = child;
        moving.at = first + hole;
    }
}

/**  Heap sort: the depth-limit fallback of `introsort`, O(n log n) in the worst case. */
template <typename iterator_type_, typename comp_type_>
void heap_sort(iterator_type_ first, iterator_type_ last, comp_type_ &comp) {
    auto size = last - first;
    for (auto hole = size / 2; hole-- > 0;) sift_down(first, hole, size, comp);
    while (size > 1) {
        --size;
        swap_at(first, first + size);
        sift_down(first, decltype(size)(0), size, comp);
    }
}

/**
 *  Introsort, the serial sort of each chunk: median-of-three quicksort with a Hoare partition down to runs of 16,
 *  heap sort past a depth of 2 log2 n, then one insertion pass. No allocation. Both partition scans check their
 *  bound (a comparator without a strict weak order can send an unguarded scan past the range), and the pivot ends
 *  between the two parts, so each part is smaller than the range whatever the comparator answers.
 */
template <typename iterator_type_, typename comp_type_>
void introsort(iterator_type_ first, iterator_type_ last, comp_type_ &comp) {
    constexpr std::iter_difference_t<iterator_type_> small_k = 16;
    std::size_t depth = 0;
    for (auto size = last - first; size > 1; size /= 2) depth += 2;
    iterator_type_ const start = first, stop = last;
    // Recurses on the right part, loops on the left one; the depth bound keeps the stack at O(log n).
    auto loop = [&comp](auto &self, iterator_type_ low, iterator_type_ high, std::size_t budget) -> void {
        while (high - low > small_k) {
            if (budget-- == 0) return heap_sort(low, high, comp);
            iterator_type_ a = low + 1, b = low + (high - low) / 2, c = high - 1;
            // The median of a, b, c goes to `low`, where it serves as the pivot.
            if (comp(*a, *b)) {
                if (comp(*b, *c))
                    swap_at(low, b);
                else if (comp(*a, *c))
                    swap_at(low, c);
                else
                    swap_at(low, a);
            } else if (comp(*a, *c))
                swap_at(low, a);
            else if (comp(*b, *c))
                swap_at(low, c);
            else
                swap_at(low, b);
            // [low + 1, left) holds values not above the pivot, (right, high) values not below it; both scans stop
            // on equal values, which balances runs of duplicates. Always left <= right + 1.
            iterator_type_ left = low + 1, right = high - 1;
            for (;;) {
                while (left <= right && comp(*left, *low)) ++left;
                while (left <= right && comp(*low, *right)) --right;
                if (!(left < right)) break;
                swap_at(left, right);
                ++left;
                --right;
            }
            iterator_type_ const pivot = left - 1;
            if (pivot != low) swap_at(low, pivot);
            self(self, pivot + 1, high, budget);
            high = pivot;
        }
    };
    loop(loop, first, last, depth);
    insertion_sort(start, stop, comp);
}

/**  Reverses `[first, last)` in place. */
template <typename iterator_type_>
void reverse_range(iterator_type_ first, iterator_type_ last) noexcept {
    while (first != last && first != --last) swap_at(first++, last);
}

/**
 *  Merges the sorted `[first, middle)` and `[middle, last)` stably without a buffer: split the longer run at its
 *  middle, find the other run's matching cut by binary search, rotate the two inner parts, recurse. O(n log n)
 *  moves per merge; the fallback of `stable_sort` when its scratch buffer cannot be allocated.
 */
template <typename iterator_type_, typename comp_type_>
void merge_in_place(iterator_type_ first, iterator_type_ middle, iterator_type_ last, comp_type_ &comp) {
    auto const left = middle - first, right = last - middle;
    if (left == 0 || right == 0) return;
    if (left + right == 2) {
        if (comp(*middle, *first)) swap_at(first, middle);
        return;
    }
    iterator_type_ first_cut, second_cut;
    if (left > right) { // the first element of the right run not below *first_cut (lower bound)
        first_cut = first + left / 2;
        iterator_type_ low = middle, high = last;
        while (low != high) {
            iterator_type_ const probe = low + (high - low) / 2;
            if (comp(*probe, *first_cut))
                low = probe + 1;
            else
                high = probe;
        }
        second_cut = low;
    } else { // the first element of the left run above *second_cut (upper bound)
        second_cut = middle + right / 2;
        iterator_type_ low = first, high = middle;
        while (low != high) {
            iterator_type_ const probe = low + (high - low) / 2;
            if (!comp(*second_cut, *probe))
                low = probe + 1;
            else
                high = probe;
        }
        first_cut = low;
    }
    // Rotate [first_cut, middle, second_cut) by three reversals.
    reverse_range(first_cut, middle);
    reverse_range(middle, second_cut);
    reverse_range(first_cut, second_cut);
    iterator_type_ const new_middle = first_cut + (second_cut - middle);
    merge_in_place(first, first_cut, new_middle, comp);
    merge_in_place(new_middle, second_cut, last, comp);
}

/**  A stable sort without a buffer: insertion-sorted runs of 32, merged in place. O(n log² n). */
template <typename iterator_type_, typename comp_type_>
void stable_sort_in_place(iterator_type_ first, iterator_type_ last, comp_type_ &comp) {
    auto const size = last - first;
    if (size <= 32) return insertion_sort(first, last, comp);
    iterator_type_ const middle = first + size / 2;
    stable_sort_in_place(first, middle, comp);
    stable_sort_in_place(middle, last, comp);
    merge_in_place(first, middle, last, comp);
}

/**  How many of the first `k` outputs of the stable merge of `a[0..na)` and `b[0..nb)` come from `a`. */
template <typename source_type_, typename comp_type_>
std::size_t merge_split(source_type_ a, std::size_t na, source_type_ b, std::size_t nb, std::size_t k,
                        comp_type_ &comp) {
    std::size_t low = k > nb ? k - nb : 0, high = k < na ? k : na;
    while (low < high) {
        std::size_t const i = low + (high - low) / 2; // i < na, and j = k − i is in [1, nb]
        std::size_t const j = k - i;
        // Stable: a[i] precedes b[j − 1] unless b[j − 1] < a[i]; if it precedes, more than i come from `a`.
        if (!comp(b[j - 1], a[i]))
            low = i + 1;
        else
            high = i;
    }
    return low;
}

/**  Moves `value` into `out[i]`: constructs it in raw scratch memory (`construct_k`), else assigns. */
template <bool construct_k, typename output_type_, typename value_type_>
void put(output_type_ out, std::size_t i, value_type_ &&value) noexcept {
    using element_t = std::remove_cvref_t<value_type_>;
    if constexpr (construct_k)
        ::new (static_cast<void *>(std::addressof(out[i]))) element_t(std::move(value));
    else
        out[i] = std::move(value);
}

/**
 *  Merges `a[ia..ea)` and `b[ib..eb)` (stably: `a` first among equals) into `out[o..)`. Once `failure` holds an
 *  exception (this merge's comparator threw, or another thread's user function did), the rest of `a`, then the
 *  rest of `b`, move to the output uncompared: every output slot is still written exactly once.
 */
template <bool construct_k, typename source_type_, typename output_type_, typename comp_type_>
void merge_range(source_type_ a, std::size_t ia, std::size_t ea, source_type_ b, std::size_t ib, std::size_t eb,
                 output_type_ out, std::size_t o, comp_type_ &comp, failure_t &failure) noexcept {
    failure.guard([&] {
        while (ia != ea && ib != eb) {
            if (comp(b[ib], a[ia]))
                put<construct_k>(out, o++, std::move(b[ib++]));
            else
                put<construct_k>(out, o++, std::move(a[ia++]));
        }
    });
    for (; ia != ea; ++ia) put<construct_k>(out, o++, std::move(a[ia]));
    for (; ib != eb; ++ib) put<construct_k>(out, o++, std::move(b[ib]));
}

/**  The pair of runs of `width` (over `[base, base + size)`) that holds output `k`: its first index and sizes. */
struct merge_pair_t {
    std::size_t first = 0, left = 0, right = 0;
    constexpr std::size_t end() const noexcept { return first + left + right; }
};
constexpr merge_pair_t merge_pair_of(std::size_t base, std::size_t size, std::size_t width, std::size_t k) noexcept {
    merge_pair_t pair;
    pair.first = base + (k - base) / (2 * width) * 2 * width;
    std::size_t const rest = size - (pair.first - base);
    pair.left = rest < width ? rest : width;
    pair.right = rest - pair.left < width ? rest - pair.left : width;
    return pair;
}

/**  How many of the outputs of `k`'s pair before `k` come from its left run. Reads the source only. */
template <typename source_type_, typename comp_type_>
std::size_t merge_split_at(source_type_ source, std::size_t base, std::size_t size, std::size_t width, std::size_t k,
                           comp_type_ &comp) {
    merge_pair_t const pair = merge_pair_of(base, size, width, k);
    return merge_split(source + pair.first, pair.left, source + (pair.first + pair.left), pair.right, k - pair.first,
                       comp);
}

/**
 *  `split`, the split (`merge_split_at`) at output `k`, limited so that the slice of outputs `[prev, k)` takes a
 *  non-negative count from each run when `prev` lies in `k`'s pair with the split `prev_split`: a strict weak
 *  order gives monotone splits already, any other comparator gets them from this limit, so the slices of a pass
 *  still read and write disjoint parts of their ranges. The result stays a valid split at `k`.
 */
constexpr std::size_t monotone_split(std::size_t base, std::size_t size, std::size_t width, std::size_t prev,
                                     std::size_t prev_split, std::size_t k, std::size_t split) noexcept {
    if (merge_pair_of(base, size, width, k).first > prev) return split; // `k`'s pair starts after `prev`
    if (split < prev_split) return prev_split;
    if (split - prev_split > k - prev) return prev_split + (k - prev);
    return split;
}

/**
 *  Writes outputs `[low, high)` of one pass that merges neighbouring runs of `width` over `[base, base + size)`.
 *  `low_split` and `high_split` are `merge_split_at(low)` and `merge_split_at(high)`, computed before any slice of
 *  the pass moves a value out of the source (a merge leaves moved-from values behind, which a concurrent split
 *  search must not compare); splits at pair boundaries are known without a search.
 */
template <bool construct_k, typename source_type_, typename output_type_, typename comp_type_>
void merge_pass_slice(source_type_ source, output_type_ out, std::size_t base, std::size_t size, std::size_t width,
                      std::size_t low, std::size_t high, std::size_t low_split, std::size_t high_split,
                      comp_type_ &comp, failure_t &failure) noexcept {
    while (low < high) {
        merge_pair_t const pair = merge_pair_of(base, size, width, low);
        std::size_t const end = pair.end() < high ? pair.end() : high;
        std::size_t const from = low == pair.first ? 0 : low_split;
        std::size_t const to = end == pair.end() ? pair.left : high_split;
        source_type_ a = source + pair.first, b = source + (pair.first + pair.left);
        merge_range<construct_k>(a, from, to, b, low - pair.first - from, end - pair.first - to, out, low, comp,
                                 failure);
        low = end;
    }
}

/**
 *  Sorts `data[first..first + size)` stably: insertion-sorted runs of 32, then `passes` merge passes that
 *  alternate between `data` and `scratch` (an empty partner makes a pass copy). Every pass runs even after a
 *  failure (as moves), so the values always end in the buffer the parity of `passes` says, each slot of this
 *  run's share of `scratch` constructed by pass 0.
 */
template <typename data_type_, typename value_type_, typename comp_type_>
void stable_sort_run(data_type_ data, value_type_ *scratch, std::size_t first, std::size_t size, std::size_t passes,
                     bool scratch_live, comp_type_ &comp, failure_t &failure) noexcept {
    constexpr std::size_t run_k = 32;
    for (std::size_t begin = first; begin < first + size; begin += run_k) {
        std::size_t const end = begin + run_k < first + size ? begin + run_k : first + size;
        failure.guard([&] {
            for (std::size_t i = begin + 1; i < end; ++i) {
                if (!comp(data[i], data[i - 1])) continue;
                hole_t<data_type_, value_type_> hole{data + i, std::move(data[i])};
                std::size_t j = i;
                for (; j > begin && comp(hole.value, data[j - 1]); --j) {
                    data[j] = std::move(data[j - 1]);
                    hole.at = data + (j - 1);
                }
            }
        });
    }
    std::size_t width = run_k;
    for (std::size_t pass = 0; pass != passes; ++pass, width *= 2) {
        if (pass % 2 == 1)
            merge_pass_slice<false>(scratch, data, first, size, width, first, first + size, 0, 0, comp, failure);
        else if (scratch_live || pass != 0) // pass 0 filled this run's scratch slots
            merge_pass_slice<false>(data, scratch, first, size, width, first, first + size, 0, 0, comp, failure);
        else
            merge_pass_slice<true>(data, scratch, first, size, width, first, first + size, 0, 0, comp, failure);
    }
}

} // namespace forkunion::detail
