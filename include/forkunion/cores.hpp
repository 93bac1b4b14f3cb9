/**
 *  @file   forkunion/cores.hpp
 *  @brief  `allowed_cores_count()`: how many logical cores this process may run on.
 *
 *  One function with one back end per OS (STYLE #7):
 *  - Linux: the process's affinity mask (`sched_getaffinity`), so `taskset -c 0` and cgroup cpusets are honoured.
 *    The mask buffer is 1 KiB on the stack (8192 CPUs), so the call never allocates.
 *  - Elsewhere: `std::thread::hardware_concurrency()`.
 *  Both answer at least 1.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <forkunion/types.hpp>

#if FORKUNION_OS_LINUX
#include <sched.h> // `sched_getaffinity`
#else
#include <thread> // `std::thread::hardware_concurrency`
#endif

namespace forkunion {

#if FORKUNION_OS_LINUX

/**  @brief  Logical cores in this process's affinity mask; at least 1. Thread-safe; a system call. */
inline std::size_t allowed_cores_count() noexcept {
    unsigned long words[8192 / (8 * sizeof(unsigned long))] = {};
    if (::sched_getaffinity(0, sizeof(words), reinterpret_cast<cpu_set_t *>(words)) != 0) return 1;
    std::size_t count = 0;
    for (unsigned long word : words) count += static_cast<std::size_t>(__builtin_popcountl(word));
    return count ? count : 1;
}

#else

/**  @brief  Logical cores the OS reports; at least 1. Thread-safe. */
inline std::size_t allowed_cores_count() noexcept {
    unsigned const count = std::thread::hardware_concurrency();
    return count ? count : 1;
}

#endif

} // namespace forkunion
