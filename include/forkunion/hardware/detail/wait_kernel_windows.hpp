/**
 *  @file   forkunion/hardware/detail/wait_kernel_windows.hpp
 *  @brief  Windows backend of `kernel_wait`/`kernel_wake_all`: `WaitOnAddress` and `WakeByAddressAll`.
 *
 *  The futex of Windows (8 and later), in `synchronization.lib` (CMake's `forkunion::header` links it; a build
 *  by hand adds `-lsynchronization` with MinGW, `synchronization.lib` with MSVC). Its timeout is in milliseconds,
 *  so a timed wait rounds up to whole milliseconds: a wait is never cut shorter than asked, and 1 µs waits
 *  1 ms. A wait returns on a wake, on the timeout, or spuriously; callers re-check. Declared only on Windows.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstdint> // `std::uint32_t`

#include <forkunion/hardware/detail/system_windows.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
#if defined(_MSC_VER)
#pragma comment(lib, "synchronization.lib")
#endif

namespace forkunion::detail {

struct windows_kernel_wait_t {
    /**  The longest finite wait `WaitOnAddress` takes: one below `INFINITE` (0xFFFFFFFF) milliseconds. */
    static constexpr std::uint64_t longest_wait_ms_k = 0xFFFFFFFEu;

    static void wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
        std::uint64_t const rounded_ms = timeout_us / 1000u + (timeout_us % 1000u != 0);
        DWORD const milliseconds =
            timeout_us == 0 ? INFINITE
                            : static_cast<DWORD>(rounded_ms < longest_wait_ms_k ? rounded_ms : longest_wait_ms_k);
        // FALSE with `ERROR_TIMEOUT`, a wake, or a spurious return all mean "re-check": the caller loops.
        (void)::WaitOnAddress(reinterpret_cast<std::uint32_t volatile *>(&word), &expected, sizeof(expected),
                              milliseconds);
    }

    static void wake_all(std::atomic<std::uint32_t> &word) noexcept {
        ::WakeByAddressAll(reinterpret_cast<std::uint32_t *>(&word));
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
