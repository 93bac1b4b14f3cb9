// Hybrid MPI + forkunion: an exact k-nearest-neighbour search over vectors sharded across MPI ranks. Each rank
// searches its shard with a distributed pool over the cores MPI gave it (its affinity mask), one block per compute
// domain on that domain's memory; `MPI_Allreduce` merges the ranks' top-k lists. Rank 0 then scans everything
// serially and checks that the ids are the same, exactly (integer distances, ties to the lower id).
//
//   mpirun -np 2 --bind-to core forkunion_example_mpi_search [--vectors N] [--queries Q] [--expect-disjoint]
//
// `--expect-disjoint` fails the run if two ranks' pools run on a shared core (what binding must prevent).
#include <algorithm> // `std::min`
#include <array>     // `std::array`
#include <cstdint>   // `std::int64_t`, `std::uint64_t`
#include <cstdio>    // `std::printf`
#include <cstdlib>   // `std::strtoull`
#include <cstring>   // `std::strcmp`
#include <limits>    // `std::numeric_limits`
#include <string>    // `std::string`
#include <vector>    // `std::vector`

#include <mpi.h>
#include <sched.h> // `sched_getaffinity`, `sched_getcpu`

#include <forkunion/pools/distributed.hpp>
#include <forkunion/topology/topology.hpp>

#include "usage.h" // `forkunion_usage`: `--help`, unknown arguments refused

namespace fu = forkunion;

constexpr std::size_t dimensions_k = 32, neighbours_k = 8;

/**  One candidate: ordered by distance, then id, so every split of the scan agrees on the answer. */
struct neighbour_t {
    std::int64_t distance = std::numeric_limits<std::int64_t>::max();
    std::int64_t id = std::numeric_limits<std::int64_t>::max();
    bool operator<(neighbour_t const &other) const noexcept {
        return distance < other.distance || (distance == other.distance && id < other.id);
    }
};

/**  The best `neighbours_k` candidates, ascending; unused slots hold the largest candidate. */
struct top_t {
    std::array<neighbour_t, neighbours_k> best{};

    void offer(neighbour_t candidate) noexcept {
        if (!(candidate < best.back())) return;
        std::size_t slot = neighbours_k - 1;
        for (; slot != 0 && candidate < best[slot - 1]; --slot) best[slot] = best[slot - 1];
        best[slot] = candidate;
    }
    void merge(top_t const &other) noexcept {
        for (neighbour_t const &candidate : other.best) offer(candidate);
    }
};

/**  `MPI_Allreduce`'s operator: merges top lists element by element (commutative and associative). */
void merge_tops(void *in, void *inout, int *count, MPI_Datatype *) {
    for (int i = 0; i != *count; ++i) static_cast<top_t *>(inout)[i].merge(static_cast<top_t const *>(in)[i]);
}

/**  Component `dimension` of vector `id`: SplitMix64 of both, as a signed byte. Every rank derives the same. */
std::int8_t component(std::uint64_t id, std::size_t dimension) noexcept {
    std::uint64_t z = id * dimensions_k + dimension + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<std::int8_t>((z ^ (z >> 31)) >> 56);
}

std::int64_t squared_distance(std::int8_t const *a, std::int8_t const *b) noexcept {
    std::int64_t sum = 0;
    for (std::size_t i = 0; i != dimensions_k; ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
    return sum;
}

/**  The cores the calling thread may run on, as a bitmap of 1024 CPUs (what `MPI_Gather` carries). */
using cores_t = std::array<std::uint64_t, 16>;
cores_t allowed_cores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    cores_t cores{};
    if (::sched_getaffinity(0, sizeof(set), &set) == 0)
        for (std::size_t cpu = 0; cpu != 1024; ++cpu)
            if (CPU_ISSET(cpu, &set)) cores[cpu / 64] |= std::uint64_t(1) << (cpu % 64);
    return cores;
}
std::string list_of(cores_t const &cores) {
    std::string text;
    for (std::size_t cpu = 0; cpu != 1024; ++cpu)
        if (cores[cpu / 64] >> (cpu % 64) & 1) text += (text.empty() ? "" : ","), text += std::to_string(cpu);
    return text.empty() ? "none" : text;
}

/**  This rank owns its pool and never dispatches from a callback: a refusal is a bug, so say why and stop. */
static void require(fu::status_t status, int rank) {
    if (status) return;
    std::fprintf(stderr, "rank %d: dispatch refused: %s\n", rank, status.name());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "--vectors= --queries= --expect-disjoint", 0,
                    "[--vectors N] [--queries Q] [--expect-disjoint]\n"
                    "Hybrid MPI search: one rank per node, a distributed pool per rank (run it under mpirun).\n"
                    "  --vectors N         200000 vectors in all\n"
                    "  --queries Q         16 queries\n"
                    "  --expect-disjoint   fail unless the ranks' pools share no core\n"
                    "Reads no environment variable of its own (mpirun's are read by MPI).\n");
    int provided = 0;
    // Only the main thread calls MPI; the pool's threads never do.
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    std::size_t vectors = 200'000, queries = 16;
    bool expect_disjoint = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--vectors") && i + 1 < argc)
            vectors = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--queries") && i + 1 < argc)
            queries = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--expect-disjoint"))
            expect_disjoint = true;
        else {
            if (rank == 0) std::fprintf(stderr, "usage: %s [--vectors N] [--queries Q] [--expect-disjoint]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }

    // The pool takes exactly the cores MPI bound this rank to: the harvest is narrowed to the affinity mask.
    cores_t const allowed = allowed_cores();
    fu::machine_topology_t topology;
    if (!topology.try_harvest()) std::fprintf(stderr, "rank %d: no topology, one domain of the allowed cores\n", rank);
    fu::distributed_pool_t pool;
    if (fu::status_t const spawned = pool.spawn(topology, topology.logical_cores_count()); !spawned) {
        std::fprintf(stderr, "rank %d: spawn refused: %s\n", rank, spawned.name());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::size_t const threads = pool.threads_count();
    std::vector<cores_t> thread_cores(threads);
    require(pool.for_threads([&](std::size_t thread) noexcept { thread_cores[thread] = allowed_cores(); }).join(),
            rank);
    cores_t used{};
    bool inside = true;
    for (cores_t const &cores : thread_cores)
        for (std::size_t word = 0; word != used.size(); ++word) {
            used[word] |= cores[word];
            inside = inside && (cores[word] & ~allowed[word]) == 0;
        }

    // This rank's shard, split again by the pool: compute domain d owns its threads' static blocks, on its memory.
    auto const shard = fu::static_slice<std::size_t>(vectors, ranks, rank);
    std::size_t const domains = pool.compute_domains_count();
    std::vector<std::int8_t *> domain_data(domains);
    std::vector<std::size_t> domain_first(domains), domain_capacity(domains);
    for (std::size_t d = 0; d != domains; ++d) {
        std::size_t const first_thread = pool.first_thread_in(d), last_thread = first_thread + pool.threads_count_in(d);
        domain_first[d] = fu::static_slice(shard.count, threads, first_thread).first;
        auto const last = fu::static_slice(shard.count, threads, last_thread - 1);
        fu::domain_allocator_t<std::int8_t> const local(topology, topology.local_memory_of(d));
        auto const allocation = local.try_allocate_at_least((last.first + last.count - domain_first[d]) * dimensions_k);
        if (!allocation.status) MPI_Abort(MPI_COMM_WORLD, 1);
        domain_data[d] = allocation.ptr, domain_capacity[d] = allocation.count;
    }
    auto const vector_of = [&](std::size_t local, std::size_t domain) noexcept {
        return domain_data[domain] + (local - domain_first[domain]) * dimensions_k;
    };
    // Each thread writes (and so first touches) the vectors it will scan.
    require(pool.for_slices(shard.count,
                            [&](fu::distributed_pool_t::prong_t first, std::size_t count) noexcept {
                                for (std::size_t local = first.task; local != first.task + count; ++local)
                                    for (std::size_t i = 0; i != dimensions_k; ++i)
                                        vector_of(local, first.compute_domain)[i] = component(shard.first + local, i);
                            })
                .join(),
            rank);
    std::vector<std::int8_t> query_data(queries * dimensions_k);
    for (std::size_t q = 0; q != queries; ++q)
        for (std::size_t i = 0; i != dimensions_k; ++i) query_data[q * dimensions_k + i] = component(~q, i);

    // Every thread scans its block for every query into its own top lists; the caller merges them.
    double const started = MPI_Wtime();
    std::vector<top_t> partial(threads * queries);
    require(
        pool.for_slices(shard.count,
                        [&](fu::distributed_pool_t::prong_t first, std::size_t count) noexcept {
                            top_t *mine = partial.data() + first.thread * queries;
                            for (std::size_t local = first.task; local != first.task + count; ++local) {
                                std::int8_t const *vector = vector_of(local, first.compute_domain);
                                auto const id = static_cast<std::int64_t>(shard.first + local);
                                for (std::size_t q = 0; q != queries; ++q)
                                    mine[q].offer({squared_distance(vector, query_data.data() + q * dimensions_k), id});
                            }
                        })
            .join(),
        rank);
    std::vector<top_t> local(queries), global(queries);
    for (std::size_t thread = 0; thread != threads; ++thread)
        for (std::size_t q = 0; q != queries; ++q) local[q].merge(partial[thread * queries + q]);
    MPI_Datatype top_type;
    MPI_Type_contiguous(sizeof(top_t), MPI_BYTE, &top_type);
    MPI_Type_commit(&top_type);
    MPI_Op merge;
    MPI_Op_create(&merge_tops, 1, &merge);
    MPI_Allreduce(local.data(), global.data(), static_cast<int>(queries), top_type, merge, MPI_COMM_WORLD);
    double const searched = MPI_Wtime() - started;

    // Who ran where, gathered on rank 0.
    std::vector<cores_t> all_allowed(ranks), all_used(ranks);
    MPI_Gather(allowed.data(), 16, MPI_UINT64_T, all_allowed.data(), 16, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    MPI_Gather(used.data(), 16, MPI_UINT64_T, all_used.data(), 16, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    unsigned long long const counts[2] = {threads, domains};
    std::vector<unsigned long long> all_counts(2 * static_cast<std::size_t>(ranks));
    MPI_Gather(counts, 2, MPI_UNSIGNED_LONG_LONG, all_counts.data(), 2, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    int all_inside = 0, mine_inside = inside ? 1 : 0;
    MPI_Reduce(&mine_inside, &all_inside, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);

    int failed = 0;
    if (rank == 0) {
        for (int r = 0; r != ranks; ++r)
            std::printf(
                "rank %d of %d: allowed cores %s; pool: %llu thread%s over %llu compute domain%s, on cores %s\n", r,
                ranks, list_of(all_allowed[r]).c_str(), all_counts[2 * r], all_counts[2 * r] == 1 ? "" : "s",
                all_counts[2 * r + 1], all_counts[2 * r + 1] == 1 ? "" : "s", list_of(all_used[r]).c_str());
        if (!all_inside) std::printf("a pool ran on a core outside its rank's allowed set\n"), failed = 1;
        std::string shared;
        for (int a = 0; a != ranks; ++a)
            for (int b = a + 1; b != ranks; ++b) {
                cores_t common{};
                for (std::size_t word = 0; word != common.size(); ++word)
                    common[word] = all_used[a][word] & all_used[b][word];
                if (list_of(common) == "none") continue;
                shared += " ranks ", shared += std::to_string(a), shared += " and ", shared += std::to_string(b);
                shared += " share ", shared += list_of(common);
            }
        if (shared.empty())
            std::printf("the ranks' pools share no core\n");
        else
            std::printf("the ranks' pools overlap:%s%s\n", shared.c_str(), expect_disjoint ? " (refused)" : "");
        failed |= expect_disjoint && !shared.empty();

        // The serial scan: every vector, regenerated, against every query.
        std::size_t mismatches = 0;
        std::vector<std::int8_t> vector(dimensions_k);
        std::vector<top_t> serial(queries);
        for (std::size_t id = 0; id != vectors; ++id) {
            for (std::size_t i = 0; i != dimensions_k; ++i) vector[i] = component(id, i);
            for (std::size_t q = 0; q != queries; ++q)
                serial[q].offer({squared_distance(vector.data(), query_data.data() + q * dimensions_k),
                                 static_cast<std::int64_t>(id)});
        }
        for (std::size_t q = 0; q != queries; ++q)
            for (std::size_t n = 0; n != neighbours_k; ++n) mismatches += serial[q].best[n].id != global[q].best[n].id;
        std::printf("search: %zu queries, top %zu of %zu vectors (%zu dimensions) over %d ranks in %.1f ms: %s\n",
                    queries, neighbours_k, vectors, dimensions_k, ranks, searched * 1e3,
                    mismatches ? "ids DIFFER from the serial scan" : "ids equal the serial scan's exactly");
        std::printf("query 0: nearest id %lld at squared distance %lld\n", static_cast<long long>(global[0].best[0].id),
                    static_cast<long long>(global[0].best[0].distance));
        failed |= mismatches != 0;
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pool.terminate();
    for (std::size_t d = 0; d != domains; ++d)
        fu::domain_allocator_t<std::int8_t>(topology, topology.local_memory_of(d))
            .deallocate(domain_data[d], domain_capacity[d]);
    MPI_Op_free(&merge);
    MPI_Type_free(&top_type);
    MPI_Finalize();
    return failed;
}
