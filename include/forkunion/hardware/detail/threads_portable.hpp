/**
 *  @file   forkunion/hardware/detail/threads_portable.hpp
 *  @brief  The portable backend of `forkunion/hardware/threads.hpp`: `std::thread` with the default stack, the standard
 *          steady clock, no fork detection (no `fork()` to detect) and no published limits.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`
#include <thread>  // `std::thread`
// Compile cost: every platform includes this backend, and libstdc++'s `<chrono>` brings `<sstream>` for its
// formatting; the clocks alone are in a smaller header.
#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h> // `std::chrono::steady_clock`
#else
#include <chrono> // `std::chrono::steady_clock`
#endif

#include <forkunion/base/types.hpp>

namespace forkunion::detail {

struct portable_threads_t {
    /**  A thread started by `std::thread`: no stack size can be asked for. */
    class thread_t {
        std::thread thread_;

    public:
        using id_t = std::thread::id;
        static constexpr bool sets_stack_size_k = false;
        static constexpr std::size_t minimum_stack_bytes() noexcept { return 0; }

        /**  @retval unsupported  `stack_bytes != 0`.  @retval thread_refused  the runtime could not start it. */
        status_t start(void (*entry)(void *) noexcept, void *argument, std::size_t stack_bytes) noexcept {
            if (stack_bytes != 0) return status_code_t::unsupported_k;
            FORKUNION_TRY {
                thread_ = std::thread([entry, argument]() noexcept { entry(argument); });
            }
            FORKUNION_CATCH_ALL {
                return status_code_t::thread_refused_k;
            }
            return status_code_t::success_k;
        }
        void join() noexcept {
            if (thread_.joinable()) thread_.join();
        }
        void abandon() noexcept { thread_.detach(); }
        bool is_current() const noexcept { return thread_.get_id() == std::this_thread::get_id(); }
        id_t id() const noexcept { return thread_.get_id(); }
        static id_t current_id() noexcept { return std::this_thread::get_id(); }
        static bool same_id(id_t a, id_t b) noexcept { return a == b; }
    };

    static std::uint64_t monotonic_microseconds() noexcept {
        auto const now = std::chrono::steady_clock::now().time_since_epoch();
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now).count());
    }
    static std::uint32_t fork_generation() noexcept { return 0; }
    static void watch_forks() noexcept {}
    static status_t check_limits(std::size_t, std::size_t) noexcept { return status_code_t::success_k; }
};

} // namespace forkunion::detail
