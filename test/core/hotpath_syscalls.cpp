/**
 *  @file   hotpath_syscalls.cpp
 *  @brief  The workload of the syscall proof: `strace -f` (see `strace_check.cmake`) counts the system calls
 *          every thread makes between two `getppid` markers, around 10^5 dispatches in spin mode.
 *
 *  Usage: forkunion_hotpath_syscalls [inclusive|exclusive]. Uses at most as many spinning threads as allowed
 *  cores: an oversubscribed pool yields (a system call) by design.
 */
#include <atomic>
#include <cstdio>
#include <cstring>

#include <sys/syscall.h>
#include <unistd.h>

#include <forkunion/flat.hpp>

namespace fu = forkunion;

int main(int argc, char **argv) {
    bool const exclusive = argc > 1 && std::strcmp(argv[1], "exclusive") == 0;
    std::size_t const cores = fu::allowed_cores_count();
    // An exclusive caller spins too, so it takes one core of the budget.
    std::size_t const threads = exclusive ? (cores > 1 ? cores - 1 : 1) : (cores < 2 ? cores : 2);
    fu::flat_pool_t pool;
    if (!pool.spawn(threads, exclusive ? fu::caller_exclusive_k : fu::caller_inclusive_k)) return 2;
    if (pool.oversubscribed()) {
        std::fprintf(stderr, "this machine cannot run %zu spinning threads without oversubscription\n", threads);
        return 3;
    }
    std::atomic<std::size_t> sink{0};
    auto add = [&](std::size_t task) noexcept { sink.fetch_add(task, std::memory_order_relaxed); };
    auto slices = [&](std::size_t first, std::size_t count) noexcept { sink.fetch_add(first + count); };
    for (int i = 0; i != 1000; ++i) pool.for_n(64, add).join(); // warm up

    ::syscall(SYS_getppid); // begin marker
    for (int i = 0; i != 25'000; ++i) {
        pool.for_n(64, add).join();
        pool.for_n_dynamic(64, add).join();
        pool.for_slices(64, slices).join();
        pool.for_threads(add).join();
    }
    ::syscall(SYS_getppid); // end marker
    std::printf("%zu threads, 100000 dispatches, checksum %zu\n", threads, sink.load());
    return 0;
}
