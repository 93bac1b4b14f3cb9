/**
 *  @file   forkunion/hardware/detail/atomics_riscv.hpp
 *  @brief  `riscv_atomics_t`: the RISC-V backend, A-extension AMOs for the verbs compilers do not emit, and Zacas
 *          `AMOCAS` for `compare_exchange`, for 4-byte values (and 8-byte ones on RV64).
 *
 *  Declared only on RISC-V outside portable builds. Compilers already emit `AMOADD`, `AMOSWAP`, `AMOAND`... for
 *  the standard verbs, so those stay with `std::atomic_ref`; 1- and 2-byte values have no AMO without Zabha and
 *  stay with the compiler's masked `LR`/`SC` loops.
 *
 *  | verb | instruction | needs |
 *  | --- | --- | --- |
 *  | `fetch_max`, `fetch_min` | `AMOMAX`/`AMOMAXU`, `AMOMIN`/`AMOMINU` | `riscv_amo` |
 *  | `add`, `sub`, `set_bits`, `clear_bits`, `flip_bits` | `AMOADD`, `AMOOR`, `AMOAND` (of the complement), `AMOXOR`
 * into `x0` | `riscv_amo` | | `compare_exchange` | `AMOCAS` (never fails spuriously) | `riscv_zacas` |
 *
 *  Orders map to the `aq`/`rl` bits: relaxed none, consume/acquire `aq`, release `rl`, acq_rel/seq_cst both (the
 *  psABI's mapping of a sequentially consistent AMO). `riscv_amo` is guaranteed by every Linux target
 *  (`__riscv_atomic`), so those checks fold away.
 *
 *  Every instruction is emitted with `.insn r 0x2F, funct3, funct7, rd, rs1, rs2` (the AMO major opcode), so
 *  binutils that predate Zacas (2.40) assemble it: funct3 is 2 (`.W`) or 3 (`.D`), funct7 = funct5 << 2 | aq << 1 |
 *  rl. Source: The RISC-V Instruction Set Manual, Volume I, "A" chapter (funct5: AMOADD 0, AMOXOR 4, AMOOR 8,
 *  AMOAND 12, AMOMIN 16, AMOMAX 20, AMOMINU 24, AMOMAXU 28) and "Zacas" (AMOCAS 5: rd holds the compared value
 *  and receives the old one, rs2 the new value).
 */
#pragma once
#include <atomic>      // `std::memory_order`
#include <cstdint>     // `std::uint32_t`
#include <type_traits> // `std::is_signed_v`

#include <forkunion/hardware/detail/atomics_portable.hpp>
#include <forkunion/hardware/features.hpp>

#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
namespace forkunion::detail {

/**  @brief  RISC-V AMO and Zacas verbs; see the file comment. */
struct riscv_atomics_t {
    template <typename value_t>
    static constexpr bool implements(atomic_verb_t verb) noexcept {
        if (sizeof(value_t) != 4 && !(sizeof(value_t) == 8 && sizeof(long) == 8)) return false;
        switch (verb) {
        case atomic_verb_t::compare_exchange_k:
            return with_zacas_k;
        case atomic_verb_t::fetch_max_k:
        case atomic_verb_t::fetch_min_k:
        case atomic_verb_t::add_k:
        case atomic_verb_t::sub_k:
        case atomic_verb_t::set_bits_k:
        case atomic_verb_t::clear_bits_k:
        case atomic_verb_t::flip_bits_k:
            return true;
        default:
            return false;
        }
    }
    template <typename value_t>
    static constexpr capabilities_t needs(atomic_verb_t verb, std::memory_order) noexcept {
        return verb == atomic_verb_t::compare_exchange_k ? capabilities_t(capability_riscv_zacas_k)
                                                         : capabilities_t(capability_riscv_amo_k);
    }

    template <typename value_t>
    static value_t fetch_max(value_t &object, value_t value, std::memory_order order) noexcept {
        return amo_ < std::is_signed_v<value_t> ? max_k : maxu_k, true > (object, value, order);
    }
    template <typename value_t>
    static value_t fetch_min(value_t &object, value_t value, std::memory_order order) noexcept {
        return amo_ < std::is_signed_v<value_t> ? min_k : minu_k, true > (object, value, order);
    }
    template <typename value_t>
    static void add(value_t &object, value_t value, std::memory_order order) noexcept {
        amo_<add_k, false>(object, value, order);
    }
    template <typename value_t>
    static void sub(value_t &object, value_t value, std::memory_order order) noexcept {
        amo_<add_k, false>(object, wrapping_sub(value_t(0), value), order);
    }
    template <typename value_t>
    static void set_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        amo_<or_k, false>(object, bits, order);
    }
    template <typename value_t>
    static void clear_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        amo_<and_k, false>(object, static_cast<value_t>(~bits), order);
    }
    template <typename value_t>
    static void flip_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        amo_<xor_k, false>(object, bits, order);
    }

    template <typename value_t>
    static bool compare_exchange(value_t &object, value_t &expected, value_t desired, std::memory_order success,
                                 std::memory_order failure) noexcept {
        bool const acquire = success != std::memory_order_relaxed && success != std::memory_order_release;
        bool const also_acquire = failure != std::memory_order_relaxed;
        bool const release = success == std::memory_order_release || success == std::memory_order_acq_rel ||
                             success == std::memory_order_seq_cst;
        // `AMOCAS.W` compares the low 32 bits and sign-extends the old value on RV64: pass `expected` the same way.
        long compare =
            sizeof(value_t) == 4 ? static_cast<long>(static_cast<std::int32_t>(expected)) : static_cast<long>(expected);
        long const value = static_cast<long>(desired);
        if ((acquire || also_acquire) && release)
            cas_<true, true, value_t>(object, compare, value);
        else if (acquire || also_acquire)
            cas_<true, false, value_t>(object, compare, value);
        else if (release)
            cas_<false, true, value_t>(object, compare, value);
        else
            cas_<false, false, value_t>(object, compare, value);
        value_t const old = static_cast<value_t>(compare);
        if (old == expected) return true;
        expected = old;
        return false;
    }

private:
    static constexpr std::uint32_t add_k = 0, xor_k = 4, or_k = 8, and_k = 12, min_k = 16, max_k = 20, minu_k = 24,
                                   maxu_k = 28, cas_k = 5;

    template <typename value_t>
    static constexpr std::uint32_t funct3_() noexcept {
        return sizeof(value_t) == 4 ? 2u : 3u;
    }

    /**  One AMO with constant `aq`/`rl` bits; `rd` is `x0` when the old value is not wanted. */
    template <std::uint32_t funct5_k, bool returns_k, std::uint32_t order_bits_k, typename value_t>
    static value_t amo_fixed_(value_t &object, value_t value) noexcept {
        constexpr std::uint32_t funct7 = (funct5_k << 2) | order_bits_k;
        long const operand = static_cast<long>(value);
        long old = 0;
        if constexpr (returns_k)
            __asm__ __volatile__(
                ".insn r 0x2F, %[funct3], %[funct7], %[old], %[address], %[operand]"
                : [old] "=r"(old)
                : [address] "r"(&object), [operand] "r"(operand), [funct3] "i"(funct3_<value_t>()), [funct7] "i"(funct7)
                : "memory");
        else
            __asm__ __volatile__(
                ".insn r 0x2F, %[funct3], %[funct7], x0, %[address], %[operand]"
                :
                : [address] "r"(&object), [operand] "r"(operand), [funct3] "i"(funct3_<value_t>()), [funct7] "i"(funct7)
                : "memory");
        return static_cast<value_t>(old);
    }

    template <std::uint32_t funct5_k, bool returns_k, typename value_t>
    static value_t amo_(value_t &object, value_t value, std::memory_order order) noexcept {
        switch (order) {
        case std::memory_order_relaxed:
            return amo_fixed_<funct5_k, returns_k, 0>(object, value);
        case std::memory_order_consume:
        case std::memory_order_acquire:
            return amo_fixed_<funct5_k, returns_k, 2>(object, value);
        case std::memory_order_release:
            return amo_fixed_<funct5_k, returns_k, 1>(object, value);
        default:
            return amo_fixed_<funct5_k, returns_k, 3>(object, value);
        }
    }

    template <bool aq_k, bool rl_k, typename value_t>
    static void cas_(value_t &object, long &compare, long value) noexcept {
        constexpr std::uint32_t funct7 = (cas_k << 2) | (aq_k ? 2u : 0u) | (rl_k ? 1u : 0u);
        __asm__ __volatile__(
            ".insn r 0x2F, %[funct3], %[funct7], %[compare], %[address], %[value]"
            : [compare] "+r"(compare)
            : [address] "r"(&object), [value] "r"(value), [funct3] "i"(funct3_<value_t>()), [funct7] "i"(funct7)
            : "memory");
    }
};

} // namespace forkunion::detail
#endif
