/**
 *  @file   handoff_model.cpp
 *  @brief  One retirement variant of the flat pool under the line hand-off model: spawns a model pool, runs it
 *          under the baton, and counts what each dispatch moves. `handoff.cpp` compares the counts.
 *
 *  Built once per variant, with `FORKUNION_BENCH_VARIANT` naming it (`tree`, `last_child_first`,
 *  `flat_fan_in`; its pool takes that namespace's `retirement_t`) and `FORKUNION_TEST_HOOKS=1`: each contributor's chain
 *  restarts at the pool's `before_retire_k` point, so the critical path measured is the fan-in's alone.
 *
 *  The pool under the model: `handoff_atomic_t` for every protocol word, the baton as its micro-wait,
 *  `std::uint8_t` indices (T = 255 fits) and the spin idle policy (nobody parks in the kernel, where the baton
 *  cannot follow). A fresh pool per call runs `warmup_dispatches_k` dispatches of each loop, so every line
 *  reaches its steady state, then counts two consecutive `for_n(T)` and two `for_threads` dispatches of a body
 *  that touches no shared memory, and one `for_n(T)` whose body increments a shared word (a control: the model
 *  must see T more transfers there, one per contributor).
 */
#include <cstdint> // `std::uint8_t`
#include <memory>  // `std::allocator`
#include <thread>  // `std::thread`

#include <forkunion/pools/flat.hpp>

#include "handoff_atomic.hpp"
#include "retire_variants.hpp"

#if !FORKUNION_TEST_HOOKS
#error "the hand-off model restarts each contributor's chain at the pool's before_retire hook: FORKUNION_TEST_HOOKS=1"
#endif

namespace fu = forkunion;

namespace forkunion::bench::FORKUNION_BENCH_VARIANT {
namespace {

/**
 *  Dispatches of each loop before counting. The first one still pulls lines the spawn left behind; after one, each
 *  line a dispatch touches was last written, and read, by the same threads as in the next dispatch, which the
 *  equality of two consecutive counted dispatches then checks.
 */
constexpr std::size_t warmup_dispatches_k = 1;

template <std::size_t alignment_>
using model_pool_t = fu::basic_pool_t<std::allocator<std::thread>, baton_yield_t, std::uint8_t, alignment_,
                                      handoff_atomic_t, retirement_t>;

/**  The task body: touches no shared memory, so every counted transfer is the pool's own. */
struct quiet_body_t {
    void operator()(std::uint8_t) const noexcept {}
};

/**  The control's body: every task increments one shared word, a line every contributor must pull once. */
struct counting_body_t {
    handoff_atomic_t<std::size_t> *counter;
    void operator()(std::uint8_t) const noexcept { counter->fetch_add(1, std::memory_order_relaxed); }
};

/**  Whether a job travels in the dispatch line (covered by the generation's transfer) rather than by pointer. */
template <typename pool_type_, typename job_type_>
constexpr bool
    travels_inline_k = std::is_trivially_copyable_v<job_type_> &&std::is_trivially_destructible_v<job_type_> &&
                       sizeof(job_type_) <= pool_type_::payload_capacity_k && alignof(job_type_) <= 16;

/**  Every contributor's chain starts when its slice ends: the critical path is the fan-in's alone. */
void restart_chain_at_retire(forkunion::hook_point_t point, void const *) {
    if (point == forkunion::hook_point_t::before_retire_k) handoff_model_t::instance().restart_chain();
}

template <std::size_t alignment_>
handoff_counts_t count(std::size_t threads, bool exclusive) {
    using pool_t = model_pool_t<alignment_>;
    // Forks that travel by pointer would make workers read the dispatcher's stack: a line the model does not see.
    static_assert(travels_inline_k<pool_t, forkunion::detail::n_job_t<pool_t, quiet_body_t>> &&
                      travels_inline_k<pool_t, forkunion::detail::threads_job_t<pool_t, quiet_body_t>> &&
                      travels_inline_k<pool_t, forkunion::detail::n_job_t<pool_t, counting_body_t>>,
                  "the forks must travel in the dispatch line");
    forkunion::detail::test_hook_k.store(&restart_chain_at_retire, std::memory_order_release);
    handoff_model_t &model = handoff_model_t::instance();
    baton_t &baton = baton_t::instance();
    model.reset(alignment_);
    // Inclusive: the caller is contributor 0; exclusive: workers 0 .. T - 1, then the caller.
    baton.arm(exclusive ? threads + 1 : threads, exclusive ? threads : 0);

    handoff_counts_t counts;
    struct alignas(alignment_) padded_counter_t {
        handoff_atomic_t<std::size_t> value{0};
    } counter;
    pool_t pool;
    std::uint8_t const size = static_cast<std::uint8_t>(threads);
    counts.spawned = pool.set_idle_policy(fu::idle_policy_t::spin()) &&
                     pool.spawn(size, exclusive ? fu::caller_exclusive_k : fu::caller_inclusive_k);
    if (!counts.spawned) return counts;
    baton.wait_for_ring();

    auto const measure = [&](auto &&dispatch) {
        model.begin_dispatch();
        if (!dispatch().join()) counts.accepted = false;
        return model.end_dispatch();
    };
    auto const for_n = [&] { return pool.for_n(size, quiet_body_t{}); };
    auto const for_threads = [&] { return pool.for_threads(quiet_body_t{}); };
    auto const for_n_counting = [&] { return pool.for_n(size, counting_body_t{&counter.value}); };
    for (std::size_t round = 0; round != warmup_dispatches_k; ++round)
        (void)measure(for_n), (void)measure(for_threads), (void)measure(for_n_counting);
    counts.for_n = measure(for_n);
    counts.steady = measure(for_n) == counts.for_n;
    counts.for_threads = measure(for_threads);
    counts.steady = counts.steady && measure(for_threads) == counts.for_threads;
    counts.for_n_shared_counter = measure(for_n_counting);
    counts.steady = counts.steady && measure(for_n_counting) == counts.for_n_shared_counter;

    baton.release(); // `terminate` joins the workers: they must run freely to see `stop`
    pool.terminate();
    return counts;
}

handoff_counts_t count_handoffs(padding_t padding, std::size_t threads, bool exclusive) {
    return padding == padding_t::default_k ? count<default_alignment_k>(threads, exclusive)
                                           : count<64>(threads, exclusive);
}

} // namespace

handoff_variant_t const handoff_variant{model_pool_t<default_alignment_k>::retire_fan_in_k, &count_handoffs};

} // namespace forkunion::bench::FORKUNION_BENCH_VARIANT
