/**
 *  @file   forkunion/memory/detail/os_capabilities_linux.hpp
 *  @brief  `linux_os_capabilities_t`: which OS facilities this process can reach on Linux, for
 *          `forkunion/memory/os_capabilities.hpp`. Declared only on Linux.
 */
#pragma once
#include <forkunion/hardware/features.hpp>
#include <forkunion/topology/affinity.hpp>

#if FORKUNION_OS_LINUX
#include <sys/syscall.h> // `SYS_get_mempolicy`
#include <unistd.h>      // `access`, `syscall`
#include <cerrno>        // `errno`, `ENOSYS`

namespace forkunion::detail {

/**
 *  @brief  Linux: sysfs describes the CPUs (topology); this thread's affinity can be read (pinning); the kernel
 *          has NUMA memory policies (`get_mempolicy` is not `ENOSYS`); a huge-page pool directory exists.
 */
struct linux_os_capabilities_t {
    static capabilities_t detect(capabilities_t comptime) noexcept {
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
        return mask & comptime;
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_LINUX
