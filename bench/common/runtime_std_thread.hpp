/**
 *  @file   runtime_std_thread.hpp
 *  @brief  The naive baseline: every dispatch creates T-1 `std::thread`s, runs the caller's share, and joins.
 *
 *  What a pool saves is measured against this: thread creation, pinning and teardown on every dispatch.
 *  - static: T contiguous blocks, the split of `for_n`;
 *  - dynamic: T threads claiming single indices from one shared `fetch_add` counter.
 *  Pinning: the caller pins itself once as thread 0; each new thread pins itself as slot k when it starts,
 *  which costs one `sched_setaffinity` per thread per dispatch, a few percent of a thread's creation here.
 */
#pragma once
#include <atomic> // `std::atomic`
#include <string> // `std::string`
#include <thread> // `std::thread`
#include <vector> // `std::vector`

#include "harness.hpp"
#include "runtime_forkunion.hpp" // `schedule_t`

namespace forkunion::bench {

class std_thread_runtime_t {
public:
    static constexpr bool replicated_k = false;

    explicit std_thread_runtime_t(pin_plan_t &plan) : plan_(plan), threads_(plan.threads_count()) {
        workers_.reserve(threads_);
        on_each_thread([](std::size_t) noexcept {});
    }

    std::string const &error() const noexcept { return error_; }
    std::string library() const { return "libstdc++ std::thread, created per dispatch"; }
    std::size_t threads_count() const noexcept { return threads_; }
    std::size_t replicas_count() const noexcept { return 1; }
    std::size_t replica_of(std::size_t) const noexcept { return 0; }

    template <typename fn_type_>
    void enter(fn_type_ &&fn) {
        fn();
    }

    /**  `fn(k)` on the caller (k = 0) and on T-1 new threads, each pinned as slot k first. */
    template <typename fn_type_>
    void on_each_thread(fn_type_ const &fn) noexcept {
        fork_join_(fn);
    }

    template <schedule_t schedule_k, typename fn_type_>
    void for_n(std::size_t n, fn_type_ const &fn) noexcept {
        if constexpr (schedule_k == schedule_t::static_k) {
            fork_join_([&fn, n, threads = threads_](std::size_t k) noexcept {
                slice_t<std::size_t> const part = static_slice(n, threads, k);
                for (std::size_t task = part.first; task != part.first + part.count; ++task) fn(task, k);
            });
        } else {
            std::atomic<std::size_t> cursor{0};
            fork_join_([&fn, &cursor, n](std::size_t k) noexcept {
                // Relaxed: the counter only hands out unique indices; `join` publishes the results.
                for (std::size_t task; (task = cursor.fetch_add(1, std::memory_order_relaxed)) < n;) fn(task, k);
            });
        }
    }

private:
    template <typename fn_type_>
    void fork_join_(fn_type_ const &fn) noexcept {
        try {
            for (std::size_t k = 1; k < threads_; ++k)
                workers_.emplace_back([this, &fn, k]() noexcept {
                    plan_.pin_current_thread(k);
                    fn(k);
                });
        } catch (...) {
            fail(exit_unavailable_k, "std::thread: the OS refused a thread");
        }
        if (current_slot != 0) plan_.pin_current_thread(0);
        fn(0);
        for (auto &worker : workers_) worker.join();
        workers_.clear();
    }

    pin_plan_t &plan_;
    std::size_t threads_;
    std::vector<std::thread> workers_;
    std::string error_;
};

} // namespace forkunion::bench
