/**
 *  @file   runtimes.hpp
 *  @brief  Every backend the benchmarks compare, behind one small interface, and the selector that builds one.
 *
 *  @section contract The runtime interface (one header per runtime)
 *  | member                                    | contract                                                        |
 *  | ----------------------------------------- | --------------------------------------------------------------- |
 *  | `explicit runtime(pin_plan_t &plan)`      | starts `plan.threads_count()` threads, pins each (`pin_plan_t`) |
 *  | `error()`                                 | empty when ready; else why the runtime could not start          |
 *  | `library()`                               | what runs it: a loaded shared object's path, or "header-only"   |
 *  | `enter(fn)`                               | runs `fn()` in the runtime's context (a TBB arena); blocks      |
 *  | `on_each_thread(fn)`                      | `fn(thread)` once on each thread, all at once; blocks           |
 *  | `for_n<schedule>(n, fn)`                  | `fn(task, thread)` for every task in [0, n); blocks until done  |
 *  | `replicas_count()`, `replica_of(thread)`  | which copy of the read-mostly inputs a thread reads             |
 *  | `for_threads(fn)` (optional)              | the runtime's native broadcast, for the dispatch benchmark      |
 *  Serial equivalent of `for_n`: `for (task = 0; task < n; ++task) fn(task, 0);`. `thread` is in [0, T): the
 *  index each runtime gives its threads (ForkUnion's prong, OpenMP's thread number, TBB's arena slot, or the
 *  slot pinned at start), 0 being the caller. Callbacks are `noexcept`.
 *
 *  @section backends Backends
 *  `forkunion_{static,dynamic}_{shared,replicated}`, then `<peer>_{static,dynamic}` for every peer compiled in:
 *  `libgomp`/`libomp` (whichever OpenMP runtime is loaded), `tbb`, `pthreadpool`, `thread_pool` (task queue)
 *  and `std_thread` (naive create-and-join). `static` is a contiguous block per thread; `dynamic` is one-task
 *  grain. A peer not found at configure time is absent from the list, and CMake says so.
 */
#pragma once
#include <algorithm>   // `std::includes`
#include <cstring>     // `std::memcpy`
#include <memory>      // `std::unique_ptr`
#include <string>      // `std::string`
#include <type_traits> // `std::integral_constant`
#include <vector>      // `std::vector`

#include "harness.hpp"
#include "runtime_forkunion.hpp"
#include "runtime_std_thread.hpp"

#ifndef FORKUNION_BENCH_OPENMP
#define FORKUNION_BENCH_OPENMP 0
#endif
#ifndef FORKUNION_BENCH_TBB
#define FORKUNION_BENCH_TBB 0
#endif
#ifndef FORKUNION_BENCH_PTHREADPOOL
#define FORKUNION_BENCH_PTHREADPOOL 0
#endif
#ifndef FORKUNION_BENCH_THREAD_POOL
#define FORKUNION_BENCH_THREAD_POOL 0
#endif

#if FORKUNION_BENCH_OPENMP
#include "runtime_openmp.hpp"
#endif
#if FORKUNION_BENCH_TBB
#include "runtime_tbb.hpp"
#endif
#if FORKUNION_BENCH_PTHREADPOOL
#include "runtime_pthreadpool.hpp"
#endif
#if FORKUNION_BENCH_THREAD_POOL
#include "runtime_thread_pool.hpp"
#endif

namespace forkunion::bench {

enum class runtime_id_t {
    forkunion_shared_k,
    forkunion_replicated_k,
    openmp_k,
    tbb_k,
    pthreadpool_k,
    thread_pool_k,
    std_thread_k
};

/**  One row of a benchmark: a runtime and a schedule. */
struct backend_t {
    std::string name;   ///< e.g. "forkunion_static_shared", "libgomp_dynamic"
    std::string family; ///< e.g. "forkunion", "libgomp"; the dispatch benchmark's row prefix
    runtime_id_t runtime;
    schedule_t schedule;
};

/**  Every backend compiled into this binary, ForkUnion's first. */
inline std::vector<backend_t> available_backends() {
    std::vector<backend_t> backends;
    auto both = [&](std::string const &family, std::string const &suffix, runtime_id_t runtime) {
        backends.push_back({family + "_static" + suffix, family, runtime, schedule_t::static_k});
        backends.push_back({family + "_dynamic" + suffix, family, runtime, schedule_t::dynamic_k});
    };
    both("forkunion", "_shared", runtime_id_t::forkunion_shared_k);
    both("forkunion", "_replicated", runtime_id_t::forkunion_replicated_k);
#if FORKUNION_BENCH_OPENMP
    both(openmp_runtime_name(), "", runtime_id_t::openmp_k);
#endif
#if FORKUNION_BENCH_TBB
    both("tbb", "", runtime_id_t::tbb_k);
#endif
#if FORKUNION_BENCH_PTHREADPOOL
    both("pthreadpool", "", runtime_id_t::pthreadpool_k);
#endif
#if FORKUNION_BENCH_THREAD_POOL
    both("thread_pool", "", runtime_id_t::thread_pool_k);
#endif
    both("std_thread", "", runtime_id_t::std_thread_k);
    return backends;
}

inline std::vector<std::string> backend_names(std::vector<backend_t> const &backends) {
    std::vector<std::string> names;
    for (auto const &backend : backends) names.push_back(backend.name);
    return names;
}

inline backend_t const &find_backend(std::vector<backend_t> const &backends, std::string const &name) {
    for (auto const &backend : backends)
        if (backend.name == name) return backend;
    fail(exit_bad_setting_k, "FORKUNION_BACKEND: \"%s\" is not compiled into this binary", name.c_str());
}

/**
 *  @brief  Builds the runtime `id` with `plan`'s threads (pinned), then calls `visitor(runtime)`. Exits with
 *          status 2 if the runtime cannot start.
 */
template <typename visitor_type_>
void with_runtime(runtime_id_t id, pin_plan_t &plan, visitor_type_ &&visitor) {
    auto run = [&](auto &runtime) {
        if (!runtime.error().empty()) fail(exit_unavailable_k, "runtime failed to start: %s", runtime.error().c_str());
        visitor(runtime);
    };
    switch (id) {
    case runtime_id_t::forkunion_shared_k: {
        forkunion_runtime_t<false> runtime(plan);
        return run(runtime);
    }
    case runtime_id_t::forkunion_replicated_k: {
        forkunion_runtime_t<true> runtime(plan);
        return run(runtime);
    }
#if FORKUNION_BENCH_OPENMP
    case runtime_id_t::openmp_k: {
        openmp_runtime_t runtime(plan);
        return run(runtime);
    }
#endif
#if FORKUNION_BENCH_TBB
    case runtime_id_t::tbb_k: {
        tbb_runtime_t runtime(plan);
        return run(runtime);
    }
#endif
#if FORKUNION_BENCH_PTHREADPOOL
    case runtime_id_t::pthreadpool_k: {
        pthreadpool_runtime_t runtime(plan);
        return run(runtime);
    }
#endif
#if FORKUNION_BENCH_THREAD_POOL
    case runtime_id_t::thread_pool_k: {
        thread_pool_runtime_t runtime(plan);
        return run(runtime);
    }
#endif
    case runtime_id_t::std_thread_k: {
        std_thread_runtime_t runtime(plan);
        return run(runtime);
    }
    default:
        fail(exit_unavailable_k, "runtime not compiled into this binary");
    }
}

template <schedule_t schedule_>
using schedule_constant_t = std::integral_constant<schedule_t, schedule_>;

/**  Calls `visitor(schedule_constant_t<schedule>{})`, so kernels see the schedule at compile time. */
template <typename visitor_type_>
void with_schedule(schedule_t schedule, visitor_type_ &&visitor) {
    if (schedule == schedule_t::static_k)
        visitor(schedule_constant_t<schedule_t::static_k>{});
    else
        visitor(schedule_constant_t<schedule_t::dynamic_k>{});
}

/**
 *  @brief  One copy of an array per replica of a runtime (one per memory domain for `*_replicated`, else one).
 *
 *  Replica 0 is the source itself: it lives where its writer touched it, the caller's domain, which is thread
 *  0's. Replica r >= 1 is copied by the first thread of domain r, so first touch places its pages there (the
 *  distributed pool of `forkunion_*_replicated` pins each thread to a core of its domain before this runs).
 */
template <typename value_type_>
class replicas_t {
public:
    using value_t = value_type_;

    template <typename runtime_type_>
    replicas_t(runtime_type_ &runtime, std::vector<value_t> &source) : size_(source.size()) {
        std::size_t const count = runtime.replicas_count();
        pointers_.assign(count, source.data());
        for (std::size_t replica = 1; replica < count; ++replica) {
            copies_.emplace_back(new value_t[size_]);
            pointers_[replica] = copies_.back().get();
        }
        if (count == 1) return;
        std::vector<std::size_t> first_thread(count, unknown_slot_k);
        for (std::size_t thread = runtime.threads_count(); thread-- > 0;)
            first_thread[runtime.replica_of(thread)] = thread;
        runtime.on_each_thread([&](std::size_t thread) noexcept {
            std::size_t const replica = runtime.replica_of(thread);
            if (replica != 0 && first_thread[replica] == thread)
                std::memcpy(pointers_[replica], pointers_[0], size_ * sizeof(value_t));
        });
    }

    std::size_t count() const noexcept { return pointers_.size(); }
    std::size_t size() const noexcept { return size_; }
    value_t *operator[](std::size_t replica) const noexcept { return pointers_[replica]; }

private:
    std::size_t size_;
    std::vector<std::unique_ptr<value_t[]>> copies_;
    std::vector<value_t *> pointers_;
};

/**
 *  @brief  The machine a run may use, and the calling thread (the benchmark's main thread) widened to all of it.
 *
 *  Normally the calling thread's affinity mask. When libgomp bound that thread to its first place before `main`
 *  (OMP_PLACES or OMP_PROC_BIND set, as `bench/compare.sh` does), the union of the places instead: otherwise every
 *  backend in a libgomp-linked binary, ForkUnion's included, would see one CPU, run one thread, and count its
 *  pool as oversubscribed. Widening first gives every runtime the same starting point.
 */
inline machine_t harvest_machine() {
    machine_t machine = machine_t::harvest();
#if FORKUNION_BENCH_OPENMP
    std::vector<int> const places = openmp_place_cpus();
    if (places.size() > machine.cpus.size() &&
        std::includes(places.begin(), places.end(), machine.cpus.begin(), machine.cpus.end()))
        machine = machine_t::harvest(places);
#endif
    machine.widen_calling_thread();
    return machine;
}

/**  Prints the banner lines that describe a started runtime: what runs it and where its threads are pinned. */
template <typename runtime_type_>
void print_runtime(backend_t const &backend, runtime_type_ const &runtime, pin_plan_t const &plan) {
    bool complete = false;
    std::string const pins = plan.describe(complete);
    std::printf("# backend: %s on %s, %zu threads, %zu replica%s\n", backend.name.c_str(), runtime.library().c_str(),
                runtime.threads_count(), runtime.replicas_count(), runtime.replicas_count() == 1 ? "" : "s");
    std::printf("# pinning: %s%s\n", pins.c_str(), complete ? " (each read back from the OS)" : " (INCOMPLETE)");
}

} // namespace forkunion::bench
