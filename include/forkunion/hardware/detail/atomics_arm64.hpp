/**
 *  @file   forkunion/hardware/detail/atomics_arm64.hpp
 *  @brief  `arm64_atomics_t`: the AArch64 FEAT_LSE backend, every verb but the two conditional adds, at every
 *          width, inline, with the exact memory order.
 *
 *  Declared only on AArch64 with `FORKUNION_WITH_LSE`; used where the CPU reports `arm64_lse` (or the target
 *  guarantees it, `-march=armv8.1-a`+). Without `-march`, GCC and Clang compile `std::atomic` verbs to calls into
 *  out-of-line helpers that test for LSE on every call; these are the same instructions, inline.
 *
 *  | verb | instruction |
 *  | --- | --- |
 *  | `exchange` | `SWP` |
 *  | `compare_exchange` | `CAS` (never fails spuriously) |
 *  | `fetch_add`, `fetch_sub` | `LDADD` (of the negation) |
 *  | `fetch_and`, `fetch_or`, `fetch_xor` | `LDCLR` (of the complement), `LDSET`, `LDEOR` |
 *  | `fetch_max`, `fetch_min` | `LDSMAX`/`LDUMAX`, `LDSMIN`/`LDUMIN` |
 *  | `add`, `sub`, `set_bits`, `clear_bits`, `flip_bits` | `STADD`, `STSET`, `STCLR`, `STEOR` for relaxed and release;
 *  the `LD` form into a scratch register for stronger orders, since an `LD<op>A` into the zero register is not
 *  guaranteed to acquire (Arm ARM, "LDADD") |
 *
 *  Orders map to the suffixes: relaxed none, consume/acquire `A`, release `L`, acq_rel/seq_cst `AL` (LSE
 *  instructions with both are sequentially consistent). `fetch_add_if_at_most` and `fetch_sub_if_at_least` have no
 *  instruction and stay with the portable loop, whose `compare_exchange` is then `CAS` through the compiler.
 *
 *  Encodings are emitted with `.inst` (no assembler flag needed), operands pinned to x0 (Rs: the operand, or the
 *  compared value of `CAS`), x1 (Rt: the old value, or the desired value of `CAS`) and x2 (Rn: the address).
 *  Source: Arm Architecture Reference Manual (DDI 0487), C4.1 "Atomic memory operations" and "Compare and swap":
 *  - `LD<op>`/`SWP`: `size:2 111000 A R 1 Rs o3 opc:3 00 Rn Rt` = 0x38200000 | size<<30 | A<<23 | R<<22 |
 *    Rs<<16 | o3<<15 | opc<<12 | Rn<<5 | Rt; opc ADD 0, CLR 1, EOR 2, SET 3, SMAX 4, SMIN 5, UMAX 6, UMIN 7 (o3 0);
 *    `SWP` is o3 1, opc 0; the `ST<op>` aliases have Rt = 31.
 *  - `CAS`: `size:2 0010001 L 1 Rs o0 11111 Rn Rt` = 0x08A07C00 | size<<30 | L<<22 | Rs<<16 | o0<<15 | Rn<<5 | Rt,
 *    L = acquire, o0 = release.
 *  Checked against GNU objdump 2.40 and, for every verb, width and order, by the tests under `qemu-aarch64 -cpu max`.
 */
#pragma once
#include <atomic>      // `std::memory_order`
#include <cstdint>     // `std::uint32_t`
#include <type_traits> // `std::is_signed_v`

#include <forkunion/hardware/detail/atomics_portable.hpp>
#include <forkunion/hardware/features.hpp>

#if FORKUNION_ARCH_ARM64 && FORKUNION_WITH_LSE
namespace forkunion::detail {

/**  @brief  FEAT_LSE verbs; see the file comment. */
struct arm64_atomics_t {
    template <typename value_t>
    static constexpr bool implements(atomic_verb_t verb) noexcept {
        return verb != atomic_verb_t::fetch_add_if_at_most_k && verb != atomic_verb_t::fetch_sub_if_at_least_k;
    }
    template <typename value_t>
    static constexpr capabilities_t needs(atomic_verb_t, std::memory_order) noexcept {
        return capability_arm64_lse_k;
    }

    template <typename value_t>
    static value_t exchange(value_t &object, value_t value, std::memory_order order) noexcept {
        return rmw_<value_t, swp_k>(object, value, order);
    }
    template <typename value_t>
    static value_t fetch_add(value_t &object, value_t value, std::memory_order order) noexcept {
        return rmw_<value_t, add_k>(object, value, order);
    }
    template <typename value_t>
    static value_t fetch_sub(value_t &object, value_t value, std::memory_order order) noexcept {
        return rmw_<value_t, add_k>(object, wrapping_sub(value_t(0), value), order);
    }
    template <typename value_t>
    static value_t fetch_and(value_t &object, value_t value, std::memory_order order) noexcept {
        return rmw_<value_t, clr_k>(object, static_cast<value_t>(~value), order);
    }
    template <typename value_t>
    static value_t fetch_or(value_t &object, value_t value, std::memory_order order) noexcept {
        return rmw_<value_t, set_k>(object, value, order);
    }
    template <typename value_t>
    static value_t fetch_xor(value_t &object, value_t value, std::memory_order order) noexcept {
        return rmw_<value_t, eor_k>(object, value, order);
    }
    template <typename value_t>
    static value_t fetch_max(value_t &object, value_t value, std::memory_order order) noexcept {
        constexpr auto op_k = std::is_signed_v<value_t> ? smax_k : umax_k;
        return rmw_<value_t, op_k>(object, value, order);
    }
    template <typename value_t>
    static value_t fetch_min(value_t &object, value_t value, std::memory_order order) noexcept {
        constexpr auto op_k = std::is_signed_v<value_t> ? smin_k : umin_k;
        return rmw_<value_t, op_k>(object, value, order);
    }

    template <typename value_t>
    static void add(value_t &object, value_t value, std::memory_order order) noexcept {
        store_<value_t, add_k>(object, value, order);
    }
    template <typename value_t>
    static void sub(value_t &object, value_t value, std::memory_order order) noexcept {
        store_<value_t, add_k>(object, wrapping_sub(value_t(0), value), order);
    }
    template <typename value_t>
    static void set_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        store_<value_t, set_k>(object, bits, order);
    }
    template <typename value_t>
    static void clear_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        store_<value_t, clr_k>(object, bits, order);
    }
    template <typename value_t>
    static void flip_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        store_<value_t, eor_k>(object, bits, order);
    }

    template <typename value_t>
    static bool compare_exchange(value_t &object, value_t &expected, value_t desired, std::memory_order success,
                                 std::memory_order failure) noexcept {
        bool const acquire = is_acquire_(success) || is_acquire_(failure);
        bool const release = is_release_(success);
        std::uint64_t compare = raw_(expected);
        std::uint64_t const value = raw_(desired);
        void *const address = &object;
        constexpr std::uint32_t base = 0x08A07C00u | (size_<value_t>() << 30) | (2u << 5) | 1u; // Rs x0, Rn x2, Rt x1
        // Four constant encodings: `.inst` needs an immediate, so the order is dispatched here, not encoded.
        if (acquire && release)
            cas_<base | (1u << 22) | (1u << 15)>(compare, value, address);
        else if (acquire)
            cas_<base | (1u << 22)>(compare, value, address);
        else if (release)
            cas_<base | (1u << 15)>(compare, value, address);
        else
            cas_<base>(compare, value, address);
        value_t const old = static_cast<value_t>(compare);
        if (old == expected) return true;
        expected = old;
        return false;
    }

private:
    // `o3:opc` of the atomic memory operations.
    static constexpr std::uint32_t add_k = 0, clr_k = 1, eor_k = 2, set_k = 3, smax_k = 4, smin_k = 5, umax_k = 6,
                                   umin_k = 7, swp_k = 8;

    template <typename value_t>
    static constexpr std::uint32_t size_() noexcept {
        return sizeof(value_t) == 1 ? 0u : sizeof(value_t) == 2 ? 1u : sizeof(value_t) == 4 ? 2u : 3u;
    }
    static constexpr bool is_acquire_(std::memory_order order) noexcept {
        return order == std::memory_order_consume || order == std::memory_order_acquire ||
               order == std::memory_order_acq_rel || order == std::memory_order_seq_cst;
    }
    static constexpr bool is_release_(std::memory_order order) noexcept {
        return order == std::memory_order_release || order == std::memory_order_acq_rel ||
               order == std::memory_order_seq_cst;
    }
    /**  The value's bits, zero-extended: the instruction reads only the low `size` bytes. */
    template <typename value_t>
    static std::uint64_t raw_(value_t value) noexcept {
        return static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<value_t>>(value));
    }
    /**  `LD<op>`/`SWP` with Rs x0, Rn x2 and Rt as given, without its order bits. */
    template <typename value_t, std::uint32_t op_k>
    static constexpr std::uint32_t encoding_(std::uint32_t rt) noexcept {
        return 0x38200000u | (size_<value_t>() << 30) | ((op_k >> 3) << 15) | ((op_k & 7u) << 12) | (2u << 5) | rt;
    }

    template <std::uint32_t encoding_k>
    static void ld_(std::uint64_t value, std::uint64_t &old, void *address) noexcept {
        register std::uint64_t rs asm("x0") = value;
        register std::uint64_t rt asm("x1");
        register void *rn asm("x2") = address;
        __asm__ __volatile__(".inst %c[encoding]" : "=r"(rt) : "r"(rs), "r"(rn), [encoding] "i"(encoding_k) : "memory");
        old = rt;
    }
    template <std::uint32_t encoding_k>
    static void st_(std::uint64_t value, void *address) noexcept {
        register std::uint64_t rs asm("x0") = value;
        register void *rn asm("x2") = address;
        __asm__ __volatile__(".inst %c[encoding]" : : "r"(rs), "r"(rn), [encoding] "i"(encoding_k) : "memory");
    }
    template <std::uint32_t encoding_k>
    static void cas_(std::uint64_t &compare, std::uint64_t value, void *address) noexcept {
        register std::uint64_t rs asm("x0") = compare;
        register std::uint64_t rt asm("x1") = value;
        register void *rn asm("x2") = address;
        __asm__ __volatile__(".inst %c[encoding]" : "+r"(rs) : "r"(rt), "r"(rn), [encoding] "i"(encoding_k) : "memory");
        compare = rs;
    }

    /**  `LD<op>{,A,L,AL}` returning the old value. */
    template <typename value_t, std::uint32_t op_k>
    static value_t rmw_(value_t &object, value_t value, std::memory_order order) noexcept {
        constexpr std::uint32_t base = encoding_<value_t, op_k>(1); // Rt x1
        std::uint64_t const operand = raw_(value);
        void *const address = &object;
        std::uint64_t old;
        switch (order) {
        case std::memory_order_relaxed:
            ld_<base>(operand, old, address);
            break;
        case std::memory_order_consume:
        case std::memory_order_acquire:
            ld_<base | (1u << 23)>(operand, old, address);
            break;
        case std::memory_order_release:
            ld_<base | (1u << 22)>(operand, old, address);
            break;
        default:
            ld_<base | (1u << 23) | (1u << 22)>(operand, old, address);
            break;
        }
        return static_cast<value_t>(old);
    }

    /**  `ST<op>{,L}` for relaxed and release, `LD<op>{A,AL}` into a scratch register for stronger orders. */
    template <typename value_t, std::uint32_t op_k>
    static void store_(value_t &object, value_t value, std::memory_order order) noexcept {
        constexpr std::uint32_t store = encoding_<value_t, op_k>(31); // Rt = the zero register
        std::uint64_t const operand = raw_(value);
        void *const address = &object;
        switch (order) {
        case std::memory_order_relaxed:
            st_<store>(operand, address);
            break;
        case std::memory_order_release:
            st_<store | (1u << 22)>(operand, address);
            break;
        default:
            (void)rmw_<value_t, op_k>(object, value, order);
            break;
        }
    }
};

} // namespace forkunion::detail
#endif
