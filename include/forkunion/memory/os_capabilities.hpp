/**
 *  @file   forkunion/memory/os_capabilities.hpp
 *  @brief  The OS bits of `capabilities_t` that `forkunion/hardware/features.hpp` leaves to the layers above:
 *          `topology` (the OS describes its CPUs), `thread_pinning`, `memory_placement` and `huge_pages`.
 *
 *  - `os_comptime_capabilities()`: the bits this build has code for (constant);
 *  - `detect_os_capabilities()`: those this process can reach now. A few system calls and file probes: call it
 *    once and keep the answer (the C API does). Thread-safe, `noexcept`, allocates nothing.
 *  One backend per OS in `detail/` (Linux, Windows), picked with `using`; elsewhere the portable backends reach no
 *  OS facility beyond threads, and both answer only what the build has code for.
 */
#pragma once
#include <forkunion/hardware/features.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/topology/affinity.hpp>

#include <forkunion/memory/detail/os_capabilities_linux.hpp>
#include <forkunion/memory/detail/os_capabilities_windows.hpp>

namespace forkunion {

/**  @brief  The OS facilities this build has code for: topology harvest, pinning, placement, huge pages. */
constexpr capabilities_t os_comptime_capabilities() noexcept {
    capabilities_t mask = capabilities_none_k;
    if (os_linux_k || os_windows_k) mask |= capability_topology_k | capability_huge_pages_k;
    if (affinity_supported_k) mask |= capability_thread_pinning_k;
    if (memory_placement_k) mask |= capability_memory_placement_k;
    return mask;
}

namespace detail {
/**  Elsewhere: nothing beyond threads. */
struct portable_os_capabilities_t {
    static capabilities_t detect(capabilities_t) noexcept { return capabilities_none_k; }
};
} // namespace detail

#if FORKUNION_OS_LINUX
using os_capabilities_backend_t = detail::linux_os_capabilities_t;
#elif FORKUNION_OS_WINDOWS
using os_capabilities_backend_t = detail::windows_os_capabilities_t;
#else
using os_capabilities_backend_t = detail::portable_os_capabilities_t;
#endif

/**  @brief  The OS facilities this process can reach now, within `os_comptime_capabilities()`. */
inline capabilities_t detect_os_capabilities() noexcept {
    return os_capabilities_backend_t::detect(os_comptime_capabilities());
}

} // namespace forkunion
