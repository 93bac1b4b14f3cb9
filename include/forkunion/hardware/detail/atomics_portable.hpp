// clang-format off
/**
 *  @file   forkunion/hardware/detail/atomics_portable.hpp
 *  @brief  The atomic verbs, the backend interface every ISA backend implements, and `portable_atomics_t`, the
 *          backend that always exists: `std::atomic_ref` and compare-exchange loops.
 *
 *  @section interface Backend interface (every ISA backend has these members; `atomics.hpp` picks one)
 *  A backend is a struct of static members over an integral `value_t` of 1, 2, 4 or 8 bytes:
 *  - `implements<value_t>(verb)`: constexpr; whether the backend has an instruction for `verb` at this width,
 *    for some memory order. Only then are its verb functions instantiated.
 *  - `needs<value_t>(verb, order)`: the capability bits that instruction needs at run time, or
 *    `capabilities_all_k` when there is none for this order (RAO-INT is relaxed-only, for example).
 *  - the verbs, each `static`, `noexcept`, taking the object by reference and the order(s) last:
 *    `exchange`, `compare_exchange` (strong), `fetch_add`, `fetch_sub`, `fetch_and`, `fetch_or`, `fetch_xor`,
 *    `fetch_max`, `fetch_min`, `fetch_add_if_at_most`, `fetch_sub_if_at_least`, and the no-return `add`, `sub`,
 *    `set_bits`, `clear_bits`, `flip_bits`. An ISA backend defines only the verbs it implements.
 *
 *  @section fallbacks The portable fallback of each verb
 *  | verb                                            | fallback                                                   |
 *  | ----------------------------------------------- | ---------------------------------------------------------- |
 *  | `exchange`, `compare_exchange`, `fetch_add`,    | `std::atomic_ref`, whatever the compiler emits for the     |
 *  | `fetch_sub`, `fetch_and`, `fetch_or`,           | target                                                     |
 *  | `fetch_xor`                                     |                                                            |
 *  | `fetch_max`, `fetch_min`                        | compare-exchange loop; stops without writing once the      |
 *  |                                                 | value already wins                                         |
 *  | `fetch_add_if_at_most`, `fetch_sub_if_at_least` | compare-exchange loop; stops without writing once the      |
 *  |                                                 | condition fails                                            |
 *  | `add`, `sub`, `set_bits`, `clear_bits`,         | the `fetch_*` verb with its result unused (`lock add`/     |
 *  | `flip_bits`                                     | `or`/`and`/`xor` on x86)                                   |
 *
 *  A loop that stops without writing has made only loads, with the load part of the order (like a failed
 *  `compare_exchange`: acquire for `acquire`/`acq_rel`, `seq_cst` for `seq_cst`, relaxed for `release`/`relaxed`).
 *  Arithmetic wraps modulo 2^bits for signed types too, as `std::atomic` does.
 */
// clang-format on
#pragma once
#include <atomic>      // `std::atomic_ref`, `std::memory_order`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint8_t`
#include <type_traits> // `std::make_unsigned_t`

#include <forkunion/hardware/features.hpp>

namespace forkunion::detail {

#if FORKUNION_INLINE_ASM
/**
 *  @brief  The part of `std::atomic_ref` this library uses, over the GCC/Clang `__atomic` builtins: for standard
 *          libraries that lack `std::atomic_ref` (emscripten 3.1.6's libc++, for example).
 *
 *  The builtins are what `std::atomic_ref` itself compiles to in libstdc++ and libc++, so the code is the same;
 *  ThreadSanitizer instruments them too. The object must be aligned to `required_alignment` (its size: an
 *  8-byte value on a 32-bit target needs `alignas(8)`), outlive the reference and be accessed only atomically
 *  while it is in use. Declared wherever the builtins exist, and tested there, whichever one a build selects.
 */
template <typename value_type_>
class builtin_atomic_ref_t {
public:
    using value_t = value_type_;
    /**  `std::atomic_ref`'s own member name, so that either type serves the same code. */
    static constexpr std::size_t required_alignment = // NOLINT(readability-identifier-naming)
        sizeof(value_t) > alignof(value_t) ? sizeof(value_t) : alignof(value_t);

    explicit builtin_atomic_ref_t(value_t &object) noexcept : object_(&object) {}

    value_t load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_load_n(object_, gnu_(order));
    }
    void store(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        __atomic_store_n(object_, value, gnu_(order));
    }
    value_t exchange(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_exchange_n(object_, value, gnu_(order));
    }
    bool compare_exchange_strong(value_t &expected, value_t desired, std::memory_order success,
                                 std::memory_order failure) const noexcept {
        return __atomic_compare_exchange_n(object_, &expected, desired, false, gnu_(success), gnu_(failure));
    }
    bool compare_exchange_weak(value_t &expected, value_t desired, std::memory_order success,
                               std::memory_order failure) const noexcept {
        return __atomic_compare_exchange_n(object_, &expected, desired, true, gnu_(success), gnu_(failure));
    }
    value_t fetch_add(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_fetch_add(object_, value, gnu_(order));
    }
    value_t fetch_sub(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_fetch_sub(object_, value, gnu_(order));
    }
    value_t fetch_and(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_fetch_and(object_, value, gnu_(order));
    }
    value_t fetch_or(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_fetch_or(object_, value, gnu_(order));
    }
    value_t fetch_xor(value_t value, std::memory_order order = std::memory_order_seq_cst) const noexcept {
        return __atomic_fetch_xor(object_, value, gnu_(order));
    }

private:
    /**  The builtin's constant for a `std::memory_order` (`consume` is taken as `acquire`, as compilers do). */
    static constexpr int gnu_(std::memory_order order) noexcept {
        switch (order) {
        case std::memory_order_relaxed:
            return __ATOMIC_RELAXED;
        case std::memory_order_consume:
            return __ATOMIC_ACQUIRE;
        case std::memory_order_acquire:
            return __ATOMIC_ACQUIRE;
        case std::memory_order_release:
            return __ATOMIC_RELEASE;
        case std::memory_order_acq_rel:
            return __ATOMIC_ACQ_REL;
        default:
            return __ATOMIC_SEQ_CST;
        }
    }

    value_t *object_;
};
#endif

/**  @brief  The atomic reference the portable verbs are written with: `std::atomic_ref` where the standard
 *          library has it, `builtin_atomic_ref_t` where it does not. */
#if defined(__cpp_lib_atomic_ref)
template <typename value_t>
using standard_atomic_ref_t = std::atomic_ref<value_t>;
#else
template <typename value_t>
using standard_atomic_ref_t = builtin_atomic_ref_t<value_t>;
#endif

/**  @brief  Every read-modify-write verb a backend may implement natively. */
enum class atomic_verb_t : std::uint8_t {
    exchange_k,
    compare_exchange_k,
    fetch_add_k,
    fetch_sub_k,
    fetch_and_k,
    fetch_or_k,
    fetch_xor_k,
    fetch_max_k,
    fetch_min_k,
    fetch_add_if_at_most_k,
    fetch_sub_if_at_least_k,
    add_k,
    sub_k,
    set_bits_k,
    clear_bits_k,
    flip_bits_k,
};

/**  @brief  The load part of `order`: what a read-modify-write that ends up not writing still guarantees. */
constexpr std::memory_order load_part(std::memory_order order) noexcept {
    switch (order) {
    case std::memory_order_release:
        return std::memory_order_relaxed;
    case std::memory_order_acq_rel:
        return std::memory_order_acquire;
    default:
        return order;
    }
}

/**  @brief  `a + b` and `a - b` modulo 2^bits, without signed overflow. */
template <typename value_t>
constexpr value_t wrapping_add(value_t a, value_t b) noexcept {
    using unsigned_t = std::make_unsigned_t<value_t>;
    return static_cast<value_t>(static_cast<unsigned_t>(static_cast<unsigned_t>(a) + static_cast<unsigned_t>(b)));
}
template <typename value_t>
constexpr value_t wrapping_sub(value_t a, value_t b) noexcept {
    using unsigned_t = std::make_unsigned_t<value_t>;
    return static_cast<value_t>(static_cast<unsigned_t>(static_cast<unsigned_t>(a) - static_cast<unsigned_t>(b)));
}

/**  @brief  The backend that always exists; see the file comment for each verb's fallback. */
struct portable_atomics_t {
    template <typename value_t>
    static constexpr bool implements(atomic_verb_t) noexcept {
        return true;
    }
    template <typename value_t>
    static constexpr capabilities_t needs(atomic_verb_t, std::memory_order) noexcept {
        return capabilities_none_k;
    }

    template <typename value_t>
    static value_t exchange(value_t &object, value_t value, std::memory_order order) noexcept {
        return standard_atomic_ref_t<value_t>(object).exchange(value, order);
    }
    template <typename value_t>
    static bool compare_exchange(value_t &object, value_t &expected, value_t desired, std::memory_order success,
                                 std::memory_order failure) noexcept {
        return standard_atomic_ref_t<value_t>(object).compare_exchange_strong(expected, desired, success, failure);
    }
    template <typename value_t>
    static value_t fetch_add(value_t &object, value_t value, std::memory_order order) noexcept {
        return standard_atomic_ref_t<value_t>(object).fetch_add(value, order);
    }
    template <typename value_t>
    static value_t fetch_sub(value_t &object, value_t value, std::memory_order order) noexcept {
        return standard_atomic_ref_t<value_t>(object).fetch_sub(value, order);
    }
    template <typename value_t>
    static value_t fetch_and(value_t &object, value_t value, std::memory_order order) noexcept {
        return standard_atomic_ref_t<value_t>(object).fetch_and(value, order);
    }
    template <typename value_t>
    static value_t fetch_or(value_t &object, value_t value, std::memory_order order) noexcept {
        return standard_atomic_ref_t<value_t>(object).fetch_or(value, order);
    }
    template <typename value_t>
    static value_t fetch_xor(value_t &object, value_t value, std::memory_order order) noexcept {
        return standard_atomic_ref_t<value_t>(object).fetch_xor(value, order);
    }

    /**  The compare-exchange loop of the conditional verbs: writes `next(old)` while `keep_going(old)`. */
    template <typename value_t, typename condition_t, typename next_t>
    static value_t update_while(value_t &object, std::memory_order order, condition_t keep_going,
                                next_t next) noexcept {
        standard_atomic_ref_t<value_t> ref(object);
        std::memory_order const failure = load_part(order);
        value_t old = ref.load(failure);
        // A failed weak exchange reloads `old` with the load part of `order`, so an exit without a write
        // guarantees what a failed `compare_exchange` does.
        while (keep_going(old) && !ref.compare_exchange_weak(old, next(old), order, failure)) {}
        return old;
    }

    template <typename value_t>
    static value_t fetch_max(value_t &object, value_t value, std::memory_order order) noexcept {
        return update_while(
            object, order, [value](value_t old) noexcept { return old < value; },
            [value](value_t) noexcept { return value; });
    }
    template <typename value_t>
    static value_t fetch_min(value_t &object, value_t value, std::memory_order order) noexcept {
        return update_while(
            object, order, [value](value_t old) noexcept { return value < old; },
            [value](value_t) noexcept { return value; });
    }
    template <typename value_t>
    static value_t fetch_add_if_at_most(value_t &object, value_t delta, value_t bound,
                                        std::memory_order order) noexcept {
        return update_while(
            object, order, [bound](value_t old) noexcept { return old <= bound; },
            [delta](value_t old) noexcept { return wrapping_add(old, delta); });
    }
    template <typename value_t>
    static value_t fetch_sub_if_at_least(value_t &object, value_t delta, value_t bound,
                                         std::memory_order order) noexcept {
        return update_while(
            object, order, [bound](value_t old) noexcept { return old >= bound; },
            [delta](value_t old) noexcept { return wrapping_sub(old, delta); });
    }

    template <typename value_t>
    static void add(value_t &object, value_t value, std::memory_order order) noexcept {
        standard_atomic_ref_t<value_t>(object).fetch_add(value, order);
    }
    template <typename value_t>
    static void sub(value_t &object, value_t value, std::memory_order order) noexcept {
        standard_atomic_ref_t<value_t>(object).fetch_sub(value, order);
    }
    template <typename value_t>
    static void set_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        standard_atomic_ref_t<value_t>(object).fetch_or(bits, order);
    }
    template <typename value_t>
    static void clear_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        standard_atomic_ref_t<value_t>(object).fetch_and(static_cast<value_t>(~bits), order);
    }
    template <typename value_t>
    static void flip_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        standard_atomic_ref_t<value_t>(object).fetch_xor(bits, order);
    }
};

} // namespace forkunion::detail
