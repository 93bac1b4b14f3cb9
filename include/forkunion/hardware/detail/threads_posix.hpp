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
#include <limits.h> // `PTHREAD_STACK_MIN`
#include <utility>  // `std::exchange`

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

/**
 *  1 once this process's `pthread_atfork` list holds the handlers below, else 0. A plain word, never a lock or a
 *  one-time-init guard: a `fork()` at any point copies 0 or 1 into the child, and the child goes on from either
 *  (a guard copied "in progress" would block the child for good, its owner being a thread the child lacks).
 */
inline std::atomic<std::uint32_t> fork_handlers_registered_k{0};

/**
 *  Set by the prepare handler on the forking thread, taken by the first child handler: a fork is counted once,
 *  however many times the handlers were registered (threads racing through their first `watch_forks` each
 *  register). One flag per thread, because forks from different threads overlap (the C library releases its
 *  handler-list lock while it runs the handlers), and a process-wide flag would let one fork's parent handler
 *  clear another fork's mark before that fork's child reads it. The child's only thread is a copy of the forking
 *  thread, so it reads the flag its own prepare handler set.
 */
inline thread_local bool fork_in_progress_k = false;

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
        /**  `PTHREAD_STACK_MIN` (a `sysconf` call on newer glibc): below it `pthread_attr_setstacksize` refuses.
         *   MinGW-w64's winpthreads defines none (there the Windows backend is chosen): 16 KiB, the common value. */
        static std::size_t minimum_stack_bytes() noexcept {
#if defined(PTHREAD_STACK_MIN)
            return static_cast<std::size_t>(PTHREAD_STACK_MIN);
#else
            return std::size_t(16) * 1024;
#endif
        }

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
        void abandon() noexcept {
            started_ = false;
        }
        bool is_current() const noexcept {
            return started_ && ::pthread_equal(handle_, ::pthread_self());
        }
        /**  The OS's name of the thread, valid once `start` succeeded; compare with `same_id`. */
        id_t id() const noexcept {
            return handle_;
        }
        static id_t current_id() noexcept {
            return ::pthread_self();
        }
        static bool same_id(id_t a, id_t b) noexcept {
            return ::pthread_equal(a, b) != 0;
        }
    };

    static std::uint64_t monotonic_microseconds() noexcept {
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000u + static_cast<std::uint64_t>(now.tv_nsec) / 1000u;
    }

    static std::uint32_t fork_generation() noexcept {
        return fork_generation_k.load(std::memory_order_relaxed);
    }

#if FORKUNION_OS_FORKS
    /**
     *  Returns once the handlers are registered, so a `fork()` after the return bumps the child's generation.
     *  Lock-free: threads that find the word 0 each register (the handlers count a fork once however many times
     *  they are registered), and none waits for another. `fork()` takes the C library's handler-list lock, so a
     *  child has a registration wholly or not at all: with it, its child handler sets the word; without it, the
     *  word is 0 there and the child's first call registers.
     */
    static void watch_forks() noexcept {
        // Acquire pairs with the release below: a registration that set the word is in the list.
        if (fork_handlers_registered_k.load(std::memory_order_acquire)) return;
        if (::pthread_atfork(&on_fork_prepare_, &on_fork_parent_, &on_fork_child_) == 0)
            fork_handlers_registered_k.store(1, std::memory_order_release);
        // A refusal (`ENOMEM`) leaves the word 0: the next call tries again.
    }
#else
    static void watch_forks() noexcept {}
#endif

    static status_t check_limits(std::size_t, std::size_t) noexcept {
        return status_code_t::success_k;
    }

private:
    // The C library runs the handlers on the forking thread; each fork touches only that thread's flag.
    static void on_fork_prepare_() noexcept {
        fork_in_progress_k = true;
    }
    static void on_fork_parent_() noexcept {
        fork_in_progress_k = false;
    }
    static void on_fork_child_() noexcept {
        if (std::exchange(fork_in_progress_k, false)) fork_generation_k.fetch_add(1, std::memory_order_relaxed);
        fork_handlers_registered_k.store(1, std::memory_order_relaxed); // this handler runs: it is registered
    }
};

} // namespace forkunion::detail
#endif // FORKUNION_OS_POSIX_THREADS
