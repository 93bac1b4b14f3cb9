/**
 *  @file   no_exceptions.cpp
 *  @brief  The library built and run without exceptions (`-fno-exceptions`), for `no_exceptions_check.cmake`.
 *
 *  Every pool kind spawns, runs each verb (`for_threads`, `for_n`, `for_n_dynamic`, `for_slices`, the split API) and
 *  terminates; the allocators and arrays allocate, the topology harvests, and the C API (`forkunion.h`, linked from
 *  `c/forkunion.cpp` built the same way) runs a loop. Every loop counts how many times each task ran, and the program
 *  fails unless each ran exactly once. The failure paths (a thread table too large, threads the OS refuses, a count
 *  the index type cannot hold, a nested dispatch) answer with their status and leave the pool usable. The fabric's
 *  harvest is compiled, not run (it measures for seconds).
 *  Exit status 0 when every check passed; each failure prints one line.
 */
#include <atomic>  // `std::atomic`
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`
#include <cstdio>  // `std::printf`

#include <forkunion.h>
#include <forkunion.hpp>
#include <forkunion/fabric.hpp>

#if FORKUNION_EXCEPTIONS || defined(__cpp_exceptions)
#error "build this file with -fno-exceptions"
#endif

namespace fu = forkunion;

namespace {

constexpr std::size_t tasks_k = 1000;
constexpr std::size_t threads_k = 3; // more than the two cores of a small runner: workers must still finish

std::atomic<std::size_t> hits[tasks_k];
int failures = 0;

void check(bool ok, char const *what, char const *where) noexcept {
    if (ok) return;
    std::printf("FAILED: %s (%s)\n", what, where);
    ++failures;
}

void clear_hits() noexcept {
    for (auto &hit : hits) hit.store(0, std::memory_order_relaxed);
}

/**  Whether tasks `[0, count)` each ran exactly once and no other did; clears the counters. */
bool each_once(std::size_t count) noexcept {
    bool ok = true;
    for (std::size_t task = 0; task != tasks_k; ++task)
        ok &= hits[task].exchange(0, std::memory_order_relaxed) == (task < count ? 1u : 0u);
    return ok;
}

template <typename pool_type_>
void exercise(pool_type_ &pool, char const *where) noexcept {
    using index_t = typename pool_type_::index_t;
    std::size_t const threads = static_cast<std::size_t>(pool.threads_count());
    check(threads == threads_k, "threads_count after spawn", where);

    clear_hits();
    check(static_cast<bool>(
              pool.for_threads([](index_t thread) noexcept { hits[thread].fetch_add(1, std::memory_order_relaxed); })
                  .join()),
          "for_threads dispatched", where);
    check(each_once(threads), "for_threads: each thread once", where);

    check(static_cast<bool>(
              pool.for_n(tasks_k, [](index_t task) noexcept { hits[task].fetch_add(1, std::memory_order_relaxed); })
                  .join()),
          "for_n dispatched", where);
    check(each_once(tasks_k), "for_n: each task once", where);

    check(static_cast<bool>(
              pool.for_n_dynamic(tasks_k,
                                 [](index_t task) noexcept { hits[task].fetch_add(1, std::memory_order_relaxed); })
                  .join()),
          "for_n_dynamic dispatched", where);
    check(each_once(tasks_k), "for_n_dynamic: each task once", where);

    check(static_cast<bool>(pool.for_slices(tasks_k,
                                            [](index_t first, index_t count) noexcept {
                                                for (index_t task = first; task != first + count; ++task)
                                                    hits[task].fetch_add(1, std::memory_order_relaxed);
                                            })
                                .join()),
          "for_slices dispatched", where);
    check(each_once(tasks_k), "for_slices: each task once", where);

    auto split = [](index_t thread) noexcept { hits[thread].fetch_add(1, std::memory_order_relaxed); };
    auto const publication = pool.unsafe_for_threads(split);
    check(static_cast<bool>(publication), "split API published", where);
    if (publication.generation) pool.unsafe_join(publication.generation);
    check(each_once(publication ? threads : 0), "split API: each thread once", where);

    pool.terminate();
    check(pool.threads_count() == 0, "terminate", where);
    // Terminated pools run nothing, and a refused loop still runs each task once on the caller.
    check(pool.for_n(tasks_k, [](index_t task) noexcept { hits[task].fetch_add(1, std::memory_order_relaxed); })
              .join_or_run_on_caller(),
          "join_or_run_on_caller after terminate", where);
    check(each_once(tasks_k), "join_or_run_on_caller: each task once", where);
}

/**  The failure paths answer with a status without exceptions too (none throws or aborts), run nothing, start no
 *   thread, and leave the pool usable. */
void failure_paths() noexcept {
    char const *const where = "failure paths";
    fu::flat_pool_t pool;
    // A thread table beyond the allocator's reach: refused before anything is allocated or started.
    check(pool.spawn(~std::size_t(0)) == fu::status_code_t::bad_alloc_k, "a spawn of SIZE_MAX threads is bad_alloc",
          where);
    check(pool.threads_count() == 0, "nothing spawned after bad_alloc", where);
#if FORKUNION_OS_LINUX
    // A stack no thread can get (2^62 bytes, beyond any address space): the OS refuses the thread, or the limits
    // check refuses the spawn first.
    check(static_cast<bool>(pool.set_stack_size(std::size_t(1) << (sizeof(std::size_t) * 8 - 2))),
          "set_stack_size(2^62)", where);
    fu::status_t const huge = pool.spawn(threads_k);
    check(!huge, "a spawn of threads with 2^62-byte stacks is refused", where);
    check(pool.threads_count() == 0, "nothing spawned after the refused threads", where);
    check(static_cast<bool>(pool.set_stack_size(0)), "set_stack_size(0)", where);
#endif
    check(static_cast<bool>(pool.spawn(threads_k)), "a spawn after the refusals", where);
    clear_hits();
    check(static_cast<bool>(
              pool.for_n(tasks_k, [](std::size_t task) noexcept { hits[task].fetch_add(1, std::memory_order_relaxed); })
                  .join()),
          "for_n after the refusals", where);
    check(each_once(tasks_k), "for_n after the refusals: each task once", where);
    pool.terminate();

    // A count the index type cannot hold: refused with a status, nothing runs.
    fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, std::uint8_t> narrow;
    check(static_cast<bool>(narrow.spawn(2)), "spawn", "failure paths, uint8_t pool");
    auto guard = narrow.for_n(std::size_t(1000),
                              [](std::uint8_t task) noexcept { hits[task].fetch_add(1, std::memory_order_relaxed); });
    check(guard.status().code() == fu::status_code_t::invalid_argument_k, "for_n(1000) is invalid_argument",
          "failure paths, uint8_t pool");
    check(!guard.join(), "its join reports the refusal", "failure paths, uint8_t pool");
    check(each_once(0), "nothing ran", "failure paths, uint8_t pool");

    // A nested blocking dispatch from a callback is contended, with a status.
    check(static_cast<bool>(pool.spawn(threads_k)), "respawn", where);
    std::atomic<int> nested_contended{0};
    check(static_cast<bool>(pool.for_threads([&](std::size_t) noexcept {
                                    if (pool.for_n(4, [](std::size_t) noexcept {}).join() ==
                                        fu::status_code_t::contended_k)
                                        nested_contended.fetch_add(1, std::memory_order_relaxed);
                                })
                                .join()),
          "for_threads with nested dispatches", where);
    check(nested_contended.load() == static_cast<int>(threads_k), "every nested dispatch is contended", where);
    pool.terminate();
}

void c_count(void *context, std::size_t task, std::size_t, std::size_t) {
    static_cast<std::atomic<std::size_t> *>(context)[task].fetch_add(1, std::memory_order_relaxed);
}

} // namespace

int main(int argc, char **) {
    fu::machine_topology_t topology;
#if FORKUNION_OS_LINUX
    check(topology.try_harvest(), "topology harvest", "topology");
#else
    (void)topology.try_harvest();
#endif
    check(topology.logical_cores_count() >= 1, "topology counts a core", "topology");

    fu::flat_pool_t flat;
    check(static_cast<bool>(flat.spawn(threads_k)), "spawn", "flat, inclusive");
    exercise(flat, "flat, inclusive");
    check(static_cast<bool>(flat.spawn(threads_k, fu::caller_exclusive_k)), "spawn", "flat, exclusive");
    exercise(flat, "flat, exclusive");

    fu::colocated_pool_t colocated;
    check(static_cast<bool>(colocated.spawn_on(topology, 0, threads_k)), "spawn_on", "colocated");
    exercise(colocated, "colocated");

    fu::distributed_pool_t distributed;
    check(static_cast<bool>(distributed.spawn(topology, threads_k)), "spawn", "distributed");
    exercise(distributed, "distributed");

    // The allocators: the status-returning path, and the STL path that succeeds.
    fu::domain_allocator_t<std::uint64_t> allocator;
    auto const region = allocator.try_allocate_at_least(tasks_k);
    check(region.status && region.ptr && region.count >= tasks_k, "try_allocate_at_least", "allocators");
    if (region.ptr) {
        for (std::size_t i = 0; i != tasks_k; ++i) region.ptr[i] = i;
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i != tasks_k; ++i) sum += region.ptr[i];
        check(sum == tasks_k * (tasks_k - 1) / 2, "allocated memory holds what was written", "allocators");
        allocator.deallocate(region.ptr, region.count);
    }
    std::uint64_t *stl = allocator.allocate(tasks_k);
    check(stl != nullptr, "allocate", "allocators");
    allocator.deallocate(stl, tasks_k);
    check(!allocator.try_allocate_at_least(allocator.max_size() + 1).status, "refuses past max_size", "allocators");

    // A sharded array filled by a pool: each element written once.
    fu::sharded_array_t<std::uint64_t> sharded;
    check(static_cast<bool>(sharded.try_allocate(topology, tasks_k)), "try_allocate", "sharded array");
    check(static_cast<bool>(flat.spawn(threads_k)), "respawn", "sharded array");
    std::size_t filled = 0;
    for (std::size_t shard = 0; shard != sharded.shards_count(); ++shard) {
        fu::array_view_t<std::uint64_t> view = sharded.shard(shard);
        std::uint64_t *data = view.data();
        std::size_t const first = sharded.shard_first(shard);
        check(static_cast<bool>(
                  flat.for_n(view.size(), [=](std::size_t i) noexcept { data[i] += first + i + 1; }).join()),
              "for_n over a shard", "sharded array");
        for (std::size_t i = 0; i != view.size(); ++i) filled += data[i] == first + i + 1;
    }
    check(filled == tasks_k, "each element written once", "sharded array");
    flat.terminate();

    // The growable array under the topology.
    fu::detail::array_t<std::size_t> array;
    for (std::size_t i = 0; i != tasks_k; ++i) array.push_back(i);
    array.resize(tasks_k / 2);
    check(array.size() == tasks_k / 2 && array[tasks_k / 2 - 1] == tasks_k / 2 - 1, "push_back, resize", "array");

    // The fabric's harvest compiles here; measuring takes seconds, so it runs only when asked.
    if (argc > 1) {
        fu::fabric_t fabric;
        fu::flat_pool_t fabric_pool;
        (void)fabric.try_harvest(topology, fabric_pool);
    }

    failure_paths();

    // The C API, built with the same flags.
    fu_topology_t c_topology = fu_topology_new();
    fu_pool_t c_pool = fu_pool_new("no-exceptions", fu_capabilities_all_k);
    check(c_topology && c_pool, "fu_topology_new, fu_pool_new", "C API");
    if (c_topology && c_pool) {
        check(fu_pool_spawn(c_topology, c_pool, threads_k, fu_caller_inclusive_k) == fu_success_k, "fu_pool_spawn",
              "C API");
        clear_hits();
        check(fu_pool_for_n(c_pool, tasks_k, &c_count, hits) == fu_success_k, "fu_pool_for_n", "C API");
        check(each_once(tasks_k), "fu_pool_for_n: each task once", "C API");
        check(fu_pool_for_n_dynamic(c_pool, tasks_k, &c_count, hits) == fu_success_k, "fu_pool_for_n_dynamic", "C API");
        check(each_once(tasks_k), "fu_pool_for_n_dynamic: each task once", "C API");
        check(fu_pool_terminate(c_pool) == fu_success_k, "fu_pool_terminate", "C API");
    }
    if (c_pool) fu_pool_delete(c_pool);
    if (c_topology) fu_topology_delete(c_topology);

    if (failures == 0) std::printf("without exceptions: every pool, allocator, array, topology and C API check ran\n");
    return failures == 0 ? 0 : 1;
}
