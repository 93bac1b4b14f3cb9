/**
 *  @file   handoff_atomic.hpp
 *  @brief  The line hand-off model's parts: an instrumented atomic that counts ownership changes of cache lines,
 *          and a baton micro-wait that runs a pool's threads one at a time in a fixed order.
 *
 *  An *ownership change* is a thread's first access to a line after another thread wrote it: the access that, on
 *  a coherent cache, has to fetch the line from the writer's cache. Reads after the thread's own write, re-reads
 *  of a line nobody wrote since, and a write to a line the thread itself wrote last (an upgrade of a shared copy,
 *  which moves no data) are free. A read-modify-write counts as a write whether or not it changes the value:
 *  `LOCK CMPXCHG` takes the line exclusively even when it fails.
 *
 *  A *line* is `address / line_bytes`, with `line_bytes` set per model run to the pool's `alignment_k`, not to the
 *  64 bytes of a hardware line: the pool pads every shared word to one such block, and its default of 128 bytes
 *  is there because adjacent-line prefetchers move 64-byte lines in pairs, so the block is the unit that moves.
 * Counting by the block also covers the non-atomic fields that share a block with an atomic: the dispatch line's
 * trampoline, context and the job copied into it are written before the generation's store and read after its load,
 * by the same threads, so the generation's transfer carries them (the model asserts that the jobs it dispatches travel in
 * that line, not by pointer). A pool padded to 64 bytes, counted by 64, is the same question at the hardware's line
 * size.
 *
 *  The *critical path* is measured with a clock per thread and per line: a counted access sets the thread's clock
 *  to max(its clock, the line's clock at its last write) + 1, and a write stamps the line with the writer's clock.
 *  So a thread's own transfers are dependent one after another (a spin-wait on one child's word does not start
 *  the next child's load), and a transfer depends on every transfer its writer made before writing. Every clock
 *  is 0 when a dispatch begins, and `restart_chain` sets a thread's back to 0 when its slice ends, so that what
 *  the dispatcher's clock reads at the join is the fan-in's longest chain of dependent transfers alone.
 *
 *  The baton: every thread of the pool calls its micro-wait whenever it waits, so a micro-wait that hands a baton
 *  to the next thread of a fixed ring and blocks until the baton comes back runs exactly one thread at a time, in
 *  round-robin order, and the same accesses happen in the same order in every run: the counts are deterministic.
 *  Threads join the ring at their first micro-wait (workers by their pool index; the dispatching thread is placed
 *  by `arm`); `release` ends the serialized schedule so that `terminate` can join the workers.
 *
 *  Test and benchmark support only: one model runs at a time per process, every access takes a mutex, and the
 *  baton blocks in the kernel at every hand-off, so this is orders of magnitude slower than `std::atomic`.
 */
#pragma once
#include <algorithm>     // `std::max`
#include <atomic>        // `std::atomic`
#include <cstddef>       // `std::size_t`
#include <cstdint>       // `std::uint64_t`, `std::uintptr_t`
#include <cstdio>        // `std::fprintf`
#include <cstdlib>       // `std::abort`
#include <memory>        // `std::unique_ptr`
#include <mutex>         // `std::mutex`
#include <thread>        // `std::this_thread::yield`
#include <type_traits>   // `std::is_integral_v`
#include <unordered_map> // `std::unordered_map`
#include <vector>        // `std::vector`

#include <forkunion/hardware/wait_kernel.hpp>

namespace forkunion::bench {

/**  Per dispatch under the model: ownership changes, and the fan-in's critical path in transfers. */
struct handoff_tally_t {
    std::uint64_t transfers = 0;
    std::uint64_t critical_path = 0;
    friend bool operator==(handoff_tally_t const &, handoff_tally_t const &) = default;
};

/**
 *  @brief  The record every `handoff_atomic_t` reports to: per line, its last writer, a version bumped by every
 *          write, and the writer's clock; per thread, the version of each line it last saw, and its clock.
 *  Any thread may call every member; each call holds one mutex.
 */
class handoff_model_t {
public:
    static handoff_model_t &instance() noexcept {
        static handoff_model_t model;
        return model;
    }

    /**  Forgets every line and thread (a new pool may reuse an old one's addresses); lines are `line_bytes` long. */
    void reset(std::size_t line_bytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        line_bytes_ = line_bytes;
        lines_.clear();
        threads_.clear();
        transfers_ = 0;
        ++session_;
    }

    /**  One access at `address` by the calling thread; `writes` for stores, RMWs and construction. */
    void access(void const *address, bool writes) {
        std::lock_guard<std::mutex> lock(mutex_);
        thread_t &thread = this_thread_();
        std::uintptr_t const line = reinterpret_cast<std::uintptr_t>(address) / line_bytes_;
        line_t &state = lines_[line];
        std::uint64_t &seen = thread.seen[line];
        if (state.version != 0 && state.writer != thread.index && seen != state.version) {
            ++transfers_;
            thread.clock = std::max(thread.clock, state.clock) + 1;
        }
        seen = state.version;
        if (!writes) return;
        seen = ++state.version;
        state.writer = thread.index;
        state.clock = thread.clock;
    }

    /**  Zeroes the transfer count and every clock: the next dispatch starts with nothing in flight. */
    void begin_dispatch() {
        std::lock_guard<std::mutex> lock(mutex_);
        transfers_ = 0;
        for (auto &entry : lines_) entry.second.clock = 0;
        for (thread_t &thread : threads_) thread.clock = 0;
    }

    /**  The transfers since `begin_dispatch`, and the calling thread's clock: the chain that ended with it. */
    handoff_tally_t end_dispatch() {
        std::lock_guard<std::mutex> lock(mutex_);
        return {transfers_, this_thread_().clock};
    }

    /**  The calling thread's chain starts again from 0: its slice ended, and the fan-in starts here. */
    void restart_chain() {
        std::lock_guard<std::mutex> lock(mutex_);
        this_thread_().clock = 0;
    }

private:
    struct line_t {
        std::size_t writer = 0;
        std::uint64_t version = 0; // 0: never written since `reset`
        std::uint64_t clock = 0;
    };
    struct thread_t {
        std::size_t index = 0;
        std::uint64_t clock = 0;
        std::unordered_map<std::uintptr_t, std::uint64_t> seen;
    };
    struct identity_t {
        std::uint64_t session = 0;
        std::size_t index = 0;
    };

    thread_t &this_thread_() {
        thread_local identity_t identity;
        if (identity.session != session_) {
            identity.session = session_;
            identity.index = threads_.size();
            threads_.emplace_back();
            threads_.back().index = identity.index;
        }
        return threads_[identity.index];
    }

    std::mutex mutex_;
    std::size_t line_bytes_ = 64;
    std::uint64_t session_ = 1;
    std::uint64_t transfers_ = 0;
    std::unordered_map<std::uintptr_t, line_t> lines_;
    std::vector<thread_t> threads_;
};

/**
 *  @brief  `std::atomic<value_type_>` with every access reported to `handoff_model_t::instance()`, as far as a
 *          pool uses it: construction (a write), load, store, exchange, both compare-exchanges, fetch_add and
 *          fetch_sub (integral types), with their memory orders, which it passes through unchanged.
 *  Same size and alignment as `std::atomic<value_type_>`, so the pool's padding assertions hold with it.
 */
template <typename value_type_>
class handoff_atomic_t {
    using atomic_t = std::atomic<value_type_>;

public:
    static constexpr bool is_always_lock_free = atomic_t::is_always_lock_free;

    handoff_atomic_t() noexcept : value_() { note_(true); }
    handoff_atomic_t(value_type_ value) noexcept : value_(value) { note_(true); } // NOLINT(google-explicit-constructor)
    handoff_atomic_t(handoff_atomic_t const &) = delete;
    handoff_atomic_t &operator=(handoff_atomic_t const &) = delete;

    value_type_ load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
        note_(false);
        return value_.load(order);
    }
    void store(value_type_ value, std::memory_order order = std::memory_order_seq_cst) noexcept {
        note_(true);
        value_.store(value, order);
    }
    value_type_ exchange(value_type_ value, std::memory_order order = std::memory_order_seq_cst) noexcept {
        note_(true);
        return value_.exchange(value, order);
    }
    bool compare_exchange_weak(value_type_ &expected, value_type_ desired, std::memory_order success,
                               std::memory_order failure) noexcept {
        note_(true);
        return value_.compare_exchange_weak(expected, desired, success, failure);
    }
    bool compare_exchange_weak(value_type_ &expected, value_type_ desired,
                               std::memory_order order = std::memory_order_seq_cst) noexcept {
        note_(true);
        return value_.compare_exchange_weak(expected, desired, order);
    }
    bool compare_exchange_strong(value_type_ &expected, value_type_ desired, std::memory_order success,
                                 std::memory_order failure) noexcept {
        note_(true);
        return value_.compare_exchange_strong(expected, desired, success, failure);
    }
    bool compare_exchange_strong(value_type_ &expected, value_type_ desired,
                                 std::memory_order order = std::memory_order_seq_cst) noexcept {
        note_(true);
        return value_.compare_exchange_strong(expected, desired, order);
    }
    value_type_
    fetch_add(value_type_ delta,
              std::memory_order order = std::memory_order_seq_cst) noexcept requires std::is_integral_v<value_type_> {
        note_(true);
        return value_.fetch_add(delta, order);
    }
    value_type_
    fetch_sub(value_type_ delta,
              std::memory_order order = std::memory_order_seq_cst) noexcept requires std::is_integral_v<value_type_> {
        note_(true);
        return value_.fetch_sub(delta, order);
    }

private:
    void note_(bool writes) const noexcept { handoff_model_t::instance().access(&value_, writes); }

    atomic_t value_;
};

/**
 *  @brief  The serialized schedule: a ring of `members` threads, exactly one of which runs at a time; a thread
 *          that waits (calls `pass`) hands the baton to the next member of the ring and blocks until it returns.
 *
 *  `arm` (by the thread that will dispatch, before its pool spawns) sizes the ring and gives that thread the
 *  baton and its ring position. Every other thread takes the position it first passes (`pass(hint)`, the pool's
 *  thread index) and blocks there. `wait_for_ring` returns once all of them do; from then on, until `release`,
 *  the order of every step is fixed. `release` lets everyone run freely (a `pass` is then a `yield`).
 */
class baton_t {
public:
    static baton_t &instance() noexcept {
        static baton_t baton;
        return baton;
    }

    void arm(std::size_t members, std::size_t dispatcher) {
        members_ = members;
        gates_ = std::make_unique<gate_t[]>(members);
        joined_.store(0, std::memory_order_relaxed);
        free_.store(false, std::memory_order_relaxed);
        session_.fetch_add(1, std::memory_order_relaxed);
        claim_position_(dispatcher);
    }

    /**  Blocks (yielding) until every member but the caller waits in the ring. */
    void wait_for_ring() const noexcept {
        while (joined_.load(std::memory_order_acquire) + 1 < members_) std::this_thread::yield();
    }

    /**  Ends the serialized schedule: every blocked member runs, and later `pass`es only yield. */
    void release() noexcept {
        free_.store(true, std::memory_order_release);
        for (std::size_t member = 0; member != members_; ++member) open_(member);
    }

    /**  The calling thread waits: hands the baton on and blocks until it comes back. */
    void pass(std::size_t hint) noexcept {
        if (free_.load(std::memory_order_acquire)) return std::this_thread::yield();
        identity_t &me = identity_();
        if (me.session != session_.load(std::memory_order_relaxed)) {
            claim_position_(hint);
            joined_.fetch_add(1, std::memory_order_release);
        } else {
            open_((me.position + 1) % members_);
        }
        block_(me.position);
    }

private:
    struct alignas(64) gate_t {
        std::atomic<std::uint32_t> open{0}; // 1: this member holds the baton (futex word of `wait`/`notify_one`)
        std::atomic<bool> taken{false};     // a thread sits at this position
    };
    struct identity_t {
        std::uint64_t session = 0;
        std::size_t position = 0;
    };

    static identity_t &identity_() noexcept {
        thread_local identity_t identity;
        return identity;
    }

    void claim_position_(std::size_t position) noexcept {
        if (position >= members_ || gates_[position].taken.exchange(true, std::memory_order_relaxed)) {
            std::fprintf(stderr, "baton: ring position %zu of %zu taken twice or out of range\n", position, members_);
            std::abort();
        }
        identity_() = {session_.load(std::memory_order_relaxed), position};
    }

    // Release pairs with the acquire in `block_`: the next thread sees everything the last one wrote.
    void open_(std::size_t position) noexcept {
        gates_[position].open.store(1, std::memory_order_release);
        kernel_wake_all(gates_[position].open); // its only waiter
    }

    void block_(std::size_t position) noexcept {
        std::atomic<std::uint32_t> &gate = gates_[position].open;
        while (gate.exchange(0, std::memory_order_acquire) != 1) {
            if (free_.load(std::memory_order_acquire)) return;
            kernel_wait(gate, 0, 0);
        }
    }

    std::size_t members_ = 0;
    std::unique_ptr<gate_t[]> gates_;
    std::atomic<std::size_t> joined_{0};
    std::atomic<bool> free_{false};
    std::atomic<std::uint64_t> session_{0};
};

/**  @brief  The pool's micro-wait under the model: every wait hands the baton on (`micro_yield(thread)`). */
struct baton_yield_t {
    template <typename index_type_>
    void operator()(index_type_ thread) const noexcept {
        baton_t::instance().pass(static_cast<std::size_t>(thread));
    }
};

} // namespace forkunion::bench
