/**
 *  @file   forkunion/hardware/detail/wait_kernel_portable.hpp
 *  @brief  Portable backend of `kernel_wait`/`kernel_wake_all`: `std::atomic::wait`, or a sleep when timed.
 */
#pragma once
#include <atomic> // `std::atomic`
// Compile cost: libstdc++'s `<chrono>` brings `<sstream>` for its formatting; the clocks are in a smaller header.
#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h> // `std::chrono::microseconds`
#else
#include <chrono> // `std::chrono::microseconds`
#endif
#include <cstdint> // `std::uint32_t`
#include <thread>  // `std::this_thread::sleep_for`

namespace forkunion::detail {

struct portable_kernel_wait_t {
    static void wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
        if (timeout_us == 0)
            word.wait(expected, std::memory_order_acquire);
        else
            std::this_thread::sleep_for(std::chrono::microseconds(timeout_us));
    }

    static void wake_all(std::atomic<std::uint32_t> &word) noexcept { word.notify_all(); }
};

} // namespace forkunion::detail
