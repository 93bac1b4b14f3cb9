// clang-format off
/**
 *  @file   forkunion/hardware/detail/wait_riscv.hpp
 *  @brief  RISC-V waits: `riscv_pause_t` (the Zihintpause hint), `riscv_wrs_t` (a light sleep on an address,
 *          Zawrs) and `riscv_nap_t` (the pool's nap backend).
 *
 *  Defined only when compiling for RISC-V; elsewhere this header declares nothing. `riscv_wrs_t` is left out of
 *  `FORKUNION_PORTABLE` builds.
 *
 *  | wrapper         | instructions     | needs                              | privilege | bound                      |
 *  | --------------- | ---------------- | ---------------------------------- | --------- | -------------------------- |
 *  | `riscv_pause_t` | `PAUSE`          | nothing (a `FENCE` hint elsewhere) | U         | a hint, returns at once    |
 *  | `riscv_wrs_t`   | `LR` + `WRS.STO` | Zawrs                              | U         | a store to the reservation |
 *  |                 |                  |                                    |           | set, an interrupt, or the  |
 *  |                 |                  |                                    |           | hart's short timeout       |
 *  |                 |                  |                                    |           | (`WRS.NTO`: no timeout)    |
 *
 *  Encodings are emitted as words, which binutils 2.40 cannot spell: `PAUSE` = 0x0100000F (`FENCE W, 0`),
 *  `WRS.NTO` = 0x00D00073, `WRS.STO` = 0x01D00073 (SYSTEM opcode, funct12 0x00D / 0x01D). Source: The RISC-V
 *  Instruction Set Manual, Volume I, "Zihintpause" and "Zawrs".
 */
// clang-format on
#pragma once
#include <atomic>      // `std::atomic`
#include <cstdint>     // `std::uintptr_t`
#include <type_traits> // `std::make_unsigned_t`

#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/base/types.hpp> // `FORKUNION_ARCH_RISCV`

#if FORKUNION_ARCH_RISCV
namespace forkunion::detail {

/**  @brief  The Zihintpause spin-loop hint. No system call, U-mode; a no-op fence on harts without it. */
struct riscv_pause_t {
    void operator()() const noexcept { __asm__ __volatile__(".4byte 0x0100000F" ::: "memory"); }
};

} // namespace forkunion::detail
#endif

#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
namespace forkunion::detail {

/**
 *  @brief  A light sleep on an address: while `word == seen`, waits until the reservation on the word is lost (a
 *          store by another hart), an interrupt is pending, or, with `short_timeout`, the implementation's short
 *          timeout passes. May return spuriously.
 *
 *  `LR.W`/`LR.D` registers the reservation and re-reads the word in one step, so a store before it is seen and one
 *  after it ends the wait. A 1- or 2-byte word is watched through the aligned 4-byte word that holds it.
 *  @note   Requires Zawrs (`required_k`); without it, SIGILL. U-mode, no system call. `WRS.NTO` has no time bound
 *          and may trap where the kernel sets `mstatus.TW`, so the nap uses `WRS.STO`.
 */
struct riscv_wrs_t {
    static constexpr capabilities_t required_k = capability_riscv_zawrs_k;
    bool short_timeout = true; ///< `WRS.STO` (bounded) rather than `WRS.NTO`.

    template <typename value_t>
    void operator()(std::atomic<value_t> const &word, value_t seen) const noexcept {
        static_assert(sizeof(value_t) <= sizeof(long), "LR reads at most one register");
        std::uintptr_t const address = reinterpret_cast<std::uintptr_t>(&word);
        unsigned long changed;
        if constexpr (sizeof(value_t) == 8) {
            __asm__ __volatile__("lr.d %0, (%1)\n\txor %0, %0, %2"
                                 : "=&r"(changed)
                                 : "r"(address), "r"(static_cast<long>(seen))
                                 : "memory");
        } else {
            // Little-endian: the word sits `address % 4` bytes into the aligned 4-byte word.
            unsigned long const shift = (address & 3u) * 8u;
            unsigned long const mask = sizeof(value_t) == 4 ? 0xFFFFFFFFul : (1ul << (8 * sizeof(value_t))) - 1u;
            unsigned long const expected = static_cast<unsigned long>(static_cast<std::make_unsigned_t<value_t>>(seen));
            __asm__ __volatile__("lr.w %0, (%1)\n\tsrl %0, %0, %2\n\tand %0, %0, %3\n\txor %0, %0, %4"
                                 : "=&r"(changed)
                                 : "r"(address & ~std::uintptr_t(3)), "r"(shift), "r"(mask), "r"(expected)
                                 : "memory");
        }
        if (changed) return;
        if (short_timeout)
            __asm__ __volatile__(".4byte 0x01D00073" ::: "memory"); // WRS.STO
        else
            __asm__ __volatile__(".4byte 0x00D00073" ::: "memory"); // WRS.NTO
    }
};

/**  @brief  The nap backend of RISC-V: `LR` + `WRS.STO` where the build and the hart have Zawrs. */
struct riscv_nap_t {
    static char const *instruction() noexcept {
        return with_zawrs_k && capabilities_usable(riscv_wrs_t::required_k) ? "LR+WRS.STO" : nullptr;
    }
    template <typename value_t>
    static bool try_nap(std::atomic<value_t> const &word, value_t seen) noexcept {
        if constexpr (with_zawrs_k) {
            if (capabilities_usable(riscv_wrs_t::required_k)) return riscv_wrs_t{}(word, seen), true;
        }
        return false;
    }
};

} // namespace forkunion::detail
#endif
