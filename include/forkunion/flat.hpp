/**
 *  @file   forkunion/flat.hpp
 *  @brief  `basic_pool_t` and `flat_pool_t`: the fork-join pool every other pool is built from.
 *
 *  A fork-join pool runs one dispatch at a time on all of its threads and joins it: the shape of
 *  `#pragma omp parallel for`. It is not a task queue: no futures, no task graph, no nested parallelism (one
 *  narrow exception: thread 0 of a caller-exclusive pool may fork from inside its own slice, see below).
 *
 *  @section use When to use it, and when not
 *  Use it for data-parallel loops and bulk-synchronous phases that must dispatch in nanoseconds: after `spawn`,
 *  a dispatch makes no heap allocation, no system call (in the default spin mode), no CAS retry loop, and touches
 *  no line that another hot word shares. Do not use it for work that outlives a scope, for I/O, or for recursive
 *  task graphs: a dispatch from inside a callback is refused with `contended`.
 *
 *  @section api API
 *  - `spawn(threads, exclusivity)` / `terminate()`: the only calls that allocate, start or join threads.
 *  - `for_threads(f)`: `f(thread)` once per thread. Serial equivalent: `for (t = 0; t < threads; ++t) f(t);`
 *  - `for_n(n, f)`: `for (i = 0; i < n; ++i) f(i);` statically split in contiguous blocks, one per thread.
 *  - `for_n_dynamic(n, f)`: the same loop for uneven tasks; idle threads steal single tasks.
 *  - `for_slices(n, f)`: `f(first, count)` once per thread with a non-empty block of the static split.
 *  - `unsafe_for_threads(f)`, `is_complete(generation)`, `unsafe_join(generation)`: the split broadcast.
 *  - `nap()`, `sleep(microseconds)`: how idle workers wait until the next dispatch.
 *  Each dispatch returns a guard (`[[nodiscard]]`, immovable) that joins on `join()` or destruction, reports a
 *  refusal through `status()` / `explicit operator bool`, and runs nothing when refused.
 *
 *  @section threads Which threads may call what
 *  - `spawn`, `terminate`: the controlling thread, never from a callback (`terminate` from a callback of the same
 *    pool returns without effect rather than waiting for itself). `terminate` first waits for a dispatch in flight;
 *    a dispatch racing it from another thread is refused with `not_spawned` or `contended`, never served.
 *  - Dispatches, `nap`, `sleep`: any thread. At most one runs at a time; any other, concurrent or nested, is
 *    refused at once with `contended`, in release builds too, and never blocks or corrupts.
 *  - `is_complete`: any thread, any time. `unsafe_join`: the thread that dispatched (it runs thread 0's slice on
 *    caller-inclusive pools).
 *
 *  @section protocol Protocol
 *  The only shared words, each on its own `alignment_k`-byte line (asserted below):
 *
 *      idle mode   ∈ {spin, nap, sleep, die}   how idle workers wait; `die` makes them exit
 *      epoch  e                           odd ⇔ a published dispatch is not yet retired
 *      threads_to_sync  s                 contributions the in-flight dispatch still owes
 *      claim[t].next    c_t               offsets of thread t's static block handed out by `for_n_dynamic`
 *
 *  plus the fork state (`trampoline`, `context`, `outer`) that shares epoch's line, because it is written right
 *  before epoch and read right after it: one line moves per dispatch instead of two. T is the thread count;
 *  contributions are T on both kinds of pool (the caller is contributor 0 on inclusive pools).
 *
 *      I1  s = 0  ⇒  nobody runs a callback of this pool or reads the fork state or cursors.
 *      I2  s > 0  ⇔  one dispatcher holds the claim; only the holder writes fork state, cursors and epoch.
 *      I3  e odd  ⇔  the holder has published and the last contribution has not stepped e yet.
 *      I4  Every worker consumes every odd value of e, in order: a publication needs every contribution to the
 *          previous one retired, so no worker can miss one, and 2^bits wrap-around cannot alias for workers.
 *      I5  each thread increments c_t at most until its first failure, so the largest offset ever returned is
 *          len_t + T - 1  ≤  ceil(n/T) + T - 1  ≤  max(index_t)  for n, T ≤ max(index_t). Only the very last
 *          increment of a cursor may wrap its stored value, once every thread has left that cursor for good.
 *      I6  An unspawned pool keeps s ≠ 0 (claimed by nobody), so no dispatch can claim it (refused `not_spawned`).
 *
 *      T0  spawn      start the workers; threads = T; s: sentinel → 0 (release) opens the pool.
 *      T1  claim      CAS s: 0 → T (acquire). A loser is refused with `contended` (or `not_spawned`) and never
 *                     retries; only T2n (thread 0 of an exclusive pool) proceeds from a lost claim.
 *      T2  publish    wait e even (a retirer may sit between T3's two steps); write fork state and cursors;
 *                     outer = e+1; e → e+1 (release). The generation token is e+1: odd, never 0.
 *      T2n nested     wait s = 1 (only thread 0's own contribution left); s = T; e → e+2, or e+4 if e+2 = outer
 *                     (release, stays odd); run slice 0; wait s = 1; leave every cursor exhausted for the
 *                     enclosing dispatch again. Returns complete. outer keeps naming the enclosing dispatch.
 *      T3  retire     s.fetch_sub(1) (acq_rel); whoever takes s from 1 to 0 stores e → e+1 (release).
 *      T4  terminate  claim like T1 but waiting; idle mode = die; e → e+1 (release) wakes everyone; join; e → e+1;
 *                     s stays claimed (I6).
 *      M   idle mode       `nap`/`sleep` claim like T1 (refused `contended` when they lose), exchange the idle mode and
 *                     release s = 0, so the next claimer's T1 acquire sees the idle mode and wakes kernel sleepers.
 *                     Leaving `sleep` wakes the kernel sleepers itself: the next publication's exchange would see
 *                     the new idle mode, not `sleep`, and wake nobody.
 *
 *  A generation g is complete ⇔ e is even, or e is odd and outer ≠ g. Workers are exact at any width (I4), and
 *  T2n never hands out a generation equal to outer. A joiner holding a token older than 2^(bits-1) dispatches
 *  may see it alias a newer dispatch: on an exclusive pool it then waits for that dispatch, which completes on
 *  its own; on an inclusive pool only the thread that dispatched may join (and run slice 0), so any other
 *  thread's join returns at once.
 *
 *  @section idle Idle workers
 *  - spin (default): the micro-wait (`PAUSE`, `YIELD`, Zihintpause) in a loop, no system call. When the pool has
 *    more spinning threads than allowed cores, after `oversubscribed_spins_k` micro-waits each idle iteration also
 *    calls `std::this_thread::yield()`, so spinners cannot starve the threads that hold work.
 *  - `nap()`: idle workers park on epoch's cache line with the best address wait the CPU has at run time
 *    (`nap_on` in wait.hpp: UMWAIT, WFET, WFE or WRS.STO, each bounded), or the micro-wait where it has none.
 *  - `sleep(us)`: idle workers block in the kernel (`futex`) until the next dispatch wakes them; with `us > 0`
 *    they also re-check every `us` microseconds. Durations of 1 s and more work.
 *  `nap` and `sleep` last until the next dispatch, which wakes the workers and returns the pool to spinning.
 *
 *  @section exceptions Exceptions
 *  Every member is `noexcept`. Callbacks should be `noexcept`; one that throws reaches a `noexcept` frame of the
 *  pool and calls `std::terminate`. Nothing is left half-done silently.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint32_t`
#include <new>         // `std::bad_alloc`
#include <thread>      // `std::thread`
#include <type_traits> // `std::is_invocable_v`
#include <utility>     // `std::forward`
// Compile cost: `<memory>` also declares `shared_ptr`, the ranges algorithms and the parallel ones, about a
// tenth of a hello world's compile time. libstdc++ declares the three names the pool needs in smaller headers.
#if defined(__GLIBCXX__) && __has_include(<bits/alloc_traits.h>) && __has_include(<bits/allocator.h>)
#include <bits/alloc_traits.h> // `std::allocator_traits`
#include <bits/allocator.h>    // `std::allocator`
#include <bits/move.h>         // `std::addressof`
#else
#include <memory> // `std::allocator`, `std::allocator_traits`, `std::addressof`
#endif

#include <forkunion/cores.hpp>
#include <forkunion/types.hpp>
#include <forkunion/wait.hpp>
#include <forkunion/wait_kernel.hpp>

namespace forkunion {

/**
 *  @brief  Calls `fn(prong.task)` if `fn` takes an index, else `fn(prong)`: the two callback shapes every pool
 *          accepts (a generic `[](auto task)` gets the index). Shared by every pool kind.
 */
template <typename fn_type_, typename index_type_>
inline void call_with_prong(fn_type_ &fn, prong_t<index_type_> prong) noexcept {
    if constexpr (std::is_invocable_v<fn_type_ &, index_type_>)
        fn(prong.task);
    else
        fn(prong);
}

/**  @brief  Calls `fn(prong.task, count)` if `fn` takes two indices, else `fn(prong, count)`: `for_slices`. */
template <typename fn_type_, typename index_type_>
inline void call_with_slice(fn_type_ &fn, prong_t<index_type_> prong, index_type_ count) noexcept {
    if constexpr (std::is_invocable_v<fn_type_ &, index_type_, index_type_>)
        fn(prong.task, count);
    else
        fn(prong, count);
}

/**  @brief  How idle workers wait: the `idle_mode` word of the protocol. */
enum class idle_mode_t : std::uint8_t {
    spin_k = 0,  ///< Micro-wait in a loop; the default and the fastest to wake.
    nap_k = 1,   ///< Light sleep on epoch's cache line where the CPU can; micro-wait otherwise.
    sleep_k = 2, ///< Block in the kernel until the next dispatch.
    die_k = 3,   ///< Exit: only `terminate` and a failed `spawn` set it.
};

/**
 *  @brief  RAII guard of one dispatch: joins on `join()` or destruction. Returned by every blocking dispatch.
 *
 *  On caller-exclusive pools the workers start when the guard is constructed, so the caller may overlap its own
 *  work, poll `is_complete()` and `join()`. On caller-inclusive pools thread 0's slice runs inside `join()` (or the
 *  destructor), so the dispatch cannot complete before it. `join()` is idempotent. A refused dispatch runs
 *  nothing; `status()` says why and `join()` returns at once. Immovable, because the workers hold its address.
 *  Only the thread that created it may join it.
 */
template <typename pool_type_, typename fork_type_>
class [[nodiscard]] dispatch_guard_t {
public:
    using pool_t = pool_type_;
    using fork_t = fork_type_;
    using generation_t = typename pool_t::generation_t;

    template <typename... args_types_>
    explicit dispatch_guard_t(pool_t &pool, args_types_ &&...args) noexcept
        : pool_(pool), fork_(pool, std::forward<args_types_>(args)...) {
        auto const publication = pool.unsafe_publish(&fork_t::trampoline, &fork_, fork_t::resets_cursors_k);
        generation_ = publication.generation;
        status_ = publication.status;
    }

    dispatch_guard_t(dispatch_guard_t const &) = delete;
    dispatch_guard_t(dispatch_guard_t &&) = delete;
    dispatch_guard_t &operator=(dispatch_guard_t const &) = delete;
    dispatch_guard_t &operator=(dispatch_guard_t &&) = delete;
    ~dispatch_guard_t() noexcept { join(); }

    /**  @brief  Blocks until every slice ran; runs thread 0's slice on caller-inclusive pools. Idempotent. */
    void join() noexcept {
        if (joined_) return;
        joined_ = true;
        if (generation_) pool_.unsafe_join(generation_);
    }

    /**  @brief  True once every slice ran, or if the dispatch was refused. Never blocks. */
    [[nodiscard]] bool is_complete() const noexcept {
        return joined_ || !generation_ || pool_.is_complete(generation_);
    }

    /**  @brief  Success, or why the dispatch was refused (`contended`, `not_spawned`). */
    [[nodiscard]] status_t status() const noexcept { return status_; }
    explicit operator bool() const noexcept { return static_cast<bool>(status_); }

    /**  @brief  The odd generation token of this dispatch, or 0 if it was refused. */
    [[nodiscard]] generation_t generation() const noexcept { return generation_; }

private:
    pool_t &pool_;
    fork_t fork_;
    generation_t generation_ = 0;
    status_t status_;
    bool joined_ = false;
};

/**
 *  @brief  The dispatch verbs every pool kind offers, written once over the pool's own fork types (CRTP).
 *
 *  A pool `P` derives from `dispatch_verbs_t<P, index_t>`, befriends it, and supplies the fork types
 *  `threads_fork_t<fn>`, `n_fork_t<fn>`, `n_dynamic_fork_t<fn>` and `slices_fork_t<fn>` (each with a `trampoline`,
 *  a `resets_cursors_k` and a constructor from the pool and the verb's arguments), the trampoline
 *  `threads_trampoline_<fn>`, and `unsafe_publish`. What follows holds for every pool kind; each pool's header says
 *  how it numbers and places its threads, and what a prong's `compute_domain` is. Callable from any thread; a
 *  dispatch racing another one, or nested in one, is refused (`contended`) as the pool's header describes.
 */
template <typename pool_type_, typename index_type_>
class dispatch_verbs_t {
public:
    using index_t = index_type_;

    /**
     *  @brief  Calls `fn(thread)` (or `fn(prong)`, whose task is the thread) once on every thread.
     *  Serial equivalent: `for (index_t t = 0; t < threads_count(); ++t) fn(t);`
     */
    template <typename fn_type_>
    [[nodiscard]] auto for_threads(fn_type_ &&fn) noexcept {
        using fork_t = typename pool_type_::template threads_fork_t<std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, fork_t>(self_(), std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Calls `fn(task)` (or `fn(prong)`) for every task in `[0, n)`, thread t running the contiguous
     *          block `static_slice(n, threads_count(), t)`. Serial equivalent:
     *          `for (index_t i = 0; i < n; ++i) fn(i);`  ~  `#pragma omp parallel for schedule(static)`
     */
    template <typename fn_type_>
    [[nodiscard]] auto for_n(index_t n, fn_type_ &&fn) noexcept {
        using fork_t = typename pool_type_::template n_fork_t<std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, fork_t>(self_(), n, std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Calls `fn(task)` (or `fn(prong)`) for every task in `[0, n)`, for tasks of uneven cost: each thread
     *          drains its own static block through a private, padded `fetch_add` cursor, then steals single tasks
     *          from other threads' cursors in a coprime-stride order seeded by its index (a distributed pool
     *          steals inside the thief's compute domain first). Serial equivalent:
     *          `for (index_t i = 0; i < n; ++i) fn(i);`  ~  `#pragma omp parallel for schedule(dynamic, 1)`
     */
    template <typename fn_type_>
    [[nodiscard]] auto for_n_dynamic(index_t n, fn_type_ &&fn) noexcept {
        using fork_t = typename pool_type_::template n_dynamic_fork_t<std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, fork_t>(self_(), n, std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Calls `fn(first, count)` (or `fn(prong, count)`, whose task is `first`) once per thread whose block
     *          of the static split is non-empty; a thread with an empty block is not called. Serial equivalent:
     *          `for (t = 0; t < threads; ++t) if (s = static_slice(n, threads, t); s.count) fn(s.first, s.count);`
     */
    template <typename fn_type_>
    [[nodiscard]] auto for_slices(index_t n, fn_type_ &&fn) noexcept {
        using fork_t = typename pool_type_::template slices_fork_t<std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, fork_t>(self_(), n, std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Broadcasts `fn(thread)` (or `fn(prong)`) to every thread without blocking and returns the
     *          dispatch's odd generation, or 0 if refused (contended or not spawned). `fn` must be an lvalue that
     *          outlives the dispatch.
     *
     *  On exclusive pools the workers start now; poll `is_complete(generation)` and `unsafe_join(generation)`.
     *  On inclusive pools thread 0's slice runs inside `unsafe_join`, which must be called.
     */
    template <typename fn_type_>
    [[nodiscard]] index_t unsafe_for_threads(fn_type_ &&fn) noexcept {
        static_assert(std::is_lvalue_reference_v<fn_type_>,
                      "unsafe_for_threads keeps the callable's address: pass an lvalue that outlives the dispatch");
        using fn_t = std::remove_reference_t<fn_type_>;
        void *context = const_cast<void *>(static_cast<void const volatile *>(std::addressof(fn)));
        return self_().unsafe_publish(&pool_type_::template threads_trampoline_<fn_t>, context, false).generation;
    }

private:
    pool_type_ &self_() noexcept { return static_cast<pool_type_ &>(*this); }
};

/**
 *  @brief  The flat fork-join pool. See the file comment for the protocol, the threading contract and the
 *          idle modes.
 *
 *  @tparam allocator_type_     Allocates the per-thread table at `spawn`, the pool's only allocation; rebound to
 *                              an internal slot type, whose construction starts the thread (so a custom
 *                              `construct` can inject thread-start failures).
 *  @tparam micro_yield_type_   The micro-wait of idle loops; may take the waiting thread's index.
 *  @tparam index_type_         Unsigned type of every count, task index, thread index and epoch. `std::uint8_t`
 *                              limits a pool to 255 threads and 255 tasks and makes exhaustive tests cheap.
 *  @tparam alignment_          Padding of each shared word; at least the destructive interference size.
 *
 *  Size: three `alignment_` lines (dispatch, sync, control) plus the allocator, and one `alignment_` slot per
 *  thread on the heap holding that thread's claim cursor and `std::thread`. Not copyable, not movable.
 */
template <typename allocator_type_ = std::allocator<std::thread>, typename micro_yield_type_ = default_micro_yield_t,
          typename index_type_ = std::size_t, std::size_t alignment_ = default_alignment_k>
class basic_pool_t
    : public dispatch_verbs_t<basic_pool_t<allocator_type_, micro_yield_type_, index_type_, alignment_>, index_type_> {
    friend class dispatch_verbs_t<basic_pool_t, index_type_>;

public:
    using allocator_t = allocator_type_;
    using micro_yield_t = micro_yield_type_;
    using index_t = index_type_;
    using generation_t = index_t;
    using prong_t = forkunion::prong_t<index_t>;
    using trampoline_t = void (*)(void *context, index_t thread) noexcept;
    static constexpr std::size_t alignment_k = alignment_;

    /**
     *  Micro-waits an oversubscribed idle thread spends before it starts yielding its core, after which every idle
     *  iteration yields. A `pause` costs ~17 ns and a `sched_yield` ~290 ns here (measured), so the first ~1 µs of
     *  idleness, where back-to-back dispatches land, costs no system call; past it, an idle thread gives its
     *  core to the threads that hold work at every turn instead of burning its scheduler slice.
     */
    static constexpr std::size_t oversubscribed_spins_k = 64;

    static_assert(std::is_unsigned_v<index_t>, "the index type must be unsigned");
    static_assert(std::atomic<index_t>::is_always_lock_free, "the index type must have lock-free atomics");
    static_assert(alignment_k >= 64 && (alignment_k & (alignment_k - 1)) == 0, "alignment: a power of two >= 64");

    /**  @brief  The outcome of a low-level publication: an odd generation, or 0 with the refusal status. */
    struct publication_t {
        generation_t generation = 0;
        status_t status;
    };

    basic_pool_t() noexcept = default;
    explicit basic_pool_t(allocator_t const &allocator) noexcept : allocator_(allocator) {}
    basic_pool_t(basic_pool_t const &) = delete;
    basic_pool_t(basic_pool_t &&) = delete;
    basic_pool_t &operator=(basic_pool_t const &) = delete;
    basic_pool_t &operator=(basic_pool_t &&) = delete;
    ~basic_pool_t() noexcept { terminate(); }

    /**
     *  @brief  Starts the pool: `threads - 1` workers plus the caller as thread 0 (`caller_inclusive_k`), or
     *          `threads` workers (`caller_exclusive_k`). The pool's only allocation.
     *
     *  @retval invalid_argument  `threads == 0`.
     *  @retval already_spawned   the pool has threads; `terminate()` first.
     *  @retval bad_alloc         the thread table could not be allocated.
     *  @retval thread_refused    the OS refused a thread; every thread that did start was stopped and joined.
     *  On failure the pool is left unspawned, with nothing allocated and no thread running.
     */
    status_t spawn(index_t threads, caller_exclusivity_t exclusivity = caller_inclusive_k) noexcept {
        return spawn(threads, exclusivity, allowed_cores_count());
    }

    /**
     *  @brief  `spawn`, for pools that place their threads themselves (`colocated_pool_t`): `cores` is how many
     *          cores the pool's threads will run on, instead of the caller's allowed cores that workers inherit.
     *          The pool is oversubscribed (idle threads back off to `yield`) when its spinners, the threads plus
     *          the caller of an exclusive pool, outnumber `cores`. Same statuses as `spawn`.
     */
    status_t spawn(index_t threads, caller_exclusivity_t exclusivity, std::size_t cores) noexcept {
        if (threads == 0) return status_code_t::invalid_argument_k;
        if (threads_() != 0) return status_code_t::already_spawned_k;

        slot_allocator_t slot_allocator(allocator_);
        slot_t *slots = nullptr;
        try {
            slots = slot_traits_t::allocate(slot_allocator, threads);
        } catch (...) {
            return status_code_t::bad_alloc_k;
        }
        if (!slots) return status_code_t::bad_alloc_k;

        bool const exclusive = exclusivity == caller_exclusive_k;
        // An unspawned pool runs nothing, so `epoch` is even here (T4 leaves it even).
        index_t const epoch = dispatch_.epoch.load(std::memory_order_relaxed);
        control_.idle_mode.store(idle_mode_t::spin_k, std::memory_order_relaxed);
        control_.exclusivity = exclusivity;
        // The caller of an exclusive pool spins in `join` too, so it counts as a spinner.
        control_.oversubscribed = static_cast<std::size_t>(threads) + (exclusive ? 1u : 0u) > cores;

        // Everything workers read before their first publication is written above: `std::thread`'s constructor
        // synchronizes-with the start of the thread.
        index_t constructed = 0;
        status_t status;
        try {
            for (; constructed < threads; ++constructed) {
                if (!exclusive && constructed == 0)
                    slot_traits_t::construct(slot_allocator, slots);
                else
                    slot_traits_t::construct(
                        slot_allocator, slots + constructed,
                        [this, constructed, epoch]() noexcept { worker_loop_(constructed, epoch); });
            }
        } catch (std::bad_alloc const &) {
            status = status_code_t::bad_alloc_k;
        } catch (...) {
            status = status_code_t::thread_refused_k;
        }
        if (!status) {
            stop_workers_(slots, constructed, epoch);
            destroy_slots_(slot_allocator, slots, constructed, threads);
            control_.exclusivity = caller_inclusive_k;
            return status;
        }

        control_.slots = slots;
        control_.thread_zero = exclusive ? slots[0].thread.get_id() : std::thread::id();
        control_.threads.store(threads, std::memory_order_relaxed);
        // T0. Pairs with the acquire of T1: a claimer sees the slots, the thread count and the configuration.
        sync_.threads_to_sync.store(0, std::memory_order_release);
        return status_code_t::success_k;
    }

    /**
     *  @brief  Completes the dispatch in flight (running the caller's owed slice of an unjoined inclusive
     *          dispatch), stops and joins every worker, and frees the thread table. The pool can be spawned again,
     *          with another size or exclusivity. No-op on an unspawned pool, and from inside a callback of this
     *          pool (it would wait for itself).
     */
    void terminate() noexcept {
        index_t const threads = threads_();
        if (threads == 0 || called_from_callback_()) return;
        // The caller's own unjoined inclusive dispatch: run its slice first (a join by anyone else returns).
        if (control_.exclusivity == caller_inclusive_k)
            if (generation_t const pending = sync_.pending.load(std::memory_order_relaxed)) unsafe_join(pending);

        // T4: claim like T1, but wait for a dispatch in flight instead of being refused.
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        index_t expected = 0;
        while (!sync_.threads_to_sync.compare_exchange_weak(expected, threads, std::memory_order_acquire,
                                                            std::memory_order_relaxed)) {
            expected = 0;
            backoff_(micro_yield, index_t(0), spins);
        }
        index_t const epoch = wait_for_even_epoch_();
        control_.idle_mode.store(idle_mode_t::die_k, std::memory_order_relaxed);
        slot_t *const slots = control_.slots;
        slot_allocator_t slot_allocator(allocator_);
        stop_workers_(slots, threads, epoch);
        destroy_slots_(slot_allocator, slots, threads, threads);

        control_.threads.store(0, std::memory_order_relaxed);
        control_.slots = nullptr;
        control_.thread_zero = std::thread::id();
        control_.exclusivity = caller_inclusive_k;
        sync_.pending.store(0, std::memory_order_relaxed);
        // `threads_to_sync` stays claimed: an unspawned pool refuses every claim (I6) until T0.
    }

    /**  @brief  Contributors of every dispatch: workers plus the caller on inclusive pools; 0 when unspawned. */
    [[nodiscard]] index_t threads_count() const noexcept { return threads_(); }
    [[nodiscard]] caller_exclusivity_t caller_exclusivity() const noexcept { return control_.exclusivity; }
    /**  @brief  Bytes owned: the pool object and its per-thread slots. */
    [[nodiscard]] std::size_t memory_usage() const noexcept {
        return sizeof(basic_pool_t) + static_cast<std::size_t>(threads_()) * sizeof(slot_t);
    }
    /**
     *  @brief  Whether the calling thread runs a callback of this pool: one of its workers, or the caller of an
     *          inclusive pool inside its own slice. The check `terminate` makes; for pools built on this one.
     *          The controlling thread (the one that may `spawn` and `terminate`) or a worker may call it.
     */
    [[nodiscard]] bool called_from_callback() const noexcept { return called_from_callback_(); }

    /**  @brief  Whether idle threads back off to `yield` because there are more of them than allowed cores. */
    [[nodiscard]] bool oversubscribed() const noexcept { return threads_() && control_.oversubscribed; }

    /**
     *  @brief  Until the next dispatch, idle workers wait on epoch's cache line with the lightest wait the CPU
     *          has (today: the micro-wait). Any thread; takes the pool like a dispatch (transition M).
     *  @retval contended    a dispatch is in flight (or another idle-mode change): nothing changed, never waits.
     *  @retval not_spawned  the pool has no threads.
     */
    status_t nap() noexcept { return change_idle_mode_(idle_mode_t::nap_k, 0); }

    /**
     *  @brief  Until the next dispatch, idle workers block in the kernel; the dispatch wakes them. With
     *          `microseconds > 0` they also wake to re-check that often (any duration, 1 s and more included).
     *          Any thread; takes the pool like a dispatch (transition M), so it cannot race one.
     *  @retval contended    a dispatch is in flight (or another idle-mode change): nothing changed, never waits.
     *  @retval not_spawned  the pool has no threads.
     */
    status_t sleep(std::size_t microseconds) noexcept {
        return change_idle_mode_(idle_mode_t::sleep_k, static_cast<std::uint64_t>(microseconds));
    }

    /**  @brief  The current idle mode (spin, nap or sleep). */
    [[nodiscard]] idle_mode_t idle_mode() const noexcept { return control_.idle_mode.load(std::memory_order_relaxed); }

    // ---- Dispatch: `for_threads`, `for_n`, `for_n_dynamic`, `for_slices` and `unsafe_for_threads` come from
    // `dispatch_verbs_t`; the split broadcast's other half follows. ----

    /**
     *  @brief  True once dispatch `generation` has retired on every thread, or if it is not in flight (0, stale,
     *          or never issued). Never blocks; any thread. An acquire: a true answer makes every slice's writes
     *          visible to the caller.
     */
    [[nodiscard]] bool is_complete(generation_t generation) const noexcept {
        // Pairs with the release of T2/T3: an even epoch means the last retirer published every slice's writes.
        index_t const epoch = dispatch_.epoch.load(std::memory_order_acquire);
        if ((epoch & 1u) == 0) return true;
        // `outer` is stored before the epoch that made it current (T2), so this load sees it or a newer one.
        return dispatch_.outer.load(std::memory_order_relaxed) != generation;
    }

    /**
     *  @brief  Runs thread 0's owed slice (inclusive pools) and blocks until `generation` is complete. A stale
     *          or zero generation returns at once; joining twice is harmless.
     *
     *  On inclusive pools only the thread that dispatched `generation` joins it: it runs slice 0 exactly once,
     *  taken with one CAS of `pending`; a join from any other thread returns at once.
     */
    void unsafe_join(generation_t generation) noexcept {
        if (generation == 0) return;
        if (control_.exclusivity == caller_inclusive_k) {
            // Relaxed: the dispatcher reads its own store; any other thread only needs the value to differ.
            if (sync_.dispatcher.load(std::memory_order_relaxed) != std::this_thread::get_id()) return;
            generation_t expected = generation;
            if (sync_.pending.compare_exchange_strong(expected, 0, std::memory_order_relaxed,
                                                      std::memory_order_relaxed)) {
                sync_.caller_in_slice.store(true, std::memory_order_relaxed);
                dispatch_.trampoline(dispatch_.context, 0);
                sync_.caller_in_slice.store(false, std::memory_order_relaxed);
                retire_();
            }
        }
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        while (!is_complete(generation)) backoff_(micro_yield, index_t(0), spins);
    }

    /**
     *  @brief  The low-level dispatch beneath every `for_*`: claims the pool (T1), publishes `trampoline(context,
     *          thread)` to every thread (T2) and returns the generation. With `resets_cursors` the claim cursors
     *          are zeroed after the claim and before the publication. A lost claim is refused with `contended`
     *          (except thread 0 of an exclusive pool forking from its slice, T2n, which completes before
     *          returning); an unspawned pool refuses with `not_spawned`.
     */
    publication_t unsafe_publish(trampoline_t trampoline, void *context, bool resets_cursors) noexcept {
        index_t const threads = threads_();
        if (threads == 0) return {0, status_code_t::not_spawned_k};
        index_t expected = 0;
        // T1. Acquire pairs with the release sequence of T3's `fetch_sub`s: every slice of the previous dispatch
        // happened-before this point, so the fork state and cursors are ours to write (I1, I2).
        if (!sync_.threads_to_sync.compare_exchange_strong(expected, threads, std::memory_order_acquire,
                                                           std::memory_order_relaxed))
            return publish_after_lost_claim_(trampoline, context, resets_cursors);

        index_t epoch = dispatch_.epoch.load(std::memory_order_relaxed);
        if (epoch & 1u) epoch = wait_for_even_epoch_(); // the previous retirer is between T3's two steps
        if (resets_cursors) reset_cursors_();
        dispatch_.trampoline = trampoline;
        dispatch_.context = context;
        generation_t const generation = static_cast<generation_t>(epoch + 1u);
        dispatch_.outer.store(generation, std::memory_order_relaxed); // ordered by the release below
        if (control_.exclusivity == caller_inclusive_k) {
            // Read by `unsafe_join` on this thread, and compared by stale joiners elsewhere (atomicity suffices).
            sync_.dispatcher.store(std::this_thread::get_id(), std::memory_order_relaxed);
            sync_.pending.store(generation, std::memory_order_relaxed);
        }
        // T2. Pairs with the acquire in `wait_for_publication_`: workers see the fork state and cursors.
        dispatch_.epoch.store(generation, std::memory_order_release);
        if (control_.idle_mode.load(std::memory_order_relaxed) != idle_mode_t::spin_k) wake_();
        return {generation, status_code_t::success_k};
    }

    /**  @brief  Thread `thread`'s claim cursor, for pools built on top of this one. */
    [[nodiscard]] std::atomic<index_t> &unsafe_claim_cursor(index_t thread) noexcept {
        return control_.slots[thread].next;
    }

private:
    /**  One per thread: the claim cursor (hot during `for_n_dynamic`) and the thread handle (cold). */
    struct alignas(alignment_k) slot_t {
        std::atomic<index_t> next{0};
        std::thread thread;

        slot_t() noexcept = default;
        template <typename fn_type_>
        explicit slot_t(fn_type_ &&fn) : thread(std::forward<fn_type_>(fn)) {}
    };
    using slot_allocator_t = typename std::allocator_traits<allocator_t>::template rebind_alloc<slot_t>;
    using slot_traits_t = std::allocator_traits<slot_allocator_t>;

    /**  Written by the claim holder right before `epoch`, read by every worker right after it. */
    struct alignas(alignment_k) dispatch_line_t {
        std::atomic<index_t> epoch{0};
        std::atomic<index_t> outer{0}; // generation of the outermost dispatch in flight (T2n keeps it)
        trampoline_t trampoline = nullptr;
        void *context = nullptr;
    };

    /**  The claim word, plus the inclusive caller's bookkeeping, written by the claim holder. */
    struct alignas(alignment_k) sync_line_t {
        std::atomic<index_t> threads_to_sync{1};  // claimed while unspawned (I6)
        std::atomic<generation_t> pending{0};     // inclusive pools: generation whose slice 0 has not run, else 0
        std::atomic<std::thread::id> dispatcher;  // inclusive pools: the thread that published the latest dispatch
        std::atomic<bool> caller_in_slice{false}; // inclusive pools: the dispatcher is inside slice 0
    };

    /**  `idle_mode` and the configuration: written by `spawn`, `terminate`, `nap`, `sleep` and a waking dispatch. */
    struct alignas(alignment_k) control_line_t {
        std::atomic<idle_mode_t> idle_mode{idle_mode_t::spin_k};
        std::atomic<std::uint32_t> wake{0};     // futex word of `sleep` mode
        std::atomic<std::uint64_t> sleep_us{0}; // re-check period of `sleep` mode, 0 = none
        std::atomic<index_t> threads{0};        // atomic so a racing dispatcher reads it without a data race
        caller_exclusivity_t exclusivity = caller_inclusive_k;
        bool oversubscribed = false;
        slot_t *slots = nullptr;
        std::thread::id thread_zero; // exclusive pools: the only thread allowed to fork from a slice (T2n)
    };

    static_assert(sizeof(slot_t) == alignment_k, "a slot is one padded line");
    static_assert(sizeof(dispatch_line_t) == alignment_k && alignof(dispatch_line_t) == alignment_k);
    static_assert(sizeof(sync_line_t) == alignment_k && alignof(sync_line_t) == alignment_k);
    static_assert(sizeof(control_line_t) == alignment_k && alignof(control_line_t) == alignment_k);

    dispatch_line_t dispatch_;
    sync_line_t sync_;
    control_line_t control_;
    [[no_unique_address]] allocator_t allocator_;

    // ---- Forks ----

    template <typename fn_t>
    static void call_task_(fn_t &fn, index_t task, index_t thread) noexcept {
        call_with_prong(fn, prong_t{task, thread, 0});
    }

    template <typename fn_t>
    static void call_slice_(fn_t &fn, index_t first, index_t count, index_t thread) noexcept {
        call_with_slice(fn, prong_t{first, thread, 0}, count);
    }

    template <typename fn_t>
    static void threads_trampoline_(void *context, index_t thread) noexcept {
        call_task_(*static_cast<fn_t *>(context), thread, thread);
    }

    template <typename fn_t>
    struct threads_fork_t {
        static constexpr bool resets_cursors_k = false;
        fn_t fn;
        template <typename arg_type_>
        threads_fork_t(basic_pool_t &, arg_type_ &&arg) noexcept : fn(std::forward<arg_type_>(arg)) {}
        static void trampoline(void *self, index_t thread) noexcept {
            call_task_(static_cast<threads_fork_t *>(self)->fn, thread, thread);
        }
    };

    template <typename fn_t>
    struct n_fork_t {
        static constexpr bool resets_cursors_k = false;
        basic_pool_t &pool;
        index_t n;
        fn_t fn;
        template <typename arg_type_>
        n_fork_t(basic_pool_t &p, index_t tasks, arg_type_ &&arg) noexcept
            : pool(p), n(tasks), fn(std::forward<arg_type_>(arg)) {}
        static void trampoline(void *self, index_t thread) noexcept {
            auto &fork = *static_cast<n_fork_t *>(self);
            slice_t<index_t> const block = static_slice(fork.n, fork.pool.threads_(), thread);
            for (index_t offset = 0; offset < block.count; ++offset)
                call_task_(fork.fn, static_cast<index_t>(block.first + offset), thread);
        }
    };

    template <typename fn_t>
    struct n_dynamic_fork_t {
        static constexpr bool resets_cursors_k = true;
        basic_pool_t &pool;
        index_t n;
        fn_t fn;
        template <typename arg_type_>
        n_dynamic_fork_t(basic_pool_t &p, index_t tasks, arg_type_ &&arg) noexcept
            : pool(p), n(tasks), fn(std::forward<arg_type_>(arg)) {}

        /**  Takes tasks from `owner`'s block until its cursor runs dry; at most one failing increment (I5). */
        void drain(index_t owner, index_t threads, index_t thread) noexcept {
            slice_t<index_t> const block = static_slice(n, threads, owner);
            std::atomic<index_t> &cursor = pool.control_.slots[owner].next;
            // A load first: thieves sweeping dry cursors share the lines instead of writing them.
            if (cursor.load(std::memory_order_relaxed) >= block.count) return;
            // Relaxed: the RMW's atomicity alone makes every offset unique; results are published by T3.
            for (index_t offset; (offset = cursor.fetch_add(1, std::memory_order_relaxed)) < block.count;)
                call_task_(fn, static_cast<index_t>(block.first + offset), thread);
        }

        static void trampoline(void *self, index_t thread) noexcept {
            auto &fork = *static_cast<n_dynamic_fork_t *>(self);
            index_t const threads = fork.pool.threads_();
            fork.drain(thread, threads, thread);
            index_t const stride = coprime_stride(threads, thread);
            index_t victim = thread;
            for (index_t left = static_cast<index_t>(threads - 1); left != 0; --left) {
                victim = next_in_coprime_order(victim, stride, threads);
                fork.drain(victim, threads, thread);
            }
        }
    };

    template <typename fn_t>
    struct slices_fork_t {
        static constexpr bool resets_cursors_k = false;
        basic_pool_t &pool;
        index_t n;
        fn_t fn;
        template <typename arg_type_>
        slices_fork_t(basic_pool_t &p, index_t tasks, arg_type_ &&arg) noexcept
            : pool(p), n(tasks), fn(std::forward<arg_type_>(arg)) {}
        static void trampoline(void *self, index_t thread) noexcept {
            auto &fork = *static_cast<slices_fork_t *>(self);
            slice_t<index_t> const block = static_slice(fork.n, fork.pool.threads_(), thread);
            if (block.count) call_slice_(fork.fn, block.first, block.count, thread);
        }
    };

    // ---- Protocol ----

    /**  The thread count; relaxed, because only T0/T4 write it and T1's acquire orders everything after. */
    index_t threads_() const noexcept { return control_.threads.load(std::memory_order_relaxed); }

    /**  Transition M: take the pool like a dispatch, change the idle mode, release the pool. */
    status_t change_idle_mode_(idle_mode_t mode, std::uint64_t sleep_us) noexcept {
        index_t const threads = threads_();
        if (threads == 0) return status_code_t::not_spawned_k;
        index_t expected = 0;
        if (!sync_.threads_to_sync.compare_exchange_strong(expected, threads, std::memory_order_acquire,
                                                           std::memory_order_relaxed))
            return threads_() == 0 ? status_code_t::not_spawned_k : status_code_t::contended_k;
        control_.sleep_us.store(sleep_us, std::memory_order_relaxed);
        idle_mode_t const previous = control_.idle_mode.exchange(mode, std::memory_order_relaxed);
        // Sleepers re-read the idle mode when woken: they then wait the new way (or with the new `sleep` period).
        if (previous == idle_mode_t::sleep_k) wake_sleepers_();
        // Pairs with the next claimer's T1 acquire: it sees this idle mode and wakes kernel sleepers if needed.
        sync_.threads_to_sync.store(0, std::memory_order_release);
        return status_code_t::success_k;
    }

    /**  An oversubscribed thread that has idled long enough hands its core to the threads that hold work. */
    void yield_if_oversubscribed_(std::size_t &spins) noexcept {
        if (control_.oversubscribed && ++spins >= oversubscribed_spins_k) std::this_thread::yield();
    }

    /**  One idle iteration: the micro-wait, plus a `yield` once an oversubscribed thread has spun long enough. */
    void backoff_(micro_yield_t &micro_yield, index_t thread, std::size_t &spins) noexcept {
        micro_yield_with(micro_yield, thread);
        yield_if_oversubscribed_(spins);
    }

    /**  Waits until a retirer finishes T3 (or a nested fork's slices retire) and returns the even epoch. */
    [[gnu::noinline]] index_t wait_for_even_epoch_() noexcept {
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        index_t epoch;
        // Acquire pairs with T3's release store, though T1's acquire already ordered every slice before us.
        while ((epoch = dispatch_.epoch.load(std::memory_order_acquire)) & 1u) backoff_(micro_yield, 0, spins);
        return epoch;
    }

    /**  Waits until `s == 1`: every contribution but thread 0's own has retired. */
    void wait_for_thread_zero_alone_() noexcept {
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        // Acquire pairs with the workers' T3 release: their slices happened-before what thread 0 does next.
        while (sync_.threads_to_sync.load(std::memory_order_acquire) != 1) backoff_(micro_yield, 0, spins);
    }

    void reset_cursors_() noexcept {
        // Relaxed: published to the workers by T2's release (or T2n's).
        for (index_t thread = 0, threads = threads_(); thread != threads; ++thread)
            control_.slots[thread].next.store(0, std::memory_order_relaxed);
    }

    /**  The cold half of a dispatch: T2n for thread 0 of an exclusive pool, `contended` for everyone else. */
    [[gnu::noinline]] publication_t publish_after_lost_claim_(trampoline_t trampoline, void *context,
                                                              bool resets_cursors) noexcept {
        // Thread 0 of an exclusive pool only ever runs user code inside a slice, so a lost claim means it is
        // inside one and T2n applies. Every other thread loses to another dispatch: refuse, never wait.
        index_t const threads = threads_();
        if (threads == 0) return {0, status_code_t::not_spawned_k}; // a racing `terminate` holds the claim (I6)
        bool const nested =
            control_.exclusivity == caller_exclusive_k && std::this_thread::get_id() == control_.thread_zero;
        if (!nested) return {0, status_code_t::contended_k};

        wait_for_thread_zero_alone_();
        // The enclosing dispatch may itself be a `for_n_dynamic` whose drain thread 0 resumes after this fork.
        // Every other thread has retired from it, hence drained every cursor dry; only a pool of one may still
        // have tasks left on thread 0's own cursor. Remember it, and leave the cursors as they were found (I5).
        index_t const own_cursor = control_.slots[0].next.load(std::memory_order_relaxed);
        if (resets_cursors) reset_cursors_();
        // T - 1 workers, plus thread 0's still-owed contribution to the enclosing dispatch (it keeps s > 0 and
        // makes thread 0 the one to step epoch even, T3, when that enclosing slice ends).
        sync_.threads_to_sync.store(threads, std::memory_order_relaxed);
        dispatch_.trampoline = trampoline;
        dispatch_.context = context;
        index_t const epoch = dispatch_.epoch.load(std::memory_order_relaxed);
        generation_t generation = static_cast<generation_t>(epoch + 2u);
        // After 2^(bits-1) forks inside one slice the next one would alias the enclosing generation, and its own
        // join would then wait for the enclosing dispatch: skip that value (workers only need a new odd epoch).
        if (generation == dispatch_.outer.load(std::memory_order_relaxed))
            generation = static_cast<generation_t>(epoch + 4u);
        // T2n. Pairs with the acquire in `wait_for_publication_`; `s` and the fork state are ordered before it.
        dispatch_.epoch.store(generation, std::memory_order_release);
        if (control_.idle_mode.load(std::memory_order_relaxed) != idle_mode_t::spin_k) wake_();
        trampoline(context, 0);
        wait_for_thread_zero_alone_();
        if (resets_cursors) {
            // Exhausted for the enclosing drain: one more `fetch_add` returns at least `max ≥ count` (I5).
            index_t const exhausted = static_cast<index_t>(~index_t(0));
            for (index_t thread = 1; thread != threads; ++thread)
                control_.slots[thread].next.store(exhausted, std::memory_order_relaxed);
            control_.slots[0].next.store(threads == 1 ? own_cursor : exhausted, std::memory_order_relaxed);
        }
        return {generation, status_code_t::success_k};
    }

    /**  T3: a contribution ends; the last one steps epoch even. */
    void retire_() noexcept {
        // Release publishes this slice's writes; acquire lets the last retirer carry every other slice's writes
        // into its epoch store. The `fetch_sub`s form a release sequence read by the next T1 (T2n's plain store
        // of T restarts it, but thread 0 acquired every earlier retirement before making that store).
        if (sync_.threads_to_sync.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        // Nobody else writes epoch now: a racing claimer waits for it to turn even (T2), and T2n needs s > 0.
        index_t const epoch = dispatch_.epoch.load(std::memory_order_relaxed);
        // Pairs with the acquire in `is_complete` and `wait_for_even_epoch_`.
        dispatch_.epoch.store(static_cast<index_t>(epoch + 1u), std::memory_order_release);
    }

    /**  Leaves nap or sleep for spin, waking kernel sleepers. Only from a dispatch or `terminate`. */
    [[gnu::noinline]] void wake_() noexcept {
        idle_mode_t const previous = control_.idle_mode.exchange(idle_mode_t::spin_k, std::memory_order_relaxed);
        if (previous == idle_mode_t::sleep_k) wake_sleepers_();
    }

    /**  Wakes every worker blocked in `sleep_until_woken_`; they re-read epoch and idle mode. */
    void wake_sleepers_() noexcept {
        // Release pairs with the acquire in `sleep_until_woken_`: a sleeper that reads the new ticket also sees
        // the new epoch and idle mode, and one that read the old ticket fails the futex's value check or is woken here.
        control_.wake.fetch_add(1, std::memory_order_release);
        kernel_wake_all(control_.wake);
    }

    /**  Blocks in the kernel until woken, until `sleep_us` passes, or returns at once if there is news. */
    void sleep_until_woken_(index_t last) noexcept {
        std::uint32_t const ticket = control_.wake.load(std::memory_order_acquire);
        index_t const epoch = dispatch_.epoch.load(std::memory_order_acquire);
        if ((epoch != last && (epoch & 1u)) || control_.idle_mode.load(std::memory_order_relaxed) != idle_mode_t::sleep_k) return;
        kernel_wait(control_.wake, ticket, control_.sleep_us.load(std::memory_order_relaxed));
    }

    /**  Waits for the next publication after `last` (I4) and returns its epoch. */
    index_t wait_for_publication_(index_t last, index_t thread) noexcept {
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        for (;;) {
            // Pairs with the release of T2, T2n and T4: the fork state, cursors and idle mode are visible.
            index_t const epoch = dispatch_.epoch.load(std::memory_order_acquire);
            if (epoch != last && (epoch & 1u)) return epoch;
            switch (control_.idle_mode.load(std::memory_order_relaxed)) {
            case idle_mode_t::sleep_k:
                sleep_until_woken_(last), spins = 0;
                break;
            case idle_mode_t::nap_k:
                nap_on(dispatch_.epoch, epoch, micro_yield, thread), yield_if_oversubscribed_(spins);
                break;
            default:
                backoff_(micro_yield, thread, spins);
                break;
            }
        }
    }

    void worker_loop_(index_t const thread, index_t last) noexcept {
        for (;;) {
            last = wait_for_publication_(last, thread);
            // `die` is stored before T4's release of epoch, which the wait above acquired.
            if (control_.idle_mode.load(std::memory_order_relaxed) == idle_mode_t::die_k) return;
            dispatch_.trampoline(dispatch_.context, thread);
            // Thread 0 of an exclusive pool may have published nested forks (T2n); nobody else can have.
            last = dispatch_.epoch.load(std::memory_order_relaxed);
            retire_();
        }
    }

    /**  T4's second half, also used by a failed `spawn`: wake every started worker with `die`, join them. */
    void stop_workers_(slot_t *slots, index_t started, index_t epoch) noexcept {
        control_.idle_mode.store(idle_mode_t::die_k, std::memory_order_relaxed);
        // Pairs with the acquire in `wait_for_publication_`, which then reads `die`.
        dispatch_.epoch.store(static_cast<index_t>(epoch + 1u), std::memory_order_release);
        wake_sleepers_();
        for (index_t thread = 0; thread != started; ++thread)
            if (slots[thread].thread.joinable()) slots[thread].thread.join();
        dispatch_.epoch.store(static_cast<index_t>(epoch + 2u), std::memory_order_relaxed);
        control_.idle_mode.store(idle_mode_t::spin_k, std::memory_order_relaxed);
    }

    void destroy_slots_(slot_allocator_t &slot_allocator, slot_t *slots, index_t constructed,
                        index_t allocated) noexcept {
        for (index_t thread = 0; thread != constructed; ++thread)
            slot_traits_t::destroy(slot_allocator, slots + thread);
        slot_traits_t::deallocate(slot_allocator, slots, allocated);
    }

    /**  Whether the caller runs inside a callback of this pool, where `terminate` would wait for itself. */
    bool called_from_callback_() const noexcept {
        // Workers first: only the caller itself may read its `caller_in_slice` without a race.
        std::thread::id const self = std::this_thread::get_id();
        for (index_t thread = 0, threads = threads_(); thread != threads; ++thread)
            if (control_.slots[thread].thread.get_id() == self) return true;
        return control_.exclusivity == caller_inclusive_k && sync_.caller_in_slice.load(std::memory_order_relaxed) &&
               sync_.dispatcher.load(std::memory_order_relaxed) == self;
    }
};

/**  @brief  The default pool: `std::size_t` indices, the target's micro-wait, 128-byte padding. */
using flat_pool_t = basic_pool_t<>;

// ---- Deprecated spellings, kept for one release (see CHANGELOG.md) ----
// NOLINTBEGIN(readability-identifier-naming): the old names, spelled as they were.

template <typename allocator_type_ = std::allocator<std::thread>, typename micro_yield_type_ = default_micro_yield_t,
          typename index_type_ = std::size_t, std::size_t alignment_ = default_alignment_k>
using basic_pool [[deprecated("use basic_pool_t")]] =
    basic_pool_t<allocator_type_, micro_yield_type_, index_type_, alignment_>;
using mood_t [[deprecated("use idle_mode_t")]] = idle_mode_t;

// NOLINTEND(readability-identifier-naming)
} // namespace forkunion
