/**
 *  @file   c/forkunion_os.hpp
 *  @brief  The little OS knowledge the C API adds to the C++ library: which OS facilities the build can use and
 *          this process can reach (the `topology`, `thread_pinning`, `memory_placement`, `huge_pages` bits that
 *          `features.hpp` leaves to the layers above).
 *
 *  One interface, one back end per OS, picked at compile time, in namespace `forkunion::c_api`:
 *  - `os_comptime_capabilities()`: the OS bits this build has code for;
 *  - `detect_os_capabilities()`: those this process can reach now (a few system calls: call once and cache).
 *  Private to `c/forkunion.cpp`: not installed, not part of any public header.
 */
#pragma once
#include <forkunion/topology/affinity.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/hardware/features.hpp>

#if FORKUNION_OS_LINUX
#include <sys/syscall.h> // `SYS_get_mempolicy`
#include <unistd.h>      // `access`, `syscall`
#include <cerrno>        // `errno`, `ENOSYS`
#elif FORKUNION_OS_WINDOWS
#include <forkunion/memory/detail/allocators_windows.hpp>
#include <forkunion/hardware/detail/cores_windows.hpp>
#endif

namespace forkunion::c_api {

/**  @brief  The OS facilities this build has code for: topology harvest, pinning, placement, huge pages. */
constexpr capabilities_t os_comptime_capabilities() noexcept {
    capabilities_t mask = capabilities_none_k;
    if (os_linux_k || os_windows_k) mask |= capability_topology_k | capability_huge_pages_k;
    if (affinity_supported_k) mask |= capability_thread_pinning_k;
    if (memory_placement_k) mask |= capability_memory_placement_k;
    return mask;
}

#if FORKUNION_OS_LINUX

/**
 *  @brief  Linux: sysfs describes the CPUs (topology); this thread's affinity can be read (pinning); the kernel
 *          has NUMA memory policies (`get_mempolicy` is not `ENOSYS`); a huge-page pool directory exists.
 */
inline capabilities_t detect_os_capabilities() noexcept {
    capabilities_t mask = capabilities_none_k;
    if (::access("/sys/devices/system/cpu/online", R_OK) == 0) mask |= capability_topology_k;
    cpu_mask_t allowed;
    if (try_read_current_affinity(allowed)) mask |= capability_thread_pinning_k;
    int const saved_errno = errno;
    // `get_mempolicy(NULL, NULL, 0, NULL, 0)` reads this thread's policy: 0 on NUMA kernels, ENOSYS without NUMA.
    if (::syscall(SYS_get_mempolicy, nullptr, nullptr, 0ul, nullptr, 0ul) == 0 || errno != ENOSYS)
        mask |= capability_memory_placement_k;
    errno = saved_errno;
    if (::access("/sys/kernel/mm/hugepages", R_OK) == 0) mask |= capability_huge_pages_k;
    return mask & os_comptime_capabilities();
}

#elif FORKUNION_OS_WINDOWS

/**
 *  @brief  Windows: `GetLogicalProcessorInformationEx` describes the processor groups (topology); this thread's
 *          group affinity can be read (pinning); `GetNumaHighestNodeNumber` answers (placement); the process can
 *          enable `SeLockMemoryPrivilege`, which large pages need (huge pages: usually only for accounts an
 *          administrator granted "Lock pages in memory").
 */
inline capabilities_t detect_os_capabilities() noexcept {
    capabilities_t mask = capabilities_none_k;
    detail::windows_groups_t groups;
    if (detail::windows_cores_t::try_read_groups(groups)) mask |= capability_topology_k;
    cpu_mask_t allowed;
    if (try_read_current_affinity(allowed)) mask |= capability_thread_pinning_k;
    ULONG highest = 0;
    if (::GetNumaHighestNodeNumber(&highest)) mask |= capability_memory_placement_k;
    if (detail::windows_memory_backend_t::try_enable_large_pages()) mask |= capability_huge_pages_k;
    return mask & os_comptime_capabilities();
}

#else

/**  @brief  Elsewhere: the portable back ends reach no OS facility beyond threads. */
inline capabilities_t detect_os_capabilities() noexcept {
    return capabilities_none_k;
}

#endif

} // namespace forkunion::c_api
