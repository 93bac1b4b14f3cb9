/**
 *  @file   c/gomp/tasks.cpp
 *  @brief  Explicit tasks (run undeferred), `taskloop` (shared with the team), `taskgroup`, task reductions, host
 *          `teams`, and `target` regions on the host.
 *
 *  Every task runs at its construct, on the encountering thread: the specification allows any task to be
 *  undeferred, and this schedule satisfies every `depend` clause (sibling tasks run in the order they are created),
 *  so `taskwait`, `taskwait depend`, `taskgroup` and `taskyield` have nothing left to wait for. A task still gets its
 *  own data environment (ICVs, `omp_in_final`), and its data block is copied (or built by GCC's copy function)
 *  before it runs, as a deferred task's would be. Three exceptions: a detached task completes only once its event is
 *  fulfilled too, a task that depends on an incomplete one is deferred until it completes, and inside a region a
 *  task created while its thread's nested tasks hold more stack than `task_stack_budget`, or while less than that is
 *  left, is deferred, so a chain of tasks that each create the next cannot exhaust the stack; the waits and barriers
 *  then wait for them (see "Incomplete tasks" below).
 *
 *  A `taskloop` splits its iterations into tasks as its clauses say and shares them with the team: the encountering
 *  thread publishes it on the team (`team_t::taskloop`) and takes tasks from an atomic counter, in batches
 *  (`drain_taskloop`), each batch run in one task frame (`run_taskloop_tasks`); members waiting in a barrier (regions
 *  on a root that has shared a `taskloop` before end in one) take tasks from the same counter (`help_taskloop`).
 *  Every task takes the encountering task's ICVs, whichever thread runs it. The encountering thread returns once
 *  every task has finished and every helper has let go.
 *  One `taskloop` is shared per team at a time; another one started meanwhile runs on its encountering thread alone.
 */
#include "omp_api.hpp"
#include "runtime.hpp"

#include <climits> // `INT_MAX`
#include <cstdio>  // `std::fprintf`
#include <cstdlib> // `std::aligned_alloc`
#include <cstring> // `std::memcpy`
#include <new>     // `std::nothrow`

#include <pthread.h> // `pthread_atfork`

namespace forkunion::gomp {

alignas(line_k) std::atomic<std::uint64_t> incomplete_tasks{0};
alignas(line_k) std::atomic<std::uint64_t> ready_tasks{0};
std::atomic<bool> tasks_deferred_once{false};

namespace {

// `GOMP_task` and `GOMP_taskloop` flag bits, as GCC 12 emits them.
constexpr unsigned task_final_k = 2;
constexpr unsigned task_depend_k = 8;
constexpr unsigned task_up_k = 256;
constexpr unsigned task_grainsize_k = 512;
constexpr unsigned task_if_k = 1024;
constexpr unsigned task_nogroup_k = 2048;
constexpr unsigned task_reduction_k = 4096;
constexpr unsigned task_detach_k = 8192;
constexpr unsigned task_strict_k = 16384;

/**  The frame of the outermost task the calling thread runs (0: none): how deep its nested undeferred tasks went is
 *   measured from there (`task_stack_used`). */
constinit thread_local std::uintptr_t task_stack_top FORKUNION_GOMP_TLS = 0;

/**  Marks the calling frame as the outermost task frame of the thread, unless one is already marked; unmarks it at
 *   its end (a return, or a `pthread_exit` unwinding through it). */
struct task_stack_mark_t {
    bool const outermost = task_stack_top == 0;
    task_stack_mark_t() noexcept {
        if (outermost) task_stack_top = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    }
    ~task_stack_mark_t() {
        if (outermost) task_stack_top = 0;
    }
    task_stack_mark_t(task_stack_mark_t const &) = delete;
    task_stack_mark_t &operator=(task_stack_mark_t const &) = delete;
};

/**  Stack the calling thread's running tasks use below the outermost one's frame (0 outside any task). */
[[gnu::always_inline]] inline std::uintptr_t task_stack_used() noexcept {
    std::uintptr_t const top = task_stack_top;
    std::uintptr_t const here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    return top > here ? top - here : 0;
}

/**  The lowest address of the calling thread's stack, 0 when unknown (a thread the C library did not start), or 1
 *   until read (`read_stack_low`). */
constinit thread_local std::uintptr_t task_stack_low FORKUNION_GOMP_TLS = 1;

[[gnu::noinline, gnu::cold]] std::uintptr_t read_stack_low() noexcept {
    std::uintptr_t low = 0;
    pthread_attr_t attributes;
    if (::pthread_getattr_np(::pthread_self(), &attributes) == 0) {
        void *address = nullptr;
        std::size_t size = 0;
        if (::pthread_attr_getstack(&attributes, &address, &size) == 0) low = reinterpret_cast<std::uintptr_t>(address);
        ::pthread_attr_destroy(&attributes);
    }
    return task_stack_low = low;
}

/**  Whether a task created here should be deferred for the stack: the thread's nested tasks hold more than `budget`
 *   of it, or less than `budget` is left (code below the outermost task, the program's own recursion included, may
 *   have used most of it). */
[[gnu::always_inline]] inline bool task_stack_short(std::size_t budget) noexcept {
    if (task_stack_used() > budget) return true;
    std::uintptr_t low = task_stack_low;
    if (low == 1) [[unlikely]]
        low = read_stack_low();
    std::uintptr_t const here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    return here - low < budget; // `low` 0: never
}

/**  `size` bytes of heap at `align` (at least `std::max_align_t`'s), for `std::free`; stops the program, naming
 *   `what`, when out of memory. `aligned_alloc` wants a size that is a multiple of the alignment. */
void *heap_block(std::size_t size, std::size_t align, char const *what) noexcept {
    if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
    void *const block = std::aligned_alloc(align, (size + align - 1) / align * align);
    if (!block) refuse(what, "out of memory");
    return block;
}

/**  The first address at or after `raw` that is a multiple of `align`: a block inside `alloca(size + align - 1)`. */
void *align_up(void *raw, std::size_t align) noexcept {
    auto const address = reinterpret_cast<std::uintptr_t>(raw);
    return reinterpret_cast<void *>((address + align - 1) / align * align);
}

// ---- Task reductions ----
//
// GCC describes the list items of a `task_reduction`, a `taskloop reduction` or a `reduction(task, ...)` in an array
// `d` it owns: d[0] items, d[1] bytes of one thread's block, d[2] the block alignment (the runtime stores the blocks'
// base there), d[3] an allocator, d[4] the next array of the same clause set (the runtime stores the enclosing
// registration in the last one's), d[5] and d[6] the runtime's (here: d[5] nonzero marks the last array of a
// registration, d[6] is the end of its blocks), then per item its original's address and its offset in a block.
// The runtime gives each team thread a zeroed block (GCC's code initializes an item at its first use, keeping a flag
// in the block, and combines the blocks after the construct). Tasks run on the thread that encounters them, so the
// registrations visible to a task are the calling thread's: a stack that `taskgroup` pushes and pops.

/**  `taskgroup` nesting depths whose task reductions and cancellation the calling thread tracks in thread-local
 *   storage; deeper ones, in heap chunks of as many (`taskgroup_chunk_t`). */
constexpr unsigned max_taskgroup_depth_k = 64;
/**  The calling thread's innermost task reduction registration, or null. */
constinit thread_local std::uintptr_t *current_reductions FORKUNION_GOMP_TLS = nullptr;
constinit thread_local unsigned taskgroup_depth FORKUNION_GOMP_TLS = 0;
constinit thread_local std::uintptr_t *saved_reductions[max_taskgroup_depth_k] FORKUNION_GOMP_TLS = {};
/**  Bit `d`: the worksharing taskgroup at depth `d` has a task-reduction registration whose copies this thread frees
 *   when it ends the taskgroup (`enter_task_reductions`' `owner`). */
constinit thread_local std::uint64_t owned_registrations FORKUNION_GOMP_TLS = 0;
/**  The region nesting level (`task_t::level`, saturated) of the task that opened each taskgroup: the tasks of a
 *   taskgroup are those created while it is open on this thread (every task runs undeferred at its construct), but
 *   a region nested in one of its tasks starts tasks that are not its members. */
constinit thread_local std::uint8_t taskgroup_levels[max_taskgroup_depth_k] FORKUNION_GOMP_TLS = {};
/**  Bit `d`: the taskgroup at depth `d` was cancelled (`cancel taskgroup`, cancel-var true). Atomic: the tasks of a
 *   `nogroup` taskloop, which belong to this thread's innermost taskgroup, may cancel it from other threads. */
constinit thread_local std::atomic<std::uint64_t> cancelled_taskgroups FORKUNION_GOMP_TLS{0};
/**  The innermost frame that runs a task of a shared `taskloop`, and the flag of the taskgroup that task belongs to:
 *   such a frame ends the search for enclosing taskgroups (the thread's own do not enclose that task). */
constinit thread_local flag_ref_t loop_flag FORKUNION_GOMP_TLS = {};
constinit thread_local unsigned loop_depth FORKUNION_GOMP_TLS = 0; ///< `taskgroup_depth` inside that frame, or 0.
/**  The calling thread runs tasks of another thread's shared `taskloop` (`help_taskloop`): a `taskloop` they
 *   encounter runs on this thread alone. */
constinit thread_local bool helping_taskloop FORKUNION_GOMP_TLS = false;
/**  The taskgroup that incomplete tasks created at depth `frame_depth` count in, set by a frame that runs a task away
 *   from its taskgroup (a deferred task, a task of a shared `taskloop`): it stands for the thread's own taskgroup
 *   at that depth. Deeper taskgroups are keyed by their `saved_reductions` entry, unique per thread and depth. */
constinit thread_local void const *frame_taskgroup FORKUNION_GOMP_TLS = nullptr;
constinit thread_local unsigned frame_depth FORKUNION_GOMP_TLS = 0;

/**  The calling thread's taskgroups at depths `[64 k, 64 k + 64)` for `k` of 1 and more, as the thread-local arrays
 *   above hold depths 0 to 63: made by the `push_taskgroup` that reaches the chunk, freed by the `pop_taskgroup`
 *   that leaves it (its taskgroups have ended: nothing points into it any more). */
struct taskgroup_chunk_t {
    std::uintptr_t *saved_reductions[max_taskgroup_depth_k] = {};
    std::uint8_t levels[max_taskgroup_depth_k] = {};
    std::uint64_t owned = 0;
    std::atomic<std::uint64_t> cancelled{0};
    taskgroup_chunk_t *deeper = nullptr;
};
/**  The chunk of depths 64 to 127, or null. */
constinit thread_local taskgroup_chunk_t *deep_taskgroups FORKUNION_GOMP_TLS = nullptr;

/**  Where the calling thread keeps the state of its taskgroup at depth `depth` (0-based, below `taskgroup_depth`). */
struct taskgroup_slot_t {
    std::uintptr_t **saved_reductions;
    std::uint8_t *level;
    std::uint64_t *owned;
    std::atomic<std::uint64_t> *cancelled;
    std::uint64_t bit;
};
taskgroup_slot_t taskgroup_slot(unsigned depth) noexcept {
    unsigned const index = depth % max_taskgroup_depth_k;
    std::uint64_t const bit = std::uint64_t(1) << index;
    if (depth < max_taskgroup_depth_k) [[likely]]
        return {&saved_reductions[index], &taskgroup_levels[index], &owned_registrations, &cancelled_taskgroups, bit};
    taskgroup_chunk_t *chunk = deep_taskgroups;
    for (unsigned k = depth / max_taskgroup_depth_k - 1; k; --k) chunk = chunk->deeper;
    return {&chunk->saved_reductions[index], &chunk->levels[index], &chunk->owned, &chunk->cancelled, bit};
}

/**  The link that holds the chunk of depth `depth`'s (a multiple of 64, at least 64). */
taskgroup_chunk_t *&taskgroup_chunk_link(unsigned depth) noexcept {
    taskgroup_chunk_t **link = &deep_taskgroups;
    for (unsigned k = depth / max_taskgroup_depth_k - 1; k; --k) link = &(*link)->deeper;
    return *link;
}

/**  The key of the calling thread's innermost taskgroup for incomplete tasks; null outside any. */
void const *taskgroup_key() noexcept {
    if (taskgroup_depth == frame_depth) return frame_taskgroup;
    if (taskgroup_depth == 0) return nullptr;
    return taskgroup_slot(taskgroup_depth - 1).saved_reductions;
}

std::uint8_t level_byte(task_t const &task) noexcept {
    return static_cast<std::uint8_t>(task.level < 255 ? task.level : 255);
}

void push_taskgroup() noexcept {
    unsigned const depth = taskgroup_depth;
    if (depth >= max_taskgroup_depth_k && depth % max_taskgroup_depth_k == 0) [[unlikely]] {
        taskgroup_chunk_t *&chunk = taskgroup_chunk_link(depth);
        chunk = new (std::nothrow) taskgroup_chunk_t();
        if (!chunk) refuse("taskgroup (nested more than 64 deep)", "out of memory");
    }
    taskgroup_slot_t const slot = taskgroup_slot(depth);
    *slot.saved_reductions = current_reductions;
    *slot.level = level_byte(current_task());
    // A locked instruction only when the bit is set: a taskloop's task pushes a taskgroup per task.
    if (slot.cancelled->load(std::memory_order_relaxed) & slot.bit)
        slot.cancelled->fetch_and(~slot.bit, std::memory_order_relaxed);
    taskgroup_depth = depth + 1;
}
void pop_taskgroup() noexcept {
    if (taskgroup_depth == 0) return; // an unmatched end: nothing to restore
    unsigned const depth = --taskgroup_depth;
    taskgroup_slot_t const slot = taskgroup_slot(depth);
    current_reductions = *slot.saved_reductions;
    *slot.owned &= ~slot.bit;
    if (depth >= max_taskgroup_depth_k && depth % max_taskgroup_depth_k == 0) [[unlikely]] {
        taskgroup_chunk_t *&chunk = taskgroup_chunk_link(depth);
        delete chunk;
        chunk = nullptr;
    }
}

/**  Whether the calling thread frees the registration of its innermost taskgroup (see `owned_registrations`). */
bool owns_innermost_registration() noexcept {
    if (taskgroup_depth == 0) return false;
    taskgroup_slot_t const slot = taskgroup_slot(taskgroup_depth - 1);
    return (*slot.owned & slot.bit) != 0;
}

/**  Marks the registration of the taskgroup just pushed as the calling thread's to free. */
void own_innermost_registration() noexcept {
    taskgroup_slot_t const slot = taskgroup_slot(taskgroup_depth - 1);
    *slot.owned |= slot.bit;
}

/**  The cancellation flag of the calling thread's innermost taskgroup; `word` null outside any. */
flag_ref_t innermost_taskgroup_flag() noexcept {
    if (taskgroup_depth == 0) return {};
    if (taskgroup_depth == loop_depth) return loop_flag; // a frame of a task run away from its taskgroup, any depth
    taskgroup_slot_t const slot = taskgroup_slot(taskgroup_depth - 1);
    return {slot.cancelled, slot.bit};
}

/**
 *  A frame that runs tasks away from the taskgroup they belong to (a deferred task, a shared `taskloop`'s tasks, a
 *  `target` region's initial task): one taskgroup level whose cancellation flag is `flag` and whose key for
 *  incomplete tasks is `key` (none for either: no taskgroup), hiding the calling thread's own taskgroups. Pushed on
 *  construction, popped (with the thread's task-reduction registration as it was) on destruction, also on unwind.
 */
struct taskgroup_frame_t {
    flag_ref_t const saved_flag = loop_flag;
    unsigned const saved_loop_depth = loop_depth;
    void const *const saved_key = frame_taskgroup;
    unsigned const saved_key_depth = frame_depth;
    taskgroup_frame_t(flag_ref_t flag, void const *key) noexcept {
        push_taskgroup();
        loop_flag = flag, loop_depth = taskgroup_depth;
        frame_taskgroup = key, frame_depth = taskgroup_depth;
    }
    ~taskgroup_frame_t() {
        pop_taskgroup();
        loop_flag = saved_flag, loop_depth = saved_loop_depth;
        frame_taskgroup = saved_key, frame_depth = saved_key_depth;
    }
    taskgroup_frame_t(taskgroup_frame_t const &) = delete;
    taskgroup_frame_t &operator=(taskgroup_frame_t const &) = delete;
};

/**
 *  Lays out the copies of registration `data` for `threads` threads in one block: every array's copies at the next
 *  multiple of its alignment (d[2] on entry). Returns the bytes the block needs and sets `align` to the largest
 *  alignment. With `blocks` nonzero, also points every array there (d[2] its copies, d[6] their end) and links the
 *  registration to the calling thread's innermost one, which it becomes. Every thread lays out the same clauses
 *  the same way, so a member finds its arrays' copies in a block another member made.
 */
std::size_t lay_out_reductions(std::uintptr_t *data, unsigned threads, std::uintptr_t blocks,
                               std::size_t &align) noexcept {
    std::uintptr_t *const enclosing = current_reductions;
    std::size_t offset = 0;
    align = sizeof(void *);
    for (std::uintptr_t *d = data;; d = reinterpret_cast<std::uintptr_t *>(d[4])) {
        std::size_t const own = d[2] > sizeof(void *) ? d[2] : sizeof(void *);
        if (own > align) align = own;
        offset = (offset + own - 1) / own * own;
        std::size_t const bytes = d[1] * threads;
        if (blocks) d[2] = blocks + offset, d[6] = d[2] + bytes, d[5] = 0;
        offset += bytes;
        if (d[4] != 0) continue;
        if (blocks) d[4] = reinterpret_cast<std::uintptr_t>(enclosing), d[5] = 1;
        break;
    }
    if (blocks) current_reductions = data;
    return offset;
}

/**  Gives the registration `data` zeroed copies for `threads` team threads in one heap block, which it returns (the
 *   first array's copies start it: `GOMP_taskgroup_reduction_unregister` frees that), and makes it the calling
 *   thread's innermost registration. */
void *register_reductions(std::uintptr_t *data, unsigned threads) noexcept {
    std::size_t align = 0;
    std::size_t const bytes = lay_out_reductions(data, threads, 0, align);
    void *const blocks = heap_block(bytes ? bytes : 1, align, "a task reduction's private copies");
    std::memset(blocks, 0, bytes);
    lay_out_reductions(data, threads, reinterpret_cast<std::uintptr_t>(blocks), align);
    return blocks;
}

} // namespace

bool taskgroup_cancelled() noexcept {
    // The innermost taskgroup only, as libgomp and LLVM's libomp answer: a taskgroup nested in a cancelled one starts
    // uncancelled, and its tasks run.
    if (taskgroup_depth == 0) return false;
    if (*taskgroup_slot(taskgroup_depth - 1).level != level_byte(current_task()))
        return false; // opened outside the region this task runs in: not its taskgroup
    flag_ref_t const flag = innermost_taskgroup_flag();
    // Acquire pairs with the release in `cancel_taskgroup`.
    return flag.word && (flag.word->load(std::memory_order_acquire) & flag.mask);
}

bool cancel_taskgroup() noexcept {
    flag_ref_t const flag = innermost_taskgroup_flag();
    if (!flag.word) return false; // no enclosing taskgroup: nothing to cancel
    // Release pairs with the acquire in `taskgroup_cancelled` and `drain_taskloop`.
    flag.word->fetch_or(flag.mask, std::memory_order_release);
    return true;
}

void *enter_task_reductions(std::uintptr_t *data, unsigned threads, bool owner) noexcept {
    push_taskgroup();
    if (owner) own_innermost_registration();
    return register_reductions(data, threads);
}

void follow_task_reductions(std::uintptr_t *data, void *blocks, unsigned threads, bool owner) noexcept {
    push_taskgroup();
    if (owner) own_innermost_registration();
    std::size_t align = 0;
    lay_out_reductions(data, threads, reinterpret_cast<std::uintptr_t>(blocks), align);
}

namespace {

/**  The private copy of the calling thread for `item` (an original's address, or any thread's copy of it), from
 *   the registrations visible here; `original` receives the original's address. Null if none has it. */
void *private_copy(void *item, void **original) noexcept {
    auto const address = reinterpret_cast<std::uintptr_t>(item);
    std::uintptr_t const thread = current_task().thread_num;
    for (std::uintptr_t *d = current_reductions; d; d = reinterpret_cast<std::uintptr_t *>(d[4]))
        for (std::uintptr_t entry = 0; entry != d[0]; ++entry)
            if (d[7 + 3 * entry] == address) {
                *original = item;
                return reinterpret_cast<void *>(d[2] + thread * d[1] + d[7 + 3 * entry + 1]);
            }
    for (std::uintptr_t *d = current_reductions; d; d = reinterpret_cast<std::uintptr_t *>(d[4])) {
        if (address < d[2] || address >= d[6]) continue;
        std::uintptr_t const offset = (address - d[2]) % d[1];
        for (std::uintptr_t entry = 0; entry != d[0]; ++entry)
            if (d[7 + 3 * entry + 1] == offset) *original = reinterpret_cast<void *>(d[7 + 3 * entry]);
        return reinterpret_cast<void *>(d[2] + thread * d[1] + offset);
    }
    return nullptr;
}

// ---- Incomplete tasks: detached tasks, and the tasks that depend on them ----
//
// Three kinds of task stay incomplete after their construct returns: those deferred for their thread's stack (see
// `GOMP_task`), and the two that come from `detach`. A detached task (`detach(event)`) runs its body at
// once, like every task here, but completes only once its event is fulfilled too (`omp_fulfill_event`, by any
// thread, before or after the body returns). A task whose `depend` clause names a list item of an incomplete sibling
// (in any but an `in`-with-`in` pair) may not start before that sibling completes: its data block is copied (or
// built by its copy function), as GCC's contract allows, and it is deferred. Each such task is a record on one
// process-wide list under one lock: its generating task (`taskwait`), the taskgroup and region it belongs to
// (`taskgroup` end, barriers, the region's end), its dependence items, and the deferred tasks waiting for it. A wait
// that covers incomplete tasks runs the deferred ones that became ready (a task scheduling point), then sleeps on a
// doorbell that every completion rings. A program that never detaches a task never takes the lock: every wait
// first reads `incomplete_tasks`, which stays 0.

/**  The handle `GOMP_task` writes for a detached task that cancellation discarded: fulfilling it does nothing. Real
 *   handles are `generation << 32 | (slot + 1)` with a generation of 1 or more. */
constexpr std::uint64_t discarded_event_k = 1;

struct depend_item_t {
    void const *address = nullptr;
    bool writer = false; ///< `out`, `inout` or `mutexinoutset` (whose exclusion ordering provides); else `in`.
};

struct record_t {
    record_t *previous = nullptr, *next = nullptr;
    task_t const *parent = nullptr;  ///< The generating task while its body runs (`taskwait`), then null.
    void const *taskgroup = nullptr; ///< The key of the innermost taskgroup it belongs to, or null.
    void const *region = nullptr;    ///< Its team, or the implicit task of a team of one (barriers, the end).
    team_t *team = nullptr;          ///< Its team, or null for a team of one: whose waiting members to wake.
    unsigned holds = 0;              ///< Its body has not returned (1), plus its event is unfulfilled (1).
    std::size_t waits = 0;           ///< Deferred: incomplete tasks it depends on.
    bool deferred = false;           ///< Its body waits to be started.
    std::uint64_t event = 0;         ///< Its unfulfilled event's handle, or 0.
    depend_item_t *items = nullptr;  ///< Its `depend` list items (heap), `items_count` of them.
    std::size_t items_count = 0;
    record_t **successors = nullptr; ///< Deferred tasks that depend on it (heap).
    std::size_t successors_count = 0, successors_capacity = 0;
    // A deferred task's body: its own copy of the data block (heap), and the data environment it was created in.
    void (*fn)(void *) = nullptr;
    void *block = nullptr;
    task_icv_t icv;
    bool in_final = false;
    std::uintptr_t *reductions = nullptr;
    flag_ref_t group; ///< The cancellation flag of its taskgroup (the creating thread's), or none.
};

/**  The list of incomplete tasks and the table of unfulfilled events: slot `i` holds the record of the handle
 *   `generation << 32 | (i + 1)`; a fulfilled event frees its slot and bumps its generation, so a stale or forged
 *   handle finds no record. Every field is guarded by `lock`. */
struct alignas(line_k) tracking_t {
    struct slot_t {
        record_t *record = nullptr;
        std::uint32_t generation = 1;
        std::uint32_t next_free = 0; ///< The next free slot + 1, or 0.
    };
    std::atomic<std::uint32_t> lock{0};
    record_t *first = nullptr;
    slot_t *slots = nullptr;
    std::uint32_t slots_count = 0, slots_capacity = 0;
    std::uint32_t free_slot = 0; ///< A free slot + 1, or 0.
};
tracking_t tracking_;

/**  Rung after every completion (and every fulfilment), after the lock is released. */
struct alignas(line_k) doorbell_t {
    std::atomic<std::uint32_t> rings{0};
    std::atomic<std::uint32_t> sleepers{0};
};
doorbell_t completions_;

void lock_tracking() noexcept {
    mutex_lock(tracking_.lock);
}
void unlock_tracking() noexcept {
    mutex_unlock(tracking_.lock);
}

void ring_completions() noexcept {
    // Seq_cst with the sleeper's seq_cst increment and re-check (`wait_for_tasks`): one of the two sees the other.
    completions_.rings.fetch_add(1, std::memory_order_seq_cst);
    if (completions_.sleepers.load(std::memory_order_seq_cst)) kernel_wake_all(completions_.rings);
}

/**  A child's `fork()` handler: the parent's incomplete tasks belong to teams the child does not have, and another
 *   thread may have held the lock mid-update, so the child starts with none (their memory is abandoned). */
void forget_incomplete_tasks_in_child() noexcept {
    new (&tracking_) tracking_t();
    completions_.sleepers.store(0, std::memory_order_relaxed);
    incomplete_tasks.store(0, std::memory_order_relaxed);
    ready_tasks.store(0, std::memory_order_relaxed);
}
[[gnu::constructor]] void register_incomplete_tasks_fork_handler() noexcept {
    pthread_atfork(nullptr, nullptr, forget_incomplete_tasks_in_child);
}

/**  Gives `record` an event and returns its handle. Under the lock. */
std::uint64_t new_event(record_t *record) noexcept {
    tracking_t &t = tracking_;
    if (!t.free_slot) {
        if (t.slots_count == t.slots_capacity) {
            std::uint32_t const capacity = t.slots_capacity ? t.slots_capacity * 2 : 64;
            if (capacity <= t.slots_capacity) refuse("GOMP_task (a detached task)", "over 2^31 unfulfilled events");
            auto *slots =
                static_cast<tracking_t::slot_t *>(std::realloc(t.slots, capacity * sizeof(tracking_t::slot_t)));
            if (!slots) refuse("GOMP_task (a detached task)", "out of memory for its event");
            t.slots = slots, t.slots_capacity = capacity;
        }
        t.slots[t.slots_count] = tracking_t::slot_t{};
        t.free_slot = ++t.slots_count;
    }
    std::uint32_t const index = t.free_slot - 1;
    tracking_t::slot_t &slot = t.slots[index];
    t.free_slot = slot.next_free;
    slot.record = record;
    return std::uint64_t(slot.generation) << 32 | (index + 1);
}

/**  The record of the unfulfilled event `handle`, or null. Under the lock. */
tracking_t::slot_t *event_slot(std::uint64_t handle) noexcept {
    tracking_t &t = tracking_;
    std::uint64_t const index = (handle & 0xffffffffu) - 1;
    if (index >= t.slots_count) return nullptr;
    tracking_t::slot_t &slot = t.slots[index];
    if (!slot.record || slot.generation != handle >> 32) return nullptr;
    return &slot;
}

/**  The deferred task `record` has nothing left to wait for: counted ready, and its team's members asleep in a
 *   barrier are woken to run it (`run_ready_region_task`). Under the lock. */
void made_ready(record_t const &record) noexcept {
    ready_tasks.fetch_add(1, std::memory_order_seq_cst);
    if (record.team && record.team->release.sleepers.load(std::memory_order_seq_cst))
        kernel_wake_all(record.team->release.generation);
}

/**  `record` is complete: off the list, its successors one predecessor closer to ready, freed. Under the lock. */
void complete(record_t &record) noexcept {
    if (record.previous)
        record.previous->next = record.next;
    else
        tracking_.first = record.next;
    if (record.next) record.next->previous = record.previous;
    for (std::size_t i = 0; i != record.successors_count; ++i)
        if (--record.successors[i]->waits == 0 && record.successors[i]->deferred) made_ready(*record.successors[i]);
    // Release pairs with the acquire of `tasks_incomplete`: a wait that reads 0 sees every write of the task.
    incomplete_tasks.fetch_sub(1, std::memory_order_release);
    std::free(record.items);
    std::free(record.successors);
    delete &record;
}

/**  One of the reasons `record` is incomplete is gone (its body returned, its event was fulfilled). Under the lock. */
void release(record_t &record) noexcept {
    if (--record.holds == 0) complete(record);
}

/**  Whether a task with `items` depends on the incomplete `record` (or a `taskwait depend` waits for it). */
bool conflicts(record_t const &record, depend_item_t const *items, std::size_t count) noexcept {
    for (std::size_t i = 0; i != count; ++i)
        for (std::size_t j = 0; j != record.items_count; ++j)
            if (items[i].address == record.items[j].address && (items[i].writer || record.items[j].writer)) return true;
    return false;
}

/**  How many incomplete children of `parent` a task with `items` depends on; with `successor`, it is made a
 *   successor of each. Under the lock. */
std::size_t predecessors(task_t const &parent, depend_item_t const *items, std::size_t count,
                         record_t *successor = nullptr) noexcept {
    if (count == 0) return 0; // no `depend` clause: no walk (tasks deferred for the stack come in thousands)
    std::size_t found = 0;
    for (record_t *r = tracking_.first; r; r = r->next) {
        if (r->parent != &parent || !conflicts(*r, items, count)) continue;
        ++found;
        if (!successor) continue;
        if (r->successors_count == r->successors_capacity) {
            std::size_t const capacity = r->successors_capacity ? r->successors_capacity * 2 : 4;
            auto *grown = static_cast<record_t **>(std::realloc(r->successors, capacity * sizeof(record_t *)));
            if (!grown) refuse("GOMP_task (a task depending on a detached task)", "out of memory");
            r->successors = grown, r->successors_capacity = capacity;
        }
        r->successors[r->successors_count++] = successor;
    }
    return found;
}

/**  The list items of GCC's `depend` array, as a heap array the caller frees (or keeps); `count` receives their
 *   number. Two layouts: `{n, writers, addresses...}` (`out`/`inout` first), or `{0, n, writers, mutexinoutset, in,
 *   addresses...}` whose trailing entries are `depobj`s, each `{address, kind}` with kind 1 for `in`. */
depend_item_t *depend_items(void *const *depend, std::size_t &count) noexcept {
    auto const word = [&](std::size_t i) noexcept { return reinterpret_cast<std::uintptr_t>(depend[i]); };
    bool const extended = word(0) == 0;
    count = extended ? word(1) : word(0);
    if (!count) return nullptr;
    auto *items = static_cast<depend_item_t *>(std::malloc(count * sizeof(depend_item_t)));
    if (!items) refuse("GOMP_task (a depend clause beside a detached task)", "out of memory");
    std::size_t const first = extended ? 5 : 2;
    std::size_t const writers = extended ? word(2) + word(3) : word(1);
    std::size_t const plain = extended ? writers + word(4) : count;
    for (std::size_t i = 0; i != count; ++i) {
        if (i < plain) {
            items[i] = {depend[first + i], i < writers};
            continue;
        }
        auto *const object = static_cast<void *const *>(depend[first + i]);
        items[i] = {object[0], reinterpret_cast<std::uintptr_t>(object[1]) != 1};
    }
    return items;
}

void run_deferred(record_t &record) noexcept;

/**  Takes the ready deferred task `record` to run it on the calling thread. Under the lock. */
void take_ready(record_t &record) noexcept {
    record.deferred = false;
    ready_tasks.fetch_sub(1, std::memory_order_relaxed);
}

/**
 *  Returns once `done()` holds (read under the lock), running meanwhile the ready deferred tasks that `runnable`
 *  accepts (a task scheduling point: the caller passes only tasks the scheduling constraints let it start). Spins
 *  for the spin count between looks, then sleeps until the next completion.
 */
template <typename done_type_, typename runnable_type_>
void wait_for_tasks(done_type_ &&done, runnable_type_ &&runnable) noexcept {
    settings_t const &s = settings();
    std::uint64_t const spins = s.spin_infinite ? ~std::uint64_t(0) : s.spin_count;
    for (;;) {
        // Read before looking: a completion after the look rings past it.
        std::uint32_t const seen = completions_.rings.load(std::memory_order_seq_cst);
        record_t *ready = nullptr;
        lock_tracking();
        bool const finished = done();
        if (!finished)
            for (record_t *r = tracking_.first; r && !ready; r = r->next)
                if (r->deferred && r->waits == 0 && runnable(*r)) ready = r, take_ready(*r);
        unlock_tracking();
        if (finished) return;
        if (ready) {
            run_deferred(*ready);
            continue;
        }
        for (std::uint64_t spin = 0; spin < spins; ++spin) {
            if (completions_.rings.load(std::memory_order_relaxed) != seen) break;
            pause_once();
        }
        if (completions_.rings.load(std::memory_order_relaxed) != seen) continue;
        completions_.sleepers.fetch_add(1, std::memory_order_seq_cst);
        if (completions_.rings.load(std::memory_order_seq_cst) == seen) kernel_wait(completions_.rings, seen, 0);
        completions_.sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
}

/**  Waits for every incomplete task that `belongs` accepts, running the ready deferred ones among them. */
template <typename belongs_type_>
void wait_for_tasks(belongs_type_ &&belongs) noexcept {
    wait_for_tasks(
        [&]() noexcept {
            for (record_t *r = tracking_.first; r; r = r->next)
                if (belongs(*r)) return false;
            return true;
        },
        belongs);
}

/**  Takes the first ready deferred task that `accepts` allows and runs it on the calling thread; false if none. */
template <typename accepts_type_>
bool run_one_ready(accepts_type_ &&accepts) noexcept {
    record_t *ready = nullptr;
    lock_tracking();
    for (record_t *r = tracking_.first; r && !ready; r = r->next)
        if (r->deferred && r->waits == 0 && accepts(*r)) ready = r, take_ready(*r);
    unlock_tracking();
    if (!ready) return false;
    run_deferred(*ready);
    return true;
}

/**  `task`'s body returned: its incomplete children are no longer anyone's to wait for with `taskwait` (a later task
 *   at the same address is not their parent). */
void forget_children(task_t &task) noexcept {
    if (!task.tracked_children) return; // none of its children is on the list: no walk, no lock
    task.tracked_children = false;      // a task frame may serve the next task (`run_taskloop_tasks`)
    lock_tracking();
    for (record_t *r = tracking_.first; r; r = r->next)
        if (r->parent == &task) r->parent = nullptr;
    unlock_tracking();
}

/**  A task that runs in `context`'s team, thread and nesting level, with its own ICVs and finality. */
task_t task_in_context_of(task_t const &context, task_icv_t const &icv, bool in_final) noexcept {
    task_t task;
    task.icv = icv;
    task.team = context.team;
    task.implicit = context.implicit;
    task.parent = context.parent;
    task.thread_num = context.thread_num;
    task.team_size = context.team_size;
    task.level = context.level;
    task.active_level = context.active_level;
    task.root_level = context.root_level;
    task.partition_first = context.partition_first;
    task.partition_count = context.partition_count;
    task.in_final = in_final;
    return task;
}

/**
 *  Runs `fn` on a private copy of `data` (built by `cpyfn` when given), as a child task of `parent`. Not `noexcept`:
 *  a `pthread_exit` in the task's body unwinds through it (as libgomp's does), ending the task on the way, so the
 *  thread's exit finds its task and the task tracking as they were around the construct.
 */
template <typename prepare_type_>
void run_task(task_t &parent, bool final, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
              long arg_align, prepare_type_ &&prepare) {
    task_stack_mark_t const mark;
    struct scope_t {
        task_t task;
        task_t *saved = nullptr;
        void *heap = nullptr;
        ~scope_t() {
            if (saved) swap_current_task(saved); // not before the body started (a copy constructor threw)
            forget_children(task);
            std::free(heap);
        }
    } scope{task_in_context_of(parent, parent.icv, parent.in_final || final)};

    std::size_t const align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
    std::size_t const size = arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0;
    void *block = nullptr;
    if (size > settings().task_stack_block)
        block = scope.heap = heap_block(size, align, "a task's data block");
    else if (size)
        block = align_up(__builtin_alloca(size + align - 1), align);
    if (block) {
        if (cpyfn)
            cpyfn(block, data);
        else
            std::memcpy(block, data, size);
    }
    prepare(block);
    scope.saved = swap_current_task(&scope.task);
    fn(block);
}

/**
 *  Runs the deferred task `record` on the calling thread, in a task of the thread's current context with the data
 *  environment it was created in, then releases it. `record` was taken under the lock (no longer `deferred`). It
 *  runs in a frame of its taskgroup, as a shared `taskloop`'s tasks do (`run_taskloop_tasks`): the thread's own
 *  taskgroups do not enclose it, so `cancel taskgroup` and cancellation points in it, and the tasks it creates, use
 *  its taskgroup's flag and key; a task whose taskgroup was cancelled before it started is discarded (cancel-var
 *  true): its body does not run.
 */
void run_deferred(record_t &record) noexcept {
    task_stack_mark_t const mark;
    task_t &here = current_task();
    task_t task = task_in_context_of(here, record.icv, record.in_final);
    {
        taskgroup_frame_t const frame(record.group, record.taskgroup);
        current_reductions = record.reductions; // the frame's end restores the thread's
        // Acquire pairs with the release in `cancel_taskgroup`.
        bool const discarded = record.group.word && settings().cancellation &&
                               (record.group.word->load(std::memory_order_acquire) & record.group.mask);
        if (!discarded) {
            task_t *const saved = swap_current_task(&task);
            record.fn(record.block);
            swap_current_task(saved);
        }
    }
    forget_children(task);
    std::free(record.block);
    lock_tracking();
    release(record);
    unlock_tracking();
    ring_completions();
}

/**  `GOMP_task` for a detached task, any task while incomplete tasks exist (its dependences may name one), and a
 *   task to `defer` (its encountering thread's tasks are nested too deep: `GOMP_task`), which then waits for a
 *   scheduling point even with nothing to wait for. Not `noexcept`, as `run_task`: a task run here that leaves
 *   through `pthread_exit` releases its record on the way. */
void run_tracked_task(task_t &parent, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                      long arg_align, bool if_clause, unsigned flags, void **depend, void *detach, bool defer) {
    bool const detached = (flags & task_detach_k) != 0;
    if (detached && !detach) refuse("GOMP_task (a task with a detach clause)", "no event handle to write");
    std::size_t count = 0;
    depend_item_t *items = (flags & task_depend_k) && depend ? depend_items(depend, count) : nullptr;
    bool const final = parent.in_final || (flags & task_final_k) != 0;
    // An undeferred task (`if(false)`, or included in a final task) waits for its dependences instead.
    bool const undeferred = !if_clause || parent.in_final;
    lock_tracking();
    std::size_t waits = count ? predecessors(parent, items, count) : 0;
    if (waits && undeferred) {
        unlock_tracking();
        wait_for_tasks([&]() noexcept { return predecessors(parent, items, count) == 0; },
                       [&](record_t const &r) noexcept { return r.parent == &parent; });
        lock_tracking(); // none came back: only this thread creates children of `parent`
        waits = 0;
    }
    if (!waits && !detached && !defer) {
        unlock_tracking();
        std::free(items);
        run_task(parent, final, fn, data, cpyfn, arg_size, arg_align, [](void *) noexcept {});
        return;
    }
    bool const deferring = waits || defer;
    void *block = nullptr;
    if (deferring) {
        // Deferred: its own copy of the data block, built outside the lock (a copy function is the program's code).
        unlock_tracking();
        std::size_t const size = arg_size > 0 ? static_cast<std::size_t>(arg_size) : 0;
        std::size_t const align = arg_align > 0 ? static_cast<std::size_t>(arg_align) : 1;
        if (size) {
            block = heap_block(size, align, "GOMP_task (a task depending on a detached task)");
            if (cpyfn)
                cpyfn(block, data);
            else
                std::memcpy(block, data, size);
        }
        lock_tracking(); // its predecessors may have completed meanwhile, and none came (see above)
    }
    auto *record = new (std::nothrow) record_t();
    if (!record) refuse("GOMP_task (a detached task, or one depending on one)", "out of memory");
    record->parent = &parent;
    parent.tracked_children = true;
    record->taskgroup = taskgroup_key();
    record->region = parent.implicit->team ? static_cast<void const *>(parent.implicit->team) : parent.implicit;
    record->team = parent.implicit->team;
    record->holds = detached ? 2 : 1;
    record->items = items, record->items_count = count;
    std::uint64_t const event = detached ? new_event(record) : 0;
    record->event = event;
    // GCC reads the handle from the encountering task's variable, and the task's from the first word of its block.
    if (detached) std::memcpy(detach, &event, sizeof(event));
    bool start_now = false; // deferred, but its predecessors completed while its block was built
    if (deferring) {
        record->waits = predecessors(parent, items, count, record);
        record->deferred = defer || record->waits != 0;
        if (record->deferred) tasks_deferred_once.store(true, std::memory_order_relaxed);
        if (record->deferred && record->waits == 0) made_ready(*record);
        start_now = !record->deferred;
        record->fn = fn, record->block = block, record->icv = parent.icv, record->in_final = final;
        record->reductions = current_reductions;
        // Only a taskgroup it belongs to, which waits for it: a `nogroup` taskloop outside any taskgroup keeps a
        // flag on its encountering thread's stack that would outlive the loop, not the task.
        record->group = record->taskgroup ? innermost_taskgroup_flag() : flag_ref_t{};
        if (detached && block) std::memcpy(block, &event, sizeof(event));
    }
    record->next = tracking_.first;
    if (tracking_.first) tracking_.first->previous = record;
    tracking_.first = record;
    incomplete_tasks.fetch_add(1, std::memory_order_relaxed);
    unlock_tracking();
    if (start_now) return run_deferred(*record);
    if (deferring) return; // started by a wait, or a scheduling point, once every task it depends on completed
    struct release_t {
        record_t &record;
        ~release_t() {
            lock_tracking();
            release(record);
            unlock_tracking();
            ring_completions();
        }
    } const release_at_end{*record};
    run_task(parent, final, fn, data, cpyfn, arg_size, arg_align, [&](void *block) noexcept {
        if (block) std::memcpy(block, &event, sizeof(event));
    });
}

// ---- taskloop ----

/**  The logical iterations `[first, last)` of task `index` of `loop`. */
void task_range(shared_taskloop_t const &loop, std::uint64_t index, std::uint64_t &first,
                std::uint64_t &last) noexcept {
    if (loop.grain) {
        first = index * loop.grain;
        last = loop.n - first < loop.grain ? loop.n : first + loop.grain;
        return;
    }
    // Near-equal tasks: the first `remainder` ones have one iteration more (`static_slice`, without a division).
    first = index * loop.quotient + (index < loop.remainder ? index : loop.remainder);
    last = first + loop.quotient + (index < loop.remainder);
}

/**
 *  Runs tasks `[index, last)` of `loop` on the calling thread, each a task of its own: its own copy of the data
 *  block (built again for each, by `cpyfn` when given), its own iterations in the block's first two words and
 *  fresh ICVs, in a taskgroup frame of the loop's taskgroup. The tasks of one call share one `task_t` on this stack,
 *  as consecutive undeferred tasks share a stack slot: after each, its incomplete children are forgotten
 *  (`forget_children`), so none is taken for the next one's. A task whose taskgroup was cancelled before it
 *  started (cancel-var true) is discarded: not run.
 */
void run_taskloop_tasks(shared_taskloop_t const &loop, std::uint64_t index, std::uint64_t last) noexcept {
    task_stack_mark_t const mark;
    // The calling thread's context (team, thread number, level), the encountering task's ICVs, the loop's finality: a
    // task inherits its data environment from the task that generated it, whichever thread runs it. The
    // encountering task changes neither while its loop runs (it waits for the loop, running its own tasks in
    // frames like this one).
    task_t &here = current_task();
    task_t const &encountering = *loop.encountering;
    task_t task = task_in_context_of(here, encountering.icv, loop.final);
    std::size_t const align = loop.arg_align > 0 ? static_cast<std::size_t>(loop.arg_align) : 1;
    std::size_t const size = loop.arg_size > 0 ? static_cast<std::size_t>(loop.arg_size) : 0;
    // GCC's task function reads its iterations from the first two words: a block always has them.
    std::size_t const bytes = size < 2 * sizeof(std::uint64_t) ? 2 * sizeof(std::uint64_t) : size;
    void *heap = nullptr;
    void *block = nullptr;
    if (bytes > settings().task_stack_block)
        block = heap = heap_block(bytes, align, "a task's data block");
    else
        block = align_up(__builtin_alloca(bytes + align - 1), align);
    // The tasks run in a frame of their taskgroup's (the thread's own taskgroups do not enclose them). A task
    // leaves the frame as it found it (its own taskgroups and task reductions end inside it, and `cancel
    // taskgroup` at this depth sets the loop's flag), so one frame serves every task of the call.
    {
        taskgroup_frame_t const frame(loop.group, loop.taskgroup_key);
        for (; index != last; ++index) {
            if (loop.group.word->load(std::memory_order_acquire) & loop.group.mask) continue;
            std::uint64_t first_iteration = 0, last_iteration = 0;
            task_range(loop, index, first_iteration, last_iteration);
            std::uint64_t const start = loop.start + first_iteration * loop.step;
            std::uint64_t const end = last_iteration == loop.n ? loop.end : loop.start + last_iteration * loop.step;
            // A helper's task sees the encountering thread's task reductions, with its own thread's copies.
            current_reductions = loop.reductions;
            task.icv = encountering.icv;
            if (loop.cpyfn)
                loop.cpyfn(block, loop.data);
            else if (size)
                std::memcpy(block, loop.data, size);
            std::memcpy(block, &start, sizeof(start));
            std::memcpy(static_cast<char *>(block) + sizeof(start), &end, sizeof(end));
            task_t *const saved = swap_current_task(&task);
            loop.fn(block);
            swap_current_task(saved);
            forget_children(task);
        }
    }
    std::free(heap);
}

/**  Takes and runs tasks of `loop` until none is left; returns how many this thread took. A task taken after its
 *   taskgroup was cancelled (cancel-var true) is discarded: counted done, not run.
 *
 *   Tasks are claimed in batches of half this thread's fair share of those left (at least one), as a guided
 *   schedule does: `grainsize(1)` over a thousand iterations on two threads costs about 25 contended increments
 *   of the shared counter instead of a thousand, while the last claims, of one task each, keep the threads'
 *   finishing times within a task of each other. A contended increment costs ~200 ns on a 2-vCPU guest, so the
 *   batch size is the trade: a quarter of the fair share doubled TASKLOOP_1's overhead, the whole fair share lets
 *   one claim take half a two-thread loop, which the thread that drew it must finish alone. Each task of a batch
 *   is still its own task (`run_taskloop_tasks`). `seen`, where this thread's previous claim ended (or the count
 *   when it came), is a lower bound of the tasks claimed. The thread counts its tasks done once, when no task is
 *   left to claim. */
std::uint64_t drain_taskloop(shared_taskloop_t &loop) noexcept {
    // Beyond 2^62 tasks, batches of one: the claims that overshoot the end then cannot wrap the counter.
    std::uint64_t const threads = loop.encountering->team_size ? loop.encountering->team_size : 1;
    std::uint64_t const divisor = loop.tasks < (std::uint64_t(1) << 62) ? 2 * threads : 0;
    // A thread that joins late must not size its first batch by the whole loop.
    std::uint64_t ran = 0, seen = loop.next_task.load(std::memory_order_relaxed);
    if (seen >= loop.tasks) return 0;
    for (;;) {
        std::uint64_t const batch = divisor && (loop.tasks - seen) / divisor ? (loop.tasks - seen) / divisor : 1;
        std::uint64_t const index = loop.next_task.fetch_add(batch, std::memory_order_relaxed);
        if (index >= loop.tasks) break;
        std::uint64_t const last = loop.tasks - index < batch ? loop.tasks : index + batch;
        run_taskloop_tasks(loop, index, last);
        ran += last - index;
        seen = last;
    }
    // Once per thread, not per batch: the encountering thread polls this line while it waits.
    // Release pairs with the encountering thread's acquire: the tasks' writes are visible when it returns.
    if (ran) loop.done_tasks.fetch_add(ran, std::memory_order_release);
    return ran;
}

void run_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size, long arg_align,
                  unsigned flags, unsigned long num_tasks, std::uint64_t start, std::uint64_t end, std::uint64_t step,
                  std::uint64_t n) noexcept {
    if (flags & task_reduction_k) [[unlikely]] {
        // The taskloop is its own taskgroup, whose task reduction GCC describes in the third word of `data` (after
        // the first and end iterations); GCC's code combines the threads' copies and unregisters after the call.
        push_taskgroup();
        register_reductions(static_cast<std::uintptr_t **>(data)[2], current_task().team_size);
        run_taskloop(fn, data, cpyfn, arg_size, arg_align, flags & ~task_reduction_k, num_tasks, start, end, step, n);
        pop_taskgroup();
        return;
    }
    if (n == 0) return;
    task_t &encountering = current_task();
    shared_taskloop_t loop;
    loop.fn = fn, loop.data = data, loop.cpyfn = cpyfn, loop.arg_size = arg_size, loop.arg_align = arg_align;
    loop.start = start, loop.step = step, loop.end = end, loop.n = n;
    loop.encountering = &encountering;
    loop.final = encountering.in_final || (flags & task_final_k) != 0;
    loop.reductions = current_reductions;
    // `nogroup`: its tasks belong to the encountering task's taskgroup, whose flag outlives the loop (the encountering
    // thread keeps it open until every task is done); otherwise the loop is its own taskgroup.
    loop.group = {&loop.cancelled, 1};
    if (flags & task_nogroup_k)
        if (flag_ref_t const enclosing = innermost_taskgroup_flag(); enclosing.word) loop.group = enclosing;
    loop.taskgroup_key = (flags & task_nogroup_k) ? taskgroup_key() : &loop;
    // The loop's own taskgroup ends once its tasks' incomplete descendants (detached tasks) have completed too.
    struct loop_taskgroup_end_t {
        shared_taskloop_t const &loop;
        ~loop_taskgroup_end_t() noexcept {
            if (loop.taskgroup_key == &loop && tasks_incomplete()) [[unlikely]]
                wait_for_tasks([this](record_t const &r) noexcept { return r.taskgroup == &loop; });
        }
    } const taskgroup_end{loop};
    if (flags & task_grainsize_k) {
        std::uint64_t const grain = num_tasks ? num_tasks : 1;
        // Strict: every task but the last has exactly `grain` iterations. Otherwise near-equal tasks of at least
        // `grain` and fewer than `2 * grain` iterations each.
        if (flags & task_strict_k)
            loop.grain = grain, loop.tasks = n / grain + (n % grain != 0);
        else
            loop.tasks = n / grain ? n / grain : 1;
    } else {
        std::uint64_t const wanted = num_tasks ? num_tasks : encountering.team_size;
        loop.tasks = wanted < n ? wanted : n;
    }
    if (!loop.grain) loop.quotient = n / loop.tasks, loop.remainder = n % loop.tasks;
    team_t *team = encountering.implicit->team;
    bool shared = false;
    // Not from a helper's task (a `taskloop` nested in a shared one's task, run by a member that helps): its thread
    // is counted among the helpers the shared loop's encountering thread waits for, itself included.
    if (team && (flags & task_if_k) && !helping_taskloop) {
        shared_taskloop_t *expected = nullptr;
        // Release pairs with the helpers' acquire in `help_taskloop`: they see the whole description.
        shared = team->taskloop.current.compare_exchange_strong(expected, &loop, std::memory_order_release,
                                                                std::memory_order_relaxed);
        if (shared) {
            team->taskloop.seen.store(true, std::memory_order_relaxed);
            // Members parked in a barrier's futex come back to help (they re-check and see the `taskloop`).
            if (team->release.sleepers.load(std::memory_order_seq_cst)) kernel_wake_all(team->release.generation);
        }
    }
    drain_taskloop(loop);
    if (!shared) return;
    // Seq_cst with the helpers' seq_cst announcement and re-check (`help_taskloop`): either this thread sees the
    // helper counted, or the helper sees `current` cleared. With a plain store here, x86 may let the load below pass
    // it in the store buffer, and a helper that saw the old pointer would run on `loop` after it is gone.
    team->taskloop.current.store(nullptr, std::memory_order_seq_cst);
    // Acquire pairs with the helpers' releases: every task's writes, and their last touch of `loop`, happened.
    team_wait(*team, [&]() noexcept {
        return loop.done_tasks.load(std::memory_order_acquire) == loop.tasks &&
               team->taskloop.helpers.load(std::memory_order_seq_cst) == 0;
    });
}

} // namespace

void finish_region_tasks(void const *region) noexcept {
    wait_for_tasks([region](record_t const &r) noexcept { return r.region == region; });
}

bool finish_region_tasks_unless_cancelled(team_t const &team) noexcept {
    bool cancelled = false;
    wait_for_tasks(
        [&]() noexcept {
            // Seq_cst, after the seq_cst read of the doorbell in `wait_for_tasks`, against `cancel_region`'s seq_cst
            // bit and ring: this look sees the bit, or the ring comes after the doorbell value it sleeps on.
            if (team.release.generation.load(std::memory_order_seq_cst) & region_cancelled_k) return cancelled = true;
            for (record_t *r = tracking_.first; r; r = r->next)
                if (r->region == &team) return false;
            return true;
        },
        [&](record_t const &r) noexcept { return r.region == &team; });
    return !cancelled;
}

bool run_ready_region_task(team_t const &team) noexcept {
    if (!ready_tasks.load(std::memory_order_relaxed)) return false; // the lock's acquire orders what follows
    return run_one_ready([&](record_t const &r) noexcept { return r.region == &team; });
}

void wake_task_waiters() noexcept {
    ring_completions();
}

bool help_taskloop(team_t &team) noexcept {
    // Relaxed first: the common case is "nothing published", one shared line read per spin.
    if (!team.taskloop.current.load(std::memory_order_relaxed)) return false;
    team.taskloop.helpers.fetch_add(1, std::memory_order_seq_cst);
    // Re-check after announcing ourselves: the encountering thread clears `current` before it waits for helpers.
    shared_taskloop_t *loop = team.taskloop.current.load(std::memory_order_seq_cst);
    // Restored, not cleared: a helper's task may open a nested region whose barrier helps there too.
    bool const was_helping = helping_taskloop;
    helping_taskloop = true;
    bool const ran = loop && drain_taskloop(*loop) != 0;
    helping_taskloop = was_helping;
    // Release pairs with the encountering thread's acquire: it may free `loop` once we are gone.
    team.taskloop.helpers.fetch_sub(1, std::memory_order_release);
    team_notify(team);
    return ran;
}

} // namespace forkunion::gomp

using namespace forkunion::gomp;

FORKUNION_GOMP_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                                     long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
                                     void *detach) {
    (void)priority;
    task_t &parent = current_task();
    settings_t const &s = settings();
    // A task created in a cancelled taskgroup or a cancelled region is discarded (cancel-var true), as OpenMP lets a
    // cancelled task that has not started be; a detached one's event is one that fulfilling does nothing to.
    if (s.cancellation && (taskgroup_cancelled() || (parent.team && region_cancelled(*parent.team)))) [[unlikely]] {
        if ((flags & task_detach_k) && detach) std::memcpy(detach, &discarded_event_k, sizeof(discarded_event_k));
        return;
    }
    // Every incomplete sibling of the new task was created on this thread (by `parent`), so a 0 here means none, and
    // without incomplete siblings the creation order satisfies every dependence. Acquire pairs with the release of
    // `complete`: a sibling that was deferred and completed on another thread made the writes this task may read.
    // A task nested so deep in undeferred ones that the thread's stack could run out is deferred instead, where a
    // wait is sure to start it (inside a region: its end waits for its tasks), as libgomp defers every task there:
    // a chain of tasks that each create the next then needs no more stack than the budget.
    bool const defer =
        if_clause && !parent.in_final && task_stack_short(s.task_stack_budget) && inside_a_region(&parent);
    if ((flags & task_detach_k) || incomplete_tasks.load(std::memory_order_acquire) || defer) [[unlikely]]
        return run_tracked_task(parent, fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, detach, defer);
    run_task(parent, (flags & task_final_k) != 0, fn, data, cpyfn, arg_size, arg_align, [](void *) noexcept {});
}

FORKUNION_GOMP_EXPORT void omp_fulfill_event(std::uintptr_t event) {
    if (event == discarded_event_k) return;
    lock_tracking();
    tracking_t::slot_t *const slot = event_slot(event);
    if (!slot) {
        unlock_tracking();
        // Undefined by OpenMP; never silently ignored: a second fulfilment usually means a lost one elsewhere.
        std::fprintf(stderr,
                     "forkunion gomp: omp_fulfill_event: %#llx is not the handle of an unfulfilled event (fulfilled "
                     "already, or never given by a detach clause); aborting\n",
                     static_cast<unsigned long long>(event));
        std::abort();
    }
    record_t &record = *slot->record;
    tracking_t &t = tracking_;
    slot->record = nullptr;
    ++slot->generation;
    if (slot->generation == 0) slot->generation = 1; // keeps every handle above `discarded_event_k`
    slot->next_free = t.free_slot;
    t.free_slot = static_cast<std::uint32_t>((event & 0xffffffffu));
    record.event = 0;
    release(record);
    unlock_tracking();
    ring_completions();
}

FORKUNION_GOMP_EXPORT void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                                         long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                                         long start, long end, long step) {
    (void)priority;
    auto const s = static_cast<std::uint64_t>(start), e = static_cast<std::uint64_t>(end);
    auto const i = static_cast<std::uint64_t>(step);
    std::uint64_t n = 0;
    if (step > 0 && start < end) n = (e - s - 1) / i + 1;
    if (step < 0 && start > end) n = (s - e - 1) / (0 - i) + 1;
    run_taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, s, e, i, n);
}

FORKUNION_GOMP_EXPORT void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                                             long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                                             int priority, unsigned long long start, unsigned long long end,
                                             unsigned long long step) {
    (void)priority;
    std::uint64_t n = 0;
    bool const up = (flags & task_up_k) != 0;
    if (up && start < end) n = (end - start - 1) / step + 1;
    if (!up && start > end) n = (start - end - 1) / (0 - step) + 1;
    run_taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, start, end, step, n);
}

// Without incomplete tasks every child has completed at its construct, so the waits have nothing to wait for.

FORKUNION_GOMP_EXPORT void GOMP_taskwait(void) {
    if (!tasks_incomplete()) [[likely]]
        return;
    task_t const &task = current_task();
    wait_for_tasks([&](record_t const &r) noexcept { return r.parent == &task; });
}
FORKUNION_GOMP_EXPORT void GOMP_taskwait_depend(void **depend) {
    if (!tasks_incomplete() || !depend) [[likely]]
        return;
    task_t const &task = current_task();
    std::size_t count = 0;
    depend_item_t *const items = depend_items(depend, count);
    wait_for_tasks([&]() noexcept { return predecessors(task, items, count) == 0; },
                   [&](record_t const &r) noexcept { return r.parent == &task; });
    std::free(items);
}
FORKUNION_GOMP_EXPORT void GOMP_taskyield(void) {
    if (!tasks_incomplete()) [[likely]]
        return;
    // Runs the ready deferred children of the current task, if any, waiting for nothing.
    task_t const &task = current_task();
    while (run_one_ready([&](record_t const &r) noexcept { return r.parent == &task; })) {}
}
FORKUNION_GOMP_EXPORT void GOMP_taskgroup_start(void) {
    push_taskgroup();
}
namespace {
/**  Ends the calling thread's innermost taskgroup once every task in it completed. */
void end_taskgroup() noexcept {
    if (tasks_incomplete()) [[unlikely]]
        if (void const *const key = taskgroup_key())
            wait_for_tasks([&](record_t const &r) noexcept { return r.taskgroup == key; });
    pop_taskgroup();
}
} // namespace

FORKUNION_GOMP_EXPORT void GOMP_taskgroup_end(void) {
    end_taskgroup();
}

FORKUNION_GOMP_EXPORT void GOMP_taskgroup_reduction_register(std::uintptr_t *data) {
    register_reductions(data, current_task().team_size);
}

FORKUNION_GOMP_EXPORT void GOMP_taskgroup_reduction_unregister(std::uintptr_t *data) {
    // The registration's copies are one block, which its first array's start; the enclosing registration stays.
    if (data) std::free(reinterpret_cast<void *>(data[2]));
}

FORKUNION_GOMP_EXPORT void GOMP_workshare_task_reduction_unregister(bool cancelled) {
    // Ends the construct's taskgroup once the calling thread's tasks in it completed (in a cancelled construct the
    // barrier before did not wait for them, and a deferred one still reads the registration on this thread's
    // stack); thread 0 (whose code combined the copies) frees them, or a thread its own copies; then the team meets.
    std::uintptr_t *const data = current_reductions;
    bool const owned = owns_innermost_registration();
    end_taskgroup();
    task_t &task = *current_task().implicit;
    if (owned && data) {
        void *const blocks = reinterpret_cast<void *>(data[2]);
        if (task.team && task.thread_num == 0)
            free_combined_blocks(*task.team, blocks);
        else
            std::free(blocks);
    }
    if (!cancelled && task.team) team_barrier(*task.team);
}

FORKUNION_GOMP_EXPORT void GOMP_task_reduction_remap(std::size_t count, std::size_t originals, void **items) {
    // items[i] becomes the calling thread's copy; for i < originals, items[count + i] the original's address.
    for (std::size_t i = 0; i != count; ++i) {
        void *original = nullptr;
        void *copy = private_copy(items[i], &original);
        if (!copy) refuse("GOMP_task_reduction_remap (in_reduction)", "an item no enclosing task_reduction has");
        items[i] = copy;
        if (i < originals) items[count + i] = original;
    }
}

namespace {
/**  A `parallel` with `reduction(task, ...)`: every member sees the registration, as a taskgroup around its task. */
struct parallel_reductions_t {
    void (*fn)(void *);
    void *data;
    std::uintptr_t *reductions;
};
void run_with_reductions(void *argument) noexcept {
    auto const *region = static_cast<parallel_reductions_t const *>(argument);
    std::uintptr_t *const saved = current_reductions;
    current_reductions = region->reductions;
    region->fn(region->data);
    current_reductions = saved;
}
} // namespace

FORKUNION_GOMP_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned nthreads,
                                                        unsigned flags) {
    // GCC's data block starts with the registration; its code combines `returned` threads' copies and unregisters.
    unsigned const threads = resolve_team_size(nthreads);
    auto *const reductions = *static_cast<std::uintptr_t **>(data);
    std::uintptr_t *const saved = current_reductions;
    current_reductions = nullptr; // the region's registration encloses nothing of the caller's
    register_reductions(reductions, threads);
    current_reductions = saved;
    parallel_reductions_t region{fn, data, reductions};
    run_parallel(run_with_reductions, &region, threads, flags, nullptr, nullptr);
    return threads;
}

// ---- Host `teams`: the teams run one after another on the encountering thread ----

namespace forkunion::gomp {
constinit thread_local teams_state_t teams_state FORKUNION_GOMP_TLS;
/**  The `thread_limit` of the `target` region the calling thread runs (0: none), which a `teams` in it keeps unless
 *   its own clause says otherwise. */
constinit thread_local int device_thread_limit FORKUNION_GOMP_TLS = 0;

namespace {
/**  Copies this thread's state to the one its current task shows the threads of nested regions (the `target`
 *   region's, in `GOMP_teams4`): GCC emits `GOMP_teams4` only inside a target region, which gives the task one. */
void publish_teams_state() noexcept {
    if (teams_state_t *const visible = current_task().teams) *visible = teams_state;
}
} // namespace

teams_state_t const &current_teams() noexcept {
    for (task_t const *task = &current_task(); task; task = task->parent) {
        if (task->teams) return *task->teams;
        if (task->implicit && task->implicit->teams) return *task->implicit->teams; // an explicit task's region
    }
    return teams_state;
}

namespace {
/**  A `teams` region's thread-limit-var: its `thread_limit` clause, else teams-thread-limit-var
 *   (`OMP_TEAMS_THREAD_LIMIT`, `omp_set_teams_thread_limit`), else none (0). */
unsigned teams_limit(unsigned clause) noexcept {
    if (clause) return clause;
    int const variable = settings().teams_thread_limit.load(std::memory_order_relaxed);
    return variable > 0 ? static_cast<unsigned>(variable) : 0;
}
} // namespace
} // namespace forkunion::gomp

FORKUNION_GOMP_EXPORT void GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams, unsigned thread_limit,
                                          unsigned flags) {
    (void)flags;
    settings_t const &s = settings();
    int const nteams = s.num_teams.load(std::memory_order_relaxed);
    // Without a clause: nteams-var, else libgomp's choice of 3.
    if (num_teams == 0) num_teams = nteams > 0 ? static_cast<unsigned>(nteams) : 3;
    thread_limit = teams_limit(thread_limit);
    teams_state_t const saved = teams_state;
    task_t &parent = current_task();
    teams_state_t *const saved_pointer = parent.teams;
    // What the threads of regions nested in a team read (`current_teams`): a copy of this thread's state, which a
    // `target` region inside the team changes while they may be reading (`GOMP_target_ext`).
    teams_state_t visible;
    parent.teams = &visible;
    task_icv_t const icv = parent.icv;
    // Each team's initial thread is this thread: running the teams in turn is a conforming schedule, since
    // teams cannot synchronize with each other. The state changes only between teams, when no nested region runs.
    for (unsigned team = 0; team != num_teams; ++team) {
        teams_state = {static_cast<int>(team), static_cast<int>(num_teams), static_cast<int>(thread_limit)};
        visible = teams_state;
        fn(data);
        parent.icv = icv;
    }
    teams_state = saved;
    parent.teams = saved_pointer;
}

FORKUNION_GOMP_EXPORT bool GOMP_teams4(unsigned num_teams_low, unsigned num_teams_high, unsigned thread_limit,
                                       bool first) {
    // The loop GCC wraps around a `teams` body: true while there is a team left to run on this thread.
    if (first) {
        // As libgomp's host fallback: the clause's lower bound, else one team (nteams-var is the host's), and the
        // clause's thread limit, else the target region's (teams-thread-limit-var is the host's too).
        unsigned count = num_teams_low ? num_teams_low : num_teams_high;
        if (count == 0) count = 1;
        int const limit =
            thread_limit ? static_cast<int>(thread_limit > INT_MAX ? INT_MAX : thread_limit) : device_thread_limit;
        teams_state = {0, static_cast<int>(count), limit};
        publish_teams_state();
        return true;
    }
    if (teams_state.number + 1 >= teams_state.count) {
        teams_state = teams_state_t{0, 1, device_thread_limit};
        publish_teams_state();
        return false;
    }
    ++teams_state.number;
    publish_teams_state();
    return true;
}

// ---- `error` directive and the `allocate` clause ----

// The wording is libgomp's, after the drop-in's own prefix.
FORKUNION_GOMP_EXPORT void GOMP_warning(char const *message, std::size_t length) {
    if (message)
        std::fprintf(stderr, "forkunion gomp: error directive encountered: %.*s\n", static_cast<int>(length), message);
    else
        std::fprintf(stderr, "forkunion gomp: error directive encountered\n");
}

FORKUNION_GOMP_EXPORT void GOMP_error(char const *message, std::size_t length) {
    if (message)
        std::fprintf(stderr, "forkunion gomp: fatal error: error directive encountered: %.*s\n",
                     static_cast<int>(length), message);
    else
        std::fprintf(stderr, "forkunion gomp: fatal error: error directive encountered\n");
    std::exit(EXIT_FAILURE);
}

// ---- `target` on the host, the only device: what libgomp does without offload plugins ----
//
// A target region runs on the encountering thread as the device's initial task, as libgomp's host fallback runs it:
// a task of its own at level 0 with no team, the device's initial ICVs (the environment's, not the encountering
// task's) and its own `teams` state, whatever encloses the construct on the host. So `omp for` inside it binds to it
// alone and a `parallel` inside it is an outermost one (a full team under max-active-levels 1); its roots are the
// thread's next ones up (`task_t::root_level`), never those of the regions around it. Data: `map` clauses share the
// host's, so `target data`, `enter`/`exit data` and `update` move nothing; `firstprivate` items (map kind 12, the
// alignment's log2 in the kind's high byte) are copied into a block the region gets instead. A region runs before
// the call returns, as an undeferred task, unless it has `nowait` and `depend` while some task is incomplete: then
// it is a task (`target_block_t`) that starts once the tasks it depends on complete.

namespace forkunion::gomp {
void device_not_found() noexcept {
    if (settings().target_offload != target_offload_mandatory_k) return;
    (void)current_task(); // the environment's warnings and `OMP_DISPLAY_ENV` first, as at any first OpenMP call
    std::fprintf(stderr, "forkunion gomp: OMP_TARGET_OFFLOAD is set to MANDATORY, but device not found\n");
    std::exit(EXIT_FAILURE);
}
} // namespace forkunion::gomp

namespace {
constexpr unsigned map_firstprivate_k = 12;

/**  The `thread_limit` clause of a `target` construct in GCC's `args` list (0 when absent), at most `INT_MAX`: each
 *   entry is an id, with its value above bit 16 or, with the subsequent-parameter bit, in the next entry. */
int target_thread_limit(void **args) noexcept {
    constexpr std::intptr_t device_mask_k = (1 << 7) - 1, subsequent_k = 1 << 7, id_mask_k = 0xff << 8;
    constexpr std::intptr_t thread_limit_k = 2 << 8;
    constexpr int value_shift_k = 16;
    if (!args) return 0;
    while (*args) {
        auto const id = reinterpret_cast<std::intptr_t>(*args++);
        std::intptr_t value = id >> value_shift_k;
        if (id & subsequent_k) {
            if (!*args) break;
            value = reinterpret_cast<std::intptr_t>(*args++);
        }
        if ((id & device_mask_k) != 0 || (id & id_mask_k) != thread_limit_k) continue; // another device's, or not it
        return value <= 0 ? 0 : value > INT_MAX ? INT_MAX : static_cast<int>(value);
    }
    return 0;
}

/**
 *  Runs `fn(data)` as the host device's initial task (see above); `thread_limit` is the construct's clause (0 for
 *  none; `target_thread_limit`). Not `noexcept`: a `pthread_exit` in the region unwinds through it (as through a
 *  region's body), restoring the thread's task and teams state on the way, so the thread's exit finds them as they
 *  were around the construct.
 */
void run_on_host_device(void (*fn)(void *), void *data, int thread_limit) {
    struct scope_t {
        task_t device;
        teams_state_t own;
        teams_state_t const saved_teams = teams_state;
        int const saved_limit = device_thread_limit;
        task_t *saved = nullptr;
        explicit scope_t(int limit) noexcept {
            task_t &encountering = current_task();
            device.icv = settings().initial;
            device.implicit = &device;
            // The region the encountering task would open claims the root at its `root_level`; it cannot open one
            // while it runs this, so a region opened in here may take that root.
            device.root_level = encountering.root_level;
            // Its own `teams` state: the threads of the enclosing region read the enclosing one's copy, left alone;
            // the threads of regions nested in this one find this one through their tasks' ancestors.
            device_thread_limit = limit;
            teams_state = teams_state_t{0, 1, device_thread_limit};
            own = teams_state;
            device.teams = &own;
            saved = swap_current_task(&device);
        }
        ~scope_t() {
            swap_current_task(saved);
            teams_state = saved_teams;
            device_thread_limit = saved_limit;
        }
    } scope(thread_limit);
    // No taskgroup encloses the device's initial task: a frame with no flag and no key hides the thread's own (a
    // cancelled one among them must not discard the tasks created in here). Made after `scope`, so it records the
    // device task's level, and ended before it.
    taskgroup_frame_t const frame({}, nullptr);
    fn(data);
    if (tasks_incomplete()) [[unlikely]]
        finish_region_tasks(&scope.device);
}

/**  The bytes of the `firstprivate` items (map kind 12) among `mapnum` items, laid out in turn at their alignments
 *   (the log2 of each is the kind's high byte), and the largest alignment. */
std::size_t private_bytes(std::size_t mapnum, std::size_t const *sizes, unsigned short const *kinds,
                          std::size_t &align) noexcept {
    std::size_t bytes = 0;
    align = 1;
    for (std::size_t i = 0; i != mapnum; ++i)
        if ((kinds[i] & 0xff) == map_firstprivate_k) {
            std::size_t const item_align = std::size_t(1) << (kinds[i] >> 8);
            if (align < item_align) align = item_align;
            bytes = (bytes + item_align - 1) / item_align * item_align + sizes[i];
        }
    return bytes;
}

/**  Copies the `firstprivate` items `addrs` points at into `block` (laid out as `private_bytes` says) and points
 *   `addrs` at the copies. */
void copy_private(std::size_t mapnum, void **addrs, std::size_t const *sizes, unsigned short const *kinds,
                  char *block) noexcept {
    std::size_t offset = 0;
    for (std::size_t i = 0; i != mapnum; ++i)
        if ((kinds[i] & 0xff) == map_firstprivate_k) {
            std::size_t const item_align = std::size_t(1) << (kinds[i] >> 8);
            offset = (offset + item_align - 1) / item_align * item_align;
            if (addrs[i]) std::memcpy(block + offset, addrs[i], sizes[i]);
            addrs[i] = block + offset;
            offset += sizes[i];
        }
}

/**
 *  A `target nowait` region that depends on an incomplete task, as the task it stands for: one data block holding
 *  this header, the region's address list and its `firstprivate` copies (made at the construct, as OpenMP
 *  says). `GOMP_task` copies the block with `copy_target_block`, which points the list at the new copies.
 */
struct target_block_t {
    void (*fn)(void *);
    std::size_t bytes;     ///< The whole block.
    std::size_t mapnum;    ///< Entries of the address list, which follows this header.
    std::size_t copies_at; ///< Offset of the `firstprivate` copies.
    int thread_limit;
};
void **target_addresses(void *block) noexcept {
    return reinterpret_cast<void **>(static_cast<char *>(block) + sizeof(target_block_t));
}
void copy_target_block(void *destination, void *source) noexcept {
    auto const &header = *static_cast<target_block_t const *>(source);
    std::memcpy(destination, source, header.bytes);
    auto const from = reinterpret_cast<std::uintptr_t>(source), to = reinterpret_cast<std::uintptr_t>(destination);
    void **addrs = target_addresses(destination);
    for (std::size_t i = 0; i != header.mapnum; ++i) {
        auto const address = reinterpret_cast<std::uintptr_t>(addrs[i]);
        if (address >= from + header.copies_at && address < from + header.bytes) // a copy inside the block
            addrs[i] = reinterpret_cast<void *>(address - from + to);
    }
}
/**  The device a construct's `device` argument names (-1 without the clause: default-device-var; -2 the host
 *   fallback, which `if(false)` asks for) is the host, or missing (`device_not_found`). */
void resolve_target_device(int device) noexcept {
    if (settings().target_offload != target_offload_mandatory_k) return;
    constexpr int default_device_k = -1, host_fallback_k = -2;
    if (device == default_device_k) device = current_task().icv.default_device;
    if (device != host_fallback_k && device != 0) device_not_found();
}

void run_target_block(void *block) {
    auto const &header = *static_cast<target_block_t const *>(block);
    run_on_host_device(header.fn, target_addresses(block), header.thread_limit);
}

constexpr unsigned target_nowait_k = 1;

/**  Whether a construct's `nowait` and `depend` make it a task that may have to wait for others: only while some
 *   task is incomplete (see `GOMP_task`). libgomp's host fallback defers those likewise. */
bool deferred_target(unsigned flags, void **depend) noexcept {
    return (flags & target_nowait_k) && depend && incomplete_tasks.load(std::memory_order_acquire);
}

/**  A construct without `nowait` is an undeferred target task: with `depend`, it first waits for the tasks it
 *   depends on, as an `if(0)` task does (`GOMP_taskwait_depend`), and as libgomp's does. */
void wait_for_target_dependences(unsigned flags, void **depend) {
    if (!(flags & target_nowait_k) && depend && tasks_incomplete()) [[unlikely]]
        GOMP_taskwait_depend(depend);
}
} // namespace

FORKUNION_GOMP_EXPORT void GOMP_target_ext(int device, void (*fn)(void *), std::size_t mapnum, void **hostaddrs,
                                           std::size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                                           void **args) {
    resolve_target_device(device);
    int const thread_limit = target_thread_limit(args);
    std::size_t align = 1;
    std::size_t const bytes = private_bytes(mapnum, sizes, kinds, align);
    if (deferred_target(flags, depend)) [[unlikely]] {
        std::size_t const list = sizeof(target_block_t) + mapnum * sizeof(void *);
        if (align < alignof(target_block_t)) align = alignof(target_block_t);
        std::size_t const copies_at = (list + align - 1) / align * align;
        std::size_t const total = copies_at + bytes;
        auto *block = static_cast<char *>(heap_block(total, align, "GOMP_target_ext (a deferred target region)"));
        auto &header = *reinterpret_cast<target_block_t *>(block);
        header = {fn, total, mapnum, copies_at, thread_limit};
        void **addrs = target_addresses(block);
        for (std::size_t i = 0; i != mapnum; ++i) addrs[i] = hostaddrs[i];
        copy_private(mapnum, addrs, sizes, kinds, block + copies_at);
        // Runs it now, defers it until the tasks it depends on complete, or discards it in a cancelled taskgroup.
        GOMP_task(run_target_block, block, copy_target_block, static_cast<long>(total), static_cast<long>(align), true,
                  task_depend_k, depend, 0, nullptr);
        std::free(block);
        return;
    }
    wait_for_target_dependences(flags, depend);
    if (!bytes) return run_on_host_device(fn, hostaddrs, thread_limit);
    void *block = heap_block(bytes, align, "GOMP_target_ext (firstprivate data of a target region)");
    copy_private(mapnum, hostaddrs, sizes, kinds, static_cast<char *>(block));
    run_on_host_device(fn, hostaddrs, thread_limit);
    std::free(block);
}

FORKUNION_GOMP_EXPORT void GOMP_target(int device, void (*fn)(void *), void const *unused, std::size_t mapnum,
                                       void **hostaddrs, std::size_t *sizes, unsigned char *kinds) {
    // The GCC 4.9 form: no firstprivate items, no clauses.
    (void)unused, (void)mapnum, (void)sizes, (void)kinds;
    resolve_target_device(device);
    run_on_host_device(fn, hostaddrs, 0);
}

FORKUNION_GOMP_EXPORT void GOMP_target_data(int device, void const *, std::size_t, void **, std::size_t *,
                                            unsigned char *) {
    resolve_target_device(device);
}
FORKUNION_GOMP_EXPORT void GOMP_target_data_ext(int device, std::size_t, void **, std::size_t *, unsigned short *) {
    resolve_target_device(device);
}
FORKUNION_GOMP_EXPORT void GOMP_target_end_data(void) {}
FORKUNION_GOMP_EXPORT void GOMP_target_update(int device, void const *, std::size_t, void **, std::size_t *,
                                              unsigned char *) {
    resolve_target_device(device);
}
// `target update` and `target enter`/`exit data` move nothing; with `nowait` and `depend` they are still tasks that
// the tasks depending on them wait for, behind the tasks they depend on, and without `nowait` they wait for those.
FORKUNION_GOMP_EXPORT void GOMP_target_update_ext(int device, std::size_t, void **, std::size_t *, unsigned short *,
                                                  unsigned flags, void **depend) {
    resolve_target_device(device);
    if (deferred_target(flags, depend)) [[unlikely]]
        return GOMP_task([](void *) noexcept {}, nullptr, nullptr, 0, 1, true, task_depend_k, depend, 0, nullptr);
    wait_for_target_dependences(flags, depend);
}
FORKUNION_GOMP_EXPORT void GOMP_target_enter_exit_data(int device, std::size_t, void **, std::size_t *,
                                                       unsigned short *, unsigned flags, void **depend) {
    resolve_target_device(device);
    if (deferred_target(flags, depend)) [[unlikely]]
        return GOMP_task([](void *) noexcept {}, nullptr, nullptr, 0, 1, true, task_depend_k, depend, 0, nullptr);
    wait_for_target_dependences(flags, depend);
}

// Offload images register themselves from constructors of programs built with offloading: there is no device to
// give them to, so nothing happens, and every region runs on the host.
FORKUNION_GOMP_EXPORT void GOMP_offload_register_ver(unsigned, void const *, int, void const *) {}
FORKUNION_GOMP_EXPORT void GOMP_offload_register(void const *, int, void const *) {}
FORKUNION_GOMP_EXPORT void GOMP_offload_unregister_ver(unsigned, void const *, int, void const *) {}
FORKUNION_GOMP_EXPORT void GOMP_offload_unregister(void const *, int, void const *) {}
