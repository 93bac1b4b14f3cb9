/**
 *  @file   strict_consumer.cpp
 *  @brief  A consumer translation unit that includes every public header through `-I` (not as a system header)
 *          and instantiates the main templates, compiled with a strict warning set and `-Werror` by the tests
 *  `install.strict.*` (test/install/CMakeLists.txt). A template warns only where it is instantiated, so every
 *  pool kind runs each verb with narrow and wide index types and several count types, and every algorithm runs
 *  over integers and floating-point values; value types narrower than `int` (which promote to `int` inside `+`
 *  and `*`) run through the algorithms' default operators and `<functional>`'s, whose conversion back is the
 *  library's to state. Compiled only: nothing here is linked or run.
 *
 *  `FORKUNION_STRICT_WITHOUT_ALGORITHMS` leaves the algorithms out (the C++23 and portable variants): their
 *  templates read neither the standard's version nor the portable backends, so one instantiation per compiler sees
 *  every warning they can give, and the variants spend their time on what does change with them.
 */
#include <forkunion.hpp>
#include <forkunion.h>

// Every public header by its own path, the layer folders and the deprecated forwarding headers (which forward
// silently unless FORKUNION_WARN_DEPRECATED_INCLUDES is defined).
#include <forkunion/affinity.hpp>
#include <forkunion/algorithms.hpp>
#include <forkunion/algorithms/algorithms.hpp>
#include <forkunion/algorithms/sort.hpp>
#include <forkunion/allocators.hpp>
#include <forkunion/allocators_common.hpp>
#include <forkunion/atomics.hpp>
#include <forkunion/base/array.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/base/warnings.hpp>
#include <forkunion/capabilities.hpp>
#include <forkunion/colocated.hpp>
#include <forkunion/cores.hpp>
#include <forkunion/cpu_mask.hpp>
#include <forkunion/distributed.hpp>
#include <forkunion/fabric.hpp>
#include <forkunion/fabric/fabric.hpp>
#include <forkunion/features.hpp>
#include <forkunion/flat.hpp>
#include <forkunion/hardware/atomics.hpp>
#include <forkunion/hardware/caches.hpp>
#include <forkunion/hardware/capabilities.hpp>
#include <forkunion/hardware/cores.hpp>
#include <forkunion/hardware/features.hpp>
#include <forkunion/hardware/threads.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/memory/allocators_common.hpp>
#include <forkunion/memory/os_capabilities.hpp>
#include <forkunion/parse.hpp>
#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/dispatch.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/threads.hpp>
#include <forkunion/topology.hpp>
#include <forkunion/topology/affinity.hpp>
#include <forkunion/topology/parse.hpp>
#include <forkunion/topology/topology.hpp>
#include <forkunion/topology/topology_facts.hpp>
#include <forkunion/topology_facts.hpp>
#include <forkunion/types.hpp>
#include <forkunion/wait.hpp>
#include <forkunion/wait_kernel.hpp>
#include <forkunion/topology/deprecated.hpp>
#include <forkunion/pools/retirement.hpp>
#include <forkunion/pools/idle.hpp>
#include <forkunion/pools/deprecated.hpp>
#include <forkunion/memory/deprecated.hpp>
#include <forkunion/hardware/deprecated.hpp>
#include <forkunion/fabric/deprecated.hpp>
#include <forkunion/base/deprecated.hpp>

#include <atomic>     // `std::atomic`
#include <cstddef>    // `std::size_t`
#include <cstdint>    // `std::uint8_t`
#include <functional> // `std::greater`
#include <vector>     // `std::vector`

namespace fu = forkunion;

namespace {

/**  Every verb of one pool, with counts of several integer types and callbacks of every accepted shape. */
template <typename pool_type_>
std::size_t exercise_verbs(pool_type_ &pool) {
    using index_t = typename pool_type_::index_t;
    using prong_t = typename pool_type_::prong_t;
    std::atomic<std::size_t> seen{0};
    auto by_index = [&](index_t task) noexcept { seen.fetch_add(static_cast<std::size_t>(task)); };
    auto by_prong = [&](prong_t prong) noexcept {
        seen.fetch_add(static_cast<std::size_t>(prong.task) + static_cast<std::size_t>(prong.thread) +
                       static_cast<std::size_t>(prong.compute_domain));
    };
    auto by_slice = [&](index_t first, index_t count) noexcept {
        seen.fetch_add(static_cast<std::size_t>(first) + static_cast<std::size_t>(count));
    };
    auto by_prong_slice = [&](prong_t prong, index_t count) noexcept {
        seen.fetch_add(static_cast<std::size_t>(prong.task) + static_cast<std::size_t>(count));
    };
    bool ok = true;
    ok = pool.for_threads(by_index).join() && ok;
    ok = pool.for_threads(by_prong).join() && ok;
    ok = pool.for_n(100, by_index).join() && ok;
    ok = pool.for_n(std::size_t{100}, by_prong).join() && ok;
    ok = pool.for_n(std::uint8_t{100}, by_index).join() && ok;
    ok = pool.for_n(static_cast<long long>(100), by_index).join() && ok;
    ok = pool.for_n_dynamic(100u, by_index).join() && ok;
    ok = pool.for_n_dynamic(std::uint16_t{100}, by_prong).join() && ok;
    ok = pool.for_slices(100, by_slice).join() && ok;
    ok = pool.for_slices(std::uint8_t{100}, by_prong_slice).join() && ok;
    {
        auto guard = pool.for_n(std::int8_t{100}, by_index);
        ok = guard.status() && ok;
        ok = guard.join_or_run_on_caller() && ok;
    }
    auto const generation = pool.unsafe_for_threads(by_index);
    if (generation != 0) {
        while (!pool.is_complete(generation)) {}
        pool.unsafe_join(generation);
    }
    ok = static_cast<bool>(pool.set_idle_policy(fu::idle_policy_t::adaptive())) && ok;
    ok = static_cast<bool>(pool.set_stack_size(1u << 20)) && ok;
    std::size_t const threads = static_cast<std::size_t>(pool.threads_count());
    return ok ? seen.load() + threads : 0;
}

/**  Every algorithm over one value type, on one pool or pool-like (`with_grain`). */
template <typename value_type_, typename pool_like_type_>
value_type_ exercise_algorithms(pool_like_type_ &&pool) {
    std::vector<value_type_> values(1000, value_type_(1));
    std::vector<value_type_> other(values.size(), value_type_(2));
    std::vector<value_type_> out(values.size());
    fu::for_each(pool, values.begin(), values.end(), [](value_type_ &value) noexcept { value += value_type_(1); });
    fu::transform(pool, values.begin(), values.end(), out.begin(),
                  [](value_type_ value) noexcept { return value * value_type_(2); });
    fu::transform(pool, values.begin(), values.end(), other.begin(), out.begin(),
                  [](value_type_ a, value_type_ b) noexcept { return a - b; });
    value_type_ total = fu::reduce(pool, values.begin(), values.end());
    total += fu::reduce(pool, values.begin(), values.end(), value_type_(0));
    total += fu::reduce(pool, values.begin(), values.end(), value_type_(1),
                        [](value_type_ a, value_type_ b) noexcept { return a < b ? b : a; });
    total += fu::transform_reduce(
        pool, values.begin(), values.end(), value_type_(0), [](value_type_ a, value_type_ b) noexcept { return a + b; },
        [](value_type_ value) noexcept { return value / value_type_(2); });
    total += fu::transform_reduce(pool, values.begin(), values.end(), other.begin(), value_type_(0));
    total += fu::transform_reduce(
        pool, values.begin(), values.end(), other.begin(), value_type_(0),
        [](value_type_ a, value_type_ b) noexcept { return a + b; },
        [](value_type_ a, value_type_ b) noexcept { return a * b; });
    auto const positive = [](value_type_ value) noexcept { return value > value_type_(0); };
    auto const counted = fu::count_if(pool, values.begin(), values.end(), positive);
    auto const found = fu::find_if(pool, values.begin(), values.end(), positive);
    bool const any = fu::any_of(pool, values.begin(), values.end(), positive);
    bool const all = fu::all_of(pool, values.begin(), values.end(), positive);
    bool const none = fu::none_of(pool, values.begin(), values.end(), positive);
    auto const smallest = fu::min_element(pool, values.begin(), values.end());
    auto const largest = fu::max_element(pool, values.begin(), values.end(), std::greater<>{});
    fu::inclusive_scan(pool, values.begin(), values.end(), out.begin());
    fu::inclusive_scan(pool, values.begin(), values.end(), out.begin(),
                       [](value_type_ a, value_type_ b) noexcept { return a + b; });
    fu::inclusive_scan(
        pool, values.begin(), values.end(), out.begin(), [](value_type_ a, value_type_ b) noexcept { return a + b; },
        value_type_(1));
    fu::exclusive_scan(pool, values.begin(), values.end(), out.begin(), value_type_(0));
    fu::exclusive_scan(pool, values.begin(), values.end(), out.begin(), value_type_(0),
                       [](value_type_ a, value_type_ b) noexcept { return a + b; });
    fu::sort(pool, out.begin(), out.end());
    fu::sort(pool, out.begin(), out.end(), std::greater<>{});
    fu::stable_sort(pool, out.begin(), out.end());
    fu::stable_sort(pool, out.begin(), out.end(), std::greater<>{});
    bool const flags = any && all && !none && found != values.end();
    return total + static_cast<value_type_>(counted) + *smallest + *largest + (flags ? value_type_(1) : value_type_(0));
}

/**
 *  The algorithms that combine values, over a value type narrower than `int`: the operators are the defaults and
 *  `<functional>`'s, so that every conversion from `int` back to the value type happens inside the library.
 */
template <typename value_type_, typename pool_like_type_>
long exercise_narrow_algorithms(pool_like_type_ &&pool) {
    std::vector<value_type_> values(1000, value_type_(1));
    std::vector<value_type_> other(values.size(), value_type_(2));
    std::vector<value_type_> out(values.size());
    long total = fu::reduce(pool, values.begin(), values.end());
    total += fu::reduce(pool, values.begin(), values.end(), value_type_(0));
    total += fu::reduce(pool, values.begin(), values.end(), value_type_(0), std::plus<>{});
    total += fu::reduce(pool, values, value_type_(0), std::multiplies<>{});
    total += fu::transform_reduce(pool, values.begin(), values.end(), other.begin(), value_type_(0));
    total += fu::transform_reduce(pool, values.begin(), values.end(), other.begin(), value_type_(0), std::plus<>{},
                                  std::multiplies<>{});
    total += fu::transform_reduce(pool, values.begin(), values.end(), value_type_(0), std::plus<>{}, std::negate<>{});
    fu::inclusive_scan(pool, values.begin(), values.end(), out.begin());
    fu::inclusive_scan(pool, values.begin(), values.end(), out.begin(), std::plus<>{});
    fu::inclusive_scan(pool, values.begin(), values.end(), out.begin(), std::plus<>{}, value_type_(1));
    fu::exclusive_scan(pool, values.begin(), values.end(), out.begin(), value_type_(0));
    fu::exclusive_scan(pool, values.begin(), values.end(), out.begin(), value_type_(0), std::plus<>{});
    fu::sort(pool, out.begin(), out.end());
    fu::stable_sort(pool, out.begin(), out.end(), std::greater<>{});
    return total + *fu::min_element(pool, values.begin(), values.end()) + *fu::max_element(pool, values);
}

template <typename pool_type_>
double exercise_all_algorithms([[maybe_unused]] pool_type_ &pool) {
#if defined(FORKUNION_STRICT_WITHOUT_ALGORITHMS)
    return 0;
#else
    double result = exercise_algorithms<double>(pool);
    result += static_cast<double>(exercise_algorithms<int>(pool));
    result += static_cast<double>(exercise_algorithms<std::int64_t>(fu::with_grain(pool, 64)));
    result += static_cast<double>(exercise_algorithms<float>(fu::with_grain(pool, 0)));
    result += static_cast<double>(
        exercise_narrow_algorithms<std::int8_t>(pool) +
        exercise_narrow_algorithms<std::uint8_t>(fu::with_grain(pool, 64)) + exercise_narrow_algorithms<short>(pool) +
        exercise_narrow_algorithms<unsigned short>(pool) + exercise_narrow_algorithms<char>(pool));
    return result;
#endif
}

template <typename index_type_>
std::size_t exercise_flat() {
    fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, index_type_> pool;
    if (!pool.spawn(2)) return 0;
    std::size_t result = exercise_verbs(pool);
    result += static_cast<std::size_t>(exercise_all_algorithms(pool));
    pool.terminate();
    if (!pool.spawn(index_type_{2}, fu::caller_exclusive_k, 1)) return 0;
    return result + exercise_verbs(pool);
}

template <typename index_type_>
std::size_t exercise_colocated(fu::machine_topology_t const &topology) {
    fu::basic_colocated_pool_t<fu::default_micro_yield_t, index_type_> pool;
    fu::thread_placement_t placement;
    placement.name = "strict";
    if (!pool.spawn_on(topology, 0, index_type_{2}, fu::caller_inclusive_k, placement)) return 0;
    std::size_t const result = exercise_verbs(pool) + static_cast<std::size_t>(pool.unpinned_threads_count());
    return result + static_cast<std::size_t>(exercise_all_algorithms(pool));
}

template <typename index_type_>
std::size_t exercise_distributed(fu::machine_topology_t const &topology) {
    fu::basic_distributed_pool_t<fu::default_micro_yield_t, index_type_> pool;
    auto const threads = static_cast<index_type_>(topology.compute_domains_count());
    if (!pool.spawn(topology, threads)) return 0;
    std::size_t result = exercise_verbs(pool);
    for (std::size_t d = 0; d != static_cast<std::size_t>(pool.compute_domains_count()); ++d)
        result +=
            static_cast<std::size_t>(pool.first_thread_in(d)) + static_cast<std::size_t>(pool.threads_count_in(d));
    auto const location = pool.locate_thread(0);
    result += static_cast<std::size_t>(location.compute_domain) + static_cast<std::size_t>(location.local_thread);
    result += static_cast<std::size_t>(pool.locate_thread_in(0, 0));
    return result + static_cast<std::size_t>(exercise_all_algorithms(pool));
}

std::size_t exercise_base_and_hardware() {
    std::size_t result = 0;
    fu::cpu_mask_t mask;
    mask.set(1);
    result += mask.count();
    auto const slice = fu::static_slice<std::uint8_t>(200, 7, 3);
    result += static_cast<std::size_t>(slice.first) + static_cast<std::size_t>(slice.count);
    auto const stride = fu::coprime_stride<std::uint16_t>(100, 7);
    result += static_cast<std::size_t>(fu::next_in_coprime_order<std::uint16_t>(3, stride, 100));
    result += static_cast<std::size_t>(fu::greatest_common_divisor<std::uint32_t>(12, 18));

    alignas(8) std::uint64_t word64 = 0;
    std::uint32_t word32 = 0;
    std::uint8_t word8 = 0;
    fu::atomic_ref_t<std::uint64_t> ref64(word64);
    fu::atomic_ref_t<std::uint32_t> ref32(word32);
    fu::atomic_ref_t<std::uint8_t> ref8(word8);
    result += static_cast<std::size_t>(ref64.fetch_max(7) + ref64.fetch_min(3) + ref64.fetch_add_if_at_most(1, 9));
    result += static_cast<std::size_t>(ref64.fetch_sub_if_at_least(1, 1) + ref64.exchange(2) + ref64.fetch_xor(1));
    result +=
        static_cast<std::size_t>(ref32.fetch_add(1) + ref32.fetch_sub(1) + ref32.fetch_and(3) + ref32.fetch_or(4));
    result += static_cast<std::size_t>(ref8.fetch_add(1) + ref8.fetch_max(5) + ref8.load());
    std::uint8_t expected = 1;
    result += ref8.compare_exchange_strong(expected, 2) ? 1u : 0u;
    ref8.store(3);

    fu::spin_mutex_t mutex;
    mutex.lock();
    mutex.unlock();
    std::atomic<std::uint32_t> word{0};
    fu::default_micro_yield_t micro_yield;
    fu::micro_yield_with(micro_yield, std::uint8_t{1});
    fu::nap_on(word, std::uint32_t{1}, micro_yield, std::uint8_t{0});

    char names[256];
    result += fu::name_capabilities(fu::runtime_capabilities(), names, sizeof names);
    fu::cpu_caches_t const caches = fu::calling_cpu_caches();
    (void)caches;
    result += static_cast<std::size_t>(fu::to_numa_node_id(std::size_t{3}));
    result += static_cast<std::size_t>(fu::to_numa_node_id(std::uint8_t{3}));
    return result;
}

std::size_t exercise_topology_and_memory(fu::machine_topology_t const &topology) {
    std::size_t result = topology.compute_domains_count() + topology.compute_levels_count() +
                         topology.logical_cores_count() + topology.memory_domains_count() +
                         topology.online_cores_count() + topology.huge_pages_count();
    for (std::size_t d = 0; d != topology.compute_domains_count(); ++d)
        result += topology.logical_cores_count_in(d) + topology.cores_in(d).size() + topology.local_memory_of(d) +
                  topology.compute_capacity_in(d) + topology.compute_level_in(d);
    for (std::size_t m = 0; m != topology.memory_domains_count(); ++m)
        result += topology.memory_node_id(m) + topology.huge_pages_count_in(m) + topology.declared_distance(0, m);

    fu::domain_allocator_t<float> const floats(0);
    std::vector<float, fu::domain_allocator_t<float>> values(100, 1.f, floats);
    auto const taken = floats.try_allocate_at_least(100);
    if (taken.status) floats.deallocate(taken.ptr, taken.count);
    fu::portable_allocator_t<std::uint8_t> const bytes;
    std::vector<std::uint8_t, fu::portable_allocator_t<std::uint8_t>> small(10, std::uint8_t{1}, bytes);
    result += values.size() + small.size();

    fu::symmetric_memory_allocator_t const symmetric;
    std::vector<fu::numa_node_id_t> const nodes{0};
    fu::sharded_array_t<double> shards;
    if (shards.try_allocate(nodes, 1000)) {
        for (std::size_t shard = 0; shard != shards.shards_count(); ++shard)
            for (double &value : shards.shard(shard)) value = 1.0;
        result += shards.locate(10).shard + shards.shard_first(0);
    }
    fu::replicated_array_t<std::uint16_t> lookup;
    if (lookup.try_allocate(nodes, 256)) {
        lookup.replica(0)[0] = 1;
        lookup.broadcast(0);
        result += lookup.replicas_count();
    }
    (void)symmetric;
    return result;
}

} // namespace

int main() {
    fu::machine_topology_t topology;
    (void)topology.try_harvest();
    std::size_t result = exercise_base_and_hardware() + exercise_topology_and_memory(topology);
    result += exercise_flat<std::uint8_t>() + exercise_flat<std::uint16_t>() + exercise_flat<std::uint32_t>() +
              exercise_flat<std::size_t>();
    result += exercise_colocated<std::uint8_t>(topology) + exercise_colocated<std::size_t>(topology);
    result += exercise_distributed<std::uint8_t>(topology) + exercise_distributed<std::uint16_t>(topology) +
              exercise_distributed<std::size_t>(topology);

    fu::flat_pool_t pool;
    if (pool.spawn(2)) {
        fu::fabric_t fabric;
        if (fabric.try_harvest(topology, pool, fu::fabric_options_t::quick()))
            result += fabric.memory_distance(0, 0) + fabric.memory_levels_count();
    }

    // The C API's constants and types, seen from C++.
    fu_capabilities_t const waits =
        fu_capabilities_waits_k | fu_capability_x86_waitpkg_k | fu_capability_huge_pages_k | fu_capabilities_none_k;
    result += static_cast<std::size_t>(waits != fu_capabilities_all_k);
    return static_cast<int>(result % 2);
}
