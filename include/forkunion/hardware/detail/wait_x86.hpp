// clang-format off
/**
 *  @file   forkunion/hardware/detail/wait_x86.hpp
 *  @brief  x86 waits: `x86_pause_t` (the `PAUSE` hint), `x86_tpause_t` (a timed light sleep), `x86_umwait_t`
 *          (a light sleep on an address) and `x86_nap_t` (the pool's nap backend).
 *
 *  Defined only when compiling for x86 (32- or 64-bit); elsewhere this header declares nothing, so it compiles on
 *  its own on any target. The WAITPKG waits are left out of `FORKUNION_PORTABLE` builds and of compilers without
 *  GNU inline assembly; with MSVC `x86_pause_t` is the `_mm_pause` intrinsic.
 *
 *  | wrapper        | instruction           | needs (CPUID)               | ring | bound                           |
 *  | -------------- | --------------------- | --------------------------- | ---- | ------------------------------- |
 *  | `x86_pause_t`  | `PAUSE`               | nothing (SSE2 / `REP NOP`)  | 3    | a hint: ~17 ns on a Xeon KVM    |
 *  |                |                       |                             |      | guest (`forkunion_bench_wake`), |
 *  |                |                       |                             |      | ~140 cycles on Skylake cores    |
 *  | `x86_tpause_t` | `TPAUSE`              | WAITPKG, CPUID.(7,0):ECX[5] | 3    | a TSC deadline, `cycles` ahead  |
 *  | `x86_umwait_t` | `UMONITOR` + `UMWAIT` | WAITPKG                     | 3    | a TSC deadline, or a write      |
 *  |                |                       |                             |      | to the monitored line           |
 *
 *  `TPAUSE` and `UMWAIT` also return when the OS limit in `IA32_UMWAIT_CONTROL` passes (Linux default: 100,000
 *  TSC cycles, `/sys/devices/system/cpu/umwait_control/max_time`) and on interrupts; callers re-check.
 *  Encodings are emitted as bytes with fixed registers, because GCC 12 and Clang 14 accept the mnemonics only with
 *  `-mwaitpkg`. Source: Intel SDM Vol. 2B, "TPAUSE", "UMONITOR", "UMWAIT"; checked against GNU objdump 2.40:
 *  `UMONITOR rax/eax` = F3 0F AE F0, `UMWAIT ecx` = F2 0F AE F1, `TPAUSE ecx` = 66 0F AE F1 (ECX bit 0 set: the
 *  lighter C0.1 state, faster to wake; clear: C0.2). `RDTSC` (0F 31) is baseline.
 */
// clang-format on
#pragma once
#include <atomic>  // `std::atomic`
#include <cstdint> // `std::uint32_t`

#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/base/types.hpp> // `FORKUNION_ARCH_X86`

#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM
namespace forkunion::detail {

/**
 *  @brief  The spin-loop hint: frees the sibling hyper-thread's pipeline and avoids the memory-order machine
 *          clear on loop exit. No system call, no privilege (ring 3).
 */
struct x86_pause_t {
    void operator()() const noexcept { __asm__ __volatile__("pause" ::: "memory"); }
};

} // namespace forkunion::detail
#elif FORKUNION_ARCH_X86 && defined(_MSC_VER)
#include <intrin.h> // `_mm_pause`, `_ReadWriteBarrier`

namespace forkunion::detail {

/**  @brief  The spin-loop hint through MSVC's intrinsic (no inline assembly there), with a compiler barrier, as
 *          the GNU form's `"memory"` clobber. */
struct x86_pause_t {
    void operator()() const noexcept {
        _mm_pause();
        _ReadWriteBarrier();
    }
};

} // namespace forkunion::detail
#endif

#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
namespace forkunion::detail {

/**
 *  TSC ticks of one nap: the Linux default `IA32_UMWAIT_CONTROL` limit, so the OS never cuts a nap shorter than
 *  asked; 100,000 ticks are 30-50 µs at 2-3.5 GHz, far below a kernel wake-up (tens of µs here) plus a time slice.
 */
inline constexpr std::uint32_t x86_nap_tsc_ticks_k = 100'000;

/**  @brief  The time-stamp counter (`RDTSC`): the clock of `TPAUSE` and `UMWAIT` deadlines. */
inline std::uint64_t x86_read_tsc() noexcept {
    std::uint32_t low, high;
    __asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
    return (std::uint64_t(high) << 32) | low;
}

/**
 *  @brief  A timed light sleep: `TPAUSE` until the TSC passes `ticks` from now (or the OS limit, or an interrupt).
 *  @note   Requires WAITPKG (`capabilities_usable(x86_tpause_t::required_k)`); without it, `#UD` (SIGILL). Ring 3,
 *          no system call. Usable as a pool's micro-wait on parts that have it.
 */
struct x86_tpause_t {
    static constexpr capabilities_t required_k = capability_x86_waitpkg_k;
    std::uint32_t ticks = x86_nap_tsc_ticks_k; ///< The bound, in TSC ticks.
    bool deep = false;                         ///< C0.2 (deeper, slower to wake) instead of C0.1.

    void operator()() const noexcept {
        std::uint64_t const deadline = x86_read_tsc() + ticks;
        __asm__ __volatile__(".byte 0x66, 0x0F, 0xAE, 0xF1" // TPAUSE ecx
                             :
                             : "c"(deep ? 0u : 1u), "a"(std::uint32_t(deadline)), "d"(std::uint32_t(deadline >> 32))
                             : "memory", "cc");
    }
};

/**
 *  @brief  A light sleep on an address: while `word == seen`, waits until the word's cache line is written, the
 *          TSC passes `ticks` from now, the OS limit passes, or an interrupt arrives. May return spuriously.
 *
 *  `UMONITOR` arms the monitor first, then the word is read again: a write between the caller's check and the
 *  arming is seen by that read, and one after the arming ends the `UMWAIT`, so no write is lost.
 *  @note   Requires WAITPKG (`required_k`); ring 3, no system call.
 */
struct x86_umwait_t {
    static constexpr capabilities_t required_k = capability_x86_waitpkg_k;
    std::uint32_t ticks = x86_nap_tsc_ticks_k; ///< The bound, in TSC ticks.
    bool deep = false;                         ///< C0.2 (deeper, slower to wake) instead of C0.1.

    template <typename value_t>
    void operator()(std::atomic<value_t> const &word, value_t seen) const noexcept {
        __asm__ __volatile__(".byte 0xF3, 0x0F, 0xAE, 0xF0" : : "a"(&word) : "memory"); // UMONITOR rax/eax
        // Relaxed: a hint to keep waiting; the caller re-reads the word with the order it needs.
        if (word.load(std::memory_order_relaxed) != seen) return;
        std::uint64_t const deadline = x86_read_tsc() + ticks;
        __asm__ __volatile__(".byte 0xF2, 0x0F, 0xAE, 0xF1" // UMWAIT ecx
                             :
                             : "c"(deep ? 0u : 1u), "a"(std::uint32_t(deadline)), "d"(std::uint32_t(deadline >> 32))
                             : "memory", "cc");
    }
};

/**  @brief  The nap backend of x86: `UMONITOR`/`UMWAIT` where the build and the CPU have WAITPKG. */
struct x86_nap_t {
    /**  @brief  The instruction `try_nap` uses on this machine, or null if it cannot nap here. */
    static char const *instruction() noexcept {
        return with_waitpkg_k && capabilities_usable(x86_umwait_t::required_k) ? "UMONITOR+UMWAIT" : nullptr;
    }
    /**  @brief  One bounded light sleep while `word == seen`; false (at once) if the CPU cannot. */
    template <typename value_t>
    static bool try_nap(std::atomic<value_t> const &word, value_t seen) noexcept {
        if constexpr (with_waitpkg_k) {
            if (capabilities_usable(x86_umwait_t::required_k)) return x86_umwait_t{}(word, seen), true;
        }
        return false;
    }
};

} // namespace forkunion::detail
#endif
