// NUMA vector search: vectors sharded over the compute domains, each shard on its domain's memory node, searched
// by a distributed pool whose threads scan only their own domain's shard; checked against a serial scan.
// Usage: forkunion_example_numa_search [SYSFS_ROOT]   (a recorded machine, such as test/fixtures/sysfs/*; on a
// machine that lacks its cores and nodes the pins and bindings are refused, counted, and the answer is the same).
#include <cstdint> // `std::uint32_t`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `EXIT_FAILURE`
#include <limits>  // `std::numeric_limits`
#include <mutex>   // `std::lock_guard`
#include <vector>  // `std::vector`

#include <forkunion.hpp>
#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

constexpr std::size_t dimensions_k = 64;
constexpr std::size_t vectors_k = 50'000;

struct search_result_t {
    float distance = std::numeric_limits<float>::max();
    std::size_t index = std::numeric_limits<std::size_t>::max();
};

/**  The nearer result; equal distances go to the lower index, so any split of the scan gives the same answer. */
search_result_t pick_best(search_result_t a, search_result_t b) noexcept {
    return a.distance < b.distance || (a.distance == b.distance && a.index < b.index) ? a : b;
}

float squared_distance(float const *a, float const *b) noexcept {
    float sum = 0;
    for (std::size_t i = 0; i != dimensions_k; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
    return sum;
}

/**  Deterministic pseudo-random vector `index` (the "incoming stream"): the same on every run and machine. */
void make_vector(std::size_t index, float *out) noexcept {
    std::uint32_t state = static_cast<std::uint32_t>(index) * 2654435761u + 12345u;
    for (std::size_t i = 0; i != dimensions_k; ++i) {
        state = state * 1664525u + 1013904223u;
        out[i] = static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
    }
}

/**  The vectors of one compute domain, on its memory node: global indices [first, first + count). */
struct shard_t {
    float *vectors = nullptr;
    std::size_t first = 0, count = 0, capacity = 0;
    bool placed = false; // whether the kernel bound the pages to the domain's node
};

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 1,
                    "[SYSFS_ROOT]\nNUMA vector search over a distributed pool, checked against a serial scan, on "
                    "this machine\nor on a recorded one (SYSFS_ROOT/sys/devices/system/...). Reads no environment "
                    "variable.\n");
    fu::machine_topology_t topology;
    bool const recorded = argc > 1;
    if (recorded && !topology.try_harvest_from_sysfs(argv[1]))
        return std::fprintf(stderr, "no usable CPU found under %s/sys/devices/system/cpu\n", argv[1]), EXIT_FAILURE;
    if (!recorded && !topology.try_harvest()) std::printf("no topology harvested: one domain of the allowed cores\n");
    std::size_t const domains = topology.compute_domains_count();

    // At least one thread per domain, at most the allowed cores (or one per domain on a recorded machine).
    std::size_t const threads = domains > fu::allowed_cores_count() ? domains : fu::allowed_cores_count();
    fu::distributed_pool_t pool;
    if (fu::status_t const spawned = pool.spawn(topology, threads); !spawned)
        return std::fprintf(stderr, "spawn refused: %s\n", spawned.name()), EXIT_FAILURE;

    // Shard d holds exactly the tasks `for_slices` gives domain d's threads: the static blocks of its threads.
    std::vector<shard_t> shards(domains);
    for (std::size_t d = 0; d != domains; ++d) {
        std::size_t const first_thread = pool.first_thread_in(d), last_thread = first_thread + pool.threads_count_in(d);
        shard_t &shard = shards[d];
        shard.first = fu::static_slice(vectors_k, threads, first_thread).first;
        auto const last = fu::static_slice(vectors_k, threads, last_thread - 1);
        shard.count = last.first + last.count - shard.first;
        fu::domain_allocator_t<float> const local(topology, topology.local_memory_of(d));
        auto allocation = local.try_allocate_at_least(shard.count * dimensions_k);
        shard.placed = static_cast<bool>(allocation.status);
        if (!allocation.status) // the running machine lacks the node (a recorded topology): take pages anywhere
            allocation = fu::domain_allocator_t<float>().try_allocate_at_least(shard.count * dimensions_k);
        if (!allocation.status) return std::fprintf(stderr, "no memory: %s\n", allocation.status.name()), EXIT_FAILURE;
        shard.vectors = allocation.ptr, shard.capacity = allocation.count;
        // Written by the domain's own threads in a real program; the caller fills them here for brevity.
        for (std::size_t i = 0; i != shard.count; ++i) make_vector(shard.first + i, shard.vectors + i * dimensions_k);
    }
    float query[dimensions_k];
    make_vector(vectors_k + 1, query);

    // The search: each thread scans its slice of its own domain's shard, then merges under one spin mutex.
    search_result_t result;
    fu::spin_mutex_t result_mutex;
    if (!pool.for_slices(vectors_k,
                         [&](fu::distributed_pool_t::prong_t first, std::size_t count) noexcept {
                             shard_t const &shard = shards[first.compute_domain];
                             search_result_t local;
                             for (std::size_t i = first.task - shard.first, end = i + count; i != end; ++i)
                                 local = pick_best(local, {squared_distance(query, shard.vectors + i * dimensions_k),
                                                           shard.first + i});
                             std::lock_guard<fu::spin_mutex_t> lock(result_mutex);
                             result = pick_best(result, local);
                         })
             .join())
        return EXIT_FAILURE;

    // The serial scan it must agree with, over freshly generated vectors.
    search_result_t serial;
    float vector[dimensions_k];
    for (std::size_t i = 0; i != vectors_k; ++i) {
        make_vector(i, vector);
        serial = pick_best(serial, {squared_distance(query, vector), i});
    }

    std::size_t placed = 0;
    for (shard_t const &shard : shards) placed += shard.placed;
    std::printf("%s: %zu compute domains, %zu threads (%zu unpinned), %zu of %zu shards on their node\n",
                recorded ? argv[1] : "the live machine", domains, threads, pool.unpinned_threads_count(), placed,
                domains);
    std::printf("nearest: vector %zu at %.4f; serial scan: vector %zu at %.4f\n", result.index, result.distance,
                serial.index, serial.distance);
    pool.terminate();
    for (shard_t const &shard : shards) fu::domain_allocator_t<float>().deallocate(shard.vectors, shard.capacity);
    return result.index == serial.index && result.distance == serial.distance ? EXIT_SUCCESS : EXIT_FAILURE;
}
