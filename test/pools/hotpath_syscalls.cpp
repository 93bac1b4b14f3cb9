/**
 *  @file   hotpath_syscalls.cpp
 *  @brief  The workload of the syscall proof: `strace -f` (see `strace_check.cmake`) counts the system calls
 *          every thread makes between two `getppid` markers, around 10^5 back-to-back dispatches.
 *
 *  Usage: forkunion_hotpath_syscalls [inclusive|exclusive] [spin|adaptive]. `spin` sets the spin policy; `adaptive`
 *  keeps the default, whose 100 µs window is far above the gap between back-to-back dispatches, so no worker may
 *  park (and no dispatch may then call the kernel to wake it). Uses at most as many spinning threads as allowed
 *  cores: an oversubscribed pool yields (a system call) by design.
 */
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <sys/syscall.h>
#include <unistd.h>

#include <forkunion/pools/flat.hpp>

namespace fu = forkunion;

int main(int argc, char **argv) {
    bool const exclusive = argc > 1 && std::strcmp(argv[1], "exclusive") == 0;
    bool const adaptive = argc > 2 && std::strcmp(argv[2], "adaptive") == 0;
    std::size_t const cores = fu::allowed_cores_count();
    // An exclusive caller spins too, so it takes one core of the budget.
    std::size_t const threads = exclusive ? (cores > 1 ? cores - 1 : 1) : (cores < 2 ? cores : 2);
    fu::flat_pool_t pool;
    if (!adaptive && !pool.set_idle_policy(fu::idle_policy_t::spin())) return 2;
    if (pool.idle_policy().mode != (adaptive ? fu::idle_mode_t::adaptive_k : fu::idle_mode_t::spin_k)) return 2;
    if (!pool.spawn(threads, exclusive ? fu::caller_exclusive_k : fu::caller_inclusive_k)) return 2;
    if (pool.oversubscribed()) {
        std::fprintf(stderr, "this machine cannot run %zu spinning threads without oversubscription\n", threads);
        return 3;
    }
    std::atomic<std::size_t> sink{0};
    auto add = [&](std::size_t task) noexcept { sink.fetch_add(task, std::memory_order_relaxed); };
    auto slices = [&](std::size_t first, std::size_t count) noexcept { sink.fetch_add(first + count); };
    bool ran = true;
    for (int i = 0; i != 1000; ++i) ran = ran && pool.for_n(64, add).join(); // warm up

    // With the adaptive policy a worker may park legitimately when this thread (or the worker itself) was
    // descheduled for longer than the window: each half window a round lost counts once (a round descheduled for
    // several windows lets a worker park, be woken and park again), and the check allows one park's system calls
    // for each. A quiet machine has none, and then the check allows none.
    std::uint64_t const window_us = pool.idle_policy().microseconds;
    std::size_t long_rounds = 0;
    std::uint64_t before = fu::monotonic_microseconds();
    ::syscall(SYS_getppid); // begin marker
    for (int i = 0; i != 25'000; ++i) {
        ran = ran && pool.for_n(64, add).join();
        ran = ran && pool.for_n_dynamic(64, add).join();
        ran = ran && pool.for_slices(64, slices).join();
        ran = ran && pool.for_threads(add).join();
        std::uint64_t const after = fu::monotonic_microseconds();
        if (adaptive && window_us >= 2) long_rounds += static_cast<std::size_t>((after - before) / (window_us / 2));
        before = after;
    }
    ::syscall(SYS_getppid); // end marker
    if (!ran) return 4;     // a refused dispatch: nothing to prove
    std::printf("%zu threads, %s, 100000 dispatches, checksum %zu, long rounds: %zu\n", threads,
                adaptive ? "adaptive" : "spin", sink.load(), long_rounds);
    return 0;
}
