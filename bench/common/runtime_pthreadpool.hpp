/**
 *  @file   runtime_pthreadpool.hpp
 *  @brief  pthreadpool peer (the fork-join pool inside PyTorch and XNNPACK): `pthreadpool_parallelize_1d_tile_1d`
 *          with one tile per thread (static) and `pthreadpool_parallelize_1d` (dynamic: each thread takes its
 *          own range one item at a time, then steals single items).
 *
 *  `pthreadpool_create(T)` starts T-1 workers; the caller is thread 0 of every call, as in ForkUnion. Items
 *  reach the task through a function pointer, which the library's C API imposes.
 *
 *  Pinning: T items that each wait until all T arrived run one per thread, and pthreadpool hands item i to
 *  thread i first, so item i pins its thread as slot i. Kernels get that slot from `current_slot`.
 */
#pragma once
#include <string> // `std::string`

#include <pthreadpool.h>

#include "harness.hpp"
#include "runtime_forkunion.hpp" // `schedule_t`

namespace forkunion::bench {

class pthreadpool_runtime_t {
public:
    static constexpr bool replicated_k = false;

    explicit pthreadpool_runtime_t(pin_plan_t &plan) : threads_(plan.threads_count()) {
        pool_ = ::pthreadpool_create(threads_);
        if (!pool_) {
            error_ = "pthreadpool_create failed";
            return;
        }
        if (::pthreadpool_get_threads_count(pool_) != threads_) {
            error_ = "pthreadpool made " + std::to_string(::pthreadpool_get_threads_count(pool_)) + " threads";
            return;
        }
        if (!broadcast_([&](std::size_t item) noexcept { plan.pin_current_thread(item); }))
            error_ = "pthreadpool did not gather its threads within 5 s";
    }
    ~pthreadpool_runtime_t() noexcept {
        if (pool_) ::pthreadpool_destroy(pool_);
    }
    pthreadpool_runtime_t(pthreadpool_runtime_t const &) = delete;
    pthreadpool_runtime_t &operator=(pthreadpool_runtime_t const &) = delete;

    std::string const &error() const noexcept { return error_; }
    std::string library() const {
        std::string const path = loaded_library("libpthreadpool");
        return path.empty() ? "libpthreadpool" : path;
    }
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
        void *context = const_cast<void *>(static_cast<void const *>(&fn));
        if constexpr (schedule_k == schedule_t::static_k) {
            std::size_t const tile = (n + threads_ - 1) / threads_;
            ::pthreadpool_parallelize_1d_tile_1d(pool_, &tile_trampoline_<fn_type_>, context, n, tile ? tile : 1, 0);
        } else
            ::pthreadpool_parallelize_1d(pool_, &item_trampoline_<fn_type_>, context, n, 0);
    }

private:
    /**  The calling thread's slot; a thread pthreadpool never showed at pinning is a fatal surprise. */
    static std::size_t slot_() noexcept {
        std::size_t const slot = current_slot;
        if (slot == unknown_slot_k) fail(exit_unavailable_k, "pthreadpool ran a task on a thread it never pinned");
        return slot;
    }

    template <typename fn_type_>
    static void tile_trampoline_(void *context, std::size_t first, std::size_t count) {
        auto const &fn = *static_cast<fn_type_ const *>(context);
        std::size_t const thread = slot_();
        for (std::size_t task = first; task != first + count; ++task) fn(task, thread);
    }

    template <typename fn_type_>
    static void item_trampoline_(void *context, std::size_t task) {
        (*static_cast<fn_type_ const *>(context))(task, slot_());
    }

    /**  `fn(item)` for T items, each held until all T arrived; false if they never did. */
    template <typename fn_type_>
    bool broadcast_(fn_type_ const &fn) noexcept {
        struct context_t {
            fn_type_ const &fn;
            rendezvous_t rendezvous;
        } context{fn, rendezvous_t(threads_)};
        ::pthreadpool_parallelize_1d(
            pool_,
            [](void *opaque, std::size_t item) {
                auto &context = *static_cast<context_t *>(opaque);
                context.rendezvous.arrive_and_wait();
                context.fn(item);
            },
            &context, threads_, 0);
        return !context.rendezvous.timed_out();
    }

    std::size_t threads_;
    pthreadpool_t pool_ = nullptr;
    std::string error_;
};

} // namespace forkunion::bench
