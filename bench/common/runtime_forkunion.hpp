/**
 *  @file   runtime_forkunion.hpp
 *  @brief  The ForkUnion backends: `forkunion_{static,dynamic}_{shared,replicated}` over `flat_pool_t`.
 *
 *  `static` is `for_n`, `dynamic` is `for_n_dynamic` (own block first, then one-task steals). The pool is
 *  caller-inclusive: the benchmark's thread is thread 0, like OpenMP's master and pthreadpool's caller.
 *
 *  `shared` runs on `flat_pool_t`, pinned by the harness's plan (thread t on allowed CPU `t mod cores`), and reads
 *  one copy of the read-mostly inputs. `replicated` runs on `distributed_pool_t` over this machine's compute
 *  domains (threads split in proportion to their cores, each pinned by the pool to one core of its domain, the
 *  harness's plan adopting where the pool put them), and each thread reads the replica of its compute domain's
 *  local memory domain (`replica_of`), copied there by a thread of that domain, so first touch places its pages
 *  on that node. On a single-domain machine `replicated` keeps one replica and computes exactly what `shared`
 *  does: the table then shows what the distributed pool's extra layer costs.
 */
#pragma once
#include <string>      // `std::string`
#include <type_traits> // `std::conditional_t`
#include <vector>      // `std::vector`

#include <forkunion.hpp>

#include "harness.hpp"

namespace forkunion::bench {

/**  Which loop a backend runs: `for_n`-like static blocks, or one-task-grain dynamic claims. */
enum class schedule_t { static_k, dynamic_k };

/**  This machine's topology, harvested once (one domain of the allowed cores if nothing can be harvested). */
inline machine_topology_t const &live_topology() {
    static machine_topology_t const topology = [] {
        machine_topology_t harvested;
        (void)harvested.try_harvest();
        return harvested;
    }();
    return topology;
}

template <bool replicated_>
class forkunion_runtime_t {
public:
    using pool_t = std::conditional_t<replicated_, distributed_pool_t, flat_pool_t>;
    static constexpr bool replicated_k = replicated_;

    explicit forkunion_runtime_t(pin_plan_t &plan) {
        if constexpr (replicated_k) {
            machine_topology_t const &topology = live_topology();
            thread_placement_t placement;
            placement.pinning = pinning_t::core_k;
            if (status_t status = pool_.spawn(topology, plan.threads_count(), caller_inclusive_k, placement); !status) {
                error_ = std::string("distributed_pool_t::spawn failed: ") + status.name();
                return;
            }
            // Replicas: one per distinct local memory domain of the compute domains, densely ranked.
            std::vector<std::size_t> memory_of_replica;
            for (std::size_t d = 0; d != pool_.compute_domains_count(); ++d) {
                std::size_t const memory = topology.local_memory_of(d),
                                  replica = dense_rank_(memory_of_replica, memory);
                for (std::size_t t = 0; t != pool_.threads_count_in(d); ++t) replica_of_thread_.push_back(replica);
            }
            replicas_ = memory_of_replica.size();
            on_each_thread([&](std::size_t thread) noexcept { plan.adopt_current_thread(thread); });
        } else {
            if (status_t status = pool_.spawn(plan.threads_count()); !status) {
                error_ = std::string("flat_pool_t::spawn failed: ") + status.name();
                return;
            }
            on_each_thread([&](std::size_t thread) noexcept { plan.pin_current_thread(thread); });
        }
    }

    std::string const &error() const noexcept { return error_; }
    std::string library() const { return replicated_k ? "header-only, distributed_pool_t" : "header-only"; }
    std::size_t threads_count() const noexcept { return pool_.threads_count(); }
    std::size_t replicas_count() const noexcept { return replicas_; }
    std::size_t replica_of(std::size_t thread) const noexcept { return replicated_k ? replica_of_thread_[thread] : 0; }

    /**  Runs `fn()` in the runtime's context: nothing to enter for a flat pool. */
    template <typename fn_type_>
    void enter(fn_type_ &&fn) {
        fn();
    }

    /**  `fn(thread)` once on every thread, all present: `for_threads`. */
    template <typename fn_type_>
    void on_each_thread(fn_type_ const &fn) noexcept {
        for_threads(fn);
    }

    template <typename fn_type_>
    void for_threads(fn_type_ const &fn) noexcept {
        auto guard = pool_.for_threads([&fn](std::size_t thread) noexcept { fn(thread); });
        if (!guard) fail(exit_unavailable_k, "forkunion: for_threads refused: %s", guard.status().name());
    }

    /**  `fn(task, thread)` for every task in [0, n): `for_n` or `for_n_dynamic`. Blocks until done. */
    template <schedule_t schedule_k, typename fn_type_>
    void for_n(std::size_t n, fn_type_ const &fn) noexcept {
        auto body = [&fn](typename pool_t::prong_t prong) noexcept { fn(prong.task, prong.thread); };
        if constexpr (schedule_k == schedule_t::static_k) {
            auto guard = pool_.for_n(n, body);
            if (!guard) fail(exit_unavailable_k, "forkunion: for_n refused: %s", guard.status().name());
        } else {
            auto guard = pool_.for_n_dynamic(n, body);
            if (!guard) fail(exit_unavailable_k, "forkunion: for_n_dynamic refused: %s", guard.status().name());
        }
    }

    /**  The pool itself, for the idle-mode rows of the dispatch benchmark (`nap`, `sleep`). */
    pool_t &pool() noexcept { return pool_; }

private:
    /**  The index of `value` in `values`, appended if new. Spawn time only. */
    static std::size_t dense_rank_(std::vector<std::size_t> &values, std::size_t value) {
        for (std::size_t i = 0; i != values.size(); ++i)
            if (values[i] == value) return i;
        values.push_back(value);
        return values.size() - 1;
    }

    pool_t pool_;
    std::vector<std::size_t> replica_of_thread_; // replicated: global thread -> replica
    std::size_t replicas_ = 1;
    std::string error_;
};

} // namespace forkunion::bench
