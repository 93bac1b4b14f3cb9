/**
 *  @file   forkunion/pools/dispatch.hpp
 *  @brief  The dispatch vocabulary every pool kind shares: the jobs a verb publishes, the guard that joins one,
 *          the split API's publication, and the verbs themselves, written once over any pool.
 *
 *  - `call_with_prong`, `call_with_slice`: the callback shapes every pool accepts (an index, or a `prong_t`),
 *    and the one place where every verb of every pool calls a callback, so the one place that refuses, at compile
 *    time, a callback that is not nothrow-invocable (see "Callbacks" below).
 *  - `detail::threads_job_t`, `n_job_t`, `slices_job_t`, `n_dynamic_job_t`: what one dispatch of `for_threads`,
 *    `for_n`, `for_slices` and `for_n_dynamic` asks of every thread (`run(thread, domain)`) and of a caller that
 *    runs it alone (`run_on_caller()`, the serial loop the verb stands for).
 *  - `dispatch_guard_t<pool, job>`: joins one dispatch, reports its status, runs a refused one on the caller.
 *  - `publication_t<generation>`: what the split API returns: an odd generation, or 0 and the refusal's status.
 *  - `dispatch_verbs_t<pool, index>`: `for_threads`, `for_n`, `for_n_dynamic`, `for_slices`,
 *    `unsafe_for_threads`, over a pool that supplies `unsafe_publish_job`, `steal_` and `unsafe_publish_threads`.
 *  - `hook_point_t` and the test hook: where a test build (`FORKUNION_TEST_HOOKS=1`) may stop a thread.
 *
 *  The pools' headers (`flat.hpp`, `colocated.hpp`, `distributed.hpp`) state which threads may call each verb and
 *  what ordering a join gives; nothing here touches a shared word itself.
 *
 *  Callbacks: every callback a pool's threads run (`for_threads`, `for_n`, `for_n_dynamic`, `for_slices`, the
 *  split API's `unsafe_for_threads`, on every pool kind, and `join_or_run_on_caller()`'s serial loop) must be
 *  nothrow-invocable with the shape the pool calls it with: `[&](std::size_t task) noexcept { ... }`. A callback
 *  that may throw does not compile (a `static_assert` names the rule); one whose body may throw catches inside
 *  itself and hands the error over through its own state. Dispatch never throws, never stores an exception and
 *  never rethrows from a join: an exception escaping a worker would call `std::terminate`, and carrying it to the
 *  joining thread would cost every dispatch a slot and a check. Without exceptions (`-fno-exceptions`, where no
 *  callback can throw and none is deduced `noexcept`) the check is off (`FORKUNION_EXCEPTIONS` is 0).
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstdint>     // `std::uint8_t`
#include <cstdio>      // `std::fputs`
#include <cstdlib>     // `std::abort`
#include <thread>      // `std::this_thread::get_id`
#include <type_traits> // `std::is_invocable_v`, `std::decay_t`, `std::is_integral_v`
#include <utility>     // `std::forward`, `std::in_range`

#include <forkunion/base/types.hpp>
/*  Whether a refused dispatch guard destroyed without its status read aborts with a message: on unless NDEBUG. */
#if !defined(FORKUNION_CHECK_REFUSALS)
#if defined(NDEBUG)
#define FORKUNION_CHECK_REFUSALS 0
#else
#define FORKUNION_CHECK_REFUSALS 1
#endif
#endif

/*  Test builds only: named points where a test may stop a thread to widen a race window. 0 compiles them out. */
#if !defined(FORKUNION_TEST_HOOKS)
#define FORKUNION_TEST_HOOKS 0
#endif

namespace forkunion {

/**  @brief  `FORKUNION_EXCEPTIONS`: whether this translation unit may throw, so whether callbacks are checked. */
inline constexpr bool exceptions_k = FORKUNION_EXCEPTIONS;

namespace detail {

/**
 *  Refuses to compile unless `fn_type_` is nothrow-invocable with `args_types_...`: the pools run callbacks on
 *  threads that have no caller to hand an exception to. Called where every verb of every pool calls a callback
 *  (`call_with_prong`, `call_with_slice`), so no verb and no pool kind escapes it. Off without exceptions.
 */
template <typename fn_type_, typename... args_types_>
constexpr void require_nothrow_callback() noexcept {
    static_assert(!exceptions_k || std::is_nothrow_invocable_v<fn_type_, args_types_...>,
                  "forkunion: a callback run by the pool's threads must be noexcept: write `[&](...) noexcept { ... }` "
                  "and catch inside it if its body may throw; an exception escaping a worker thread would call "
                  "std::terminate");
}

} // namespace detail

/**
 *  @brief  Calls `fn(prong.task)` if `fn` takes an index, else `fn(prong)`: the two callback shapes every pool
 *          accepts (a generic `[](auto task)` gets the index). Shared by every pool kind. The chosen call must be
 *          nothrow-invocable, or this does not compile (`detail::require_nothrow_callback`).
 */
template <typename fn_type_, typename index_type_>
inline void call_with_prong(fn_type_ &fn, prong_t<index_type_> prong) noexcept {
    if constexpr (std::is_invocable_v<fn_type_ &, index_type_>) {
        detail::require_nothrow_callback<fn_type_ &, index_type_>();
        fn(prong.task);
    } else {
        detail::require_nothrow_callback<fn_type_ &, prong_t<index_type_>>();
        fn(prong);
    }
}

/**  @brief  Calls `fn(prong.task, count)` if `fn` takes two indices, else `fn(prong, count)`: `for_slices`. The
 *          chosen call must be nothrow-invocable, like `call_with_prong`'s. */
template <typename fn_type_, typename index_type_>
inline void call_with_slice(fn_type_ &fn, prong_t<index_type_> prong, index_type_ count) noexcept {
    if constexpr (std::is_invocable_v<fn_type_ &, index_type_, index_type_>) {
        detail::require_nothrow_callback<fn_type_ &, index_type_, index_type_>();
        fn(prong.task, count);
    } else {
        detail::require_nothrow_callback<fn_type_ &, prong_t<index_type_>, index_type_>();
        fn(prong, count);
    }
}

/**  @brief  The points of the protocol where a test build (`FORKUNION_TEST_HOOKS=1`) may stop a thread. */
enum class hook_point_t : std::uint8_t {
    before_claim_k,   ///< A dispatcher read the claim word and is about to CAS it.
    after_claim_k,    ///< A dispatcher holds the pool and has not read the thread count yet.
    after_publish_k,  ///< A dispatcher stored the generation and woke any parked worker; its dispatch call goes on.
    before_park_k,    ///< A worker counted itself parked and has not re-read the generation yet.
    before_retire_k,  ///< A contributor finished its slice and has not reported it yet.
    before_release_k, ///< The root saw its subtree retire and has not released the pool yet.
    after_join_k,     ///< An `unsafe_join` saw its generation complete (or completed it) and has not returned yet.
};

namespace detail {

/**  The test hook: called with the point and the pool's address when `FORKUNION_TEST_HOOKS` is 1. */
inline std::atomic<void (*)(hook_point_t, void const *)> test_hook_k{nullptr};

inline void reach_hook(hook_point_t point, void const *pool) noexcept {
    if constexpr (FORKUNION_TEST_HOOKS)
        if (auto const hook = test_hook_k.load(std::memory_order_acquire)) hook(point, pool);
}

#if FORKUNION_CHECK_REFUSALS
/**  A refused guard died with its status unread: the work it stood for was lost without anyone knowing. */
[[noreturn, gnu::cold, gnu::noinline]] inline void report_unread_refusal(char const *status) noexcept {
    std::fputs("forkunion: a dispatch was refused (", stderr);
    std::fputs(status, stderr);
    std::fputs(") and its guard was destroyed without its status read: the loop never ran. Check `join()`'s "
               "status, or call `join_or_run_on_caller()` to run it on the calling thread when the pool is busy.\n",
               stderr);
    std::abort();
}
#endif

/**  A caller-inclusive dispatch's guard was destroyed unjoined by a thread other than its creator (see
 *   `dispatch_guard_t`): thread 0's slice can run nowhere, and the job it belongs to is being destroyed. */
[[noreturn, gnu::cold, gnu::noinline]] inline void report_abandoned_dispatch() noexcept {
    std::fputs("forkunion: a dispatch guard of a caller-inclusive pool was destroyed, unjoined, on a thread other "
               "than the one that created it: thread 0's slice is the creator's to run, and the job dies with the "
               "guard. Join (or destroy) a guard on the thread that dispatched.\n",
               stderr);
    std::abort();
}

} // namespace detail

/**  The exit status of a `fork()`ed child whose forking worker returned from its slice (see `flat.hpp`,
 *   "Processes"): the child has no caller thread to return to. */
inline constexpr int forked_worker_exit_status_k = 125;

namespace detail {

/**  In a child forked by a worker inside its slice, after that slice returned: the only thread of the process
 *   would wait for ever for a dispatch, so the child stops, saying why. `_Exit`: no `atexit` handler of the
 *   parent's program runs in a child that never reached its `main`'s end. */
[[noreturn, gnu::cold, gnu::noinline]] inline void exit_forked_worker() noexcept {
    std::fputs("forkunion: a pool worker forked inside its slice and the slice returned in the child, which has no "
               "caller thread to return to; the child exits. Call exec or _exit in the child instead.\n",
               stderr);
    std::_Exit(forked_worker_exit_status_k);
}

/**  A verb's task count converted to the pool's index type, and whether it fit: a count the index type cannot
 *   hold (negative, or above its maximum) is refused with `invalid_argument`, never narrowed. */
template <typename index_type_>
struct task_count_t {
    index_type_ value = 0;
    bool fits = true;
};

template <typename index_type_, typename count_type_>
constexpr task_count_t<index_type_> to_task_count(count_type_ count) noexcept {
    static_assert(std::is_integral_v<count_type_> && !std::is_same_v<count_type_, bool>,
                  "a task count is an integer: convert it explicitly, and to a type that holds it");
    if (!std::in_range<index_type_>(count)) return {0, false};
    return {static_cast<index_type_>(count), true};
}

/**  The job of `for_threads`: `fn(thread)` once per thread; serially, `fn(0)` once. Shared by every pool. */
template <typename pool_type_, typename fn_type_>
struct threads_job_t {
    using index_t = typename pool_type_::index_t;
    static constexpr bool resets_cursors_k = false;
    fn_type_ fn;
    template <typename arg_type_>
    threads_job_t(pool_type_ &, arg_type_ &&arg) noexcept : fn(std::forward<arg_type_>(arg)) {}
    void run(index_t thread, index_t domain) noexcept {
        call_with_prong(fn, forkunion::prong_t<index_t>{thread, thread, domain});
    }
    void run_on_caller() noexcept { call_with_prong(fn, forkunion::prong_t<index_t>{0, 0, 0}); }
};

/**  The job of `for_n`: thread t runs `static_slice(n, threads, t)`; serially, every task on thread 0. */
template <typename pool_type_, typename fn_type_>
struct n_job_t {
    using index_t = typename pool_type_::index_t;
    static constexpr bool resets_cursors_k = false;
    pool_type_ *pool;
    index_t n;
    fn_type_ fn;
    template <typename arg_type_>
    n_job_t(pool_type_ &p, index_t tasks, arg_type_ &&arg) noexcept
        : pool(&p), n(tasks), fn(std::forward<arg_type_>(arg)) {}
    void run(index_t thread, index_t domain) noexcept {
        slice_t<index_t> const block = static_slice(n, pool->threads_count(), thread);
        for (index_t offset = 0; offset < block.count; ++offset)
            call_with_prong(fn,
                            forkunion::prong_t<index_t>{static_cast<index_t>(block.first + offset), thread, domain});
    }
    void run_on_caller() noexcept {
        for (index_t task = 0; task < n; ++task) call_with_prong(fn, forkunion::prong_t<index_t>{task, 0, 0});
    }
};

/**  The job of `for_slices`: one `fn(first, count)` per non-empty block; serially, `fn(0, n)` once (n > 0). */
template <typename pool_type_, typename fn_type_>
struct slices_job_t {
    using index_t = typename pool_type_::index_t;
    static constexpr bool resets_cursors_k = false;
    pool_type_ *pool;
    index_t n;
    fn_type_ fn;
    template <typename arg_type_>
    slices_job_t(pool_type_ &p, index_t tasks, arg_type_ &&arg) noexcept
        : pool(&p), n(tasks), fn(std::forward<arg_type_>(arg)) {}
    void run(index_t thread, index_t domain) noexcept {
        slice_t<index_t> const block = static_slice(n, pool->threads_count(), thread);
        if (block.count) call_with_slice(fn, forkunion::prong_t<index_t>{block.first, thread, domain}, block.count);
    }
    void run_on_caller() noexcept {
        if (n) call_with_slice(fn, forkunion::prong_t<index_t>{0, 0, 0}, n);
    }
};

/**
 *  The job of `for_n_dynamic`: each thread drains its own block through its cursor, then steals in the order its
 *  pool defines (`steal_`: the flat pool's coprime walk, the distributed pool's domain-first walk); serially, every
 *  task on thread 0.
 */
template <typename pool_type_, typename fn_type_>
struct n_dynamic_job_t {
    using index_t = typename pool_type_::index_t;
    static constexpr bool resets_cursors_k = true;
    pool_type_ *pool;
    index_t n;
    fn_type_ fn;
    template <typename arg_type_>
    n_dynamic_job_t(pool_type_ &p, index_t tasks, arg_type_ &&arg) noexcept
        : pool(&p), n(tasks), fn(std::forward<arg_type_>(arg)) {}

    /**
     *  Takes tasks from `owner`'s block until `cursor` runs dry: at most one failing increment (I5), and none
     *  after the block's last task, which ends the drain.
     */
    void drain(std::atomic<index_t> &cursor, index_t owner, index_t threads, index_t thread, index_t domain) noexcept {
        slice_t<index_t> const block = static_slice(n, threads, owner);
        // A thief loads first: thieves sweeping dry cursors share the lines instead of writing them. The owner
        // does not: its cursor is rarely dry at its first claim, and a load before the RMW would fetch the line
        // (which the dispatcher just reset) shared, then again to own it.
        if (owner != thread && cursor.load(std::memory_order_relaxed) >= block.count) return;
        // Relaxed: the RMW's atomicity alone makes every offset unique; results are published by the retirement.
        for (index_t offset; (offset = cursor.fetch_add(1, std::memory_order_relaxed)) < block.count;) {
            call_with_prong(fn,
                            forkunion::prong_t<index_t>{static_cast<index_t>(block.first + offset), thread, domain});
            // The block's last task: one more increment could only fail, and costs a locked RMW on a line that
            // thieves may be pulling.
            if (offset + 1 == block.count) return;
        }
    }
    void run(index_t thread, index_t domain) noexcept { pool->steal_(*this, thread, domain); }
    void run_on_caller() noexcept {
        for (index_t task = 0; task < n; ++task) call_with_prong(fn, forkunion::prong_t<index_t>{task, 0, 0});
    }
};

} // namespace detail

/**
 *  @brief  RAII guard of one dispatch: joins on `join()` or destruction. Returned by every blocking dispatch.
 *
 *  On caller-exclusive pools the workers start when the guard is constructed, so the caller may overlap its own
 *  work, poll `is_complete()` and `join()`. On caller-inclusive pools thread 0's slice runs inside `join()` (or the
 *  destructor), so the dispatch cannot complete before it. `join()` is idempotent and returns the dispatch's
 *  status; a refused dispatch runs nothing unless `join_or_run_on_caller()` runs it here. Immovable, because the
 *  workers may hold its address. Only the thread that created it may join it: `join()` and `join_or_run_on_caller()`
 *  from any other thread return `invalid_argument` at once, run and wait for nothing, and leave the guard as it
 *  was (its creator's join, or its destruction, still runs and joins every slice). Destroyed unjoined on another
 *  thread, it waits for every slice on a caller-exclusive pool; on a caller-inclusive pool, where thread 0's slice
 *  is the creator's to run, it prints why to stderr and aborts the process rather than leave the workers reading
 *  the destroyed job (`ctest -R guard_destroyed_on_another_thread`).
 */
template <typename pool_type_, typename job_type_>
class [[nodiscard]] dispatch_guard_t {
public:
    using pool_t = pool_type_;
    using job_t = job_type_;
    using generation_t = typename pool_t::generation_t;

    template <typename... args_types_>
    explicit dispatch_guard_t(pool_t &pool, args_types_ &&...args) noexcept
        : pool_(pool), job_(pool, std::forward<args_types_>(args)...) {
        publish_();
    }

    /**  A counted verb's guard: a count the index type cannot hold publishes nothing (`invalid_argument`). */
    template <typename index_type_, typename... args_types_>
    dispatch_guard_t(pool_t &pool, detail::task_count_t<index_type_> count, args_types_ &&...args) noexcept
        : pool_(pool), job_(pool, count.value, std::forward<args_types_>(args)...) {
        if (count.fits)
            publish_();
        else
            status_ = detail::refuse("dispatch: the task count does not fit the pool's index type (negative, or above "
                                     "its maximum); nothing ran"),
            runnable_ = false;
    }

    dispatch_guard_t(dispatch_guard_t const &) = delete;
    dispatch_guard_t(dispatch_guard_t &&) = delete;
    dispatch_guard_t &operator=(dispatch_guard_t const &) = delete;
    dispatch_guard_t &operator=(dispatch_guard_t &&) = delete;

    ~dispatch_guard_t() noexcept {
        if (generation_) {
            if (!joined_) {
                if (foreign_()) [[unlikely]]
                    join_abandoned_();
                else
                    pool_.unsafe_join(generation_);
            }
            return;
        }
#if FORKUNION_CHECK_REFUSALS
        if (!status_read_) detail::report_unread_refusal(status_.name());
#endif
    }

    /**
     *  @brief  Blocks until every slice ran (running thread 0's slice on caller-inclusive pools) and returns
     *          success; or, if the pool refused the dispatch, returns why at once (`contended`, `not_spawned`,
     *          `forked`; `invalid_argument` for a count the index type cannot hold) having run nothing. Idempotent.
     *          Creator only: from another thread it returns `invalid_argument` and changes nothing. In a child of a
     *          `fork()` the caller made inside its own slice (or before joining), returns `forked` at once: the
     *          other slices' threads are not there.
     */
    [[nodiscard]] status_t join() noexcept {
        if (foreign_())
            return detail::refuse("join: called from a thread other than the guard's creator; nothing changed");
        status_read_ = true;
        if (!joined_ && generation_) join_published_();
        joined_ = true;
        return status_;
    }

    /**
     *  @brief  Like `join()`, but a dispatch the pool refused (`contended`, `not_spawned`, `forked`) runs here, on
     *          the calling thread, as a team of one: the serial loop the verb stands for, every prong's thread 0
     *          (`for_threads`: `fn(0)` once; `for_slices`: `fn(0, n)` once). Returns true once every task ran;
     *          `status()` still says what the pool answered.
     *
     *  Returns false having run nothing where no thread can run the loop: a count the pool's index type cannot
     *  hold (`status()` says `invalid_argument`), or a call from a thread other than the guard's creator (see
     *  `join()`). A count refused this way leaves the status unread, so a build with `FORKUNION_CHECK_REFUSALS`
     *  aborts with a message when the guard dies unless `status()` or `join()` was asked.
     */
    bool join_or_run_on_caller() noexcept {
        if (foreign_()) return false;
        if (!runnable_) return false;
        status_read_ = true;
        if (joined_) return true;
        joined_ = true;
        if (generation_)
            join_published_();
        else
            job_.run_on_caller();
        return true;
    }

    /**  @brief  True once every slice ran, or if the dispatch was refused. Never blocks. */
    [[nodiscard]] bool is_complete() const noexcept {
        return joined_ || !generation_ || pool_.is_complete(generation_);
    }

    /**  @brief  Success, or why the dispatch was refused (`contended`, `not_spawned`, `forked`, `invalid_argument`). */
    [[nodiscard]] status_t status() const noexcept {
        status_read_ = true;
        return status_;
    }
    explicit operator bool() const noexcept {
        return static_cast<bool>(status());
    }

    /**  @brief  The odd generation of this dispatch, or 0 if it was refused. */
    [[nodiscard]] generation_t generation() const noexcept {
        return generation_;
    }

private:
    /**  A caller that forked inside its own slice (or before joining) is, in the child, told `forked`: the other
     *   slices' threads are not in that process, so the join returned without them. */
    void join_published_() noexcept {
        pool_.unsafe_join(generation_);
        if (pool_.forked()) [[unlikely]]
            status_ = status_code_t::forked_k;
    }
    void publish_() noexcept {
        auto const publication = pool_.unsafe_publish_job(job_);
        generation_ = publication.generation;
        status_ = publication.status;
    }
    /**  Destroyed unjoined on a thread other than its creator: an exclusive pool's join waits for every slice
     *   from any thread, but on an inclusive pool thread 0's slice is the creator's to run, and the job it would
     *   run lives in this object. Returning would leave the workers reading freed memory and the pool claimed for
     *   good, so the process stops, saying why. */
    void join_abandoned_() noexcept {
        pool_.unsafe_join(generation_);
        if (!pool_.is_complete(generation_) && !pool_.forked()) detail::report_abandoned_dispatch();
    }
    /**  A thread other than the creator asks to join: only the creator may (it owes thread 0's slice on an
     *   inclusive pool, and owns the guard's state). Such a join is refused and touches nothing. */
    bool foreign_() const noexcept {
        return creator_ != std::this_thread::get_id();
    }

    pool_t &pool_;
    job_t job_;
    std::thread::id const creator_ = std::this_thread::get_id();
    generation_t generation_ = 0;
    status_t status_;
    bool joined_ = false;
    bool runnable_ = true; // false: a count the index type cannot hold, which no thread can run
    mutable bool status_read_ = false;
};

/**
 *  @brief  The outcome of a low-level publication: an odd generation, or 0 with the refusal's status. Converts to
 *          the generation, so `pool.unsafe_join(pool.unsafe_for_threads(f))` works.
 */
template <typename generation_type_>
struct publication_t {
    generation_type_ generation = 0;
    status_t status;

    constexpr operator generation_type_() const noexcept { return generation; } // NOLINT(google-explicit-constructor)
    constexpr explicit operator bool() const noexcept { return static_cast<bool>(status); }
};

/**
 *  @brief  The dispatch verbs every pool kind offers, written once over the pool's jobs (CRTP).
 *
 *  A pool `P` derives from `dispatch_verbs_t<P, index_t>` and supplies `unsafe_publish_job(job)` (publishes one
 *  of the `detail::*_job_t<P, fn>` jobs, whose `run(thread, domain)` every thread calls), `steal_` (the stealing
 *  order of `for_n_dynamic`) and `unsafe_publish_threads(fn)` (the split dispatch of an lvalue). What follows holds
 *  for every pool kind; each pool's header says how it numbers and places its threads, and what a prong's
 *  `compute_domain` is. Callable from any thread; a dispatch racing another one, or nested in one, is refused
 *  (`contended`) as the pool's header describes.
 *
 *  Counts: `for_n`, `for_n_dynamic` and `for_slices` take `n` as any integer type and never narrow it. A count
 *  the pool's `index_t` cannot hold (negative, or above its maximum: 1000 on a `std::uint8_t` pool) is refused
 *  with `invalid_argument` and runs nothing, `join_or_run_on_caller()` included, since no index of the loop fits
 *  the callback's parameter either; a bool, a floating-point or a class-type count does not compile.
 *
 *  Callbacks: `fn` must be nothrow-invocable with the shape the verb calls (`[&](std::size_t i) noexcept { ... }`);
 *  one that may throw does not compile, on every verb and every pool kind (see the file comment). A body that may
 *  throw catches inside the callback and reports through the callback's own state.
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
        using job_t = detail::threads_job_t<pool_type_, std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, job_t>(self_(), std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Calls `fn(task)` (or `fn(prong)`) for every task in `[0, n)`, thread t running the contiguous
     *          block `static_slice(n, threads_count(), t)`. Serial equivalent:
     *          `for (index_t i = 0; i < n; ++i) fn(i);`  ~  `#pragma omp parallel for schedule(static)`
     */
    template <typename count_type_, typename fn_type_>
    [[nodiscard]] auto for_n(count_type_ n, fn_type_ &&fn) noexcept {
        using job_t = detail::n_job_t<pool_type_, std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, job_t>(self_(), detail::to_task_count<index_t>(n),
                                                   std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Calls `fn(task)` (or `fn(prong)`) for every task in `[0, n)`, for tasks of uneven cost: each thread
     *          drains its own static block through a private, padded `fetch_add` cursor, then steals single tasks
     *          from other threads' cursors in a coprime-stride order seeded by its index (a distributed pool
     *          steals inside the thief's compute domain first). Serial equivalent:
     *          `for (index_t i = 0; i < n; ++i) fn(i);`  ~  `#pragma omp parallel for schedule(dynamic, 1)`
     */
    template <typename count_type_, typename fn_type_>
    [[nodiscard]] auto for_n_dynamic(count_type_ n, fn_type_ &&fn) noexcept {
        using job_t = detail::n_dynamic_job_t<pool_type_, std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, job_t>(self_(), detail::to_task_count<index_t>(n),
                                                   std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Calls `fn(first, count)` (or `fn(prong, count)`, whose task is `first`) once per thread whose block
     *          of the static split is non-empty; a thread with an empty block is not called. Serial equivalent:
     *          `for (t = 0; t < threads; ++t) if (s = static_slice(n, threads, t); s.count) fn(s.first, s.count);`
     */
    template <typename count_type_, typename fn_type_>
    [[nodiscard]] auto for_slices(count_type_ n, fn_type_ &&fn) noexcept {
        using job_t = detail::slices_job_t<pool_type_, std::decay_t<fn_type_>>;
        return dispatch_guard_t<pool_type_, job_t>(self_(), detail::to_task_count<index_t>(n),
                                                   std::forward<fn_type_>(fn));
    }

    /**
     *  @brief  Broadcasts `fn(thread)` (or `fn(prong)`) to every thread without blocking and returns the
     *          dispatch's odd generation with success, or generation 0 and why it was refused (`contended`,
     *          `not_spawned`, `forked`). `fn` must be an lvalue that outlives the dispatch.
     *
     *  On exclusive pools the workers start now; poll `is_complete(generation)` and `unsafe_join(generation)`.
     *  On inclusive pools thread 0's slice runs inside `unsafe_join`, which must be called.
     */
    template <typename fn_type_>
    [[nodiscard]] auto unsafe_for_threads(fn_type_ &&fn) noexcept {
        static_assert(std::is_lvalue_reference_v<fn_type_>,
                      "unsafe_for_threads keeps the callable's address: pass an lvalue that outlives the dispatch");
        return self_().unsafe_publish_threads(fn);
    }

private:
    pool_type_ &self_() noexcept { return static_cast<pool_type_ &>(*this); }
};

} // namespace forkunion
