/**
 *  @file   forkunion/detail/atomics_portable.hpp
 *  @brief  The atomic verbs, the backend interface every ISA backend implements, and `portable_atomics_t`, the
 *          backend that always exists: `std::atomic_ref` and compare-exchange loops.
 *
 *  @section interface Backend interface (STYLE #7)
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
 *  | verb | fallback |
 *  | --- | --- |
 *  | `exchange`, `compare_exchange`, `fetch_add`, `fetch_sub`, `fetch_and`, `fetch_or`, `fetch_xor` |
 * `std::atomic_ref`, whatever the compiler emits for the target | | `fetch_max`, `fetch_min` | compare-exchange loop;
 * stops without writing once the value already wins | | `fetch_add_if_at_most`, `fetch_sub_if_at_least` |
 * compare-exchange loop; stops without writing once the condition fails | | `add`, `sub`, `set_bits`, `clear_bits`,
 * `flip_bits` | the `fetch_*` verb with its result unused (`lock add`/`or`/`and`/`xor` on x86) |
 *
 *  A loop that stops without writing has made only loads, with the load part of the order (like a failed
 *  `compare_exchange`: acquire for `acquire`/`acq_rel`, `seq_cst` for `seq_cst`, relaxed for `release`/`relaxed`).
 *  Arithmetic wraps modulo 2^bits for signed types too, as `std::atomic` does.
 */
#pragma once
#include <atomic>      // `std::atomic_ref`, `std::memory_order`
#include <cstdint>     // `std::uint8_t`
#include <type_traits> // `std::make_unsigned_t`

#include <forkunion/features.hpp>

namespace forkunion::detail {

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
        return std::atomic_ref<value_t>(object).exchange(value, order);
    }
    template <typename value_t>
    static bool compare_exchange(value_t &object, value_t &expected, value_t desired, std::memory_order success,
                                 std::memory_order failure) noexcept {
        return std::atomic_ref<value_t>(object).compare_exchange_strong(expected, desired, success, failure);
    }
    template <typename value_t>
    static value_t fetch_add(value_t &object, value_t value, std::memory_order order) noexcept {
        return std::atomic_ref<value_t>(object).fetch_add(value, order);
    }
    template <typename value_t>
    static value_t fetch_sub(value_t &object, value_t value, std::memory_order order) noexcept {
        return std::atomic_ref<value_t>(object).fetch_sub(value, order);
    }
    template <typename value_t>
    static value_t fetch_and(value_t &object, value_t value, std::memory_order order) noexcept {
        return std::atomic_ref<value_t>(object).fetch_and(value, order);
    }
    template <typename value_t>
    static value_t fetch_or(value_t &object, value_t value, std::memory_order order) noexcept {
        return std::atomic_ref<value_t>(object).fetch_or(value, order);
    }
    template <typename value_t>
    static value_t fetch_xor(value_t &object, value_t value, std::memory_order order) noexcept {
        return std::atomic_ref<value_t>(object).fetch_xor(value, order);
    }

    /**  The compare-exchange loop of the conditional verbs: writes `next(old)` while `keep_going(old)`. */
    template <typename value_t, typename condition_t, typename next_t>
    static value_t update_while(value_t &object, std::memory_order order, condition_t keep_going,
                                next_t next) noexcept {
        std::atomic_ref<value_t> ref(object);
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
        std::atomic_ref<value_t>(object).fetch_add(value, order);
    }
    template <typename value_t>
    static void sub(value_t &object, value_t value, std::memory_order order) noexcept {
        std::atomic_ref<value_t>(object).fetch_sub(value, order);
    }
    template <typename value_t>
    static void set_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        std::atomic_ref<value_t>(object).fetch_or(bits, order);
    }
    template <typename value_t>
    static void clear_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        std::atomic_ref<value_t>(object).fetch_and(static_cast<value_t>(~bits), order);
    }
    template <typename value_t>
    static void flip_bits(value_t &object, value_t bits, std::memory_order order) noexcept {
        std::atomic_ref<value_t>(object).fetch_xor(bits, order);
    }
};

} // namespace forkunion::detail
