/**
 *  @file   forkunion/fabric/fabric.hpp
 *  @brief  `fabric_t`: the memory fabric as measured, not as declared: latency and bandwidth of every
 *          compute→memory edge, the distances they imply, and the memory levels (tiers) of the media.
 *
 *  A `machine_topology_t` says what the firmware declares (domains, cores, SLIT distances). A fabric says what the
 *  silicon does: it pins the workers of a spawned pool to each compute domain in turn and measures every memory
 *  domain from there. Memory levels rank the media (HBM, DDR, CXL); distances compare the edges of one compute
 *  domain.
 *
 *  @code
 *  fu::machine_topology_t topology;
 *  (void)topology.try_harvest();
 *  fu::flat_pool_t pool;
 *  if (!pool.spawn(topology.allowed_cores_count())) return;
 *  fu::fabric_t fabric;
 *  if (fu::status_t status = fabric.try_harvest(topology, pool); !status) std::puts(status.name());
 *  for (std::size_t m = 0; m != topology.memory_domains_count(); ++m)
 *      use(fabric.memory_latency_ns(0, m), fabric.memory_bandwidth_bytes_per_second(0, m),
 *          fabric.memory_distance(0, m), fabric.memory_level_in(m));
 *  @endcode
 *
 *  @section use When to use it, and when not
 *  Harvest once, at start-up, to decide where data should live (which tier, which replica) and to report the
 *  machine. It costs seconds and gigabytes of memory traffic (see "Cost"): never harvest on a path that must be
 *  fast, and do not treat its figures as a benchmark of record (they come from a few short windows, on a
 *  machine that other work may share). Its figures are plain `double`s in base units: nanoseconds and bytes per
 *  second.
 *
 *  @section method What is measured, per edge (compute domain c → memory domain m)
 *  - **Buffer.** Memory domain m gets one buffer of `chase_node_t`s (one per `fabric_node_bytes_k` = 128 bytes:
 *    the pair of 64-byte lines x86's spatial prefetcher fetches together, so a prefetched neighbour is never the
 *    next node), allocated with `basic_domain_allocator_t` bound to m's node (`mbind(MPOL_BIND)` on Linux: every
 *    page lives on m, whoever touches it). Its size is `fabric_options_t::buffer_bytes`, by default 4× the
 *    largest cache of any compute domain (`compute_cache_bytes_in`), at least 64 MiB, at most 1 GiB, and at most
 *    a quarter of m's RAM where that is known: a random walk over 4× the last-level cache misses it on all but a
 *    few percent of loads. Transparent huge pages are requested before the first touch (on Linux, advice only).
 *  - **Build.** One worker pinned to m's home compute domain (the first whose local memory is m, else the first
 *    one that could be pinned) first-touches the buffer and links it into one random cycle with Sattolo's
 *    algorithm: node i points to node σ(i), σ a uniformly random cyclic permutation, so every walk visits all
 *    nodes before it repeats one and no prefetcher can guess the next address. The buffer then serves every
 *    compute domain, and is freed before the next memory domain's is built (one buffer exists at a time).
 *  - **Placement.** For each compute domain c, pool thread t < min(threads, cores of c) is pinned to the t-th core
 *    of c, alone (`try_pin_current_thread`). A thread whose pin is refused sits out, and so do threads beyond the
 *    core count. The threads that were pinned are the edge's `readers`; none means the edge is unreachable.
 *  - **Bandwidth.** The readers meet at a spin barrier, then each streams its static slice of the buffer (64-bit
 *    words summed into 16 independent accumulators, which compilers vectorize and cannot elide: the sum is
 *    published). One pass = buffer bytes ÷ (last end − first start), on the monotonic clock, because the readers
 *    must overlap; one unmeasured pass, then `repeats` passes. The edge keeps the best pass, like STREAM: other
 *    processes and the scheduler only ever slow a pass down.
 *  - **Latency.** The first reader walks half the cycle unmeasured (so the walk's own misses evict what the build
 *    or the streams left in the caches), then walks `repeats` windows of `latency_window_ns` each, timed by the
 *    walker's own CPU clock (time it spends descheduled is not memory latency; a load stalled on memory is CPU
 *    time); a window's latency is its time ÷ its dependent loads. The edge keeps the median.
 *  The workers' masks are saved before the first pin and restored at the end, whatever happened in between.
 *
 *  @section derived What is derived (pure functions over the edge table, unit-tested on synthetic edges)
 *  - `memory_distance(c, m)`, ACPI SLIT's scale from measured ratios: 10 × latency(c, m) ÷ reference latency of c,
 *    rounded, clamped to [10, 254]. The reference is the edge to `local_memory_of(c)`, or the fastest reached edge
 *    of c if that one is unreachable. So the local edge reads 10, a remote edge 1.6× slower reads 16, and a medium
 *    faster than local memory reads 10 too (SLIT reserves values below 10). 0 where the edge was not reached
 *    (SLIT's 255 is never produced: 0 means "unknown" in every query, as in `machine_topology_t`).
 *  - Memory levels, a property of the medium, independent of the querying core: each memory domain's key is the
 *    best bandwidth any compute domain reached it with, then the best latency. Domains are grouped greedily: the
 *    best remaining bandwidth anchors a bandwidth class of every remaining domain within `bandwidth_tolerance` of
 *    it (anchor ≤ bandwidth × (1 + tolerance): anchored, so a chain of small steps cannot merge far-apart media);
 *    inside a class, the lowest remaining latency anchors a level of every domain within `latency_tolerance` of
 *    it; levels are numbered densely from 0 in that order. So HBM outranks DDR even at equal (or worse) latency,
 *    CPU-less CXL falls below DDR, equal DDR nodes of two sockets share a level, and memory levels grow with
 *    distance (0 = fastest medium). A memory domain that no compute domain reached has no level.
 *
 *  @section queries Queries
 *  Every query is `const`, `noexcept`, allocation-free and O(1). Before a harvest every query reads 0. After one:
 *  an index out of range reads 0; an unreachable edge reads 0 latency, 0 bandwidth, distance 0; and
 *  `memory_level_in(m)` reads a level in `[0, memory_levels_count())` for a reached memory domain and exactly
 *  `memory_levels_count()` for any other (unreached or out of range) — the same rule that makes it read 0 before
 *  a harvest. So `memory_level_in(m) < memory_levels_count()` tests "has a level" and never aliases a real one.
 *
 *  @section failure Failure and partial harvests
 *  `try_harvest` measures what it can. A pin refused for a core this process may not use (or that this machine
 *  lacks, on a recorded topology) and a buffer the OS refuses to bind (a node that does not exist or has no
 *  memory) make edges unreachable, counted by `unreachable_edges_count()`, `pinning_refusals_count()` and
 *  `binding_refusals_count()`; the harvest still succeeds if at least one edge was measured. It fails, leaving
 *  the fabric exactly as it was, with `invalid_argument` (options out of range), `not_spawned` (the pool has no
 *  threads), `bad_alloc` (the tables), `contended` (the pool refused a dispatch: another thread dispatched on it,
 *  or the harvest runs inside one of its callbacks), or `placement_refused` (no edge at all could be measured).
 *  Where the platform cannot pin at all (`detail::portable_fabric_platform_t`), a topology of one compute domain is
 *  measured where the threads run; a larger one is refused.
 *
 *  @section threads Threads, memory order and lifetime
 *  `try_harvest` blocks; call it from the thread that controls the pool (the one that may dispatch on it), never
 *  concurrently with queries of the same fabric, with another harvest, or with other dispatches on the pool. It
 *  dispatches on the pool (`for_threads`) and relies only on what a dispatch guarantees: what the caller wrote
 *  before it is visible to every thread, and what the threads wrote is visible after its join. The single atomic
 *  counter it adds (the readers' start barrier) orders nothing and is relaxed. On a caller-inclusive pool the
 *  caller is thread 0: it is pinned too, and its mask restored. Between harvests a fabric is immutable: any
 *  number of threads may query it. Copies and moves are like `std::vector`'s.
 *
 *  @section cost Cost
 *  One buffer per memory domain (allocated, first-touched and linked: ~1-2 s for 1 GiB here), and per edge one
 *  warm-up walk of half the cycle plus `repeats` latency windows and `repeats + 1` streaming passes: about 1-3 s
 *  per edge with the defaults on a 2-vCPU KVM guest of a Xeon, ~40-80 ms per edge with `fabric_options_t::quick()`.
 *
 *  @section backends Back ends
 *  `basic_fabric_t<platform_t>` takes its pinning, placement and clock from a platform, one per OS in its own header:
 *  `detail::linux_fabric_platform_t` (`fabric_linux.hpp`), `detail::windows_fabric_platform_t`
 *  (`fabric_windows.hpp`) or `detail::portable_fabric_platform_t` (`fabric_portable.hpp`); `fabric_platform_t`
 *  picks the one for this OS, and `fabric_t` uses it.
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`, `std::uintptr_t`

#include <forkunion/topology/affinity.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/base/array.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>
#include <forkunion/fabric/deprecated.hpp>

// Only the platform this build uses: the portable one includes `<chrono>` (~50 ms per translation unit).
#include <forkunion/fabric/detail/fabric_linux.hpp>
#include <forkunion/fabric/detail/fabric_portable.hpp>
#include <forkunion/fabric/detail/fabric_windows.hpp>

namespace forkunion {

#if FORKUNION_OS_LINUX
using fabric_platform_t = detail::linux_fabric_platform_t;
#elif FORKUNION_OS_WINDOWS
using fabric_platform_t = detail::windows_fabric_platform_t;
#else
using fabric_platform_t = detail::portable_fabric_platform_t;
#endif

/**
 *  @brief  Bytes of one node of the pointer chase, and the alignment of the buffers: `default_alignment_k`, the
 *          destructive-interference unit (x86's spatial prefetcher fetches 64-byte lines in aligned pairs, Apple
 *          cores have 128-byte lines, s390x 256-byte ones), so a line pulled in beside a node is never another one.
 */
inline constexpr std::size_t fabric_node_bytes_k = default_alignment_k;

/**  @brief  ACPI SLIT's distance of a locality from itself, and the largest finite distance it allows. */
inline constexpr std::size_t local_memory_distance_k = 10;
inline constexpr std::size_t max_memory_distance_k = 254;

/**
 *  @brief  How a fabric harvest measures. Every field has a default; `quick()` is the short form for tests and
 *          smoke runs. A plain value: copy it and change what you need.
 */
struct fabric_options_t {
    /**  Bytes of each memory domain's buffer; 0 picks `cache_multiple` × the largest `compute_cache_bytes_in`,
     *  clamped to [`min_buffer_bytes`, `max_buffer_bytes`]. Either way rounded down to whole nodes (at least 2)
     *  and capped at a quarter of the memory domain's RAM where the topology knows it. */
    std::size_t buffer_bytes = 0;
    /**  4× the last-level cache: a random walk over it misses the cache on ~75% of loads even if the cache kept
     *  lines at random, and on nearly all with the LRU-like policies of real last-level caches. */
    std::size_t cache_multiple = 4;
    /**  64 MiB: above the last-level cache of most client CPUs when the topology reports no cache at all. */
    std::size_t min_buffer_bytes = std::size_t(64) << 20;
    /**  1 GiB: keeps one buffer's first touch and linking within ~1-2 s per memory domain (4-7 µs per 4 KiB page
     *  on a 2-vCPU KVM guest of a Xeon) on machines whose last-level caches reach hundreds of MiB (such guests
     *  report 300 MiB). */
    std::size_t max_buffer_bytes = std::size_t(1) << 30;
    /**  Measured windows per edge for latency (the edge keeps the median: odd, so it is one of them), and measured
     *  streaming passes for bandwidth (the edge keeps the best). At least 1. */
    std::size_t repeats = 5;
    /**  Duration of one latency window: 20 ms is ~200,000 dependent loads at DRAM latency, enough to average out
     *  one scheduler tick of interference. At least 1 µs. */
    std::uint64_t latency_window_ns = 20'000'000;
    /**  Seed of the random cycles (SplitMix64); each memory domain derives its own. */
    std::uint64_t seed = 42;
    /**  Ask for transparent huge pages on each buffer before its first touch (Linux `MADV_HUGEPAGE`, advice only):
     *  without them a random walk over 1 GiB of 4 KiB pages misses the TLB on nearly every load, and the latency
     *  measured includes a page walk (two-dimensional under virtualization). */
    bool transparent_huge_pages = true;
    /**  Memory levels: media whose best bandwidths lie within this fraction of the class anchor share a
     *  bandwidth class. 25%: real tiers differ by 1.5× or more (HBM 2-5× DDR; CXL 0.3-0.6× DDR), while repeated
     *  harvests on a shared VM drift by up to ~15%. */
    double bandwidth_tolerance = 0.25;
    /**  Memory levels: inside a bandwidth class, media whose best latencies lie within this fraction of the
     *  level anchor share a level. 25%: CXL adds 70-150 ns to DDR's ~100 ns; noise stays within ~15% here. */
    double latency_tolerance = 0.25;

    /**  @brief  The short form for tests and smoke runs: a 64 MiB buffer (whatever the caches), 3 repeats of
     *          1 ms windows. Where the last-level cache holds 64 MiB, its latencies are the cache's. (Not smaller:
     *          a 2-vCPU KVM guest of a Xeon reports a 300 MiB L3 but serves only ~12-16 MiB of it at cache latency, and
     *          a buffer at such a knee gives 40 ns one run and 130 ns the next.) */
    static constexpr fabric_options_t quick() noexcept {
        fabric_options_t options;
        options.buffer_bytes = std::size_t(64) << 20;
        options.repeats = 3;
        options.latency_window_ns = 1'000'000;
        return options;
    }

    /**  @brief  Whether every field is in range: at least 1 repeat, a window of at least 1 µs, a non-zero
     *          multiple and maximum, `min_buffer_bytes <= max_buffer_bytes`, finite non-negative tolerances. */
    constexpr bool valid() const noexcept {
        auto const is_tolerance = [](double value) { return value >= 0 && value <= 1e6; }; // false for NaN
        return repeats >= 1 && latency_window_ns >= 1000 && cache_multiple >= 1 && max_buffer_bytes >= 1 &&
               min_buffer_bytes <= max_buffer_bytes && is_tolerance(bandwidth_tolerance) &&
               is_tolerance(latency_tolerance);
    }
};

/**  @brief  One measured compute→memory edge. All zero when the edge was not reached. */
struct fabric_edge_t {
    double latency_ns = 0;                 ///< Median nanoseconds per dependent load.
    double bandwidth_bytes_per_second = 0; ///< Best pass of all readers streaming together.
    std::size_t readers = 0;               ///< Threads pinned to the compute domain that streamed in parallel.
    std::size_t buffer_bytes = 0;          ///< Bytes of the buffer walked and streamed.

    /**  @brief  Whether the edge was measured: both figures positive. */
    constexpr bool reached() const noexcept { return latency_ns > 0 && bandwidth_bytes_per_second > 0; }
};

/**  @brief  A memory domain as a medium: the best its edges showed from any compute domain; zeros if none. */
struct memory_medium_t {
    double bandwidth_bytes_per_second = 0; ///< The largest bandwidth of any reached edge into the domain.
    double latency_ns = 0;                 ///< The smallest latency of any reached edge into the domain.
};

// ---- The measurement kernels ----

/**
 *  @brief  One node of the pointer chase: `fabric_node_bytes_k` bytes of pointer-sized words; `words[0]` holds the
 *          address of the next node, the others stay zero and are only streamed.
 */
struct alignas(fabric_node_bytes_k) chase_node_t {
    static constexpr std::size_t words_k = fabric_node_bytes_k / sizeof(std::uintptr_t);
    std::uintptr_t words[words_k];
};
static_assert(sizeof(chase_node_t) == fabric_node_bytes_k, "one node per destructive-interference unit");

/**  @brief  SplitMix64's output function (Steele, Lea, Flood 2014): a bijection that mixes a counter. */
constexpr std::uint64_t fabric_mix(std::uint64_t counter) noexcept {
    std::uint64_t x = (counter + 1) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/**
 *  @brief  Links `nodes[0, count)` into one random cycle with Sattolo's algorithm: afterwards `nodes[i].words[0]`
 *          holds the address of `nodes[σ(i)]`, σ a cyclic permutation drawn uniformly from the `(count - 1)!`
 *          ones, from `seed`. Writes every node in order first, so it is also the buffer's first touch.
 *  @pre    `1 <= count < 2^32`; the nodes are writable. One node links to itself.
 */
inline void link_random_cycle(chase_node_t *nodes, std::size_t count, std::uint64_t seed) noexcept {
    for (std::size_t i = 0; i != count; ++i) nodes[i].words[0] = reinterpret_cast<std::uintptr_t>(nodes + i);
    std::uint64_t const key = fabric_mix(seed);
    // Sattolo: for i = n-1 down to 1, swap a[i] with a[j], j uniform in [0, i) (strictly below i: that is what
    // makes a single cycle instead of any permutation). j = floor(u32 × i / 2^32), a multiply instead of a
    // division; its bias (< i / 2^32) is far below anything a latency measurement can see.
    for (std::size_t i = count - 1; i != 0; --i) {
        std::uint64_t const draw = fabric_mix(key + i) >> 32;
        std::size_t const j = static_cast<std::size_t>((draw * static_cast<std::uint64_t>(i)) >> 32);
        std::uintptr_t const swapped = nodes[i].words[0];
        nodes[i].words[0] = nodes[j].words[0];
        nodes[j].words[0] = swapped;
    }
}

/**  @brief  The node after `node` in its cycle. */
inline chase_node_t const *next_in_chase(chase_node_t const *node) noexcept {
    return reinterpret_cast<chase_node_t const *>(node->words[0]);
}

/**
 *  @brief  Follows `loads` dependent loads from `start` and returns the node reached: each load's address is the
 *          previous load's value, so they cannot overlap. Serial equivalent: `for (i < loads) node = next(node);`
 */
inline chase_node_t const *chase(chase_node_t const *start, std::size_t loads) noexcept {
    chase_node_t const *node = start;
    for (; loads >= 4; loads -= 4) // unrolled only to keep the loop's own overhead off cached (fast) walks
        node = next_in_chase(next_in_chase(next_in_chase(next_in_chase(node))));
    for (; loads; --loads) node = next_in_chase(node);
    return node;
}

/**
 *  @brief  Reads every word of `nodes[0, count)` and returns their sum, through `words_k` independent
 *          accumulators (no loop-carried dependency, so compilers vectorize it). The result must be consumed, or
 *          the reads could be elided.
 */
inline std::uintptr_t stream_read(chase_node_t const *nodes, std::size_t count) noexcept {
    std::uintptr_t sums[chase_node_t::words_k] = {};
    for (std::size_t i = 0; i != count; ++i)
        for (std::size_t k = 0; k != chase_node_t::words_k; ++k) sums[k] += nodes[i].words[k];
    std::uintptr_t total = 0;
    for (std::uintptr_t sum : sums) total += sum;
    return total;
}

// ---- The derivations: pure functions over a table of edges ----

/**
 *  @brief  The best of each memory domain's reached edges, from any compute domain.
 *  @param  edges  `compute_domains × memory_domains` edges, row-major: edge (c, m) at `c * memory_domains + m`.
 *  @param  media  Out: `memory_domains` entries; zeros for a domain that no edge reached.
 */
inline void summarize_memory_media(fabric_edge_t const *edges, std::size_t compute_domains, std::size_t memory_domains,
                                   memory_medium_t *media) noexcept {
    for (std::size_t m = 0; m != memory_domains; ++m) media[m] = memory_medium_t{};
    for (std::size_t c = 0; c != compute_domains; ++c)
        for (std::size_t m = 0; m != memory_domains; ++m) {
            fabric_edge_t const &edge = edges[c * memory_domains + m];
            if (!edge.reached()) continue;
            memory_medium_t &medium = media[m];
            if (edge.bandwidth_bytes_per_second > medium.bandwidth_bytes_per_second)
                medium.bandwidth_bytes_per_second = edge.bandwidth_bytes_per_second;
            if (medium.latency_ns == 0 || edge.latency_ns < medium.latency_ns) medium.latency_ns = edge.latency_ns;
        }
}

/**
 *  @brief  Dense memory levels of the media (see the file comment for the rule): bandwidth classes anchored on
 *          the best remaining bandwidth, split into levels anchored on the best remaining latency.
 *  @param  media   `memory_domains` media, as `summarize_memory_media` returns; a medium with no bandwidth or no
 *                  latency was not reached.
 *  @param  levels  Out: `memory_domains` levels; `[0, L)` for reached media, exactly L for the others.
 *  @return L, the number of levels (0 if no medium was reached). O(memory_domains × L), no allocation.
 */
inline std::size_t derive_memory_levels(memory_medium_t const *media, std::size_t memory_domains,
                                        double bandwidth_tolerance, double latency_tolerance,
                                        std::size_t *levels) noexcept {
    constexpr std::size_t unranked_k = ~std::size_t(0), unreached_k = ~std::size_t(0) - 1;
    for (std::size_t m = 0; m != memory_domains; ++m)
        levels[m] = media[m].bandwidth_bytes_per_second > 0 && media[m].latency_ns > 0 ? unranked_k : unreached_k;
    std::size_t level = 0;
    for (;;) {
        double anchor_bandwidth = 0;
        for (std::size_t m = 0; m != memory_domains; ++m)
            if (levels[m] == unranked_k && media[m].bandwidth_bytes_per_second > anchor_bandwidth)
                anchor_bandwidth = media[m].bandwidth_bytes_per_second;
        if (anchor_bandwidth == 0) break;
        auto const in_class = [&](std::size_t m) noexcept {
            return levels[m] == unranked_k &&
                   anchor_bandwidth <= media[m].bandwidth_bytes_per_second * (1 + bandwidth_tolerance);
        };
        for (;;) {
            double anchor_latency = 0;
            for (std::size_t m = 0; m != memory_domains; ++m)
                if (in_class(m) && (anchor_latency == 0 || media[m].latency_ns < anchor_latency))
                    anchor_latency = media[m].latency_ns;
            if (anchor_latency == 0) break; // the class is exhausted (its anchor always joins, so this ends)
            for (std::size_t m = 0; m != memory_domains; ++m)
                if (in_class(m) && media[m].latency_ns <= anchor_latency * (1 + latency_tolerance)) levels[m] = level;
            ++level;
        }
    }
    for (std::size_t m = 0; m != memory_domains; ++m)
        if (levels[m] == unreached_k) levels[m] = level;
    return level;
}

/**
 *  @brief  Measured SLIT distances of every edge (see the file comment): 10 × latency ÷ the compute domain's
 *          reference latency, rounded and clamped to [10, 254]; 0 for unreached edges.
 *  @param  edges         As for `summarize_memory_media`.
 *  @param  local_memory  `compute_domains` entries: `local_memory_of(c)`; an index `>= memory_domains` (or an
 *                        unreached local edge) makes the fastest reached edge of c the reference.
 *  @param  distances     Out: `compute_domains × memory_domains`, row-major like `edges`.
 */
inline void derive_memory_distances(fabric_edge_t const *edges, std::size_t compute_domains, std::size_t memory_domains,
                                    std::size_t const *local_memory, std::uint8_t *distances) noexcept {
    for (std::size_t c = 0; c != compute_domains; ++c) {
        fabric_edge_t const *row = edges + c * memory_domains;
        double reference = 0;
        if (local_memory[c] < memory_domains && row[local_memory[c]].reached())
            reference = row[local_memory[c]].latency_ns;
        else
            for (std::size_t m = 0; m != memory_domains; ++m)
                if (row[m].reached() && (reference == 0 || row[m].latency_ns < reference))
                    reference = row[m].latency_ns;
        for (std::size_t m = 0; m != memory_domains; ++m) {
            std::uint8_t &distance = distances[c * memory_domains + m];
            if (!row[m].reached()) {
                distance = 0;
                continue;
            }
            double const scaled = double(local_memory_distance_k) * row[m].latency_ns / reference + 0.5;
            distance =
                static_cast<std::uint8_t>(scaled < double(local_memory_distance_k) ? local_memory_distance_k
                                          : scaled > double(max_memory_distance_k) ? max_memory_distance_k
                                                                                   : static_cast<std::size_t>(scaled));
        }
    }
}

/**  @brief  What a fabric harvest needs from a pool: a thread count and `for_threads` (any `basic_pool_t`). */
template <typename pool_type_>
concept fabric_pool = requires(pool_type_ &pool, void (*fn)(std::size_t) noexcept) {
    static_cast<std::size_t>(pool.threads_count());
    pool.for_threads(fn);
};

/**
 *  @brief  The measured memory fabric. See the file comment for the method, the derived quantities, the
 *          contract of every query and the threads that may call what.
 *  @tparam platform_type_  Pinning, placement and clock: `detail::linux_fabric_platform_t` or
 *  `detail::portable_fabric_platform_t`.
 */
template <typename platform_type_ = fabric_platform_t>
class basic_fabric_t {
public:
    using platform_t = platform_type_;
    using affinity_t = typename platform_t::affinity_t;
    using memory_t = typename platform_t::memory_t;

private:
    detail::array_t<fabric_edge_t> edges_;    ///< `compute_domains_ × memory_domains_`, row-major.
    detail::array_t<std::uint8_t> distances_; ///< The same shape; 0 = unreached.
    detail::array_t<std::size_t> levels_;     ///< `memory_domains_`; `levels_count_` = no level.
    detail::array_t<memory_medium_t> media_;  ///< `memory_domains_`: the best edge into each.
    std::size_t compute_domains_ = 0;
    std::size_t memory_domains_ = 0;
    std::size_t levels_count_ = 0;
    std::size_t reached_edges_ = 0;
    std::size_t pinning_refusals_ = 0;
    std::size_t binding_refusals_ = 0;
    std::size_t buffer_bytes_ = 0;

    /**  One pool thread's state during a harvest, on its own lines: written by that thread inside dispatches,
     *  read by the caller after their joins. */
    struct alignas(default_alignment_k) thread_state_t {
        basic_saved_affinity_t<affinity_t> saved;
        std::uint64_t start_ns = 0;
        std::uint64_t end_ns = 0;
        std::uintptr_t sink = 0; ///< What a stream or walk computed: stored, so the reads cannot be elided.
        status_t pinned{status_code_t::invalid_argument_k};
    };

    /**  The scratch of one harvest, allocated up front so that nothing allocates once threads are pinned. */
    struct scratch_t {
        detail::array_t<thread_state_t> threads;
        detail::array_t<double> samples;
        detail::array_t<std::size_t> local_memory;
        detail::array_t<std::size_t> rank_of; ///< Rank of each thread among the readers of the current domain.
    };

    fabric_edge_t const *edge_(std::size_t c, std::size_t m) const noexcept {
        return c < compute_domains_ && m < memory_domains_ ? &edges_[c * memory_domains_ + m] : nullptr;
    }

    /**  Runs `fn(thread)` on every pool thread and joins; the dispatch's refusal status otherwise. */
    template <typename pool_t, typename fn_t>
    static status_t on_every_thread_(pool_t &pool, fn_t &&fn) noexcept {
        return pool.for_threads([&fn](auto thread) noexcept { fn(static_cast<std::size_t>(thread)); }).join();
    }

    /**
     *  Runs `fn(thread)` on the `participants` threads that `takes_part` selects, while every other thread blocks
     *  in the kernel until the last of them finishes: an idle thread spinning in the pool would take CPU time
     *  from the measuring ones wherever cores are shared (other processes, more threads than cores).
     */
    template <typename pool_t, typename takes_part_t, typename fn_t>
    static status_t on_some_threads_(pool_t &pool, std::size_t participants, takes_part_t const &takes_part,
                                     fn_t &&fn) noexcept {
        std::atomic<std::uint32_t> finished{0};
        std::uint32_t const expected = static_cast<std::uint32_t>(participants);
        return on_every_thread_(pool, [&](std::size_t thread) noexcept {
            if (takes_part(thread)) {
                fn(thread);
                // Relaxed: `finished` only lets the others leave the kernel; the dispatch's join publishes data.
                // The wake runs before this callback returns, so `finished` outlives it (the join waits for us).
                if (finished.fetch_add(1, std::memory_order_relaxed) + 1 == expected) kernel_wake_all(finished);
                return;
            }
            // The futex re-checks the word, so a wake between the load and the wait is never lost.
            for (std::uint32_t seen; (seen = finished.load(std::memory_order_relaxed)) != expected;)
                kernel_wait(finished, seen, 0);
        });
    }

    /**  The median of `values[0, count)`, which it sorts (insertion sort: `count` is a handful of repeats). */
    static double median_(double *values, std::size_t count) noexcept {
        for (std::size_t i = 1; i < count; ++i)
            for (std::size_t j = i; j && values[j - 1] > values[j]; --j) {
                double const swapped = values[j];
                values[j] = values[j - 1], values[j - 1] = swapped;
            }
        return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
    }

    /**  The planned buffer: the option, or `cache_multiple` × the largest cache clamped; whole nodes, ≥ 2. */
    template <typename topology_t>
    static std::size_t planned_nodes_(topology_t const &topology, fabric_options_t const &options) noexcept {
        std::size_t bytes = options.buffer_bytes;
        if (!bytes) {
            std::uint64_t largest = 0;
            for (std::size_t c = 0; c != topology.compute_domains_count(); ++c)
                if (std::uint64_t const cache = topology.compute_cache_bytes_in(c); cache > largest) largest = cache;
            std::uint64_t const wanted = largest * options.cache_multiple;
            bytes = wanted < options.min_buffer_bytes   ? options.min_buffer_bytes
                    : wanted > options.max_buffer_bytes ? options.max_buffer_bytes
                                                        : static_cast<std::size_t>(wanted);
        }
        std::size_t nodes = bytes / fabric_node_bytes_k;
        constexpr std::size_t most_nodes_k = std::size_t(0xFFFFFFFFu); // `link_random_cycle` draws 32-bit indices
        return nodes < 2 ? 2 : nodes > most_nodes_k ? most_nodes_k : nodes;
    }

    /**  Pins thread t < min(threads, cores) to the t-th core of compute domain `c`; returns the readers. */
    template <typename topology_t, typename pool_t>
    status_t place_(topology_t const &topology, pool_t &pool, std::size_t c, scratch_t &scratch,
                    std::size_t &readers) noexcept {
        core_ids_t const cores = topology.cores_in(c);
        std::size_t const threads = scratch.threads.size();
        std::size_t const candidates = cores.size() < threads ? cores.size() : threads;
        // Without any pinning, a single compute domain is where the threads run anyway: measure it as is.
        bool const unpinned_is_placed = !affinity_t::supported_k && topology.compute_domains_count() == 1;
        status_t const dispatched = on_every_thread_(pool, [&](std::size_t thread) noexcept {
            thread_state_t &state = scratch.threads[thread];
            if (thread >= candidates) {
                state.pinned = status_code_t::invalid_argument_k; // sits out: no core of its own in this domain
                return;
            }
            std::uint32_t const core = cores[thread];
            state.pinned = try_pin_current_thread<affinity_t>(core_ids_t(&core, 1));
            if (!state.pinned && unpinned_is_placed) state.pinned = status_code_t::success_k;
        });
        if (!dispatched) return dispatched;
        readers = 0;
        for (std::size_t thread = 0; thread != threads; ++thread) {
            if (thread < candidates && !scratch.threads[thread].pinned) ++pinning_refusals_;
            if (scratch.threads[thread].pinned) scratch.rank_of[thread] = readers++;
        }
        return {};
    }

    /**  The best read bandwidth of `readers` threads streaming `nodes` in parallel, into `edge`. */
    template <typename pool_t>
    status_t measure_bandwidth_(pool_t &pool, chase_node_t const *nodes, std::size_t count, std::size_t readers,
                                fabric_options_t const &options, scratch_t &scratch, fabric_edge_t &edge) noexcept {
        std::atomic<std::size_t> arrived{0};
        for (std::size_t pass = 0; pass <= options.repeats; ++pass) { // pass 0 warms the TLBs: not measured
            // Relaxed: the dispatch below publishes the reset to the threads.
            arrived.store(0, std::memory_order_relaxed);
            auto const is_reader = [&](std::size_t thread) noexcept { return !!scratch.threads[thread].pinned; };
            status_t const dispatched = on_some_threads_(pool, readers, is_reader, [&](std::size_t thread) noexcept {
                thread_state_t &state = scratch.threads[thread];
                // A start barrier, only to align start times: relaxed, since the dispatch carries every datum.
                arrived.fetch_add(1, std::memory_order_relaxed);
                default_micro_yield_t micro_yield;
                while (arrived.load(std::memory_order_relaxed) != readers) micro_yield();
                auto const block = static_slice<std::size_t>(count, readers, scratch.rank_of[thread]);
                state.start_ns = platform_t::now_ns();
                state.sink += stream_read(nodes + block.first, block.count);
                state.end_ns = platform_t::now_ns();
            });
            if (!dispatched) return dispatched;
            if (pass == 0) continue;
            std::uint64_t first_start = ~std::uint64_t(0), last_end = 0;
            for (thread_state_t const &state : scratch.threads) {
                if (!state.pinned) continue;
                if (state.start_ns < first_start) first_start = state.start_ns;
                if (state.end_ns > last_end) last_end = state.end_ns;
            }
            double const seconds = double(last_end > first_start ? last_end - first_start : 1) * 1e-9;
            double const bandwidth = double(count * fabric_node_bytes_k) / seconds;
            if (bandwidth > edge.bandwidth_bytes_per_second) edge.bandwidth_bytes_per_second = bandwidth;
        }
        return {};
    }

    /**  The median latency of dependent loads walked by thread `walker`, into `edge`. */
    template <typename pool_t>
    status_t measure_latency_(pool_t &pool, chase_node_t const *nodes, std::size_t count, std::size_t walker,
                              fabric_options_t const &options, scratch_t &scratch, fabric_edge_t &edge) noexcept {
        // Loads between two clock reads: ~50-150 µs at cache and DRAM latencies, against ~0.25 µs per read of the
        // thread's CPU clock (a system call, measured here): the clock adds under 0.5%.
        constexpr std::size_t loads_per_check_k = 1024;
        auto const is_walker = [walker](std::size_t thread) noexcept { return thread == walker; };
        status_t const dispatched = on_some_threads_(pool, 1, is_walker, [&](std::size_t thread) noexcept {
            chase_node_t const *node = chase(nodes, count / 2); // warm-up: see the file comment
            for (std::size_t repeat = 0; repeat != options.repeats; ++repeat) {
                std::uint64_t const start = platform_t::thread_cpu_ns();
                std::uint64_t now = start;
                std::size_t loads = 0;
                do {
                    node = chase(node, loads_per_check_k);
                    loads += loads_per_check_k;
                    now = platform_t::thread_cpu_ns();
                } while (now - start < options.latency_window_ns);
                scratch.samples[repeat] = double(now - start) / double(loads);
            }
            scratch.threads[thread].sink += reinterpret_cast<std::uintptr_t>(node);
        });
        if (!dispatched) return dispatched;
        edge.latency_ns = median_(scratch.samples.data(), options.repeats);
        return {};
    }

    /**  Builds memory domain `m`'s buffer and measures every compute domain's edge to it. */
    template <typename topology_t, typename pool_t>
    status_t measure_memory_domain_(topology_t const &topology, pool_t &pool, std::size_t m,
                                    fabric_options_t const &options, scratch_t &scratch) noexcept {
        std::size_t nodes = buffer_bytes_ / fabric_node_bytes_k;
        if (std::uint64_t const ram = topology.volume_ram_in(m); ram && ram / 4 / fabric_node_bytes_k < nodes)
            nodes = ram / 4 / fabric_node_bytes_k < 2 ? 2 : static_cast<std::size_t>(ram / 4 / fabric_node_bytes_k);
        basic_domain_allocator_t<chase_node_t, memory_t> const allocator(topology, m);
        allocation_result_t<chase_node_t *> const buffer = allocator.try_allocate_at_least(nodes);
        if (!buffer.status) {
            ++binding_refusals_; // every edge into `m` stays unreached
            return {};
        }
        if (options.transparent_huge_pages) platform_t::advise_huge_pages(buffer.ptr, nodes * fabric_node_bytes_k);

        // The home compute domain first: it builds the buffer, so the first touch happens next to the memory.
        std::size_t home = 0;
        for (std::size_t c = compute_domains_; c-- != 0;)
            if (scratch.local_memory[c] == m) home = c;
        bool built = false;
        status_t status{};
        for (std::size_t k = 0; k != compute_domains_ && status; ++k) {
            std::size_t const c = k == 0 ? home : k <= home ? k - 1 : k;
            std::size_t readers = 0;
            if (status = place_(topology, pool, c, scratch, readers); !status || readers == 0) continue;
            std::size_t walker = 0;
            while (!scratch.threads[walker].pinned) ++walker;
            if (!built) {
                std::uint64_t const seed = options.seed + 0x9E3779B97F4A7C15ull * (m + 1);
                auto const is_walker = [walker](std::size_t thread) noexcept { return thread == walker; };
                status = on_some_threads_(pool, 1, is_walker,
                                          [&](std::size_t) noexcept { link_random_cycle(buffer.ptr, nodes, seed); });
                built = static_cast<bool>(status);
                if (!status) continue;
            }
            fabric_edge_t edge;
            edge.readers = readers;
            edge.buffer_bytes = nodes * fabric_node_bytes_k;
            if (status = measure_bandwidth_(pool, buffer.ptr, nodes, readers, options, scratch, edge); !status)
                continue;
            if (status = measure_latency_(pool, buffer.ptr, nodes, walker, options, scratch, edge); !status) continue;
            if (edge.reached()) edges_[c * memory_domains_ + m] = edge, ++reached_edges_;
        }
        allocator.deallocate(buffer.ptr, buffer.count);
        return status;
    }

    /**  Measures everything into `*this` (a fresh object the caller swaps in on success). */
    template <typename topology_t, typename pool_t>
    status_t measure_(topology_t const &topology, pool_t &pool, fabric_options_t const &options) {
        compute_domains_ = topology.compute_domains_count();
        memory_domains_ = topology.memory_domains_count();
        std::size_t const threads = static_cast<std::size_t>(pool.threads_count());
        // Every allocation of the harvest, before any thread is pinned (may throw `std::bad_alloc`).
        edges_.assign(compute_domains_ * memory_domains_, fabric_edge_t{});
        distances_.assign(compute_domains_ * memory_domains_, 0);
        levels_.assign(memory_domains_, 0);
        media_.assign(memory_domains_, memory_medium_t{});
        scratch_t scratch;
        scratch.threads.resize(threads);
        scratch.rank_of.assign(threads, 0);
        scratch.samples.assign(options.repeats, 0.0);
        scratch.local_memory.resize(compute_domains_);
        for (std::size_t c = 0; c != compute_domains_; ++c) scratch.local_memory[c] = topology.local_memory_of(c);
        buffer_bytes_ = planned_nodes_(topology, options) * fabric_node_bytes_k;

        // Save every thread's mask (a refusal, e.g. `unsupported`, leaves nothing to restore), measure, restore.
        status_t status = on_every_thread_(
            pool, [&](std::size_t thread) noexcept { (void)scratch.threads[thread].saved.try_save(); });
        if (!status) return status;
        for (std::size_t m = 0; m != memory_domains_ && status; ++m)
            status = measure_memory_domain_(topology, pool, m, options, scratch);
        status_t const restored = on_every_thread_(pool, [&](std::size_t thread) noexcept {
            if (scratch.threads[thread].saved.saved()) (void)scratch.threads[thread].saved.try_restore();
        });
        if (!status) return status;
        if (!restored) return restored;
        if (reached_edges_ == 0) return status_code_t::placement_refused_k;

        summarize_memory_media(edges_.data(), compute_domains_, memory_domains_, media_.data());
        levels_count_ = derive_memory_levels(media_.data(), memory_domains_, options.bandwidth_tolerance,
                                             options.latency_tolerance, levels_.data());
        derive_memory_distances(edges_.data(), compute_domains_, memory_domains_, scratch.local_memory.data(),
                                distances_.data());
        return {};
    }

public:
    basic_fabric_t() noexcept = default;

    /**
     *  @brief  Measures every compute→memory edge of `topology` through `pool`'s threads (see the file comment).
     *          Blocking; from the thread that controls `pool`; not concurrent with queries of this fabric.
     *  @param  topology  A harvested `machine_topology_t` (live or recorded) or anything with its queries.
     *  @param  pool      A spawned pool (`flat_pool_t` or any `basic_pool_t`). Its threads are pinned while they
     *                    measure and get their masks back before this returns. Give it as many threads as the
     *                    largest compute domain has cores to saturate bandwidth; more add nothing.
     *  @return Success if at least one edge was measured (the unreachable ones are counted); otherwise one of
     *          the failures of the file comment, and the fabric answers exactly as before.
     */
    template <typename topology_t, fabric_pool pool_t>
    [[nodiscard]] status_t try_harvest(topology_t const &topology, pool_t &pool,
                                       fabric_options_t const &options = {}) noexcept {
        if (!options.valid())
            return detail::refuse("fabric try_harvest: options out of range (repeats, windows, buffer bounds or "
                                  "tolerances; see fabric_options_t::valid)");
        if (pool.threads_count() == 0) return status_code_t::not_spawned_k;
        FORKUNION_TRY {
            basic_fabric_t harvest;
            status_t const status = harvest.measure_(topology, pool, options);
            if (status) swap(harvest);
            return status;
        }
        FORKUNION_CATCH_ALL { // `std::bad_alloc` from the tables, before any thread was pinned
            return status_code_t::bad_alloc_k;
        }
    }

    /**
     *  @brief  The same through a pool of its own: a caller-inclusive `flat_pool_t` with as many threads as the
     *          largest compute domain has cores, spawned here and terminated before returning. The caller is
     *          thread 0: pinned while it measures, its mask restored. `thread_refused`/`bad_alloc` if the pool
     *          cannot spawn.
     */
    template <typename topology_t>
    [[nodiscard]] status_t try_harvest(topology_t const &topology, fabric_options_t const &options = {}) noexcept {
        std::size_t threads = 1;
        for (std::size_t c = 0; c != topology.compute_domains_count(); ++c)
            if (topology.logical_cores_count_in(c) > threads) threads = topology.logical_cores_count_in(c);
        flat_pool_t pool;
        if (status_t const spawned = pool.spawn(threads); !spawned) return spawned;
        return try_harvest(topology, pool, options);
    }

    /**  @brief  Exchanges two fabrics (array swaps: no allocation). */
    void swap(basic_fabric_t &other) noexcept {
        edges_.swap(other.edges_), distances_.swap(other.distances_), levels_.swap(other.levels_);
        media_.swap(other.media_);
        auto const exchange = [](std::size_t &a, std::size_t &b) noexcept {
            std::size_t const swapped = a;
            a = b, b = swapped;
        };
        exchange(compute_domains_, other.compute_domains_), exchange(memory_domains_, other.memory_domains_);
        exchange(levels_count_, other.levels_count_), exchange(reached_edges_, other.reached_edges_);
        exchange(pinning_refusals_, other.pinning_refusals_), exchange(binding_refusals_, other.binding_refusals_);
        exchange(buffer_bytes_, other.buffer_bytes_);
    }

    /**  @brief  Whether a harvest succeeded; before one, every query reads 0. */
    bool harvested() const noexcept { return compute_domains_ != 0; }

    /**  @brief  Compute domains of the harvested topology; 0 before a harvest. */
    std::size_t compute_domains_count() const noexcept { return compute_domains_; }
    /**  @brief  Memory domains of the harvested topology; 0 before a harvest. */
    std::size_t memory_domains_count() const noexcept { return memory_domains_; }

    /**  @brief  The edge (c, m) as measured: zeros if unreached, out of range or before a harvest. */
    fabric_edge_t edge(std::size_t c, std::size_t m) const noexcept {
        fabric_edge_t const *found = edge_(c, m);
        return found ? *found : fabric_edge_t{};
    }

    /**  @brief  Median nanoseconds per dependent load from compute domain `c` into memory domain `m`; 0 if
     *          unknown. */
    double memory_latency_ns(std::size_t c, std::size_t m) const noexcept { return edge(c, m).latency_ns; }

    /**  @brief  Best-pass read bandwidth, in bytes per second, of `edge(c, m).readers` threads of compute domain `c`
     *          streaming memory domain `m` together; 0 if unknown. Divide by 1e9 for GB/s. */
    double memory_bandwidth_bytes_per_second(std::size_t c, std::size_t m) const noexcept {
        return edge(c, m).bandwidth_bytes_per_second;
    }

    /**  @brief  Measured SLIT distance of the edge: 10 for `c`'s local memory, 10 × the latency ratio beyond,
     *          clamped to [10, 254]; 0 if unknown. */
    std::size_t memory_distance(std::size_t c, std::size_t m) const noexcept {
        return edge_(c, m) ? distances_[c * memory_domains_ + m] : 0;
    }

    /**  @brief  Distinct memory levels among the reached memory domains; 0 before a harvest. */
    std::size_t memory_levels_count() const noexcept { return levels_count_; }

    /**  @brief  The level of memory domain `m`'s medium, 0 = fastest, in `[0, memory_levels_count())`; exactly
     *          `memory_levels_count()` if `m` was not reached or is out of range (hence 0 before a harvest). */
    std::size_t memory_level_in(std::size_t m) const noexcept {
        return m < memory_domains_ ? levels_[m] : levels_count_;
    }

    /**  @brief  The best edge into memory domain `m` from any compute domain (what its level keys on). */
    memory_medium_t memory_medium_of(std::size_t m) const noexcept {
        return m < memory_domains_ ? media_[m] : memory_medium_t{};
    }

    /**  @brief  Edges of the harvest (compute × memory domains); 0 before a harvest. */
    std::size_t edges_count() const noexcept { return compute_domains_ * memory_domains_; }
    /**  @brief  Edges measured. */
    std::size_t reached_edges_count() const noexcept { return reached_edges_; }
    /**  @brief  Edges no pinned thread could measure: a refused pin or a refused buffer. */
    std::size_t unreachable_edges_count() const noexcept { return edges_count() - reached_edges_; }
    /**  @brief  Pins the OS refused during the harvest (one per thread and compute domain and memory domain). */
    std::size_t pinning_refusals_count() const noexcept { return pinning_refusals_; }
    /**  @brief  Memory domains whose buffer could not be allocated and bound (each leaves its column unreached). */
    std::size_t binding_refusals_count() const noexcept { return binding_refusals_; }
    /**  @brief  Bytes of the buffer each memory domain was planned to get (a small domain may get less). */
    std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
};

/**  @brief  The fabric of this OS's platform (`fabric_platform_t`). */
using fabric_t = basic_fabric_t<>;

} // namespace forkunion
