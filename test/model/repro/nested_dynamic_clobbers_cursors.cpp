/**
 *  @file   test/model/repro/nested_dynamic_clobbers_cursors.cpp
 *  @brief  Known bug of `flat.hpp` (exits 1 today): thread 0 of a caller-exclusive pool forks a `for_n_dynamic`
 *          (T2n) from inside an outer `for_n_dynamic`. T2n resets every claim cursor; when the nested dispatch
 *          returns, thread 0 resumes the outer `drain` on cursors that now hold the nested dispatch's offsets, and
 *          re-runs the outer tasks from there (or would skip them, were the nested offsets larger).
 *
 *  Interleaving (T = 2, n = 64, blocks [0, 32) and [32, 64)): thread 0 claims offset 0 of cursor 0 and forks;
 *  T2n waits until thread 1 retires, so thread 1 has run tasks 32..63 and stolen 1..31 (both cursors >= 32); the
 *  fork stores 0 to both cursors and runs the nested loop (cursors end at 2..4); thread 0 returns into
 *  `drain(0)`: `fetch_add` yields 2..4 < 32, so it runs tasks 2..31 again, then steals 34..63 again.
 *  Registered with WILL_FAIL by test/model.cmake: drop WILL_FAIL once the header is fixed.
 */
#include <atomic> // `std::atomic`
#include <cstdio> // `std::printf`
#include <thread> // `std::this_thread::yield`

#include <forkunion/pools/flat.hpp>

#include "test_support.hpp"

namespace fu = forkunion;

int main() {
    fu::flat_pool_t pool;
    if (!pool.spawn(2, fu::caller_exclusive_k)) return 2;
    constexpr std::size_t tasks = 64;
    std::atomic<int> runs[tasks] = {};
    std::atomic<bool> forked{false};
    std::atomic<int> inner_runs{0};
    forkunion::testing::require_ran(pool.for_n_dynamic(tasks,
                                                       [&](fu::flat_pool_t::prong_t prong) noexcept {
                                                           runs[prong.task].fetch_add(1, std::memory_order_relaxed);
                                                           if (prong.thread != 0) {
                                                               // Thread 1 holds its first task until thread 0 has
                                                               // claimed one, so it cannot steal them all first.
                                                               while (!forked.load(std::memory_order_acquire))
                                                                   std::this_thread::yield();
                                                               return;
                                                           }
                                                           if (forked.exchange(true, std::memory_order_acq_rel)) return;
                                                           forkunion::testing::require_ran(
                                                               pool.for_n_dynamic(4,
                                                                                  [&](std::size_t) noexcept {
                                                                                      inner_runs.fetch_add(
                                                                                          1, std::memory_order_relaxed);
                                                                                  })
                                                                   .join());
                                                       })
                                        .join());
    int twice = 0, never = 0;
    for (auto const &count : runs) twice += count.load() > 1, never += count.load() == 0;
    std::printf("outer tasks run more than once: %d, never: %d, nested tasks run: %d (want 0, 0, 4)\n", twice, never,
                inner_runs.load());
    return twice || never || inner_runs.load() != 4 ? 1 : 0;
}
