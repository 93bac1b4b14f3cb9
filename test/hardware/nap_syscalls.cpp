/**
 *  @file   nap_syscalls.cpp
 *  @brief  The workload of the nap-mode syscall proof: `strace -f` (see `strace_check.cmake`) counts the system
 *          calls every thread makes between two `getppid` markers, around 10^5 nap -> dispatch cycles.
 *
 *  The capability word is detected before the window (on RISC-V detection reads a file, once per process), so the
 *  window holds only the steady state: an address wait (UMWAIT, WFET, WFE, WRS) or the micro-wait, never the
 *  kernel. Uses at most as many threads as allowed cores, so no thread yields.
 */
#include <atomic>
#include <cstdio>

#include <sys/syscall.h>
#include <unistd.h>

#include <forkunion/pools/flat.hpp>

namespace fu = forkunion;

int main() {
    std::size_t const threads = fu::allowed_cores_count() < 2 ? 1 : 2;
    fu::flat_pool_t pool;
    if (!pool.spawn(threads)) return 2;
    if (pool.oversubscribed()) return 3;
    (void)fu::runtime_capabilities();
    std::atomic<std::size_t> sink{0};
    auto add = [&](std::size_t thread) noexcept { sink.fetch_add(thread + 1, std::memory_order_relaxed); };
    if (!pool.set_idle_policy(fu::idle_policy_t::nap())) return 4;
    for (int i = 0; i != 1000; ++i)
        if (!pool.for_threads(add).join()) return 5; // warm up

    ::syscall(SYS_getppid); // begin marker
    for (int i = 0; i != 100'000; ++i)
        if (!pool.for_threads(add).join()) return 5;
    ::syscall(SYS_getppid); // end marker
    char const *instruction = fu::nap_backend_t::instruction();
    std::printf("%zu threads, 100000 dispatches napping with %s, checksum %zu\n", threads,
                instruction ? instruction : "the micro-wait", sink.load());
    return 0;
}
