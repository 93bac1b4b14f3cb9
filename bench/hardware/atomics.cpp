/**
 *  @file   atomics.cpp
 *  @brief  What the run-time selection of `atomic_ref_t` costs: the same verb called directly, through the
 *          inlined capability branch `atomic_ref_t` uses, and through a function pointer resolved once.
 *
 *  One thread, one uncontended word: the cost of the instruction itself plus the dispatch around it. On a CPU
 *  without the optional instruction (WAITPKG-less, CMPccXADD-less x86 here) every variant ends in the same
 *  fallback, so the differences are the dispatch alone:
 *  - `direct`: `std::atomic_ref` (`lock add`) or the portable loop, no selection at all;
 *  - `selected`: `atomic_ref_t`, which loads the cached capability word and branches (what the library ships);
 *  - `pointer`: an indirect call through a pointer chosen once at start-up (the alternative design).
 *  `fetch_max` on x86 has no instruction to select, so its `selected` variant shows the check folding away.
 */
#include <atomic>
#include <cstdint>

#include <benchmark/benchmark.h>

#include <forkunion/hardware/atomics.hpp>

#include "usage.h"

namespace fu = forkunion;

namespace {

alignas(64) std::uint64_t word = 0;

using selected_t = fu::atomic_ref_t<std::uint64_t>;
using portable_t = fu::basic_atomic_ref_t<std::uint64_t, fu::portable_atomics_t>;

// The pointer-based design: a function chosen once by capability, called indirectly on every operation.
using add_t = void (*)(std::uint64_t &, std::uint64_t) noexcept;
using bounded_t = std::uint64_t (*)(std::uint64_t &, std::uint64_t, std::uint64_t) noexcept;

void add_portable(std::uint64_t &object, std::uint64_t value) noexcept {
    fu::portable_atomics_t::add(object, value, std::memory_order_relaxed);
}
std::uint64_t bounded_portable(std::uint64_t &object, std::uint64_t delta, std::uint64_t bound) noexcept {
    return fu::portable_atomics_t::fetch_add_if_at_most(object, delta, bound, std::memory_order_seq_cst);
}
#if FORKUNION_ARCH_X86_64 && FORKUNION_WITH_RAOINT && !FORKUNION_SANITIZE_THREAD
void add_native(std::uint64_t &object, std::uint64_t value) noexcept {
    fu::detail::x86_atomics_t::add(object, value, std::memory_order_relaxed);
}
add_t const add_choice = fu::capabilities_usable(fu::capability_x86_raoint_k) ? add_native : add_portable;
#else
add_t const add_choice = add_portable;
#endif
#if FORKUNION_ARCH_X86_64 && FORKUNION_WITH_CMPCCXADD && !FORKUNION_SANITIZE_THREAD
std::uint64_t bounded_native(std::uint64_t &object, std::uint64_t delta, std::uint64_t bound) noexcept {
    return fu::detail::x86_atomics_t::fetch_add_if_at_most(object, delta, bound, std::memory_order_seq_cst);
}
bounded_t const bounded_choice =
    fu::capabilities_usable(fu::capability_x86_cmpccxadd_k) ? bounded_native : bounded_portable;
#else
bounded_t const bounded_choice = bounded_portable;
#endif

// Read through a volatile, so the compiler cannot see through the pointer and inline the target.
add_t volatile add_pointer = add_choice;
bounded_t volatile bounded_pointer = bounded_choice;

void add_direct(benchmark::State &state) {
    for (auto _ : state) std::atomic_ref<std::uint64_t>(word).fetch_add(1, std::memory_order_relaxed);
    benchmark::DoNotOptimize(word);
}
void add_selected(benchmark::State &state) {
    for (auto _ : state) selected_t(word).add(1, std::memory_order_relaxed);
    benchmark::DoNotOptimize(word);
}
void add_through_pointer(benchmark::State &state) {
    add_t const call = add_pointer;
    for (auto _ : state) call(word, 1);
    benchmark::DoNotOptimize(word);
}

void bounded_direct(benchmark::State &state) {
    for (auto _ : state) benchmark::DoNotOptimize(portable_t(word).fetch_add_if_at_most(1, ~std::uint64_t(0) - 1));
}
void bounded_selected(benchmark::State &state) {
    for (auto _ : state) benchmark::DoNotOptimize(selected_t(word).fetch_add_if_at_most(1, ~std::uint64_t(0) - 1));
}
void bounded_through_pointer(benchmark::State &state) {
    bounded_t const call = bounded_pointer;
    for (auto _ : state) benchmark::DoNotOptimize(call(word, 1, ~std::uint64_t(0) - 1));
}

// Each call offers a larger value than the word holds, so every one writes (a no-write `fetch_max` is a load).
void max_direct(benchmark::State &state) {
    word = 0;
    std::uint64_t value = 0;
    for (auto _ : state) benchmark::DoNotOptimize(portable_t(word).fetch_max(++value));
}
void max_selected(benchmark::State &state) {
    word = 0;
    std::uint64_t value = 0;
    for (auto _ : state) benchmark::DoNotOptimize(selected_t(word).fetch_max(++value));
}

} // namespace

BENCHMARK(add_direct);
BENCHMARK(add_selected);
BENCHMARK(add_through_pointer);
BENCHMARK(bounded_direct);
BENCHMARK(bounded_selected);
BENCHMARK(bounded_through_pointer);
BENCHMARK(max_direct);
BENCHMARK(max_selected);

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "--benchmark_*", 0,
                    "[--benchmark_...]\nThe cost of atomic_ref_t's run-time selection against a direct call and a "
                    "function pointer.\n"
                    "  --benchmark_...  Google Benchmark's flags (--benchmark_min_time=0.01, --benchmark_filter=...)\n"
                    "Reads no environment variable of its own.\n");
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
