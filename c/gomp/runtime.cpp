/**
 *  @file   c/gomp/runtime.cpp
 *  @brief  `libforkunion_gomp.so`: GCC's OpenMP ABI (GOMP) and the `omp_*` API on forkunion's pools. Regions,
 *          teams, barriers, locks and the process-wide state live here.
 *
 *  @section design Design
 *
 *  Teams on pools. A region of k > 1 threads runs on a *root*: persistent caller-exclusive flat pools whose workers are
 *  the team's threads 1 .. T-1, spawned on first use and sized by nthreads-var (`OMP_NUM_THREADS`, else the allowed
 *  cores); the thread that starts the region is thread 0, the master, and runs its share itself between the publication
 *  and the join. A region that asks for more threads than the root has grows it by one more pool (a segment) holding
 *  the missing threads, numbered after the existing ones. No thread is replaced, so a thread number keeps its OS
 *  thread, and with it its `threadprivate` values (GCC keeps them in TLS), however the team grows or shrinks, until a
 *  root that already has `max_segments_k` segments grows again: then the segments after the first are stopped and their
 *  threads spawned again as one (`merge_segments`), so a team of any size up to the thread limit costs at most
 *  `max_segments_k` dispatches. A region of k < T threads is published to the segments it needs; their threads k .. T-1
 *  return at once, and the team's barriers count k. A region therefore costs one dispatch per segment it uses (one,
 *  unless the team ever grew), and its end is the pools' join. A team with more threads than cores ends at a gate
 *  instead (the master waits spin-then-futex for the members' `fn` to return), so the join's spinning master cannot
 *  keep a member that still has work off its core.
 *
 *  Concurrent regions. Each root has a busy flag. A thread's first region claims a free root, else a new one (at
 *  most `max_roots_k`), and never waits for a busy root; with none left it runs as a team of one (stderr says so).
 *  The thread then keeps that root, as libgomp keeps a thread's pool, until it exits (a thread-local destructor
 *  frees it for the next thread), so every later region's claim is two loads and no locked instruction. So regions that
 * two user threads start at the same time each get a full team of the size they asked for, on different threads, and
 *  nothing can deadlock. A pool is only ever dispatched, grown or terminated by its root's holder, so its dispatch
 *  is a sole claim (`unsafe_for_threads_sole`, no compare-and-swap either) and is never refused `contended` (a
 *  refusal would be a broken invariant, and aborts loudly). Why no locked instruction before the publication:
 *  GCC's code stores `.omp_data_o` just before `GOMP_parallel`, members hold that line from the last region, and
 *  a locked instruction would wait for those stores' invalidations before the generation's could even start.
 *
 *  Nesting. A region inside an active region runs with a team of one once max-active-levels-var active levels
 *  are open (1 by default, as with libgomp); below that, its encountering thread runs it on a root of its own for
 *  that active level (`claim_nested`), kept until the thread exits like the root of its outermost regions. So a
 *  nested team is an ordinary team whose master is a member of the enclosing one. Every region opened outside an
 *  active region starts a contention group (`group_t`): its thread limit is `OMP_THREAD_LIMIT` or the `teams`
 *  region's, and when there is one, nested regions take their extra threads from what it leaves.
 *
 *  Worksharing. Every member counts the worksharing constructs it meets; construct `id` uses slot `id % ws_slots_k` of
 *  the team, or a heap slot when a member reached it that far ahead of another (see `ws_slot_t` for the state machine),
 *  and the numbering continues across regions, so slots need no reset (but after a cancelled region, whose members
 *  stopped counting at different constructs). `schedule(static)` needs no shared state: each member computes its block
 *  (the same split as GCC's inlined static schedule and as `static_slice`) or its round-robin chunks. Nonmonotonic
 *  `dynamic` gives each member its static block of chunks behind a private, padded cursor, then steals from the others'
 *  in a coprime order (the pool's `for_n_dynamic` scheme); a cursor word carries a tag of the construct number, so a
 *  thief never takes from a block whose owner has not entered the construct yet, and an owner publishes its block only
 *  once every member has left the construct that used its cursor row before (each member's departure word says how far
 *  it got), so a late thief's increment never lands on a later construct's block. Such a loop takes no slot and never
 *  waits: an owner that cannot see that drains its block alone. Monotonic `dynamic`, `guided`, `sections` and every
 *  `ordered` loop take chunks from one shared cursor, in increasing order, so the chunks tile the iterations in hand-out
 *  order and `ordered` becomes a turn: the chunk starting at the turn's iteration may run its `ordered` regions, and
 *  hands the turn on (to its end) when its thread asks for the next.
 *
 *  Barriers. One arrival counter and one generation word, each on its own line. The last arrival resets the
 *  counter and bumps the generation (release); the others spin on the generation with the pause hint for the
 *  wait policy's spin count (`OMP_WAIT_POLICY`, `GOMP_SPINCOUNT`; 0 when passive and 30 billion when active, as
 *  with libgomp, `default_spin_count_k` when unset, and libgomp's 100 or 1000 when there are more threads than
 *  cores), then block on the generation's futex; they never yield. While waiting they run a shared `taskloop`'s
 *  tasks. The generation advances by two: its low bit says the region is cancelled (`cancel parallel`), which
 *  releases every waiter and tells it why, and makes every later barrier of the region return at once without
 *  arriving (see `team_barrier`). Every other wait of a team (a worksharing slot, the `ordered` turn,
 *  `copyprivate`, doacross) spins the same way and then sleeps on the team's doorbell futex, which every change
 *  such a wait watches rings; those that
 *  wait for another member's part of a construct (a slot, the `ordered` turn, doacross) give up once the region is
 *  cancelled, since that member may have left for the region's end. A cancelled region's end, after the join, puts
 *  the team back in order for the next region (`end_cancelled_region`).
 *
 *  Tasks run undeferred, on the encountering thread, at the point of the construct: a conforming schedule (the
 *  specification lets every task be undeferred), which satisfies every `depend` clause (siblings run in creation
 *  order), makes `taskwait`, `taskgroup` and `taskyield` no-ops, and makes a `final` task's descendants included
 *  tasks. The task's data block is copied first (or built by its copy function), as for a deferred task. A
 *  `taskloop` is still shared: its encountering thread publishes it on the team, and members waiting in a barrier
 *  (the implicit one of `single`, a worksharing construct's, an explicit one) or at the end of a region that has
 *  seen a `taskloop` before take tasks from it; the encountering thread returns when every task is done. A detached
 *  task (`detach`) completes only once its event is fulfilled too, and a task that depends on an incomplete one is
 *  deferred: every barrier, before arriving, and a region's end, after the join, wait for such tasks of the region
 *  (`finish_region_tasks`, `tasks.cpp`), running the deferred ones that became ready; a cancelled region's barriers
 *  give that wait up, its end does not.
 *
 *  Idle workers. Between regions a pool's workers wait by the pool's persistent idle policy (`idle_policy_for`):
 *  spin when `OMP_WAIT_POLICY=active`, park at once when passive, and otherwise spin for the spin count's window
 *  (`GOMP_SPINCOUNT` at `spins_per_us_k`) then park; once the process's teams outnumber its cores every pool gets
 *  the oversubscribed window (libgomp's 100 or 1000 spins). `OMP_STACKSIZE` is the pools' stack size
 *  (`spawn_pool`).
 *
 *  fork(). A child forked while pools exist gets a fresh runtime: an `atfork` child handler forgets every root (its
 *  pools' threads do not exist in the child; their memory is abandoned, never touched) and bumps `forks_`, so the
 *  child's next region spawns new pools. A region that the forking thread was running as master returns without
 *  joining the threads that stayed in the parent (the master runs its share outside the pools, so nothing waits).
 *  Every lock of the runtime is made free in the child (`forget_roots_in_child` lists them).
 *
 *  Refused, loudly, at the call with the construct's name (`refused.cpp`): device memory routines (`target` regions run
 *  on the host, `tasks.cpp`), OpenACC, the offload plugin interface, a doacross loop with a task reduction, and the
 *  lock entry points of the pre-GCC-4.4 ABI.
 *
 *  Threads: every entry point may be called from any thread, inside or outside a region, as OpenMP allows.
 */
#include "omp_api.hpp"
#include "runtime.hpp"

#include <cstdio>  // `std::fprintf`
#include <cstdlib> // `std::abort`
#include <cstring> // `std::memset`
#include <mutex>   // `std::mutex`
#include <new>     // `std::nothrow`

#include <pthread.h>     // `pthread_atfork`
#include <sys/syscall.h> // `SYS_gettid`
#include <unistd.h>      // `getpid`, `syscall`

#include <forkunion/topology/affinity.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>

namespace forkunion::gomp {

// ---- Process-wide state ----

namespace {
settings_t settings_instance_; // constant-initialized: no guard
// 0 unread, 1 being read, 2 read: the environment is read once, at load or at the first call that needs it (an
// OpenMP call from another library's constructor may come before this library's own).
std::atomic<int> environment_state_{0};

[[gnu::noinline]] void read_environment_once() noexcept {
    int expected = 0;
    if (environment_state_.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        read_environment(settings_instance_);
        // Pairs with the acquire below: whoever sees 2 sees every setting.
        environment_state_.store(2, std::memory_order_release);
        return;
    }
    while (environment_state_.load(std::memory_order_acquire) != 2) pause_once();
}
} // namespace

settings_t &settings() noexcept {
    if (environment_state_.load(std::memory_order_acquire) != 2) read_environment_once();
    return settings_instance_;
}

namespace {
/**  `settings()` without its check, for a region's path: a thread that has a current task has read the environment
 *   (`initial_task_slow` calls `settings()`), and a team's threads start only inside a region. */
settings_t const &loaded_settings() noexcept {
    return settings_instance_;
}
} // namespace

void refuse(char const *what, char const *why) noexcept {
    std::fprintf(stderr, "forkunion gomp: %s is not supported (%s); aborting\n", what, why);
    std::fflush(stderr);
    std::abort();
}

// ---- Waiting ----

wait_policy_t wait_policy(std::size_t threads) noexcept {
    settings_t const &s = settings();
    wait_policy_t policy;
    policy.oversubscribed = threads > s.allowed_cores;
    policy.spins = s.spin_infinite ? ~std::uint64_t(0) : s.spin_count;
    // With more threads than cores, spinning steals the core from the thread being waited for: libgomp's caps.
    if (policy.oversubscribed && s.wait_policy >= 0) {
        std::uint64_t const cap = s.wait_policy > 0 ? 1000 : 100;
        if (policy.spins > cap) policy.spins = cap;
    }
    return policy;
}

namespace {
unsigned process_threads() noexcept;
} // namespace

namespace {

/**
 *  Takes `word` (see `mutex_lock`), looking at it again after `most_gap` pause hints at most while it spins: the gap
 *  doubles from 1 up to that. The spin count counts pause hints, so a longer gap does not lengthen the wait before
 *  sleeping; a release is noticed up to one gap late, never more than the wait so far plus one hint.
 */
void lock_word(std::atomic<std::uint32_t> &word, std::uint64_t most_gap) noexcept {
    std::uint32_t expected = 0;
    // Acquire pairs with the release in `mutex_unlock`: the previous holder's writes are visible.
    if (word.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
    // Locks do not know their team: the process's team threads against the cores decide whether spinning starves
    // the holder (then capped as a barrier's is).
    wait_policy_t const policy = wait_policy(process_threads());
    std::uint64_t gap = 1;
    for (std::uint64_t spin = 0; spin < policy.spins;) {
        expected = 0;
        if (word.load(std::memory_order_relaxed) == 0 &&
            word.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
            return;
        for (std::uint64_t i = 0; i < gap; ++i) pause_once();
        spin += gap;
        if (gap < most_gap) gap *= 2;
    }
    // 2 = "locked, maybe sleepers": whoever unlocks a 2 wakes one sleeper.
    while (word.exchange(2, std::memory_order_acquire) != 0) kernel_wait(word, 2, 0);
}

/**
 *  The most pause hints (~0.7 µs) a waiter for one of the program's locks lets pass between two looks at it. Each
 *  look pulls the word's line into the waiter's cache, so the holder's next unlock has to fetch it back: with a look
 *  every hint, a holder that runs short sections back to back pays that transfer on every section (a contended
 *  `critical` of ~30 ns cost ~55 ns more than alone, as under libgomp); a gap of up to 16 hints lets it run several
 *  sections per look (~30 ns more). The runtime's own locks look every hint: their waiters have work that waits for
 *  them (with the gap, `taskloop grainsize(1)`, whose tasks take the task-tracking lock, cost ~30 % more).
 */
constexpr std::uint64_t program_lock_gap_k = 16;

} // namespace

void mutex_lock(std::atomic<std::uint32_t> &word) noexcept {
    lock_word(word, 1);
}

void program_lock(std::atomic<std::uint32_t> &word) noexcept {
    lock_word(word, program_lock_gap_k);
}

bool mutex_try_lock(std::atomic<std::uint32_t> &word) noexcept {
    std::uint32_t expected = 0;
    return word.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
}

void mutex_unlock(std::atomic<std::uint32_t> &word) noexcept {
    // Release pairs with the acquire of the next `mutex_lock`. `wait_kernel.hpp` wakes every sleeper: one takes the
    // word (as 2, since others may still sleep) and the rest find it taken and sleep again. Only a contended lock
    // that outlasted the spin count pays that, once per sleeper.
    if (word.exchange(0, std::memory_order_release) == 2) kernel_wake_all(word);
}

namespace {

struct alignas(line_k) global_lock_t {
    std::atomic<std::uint32_t> word{0};
};
global_lock_t critical_lock_; // the unnamed `critical`
global_lock_t atomic_lock_;   // `atomic` updates that have no lock-free instruction

} // namespace

// ---- Tasks and the calling thread ----

namespace {

/**  Per-thread state: the initial task, the root the thread owns, where the thread is pinned. */
struct thread_state_t {
    task_t initial;
    bool initialized = false;
    bool started = false; ///< The thread ran its first region as a team member (pinning, the affinity line).
    bool settled = false; ///< Started, and no affinity line to keep up: a region that does not move it skips it.
    int place = -1;       ///< The place this thread is bound to, or -1.
    /**  What the thread's last `OMP_DISPLAY_AFFINITY` line could show that may change: level, thread number, team
     *   size, ancestor's thread number, team number, number of teams, place. */
    int shown[7] = {-1, -1, -1, -1, -1, -1, -1};
    int wanted_place = -1;   ///< The place it was last asked to move to (`move_thread`): a refused pin is not retried.
    root_t *home = nullptr;  ///< The root this thread holds from its first region until it exits (`claim_root`).
    unsigned home_forks = 0; ///< `forks_` when `home` and `nested` were last claimed.
    /**  The roots of the nested regions this thread opened: `nested[a - 1]` serves the regions it opens at active
     *   level `a`, held until the thread exits like `home` (the roots of active level 0). Heap, `nested_capacity`
     *   entries, grown on a region deeper than any before. */
    root_t **nested = nullptr;
    unsigned nested_capacity = 0;
};

// Initial-exec: one `%fs`-relative access instead of a `__tls_get_addr` call. It is ~350 bytes of static TLS, which
// the loader reserves when the library is preloaded or linked, and takes from its surplus when it is `dlopen`ed.
constinit thread_local thread_state_t thread_state FORKUNION_GOMP_TLS;

} // namespace

constinit thread_local task_t *current_task_pointer FORKUNION_GOMP_TLS = nullptr;
constinit thread_local passive_waits_t passive_waits FORKUNION_GOMP_TLS;

task_t &initial_task_slow() noexcept {
    thread_state_t &state = thread_state;
    if (!state.initialized) {
        state.initial = task_t{};
        settings_t const &s = settings();
        report_environment(s);
        state.initial.icv = s.initial;
        state.initial.implicit = &state.initial;
        state.initialized = true;
    }
    current_task_pointer = &state.initial;
    return state.initial;
}

// ---- Barriers ----

bool team_barrier(team_t &team) noexcept {
    // Before arriving: every member that arrives has seen the region's tasks complete, or created none since. In a
    // cancelled region the member leaves for the region's end instead, which waits for them after the join.
    if (tasks_incomplete()) [[unlikely]]
        if (!finish_region_tasks_unless_cancelled(team)) return true;
    unsigned const size = team.header.size;
    // Read before arriving: this barrier's generation cannot advance until this thread arrives (only the
    // cancellation bit may come on meanwhile).
    std::uint32_t const generation = team.release.generation.load(std::memory_order_relaxed);
    // A cancelled region's members do not arrive: the count stays below the team size (see `team_barrier`'s
    // contract), and the member leaves for the region's end.
    if (generation & region_cancelled_k) [[unlikely]]
        return true;
    // Acq_rel: the last arrival carries every member's writes into its release of the generation.
    if (team.arrive.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == size) {
        team.arrive.arrived.store(0, std::memory_order_relaxed); // nobody arrives again before the release below
        // A construct's cancellation ends with its barrier (every member is here, none still in it). Written only
        // when set: the mark's line stays shared in every cache otherwise.
        if (team.taskloop.cancelled_ws.load(std::memory_order_relaxed) != no_ws_mark_k) [[unlikely]]
            team.taskloop.cancelled_ws.store(no_ws_mark_k, std::memory_order_relaxed);
        // Seq_cst with the sleepers' seq_cst increment and re-check: one of the two sees the other. A plain store
        // cannot lose a cancellation: every member is here, so none is in `cancel_region`.
        team.release.generation.store(generation + barrier_step_k, std::memory_order_seq_cst);
        if (team.release.sleepers.load(std::memory_order_seq_cst)) kernel_wake_all(team.release.generation);
        return false;
    }
    wait_policy_t const policy = team.header.policy;
    std::uint64_t const window = in_region_spins(policy);
    std::uint64_t spins = 0;
    bool waited = false, slept = false;
    std::uint32_t now;
    // Acquire pairs with the last arrival's release: every member's writes before the barrier are visible.
    while ((now = team.release.generation.load(std::memory_order_acquire)) == generation) {
        waited = true;
        // A shared `taskloop` is a partner's activity: the window starts again after helping with one, so a member
        // that helps a stream of them keeps spinning between them instead of sleeping through the next one's start.
        if (help_taskloop(team)) {
            spins = 0;
            continue;
        }
        // So are the region's deferred tasks that became ready after this member arrived (the barrier cannot
        // complete before they do): a member spinning until one has run needs a partner to run it.
        if (run_ready_region_task(team)) [[unlikely]] {
            spins = 0;
            continue;
        }
        if (spins < window) {
            ++spins;
            pause_once();
            continue;
        }
        slept = true;
        team.release.sleepers.fetch_add(1, std::memory_order_seq_cst);
        // A process that deferred a task looks again every millisecond (`tasks_deferred_once`); any other sleeps
        // until the release.
        if (team.release.generation.load(std::memory_order_seq_cst) == generation)
            kernel_wait(team.release.generation, generation,
                        tasks_deferred_once.load(std::memory_order_relaxed) ? 1000 : 0);
        team.release.sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    if (waited) in_region_waited(policy, window, slept); // one satisfied at once says nothing about spinning
    // A completed barrier advanced the word by a step (the bit as it was: clear); a cancellation set the bit.
    return (now & region_cancelled_k) != 0;
}

void cancel_region(team_t &team) noexcept {
    // Seq_cst, with the sleepers' seq_cst increment and re-check, as the last arrival's store: a member about to
    // sleep on the old value either sees the bit or is counted here and woken.
    team.release.generation.fetch_or(region_cancelled_k, std::memory_order_seq_cst);
    if (team.release.sleepers.load(std::memory_order_seq_cst)) kernel_wake_all(team.release.generation);
    team_notify(team); // slot, `ordered` and doacross waits re-check (`team_wait_unless_cancelled`)
    // A barrier's wait for the region's incomplete tasks re-checks too (`finish_region_tasks_unless_cancelled`).
    wake_task_waiters();
}

// ---- Roots ----

/**  At most this many roots, one per live thread and active level at which it has started a region (a nested
 *   region's encountering thread holds a root of its own for it): beyond that, a thread's new regions run as teams
 *   of one until a holder exits, and a note on stderr says so once. A pointer each until used; roots are only ever
 *   appended (a fork child forgets them all), so every scan stops at the first empty entry. */
inline constexpr unsigned max_roots_k = 4096;

/**  Pools per root: the first spawn and every later growth add one. */
inline constexpr unsigned max_segments_k = 16;

/**  A team thread's implicit task, kept by its root from region to region (so a region builds none): on lines of
 *   its own, since only that thread writes it while a region runs. */
struct alignas(line_k) member_task_t {
    task_t task;
};

/**
 *  A contention group: the threads of a region opened outside any active region and of every region nested in it.
 *  `limit` is its thread-limit-var (a `teams` region's `thread_limit`, else `OMP_THREAD_LIMIT`); under a limit,
 *  `busy` counts the group's threads that are in a team, and a nested region takes the threads it adds from what
 *  the limit leaves, first come first served (libgomp's order). Without a limit nothing is counted.
 */
struct alignas(line_k) group_t {
    std::atomic<unsigned> busy{1};
    unsigned limit = unlimited_threads_k;
};

struct root_t {
    struct alignas(line_k) busy_t {
        std::atomic<bool> held{false};
    } busy;
    team_t team;

    /**  A segment's callback: `unsafe_for_threads` needs it to outlive the call, so the root keeps them. */
    struct member_fn_t {
        root_t *root = nullptr;
        unsigned first = 0;
        void operator()(std::size_t worker) const noexcept { root->run_thread(first + 1 + worker); }
    };

    /**  What members read in every region; written only when the root grows (never during a region). */
    struct alignas(line_k) shape_t {
        /**  Caller-exclusive pools whose workers are team threads `first[s] + 1 ..`; the master is thread 0. */
        pool_t *segments[max_segments_k] = {};
        member_fn_t member_fns[max_segments_k];
        unsigned first[max_segments_k] = {}; ///< Team thread of each segment's worker 0, minus one.
        unsigned segments_count = 0;
        unsigned threads = 0; ///< Team threads: every segment's workers plus the master.
        cursor_line_t *cursors = nullptr;
        member_task_t *tasks = nullptr; ///< Team thread `t`'s implicit task is `tasks[t].task`, `capacity` of them.
        unsigned capacity = 0;          ///< Threads the cursor table and `tasks` have room for.
        unsigned forks = 0;             ///< `forks_` when the root was created.
        /**  The contention group of the current region: this root's own `group` for a region opened outside any
         *   active region, the encountering team's for a nested one. Written (when it changes) before publication. */
        group_t *group = nullptr;
    } shape;

    /**  This root's own contention group, for the regions it serves outside any active region. */
    group_t group;

    /**  What only the master touches, region after region: apart from the members' lines. */
    struct alignas(line_k) master_t {
        std::size_t generations[max_segments_k] = {}; ///< The current region's dispatch on each segment it uses.
        unsigned published = 0;                       ///< Segments the current region was published to.
        bool taskloop_seen = false;                   ///< Sticky: a `taskloop` was shared on this root.
        std::uint64_t ws_next = 0;                    ///< Number of the next region's first worksharing construct.
        task_t *legacy_saved = nullptr; ///< `GOMP_parallel_start`: the task the master's implicit task replaced.
        unsigned policy_threads = 0;    ///< `process_threads()` that `team.header.policy` was derived from; 0 none.
        unsigned legacy_reserved = 0;   ///< `GOMP_parallel_start` of a nested team: threads taken from its group.
        unsigned legacy_forks = 0;      ///< `GOMP_parallel_start`: `forks_` then (`GOMP_parallel_end` in a child).
    } master;

    bool try_claim() noexcept {
        // A load first, so threads scanning a busy root share its line instead of writing it.
        if (busy.held.load(std::memory_order_relaxed)) return false;
        // Acquire pairs with the release in `release`: the previous holder's region is over.
        return !busy.held.exchange(true, std::memory_order_acquire);
    }
    void release() noexcept { busy.held.store(false, std::memory_order_release); }

    void run_thread(std::size_t thread) noexcept;
};

namespace {

std::atomic<root_t *> roots_[max_roots_k];
/**  Guards every root's list of pools (`shape.segments`, `segments_count`) against `refresh_idle_policies`, the one
 *   reader that does not hold the root: taken by that function and where a list grows or is emptied, never on a
 *   region's path (a region only reads its own root's list). */
std::mutex shapes_mutex_;
std::mutex roots_mutex_;         // serializes creating roots; never held on a region's path otherwise
std::atomic<unsigned> forks_{0}; // bumped in a fork child
// Threads of every live root (workers and one master each): more than the cores, and idle ones must not spin.
std::atomic<unsigned> process_threads_{0};

/**  Team threads in the process, every root's, compared with the cores: whether spinning would starve someone. */
unsigned process_threads() noexcept {
    return process_threads_.load(std::memory_order_relaxed);
}

/**
 *  Pause-hint spins per microsecond: a pause costs ~41 ns on AMD Zen 5 (10^7 of them timed in a loop), so the
 *  wait policy's spin count, `GOMP_SPINCOUNT`, becomes the pool's adaptive window at 24 spins per µs.
 */
inline constexpr std::uint64_t spins_per_us_k = 24;

/**
 *  The one place that says how a pool's workers idle between regions (see the file comment), as the pool's
 *  persistent idle policy: `OMP_WAIT_POLICY=active` (or an infinite spin count) spins, unless the process's teams
 *  outnumber its cores; a spin count of 0 (passive) parks at once; anything else spins for the spin count's
 *  window (libgomp's 100 or 1000 spins when oversubscribed), then parks.
 */
idle_policy_t idle_policy_for(bool oversubscribed) noexcept {
    settings_t const &s = settings();
    if ((s.spin_infinite || s.wait_policy > 0) && !oversubscribed) return idle_policy_t::spin();
    wait_policy_t const policy = wait_policy(oversubscribed ? s.allowed_cores + 1u : 1u);
    if (policy.spins == 0) return idle_policy_t::sleep(0);
    std::uint64_t const window = policy.spins / spins_per_us_k;
    return idle_policy_t::adaptive(window ? window : 1);
}

/**  Spawns `pool` with `threads`, honouring `OMP_STACKSIZE` for the workers it starts; `oversubscribed`: the
 *   process will have more team threads than cores. */
status_t spawn_pool(pool_t &pool, unsigned threads, caller_exclusivity_t exclusivity, bool oversubscribed) noexcept {
    settings_t const &s = settings();
    if (s.stack_set) {
        if (status_t const status = pool.set_stack_size(s.stack_bytes); !status)
            std::fprintf(stderr,
                         "forkunion gomp: OMP_STACKSIZE: a stack of %zu bytes is refused (%s); workers get the "
                         "default\n",
                         s.stack_bytes, status.name());
    }
    (void)pool.set_idle_policy(idle_policy_for(oversubscribed));
    // An oversubscribed pool is told it has one core: while spinning, its workers and joining master yield after
    // the pool's short spin instead of keeping a core that another team's thread needs.
    std::size_t const cores = oversubscribed ? 1 : s.allowed_cores;
    return pool.spawn(threads, exclusivity, cores);
}

/**  What a team thread's implicit task keeps from region to region: its team, itself as its implicit task, its thread
 *   number, and not being final. Set once, where the task is made; `init_implicit` fills in the rest per region. */
void bind_implicit(task_t &task, team_t &team, unsigned thread) noexcept {
    task.team = &team;
    task.implicit = &task;
    task.thread_num = thread;
    task.in_final = false;
}

/**  Grows the cursor table and the implicit tasks to `capacity` threads; neither's contents matter between
 *   regions (a region sets up every task it uses). */
bool ensure_capacity(root_t &root, unsigned capacity) noexcept {
    if (root.shape.capacity >= capacity) return true;
    std::size_t const lines = cursor_table_lines(capacity);
    auto *table = new (std::align_val_t(line_k), std::nothrow) cursor_line_t[lines];
    if (!table) return false;
    auto *tasks = new (std::nothrow) member_task_t[capacity];
    if (!tasks) {
        ::operator delete[](table, std::align_val_t(line_k));
        return false;
    }
    reset_cursor_table(table, capacity);
    for (unsigned thread = 0; thread != capacity; ++thread) bind_implicit(tasks[thread].task, root.team, thread);
    ::operator delete[](root.shape.cursors, std::align_val_t(line_k));
    delete[] root.shape.tasks;
    root.shape.cursors = table;
    root.shape.tasks = tasks;
    root.shape.capacity = capacity;
    root.team.header.cursors = table; // the root is held and idle: no member reads the header now
    root.team.header.capacity = capacity;
    return true;
}

/**  Sets every live root's pools to the idle policy the process's size now calls for (any thread may). */
[[gnu::noinline]] void refresh_idle_policies() noexcept {
    bool const oversubscribed = process_threads() > settings().allowed_cores;
    std::lock_guard<std::mutex> const lock(shapes_mutex_);
    for (auto &slot : roots_) {
        root_t *root = slot.load(std::memory_order_acquire);
        if (!root) break; // roots are appended: none after the first empty entry
        for (unsigned segment = 0; segment != root->shape.segments_count; ++segment)
            (void)root->shape.segments[segment]->set_idle_policy(idle_policy_for(oversubscribed));
    }
}

/**
 *  Stops and deletes the segments of `root` (held by the calling thread) from `first` on. They leave the root's list
 *  under `shapes_mutex_`, and are stopped after it: a stopping worker's exit may run a thread-exit handler that opens
 *  a region, whose growth takes that mutex.
 */
void stop_segments(root_t &root, unsigned first) noexcept {
    pool_t *stopping[max_segments_k] = {};
    unsigned count = 0;
    {
        std::lock_guard<std::mutex> const lock(shapes_mutex_);
        for (unsigned segment = first; segment < root.shape.segments_count; ++segment)
            stopping[count++] = root.shape.segments[segment], root.shape.segments[segment] = nullptr;
        if (root.shape.segments_count > first) root.shape.segments_count = first;
    }
    for (unsigned segment = 0; segment != count; ++segment) {
        stopping[segment]->terminate();
        delete stopping[segment];
    }
}

/**
 *  Makes room for one more segment in a root that has `max_segments_k`: stops the threads of every segment but the
 *  first, which leaves the root with the first segment's threads (the team it was first spawned with), for the
 *  growth that follows to add back as one segment. Those thread numbers get new OS threads: OpenMP keeps
 *  `threadprivate` values only between teams of one size, and a region's cost stays one dispatch per segment.
 */
[[gnu::noinline, gnu::cold]] void merge_segments(root_t &root) noexcept {
    unsigned const kept = root.shape.first[1] + 1; // the master and the first segment's workers
    stop_segments(root, 1);
    process_threads_.fetch_sub(root.shape.threads - kept, std::memory_order_relaxed);
    root.shape.threads = kept;
}

/**  Says once per process on stderr that a team got fewer threads than it asked for, and returns `have`: OpenMP
 *  lets a region run with fewer threads when resources run out (`omp_get_num_threads` tells), never silently. */
[[gnu::cold]] unsigned short_team(unsigned wanted, unsigned have) noexcept {
    static std::atomic<bool> said{false};
    if (!said.exchange(true, std::memory_order_relaxed))
        std::fprintf(stderr,
                     "forkunion gomp: a team of %u threads could not be started (the OS refused a thread, or memory "
                     "ran out): it runs with %u; later shortfalls are not reported\n",
                     wanted, have);
    return have;
}

/**  Makes `root` have at least `wanted` team threads; returns how many it has (fewer when the OS refuses). */
[[gnu::noinline]] unsigned grow(root_t &root, unsigned wanted) noexcept {
    if (root.shape.threads >= wanted) return root.shape.threads;
    if (!ensure_capacity(root, wanted)) return short_team(wanted, root.shape.threads ? root.shape.threads : 1);
    if (root.shape.segments_count == max_segments_k) [[unlikely]]
        merge_segments(root);
    unsigned const have = root.shape.threads ? root.shape.threads : 1; // the master is always there
    auto *segment = new (std::nothrow) pool_t();
    if (!segment) return short_team(wanted, have);
    // Oversubscribed once this segment runs: the process's team threads (the master too, at the first spawn).
    bool const oversubscribed = process_threads() + (wanted - root.shape.threads) > settings().allowed_cores;
    if (!spawn_pool(*segment, wanted - have, caller_exclusive_k, oversubscribed)) {
        delete segment;
        return short_team(wanted, have);
    }
    {
        std::lock_guard<std::mutex> const lock(shapes_mutex_);
        root.shape.first[root.shape.segments_count] = have - 1;
        root.shape.member_fns[root.shape.segments_count] = {&root, have - 1};
        root.shape.segments[root.shape.segments_count++] = segment;
    }
    // The master too, the first time.
    unsigned const before = process_threads_.fetch_add(wanted - root.shape.threads, std::memory_order_relaxed);
    root.shape.threads = wanted;
    // The process just outnumbered its cores: every pool's idle workers now park after the short window.
    if (before <= settings().allowed_cores && oversubscribed) refresh_idle_policies();
    return wanted;
}

[[gnu::noinline]] root_t *create_root() noexcept {
    std::lock_guard<std::mutex> lock(roots_mutex_);
    for (unsigned index = 0; index != max_roots_k; ++index) {
        if (roots_[index].load(std::memory_order_relaxed)) continue;
        auto *root = new (std::nothrow) root_t();
        if (!root) return nullptr;
        root->shape.forks = forks_.load(std::memory_order_relaxed);
        root->team.header.root = root;
        (void)root->try_claim();
        // Release pairs with the acquire loads in `claim_root`: a scanner sees a constructed root.
        roots_[index].store(root, std::memory_order_release);
        return root;
    }
    return nullptr;
}

// A region's steps below are `always_inline`: the master's path from `GOMP_parallel` to its join is one function,
// with no call that saves and restores registers between the steps.

/**
 *  Hands the calling thread's roots back when the thread exits, for the next threads that have none: the destructor
 *  of `keeper_key_`, which a thread's claim of a free root sets. POSIX runs key destructors after the thread's C++
 *  `thread_local` destructors, and again (up to 4 rounds) when a destructor sets a key anew, so a root claimed by a
 *  region that such a destructor opens is handed back too. Never on a thread still inside a region (`exit()` from a
 *  region's body runs no key destructor, but a `pthread_exit` there does): its region still runs on those roots.
 */
void release_thread_roots(void *) noexcept {
    thread_state_t &state = thread_state;
    // Not in a `fork()` child that forgot the roots (their pools' threads stayed in the parent).
    if (state.home_forks != forks_.load(std::memory_order_relaxed)) return;
    if (inside_a_region(current_task_pointer)) return;
    if (state.home) state.home->release();
    state.home = nullptr;
    for (unsigned level = 0; level != state.nested_capacity; ++level)
        if (state.nested[level]) state.nested[level]->release();
    delete[] state.nested;
    state.nested = nullptr, state.nested_capacity = 0;
}

pthread_key_t keeper_key_;
/**  Set by `load`, cleared by `unload`; without the key, a thread's roots stay held until the process exits. */
std::atomic<bool> keeper_key_ready_{false};

/**  Any free root, claimed, or a new one; null when none is left. Registers the thread's keeper. */
[[gnu::noinline]] root_t *claim_free_root() noexcept {
    root_t *found = nullptr;
    for (unsigned index = 0; index != max_roots_k && !found; ++index) {
        root_t *root = roots_[index].load(std::memory_order_acquire);
        if (!root) {
            found = create_root();
            break;
        }
        if (root->try_claim()) found = root;
    }
    if (!found) {
        static std::atomic<bool> said{false};
        if (!said.exchange(true, std::memory_order_relaxed))
            std::fprintf(stderr,
                         "forkunion gomp: %u threads and levels hold teams: further regions run with a team "
                         "of one until one of those threads exits\n",
                         max_roots_k);
        return nullptr;
    }
    // A non-null value, set on the thread's first claim, and on a claim after `release_thread_roots` ran.
    if (keeper_key_ready_.load(std::memory_order_acquire) && !::pthread_getspecific(keeper_key_))
        ::pthread_setspecific(keeper_key_, &thread_state);
    return found;
}

/**  The calling thread's first root (for regions outside any active region); null when none is left. */
[[gnu::noinline]] root_t *claim_home() noexcept {
    thread_state_t &state = thread_state;
    root_t *const found = claim_free_root();
    if (found) state.home = found, state.home_forks = forks_.load(std::memory_order_relaxed);
    return found;
}

/**  The calling thread's root for the regions it opens at active level `level` > 0 (a nested region): the one it
 *   holds for that level, else a new hold. Never the root of a region the thread is in: that one serves a lower
 *   level. Null when none is left. */
[[gnu::noinline]] root_t *claim_nested(int level) noexcept {
    thread_state_t &state = thread_state;
    unsigned const index = static_cast<unsigned>(level) - 1;
    if (index >= state.nested_capacity) {
        unsigned const capacity = index + 4;
        auto **grown = new (std::nothrow) root_t *[capacity]();
        if (!grown) return nullptr;
        for (unsigned old = 0; old != state.nested_capacity; ++old) grown[old] = state.nested[old];
        delete[] state.nested;
        state.nested = grown, state.nested_capacity = capacity;
    }
    if (state.nested[index]) return state.nested[index];
    root_t *const found = claim_free_root();
    if (found) state.nested[index] = found, state.home_forks = forks_.load(std::memory_order_relaxed);
    return found;
}

/**  Whether the calling thread holds `root` (for any level). */
bool holds(root_t const &root) noexcept {
    thread_state_t const &state = thread_state;
    if (&root == state.home) return true;
    for (unsigned level = 0; level != state.nested_capacity; ++level)
        if (&root == state.nested[level]) return true;
    return false;
}

/**
 *  The root of a region the calling thread starts from active level `level`: the one it holds for that level,
 *  else a new hold (`claim_home`, `claim_nested`). A thread keeps its roots until it exits, as libgomp keeps a
 *  thread's pool: the claim of every later region outside any active region is then two loads and no locked
 *  instruction, which would wait for the stores of `.omp_data_o` to leave the store buffer (see `publish_team`).
 */
[[gnu::always_inline]] inline root_t *claim_root(int level) noexcept {
    thread_state_t const &state = thread_state;
    if (level > 0) [[unlikely]]
        return claim_nested(level);
    if (state.home && state.home_forks == forks_.load(std::memory_order_relaxed)) [[likely]]
        return state.home;
    return claim_home();
}

/**  A team member's place and place partition (places `[first, first + count)`). */
struct member_place_t {
    int place = -1;
    unsigned first = 0;
    unsigned count = 0;
};

/**
 *  Where member `thread` of a team of `size` goes under `placement`, as OpenMP 5.1's thread affinity rules place it
 *  (section 2.6.2), with P the partition's places and m the master's position in it:
 *  - `primary`: on the master's place, in the master's partition;
 *  - `close` (and `true`): T <= P threads on consecutive places from m, wrapping in the partition; T > P threads
 *    `T / P` to a place in thread order, then the `T % P` left one more to each place from m on. The partition is
 *    the master's;
 *  - `spread`, T <= P: the partition is cut into T runs of consecutive places, the first `P % T` one place longer;
 *    the master keeps its place and takes the run that holds it, and the member `t` threads after it takes the run
 *    `t` runs on (wrapping), on its first place. T > P: placed as `close`, each thread's partition its own place.
 */
member_place_t member_place(team_t::placement_t const &placement, unsigned thread, unsigned size) noexcept {
    unsigned const first = placement.partition_first, count = placement.partition_count;
    unsigned const master = static_cast<unsigned>(placement.master_place) - first;
    member_place_t out{placement.master_place, first, count};
    if (placement.bind == bind_primary_k) return out;
    if (placement.bind == bind_spread_k && size <= count) {
        unsigned const run = count / size, longer = count % size, in_longer = longer * (run + 1);
        unsigned const own = master < in_longer ? master / (run + 1) : longer + (master - in_longer) / run;
        unsigned const taken = (own + thread) % size;
        out.first = first + (taken < longer ? taken * (run + 1) : in_longer + (taken - longer) * run);
        out.count = taken < longer ? run + 1 : run;
        if (thread != 0) out.place = static_cast<int>(out.first);
        return out;
    }
    unsigned step = thread;
    if (size > count) {
        unsigned const per_place = size / count, left = size % count;
        step = thread < size - left ? thread / per_place : thread - (size - left);
    }
    out.place = static_cast<int>(first + (master + step) % count);
    if (placement.bind == bind_spread_k) out.first = static_cast<unsigned>(out.place), out.count = 1;
    return out;
}

/**  Pins the calling thread to `place` unless it was asked to go there before; no affinity line. */
void move_thread_quietly(int place) noexcept {
    thread_state_t &state = thread_state;
    if (place < 0 || place == state.wanted_place) return;
    state.wanted_place = place;
    places_t const &list = places();
    place_t const &chosen = list.places[place];
    cpu_mask_t mask;
    for (unsigned cpu = 0; cpu != chosen.count; ++cpu) (void)mask.set(list.cpus[chosen.first + cpu]);
    // The thread is on its place even where the OS refuses the pin (`GOMP_CPU_AFFINITY` may name CPUs this process
    // may not use): `omp_get_place_num` says so, as libgomp's does.
    (void)try_pin_current_thread(mask);
    state.place = place;
}

/**
 *  With `OMP_DISPLAY_AFFINITY`, prints the calling thread's affinity line when anything the format's fields can show
 *  changed since its last one (OpenMP 5.1: "when entering the first parallel region and when there is any change"):
 *  its level, thread number, team size, ancestor's thread number, team, number of teams or place. A thread that
 *  starts a region, a nested one or a serialized one checks; host name, process and thread ids never change.
 */
[[gnu::noinline, gnu::cold]] void display_affinity_if_changed() noexcept {
    thread_state_t &state = thread_state;
    int const level = omp_get_level();
    int const now[7] = {level,
                        omp_get_thread_num(),
                        omp_get_num_threads(),
                        omp_get_ancestor_thread_num(level - 1),
                        omp_get_team_num(),
                        omp_get_num_teams(),
                        state.place};
    if (std::memcmp(now, state.shown, sizeof(now)) == 0) return;
    std::memcpy(state.shown, now, sizeof(now));
    omp_display_affinity(nullptr);
}

/**
 *  Moves the calling thread to `place` (-1: leaves it where it is) if it was not asked to go there before, and with
 *  `OMP_DISPLAY_AFFINITY` prints its affinity line if that changed. A refused pin is not retried until another place
 *  is asked for.
 */
[[gnu::noinline, gnu::cold]] void move_thread(int place) noexcept {
    thread_state_t &state = thread_state;
    move_thread_quietly(place);
    state.started = true;
    // While affinity lines are shown, every region start checks whether its line changed.
    state.settled = !loaded_settings().display_affinity;
    if (!state.settled) display_affinity_if_changed();
}

/**
 *  Gives a team member's implicit task its place partition for the region published on `team`, and moves its thread
 *  to its place when that changed (a syscall only then: back-to-back regions of one binding move nobody). Every
 *  member, the master included, as it starts.
 */
[[gnu::always_inline]] inline void place_member(task_t &task, team_t const &team, unsigned thread) noexcept {
    team_t::placement_t const &placement = team.placement;
    thread_state_t const &state = thread_state;
    if (placement.bind == bind_false_k) [[likely]] {
        task.partition_first = placement.partition_first;
        task.partition_count = placement.partition_count;
        if (!state.settled) [[unlikely]]
            move_thread(-1);
        return;
    }
    member_place_t const chosen = member_place(placement, thread, team.header.size);
    task.partition_first = chosen.first;
    task.partition_count = chosen.count;
    if (chosen.place != state.wanted_place || !state.settled) [[unlikely]]
        move_thread(chosen.place);
}

/**  The binding of a region the encountering task `parent` opens with `GOMP_parallel`'s `flags` (the `proc_bind`
 *   clause in the low 3 bits, 0 without one): none while bind-var is false (the clause is then ignored) or there
 *   are no places; `true` binds as `close`, as libgomp does. */
int region_binding(task_t const &parent, unsigned flags) noexcept {
    if (parent.icv.bind == bind_false_k || places().places_count == 0) return bind_false_k;
    int const clause = static_cast<int>(flags & 7);
    int const bind = clause != bind_false_k ? clause : parent.icv.bind;
    return bind == bind_true_k ? bind_close_k : bind;
}

/**  Stores `value` into a header field only if it differs: an unchanged line stays shared in the members' caches. */
template <typename value_type_>
void update(value_type_ &field, value_type_ const &value) noexcept {
    if (!(field == value)) field = value;
}

/**  Fills the implicit task of a team member from the team header; `bind_implicit` has set it up for its thread. */
[[gnu::always_inline]] inline void init_implicit(task_t &task, team_t const &team) noexcept {
    team_t::header_t const &header = team.header;
    task.icv = header.icv;
    task.parent = header.parent;
    task.team_size = header.size;
    task.level = header.level;
    task.active_level = header.active_level;
    task.root_level = header.root_level;
    task.ws_next = header.ws_base;
    // Every member left every construct before the region's first: the pools' join ordered them before this.
    task.ws_floor = header.ws_base;
    // `ws` is set up by the first worksharing construct; only what `loop_leave` and the queries read is reset (the
    // task is the root's, so it holds the previous region's values).
    task.ws.slot = nullptr;
    task.ws.plain_cursor = nullptr;
    task.ws.open = false; // a member that left a cancelled region from inside a construct
    task.ws.loop.kind = loop_kind_t::static_k;
    task.ws.holds_chunk = false;
    task.ws.pending = false;
    task.ws.doacross_progress = nullptr;
}

/**  Whether a region's `proc_bind` clause (`flags`' low 3 bits) changes the bind-var its implicit tasks inherit
 *   from `parent`: while bind-var is not false, the clause becomes theirs, as in libgomp (a next entry of the
 *   `OMP_PROC_BIND` list, if any, still takes precedence: `child_icv`). */
bool clause_binds(task_t const &parent, unsigned flags) noexcept {
    int const clause = static_cast<int>(flags & 7);
    return clause != bind_false_k && parent.icv.bind != bind_false_k && parent.icv.bind != clause;
}

/**  The ICVs the implicit tasks of a region that `parent` opens with `flags` inherit: the `proc_bind` clause
 *   (`clause_binds`), then the next entries of the per-level lists. */
task_icv_t child_icv(task_t const &parent, unsigned flags) noexcept {
    settings_t const &s = loaded_settings();
    task_icv_t icv = parent.icv;
    if (clause_binds(parent, flags)) icv.bind = static_cast<int>(flags & 7);
    if (icv.nthreads_pos + 1 < s.nthreads_list_size) icv.nthreads = s.nthreads_list[++icv.nthreads_pos];
    if (icv.bind_pos + 1 < s.bind_list_size) icv.bind = s.bind_list[++icv.bind_pos];
    return icv;
}

/**  The thread limit of a region opened outside any active region: a `teams` region's, else thread-limit-var. */
unsigned outer_thread_limit() noexcept {
    int const teams_limit = teams_thread_limit();
    return teams_limit > 0 ? static_cast<unsigned>(teams_limit) : loaded_settings().thread_limit;
}

/**  How many threads a region asked for with `nthreads` (0 = nthreads-var) gets, per the specification's rules. */
[[gnu::always_inline]] inline unsigned team_size_for(task_t const &parent, unsigned nthreads) noexcept {
    settings_t const &s = loaded_settings();
    if (parent.active_level >= parent.icv.max_active_levels) return 1;
    unsigned size = nthreads ? nthreads : parent.icv.nthreads;
    // A nested region's limit is its contention group's (`take_threads`), which is this one where it started.
    if (unsigned const limit = outer_thread_limit(); size > limit) size = limit;
    if (parent.icv.dynamic && size > s.allowed_cores) size = s.allowed_cores;
    return size ? size : 1;
}

/**
 *  A nested region's share of its contention group: takes up to `size - 1` more threads from what the group's
 *  limit leaves, first come first served, and returns the team size that leaves (1 when nothing is left). Without
 *  a limit, nothing is counted and `size` stands.
 */
[[gnu::noinline]] unsigned take_threads(group_t &group, unsigned size) noexcept {
    if (group.limit == unlimited_threads_k) return size;
    unsigned busy = group.busy.load(std::memory_order_relaxed);
    unsigned taken;
    do {
        unsigned const left = group.limit > busy ? group.limit - busy : 0;
        taken = size - 1 < left ? size - 1 : left;
        if (taken == 0) return 1;
        // Relaxed: the count is all that is shared; the region's own publication orders everything else.
    } while (!group.busy.compare_exchange_weak(busy, busy + taken, std::memory_order_relaxed));
    return taken + 1;
}
/**  Hands back what `take_threads` took for a team of `taken + 1` threads. */
void give_back_threads(group_t *group, unsigned taken) noexcept {
    if (group && taken && group->limit != unlimited_threads_k) group->busy.fetch_sub(taken, std::memory_order_relaxed);
}

/**  Runs a region with a team of one: no root, no barrier, every worksharing construct on this thread alone. */
void run_serial(task_t &parent, unsigned flags, void (*fn)(void *), void *data, loop_shape_t const *loop,
                std::uint64_t const *sections) noexcept {
    task_t task;
    task.icv = child_icv(parent, flags);
    task.implicit = &task;
    task.parent = &parent;
    task.level = parent.level + 1;
    task.active_level = parent.active_level;
    task.root_level = parent.root_level;
    task.partition_first = parent.partition_first;
    task.partition_count = parent.partition_count;
    if (loop) loop_enter(task, *loop, nullptr, 0);
    if (sections) sections_enter(task, *sections, nullptr, 0);
    task_t *const saved = swap_current_task(&task);
    if (loaded_settings().display_affinity) [[unlikely]]
        display_affinity_if_changed();
    fn(data);
    if (tasks_incomplete()) [[unlikely]]
        finish_region_tasks(&task);
    swap_current_task(saved);
}

/**
 *  Claims a root of at least `size` threads and writes the team header; null when the region must run alone.
 *  `group`: the contention group of a nested region (null outside any active region: the root's own group, whose
 *  limit and count the region sets).
 */
[[gnu::always_inline]] inline root_t *prepare_team(task_t &parent, unsigned &size, void (*fn)(void *), void *data,
                                                   group_t *group, unsigned flags) noexcept {
    root_t *root = claim_root(parent.root_level);
    if (!root) return nullptr;
    settings_t const &s = loaded_settings();
    // A root's first spawn makes the threads of nthreads-var at once, unless the region is nested (whose roots
    // serve only nested regions) or that would pass the thread limit.
    unsigned const initial = s.initial.nthreads > size && !group ? s.initial.nthreads : size;
    unsigned const wanted = root->shape.threads ? size : (initial > s.thread_limit ? size : initial);
    unsigned const have = root->shape.threads >= wanted ? root->shape.threads : grow(*root, wanted);
    if (have < 2) return nullptr; // the root stays this thread's, to grow at its next region
    if (size > have) size = have;
    if (group) [[unlikely]] {
        update(root->shape.group, group);
    } else {
        update(root->shape.group, &root->group);
        // Counted only under a limit; the nested regions of this one read it after the publication.
        unsigned const limit = outer_thread_limit();
        update(root->group.limit, limit);
        if (limit != unlimited_threads_k) [[unlikely]]
            root->group.busy.store(size, std::memory_order_relaxed);
    }
    team_t::header_t &header = root->team.header;
    update(header.fn, fn);
    update(header.data, data);
    update(header.size, size);
    update(header.level, parent.level + 1);
    update(header.active_level, parent.active_level + 1);
    update(header.root_level, parent.root_level + 1);
    update(header.parent, &parent);
    // Without per-level lists or a binding clause (the usual case) the implicit tasks inherit the parent's ICVs as
    // they are.
    if ((s.nthreads_list_size | s.bind_list_size) > 1 || clause_binds(parent, flags)) [[unlikely]]
        update(header.icv, child_icv(parent, flags));
    else
        update(header.icv, parent.icv);
    update(header.ws_base, root->master.ws_next);
    team_t::placement_t &placement = root->team.placement;
    int const bind = region_binding(parent, flags);
    update(placement.bind, bind);
    if (bind == bind_false_k) [[likely]] {
        update(placement.partition_first, parent.partition_first);
        update(placement.partition_count, parent.partition_count);
    } else {
        auto const [first, count] = partition_of(parent);
        // A master bound nowhere in its partition (a thread's first region) starts from the partition's first place.
        int const here = thread_state.place;
        bool const inside = here >= 0 && static_cast<unsigned>(here) - first < count;
        update(placement.partition_first, first);
        update(placement.partition_count, count);
        update(placement.master_place, inside ? here : static_cast<int>(first));
    }
    // `header.root`, `cursors` and `capacity` change only where the root is made or grows. The wait policy depends
    // on the settings (fixed once read) and the process's team threads alone: derived again only when those change.
    if (unsigned const threads = process_threads(); root->master.policy_threads != threads) [[unlikely]] {
        root->master.policy_threads = threads;
        wait_policy_t const policy = wait_policy(threads);
        update(header.policy, policy);
        update(header.oversubscribed, policy.oversubscribed);
    }
    // A root that shared a `taskloop` ends its regions in a barrier, so members that finished early help with
    // later ones. An oversubscribed team's master waits for the members at a gate of its own (spin, then futex)
    // before the pools' join, whose waits spin: spinning there would keep a member that must still run off a core.
    update(header.end_barrier, root->master.taskloop_seen);
    update(header.end_gate, header.oversubscribed && !root->master.taskloop_seen);
    if (root->team.taskloop.seen.load(std::memory_order_relaxed))
        root->team.taskloop.seen.store(false, std::memory_order_relaxed);
    // Published to the members by the dispatch; only a gated region counts at the gate.
    if (header.end_gate) root->team.gate.done.store(0, std::memory_order_relaxed);
    return root;
}

/**  A combined construct: the team's first worksharing construct, which every member enters (`start_member`)
 *   before it runs the region's function. Before the publication. */
[[gnu::always_inline]] inline void prepare_first_construct(team_t &team, loop_shape_t const *loop,
                                                           std::uint64_t const *sections) noexcept {
    update(team.header.prepared, loop || sections);
    if (!loop && !sections) return;
    // Written only when changed, like the header: a loop run region after region leaves the line shared.
    update(team.prepared.is_sections, sections != nullptr);
    if (loop) update(team.prepared.loop, *loop);
    if (sections) update(team.prepared.sections, *sections);
}

/**  Sets up a team member's implicit task (bound to its thread) for the region published on `team`, in its first
 *   worksharing construct if the region is a combined one. Every member, the master included, after the
 *   publication. */
[[gnu::always_inline]] inline void start_member(task_t &task, team_t const &team) noexcept {
    init_implicit(task, team);
    if (!team.header.prepared) return;
    if (team.prepared.is_sections)
        sections_enter(task, team.prepared.sections, nullptr, 0);
    else
        loop_enter(task, team.prepared.loop, nullptr, 0);
}

/**
 *  The end of a cancelled region, after its join: its members skipped constructs (each stopped counting where it
 *  left for the region's end) and may have left barriers without completing them. The next region numbers its
 *  constructs after the furthest any member got, finds every slot free and every stealing cursor closed for them,
 *  and starts with no arrivals and the cancellation bit clear, the generation advanced past the cancelled one.
 */
[[gnu::noinline, gnu::cold]] void end_cancelled_region(root_t &root, task_t const &master) noexcept {
    team_t &team = root.team;
    std::uint32_t const generation = team.release.generation.load(std::memory_order_relaxed);
    if (!(generation & region_cancelled_k)) return;
    std::uint64_t next = master.ws_next;
    for (unsigned thread = 1; thread < team.header.size; ++thread)
        if (std::uint64_t const reached = root.shape.tasks[thread].task.ws_next; reached > next) next = reached;
    root.master.ws_next = next;
    reset_worksharing(team, next);
    // Relaxed: the next region's publication orders these before any member reads them.
    team.arrive.arrived.store(0, std::memory_order_relaxed);
    team.release.generation.store(generation - region_cancelled_k + barrier_step_k, std::memory_order_relaxed);
}

/**  Ends the region on `root`: remembers where the worksharing numbering stands. The root stays the thread's. */
[[gnu::always_inline]] inline void finish_team(root_t &root, task_t const &master) noexcept {
    root.master.ws_next = master.ws_next;
    if (root.team.taskloop.seen.load(std::memory_order_relaxed)) root.master.taskloop_seen = true;
    // Only with cancel-var true can a region have been cancelled: one load of a setting on the region's path.
    if (loaded_settings().cancellation) [[unlikely]]
        end_cancelled_region(root, master);
}

/**  Claims `root` for maintenance unless the calling thread holds it already (its own root, between regions). */
bool claim_for_maintenance(root_t &root, unsigned forks) noexcept {
    if (root.shape.forks != forks) return false;
    return holds(root) || root.try_claim();
}
/**  Ends `claim_for_maintenance`: frees the root unless it is the calling thread's own. */
void end_maintenance(root_t &root) noexcept {
    if (!holds(root)) root.release();
}

} // namespace

int current_place() noexcept {
    thread_state_t &state = thread_state;
    // The initial thread is bound to the first place before the first region, when binding is on (libgomp binds it
    // as it loads): bound here, at its first question, or by its first region (`place_member`).
    if (!state.started && state.wanted_place < 0 && loaded_settings().initial.bind != bind_false_k &&
        places().places_count != 0 && ::getpid() == static_cast<pid_t>(::syscall(SYS_gettid))) [[unlikely]]
        move_thread_quietly(0);
    return state.place;
}

unsigned resolve_team_size(unsigned nthreads) noexcept {
    return team_size_for(current_task(), nthreads);
}

group_t *group_of(task_t const &task) noexcept {
    for (task_t const *here = task.implicit; here; here = here->parent ? here->parent->implicit : nullptr)
        if (here->team) return here->team->header.root->shape.group;
    return nullptr;
}

unsigned thread_limit_of(task_t const &task) noexcept {
    if (group_t const *group = group_of(task)) return group->limit;
    int const teams_limit = teams_thread_limit();
    return teams_limit > 0 ? static_cast<unsigned>(teams_limit) : settings().thread_limit;
}

int pause_idle_roots() noexcept {
    // Inside any region, as libgomp: a running one's threads cannot be released, and an inactive one answers alike.
    if (inside_a_region(&current_task())) return -1;
    unsigned const forks = forks_.load(std::memory_order_relaxed);
    for (auto &slot : roots_) {
        root_t *root = slot.load(std::memory_order_acquire);
        if (!root) break; // roots are appended: none after the first empty entry
        // Free roots and the caller's own: another thread's root may be in a region, as libgomp's pools would be.
        if (!claim_for_maintenance(*root, forks)) continue;
        // The next region spawns the threads afresh; construct numbers and cursors carry on.
        stop_segments(*root, 0);
        process_threads_.fetch_sub(root->shape.threads, std::memory_order_relaxed);
        root->shape.threads = 0;
        end_maintenance(*root);
    }
    return 0;
}

void root_t::run_thread(std::size_t thread_index) noexcept {
    team_t::header_t const &header = team.header;
    unsigned const thread = static_cast<unsigned>(thread_index);
    if (thread >= header.size) return; // a thread of a larger team this region does not use
    task_t &task = shape.tasks[thread].task;
    start_member(task, team);
    current_task_pointer = &task;
    place_member(task, team, thread); // after: its affinity line reports the region's level
    header.fn(header.data);
    if (header.end_barrier) {
        // The tasks it runs meanwhile are the region's: its implicit task stays current. A cancelled region's members
        // return at once; the pools' join still waits for them.
        (void)team_barrier(team);
        current_task_pointer = nullptr;
        return;
    }
    current_task_pointer = nullptr;
    if (!header.end_gate) return;
    // Release pairs with the master's acquire: this member's writes are visible once the gate opens.
    team.gate.done.fetch_add(1, std::memory_order_release);
    team_notify(team);
}

namespace {

/**  The master's side of `end_gate`: every other member's `fn` has returned. */
void wait_at_gate(team_t &team) noexcept {
    std::uint32_t const others = team.header.size - 1;
    team_wait(team, [&]() noexcept { return team.gate.done.load(std::memory_order_acquire) == others; });
}

/**  Publishes the region to the segments it needs; exclusive pools start their workers at once. */
[[gnu::always_inline]] inline void publish_team(root_t &root) noexcept {
    unsigned const size = root.team.header.size;
    unsigned segment = 0;
    do { // the first segment holds team thread 1, and a team has two threads at least
        // Only the root's holder ever claims its pools (regions, growth, `omp_pause_resource`, the unload): a sole
        // claim, without the compare-and-swap that would first wait for the caller's stores of `.omp_data_o`, and
        // one no other thread can refuse.
        std::size_t const generation =
            root.shape.segments[segment]->unsafe_for_threads_sole(root.shape.member_fns[segment]);
        if (!generation) [[unlikely]]
            refuse("a parallel region", "a team's pool refused its dispatch");
        root.master.generations[segment] = generation;
    } while (++segment != root.shape.segments_count && root.shape.first[segment] + 1 < size);
    root.master.published = segment;
}

/**  The master's end of a region: the end barrier or gate, then the pools' joins. */
[[gnu::always_inline]] inline void join_team(root_t &root) noexcept {
    team_t &team = root.team;
    if (team.header.end_barrier) (void)team_barrier(team);
    if (team.header.end_gate) wait_at_gate(team);
    for (unsigned segment = 0; segment != root.master.published; ++segment)
        root.shape.segments[segment]->unsafe_join(root.master.generations[segment]);
    root.master.published = 0;
}

} // namespace

void run_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags, loop_shape_t const *loop,
                  std::uint64_t const *sections) noexcept {
    task_t &parent = current_task();
    unsigned size = team_size_for(parent, nthreads);
    group_t *group = nullptr;
    unsigned taken = 0; // threads taken from a nested region's group
    if (parent.active_level > 0 && size > 1) [[unlikely]] {
        group = group_of(parent); // never null at an active level
        size = group ? take_threads(*group, size) : size;
        taken = size - 1;
    }
    root_t *root = size > 1 ? prepare_team(parent, size, fn, data, group, flags) : nullptr;
    if (group) [[unlikely]] { // hand back what the team did not get (or will not hold once it ends)
        give_back_threads(group, root ? taken - (size - 1) : taken);
        taken = root ? size - 1 : 0;
    }
    if (!root) [[unlikely]]
        return run_serial(parent, flags, fn, data, loop, sections);

    unsigned const forks = forks_.load(std::memory_order_relaxed);
    team_t &team = root->team;
    // Only what the members read comes before the publication: the master sets up its own task while they start.
    prepare_first_construct(team, loop, sections);
    publish_team(*root);
    task_t &master = root->shape.tasks[0].task;
    start_member(master, team);
    current_task_pointer = &master; // `parent` was current
    place_member(master, team, 0);
    fn(data);
    // In a child forked during the region, the team's other threads stayed in the parent: do not wait for them.
    if (forks_.load(std::memory_order_relaxed) != forks) {
        current_task_pointer = &parent;
        return;
    }
    // The master's implicit task stays current: the tasks it runs meanwhile (a shared `taskloop`'s in the end
    // barrier, the region's incomplete tasks after the join) are the region's.
    join_team(*root);
    if (tasks_incomplete()) [[unlikely]]
        finish_region_tasks(&team);
    current_task_pointer = &parent;
    finish_team(*root, master);
    if (taken) [[unlikely]]
        give_back_threads(group, taken);
}

void start_parallel(void (*fn)(void *), void *data, unsigned nthreads, loop_shape_t const *loop,
                    std::uint64_t const *sections) noexcept {
    task_t &parent = current_task();
    unsigned size = team_size_for(parent, nthreads);
    group_t *group = nullptr;
    unsigned taken = 0;
    if (parent.active_level > 0 && size > 1) [[unlikely]] {
        group = group_of(parent); // never null at an active level
        size = group ? take_threads(*group, size) : size;
        taken = size - 1;
    }
    root_t *root = size > 1 ? prepare_team(parent, size, fn, data, group, 0) : nullptr; // no `proc_bind` here
    if (group) {
        give_back_threads(group, root ? taken - (size - 1) : taken);
        taken = root ? size - 1 : 0;
    }
    if (root) root->master.legacy_reserved = taken;
    auto *master = new (std::nothrow) task_t();
    if (!master) refuse("GOMP_parallel_start", "out of memory for the master's task");
    if (!root) {
        // A team of one: the task alone remembers the region; `end_parallel` finds no team in it.
        master->icv = child_icv(parent, 0); // `GOMP_parallel_start` has no `proc_bind`
        master->implicit = master;
        master->parent = &parent;
        master->level = parent.level + 1;
        master->active_level = parent.active_level;
        master->root_level = parent.root_level;
        if (loop) loop_enter(*master, *loop, nullptr, 0);
        if (sections) sections_enter(*master, *sections, nullptr, 0);
        swap_current_task(master);
        return;
    }
    team_t &team = root->team;
    prepare_first_construct(team, loop, sections);
    root->master.legacy_saved = &parent;
    root->master.legacy_forks = forks_.load(std::memory_order_relaxed);
    publish_team(*root);
    bind_implicit(*master, team, 0); // a task of its own, not the root's: bound here
    start_member(*master, team);
    swap_current_task(master);
    place_member(*master, team, 0);
}

void end_parallel() noexcept {
    task_t &master = current_task();
    team_t *team = master.team;
    if (!team) {
        if (tasks_incomplete()) [[unlikely]]
            finish_region_tasks(&master);
        swap_current_task(master.parent);
        delete &master;
        return;
    }
    root_t *root = team->header.root;
    // In a child forked during the region, the team's other threads stayed in the parent: do not wait for them.
    if (forks_.load(std::memory_order_relaxed) != root->master.legacy_forks) [[unlikely]] {
        swap_current_task(root->master.legacy_saved);
        delete &master;
        return;
    }
    join_team(*root); // the master's task stays current, as in `run_parallel`
    if (tasks_incomplete()) [[unlikely]]
        finish_region_tasks(team);
    swap_current_task(root->master.legacy_saved);
    finish_team(*root, master);
    give_back_threads(root->shape.group, root->master.legacy_reserved);
    root->master.legacy_reserved = 0;
    delete &master;
}

// ---- Load, exit and fork ----

namespace {

/**
 *  The `fork()` child's handler: the calling thread is the child's only one. Every lock of the runtime that another
 *  thread of the parent may have held at the fork is made free, since its holder does not exist here: the roots'
 *  and shapes' mutexes (creating a root; growing, pausing or re-tuning one),
 *  the `atomic` fallback lock and the affinity format's (held only around their own short copies), and an
 *  environment read another thread was in the middle of (read again), and the worksharing overflow lock of each team
 *  whose region the calling thread goes on with (`forget_worksharing_in_child`). The data they guard is the roots',
 *  which the child abandons, is written again, or stays usable at every step of a change (the overflow table). The unnamed and named `critical` sections and the `omp_*_lock`s are the
 *  program's: one held by another thread at the fork stays held in the child, as a POSIX mutex does.
 */
void forget_roots_in_child() noexcept {
    // The roots' pools have no threads here: abandon them (never destroy: that would join threads that do not
    // exist) and start afresh.
    for (auto &slot : roots_) slot.store(nullptr, std::memory_order_relaxed);
    forks_.fetch_add(1, std::memory_order_relaxed);
    process_threads_.store(0, std::memory_order_relaxed);
    new (&roots_mutex_) std::mutex();
    new (&shapes_mutex_) std::mutex();
    atomic_lock_.word.store(0, std::memory_order_relaxed);
    settings_instance_.affinity_format_lock.store(0, std::memory_order_relaxed);
    if (environment_state_.load(std::memory_order_relaxed) == 1) environment_state_.store(0, std::memory_order_relaxed);
    thread_state_t &state = thread_state;
    state.home = nullptr;
    for (unsigned level = 0; level != state.nested_capacity; ++level) state.nested[level] = nullptr;
    // The teams of the regions this thread was in: its region bodies go on in the child, alone.
    for (task_t *task = current_task_pointer; task; task = task->parent)
        if (task->team) forget_worksharing_in_child(*task->team);
}

__attribute__((constructor)) void load() noexcept {
    // Release pairs with the acquire in `claim_free_root`: a thread that sees the flag sees the key.
    keeper_key_ready_.store(::pthread_key_create(&keeper_key_, release_thread_roots) == 0, std::memory_order_release);
    (void)settings(); // reads the environment, unless an earlier OpenMP call did
    ::pthread_atfork(nullptr, nullptr, forget_roots_in_child);
}

__attribute__((destructor)) void unload() noexcept {
    // Stop the workers of every free root and of the calling thread's, so they do not spin through the process's
    // exit; a root another live thread holds (it may be in a region) is left running, its workers parked or soon,
    // and so are the calling thread's own when it exits from inside a region (`exit` in a region's body): their
    // regions are still running, and stopping a pool waits for its dispatch to end.
    bool const in_region = inside_a_region(current_task_pointer);
    for (auto &slot : roots_) {
        root_t *root = slot.load(std::memory_order_acquire);
        if (!root) break; // roots are appended: none after the first empty entry
        if (in_region && holds(*root)) continue;
        if (!claim_for_maintenance(*root, forks_.load(std::memory_order_relaxed))) continue;
        for (unsigned segment = 0; segment != root->shape.segments_count; ++segment)
            root->shape.segments[segment]->terminate();
    }
    // After the stopped workers ran it (each exits before `terminate` returns): threads that exit after an unload
    // (`dlclose`) must not call into unmapped code, so their roots stay held.
    if (keeper_key_ready_.exchange(false, std::memory_order_relaxed)) ::pthread_key_delete(keeper_key_);
}

} // namespace

} // namespace forkunion::gomp

// ---- Entry points: regions, barriers, critical sections ----

using namespace forkunion::gomp;

FORKUNION_GOMP_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags) {
    run_parallel(fn, data, nthreads, flags, nullptr, nullptr);
}

FORKUNION_GOMP_EXPORT void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads) {
    start_parallel(fn, data, nthreads, nullptr, nullptr);
}

FORKUNION_GOMP_EXPORT void GOMP_parallel_end(void) {
    end_parallel();
}

namespace {
/**  An explicit barrier (`GOMP_barrier`, `GOMP_barrier_cancel`): whether the region was cancelled. A cancelled region
 *   releases a plain barrier too (an orphaned one, say): its thread continues, rather than wait for members that
 *   left for the region's end. */
[[gnu::always_inline]] inline bool explicit_barrier() noexcept {
    task_t &task = *current_task().implicit;
    if (task.team) {
        if (task.ws.copy != copy_role_t::none_k) [[unlikely]] // the barrier after a `single copyprivate`
            return copyprivate_barrier(task);
        return team_barrier(*task.team);
    }
    if (tasks_incomplete()) [[unlikely]] // a team of one: its tasks complete here too
        finish_region_tasks(&task);
    task.ws.cancelled = no_ws_mark_k; // as `team_barrier` clears a team's
    return false;
}
} // namespace

FORKUNION_GOMP_EXPORT void GOMP_barrier(void) {
    (void)explicit_barrier();
}

FORKUNION_GOMP_EXPORT bool GOMP_barrier_cancel(void) {
    return explicit_barrier();
}

FORKUNION_GOMP_EXPORT void GOMP_critical_start(void) {
    program_lock(critical_lock_.word);
}
FORKUNION_GOMP_EXPORT void GOMP_critical_end(void) {
    mutex_unlock(critical_lock_.word);
}
FORKUNION_GOMP_EXPORT void GOMP_atomic_start(void) {
    program_lock(atomic_lock_.word);
}
FORKUNION_GOMP_EXPORT void GOMP_atomic_end(void) {
    mutex_unlock(atomic_lock_.word);
}

// A named `critical` hands us the address of a zero-initialized, pointer-sized common symbol per name: its first
// four bytes are the name's mutex, in place.
static_assert(sizeof(void *) >= sizeof(std::atomic<std::uint32_t>));
FORKUNION_GOMP_EXPORT void GOMP_critical_name_start(void **pointer) {
    program_lock(*reinterpret_cast<std::atomic<std::uint32_t> *>(pointer));
}
FORKUNION_GOMP_EXPORT void GOMP_critical_name_end(void **pointer) {
    mutex_unlock(*reinterpret_cast<std::atomic<std::uint32_t> *>(pointer));
}

// Cancellation: with cancel-var false (the default) a `cancel` construct does nothing and cancellation points
// never trigger, exactly as the specification prescribes. With `OMP_CANCELLATION=true`, `cancel for` and `cancel
// sections` mark the construct cancelled on the team: cancellation points in it then say so and no chunk or section
// is handed out any more. `cancel taskgroup` marks the innermost taskgroup: tasks created in it afterwards are
// discarded (a shared `taskloop`'s untaken tasks too) and its cancellation points say so. `cancel parallel` marks
// the region cancelled (`cancel_region`): its barriers release their members and report it, as do `cancellation
// point parallel`, the cancellable ends of loops and sections, and the taskgroup cancellation points of its tasks;
// GCC's code then jumps to the region's end. A team of one has nobody to tell: its `cancel parallel` just returns
// true. The region's end puts the team back in order for the next one (`end_cancelled_region`).
namespace {
constexpr int cancel_parallel_k = 1, cancel_loop_k = 2, cancel_sections_k = 4, cancel_taskgroup_k = 8;
} // namespace

FORKUNION_GOMP_EXPORT bool GOMP_cancellation_point(int which) {
    if (!settings().cancellation) return false;
    task_t const &task = *current_task().implicit;
    if (which & cancel_taskgroup_k) return taskgroup_cancelled() || (task.team && region_cancelled(*task.team));
    if (which & (cancel_loop_k | cancel_sections_k)) return ws_cancelled(task);
    if (which & cancel_parallel_k) return task.team && region_cancelled(*task.team);
    return false;
}

FORKUNION_GOMP_EXPORT bool GOMP_cancel(int which, bool do_cancel) {
    if (!settings().cancellation) return false;
    if (!do_cancel) return GOMP_cancellation_point(which); // `if(false)`: a cancellation point
    if (which & cancel_taskgroup_k) return cancel_taskgroup();
    task_t &task = *current_task().implicit;
    if (which & cancel_parallel_k) {
        if (task.team) cancel_region(*task.team);
        return true;
    }
    std::uint64_t const mark = ws_mark(task);
    if (team_t *team = task.team) {
        // Release pairs with the acquire in `ws_cancelled`; the construct's end barrier orders it for every member.
        team->taskloop.cancelled_ws.store(mark, std::memory_order_release);
        team_notify(*team); // members waiting for this construct's turn or slot see it at their next check
    } else {
        task.ws.cancelled = mark;
    }
    return true;
}
