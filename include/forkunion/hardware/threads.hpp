/**
 *  @file   forkunion/hardware/threads.hpp
 *  @brief  What a pool asks of the OS besides waiting: threads started with a chosen stack size, a monotonic clock,
 *          fork detection, and the thread limits the OS publishes, checked before a spawn starts anything.
 *
 *  One small interface, one backend per OS family, picked here with `using`:
 *
 *  - `os_thread_t`: `start(entry, argument, stack_bytes)` (a status, never an exception), `join()`, `abandon()`
 *    (forget a thread a `fork()`ed child inherited the handle of, but not the thread), `is_current()`.
 *    `os_thread_t::sets_stack_size_k` says whether `stack_bytes` can be honoured; `minimum_stack_bytes()` is the
 *    smallest size the OS accepts.
 *  - `monotonic_microseconds()`: a clock that never goes back; no system call where the OS maps it into the process
 *    (Linux's vDSO), so the adaptive idle window can read it between micro-waits.
 *  - `fork_generation()` / `watch_forks()`: a counter that a `pthread_atfork` child handler bumps, read with one
 *    relaxed load: a pool compares it with the value it was spawned under to refuse dispatches in a child process
 *    without a system call on the dispatch path. `watch_forks` registers the handler once per process.
 *  - `check_thread_limits(threads, stack_bytes)`: `thread_refused` when the OS's published limits cannot fit
 *    `threads` more threads (Linux: `RLIMIT_NPROC` for non-root users, `kernel.threads-max`, `kernel.pid_max`, the
 *    cgroup's `pids.max`, `vm.max_map_count` at two mappings per thread, `RLIMIT_AS` and strict overcommit against
 *    the stacks), so a spawn that cannot succeed fails in microseconds instead of starting thousands of threads.
 *    Success where nothing is published; the thread start itself still reports what the check could not see.
 *
 *  | backend                       | threads         | clock             | forks          | limits              |
 *  | ----------------------------- | --------------- | ----------------- | -------------- | ------------------- |
 *  | `detail/threads_linux.hpp`    | `pthread_create`| `CLOCK_MONOTONIC` | `pthread_atfork` | `/proc`, cgroups, rlimits
 * | | `detail/threads_posix.hpp`    | `pthread_create`| `CLOCK_MONOTONIC` | `pthread_atfork` where `fork` exists | none
 * | | `detail/threads_windows.hpp`  | `_beginthreadex` | `QueryPerformanceCounter` | none (no `fork`) | none
 * | | `detail/threads_portable.hpp` | `std::thread` (default stack only) | `std::chrono::steady_clock` | none | none |
 *
 *  Windows takes its own backend even under MinGW-w64, whose winpthreads would also serve: the kernel's thread ids
 *  and `_beginthreadex` are what MSVC builds get too. Emscripten takes the POSIX one: with `-pthread` its threads
 *  are Web Workers from a pre-created pool; without, `pthread_create` fails and a spawn beyond the caller reports
 *  `thread_refused`.
 *
 *  Every function is `noexcept` and callable from any thread.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/types.hpp>
#include <forkunion/hardware/detail/threads_linux.hpp>
#include <forkunion/hardware/detail/threads_portable.hpp>
#include <forkunion/hardware/detail/threads_posix.hpp>
#include <forkunion/hardware/detail/threads_windows.hpp>

namespace forkunion {

#if FORKUNION_OS_LINUX
using threads_backend_t = detail::linux_threads_t;
#elif FORKUNION_OS_WINDOWS
using threads_backend_t = detail::windows_threads_t;
#elif FORKUNION_OS_POSIX_THREADS
using threads_backend_t = detail::posix_threads_t;
#else
using threads_backend_t = detail::portable_threads_t;
#endif

/**  @brief  An OS thread a pool starts and joins itself: movable-free, one per slot of a pool's thread table. */
using os_thread_t = threads_backend_t::thread_t;

/**  @brief  Microseconds on a clock that never goes back; its origin is unspecified. */
inline std::uint64_t monotonic_microseconds() noexcept {
    return threads_backend_t::monotonic_microseconds();
}

/**  @brief  How many `fork()`s this process descends from since it first called `watch_forks` (relaxed load). */
inline std::uint32_t fork_generation() noexcept {
    return threads_backend_t::fork_generation();
}

/**  @brief  Registers the `fork()` child handler behind `fork_generation`, once per process; any thread, any time.
 *          Never blocks, even in a child forked while another thread of the parent was registering: a `fork()`
 *          after it returns is counted in the child. */
inline void watch_forks() noexcept {
    threads_backend_t::watch_forks();
}

/**  @brief  `thread_refused` if the OS's published limits cannot fit `threads` more threads of `stack_bytes` (0:
 *          the default size) each; success otherwise, or where nothing is published. Reads files on Linux. */
inline status_t check_thread_limits(std::size_t threads, std::size_t stack_bytes) noexcept {
    return threads_backend_t::check_limits(threads, stack_bytes);
}

} // namespace forkunion
