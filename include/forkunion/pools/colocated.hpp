/**
 *  @file   forkunion/pools/colocated.hpp
 *  @brief  `basic_colocated_pool_t` and `colocated_pool_t`: a flat pool whose threads are pinned to one compute domain.
 *
 *  A colocated pool is a `basic_pool_t` (forkunion/pools/flat.hpp) plus placement: `spawn_on(topology, domain, threads,
 *  exclusivity)` starts the threads, pins each one to the domain's cores, names it `name:NNN`, puts the pool's
 *  thread table on the domain's NUMA node, and counts what the OS refused. Everything else, the dispatch API, its
 *  guarantees (one dispatch at a time, `contended` refusals, odd generations, thread-0 nested dispatches on
 *  exclusive pools) and its hot path, is the flat pool's, unchanged: the colocated pool forwards to it.
 *
 *  @code
 *  fu::machine_topology_t topology;
 *  (void)topology.try_harvest();
 *  fu::colocated_pool_t pool;
 *  if (!pool.spawn_on(topology, 0, topology.logical_cores_count_in(0))) return;
 *  pool.for_n(1000, [](fu::colocated_pool_t::prong_t prong) noexcept { use(prong.task, prong.compute_domain); });
 *  @endcode
 *
 *  @section use When to use it, and when not
 *  Use it to keep one loop's threads, and the memory they stream, on one NUMA node or one class of cores (the big
 *  cores of a big.LITTLE chip), or as a building block: `distributed_pool_t` (forkunion/pools/distributed.hpp) is one
 *  colocated pool per compute domain. To use the whole machine, prefer the distributed pool.
 *
 *  @section placement Placement
 *  - Pinning (`thread_placement_t::pinning`): `domain_k` (default) lets each thread run on any core of the domain
 *    and the OS balance inside it; `core_k` pins thread t to the domain's core `t mod cores` (ascending OS ids);
 *    `none_k` leaves the mask every thread inherits from the spawning thread.
 *  - Which threads: every worker pins itself, in a setup dispatch inside `spawn_on`. On a caller-inclusive pool the
 *    caller is thread 0 and is pinned too; its mask is saved first and put back by `terminate`. Thread 0's slice
 *    runs on whichever thread dispatches, pinned only if that is the thread that spawned the pool.
 *  - Refusals are counted, never fatal: a core set the OS refuses (ids this machine lacks, outside the cpuset)
 *    leaves that thread with the mask it had; `unpinned_threads_count()` says how many, and the process-wide
 *    `affinity_refusals_count()` counts them too. The pool runs every task either way.
 *  - Names: workers call themselves `name:NNN` (`compose_thread_name`, 15 bytes at most; thread index t plus
 *    `first_name_index`), visible in `/proc/self/task/TID/comm`, `top -H` and debuggers. The caller keeps its name.
 *  - Memory: the thread table (claim cursors and thread handles) is mapped on the domain's local node
 *    (`local_memory_of`); if the kernel refuses that node, it is mapped without a binding and `memory_placed()` is
 *    false.
 *
 *  @section oversubscription Oversubscription
 *  A flat pool decides whether idle threads yield from the spawning thread's mask, which its workers inherit. A
 *  colocated pool's workers run on the domain's cores instead, so it decides from those: the pool is
 *  oversubscribed when its spinners (threads, plus the caller of an exclusive pool) outnumber the domain's cores
 *  this process may use, `|cores_in(domain) ∩ caller's mask|`. Where that set is empty (the pins will be refused)
 *  or pinning is `none_k`, the caller's whole mask counts, as for a flat pool. `thread_placement_t::cores`
 *  overrides the count (the distributed pool passes what its domains share).
 *
 *  @section prongs Prongs
 *  Callbacks of `for_threads`, `for_n`, `for_n_dynamic` and `for_slices` that take a prong see `compute_domain` =
 *  the pool's domain, through a zero-cost adapter around the callable (the flat pool's hot path is untouched).
 *  `unsafe_for_threads` publishes the caller's own callable, with no storage of the pool's to attach the domain
 *  to, so it accepts index-shaped callbacks only (`fn(thread)`; read `compute_domain()` for the domain).
 *
 *  @section threads Which threads may call what
 *  As for `basic_pool_t`: `spawn_on` and `terminate` from the controlling thread (never from a callback);
 *  dispatches, `nap` and `sleep` from any thread, one at a time, losers refused with `contended`. The placement
 *  queries read values `spawn_on` wrote: the controlling thread, or any thread a dispatch ordered after it.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint8_t`
#include <new>         // `std::bad_alloc`
#include <thread>      // `std::thread`
#include <type_traits> // `std::is_invocable_v`, `std::decay_t`
#include <utility>     // `std::forward`

#include <forkunion/topology/affinity.hpp>
#include <forkunion/memory/allocators.hpp>
#include <forkunion/base/cpu_mask.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/pools/deprecated.hpp>

namespace forkunion {

/**  @brief  How a placement-aware pool pins its threads (see `forkunion/pools/colocated.hpp`). */
enum class pinning_t : std::uint8_t {
    none_k = 0,   ///< Threads keep the mask they inherit from the spawning thread.
    domain_k = 1, ///< Each thread may run on every core of its domain; the OS balances inside the domain.
    core_k = 2,   ///< Thread t runs on core `t mod cores` of its domain (the domain's cores by ascending OS id).
};

/**  @brief  The canonical name of a pinning mode, e.g. `"domain"`; never null. */
constexpr char const *pinning_name(pinning_t pinning) noexcept {
    return pinning == pinning_t::core_k ? "core" : pinning == pinning_t::domain_k ? "domain" : "none";
}

/**  @brief  `thread_placement_t::cores` value that lets the pool count its cores itself. */
inline constexpr std::size_t automatic_cores_k = ~std::size_t(0);

/**  @brief  How `spawn_on` (and the distributed pool's `spawn`) place and name threads. A plain value. */
struct thread_placement_t {
    pinning_t pinning = pinning_t::domain_k;
    /**  Prefix of the workers' names (`prefix:NNN`), copied during the spawn; null leaves names alone. */
    char const *name = "forkunion";
    /**  Added to a thread's index in its name: a distributed pool names threads by their global index. */
    std::size_t first_name_index = 0;
    /**  Cores the pool's spinners may count on (see "Oversubscription"); `automatic_cores_k` to count them. */
    std::size_t cores = automatic_cores_k;
};

/**
 *  @brief  The cores that threads placed on `cores` with `pinning` will really run on, given the spawning thread's
 *          mask `allowed`: `cores ∩ allowed`, or `allowed` itself where that is empty or pinning is `none_k`.
 *  @param  effective  Receives that set. @return Its size (0 only if `allowed` is empty).
 */
inline std::size_t effective_cores(core_ids_t cores, pinning_t pinning, cpu_mask_t const &allowed,
                                   cpu_mask_t &effective) noexcept {
    effective = allowed;
    if (pinning == pinning_t::none_k) return effective.count();
    cpu_mask_t placed = cores.to_mask();
    placed.intersect_with(allowed);
    if (!placed.empty()) effective = placed;
    return effective.count();
}

/**  @brief  Where a placement-aware pool wants its own memory: a NUMA node, and whether the kernel agreed. */
struct memory_home_t {
    numa_node_id_t node = any_numa_node_k;
    bool placed = false; ///< Whether the latest allocation through a `home_allocator_t` is bound to `node`.
};

/**
 *  @brief  The allocator of a placement-aware pool's internal tables: whole pages bound to `home->node`, or, if
 *          the kernel refuses that node (it does not exist here, a cpuset excludes it), unbound pages, which
 *          `home->placed` records. Throws `std::bad_alloc` only when no memory can be mapped at all (without
 *          exceptions it returns null instead, which the pool's `spawn` reports as `bad_alloc`).
 *
 *  Holds a pointer to a `memory_home_t` owned by the pool, so the flat pool's rebound copies follow the node the
 *  pool picks at spawn. Used only on spawn paths; never on a dispatch.
 */
template <typename value_type_>
class home_allocator_t {
    memory_home_t *home_ = nullptr;

public:
    using value_type = value_type_;

    explicit home_allocator_t(memory_home_t *home) noexcept : home_(home) {}
    template <typename other_type_>
    home_allocator_t(home_allocator_t<other_type_> const &other) noexcept : home_(other.home()) {}

    memory_home_t *home() const noexcept { return home_; }

    [[nodiscard]] value_type *allocate(std::size_t n) {
        numa_node_id_t const node = home_ ? home_->node : any_numa_node_k;
        auto result = domain_allocator_t<value_type>(node).try_allocate_at_least(n);
        bool placed = result.status && node != any_numa_node_k;
        if (!result.status && node != any_numa_node_k) // refused where we asked: take pages anywhere
            result = domain_allocator_t<value_type>(any_numa_node_k).try_allocate_at_least(n);
        if (!result.status) {
            if (!FORKUNION_EXCEPTIONS) return nullptr; // the pool's `spawn` reads a null table as `bad_alloc`
            FORKUNION_THROW(std::bad_alloc());
        }
        if (home_) home_->placed = placed;
        return result.ptr;
    }
    /**  Bound and unbound mappings are freed alike (`munmap` of the rounded length). */
    void deallocate(value_type *pointer, std::size_t n) noexcept {
        domain_allocator_t<value_type>().deallocate(pointer, n);
    }

    template <typename other_type_>
    bool operator==(home_allocator_t<other_type_> const &other) const noexcept {
        return home_ == other.home();
    }
};

namespace detail {

/**
 *  @brief  Wraps a callable so that the prongs the flat pool builds (compute domain 0) carry `domain` instead.
 *          Keeps the callable's shape: an index-shaped callable is called with indices, exactly as the flat
 *          pool would call it, so the adapter costs nothing once inlined. Keeps its `noexcept` too, so the flat
 *          pool's check of the callback (`detail::require_nothrow_callback`) sees through the adapter.
 */
template <typename fn_type_, typename index_type_>
struct in_domain_t {
    using prong_t = forkunion::prong_t<index_type_>;
    fn_type_ fn;
    index_type_ domain;

    template <typename... args_types_>
    static constexpr bool takes_k = std::is_invocable_v<fn_type_ &, args_types_...>;
    template <typename... args_types_>
    static constexpr bool nothrow_k = std::is_nothrow_invocable_v<fn_type_ &, args_types_...>;

    void operator()(index_type_ task) noexcept(nothrow_k<index_type_>) requires takes_k<index_type_> { fn(task); }
    void operator()(prong_t prong) noexcept(nothrow_k<prong_t>) requires(!takes_k<index_type_>) {
        prong.compute_domain = domain;
        fn(prong);
    }
    void operator()(index_type_ first, index_type_ count) noexcept(
        nothrow_k<index_type_, index_type_>) requires takes_k<index_type_, index_type_> {
        fn(first, count);
    }
    void operator()(prong_t prong, index_type_ count) noexcept(nothrow_k<prong_t, index_type_>) requires(
        !takes_k<index_type_, index_type_>) {
        prong.compute_domain = domain;
        fn(prong, count);
    }
};

} // namespace detail

/**
 *  @brief  A flat pool pinned to one compute domain. See the file comment for placement, oversubscription and the
 *          threading contract; the dispatch API is `basic_pool_t`'s.
 *
 *  @tparam micro_yield_type_  The micro-wait of idle loops.
 *  @tparam index_type_        Unsigned type of every count, task, thread, domain and generation.
 *  @tparam alignment_         Padding of each shared word.
 *
 *  Size: the flat pool (three padded lines), the caller's saved mask (1 KiB) and a few words; the thread table
 *  lives on the domain's node. Not copyable, not movable.
 */
template <typename micro_yield_type_ = default_micro_yield_t, typename index_type_ = std::size_t,
          std::size_t alignment_ = default_alignment_k>
class basic_colocated_pool_t
    : public detail::deprecated_idle_calls_t<basic_colocated_pool_t<micro_yield_type_, index_type_, alignment_>> {
public:
    using micro_yield_t = micro_yield_type_;
    using index_t = index_type_;
    using flat_t = basic_pool_t<home_allocator_t<std::thread>, micro_yield_t, index_t, alignment_>;
    using generation_t = typename flat_t::generation_t;
    using prong_t = typename flat_t::prong_t;
    using trampoline_t = typename flat_t::trampoline_t;
    using publication_t = typename flat_t::publication_t;
    static constexpr std::size_t alignment_k = alignment_;

    basic_colocated_pool_t() noexcept : pool_(home_allocator_t<std::thread>(&home_)) {}
    basic_colocated_pool_t(basic_colocated_pool_t const &) = delete;
    basic_colocated_pool_t(basic_colocated_pool_t &&) = delete;
    basic_colocated_pool_t &operator=(basic_colocated_pool_t const &) = delete;
    basic_colocated_pool_t &operator=(basic_colocated_pool_t &&) = delete;
    ~basic_colocated_pool_t() noexcept { terminate(); }

    /**
     *  @brief  Starts `threads` contributors on compute domain `domain` of `topology` (any type with
     *          `compute_domains_count()`, `cores_in(d)`, `local_memory_of(d)` and `memory_node_id(m)`, such as
     *          `machine_topology_t`), pins and names them as `placement` says, and returns once every worker is
     *          placed. The topology is read only during the call.
     *
     *  @retval invalid_argument  `threads == 0`, or `domain` out of range.
     *  @retval already_spawned   the pool has threads; `terminate()` first.
     *  @retval bad_alloc, thread_refused  as `basic_pool_t::spawn`; nothing is left running or pinned.
     *  A refused pin is not a failure: see `unpinned_threads_count()`.
     */
    template <typename topology_type_>
    status_t spawn_on(topology_type_ const &topology, std::size_t domain, index_t threads,
                      caller_exclusivity_t exclusivity = caller_inclusive_k,
                      thread_placement_t placement = {}) noexcept {
        if (threads == 0) return detail::refuse("colocated spawn_on: threads is 0; a pool needs at least one thread");
        if (domain >= static_cast<std::size_t>(topology.compute_domains_count()))
            return detail::refuse("colocated spawn_on: domain is not below the topology's compute_domains_count()");
        if (domain > static_cast<std::size_t>(static_cast<index_t>(~index_t(0))))
            return detail::refuse("colocated spawn_on: domain does not fit the pool's index type");
        if (pool_.threads_count() != 0) return status_code_t::already_spawned_k;

        core_ids_t const cores = topology.cores_in(domain);
        std::size_t cores_count = placement.cores;
        if (cores_count == automatic_cores_k) {
            cpu_mask_t allowed, effective;
            if (try_read_current_affinity(allowed))
                cores_count = effective_cores(cores, placement.pinning, allowed, effective);
            else
                cores_count = allowed_cores_count();
        }
        home_.node = to_numa_node_id(topology.memory_node_id(topology.local_memory_of(domain)));
        bool const exclusive = exclusivity == caller_exclusive_k;
        if (!exclusive && placement.pinning != pinning_t::none_k) (void)saved_.try_save(); // counted if refused
        index_t const unpinned = placement.pinning == pinning_t::none_k ? threads : index_t(0);

        // Every thread places itself: the kernel call needs no handle, and a refusal is the thread's own to count.
        cpu_mask_t const domain_mask = cores.to_mask();
        auto place = [&](index_t thread) noexcept {
            if (placement.pinning != pinning_t::none_k) {
                status_t pinned = status_code_t::invalid_argument_k;
                if (placement.pinning == pinning_t::core_k && !cores.empty()) {
                    cpu_mask_t one;
                    one.set(cores[static_cast<std::size_t>(thread) % cores.size()]);
                    pinned = try_pin_current_thread(one);
                } else {
                    pinned = try_pin_current_thread(domain_mask); // an empty mask is refused and counted
                }
                // Relaxed: a statistic, read after the spawn's set-up dispatch joined.
                if (!pinned) unpinned_.fetch_add(1, std::memory_order_relaxed);
            }
            if (placement.name && (exclusive || thread != 0)) {
                char name[thread_name_capacity_k];
                compose_thread_name(name, placement.name,
                                    placement.first_name_index + static_cast<std::size_t>(thread));
                (void)try_name_current_thread(name); // counted if refused; a name is a convenience
            }
        };
        unpinned_.store(unpinned, std::memory_order_relaxed);
        domain_.store(static_cast<index_t>(domain), std::memory_order_relaxed);
        pinning_ = placement.pinning;
        // The placement runs as the spawn's own set-up dispatch, before the pool takes any other: a dispatch from
        // another thread meanwhile is refused (`contended`), never the spawn.
        status_t const spawned = pool_.spawn(threads, exclusivity, cores_count, place);
        if (!spawned) {
            if (saved_.saved()) (void)saved_.try_restore();
            saved_ = saved_affinity_t{};
            unpinned_.store(0, std::memory_order_relaxed);
            domain_.store(0, std::memory_order_relaxed);
            pinning_ = pinning_t::none_k;
            return spawned;
        }
        return status_code_t::success_k;
    }

    /**
     *  @brief  Completes the dispatch in flight, stops and joins every worker, frees the thread table, and puts the
     *          inclusive caller's saved mask back (from whichever thread calls). No-op on an unspawned pool and
     *          from inside a callback of this pool.
     */
    void terminate() noexcept {
        if (pool_.threads_count() == 0 || pool_.called_from_callback()) return;
        pool_.terminate();
        if (saved_.saved()) (void)saved_.try_restore(); // counted if refused (the saved thread exited)
        saved_ = saved_affinity_t{};
        unpinned_.store(0, std::memory_order_relaxed);
        domain_.store(0, std::memory_order_relaxed);
        pinning_ = pinning_t::none_k;
    }

    // ---- Placement ----

    /**  @brief  The compute domain the pool was spawned on (0 when unspawned). */
    [[nodiscard]] index_t compute_domain() const noexcept { return domain_.load(std::memory_order_relaxed); }
    /**  @brief  The pinning mode of the latest `spawn_on`. */
    [[nodiscard]] pinning_t pinning() const noexcept { return pinning_; }
    /**  @brief  Threads running with the mask they inherited: the refused pins, or every thread with `none_k`. */
    [[nodiscard]] index_t unpinned_threads_count() const noexcept {
        return unpinned_.load(std::memory_order_relaxed); // a statistic, written by the setup dispatch
    }
    /**  @brief  Whether the thread table sits on the domain's local node (false if the kernel refused it). */
    [[nodiscard]] bool memory_placed() const noexcept { return pool_.threads_count() != 0 && home_.placed; }
    /**  @brief  The NUMA node the thread table was meant for (`any_numa_node_k` before the first spawn). */
    [[nodiscard]] numa_node_id_t memory_node() const noexcept { return home_.node; }

    // ---- The flat pool's API ----

    [[nodiscard]] index_t threads_count() const noexcept { return pool_.threads_count(); }
    [[nodiscard]] caller_exclusivity_t caller_exclusivity() const noexcept { return pool_.caller_exclusivity(); }
    [[nodiscard]] std::size_t memory_usage() const noexcept {
        return pool_.memory_usage() - sizeof(flat_t) + sizeof(basic_colocated_pool_t);
    }
    /**  @brief  Whether idle threads back off to `yield`: more spinners than the domain's usable cores. */
    [[nodiscard]] bool oversubscribed() const noexcept { return pool_.oversubscribed(); }
    [[nodiscard]] bool called_from_callback() const noexcept { return pool_.called_from_callback(); }
    /**  @brief  Whether this process is a `fork()`ed child of the one that spawned the pool (see `basic_pool_t`). */
    [[nodiscard]] bool forked() const noexcept { return pool_.forked(); }
    /**  @brief  See `basic_pool_t::set_idle_policy`: persistent, any thread, never refused by a dispatch. */
    status_t set_idle_policy(idle_policy_t policy) noexcept { return pool_.set_idle_policy(policy); }
    [[nodiscard]] idle_policy_t idle_policy() const noexcept { return pool_.idle_policy(); }
    /**  @brief  See `basic_pool_t::parked_threads_count`. */
    [[nodiscard]] std::size_t parked_threads_count() const noexcept { return pool_.parked_threads_count(); }
    /**  @brief  See `basic_pool_t::set_stack_size`: the stack of the workers the next `spawn_on` starts. */
    status_t set_stack_size(std::size_t bytes) noexcept { return pool_.set_stack_size(bytes); }
    [[nodiscard]] std::size_t stack_size() const noexcept { return pool_.stack_size(); }

    /**  @brief  `fn(thread)` (or `fn(prong)`) on every thread. See `basic_pool_t::for_threads`. */
    template <typename fn_type_>
    [[nodiscard]] auto for_threads(fn_type_ &&fn) noexcept {
        return pool_.for_threads(adapt_(std::forward<fn_type_>(fn)));
    }
    /**  @brief  `for (i = 0; i < n; ++i) fn(i);` in static blocks. See `basic_pool_t::for_n`; like every counted
     *          verb, a count `index_t` cannot hold is refused with `invalid_argument` (`dispatch_verbs_t`). */
    template <typename count_type_, typename fn_type_>
    [[nodiscard]] auto for_n(count_type_ n, fn_type_ &&fn) noexcept {
        return pool_.for_n(n, adapt_(std::forward<fn_type_>(fn)));
    }
    /**  @brief  `for (i = 0; i < n; ++i) fn(i);` with stealing. See `basic_pool_t::for_n_dynamic`. */
    template <typename count_type_, typename fn_type_>
    [[nodiscard]] auto for_n_dynamic(count_type_ n, fn_type_ &&fn) noexcept {
        return pool_.for_n_dynamic(n, adapt_(std::forward<fn_type_>(fn)));
    }
    /**  @brief  `fn(first, count)` per non-empty static block. See `basic_pool_t::for_slices`. */
    template <typename count_type_, typename fn_type_>
    [[nodiscard]] auto for_slices(count_type_ n, fn_type_ &&fn) noexcept {
        return pool_.for_slices(n, adapt_(std::forward<fn_type_>(fn)));
    }

    /**
     *  @brief  `basic_pool_t::unsafe_for_threads`: `fn(thread)` on every thread, without blocking; returns the odd
     *          generation, or 0 and why it was refused. Index-shaped callables only (see "Prongs" in the file
     *          comment).
     */
    template <typename fn_type_>
    [[nodiscard]] publication_t unsafe_for_threads(fn_type_ &&fn) noexcept {
        static_assert(std::is_invocable_v<std::remove_reference_t<fn_type_> &, index_t>,
                      "colocated unsafe_for_threads calls fn(thread); read compute_domain() for the domain");
        return pool_.unsafe_for_threads(std::forward<fn_type_>(fn));
    }
    [[nodiscard]] bool is_complete(generation_t generation) const noexcept { return pool_.is_complete(generation); }
    void unsafe_join(generation_t generation) noexcept { pool_.unsafe_join(generation); }
    /**  @brief  `basic_pool_t::unsafe_publish`: the trampoline gets the pool's own thread index. */
    publication_t unsafe_publish(trampoline_t trampoline, void *context, bool resets_cursors) noexcept {
        return pool_.unsafe_publish(trampoline, context, resets_cursors);
    }

    [[nodiscard]] std::atomic<index_t> &unsafe_claim_cursor(index_t thread) noexcept {
        return pool_.unsafe_claim_cursor(thread);
    }

private:
    template <typename fn_type_>
    detail::in_domain_t<std::decay_t<fn_type_>, index_t> adapt_(fn_type_ &&fn) const noexcept {
        return {std::forward<fn_type_>(fn), domain_.load(std::memory_order_relaxed)};
    }

    memory_home_t home_;                    // node of the thread table; read by `pool_`'s allocator
    flat_t pool_;                           // everything that runs
    saved_affinity_t saved_;                // the inclusive caller's mask before `spawn_on` pinned it
    std::atomic<index_t> unpinned_{0};      // refused pins of the latest spawn (written by the setup dispatch)
    std::atomic<index_t> domain_{0};        // the compute domain of the latest spawn (read by any dispatcher)
    pinning_t pinning_ = pinning_t::none_k; // the pinning mode of the latest spawn
};

/**  @brief  The default colocated pool: `std::size_t` indices, the target's micro-wait, 128-byte padding. */
using colocated_pool_t = basic_colocated_pool_t<>;

} // namespace forkunion
