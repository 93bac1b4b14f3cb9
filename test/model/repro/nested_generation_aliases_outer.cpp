/**
 *  @file   test/model/repro/nested_generation_aliases_outer.cpp
 *  @brief  Known bug of `flat.hpp` (exits 1 today): T2n numbers its forks e + 2, e + 4, ... and leaves `outer`
 *          alone, so on a `std::uint8_t` pool the 128th fork inside one outer slice gets generation == outer.
 *          `is_complete` then answers false (e odd and outer == g) until the outer dispatch retires, which only
 *          thread 0 itself can do: the fork's guard `join()` spins forever. `uint16_t` needs 32768 forks.
 *
 *  This program does not hang: thread 0 forks with `unsafe_for_threads` (which returns complete) and checks
 *  `is_complete(generation)` instead of joining. Registered with WILL_FAIL by test/model.cmake.
 */
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
    if (!pool.spawn(2, fu::caller_exclusive_k)) return 2;
    int refused = 0, incomplete = 0, first_incomplete = -1;
    auto noop = [](std::uint8_t) noexcept {};
    auto job = [&](std::uint8_t thread) noexcept {
        if (thread != 0) return;
        for (int fork = 1; fork <= 200; ++fork) {
            std::uint8_t const generation = pool.unsafe_for_threads(noop);
            if (!generation)
                ++refused;
            else if (!pool.is_complete(generation)) {
                ++incomplete;
                if (first_incomplete < 0) first_incomplete = fork;
            }
        }
    };
    forkunion::testing::require_ran(pool.for_threads(job).join());
    std::printf("forks refused: %d, reported incomplete after returning: %d (first: fork %d) (want 0, 0)\n", refused,
                incomplete, first_incomplete);
    return refused || incomplete ? 1 : 0;
}
