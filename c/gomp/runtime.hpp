/**
 *  @file   c/gomp/runtime.hpp
 *  @brief  Internal types of `libforkunion_gomp.so`: settings (ICVs), tasks, teams, roots, worksharing slots.
 *
 *  Nothing here is public: every name has hidden visibility, and only the GOMP and `omp_*` entry points leave the
 *  library (see `libgomp.map`). The design, its invariants and what is refused are written down once, at the top
 *  of `runtime.cpp`; the comments here say what each field is for and who writes it.
 */
#pragma once
#include <atomic>      // `std::atomic`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint64_t`
#include <cstring>     // `std::memcmp`
#include <type_traits> // `std::has_unique_object_representations_v`

#include <forkunion/pools/flat.hpp>
#include <forkunion/base/types.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>

#define FORKUNION_GOMP_EXPORT extern "C" __attribute__((visibility("default")))
/**  Binds `name` to the default version `version` (`name@@version`): for names libgomp also exports in an older
 *   version, whose definition elsewhere is bound with `.symver` too (the version script lists both). */
#define FORKUNION_GOMP_DEFAULT_VERSION(name, version) __asm__(".symver " #name ", " #name "@@" version ", remove")

namespace forkunion::gomp {

using pool_t = flat_pool_t;
inline constexpr std::size_t line_k = default_alignment_k;

/**
 *  Worksharing slots per team, in a ring: construct `id` uses slot `id % ws_slots_k` unless a member reached it
 *  while that slot was still held by construct `id - ws_slots_k` or earlier (it ran that far ahead of the slowest
 *  member with `nowait`); then `id` takes a heap slot of its own (`team_t::overflow`), so no member ever waits for
 *  one that lags. Each ring slot costs three lines per root, plus one cursor line per team thread for the stealing
 *  schedule. Stealing loops take no slot: a member that far ahead drains its own block without publishing it (see
 *  `loop_enter`).
 */
inline constexpr std::uint64_t ws_slots_k = 8;

/**  Iterations (and chunk counts) at or above this take the exact, compare-and-swap schedules (see also
 *   `additive_claims`). */
inline constexpr std::uint64_t huge_space_k = std::uint64_t(1) << 56;

// ---- Settings: the internal control variables (ICVs) ----

/**  `omp_sched_t` values, as GCC's `omp.h` spells them, and the `monotonic` modifier bit. */
enum sched_kind_t : int {
    sched_static_k = 1,
    sched_dynamic_k = 2,
    sched_guided_k = 3,
    sched_auto_k = 4,
};
inline constexpr unsigned sched_monotonic_k = 0x80000000u;

/**  `omp_proc_bind_t` values. */
enum bind_kind_t : int {
    bind_false_k = 0,
    bind_true_k = 1,
    bind_primary_k = 2,
    bind_close_k = 3,
    bind_spread_k = 4,
};

/**
 *  The ICVs of one task's data environment: each task owns a copy, implicit tasks inherit their parent's. Five
 *  words with no padding (the spare bytes are a member), so two sets compare as bytes, a few wide loads: a region's
 *  master compares its team's copy with the one it would write, and writes only a changed one.
 */
struct task_icv_t {
    unsigned nthreads = 1;     ///< nthreads-var: the team size the next `parallel` asks for.
    unsigned nthreads_pos = 0; ///< Position of `nthreads` in the `OMP_NUM_THREADS` list.
    unsigned bind_pos = 0;     ///< Position of bind-var in the `OMP_PROC_BIND` list.
    int bind = bind_false_k;   ///< bind-var of the next `parallel`.
    int run_sched = sched_dynamic_k | static_cast<int>(0); ///< run-sched-var kind, with the monotonic bit.
    int run_chunk = 1;                                     ///< run-sched-var chunk (0 = the schedule's default).
    int default_device = 0;                                ///< default-device-var.
    bool dynamic = false;                                  ///< dyn-var.
    /**  max-active-levels-var: per task, as OpenMP 5 scopes it (data environment) and libgomp 12 keeps it; at most
     *   `supported_active_levels_k`, so one byte. */
    std::uint8_t max_active_levels = 1;
    bool spare[2] = {};                   ///< Unused, always zero: named, so not padding.
    std::uintptr_t default_allocator = 1; ///< def-allocator-var (`omp_default_mem_alloc`).

    bool operator==(task_icv_t const &other) const noexcept { return std::memcmp(this, &other, sizeof(other)) == 0; }
};
static_assert(sizeof(task_icv_t) == 5 * sizeof(std::uint64_t) && std::has_unique_object_representations_v<task_icv_t>,
              "every byte of the ICVs is a member: the byte-wise comparison sees all of them and nothing else");

/**
 *  Spins (pause-hint iterations) a wait makes before it sleeps, when neither `OMP_WAIT_POLICY` nor
 *  `GOMP_SPINCOUNT` says otherwise. A pause costs ~41 ns on AMD Zen 5 (measured: 10^7 of them in a loop) and ~40 ns
 *  on Intel cores since Skylake, so 2000 spins wait ~80 µs: more than a futex round trip on a 2-vCPU guest (tens of
 *  µs), so back-to-back constructs never sleep, yet a waiter gives its core back within a tenth of a millisecond.
 *  libgomp documents 300000 spins (12 ms at that pause cost); in practice it sleeps within ~20 µs here.
 */
inline constexpr std::uint64_t default_spin_count_k = 2000;

/**  target-offload-var (`OMP_TARGET_OFFLOAD`). With `mandatory`, a construct or device routine that names a device
 *   other than the host stops the program (`device_not_found`); the others run such a construct on the host. */
enum target_offload_t : std::uint8_t {
    target_offload_default_k = 0,
    target_offload_disabled_k = 1,
    target_offload_mandatory_k = 2,
};

/**  Process-wide settings, read from the environment once (`read_environment`) and changed by the setters. */
struct settings_t {
    task_icv_t initial;              ///< What every initial task starts with.
    unsigned nthreads_list[8] = {0}; ///< `OMP_NUM_THREADS` list; entry 0 is `initial.nthreads`.
    unsigned nthreads_list_size = 0;
    int bind_list[8] = {0}; ///< `OMP_PROC_BIND` list.
    unsigned bind_list_size = 0;
    unsigned thread_limit = 0x7fffffffu; ///< thread-limit-var; `unlimited_threads_k` when unset.
    bool cancellation = false;           ///< cancel-var.
    int max_task_priority = 0;
    std::size_t stack_bytes = 0; ///< `OMP_STACKSIZE`, 0 = the platform's default.
    /**  Stack a thread's nested undeferred tasks may use before a new task inside a region is deferred instead
     *   (`GOMP_task`): 256 KiB, or a quarter of a smaller `OMP_STACKSIZE`. */
    std::size_t task_stack_budget = std::size_t(256) << 10;
    /**  Largest data block a task keeps on the stack of the thread that runs it (larger ones go to the heap): 16 KiB,
     *   or half the budget when a small `OMP_STACKSIZE` makes that smaller. */
    std::size_t task_stack_block = std::size_t(16) << 10;
    bool stack_set = false;
    int wait_policy = 0;                             ///< -1 passive, 0 unset, 1 active.
    std::uint64_t spin_count = default_spin_count_k; ///< `GOMP_SPINCOUNT` or its default for the wait policy.
    bool spin_infinite = false;
    unsigned allowed_cores = 1; ///< Cores this process may run on, at load.
    target_offload_t target_offload = target_offload_default_k;
    // The device-wide ICVs the API may set from any thread, hence atomic (relaxed: each is one value).
    std::atomic<int> num_teams{0};          ///< nteams-var (`OMP_NUM_TEAMS`), 0 = unset.
    std::atomic<int> teams_thread_limit{0}; ///< teams-thread-limit-var, 0 = unset.
    bool display_affinity = false;
    /**  affinity-format-var; `affinity_format_lock` guards it against `omp_set_affinity_format` elsewhere. */
    char affinity_format[256] = "level %L thread %i affinity %A";
    std::atomic<std::uint32_t> affinity_format_lock{0};
};

/**  Deepest nesting of active regions that max-active-levels-var may allow: libgomp's 255. */
inline constexpr int supported_active_levels_k = 255;
static_assert(supported_active_levels_k <= UINT8_MAX, "task_icv_t::max_active_levels is one byte");

/**  thread-limit-var when neither `OMP_THREAD_LIMIT` nor a `teams` region sets it: no limit, nothing counted. */
inline constexpr unsigned unlimited_threads_k = 0x7fffffffu;

settings_t &settings() noexcept;

/**  Where a construct or device routine names a device that does not exist (any but the host, number 0, and the
 *   host fallback): with `OMP_TARGET_OFFLOAD=mandatory` the program stops, with exit status 1 and libgomp's words;
 *   otherwise this returns, and the construct runs on the host or the routine fails. Any thread. */
void device_not_found() noexcept;

/**  One place of `OMP_PLACES`: a run of CPU ids in `places_t::cpus`. */
struct place_t {
    unsigned first = 0;
    unsigned count = 0;
};

/**  The place list: parsed once at load; immutable afterwards, so any thread reads it without locks. */
struct places_t {
    unsigned *cpus = nullptr;
    place_t *places = nullptr;
    unsigned places_count = 0;
    unsigned cpus_count = 0;
};
places_t const &places() noexcept;

/**  Reads every supported `OMP_*` and `GOMP_*` variable into `s` and `places()`; `settings()` calls it once. */
void read_environment(settings_t &s) noexcept;
/**  Prints, once per process, the warnings `read_environment` kept (malformed variables) and the `OMP_DISPLAY_ENV`
 *   block: called from a thread's first OpenMP call that needs its task (`initial_task_slow`), so processes that
 *   only carry the library (wrappers under `LD_PRELOAD`) print nothing. Any thread; after `settings()`. */
void report_environment(settings_t const &s) noexcept;
/**  Prints `s` in the `OMP_DISPLAY_ENV` format to `stderr`. */
void display_environment(settings_t const &s, bool verbose) noexcept;
/**  Copies as much of the affinity format `format` into `destination` (of `size` bytes, terminated) as fits in
 *   whole directives, so a cut never leaves a directive that reads as malformed; returns the characters copied. */
std::size_t copy_affinity_format(char *destination, std::size_t size, char const *format) noexcept;

// ---- Synchronization helpers ----

/**
 *  Every thread-local variable of the runtime is constant-initialized and initial-exec: one `%fs`-relative access, no
 *  `__tls_get_addr` call and no TLS wrapper (a taskloop's task touches about twenty). The library's TLS block is then
 *  static (allocated at thread start, also for a `dlopen`ed copy, which must fit in the loader's surplus): keep it
 *  small.
 */
#define FORKUNION_GOMP_TLS __attribute__((tls_model("initial-exec")))

/**
 *  How waiting threads behave, derived from `OMP_WAIT_POLICY` and `GOMP_SPINCOUNT`: spin with the pause hint for
 *  `spins` iterations, then block in the kernel (a futex) until woken. Waits never `sched_yield`: on a loaded
 *  machine a yield hands the core to another process for a whole time slice (milliseconds, measured with strace
 *  on a 2-vCPU Zen 5 guest), while a futex wake-up preempts in favour of the woken thread.
 */
struct wait_policy_t {
    std::uint64_t spins = default_spin_count_k;
    bool oversubscribed = false;
    constexpr bool operator==(wait_policy_t const &) const noexcept = default;
};
wait_policy_t wait_policy(std::size_t threads) noexcept;

/**  One step of a spinning wait: the pause hint. */
inline void pause_once() noexcept {
    default_micro_yield_t pause;
    micro_yield_with(pause, 0u);
}

/**
 *  Inside a region under a wait policy whose count is 0 (`OMP_WAIT_POLICY=passive`), a member that waits for a
 *  partner (a barrier, a worksharing slot, an `ordered` turn) may spin for `passive_spins_k` pause hints (~10 µs at
 *  24 a µs) before it sleeps: a partner that arrives within it costs no kernel wake-up (a barrier 0.3-0.5 µs on a
 *  quiet 2-core host instead of ~11, as libgomp pays), which keeps such waits below the region start that the join
 *  spins through. It does so while at least 4 of its last 16 such waits (not counting those satisfied at once)
 *  ended within the window, and on every 16th wait regardless (a probe); otherwise it sleeps at once, as on a host
 *  where spinning holds the core the partner needs (other processes' threads runnable), and sleepers are the ones
 *  the scheduler favours. Per thread; none at all when the process's teams outnumber its cores, and for any other
 *  count the count is the window.
 */
inline constexpr std::uint32_t passive_spins_k = 240;
/**  The outcomes of the calling thread's last 16 full-window passive waits (bit set: ended while spinning), and a
 *   count of its passive waits. */
struct passive_waits_t {
    std::uint32_t history = 0xffff;
    std::uint32_t count = 0;
};
extern constinit thread_local passive_waits_t passive_waits FORKUNION_GOMP_TLS;

/**  The spins before sleeping of an in-region wait under `policy`; report how it ended with `in_region_waited`. */
inline std::uint64_t in_region_spins(wait_policy_t const &policy) noexcept {
    if (policy.spins || policy.oversubscribed) return policy.spins;
    passive_waits_t &w = passive_waits;
    bool const spin = __builtin_popcount(w.history & 0xffffu) >= 4 || (w.count & 15u) == 0;
    ++w.count;
    return spin ? passive_spins_k : 0;
}
/**  Records how an in-region wait that was given `spins` ended: while spinning (`slept` false) or asleep. */
inline void in_region_waited(wait_policy_t const &policy, std::uint64_t spins, bool slept) noexcept {
    if (policy.spins || policy.oversubscribed || spins == 0) return;
    passive_waits_t &w = passive_waits;
    w.history = (w.history << 1) | (slept ? 0u : 1u);
}

/**
 *  A 4-byte futex mutex: 0 free, 1 locked, 2 locked with sleepers. Fits `omp_lock_t`, the word a named `critical`
 *  gives us, and Fortran's 4-byte `omp_lock_kind`, in place.
 */
void mutex_lock(std::atomic<std::uint32_t> &word) noexcept;
/**  `mutex_lock` for the program's locks (`critical`, `atomic`'s fallback, `omp_*_lock`): a waiter that spins looks
 *   at the word less and less often, up to every 16 pause hints, which lets a holder of short sections keep the
 *   word's line (see `program_lock_gap_k`). */
void program_lock(std::atomic<std::uint32_t> &word) noexcept;
bool mutex_try_lock(std::atomic<std::uint32_t> &word) noexcept;
void mutex_unlock(std::atomic<std::uint32_t> &word) noexcept;

/**  Prints `forkunion gomp: <what> is not supported (<why>)` and aborts. Never returns. */
[[noreturn]] void refuse(char const *what, char const *why) noexcept;

/**  A 128-byte line holding one atomic word: a cursor nobody else writes next to. */
struct alignas(line_k) cursor_line_t {
    std::atomic<std::uint64_t> value{0};
};
static_assert(sizeof(cursor_line_t) == line_k);

/**
 *  Lines of a team's cursor table for `capacity` threads: `ws_slots_k` rows of stealing cursors (row `id %
 *  ws_slots_k` serves construct `id`, line `t` is thread `t`'s block), then one row of departure words (line `t`:
 *  one past the last worksharing construct thread `t` left, written only by `t`).
 */
constexpr std::size_t cursor_table_lines(std::size_t capacity) noexcept {
    return (ws_slots_k + 1) * capacity;
}

// ---- Tasks, teams and roots ----

struct team_t;
struct root_t;
struct ws_slot_t;

/**  Schedules of a worksharing loop, as each thread runs them. */
enum class loop_kind_t : std::uint8_t {
    static_k,   ///< Chunks fixed by the thread number; no shared state (but `ordered`'s turn).
    stealing_k, ///< Nonmonotonic dynamic: each thread drains its own block of chunks, then steals.
    shared_k,   ///< Monotonic dynamic (and `ordered`, sections): one shared chunk cursor.
    guided_k,   ///< Guided: one shared cursor, chunks shrinking with the iterations left.
};

/**  Ordered dimensions of a doacross loop (`ordered(n)`) we track; deeper nests are refused at the loop. */
inline constexpr unsigned max_doacross_dims_k = 8;

/**  A loop's shape in logical iterations `[0, n)`, and how to map them back to the user's iteration variable. Seven
 *   words with no padding (the spare bytes are a member), so two shapes compare as bytes, like `task_icv_t`. */
struct loop_shape_t {
    bool operator==(loop_shape_t const &other) const noexcept { return std::memcmp(this, &other, sizeof(other)) == 0; }
    std::uint64_t n = 0;              ///< Iterations.
    std::uint64_t chunk = 0;          ///< Chunk size, >= 1; 0 = one block per thread (`schedule(static)`).
    std::uint64_t start = 0;          ///< The variable's first value, as a bit pattern (signed or unsigned).
    std::uint64_t incr = 0;           ///< Its step, as a bit pattern (two's complement for down-counting loops).
    std::uint64_t end = 0;            ///< The loop's bound, returned as the end of the last chunk.
    std::uint64_t progress_words = 0; ///< Doacross loops: progress words the slot's first member allocates.
    loop_kind_t kind = loop_kind_t::static_k;
    bool ordered = false;
    std::uint8_t spare[6] = {}; ///< Unused, always zero: named, so not padding.
};
static_assert(sizeof(loop_shape_t) == 7 * sizeof(std::uint64_t) &&
                  std::has_unique_object_representations_v<loop_shape_t>,
              "every byte of a shape is a member: the byte-wise comparison sees all of them and nothing else");

/**
 *  Whether a shared cursor (`shared_k`, `guided_k`) of `shape` on a team of `size` may be claimed by `fetch_add`.
 *  After the cursor passes `n`, a member adds once more before it sees the loop dry, and one claim crossing `n` may
 *  overshoot; each adds at most `chunk + n / size + 1` (the most a guided claim takes). So the cursor stays below
 *  `3n + (size + 1) * (chunk + 1)`, under 2^62 with these bounds, and never wraps to hand out a chunk twice. Else the
 *  claims are exact (`claim_exact_slow`).
 */
constexpr bool additive_claims(loop_shape_t const &shape, unsigned size) noexcept {
    return shape.n < huge_space_k && shape.chunk < (std::uint64_t(1) << 61) / (std::uint64_t(size) + 1);
}

/**  A thread's part in the `single copyprivate` whose barrier it has yet to reach (`copyprivate_barrier`). */
enum class copy_role_t : std::uint8_t {
    none_k,
    writer_k, ///< Ran the body and published its variables' addresses: they must outlive every reader.
    reader_k, ///< Copies the writer's variables until it reaches the barrier.
};

/**  No construct's number: the value of a cancellation mark (`ws_state_t::cancelled`, `cancelled_ws`) while none is
 *   set. A `cancel for` or `cancel sections` lasts until the barrier at its construct's end, which clears it. */
constexpr std::uint64_t no_ws_mark_k = ~std::uint64_t(0);

/**
 *  What a thread remembers of the worksharing construct it is in. `loop_enter` sets every field the construct's
 *  schedule reads; the others keep stale values that nothing reads.
 */
struct ws_state_t {
    ws_slot_t *slot = nullptr; ///< The team slot, or null (static and stealing loops, a team of one).
    std::uint64_t id = 0;      ///< Worksharing construct number in this team.
    /**  The slot's cursor when a claim is one `fetch_add` of the chunk and nothing else: a monotonic dynamic loop (or
     *   `sections`) on a team, not `ordered`, cancel-var false, `additive_claims`. Else null. */
    std::atomic<std::uint64_t> *plain_cursor = nullptr;
    loop_shape_t loop;
    /**  Static: next chunk index; sections on a team of one: next section; stealing with an unpublished block: the
     *   next chunk of this thread's own block. */
    std::uint64_t next = 0;
    std::uint64_t first = 0; ///< The chunk handed out last: `[first, last)` logical iterations.
    std::uint64_t last = 0;
    // Stealing: the construct's cursor row, its tag (already shifted), and the block split of its chunks.
    cursor_line_t *row = nullptr;
    std::uint64_t tag = 0;
    std::uint64_t quotient = 0;  ///< Every thread's block has `quotient` chunks ...
    std::uint64_t remainder = 0; ///< ... plus one for threads below `remainder`.
    unsigned victim = 0;         ///< Stealing: the block being drained, and how many are left to visit.
    unsigned victims_left = 0;
    unsigned stride = 1;
    bool published = false;   ///< Stealing: this thread's block is behind its cursor (else it drains it alone).
    bool holds_chunk = false; ///< `[first, last)` is this thread's and not yet handed on (`ordered`).
    bool pending = false;     ///< Team of one: the whole loop is still to be handed out.
    bool open = false;        ///< Inside a loop or `sections` this thread entered (`loop_enter`), until it left.
    bool additive = false;    ///< Shared and guided cursors: `additive_claims` holds for the loop and its team.
    copy_role_t copy = copy_role_t::none_k;
    void *solo_memory = nullptr; ///< Team of one: the scratch memory `GOMP_loop_start` asked for.
    unsigned doacross_dims = 0;
    std::uint64_t doacross_counts[max_doacross_dims_k] = {}; ///< Up to `max_doacross_dims_k` dimensions' counts.
    /**  Every dimension's count: `doacross_counts`, or for deeper loops words after the progress words in the slot's
     *   memory (each member stores the same values there; read and written as relaxed atomics). */
    std::uint64_t *doacross_count_table = nullptr;
    std::atomic<std::uint64_t> *doacross_progress = nullptr; ///< The slot's progress words, one per chunk.
    /**  The number of this thread's construct when it was ended for it alone (cancel-var true; `ws_mark`): on a
     *   team of one by `cancel for` or `cancel sections`; on a team, by the cancellation of the region while the
     *   construct waited for a slot (the construct then hands this thread nothing; see `loop_enter`). No construct
     *   has the initial value. */
    std::uint64_t cancelled = no_ws_mark_k;
};

/**
 *  One task region on one thread: implicit (one per team thread, on that thread's stack) or explicit (`task`,
 *  run undeferred on the encountering thread's stack). `current_task()` is the innermost one.
 */
struct task_t {
    task_icv_t icv;
    team_t *team = nullptr;     ///< Null for a team of one (a serialized region, the initial task).
    task_t *implicit = nullptr; ///< This thread's implicit task at this level (itself, for implicit tasks).
    task_t *parent = nullptr;   ///< The task that encountered the region (ancestor queries).
    unsigned thread_num = 0;
    unsigned team_size = 1;
    int level = 0;        ///< Nesting of parallel regions, active or not.
    int active_level = 0; ///< Nesting of parallel regions with more than one thread.
    /**  The active regions this thread is in, counted across the `target` regions it runs (each of which starts
     *   again at level 0, as a device's initial task): the level its roots are claimed at (`claim_root`), so a
     *   region inside a `target` region never takes the root of a region around it. */
    int root_level = 0;
    bool in_final = false;
    /**  An explicit task that created a tracked task (`run_tracked_task`): its end walks the list of incomplete tasks
     *   to forget its children there (`forget_children`); other tasks' ends skip it. */
    bool tracked_children = false;
    /**  A task that runs a host `teams` region's bodies, or a `target` region: the state of its teams (a copy of
     *   `teams_state` that its thread keeps), which the threads of regions nested inside it find through their
     *   tasks' ancestors (`current_teams`). */
    struct teams_state_t *teams = nullptr;
    std::uint64_t ws_next = 0; ///< Implicit tasks: number of the next worksharing construct.
    /**  Implicit tasks: every member of the team has left every worksharing construct below this number, as far
     *   as this thread has seen (the region's first construct, then the members' departure words). */
    std::uint64_t ws_floor = 0;
    unsigned steal_stride = 1; ///< Implicit tasks: the coprime victim stride for a team of `stride_team` ...
    unsigned stride_team = 0;  ///< ... threads, derived again only when the team size changes.
    /**  place-partition-var: places `[partition_first, partition_first + partition_count)` of the place list;
     *   `partition_count` 0 is the whole list (the initial task's). A region's `spread` binding narrows its members'
     *   (`place_member`); explicit tasks and serialized regions take their encountering task's. */
    unsigned partition_first = 0;
    unsigned partition_count = 0;
    ws_state_t ws; ///< Implicit tasks: the construct in progress.
};

/**  The calling thread's innermost task, or null until its first OpenMP call: read it through `current_task`. */
extern constinit thread_local task_t *current_task_pointer FORKUNION_GOMP_TLS;
/**  Builds the calling thread's initial task (reading the environment first, if nothing has) and makes it current. */
[[gnu::noinline, gnu::cold]] task_t &initial_task_slow() noexcept;

/**  The calling thread's innermost task; never null (the thread's initial task outside any region). Once it has
 *   returned on a thread, the environment has been read (`initial_task_slow` reads it first). */
inline task_t &current_task() noexcept {
    task_t *const task = current_task_pointer;
    return task ? *task : initial_task_slow();
}
/**  Whether `task` runs inside a region, active or not, or inside a `target` region within one (which starts again
 *   at level 0, but whose `root_level` counts the active regions around it): its thread's roots may be running
 *   regions, and the region's end waits for its tasks. False for null (a thread that made no OpenMP call). */
inline bool inside_a_region(task_t const *task) noexcept {
    return task && (task->level != 0 || task->root_level != 0);
}
/**  `task`'s place partition as places `[first, first + count)` of the list, its count 0 (the whole list) resolved. */
struct partition_t {
    unsigned first = 0;
    unsigned count = 0;
};
inline partition_t partition_of(task_t const &task) noexcept {
    if (task.partition_count) return {task.partition_first, task.partition_count};
    return {0, places().places_count};
}

/**  Makes `task` the calling thread's innermost task and returns the one it replaces. */
inline task_t *swap_current_task(task_t *task) noexcept {
    task_t *const previous = &current_task();
    current_task_pointer = task;
    return previous;
}

/**
 *  One worksharing slot: a ring slot of `team_t::slots`, or an overflow slot on the heap (`team_t::overflow`).
 *
 *  A ring slot's `state` encodes `4 * id + {0 free, 1 initializing, 2 ready, 3 diverted}`. A slot free for `id` may
 *  be claimed by the first member that reaches any construct `id' >= id` with `id' = id (mod ws_slots_k)`, which
 *  initializes the shared fields and publishes `ready` with a release; the `team_size`-th member to leave frees it
 *  for `id' + ws_slots_k`. So a slot is never reused while any member is still inside the construct that holds it.
 *
 *  A member that reaches construct `c` while the slot is held (ready) by an earlier construct `h` does not wait: under
 *  the team's overflow lock it marks the slot `diverted` (a compare-and-swap that races with the last leaver's free)
 *  and raises `diverted` to `c`. Every construct of the slot's residue in `(h, diverted]` then runs in an overflow
 *  slot, found or made by its first member under that lock. The last member to leave `h` sees the mark (its
 *  compare-and-swap from `ready` fails), and under the lock frees the ring slot for `diverted + ws_slots_k`. So each
 *  construct is either in the ring or diverted, the same for every member: a member finds a construct of its residue in
 *  the ring only held by that construct (`ready` or `diverted`), and below the holder or in `(h, diverted]` only in
 *  overflow. An overflow slot is freed by its last leaver, or at a cancelled region's end (`reset_worksharing`).
 */
struct ws_slot_t {
    struct alignas(line_k) control_t {
        std::atomic<std::uint64_t> state{0};
        std::atomic<std::uint32_t> left{0}; ///< Members that left the construct; reset by the last one.
        bool overflow = false;              ///< A heap slot of `team_t::overflow`, for construct `id` only.
        /**  Ring slots marked `diverted`: the last construct of the slot's residue diverted to overflow. Overflow
         *   slots: their construct. Under the team's overflow lock. */
        std::uint64_t diverted = 0;
    } control;
    cursor_line_t cursor; ///< Shared chunk cursor (`shared_k`, `guided_k`, sections).
    struct alignas(line_k) shared_t {
        std::atomic<std::uint64_t> ordered_turn{0}; ///< First logical iteration whose chunk may run `ordered`.
        /**  `single copyprivate`: the winner's data (addresses of its variables, on its stack), or
         *   `withdrawn_copy_k` once a cancelled region let the winner leave. */
        std::atomic<void *> copy{nullptr};
        void *memory = nullptr; ///< Team-shared scratch of `GOMP_loop_start`'s `mem`.
        bool memory_owned = false;
        alignas(16) unsigned char inline_memory[64];
        /**  The copies of the construct's `reduction(task, ...)`: thread 0's to free once it entered the slot
         *   (`task_blocks_adopted`), else freed at the end of the cancelled region whose thread 0 never came. */
        void *task_blocks = nullptr;
        bool task_blocks_adopted = false;
        /**  `single copyprivate`: members that may read the winner's data and have not reached the barrier after. */
        std::atomic<std::uint32_t> copy_readers{0};
    } shared;
};
static_assert(sizeof(ws_slot_t) == 3 * line_k, "a slot is three padded lines");

/**  A `taskloop` whose tasks the encountering thread shares with team members waiting in a barrier. */
/**  A cancellation flag: `mask`'s bits of `word` (a taskgroup's `cancel taskgroup`, cancel-var true). */
struct flag_ref_t {
    std::atomic<std::uint64_t> *word = nullptr;
    std::uint64_t mask = 0;
};

struct shared_taskloop_t {
    void (*fn)(void *) = nullptr;
    void *data = nullptr;
    void (*cpyfn)(void *, void *) = nullptr;
    long arg_size = 0;
    long arg_align = 1;
    std::uint64_t start = 0, step = 0, end = 0, n = 0;
    std::uint64_t tasks = 0;                   ///< How many tasks the iterations are split into.
    std::uint64_t grain = 0;                   ///< Strict grain size, or 0: near-equal tasks ...
    std::uint64_t quotient = 0, remainder = 0; ///< ... of `n / tasks` iterations, one more for the first `n % tasks`.
    task_t const *encountering = nullptr;
    bool final = false;                   ///< Its tasks are final: the `final` clause's, or the encountering task's.
    std::uintptr_t *reductions = nullptr; ///< The task reductions visible where it was encountered (`in_reduction`).
    /**  The cancellation flag of the taskgroup its tasks belong to: with `nogroup`, the encountering task's
     *   innermost one (when there is one); otherwise the loop's own, `cancelled`. */
    flag_ref_t group;
    std::atomic<std::uint64_t> cancelled{0};
    /**  The taskgroup its tasks' incomplete (detached) descendants count in: the loop itself, or with `nogroup`
     *   the encountering task's innermost taskgroup (`taskgroup_key` there). */
    void const *taskgroup_key = nullptr;
    alignas(line_k) std::atomic<std::uint64_t> next_task{0};
    alignas(line_k) std::atomic<std::uint64_t> done_tasks{0};
};

/**
 *  The team of a region with more than one thread. Lives in its root, so it persists across regions: worksharing
 *  construct numbers continue from region to region (`ws_base`), and the slots need no reset between regions but
 *  after a cancelled one (`reset_worksharing`).
 */
struct team_t {
    /**
     *  Written by the master before the region is published, read-only while it runs: one line that every member
     *  reads first. The master writes a field only when its value changes (`update`), so back-to-back regions of
     *  one shape leave the line shared in every member's cache instead of moving it once per region.
     */
    struct alignas(line_k) header_t {
        void (*fn)(void *) = nullptr;
        void *data = nullptr;
        task_t *parent = nullptr;
        root_t *root = nullptr;           ///< The root this team belongs to.
        cursor_line_t *cursors = nullptr; ///< `cursor_table_lines(capacity)` lines: cursors, then departures.
        std::uint64_t ws_base = 0;        ///< Number of the region's first worksharing construct.
        wait_policy_t policy;
        task_icv_t icv; ///< What the implicit tasks inherit.
        unsigned size = 0;
        unsigned capacity = 0; ///< Threads the cursor table has lines for.
        int level = 0;
        int active_level = 0;
        int root_level = 0;       ///< The members' `task_t::root_level`.
        bool prepared = false;    ///< A combined construct: the first worksharing construct is set up.
        bool end_barrier = false; ///< Members meet in a barrier (helping `taskloop`s) before the join.
        bool end_gate = false;    ///< The master waits for the members' `fn` to return, spin then futex.
        bool oversubscribed = false;
    } header;
    static_assert(sizeof(header_t) == line_k, "the header is one line");

    /**  A combined construct's first worksharing construct: read only when `header.prepared`. */
    struct alignas(line_k) prepared_t {
        loop_shape_t loop;
        std::uint64_t sections = 0;
        bool is_sections = false;
    } prepared;

    struct alignas(line_k) arrive_t {
        std::atomic<std::uint32_t> arrived{0};
    } arrive;
    /**  The barrier's generation word: advanced by `barrier_step_k` when a barrier completes, with
     *   `region_cancelled_k` set while the current region is cancelled (`cancel parallel`; see `team_barrier`). */
    struct alignas(line_k) release_t {
        std::atomic<std::uint32_t> generation{0};
        std::atomic<std::uint32_t> sleepers{0};
    } release;
    /**  The region's thread affinity, written by the master before the publication (only what changed) and read by
     *   every member as it starts (`place_member`): the policy (`bind_false_k` when nothing is bound: bind-var false,
     *   or no places), the master's place, and the partition the members' places are taken from (the encountering
     *   task's, its count resolved). */
    struct alignas(line_k) placement_t {
        int bind = bind_false_k;
        int master_place = 0;
        unsigned partition_first = 0;
        unsigned partition_count = 0;
    } placement;
    /**  Where members sleep when a wait outlasts the spin count: every state change such a wait watches rings it. */
    struct alignas(line_k) doorbell_t {
        std::atomic<std::uint32_t> rings{0};
        std::atomic<std::uint32_t> sleepers{0};
    } doorbell;
    struct alignas(line_k) gate_t {
        std::atomic<std::uint32_t> done{0}; ///< Members other than the master whose `fn` returned (`end_gate`).
    } gate;
    struct alignas(line_k) taskloop_line_t {
        std::atomic<shared_taskloop_t *> current{nullptr};
        std::atomic<std::uint32_t> helpers{0};
        std::atomic<bool> seen{false}; ///< A `taskloop` was shared in this region: later regions end in a barrier.
        /**  The number (`ws_mark`) of the construct a `cancel for` or `cancel sections` ended (cancel-var true), or
         *   `no_ws_mark_k`: set by the canceller, cleared by the barrier at the construct's end (`team_barrier`) or
         *   by a cancelled region's end (`reset_worksharing`). On a line the region's path only reads. */
        std::atomic<std::uint64_t> cancelled_ws{no_ws_mark_k};
        /**  Task-reduction copies thread 0 combined in a cancelled region, freed at its end (`reset_worksharing`):
         *   written by thread 0 only (`free_combined_blocks`), read after the join. */
        void **deferred_blocks = nullptr;
        std::uint32_t deferred_count = 0, deferred_capacity = 0;
    } taskloop;
    /**  One past the number of the last `single` (without `copyprivate`) a member won: a member wins `single` `id`
     *   when it raises this from at most `id` to `id + 1` (`GOMP_single_start`). Every member meets the constructs
     *   in the same order and numbers only grow on a team, so the first to arrive at each wins, with no slot: a
     *   member may run any number of `single nowait`s ahead of one that lags. */
    struct alignas(line_k) single_line_t {
        std::atomic<std::uint64_t> won{0};
    } single;
    ws_slot_t slots[ws_slots_k];
    /**  The overflow slots of constructs diverted from the ring (see `ws_slot_t`): a table keyed by construct number
     *   (open addressing, at most half full), and the lock that orders every diversion, lookup, insertion, removal
     *   and ring free after a diversion. Taken only on a construct some member reached a ring's length ahead (and by
     *   such a construct's last leaver).
     *
     *   A `fork()` child may find the lock held and the table in the middle of a change by a thread left in the
     *   parent (`forget_roots_in_child` frees the lock). So every change keeps each present slot findable at every
     *   step of its stores, in program order: a grown table is filled before it replaces the old one in one store,
     *   `used` counts an insertion before its entry is stored, and a removal moves entries back over the removed one
     *   before it clears the last hole. */
    struct alignas(line_k) overflow_line_t {
        std::atomic<std::uint32_t> lock{0};
        /**  A header, then `mask + 1` (a power of two) entries in the same allocation; null until the first
         *   diversion. */
        struct table_t {
            std::uint64_t mask = 0;
            ws_slot_t **entries() noexcept { return reinterpret_cast<ws_slot_t **>(this + 1); }
        };
        std::atomic<table_t *> table{nullptr};
        std::atomic<std::uint64_t> used{0};
    } overflow;

    team_t() noexcept {
        for (std::uint64_t slot = 0; slot != ws_slots_k; ++slot)
            slots[slot].control.state.store(slot * 4, std::memory_order_relaxed); // free for construct `slot`
    }
    ~team_t() { std::free(overflow.table.load(std::memory_order_relaxed)); }
    team_t(team_t const &) = delete;
    team_t &operator=(team_t const &) = delete;
};

/**  The host `teams` region the calling thread runs: its team number, how many teams there are, and their thread
 *   limit (0 none). Outside a `teams` region: team 0 of 1, no limit. */
struct teams_state_t {
    int number = 0;
    int count = 1;
    int thread_limit = 0;
};
/**  The calling thread's `teams` state. Initial-exec and constant-initialized, like `current_task_pointer`: every
 *   region reads the thread limit, with one `%fs`-relative load. */
extern constinit thread_local teams_state_t teams_state FORKUNION_GOMP_TLS;
/**  The `teams` region the calling thread's current task is in: the nearest ancestor task (across the threads of
 *   nested regions) that runs one, else the thread's own state (team 0 of 1 outside any). For the queries. */
teams_state_t const &current_teams() noexcept;
inline int teams_number() noexcept {
    return current_teams().number;
}
inline int teams_count() noexcept {
    return current_teams().count;
}
inline int teams_thread_limit() noexcept {
    return teams_state.thread_limit;
}

/**  Wakes the members sleeping on the team's doorbell, if any: call after every change a `team_wait` may watch. */
inline void team_notify(team_t &team) noexcept {
    // Seq_cst with the sleeper's seq_cst increment and re-check: either it sees the change, or we see it.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (team.doorbell.sleepers.load(std::memory_order_seq_cst) == 0) return;
    team.doorbell.rings.fetch_add(1, std::memory_order_seq_cst);
    kernel_wake_all(team.doorbell.rings);
}

/**
 *  Waits until `ready()`: spins with the pause hint for `in_region_spins` of the team's policy, then sleeps on the
 *  doorbell, re-checking after every ring. `ready` must read with acquire what the notifier published with release.
 */
template <typename ready_fn_type_>
void team_wait(team_t &team, ready_fn_type_ &&ready) noexcept {
    if (ready()) return; // satisfied at once: says nothing about whether spinning pays
    wait_policy_t const policy = team.header.policy;
    std::uint64_t const spins = in_region_spins(policy);
    for (std::uint64_t spin = 0; spin < spins; ++spin) {
        pause_once();
        if (ready()) return in_region_waited(policy, spins, false);
    }
    if (!ready()) in_region_waited(policy, spins, true);
    while (!ready()) {
        team.doorbell.sleepers.fetch_add(1, std::memory_order_seq_cst);
        std::uint32_t const rings = team.doorbell.rings.load(std::memory_order_seq_cst);
        if (!ready()) kernel_wait(team.doorbell.rings, rings, 0);
        team.doorbell.sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
}

/**  The generation word's bit that says the team's current region is cancelled; completed barriers advance the
 *   word by `barrier_step_k`, which leaves the bit as it is. */
inline constexpr std::uint32_t region_cancelled_k = 1;
inline constexpr std::uint32_t barrier_step_k = 2;

/**  Whether the region running on `team` was cancelled (`cancel parallel`, cancel-var true). Any member, any time;
 *   acquire pairs with the release of `cancel_region`. */
inline bool region_cancelled(team_t const &team) noexcept {
    return (team.release.generation.load(std::memory_order_acquire) & region_cancelled_k) != 0;
}

/**
 *  Blocks until every member of `team` arrived, each once the region's incomplete tasks completed (see
 *  `finish_region_tasks_unless_cancelled`); waiting members help with a shared `taskloop`. Returns false then, and
 *  true, at once or as soon as it happens, when the region is cancelled. A member released that way has arrived
 *  without completing the barrier; a member that sees the cancellation does not arrive; so after a cancellation at
 *  most the members that read the generation before it arrive, once each, and the canceller is not among them: the
 *  count stays below the team size, no barrier completes, and the region's end resets it (`end_cancelled_region`).
 */
bool team_barrier(team_t &team) noexcept;

/**
 *  `cancel parallel`: marks the region running on `team` cancelled, releases the members waiting in its barriers and
 *  wakes those in any other wait of the team (each re-checks `region_cancelled`). Any member; idempotent.
 */
void cancel_region(team_t &team) noexcept;

/**
 *  `team_wait` that also ends when the region is cancelled: true when `ready()`, false when the wait was given up
 *  because the member it waits for may have left for the region's end and never come.
 */
template <typename ready_fn_type_>
bool team_wait_unless_cancelled(team_t &team, ready_fn_type_ &&ready) noexcept {
    bool ready_seen = true;
    team_wait(team, [&]() noexcept {
        if (ready()) return true;
        if (!region_cancelled(team)) return false;
        ready_seen = false;
        return true;
    });
    return ready_seen;
}

// ---- Incomplete tasks: detached ones, and those deferred until the tasks they depend on complete (tasks.cpp) ----

/**  Tasks of the process that are not complete although the thread that met them has moved on: a detached task whose
 *   event is unfulfilled or whose body still runs, a task deferred because it depends on such a task, and a task
 *   deferred for its thread's stack. Zero unless the program uses `detach` or nests tasks deep: every wait reads it
 *   first (acquire: a task completed by another thread is visible). */
extern std::atomic<std::uint64_t> incomplete_tasks;
inline bool tasks_incomplete() noexcept {
    return incomplete_tasks.load(std::memory_order_acquire) != 0;
}
/**  Deferred tasks that could start now (nothing left to wait for) and no thread has taken: what a member waiting in
 *   a barrier looks at before it takes the lock to run one (`run_ready_region_task`). Changed under the lock. */
extern std::atomic<std::uint64_t> ready_tasks;
/**  Set once the process deferred a task: from then on, a member sleeping in a barrier wakes every millisecond to
 *   look for ready ones, besides being woken when one becomes ready (a wake-up that can be missed: it does not
 *   change the word the member sleeps on). Relaxed: a late look only delays. */
extern std::atomic<bool> tasks_deferred_once;
/**  Runs one deferred task of `team`'s region that is ready, if any; true if it ran one. For a member that has
 *   arrived at a barrier (the barrier cannot complete while the task is incomplete). Any member. */
bool run_ready_region_task(team_t const &team) noexcept;
/**  Returns once every incomplete task of `region` (its team, or the implicit task of a team of one) completed,
 *   running those of its deferred tasks that became ready, as tasks of the calling thread's current task. A team of
 *   one's barriers call it, and every region's end after the join; a team's barriers call the variant below before
 *   arriving. Any team thread. */
void finish_region_tasks(void const *region) noexcept;
/**  `finish_region_tasks` for a barrier of `team`'s region: false, at once or as soon as it happens, when the region
 *   is cancelled (its end, after the join, waits for the tasks instead). Any member. */
bool finish_region_tasks_unless_cancelled(team_t const &team) noexcept;
/**  Wakes the threads waiting for incomplete tasks, to re-check what they wait for (`cancel_region`). Any thread. */
void wake_task_waiters() noexcept;
/**  Runs tasks of the `taskloop` published on `team`, if any; true if it ran one. */
bool help_taskloop(team_t &team) noexcept;

// ---- Worksharing (worksharing.cpp) ----

/**  Sets up `task`'s state for construct `task.ws_next` as a loop of `shape` (entering the slot if it needs one). */
void loop_enter(task_t &task, loop_shape_t const &shape, void **memory, std::uint64_t memory_bytes,
                std::uintptr_t *reductions = nullptr) noexcept;
/**  Whether the calling thread's innermost taskgroup (the one a task created now belongs to) was cancelled; an
 *   enclosing taskgroup's cancellation does not count, as in libgomp. */
bool taskgroup_cancelled() noexcept;
/**  `cancel taskgroup`: cancels the calling thread's innermost taskgroup; false when there is none. */
bool cancel_taskgroup() noexcept;
/**  Whether the calling thread's current worksharing construct was cancelled (`cancel for`, `cancel sections`). */
bool ws_cancelled(task_t const &task) noexcept;
/**  The number of the loop or `sections` construct the calling implicit task is in, as `cancel for` marks it: the
 *   one it entered, or, in a `schedule(static)` loop GCC runs without entering it here, the number that loop's end
 *   takes (`loop_leave`). Distinct for every construct of a team, so a mark never outlives its construct. */
std::uint64_t ws_mark(task_t const &task) noexcept;
/**  Hands out the next chunk as logical iterations; false when the loop has none left for this thread. */
bool loop_next_logical(task_t &task, std::uint64_t &first, std::uint64_t &last) noexcept;
/**  Leaves the loop (handing on the ordered turn) and, with `barrier`, waits for the team; true when that barrier
 *   found the region cancelled (`team_barrier`). */
bool loop_leave(task_t &task, bool barrier) noexcept;
/**  After a cancelled region's join (no member touches the team): frees every worksharing slot for the constructs
 *   from `next` on and closes every stealing cursor, whatever constructs the members skipped. */
void reset_worksharing(team_t &team, std::uint64_t next) noexcept;
/**  In a `fork()` child, for a team whose region the child's thread goes on with alone: frees the overflow lock a
 *   thread left in the parent may hold, and makes a ring slot such a thread was initializing free again for its
 *   construct (nobody could enter it, so nothing of it ran). */
void forget_worksharing_in_child(team_t &team) noexcept;
void sections_enter(task_t &task, std::uint64_t count, void **memory, std::uint64_t memory_bytes,
                    std::uintptr_t *reductions = nullptr) noexcept;

// ---- Task reductions (tasks.cpp) ----

/**
 *  A worksharing construct's `reduction(task, ...)` on the first member to reach it (or a team of one): opens the
 *  construct's taskgroup and gives `data` zeroed private copies for `threads` threads, in one heap block that it
 *  returns (the address of `data`'s first array's copies). With `owner`, this thread frees the block when it ends
 *  the taskgroup (`GOMP_workshare_task_reduction_unregister`): thread 0 of a team, which combines the copies, or a
 *  thread whose copies are its own.
 */
void *enter_task_reductions(std::uintptr_t *data, unsigned threads, bool owner) noexcept;
/**  The same on every other member: opens its taskgroup and points its own `data` at the copies in `blocks`, which
 *   `enter_task_reductions` returned to the first member for the same clauses and `threads`. */
void follow_task_reductions(std::uintptr_t *data, void *blocks, unsigned threads, bool owner) noexcept;
/**
 *  The barrier GCC emits after a `single copyprivate`, for a thread in `copy_role_t` other than none (its callers
 *  check that): a reader says it is done copying, then meets the team; the writer meets the team and, when the
 *  region was cancelled (the barrier then releases at once), withdraws its data from members still to come and
 *  waits for those already reading, so that its variables outlive every read. Returns `team_barrier`'s answer.
 */
bool copyprivate_barrier(task_t &task) noexcept;
/**  Frees the task-reduction copies `blocks` that thread 0 of `team` combined, or, when the region is cancelled,
 *   keeps them for `reset_worksharing` at its end: no barrier then separates thread 0 from members still on their
 *   way into the construct, or still waiting for their tasks that use the copies. (The cancellable end of a
 *   construct reports the region's cancellation alone: a cancelled construct's barrier still completes.) Thread 0
 *   only. */
void free_combined_blocks(team_t &team, void *blocks) noexcept;
/**  Sets up a fresh cursor table of `capacity` threads: every cursor closed, every departure word 0. */
void reset_cursor_table(cursor_line_t *cursors, std::size_t capacity) noexcept;

/**  Builds the shape of a loop over `long` or `unsigned long long` iterations, for schedule `kind`. */
loop_shape_t signed_shape(long start, long end, long incr, long chunk, loop_kind_t kind, bool ordered) noexcept;
loop_shape_t unsigned_shape(bool up, unsigned long long start, unsigned long long end, unsigned long long incr,
                            unsigned long long chunk, loop_kind_t kind, bool ordered) noexcept;
/**  The kind and chunk that a `schedule(runtime)` loop takes from the task's run-sched-var. */
loop_kind_t runtime_kind(task_t const &task, bool monotonic, bool ordered, long &chunk) noexcept;

// ---- Regions (runtime.cpp) ----

struct group_t;
/**  The contention group `task` belongs to: that of the innermost active region around it; null outside any. */
group_t *group_of(task_t const &task) noexcept;
/**  thread-limit-var as `task` sees it: its contention group's limit; outside any active region, the `teams`
 *   region's `thread_limit`, else `OMP_THREAD_LIMIT`. */
unsigned thread_limit_of(task_t const &task) noexcept;

/**  The team size a region asking for `nthreads` (0 = nthreads-var) at the calling thread's level would get at
 *   most (its thread limit and resources may give it fewer). */
unsigned resolve_team_size(unsigned nthreads) noexcept;
/**  A `parallel` region: resolves the team size and runs `fn(data)` on every member. `loop` or `sections`, when not
 *   null, is a combined construct's first worksharing construct, entered by every member before `fn` runs. */
void run_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags, loop_shape_t const *loop,
                  std::uint64_t const *sections) noexcept;
/**  `GOMP_parallel_start`: starts the team; the caller then runs `fn(data)` itself and calls `end_parallel`. */
void start_parallel(void (*fn)(void *), void *data, unsigned nthreads, loop_shape_t const *loop,
                    std::uint64_t const *sections) noexcept;
void end_parallel() noexcept;

} // namespace forkunion::gomp
