/**
 *  @file   propagation.cpp
 *  @brief  Connected components by min-label propagation, the fork-join-frequency benchmark:
 *          billions of traversed edges per second (GTEPS), one fork-join per round.
 *
 *  @section graph The graph: a "necklace" of R-MAT communities
 *  Vc = 2^scale vertices per community, C communities, R = C * Vc * edge_factor raw edges. Raw edge e starts at
 *  row = col = 0; for bit = scale-1 down to 0, r = draw(64e + bit) mod 100: r < 57 sets nothing, r < 76 the
 *  column bit, r < 95 the row bit, else both. With base = floor(e / (Vc * edge_factor)) * Vc, a raw edge with
 *  row != col gives (base+row, base+col) and its reverse. When C > 1, ring bridges: for j in [0, C), with
 *  hub = min(Vc, 64) and B = 64R, u = j*Vc + draw(B + 2j) mod hub, v = ((j+1) mod C)*Vc + draw(B + 2j + 1) mod
 *  hub, giving (u, v) and (v, u). Everything is sorted and deduplicated into a CSR: u64 offsets, u32 neighbours
 *  in ascending order. `draw` is the harness's counter-based SplitMix64, so every backend and every language
 *  sees the same graph. Raw edges of community c only touch community c, so communities are generated in
 *  parallel (before anything is timed) and concatenated.
 *
 *  @section rounds Rounds
 *  labels start as v; each round is one `for_n` over the vertices: `next[v] = min(labels[v], labels[nbrs(v)])`,
 *  counting changes in per-thread padded counters; then the caller sums them and swaps the arrays. A pass stops
 *  after (and counts) the first round with no change, and the next pass starts from v again. Reported: GTEPS =
 *  edges / seconds per round (every round reads every edge), from the median round of the timed window, and the
 *  mean; and, from the first pass that converged during the warm-up or the window, rounds, components (v with
 *  label v) and the checksum (sum of labels, u64). A window shorter than a pass reports `passes=0 rounds=0`: it
 *  timed the first rounds of a pass (at the defaults here a pass takes seconds). CHECK mode always finishes the
 *  first pass, having converged serially before the runtime started, and fails (status 3) on any difference in
 *  rounds, components, checksum or any label.
 *
 *  `*_replicated`: the CSR (the read-only part) is kept once per memory domain; labels are shared.
 *
 *  FORKUNION_PROPAGATION_CACHE=<directory> (our extension, set by `bench/compare.sh`) keeps each generated graph in
 *  a file named after its settings and reads it back in later runs, after checking the settings and a hash of
 *  the arrays; generation takes seconds on 2 cores and is not what the benchmark measures.
 */
#include <algorithm> // `std::sort`, `std::unique`
#include <atomic>    // `std::atomic`
#include <cstdint>   // `std::uint32_t`
#include <cstdio>    // `std::printf`
#include <cstring>   // `std::memcmp`
#include <numeric>   // `std::iota`
#include <thread>    // `std::thread`
#include <string>    // `std::string`
#include <vector>    // `std::vector`

#include <fcntl.h>  // `open`
#include <unistd.h> // `read`, `write`, `rename`, `unlink`, `getpid`

#include "harness.hpp"
#include "runtimes.hpp"

namespace fu = forkunion;
namespace fub = forkunion::bench;

namespace {

using vertex_t = std::uint32_t;
using offset_t = std::uint64_t;

struct graph_t {
    std::size_t vertices = 0;
    std::vector<offset_t> offsets;    // vertices + 1
    std::vector<vertex_t> neighbours; // ascending within each vertex, no duplicates, no self-loops
};

/**  The R-MAT quadrant cut points, in percent: 57% neither bit, 19% column, 19% row, 5% both (Graph500's a, b, c, d).
 */
constexpr std::uint64_t neither_below_k = 57, column_below_k = 76, row_below_k = 95;

/**  One community's sorted, deduplicated adjacency: local degrees and the concatenated neighbour lists. */
struct community_t {
    std::vector<offset_t> degrees;
    std::vector<vertex_t> neighbours;
};

/**  Builds community `c`'s adjacency from its raw edges plus the bridge ends that start in it. */
void build_community(fub::draws_t const &draws, std::size_t scale, std::size_t edge_factor, std::size_t c,
                     std::vector<std::pair<vertex_t, vertex_t>> const &bridges, community_t &community,
                     std::vector<std::pair<vertex_t, vertex_t>> &scratch) {
    std::size_t const size = std::size_t(1) << scale;
    vertex_t const base = static_cast<vertex_t>(c * size);
    std::uint64_t const raw_per_community = std::uint64_t(size) * edge_factor;
    std::uint64_t const first_raw = std::uint64_t(c) * raw_per_community;

    scratch.clear();
    for (std::uint64_t e = first_raw; e != first_raw + raw_per_community; ++e) {
        vertex_t row = 0, col = 0;
        // Branch-free: the quadrant of each bit is a coin the predictor cannot learn, and mispredicting it
        // made generation ~3x slower here. Column: [57, 76) or [95, 100); row: [76, 100).
        for (std::size_t bit = scale; bit-- > 0;) {
            std::uint64_t const r = draws(64 * e + bit) % 100;
            bool const column = (r >= neither_below_k && r < column_below_k) || r >= row_below_k;
            bool const row_bit = r >= column_below_k;
            col |= vertex_t(column) << bit;
            row |= vertex_t(row_bit) << bit;
        }
        if (row == col) continue;
        scratch.emplace_back(row, base + col);
        scratch.emplace_back(col, base + row);
    }
    for (auto const &[from, to] : bridges)
        if (from >= base && from - base < size) scratch.emplace_back(from - base, to);

    // Counting sort by local source, then sort and deduplicate each list.
    std::vector<offset_t> starts(size + 1, 0);
    for (auto const &edge : scratch) ++starts[edge.first + 1];
    for (std::size_t v = 0; v != size; ++v) starts[v + 1] += starts[v];
    std::vector<vertex_t> sorted(scratch.size());
    std::vector<offset_t> cursor(starts.begin(), starts.end() - 1);
    for (auto const &edge : scratch) sorted[cursor[edge.first]++] = edge.second;

    community.degrees.assign(size, 0);
    community.neighbours.clear();
    community.neighbours.reserve(sorted.size());
    for (std::size_t v = 0; v != size; ++v) {
        auto const first = sorted.begin() + static_cast<std::ptrdiff_t>(starts[v]);
        auto const last = sorted.begin() + static_cast<std::ptrdiff_t>(starts[v + 1]);
        std::sort(first, last);
        auto const end = std::unique(first, last);
        community.degrees[v] = static_cast<offset_t>(end - first);
        community.neighbours.insert(community.neighbours.end(), first, end);
    }
}

/**  The whole necklace (file comment), communities built on `workers` threads. */
graph_t generate(fub::settings_t const &settings, std::size_t workers) {
    fub::draws_t const draws(settings.seed);
    std::size_t const scale = settings.propagation_scale, communities = settings.propagation_communities;
    std::size_t const size = std::size_t(1) << scale;
    std::uint64_t const raw_edges = std::uint64_t(communities) * size * settings.propagation_edge_factor;

    std::vector<std::pair<vertex_t, vertex_t>> bridges;
    if (communities > 1) {
        std::uint64_t const hub = std::min<std::uint64_t>(size, 64), bridge_base = 64 * raw_edges;
        for (std::uint64_t j = 0; j != communities; ++j) {
            vertex_t const u = static_cast<vertex_t>(j * size + draws(bridge_base + 2 * j) % hub);
            vertex_t const v =
                static_cast<vertex_t>(((j + 1) % communities) * size + draws(bridge_base + 2 * j + 1) % hub);
            bridges.emplace_back(u, v);
            bridges.emplace_back(v, u);
        }
    }

    std::vector<community_t> parts(communities);
    std::atomic<std::size_t> next{0};
    auto work = [&]() {
        std::vector<std::pair<vertex_t, vertex_t>> scratch;
        // Relaxed: a ticket dispenser; `join` publishes the parts.
        for (std::size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < communities;)
            build_community(draws, scale, settings.propagation_edge_factor, c, bridges, parts[c], scratch);
    };
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < workers; ++i) threads.emplace_back(work);
    work();
    for (auto &thread : threads) thread.join();

    graph_t graph;
    graph.vertices = communities * size;
    graph.offsets.resize(graph.vertices + 1);
    offset_t total = 0;
    std::size_t v = 0;
    for (auto const &part : parts)
        for (offset_t degree : part.degrees) graph.offsets[v++] = total, total += degree;
    graph.offsets[v] = total;
    graph.neighbours.reserve(total);
    for (auto &part : parts) {
        graph.neighbours.insert(graph.neighbours.end(), part.neighbours.begin(), part.neighbours.end());
        part = community_t{};
    }
    return graph;
}

// ---- The graph cache (FORKUNION_PROPAGATION_CACHE): generation takes seconds, reading a file a few ms ----

/**
 *  A cached graph: this header, then `vertices + 1` u64 offsets, then `edges` u32 neighbours, in the machine's byte
 *  order. The file is trusted only if every field of the header matches the settings and `hash` matches the arrays,
 *  so a stale, truncated or foreign file is regenerated, never used.
 */
struct cache_header_t {
    char magic[8];
    std::uint64_t seed, scale, communities, edge_factor, vertices, edges, hash;
};
constexpr char cache_magic_k[8] = {'F', 'U', 'C', 'S', 'R', '0', '0', '1'};

std::uint64_t hash_graph(graph_t const &graph) {
    std::uint64_t hash = graph.vertices;
    for (offset_t offset : graph.offsets) hash = fub::mix(hash ^ offset);
    for (std::size_t e = 0; e + 1 < graph.neighbours.size(); e += 2)
        hash = fub::mix(hash ^ (std::uint64_t(graph.neighbours[e]) << 32 | graph.neighbours[e + 1]));
    if (graph.neighbours.size() % 2) hash = fub::mix(hash ^ graph.neighbours.back());
    return hash;
}

std::string cache_path(fub::settings_t const &settings) {
    char name[160];
    std::snprintf(name, sizeof(name), "/necklace_seed%u_scale%zu_communities%zu_factor%zu.csr", settings.seed,
                  settings.propagation_scale, settings.propagation_communities, settings.propagation_edge_factor);
    return settings.propagation_cache + name;
}

cache_header_t expected_header(fub::settings_t const &settings) {
    cache_header_t header{};
    std::memcpy(header.magic, cache_magic_k, sizeof(header.magic));
    header.seed = settings.seed, header.scale = settings.propagation_scale;
    header.communities = settings.propagation_communities, header.edge_factor = settings.propagation_edge_factor;
    header.vertices = std::uint64_t(settings.propagation_communities) << settings.propagation_scale;
    return header;
}

bool read_exactly(int fd, void *data, std::size_t bytes) {
    auto *cursor = static_cast<char *>(data);
    while (bytes) {
        ssize_t const got = ::read(fd, cursor, bytes);
        if (got <= 0) return false;
        cursor += got, bytes -= static_cast<std::size_t>(got);
    }
    return true;
}

bool write_exactly(int fd, void const *data, std::size_t bytes) {
    auto const *cursor = static_cast<char const *>(data);
    while (bytes) {
        ssize_t const put = ::write(fd, cursor, bytes);
        if (put <= 0) return false;
        cursor += put, bytes -= static_cast<std::size_t>(put);
    }
    return true;
}

/**  The cached graph for these settings, if a trustworthy one exists. */
bool load_cached(fub::settings_t const &settings, graph_t &graph) {
    int const fd = ::open(cache_path(settings).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    cache_header_t header{}, expected = expected_header(settings);
    bool ok = read_exactly(fd, &header, sizeof(header)) && !std::memcmp(header.magic, expected.magic, 8) &&
              header.seed == expected.seed && header.scale == expected.scale &&
              header.communities == expected.communities && header.edge_factor == expected.edge_factor &&
              header.vertices == expected.vertices && header.edges <= (std::uint64_t(1) << 40);
    if (ok) {
        graph.vertices = header.vertices;
        graph.offsets.resize(graph.vertices + 1);
        graph.neighbours.resize(header.edges);
        ok = read_exactly(fd, graph.offsets.data(), graph.offsets.size() * sizeof(offset_t)) &&
             read_exactly(fd, graph.neighbours.data(), graph.neighbours.size() * sizeof(vertex_t)) &&
             graph.offsets.back() == header.edges && hash_graph(graph) == header.hash;
    }
    ::close(fd);
    if (!ok) graph = graph_t{};
    return ok;
}

/**  Writes the graph next to its final name, then renames it: a concurrent reader sees all of it or none. */
bool store_cached(fub::settings_t const &settings, graph_t const &graph) {
    std::string const path = cache_path(settings), temporary = path + ".tmp" + std::to_string(::getpid());
    int const fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    cache_header_t header = expected_header(settings);
    header.edges = graph.neighbours.size();
    header.hash = hash_graph(graph);
    bool const ok = write_exactly(fd, &header, sizeof(header)) &&
                    write_exactly(fd, graph.offsets.data(), graph.offsets.size() * sizeof(offset_t)) &&
                    write_exactly(fd, graph.neighbours.data(), graph.neighbours.size() * sizeof(vertex_t));
    ::close(fd);
    if (ok && ::rename(temporary.c_str(), path.c_str()) == 0) return true;
    ::unlink(temporary.c_str());
    return false;
}

/**  One vertex of one round: the smallest label among itself and its neighbours. */
inline vertex_t relax(offset_t const *offsets, vertex_t const *neighbours, vertex_t const *labels,
                      std::size_t v) noexcept {
    vertex_t best = labels[v];
    for (offset_t e = offsets[v]; e != offsets[v + 1]; ++e) best = std::min(best, labels[neighbours[e]]);
    return best;
}

/**  What a converged pass ends with. */
struct outcome_t {
    std::size_t rounds = 0, components = 0;
    std::uint64_t checksum = 0;
    std::vector<vertex_t> labels;
};

outcome_t summarize(std::vector<vertex_t> const &labels, std::size_t rounds, bool keep_labels) {
    outcome_t outcome;
    outcome.rounds = rounds;
    for (std::size_t v = 0; v != labels.size(); ++v) {
        outcome.components += labels[v] == v;
        outcome.checksum += labels[v];
    }
    if (keep_labels) outcome.labels = labels;
    return outcome;
}

/**  CHECK mode's reference: the same rounds with plain loops on the calling thread. */
outcome_t converge_serially(graph_t const &graph) {
    std::vector<vertex_t> labels(graph.vertices), next(graph.vertices);
    std::iota(labels.begin(), labels.end(), vertex_t(0));
    std::size_t rounds = 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t v = 0; v != graph.vertices; ++v) {
            next[v] = relax(graph.offsets.data(), graph.neighbours.data(), labels.data(), v);
            changed |= next[v] != labels[v];
        }
        labels.swap(next);
        ++rounds;
    }
    return summarize(labels, rounds, true);
}

template <typename runtime_type_, fub::schedule_t schedule_k>
void run(runtime_type_ &runtime, fub::settings_t const &settings, fub::backend_t const &backend,
         fub::floor_t const &floor, graph_t &graph, outcome_t const *expected) {
    std::size_t const vertices = graph.vertices, threads = runtime.threads_count();
    fub::replicas_t<offset_t> const offsets(runtime, graph.offsets);
    fub::replicas_t<vertex_t> const neighbours(runtime, graph.neighbours);
    std::vector<vertex_t> labels(vertices), next(vertices);
    std::iota(labels.begin(), labels.end(), vertex_t(0));
    std::vector<fub::padded_count_t> changes(threads);

    auto round_kernel = [&](std::size_t v, std::size_t thread) noexcept {
        std::size_t const replica = runtime.replica_of(thread);
        vertex_t const best = relax(offsets[replica], neighbours[replica], labels.data(), v);
        next[v] = best;
        changes[thread].value += best != labels[v];
    };

    // Pass bookkeeping: the first converged pass is recorded; later ones must converge in as many rounds.
    std::size_t rounds_in_pass = 0, passes = 0;
    outcome_t first;
    auto finish_round = [&]() {
        std::size_t changed = 0;
        for (auto &slot : changes) changed += slot.value, slot.value = 0;
        labels.swap(next);
        ++rounds_in_pass;
        if (changed) return;
        if (passes == 0)
            first = summarize(labels, rounds_in_pass, expected != nullptr);
        else if (rounds_in_pass != first.rounds)
            fub::fail(fub::exit_check_failed_k, "%s: pass %zu converged in %zu rounds, the first in %zu",
                      backend.name.c_str(), passes + 1, rounds_in_pass, first.rounds);
        ++passes;
        rounds_in_pass = 0;
        std::iota(labels.begin(), labels.end(), vertex_t(0));
    };

    fub::census_t census(threads);
    auto counted_kernel = [&](std::size_t v, std::size_t thread) noexcept {
        census.count(thread);
        round_kernel(v, thread);
    };
    fub::window_t const warm = fub::warm_up(settings.warmup, 1, [&]() {
        runtime.template for_n<schedule_k>(vertices, counted_kernel);
        finish_round();
    });
    if (census.stray())
        fub::fail(fub::exit_unavailable_k, "%s passed a thread index outside [0, %zu)", backend.name.c_str(), threads);
    fub::print_census(census, threads);

    std::size_t const passes_before = passes;
    fub::window_t const window = fub::timed_window(
        settings.time_limit, fub::checkpoint_stride(warm.seconds / double(warm.iterations)),
        [&]() {
            runtime.template for_n<schedule_k>(vertices, round_kernel);
            finish_round();
        },
        [&] { return expected && passes == 0; });

    if (passes == 0)
        std::printf("# no pass converged within the window (%zu rounds timed): rounds, components and checksum are "
                    "reported as 0; a longer FORKUNION_TIME_LIMIT, or CHECK mode, finishes one\n",
                    window.iterations);
    char const *check = "skipped";
    if (expected) {
        bool const same = first.rounds == expected->rounds && first.components == expected->components &&
                          first.checksum == expected->checksum && first.labels == expected->labels;
        if (!same)
            fub::fail(fub::exit_check_failed_k,
                      "CHECK failed: %s converged to rounds=%zu components=%zu checksum=%llu, serially rounds=%zu "
                      "components=%zu checksum=%llu%s",
                      backend.name.c_str(), first.rounds, first.components, (unsigned long long)first.checksum,
                      expected->rounds, expected->components, (unsigned long long)expected->checksum,
                      first.labels == expected->labels ? "" : ", and labels differ");
        check = "passed";
        std::printf("# check: rounds, components, checksum and all %zu labels match the serial run\n", vertices);
    }

    double const edges = double(graph.neighbours.size());
    fub::result_row_t row("propagation");
    row.add("backend", backend.name).add("family", backend.family).add("threads", std::uint64_t(threads));
    row.add("vertices", std::uint64_t(vertices)).add("edges", std::uint64_t(graph.neighbours.size()));
    row.add("rounds", std::uint64_t(first.rounds)).add("components", std::uint64_t(first.components));
    row.add("checksum", first.checksum).add("passes", std::uint64_t(passes));
    row.add("passes_timed", std::uint64_t(passes - passes_before));
    row.add("timed_rounds", std::uint64_t(window.iterations)).add("seconds", window.seconds);
    row.add("gteps", edges / window.median_seconds / 1e9);
    row.add("gteps_mean", double(window.iterations) * edges / window.seconds / 1e9);
    row.add("ms_per_round", window.median_seconds * 1e3);
    row.add("floor_ns", floor.round_trip_ns).add("off_caller", census.off_caller_share());
    row.add("check", std::string(check));
    row.print();
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "--list", 0,
        "[--list]\nLabel propagation on a necklace of R-MAT communities, one dispatch per round.\n"
        "  --list  prints the backends (the values of FORKUNION_BACKEND) and exits\n" FORKUNION_BENCH_SETTINGS_USAGE);
    std::vector<fub::backend_t> const backends = fub::available_backends();
    if (fub::list_requested(argc, argv, fub::backend_names(backends))) return 0;
    fub::machine_t const machine = fub::harvest_machine();
    fub::settings_t const settings = fub::read_settings(fub::backend_names(backends), machine.cpus.size());
    fub::backend_t const &backend = fub::find_backend(backends, settings.backend);
    fub::print_banner("propagation", settings, machine);

    auto const start = fub::steady_clock_t::now();
    graph_t graph;
    char const *origin = "generated";
    if (!settings.propagation_cache.empty() && load_cached(settings, graph))
        origin = "read from the cache";
    else {
        graph = generate(settings, machine.cpus.size());
        if (!settings.propagation_cache.empty())
            origin = store_cached(settings, graph) ? "generated and cached" : "generated (caching it failed)";
    }
    std::printf("# graph: %zu communities x 2^%zu vertices = %zu vertices, edge factor %zu, %zu edges (CSR, u64 "
                "offsets, u32 neighbours), %s in %.2f s; FORKUNION_PROPAGATION_CHECK=%d\n",
                settings.propagation_communities, settings.propagation_scale, graph.vertices,
                settings.propagation_edge_factor, graph.neighbours.size(), origin, fub::seconds_since(start),
                settings.propagation_check ? 1 : 0);

    outcome_t expected;
    if (settings.propagation_check) {
        auto const serial_start = fub::steady_clock_t::now();
        expected = converge_serially(graph);
        std::printf("# serial: rounds=%zu components=%zu checksum=%llu in %.2f s\n", expected.rounds,
                    expected.components, (unsigned long long)expected.checksum, fub::seconds_since(serial_start));
    }

    // The floor, in this process, right before the runtime under test exists.
    fub::floor_t const floor = fub::measure_floor(machine);
    fub::print_floor(floor);

    fub::pin_plan_t plan(machine, settings.threads);
    fub::with_runtime(backend.runtime, plan, [&](auto &runtime) {
        fub::print_runtime(backend, runtime, plan);
        runtime.enter([&] {
            fub::with_schedule(backend.schedule, [&](auto schedule) {
                run<std::decay_t<decltype(runtime)>, decltype(schedule)::value>(
                    runtime, settings, backend, floor, graph, settings.propagation_check ? &expected : nullptr);
            });
        });
    });
    return 0;
}
