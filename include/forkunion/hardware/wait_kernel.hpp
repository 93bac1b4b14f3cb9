/**
 *  @file   forkunion/hardware/wait_kernel.hpp
 *  @brief  Blocking in the kernel on a 32-bit word: the backend of a pool's kernel-parked idle workers.
 *
 *  One small interface, one backend per OS, picked here with `using`:
 *
 *  - `kernel_wait(word, expected, timeout_us)`: blocks while `word == expected`, for at most `timeout_us`
 *    microseconds (0 = no limit). May return early or spuriously: callers re-check their condition.
 *  - `kernel_wake_all(word)`: wakes every thread blocked in `kernel_wait` on `word`.
 *
 *  Linux (`detail/wait_kernel_linux.hpp`): the raw `futex(FUTEX_WAIT_PRIVATE)` system call with a relative
 *  `timespec` split into seconds and nanoseconds, so waits of 1 s and more work (a single nanosecond count of 1e9 or
 *  more is `EINVAL` for `nanosleep`-style calls). Windows (`detail/wait_kernel_windows.hpp`): `WaitOnAddress` and
 *  `WakeByAddressAll`, timeouts rounded up to whole milliseconds. WebAssembly with threads
 *  (`detail/wait_kernel_wasm.hpp`): `memory.atomic.wait32`/`notify` (a spin on the main browser thread, which may
 *  not block). Elsewhere, and in WebAssembly builds without threads (`detail/wait_kernel_portable.hpp`):
 *  `std::atomic::wait`/`notify_all` when untimed, and a `sleep_for` of the timeout when timed.
 *
 *  A kernel wake-up costs tens of microseconds on a 2-vCPU KVM guest (`forkunion_bench_wake`, AMD Zen 5), so pools
 *  only block here after their idle policy says so.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstdint> // `std::uint32_t`

#include <forkunion/base/types.hpp>
#include <forkunion/hardware/detail/system_wasm.hpp>
#include <forkunion/hardware/detail/wait_kernel_linux.hpp>
#include <forkunion/hardware/detail/wait_kernel_portable.hpp>
#include <forkunion/hardware/detail/wait_kernel_wasm.hpp>
#include <forkunion/hardware/detail/wait_kernel_windows.hpp>

namespace forkunion {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word must be a plain lock-free 32-bit integer");

#if FORKUNION_OS_LINUX
using kernel_wait_backend_t = detail::linux_kernel_wait_t;
#elif FORKUNION_OS_WINDOWS
using kernel_wait_backend_t = detail::windows_kernel_wait_t;
#elif FORKUNION_OS_WASM && FORKUNION_WASM_THREADS
using kernel_wait_backend_t = detail::wasm_kernel_wait_t;
#else
using kernel_wait_backend_t = detail::portable_kernel_wait_t;
#endif

/**  @brief  Blocks while `word == expected`, at most `timeout_us` µs (0 = no limit); may return spuriously. */
inline void kernel_wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
    kernel_wait_backend_t::wait(word, expected, timeout_us);
}

/**  @brief  Wakes every thread blocked in `kernel_wait` on `word`. Any thread; a system call on Linux and Windows. */
inline void kernel_wake_all(std::atomic<std::uint32_t> &word) noexcept {
    kernel_wait_backend_t::wake_all(word);
}

} // namespace forkunion
