/**
 *  @file   c/forkunion.cpp
 *  @brief  The C99 API of `include/forkunion.h` over the C++ library: the only translation unit of
 *          `libforkunion_static.a` and `libforkunion_shared.so`.
 *
 *  @section design Design
 *  - Every entry point is `extern "C"` and calls only `noexcept` C++ (an exception inside would end in
 *    `std::terminate`, never cross), and the handles come from `new (std::nothrow)`: nothing throws at the boundary.
 * Only `fu_` symbols are exported (hidden visibility plus a linker version script, see `c/CMakeLists.txt`).
 *  - `fu_pool_t` owns one `pool_backend_t`: the single place that says which C++ pool runs a C pool. Callbacks
 *    always receive `compute_domain`, the domain of the thread that runs them.
 *  - Dispatch: a C callback and its context ride in a lambda that the C++ dispatch guard keeps on the caller's
 *    stack, so a dispatch costs what the C++ one costs plus one indirect call per task: no allocation, no system
 *    call. The split dispatch (`fu_pool_unsafe_for_threads`) needs the callback to outlive the call: it is kept in
 *    the pool, guarded by `split_generation` (below), so a losing dispatcher never overwrites a running one's.
 *  - Fork: the C++ pools detect a `fork()`ed child themselves (`fu::fork_generation()`, one relaxed load) and refuse
 *    every dispatch there with `forked`; this file only reads the same counter to reset its split-dispatch state
 *    and to answer queries about a pool whose threads do not exist in this process.
 *  - Refusals: every `fu_pool_for_*` returns why it ran nothing; `fu_pool_for_*_or_run_on_caller` run the loop on
 *    the calling thread instead (a team of one), so library code called from inside a callback stays correct.
 */
#include <forkunion.h>

#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint64_t`
#include <mutex>       // `std::mutex`, `std::lock_guard`
#include <new>         // `std::nothrow`
#include <type_traits> // `std::is_same_v`

#include <forkunion.hpp>
#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/fabric/fabric.hpp>

#include <forkunion/memory/os_capabilities.hpp>
#include <forkunion/base/warnings.hpp>

namespace fu = forkunion;

// The C codes and bits are the C++ ones, one to one.
static_assert(sizeof(fu_status_t) == sizeof(int));
static_assert(fu_success_k == static_cast<int>(fu::status_code_t::success_k));
static_assert(fu_bad_alloc_k == static_cast<int>(fu::status_code_t::bad_alloc_k));
static_assert(fu_invalid_argument_k == static_cast<int>(fu::status_code_t::invalid_argument_k));
static_assert(fu_already_spawned_k == static_cast<int>(fu::status_code_t::already_spawned_k));
static_assert(fu_not_spawned_k == static_cast<int>(fu::status_code_t::not_spawned_k));
static_assert(fu_thread_refused_k == static_cast<int>(fu::status_code_t::thread_refused_k));
static_assert(fu_contended_k == static_cast<int>(fu::status_code_t::contended_k));
static_assert(fu_unsupported_k == static_cast<int>(fu::status_code_t::unsupported_k));
static_assert(fu_placement_refused_k == static_cast<int>(fu::status_code_t::placement_refused_k));
static_assert(fu_stale_generation_k == static_cast<int>(fu::status_code_t::stale_generation_k));
static_assert(fu_forked_k == static_cast<int>(fu::status_code_t::forked_k));
static_assert(static_cast<int>(fu_idle_spin_k) == static_cast<int>(fu::idle_mode_t::spin_k));
static_assert(static_cast<int>(fu_idle_adaptive_k) == static_cast<int>(fu::idle_mode_t::adaptive_k));
static_assert(static_cast<int>(fu_idle_nap_k) == static_cast<int>(fu::idle_mode_t::nap_k));
static_assert(static_cast<int>(fu_idle_sleep_k) == static_cast<int>(fu::idle_mode_t::sleep_k));
static_assert(FU_DEFAULT_IDLE_WINDOW_US == fu::default_idle_window_us_k);
static_assert(fu_capability_x86_waitpkg_k == fu::capability_x86_waitpkg_k);
static_assert(fu_capability_x86_cmpccxadd_k == fu::capability_x86_cmpccxadd_k);
static_assert(fu_capability_x86_raoint_k == fu::capability_x86_raoint_k);
static_assert(fu_capability_x86_cldemote_k == fu::capability_x86_cldemote_k);
static_assert(fu_capability_arm64_lse_k == fu::capability_arm64_lse_k);
static_assert(fu_capability_arm64_wfxt_k == fu::capability_arm64_wfxt_k);
static_assert(fu_capability_arm64_evtstrm_k == fu::capability_arm64_evtstrm_k);
static_assert(fu_capability_riscv_amo_k == fu::capability_riscv_amo_k);
static_assert(fu_capability_riscv_zawrs_k == fu::capability_riscv_zawrs_k);
static_assert(fu_capability_riscv_zacas_k == fu::capability_riscv_zacas_k);
static_assert(fu_capability_riscv_zicbom_k == fu::capability_riscv_zicbom_k);
static_assert(fu_capability_os_threads_k == fu::capability_os_threads_k);
static_assert(fu_capability_topology_k == fu::capability_topology_k);
static_assert(fu_capability_thread_pinning_k == fu::capability_thread_pinning_k);
static_assert(fu_capability_memory_placement_k == fu::capability_memory_placement_k);
static_assert(fu_capability_huge_pages_k == fu::capability_huge_pages_k);
static_assert(static_cast<int>(fu_caller_inclusive_k) == static_cast<int>(fu::caller_inclusive_k));
static_assert(static_cast<int>(fu_caller_exclusive_k) == static_cast<int>(fu::caller_exclusive_k));

namespace {

fu_status_t to_c(fu::status_t status) noexcept {
    return static_cast<fu_status_t>(status.code());
}

/**  `fu_invalid_argument_k`, with `reason` (a string literal) for `fu_last_refusal_reason`. */
fu_status_t refuse(char const *reason) noexcept {
    return to_c(fu::detail::refuse(reason));
}

fu::caller_exclusivity_t to_cpp(fu_caller_exclusivity_t exclusivity) noexcept {
    return exclusivity == fu_caller_exclusive_k ? fu::caller_exclusive_k : fu::caller_inclusive_k;
}

/**  Whether a generation can name a dispatch at all: generations are odd, never 0. */
bool is_token(std::size_t generation) noexcept {
    return (generation & 1u) != 0;
}

/**  The OS facilities the build could use, and those this process can reach now (detected once, cached). */
fu::capabilities_t comptime_capabilities() noexcept {
    return fu::comptime_capabilities() | fu::os_comptime_capabilities();
}

fu::capabilities_t runtime_capabilities() noexcept {
    static fu::capabilities_t const os = fu::detect_os_capabilities(); // thread-safe static, cold
    return fu::runtime_capabilities() | os;
}

/**
 *  @brief  The machine as a pool sees it: `topology`'s domains, with or without memory placement. Without it every
 *          memory domain answers "no node" (`any_numa_node_k`), so the pools map their tables unbound.
 */
struct pool_topology_t {
    fu::machine_topology_t const &topology;
    bool placed = true;

    std::size_t compute_domains_count() const noexcept { return topology.compute_domains_count(); }
    std::size_t logical_cores_count_in(std::size_t d) const noexcept { return topology.logical_cores_count_in(d); }
    fu::core_ids_t cores_in(std::size_t d) const noexcept { return topology.cores_in(d); }
    std::size_t local_memory_of(std::size_t d) const noexcept { return topology.local_memory_of(d); }
    std::size_t memory_domains_count() const noexcept { return topology.memory_domains_count(); }
    long long memory_node_id(std::size_t m) const noexcept {
        return placed ? static_cast<long long>(topology.memory_node_id(m)) : -1; // -1: `any_numa_node_k`
    }
};

/**
 *  @brief  The C++ pool behind a `fu_pool_t`: the one place that picks it.
 *
 *  - `spawn` over a topology of several compute domains: a `distributed_pool_t`, threads split in proportion to
 *    the domains' cores, each domain's threads pinned to it. Over one domain (or without the `topology`
 *    capability, over the single-domain stand-in of all allowed cores): a `colocated_pool_t`, which costs one
 *    claim word less per dispatch and lets thread 0 of an exclusive pool fork.
 *  - `spawn_on(domain)`: a `colocated_pool_t` on that domain.
 *  Callbacks get the prong's `compute_domain` from either. Which one runs is a relaxed flag written by the spawns
 *  (a racing dispatcher that reads a stale one reaches an unspawned pool and is refused).
 *
 *  Interface (what `fu_pool` needs): `spawn`, `spawn_on`, `terminate`, `threads_count`, `caller_exclusivity`,
 *  `compute_domains_count`, `memory_usage`, the blocking `for_threads`, `for_n`, `for_n_dynamic`, `for_slices`
 *  taking `fn(task, thread, compute_domain)` (or `fn(first, count, thread, compute_domain)`), the split
 *  `unsafe_for_threads(fn&)` with `fn(thread)`, `is_complete`, `unsafe_join`, `nap`, `sleep`, `domain_of(thread)`,
 *  and `visit(f)`, which calls `f` with the C++ pool that runs (for the fabric).
 */
class pool_backend_t {
public:
    using colocated_t = fu::colocated_pool_t;
    using distributed_t = fu::distributed_pool_t;
    using prong_t = fu::prong_t<std::size_t>;
    // The C API's counts are `size_t`: pools of the same index type take every count without narrowing it.
    static_assert(std::is_same_v<colocated_t::index_t, std::size_t> &&
                  std::is_same_v<distributed_t::index_t, std::size_t>);

    /**  What the pool's allowed capabilities let it do, and the prefix of its threads' names. */
    struct options_t {
        bool pinning = true;
        bool placement = true;
        bool topology = true;
        char const *name = nullptr;
    };

    /**  Whether the latest successful spawn started the distributed pool. */
    bool distributed() const noexcept { return distributed_active_.load(std::memory_order_relaxed); }

    /**  Calls `f` with the C++ pool that runs (the colocated one when neither does). */
    template <typename fn_t>
    decltype(auto) visit(fn_t &&f) noexcept {
        return distributed() ? f(distributed_) : f(colocated_);
    }
    template <typename fn_t>
    decltype(auto) visit(fn_t &&f) const noexcept {
        return distributed() ? f(distributed_) : f(colocated_);
    }

    fu::status_t spawn(fu::machine_topology_t const &topology, std::size_t threads,
                       fu::caller_exclusivity_t exclusivity, options_t const &options) noexcept {
        if (!options.topology) {
            fu::machine_topology_t const stand_in; // one domain of every allowed core
            return spawn_colocated_(pool_topology_t{stand_in, options.placement}, 0, threads, exclusivity, options);
        }
        pool_topology_t const machine{topology, options.placement};
        if (topology.compute_domains_count() <= 1) return spawn_colocated_(machine, 0, threads, exclusivity, options);
        if (colocated_.threads_count() != 0) return fu::status_code_t::already_spawned_k;
        fu::status_t const status = distributed_.spawn(machine, threads, exclusivity, placement_(options));
        if (status) distributed_active_.store(true, std::memory_order_relaxed);
        return status;
    }

    fu::status_t spawn_on(fu::machine_topology_t const &topology, std::size_t domain, std::size_t threads,
                          fu::caller_exclusivity_t exclusivity, options_t const &options) noexcept {
        return spawn_colocated_(pool_topology_t{topology, options.placement}, domain, threads, exclusivity, options);
    }

    void terminate() noexcept {
        visit([](auto &pool) noexcept { pool.terminate(); });
    }
    std::size_t threads_count() const noexcept {
        return visit([](auto const &pool) noexcept { return std::size_t(pool.threads_count()); });
    }
    fu::caller_exclusivity_t caller_exclusivity() const noexcept {
        return visit([](auto const &pool) noexcept { return pool.caller_exclusivity(); });
    }
    std::size_t compute_domains_count() const noexcept {
        if (distributed()) return distributed_.compute_domains_count();
        return colocated_.threads_count() ? 1 : 0;
    }
    std::size_t memory_usage() const noexcept {
        // Both objects live in the handle; only the running one owns thread tables.
        return sizeof(pool_backend_t) - sizeof(colocated_t) - sizeof(distributed_t) + colocated_.memory_usage() +
               distributed_.memory_usage();
    }
    std::size_t unpinned_threads_count() const noexcept {
        return visit([](auto const &pool) noexcept { return std::size_t(pool.unpinned_threads_count()); });
    }
    std::size_t threads_count_in(std::size_t domain) const noexcept {
        if (distributed()) return distributed_.threads_count_in(domain);
        return colocated_.threads_count() && colocated_.compute_domain() == domain ? colocated_.threads_count() : 0;
    }
    bool memory_placed() const noexcept {
        if (!distributed()) return colocated_.memory_placed();
        bool placed = distributed_.compute_domains_count() != 0;
        for (std::size_t d = 0; d != distributed_.compute_domains_count(); ++d)
            placed &= distributed_.memory_placed_in(d);
        return placed;
    }
    std::size_t domain_of(std::size_t thread) const noexcept {
        if (distributed()) return distributed_.locate_thread(thread).compute_domain;
        return colocated_.compute_domain();
    }

    /**  The blocking dispatches: with `run_on_caller`, a refused one runs on the calling thread as a team of one
     *   and reports success. `fn(task, thread, compute_domain)` (or `fn(first, count, thread, compute_domain)`). */
    template <typename fn_t>
    fu::status_t for_threads(fn_t const &fn, bool run_on_caller) noexcept {
        return visit([&](auto &pool) noexcept {
            return join_(pool.for_threads([&](prong_t prong) noexcept { fn(prong.thread, prong.compute_domain); }),
                         run_on_caller);
        });
    }
    template <typename fn_t>
    fu::status_t for_n(std::size_t n, fn_t const &fn, bool run_on_caller) noexcept {
        return visit([&](auto &pool) noexcept {
            return join_(
                pool.for_n(n, [&](prong_t prong) noexcept { fn(prong.task, prong.thread, prong.compute_domain); }),
                run_on_caller);
        });
    }
    template <typename fn_t>
    fu::status_t for_n_dynamic(std::size_t n, fn_t const &fn, bool run_on_caller) noexcept {
        return visit([&](auto &pool) noexcept {
            return join_(pool.for_n_dynamic(
                             n, [&](prong_t prong) noexcept { fn(prong.task, prong.thread, prong.compute_domain); }),
                         run_on_caller);
        });
    }
    template <typename fn_t>
    fu::status_t for_slices(std::size_t n, fn_t const &fn, bool run_on_caller) noexcept {
        return visit([&](auto &pool) noexcept {
            return join_(pool.for_slices(n,
                                         [&](prong_t prong, std::size_t count) noexcept {
                                             fn(prong.task, count, prong.thread, prong.compute_domain);
                                         }),
                         run_on_caller);
        });
    }

    /**
     *  Publishes `fn(thread)` without joining; `fn` must outlive the dispatch. 0 and why when refused. `distributed`
     *  receives which pool published it: the two count independently, so a generation names a dispatch only with
     *  its pool, and one of the pool that no longer runs (a terminate, which joined its dispatch, and a spawn of the
     *  other kind came between) is complete, never the running pool's dispatch of the same number.
     */
    template <typename fn_t>
    std::size_t unsafe_for_threads(fn_t &fn, fu::status_t &status, bool &distributed) noexcept {
        return visit([&](auto &pool) noexcept {
            auto const publication = pool.unsafe_for_threads(fn);
            status = publication.status;
            distributed = std::is_same_v<std::decay_t<decltype(pool)>, distributed_t>;
            return std::size_t(publication.generation);
        });
    }
    /**  Whether a generation published by the distributed pool (or, false, the colocated one) is of the pool that
     *   runs now. */
    bool runs(bool distributed) const noexcept { return distributed == this->distributed(); }
    bool is_complete(std::size_t generation, bool distributed) const noexcept {
        if (!runs(distributed)) return true;
        return visit([&](auto const &pool) noexcept { return pool.is_complete(generation); });
    }
    void unsafe_join(std::size_t generation, bool distributed) noexcept {
        if (!runs(distributed)) return;
        visit([&](auto &pool) noexcept { pool.unsafe_join(generation); });
    }
    /**  Both pools get the policy and the stack size: they persist, whichever of them the next spawn starts. */
    fu::status_t set_idle_policy(fu::idle_policy_t policy) noexcept {
        fu::status_t const status = colocated_.set_idle_policy(policy);
        if (status) (void)distributed_.set_idle_policy(policy);
        return status;
    }
    fu::idle_policy_t idle_policy() const noexcept { return colocated_.idle_policy(); }
    fu::status_t set_stack_size(std::size_t bytes) noexcept {
        fu::status_t const status = colocated_.set_stack_size(bytes);
        if (status) (void)distributed_.set_stack_size(bytes);
        return status;
    }
    std::size_t stack_size() const noexcept { return colocated_.stack_size(); }
    std::size_t parked_threads_count() const noexcept {
        return visit([](auto const &pool) noexcept { return pool.parked_threads_count(); });
    }

private:
    colocated_t colocated_;
    distributed_t distributed_;
    std::atomic<bool> distributed_active_{false}; // which one the latest successful spawn started

    static fu::thread_placement_t placement_(options_t const &options) noexcept {
        fu::thread_placement_t placement;
        placement.pinning = options.pinning ? fu::pinning_t::domain_k : fu::pinning_t::none_k;
        placement.name = options.name; // null leaves the threads' names alone
        return placement;
    }

    fu::status_t spawn_colocated_(pool_topology_t const &topology, std::size_t domain, std::size_t threads,
                                  fu::caller_exclusivity_t exclusivity, options_t const &options) noexcept {
        if (distributed_.threads_count() != 0) return fu::status_code_t::already_spawned_k;
        fu::status_t const status = colocated_.spawn_on(topology, domain, threads, exclusivity, placement_(options));
        if (status) distributed_active_.store(false, std::memory_order_relaxed);
        return status;
    }

    template <typename guard_t>
    static fu::status_t join_(guard_t &&guard, bool run_on_caller) noexcept {
        if (!run_on_caller) return guard.join();
        bool const ran = guard.join_or_run_on_caller();
        // Published, yet `forked`: a callback forked on this thread, and the child lacks the other slices.
        if (guard.generation() && guard.status().code() == fu::status_code_t::forked_k) [[unlikely]]
            return fu::status_code_t::forked_k;
        // False only for a count the index type cannot hold, which `size_t` counts on `size_t` pools never are.
        return ran ? fu::status_t(fu::status_code_t::success_k) : guard.status();
    }
};

/**
 *  @brief  The fabric behind a `fu_fabric_t`: `fabric_t`, harvested through the C++ pool that runs the C pool.
 *  A buffer size of 0 keeps the default (4x the largest cache, 64 MiB to 1 GiB).
 */
class fabric_backend_t {
public:
    fu::status_t try_harvest(fu::machine_topology_t const &topology, pool_backend_t &pool,
                             std::size_t buffer_bytes) noexcept {
        fu::fabric_options_t options;
        options.buffer_bytes = buffer_bytes;
        return pool.visit([&](auto &cpp_pool) noexcept { return fabric_.try_harvest(topology, cpp_pool, options); });
    }
    bool harvested() const noexcept { return fabric_.harvested(); }
    std::size_t memory_levels_count() const noexcept { return fabric_.memory_levels_count(); }
    std::size_t memory_level_in(std::size_t m) const noexcept { return fabric_.memory_level_in(m); }
    std::size_t memory_distance(std::size_t c, std::size_t m) const noexcept { return fabric_.memory_distance(c, m); }
    double memory_latency_ns(std::size_t c, std::size_t m) const noexcept { return fabric_.memory_latency_ns(c, m); }
    double memory_bandwidth(std::size_t c, std::size_t m) const noexcept {
        return fabric_.memory_bandwidth_bytes_per_second(c, m);
    }

private:
    fu::fabric_t fabric_;
};

/**  The split dispatch's callable: the C callback, its context and the backend that knows the thread's domain. */
struct split_call_t {
    fu_for_threads_t callback = nullptr;
    void *context = nullptr;
    pool_backend_t const *backend = nullptr;
    void operator()(std::size_t thread) const noexcept { callback(context, thread, backend->domain_of(thread)); }
};

/**  `split_generation` while a split dispatch is being set up: even, so no generation equals it. */
constexpr std::size_t split_busy_k = 2;

/**  A memory topology of `count` domains that asks for no binding (`any_numa_node_k`) on any of them. */
struct unbound_domains_t {
    std::size_t count = 1;
    std::size_t memory_domains_count() const noexcept { return count; }
    fu::numa_node_id_t memory_node_id(std::size_t) const noexcept { return fu::any_numa_node_k; }
};

} // namespace

struct fu_topology {
    fu::machine_topology_t topology;
};

/**
 *  Layout: the C++ pool first (its own lines are padded), then the split dispatch's state on its own line
 *  (written by split dispatchers and joiners only), then the configuration, read on every dispatch and written
 *  only by spawn and terminate.
 */
struct fu_pool {
    pool_backend_t backend;

    /**  The pending split token, 0, or `split_busy_k`. Busy, only the thread that set it writes it (a terminate
     *   leaves it alone); a fork()ed child, where that thread does not exist, resets it. */
    alignas(fu::default_alignment_k) std::atomic<std::size_t> split_generation{0};
    /**  The backend's generation of the pending split dispatch. A C token is this pool's own count (odd, never
     *   reused while the pool lives), never the backend's: a respawn may switch between the colocated and the
     *   distributed pool, whose counts are independent, so a token kept from before it could equal a live one. */
    std::atomic<std::size_t> split_backend_generation{0};
    /**  Which backend pool published it (see `pool_backend_t::unsafe_for_threads`); written and read with it. */
    std::atomic<bool> split_backend_distributed{false};
    std::size_t split_next_token = 1; // written only by the holder of `split_busy_k`
    split_call_t split_call;

    alignas(fu::default_alignment_k) std::atomic<std::uint32_t> forks_at_spawn{0};
    fu::capabilities_t allowed = fu::capabilities_all_k;
    char name[fu::thread_name_capacity_k] = {};

    fu::capabilities_t effective() const noexcept { return allowed & comptime_capabilities() & runtime_capabilities(); }

    /**  Spawned by the parent of this forked process: the workers do not exist here. */
    bool orphaned() const noexcept { return forks_at_spawn.load(std::memory_order_relaxed) != fu::fork_generation(); }

    /**
     *  Forgets the workers of an orphaned pool without joining them (they do not exist in this process): the C++
     *  pools' `terminate` abandons an inherited thread table in a child process. A pending split generation is stale.
     */
    void forget_orphaned_threads() noexcept {
        if (!orphaned()) return;
        backend.terminate();
        split_generation.store(0, std::memory_order_relaxed);
        forks_at_spawn.store(fu::fork_generation(), std::memory_order_relaxed);
    }
};

struct fu_fabric {
    fabric_backend_t fabric;
};

namespace {

/**
 *  The C getters of a topology: `(t->topology.*member)(arguments...)`, or 0 for a NULL handle. One place for the
 *  null check every `fu_*(fu_topology_t, ...)` reader shares.
 */
template <typename member_type_, typename... arguments_>
auto topology_answer(fu_topology_t t, member_type_ member, arguments_... arguments) noexcept {
    using answer_t = decltype((t->topology.*member)(arguments...));
    return t ? (t->topology.*member)(arguments...) : answer_t(0);
}

/**
 *  The C getters of a pool's threads: `(pool->backend.*member)(arguments...)`, or 0 for a NULL handle or a pool
 *  whose workers belong to the parent of this forked process.
 */
template <typename member_type_, typename... arguments_>
auto live_pool_answer(fu_pool_t pool, member_type_ member, arguments_... arguments) noexcept {
    using answer_t = decltype((pool->backend.*member)(arguments...));
    return pool && !pool->orphaned() ? (pool->backend.*member)(arguments...) : answer_t(0);
}

/**  The common checks of every dispatch: a handle and a callback, and workers that exist in this process. */
template <typename callback_t>
fu_status_t check_dispatch(fu_pool_t pool, callback_t callback) noexcept {
    if (!pool) return refuse("dispatch: pool is NULL");
    if (!callback) return refuse("dispatch: callback is NULL");
    if (pool->orphaned()) return fu_forked_k;
    return fu_success_k;
}

fu_status_t spawn(fu_topology_t topology, fu_pool_t pool, std::size_t const *domain, std::size_t threads,
                  fu_caller_exclusivity_t exclusivity) noexcept {
    if (!topology) return refuse("spawn: topology is NULL");
    if (!pool) return refuse("spawn: pool is NULL");
    if (threads == 0) return refuse("spawn: threads is 0; a pool needs at least one thread");
    if (exclusivity != fu_caller_inclusive_k && exclusivity != fu_caller_exclusive_k)
        return refuse("spawn: exclusivity is neither fu_caller_inclusive_k nor fu_caller_exclusive_k");
    pool->forget_orphaned_threads();
    if (pool->backend.threads_count() != 0) return fu_already_spawned_k;
    fu::capabilities_t const effective = pool->effective();
    bool const needs_threads = threads > 1 || exclusivity == fu_caller_exclusive_k;
    if (needs_threads && !(effective & fu::capability_os_threads_k)) return fu_unsupported_k;

    pool_backend_t::options_t options;
    options.pinning = (effective & fu::capability_thread_pinning_k) != 0;
    options.placement = (effective & fu::capability_memory_placement_k) != 0;
    options.topology = (effective & fu::capability_topology_k) != 0;
    options.name = pool->name[0] ? pool->name : nullptr;
    fu::watch_forks();
    pool->forks_at_spawn.store(fu::fork_generation(), std::memory_order_relaxed);
    fu::machine_topology_t const &machine = topology->topology;
    return to_c(domain ? pool->backend.spawn_on(machine, *domain, threads, to_cpp(exclusivity), options)
                       : pool->backend.spawn(machine, threads, to_cpp(exclusivity), options));
}

template <typename topology_t>
fu_status_t allocate(topology_t const &domains, std::size_t slice_bytes, std::size_t huge_page_bytes, bool placed,
                     fu_allocation_t *allocation) noexcept {
    fu::symmetric_region_t const region =
        fu::symmetric_memory_allocator_t(huge_page_bytes).try_allocate(domains, slice_bytes);
    if (!region.status) return to_c(region.status);
    allocation->address = region.address;
    allocation->bytes = region.total_bytes();
    allocation->slice_bytes = region.slice_bytes;
    allocation->slices_count = region.address ? region.slices_count : 0;
    allocation->page_bytes = region.page_bytes;
    allocation->placed = placed && region.address ? 1 : 0;
    return fu_success_k;
}

/**  Checks and narrows a request; `fu_success_k` lets it proceed with `place` and `huge_page_bytes` adjusted. */
fu_status_t prepare_allocation(fu_topology_t topology, std::size_t &huge_page_bytes, fu_capabilities_t allowed,
                               bool &place, fu_allocation_t *allocation) noexcept {
    if (!allocation) return refuse("allocate: allocation is NULL");
    *allocation = fu_allocation_t{};
    if (!topology) return refuse("allocate: topology is NULL");
    if (!fu::is_valid_huge_page_request(huge_page_bytes))
        return refuse("allocate: huge_page_bytes is neither 0 nor a power of two");
    fu::capabilities_t const usable = allowed & comptime_capabilities() & runtime_capabilities();
    place = (usable & fu::capability_memory_placement_k) != 0;
    if (!(usable & fu::capability_huge_pages_k)) huge_page_bytes = fu::base_pages_k;
    return fu_success_k;
}

/**  A C handler seen as a C++ warning sink: `sink.context` points back at the record. Never freed (see
 *   `fu_set_warning_handler`), so a warning that loaded it just before a replacement still finds it alive. */
struct c_warning_record_t {
    fu::warning_sink_t sink;
    fu_warning_handler_t handler;
    void *context;
    c_warning_record_t *kept; // the record installed before this one: every record stays reachable, never leaked
};

void forward_c_warning(void *record, char const *line) noexcept {
    c_warning_record_t const *const c = static_cast<c_warning_record_t const *>(record);
    c->handler(c->context, line);
}

} // namespace

extern "C" {

// ---- Status codes, versions, capabilities ----

char const *fu_last_refusal_reason(void) {
    return fu::last_refusal_reason();
}

fu_status_t fu_set_warning_handler(fu_warning_handler_t handler, void *context) {
    if (!handler) {
        (void)fu::set_warning_sink(nullptr);
        return fu_success_k;
    }
    // Serialized so that two installs of the same pair never keep two records; warnings themselves never lock.
    static std::mutex installing;
    static c_warning_record_t *kept = nullptr; // the latest record; each links to the one before it
    std::lock_guard<std::mutex> const lock(installing);
    fu_status_t status = fu_success_k;
    fu::warning_sink_t const *const current = fu::detail::warning_sink_slot().load(std::memory_order_acquire);
    c_warning_record_t const *const installed = current && current->report == &forward_c_warning
                                                    ? static_cast<c_warning_record_t const *>(current->context)
                                                    : nullptr;
    if (!installed || installed->handler != handler || installed->context != context) {
        c_warning_record_t *const record = new (std::nothrow) c_warning_record_t{{}, handler, context, kept};
        if (!record)
            status = fu_bad_alloc_k;
        else {
            record->sink = fu::warning_sink_t{&forward_c_warning, record};
            kept = record;
            (void)fu::set_warning_sink(&record->sink);
        }
    }
    return status;
}

char const *fu_status_to_string(fu_status_t status) {
    return fu::status_name(static_cast<fu::status_code_t>(status));
}

int fu_version_major(void) {
    return fu::version_major_k;
}
int fu_version_minor(void) {
    return fu::version_minor_k;
}
int fu_version_patch(void) {
    return fu::version_patch_k;
}

fu_capabilities_t fu_comptime_capabilities(void) {
    return comptime_capabilities();
}
fu_capabilities_t fu_runtime_capabilities(void) {
    return runtime_capabilities();
}

size_t fu_name_capabilities(fu_capabilities_t mask, char *buffer, size_t capacity) {
    return fu::name_capabilities(mask, buffer, buffer ? capacity : 0);
}

fu_status_t fu_parse_capabilities(char const *text, fu_capabilities_t *mask) {
    if (!mask) return refuse("fu_parse_capabilities: mask is NULL");
    fu::capabilities_t parsed = fu::capabilities_none_k;
    fu::status_t const status = fu::try_parse_capabilities(text, parsed);
    if (status) *mask = parsed;
    return to_c(status);
}

// ---- Topology ----

fu_topology_t fu_topology_new(void) {
    fu_topology_t topology = new (std::nothrow) fu_topology;
    if (topology) (void)topology->topology.try_harvest(); // a failed harvest keeps the single-domain stand-in
    return topology;
}

fu_topology_t fu_topology_new_from_sysfs(char const *root) {
    if (!root) return nullptr;
    fu_topology_t topology = new (std::nothrow) fu_topology;
    if (topology && !topology->topology.try_harvest_from_sysfs(root)) {
        delete topology;
        return nullptr;
    }
    return topology;
}

void fu_topology_delete(fu_topology_t topology) {
    delete topology;
}

int fu_topology_harvested(fu_topology_t t) {
    return t && t->topology.harvested() ? 1 : 0;
}
size_t fu_compute_domains_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::compute_domains_count);
}
size_t fu_compute_levels_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::compute_levels_count);
}
size_t fu_compute_level_in(fu_topology_t t, size_t d) {
    return topology_answer(t, &fu::machine_topology_t::compute_level_in, d);
}
size_t fu_logical_cores_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::logical_cores_count);
}
size_t fu_logical_cores_count_in(fu_topology_t t, size_t d) {
    return topology_answer(t, &fu::machine_topology_t::logical_cores_count_in, d);
}
size_t fu_compute_capacity_in(fu_topology_t t, size_t d) {
    return topology_answer(t, &fu::machine_topology_t::compute_capacity_in, d);
}
uint64_t fu_compute_cache_bytes_in(fu_topology_t t, size_t d) {
    return topology_answer(t, &fu::machine_topology_t::compute_cache_bytes_in, d);
}
size_t fu_local_memory_of(fu_topology_t t, size_t d) {
    return topology_answer(t, &fu::machine_topology_t::local_memory_of, d);
}
size_t fu_allowed_cores_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::allowed_cores_count);
}
size_t fu_online_cores_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::online_cores_count);
}

size_t fu_cores_in(fu_topology_t t, size_t d, unsigned *cores, size_t capacity) {
    if (!t) return 0;
    fu::core_ids_t const ids = t->topology.cores_in(d);
    std::size_t const count = ids.size();
    if (cores)
        for (std::size_t i = 0; i != count && i != capacity; ++i) cores[i] = static_cast<unsigned>(ids[i]);
    // The stand-in after a failed allocation has no ids but still one core: report what the counts report.
    return count ? count : fu_logical_cores_count_in(t, d);
}

size_t fu_memory_domains_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::memory_domains_count);
}
size_t fu_memory_node_id(fu_topology_t t, size_t m) {
    return topology_answer(t, &fu::machine_topology_t::memory_node_id, m);
}
uint64_t fu_volume_ram(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::volume_ram);
}
uint64_t fu_volume_ram_in(fu_topology_t t, size_t m) {
    return topology_answer(t, &fu::machine_topology_t::volume_ram_in, m);
}
size_t fu_huge_pages_count(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::huge_pages_count);
}
size_t fu_huge_pages_count_in(fu_topology_t t, size_t m) {
    return t ? t->topology.huge_pages_count_in(m) : 0; // overloaded: no member pointer
}
uint64_t fu_volume_huge_pages(fu_topology_t t) {
    return topology_answer(t, &fu::machine_topology_t::volume_huge_pages);
}
uint64_t fu_volume_huge_pages_in(fu_topology_t t, size_t m) {
    return topology_answer(t, &fu::machine_topology_t::volume_huge_pages_in, m);
}
size_t fu_huge_page_sizes_count_in(fu_topology_t t, size_t m) {
    return topology_answer(t, &fu::machine_topology_t::huge_page_sizes_count_in, m);
}
uint64_t fu_huge_page_size_in(fu_topology_t t, size_t m, size_t i) {
    return topology_answer(t, &fu::machine_topology_t::huge_page_size_in, m, i);
}
size_t fu_declared_distance(fu_topology_t t, size_t a, size_t b) {
    return topology_answer(t, &fu::machine_topology_t::declared_distance, a, b);
}

// ---- Pools ----

fu_pool_t fu_pool_new(char const *name, fu_capabilities_t allowed) {
    fu::watch_forks();
    fu_pool_t pool = new (std::nothrow) fu_pool;
    if (!pool) return nullptr;
    pool->allowed = allowed;
    (void)fu::truncate_thread_name(pool->name, name);
    return pool;
}

void fu_pool_delete(fu_pool_t pool) {
    if (!pool) return;
    pool->forget_orphaned_threads();
    delete pool; // the backend's destructor terminates
}

fu_status_t fu_pool_spawn(fu_topology_t topology, fu_pool_t pool, size_t threads, fu_caller_exclusivity_t exclusivity) {
    return spawn(topology, pool, nullptr, threads, exclusivity);
}

fu_status_t fu_pool_spawn_on(fu_topology_t topology, fu_pool_t pool, size_t compute_domain, size_t threads,
                             fu_caller_exclusivity_t exclusivity) {
    return spawn(topology, pool, &compute_domain, threads, exclusivity);
}

fu_status_t fu_pool_terminate(fu_pool_t pool) {
    if (!pool) return refuse("fu_pool_terminate: pool is NULL");
    pool->forget_orphaned_threads();
    if (pool->backend.threads_count() == 0) return fu_not_spawned_k;
    pool->backend.terminate();
    // Nothing runs now: a pending token is stale. A split dispatch being set up on another thread keeps its
    // `split_busy_k`: it owns `split_call` and will store its own token (or 0), and freeing the slot under it would
    // let a second dispatcher take the slot too, overwrite `split_call`, and then lose its token to the first one's
    // store. Release: the next taker of the slot sees the old pool's slices done (joined by the terminate).
    std::size_t pending = pool->split_generation.load(std::memory_order_relaxed);
    while (pending != 0 && pending != split_busy_k &&
           !pool->split_generation.compare_exchange_weak(pending, 0, std::memory_order_release,
                                                         std::memory_order_relaxed)) {}
    return fu_success_k;
}

size_t fu_pool_threads_count(fu_pool_t pool) {
    return live_pool_answer(pool, &pool_backend_t::threads_count);
}

fu_caller_exclusivity_t fu_pool_caller_exclusivity(fu_pool_t pool) {
    if (!pool || pool->backend.caller_exclusivity() == fu::caller_inclusive_k) return fu_caller_inclusive_k;
    return fu_caller_exclusive_k;
}

fu_capabilities_t fu_pool_capabilities(fu_pool_t pool) {
    return pool ? pool->effective() : fu_capabilities_none_k;
}

size_t fu_pool_compute_domains_count(fu_pool_t pool) {
    return live_pool_answer(pool, &pool_backend_t::compute_domains_count);
}

size_t fu_pool_threads_count_in(fu_pool_t pool, size_t compute_domain) {
    return live_pool_answer(pool, &pool_backend_t::threads_count_in, compute_domain);
}

size_t fu_pool_unpinned_threads_count(fu_pool_t pool) {
    return live_pool_answer(pool, &pool_backend_t::unpinned_threads_count);
}

int fu_pool_memory_placed(fu_pool_t pool) {
    return pool && !pool->orphaned() && pool->backend.memory_placed() ? 1 : 0;
}

size_t fu_pool_memory_usage(fu_pool_t pool) {
    return pool ? sizeof(fu_pool) - sizeof(pool_backend_t) + pool->backend.memory_usage() : 0;
}

namespace {

/**  The four blocking dispatches, with and without the run-on-caller fallback. */
fu_status_t for_threads(fu_pool_t pool, fu_for_threads_t callback, void *context, bool run_on_caller) noexcept {
    if (fu_status_t const status = check_dispatch(pool, callback)) {
        if (!run_on_caller || status != fu_forked_k) return status;
        callback(context, 0, 0); // a team of one, as the C++ guard's fallback
        return fu_success_k;
    }
    return to_c(pool->backend.for_threads(
        [=](std::size_t thread, std::size_t domain) noexcept { callback(context, thread, domain); }, run_on_caller));
}

fu_status_t for_n(fu_pool_t pool, size_t n, fu_for_n_t callback, void *context, bool dynamic,
                  bool run_on_caller) noexcept {
    if (fu_status_t const status = check_dispatch(pool, callback)) {
        if (!run_on_caller || status != fu_forked_k) return status;
        for (std::size_t task = 0; task != n; ++task) callback(context, task, 0, 0);
        return fu_success_k;
    }
    auto const body = [=](std::size_t task, std::size_t thread, std::size_t domain) noexcept {
        callback(context, task, thread, domain);
    };
    return to_c(dynamic ? pool->backend.for_n_dynamic(n, body, run_on_caller)
                        : pool->backend.for_n(n, body, run_on_caller));
}

fu_status_t for_slices(fu_pool_t pool, size_t n, fu_for_slices_t callback, void *context, bool run_on_caller) noexcept {
    if (fu_status_t const status = check_dispatch(pool, callback)) {
        if (!run_on_caller || status != fu_forked_k) return status;
        if (n) callback(context, 0, n, 0, 0);
        return fu_success_k;
    }
    return to_c(pool->backend.for_slices(
        n,
        [=](std::size_t first, std::size_t count, std::size_t thread, std::size_t domain) noexcept {
            callback(context, first, count, thread, domain);
        },
        run_on_caller));
}

} // namespace

fu_status_t fu_pool_for_threads(fu_pool_t pool, fu_for_threads_t callback, void *context) {
    return for_threads(pool, callback, context, false);
}
fu_status_t fu_pool_for_n(fu_pool_t pool, size_t n, fu_for_n_t callback, void *context) {
    return for_n(pool, n, callback, context, false, false);
}
fu_status_t fu_pool_for_n_dynamic(fu_pool_t pool, size_t n, fu_for_n_t callback, void *context) {
    return for_n(pool, n, callback, context, true, false);
}
fu_status_t fu_pool_for_slices(fu_pool_t pool, size_t n, fu_for_slices_t callback, void *context) {
    return for_slices(pool, n, callback, context, false);
}
fu_status_t fu_pool_for_threads_or_run_on_caller(fu_pool_t pool, fu_for_threads_t callback, void *context) {
    return for_threads(pool, callback, context, true);
}
fu_status_t fu_pool_for_n_or_run_on_caller(fu_pool_t pool, size_t n, fu_for_n_t callback, void *context) {
    return for_n(pool, n, callback, context, false, true);
}
fu_status_t fu_pool_for_n_dynamic_or_run_on_caller(fu_pool_t pool, size_t n, fu_for_n_t callback, void *context) {
    return for_n(pool, n, callback, context, true, true);
}
fu_status_t fu_pool_for_slices_or_run_on_caller(fu_pool_t pool, size_t n, fu_for_slices_t callback, void *context) {
    return for_slices(pool, n, callback, context, true);
}

fu_status_t fu_pool_unsafe_for_threads(fu_pool_t pool, fu_for_threads_t callback, void *context, size_t *generation) {
    if (generation) *generation = 0;
    if (!generation) return refuse("fu_pool_unsafe_for_threads: generation is NULL");
    if (fu_status_t const status = check_dispatch(pool, callback)) return status;
    if (pool->backend.threads_count() == 0) return fu_not_spawned_k;
    // Take the split slot: free (0), or held by a split dispatch that has completed. Acquire pairs with the
    // release below and in `fu_pool_unsafe_join`; `is_complete`'s acquire orders the previous slices' reads of
    // `split_call` before our writes. One attempt, never a retry: a loser is refused like a lost claim.
    std::size_t held = pool->split_generation.load(std::memory_order_acquire);
    // The backend generation read here may already belong to a later dispatch: the exchange below then fails.
    if (held == split_busy_k ||
        (held != 0 && !pool->backend.is_complete(pool->split_backend_generation.load(std::memory_order_relaxed),
                                                 pool->split_backend_distributed.load(std::memory_order_relaxed))))
        return fu_contended_k;
    // Acquire and release: a thread that reads `split_busy_k` and concludes that its own token's dispatch is
    // complete (`fu_pool_is_complete`, a stale join) must see that dispatch's slices done, as this taker did.
    if (!pool->split_generation.compare_exchange_strong(held, split_busy_k, std::memory_order_acq_rel,
                                                        std::memory_order_relaxed))
        return fu_contended_k;
    pool->split_call = {callback, context, &pool->backend};
    fu::status_t status;
    bool distributed = false;
    std::size_t const published = pool->backend.unsafe_for_threads(pool->split_call, status, distributed);
    std::size_t token = 0;
    if (published != 0) {
        token = pool->split_next_token;
        pool->split_next_token += 2; // stays odd; 2^63 split dispatches before it repeats
        pool->split_backend_distributed.store(distributed, std::memory_order_relaxed);
        pool->split_backend_generation.store(published, std::memory_order_release);
    }
    // Release: a later taker sees `split_call` and the backend generation as written (the pool's own claim
    // orders them for the workers).
    pool->split_generation.store(token, std::memory_order_release);
    *generation = token;
    return to_c(status);
}

int fu_pool_is_complete(fu_pool_t pool, size_t generation) {
    if (!pool) return refuse("fu_pool_is_complete: pool is NULL");
    if (!is_token(generation)) return refuse("fu_pool_is_complete: generation is 0 or even, no dispatch's token");
    if (pool->orphaned()) return 1; // nothing runs in this process
    // A token that is not the pending one was joined already (tokens are never reused). Acquire pairs with the
    // dispatcher's release, so the backend generation read next is the token's, unless a join and a new
    // dispatch replaced both meanwhile: the second read of the token tells, and then the token was joined.
    if (pool->split_generation.load(std::memory_order_acquire) != generation) return 1;
    bool const complete = pool->backend.is_complete(pool->split_backend_generation.load(std::memory_order_acquire),
                                                    pool->split_backend_distributed.load(std::memory_order_relaxed));
    return complete || pool->split_generation.load(std::memory_order_acquire) != generation ? 1 : 0;
}

fu_status_t fu_pool_unsafe_join(fu_pool_t pool, size_t generation) {
    if (!pool) return refuse("fu_pool_unsafe_join: pool is NULL");
    if (!is_token(generation)) return refuse("fu_pool_unsafe_join: generation is 0 or even, no dispatch's token");
    if (pool->orphaned()) return fu_forked_k; // nothing runs the other slices in this process
    // Acquire pairs with the release in `fu_pool_unsafe_for_threads`.
    if (pool->split_generation.load(std::memory_order_acquire) != generation) return fu_stale_generation_k;
    // Acquire pairs with the dispatcher's release: a backend generation of a later dispatch makes the second
    // read of the token see it replaced, so a token never joins another dispatch.
    std::size_t const backend_generation = pool->split_backend_generation.load(std::memory_order_acquire);
    bool const distributed = pool->split_backend_distributed.load(std::memory_order_relaxed);
    if (pool->split_generation.load(std::memory_order_acquire) != generation) return fu_stale_generation_k;
    if (!pool->backend.runs(distributed)) [[unlikely]] {
        // Published on the pool before a terminate, which joined it, and a spawn of the other kind: nothing to
        // join, as when the terminate had cleared the token. Give the slot back, unless it was taken meanwhile.
        std::size_t expected = generation;
        (void)pool->split_generation.compare_exchange_strong(expected, 0, std::memory_order_release,
                                                             std::memory_order_relaxed);
        return fu_stale_generation_k;
    }
    pool->backend.unsafe_join(backend_generation, distributed);
    if (pool->orphaned()) [[unlikely]]
        return fu_forked_k; // the caller forked inside its slice: the join returned without the other slices
    // An inclusive pool's join from a thread that did not dispatch returns without running slice 0: misuse, and
    // nothing changed (the dispatcher's own join still runs it).
    if (!pool->backend.is_complete(backend_generation, distributed))
        return refuse("fu_pool_unsafe_join: called from a thread other than the dispatcher of an inclusive pool");
    // The token's dispatch is complete (the backend generation is the token's, checked above): this join did its
    // work. Give the slot back, unless it has been taken already: once the dispatch completed (inside this join, on
    // an inclusive pool), another split dispatcher, a terminate or a concurrent joiner may have moved it on, and
    // that changes nothing this join did. Release pairs with the acquire of the next split dispatcher.
    std::size_t expected = generation;
    (void)pool->split_generation.compare_exchange_strong(expected, 0, std::memory_order_release,
                                                         std::memory_order_relaxed);
    return fu_success_k;
}

fu_status_t fu_pool_set_idle_policy(fu_pool_t pool, fu_idle_mode_t mode, uint64_t microseconds) {
    if (!pool) return refuse("fu_pool_set_idle_policy: pool is NULL");
    int const value = static_cast<int>(mode);
    if (value < static_cast<int>(fu_idle_spin_k) || value > static_cast<int>(fu_idle_sleep_k))
        return refuse("fu_pool_set_idle_policy: mode is not a value of fu_idle_mode_t");
    fu::idle_policy_t policy{static_cast<fu::idle_mode_t>(value), microseconds};
    // Without any wait beyond the pause hint, napping is spinning on it: the pool keeps the spin policy.
    if (policy.mode == fu::idle_mode_t::nap_k && !(pool->effective() & fu_capabilities_waits_k))
        policy = fu::idle_policy_t::spin();
    return to_c(pool->backend.set_idle_policy(policy));
}

fu_status_t fu_pool_idle_policy(fu_pool_t pool, fu_idle_mode_t *mode, uint64_t *microseconds) {
    if (!pool || !mode || !microseconds) return refuse("fu_pool_idle_policy: pool, mode or microseconds is NULL");
    fu::idle_policy_t const policy = pool->backend.idle_policy();
    *mode = static_cast<fu_idle_mode_t>(policy.mode);
    *microseconds = policy.microseconds;
    return fu_success_k;
}

size_t fu_pool_parked_threads_count(fu_pool_t pool) {
    return live_pool_answer(pool, &pool_backend_t::parked_threads_count);
}

fu_status_t fu_pool_set_stack_size(fu_pool_t pool, size_t bytes) {
    if (!pool) return refuse("fu_pool_set_stack_size: pool is NULL");
    return to_c(pool->backend.set_stack_size(bytes));
}

size_t fu_pool_stack_size(fu_pool_t pool) {
    return pool ? pool->backend.stack_size() : 0;
}

fu_status_t fu_pool_nap(fu_pool_t pool) {
    if (!pool) return refuse("fu_pool_nap: pool is NULL");
    if (pool->orphaned()) return fu_forked_k;
    if (pool->backend.threads_count() == 0) return fu_not_spawned_k;
    return fu_pool_set_idle_policy(pool, fu_idle_nap_k, 0);
}

fu_status_t fu_pool_sleep(fu_pool_t pool, size_t microseconds) {
    if (!pool) return refuse("fu_pool_sleep: pool is NULL");
    if (pool->orphaned()) return fu_forked_k;
    if (pool->backend.threads_count() == 0) return fu_not_spawned_k;
    return fu_pool_set_idle_policy(pool, fu_idle_sleep_k, microseconds);
}

// ---- Memory ----

fu_status_t fu_allocate_on(fu_topology_t topology, size_t memory_domain, size_t bytes, size_t huge_page_bytes,
                           fu_capabilities_t allowed, fu_allocation_t *allocation) {
    bool place = false;
    if (fu_status_t const status = prepare_allocation(topology, huge_page_bytes, allowed, place, allocation))
        return status;
    fu::machine_topology_t const &machine = topology->topology;
    if (memory_domain >= machine.memory_domains_count())
        return refuse("fu_allocate_on: memory_domain is not below fu_memory_domains_count(topology)");
    fu::numa_node_id_t const node =
        place ? fu::to_numa_node_id(machine.memory_node_id(memory_domain)) : fu::any_numa_node_k;
    return allocate(fu::numa_nodes_t(node), bytes, huge_page_bytes, place, allocation);
}

fu_status_t fu_allocate_symmetric(fu_topology_t topology, size_t slice_bytes, size_t huge_page_bytes,
                                  fu_capabilities_t allowed, fu_allocation_t *allocation) {
    bool place = false;
    if (fu_status_t const status = prepare_allocation(topology, huge_page_bytes, allowed, place, allocation))
        return status;
    fu::machine_topology_t const &machine = topology->topology;
    if (place) return allocate(machine, slice_bytes, huge_page_bytes, true, allocation);
    return allocate(unbound_domains_t{machine.memory_domains_count()}, slice_bytes, huge_page_bytes, false, allocation);
}

fu_status_t fu_deallocate(fu_allocation_t *allocation) {
    if (!allocation) return refuse("fu_deallocate: allocation is NULL");
    if (allocation->address) {
        fu::symmetric_region_t region;
        region.address = static_cast<std::byte *>(allocation->address);
        region.slice_bytes = allocation->slice_bytes;
        region.slices_count = allocation->slices_count;
        fu::symmetric_memory_allocator_t().deallocate(region); // unmapping needs only the address and length
    }
    *allocation = fu_allocation_t{};
    return fu_success_k;
}

// ---- Fabric ----

fu_fabric_t fu_fabric_new(void) {
    return new (std::nothrow) fu_fabric;
}
void fu_fabric_delete(fu_fabric_t fabric) {
    delete fabric;
}

fu_status_t fu_fabric_harvest(fu_fabric_t fabric, fu_topology_t topology, fu_pool_t pool, size_t buffer_bytes) {
    if (!fabric || !topology || !pool) return refuse("fu_fabric_harvest: fabric, topology or pool is NULL");
    if (pool->orphaned()) return fu_not_spawned_k;
    // A harvest pins the pool's threads to each domain in turn and binds a buffer to each memory domain.
    fu::capabilities_t const needs = fu::capability_thread_pinning_k | fu::capability_memory_placement_k;
    if ((pool->effective() & needs) != needs) return fu_unsupported_k;
    return to_c(fabric->fabric.try_harvest(topology->topology, pool->backend, buffer_bytes));
}

int fu_fabric_harvested(fu_fabric_t f) {
    return f && f->fabric.harvested() ? 1 : 0;
}
size_t fu_fabric_memory_levels_count(fu_fabric_t f) {
    return f ? f->fabric.memory_levels_count() : 0;
}
size_t fu_fabric_memory_level_in(fu_fabric_t f, size_t m) {
    return f ? f->fabric.memory_level_in(m) : 0;
}
size_t fu_fabric_memory_distance(fu_fabric_t f, size_t c, size_t m) {
    return f ? f->fabric.memory_distance(c, m) : 0;
}
double fu_fabric_memory_latency_ns(fu_fabric_t f, size_t c, size_t m) {
    return f ? f->fabric.memory_latency_ns(c, m) : 0;
}
double fu_fabric_memory_bandwidth(fu_fabric_t f, size_t c, size_t m) {
    return f ? f->fabric.memory_bandwidth(c, m) : 0;
}

} // extern "C"
