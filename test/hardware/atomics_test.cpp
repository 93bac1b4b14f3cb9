/**
 *  @file   atomics_test.cpp
 *  @brief  Tests of `include/forkunion/atomics*.hpp`: every verb's return value and result against a model, at
 *          every width and signedness, every memory order, at the exact bounds; and exact totals under contention.
 *
 *  Each property runs twice per type: through `atomic_ref_t` (the run-time selection: the ISA backend where the CPU
 *  has it, e.g. LSE under `qemu-aarch64 -cpu max`, else the fallback) and through the portable backend forced.
 *  Values: every value for 1-byte types (all pairs at `seq_cst`), and the boundary values of wider types (min,
 *  min + 1, -1, 0, 1, the sign and byte edges, max - 1, max) in every order. No assertion runs on a helper thread.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <forkunion/hardware/atomics.hpp>

#include "test_support.hpp" // `FORKUNION_SKIP_UNLESS_THREADS`

namespace fu = forkunion;

namespace {

template <typename value_type_, typename backend_type_>
struct case_t {
    using value_t = value_type_;
    using backend_t = backend_type_;
    using ref_t = fu::basic_atomic_ref_t<value_t, backend_t>;
};

template <typename backend_t>
using cases_for = ::testing::Types<case_t<std::int8_t, backend_t>, case_t<std::uint8_t, backend_t>,
                                   case_t<std::int16_t, backend_t>, case_t<std::uint16_t, backend_t>,
                                   case_t<std::int32_t, backend_t>, case_t<std::uint32_t, backend_t>,
                                   case_t<std::int64_t, backend_t>, case_t<std::uint64_t, backend_t>>;

struct case_names {
    template <typename case_type_>
    static std::string GetName(int) {
        using value_t = typename case_type_::value_t;
        return std::string(std::is_signed_v<value_t> ? "i" : "u") + std::to_string(8 * sizeof(value_t));
    }
};

constexpr std::memory_order orders_k[] = {std::memory_order_relaxed, std::memory_order_acquire,
                                          std::memory_order_release, std::memory_order_acq_rel,
                                          std::memory_order_seq_cst};

/**  Every value of a 1-byte type; the edges of wider ones. */
template <typename value_t>
std::vector<value_t> boundary_values() {
    using limits = std::numeric_limits<value_t>;
    std::vector<value_t> values;
    if constexpr (sizeof(value_t) == 1) {
        for (int i = limits::min(); i <= limits::max(); ++i) values.push_back(static_cast<value_t>(i));
    } else {
        using unsigned_t = std::make_unsigned_t<value_t>;
        for (unsigned_t raw :
             {unsigned_t(0), unsigned_t(1), unsigned_t(2), unsigned_t(0x7F), unsigned_t(0x80), unsigned_t(0xFF),
              unsigned_t(0x100), unsigned_t(limits::max()), unsigned_t(unsigned_t(limits::max()) - 1u),
              unsigned_t(unsigned_t(limits::max()) + 1u), unsigned_t(unsigned_t(limits::max()) + 2u), unsigned_t(-1),
              unsigned_t(-2), unsigned_t(unsigned_t(-1) / 3u)})
            values.push_back(static_cast<value_t>(raw));
        std::sort(values.begin(), values.end());
        values.erase(std::unique(values.begin(), values.end()), values.end());
    }
    return values;
}

/**  A few of `boundary_values` for the quadratic and cubic sweeps of 1-byte types, in every order. */
template <typename value_t>
std::vector<value_t> edge_values() {
    std::vector<value_t> const all = boundary_values<value_t>();
    if constexpr (sizeof(value_t) > 1) return all;
    using limits = std::numeric_limits<value_t>;
    std::vector<value_t> edges;
    for (int i : {int(limits::min()), int(limits::min()) + 1, -2, -1, 0, 1, 2, 0x3F, 0x7E, 0x7F, 0x80, 0xFE, 0xFF})
        if (i >= int(limits::min()) && i <= int(limits::max())) edges.push_back(static_cast<value_t>(i));
    return edges;
}

/**  Counts mismatches and keeps the first few, so a sweep of millions reports readably. */
class mismatches_t {
public:
    template <typename value_t>
    void check(char const *verb, value_t old, value_t operand, std::memory_order order, value_t got_return,
               value_t want_return, value_t got_object, value_t want_object) {
        if (got_return == want_return && got_object == want_object) return;
        if (++count_ > 8) return;
        text_ << verb << "(old " << +old << ", operand " << +operand << ", order " << int(order) << "): returned "
              << +got_return << " (want " << +want_return << "), left " << +got_object << " (want " << +want_object
              << ")\n";
    }
    std::size_t count() const noexcept { return count_; }
    std::string text() const { return text_.str(); }

private:
    std::size_t count_ = 0;
    std::ostringstream text_;
};

template <typename value_t>
value_t wrap_add(value_t a, value_t b) {
    return fu::detail::wrapping_add(a, b);
}
template <typename value_t>
value_t wrap_sub(value_t a, value_t b) {
    return fu::detail::wrapping_sub(a, b);
}

/**  Threads of the contention properties: several, more than the cores, so preemption interleaves them too. */
constexpr std::size_t contenders_k = 4;
/**  Operations per thread and property: ~10^4, as many as a 2-core emulated run finishes in seconds. */
constexpr std::size_t operations_k = 10'000;

template <typename body_t>
void run_contenders(body_t body) {
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t != contenders_k; ++t)
        threads.emplace_back([&, t] {
            // Acquire pairs with the release below: all threads start together, so their operations overlap.
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            body(t);
        });
    go.store(true, std::memory_order_release);
    for (auto &thread : threads) thread.join();
}

} // namespace

// Where the target has no ISA backend (s390x, 32-bit x86, ThreadSanitizer builds), the selected backend is the
// portable one, and the forced-portable suite would repeat it: it is compiled only where they differ.
#if FORKUNION_SANITIZE_THREAD || !((FORKUNION_ARCH_X86_64 && (FORKUNION_WITH_CMPCCXADD || FORKUNION_WITH_RAOINT)) ||   \
                                   (FORKUNION_ARCH_ARM64 && FORKUNION_WITH_LSE) ||                                     \
                                   (FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE))
#define FORKUNION_TEST_SELECTED_IS_PORTABLE 1
#else
#define FORKUNION_TEST_SELECTED_IS_PORTABLE 0
#endif
static_assert(bool(FORKUNION_TEST_SELECTED_IS_PORTABLE) == std::is_same_v<fu::native_atomics_t, fu::portable_atomics_t>,
              "keep the condition above in step with the selector in atomics.hpp");

template <typename case_type_>
class atomics_selected : public ::testing::Test {};
TYPED_TEST_SUITE(atomics_selected, cases_for<fu::native_atomics_t>, case_names);
#if !FORKUNION_TEST_SELECTED_IS_PORTABLE
template <typename case_type_>
class atomics_portable : public ::testing::Test {};
TYPED_TEST_SUITE(atomics_portable, cases_for<fu::portable_atomics_t>, case_names);
#endif

// The properties, written once and instantiated for both suites.

template <typename case_type_>
void check_unconditional_verbs() {
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    mismatches_t mismatches;
    auto sweep = [&](std::vector<value_t> const &olds, std::vector<value_t> const &operands, std::memory_order order) {
        for (value_t old : olds)
            for (value_t operand : operands) {
                alignas(8) value_t object = old;
                ref_t ref(object);
                auto verb = [&](char const *name, value_t got, value_t want_return, value_t want_object) {
                    mismatches.check(name, old, operand, order, got, want_return, object, want_object);
                    object = old;
                };
                verb("exchange", ref.exchange(operand, order), old, operand);
                verb("fetch_add", ref.fetch_add(operand, order), old, wrap_add(old, operand));
                verb("fetch_sub", ref.fetch_sub(operand, order), old, wrap_sub(old, operand));
                verb("fetch_and", ref.fetch_and(operand, order), old, value_t(old & operand));
                verb("fetch_or", ref.fetch_or(operand, order), old, value_t(old | operand));
                verb("fetch_xor", ref.fetch_xor(operand, order), old, value_t(old ^ operand));
                verb("fetch_max", ref.fetch_max(operand, order), old, std::max(old, operand));
                verb("fetch_min", ref.fetch_min(operand, order), old, std::min(old, operand));
                ref.add(operand, order), verb("add", old, old, wrap_add(old, operand));
                ref.sub(operand, order), verb("sub", old, old, wrap_sub(old, operand));
                ref.set_bits(operand, order), verb("set_bits", old, old, value_t(old | operand));
                ref.clear_bits(operand, order), verb("clear_bits", old, old, value_t(old & ~operand));
                ref.flip_bits(operand, order), verb("flip_bits", old, old, value_t(old ^ operand));
                verb("load",
                     ref.load(order == std::memory_order_release || order == std::memory_order_acq_rel
                                  ? std::memory_order_acquire
                                  : order),
                     old, old);
            }
    };
    for (std::memory_order order : orders_k) sweep(edge_values<value_t>(), edge_values<value_t>(), order);
    sweep(boundary_values<value_t>(), boundary_values<value_t>(), std::memory_order_seq_cst);
    EXPECT_EQ(mismatches.count(), 0u) << mismatches.text();
}

template <typename case_type_>
void check_compare_exchange() {
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    mismatches_t mismatches;
    struct pair_t {
        std::memory_order success, failure;
    };
    pair_t const pairs[] = {
        {std::memory_order_relaxed, std::memory_order_relaxed}, {std::memory_order_acquire, std::memory_order_acquire},
        {std::memory_order_release, std::memory_order_relaxed}, {std::memory_order_acq_rel, std::memory_order_acquire},
        {std::memory_order_seq_cst, std::memory_order_seq_cst}, {std::memory_order_seq_cst, std::memory_order_relaxed}};
    for (pair_t const pair : pairs)
        for (value_t old : edge_values<value_t>())
            for (value_t other : edge_values<value_t>()) {
                value_t const desired = wrap_add(other, value_t(1));
                alignas(8) value_t object = old;
                ref_t ref(object);
                // A matching expected swaps, and leaves `expected` alone.
                value_t expected = old;
                bool const swapped = ref.compare_exchange_strong(expected, desired, pair.success, pair.failure);
                mismatches.check("cas_strong(match)", old, desired, pair.success, value_t(swapped), value_t(1), object,
                                 desired);
                mismatches.check("cas_strong(match).expected", old, desired, pair.success, expected, old, object,
                                 desired);
                // A stale expected fails, reports the current value and writes nothing.
                object = old;
                expected = wrap_add(old, value_t(1));
                bool const failed = !ref.compare_exchange_strong(expected, desired, pair.success, pair.failure);
                mismatches.check("cas_strong(stale)", old, desired, pair.success, value_t(failed), value_t(1), object,
                                 old);
                mismatches.check("cas_strong(stale).expected", old, desired, pair.success, expected, old, object, old);
                // The weak form may fail spuriously, but then reports the current value, so a retry loop ends.
                object = old;
                expected = old;
                std::size_t attempts = 0;
                while (!ref.compare_exchange_weak(expected, desired, pair.success, pair.failure) && ++attempts < 1000)
                    mismatches.check("cas_weak(retry).expected", old, desired, pair.success, expected, old, object,
                                     old);
                mismatches.check("cas_weak", old, desired, pair.success, value_t(attempts < 1000), value_t(1), object,
                                 desired);
            }
    // The one-order overloads derive the failure order from the success order.
    for (std::memory_order order : orders_k) {
        alignas(8) value_t object = 5;
        ref_t ref(object);
        value_t expected = 5;
        EXPECT_TRUE(ref.compare_exchange_strong(expected, value_t(6), order));
        expected = 5;
        EXPECT_FALSE(ref.compare_exchange_strong(expected, value_t(7), order));
        EXPECT_EQ(expected, value_t(6));
        while (!ref.compare_exchange_weak(expected, value_t(8), order)) {}
        EXPECT_EQ(object, value_t(8));
    }
    EXPECT_EQ(mismatches.count(), 0u) << mismatches.text();
}

template <typename case_type_>
void check_conditional_verbs() {
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    using limits = std::numeric_limits<value_t>;
    mismatches_t mismatches;
    std::vector<value_t> deltas{value_t(0), value_t(1), value_t(2), limits::max(), limits::min(), value_t(-1)};
    auto sweep = [&](std::vector<value_t> const &olds, std::vector<value_t> const &bounds, std::memory_order order) {
        for (value_t old : olds)
            for (value_t bound : bounds)
                for (value_t delta : deltas) {
                    alignas(8) value_t object = old;
                    ref_t ref(object);
                    // The bound is inclusive: `old == bound` adds, `old == bound + 1` does not.
                    value_t const added = old <= bound ? wrap_add(old, delta) : old;
                    value_t returned = ref.fetch_add_if_at_most(delta, bound, order);
                    mismatches.check("fetch_add_if_at_most", old, bound, order, returned, old, object, added);
                    object = old;
                    value_t const subtracted = old >= bound ? wrap_sub(old, delta) : old;
                    returned = ref.fetch_sub_if_at_least(delta, bound, order);
                    mismatches.check("fetch_sub_if_at_least", old, bound, order, returned, old, object, subtracted);
                }
    };
    for (std::memory_order order : orders_k) sweep(edge_values<value_t>(), edge_values<value_t>(), order);
    sweep(boundary_values<value_t>(), boundary_values<value_t>(), std::memory_order_seq_cst);
    EXPECT_EQ(mismatches.count(), 0u) << mismatches.text();
}

template <typename case_type_>
void check_contended_sums() {
    FORKUNION_SKIP_UNLESS_THREADS(contenders_k);
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    alignas(64) value_t object = value_t(3);
    run_contenders([&](std::size_t thread) {
        ref_t ref(object);
        for (std::size_t i = 0; i != operations_k; ++i) {
            std::memory_order const order = orders_k[(i + thread) % 5];
            ref.fetch_add(value_t(5), order);
            ref.add(value_t(3), order);
            ref.sub(value_t(2), order);
            ref.fetch_sub(value_t(1), order);
        }
    });
    // Each iteration adds 5 + 3 - 2 - 1 = 5, modulo 2^bits.
    value_t total = value_t(3);
    for (std::size_t i = 0; i != contenders_k * operations_k; ++i) total = wrap_add(total, value_t(5));
    EXPECT_EQ(object, total);
}

template <typename case_type_>
void check_contended_exchanges() {
    FORKUNION_SKIP_UNLESS_THREADS(contenders_k);
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    // Exchange conserves values: each one put in is taken out by exactly one exchange or stays at the end, so
    // (sum taken out) + (final value) = (initial value) + (sum put in), modulo 2^bits.
    alignas(64) value_t object = value_t(11);
    std::vector<value_t> taken(contenders_k, value_t(0)), given(contenders_k, value_t(0));
    run_contenders([&](std::size_t thread) {
        ref_t ref(object);
        for (std::size_t i = 0; i != operations_k; ++i) {
            value_t const mine = static_cast<value_t>(thread * operations_k + i + 1);
            taken[thread] = wrap_add(taken[thread], ref.exchange(mine, orders_k[(i + thread) % 5]));
            given[thread] = wrap_add(given[thread], mine);
        }
    });
    value_t out = object, in = value_t(11);
    for (std::size_t thread = 0; thread != contenders_k; ++thread)
        out = wrap_add(out, taken[thread]), in = wrap_add(in, given[thread]);
    EXPECT_EQ(out, in);
}

template <typename case_type_>
void check_contended_bounded_counters() {
    FORKUNION_SKIP_UNLESS_THREADS(contenders_k);
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    using limits = std::numeric_limits<value_t>;
    // From `low`, increments are capped at `low + capacity`: exactly `capacity` of the attempts succeed. Then as
    // many decrements down to `low` succeed. The capacity is half the attempts, within the type's range.
    value_t const low = std::is_signed_v<value_t> ? limits::min() : value_t(0);
    std::uint64_t const capacity = std::min<std::uint64_t>(
        contenders_k * operations_k / 2, std::uint64_t(std::numeric_limits<std::make_unsigned_t<value_t>>::max()));
    value_t const high = static_cast<value_t>(static_cast<std::uint64_t>(low) + capacity);
    alignas(64) value_t object = low;
    std::vector<std::uint64_t> increments(contenders_k), decrements(contenders_k);
    run_contenders([&](std::size_t thread) {
        ref_t ref(object);
        for (std::size_t i = 0; i != operations_k; ++i)
            increments[thread] +=
                ref.fetch_add_if_at_most(value_t(1), wrap_sub(high, value_t(1)), orders_k[(i + thread) % 5]) < high;
    });
    std::uint64_t total = 0;
    for (auto count : increments) total += count;
    EXPECT_EQ(total, capacity);
    EXPECT_EQ(object, high);
    run_contenders([&](std::size_t thread) {
        ref_t ref(object);
        for (std::size_t i = 0; i != operations_k; ++i)
            decrements[thread] +=
                ref.fetch_sub_if_at_least(value_t(1), wrap_add(low, value_t(1)), orders_k[(i + thread) % 5]) > low;
    });
    total = 0;
    for (auto count : decrements) total += count;
    EXPECT_EQ(total, capacity);
    EXPECT_EQ(object, low);
}

template <typename case_type_>
void check_contended_max_min() {
    FORKUNION_SKIP_UNLESS_THREADS(contenders_k);
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    using limits = std::numeric_limits<value_t>;
    alignas(64) value_t maximum = limits::min(), minimum = limits::max();
    std::vector<std::size_t> regressions(contenders_k, 0);
    // Thread t offers the values t, t + T, t + 2T, ... mapped onto the type's range from the bottom (for max) and
    // from the top (for min); the results must be the extremes offered, and each thread must see the maximum
    // never go down (and the minimum never go up) across its own calls.
    auto offered = [](std::size_t thread, std::size_t i) {
        std::uint64_t const span = std::uint64_t(std::numeric_limits<std::make_unsigned_t<value_t>>::max());
        return std::uint64_t(thread + i * contenders_k) % (span + 1 == 0 ? ~std::uint64_t(0) : span + 1);
    };
    run_contenders([&](std::size_t thread) {
        ref_t max_ref(maximum), min_ref(minimum);
        value_t last_max = limits::min(), last_min = limits::max();
        for (std::size_t i = 0; i != operations_k; ++i) {
            std::memory_order const order = orders_k[(i + thread) % 5];
            value_t const up = static_cast<value_t>(static_cast<std::uint64_t>(limits::min()) + offered(thread, i));
            value_t const down = static_cast<value_t>(static_cast<std::uint64_t>(limits::max()) - offered(thread, i));
            value_t const seen_max = max_ref.fetch_max(up, order), seen_min = min_ref.fetch_min(down, order);
            regressions[thread] += seen_max < last_max || seen_min > last_min;
            last_max = std::max(seen_max, up), last_min = std::min(seen_min, down);
        }
    });
    std::uint64_t largest = 0;
    for (std::size_t thread = 0; thread != contenders_k; ++thread)
        for (std::size_t i = 0; i != operations_k; ++i) largest = std::max(largest, offered(thread, i));
    EXPECT_EQ(maximum, static_cast<value_t>(static_cast<std::uint64_t>(limits::min()) + largest));
    EXPECT_EQ(minimum, static_cast<value_t>(static_cast<std::uint64_t>(limits::max()) - largest));
    for (std::size_t count : regressions) EXPECT_EQ(count, 0u) << "a thread saw the extreme move backwards";
}

template <typename case_type_>
void check_contended_bits() {
    FORKUNION_SKIP_UNLESS_THREADS(contenders_k);
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    static_assert(contenders_k <= 4, "each thread owns one of the low bits and the top bit is a witness");
    // Thread t owns bit t; the top bit is set throughout and must survive every other thread's operations.
    using unsigned_t = std::make_unsigned_t<value_t>;
    value_t const witness = static_cast<value_t>(unsigned_t(unsigned_t(1) << (8 * sizeof(value_t) - 1)));
    alignas(64) value_t object = witness;
    std::vector<std::size_t> wrong(contenders_k, 0);
    run_contenders([&](std::size_t thread) {
        ref_t ref(object);
        value_t const mine = static_cast<value_t>(unsigned_t(1) << thread);
        for (std::size_t i = 0; i != operations_k; ++i) {
            std::memory_order const order = orders_k[(i + thread) % 5];
            ref.set_bits(mine, order);
            wrong[thread] += !(ref.fetch_xor(mine, order) & mine);           // was set; now clear
            ref.flip_bits(mine, order);                                      // set again
            wrong[thread] += !(ref.fetch_and(value_t(~mine), order) & mine); // was set; now clear
            ref.set_bits(mine, order);
            ref.clear_bits(mine, order);
            wrong[thread] += bool(ref.fetch_or(value_t(0), order) & mine) || !(ref.load() & witness);
        }
    });
    for (std::size_t count : wrong) EXPECT_EQ(count, 0u);
    EXPECT_EQ(object, witness);
}

template <typename case_type_>
void check_contended_compare_exchange() {
    FORKUNION_SKIP_UNLESS_THREADS(contenders_k);
    using value_t = typename case_type_::value_t;
    using ref_t = typename case_type_::ref_t;
    alignas(64) value_t object = value_t(7);
    run_contenders([&](std::size_t thread) {
        ref_t ref(object);
        for (std::size_t i = 0; i != operations_k; ++i) {
            std::memory_order const order = orders_k[(i + thread) % 5];
            value_t expected = ref.load(std::memory_order_relaxed);
            while (!ref.compare_exchange_weak(expected, wrap_add(expected, value_t(1)), order)) {}
            expected = ref.load(std::memory_order_relaxed);
            while (!ref.compare_exchange_strong(expected, wrap_add(expected, value_t(2)), order)) {}
        }
    });
    value_t total = value_t(7);
    for (std::size_t i = 0; i != contenders_k * operations_k; ++i) total = wrap_add(total, value_t(3));
    EXPECT_EQ(object, total);
}

#define FORKUNION_ATOMICS_PROPERTY_(suite, name)                                                                       \
    TYPED_TEST(suite, name) {                                                                                          \
        check_##name<TypeParam>();                                                                                     \
    }

FORKUNION_ATOMICS_PROPERTY_(atomics_selected, unconditional_verbs)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, compare_exchange)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, conditional_verbs)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, contended_sums)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, contended_exchanges)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, contended_bounded_counters)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, contended_max_min)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, contended_bits)
FORKUNION_ATOMICS_PROPERTY_(atomics_selected, contended_compare_exchange)
#if !FORKUNION_TEST_SELECTED_IS_PORTABLE
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, unconditional_verbs)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, compare_exchange)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, conditional_verbs)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, contended_sums)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, contended_exchanges)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, contended_bounded_counters)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, contended_max_min)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, contended_bits)
FORKUNION_ATOMICS_PROPERTY_(atomics_portable, contended_compare_exchange)
#endif

/**  Which paths the selection takes here: where an ISA backend is compiled in, its verbs run natively exactly
 *   when the capabilities it needs are usable, and the portable backend never claims to be native. */
TEST(atomics, selection_follows_the_capabilities) {
    using selected = fu::atomic_ref_t<std::uint32_t>;
    using forced = fu::basic_atomic_ref_t<std::uint32_t, fu::portable_atomics_t>;
    EXPECT_FALSE(forced::uses_native(fu::atomic_verb_t::fetch_max_k));
    bool const native_max = selected::uses_native(fu::atomic_verb_t::fetch_max_k);
    if (fu::arch_arm64_k && fu::with_lse_k && !fu::sanitize_thread_k)
        EXPECT_EQ(native_max, fu::capabilities_usable(fu::capability_arm64_lse_k));
    else if (fu::arch_riscv_k && !fu::portable_k && !fu::sanitize_thread_k)
        EXPECT_EQ(native_max, fu::capabilities_usable(fu::capability_riscv_amo_k));
    else
        EXPECT_FALSE(native_max) << "no other backend has a max instruction";
    bool const native_bounded = selected::uses_native(fu::atomic_verb_t::fetch_add_if_at_most_k);
    if (fu::arch_x86_k && fu::with_cmpccxadd_k && !fu::sanitize_thread_k)
        EXPECT_EQ(native_bounded, fu::capabilities_usable(fu::capability_x86_cmpccxadd_k));
    else
        EXPECT_FALSE(native_bounded) << "only CMPccXADD adds conditionally in one instruction";
    // RAO-INT is relaxed-only: a stronger order never selects it.
    EXPECT_EQ(selected::uses_native(fu::atomic_verb_t::add_k, std::memory_order_seq_cst),
              (fu::arch_arm64_k && fu::with_lse_k && !fu::sanitize_thread_k &&
               fu::capabilities_usable(fu::capability_arm64_lse_k)) ||
                  (fu::arch_riscv_k && !fu::portable_k && !fu::sanitize_thread_k));
}
