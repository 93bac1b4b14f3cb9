/**
 *  @file   runtime_tbb.hpp
 *  @brief  oneTBB peer: `parallel_for` over a `blocked_range` with `static_partitioner` (static) or
 *          `simple_partitioner` at grain 1 (dynamic), in a `task_arena` of exactly T slots.
 *
 *  The whole benchmark runs inside one `arena.execute` (`enter`), as a TBB user with a fixed-size team would
 *  write it, so a dispatch is a plain `parallel_for` from a thread already in the arena. `global_control` caps
 *  the market at T threads, so the arena's T-1 workers are the only ones.
 *
 *  Pinning: T one-element tasks that each wait until all T arrived must run on T distinct threads; each pins
 *  itself as its arena slot (`this_task_arena::current_thread_index()`), which is also the thread index kernels
 *  receive. A worker that later re-enters the arena in another slot keeps its CPU, so threads stay one per CPU.
 */
#pragma once
#include <string> // `std::string`

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include "harness.hpp"
#include "runtime_forkunion.hpp" // `schedule_t`

namespace forkunion::bench {

class tbb_runtime_t {
public:
    static constexpr bool replicated_k = false;

    explicit tbb_runtime_t(pin_plan_t &plan)
        : threads_(plan.threads_count()), control_(tbb::global_control::max_allowed_parallelism, threads_),
          arena_(static_cast<int>(threads_)) {
        arena_.initialize();
        rendezvous_t rendezvous(threads_);
        arena_.execute([&] {
            broadcast_([&](std::size_t slot) noexcept {
                rendezvous.arrive_and_wait();
                plan.pin_current_thread(slot);
            });
        });
        if (rendezvous.timed_out()) error_ = "oneTBB did not gather its threads within 5 s";
    }

    std::string const &error() const noexcept { return error_; }
    std::string library() const {
        std::string const path = loaded_library("libtbb");
        return (path.empty() ? std::string("libtbb") : path) + " " + TBB_VERSION_STRING;
    }
    std::size_t threads_count() const noexcept { return threads_; }
    std::size_t replicas_count() const noexcept { return 1; }
    std::size_t replica_of(std::size_t) const noexcept { return 0; }

    /**  Runs `fn()` inside the arena: every dispatch of the benchmark then starts from an arena thread. */
    template <typename fn_type_>
    void enter(fn_type_ &&fn) {
        arena_.execute([&] { fn(); });
    }

    template <typename fn_type_>
    void on_each_thread(fn_type_ const &fn) noexcept {
        rendezvous_t rendezvous(threads_);
        arena_.execute([&] {
            broadcast_([&](std::size_t slot) noexcept {
                rendezvous.arrive_and_wait();
                fn(slot);
            });
        });
    }

    template <schedule_t schedule_k, typename fn_type_>
    void for_n(std::size_t n, fn_type_ const &fn) noexcept {
        auto body = [&fn](tbb::blocked_range<std::size_t> const &range) noexcept {
            std::size_t const thread = static_cast<std::size_t>(tbb::this_task_arena::current_thread_index());
            for (std::size_t task = range.begin(); task != range.end(); ++task) fn(task, thread);
        };
        if constexpr (schedule_k == schedule_t::static_k)
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), body, tbb::static_partitioner());
        else
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1), body, tbb::simple_partitioner());
    }

private:
    /**  T one-element tasks; `fn(slot)` must hold its thread (rendezvous) for them to land on T threads. */
    template <typename fn_type_>
    void broadcast_(fn_type_ const &fn) {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, threads_, 1),
            [&](tbb::blocked_range<std::size_t> const &range) {
                for (std::size_t i = range.begin(); i != range.end(); ++i)
                    fn(static_cast<std::size_t>(tbb::this_task_arena::current_thread_index()));
            },
            tbb::simple_partitioner());
    }

    std::size_t threads_;
    tbb::global_control control_;
    tbb::task_arena arena_;
    std::string error_;
};

} // namespace forkunion::bench
