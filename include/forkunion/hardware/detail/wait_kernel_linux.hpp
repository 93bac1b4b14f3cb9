/**
 *  @file   forkunion/hardware/detail/wait_kernel_linux.hpp
 *  @brief  Linux backend of `kernel_wait`/`kernel_wake_all`: the private futex. Declared only on Linux.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <climits> // `INT_MAX`
#include <cstdint> // `std::uint32_t`
#include <ctime>   // `timespec`

#include <forkunion/base/types.hpp>

#if FORKUNION_OS_LINUX

#include <linux/futex.h> // `FUTEX_WAIT_PRIVATE`
#include <sys/syscall.h> // `SYS_futex`
#include <unistd.h>      // `syscall`

namespace forkunion::detail {

struct linux_kernel_wait_t {
    static void wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
        timespec timeout{};
        timeout.tv_sec = static_cast<time_t>(timeout_us / 1'000'000u);
        timeout.tv_nsec = static_cast<long>(timeout_us % 1'000'000u) * 1000L;
        // `EAGAIN` (the word already moved), `EINTR` and `ETIMEDOUT` all mean "re-check": the caller loops.
        (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected,
                        timeout_us ? &timeout : nullptr, nullptr, 0);
    }

    static void wake_all(std::atomic<std::uint32_t> &word) noexcept {
        (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
                        nullptr, 0);
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_LINUX
