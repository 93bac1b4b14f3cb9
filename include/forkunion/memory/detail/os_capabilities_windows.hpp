/**
 *  @file   forkunion/memory/detail/os_capabilities_windows.hpp
 *  @brief  `windows_os_capabilities_t`: which OS facilities this process can reach on Windows, for
 *          `forkunion/memory/os_capabilities.hpp`. Declared only on Windows.
 */
#pragma once
#include <forkunion/hardware/features.hpp>
#include <forkunion/hardware/detail/cores_windows.hpp>
#include <forkunion/memory/detail/allocators_windows.hpp>
#include <forkunion/topology/affinity.hpp>

#if FORKUNION_OS_WINDOWS
namespace forkunion::detail {

/**
 *  @brief  Windows: `GetLogicalProcessorInformationEx` describes the processor groups (topology); this thread's
 *          group affinity can be read (pinning); `GetNumaHighestNodeNumber` answers (placement); the process can
 *          enable `SeLockMemoryPrivilege`, which large pages need (huge pages: usually only for accounts an
 *          administrator granted "Lock pages in memory").
 */
struct windows_os_capabilities_t {
    static capabilities_t detect(capabilities_t comptime) noexcept {
        capabilities_t mask = capabilities_none_k;
        windows_groups_t groups;
        if (windows_cores_t::try_read_groups(groups)) mask |= capability_topology_k;
        cpu_mask_t allowed;
        if (try_read_current_affinity(allowed)) mask |= capability_thread_pinning_k;
        ULONG highest = 0;
        if (::GetNumaHighestNodeNumber(&highest)) mask |= capability_memory_placement_k;
        if (windows_memory_backend_t::try_enable_large_pages()) mask |= capability_huge_pages_k;
        return mask & comptime;
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
