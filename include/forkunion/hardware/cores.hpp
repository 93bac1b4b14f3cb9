/**
 *  @file   forkunion/hardware/cores.hpp
 *  @brief  `allowed_cores_count()`: how many logical cores this process may run on.
 *
 *  One function, one backend per OS, picked here with `using`:
 *  - Linux (`detail/cores_linux.hpp`): the process's affinity mask (`sched_getaffinity`), so `taskset -c 0` and
 *    cgroup cpusets are honoured. The mask buffer is 1 KiB on the stack (8192 CPUs), so the call never allocates.
 *  - Windows (`detail/cores_windows.hpp`): the active processors of every processor group, narrowed to the
 *    process's affinity mask where it has one (`start /affinity`), so a machine of more than 64 logical
 *    processors counts whole.
 *  - WebAssembly (`detail/cores_wasm.hpp`): the host's logical cores in a `-pthread` build, 1 without threads.
 *  - Elsewhere (`detail/cores_portable.hpp`): `std::thread::hardware_concurrency()`.
 *  All answer at least 1. Thread-safe; on Linux and Windows a system call, so pools call it at `spawn`, never per
 *  dispatch.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/base/types.hpp>
#include <forkunion/hardware/detail/cores_linux.hpp>
#include <forkunion/hardware/detail/cores_portable.hpp>
#include <forkunion/hardware/detail/cores_wasm.hpp>
#include <forkunion/hardware/detail/cores_windows.hpp>

namespace forkunion {

#if FORKUNION_OS_LINUX
using cores_backend_t = detail::linux_cores_t;
#elif FORKUNION_OS_WINDOWS
using cores_backend_t = detail::windows_cores_t;
#elif FORKUNION_OS_WASM
using cores_backend_t = detail::wasm_cores_t;
#else
using cores_backend_t = detail::portable_cores_t;
#endif

/**  @brief  Logical cores this process may run on; at least 1. Thread-safe; may be a system call. */
inline std::size_t allowed_cores_count() noexcept {
    return cores_backend_t::allowed_count();
}

} // namespace forkunion
