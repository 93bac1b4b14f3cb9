/**
 *  @file   test/model/repro/stale_join_runs_foreign_slice.cpp
 *  @brief  Known bug of `flat.hpp` (exits 1 today): `unsafe_join` documents that "a stale generation returns at
 *          once; joining twice is harmless", but it compares the generation with `sync_.pending`, a plain field that
 *          any thread's next dispatch rewrites. So (1) a second join that overlaps another thread's T2 is a data
 *          race (TSan flags `unsafe_join` against `unsafe_publish` when the two threads share no other
 *          synchronization; this program orders them, so it shows only the second effect), and (2) once
 *          generations wrap (128 dispatches on a `std::uint8_t` pool) the stale generation equals a live dispatch of
 *          another thread and the stale joiner runs that dispatch's slice 0 on its own thread; were both to join
 *          at once, slice 0 would run twice and `threads_to_sync` would underflow.
 *
 *  Interleaving: A: g = unsafe_for_threads; unsafe_join(g). B: 127 dispatches, then unsafe_for_threads -> g again
 *  (pending = g). A: unsafe_join(g) (stale): pending == g, runs B's slice 0. B: unsafe_join(g): pending == 0, waits.
 *  Registered with WILL_FAIL by test/model.cmake.
 */
#include <atomic>  // `std::atomic`
#include <cstdint> // `std::uint8_t`
#include <cstdio>  // `std::printf`
#include <memory>  // `std::allocator`
#include <thread>  // `std::thread`

#include <forkunion/pools/flat.hpp>

#include "test_support.hpp"

namespace fu = forkunion;
using pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t>;

int main() {
    pool_t pool;
    if (!pool.spawn(2, fu::caller_inclusive_k)) return 2;
    std::atomic<int> stage{0};
    std::atomic<std::thread::id> slice_zero_ran_on{};
    auto noop = [](std::uint8_t) noexcept {};
    std::uint8_t stale = 0;
    std::thread a([&] {
        stale = pool.unsafe_for_threads(noop);
        pool.unsafe_join(stale);
        stage.store(1, std::memory_order_release);
        while (stage.load(std::memory_order_acquire) != 2) std::this_thread::yield();
        pool.unsafe_join(stale); // documented: a stale generation returns at once
        stage.store(3, std::memory_order_release);
    });
    while (stage.load(std::memory_order_acquire) != 1) std::this_thread::yield();
    for (int dispatch = 0; dispatch != 127; ++dispatch) forkunion::testing::require_ran(pool.for_threads(noop).join());
    auto record = [&](std::uint8_t thread) noexcept {
        if (thread == 0) slice_zero_ran_on.store(std::this_thread::get_id(), std::memory_order_relaxed);
    };
    std::uint8_t const live = pool.unsafe_for_threads(record);
    stage.store(2, std::memory_order_release);
    while (stage.load(std::memory_order_acquire) != 3) std::this_thread::yield();
    pool.unsafe_join(live);
    a.join();
    bool const foreign = slice_zero_ran_on.load() != std::this_thread::get_id();
    std::printf("stale generation %u, live generation %u: slice 0 ran on %s\n", unsigned(stale), unsigned(live),
                foreign ? "the stale joiner's thread" : "its dispatcher");
    return foreign ? 1 : 0;
}
