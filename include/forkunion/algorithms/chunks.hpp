/**
 *  @file   forkunion/algorithms/chunks.hpp
 *  @brief  What every parallel algorithm of `algorithms.hpp` stands on: the grain and `with_grain`, the
 *          `pool_like` concept, ranges as arguments, blocks grouped into chunks, and the two dispatches
 *          (`run_chunks`, `run_threads`) that turn a refused or exceptional dispatch into a defined outcome.
 *
 *  Include `<forkunion/algorithms/algorithms.hpp>` rather than this header: the contracts are documented there.
 */
#pragma once
#include <cstddef>     // `std::size_t`
#include <new>         // placement `new`
#include <type_traits> // `std::is_trivially_destructible_v`, `std::remove_cvref_t`, `std::is_floating_point_v`
#include <utility>     // `std::move`, `std::forward`, `std::in_range`
#if defined(__GLIBCXX__) && __has_include(<bits/iterator_concepts.h>)
#include <bits/iterator_concepts.h> // `std::random_access_iterator`, `std::iter_value_t`, `std::iter_difference_t`
#else
#include <iterator> // `std::random_access_iterator`, `std::iter_value_t`, `std::iter_difference_t`
#endif
// `<ranges>` brings every view; libstdc++ declares `std::ranges::begin`, `size` and the range concepts alone.
#if defined(__GLIBCXX__) && __has_include(<bits/ranges_base.h>) && __has_include(<bits/stl_iterator.h>)
#include <bits/stl_iterator.h> // `std::make_reverse_iterator`, which `<bits/ranges_base.h>` uses undeclared
#include <bits/ranges_base.h>  // `std::ranges::begin`, `std::ranges::size`, `std::ranges::random_access_range`
#else
#include <ranges> // `std::ranges::begin`, `std::ranges::size`, `std::ranges::random_access_range`
#endif

#include <forkunion/algorithms/failure.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/pools/flat.hpp>

namespace forkunion {

/**  @brief  Elements per block when no grain is given: a constant, so that reductions reproduce on every machine. */
inline constexpr std::size_t default_grain_k = 4096;

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

/**
 *  @brief  What the algorithms take in place of an iterator pair: a `std::ranges` random-access range whose size
 *          is known (`std::vector`, `std::span`, arrays, `std::views::iota(0, n)`, the library's
 *          `sharded_array_t`). `first` is `std::ranges::begin(r)` and `last` is `first + std::ranges::size(r)`,
 *          so the range need not end in an iterator of its own type.
 */
template <typename range_type_>
concept sized_random_access_range =
    std::ranges::random_access_range<range_type_> && std::ranges::sized_range<range_type_>;

/**  @brief  A `sized_random_access_range` whose iterators outlive the call: what the overloads that return an
 *          iterator into the range take (an lvalue, or a view such as `std::span`). */
template <typename range_type_>
concept borrowed_random_access_range =
    sized_random_access_range<range_type_> && std::ranges::borrowed_range<range_type_>;

namespace detail {

/**  The iterator one past a sized range's last element. */
template <typename range_type_>
auto range_end(range_type_ &&range) {
    using difference_t = std::ranges::range_difference_t<range_type_>;
    return std::ranges::begin(range) + static_cast<difference_t>(std::ranges::size(range));
}

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

/**
 *  Raw, aligned room for `capacity_` values, constructed one by one in any order (distinct slots from any threads);
 *  no heap, no default value. The destructor destroys exactly the slots constructed, so a user function that
 *  throws between two constructions leaks nothing: a type with a destructor keeps a flag per slot (cleared up
 *  front), a trivially destructible one keeps nothing and costs nothing.
 */
template <typename value_type_, std::size_t capacity_>
struct uninitialized_array_t {
    static constexpr bool tracked_k = !std::is_trivially_destructible_v<value_type_>;
    union {
        value_type_ values[capacity_];
    };
    bool built[tracked_k ? capacity_ : 1];

    uninitialized_array_t() noexcept {
        if constexpr (tracked_k)
            for (bool &flag : built) flag = false;
    }
    ~uninitialized_array_t() noexcept {
        if constexpr (tracked_k)
            for (std::size_t i = 0; i != capacity_; ++i)
                if (built[i]) values[i].~value_type_();
    }
    uninitialized_array_t(uninitialized_array_t const &) = delete;
    uninitialized_array_t &operator=(uninitialized_array_t const &) = delete;

    template <typename... args_types_>
    void construct(std::size_t i, args_types_ &&...args) noexcept {
        ::new (static_cast<void *>(values + i)) value_type_(std::forward<args_types_>(args)...);
        if constexpr (tracked_k) built[i] = true;
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
    static_assert(std::is_nothrow_invocable_v<fn_type_ &, std::size_t>, "a task a pool runs must be `noexcept`");
    using index_t = typename pool_type_::index_t;
    if (chunks <= 1 || pool.threads_count() <= 1) {
        for (std::size_t chunk = 0; chunk != chunks; ++chunk) fn(chunk);
        return;
    }
    // The task count never exceeds what `index_t` holds (its maximum, an unsigned type's all-ones), so the pool
    // never refuses it; were it refused all the same, the chunks would run here rather than be lost.
    constexpr std::size_t index_limit_k = static_cast<std::size_t>(static_cast<index_t>(~index_t(0)));
    static_assert(std::is_unsigned_v<index_t> && index_limit_k > 0, "pools count tasks in an unsigned type");
    std::size_t const tasks = chunks < index_limit_k ? chunks : index_limit_k;
    auto task = [&fn, chunks, tasks](index_t first) noexcept {
        for (std::size_t chunk = first; chunk < chunks; chunk += tasks) fn(chunk);
    };
    auto guard = pool.for_n_dynamic(tasks, task);
    if (!guard.join_or_run_on_caller()) {
        (void)guard.status();
        for (std::size_t chunk = 0; chunk != chunks; ++chunk) fn(chunk);
    }
}

/**  Calls `fn(thread)` once on every thread of the pool, or `fn(0)` once on the calling thread when it refuses. */
template <typename pool_type_, typename fn_type_>
void run_threads(pool_type_ &pool, fn_type_ &fn) noexcept {
    static_assert(std::is_nothrow_invocable_v<fn_type_ &, std::size_t>, "a task a pool runs must be `noexcept`");
    using index_t = typename pool_type_::index_t;
    auto task = [&fn](index_t thread) noexcept { fn(static_cast<std::size_t>(thread)); };
    pool.for_threads(task).join_or_run_on_caller();
}

/**
 *  `a ⊕ b` as `std::plus<>`, `a ⊗ b` as `std::multiplies<>`, without their header, except that on floating-point
 *  operands a NaN `a` decides the result: `a + (a != a ? a : b)`. IEEE-754 leaves open which of two NaN operands
 *  the result carries, and compilers swap the operands of `+` and `*` freely, so the bare operator could give
 *  different NaN payloads in the serial and the parallel code of the same rule; here both operands are the same
 *  NaN whenever `a` is one, and with one NaN or none the order does not matter.
 *
 *  That select keeps the lanes of a sum from vectorizing (a 16-lane `double` sum ran 26x slower in cache), so each
 *  also names its `unordered()` twin, the bare operator: on operands without NaNs the two give the same bits (IEEE
 *  `+` and `*` are commutative there, signed zeros and infinities included), and a result is a NaN under one
 *  exactly when it is under the other. `reduce_block` evaluates a block with the twins and again with these only
 *  when the result is a NaN, so the NaN payload still follows the left operand.
 */
struct bare_plus_t {
    template <typename left_type_, typename right_type_>
    constexpr auto operator()(left_type_ &&a, right_type_ &&b) const noexcept(noexcept(a + b)) {
        return std::forward<left_type_>(a) + std::forward<right_type_>(b);
    }
};
struct bare_multiplies_t {
    template <typename left_type_, typename right_type_>
    constexpr auto operator()(left_type_ &&a, right_type_ &&b) const noexcept(noexcept(a *b)) {
        return std::forward<left_type_>(a) * std::forward<right_type_>(b);
    }
};
struct plus_t {
    constexpr bare_plus_t unordered() const noexcept { return {}; }
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
    constexpr bare_multiplies_t unordered() const noexcept { return {}; }
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
 *  `fn(args...)` as a `value_type_`, the type an algorithm accumulates in. An operator over a type narrower than
 *  `int` returns `int` (integral promotion); converting it back is the algorithm's own step, as in the serial
 *  loop `acc = acc + x`, written once here so that `-Wconversion` has nothing to report in the user's build.
 */
template <typename value_type_, typename fn_type_, typename... arg_types_>
constexpr value_type_ call_as(fn_type_ &fn, arg_types_ &&...args) {
    return static_cast<value_type_>(fn(std::forward<arg_types_>(args)...));
}

} // namespace detail
} // namespace forkunion
