/**
 *  @file   forkunion/hardware/detail/cores_linux.hpp
 *  @brief  Linux backend of `allowed_cores_count()`: the population of the process's affinity mask.
 *          Declared only on Linux; elsewhere this header declares nothing.
 */
#pragma once
#include <cstddef> // `std::size_t`

#include <forkunion/base/types.hpp>

#if FORKUNION_OS_LINUX
#include <sched.h> // `sched_getaffinity`, `cpu_set_t`

namespace forkunion::detail {

struct linux_cores_t {
    /**  Logical cores in this process's affinity mask; at least 1. One `sched_getaffinity` system call. */
    static std::size_t allowed_count() noexcept {
        unsigned long words[8192 / (8 * sizeof(unsigned long))] = {};
        if (::sched_getaffinity(0, sizeof(words), reinterpret_cast<cpu_set_t *>(words)) != 0) return 1;
        std::size_t count = 0;
        for (unsigned long word : words) count += static_cast<std::size_t>(__builtin_popcountl(word));
        return count ? count : 1;
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_LINUX
