/**
 *  @file   forkunion/cores.hpp
 *  @brief  `allowed_cores_count()`: how many logical cores this process may run on.
 *
 *  One function, one backend per OS, picked here with `using`:
 *  - Linux (`detail/cores_linux.hpp`): the process's affinity mask (`sched_getaffinity`), so `taskset -c 0` and
 *    cgroup cpusets are honoured. The mask buffer is 1 KiB on the stack (8192 CPUs), so the call never allocates.
 *  - Elsewhere (`detail/cores_portable.hpp`): `std::thread::hardware_concurrency()`.
 *  Both answer at least 1. Thread-safe; on Linux a system call, so pools call it at `spawn`, never per dispatch.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/types.hpp>
#if FORKUNION_OS_LINUX
#include <forkunion/detail/cores_linux.hpp>
#else
#include <forkunion/detail/cores_portable.hpp>
#endif

namespace forkunion {

#if FORKUNION_OS_LINUX
using cores_backend_t = detail::linux_cores_t;
#else
using cores_backend_t = detail::portable_cores_t;
#endif

/**  @brief  Logical cores this process may run on; at least 1. Thread-safe; may be a system call. */
inline std::size_t allowed_cores_count() noexcept {
    return cores_backend_t::allowed_count();
}

} // namespace forkunion
