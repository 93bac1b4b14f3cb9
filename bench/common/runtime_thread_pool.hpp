/**
 *  @file   runtime_thread_pool.hpp
 *  @brief  Task-queue peer, the other design family: Robert Vaser's `thread_pool::ThreadPool` (Debian's
 *          `libthread-pool-dev`; not BS::thread_pool, which Debian does not package). Per-thread queues behind
 *          mutexes and condition variables, work stealing between them, one `std::future` per task.
 *
 *  It has no loop API, so a dispatch is what its user writes: submit T-1 tasks, run the caller's share inline,
 *  wait on the futures. The pool holds T-1 workers, so caller plus workers are T threads, like every other row.
 *  - static: T contiguous blocks, the split of `for_n`;
 *  - dynamic: T tasks that claim single indices from one shared `fetch_add` counter (one-task grain; submitting
 *    one future per index would measure the allocator, not the design).
 *
 *  Pinning: T-1 tasks that each wait until all arrived land on the T-1 workers; task k pins its worker as slot
 *  k, the caller is slot 0. Kernels get the slot from `current_slot`.
 */
#pragma once
#include <atomic>   // `std::atomic`
#include <future>   // `std::future`
#include <optional> // `std::optional`
#include <string>   // `std::string`
#include <vector>   // `std::vector`

#include <thread_pool/thread_pool.hpp>

#include "harness.hpp"
#include "runtime_forkunion.hpp" // `schedule_t`

namespace forkunion::bench {

class thread_pool_runtime_t {
public:
    static constexpr bool replicated_k = false;

    explicit thread_pool_runtime_t(pin_plan_t &plan) : threads_(plan.threads_count()) {
        if (threads_ > 1) pool_.emplace(threads_ - 1);
        futures_.reserve(threads_);
        if (!broadcast_([&](std::size_t k) noexcept { plan.pin_current_thread(k); }))
            error_ = "thread_pool did not gather its threads within 5 s";
    }

    std::string const &error() const noexcept { return error_; }
    std::string library() const { return "thread_pool.hpp (header-only, libthread-pool-dev)"; }
    std::size_t threads_count() const noexcept { return threads_; }
    std::size_t replicas_count() const noexcept { return 1; }
    std::size_t replica_of(std::size_t) const noexcept { return 0; }

    template <typename fn_type_>
    void enter(fn_type_ &&fn) {
        fn();
    }

    template <typename fn_type_>
    void on_each_thread(fn_type_ const &fn) noexcept {
        broadcast_([&](std::size_t) noexcept { fn(current_slot); });
    }

    template <schedule_t schedule_k, typename fn_type_>
    void for_n(std::size_t n, fn_type_ const &fn) noexcept {
        if constexpr (schedule_k == schedule_t::static_k) {
            auto block = [&fn, n, threads = threads_](std::size_t k) noexcept {
                slice_t<std::size_t> const part = static_slice(n, threads, k);
                std::size_t const thread = current_slot;
                for (std::size_t task = part.first; task != part.first + part.count; ++task) fn(task, thread);
            };
            for (std::size_t k = 1; k < threads_; ++k) futures_.push_back(pool_->Submit(block, k));
            block(0);
        } else {
            std::atomic<std::size_t> cursor{0};
            auto drain = [&fn, &cursor, n]() noexcept {
                std::size_t const thread = current_slot;
                // Relaxed: the counter only hands out unique indices; the futures publish the results.
                for (std::size_t task; (task = cursor.fetch_add(1, std::memory_order_relaxed)) < n;) fn(task, thread);
            };
            for (std::size_t k = 1; k < threads_; ++k) futures_.push_back(pool_->Submit(drain));
            drain();
        }
        wait_();
    }

private:
    void wait_() noexcept {
        for (auto &future : futures_) future.wait();
        futures_.clear();
    }

    /**  `fn(k)` on the caller (k = 0) and on T-1 tasks held until all arrived; false if they never did. */
    template <typename fn_type_>
    bool broadcast_(fn_type_ const &fn) noexcept {
        rendezvous_t rendezvous(threads_);
        auto task = [&](std::size_t k) noexcept {
            rendezvous.arrive_and_wait();
            fn(k);
        };
        for (std::size_t k = 1; k < threads_; ++k) futures_.push_back(pool_->Submit(task, k));
        task(0);
        wait_();
        return !rendezvous.timed_out();
    }

    std::size_t threads_;
    std::optional<thread_pool::ThreadPool> pool_;
    std::vector<std::future<void>> futures_;
    std::string error_;
};

} // namespace forkunion::bench
