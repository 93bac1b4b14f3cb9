/**
 *  @file   nothrow_callbacks.cpp
 *  @brief  Every pool verb handed a callback that is `noexcept`, or not, for `nothrow_compile_check.cmake`.
 *
 *  The rule under test: a callback a pool's threads run must be nothrow-invocable, or the program does not compile,
 *  with a message that says why and what to write instead; without exceptions (`-fno-exceptions`) any callback
 *  compiles. The script compiles this file once per case and checks the verdict:
 *
 *  - `FORKUNION_TEST_POOL`: 0 the flat pool, 1 a colocated pool, 2 a distributed pool, -1 all three.
 *  - `FORKUNION_TEST_VERB`: which dispatch (the `verb_*_k` constants below), or -1 for every one the pool has.
 *  - `FORKUNION_TEST_NOEXCEPT`: `noexcept` or nothing, written after each callback's parameters.
 *
 *  Each callback's body calls `touch`, a function that may throw, as real callbacks do; only the `noexcept` on the
 *  callback differs between a case that must fail and its positive control.
 */
#include <cstddef>
#include <type_traits>

#if FORKUNION_TEST_POOL == 0 || FORKUNION_TEST_POOL == -1
#include <forkunion/pools/flat.hpp>
#endif
#if FORKUNION_TEST_POOL == 1 || FORKUNION_TEST_POOL == -1
#include <forkunion/pools/colocated.hpp>
#endif
#if FORKUNION_TEST_POOL == 2 || FORKUNION_TEST_POOL == -1
#include <forkunion/pools/distributed.hpp>
#endif

namespace fu = forkunion;

namespace {

constexpr int verb_k = FORKUNION_TEST_VERB;
constexpr int verb_for_threads_k = 0;
constexpr int verb_for_n_k = 1;
constexpr int verb_for_n_dynamic_k = 2;
constexpr int verb_for_slices_k = 3;
constexpr int verb_unsafe_for_threads_k = 4;       // the split API: publish, then join by generation
constexpr int verb_run_on_caller_k = 5;            // `join_or_run_on_caller()`: the refused loop run here
constexpr int verb_generic_lambda_k = 6;           // `[](auto task)`: the index shape, deduced
constexpr int verb_prong_lambda_k = 7;             // `fn(prong)` instead of `fn(task)`
constexpr int verb_prong_slices_k = 8;             // `fn(prong, count)` in `for_slices`
constexpr int verb_function_object_k = 9;          // a class with an `operator()` that may throw
constexpr int verb_function_pointer_k = 10;        // a plain function, not `noexcept`
constexpr int verb_unsafe_for_threads_sole_k = 11; // the flat pool's sole-claimer split publication

constexpr bool runs(int verb) noexcept {
    return verb_k == -1 || verb_k == verb;
}

std::size_t touched = 0;
void touch(std::size_t value) {
    touched += value;
} // may throw, as far as the compiler knows

struct function_object_t {
    void operator()(std::size_t task) const FORKUNION_TEST_NOEXCEPT { touch(task); }
};
void plain_function(std::size_t task) FORKUNION_TEST_NOEXCEPT {
    touch(task);
}

/**  Hands one callback to each verb `verb_k` selects; a pool that was never spawned refuses every dispatch, which
 *   this file never runs: only whether it compiles matters. */
template <typename pool_type_>
bool dispatch_on(pool_type_ &pool) noexcept {
    using index_t = typename pool_type_::index_t;
    using prong_t = fu::prong_t<index_t>;
    bool ran = true;
    if constexpr (runs(verb_for_threads_k))
        ran &=
            static_cast<bool>(pool.for_threads([](index_t thread) FORKUNION_TEST_NOEXCEPT { touch(thread); }).join());
    if constexpr (runs(verb_for_n_k))
        ran &= static_cast<bool>(pool.for_n(8, [](index_t task) FORKUNION_TEST_NOEXCEPT { touch(task); }).join());
    if constexpr (runs(verb_for_n_dynamic_k))
        ran &=
            static_cast<bool>(pool.for_n_dynamic(8, [](index_t task) FORKUNION_TEST_NOEXCEPT { touch(task); }).join());
    if constexpr (runs(verb_for_slices_k))
        ran &= static_cast<bool>(
            pool.for_slices(8, [](index_t first, index_t count) FORKUNION_TEST_NOEXCEPT { touch(first + count); })
                .join());
    if constexpr (runs(verb_unsafe_for_threads_k)) {
        auto callback = [](index_t thread) FORKUNION_TEST_NOEXCEPT { touch(thread); };
        auto const publication = pool.unsafe_for_threads(callback);
        if (publication.generation) pool.unsafe_join(publication.generation);
        ran &= static_cast<bool>(publication);
    }
    if constexpr (runs(verb_run_on_caller_k))
        ran &= pool.for_n(8, [](index_t task) FORKUNION_TEST_NOEXCEPT { touch(task); }).join_or_run_on_caller();
    if constexpr (runs(verb_generic_lambda_k))
        ran &= static_cast<bool>(pool.for_n(8, [](auto task) FORKUNION_TEST_NOEXCEPT { touch(task); }).join());
    if constexpr (runs(verb_prong_lambda_k))
        ran &=
            static_cast<bool>(pool.for_n(8, [](prong_t prong) FORKUNION_TEST_NOEXCEPT { touch(prong.task); }).join());
    if constexpr (runs(verb_prong_slices_k))
        ran &= static_cast<bool>(
            pool.for_slices(8, [](prong_t first, index_t count) FORKUNION_TEST_NOEXCEPT { touch(first.task + count); })
                .join());
    if constexpr (runs(verb_function_object_k)) ran &= static_cast<bool>(pool.for_n(8, function_object_t{}).join());
    if constexpr (runs(verb_function_pointer_k)) ran &= static_cast<bool>(pool.for_n(8, &plain_function).join());
    if constexpr (runs(verb_unsafe_for_threads_sole_k) && std::is_same_v<pool_type_, fu::flat_pool_t>) {
        auto callback = [](index_t thread) FORKUNION_TEST_NOEXCEPT { touch(thread); };
        auto const publication = pool.unsafe_for_threads_sole(callback);
        if (publication.generation) pool.unsafe_join(publication.generation);
        ran &= static_cast<bool>(publication);
    }
    return ran;
}

} // namespace

int main() {
    bool ran = true;
#if FORKUNION_TEST_POOL == 0 || FORKUNION_TEST_POOL == -1
    fu::flat_pool_t flat;
    ran &= dispatch_on(flat);
#endif
#if FORKUNION_TEST_POOL == 1 || FORKUNION_TEST_POOL == -1
    fu::colocated_pool_t colocated;
    ran &= dispatch_on(colocated);
#endif
#if FORKUNION_TEST_POOL == 2 || FORKUNION_TEST_POOL == -1
    fu::distributed_pool_t distributed;
    ran &= dispatch_on(distributed);
#endif
    return ran ? 0 : 1;
}
