/**
 *  @file   forkunion/hardware/detail/wait_portable.hpp
 *  @brief  The portable micro-wait: `standard_yield_t`, a `std::this_thread::yield()`.
 *
 *  Always available, on every platform, and always correct, but it is a system call (`sched_yield` on Linux):
 *  measured here at ~290 ns per call uncontended, ~17x a `pause`, and ~2.6x slower per dispatch when a pool's idle
 *  workers use it instead of the pause hint. Pools therefore use it only as the back-off of oversubscribed workers
 *  and on targets without a pause hint (s390x, unknown CPUs).
 */
#pragma once
#include <atomic> // `std::atomic`
#include <thread> // `std::this_thread::yield`

namespace forkunion::detail {

/**
 *  @brief  Micro-wait that hands the core to the OS scheduler.
 *  @note   Requires nothing; callable from any thread; a system call.
 */
struct standard_yield_t {
    void operator()() const noexcept { std::this_thread::yield(); }
};

/**  @brief  The nap backend of targets without an address wait (or of portable builds): it never naps. */
struct portable_nap_t {
    static char const *instruction() noexcept { return nullptr; }
    template <typename value_t>
    static bool try_nap(std::atomic<value_t> const &, value_t) noexcept {
        return false;
    }
};

} // namespace forkunion::detail
