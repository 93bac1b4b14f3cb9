/**
 *  @file   forkunion/wait_kernel.hpp
 *  @brief  Blocking in the kernel on a 32-bit word: the back end of `basic_pool::sleep`.
 *
 *  One small interface with one back end per OS (STYLE #7), each at namespace scope:
 *
 *  - `kernel_wait(word, expected, timeout_us)`: blocks while `word == expected`, for at most `timeout_us`
 *    microseconds (0 = no limit). May return early or spuriously: callers re-check their condition.
 *  - `kernel_wake_all(word)`: wakes every thread blocked in `kernel_wait` on `word`.
 *
 *  Linux: the raw `futex(FUTEX_WAIT_PRIVATE)` system call with a relative `timespec` split into seconds and
 *  nanoseconds, so waits of 1 s and more work (the reference passed >= 1e9 ns to `nanosleep` and got `EINVAL`).
 *  Elsewhere: `std::atomic::wait`/`notify_all` when untimed, and a `sleep_for` of the timeout when timed.
 *
 *  A kernel wake-up costs tens of microseconds on these VMs (measured), so pools only block here when asked to.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstdint> // `std::uint32_t`
#include <forkunion/types.hpp>

#if FORKUNION_OS_LINUX
#include <climits>       // `INT_MAX`
#include <ctime>         // `timespec`
#include <linux/futex.h> // `FUTEX_WAIT_PRIVATE`
#include <sys/syscall.h> // `SYS_futex`
#include <unistd.h>      // `syscall`
#else
#include <chrono> // `std::chrono::microseconds`
#include <thread> // `std::this_thread::sleep_for`
#endif

namespace forkunion {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word must be a plain lock-free 32-bit integer");

#if FORKUNION_OS_LINUX

inline void kernel_wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
    timespec timeout {};
    timeout.tv_sec = static_cast<time_t>(timeout_us / 1'000'000u);
    timeout.tv_nsec = static_cast<long>(timeout_us % 1'000'000u) * 1000L;
    // `EAGAIN` (the word already moved), `EINTR` and `ETIMEDOUT` all mean "re-check": the caller loops.
    (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected,
                    timeout_us ? &timeout : nullptr, nullptr, 0);
}

inline void kernel_wake_all(std::atomic<std::uint32_t> &word) noexcept {
    (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
                    nullptr, 0);
}

#else

inline void kernel_wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
    if (timeout_us == 0) word.wait(expected, std::memory_order_acquire);
    else std::this_thread::sleep_for(std::chrono::microseconds(timeout_us));
}

inline void kernel_wake_all(std::atomic<std::uint32_t> &word) noexcept { word.notify_all(); }

#endif

} // namespace forkunion
