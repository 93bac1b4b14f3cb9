/**
 *  @file   forkunion/hardware/detail/wait_arm64.hpp
 *  @brief  AArch64 waits: `arm64_yield_t` (the `YIELD` hint), `arm64_wfe_t` and `arm64_wfet_t` (light sleeps on an
 *          address, armed by an exclusive load) and `arm64_nap_t` (the pool's nap backend).
 *
 *  Defined only when compiling for AArch64; elsewhere this header declares nothing. The `WFE` waits are left out
 *  of `FORKUNION_PORTABLE` builds.
 *
 *  | wrapper         | instructions                    | needs                  | privilege | bound | | ---------------
 * | ------------------------------- | ---------------------- | --------- | -------------------------- | |
 * `arm64_yield_t` | `YIELD`                         | nothing                | EL0       | a hint, returns at once    |
 *  | `arm64_wfe_t`   | `SEVL; WFE; LDXR; WFE`          | the kernel's event stream (`HWCAP_EVTSTRM`) for the bound |
 * EL0 | a write to the granule, or the next event-stream tick (Linux: every 100 µs) | | `arm64_wfet_t`  | `SEVL; WFE;
 * LDXR; WFET`         | FEAT_WFxT (`HWCAP2_WFXT`) | EL0    | a write, or a `CNTVCT_EL0` deadline `microseconds` ahead |
 *
 *  The exclusive load (`LDXR`) arms the local monitor on the word's granule and re-reads the word; a store by
 *  another core to that granule clears the monitor, which sends this core an event and ends the wait. A write
 *  before the load is seen by the load, so none is lost. `SEVL; WFE` first clears a stale event, so the final wait
 *  is not skipped by an old one (the same sequence as Linux's `__cmpwait`). Sources: Arm ARM (DDI 0487), D1.6
 *  "Mechanisms for entering a low-power state" (events, the event stream), B2.9 "Synchronization and semaphores"
 *  (the exclusive monitors), C6.2 "WFET": `1101 0101 0000 0011 0001 0000 000 Rd` = 0xD5031000 | Rd, emitted with
 *  `.inst` because binutils 2.40 needs `-march=armv8.7-a` for the mnemonic; checked against its objdump.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstdint>     // `std::uint64_t`
#include <type_traits> // `std::make_unsigned_t`

#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/base/types.hpp> // `FORKUNION_ARCH_ARM64`

#if FORKUNION_ARCH_ARM64
namespace forkunion::detail {

/**  @brief  The spin-loop hint of AArch64. No system call, EL0. */
struct arm64_yield_t {
    void operator()() const noexcept { __asm__ __volatile__("yield" ::: "memory"); }
};

} // namespace forkunion::detail
#endif

#if FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
namespace forkunion::detail {

/**
 *  Microseconds of one `WFET` nap: half the Linux event-stream period (100 µs, `ARCH_TIMER_EVT_STREAM_PERIOD_US`),
 *  so a timed nap is never longer than an untimed one, and still thousands of times a `YIELD`.
 */
inline constexpr std::uint64_t arm64_nap_microseconds_k = 50;

/**  `SEVL; WFE; LDXR; if (loaded == seen) <wait>`: arms the monitor on `word`, re-checks it, then waits. */
template <typename value_t, typename wait_t>
inline void arm64_armed_wait(std::atomic<value_t> const &word, value_t seen, wait_t wait) noexcept {
    std::uint64_t loaded;
    void const *const address = &word;
    if constexpr (sizeof(value_t) == 1)
        __asm__ __volatile__("sevl\n\twfe\n\tldxrb %w0, [%1]" : "=&r"(loaded) : "r"(address) : "memory");
    else if constexpr (sizeof(value_t) == 2)
        __asm__ __volatile__("sevl\n\twfe\n\tldxrh %w0, [%1]" : "=&r"(loaded) : "r"(address) : "memory");
    else if constexpr (sizeof(value_t) == 4)
        __asm__ __volatile__("sevl\n\twfe\n\tldxr %w0, [%1]" : "=&r"(loaded) : "r"(address) : "memory");
    else
        __asm__ __volatile__("sevl\n\twfe\n\tldxr %0, [%1]" : "=&r"(loaded) : "r"(address) : "memory");
    // The loaded bits are zero-extended; compare them with `seen`'s bits, whatever its signedness.
    using unsigned_t = std::make_unsigned_t<value_t>;
    if (static_cast<unsigned_t>(loaded) != static_cast<unsigned_t>(seen)) return;
    wait();
}

/**
 *  @brief  A light sleep on an address: while `word == seen`, `WFE` until the granule is written or another event
 *          arrives. Bounded by the kernel's event stream (`arm64_evtstrm`, every 100 µs on Linux); without it only
 *          a write, an interrupt or a `SEV` ends the wait. May return spuriously. EL0, no system call.
 */
struct arm64_wfe_t {
    static constexpr capabilities_t required_k = capability_arm64_evtstrm_k;

    template <typename value_t>
    void operator()(std::atomic<value_t> const &word, value_t seen) const noexcept {
        detail::arm64_armed_wait(word, seen, []() noexcept { __asm__ __volatile__("wfe" ::: "memory"); });
    }
};

/**
 *  @brief  A timed light sleep on an address: while `word == seen`, `WFET` until the granule is written, another
 *          event arrives, or `CNTVCT_EL0` passes `microseconds` from now. May return spuriously.
 *  @note   Requires FEAT_WFxT (`required_k`); without it, SIGILL. EL0, no system call.
 */
struct arm64_wfet_t {
    static constexpr capabilities_t required_k = capability_arm64_wfxt_k;
    std::uint64_t microseconds = arm64_nap_microseconds_k; ///< The bound.

    template <typename value_t>
    void operator()(std::atomic<value_t> const &word, value_t seen) const noexcept {
        std::uint64_t now, frequency;
        __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(now));
        __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frequency));
        // Ticks per microsecond, rounded up: a bound is never zero (CNTFRQ is 1 GHz on Armv8.6+, 24-100 MHz before).
        std::uint64_t const deadline = now + microseconds * ((frequency + 999'999) / 1'000'000);
        detail::arm64_armed_wait(word, seen, [deadline]() noexcept {
            register std::uint64_t rd asm("x0") = deadline;
            __asm__ __volatile__(".inst 0xD5031000" : : "r"(rd) : "memory"); // WFET x0
        });
    }
};

/**  @brief  The nap backend of AArch64: `WFET` where FEAT_WFxT is usable, else `WFE` where the event stream bounds
 *           it, else nothing (the caller's micro-wait). */
struct arm64_nap_t {
    static char const *instruction() noexcept {
        if (with_wfxt_k && capabilities_usable(arm64_wfet_t::required_k)) return "LDXR+WFET";
        if (capabilities_usable(arm64_wfe_t::required_k)) return "LDXR+WFE";
        return nullptr;
    }
    template <typename value_t>
    static bool try_nap(std::atomic<value_t> const &word, value_t seen) noexcept {
        if constexpr (with_wfxt_k) {
            if (capabilities_usable(arm64_wfet_t::required_k)) return arm64_wfet_t{}(word, seen), true;
        }
        if (capabilities_usable(arm64_wfe_t::required_k)) return arm64_wfe_t{}(word, seen), true;
        return false;
    }
};

} // namespace forkunion::detail
#endif
