/**
 *  @file   forkunion/pools/distributed.hpp
 *  @brief  `basic_distributed_pool_t` and `distributed_pool_t`: one colocated pool per compute domain, dispatched and
 *          joined as one pool.
 *
 *  The NUMA-aware pool: it addresses every compute domain of a topology as one pool of `threads_count()` threads,
 *  keeps each domain's threads pinned to its cores with their claim cursors and job on its local node, and
 *  in `for_n_dynamic` steals inside a domain before it crosses the interconnect.
 *
 *  @code
 *  fu::machine_topology_t topology;
 *  (void)topology.try_harvest();
 *  fu::distributed_pool_t pool;
 *  if (!pool.spawn(topology, topology.logical_cores_count())) return;
 *  pool.for_slices(n, [&](fu::distributed_pool_t::prong_t first, std::size_t count) noexcept {
 *      scan(shard_of(first.compute_domain), first.task, count); // global task index, domain-local data
 *  }).join();
 *  @endcode
 *
 *  @section use When to use it, and when not
 *  Use it for loops over data sharded by NUMA node (`sharded_array_t`, one `domain_allocator_t` vector per domain):
 *  the prong's `compute_domain` says whose memory a slice should read. On a single-domain machine it behaves as a
 *  flat pool at the cost of one more claim word (see the README for the measured difference); prefer
 *  `flat_pool_t` there if nothing else needs the domains. Each domain must get a thread: for fewer threads than
 *  domains, spawn a `colocated_pool_t` on the domains you want.
 *
 *  @section split Threads, domains and the splits
 *  - Global thread indices are dense, domain by domain: domain d owns `[first_thread_in(d), first_thread_in(d) +
 *    threads_count_in(d))`. On a caller-inclusive pool the caller is global thread 0, in domain 0.
 *  - `spawn(topology, threads)` gives domain d a share of `threads` proportional to its cores c_d (C = Σ c_d): the
 *    exact quota `threads · c_d / C`, rounded by largest remainder (ties to the domain with more cores, then the
 *    lower index), and at least one thread per domain. Big and little clusters, sockets of different sizes: each
 *    gets threads in proportion to the cores it has, never doubled up on a small domain.
 *  - `for_n` and `for_slices` use the flat pool's static split over all threads: global thread t runs
 *    `static_slice(n, threads_count(), t)`, so domain d's threads run one contiguous range of tasks.
 *  - `for_n_dynamic`: thread t (local index l in domain d) drains its own block through its claim cursor, then
 *    steals single tasks from the other threads of d in a coprime order seeded by l, and only when every cursor
 *    of d is dry, from the other domains: domains in a coprime order seeded by d, and inside domain e its threads
 *    starting at `l mod threads_count_in(e)`, in a coprime order seeded by l. Cursors only grow during a
 *    dispatch, so a thread that leaves its domain never finds work there again.
 *  - Thread-0 nested dispatches: refused with `contended` (a difference from the flat and colocated pools). A nested dispatch from
 *    global thread 0 would have to wait for every other domain's slices, publish on every domain, and leave the
 *    other domains' cursors exhausted for the enclosing `for_n_dynamic`: a second protocol for one use case. Hand
 *    a multi-step job to a colocated pool instead, or split it into dispatches.
 *
 *  @section protocol Protocol
 *  The distributed pool adds one word to its colocated pools, `claim`, on a line only dispatchers touch, and per
 *  domain d the inner generation `g_d` of the latest dispatch on d's pool:
 *
 *      claim = k · 4 + state,   state ∈ {claimed, published, closed},   k the dispatch sequence (64 bits: ABA-free)
 *
 *      D1  Only the holder of `claim` (state claimed) publishes on or terminates an inner pool, and only from a
 *          state where every inner pool is idle: so an inner claim never loses, and a dispatch reaches all D
 *          domains or none. Nothing else dispatches on the inner pools (the idle policy needs no claim).
 *      D2  claim = published(k)  ⇒  every g_d names dispatch k's publication on domain d (stored before the release
 *          that published k). Dispatch k is complete ⇔ every inner pool reports g_d complete.
 *      D3  A claim takes published(k) to claimed(k + 1) with one CAS, only after the claimer saw dispatch k complete
 *          on every domain (acquire): no thread of dispatch k still runs, reads job or a cursor (I1 of each
 *          inner pool). A lost CAS, or an incomplete dispatch k, is refused (`contended`) and never retried.
 *      D4  closed ⇔ unspawned or terminating: every claim loses (`not_spawned`), and every generation is complete.
 *          In a `fork()`ed child every claim is refused with `forked`, before the claim word is read.
 *      D6  The layout (the domain table and each domain's mapped slot with its pool) lives until the destructor: a
 *          respawn onto the same domains and nodes reuses it in place, any other retires it to a list freed only
 *          by the destructor, from which a later respawn that fits it takes it back (so alternating machines
 *          keeps one layout each). So a dispatcher or an `is_complete` that read `claim` before a terminate reads live
 *          memory afterwards, and its seqlock re-check or lost CAS refuses it.
 *      D5  The generation of dispatch k is `2k + 1` in `index_t`: odd, never 0, and 2^(bits-1) dispatches apart
 *          before it aliases (as the flat pool's).
 *
 *      DP  publish    not closing ⇒ CAS published(k) → claimed(k+1) (acq_rel); release fence (for D2's readers);
 *                     reset every domain's cursors (for_n_dynamic: a thief of one domain may reach another
 *                     domain's cursor before that domain is published, so all are reset before any publication);
 *                     for each d: slot d's job, inner T1+T2 (cannot lose: D1), store g_d; store
 *                     published(k+1) (release). Domains are published in order 0 … D-1.
 *      DJ  join       generation k current and published: read g_d, re-check `claim` (a newer claim means k is done),
 *                     inner `unsafe_join(g_d)`: on domain 0 of an inclusive pool that runs the caller's slice.
 *      DC  complete   generation not current, or closed: true; claimed: false; published: every inner pool complete, or
 *                     `claim` moved on meanwhile (a seqlock re-check, fenced against DP's fence).
 *      DM  policy     store the policy, then set it on every inner pool of the live layout (each inner pool's M:
 *                     no claim); a spawn applies the stored policy and stack size to the pools it starts.
 *      DT  terminate  run the caller's owed slice (inclusive); closing = 1, so DP refuses and a stream of foreign
 *                     dispatches cannot starve DT; claim as DP but waiting; terminate every inner pool; closing = 0;
 *                     store closed. A spawn clears closing before it publishes.
 *
 *  Every inner pool keeps its own invariants (I1–I7 of forkunion/pools/flat.hpp): the distributed pool only ever calls
 *  its public API, from the claim holder. Domain 0's pool has the pool's exclusivity, the others are exclusive;
 *  each retires through its own tree, so the fan-in's critical path grows with the domains, not with T.
 *
 *  @section cost Cost of a dispatch
 *  Over a flat pool: one CAS and one store on the dispatcher's own line, one inner completion check and one inner
 *  publication per domain, and per slice one more indirect call through the domain's slot (whose job
 *  line is written only when the trampoline or context change, so a loop of identical dispatches leaves it
 *  shared). No allocation, no system call, no CAS retry.
 *
 *  @section threads Which threads may call what
 *  As for `basic_pool_t`: `spawn` and `terminate` from the controlling thread, never from a callback (`terminate`
 *  from a callback returns without effect); dispatches from any thread, one at a time, losers refused at once with
 *  `contended`; `set_idle_policy` and `is_complete` from any thread; `unsafe_join` by the dispatching thread on
 *  inclusive pools. The layout queries (`threads_count_in`, `locate_thread_in`, …) read what `spawn` wrote.
 */
#pragma once
#include <atomic>      // `std::atomic`, `std::atomic_thread_fence`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint64_t`
#include <exception>   // `std::terminate`
#include <new>         // `std::nothrow`, placement `new`
#include <thread>      // `std::this_thread::yield`
#include <type_traits> // `std::is_lvalue_reference_v`
#include <utility>     // `std::forward`

#include <forkunion/topology/affinity.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/pools/colocated.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/pools/deprecated.hpp>

namespace forkunion {

/**
 *  @brief  Splits `threads` over `domains` domains with `cores[d]` cores each, in proportion to the cores, at least
 *          one thread per domain: the exact quota `threads · cores[d] / Σ cores`, rounded by largest remainder
 *          (ties to more cores, then to the lower index). A domain listed with 0 cores counts as 1.
 *  @param  split  Receives the threads of each domain; they sum to `threads`.
 *  @return False (and `split` untouched) if `domains == 0`, `threads < domains`, or `threads` ≥ 2^31.
 *  O(domains²) in the worst case; a spawn-time computation.
 */
template <typename index_type_>
bool split_threads_by_cores(std::size_t const *cores, std::size_t domains, std::size_t threads,
                            index_type_ *split) noexcept {
    // 64-bit products: threads < 2^31 and at most 2^20 cores per domain keep every numerator below 2^51.
    if (domains == 0 || threads < domains || static_cast<std::uint64_t>(threads) >= (std::uint64_t(1) << 31))
        return false;
    auto cores_of = [&](std::size_t d) noexcept -> std::int64_t {
        std::size_t const c = cores[d] ? cores[d] : 1;
        return static_cast<std::int64_t>(c < (std::size_t(1) << 20) ? c : (std::size_t(1) << 20));
    };
    std::int64_t total = 0;
    for (std::size_t d = 0; d != domains; ++d) total += cores_of(d);
    std::int64_t const t = static_cast<std::int64_t>(threads);
    // remainder(d) = t·c_d − a_d·C: the quota's excess over the threads given, in units of 1/C.
    auto remainder = [&](std::size_t d, index_type_ given) noexcept {
        return t * cores_of(d) - static_cast<std::int64_t>(given) * total; // given <= threads < 2^31
    };
    std::int64_t assigned = 0;
    for (std::size_t d = 0; d != domains; ++d) {
        std::int64_t const floor = t * cores_of(d) / total;
        split[d] = static_cast<index_type_>(floor > 0 ? floor : 1);
        assigned += static_cast<std::int64_t>(split[d]);
    }
    // Bumps to one thread may overshoot: take back from the most over-served domain that keeps one.
    while (assigned > t) {
        std::size_t pick = domains;
        for (std::size_t d = 0; d != domains; ++d) {
            if (split[d] <= 1) continue;
            if (pick == domains || remainder(d, split[d]) < remainder(pick, split[pick]) ||
                (remainder(d, split[d]) == remainder(pick, split[pick]) && cores_of(d) <= cores_of(pick)))
                pick = d;
        }
        --split[pick], --assigned;
    }
    // Largest remainder: the rest goes to the domains whose quota exceeds their share the most.
    while (assigned < t) {
        std::size_t pick = 0;
        for (std::size_t d = 1; d != domains; ++d) {
            std::int64_t const mine = remainder(d, split[d]), best = remainder(pick, split[pick]);
            if (mine > best || (mine == best && cores_of(d) > cores_of(pick))) pick = d;
        }
        ++split[pick], ++assigned;
    }
    return true;
}

/**
 *  @brief  Compute domains as one pool. See the file comment for the split, the stealing order, the protocol and
 *          the threading contract.
 *
 *  @tparam micro_yield_type_  The micro-wait of idle loops.
 *  @tparam index_type_        Unsigned type of every count, task, thread, domain and generation.
 *  @tparam alignment_         Padding of each shared word.
 *
 *  Size: two padded lines (the claim, and the read-mostly layout); the per-domain state (a colocated pool and its
 *  job line, ~2 KiB) lives on each domain's node, the per-domain layout table on the heap. Not copyable,
 *  not movable.
 */
template <typename micro_yield_type_ = default_micro_yield_t, typename index_type_ = std::size_t,
          std::size_t alignment_ = default_alignment_k>
class basic_distributed_pool_t
    : public dispatch_verbs_t<basic_distributed_pool_t<micro_yield_type_, index_type_, alignment_>, index_type_>,
      public detail::deprecated_idle_calls_t<basic_distributed_pool_t<micro_yield_type_, index_type_, alignment_>> {
    template <typename, typename>
    friend struct detail::n_dynamic_job_t;

public:
    using micro_yield_t = micro_yield_type_;
    using index_t = index_type_;
    using generation_t = index_t;
    using prong_t = forkunion::prong_t<index_t>;
    using colocated_t = basic_colocated_pool_t<micro_yield_t, index_t, alignment_>;
    /**  What a dispatch runs on each thread: the global thread index and its compute domain. */
    using trampoline_t = void (*)(void *context, index_t thread, index_t compute_domain) noexcept;
    using publication_t = forkunion::publication_t<generation_t>;
    static constexpr std::size_t alignment_k = alignment_;
    /**  What `locate_thread_in` answers for a thread that does not live in the domain asked about. */
    static constexpr index_t npos_k = static_cast<index_t>(~index_t(0));

    static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "the claim word needs lock-free 64-bit atomics");

    /**  @brief  Where a global thread lives. */
    struct thread_location_t {
        index_t compute_domain = 0;
        index_t local_thread = 0; ///< Its index among its domain's threads.
    };

    basic_distributed_pool_t() noexcept = default;
    basic_distributed_pool_t(basic_distributed_pool_t const &) = delete;
    basic_distributed_pool_t(basic_distributed_pool_t &&) = delete;
    basic_distributed_pool_t &operator=(basic_distributed_pool_t const &) = delete;
    basic_distributed_pool_t &operator=(basic_distributed_pool_t &&) = delete;
    ~basic_distributed_pool_t() noexcept {
        terminate();
        release_layout_();
    }

    /**
     *  @brief  Starts `threads` contributors over every compute domain of `topology` (any type with
     *          `compute_domains_count()`, `logical_cores_count_in(d)`, `cores_in(d)`, `local_memory_of(d)` and
     *          `memory_node_id(m)`, such as `machine_topology_t`), split in proportion to the domains' cores, each
     *          domain's threads placed as `placement` says and named by global index. Returns once every worker
     *          is placed. Inclusive: the caller is global thread 0 (pinned to domain 0 until `terminate`).
     *
     *  @retval invalid_argument  `threads` is 0, below the number of compute domains, or ≥ 2^31.
     *  @retval already_spawned   the pool has threads; `terminate()` first.
     *  @retval bad_alloc, thread_refused  a domain could not start; every domain that did was stopped.
     *  A refused pin or memory binding is not a failure: see `unpinned_threads_count()`, `memory_placed_in(d)`.
     */
    template <typename topology_type_>
    status_t spawn(topology_type_ const &topology, index_t threads,
                   caller_exclusivity_t exclusivity = caller_inclusive_k, thread_placement_t placement = {}) noexcept {
        std::size_t const domains = static_cast<std::size_t>(topology.compute_domains_count());
        if (threads == 0) return detail::refuse("distributed spawn: threads is 0; a pool needs at least one thread");
        if (domains == 0) return detail::refuse("distributed spawn: the topology has no compute domain");
        if (domains > static_cast<std::size_t>(threads))
            return detail::refuse("distributed spawn: threads is below the topology's compute domains; each domain "
                                  "needs at least one thread (use a colocated pool for fewer)");
        if (static_cast<std::uint64_t>(threads) >= (std::uint64_t(1) << 31))
            return detail::refuse("distributed spawn: threads is 2^31 or more");
        if (threads_() != 0) return status_code_t::already_spawned_k;
        // The previous spawn's layout is reused when it has these domains on these nodes, so a dispatch or an
        // `is_complete` that raced `terminate` reads live memory; any other layout is retired, never freed, until
        // the destructor.
        domain_t *table = fits_(topology, domains, table_(), domains_()) ? table_() : nullptr;
        retired_layout_t *swap = nullptr; // a retired layout that fits: it becomes live, the live one retires
        for (retired_layout_t *older = retired_; !table && older; older = older->older)
            if (fits_(topology, domains, older->table, older->count)) table = older->table, swap = older;
        bool const reused = table != nullptr;
        retired_layout_t *entry = nullptr;
        if (!reused) table = new (std::nothrow) domain_t[domains], entry = new (std::nothrow) retired_layout_t;
        std::size_t *cores = new (std::nothrow) std::size_t[domains];
        index_t *split = new (std::nothrow) index_t[domains];
        status_t status;
        if (!table || (!reused && !entry) || !cores || !split)
            status = status_code_t::bad_alloc_k;
        else {
            for (std::size_t d = 0; d != domains; ++d)
                cores[d] = static_cast<std::size_t>(topology.logical_cores_count_in(d));
            if (!split_threads_by_cores(cores, domains, threads, split))
                status = detail::refuse("distributed spawn: threads cannot be split over the compute domains");
        }
        if (status) {
            index_t first = 0;
            for (std::size_t d = 0; d != domains; ++d) {
                table[d].first_thread = first;
                table[d].threads = split[d];
                first = static_cast<index_t>(first + split[d]);
            }
        }
        delete[] cores;
        delete[] split;
        if (!status) {
            if (!reused) delete[] table, delete entry;
            return status;
        }

        // Oversubscription: the cores each domain's threads will really run on (S_d, see `effective_cores`) and
        // their union U. Domain d's spinners may count on min(|S_d|, |U| − (threads − T_d)) cores: their own
        // cores, and never more than what is left once every other thread of the pool holds one. Domains that
        // do not overlap get |S_d|; domains the OS cannot pin (recorded topologies) all share the caller's mask.
        cpu_mask_t allowed, effective, united;
        bool const known = static_cast<bool>(try_read_current_affinity(allowed));
        for (std::size_t d = 0; d != domains; ++d) {
            table[d].cores = known ? effective_cores(topology.cores_in(d), placement.pinning, allowed, effective)
                                   : allowed_cores_count();
            if (known) united.unite_with(effective);
        }
        std::size_t const everywhere = known ? united.count() : allowed_cores_count();

        // Domain 0 last: its inclusive spawn pins the caller, whose mask the other domains' workers inherit.
        std::size_t spawned = domains;
        while (spawned != 0) {
            std::size_t const d = spawned - 1;
            std::size_t const others = static_cast<std::size_t>(threads) - table[d].threads;
            std::size_t const left = everywhere > others ? everywhere - others : 0;
            thread_placement_t here = placement;
            here.first_name_index = placement.first_name_index + table[d].first_thread;
            here.cores = table[d].cores < left ? table[d].cores : left;
            status = spawn_domain_(topology, table[d], d, d == 0 ? exclusivity : caller_exclusive_k, here);
            if (!status) break;
            --spawned;
        }
        if (!status) {
            for (std::size_t d = spawned; d != domains; ++d) table[d].slot->pool.terminate();
            if (!reused) free_layout_(table, static_cast<index_t>(domains)), delete entry;
            return status;
        }

        if (swap) {
            *swap = retired_layout_t{table_(), domains_(), swap->older};
            publish_layout_(table, static_cast<index_t>(domains));
        } else if (!reused)
            retire_layout_(table, static_cast<index_t>(domains), entry);
        // A `set_idle_policy` that walked the previous layout may have missed the pools `spawn_domain_` configured
        // before it: apply the latest policy to the live layout once more (DM).
        apply_idle_policy_();
        bool oversubscribed = false;
        for (std::size_t d = 0; d != domains; ++d)
            oversubscribed = oversubscribed || table[d].slot->pool.oversubscribed();
        exclusivity_word_.store(exclusivity, std::memory_order_relaxed);
        oversubscribed_word_.store(oversubscribed, std::memory_order_relaxed);
        forks_.store(fork_generation(), std::memory_order_relaxed);
        threads_count_.store(threads, std::memory_order_relaxed);
        closing_.store(false, std::memory_order_relaxed); // a terminate that lost to another one may leave it set
        // D4 → published: pairs with the acquire of the next claim (DP), which then sees the layout above.
        std::uint64_t const ticket = claim_.load(std::memory_order_relaxed);
        claim_.store(sequence_of_(ticket) * 4 + published_k, std::memory_order_release);
        return status_code_t::success_k;
    }

    /**
     *  @brief  Completes the dispatch in flight (running the caller's owed slice of its own unjoined inclusive
     *          dispatch), stops every domain's threads and puts the caller's mask back. No-op on an unspawned pool
     *          and from inside a callback of this pool. The per-domain memory stays mapped until the next `spawn`
     *          or the destructor, so a dispatch or `is_complete` racing `terminate` from another thread reads live
     *          memory and is refused (`not_spawned`, `contended`) or answers true, never served.
     */
    void terminate() noexcept {
        if (threads_() == 0) return;
        if (forked_()) return abandon_();
        for (index_t d = 0; d != domains_(); ++d)
            if (table_()[d].slot->pool.called_from_callback()) return;
        std::uint64_t ticket = claim_.load(std::memory_order_acquire);
        if (exclusivity_() == caller_inclusive_k && state_of_(ticket) == published_k) unsafe_join(token_of_(ticket));

        // DT: claim like DP, but wait for the dispatch in flight instead of being refused. `closing_` first: DP
        // refuses from here on, so a stream of foreign dispatches cannot starve this claim (relaxed: it only
        // steers who wins the word).
        closing_.store(true, std::memory_order_relaxed);
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        for (;;) {
            ticket = claim_.load(std::memory_order_acquire);
            if (state_of_(ticket) == published_k && complete_everywhere_() &&
                claim_.compare_exchange_strong(ticket, next_claim_(ticket), std::memory_order_acq_rel,
                                               std::memory_order_relaxed))
                break;
            backoff_(micro_yield, spins);
        }
        // Domain 0 last: it restores the caller's mask after every other domain's threads are gone.
        for (index_t d = domains_(); d-- > 0;) table_()[d].slot->pool.terminate();
        exclusivity_word_.store(caller_inclusive_k, std::memory_order_relaxed);
        oversubscribed_word_.store(false, std::memory_order_relaxed);
        threads_count_.store(0, std::memory_order_relaxed);
        closing_.store(false, std::memory_order_relaxed);
        // D4: stays closed until the next spawn.
        claim_.store(sequence_of_(next_claim_(ticket)) * 4 + closed_k, std::memory_order_release);
    }

    // ---- Layout ----

    /**  @brief  Contributors of every dispatch, over all domains; 0 when unspawned. */
    [[nodiscard]] index_t threads_count() const noexcept { return threads_(); }
    /**  @brief  Whether this process is a `fork()`ed child of the one that spawned the pool: its workers do not
     *          exist here, every dispatch is refused with `forked`, and a join returns at once (every domain's
     *          pool checks it). One relaxed load; any thread. */
    [[nodiscard]] bool forked() const noexcept { return forked_(); }
    /**  @brief  Compute domains the pool spans (the topology's, at spawn); 0 when unspawned. */
    [[nodiscard]] index_t compute_domains_count() const noexcept { return threads_() ? domains_() : index_t(0); }
    /**  @brief  Threads of domain `d`; 0 if `d` is out of range. */
    [[nodiscard]] index_t threads_count_in(std::size_t d) const noexcept {
        return d < compute_domains_count() ? table_()[d].threads : index_t(0);
    }
    /**  @brief  The global index of domain `d`'s first thread; `threads_count()` if `d` is out of range. */
    [[nodiscard]] index_t first_thread_in(std::size_t d) const noexcept {
        return d < compute_domains_count() ? table_()[d].first_thread : threads_();
    }
    /**  @brief  The index of global thread `thread` among domain `d`'s threads, or `npos_k` if it lives elsewhere. */
    [[nodiscard]] index_t locate_thread_in(index_t thread, std::size_t d) const noexcept {
        if (d >= compute_domains_count() || thread < table_()[d].first_thread) return npos_k;
        index_t const local = static_cast<index_t>(thread - table_()[d].first_thread);
        return local < table_()[d].threads ? local : npos_k;
    }
    /**  @brief  The domain and local index of global thread `thread` (binary search over domains). @pre
     *          `thread < threads_count()`. */
    [[nodiscard]] thread_location_t locate_thread(index_t thread) const noexcept {
        index_t low = 0, high = domains_(); // the domain is the last one whose first thread is <= `thread`
        while (high - low > 1) {
            index_t const middle = static_cast<index_t>(low + (high - low) / 2);
            if (table_()[middle].first_thread <= thread)
                low = middle;
            else
                high = middle;
        }
        return {low, static_cast<index_t>(thread - (domains_() ? table_()[low].first_thread : index_t(0)))};
    }
    [[nodiscard]] caller_exclusivity_t caller_exclusivity() const noexcept { return exclusivity_(); }
    /**  @brief  Threads running with the mask they inherited, over all domains (see the colocated pool). */
    [[nodiscard]] std::size_t unpinned_threads_count() const noexcept {
        std::size_t unpinned = 0;
        for (index_t d = 0; d != domains_(); ++d) unpinned += table_()[d].slot->pool.unpinned_threads_count();
        return unpinned;
    }
    /**  @brief  Threads of domain `d` running with the mask they inherited. */
    [[nodiscard]] index_t unpinned_threads_count_in(std::size_t d) const noexcept {
        return d < domains_() ? table_()[d].slot->pool.unpinned_threads_count() : index_t(0);
    }
    /**  @brief  Whether domain `d`'s pool, thread table and job sit on its local node. */
    [[nodiscard]] bool memory_placed_in(std::size_t d) const noexcept {
        return d < domains_() && table_()[d].placed && table_()[d].slot->pool.memory_placed();
    }
    /**  @brief  Whether idle threads of some domain back off to `yield` (see `spawn`). */
    [[nodiscard]] bool oversubscribed() const noexcept { return threads_() && oversubscribed_(); }
    /**  @brief  Bytes owned: this object, the layout table, and each domain's mapped state and thread table. */
    [[nodiscard]] std::size_t memory_usage() const noexcept {
        std::size_t bytes = sizeof(basic_distributed_pool_t) + domains_() * sizeof(domain_t);
        for (index_t d = 0; d != domains_(); ++d)
            bytes += table_()[d].slot_bytes + table_()[d].slot->pool.memory_usage() - sizeof(colocated_t);
        return bytes;
    }
    /**
     *  @brief  How idle workers of every domain wait, from now on and across respawns (see
     *          `basic_pool_t::set_idle_policy`). Any thread, never refused by a dispatch (DM).
     *  @retval invalid_argument  as the flat pool's; nothing changed.
     */
    status_t set_idle_policy(idle_policy_t policy) noexcept {
        if (!policy.valid()) return detail::refuse_idle_policy(policy);
        idle_.store(policy_word_(policy), std::memory_order_seq_cst);
        apply_idle_policy_();
        return status_code_t::success_k;
    }
    /**  @brief  The idle policy in force: the default (adaptive) until `set_idle_policy`. */
    [[nodiscard]] idle_policy_t idle_policy() const noexcept {
        std::uint64_t const word = idle_.load(std::memory_order_relaxed);
        return {static_cast<idle_mode_t>(word & 3u), word >> 2};
    }
    /**  @brief  Workers of every domain blocked in the kernel right now; a snapshot. */
    [[nodiscard]] std::size_t parked_threads_count() const noexcept {
        std::size_t parked = 0;
        // A respawn may replace the layout meanwhile: count in one table, within the count it holds.
        layout_view_t const layout = layout_();
        for (index_t d = 0; d != layout.count; ++d) parked += layout.table[d].slot->pool.parked_threads_count();
        return parked;
    }
    /**  @brief  The stack size of the workers the next `spawn` starts (see `basic_pool_t::set_stack_size`). */
    status_t set_stack_size(std::size_t bytes) noexcept {
        if (status_t const valid = colocated_t::flat_t::check_stack_size(bytes); !valid) return valid;
        stack_bytes_.store(bytes, std::memory_order_relaxed);
        return status_code_t::success_k;
    }
    [[nodiscard]] std::size_t stack_size() const noexcept { return stack_bytes_.load(std::memory_order_relaxed); }

    // ---- Dispatch: `for_threads`, `for_n`, `for_n_dynamic`, `for_slices` and `unsafe_for_threads` come from
    // `dispatch_verbs_t` (global thread indices; `for_n_dynamic` steals inside the thief's domain first, then
    // across domains, see the file comment); the split dispatch's other half follows. ----

    /**
     *  @brief  True once dispatch `generation` has retired on every thread of every domain, or if it is not in
     *          flight (0, stale, never issued, or the pool is unspawned). Never blocks; any thread (DC). A true
     *          answer is an acquire: every slice's writes are visible to the caller.
     */
    [[nodiscard]] bool is_complete(generation_t generation) const noexcept {
        if (generation == 0) return true;
        // Pairs with the release of DP: a published state's g_d are visible.
        std::uint64_t const ticket = claim_.load(std::memory_order_acquire);
        if (token_of_(ticket) != generation || state_of_(ticket) == closed_k) return true;
        if (state_of_(ticket) == claimed_k) return false;
        if (complete_everywhere_()) return true;
        // A g_d read may belong to a newer dispatch; then `claim` has moved on, and `generation` is complete (D3).
        // Pairs with DP's release fence (seqlock).
        std::atomic_thread_fence(std::memory_order_acquire);
        // Acquire: a newer claim was taken after its claimer saw every domain complete, so answering "complete"
        // from it must also see every slice's writes (and end every read of the job).
        return claim_.load(std::memory_order_acquire) != ticket;
    }

    /**
     *  @brief  Runs the caller's owed slice (inclusive pools: global thread 0, on the thread that dispatched) and
     *          blocks until `generation` is complete on every domain (DJ). Stale or zero generations return at once.
     */
    void unsafe_join(generation_t generation) noexcept {
        if (generation == 0) return;
        std::uint64_t const ticket = claim_.load(std::memory_order_acquire);
        if (token_of_(ticket) != generation || state_of_(ticket) != published_k) return;
        layout_view_t const layout = layout_(); // a respawn may replace it meanwhile: then the claim moved on
        for (index_t d = 0; d != layout.count; ++d) {
            generation_t const inner = layout.table[d].generation.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire); // pairs with DP's release fence (seqlock)
            // A newer claim: `generation` is done. Acquire, because that claimer saw every domain complete: the
            // slices' writes, and the workers' last reads of this dispatch's job, happen-before our return.
            if (claim_.load(std::memory_order_acquire) != ticket) return;
            layout.table[d].slot->pool.unsafe_join(inner);
        }
    }

    /**
     *  @brief  The low-level dispatch beneath every `for_*` (DP): claims the pool, runs `trampoline(context,
     *          thread, compute_domain)` on every global thread, and returns the odd generation; with
     *          `resets_cursors` every claim cursor is zeroed first. A lost claim, and a dispatch from inside a
     *          callback (thread 0 included), is refused with `contended`; an unspawned pool with `not_spawned`.
     */
    publication_t unsafe_publish(trampoline_t trampoline, void *context, bool resets_cursors) noexcept {
        if (forked_()) return {0, status_code_t::forked_k};
        if (threads_() == 0) return {0, status_code_t::not_spawned_k};
        // D3. Acquire pairs with DP's release store (g_d) and spawn's; the inner completion checks are acquires
        // too, so every slice of the previous dispatch happened-before what we write next.
        std::uint64_t ticket = claim_.load(std::memory_order_acquire);
        if (state_of_(ticket) != published_k || closing_.load(std::memory_order_relaxed) || !complete_everywhere_() ||
            !claim_.compare_exchange_strong(ticket, next_claim_(ticket), std::memory_order_acq_rel,
                                            std::memory_order_relaxed))
            return {0, threads_() == 0 ? status_code_t::not_spawned_k : status_code_t::contended_k};
        // The seqlock's writer half: g_d stores below are ordered after the claim for DC and DJ's re-checks.
        std::atomic_thread_fence(std::memory_order_release);

        index_t const domains = domains_();
        if (resets_cursors) // Relaxed: published by each domain's T2 release below.
            for (index_t d = 0; d != domains; ++d)
                for (index_t local = 0; local != table_()[d].threads; ++local)
                    table_()[d].slot->pool.unsafe_claim_cursor(local).store(0, std::memory_order_relaxed);
        for (index_t d = 0; d != domains; ++d) {
            domain_t &domain = table_()[d];
            domain_slot_t &slot = *domain.slot;
            // Written only when changed: no reader is left (D3), and an unchanged line stays shared.
            if (slot.trampoline != trampoline) slot.trampoline = trampoline;
            if (slot.context != context) slot.context = context;
            auto const inner = slot.pool.unsafe_publish(&domain_trampoline_, &slot, false);
            if (!inner.generation) std::terminate(); // unreachable: D1 leaves no other claimer of an inner pool
            domain.generation.store(inner.generation, std::memory_order_relaxed); // released below
        }
        std::uint64_t const published = next_claim_(ticket) + published_k;
        // D2. Pairs with the acquire of DC, DJ and the next claim.
        claim_.store(published, std::memory_order_release);
        return {token_of_(published), status_code_t::success_k};
    }

    /**  @brief  Publishes one of the shared jobs (`detail::*_job_t`); every thread runs `job.run(thread, domain)`.
     */
    template <typename job_type_>
    publication_t unsafe_publish_job(job_type_ &job) noexcept {
        return unsafe_publish(&job_trampoline_<job_type_>, std::addressof(job), job_type_::resets_cursors_k);
    }

    /**  @brief  `unsafe_for_threads`' publication: `fn(prong)` through its address, which must outlive it. */
    template <typename fn_type_>
    publication_t unsafe_publish_threads(fn_type_ &fn) noexcept {
        void *context = const_cast<void *>(static_cast<void const volatile *>(std::addressof(fn)));
        return unsafe_publish(&threads_trampoline_<fn_type_>, context, false);
    }

    /**  @brief  Global thread `thread`'s claim cursor (in its domain's pool). @pre `thread < threads_count()`. */
    [[nodiscard]] std::atomic<index_t> &unsafe_claim_cursor(index_t thread) noexcept {
        thread_location_t const location = locate_thread(thread);
        return table_()[location.compute_domain].slot->pool.unsafe_claim_cursor(location.local_thread);
    }

private:
    /**  Per domain, in one mapping on the domain's node: its pool, and the job its workers read. */
    struct domain_slot_t {
        colocated_t pool;
        alignas(alignment_k) trampoline_t trampoline = nullptr; // own line: the holder writes it per dispatch
        void *context = nullptr;
        index_t first_thread = 0;
        index_t domain = 0;
    };
    static_assert(alignof(domain_slot_t) <= 4096, "a slot starts on a page boundary");

    /**  Per domain, on the dispatcher's side: the layout and `g_d`. */
    struct domain_t {
        domain_slot_t *slot = nullptr;
        std::size_t slot_bytes = 0;
        numa_node_id_t node = any_numa_node_k; // the node the slot was mapped for
        std::size_t cores = 0;                 // spawn only: the cores its threads run on
        index_t first_thread = 0;
        index_t threads = 0;
        std::atomic<generation_t> generation{0}; // g_d, written by the claim holder (D2)
        bool placed = false;                     // the slot's mapping is bound to the domain's node
    };

    static constexpr std::uint64_t claimed_k = 0, published_k = 1, closed_k = 2;
    static constexpr std::uint64_t state_of_(std::uint64_t ticket) noexcept { return ticket & 3u; }
    static constexpr std::uint64_t sequence_of_(std::uint64_t ticket) noexcept { return ticket >> 2; }
    /**  claimed(k + 1) from any state of sequence k. */
    static constexpr std::uint64_t next_claim_(std::uint64_t ticket) noexcept { return (sequence_of_(ticket) + 1) * 4; }
    /**  D5: `2k + 1` in `index_t`. */
    static constexpr generation_t token_of_(std::uint64_t ticket) noexcept {
        return static_cast<generation_t>(sequence_of_(ticket) * 2 + 1);
    }

    /**  The dispatcher's word (DP, DT, DM): its own line, written once or twice per dispatch. */
    alignas(alignment_k) std::atomic<std::uint64_t> claim_{closed_k};
    /**  DT waits: a published pool refuses new claims until DT wins it (same line as the word: no extra miss). */
    std::atomic<bool> closing_{false};
    /**  The layout: written by `spawn` and `terminate`, read by every thread of every dispatch. Atomics, because a
     *   refused dispatcher or an `is_complete` may read them while the controlling thread respawns. */
    alignas(alignment_k) std::atomic<index_t> threads_count_{0};
    std::atomic<index_t> domains_count_{0};
    std::atomic<domain_t *> table_ptr_{nullptr};
    std::atomic<caller_exclusivity_t> exclusivity_word_{caller_inclusive_k};
    std::atomic<bool> oversubscribed_word_{false};
    std::atomic<std::uint32_t> forks_{0};               // `fork_generation()` at spawn
    std::atomic<std::uint64_t> idle_{policy_word_({})}; // the idle policy, packed as the flat pool packs it
    std::atomic<std::size_t> stack_bytes_{0};           // the next spawn's worker stacks
    /**  Layouts a respawn replaced: kept mapped until the destructor, for the readers that raced it. */
    struct retired_layout_t {
        domain_t *table = nullptr;
        index_t count = 0;
        retired_layout_t *older = nullptr;
    };
    retired_layout_t *retired_ = nullptr;

    /**  Relaxed: only `spawn`/`terminate` write them, and a claim's acquire orders what follows. */
    index_t threads_() const noexcept { return threads_count_.load(std::memory_order_relaxed); }
    index_t domains_() const noexcept { return domains_count_.load(std::memory_order_relaxed); }
    domain_t *table_() const noexcept { return table_ptr_.load(std::memory_order_relaxed); }
    caller_exclusivity_t exclusivity_() const noexcept { return exclusivity_word_.load(std::memory_order_relaxed); }
    bool oversubscribed_() const noexcept { return oversubscribed_word_.load(std::memory_order_relaxed); }
    bool forked_() const noexcept { return threads_() && forks_.load(std::memory_order_relaxed) != fork_generation(); }
    static constexpr std::uint64_t policy_word_(idle_policy_t policy) noexcept {
        return (policy.microseconds << 2) | static_cast<std::uint64_t>(policy.mode);
    }

    /**
     *  DM: gives every domain's pool of the live layout the policy in `idle_`, until `idle_` stays what it applied.
     *  Any thread, any time. The layout is read as `layout_` reads it (never past a table's end, whatever respawn
     *  runs), and a seq_cst fence sits between the caller's store (to `idle_` by a setter, to the layout by a spawn)
     *  and its loads, so of a setter and a respawn racing, one sees the other's store: either the setter walks
     *  the new layout, or the spawn reads the new policy. The re-check makes concurrent setters converge on the
     *  last value stored.
     */
    void apply_idle_policy_() noexcept {
        for (;;) {
            std::atomic_thread_fence(std::memory_order_seq_cst);
            std::uint64_t const word = idle_.load(std::memory_order_seq_cst);
            idle_policy_t const policy{static_cast<idle_mode_t>(word & 3u), word >> 2};
            layout_view_t const layout = layout_();
            for (index_t d = 0; d != layout.count; ++d) (void)layout.table[d].slot->pool.set_idle_policy(policy);
            if (idle_.load(std::memory_order_seq_cst) == word) return;
        }
    }

    /**  Every domain's latest publication has retired (acquires, through each inner `is_complete`). */
    bool complete_everywhere_() const noexcept {
        layout_view_t const layout = layout_();
        for (index_t d = 0; d != layout.count; ++d)
            if (!layout.table[d].slot->pool.is_complete(layout.table[d].generation.load(std::memory_order_relaxed)))
                return false;
        return true;
    }

    /**  One idle step of `terminate`'s wait: the micro-wait, plus `yield` once an oversubscribed pool spun long. */
    void backoff_(micro_yield_t &micro_yield, std::size_t &spins) noexcept {
        micro_yield_with(micro_yield, index_t(0));
        if (oversubscribed_() && ++spins >= colocated_t::flat_t::oversubscribed_spins_k) std::this_thread::yield();
    }

    /**  Maps domain `d`'s slot on its node (unbound if refused), constructs its pool and spawns it. */
    template <typename topology_type_>
    status_t spawn_domain_(topology_type_ const &topology, domain_t &domain, std::size_t d,
                           caller_exclusivity_t exclusivity, thread_placement_t const &placement) noexcept {
        if (!domain.slot) { // a new layout: map the slot on the domain's node (unbound if refused)
            numa_node_id_t const node = to_numa_node_id(topology.memory_node_id(topology.local_memory_of(d)));
            auto mapping = domain_allocator_t<domain_slot_t>(node).try_allocate_at_least(1);
            domain.placed = static_cast<bool>(mapping.status);
            if (!mapping.status) mapping = domain_allocator_t<domain_slot_t>().try_allocate_at_least(1);
            if (!mapping.status) return status_code_t::bad_alloc_k;
            domain.slot = ::new (static_cast<void *>(mapping.ptr)) domain_slot_t;
            domain.slot_bytes = mapping.count * sizeof(domain_slot_t);
            domain.node = node;
        }
        domain.slot->first_thread = domain.first_thread;
        domain.slot->domain = static_cast<index_t>(d);
        colocated_t &pool = domain.slot->pool;
        (void)pool.set_idle_policy(idle_policy());
        if (status_t const stack = pool.set_stack_size(stack_size()); !stack) return stack;
        return pool.spawn_on(topology, d, domain.threads, exclusivity, placement);
    }

    /**  Whether layout `table` of `count` domains has `domains` domains on the nodes `topology` gives them, so a
     *   spawn may reuse it in place (a respawn on the same machine, or back on one it left). */
    template <typename topology_type_>
    static bool fits_(topology_type_ const &topology, std::size_t domains, domain_t const *table,
                      index_t count) noexcept {
        if (!table || static_cast<std::size_t>(count) != domains) return false;
        for (std::size_t d = 0; d != domains; ++d)
            if (table[d].node != to_numa_node_id(topology.memory_node_id(topology.local_memory_of(d)))) return false;
        return true;
    }

    /**  Makes `table` the live layout; the previous one, if any, joins the retired list in `entry` (allocated by
     *   `spawn` before anything started, so this cannot fail), its pools terminated. */
    void retire_layout_(domain_t *table, index_t count, retired_layout_t *entry) noexcept {
        if (domain_t *const previous = table_()) {
            *entry = retired_layout_t{previous, domains_(), retired_};
            retired_ = entry;
        } else
            delete entry;
        publish_layout_(table, count);
    }

    /**
     *  Makes (`table`, `count`) the live layout so that a reader on another thread never indexes a table past its
     *  end: the count drops to the smaller of the two first, then the pointer, then the new count, each a release
     *  store, and `layout_` reads count, pointer, count with acquires and keeps the smaller count (whichever table
     *  it saw holds that many domains). Replaced tables are never freed before the destructor (retired list).
     */
    void publish_layout_(domain_t *table, index_t count) noexcept {
        index_t const previous = domains_();
        domains_count_.store(previous < count ? previous : count, std::memory_order_release);
        table_ptr_.store(table, std::memory_order_release);
        domains_count_.store(count, std::memory_order_release);
    }

    struct layout_view_t {
        domain_t *table;
        index_t count;
    };
    /**  The live layout for a thread that may race a respawn (a refused dispatcher, `is_complete`, a foreign
     *   join): a table and a count it holds, possibly of a layout already replaced (see `publish_layout_`). */
    layout_view_t layout_() const noexcept {
        index_t const before = domains_count_.load(std::memory_order_acquire);
        domain_t *const table = table_ptr_.load(std::memory_order_acquire);
        index_t const after = domains_count_.load(std::memory_order_acquire);
        return {table, before < after ? before : after};
    }

    static void free_layout_(domain_t *table, index_t count) noexcept {
        for (index_t d = 0; d != count; ++d) release_domain_(table[d]);
        delete[] table;
    }

    /**  Frees every layout, live and retired (every pool terminated). Destructor only. */
    void release_layout_() noexcept {
        if (domain_t *const table = table_()) free_layout_(table, domains_());
        table_ptr_.store(nullptr, std::memory_order_relaxed);
        domains_count_.store(0, std::memory_order_relaxed);
        while (retired_) {
            retired_layout_t *const entry = retired_;
            retired_ = entry->older;
            free_layout_(entry->table, entry->count);
            delete entry;
        }
    }

    /**  In a `fork()`ed child: every domain's pool abandons its inherited threads; the layout stays for reuse. */
    [[gnu::cold, gnu::noinline]] void abandon_() noexcept {
        for (index_t d = 0, domains = domains_(); d != domains; ++d) table_()[d].slot->pool.terminate();
        exclusivity_word_.store(caller_inclusive_k, std::memory_order_relaxed);
        oversubscribed_word_.store(false, std::memory_order_relaxed);
        threads_count_.store(0, std::memory_order_relaxed);
        std::uint64_t const ticket = claim_.load(std::memory_order_relaxed);
        claim_.store(sequence_of_(next_claim_(ticket)) * 4 + closed_k, std::memory_order_release);
    }

    /**  Terminates domain `domain`'s pool (restoring the caller's mask on domain 0) and unmaps its slot. */
    static void release_domain_(domain_t &domain) noexcept {
        if (!domain.slot) return;
        domain.slot->pool.terminate();
        domain.slot->~domain_slot_t();
        domain_allocator_t<domain_slot_t>().deallocate(domain.slot, domain.slot_bytes / sizeof(domain_slot_t));
        domain.slot = nullptr;
    }

    /**  What every inner pool runs: local thread → global thread, plus the domain, into the dispatch's trampoline. */
    static void domain_trampoline_(void *context, index_t local) noexcept {
        domain_slot_t const &slot = *static_cast<domain_slot_t const *>(context);
        slot.trampoline(slot.context, static_cast<index_t>(slot.first_thread + local), slot.domain);
    }

    // ---- Forks ----

    template <typename job_type_>
    static void job_trampoline_(void *job, index_t thread, index_t domain) noexcept {
        static_cast<job_type_ *>(job)->run(thread, domain);
    }

    template <typename fn_type_>
    static void threads_trampoline_(void *context, index_t thread, index_t domain) noexcept {
        call_with_prong(*static_cast<fn_type_ *>(context), prong_t{thread, thread, domain});
    }

    /**  Drains `count` threads of `victims`, from local `start` in the coprime order seeded by `seed`. */
    template <typename job_type_>
    void sweep_(job_type_ &job, domain_t &victims, index_t start, index_t seed, index_t count, index_t threads,
                index_t thread, index_t domain) noexcept {
        index_t const size = victims.threads;
        index_t const stride = coprime_stride(size, seed);
        index_t victim = start;
        for (index_t left = count; left != 0; --left) {
            victim = next_in_coprime_order(victim, stride, size);
            drain_(job, victims, victim, threads, thread, domain);
        }
    }

    /**  Takes tasks from local thread `local` of `owner_domain` (global `first_thread + local`): at most one
     *   failing increment per cursor and thief (I5 over all threads of the pool). */
    template <typename job_type_>
    static void drain_(job_type_ &job, domain_t &owner_domain, index_t local, index_t threads, index_t thread,
                       index_t domain) noexcept {
        job.drain(owner_domain.slot->pool.unsafe_claim_cursor(local),
                  static_cast<index_t>(owner_domain.first_thread + local), threads, thread, domain);
    }

    /**  `for_n_dynamic`'s order: 1. its own block, 2. the rest of its domain, 3. the other domains, each from local
     *   `local % size`, domains in a coprime order seeded by the thief's domain. */
    template <typename job_type_>
    void steal_(job_type_ &job, index_t thread, index_t domain) noexcept {
        index_t const threads = threads_(), domains = domains_();
        domain_t *const table = table_();
        domain_t &home = table[domain];
        index_t const local = static_cast<index_t>(thread - home.first_thread);
        drain_(job, home, local, threads, thread, domain);
        sweep_(job, home, local, local, static_cast<index_t>(home.threads - 1), threads, thread, domain);
        index_t const domain_stride = coprime_stride(domains, domain);
        index_t victim_domain = domain;
        for (index_t left = static_cast<index_t>(domains - 1); left != 0; --left) {
            victim_domain = next_in_coprime_order(victim_domain, domain_stride, domains);
            domain_t &victims = table[victim_domain];
            index_t const start = static_cast<index_t>(local % victims.threads);
            drain_(job, victims, start, threads, thread, domain);
            sweep_(job, victims, start, local, static_cast<index_t>(victims.threads - 1), threads, thread, domain);
        }
    }
};

/**  @brief  The default distributed pool: `std::size_t` indices, the target's micro-wait, 128-byte padding. */
using distributed_pool_t = basic_distributed_pool_t<>;

} // namespace forkunion
