/**
 *  @file   runtime_forkunion.hpp
 *  @brief  The ForkUnion backends: `forkunion_{static,dynamic}_{shared,replicated}` over `flat_pool_t`.
 *
 *  `static` is `for_n`, `dynamic` is `for_n_dynamic` (own block first, then one-task steals). The pool is
 *  caller-inclusive: the benchmark's thread is thread 0, like OpenMP's master and pthreadpool's caller.
 *
 *  `shared` reads one copy of the read-mostly inputs; `replicated` reads the copy of its thread's memory
 *  domain (`replica_of`). Today the pool is flat and the domains come from the harness's pin plan; with one
 *  memory domain `replicated` keeps one replica and computes exactly what `shared` does.
 *
 *  @section swap Swapping in the distributed pool (issue 7)
 *  Three places change, and nothing in the benchmarks: `pool_t` becomes `distributed_pool_t` (spawned across
 *  compute domains instead of pinned here), `replica_of(thread)` becomes the local memory domain of the thread's
 *  compute domain (the prong carries it), and `replicas_t` in `runtimes.hpp` allocates each copy on its domain
 *  instead of relying on first touch.
 */
#pragma once
#include <string> // `std::string`

#include <forkunion.hpp>

#include "harness.hpp"

namespace forkunion::bench {

/**  Which loop a backend runs: `for_n`-like static blocks, or one-task-grain dynamic claims. */
enum class schedule_t { static_k, dynamic_k };

template <bool replicated_>
class forkunion_runtime_t {
public:
    using pool_t = flat_pool_t;
    static constexpr bool replicated_k = replicated_;

    explicit forkunion_runtime_t(pin_plan_t &plan) : plan_(plan) {
        if (status_t status = pool_.spawn(plan.threads_count()); !status) {
            error_ = std::string("flat_pool_t::spawn failed: ") + status.name();
            return;
        }
        on_each_thread([&](std::size_t thread) noexcept { plan.pin_current_thread(thread); });
    }

    std::string const &error() const noexcept { return error_; }
    std::string library() const { return "header-only"; }
    std::size_t threads_count() const noexcept { return pool_.threads_count(); }
    std::size_t replicas_count() const noexcept { return replicated_k ? plan_.domains_count() : 1; }
    std::size_t replica_of(std::size_t thread) const noexcept { return replicated_k ? plan_.replica_of(thread) : 0; }

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
        auto body = [&fn](pool_t::prong_t prong) noexcept { fn(prong.task, prong.thread); };
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
    pin_plan_t &plan_;
    pool_t pool_;
    std::string error_;
};

} // namespace forkunion::bench
