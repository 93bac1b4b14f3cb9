/**
 *  @file   fabric.cpp
 *  @brief  The measured fabric of this machine, next to baselines anyone would write by hand: a pointer chase over a
 *          shuffled cycle in a plain buffer (on 4 KiB pages, and on transparent huge pages like the fabric's), and
 *          one thread's `memcpy`, over the same number of bytes as the fabric's buffers.
 *
 *  Usage: `forkunion_bench_fabric` (no arguments). Settings (read once, like every benchmark's; a bad value exits with
 *  status 1):
 *  - FORKUNION_THREADS: the pool the fabric pins, per compute domain (default: all allowed cores);
 *  - FORKUNION_SEED: the seed of the fabric's random cycles and of the baseline's shuffle;
 *  - FORKUNION_TIME_LIMIT: when set, each of the fabric's 5 latency windows lasts a fifth of it (default 20 ms
 *    each), and each baseline walk as long;
 *  - FORKUNION_FABRIC_BUFFER_MIB (our extension): the buffer per memory domain in MiB; 0 or unset = the fabric's
 *    rule (4 x the largest cache, 64 MiB to 1 GiB).
 *  FORKUNION_WARMUP is read but unused: the fabric warms itself up (half a cycle before each walk, one unmeasured
 *  streaming pass), and so do the baselines (one lap, one copy).
 *
 *  Prints a table per edge and the baselines, then one `RESULT` row each. Ratios, not the absolute figures, are
 *  what transfers between runs on a shared VM.
 */
#include <algorithm> // `std::shuffle`, `std::sort`
#include <cstdio>    // `std::printf`
#include <cstdlib>   // `std::aligned_alloc`
#include <cstring>   // `std::memcpy`
#include <numeric>   // `std::iota`
#include <random>    // `std::mt19937_64`

#include <sys/mman.h> // `madvise`
#include <time.h>     // `clock_gettime`

#include "harness.hpp"

namespace fu = forkunion;
namespace fub = forkunion::bench;

namespace {

std::uint64_t clock_ns(clockid_t clock) noexcept {
    timespec now{};
    ::clock_gettime(clock, &now);
    return std::uint64_t(now.tv_sec) * 1'000'000'000ull + std::uint64_t(now.tv_nsec);
}

/**  Nanoseconds per load of a plain index chase over `bytes` of 128-byte nodes linked in shuffled order, from the
 *  calling (unpinned) thread: one lap to settle, then the median of 5 windows of `window_ns` thread CPU time. */
double baseline_chase_ns(std::size_t bytes, bool huge_pages, std::uint32_t seed, std::uint64_t window_ns) {
    struct alignas(128) node_t {
        std::uint32_t next;
    };
    std::size_t const count = bytes / sizeof(node_t), huge = std::size_t(2) << 20;
    std::size_t const rounded = (count * sizeof(node_t) + huge - 1) / huge * huge;
    auto *nodes = static_cast<node_t *>(std::aligned_alloc(huge, rounded));
    if (!nodes) fub::fail(fub::exit_unavailable_k, "baseline chase: %zu bytes could not be allocated", rounded);
    if (huge_pages)
        (void)::madvise(nodes, rounded, MADV_HUGEPAGE);
    else
        (void)::madvise(nodes, rounded, MADV_NOHUGEPAGE);
    std::vector<std::uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    for (std::size_t i = 0; i != count; ++i) nodes[order[i]].next = order[(i + 1) % count];
    std::uint32_t at = order[0];
    for (std::size_t i = 0; i != count; ++i) at = nodes[at].next;
    std::vector<double> windows;
    for (int window = 0; window != 5; ++window) {
        std::uint64_t const start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        std::uint64_t loads = 0, now = start;
        do {
            for (int i = 0; i != 1024; ++i) at = nodes[at].next;
            loads += 1024;
            now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        } while (now - start < window_ns);
        windows.push_back(double(now - start) / double(loads));
    }
    if (at >= count) fub::fail(fub::exit_check_failed_k, "baseline chase left its cycle"); // consumes the walk
    std::free(nodes);
    return fub::median(windows);
}

/**  Bytes per second one thread copies with `memcpy` over `bytes`: the best of 3 copies after a warm-up copy. */
double baseline_memcpy_bytes_per_second(std::size_t bytes) {
    std::vector<char> from(bytes, 1), to(bytes, 2);
    double best = 0;
    for (int copy = 0; copy != 4; ++copy) {
        std::uint64_t const start = clock_ns(CLOCK_MONOTONIC);
        std::memcpy(to.data(), from.data(), bytes);
        double const rate = double(bytes) / (double(clock_ns(CLOCK_MONOTONIC) - start) * 1e-9);
        if (copy && rate > best) best = rate;
        from[std::size_t(copy)] = to[bytes - 1 - std::size_t(copy)]; // each copy feeds the next: none is elided
    }
    return best;
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nThe measured fabric of this machine next to a plain pointer chase and memcpy.\n"
                    "  FORKUNION_FABRIC_BUFFER_MIB  the buffer per memory domain in MiB; 0 or unset: 4 x the largest "
                    "cache,\n"
                    "                               64 MiB to 1 GiB\n"
                    "  FORKUNION_TIME_LIMIT         when set, each of the 5 latency windows lasts a fifth of "
                    "it\n" FORKUNION_BENCH_SETTINGS_USAGE);
    fub::machine_t const machine = fub::machine_t::harvest();
    fub::settings_t const settings = fub::read_settings({"forkunion_static_shared"}, machine.cpus.size());
    std::size_t buffer_mib = 0;
    fub::detail::read_count("FORKUNION_FABRIC_BUFFER_MIB", 0, 1u << 20, buffer_mib);
    fub::print_banner("fabric", settings, machine);

    fu::machine_topology_t topology;
    if (!topology.try_harvest()) std::printf("# topology: nothing harvested, one domain of the allowed cores\n");
    fu::flat_pool_t pool;
    if (fu::status_t const spawned = pool.spawn(settings.threads); !spawned)
        fub::fail(fub::exit_unavailable_k, "a pool of %zu threads could not spawn: %s", settings.threads,
                  spawned.name());
    fu::fabric_options_t options;
    options.seed = settings.seed;
    options.buffer_bytes = buffer_mib << 20;
    if (settings.time_limit_is_set) {
        std::uint64_t const limit_ns = static_cast<std::uint64_t>(settings.time_limit.count());
        options.latency_window_ns = std::max<std::uint64_t>(limit_ns / options.repeats, 1000);
    }
    fu::fabric_t fabric;
    std::uint64_t const start = clock_ns(CLOCK_MONOTONIC);
    if (fu::status_t const harvested = fabric.try_harvest(topology, pool, options); !harvested)
        fub::fail(fub::exit_unavailable_k, "the fabric harvest failed: %s", harvested.name());
    double const harvest_seconds = double(clock_ns(CLOCK_MONOTONIC) - start) * 1e-9;
    pool.terminate();

    std::printf("# fabric: %zu x %zu edges (%zu reached) over %zu MiB buffers, harvested in %.2f s; %zu memory "
                "level%s\n",
                fabric.compute_domains_count(), fabric.memory_domains_count(), fabric.reached_edges_count(),
                fabric.buffer_bytes() >> 20, harvest_seconds, fabric.memory_levels_count(),
                fabric.memory_levels_count() == 1 ? "" : "s");
    std::printf("# %7s %7s %11s %10s %7s %8s %5s\n", "compute", "memory", "latency ns", "GB/s", "readers", "distance",
                "level");
    for (std::size_t c = 0; c != fabric.compute_domains_count(); ++c)
        for (std::size_t m = 0; m != fabric.memory_domains_count(); ++m)
            std::printf("# %7zu %7zu %11.1f %10.2f %7zu %8zu %5zu\n", c, m, fabric.memory_latency_ns(c, m),
                        fabric.memory_bandwidth_bytes_per_second(c, m) / 1e9, fabric.edge(c, m).readers,
                        fabric.memory_distance(c, m), fabric.memory_level_in(m));

    std::uint64_t const window_ns = options.latency_window_ns;
    double const chase_4k_ns = baseline_chase_ns(fabric.buffer_bytes(), false, settings.seed, window_ns);
    double const chase_thp_ns = baseline_chase_ns(fabric.buffer_bytes(), true, settings.seed, window_ns);
    double const copy_rate = baseline_memcpy_bytes_per_second(fabric.buffer_bytes());
    std::size_t const c = 0, m = topology.local_memory_of(0);
    double const latency = fabric.memory_latency_ns(c, m), bandwidth = fabric.memory_bandwidth_bytes_per_second(c, m);
    std::printf("# baselines over %zu MiB from the unpinned main thread; local edge %zu -> %zu for the ratios:\n",
                fabric.buffer_bytes() >> 20, c, m);
    std::printf("#   shuffled-cycle chase, 4 KiB pages:    %7.1f ns  (fabric / baseline = %.2f)\n", chase_4k_ns,
                latency / chase_4k_ns);
    std::printf("#   shuffled-cycle chase, huge pages:     %7.1f ns  (fabric / baseline = %.2f)\n", chase_thp_ns,
                latency / chase_thp_ns);
    std::printf("#   memcpy, one thread:                   %7.2f GB/s copied, %.2f GB/s moved (read + write); "
                "fabric reads %.2f GB/s with %zu readers (%.2f x the copy rate)\n",
                copy_rate / 1e9, 2 * copy_rate / 1e9, bandwidth / 1e9, fabric.edge(c, m).readers,
                bandwidth / copy_rate);

    for (std::size_t ci = 0; ci != fabric.compute_domains_count(); ++ci)
        for (std::size_t mi = 0; mi != fabric.memory_domains_count(); ++mi)
            fub::result_row_t("fabric")
                .add("row", "edge")
                .add("compute", std::uint64_t(ci))
                .add("memory", std::uint64_t(mi))
                .add("node", std::uint64_t(topology.memory_node_id(mi)))
                .add("latency_ns", fabric.memory_latency_ns(ci, mi))
                .add("bandwidth_gbps", fabric.memory_bandwidth_bytes_per_second(ci, mi) / 1e9)
                .add("readers", std::uint64_t(fabric.edge(ci, mi).readers))
                .add("distance", std::uint64_t(fabric.memory_distance(ci, mi)))
                .add("level", std::uint64_t(fabric.memory_level_in(mi)))
                .add("buffer_mib", std::uint64_t(fabric.buffer_bytes() >> 20))
                .print();
    fub::result_row_t("fabric").add("row", "baseline_chase_4k").add("latency_ns", chase_4k_ns).print();
    fub::result_row_t("fabric").add("row", "baseline_chase_huge").add("latency_ns", chase_thp_ns).print();
    fub::result_row_t("fabric").add("row", "baseline_memcpy").add("copy_gbps", copy_rate / 1e9).print();
    fub::result_row_t("fabric")
        .add("row", "harvest")
        .add("seconds", harvest_seconds)
        .add("levels", std::uint64_t(fabric.memory_levels_count()))
        .print();
    return 0;
}
