/**
 *  @file   forkunion/hardware/detail/cores_portable.hpp
 *  @brief  Portable backend of `allowed_cores_count()`: the cores the C++ runtime reports.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <thread>  // `std::thread::hardware_concurrency`

namespace forkunion::detail {

struct portable_cores_t {
    /**  Logical cores the OS reports; at least 1 (the runtime answers 0 when it cannot tell). */
    static std::size_t allowed_count() noexcept {
        unsigned const count = std::thread::hardware_concurrency();
        return count ? count : 1;
    }
};

} // namespace forkunion::detail
