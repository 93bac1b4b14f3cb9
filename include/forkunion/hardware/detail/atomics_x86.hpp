/**
 *  @file   forkunion/hardware/detail/atomics_x86.hpp
 *  @brief  `x86_atomics_t`: the x86-64 atomic backend, `CMPccXADD` and RAO-INT, for 4- and 8-byte values.
 *
 *  Declared only on x86-64 with `FORKUNION_WITH_CMPCCXADD` or `FORKUNION_WITH_RAOINT`. The standard verbs are
 *  already one instruction on x86 (`lock xadd`, `xchg`, `lock cmpxchg`) and stay with `std::atomic_ref`.
 *
 *  | verb                      | instruction                        | orders        | needs          |
 *  | ------------------------- | ---------------------------------- | ------------- | -------------- |
 *  | `fetch_add_if_at_most`    | `CMPBEXADD` / `CMPLEXADD` (signed) | all (locked)  | `x86_cmpccxadd` |
 *  | `fetch_sub_if_at_least`   | `CMPNBXADD` / `CMPNLXADD` (signed) | all (locked)  | `x86_cmpccxadd` |
 *  | `add`, `sub`              | `AADD` (`sub` adds the negation)   | relaxed only  | `x86_raoint`   |
 *  | `set_bits`, `clear_bits`, `flip_bits` | `AOR`, `AAND` (of the complement), `AXOR` | relaxed only | `x86_raoint` |
 *
 *  `CMPccXADD` is implicitly locked, a full barrier, so it serves every order. RAO-INT instructions are weakly
 *  ordered, like write-combining stores: they may complete away from the core and are not ordered with other
 *  addresses, so they serve `relaxed` only, and a relaxed `add` carries nothing to a later release. Publish through
 *  a `release` verb (which stays `lock add`).
 *
 *  Encodings are emitted as bytes (GCC 12 and Clang 14 know no mnemonics), with the memory operand in `rdi`, the
 *  register operand in `eax`/`rax` and the VEX.vvvv operand in `ecx`/`rcx`; checked against GNU objdump 2.40.
 *  Sources: Intel Architecture Instruction Set Extensions Programming Reference (319433), "CMPccXADD" and
 *  "AADD/AAND/AOR/AXOR":
 *  - `CMPccXADD m, r1, r2`: VEX.128.66.0F38.W0 (W1: 64-bit) E0+cc /r; ModRM.r/m = m, ModRM.reg = r1, vvvv = r2.
 *    It compares `m` with `r1` (flags of `m - r1`); if `cc` holds, `m += r2`; always `r1 = old m`. Bytes:
 *    `C4 E2 71|F1 E0+cc 07` (cc: 3 NB, 6 BE, D NL, E LE).
 *  - `AADD m, r`: NP 0F 38 FC /r; `AAND` adds prefix 66, `AOR` F2, `AXOR` F3; REX.W (48) for 64-bit. ModRM 07.
 */
#pragma once
#include <atomic>      // `std::memory_order`
#include <cstdint>     // `std::uint8_t`
#include <type_traits> // `std::is_signed_v`

#include <forkunion/hardware/detail/atomics_portable.hpp>
#include <forkunion/hardware/features.hpp>

#if FORKUNION_ARCH_X86_64 && (FORKUNION_WITH_CMPCCXADD || FORKUNION_WITH_RAOINT)
namespace forkunion::detail {

/**  @brief  `CMPccXADD` and RAO-INT verbs; see the file comment. */
struct x86_atomics_t {
    template <typename value_t>
    static constexpr bool implements(atomic_verb_t verb) noexcept {
        if (sizeof(value_t) != 4 && sizeof(value_t) != 8) return false;
        switch (verb) {
        case atomic_verb_t::fetch_add_if_at_most_k:
        case atomic_verb_t::fetch_sub_if_at_least_k:
            return with_cmpccxadd_k;
        case atomic_verb_t::add_k:
        case atomic_verb_t::sub_k:
        case atomic_verb_t::set_bits_k:
        case atomic_verb_t::clear_bits_k:
        case atomic_verb_t::flip_bits_k:
            return with_raoint_k;
        default:
            return false;
        }
    }

    template <typename value_t>
    static constexpr capabilities_t needs(atomic_verb_t verb, std::memory_order order) noexcept {
        switch (verb) {
        case atomic_verb_t::fetch_add_if_at_most_k:
        case atomic_verb_t::fetch_sub_if_at_least_k:
            return capability_x86_cmpccxadd_k;
        default:
            return order == std::memory_order_relaxed ? capabilities_t(capability_x86_raoint_k) : capabilities_all_k;
        }
    }

    template <typename value_t>
    static value_t fetch_add_if_at_most(value_t &object, value_t delta, value_t bound, std::memory_order) noexcept {
        constexpr std::uint8_t condition_k = std::is_signed_v<value_t> ? 0xE /* LE */ : 0x6 /* BE */;
        return cmpccxadd_<condition_k>(object, bound, delta);
    }
    template <typename value_t>
    static value_t fetch_sub_if_at_least(value_t &object, value_t delta, value_t bound, std::memory_order) noexcept {
        constexpr std::uint8_t condition_k = std::is_signed_v<value_t> ? 0xD /* NL */ : 0x3 /* NB */;
        return cmpccxadd_<condition_k>(object, bound, wrapping_sub(value_t(0), delta));
    }

    template <typename value_t>
    static void add(value_t &object, value_t value, std::memory_order) noexcept {
        rao_<0x00>(object, value);
    }
    template <typename value_t>
    static void sub(value_t &object, value_t value, std::memory_order) noexcept {
        rao_<0x00>(object, wrapping_sub(value_t(0), value));
    }
    template <typename value_t>
    static void set_bits(value_t &object, value_t bits, std::memory_order) noexcept {
        rao_<0xF2>(object, bits);
    }
    template <typename value_t>
    static void clear_bits(value_t &object, value_t bits, std::memory_order) noexcept {
        rao_<0x66>(object, static_cast<value_t>(~bits));
    }
    template <typename value_t>
    static void flip_bits(value_t &object, value_t bits, std::memory_order) noexcept {
        rao_<0xF3>(object, bits);
    }

private:
    /**  `CMPccXADD [rdi], eax|rax (compare in, old out), ecx|rcx (addend)`. */
    template <std::uint8_t condition_k, typename value_t>
    static value_t cmpccxadd_(value_t &object, value_t compare, value_t addend) noexcept {
        constexpr int vex_w_k = sizeof(value_t) == 8 ? 0xF1 : 0x71;
        __asm__ __volatile__(".byte 0xC4, 0xE2, %c[vex_w_k], %c[opcode], 0x07"
                             : "+a"(compare), "+m"(object)
                             : "D"(&object), "c"(addend), [vex_w_k] "i"(vex_w_k), [opcode] "i"(0xE0 + condition_k)
                             : "memory", "cc");
        return compare;
    }

    /**  `AADD`/`AAND`/`AOR`/`AXOR [rdi], eax|rax`, picked by the legacy prefix (0 for none). */
    template <std::uint8_t prefix_k, typename value_t>
    static void rao_(value_t &object, value_t value) noexcept {
        if constexpr (prefix_k == 0 && sizeof(value_t) == 4)
            __asm__ __volatile__(".byte 0x0F, 0x38, 0xFC, 0x07" : "+m"(object) : "D"(&object), "a"(value) : "memory");
        else if constexpr (prefix_k == 0)
            __asm__ __volatile__(".byte 0x48, 0x0F, 0x38, 0xFC, 0x07"
                                 : "+m"(object)
                                 : "D"(&object), "a"(value)
                                 : "memory");
        else if constexpr (sizeof(value_t) == 4)
            __asm__ __volatile__(".byte %c[prefix], 0x0F, 0x38, 0xFC, 0x07"
                                 : "+m"(object)
                                 : "D"(&object), "a"(value), [prefix] "i"(prefix_k)
                                 : "memory");
        else
            __asm__ __volatile__(".byte %c[prefix], 0x48, 0x0F, 0x38, 0xFC, 0x07"
                                 : "+m"(object)
                                 : "D"(&object), "a"(value), [prefix] "i"(prefix_k)
                                 : "memory");
    }
};

} // namespace forkunion::detail
#endif
