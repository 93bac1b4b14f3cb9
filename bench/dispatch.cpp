/**
 *  @file   dispatch.cpp
 *  @brief  Dispatch latency: ns per empty fork-join on every allowed core, ForkUnion next to OpenMP.
 *
 *  One task per thread and an empty body, so what is measured is the fork, the wake-up and the join.
 */
#include <benchmark/benchmark.h>

#include <forkunion.hpp>

#if FORKUNION_BENCH_OPENMP
#include <omp.h>
#endif

namespace fu = forkunion;

namespace {

std::size_t const threads_k = fu::allowed_cores_count();

void forkunion_for_n(benchmark::State &state) {
    fu::flat_pool_t pool;
    if (!pool.spawn(threads_k)) return state.SkipWithError("spawn failed");
    for (auto _ : state) pool.for_n(threads_k, [](std::size_t task) noexcept { benchmark::DoNotOptimize(task); }).join();
    state.counters["threads"] = double(threads_k);
}
BENCHMARK(forkunion_for_n)->UseRealTime();

#if FORKUNION_BENCH_OPENMP
void openmp_parallel_for(benchmark::State &state) {
    int const threads = static_cast<int>(threads_k);
    for (auto _ : state) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int task = 0; task < threads; ++task) benchmark::DoNotOptimize(task);
    }
    state.counters["threads"] = double(threads_k);
}
BENCHMARK(openmp_parallel_for)->UseRealTime();
#endif

} // namespace

BENCHMARK_MAIN();
