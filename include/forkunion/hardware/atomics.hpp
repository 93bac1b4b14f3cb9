// clang-format off
/**
 *  @file   forkunion/hardware/atomics.hpp
 *  @brief  `atomic_ref_t<value_t>`: an atomic reference whose verbs run the one instruction the CPU has for
 *          them, picked at run time by capability bit, plus the verbs the standard lacks.
 *
 *  @section verbs Verbs
 *  The standard ones (`load`, `store`, `exchange`, `compare_exchange_strong`/`_weak`, `fetch_add`, `fetch_sub`,
 *  `fetch_and`, `fetch_or`, `fetch_xor`) with `std::atomic_ref` semantics, and:
 *  - `fetch_max(v)`, `fetch_min(v)`: `old = *p; *p = max(old, v); return old;` (signed or unsigned by type);
 *  - `fetch_add_if_at_most(delta, bound)`: `old = *p; if (old <= bound) *p = old + delta; return old;`, so the
 *    add happened iff the result is `<= bound` (to cap a counter at `limit`, pass `bound = limit - delta`);
 *  - `fetch_sub_if_at_least(delta, bound)`: `old = *p; if (old >= bound) *p = old - delta; return old;`;
 *  - no-return `add`, `sub`, `set_bits` (`|=`), `clear_bits` (`&= ~bits`), `flip_bits` (`^=`): cheaper where the
 *    CPU can skip returning the old value (Arm `ST<op>`, RISC-V `AMO` into `x0`, x86 RAO-INT).
 *  Arithmetic wraps modulo 2^bits for signed types too.
 *
 *  @section backends Backends (one per header, one interface, documented in `atomics_portable.hpp`)
 *  | target   | header                 | native verbs                                       | capability           |
 *  | -------- | ---------------------- | -------------------------------------------------- | -------------------- |
 *  | x86-64   | `atomics_x86.hpp`      | conditional adds (`CMPccXADD`), relaxed no-return  | `x86_cmpccxadd`,     |
 *  |          |                        | verbs (RAO-INT)                                    | `x86_raoint`         |
 *  | AArch64  | `atomics_arm64.hpp`    | all but the conditional adds (`LDADD`, `LDSMAX`,   | `arm64_lse`          |
 *  |          |                        | `STADD`, `SWP`, `CAS`, ...)                        |                      |
 *  | RISC-V   | `atomics_riscv.hpp`    | `fetch_max`/`min`, no-return verbs (`AMO*`),       | `riscv_amo`,         |
 *  |          |                        | `compare_exchange` (`AMOCAS`)                      | `riscv_zacas`        |
 *  | anything | `atomics_portable.hpp` | every verb, through `std::atomic_ref` and          | none                 |
 *  |          |                        | compare-exchange loops                             |                      |
 *
 *  Each call asks `capabilities_usable(needs)`: the verb runs natively if its instruction is compiled in and the CPU
 *  has it, and through the portable backend otherwise. That check is one relaxed load of the cached capability word
 *  and a predictable branch, inlined; it folds away when the target guarantees the feature or the build compiled it
 *  out. The alternative, a function pointer resolved once, costs an indirect call and blocks inlining:
 *  `bench/hardware/atomics.cpp` measures both (numbers in docs/design.md).
 *
 *  @section when When not to use it
 *  For the standard verbs on x86, or with `-march` that already enables LSE, `std::atomic_ref` is the same code.
 *  ThreadSanitizer cannot see inline assembly, so `-fsanitize=thread` builds use the portable backend throughout,
 *  which it instruments.
 *
 *  @section contract Contract
 *  Like `std::atomic_ref`: the object must outlive the reference, be aligned to `required_alignment_k` (8-byte values
 *  on 32-bit x86 need `alignas(8)`), and be accessed only atomically while any reference to it is in use. Where the
 *  compiler calls libatomic for a width (1- and 2-byte values with GCC 12 on RISC-V), link `-latomic`. Every
 *  member is `noexcept`, never blocks, and may be called from any thread. Each verb takes a `std::memory_order`
 *  with the standard meaning; a conditional verb that ends up not writing (`fetch_max` of a smaller value, a
 *  failed condition) is a load with the load part of that order, like a failed `compare_exchange`.
 */
// clang-format on
#pragma once
#include <atomic>      // `std::atomic_ref`, `std::memory_order`
#include <cstddef>     // `std::size_t`
#include <type_traits> // `std::is_integral_v`

#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/hardware/detail/atomics_portable.hpp>
#include <forkunion/hardware/detail/atomics_arm64.hpp>
#include <forkunion/hardware/detail/atomics_riscv.hpp>
#include <forkunion/hardware/detail/atomics_x86.hpp>
#include <forkunion/hardware/deprecated.hpp>

namespace forkunion {

// Public: the verbs `uses_native` asks about, and the backend that forces the portable paths.
using detail::atomic_verb_t;
using detail::portable_atomics_t;

#if FORKUNION_SANITIZE_THREAD
using native_atomics_t = portable_atomics_t;
#elif FORKUNION_ARCH_X86_64 && (FORKUNION_WITH_CMPCCXADD || FORKUNION_WITH_RAOINT)
using native_atomics_t = detail::x86_atomics_t;
#elif FORKUNION_ARCH_ARM64 && FORKUNION_WITH_LSE
using native_atomics_t = detail::arm64_atomics_t;
#elif FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
using native_atomics_t = detail::riscv_atomics_t;
#else
using native_atomics_t = portable_atomics_t;
#endif

/**
 *  @brief  An atomic reference to an integral object of 1, 2, 4 or 8 bytes; see the file comment.
 *  @tparam native_type_  The ISA backend tried first; `portable_atomics_t` forces the portable paths.
 *  Size: one pointer. Copyable; copies refer to the same object.
 */
template <typename value_type_, typename native_type_ = native_atomics_t>
class basic_atomic_ref_t {
public:
    using value_t = value_type_;
    using native_t = native_type_;
    static_assert(std::is_integral_v<value_t> && !std::is_same_v<value_t, bool>, "an integral, non-bool type");
    static_assert(sizeof(value_t) == 1 || sizeof(value_t) == 2 || sizeof(value_t) == 4 || sizeof(value_t) == 8);

    static constexpr std::size_t required_alignment_k = detail::standard_atomic_ref_t<value_t>::required_alignment;

    /**  @brief  Refers to `object`, which must be aligned to `required_alignment_k` and outlive the reference. */
    explicit basic_atomic_ref_t(value_t &object) noexcept : object_(&object) {}

    /**  @brief  Whether `verb` at `order` runs an ISA backend's instruction on this machine (false for the
     *          portable backend, whose verbs are `std::atomic_ref` and loops). */
    static bool uses_native(atomic_verb_t verb, std::memory_order order = std::memory_order_seq_cst) noexcept {
        return !std::is_same_v<native_t, portable_atomics_t> && native_t::template implements<value_t>(verb) &&
               capabilities_usable(native_t::template needs<value_t>(verb, order));
    }

    value_t load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return detail::standard_atomic_ref_t<value_t>(*object_).load(order);
    }
    void store(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        detail::standard_atomic_ref_t<value_t>(*object_).store(value, order);
    }
    value_t exchange(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::exchange_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::exchange(*object_, value, order); });
    }

    /**  @brief  `std::atomic_ref::compare_exchange_strong`: on failure, `expected` receives the current value. */
    bool compare_exchange_strong(value_t &expected, value_t desired, std::memory_order success,
                                 std::memory_order failure) const noexcept {
        return dispatch_<atomic_verb_t::compare_exchange_k>(success, [&](auto backend) noexcept {
            return decltype(backend)::compare_exchange(*object_, expected, desired, success, failure);
        });
    }
    bool compare_exchange_strong(value_t &expected, value_t desired,
                                 std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return compare_exchange_strong(expected, desired, order, detail::load_part(order));
    }
    /**  @brief  May fail spuriously, as the standard allows; never does where a native CAS instruction runs. */
    bool compare_exchange_weak(value_t &expected, value_t desired, std::memory_order success,
                               std::memory_order failure) const noexcept {
        return dispatch_<atomic_verb_t::compare_exchange_k>(success, [&](auto backend) noexcept {
            if constexpr (std::is_same_v<decltype(backend), portable_atomics_t>)
                return detail::standard_atomic_ref_t<value_t>(*object_).compare_exchange_weak(expected, desired,
                                                                                              success, failure);
            else
                return decltype(backend)::compare_exchange(*object_, expected, desired, success, failure);
        });
    }
    bool compare_exchange_weak(value_t &expected, value_t desired,
                               std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return compare_exchange_weak(expected, desired, order, detail::load_part(order));
    }

    value_t fetch_add(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_add_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_add(*object_, value, order); });
    }
    value_t fetch_sub(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_sub_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_sub(*object_, value, order); });
    }
    value_t fetch_and(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_and_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_and(*object_, value, order); });
    }
    value_t fetch_or(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_or_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_or(*object_, value, order); });
    }
    value_t fetch_xor(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_xor_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_xor(*object_, value, order); });
    }

    /**  @brief  `old = *p; *p = max(old, value); return old;` */
    value_t fetch_max(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_max_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_max(*object_, value, order); });
    }
    /**  @brief  `old = *p; *p = min(old, value); return old;` */
    value_t fetch_min(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_min_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::fetch_min(*object_, value, order); });
    }
    /**  @brief  `old = *p; if (old <= bound) *p = old + delta; return old;` */
    value_t fetch_add_if_at_most(value_t delta, value_t bound,
                                 std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_add_if_at_most_k>(order, [&](auto backend) noexcept {
            return decltype(backend)::fetch_add_if_at_most(*object_, delta, bound, order);
        });
    }
    /**  @brief  `old = *p; if (old >= bound) *p = old - delta; return old;` */
    value_t fetch_sub_if_at_least(value_t delta, value_t bound,
                                  std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return dispatch_<atomic_verb_t::fetch_sub_if_at_least_k>(order, [&](auto backend) noexcept {
            return decltype(backend)::fetch_sub_if_at_least(*object_, delta, bound, order);
        });
    }

    /**  @brief  `*p += value`, returning nothing. */
    void add(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        dispatch_<atomic_verb_t::add_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::add(*object_, value, order); });
    }
    /**  @brief  `*p -= value`, returning nothing. */
    void sub(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        dispatch_<atomic_verb_t::sub_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::sub(*object_, value, order); });
    }
    /**  @brief  `*p |= bits`, returning nothing. */
    void set_bits(value_t bits, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        dispatch_<atomic_verb_t::set_bits_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::set_bits(*object_, bits, order); });
    }
    /**  @brief  `*p &= ~bits`, returning nothing. */
    void clear_bits(value_t bits, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        dispatch_<atomic_verb_t::clear_bits_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::clear_bits(*object_, bits, order); });
    }
    /**  @brief  `*p ^= bits`, returning nothing. */
    void flip_bits(value_t bits, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        dispatch_<atomic_verb_t::flip_bits_k>(
            order, [&](auto backend) noexcept { return decltype(backend)::flip_bits(*object_, bits, order); });
    }

private:
    /**  Calls `call(native_t{})` where the native instruction is usable, else `call(portable_atomics_t{})`. */
    template <atomic_verb_t verb_k, typename call_t>
    static decltype(auto) dispatch_(std::memory_order order, call_t &&call) noexcept {
        if constexpr (native_t::template implements<value_t>(verb_k)) {
            if (capabilities_usable(native_t::template needs<value_t>(verb_k, order))) return call(native_t{});
        }
        return call(portable_atomics_t{});
    }

    value_t *object_;
};

/**  @brief  The atomic reference with the target's native backend. */
template <typename value_t>
using atomic_ref_t = basic_atomic_ref_t<value_t>;

} // namespace forkunion
