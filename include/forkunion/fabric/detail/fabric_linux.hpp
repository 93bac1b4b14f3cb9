/**
 *  @file   forkunion/fabric/detail/fabric_linux.hpp
 *  @brief  `linux_fabric_platform_t`: what `forkunion/fabric/fabric.hpp` needs from Linux to measure the memory fabric.
 *
 *  One small interface, which `portable_fabric_platform_t` (`fabric_portable.hpp`) also implements:
 *
 *      affinity_t                      the affinity back end that pins the measuring threads (`linux_affinity_t`)
 *      memory_t                        the memory back end that binds each buffer to its node
 *                                      (`linux_memory_backend_t`: `mmap` + `mbind(MPOL_BIND)`)
 *      now_ns()                        a monotonic clock in nanoseconds: `clock_gettime(CLOCK_MONOTONIC)`, a vDSO
 *                                      call of ~20 ns, without the ~50 ms that `<chrono>` adds to every
 *                                      translation unit including the umbrella (measured with g++ 12 -O2);
 *                                      times the streaming passes, whose threads must overlap
 *      thread_cpu_ns()                 the calling thread's CPU time: `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, a
 *                                      system call of ~0.25 µs; times the pointer chase, so that time the thread
 *                                      spends descheduled is not taken for memory latency (a load stalled on
 *                                      memory is CPU time; on a shared 2-vCPU KVM guest, wall-clock windows of
 *                                      the same walk read 45 or 410 ns depending on the neighbours)
 *      advise_huge_pages(p, bytes)     asks for transparent huge pages on a fresh range before its first touch:
 *                                      `madvise(MADV_HUGEPAGE)`, so that a random walk over a 1 GiB buffer
 *                                      measures the memory, not the page walks of 262,144 base pages. Advice
 *                                      only: where THP is `never` or no huge page is free, base pages remain.
 *
 *  Every member is static, `noexcept`, stateless and callable from any thread. Declared only on Linux.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/topology/detail/affinity_linux.hpp>
#include <forkunion/memory/detail/allocators_linux.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_LINUX
#include <sys/mman.h> // `madvise`, `MADV_HUGEPAGE`
#include <time.h>     // `clock_gettime`, `CLOCK_MONOTONIC`

namespace forkunion::detail {

/**  @brief  Pinning, placement, clock and page advice for the fabric harvest on Linux. See the file comment. */
struct linux_fabric_platform_t {
    using affinity_t = linux_affinity_t;
    using memory_t = linux_memory_backend_t;

    static std::uint64_t now_ns() noexcept {
        struct timespec now {};
        ::clock_gettime(CLOCK_MONOTONIC, &now); // cannot fail with a valid clock id and pointer
        return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(now.tv_nsec);
    }

    static std::uint64_t thread_cpu_ns() noexcept {
        struct timespec now {};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now); // cannot fail for the calling thread
        return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(now.tv_nsec);
    }

    /**  Advice: a refusal (`EINVAL` where THP is compiled out) changes nothing and is not an error. */
    static void advise_huge_pages(void *address, std::size_t bytes) noexcept {
        (void)::madvise(address, bytes, MADV_HUGEPAGE);
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_LINUX
