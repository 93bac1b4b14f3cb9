/**
 *  @file   forkunion/hardware/detail/threads_windows.hpp
 *  @brief  The Windows backend of `forkunion/hardware/threads.hpp`: `_beginthreadex` with a stack reservation,
 *          `QueryPerformanceCounter`, no `fork()` to watch for, and no published thread limits.
 *
 *  `_beginthreadex` rather than `CreateThread`, so the C runtime's per-thread state is set up and torn down with
 *  the thread under both MSVC's and MinGW-w64's runtimes. The stack size is a reservation
 *  (`STACK_SIZE_PARAM_IS_A_RESERVATION`), as a Linux stack size is a mapping: pages are committed on first touch.
 *  The thread id is the kernel's `DWORD` (`GetCurrentThreadId`), which is a real Windows id under MinGW's posix
 *  threads too, where `pthread_self()` is a winpthreads handle instead.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/hardware/detail/system_windows.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
#include <process.h> // `_beginthreadex`

namespace forkunion::detail {

struct windows_threads_t {
    /**  A joinable Windows thread running `entry(argument)`; the object must outlive the thread (a pool's slot). */
    class thread_t {
        HANDLE handle_ = nullptr;
        DWORD id_ = 0;
        void (*entry_)(void *) noexcept = nullptr;
        void *argument_ = nullptr;

        static unsigned __stdcall run_(void *self) noexcept {
            thread_t &thread = *static_cast<thread_t *>(self);
            thread.entry_(thread.argument_);
            return 0;
        }

    public:
        using id_t = DWORD;
        static constexpr bool sets_stack_size_k = true;
        /**  The allocation granularity (64 KiB): Windows rounds every stack reservation up to it. */
        static constexpr std::size_t minimum_stack_bytes() noexcept { return 64u * 1024u; }

        thread_t() noexcept = default;
        thread_t(thread_t const &) = delete;
        thread_t &operator=(thread_t const &) = delete;

        /**  @retval invalid_argument  `stack_bytes` above 4 GiB.  @retval thread_refused  the OS refused. */
        status_t start(void (*entry)(void *) noexcept, void *argument, std::size_t stack_bytes) noexcept {
            entry_ = entry, argument_ = argument;
            if (static_cast<std::uint64_t>(stack_bytes) > 0xFFFFFFFFu) return status_code_t::invalid_argument_k;
            unsigned id = 0;
            std::uintptr_t const handle =
                ::_beginthreadex(nullptr, static_cast<unsigned>(stack_bytes), &run_, this,
                                 stack_bytes != 0 ? STACK_SIZE_PARAM_IS_A_RESERVATION : 0u, &id);
            if (handle == 0) return status_code_t::thread_refused_k;
            handle_ = reinterpret_cast<HANDLE>(handle), id_ = static_cast<DWORD>(id);
            return status_code_t::success_k;
        }
        void join() noexcept {
            if (handle_ == nullptr) return;
            (void)::WaitForSingleObject(handle_, INFINITE);
            (void)::CloseHandle(handle_);
            handle_ = nullptr, id_ = 0;
        }
        /**  Windows has no `fork()`: there is never an inherited handle to forget; closes it like a detach. */
        void abandon() noexcept {
            if (handle_ != nullptr) (void)::CloseHandle(handle_);
            handle_ = nullptr, id_ = 0;
        }
        bool is_current() const noexcept { return handle_ != nullptr && id_ == ::GetCurrentThreadId(); }
        /**  The OS's id of the thread, valid once `start` succeeded; compare with `same_id`. */
        id_t id() const noexcept { return id_; }
        static id_t current_id() noexcept { return ::GetCurrentThreadId(); }
        static bool same_id(id_t a, id_t b) noexcept { return a == b; }
    };

    /**  `QueryPerformanceCounter`: read in user space from the TSC on current Windows, never goes back. */
    static std::uint64_t monotonic_microseconds() noexcept {
        static std::uint64_t const frequency = [] {
            LARGE_INTEGER value;
            (void)::QueryPerformanceFrequency(&value); // cannot fail since Windows XP
            return static_cast<std::uint64_t>(value.QuadPart);
        }();
        LARGE_INTEGER now;
        (void)::QueryPerformanceCounter(&now);
        std::uint64_t const ticks = static_cast<std::uint64_t>(now.QuadPart);
        // Split so that `ticks * 10^6` cannot overflow at a 10 MHz counter after ~21 days of uptime.
        return ticks / frequency * 1'000'000u + ticks % frequency * 1'000'000u / frequency;
    }

    static std::uint32_t fork_generation() noexcept { return 0; }
    static void watch_forks() noexcept {}
    static status_t check_limits(std::size_t, std::size_t) noexcept { return status_code_t::success_k; }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_WINDOWS
