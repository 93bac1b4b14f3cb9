/**
 *  @file   forkunion/algorithms/failure.hpp
 *  @brief  How the algorithms carry an exception thrown by a user function (a comparator, an operation, a
 *          transform, a predicate) from whichever thread threw it to the caller of the algorithm.
 *
 *  One `failure_t` lives on the calling thread's stack for each call. Every task a pool runs is `noexcept` and
 *  runs its share of user calls under `failure_t::guard`: the first exception caught on any thread is kept (one
 *  `std::exception_ptr`, written once by the thread whose `exchange` of the flag won; a later one is dropped), the
 *  flag tells the other tasks to stop early where that is cheap, and after the pool's join the caller rethrows the
 *  kept exception with `rethrow_if_failed`. The join orders the winner's write of the pointer before the caller's
 *  read, so the flag needs no ordering of its own (relaxed). When nothing throws this costs one relaxed load per
 *  task and a null `std::exception_ptr`: no allocation, no system call (`std::current_exception` only takes a
 *  reference to the exception already thrown).
 *
 *  Built without exceptions (`-fno-exceptions`: `__cpp_exceptions` undefined) the guard calls its body directly
 *  and `rethrow_if_failed` does nothing.
 */
#pragma once
#include <atomic> // `std::atomic`
#if defined(__cpp_exceptions)
#include <exception> // `std::exception_ptr`, `std::current_exception`, `std::rethrow_exception`
#endif

namespace forkunion::detail {

/**  The first exception of one algorithm call, and whether there was one. Neither copyable nor movable. */
class failure_t {
public:
    failure_t() noexcept = default;
    failure_t(failure_t const &) = delete;
    failure_t &operator=(failure_t const &) = delete;

    /**  Whether some user function threw already: a task that sees it may skip its remaining work. Any thread. */
    [[nodiscard]] bool failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

#if defined(__cpp_exceptions)
    /**  Keeps the exception being handled if it is the first one. Call only inside a `catch`. Any thread. */
    void capture() noexcept {
        if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
    }

    /**  Runs `body()`, keeping what it throws; skips it once a failure is known. Any thread. */
    template <typename body_type_>
    void guard(body_type_ &&body) noexcept {
        if (failed()) return;
        try {
            body();
        } catch (...) {
            capture();
        }
    }

    /**  Rethrows the kept exception. The calling thread only, after the join of every task that could keep one. */
    void rethrow_if_failed() {
        if (failed_.load(std::memory_order_relaxed)) std::rethrow_exception(error_);
    }

private:
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
#else
    template <typename body_type_>
    void guard(body_type_ &&body) noexcept {
        body();
    }
    void rethrow_if_failed() noexcept {}

private:
    std::atomic<bool> failed_{false};
#endif
};

} // namespace forkunion::detail
