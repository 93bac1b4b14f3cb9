/**
 *  @file   forkunion/pools/flat.hpp
 *  @brief  `basic_pool_t` and `flat_pool_t`: the fork-join pool every other pool is built from.
 *
 *  A fork-join pool runs one dispatch at a time on all of its threads and joins it: the shape of
 *  `#pragma omp parallel for`. It is not a task queue: no futures, no task graph, no nested parallelism (one
 *  narrow exception: thread 0 of a caller-exclusive pool may dispatch from inside its own slice, see below).
 *
 *  @code
 *  fu::flat_pool_t pool;
 *  if (!pool.spawn(fu::allowed_cores_count())) return 1;
 *  if (!pool.for_n(n, [&](std::size_t i) noexcept { out[i] = f(in[i]); }).join()) return 2; // refused: see below
 *  pool.for_n(n, body).join_or_run_on_caller(); // library code: runs every task, on the pool or on this thread
 *  @endcode
 *
 *  @section use When to use it, and when not
 *  Use it for data-parallel loops and bulk-synchronous phases that must dispatch in nanoseconds: after `spawn`,
 *  a dispatch makes no heap allocation, no CAS retry loop, touches no line that another hot word shares, and
 *  makes no system call unless it finds workers parked in the kernel (see "Idle workers"). Do not use it for work
 *  that outlives a scope, for I/O, or for recursive task graphs: a dispatch from inside a callback is refused.
 *
 *  @section api API
 *  - `spawn(threads, exclusivity)` / `terminate()`: the only calls that allocate, start or join threads.
 *  - `for_threads(f)`: `f(thread)` once per thread. Serial equivalent: `for (t = 0; t < threads; ++t) f(t);`
 *  - `for_n(n, f)`: `for (i = 0; i < n; ++i) f(i);` statically split in contiguous blocks, one per thread.
 *  - `for_n_dynamic(n, f)`: the same loop for uneven tasks; idle threads steal single tasks.
 *  - `for_slices(n, f)`: `f(first, count)` once per thread with a non-empty block of the static split.
 *  - `unsafe_for_threads(f)`, `is_complete(generation)`, `unsafe_join(generation)`: the split dispatch;
 *    `unsafe_for_threads_sole(f)`, its form for a pool that one thread alone dispatches on.
 *  - `set_idle_policy(policy)`: how idle workers wait (spin, adaptive, nap, sleep), until changed again.
 *  - `set_stack_size(bytes)`: the stack of the workers the next `spawn` starts.
 *
 *  @section refusals Refusals are never silent
 *  A dispatch that cannot run (another dispatch holds the pool, it is nested in a callback, the pool is not
 *  spawned, or it was inherited through `fork()`) runs nothing and says why: the guard's `join()` returns a
 *  `[[nodiscard]]` status (`contended`, `not_spawned`, `forked`), so `pool.for_n(n, f).join();` does not build
 *  under `-Werror`, and the guard itself is `[[nodiscard]]`. `join_or_run_on_caller()` is the explicit alternative:
 *  when the pool refuses, it runs the loop on the calling thread as a team of one (every prong's thread is 0,
 *  `for_threads` calls `f(0)` once, `for_slices` calls `f(0, n)` once): OpenMP's answer to a nested region, right for
 *  library code that may be called from inside a callback. A build with `FORKUNION_CHECK_REFUSALS` (the default
 *  without `NDEBUG`) aborts with a message when a refused guard is destroyed without its status ever being read.
 *
 *  @section threads Which threads may call what
 *  - `spawn`, `terminate`, `set_stack_size`: the controlling thread, never from a callback (`terminate` from a
 *    callback of the same pool returns without effect rather than waiting for itself). `terminate` first waits
 *    for a dispatch in flight; a dispatch racing it from another thread is refused (`not_spawned`, `contended`).
 *  - Dispatches: any thread. At most one runs at a time; any other, concurrent or nested, is refused at once with
 *    `contended`, in release builds too, and never blocks or corrupts.
 *  - Sharing a pool between threads that dispatch in a loop starves all but one by design: a refusal is never
 *    queued, so the thread that holds the pool keeps winning and the others run nothing (`join()`) or run serially
 *    (`join_or_run_on_caller()`). Give each dispatching thread a pool of its own over its share of the cores, or
 *    a `colocated_pool_t` per compute domain (examples/pool_per_thread.cpp).
 *  - `set_idle_policy`, `idle_policy`, `is_complete`: any thread, any time; never refused by a dispatch.
 *  - `unsafe_join`: the thread that dispatched (it runs thread 0's slice on caller-inclusive pools).
 *  - `unsafe_for_threads_sole`: only where no other thread dispatches on, spawns or terminates the pool (the
 *    caller guarantees it, as the OpenMP drop-in does with its roots); it claims without a locked instruction.
 *
 *  @section protocol Protocol
 *  The shared words, each on its own `alignment_k`-byte line (asserted below); T is the thread count, contributors
 *  are T on both kinds of pool (the caller is contributor 0 on inclusive pools):
 *
 *      claim       c = 4q + state, state ∈ {free, held, closed}      claim line: dispatchers, and the tree's root
 *      outer       generation of the hold's outermost publication    claim line, with `pending` and `dispatcher`
 *      outer_hold  the claim word c of the hold that stored outer    claim line
 *      generation  e, odd                                            dispatch line, with the job it publishes
 *      r_t         the last generation contributor t retired         slot t's line, written by t only
 *      n_t         thread t's claim cursor of `for_n_dynamic`        its own line in slot t
 *      parked  workers blocked in the kernel; `wake` their futex ticket; the idle policy; `stop`  (control line)
 *
 *  Retirement is a tree fixed at spawn (`retirement_type_`, `retirement.hpp`): contributor t > 0 reports to parent
 *  (t - 1) / F, F = `retire_fan_in_k`; pools of F + 1 contributors or fewer are flat. Thread 0 is the root.
 *
 *      I1  state(c) = free  ⇒  nobody runs a callback of this pool or reads its job or cursors, and every
 *          r_t = e: the previous dispatch retired everywhere.
 *      I2  state(c) = held  ⇔  one dispatcher holds the pool; only it writes the job, the cursors, outer,
 *          outer_hold and e (and, inside its slice, thread 0 of an exclusive pool: T2n).
 *      I3  Each publication steps e by 2 and needs every r_t = e first (I1, or T2n's wait), so each worker runs
 *          every publication once and in order, and change alone tells it of one: no width aliases for workers.
 *      I4  r_t = g  ⇒  contributor t and its whole subtree finished g.
 *      I5  each thread increments n_t at most until its first failure, or until it claims the block's last task,
 *          and thieves skip a dry cursor after a load, so the largest value ever stored is len_t + T - 1 (1 for an
 *          empty block, which only its owner increments)  ≤  ceil(n/T) + T - 1  ≤  max(index_t)  for n, T ≤
 *          max(index_t), and every offset returned is below it: no cursor wraps. (T2n's exhausted marker is
 *          max(index_t); the enclosing drain's one increment on it may wrap it, once nobody else uses it.)
 *      I6  state(c) = closed  ⇔  unspawned or terminating: every claim is refused (`not_spawned`).
 *      I7  A worker parks only after parked++ and a re-read of e, the policy and stop (seq_cst), and every
 *          publication stores e and then reads parked (seq_cst): either the worker sees the publication or the
 *          publisher sees it parked and wakes it. Nothing else on a dispatch touches the control line.
 *
 *      T0  spawn      check the OS limits; start the workers behind the start gate (parked on `wake`, so a spawn
 *                     that fails later never had a spinning thread); state closed → free (release); open the gate.
 *                     A spawn with a set-up job goes closed → held(q+1) instead and publishes it itself (T2), so
 *                     no other claim can come between the spawn and its set-up; its join releases the pool (T3).
 *                     A spawn that fails part-way ends like T4 (stop = 1; e → e + 2; open the gate): a stale wake-up
 *                     may have let a worker through the gate early, and it waits for a publication.
 *      T1  claim      load c; free and not closing ⇒ CAS free(q) → held(q+1) (acquire). Anything else, or a
 *                     lost CAS, is refused (`contended`; `not_spawned` if closed; `forked` in a child process) and
 *                     never retried; only T2n (thread 0 of an exclusive pool, inside its slice) proceeds from a
 *                     lost claim. The holder reads T after the claim, so a terminate and respawn cannot hand it a
 *                     stale count. A sole claimer (`unsafe_for_threads_sole`: nobody else claims) loads c with
 *                     acquire and stores held(q+1) with release instead of the CAS: no locked instruction, so the
 *                     caller's own recent stores are not drained before T2 and travel beside the generation.
 *      T2  publish    write the job (a small trivially copyable job is copied into the dispatch line: the
 *                     workers then read one line) and cursors; outer = e + 2, then outer_hold = c (release);
 *                     e → e + 2 (seq_cst); parked ≠ 0 ⇒ wake. The generation is the new e: odd, never 0.
 *      T2n nested     wait r_c = e for thread 0's children; e → e + 2, or e + 4 if that equals outer (seq_cst);
 *                     run slice 0 (whose own nested dispatches step e further); wait r_c = the latest e; leave every
 *                     cursor exhausted for the enclosing dispatch.
 *                     Returns complete. The dispatch line's inline copy is left alone: thread 0 still runs on it.
 *      T3  retire     wait r_c = e for each child c; r_t = e (release). The root instead releases the pool:
 *                     c → free (release): on inclusive pools the caller does, at the end of its join.
 *      T4  terminate  closing = 1, which T1 reads with c and refuses on (`contended`), so a stream of foreign
 *                     dispatches cannot starve the terminate: only claims already past that read still win; claim
 *                     like T1 but waiting; stop = 1; e → e + 2 (seq_cst); wake everyone; join; closing = 0;
 *                     c → closed. T0 clears closing too (a terminate that lost to another one may leave it set).
 *      M   policy     store the packed idle policy (seq_cst); parked ≠ 0 ⇒ wake, so sleepers wait the new way.
 *                     No claim: dispatches never write the policy, and workers read it afresh on every idle turn.
 *
 *  A generation g is complete ⇔ state(c) ≠ held, or outer_hold ≠ c, or outer ≠ g. Lost updates cannot make a false
 *  "complete": while g runs, its hold keeps c held with outer_hold = c and outer = g. Nor can a later hold make a false
 *  "in flight": between its claim and its T2 (and for the whole of a T4, which publishes no outer) outer still names
 *  the previous hold's generation, which is complete, and outer_hold tells: it names the previous hold. A joiner
 *  holding a generation older than 2^(bits-1) publications may see it alias a newer dispatch: it then waits for that
 *  one, which completes on its own; on an inclusive pool only the thread that dispatched may join (and run slice 0),
 *  so any other thread's join returns at once.
 *
 *  Per dispatch of T contributors, in ownership changes of a line (a thread's first access after another thread
 *  wrote it): T - 1 reads of the dispatch line and T - 1 reads of a child's r_t, 2(T - 1), the minimum of a flat
 *  fan-out and fan-in. The claim line stays with the dispatcher; the critical path of the fan-in is
 *  F · log_F(T) line transfers instead of the T serialized ones of a shared counter.
 *
 *  @section idle Idle workers
 *  Between dispatches a worker waits as the pool's idle policy says (`idle_policy_t`, persistent until changed):
 *  - spin: the micro-wait (`PAUSE`, `YIELD`, Zihintpause) in a loop, no system call;
 *  - adaptive (the default): spin for the policy's window (`default_idle_window_us_k`) of spinning time (time this
 *    thread spent descheduled does not count), then park in the kernel;
 *  - nap: park on the generation's cache line with the best address wait the CPU has at run time (`nap_on`);
 *  - sleep: park in the kernel at once (with a period, also wake that often to look).
 *  When the pool has more spinning threads than allowed cores, after `oversubscribed_spins_k` micro-waits each
 *  spinning iteration also calls `std::this_thread::yield()`, so spinners cannot starve the threads that hold work.
 *
 *  @section fork Processes
 *  A child of `fork()` inherits the pool's memory but none of its threads: every dispatch there is refused with
 *  `forked` (detected by a `pthread_atfork` generation counter, one relaxed load), and `terminate` and the
 *  destructor abandon the inherited thread table instead of joining threads that do not exist. A worker (any thread
 *  but the caller) that forks inside its slice is, in the child, the process's only thread, with no caller to
 *  return to: the child should `exec` or `_exit` there. If its slice returns instead, the child prints why to
 *  stderr and exits with `forked_worker_exit_status_k` rather than wait for a next dispatch that cannot come.
 *
 *  @section exceptions Exceptions
 *  Every member is `noexcept`. Callbacks must be nothrow-invocable: one that may throw does not compile (a
 *  `static_assert` in `dispatch.hpp`, "Callbacks", says why and what to write instead), so no exception can
 *  leave a worker. The parallel algorithms (`algorithms/`) carry a user function's exception to the caller.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint32_t`, `std::uint64_t`
#include <cstring>     // `std::memcpy`
#include <new>         // `std::bad_alloc`
#include <thread>      // `std::this_thread`
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

#include <forkunion/hardware/cores.hpp>
#include <forkunion/hardware/threads.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>
#include <forkunion/pools/dispatch.hpp>
#include <forkunion/pools/deprecated.hpp>
#include <forkunion/pools/idle.hpp>
#include <forkunion/pools/retirement.hpp>

namespace forkunion {

namespace detail {

/**
 *  The pool whose thread 0 the calling thread is (the first worker of an exclusive pool), else null: stored by that
 *  worker as it starts, gone when it exits. T2n recognises thread 0 by it: an OS thread id would not do, because
 *  once a terminate has joined thread 0 the OS may give its id to a thread it starts next, while the pool is still
 *  held by that terminate.
 */
inline thread_local void const *thread_zero_of_k = nullptr;

} // namespace detail

/**
 *  @brief  The flat fork-join pool. See the file comment for the protocol, the threading contract and the
 *          idle policies.
 *
 *  @tparam allocator_type_     Allocates the per-thread table at `spawn`, the pool's only allocation; rebound to
 *                              an internal slot type, whose construction starts the thread (so a custom
 *                              `construct` can inject thread-start failures).
 *  @tparam micro_yield_type_   The micro-wait of idle loops; may take the waiting thread's index.
 *  @tparam index_type_         Unsigned type of every count, task index, thread index and generation. `std::uint8_t`
 *                              limits a pool to 255 threads and 255 tasks and makes exhaustive tests cheap.
 *  @tparam alignment_          Padding of each shared word; at least the destructive interference size.
 *  @tparam atomic_template_    The atomic every protocol word is made of: `std::atomic`, or an instrumented one
 *                              with the same interface (the line hand-off model counts ownership changes with it).
 *  @tparam retirement_type_    The retirement tree's shape (`retirement_tree_t`): the benchmarks time others.
 *
 *  Size: four `alignment_` lines (claim, dispatch, control, and the allocator's), and two `alignment_` lines per
 *  thread on the heap: the claim cursor, and the retirement word with the thread's handle. Not copyable, not movable.
 */
template <typename allocator_type_ = std::allocator<std::thread>, typename micro_yield_type_ = default_micro_yield_t,
          typename index_type_ = std::size_t, std::size_t alignment_ = default_alignment_k,
          template <typename> class atomic_template_ = std::atomic, typename retirement_type_ = retirement_tree_t<>>
class basic_pool_t
    : public dispatch_verbs_t<
          basic_pool_t<allocator_type_, micro_yield_type_, index_type_, alignment_, atomic_template_, retirement_type_>,
          index_type_>,
      public detail::deprecated_idle_calls_t<basic_pool_t<allocator_type_, micro_yield_type_, index_type_, alignment_,
                                                          atomic_template_, retirement_type_>> {
    template <typename, typename>
    friend struct detail::n_dynamic_job_t;

public:
    using allocator_t = allocator_type_;
    using micro_yield_t = micro_yield_type_;
    using index_t = index_type_;
    using retirement_t = retirement_type_;
    using generation_t = index_t;
    using prong_t = forkunion::prong_t<index_t>;
    using publication_t = forkunion::publication_t<generation_t>;
    using trampoline_t = void (*)(void *context, index_t thread) noexcept;
    template <typename value_type_>
    using atomic_t = atomic_template_<value_type_>;
    static constexpr std::size_t alignment_k = alignment_;

    /**
     *  Micro-waits an oversubscribed spinning thread spends before it starts yielding its core, after which every
     *  spinning iteration yields. A `pause` costs ~17 ns and a `sched_yield` ~290 ns on a 2-vCPU KVM guest on AMD
     *  Zen 5 (`forkunion_bench_wake`), so the first ~1 µs of idleness, where back-to-back dispatches land, costs no
     *  system call; past it, an idle thread gives its core to the threads that hold work at every turn.
     */
    static constexpr std::size_t oversubscribed_spins_k = 64;

    /**  Children per node of the retirement tree (`retirement.hpp` says why 8). */
    static constexpr std::size_t retire_fan_in_k = retirement_t::fan_in_k;

    static_assert(std::is_unsigned_v<index_t>, "the index type must be unsigned");
    static_assert(atomic_t<index_t>::is_always_lock_free, "the index type must have lock-free atomics");
    static_assert(atomic_t<std::uint64_t>::is_always_lock_free, "the claim word needs lock-free 64-bit atomics");
    static_assert(alignment_k >= 64 && (alignment_k & (alignment_k - 1)) == 0, "alignment: a power of two >= 64");

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
     *  @retval bad_alloc         the thread table could not be allocated (a table larger than the allocator's
     *                            `max_size` is refused before anything else).
     *  @retval thread_refused    the OS's published limits cannot fit the threads (checked before any allocation,
     *                            in microseconds),
     *                            or the OS refused one; every thread that did start was stopped and joined, and none
     *                            of them ever spun: they wait behind the start gate in the kernel.
     *  On failure the pool is left unspawned, with nothing allocated and no thread running.
     */
    status_t spawn(index_t threads, caller_exclusivity_t exclusivity = caller_inclusive_k) noexcept {
        return spawn(threads, exclusivity, allowed_cores_count());
    }

    /**
     *  @brief  `spawn`, for pools that place their threads themselves (`colocated_pool_t`): `cores` is how many
     *          cores the pool's threads will run on, instead of the caller's allowed cores that workers inherit.
     *          The pool is oversubscribed (spinning threads back off to `yield`) when its spinners, the threads plus
     *          the caller of an exclusive pool, outnumber `cores`. Same statuses as `spawn`.
     */
    status_t spawn(index_t threads, caller_exclusivity_t exclusivity, std::size_t cores) noexcept {
        return spawn_(threads, exclusivity, cores, nullptr, nullptr);
    }

    /**
     *  @brief  `spawn(threads, exclusivity, cores)` that also runs `setup(thread)` once on every thread before any
     *          other dispatch can: the pool goes from unspawned straight to held by this call (T0 then T2 without
     *          a T1 anybody could race), so a dispatch from another thread meanwhile is refused (`contended`) and
     *          never makes the spawn fail. Returns once every `setup` ran. Same statuses as `spawn`.
     */
    template <typename setup_type_>
    status_t spawn(index_t threads, caller_exclusivity_t exclusivity, std::size_t cores, setup_type_ &setup) noexcept {
        void *context = const_cast<void *>(static_cast<void const volatile *>(std::addressof(setup)));
        return spawn_(threads, exclusivity, cores, &threads_trampoline_<setup_type_>, context);
    }

private:
    status_t spawn_(index_t threads, caller_exclusivity_t exclusivity, std::size_t cores, trampoline_t setup,
                    void *setup_context) noexcept {
        if (threads == 0) return detail::refuse("spawn: threads is 0; a pool needs at least one thread");
        if (threads_() != 0) return status_code_t::already_spawned_k;
        bool const exclusive = exclusivity == caller_exclusive_k;
        index_t const workers = static_cast<index_t>(exclusive ? threads : threads - 1);
        std::size_t const stack_bytes = control_.stack_bytes.load(std::memory_order_relaxed);
        slot_allocator_t slot_allocator(allocator_);
        // A table beyond the allocator's reach is `bad_alloc` on every OS, whatever its published limits say.
        if (static_cast<std::size_t>(threads) > slot_traits_t::max_size(slot_allocator))
            return status_code_t::bad_alloc_k;
        if (status_t const fits = check_thread_limits(workers, stack_bytes); !fits) return fits;

        slot_t *slots = nullptr;
        FORKUNION_TRY {
            slots = slot_traits_t::allocate(slot_allocator, threads);
        }
        FORKUNION_CATCH_ALL {
            return status_code_t::bad_alloc_k;
        }
        if (!slots) return status_code_t::bad_alloc_k;

        watch_forks();
        // An unspawned pool runs nothing: this generation is the one every contributor starts from (I1).
        index_t const generation = dispatch_.generation.load(std::memory_order_relaxed);
        std::uint32_t const gate = control_.wake.load(std::memory_order_relaxed);
        control_.stop.store(false, std::memory_order_relaxed);
        control_.exclusivity.store(exclusivity, std::memory_order_relaxed);
        // The caller of an exclusive pool spins in `join` too, so it counts as a spinner.
        control_.oversubscribed.store(static_cast<std::size_t>(threads) + (exclusive ? 1u : 0u) > cores,
                                      std::memory_order_relaxed);
        control_.threads.store(threads, std::memory_order_relaxed);
        control_.slots.store(slots, std::memory_order_relaxed);
        control_.forks.store(fork_generation(), std::memory_order_relaxed);

        // Everything a worker reads before its first publication is written above: the thread's creation
        // synchronizes-with its start. The workers then wait behind the gate (`wake` = `gate`) in the kernel.
        index_t constructed = 0;
        status_t status;
        // A custom allocator's `construct` may throw: `std::bad_alloc` reads as `bad_alloc`, anything else as
        // `thread_refused`. A slot whose thread the OS refuses is constructed (joining it is a no-op) and counted.
        FORKUNION_TRY {
            for (; constructed < threads; ++constructed) {
                slot_traits_t::construct(slot_allocator, slots + constructed, this, constructed, generation, gate);
                bool const starts = exclusive || constructed != 0;
                if (starts && !slots[constructed].thread.start(&worker_entry_, slots + constructed, stack_bytes)) {
                    status = status_code_t::thread_refused_k;
                    ++constructed;
                    break;
                }
            }
        }
        FORKUNION_CATCH(std::bad_alloc const &) {
            status = status_code_t::bad_alloc_k;
        }
        FORKUNION_CATCH_ALL {
            status = status_code_t::thread_refused_k;
        }
        if (!status) {
            control_.stop.store(true, std::memory_order_relaxed);
            // Ends like T4: a late wake-up meant for the previous table (a publisher or a policy change that saw a
            // parked worker) may have let a new worker through the gate already, and it now waits for a
            // publication: give it one. It, and every worker still behind the gate, then reads `stop`.
            dispatch_.generation.store(static_cast<index_t>(generation + 2u), std::memory_order_seq_cst);
            open_gate_();
            for (index_t thread = 0; thread != constructed; ++thread) slots[thread].thread.join();
            destroy_slots_(slot_allocator, slots, constructed, threads);
            control_.threads.store(0, std::memory_order_relaxed);
            control_.slots.store(nullptr, std::memory_order_relaxed);
            control_.exclusivity.store(caller_inclusive_k, std::memory_order_relaxed);
            control_.stop.store(false, std::memory_order_relaxed);
            return status;
        }

        claim_.closing.store(false, std::memory_order_relaxed); // a terminate that lost to another one left it set
        // T0. Pairs with the acquire of T1: a claimer sees the slots, the thread count and the configuration.
        // With a set-up job the pool opens held by this thread, which publishes it (T2) and joins it: the root's
        // release (T3) frees the pool for everyone else only once every thread ran it.
        std::uint64_t const claim = claim_.claim.load(std::memory_order_relaxed);
        std::uint64_t const opened = next_sequence_(claim) | (setup ? held_k : free_k);
        claim_.claim.store(opened, std::memory_order_release);
        open_gate_();
        if (setup) unsafe_join(publish_claimed_(opened, setup, setup_context, false, 0).generation);
        return status_code_t::success_k;
    }

public:
    /**
     *  @brief  Completes the dispatch in flight (running the caller's owed slice of an unjoined inclusive
     *          dispatch), stops and joins every worker, and frees the thread table. The pool can be spawned again,
     *          with another size or exclusivity. No-op on an unspawned pool, and from inside a callback of this
     *          pool (it would wait for itself). In a `fork()`ed child it abandons the inherited table instead.
     */
    void terminate() noexcept {
        index_t const threads = threads_();
        if (threads == 0) return;
        if (forked_()) return abandon_();
        if (called_from_callback_()) return;
        // The caller's own unjoined inclusive dispatch: run its slice first (a join by anyone else returns).
        if (exclusivity_() == caller_inclusive_k)
            if (generation_t const pending = claim_.pending.load(std::memory_order_relaxed)) unsafe_join(pending);

        // T4: claim like T1, but wait for a dispatch in flight instead of being refused. `closing` first: from
        // here on T1 refuses, so at most the claims already past that check still run before this one wins.
        // Relaxed: it only steers who wins the word, whose own orders stay as they were.
        claim_.closing.store(true, std::memory_order_relaxed);
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        std::uint64_t claim;
        for (;;) {
            claim = claim_.claim.load(std::memory_order_acquire);
            if (state_of_(claim) == closed_k) return; // another terminate won
            if (state_of_(claim) == free_k &&
                claim_.claim.compare_exchange_weak(claim, next_sequence_(claim) | held_k, std::memory_order_acquire,
                                                   std::memory_order_relaxed))
                break;
            backoff_(micro_yield, index_t(0), spins);
        }
        control_.stop.store(true, std::memory_order_relaxed);
        publish_generation_(static_cast<index_t>(dispatch_.generation.load(std::memory_order_relaxed) + 2u));
        wake_parked_(); // every worker, parked or not: they all read `stop` next
        slot_t *const slots = control_.slots.load(std::memory_order_relaxed);
        for (index_t thread = 0; thread != threads; ++thread) slots[thread].thread.join();
        slot_allocator_t slot_allocator(allocator_);
        destroy_slots_(slot_allocator, slots, threads, threads);
        reset_to_unspawned_(claim);
    }

    /**  @brief  Contributors of every dispatch: workers plus the caller on inclusive pools; 0 when unspawned. */
    [[nodiscard]] index_t threads_count() const noexcept { return threads_(); }
    [[nodiscard]] caller_exclusivity_t caller_exclusivity() const noexcept { return exclusivity_(); }
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

    /**
     *  @brief  Whether this process is a `fork()`ed child of the one that spawned the pool: its workers do not
     *          exist here, every dispatch is refused with `forked`, and a join returns at once. One relaxed load;
     *          any thread.
     */
    [[nodiscard]] bool forked() const noexcept { return forked_(); }

    /**  @brief  Whether spinning threads back off to `yield` because there are more of them than allowed cores. */
    [[nodiscard]] bool oversubscribed() const noexcept {
        return threads_() && control_.oversubscribed.load(std::memory_order_relaxed);
    }

    /**  @brief  Workers blocked in the kernel right now (adaptive past its window, or sleep); a snapshot. */
    [[nodiscard]] std::size_t parked_threads_count() const noexcept {
        return control_.parked.load(std::memory_order_relaxed);
    }

    /**
     *  @brief  Sets how idle workers wait from now on, until changed again; it survives dispatches, `terminate` and
     *          `spawn`. Any thread, any time, never refused by a dispatch in flight: workers read the policy on
     *          every idle turn, and parked ones are woken (one system call) so they wait the new way.
     *  @retval invalid_argument  a mode outside `idle_mode_t`, or more than 2^61 microseconds; nothing changed.
     */
    status_t set_idle_policy(idle_policy_t policy) noexcept {
        if (!policy.valid()) return detail::refuse_idle_policy(policy);
        // M. Pairs (seq_cst) with the worker's re-read of the policy after it counted itself parked (I7).
        control_.idle.store(detail::pack_idle_policy(policy), std::memory_order_seq_cst);
        if (control_.parked.load(std::memory_order_seq_cst) != 0) wake_parked_();
        return status_code_t::success_k;
    }

    /**  @brief  The idle policy in force: the default (`idle_policy_t{}`, adaptive) until `set_idle_policy`. */
    [[nodiscard]] idle_policy_t idle_policy() const noexcept {
        return detail::unpack_idle_policy(control_.idle.load(std::memory_order_relaxed));
    }

    /**
     *  @brief  The stack size of the workers the next `spawn` starts; 0 (the default) keeps the platform's.
     *          Controlling thread, between spawns (a running pool keeps its threads' stacks).
     *  @retval unsupported       `bytes != 0` where the thread backend cannot set a stack size.
     *  @retval invalid_argument  `bytes` below the platform's minimum (`PTHREAD_STACK_MIN`).
     */
    status_t set_stack_size(std::size_t bytes) noexcept {
        if (status_t const valid = check_stack_size(bytes); !valid) return valid;
        control_.stack_bytes.store(bytes, std::memory_order_relaxed);
        return status_code_t::success_k;
    }
    /**  @brief  What `set_stack_size(bytes)` would answer, without setting anything. */
    static status_t check_stack_size(std::size_t bytes) noexcept {
        if (bytes != 0 && !os_thread_t::sets_stack_size_k) return status_code_t::unsupported_k;
        if (bytes != 0 && bytes < os_thread_t::minimum_stack_bytes())
            return detail::refuse("set_stack_size: bytes is below the platform's minimum stack (PTHREAD_STACK_MIN)");
        return status_code_t::success_k;
    }
    /**  @brief  What `set_stack_size` last set: 0 for the platform's default. */
    [[nodiscard]] std::size_t stack_size() const noexcept {
        return control_.stack_bytes.load(std::memory_order_relaxed);
    }

    // ---- Dispatch: `for_threads`, `for_n`, `for_n_dynamic`, `for_slices` and `unsafe_for_threads` come from
    // `dispatch_verbs_t`; the split dispatch's other half follows. ----

    /**
     *  @brief  True once dispatch `generation` has retired on every thread, or if it is not in flight (0, stale,
     *          nested, or never issued). Never blocks; any thread. An acquire: a true answer makes every slice's
     *          writes visible to the caller. Generations are `index_t` wide and wrap: one names its dispatch until
     *          2^(bits - 1) more are published (128 for `std::uint8_t`), then it may name a later one in flight.
     */
    [[nodiscard]] bool is_complete(generation_t generation) const noexcept {
        if (generation == 0) return true;
        // Pairs with the root's release of the claim (T3), continued by later claims' RMWs (a release sequence), or
        // with a sole claimer's release store, which itself follows its acquire of the root's release.
        std::uint64_t const claim = claim_.claim.load(std::memory_order_acquire);
        if (state_of_(claim) != held_k) return true;
        // The current hold has not stored its outermost generation yet (it has just claimed, or it is a terminate's,
        // which stores none): `outer` is a previous hold's, which is complete. The claim load above already saw this
        // hold's claim, which follows the previous root's release (a release sequence, or a sole claimer's release
        // after its own acquire). Acquire pairs with the holder's release: `outer` below is then this hold's or later.
        if (claim_.outer_hold.load(std::memory_order_acquire) != claim) return true;
        // Written by the holder right after its claim. Acquire pairs with that release: a different generation there means
        // a later hold, whose holder had seen `generation` retire, so its slices happened-before this answer. (With a
        // relaxed load, a reader whose claim load saw `generation`'s own hold had no such edge: TSan caught it.)
        return claim_.outer.load(std::memory_order_acquire) != generation;
    }

    /**
     *  @brief  Runs thread 0's owed slice (inclusive pools) and blocks until `generation` is complete. A stale
     *          or zero generation returns at once; joining twice is harmless.
     *
     *  On inclusive pools only the thread that dispatched `generation` joins it: it runs slice 0 exactly once,
     *  taken with one CAS of `pending`, then waits for its children and releases the pool (T3); a join from any
     *  other thread returns at once.
     *
     *  In a `fork()`ed child (the caller forked inside its own slice, or between the dispatch and the join) it
     *  returns at once, slice 0 ended, without waiting for the other slices, whose threads are not in this
     *  process: `forked()` is then true and `is_complete(generation)` false.
     */
    void unsafe_join(generation_t generation) noexcept {
        // One relaxed load of a process-wide word, as in `unsafe_publish`.
        if (generation == 0 || forked_()) [[unlikely]]
            return;
        if (exclusivity_() == caller_inclusive_k) {
            // Relaxed: the dispatcher reads its own store; any other thread only needs the value to differ.
            if (claim_.dispatcher.load(std::memory_order_relaxed) != std::this_thread::get_id()) return;
            generation_t expected = generation;
            if (claim_.pending.compare_exchange_strong(expected, 0, std::memory_order_relaxed,
                                                       std::memory_order_relaxed)) {
                claim_.caller_in_slice.store(true, std::memory_order_relaxed);
                dispatch_.trampoline(dispatch_.context, 0);
                claim_.caller_in_slice.store(false, std::memory_order_relaxed);
                if (forked_()) [[unlikely]]
                    return; // forked inside the slice: in this child nobody retires the other slices
                retire_(0, dispatch_.generation.load(std::memory_order_relaxed));
                detail::reach_hook(hook_point_t::after_join_k, this);
                return;
            }
        }
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        while (!is_complete(generation)) backoff_(micro_yield, index_t(0), spins);
        detail::reach_hook(hook_point_t::after_join_k, this);
    }

    /**
     *  @brief  The low-level dispatch beneath every `for_*`: claims the pool (T1), publishes `trampoline(context,
     *          thread)` to every thread (T2) and returns the generation. With `resets_cursors` the claim cursors
     *          are zeroed after the claim and before the publication. With `payload_bytes`, the `payload_bytes`
     *          at `context` are copied into the dispatch line (at most `payload_capacity_k`, trivially copyable,
     *          16-byte alignment at most) and the trampoline gets the copy. A lost claim is refused with
     *          `contended` (except thread 0 of an exclusive pool dispatching from its slice, T2n, which completes before
     *          returning); an unspawned pool refuses with `not_spawned`, an inherited one with `forked`.
     */
    publication_t unsafe_publish(trampoline_t trampoline, void *context, bool resets_cursors,
                                 std::size_t payload_bytes = 0, bool sole_claimer = false) noexcept {
        // One relaxed load of a process-wide word: no system call tells a `fork()`ed child from its parent.
        if (forked_()) return {0, status_code_t::forked_k};
        // A sole claimer's load is its acquire (T1): no RMW follows.
        std::uint64_t claim = claim_.claim.load(sole_claimer ? std::memory_order_acquire : std::memory_order_relaxed);
        detail::reach_hook(hook_point_t::before_claim_k, this);
        // T1. Acquire pairs with the root's release (T3) or T0: every slice of the previous dispatch
        // happened-before this point, so the job and cursors are ours to write (I1, I2).
        // A pending T4 turns the pool away from new claimers (on the claim word's line: no extra miss), so that a
        // stream of foreign dispatches cannot starve `terminate`; a nested dispatch (T2n) finds the pool held anyway.
        if (state_of_(claim) != free_k || claim_.closing.load(std::memory_order_relaxed) ||
            !claim_free_(claim, sole_claimer))
            return publish_after_lost_claim_(claim, trampoline, context, resets_cursors);
        detail::reach_hook(hook_point_t::after_claim_k, this);
        return publish_claimed_(claim, trampoline, context, resets_cursors, payload_bytes);
    }

private:
    /**  T2 for the thread that holds the claim: the job, the cursors, `outer` and `pending`, then the generation. */
    publication_t publish_claimed_(std::uint64_t hold, trampoline_t trampoline, void *context, bool resets_cursors,
                                   std::size_t payload_bytes) noexcept {
        if (resets_cursors) reset_cursors_();
        if (payload_bytes) {
            std::memcpy(dispatch_.payload, context, payload_bytes);
            context = dispatch_.payload;
        }
        dispatch_.trampoline = trampoline;
        dispatch_.context = context;
        generation_t const generation =
            static_cast<generation_t>(dispatch_.generation.load(std::memory_order_relaxed) + 2u);
        // Release: `is_complete` elsewhere reads a new generation as "the previous hold retired" (see there).
        claim_.outer.store(generation, std::memory_order_release);
        // After `outer`, release: an `is_complete` that finds this hold named here reads its `outer` (or a later one).
        claim_.outer_hold.store(hold, std::memory_order_release);
        if (exclusivity_() == caller_inclusive_k) {
            // Read by `unsafe_join` on this thread, and compared by stale joiners elsewhere (atomicity suffices).
            claim_.dispatcher.store(std::this_thread::get_id(), std::memory_order_relaxed);
            claim_.pending.store(generation, std::memory_order_relaxed);
        }
        publish_generation_(generation); // T2
        return {generation, status_code_t::success_k};
    }

public:
    /**  @brief  Publishes one of the shared jobs (`detail::*_job_t`): copied into the dispatch line when small. */
    template <typename job_type_>
    publication_t unsafe_publish_job(job_type_ &job) noexcept {
        constexpr bool inline_k = std::is_trivially_copyable_v<job_type_> &&
                                  std::is_trivially_destructible_v<job_type_> &&
                                  sizeof(job_type_) <= payload_capacity_k && alignof(job_type_) <= 16;
        return unsafe_publish(&job_trampoline_<job_type_>, std::addressof(job), job_type_::resets_cursors_k,
                              inline_k ? sizeof(job_type_) : 0);
    }

    /**  @brief  `unsafe_for_threads`' publication: `fn(thread)` through its address, which must outlive it. */
    template <typename fn_type_>
    publication_t unsafe_publish_threads(fn_type_ &fn, bool sole_claimer = false) noexcept {
        void *context = const_cast<void *>(static_cast<void const volatile *>(std::addressof(fn)));
        return unsafe_publish(&threads_trampoline_<fn_type_>, context, false, 0, sole_claimer);
    }

    /**
     *  @brief  `unsafe_for_threads(fn)` for a pool that only the calling thread claims: the same publication,
     *          return value, refusals and join, with T1 as a load-acquire and a store-release of the claim word
     *          instead of a compare-and-swap.
     *
     *  Precondition: from this call until its `unsafe_join` returns, no other thread dispatches on this pool,
     *  spawns it or terminates it (`is_complete`, `unsafe_join` of an exclusive pool and `set_idle_policy` stay
     *  safe anywhere). A broken precondition can let two dispatches hold the pool at once; nothing checks it.
     *
     *  Why: a compare-and-swap is a locked instruction, which on x86 waits until every store the caller made
     *  before it has left the store buffer. When the caller has just written what its tasks will read (an OpenMP
     *  region's `.omp_data_o`), each such line is still shared in the workers' caches, so that wait is one
     *  invalidation round trip on the critical path before the publication; without it the caller's lines and
     *  the generation are invalidated together. Memory ordering is `unsafe_for_threads`': the publication is a release
     *  of everything the caller wrote before it, and the join an acquire of every slice.
     */
    template <typename fn_type_>
    [[nodiscard]] publication_t unsafe_for_threads_sole(fn_type_ &fn) noexcept {
        return unsafe_publish_threads(fn, true);
    }

    /**  @brief  Thread `thread`'s claim cursor, for pools built on top of this one. */
    [[nodiscard]] std::atomic<index_t> &unsafe_claim_cursor(index_t thread) noexcept {
        return control_.slots.load(std::memory_order_relaxed)[thread].next;
    }

    /**  @brief  The bytes a job may take to travel in the dispatch line instead of through a pointer. */
    static constexpr std::size_t payload_capacity_k = alignment_k - 32;

private:
    /**  Two lines per thread: the claim cursor (hot during `for_n_dynamic`) with the start state the worker reads
     *   once before its first dispatch, then the retirement word r_t with the cold handle of the thread. */
    struct alignas(alignment_k) slot_t {
        alignas(alignment_k) std::atomic<index_t> next{0};
        index_t start_generation = 0;
        std::uint32_t gate = 0;
        alignas(alignment_k) atomic_t<index_t> retired{0};
        basic_pool_t *pool = nullptr;
        index_t index = 0;
        os_thread_t thread;

        /**  Contributor `index` of `pool`, retired at `generation`, with no thread yet: `spawn` starts the workers
         *   once their slots are constructed. */
        slot_t(basic_pool_t *owner, index_t thread_index, index_t generation, std::uint32_t start_gate) noexcept
            : start_generation(generation), gate(start_gate), retired(generation), pool(owner), index(thread_index) {}
    };
    using slot_allocator_t = typename std::allocator_traits<allocator_t>::template rebind_alloc<slot_t>;
    using slot_traits_t = std::allocator_traits<slot_allocator_t>;
    static_assert(sizeof(slot_t) <= 2 * alignment_k || alignment_k < 64, "a thread's slot spans two lines");

    /**  The claim word and the dispatcher's bookkeeping: written only by dispatchers (and released by the root). */
    struct alignas(alignment_k) claim_line_t {
        atomic_t<std::uint64_t> claim{closed_k}; // I6 until T0
        atomic_t<generation_t> outer{0};         // the current hold's outermost generation
        atomic_t<std::uint64_t> outer_hold{0};   // the claim word of the hold that stored `outer`
        atomic_t<generation_t> pending{0};       // inclusive pools: generation whose slice 0 has not run, else 0
        atomic_t<std::thread::id> dispatcher;    // inclusive pools: the thread that published the latest dispatch
        atomic_t<bool> caller_in_slice{false};   // inclusive pools: the dispatcher is inside slice 0
        atomic_t<bool> closing{false};           // T4 waits: a free pool refuses new claims until it is closed
    };

    /**  Written by the claim holder right before `generation`, read by every worker right after it. */
    struct alignas(alignment_k) dispatch_line_t {
        atomic_t<index_t> generation{1}; // odd: every publication steps it by 2
        trampoline_t trampoline = nullptr;
        void *context = nullptr;
        alignas(16) unsigned char payload[payload_capacity_k];
    };

    /**  The idle policy, parking and the configuration: read on every idle turn and after every publication,
     *   written by `spawn`, `terminate`, `set_idle_policy` and by workers that park. */
    struct alignas(alignment_k) control_line_t {
        atomic_t<std::uint64_t> idle{detail::pack_idle_policy(idle_policy_t{})};
        atomic_t<std::uint32_t> parked{0};  // workers inside `park_`
        std::atomic<std::uint32_t> wake{0}; // futex word (a plain atomic: the kernel reads it): every wake-up and
                                            // the start gate bump it
        atomic_t<index_t> threads{0};
        atomic_t<caller_exclusivity_t> exclusivity{caller_inclusive_k};
        atomic_t<bool> oversubscribed{false};
        atomic_t<bool> stop{false};
        atomic_t<std::uint32_t> forks{0}; // `fork_generation()` at spawn
        atomic_t<std::size_t> stack_bytes{0};
        atomic_t<slot_t *> slots{nullptr};
    };

    static_assert(sizeof(slot_t) == 2 * alignment_k, "a slot is two padded lines");
    static_assert(sizeof(dispatch_line_t) == alignment_k && alignof(dispatch_line_t) == alignment_k);
    static_assert(sizeof(claim_line_t) == alignment_k && alignof(claim_line_t) == alignment_k);
    static_assert(sizeof(control_line_t) <= 2 * alignment_k && alignof(control_line_t) == alignment_k);

    claim_line_t claim_;
    dispatch_line_t dispatch_;
    control_line_t control_;
    [[no_unique_address]] allocator_t allocator_;

    // ---- The claim word: 4q + state ----

    static constexpr std::uint64_t free_k = 0, held_k = 1, closed_k = 2;
    static constexpr std::uint64_t state_of_(std::uint64_t claim) noexcept { return claim & 3u; }
    /**  The next hold's sequence, state bits cleared: every claim and every spawn takes a new one (ABA-free). */
    static constexpr std::uint64_t next_sequence_(std::uint64_t claim) noexcept {
        return (claim & ~std::uint64_t(3)) + 4u;
    }

    // ---- Trampolines ----

    template <typename job_type_>
    static void job_trampoline_(void *job, index_t thread) noexcept {
        static_cast<job_type_ *>(job)->run(thread, index_t(0));
    }

    template <typename fn_type_>
    static void threads_trampoline_(void *context, index_t thread) noexcept {
        call_with_prong(*static_cast<fn_type_ *>(context), prong_t{thread, thread, 0});
    }

    // ---- Protocol ----

    /**  The thread count; relaxed, because only T0/T4 write it and T1's acquire orders everything after. */
    index_t threads_() const noexcept { return control_.threads.load(std::memory_order_relaxed); }
    caller_exclusivity_t exclusivity_() const noexcept { return control_.exclusivity.load(std::memory_order_relaxed); }
    bool forked_() const noexcept { return control_.forks.load(std::memory_order_relaxed) != fork_generation(); }

    /**  T2's last step: the generation (seq_cst, I7), then one look at the parked count: no system call unless a
     *   worker parked, so back-to-back dispatches make none. */
    void publish_generation_(index_t generation) noexcept {
        // Pairs with the acquire in `wait_for_publication_`: workers see the job and cursors.
        dispatch_.generation.store(generation, std::memory_order_seq_cst);
        // Only the parked count is read after the publication: by now the dispatch may have completed and another
        // thread may hold the pool, so nothing here writes protocol state (a wake-up is idempotent).
        if (control_.parked.load(std::memory_order_seq_cst) != 0) wake_parked_();
        detail::reach_hook(hook_point_t::after_publish_k, this);
    }

    /**  Wakes every worker blocked in `park_` (or behind the start gate); they re-read generation, stop and policy. */
    [[gnu::noinline]] void wake_parked_() noexcept {
        // Release pairs with the acquire of the ticket in `park_`: a waker's generation and policy are visible.
        control_.wake.fetch_add(1, std::memory_order_release);
        kernel_wake_all(control_.wake);
    }

    /**  Ends T0 (or a failed spawn): lets the gated workers through, to their first wait or to `stop`. */
    void open_gate_() noexcept { wake_parked_(); }

    /**  An oversubscribed thread that has spun long enough hands its core to the threads that hold work. */
    void yield_if_oversubscribed_(std::size_t &spins) noexcept {
        if (control_.oversubscribed.load(std::memory_order_relaxed) && ++spins >= oversubscribed_spins_k)
            std::this_thread::yield();
    }

    /**  One spinning iteration: the micro-wait, plus a `yield` once an oversubscribed thread has spun long enough. */
    void backoff_(micro_yield_t &micro_yield, index_t thread, std::size_t &spins) noexcept {
        micro_yield_with(micro_yield, thread);
        yield_if_oversubscribed_(spins);
    }

    /**  Waits until every child of `thread` retired `generation`: their subtrees are done (I4). */
    void wait_for_children_(index_t thread, index_t generation) noexcept {
        slot_t *const slots = control_.slots.load(std::memory_order_relaxed);
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        retirement_t::for_each_child(thread, threads_(), [&](std::size_t child) noexcept {
            // Acquire pairs with the child's release in T3: its subtree's slices happened-before what follows.
            while (slots[child].retired.load(std::memory_order_acquire) != generation)
                backoff_(micro_yield, thread, spins);
        });
    }

    /**  T3: contributor `thread` finished `generation` (thread 0: the hold's outermost one, nested dispatches done). */
    void retire_(index_t thread, index_t generation) noexcept {
        detail::reach_hook(hook_point_t::before_retire_k, this);
        wait_for_children_(thread, generation);
        if (thread != 0) {
            // Pairs with the parent's acquire in `wait_for_children_`.
            control_.slots.load(std::memory_order_relaxed)[thread].retired.store(generation, std::memory_order_release);
            return;
        }
        detail::reach_hook(hook_point_t::before_release_k, this);
        // The root releases the pool. Nobody else writes the claim word while it is held (I2), so a plain store
        // suffices; release pairs with the next claimer's acquire and with `is_complete`.
        std::uint64_t const claim = claim_.claim.load(std::memory_order_relaxed);
        claim_.claim.store((claim & ~std::uint64_t(3)) | free_k, std::memory_order_release);
    }

    void reset_cursors_() noexcept {
        slot_t *const slots = control_.slots.load(std::memory_order_relaxed);
        // Relaxed: published to the workers by T2's store (or T2n's).
        for (index_t thread = 0, threads = threads_(); thread != threads; ++thread)
            slots[thread].next.store(0, std::memory_order_relaxed);
    }

    /**  `for_n_dynamic`'s order: the thread's own block, then every other thread's in a coprime order. */
    template <typename job_type_>
    void steal_(job_type_ &job, index_t thread, index_t domain) noexcept {
        slot_t *const slots = control_.slots.load(std::memory_order_relaxed);
        index_t const threads = threads_();
        job.drain(slots[thread].next, thread, threads, thread, domain);
        index_t const stride = coprime_stride(threads, thread);
        index_t victim = thread;
        for (index_t left = static_cast<index_t>(threads - 1); left != 0; --left) {
            victim = next_in_coprime_order(victim, stride, threads);
            job.drain(slots[victim].next, victim, threads, thread, domain);
        }
    }

    /**  T1's step from free to held, after the load that found `claim` free: a CAS, or for a sole claimer a
     *   release store (its load was the acquire). True with `claim` set to the hold's word; false when the CAS
     *   lost, with `claim` holding the current word. */
    bool claim_free_(std::uint64_t &claim, bool sole_claimer) noexcept {
        std::uint64_t const held = next_sequence_(claim) | held_k;
        if (sole_claimer) {
            // Release: a thread whose acquire load of `is_complete` sees this hold sees the previous dispatch done.
            claim_.claim.store(held, std::memory_order_release);
            claim = held;
            return true;
        }
        if (!claim_.claim.compare_exchange_strong(claim, held, std::memory_order_acquire, std::memory_order_relaxed))
            return false;
        claim = held;
        return true;
    }

    /**  The cold half of a dispatch: T2n for thread 0 of an exclusive pool, a refusal for everyone else. */
    [[gnu::noinline]] publication_t publish_after_lost_claim_(std::uint64_t claim, trampoline_t trampoline,
                                                              void *context, bool resets_cursors) noexcept {
        if (state_of_(claim) == closed_k) return {0, status_code_t::not_spawned_k}; // unspawned, or terminating (I6)
        // Thread 0 of an exclusive pool only ever runs user code inside a slice, so a lost claim means it is
        // inside one and T2n applies. Every other thread loses to another dispatch: refuse, never wait. Thread 0
        // knows itself by a thread-local mark, never by reading the thread table (a terminate may free it).
        bool const nested = state_of_(claim) == held_k && exclusivity_() == caller_exclusive_k &&
                            detail::thread_zero_of_k == static_cast<void const *>(this);
        if (!nested) return {0, status_code_t::contended_k};

        slot_t *const slots = control_.slots.load(std::memory_order_relaxed);
        index_t const threads = threads_();
        index_t const current = dispatch_.generation.load(std::memory_order_relaxed);
        wait_for_children_(0, current);
        // The enclosing dispatch may itself be a `for_n_dynamic` whose drain thread 0 resumes after this dispatch.
        // Every other thread has retired from it, hence drained every cursor dry; only a pool of one may still
        // have tasks left on thread 0's own cursor. Remember it, and leave the cursors as they were found (I5).
        index_t const own_cursor = slots[0].next.load(std::memory_order_relaxed);
        if (resets_cursors) reset_cursors_();
        // The enclosing dispatch's job may live in the dispatch line's payload, and thread 0 still runs it: the
        // nested dispatch travels by pointer only.
        dispatch_.trampoline = trampoline;
        dispatch_.context = context;
        generation_t generation = static_cast<generation_t>(current + 2u);
        // After 2^(bits-1) dispatches inside one slice the next one would alias the enclosing generation, and its own
        // join would then wait for the enclosing dispatch: skip that value (workers only need a new odd generation).
        if (generation == claim_.outer.load(std::memory_order_relaxed))
            generation = static_cast<generation_t>(current + 4u);
        publish_generation_(generation); // T2n
        trampoline(context, 0);
        // A dispatch nested deeper inside this slice published later generations, and the children have retired those
        // instead: wait for the latest, which only this thread writes while it holds the pool.
        wait_for_children_(0, dispatch_.generation.load(std::memory_order_relaxed));
        if (resets_cursors) {
            // Exhausted for the enclosing drain: one more `fetch_add` returns at least `max ≥ count` (I5).
            index_t const exhausted = static_cast<index_t>(~index_t(0));
            for (index_t thread = 1; thread != threads; ++thread)
                slots[thread].next.store(exhausted, std::memory_order_relaxed);
            slots[0].next.store(threads == 1 ? own_cursor : exhausted, std::memory_order_relaxed);
        }
        return {generation, status_code_t::success_k};
    }

    /**  Whether a worker that saw `last` should keep waiting: no new generation yet (I3). */
    bool no_news_(index_t last, std::memory_order order) const noexcept {
        return dispatch_.generation.load(order) == last;
    }

    /**
     *  Blocks in the kernel until a wake-up, until `timeout_us` passes (0: no limit), or not at all if a
     *  publication, a policy change or `stop` arrived meanwhile (I7). May return spuriously.
     */
    [[gnu::noinline]] void park_(index_t last, std::uint64_t policy, std::uint64_t timeout_us) noexcept {
        // The ticket first: a wake-up after this load makes the futex's value check fail or is delivered.
        std::uint32_t const ticket = control_.wake.load(std::memory_order_acquire);
        control_.parked.fetch_add(1, std::memory_order_seq_cst);
        detail::reach_hook(hook_point_t::before_park_k, this);
        // I7. Pairs (seq_cst) with `publish_generation_`'s store then load, and with M's.
        if (no_news_(last, std::memory_order_seq_cst) && control_.idle.load(std::memory_order_seq_cst) == policy &&
            !control_.stop.load(std::memory_order_relaxed))
            kernel_wait(control_.wake, ticket, timeout_us);
        control_.parked.fetch_sub(1, std::memory_order_relaxed);
    }

    /**  Waits for the next publication after `last` (I3) as the idle policy says, and returns its generation. */
    index_t wait_for_publication_(index_t last, index_t thread) noexcept {
        micro_yield_t micro_yield;
        std::size_t spins = 0;
        detail::adaptive_window_t window;
        for (;;) {
            // Pairs with the seq_cst store of T2, T2n and T4: the job, cursors and stop are visible.
            index_t const generation = dispatch_.generation.load(std::memory_order_acquire);
            if (generation != last) return generation;
            std::uint64_t const policy = control_.idle.load(std::memory_order_relaxed);
            switch (detail::unpack_idle_policy(policy).mode) {
            case idle_mode_t::spin_k:
                backoff_(micro_yield, thread, spins);
                break;
            case idle_mode_t::nap_k:
                // The address waits watch a `std::atomic`; an instrumented atomic spins instead.
                if constexpr (std::is_same_v<atomic_t<index_t>, std::atomic<index_t>>)
                    nap_on(dispatch_.generation, generation, micro_yield, thread), yield_if_oversubscribed_(spins);
                else
                    backoff_(micro_yield, thread, spins);
                break;
            case idle_mode_t::sleep_k:
                park_(last, policy, detail::unpack_idle_policy(policy).microseconds);
                break;
            case idle_mode_t::adaptive_k:
                backoff_(micro_yield, thread, spins);
                if (window.spun_out(detail::unpack_idle_policy(policy).microseconds)) {
                    park_(last, policy, 0);
                    window.restart(); // woken: spin out a fresh window before parking again
                }
                break;
            }
        }
    }

    static void worker_entry_(void *slot) noexcept {
        slot_t &self = *static_cast<slot_t *>(slot);
        // Only exclusive pools start a worker for thread 0 (the caller is thread 0 of an inclusive one).
        if (self.index == 0) detail::thread_zero_of_k = static_cast<void const *>(self.pool);
        self.pool->worker_loop_(self.index, self.start_generation, self.gate);
    }

    void worker_loop_(index_t const thread, index_t last, std::uint32_t const gate) noexcept {
        // The start gate: no spinning until `spawn` has decided (T0), so a failing spawn never loads the machine.
        while (control_.wake.load(std::memory_order_acquire) == gate) kernel_wait(control_.wake, gate, 0);
        // A failed spawn stores `stop` before it opens the gate (release), which the load above acquired.
        if (control_.stop.load(std::memory_order_relaxed)) return;
        for (;;) {
            last = wait_for_publication_(last, thread);
            // `stop` is stored before T4's generation store, which the wait above acquired.
            if (control_.stop.load(std::memory_order_relaxed)) return;
            dispatch_.trampoline(dispatch_.context, thread);
            if (forked_()) [[unlikely]]
                detail::exit_forked_worker(); // this worker forked inside its slice: see "Processes"
            // Thread 0 of an exclusive pool may have published nested dispatches (T2n); nobody else can have.
            last = dispatch_.generation.load(std::memory_order_relaxed);
            retire_(thread, last);
        }
    }

    void destroy_slots_(slot_allocator_t &slot_allocator, slot_t *slots, index_t constructed,
                        index_t allocated) noexcept {
        for (index_t thread = 0; thread != constructed; ++thread)
            slot_traits_t::destroy(slot_allocator, slots + thread);
        slot_traits_t::deallocate(slot_allocator, slots, allocated);
    }

    /**  T4's end: the table is gone; the pool is closed (I6) until the next T0, and a new sequence marks it. */
    void reset_to_unspawned_(std::uint64_t claim) noexcept {
        control_.threads.store(0, std::memory_order_relaxed);
        control_.slots.store(nullptr, std::memory_order_relaxed);
        control_.exclusivity.store(caller_inclusive_k, std::memory_order_relaxed);
        control_.stop.store(false, std::memory_order_relaxed);
        claim_.pending.store(0, std::memory_order_relaxed);
        claim_.closing.store(false, std::memory_order_relaxed);
        claim_.claim.store(next_sequence_(claim) | closed_k, std::memory_order_release);
    }

    /**
     *  In a `fork()`ed child: the threads of the table do not exist here. Forget their handles (joining them would
     *  wait forever, destroying a joinable handle would terminate), free the table, and close the pool.
     */
    [[gnu::cold, gnu::noinline]] void abandon_() noexcept {
        slot_t *const slots = control_.slots.load(std::memory_order_relaxed);
        index_t const threads = threads_();
        for (index_t thread = 0; thread != threads; ++thread) slots[thread].thread.abandon();
        slot_allocator_t slot_allocator(allocator_);
        destroy_slots_(slot_allocator, slots, threads, threads);
        reset_to_unspawned_(claim_.claim.load(std::memory_order_relaxed));
        control_.forks.store(fork_generation(), std::memory_order_relaxed);
    }

    /**  Whether the caller runs inside a callback of this pool, where `terminate` would wait for itself. */
    bool called_from_callback_() const noexcept {
        // Workers first: only the caller itself may read its `caller_in_slice` without a race.
        slot_t const *const slots = control_.slots.load(std::memory_order_relaxed);
        for (index_t thread = 0, threads = threads_(); thread != threads; ++thread)
            if (slots[thread].thread.is_current()) return true;
        return exclusivity_() == caller_inclusive_k && claim_.caller_in_slice.load(std::memory_order_relaxed) &&
               claim_.dispatcher.load(std::memory_order_relaxed) == std::this_thread::get_id();
    }
};

/**  @brief  The default pool: `std::size_t` indices, the target's micro-wait, 128-byte padding. */
using flat_pool_t = basic_pool_t<>;

} // namespace forkunion
