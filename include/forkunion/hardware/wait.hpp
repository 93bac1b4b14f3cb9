/**
 *  @file   forkunion/hardware/wait.hpp
 *  @brief  Micro-waits for spin loops, the default one for this target, the nap backend, and `spin_mutex_t`.
 *
 *  Each wrapper is a tiny type with a `noexcept` call operator that never enters the kernel (except
 *  `standard_yield_t`, the portable fallback). Each lives in its architecture's header behind the same shapes: a
 *  *micro-wait* `wait()` (or `wait(thread)`), and an *address wait* `wait(word, seen)` that
 *  light-sleeps while `word == seen`, bounded, and may return spuriously. Each says what it requires in
 *  `required_k` (check it with `capabilities_usable`; calling it on a CPU without the feature raises SIGILL).
 *
 *  | wrapper            | header                     | instructions          | needs        | bound                  |
 *  | ------------------ | -------------------------- | --------------------- | ------------ | ---------------------- |
 *  | `standard_yield_t` | `detail/wait_portable.hpp` | `sched_yield` (OS)    | nothing      | one scheduler pass     |
 *  | `x86_pause_t`      | `detail/wait_x86.hpp`      | `PAUSE`               | nothing      | a hint                 |
 *  | `x86_tpause_t`     | `detail/wait_x86.hpp`      | `TPAUSE`              | WAITPKG      | TSC deadline           |
 *  | `x86_umwait_t`     | `detail/wait_x86.hpp`      | `UMONITOR` + `UMWAIT` | WAITPKG      | TSC deadline           |
 *  | `arm64_yield_t`    | `detail/wait_arm64.hpp`    | `YIELD`               | nothing      | a hint                 |
 *  | `arm64_wfe_t`      | `detail/wait_arm64.hpp`    | `LDXR` + `WFE`        | event stream | event stream (100 µs)  |
 *  | `arm64_wfet_t`     | `detail/wait_arm64.hpp`    | `LDXR` + `WFET`       | FEAT_WFxT    | `CNTVCT_EL0` deadline  |
 *  | `riscv_pause_t`    | `detail/wait_riscv.hpp`    | `PAUSE`               | nothing      | a hint                 |
 *  | `riscv_wrs_t`      | `detail/wait_riscv.hpp`    | `LR` + `WRS.STO`      | Zawrs        | implementation timeout |
 *
 *  A micro-wait may also accept the waiting thread's index, `micro_yield(thread)`, to back off on its own
 *  schedule; `micro_yield_with(wait, thread)` calls whichever shape the wrapper has.
 *
 *  `nap_on(word, seen, micro_yield)` is the idle step of a pool in `nap()` mode: one bounded address wait with the
 *  best wrapper the CPU has *at run time* (`nap_backend_t`: UMWAIT, WFET, WFE or WRS.STO), or the micro-wait where
 *  it has none. The run-time check is one relaxed load of the cached capability word.
 *
 *  `basic_spin_mutex_t<micro_yield_t>` is a test-and-test-and-set lock: `lock`, `try_lock`, `unlock`, usable with
 *  `std::lock_guard`. It never enters the kernel with the default wrapper, so it is only the right lock for short
 *  critical sections on threads that are not oversubscribed (a preempted holder makes waiters burn their slice).
 */
#pragma once
#include <atomic>      // `std::atomic_bool`
#include <type_traits> // `std::is_invocable_v`

#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/detail/wait_arm64.hpp>
#include <forkunion/hardware/detail/wait_portable.hpp>
#include <forkunion/hardware/detail/wait_riscv.hpp>
#include <forkunion/hardware/detail/wait_x86.hpp>
#include <forkunion/hardware/deprecated.hpp>

namespace forkunion {

// The micro-waits and address waits are public API: any of them may be a pool's `micro_yield_t`.
using detail::standard_yield_t;
#if FORKUNION_ARCH_X86 && (FORKUNION_INLINE_ASM || defined(_MSC_VER))
using detail::x86_pause_t;
#endif
#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using detail::x86_tpause_t;
using detail::x86_umwait_t;
#endif
#if FORKUNION_ARCH_ARM64
using detail::arm64_yield_t;
#endif
#if FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using detail::arm64_wfe_t;
using detail::arm64_wfet_t;
#endif
#if FORKUNION_ARCH_RISCV
using detail::riscv_pause_t;
#endif
#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using detail::riscv_wrs_t;
#endif

#if FORKUNION_ARCH_X86 && (FORKUNION_INLINE_ASM || defined(_MSC_VER))
using default_micro_yield_t = x86_pause_t;
#elif FORKUNION_ARCH_ARM64
using default_micro_yield_t = arm64_yield_t;
#elif FORKUNION_ARCH_RISCV
using default_micro_yield_t = riscv_pause_t;
#else
using default_micro_yield_t = standard_yield_t; // no user-mode spin hint known for this target (e.g. s390x)
#endif

/**  @brief  The address wait `nap_on` parks on: the best one this target compiles, checked at run time. */
#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using nap_backend_t = detail::x86_nap_t;
#elif FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using nap_backend_t = detail::arm64_nap_t;
#elif FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using nap_backend_t = detail::riscv_nap_t;
#else
using nap_backend_t = detail::portable_nap_t;
#endif

/**  @brief  Calls `wait(thread)` if the wrapper takes a thread index, else `wait()`. */
template <typename micro_yield_t, typename index_t>
inline void micro_yield_with(micro_yield_t &wait, index_t thread) noexcept {
    if constexpr (std::is_invocable_v<micro_yield_t &, index_t>)
        wait(thread);
    else
        wait();
}

/**
 *  @brief  A test-and-test-and-set spin lock over a micro-wait. Not recursive; unlocking from a thread that does
 *          not hold it is undefined, like `std::mutex`.
 *
 *  Memory ordering: a successful `lock`/`try_lock` is an acquire that pairs with the release in `unlock`, so
 *  everything written under the lock is visible to the next holder. Acquisition is one `exchange` (an unconditional
 *  swap, never a CAS retry); waiters spin on plain loads, so they share the line instead of bouncing it.
 */
template <typename micro_yield_type_ = default_micro_yield_t>
class basic_spin_mutex_t {
public:
    using micro_yield_t = micro_yield_type_;

    basic_spin_mutex_t() noexcept = default;
    basic_spin_mutex_t(basic_spin_mutex_t const &) = delete;
    basic_spin_mutex_t &operator=(basic_spin_mutex_t const &) = delete;

    /**  @brief  Blocks (spinning) until the lock is held by the caller. */
    void lock() noexcept {
        micro_yield_t wait;
        // Acquire pairs with the release in `unlock`.
        while (locked_.exchange(true, std::memory_order_acquire))
            while (locked_.load(std::memory_order_relaxed)) wait();
    }

    /**  @brief  Takes the lock if it is free right now; never waits. */
    [[nodiscard]] bool try_lock() noexcept {
        // The relaxed pre-check keeps a failing `try_lock` from stealing the line from the holder.
        return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
    }

    /**  @brief  Releases the lock; pairs with the acquire of the next `lock`/`try_lock`. */
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> locked_{false};
};

using spin_mutex_t = basic_spin_mutex_t<>;

/**
 *  @brief  One idle step of a napping waiter: light-sleeps while `word` still equals `seen`, for at most a
 *          bounded time, then returns so the caller re-checks its condition (and its idle mode).
 *
 *  Parks on the word's cache line with `nap_backend_t`, the best address wait the CPU has at run time, and falls
 *  back to one `micro_yield_with(micro_yield, thread)` where it has none (so either wrapper shape works). No system
 *  call (after the first capability detection, which happens once per process), no allocation. Any thread; `word` may
 *  be written concurrently: a write after the caller read `seen` either shows in the backend's re-check or ends its
 *  wait. Implies no memory ordering: the caller re-reads `word` with the order it needs.
 */
template <typename value_type_, typename micro_yield_t, typename index_t = std::size_t>
inline void nap_on(std::atomic<value_type_> const &word, value_type_ seen, micro_yield_t &micro_yield,
                   index_t thread = 0) noexcept {
    if (!nap_backend_t::try_nap(word, seen)) micro_yield_with(micro_yield, thread);
}

} // namespace forkunion
