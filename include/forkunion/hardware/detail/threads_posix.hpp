/**
 *  @file   forkunion/hardware/detail/threads_posix.hpp
 *  @brief  The POSIX backend of `forkunion/hardware/threads.hpp`: `pthread_create` with a stack-size attribute,
 *          `CLOCK_MONOTONIC`, and a `pthread_atfork` generation counter where the platform has `fork()`.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/types.hpp>

#if FORKUNION_OS_POSIX_THREADS
#include <limits.h>  // `PTHREAD_STACK_MIN`
#include <pthread.h> // `pthread_create`, `pthread_attr_setstacksize`, `pthread_atfork`
#include <time.h>    // `clock_gettime`

/*  Whether the platform has `fork()` for `pthread_atfork` to observe: not Windows (winpthreads), not WebAssembly. */
#if !defined(__MINGW32__) && !defined(__EMSCRIPTEN__)
#define FORKUNION_OS_FORKS 1
#else
#define FORKUNION_OS_FORKS 0
#endif

namespace forkunion::detail {

/**  Bumped in the child by the `pthread_atfork` handler; the child's only thread runs it before `fork` returns. */
inline std::atomic<std::uint32_t> fork_generation_k{0};

struct posix_threads_t {
    /**  A joinable POSIX thread running `entry(argument)`; the object must outlive the thread (a pool's slot). */
    class thread_t {
        pthread_t handle_{};
        void (*entry_)(void *) noexcept = nullptr;
        void *argument_ = nullptr;
        bool started_ = false;

        static void *run_(void *self) noexcept {
            thread_t &thread = *static_cast<thread_t *>(self);
            thread.entry_(thread.argument_);
            return nullptr;
        }

    public:
        using id_t = pthread_t;
        static constexpr bool sets_stack_size_k = true;
        /**  `PTHREAD_STACK_MIN` (a `sysconf` call on newer glibc): below it `pthread_attr_setstacksize` refuses. */
        static std::size_t minimum_stack_bytes() noexcept { return static_cast<std::size_t>(PTHREAD_STACK_MIN); }

        thread_t() noexcept = default;
        thread_t(thread_t const &) = delete;
        thread_t &operator=(thread_t const &) = delete;

        /**  @retval invalid_argument  `stack_bytes` below the minimum.  @retval thread_refused  `EAGAIN` & co. */
        status_t start(void (*entry)(void *) noexcept, void *argument, std::size_t stack_bytes) noexcept {
            entry_ = entry, argument_ = argument;
            pthread_attr_t attributes;
            if (::pthread_attr_init(&attributes) != 0) return status_code_t::thread_refused_k;
            if (stack_bytes != 0 && ::pthread_attr_setstacksize(&attributes, stack_bytes) != 0) {
                ::pthread_attr_destroy(&attributes);
                return status_code_t::invalid_argument_k;
            }
            int const error = ::pthread_create(&handle_, &attributes, &run_, this);
            ::pthread_attr_destroy(&attributes);
            started_ = error == 0;
            return started_ ? status_code_t::success_k : status_code_t::thread_refused_k;
        }
        void join() noexcept {
            if (started_) (void)::pthread_join(handle_, nullptr);
            started_ = false;
        }
        /**  In a `fork()`ed child the thread does not exist: forget the handle without joining or detaching it. */
        void abandon() noexcept { started_ = false; }
        bool is_current() const noexcept { return started_ && ::pthread_equal(handle_, ::pthread_self()); }
        /**  The OS's name of the thread, valid once `start` succeeded; compare with `same_id`. */
        id_t id() const noexcept { return handle_; }
        static id_t current_id() noexcept { return ::pthread_self(); }
        static bool same_id(id_t a, id_t b) noexcept { return ::pthread_equal(a, b) != 0; }
    };

    static std::uint64_t monotonic_microseconds() noexcept {
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000u + static_cast<std::uint64_t>(now.tv_nsec) / 1000u;
    }

    static std::uint32_t fork_generation() noexcept { return fork_generation_k.load(std::memory_order_relaxed); }

#if FORKUNION_OS_FORKS
    static void watch_forks() noexcept {
        // A function-local static: registered once per process, thread-safe, before any pool can be inherited.
        static bool const registered = ::pthread_atfork(nullptr, nullptr, &on_fork_child_) == 0;
        (void)registered;
    }
#else
    static void watch_forks() noexcept {}
#endif

    static status_t check_limits(std::size_t, std::size_t) noexcept {
        return status_code_t::success_k;
    }

private:
    static void on_fork_child_() noexcept {
        fork_generation_k.fetch_add(1, std::memory_order_relaxed);
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_POSIX_THREADS
