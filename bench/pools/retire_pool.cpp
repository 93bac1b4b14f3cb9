/**
 *  @file   retire_pool.cpp
 *  @brief  One retirement variant of the flat pool, timed: `retire.cpp` runs every variant side by side.
 *
 *  Built once per variant (see `retire_variants.hpp`), with `FORKUNION_BENCH_VARIANT` naming it. The pool is `flat_pool_t`'s shape (`std::size_t` indices, the target's micro-wait, default
 *  padding) with the spin idle policy set, so that no dispatch pays a wake-up and the rows differ only in the
 *  fan-in.
 */
#include <atomic>  // `std::atomic`
#include <chrono>  // `std::chrono::steady_clock`
#include <cstddef> // `std::size_t`
#include <memory>  // `std::allocator`
#include <thread>  // `std::thread`
#include <vector>  // `std::vector`

#include <forkunion/pools/flat.hpp>

#include "retire_variants.hpp"

namespace fu = forkunion;

namespace forkunion::bench::FORKUNION_BENCH_VARIANT {
namespace {

using pool_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::size_t,
                                fu::default_alignment_k, std::atomic, retirement_t>;

/**
 *  Dispatches per timed batch: two clock reads (~50 ns) per 64 dispatches cost <0.5% of the fastest row, and a
 *  batch stays short (~10-100 µs) so a preemption spoils one sample, not the median.
 */
constexpr std::size_t batch_k = 64;

/**
 *  Batches a window takes at least, unless it already ran ten times its length: on a busy machine a preempted
 *  worker stretches one batch to a scheduler slice per dispatch (~10 ms here at load 50 on 2 cores), and a window of
 *  one or two such batches would make its median that batch.
 */
constexpr std::size_t min_batches_k = 16;

std::vector<double> time_for_n(std::size_t threads, std::chrono::nanoseconds warmup, std::chrono::nanoseconds window) {
    using steady_t = std::chrono::steady_clock;
    std::vector<double> samples;
    pool_t pool;
    if (!pool.set_idle_policy(fu::idle_policy_t::spin()) || !pool.spawn(threads, fu::caller_inclusive_k))
        return samples;
    bool refused = false;
    auto const dispatch = [&] {
        if (!pool.for_n(threads, [](std::size_t) noexcept {}).join()) refused = true;
    };
    for (auto const start = steady_t::now(); steady_t::now() - start < warmup;)
        for (std::size_t i = 0; i != batch_k; ++i) dispatch();
    auto const start = steady_t::now();
    for (auto batch_start = start;
         batch_start - start < window || (samples.size() < min_batches_k && batch_start - start < 10 * window);) {
        for (std::size_t i = 0; i != batch_k; ++i) dispatch();
        auto const batch_end = steady_t::now();
        samples.push_back(std::chrono::duration<double, std::nano>(batch_end - batch_start).count() / batch_k);
        batch_start = batch_end;
    }
    if (refused) samples.clear(); // nobody else dispatches here: a refusal is a bug, and the timing is void
    return samples;
}

} // namespace

retire_variant_t const retire_variant{pool_t::retire_fan_in_k, &time_for_n};

} // namespace forkunion::bench::FORKUNION_BENCH_VARIANT
