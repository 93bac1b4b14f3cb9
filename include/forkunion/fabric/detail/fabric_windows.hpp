/**
 *  @file   forkunion/fabric/detail/fabric_windows.hpp
 *  @brief  `windows_fabric_platform_t`: what `forkunion/fabric/fabric.hpp` needs from Windows to measure the memory
 *          fabric (the interface is described in `fabric_linux.hpp`).
 *
 *      affinity_t          `windows_affinity_t`: `SetThreadGroupAffinity` from inside each measuring thread
 *      memory_t            `windows_memory_backend_t`: `VirtualAllocExNuma`, the node preferred (not bound)
 *      now_ns()            `QueryPerformanceCounter`, scaled by its frequency: monotonic, about 100 ns or finer
 *      thread_cpu_ns()     the same clock: Windows' per-thread CPU time (`GetThreadTimes`) advances in
 *                          scheduler ticks of ~15.6 ms, far coarser than one latency window, and its cycle
 *                          count (`QueryThreadCycleTime`) is not in nanoseconds; so, as on the portable
 *                          platform, a descheduled walker inflates its window
 *      advise_huge_pages   nothing: Windows has no transparent huge pages
 *
 *  Every member is static, `noexcept`, stateless and callable from any thread. Declared only on Windows.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/topology/detail/affinity_windows.hpp>
#include <forkunion/memory/detail/allocators_windows.hpp>
#include <forkunion/hardware/detail/system_windows.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
namespace forkunion::detail {

struct windows_fabric_platform_t {
    using affinity_t = windows_affinity_t;
    using memory_t = windows_memory_backend_t;

    static std::uint64_t now_ns() noexcept {
        LARGE_INTEGER counter{}, frequency{};
        ::QueryPerformanceCounter(&counter);     // cannot fail on Windows XP and later
        ::QueryPerformanceFrequency(&frequency); // fixed at boot
        std::uint64_t const ticks = static_cast<std::uint64_t>(counter.QuadPart);
        std::uint64_t const hertz = frequency.QuadPart > 0 ? static_cast<std::uint64_t>(frequency.QuadPart) : 1;
        // Seconds and the remainder apart, so `ticks * 10^9` cannot overflow after ~30 minutes of a 10 MHz counter.
        return ticks / hertz * 1'000'000'000ull + ticks % hertz * 1'000'000'000ull / hertz;
    }

    static std::uint64_t thread_cpu_ns() noexcept { return now_ns(); }

    static void advise_huge_pages(void *, std::size_t) noexcept {}
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
