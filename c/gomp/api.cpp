/**
 *  @file   c/gomp/api.cpp
 *  @brief  The `omp_*` C API: queries and setters of the ICVs, locks, timers, places, affinity format, allocators.
 *
 *  Each setter changes what the OpenMP specification says it changes: the current task's data environment (the
 *  team size, schedule, dynamic adjustment and default device of the regions it starts) or a process-wide value
 *  (max-active-levels, nteams, the teams thread limit, the affinity format, the default allocator). Values the
 *  specification leaves to the implementation follow libgomp's choices, so programs print the same: a team size
 *  below 1 becomes 1, a chunk below 1 the schedule's default, an unknown schedule kind is ignored.
 */
#include "omp_api.hpp"
#include "runtime.hpp"

#include <cstdio>  // `std::snprintf`
#include <cstdlib> // `std::aligned_alloc`
#include <cstring> // `std::strlen`
#include <ctime>   // `clock_gettime`
#include <new>     // `std::nothrow`

#include <pthread.h> // `pthread_self`
#include <unistd.h>  // `gethostname`, `getpid`

#include <forkunion/topology/affinity.hpp>

namespace forkunion::gomp {

int current_place() noexcept;
int pause_idle_roots() noexcept;

namespace {

task_t &task() noexcept {
    return current_task();
}

/**  The lock types of GCC's `omp.h`: 4 bytes (a futex mutex in place) and 16 bytes (owner, depth, mutex). */
struct omp_lock_layout_t {
    std::atomic<std::uint32_t> word;
};
struct omp_nest_lock_layout_t {
    std::atomic<std::uint32_t> word;
    std::uint32_t depth;
    task_t const *owner;
};
static_assert(sizeof(omp_lock_layout_t) == 4 && alignof(omp_lock_layout_t) <= 4);
static_assert(sizeof(omp_nest_lock_layout_t) == 16 && alignof(omp_nest_lock_layout_t) <= 8);

/**  Nest locks belong to tasks: the owner is the task that set it, so one thread's two tasks are two owners. */
task_t const *lock_owner() noexcept {
    return &task();
}

} // namespace

// ---- Allocators ----

namespace {

/**  The `pool_size` of an allocator without one (the trait's default). */
constexpr std::uint64_t unlimited_pool_k = ~std::uint64_t(0);

/**  A memory allocator made by `omp_init_allocator`; the predefined ones are the handles 1 .. 8. */
struct allocator_t {
    std::size_t alignment = alignof(std::max_align_t);
    std::uint64_t pool_size = unlimited_pool_k;
    std::atomic<std::uint64_t> used{0}; ///< Bytes of the pool's live blocks (counted only under a limit).
    int fallback = 11;                  ///< `omp_atv_default_mem_fb`.
    /**  `fb_data`: `omp_null_allocator` unless set, which at the fallback means the calling task's
     *   def-allocator-var, as in libgomp. */
    std::uintptr_t fallback_allocator = 0;
};

constexpr std::uintptr_t predefined_allocators_k = 8;

/**  What precedes every block: how to free it and what it counts against. */
struct alignas(alignof(std::max_align_t)) block_header_t {
    void *base;
    std::size_t size;
    std::uintptr_t allocator;
};

std::uintptr_t resolve(std::uintptr_t allocator) noexcept {
    if (allocator == 0) allocator = current_task().icv.default_allocator;
    return allocator ? allocator : 1;
}

/**  Counts `size` more bytes against `custom`'s pool, unless that would pass its size; false then. A request
 *   that does not fit never counts, so it cannot turn away one that does. */
bool charge(allocator_t &custom, std::size_t size) noexcept {
    if (custom.pool_size == unlimited_pool_k) return true;
    std::uint64_t used = custom.used.load(std::memory_order_relaxed);
    do
        if (size > custom.pool_size || used > custom.pool_size - size) return false;
    while (!custom.used.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
    return true;
}
void uncharge(allocator_t &custom, std::size_t size) noexcept {
    if (custom.pool_size != unlimited_pool_k) custom.used.fetch_sub(size, std::memory_order_relaxed);
}

/**  One request for memory: `count` elements of `size` bytes each (`count` is 1 but for `omp_calloc`, whose
 *   product may pass what a `size_t` counts: such a request finds no memory), zeroed or not. */
struct request_t {
    std::size_t alignment = 0;
    std::size_t count = 1;
    std::size_t size = 0;
    bool zero = false;
    /**  Bytes already counted against the first allocator's pool for this request (a block of that pool being moved
     *   by `omp_realloc`): that allocator charges only the difference, and `*took_counted` says whether it served
     *   the request, so the old block's bytes became the new one's. Else they still count for the old block. */
    std::size_t counted = 0;
    bool *took_counted = nullptr;
};

/**  Stops the program for a request whose allocator's fallback is `abort_fb`, with libgomp's exit status. */
[[noreturn]] [[gnu::cold]] void abort_fallback(request_t const &request) noexcept {
    if (request.size <= ~std::size_t(0) / request.count)
        std::fprintf(stderr,
                     "forkunion gomp: out of memory allocating %zu bytes (the allocator's fallback is abort_fb); "
                     "exiting\n",
                     request.count * request.size);
    else // libgomp names the product modulo 2^64 here
        std::fprintf(stderr,
                     "forkunion gomp: out of memory allocating %zu x %zu bytes, more than a size_t counts (the "
                     "allocator's fallback is abort_fb); exiting\n",
                     request.count, request.size);
    std::exit(EXIT_FAILURE);
}

/**  Says once per process, on stderr, that a chain of `allocator_fb` fallbacks came back to an allocator it had
 *   already tried, which ends the request as `null_fb` would (libgomp follows such a chain for ever). */
[[gnu::cold]] void note_fallback_cycle(std::uintptr_t allocator) noexcept {
    static std::atomic<bool> noted{false};
    if (noted.exchange(true, std::memory_order_relaxed)) return;
    std::fprintf(stderr,
                 "forkunion gomp: the allocator_fb fallbacks of allocator %#llx come back to allocators already "
                 "tried; such a request fails as with null_fb (said once)\n",
                 static_cast<unsigned long long>(allocator));
}

/**
 *  A block for `request` (none for 0 bytes, as libgomp), aligned to the larger of its alignment and the
 *  allocator's, from allocator `handle` or, when that has no room, from where its fallback trait leads; null when
 *  none has room.
 *
 *  Fallbacks are followed as libgomp follows them, for any length of chain: `allocator_fb` to `fb_data` (null being
 *  the calling task's def-allocator-var), `default_mem_fb` to `omp_default_mem_alloc`; a predefined allocator has
 *  no fallback. The allocator after each is a function of the one before alone (traits are fixed at creation, and
 *  def-allocator-var is the calling task's), so a chain either ends or cycles, and Brent's cycle detection (the
 *  chain compared with a mark moved to it at every power of two of steps) finds a cycle within three times as many
 *  steps as the line into it and the cycle together, with no bound on the number of allocators. A cycle ends the
 *  request as a failure, as if the last fallback were `null_fb` (libgomp retries it for ever).
 */
void *allocate(request_t const &request, std::uintptr_t handle) noexcept {
    if (request.count == 0 || request.size == 0) return nullptr;
    // A product a `size_t` cannot count fits in no memory: every allocator refuses it, and its fallback decides.
    bool const counted_product = request.size <= ~std::size_t(0) / request.count;
    std::size_t const size = counted_product ? request.count * request.size : ~std::size_t(0);
    handle = resolve(handle);
    std::uintptr_t const first = handle;
    std::uintptr_t mark = handle; // Brent: the chain's position at the last power of two of steps
    std::size_t steps_since_mark = 0, steps_to_move_mark = 1;
    for (bool first_step = true;;) {
        std::size_t const reserved = first_step ? request.counted : 0;
        allocator_t *custom = handle > predefined_allocators_k ? reinterpret_cast<allocator_t *>(handle) : nullptr;
        std::size_t align = alignof(std::max_align_t);
        if (custom && custom->alignment > align) align = custom->alignment;
        if (request.alignment > align) align = request.alignment;
        if (align & (align - 1)) return nullptr; // not a power of two: the specification makes this undefined
        // A size whose block (header and alignment included) a `size_t` cannot count fits in no memory.
        bool const fits = counted_product && size <= ~std::size_t(0) - sizeof(block_header_t) - align;
        // Growing past what is counted charges the growth; shrinking gives the rest back once the block exists.
        std::size_t const more = size > reserved ? size - reserved : 0;
        if (fits && (!custom || charge(*custom, more))) {
            std::size_t const total = sizeof(block_header_t) + align + size;
            void *base = request.zero ? std::calloc(1, total) : std::malloc(total);
            if (base) {
                auto const start = reinterpret_cast<std::uintptr_t>(base) + sizeof(block_header_t);
                auto *user = reinterpret_cast<void *>((start + align - 1) / align * align);
                auto *header = reinterpret_cast<block_header_t *>(user) - 1;
                header->base = base, header->size = size, header->allocator = handle;
                if (custom && reserved > size) uncharge(*custom, reserved - size);
                if (request.took_counted) *request.took_counted = reserved != 0;
                return user;
            }
            if (custom) uncharge(*custom, more);
        }
        if (!custom) return nullptr; // the predefined allocators are the system's memory already
        int const fallback = custom->fallback;
        if (fallback == 12) return nullptr;                                // null_fb
        if (fallback == 13) abort_fallback(request);                       // abort_fb
        handle = fallback == 14 ? resolve(custom->fallback_allocator) : 1; // allocator_fb, else default_mem_fb
        if (handle == mark) return note_fallback_cycle(first), nullptr;
        if (++steps_since_mark == steps_to_move_mark) mark = handle, steps_since_mark = 0, steps_to_move_mark *= 2;
        first_step = false;
    }
}

/**  The allocator a block counts against, or null for a predefined one. */
allocator_t *owner_of(void *pointer) noexcept {
    auto const *header = static_cast<block_header_t *>(pointer) - 1;
    return header->allocator > predefined_allocators_k ? reinterpret_cast<allocator_t *>(header->allocator) : nullptr;
}

void release(void *pointer) noexcept {
    if (!pointer) return;
    auto *header = static_cast<block_header_t *>(pointer) - 1;
    if (allocator_t *custom = owner_of(pointer)) uncharge(*custom, header->size);
    std::free(header->base);
}

} // namespace

} // namespace forkunion::gomp

using namespace forkunion::gomp;
using forkunion::cpu_mask_t;
using forkunion::max_cpus_k;
using forkunion::try_read_current_affinity;

// ---- Team and thread queries ----

FORKUNION_GOMP_EXPORT void omp_set_num_threads(int count) {
    task().icv.nthreads = count > 0 ? static_cast<unsigned>(count) : 1;
}
FORKUNION_GOMP_EXPORT int omp_get_num_threads(void) {
    return static_cast<int>(task().team_size);
}
FORKUNION_GOMP_EXPORT int omp_get_max_threads(void) {
    return static_cast<int>(task().icv.nthreads);
}
FORKUNION_GOMP_EXPORT int omp_get_thread_num(void) {
    return static_cast<int>(task().thread_num);
}
FORKUNION_GOMP_EXPORT int omp_get_num_procs(void) {
    return static_cast<int>(settings().allowed_cores);
}
FORKUNION_GOMP_EXPORT int omp_in_parallel(void) {
    return task().active_level > 0;
}
FORKUNION_GOMP_EXPORT void omp_set_dynamic(int on) {
    task().icv.dynamic = on != 0;
}
FORKUNION_GOMP_EXPORT int omp_get_dynamic(void) {
    return task().icv.dynamic;
}
FORKUNION_GOMP_EXPORT int omp_get_thread_limit(void) {
    return static_cast<int>(thread_limit_of(task()));
}
FORKUNION_GOMP_EXPORT int omp_get_level(void) {
    return task().level;
}
FORKUNION_GOMP_EXPORT int omp_get_active_level(void) {
    return task().active_level;
}
FORKUNION_GOMP_EXPORT int omp_in_final(void) {
    return task().in_final;
}
FORKUNION_GOMP_EXPORT int omp_get_cancellation(void) {
    return settings().cancellation;
}
FORKUNION_GOMP_EXPORT int omp_get_proc_bind(void) {
    return task().icv.bind;
}
FORKUNION_GOMP_EXPORT int omp_get_max_task_priority(void) {
    return settings().max_task_priority;
}
FORKUNION_GOMP_EXPORT int omp_get_supported_active_levels(void) {
    return supported_active_levels_k;
}

FORKUNION_GOMP_EXPORT void omp_set_max_active_levels(int levels) {
    // The calling task's ICV (its descendants inherit it). More levels than supported: the supported number, as
    // the specification says; a negative number changes nothing.
    if (levels < 0) return;
    task().icv.max_active_levels =
        static_cast<std::uint8_t>(levels < supported_active_levels_k ? levels : supported_active_levels_k);
}
FORKUNION_GOMP_EXPORT int omp_get_max_active_levels(void) {
    return task().icv.max_active_levels;
}
FORKUNION_GOMP_EXPORT void omp_set_nested(int on) {
    // As libgomp: on allows every supported level; off leaves 0 and 1 alone and turns more into 1.
    if (on) return omp_set_max_active_levels(supported_active_levels_k);
    if (omp_get_max_active_levels() > 1) omp_set_max_active_levels(1);
}
FORKUNION_GOMP_EXPORT int omp_get_nested(void) {
    // As OpenMP 5 and libgomp: a region started here could be active inside an active one.
    int const levels = omp_get_max_active_levels();
    return levels > 1 && levels > task().active_level;
}

FORKUNION_GOMP_EXPORT void omp_set_schedule(int kind, int chunk) {
    task_icv_t &icv = task().icv;
    int const base = kind & ~static_cast<int>(sched_monotonic_k);
    if (base < sched_static_k || base > sched_auto_k) return; // unknown kinds change nothing
    icv.run_sched = kind;
    if (base == sched_auto_k) return; // `auto` has no chunk
    icv.run_chunk = chunk >= 1 ? chunk : (base == sched_static_k ? 0 : 1);
}
FORKUNION_GOMP_EXPORT void omp_get_schedule(int *kind, int *chunk) {
    task_icv_t const &icv = task().icv;
    *kind = icv.run_sched;
    *chunk = icv.run_chunk;
}

namespace {
/**  The task `levels_up` parallel levels above the calling one (0 = itself), or null. */
task_t const *ancestor(int level) noexcept {
    task_t const *here = task().implicit;
    if (level < 0 || level > here->level) return nullptr;
    while (here && here->level > level) here = here->parent ? here->parent->implicit : nullptr;
    return here;
}
} // namespace

FORKUNION_GOMP_EXPORT int omp_get_ancestor_thread_num(int level) {
    task_t const *found = ancestor(level);
    return found ? static_cast<int>(found->thread_num) : -1;
}
FORKUNION_GOMP_EXPORT int omp_get_team_size(int level) {
    task_t const *found = ancestor(level);
    return found ? static_cast<int>(found->team_size) : -1;
}

// ---- Devices and teams: the host is the only device ----

FORKUNION_GOMP_EXPORT void omp_set_default_device(int device) {
    task().icv.default_device = device >= 0 ? device : 0; // as libgomp: a negative number becomes the host's
}
FORKUNION_GOMP_EXPORT int omp_get_default_device(void) {
    return task().icv.default_device;
}
FORKUNION_GOMP_EXPORT int omp_get_num_devices(void) {
    return 0;
}
FORKUNION_GOMP_EXPORT int omp_get_device_num(void) {
    return 0;
}
FORKUNION_GOMP_EXPORT int omp_get_initial_device(void) {
    return 0;
}
FORKUNION_GOMP_EXPORT int omp_is_initial_device(void) {
    return 1;
}
FORKUNION_GOMP_EXPORT int omp_get_num_teams(void) {
    return teams_count();
}
FORKUNION_GOMP_EXPORT int omp_get_team_num(void) {
    return teams_number();
}
FORKUNION_GOMP_EXPORT void omp_set_num_teams(int teams) {
    // As libgomp: 0 is kept (no request), a negative count changes nothing.
    if (teams >= 0) settings().num_teams.store(teams, std::memory_order_relaxed);
}
FORKUNION_GOMP_EXPORT int omp_get_max_teams(void) {
    return settings().num_teams.load(std::memory_order_relaxed);
}
FORKUNION_GOMP_EXPORT void omp_set_teams_thread_limit(int limit) {
    if (limit >= 0) settings().teams_thread_limit.store(limit, std::memory_order_relaxed); // as `omp_set_num_teams`
}
FORKUNION_GOMP_EXPORT int omp_get_teams_thread_limit(void) {
    return settings().teams_thread_limit.load(std::memory_order_relaxed);
}

// ---- Device memory routines: the host, device 0, is the only device ----
//
// As libgomp without offload plugins: device 0 (`omp_get_initial_device`) is valid and any other number is not;
// memory is the heap, and every copy is a host copy (`memmove`, so overlapping ranges are copied too). A pointer
// cannot be associated with the host's own memory (EINVAL). Beyond libgomp, a rectangle whose extents overflow a
// `size_t`, or one of fewer than 1 dimension, is refused with EINVAL instead of being copied.

namespace {
bool host_device(int device) noexcept {
    if (device > 0) device_not_found(); // stops under OMP_TARGET_OFFLOAD=mandatory, as libgomp
    return device == 0;
}
constexpr int einval_k = 22; // EINVAL, as libgomp returns it
} // namespace

FORKUNION_GOMP_EXPORT void *omp_target_alloc(std::size_t size, int device) {
    return host_device(device) ? std::malloc(size) : nullptr;
}
FORKUNION_GOMP_EXPORT void omp_target_free(void *pointer, int device) {
    if (pointer && host_device(device)) std::free(pointer);
}
FORKUNION_GOMP_EXPORT int omp_target_is_present(void const *pointer, int device) {
    return !pointer || host_device(device);
}
FORKUNION_GOMP_EXPORT int omp_target_memcpy(void *destination, void const *source, std::size_t length,
                                            std::size_t destination_offset, std::size_t source_offset,
                                            int destination_device, int source_device) {
    if (!host_device(destination_device) || !host_device(source_device)) return einval_k;
    if (length)
        std::memmove(static_cast<char *>(destination) + destination_offset,
                     static_cast<char const *>(source) + source_offset, length);
    return 0;
}
FORKUNION_GOMP_EXPORT int omp_target_associate_ptr(void const *, void const *, std::size_t, std::size_t, int device) {
    (void)host_device(device);
    return einval_k;
}
FORKUNION_GOMP_EXPORT int omp_target_disassociate_ptr(void const *, int device) {
    (void)host_device(device);
    return einval_k;
}

namespace {
/**  Sets `first` to the byte offset of a rectangle's first element in its array of `dims` dimensions; false if that
 *   offset, a dimension's stride or the offset of the rectangle's last byte overflows a `size_t`. */
bool rectangle_layout(std::size_t element, int dims, std::size_t const *volume, std::size_t const *offsets,
                      std::size_t const *dimensions, std::size_t &first) noexcept {
    std::size_t stride = element, last = element;
    first = 0;
    for (int dim = dims - 1; dim >= 0; --dim) {
        std::size_t at = 0, reach = 0;
        if (__builtin_mul_overflow(offsets[dim], stride, &at) || __builtin_add_overflow(first, at, &first))
            return false;
        if (volume[dim] &&
            (__builtin_mul_overflow(volume[dim] - 1, stride, &reach) || __builtin_add_overflow(last, reach, &last)))
            return false;
        if (dim && __builtin_mul_overflow(stride, dimensions[dim], &stride)) return false;
    }
    return !__builtin_add_overflow(first, last, &last);
}
} // namespace

FORKUNION_GOMP_EXPORT int omp_target_memcpy_rect(void *destination, void const *source, std::size_t element, int dims,
                                                 std::size_t const *volume, std::size_t const *destination_offsets,
                                                 std::size_t const *source_offsets,
                                                 std::size_t const *destination_dimensions,
                                                 std::size_t const *source_dimensions, int destination_device,
                                                 int source_device) {
    if (!destination && !source) return 2147483647; // the number of dimensions supported: any
    if (!host_device(destination_device) || !host_device(source_device) || dims < 1) return einval_k;
    if (element == 0) return 0;
    for (int dim = 0; dim != dims; ++dim)
        if (volume[dim] == 0) return 0;
    std::size_t to = 0, from = 0, blocks = 1;
    if (!rectangle_layout(element, dims, volume, destination_offsets, destination_dimensions, to) ||
        !rectangle_layout(element, dims, volume, source_offsets, source_dimensions, from))
        return einval_k;
    for (int dim = 0; dim + 1 < dims; ++dim)
        if (__builtin_mul_overflow(blocks, volume[dim], &blocks)) return einval_k;
    std::size_t row = 0;
    if (__builtin_mul_overflow(volume[dims - 1], element, &row)) return einval_k;
    // Block `b` of the outer dimensions, innermost first: its index in each dimension, times that dimension's stride.
    for (std::size_t block = 0; block != blocks; ++block) {
        std::size_t rest = block, to_block = to, from_block = from;
        std::size_t to_stride = element * destination_dimensions[dims - 1];
        std::size_t from_stride = element * source_dimensions[dims - 1];
        for (int dim = dims - 2; dim >= 0; --dim) {
            std::size_t const index = rest % volume[dim];
            rest /= volume[dim];
            to_block += index * to_stride, from_block += index * from_stride;
            if (dim) to_stride *= destination_dimensions[dim], from_stride *= source_dimensions[dim];
        }
        std::memmove(static_cast<char *>(destination) + to_block, static_cast<char const *>(source) + from_block, row);
    }
    return 0;
}

// ---- Timers ----

FORKUNION_GOMP_EXPORT double omp_get_wtime(void) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}
FORKUNION_GOMP_EXPORT double omp_get_wtick(void) {
    timespec resolution{};
    ::clock_getres(CLOCK_MONOTONIC, &resolution);
    return static_cast<double>(resolution.tv_sec) + static_cast<double>(resolution.tv_nsec) * 1e-9;
}

// ---- Locks ----

namespace {
omp_lock_layout_t *simple(void *lock) noexcept {
    return static_cast<omp_lock_layout_t *>(lock);
}
omp_nest_lock_layout_t *nest(void *lock) noexcept {
    return static_cast<omp_nest_lock_layout_t *>(lock);
}
} // namespace

FORKUNION_GOMP_EXPORT void omp_init_lock(void *lock) {
    simple(lock)->word.store(0, std::memory_order_relaxed);
}
FORKUNION_GOMP_EXPORT void omp_destroy_lock(void *lock) {
    (void)lock;
}
FORKUNION_GOMP_EXPORT void omp_set_lock(void *lock) {
    program_lock(simple(lock)->word);
}
FORKUNION_GOMP_EXPORT void omp_unset_lock(void *lock) {
    mutex_unlock(simple(lock)->word);
}
FORKUNION_GOMP_EXPORT int omp_test_lock(void *lock) {
    return mutex_try_lock(simple(lock)->word);
}

FORKUNION_GOMP_EXPORT void omp_init_nest_lock(void *pointer) {
    omp_nest_lock_layout_t *lock = nest(pointer);
    lock->word.store(0, std::memory_order_relaxed);
    lock->depth = 0;
    lock->owner = nullptr;
}
FORKUNION_GOMP_EXPORT void omp_destroy_nest_lock(void *lock) {
    (void)lock;
}
FORKUNION_GOMP_EXPORT void omp_set_nest_lock(void *pointer) {
    omp_nest_lock_layout_t *lock = nest(pointer);
    task_t const *self = lock_owner();
    // `owner` is only written by the holder: a reader that is not the owner can never see its own address there.
    if (__atomic_load_n(&lock->owner, __ATOMIC_RELAXED) != self) {
        program_lock(lock->word);
        __atomic_store_n(&lock->owner, self, __ATOMIC_RELAXED);
    }
    ++lock->depth;
}
FORKUNION_GOMP_EXPORT void omp_unset_nest_lock(void *pointer) {
    omp_nest_lock_layout_t *lock = nest(pointer);
    if (--lock->depth != 0) return;
    __atomic_store_n(&lock->owner, static_cast<task_t const *>(nullptr), __ATOMIC_RELAXED);
    mutex_unlock(lock->word);
}
FORKUNION_GOMP_EXPORT int omp_test_nest_lock(void *pointer) {
    omp_nest_lock_layout_t *lock = nest(pointer);
    task_t const *self = lock_owner();
    if (__atomic_load_n(&lock->owner, __ATOMIC_RELAXED) != self) {
        if (!mutex_try_lock(lock->word)) return 0;
        __atomic_store_n(&lock->owner, self, __ATOMIC_RELAXED);
    }
    return static_cast<int>(++lock->depth);
}

// libgomp keeps these names under OMP_1.0 too (the old lock ABI, refused.cpp): these are the OMP_3.0 defaults.
FORKUNION_GOMP_DEFAULT_VERSION(omp_init_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_destroy_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_set_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_unset_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_test_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_init_nest_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_destroy_nest_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_set_nest_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_unset_nest_lock, "OMP_3.0");
FORKUNION_GOMP_DEFAULT_VERSION(omp_test_nest_lock, "OMP_3.0");

// ---- Places ----

FORKUNION_GOMP_EXPORT int omp_get_num_places(void) {
    return static_cast<int>(places().places_count);
}
FORKUNION_GOMP_EXPORT int omp_get_place_num_procs(int place) {
    places_t const &list = places();
    if (place < 0 || static_cast<unsigned>(place) >= list.places_count) return 0;
    return static_cast<int>(list.places[place].count);
}
FORKUNION_GOMP_EXPORT void omp_get_place_proc_ids(int place, int *ids) {
    places_t const &list = places();
    if (place < 0 || static_cast<unsigned>(place) >= list.places_count || !ids) return;
    place_t const &chosen = list.places[place];
    for (unsigned cpu = 0; cpu != chosen.count; ++cpu) ids[cpu] = static_cast<int>(list.cpus[chosen.first + cpu]);
}
FORKUNION_GOMP_EXPORT int omp_get_place_num(void) {
    return current_place();
}
FORKUNION_GOMP_EXPORT int omp_get_partition_num_places(void) {
    return static_cast<int>(partition_of(current_task()).count);
}
FORKUNION_GOMP_EXPORT void omp_get_partition_place_nums(int *numbers) {
    if (!numbers) return;
    partition_t const partition = partition_of(current_task());
    for (unsigned place = 0; place != partition.count; ++place)
        numbers[place] = static_cast<int>(partition.first + place);
}

// ---- Affinity format ----

namespace {

/**  Appends `text` to `out` (of capacity `size`, always terminated when `size > 0`), counting every byte wanted. */
struct writer_t {
    char *out;
    std::size_t size;
    std::size_t length = 0;
    void put(char c) noexcept {
        if (length + 1 < size) out[length] = c;
        ++length;
        if (size) out[length < size ? length : size - 1] = '\0';
    }
    void put(char const *text) noexcept {
        while (*text) put(*text++);
    }
};

/**  The CPUs the calling thread may run on, as a list like `0-3,8`. */
void put_affinity(writer_t &out) noexcept {
    cpu_mask_t mask;
    if (!try_read_current_affinity(mask)) {
        out.put("-1");
        return;
    }
    bool first = true;
    for (std::size_t cpu = mask.first(); cpu != cpu_mask_t::npos_k;) {
        std::size_t last = cpu;
        while (last + 1 < max_cpus_k && mask.test(last + 1)) ++last;
        char number[48];
        if (last == cpu)
            std::snprintf(number, sizeof(number), "%s%zu", first ? "" : ",", cpu);
        else
            std::snprintf(number, sizeof(number), "%s%zu-%zu", first ? "" : ",", cpu, last);
        out.put(number);
        first = false;
        cpu = last + 1 < max_cpus_k ? mask.next_from(last + 1) : cpu_mask_t::npos_k;
    }
}

/**  The widest field of an affinity format: wider ones (`%99999999999L`) are padded to this many characters. */
constexpr std::size_t max_field_width_k = 4096;

/**  A copy of affinity-format-var, taken under its lock. */
struct affinity_format_t {
    char text[sizeof(settings_t::affinity_format)];
    affinity_format_t() noexcept {
        settings_t &s = settings();
        mutex_lock(s.affinity_format_lock);
        std::memcpy(text, s.affinity_format, sizeof(text));
        mutex_unlock(s.affinity_format_lock);
    }
};

/**  The fields of an affinity format: short and long names. */
struct field_name_t {
    char letter;
    char const *name;
};
constexpr field_name_t field_names_k[] = {{'t', "team_num"},       {'T', "num_teams"},   {'L', "nesting_level"},
                                          {'n', "thread_num"},     {'N', "num_threads"}, {'a', "ancestor_tnum"},
                                          {'H', "host"},           {'P', "process_id"},  {'i', "native_thread_id"},
                                          {'A', "thread_affinity"}};

/**
 *  Stops the program on a malformed directive of an affinity format, as libgomp does when it formats one (setting
 *  one is accepted): exit status 1, libgomp's wording (`what`, `rest`) around the format itself.
 */
[[noreturn]] [[gnu::cold]] void malformed_format(char const *format, char const *what, char const *rest = "") noexcept {
    std::fprintf(stderr, "forkunion gomp: %s in affinity format '%s'%s; exiting\n", what, format, rest);
    std::exit(EXIT_FAILURE);
}

/**
 *  Writes a field's `value` in at least `width` characters. `zero` (numbers only) pads with zeros between the sign
 *  or `0x` and the digits; else blanks go first when `right`, last otherwise. A string field (`%H`, `%A`) is padded
 *  with blanks even under `0`, as libgomp pads it.
 */
void put_padded(writer_t &out, char const *value, std::size_t width, bool zero, bool right) noexcept {
    std::size_t const length = std::strlen(value);
    std::size_t const pad = width > length ? width - length : 0;
    std::size_t const prefix = !zero ? 0 : value[0] == '-' ? 1 : value[0] == '0' && value[1] == 'x' ? 2 : 0;
    for (std::size_t i = 0; i != prefix; ++i) out.put(value[i]);
    if (right || zero)
        for (std::size_t i = 0; i != pad; ++i) out.put(zero ? '0' : ' ');
    out.put(value + prefix);
    if (!right && !zero)
        for (std::size_t i = 0; i != pad; ++i) out.put(' ');
}

/**
 *  Formats `format` (affinity-format-var when null or empty) for the calling thread into `buffer`, as
 *  `omp_capture_affinity` does; returns the whole line's length. A directive is `%%`, or `%`, then optionally `0.`
 *  (zeros) or `.` (right-justified), then a width (digits, the first not 0; needed after `0.` or `.`), then a
 *  field's letter or its `{long_name}`; any other directive stops the program (`malformed_format`).
 */
std::size_t format_affinity(char *buffer, std::size_t size, char const *format) noexcept {
    writer_t out{buffer, size};
    if (size) buffer[0] = '\0';
    affinity_format_t const current;
    if (!format || !*format) format = current.text;
    for (char const *at = format; *at; ++at) {
        if (*at != '%') {
            out.put(*at);
            continue;
        }
        ++at;
        if (*at == '%') {
            out.put('%');
            continue;
        }
        bool zero = false, right = false;
        if (*at == '0') {
            zero = true, ++at;
            if (*at != '.') malformed_format(format, "leading zero not followed by dot");
        }
        if (*at == '.') right = true, ++at;
        // Widths above `max_field_width_k` are that: a field's padding is bounded, and the arithmetic never overflows.
        std::size_t width = 0;
        if (*at >= '1' && *at <= '9')
            for (; *at >= '0' && *at <= '9'; ++at) {
                width = width * 10 + static_cast<std::size_t>(*at - '0');
                if (width > max_field_width_k) width = max_field_width_k;
            }
        else if (zero || right)
            malformed_format(format, "leading zero or right justification", " requires size");
        char letter = *at;
        if (letter == '{') {
            char const *const name = at + 1;
            char const *const close = std::strchr(name, '}');
            char what[128];
            if (!close) {
                std::snprintf(what, sizeof(what), "unterminated long type name '%.64s'", name);
                malformed_format(format, what);
            }
            std::size_t const name_length = static_cast<std::size_t>(close - name);
            letter = 0;
            for (field_name_t const &field : field_names_k)
                if (std::strlen(field.name) == name_length && std::strncmp(field.name, name, name_length) == 0)
                    letter = field.letter;
            if (!letter) {
                std::snprintf(what, sizeof(what), "unsupported long type name '%.*s'",
                              static_cast<int>(name_length < 64 ? name_length : 64), name);
                malformed_format(format, what);
            }
            at = close;
        }
        char value[512] = "";
        writer_t field_out{value, sizeof(value)};
        task_t const &here = task();
        bool number = true;
        switch (letter) {
        case 't':
            std::snprintf(value, sizeof(value), "%d", teams_number());
            break;
        case 'T':
            std::snprintf(value, sizeof(value), "%d", teams_count());
            break;
        case 'L':
            std::snprintf(value, sizeof(value), "%d", here.level);
            break;
        case 'n':
            std::snprintf(value, sizeof(value), "%u", here.thread_num);
            break;
        case 'N':
            std::snprintf(value, sizeof(value), "%u", here.team_size);
            break;
        case 'a':
            std::snprintf(value, sizeof(value), "%d", omp_get_ancestor_thread_num(here.level - 1));
            break;
        case 'H':
            (void)::gethostname(value, sizeof(value) - 1);
            number = false;
            break;
        case 'P':
            std::snprintf(value, sizeof(value), "%ld", static_cast<long>(::getpid()));
            break;
        case 'i': // the pthread handle, in hexadecimal, as libgomp prints it
            std::snprintf(value, sizeof(value), "%#lx", static_cast<unsigned long>(::pthread_self()));
            break;
        case 'A':
            put_affinity(field_out);
            number = false;
            break;
        case '\0':
            malformed_format(format, "missing type after the last '%'");
        default:
            std::snprintf(value, sizeof(value), "unsupported type %c", letter);
            malformed_format(format, value);
        }
        put_padded(out, value, width, zero && number, right);
    }
    return out.length;
}

/**  Where the directive that starts at `at` (a `%`) ends, read as `format_affinity` reads it. */
char const *directive_end(char const *at) noexcept {
    ++at;
    if (*at == '%') return at + 1;
    if (*at == '0') ++at;
    if (*at == '.') ++at;
    while (*at >= '0' && *at <= '9') ++at;
    if (*at == '{') {
        char const *const close = std::strchr(at, '}');
        return close ? close + 1 : at + std::strlen(at);
    }
    return *at ? at + 1 : at;
}

} // namespace

namespace forkunion::gomp {

std::size_t copy_affinity_format(char *destination, std::size_t size, char const *format) noexcept {
    std::size_t kept = 0;
    for (char const *at = format; *at;) {
        char const *const end = *at == '%' ? directive_end(at) : at + 1;
        if (static_cast<std::size_t>(end - format) >= size) break;
        kept = static_cast<std::size_t>(end - format);
        at = end;
    }
    std::memcpy(destination, format, kept);
    destination[kept] = '\0';
    return kept;
}

} // namespace forkunion::gomp

FORKUNION_GOMP_EXPORT void omp_set_affinity_format(char const *format) {
    if (!format) return;
    settings_t &s = settings();
    mutex_lock(s.affinity_format_lock);
    std::size_t const kept = copy_affinity_format(s.affinity_format, sizeof(s.affinity_format), format);
    mutex_unlock(s.affinity_format_lock);
    if (format[kept] != '\0')
        std::fprintf(stderr,
                     "forkunion gomp: omp_set_affinity_format: a format of %zu characters is cut to its first %zu\n",
                     std::strlen(format), kept);
}
FORKUNION_GOMP_EXPORT std::size_t omp_get_affinity_format(char *buffer, std::size_t size) {
    affinity_format_t const current;
    char const *format = current.text;
    std::size_t const length = std::strlen(format);
    if (buffer && size) std::snprintf(buffer, size, "%s", format);
    return length;
}
FORKUNION_GOMP_EXPORT std::size_t omp_capture_affinity(char *buffer, std::size_t size, char const *format) {
    return format_affinity(buffer, buffer ? size : 0, format);
}
FORKUNION_GOMP_EXPORT void omp_display_affinity(char const *format) {
    char line[1024];
    std::size_t const needed = format_affinity(line, sizeof(line), format);
    char *const long_line = needed < sizeof(line) ? nullptr : static_cast<char *>(std::malloc(needed + 1));
    if (long_line) format_affinity(long_line, needed + 1, format); // else a line of 1023 characters at most
    std::fprintf(stderr, "%s\n", long_line ? long_line : line);
    std::free(long_line);
}
FORKUNION_GOMP_EXPORT void omp_display_env(int verbose) {
    display_environment(settings(), verbose != 0);
}

// ---- Resources ----

FORKUNION_GOMP_EXPORT int omp_pause_resource(int kind, int device) {
    if (device != 0 || (kind != 1 && kind != 2)) return -1;
    return pause_idle_roots();
}
FORKUNION_GOMP_EXPORT int omp_pause_resource_all(int kind) {
    if (kind != 1 && kind != 2) return -1;
    return pause_idle_roots();
}

// ---- Memory allocators ----

namespace {
struct omp_alloctrait_layout_t {
    int key;
    std::uintptr_t value;
};
} // namespace

FORKUNION_GOMP_EXPORT std::uintptr_t omp_init_allocator(std::uintptr_t memspace, int ntraits, void const *trait_array) {
    auto const *traits = static_cast<omp_alloctrait_layout_t const *>(trait_array);
    // The values libgomp 12 accepts, each trait's default (`omp_atv_default`) included; high-bandwidth memory
    // (space 3) is refused as libgomp without memkind refuses it.
    if (memspace > 4 || memspace == 3) return 0;
    auto *made = new (std::nothrow) allocator_t();
    if (!made) return 0;
    constexpr std::uintptr_t default_k = ~std::uintptr_t(0);
    for (int trait = 0; trait < ntraits; ++trait) {
        std::uintptr_t const value = traits[trait].value;
        bool valid = true;
        switch (traits[trait].key) {
        case 1: // sync_hint: contended, uncontended, serialized, private (every allocator here is thread-safe)
            valid = value == default_k || (value >= 3 && value <= 6);
            break;
        case 2: // alignment: a power of two
            valid = value == default_k || (value != 0 && !(value & (value - 1)));
            if (valid && value != default_k) made->alignment = value;
            break;
        case 3: // access: all, thread, pteam, cgroup (host memory is accessible to every thread)
            valid = value == default_k || (value >= 7 && value <= 10);
            break;
        case 4: // pool_size: any, 0 included (a pool with no room)
            made->pool_size = value == default_k ? unlimited_pool_k : value;
            break;
        case 5: // fallback: default_mem_fb, null_fb, abort_fb, allocator_fb
            valid = value == default_k || (value >= 11 && value <= 14);
            if (valid && value != default_k) made->fallback = static_cast<int>(value);
            break;
        case 6:
            made->fallback_allocator = value;
            break;
        case 7: // pinned: false only (no pinned memory here)
            valid = value == default_k || value == 0;
            break;
        case 8: // partition: environment, nearest, blocked, interleaved (one memory domain)
            valid = value == default_k || (value >= 15 && value <= 18);
            break;
        default:
            valid = false;
        }
        if (!valid) return delete made, 0;
    }
    return reinterpret_cast<std::uintptr_t>(made);
}
FORKUNION_GOMP_EXPORT void omp_destroy_allocator(std::uintptr_t allocator) {
    if (allocator > predefined_allocators_k) delete reinterpret_cast<allocator_t *>(allocator);
}
FORKUNION_GOMP_EXPORT void omp_set_default_allocator(std::uintptr_t allocator) {
    current_task().icv.default_allocator = allocator ? allocator : 1; // as libgomp: null means the default memory
}
FORKUNION_GOMP_EXPORT std::uintptr_t omp_get_default_allocator(void) {
    return current_task().icv.default_allocator;
}

FORKUNION_GOMP_EXPORT void *omp_alloc(std::size_t size, std::uintptr_t allocator) {
    return allocate({.size = size}, allocator);
}
FORKUNION_GOMP_EXPORT void *omp_aligned_alloc(std::size_t alignment, std::size_t size, std::uintptr_t allocator) {
    return allocate({.alignment = alignment, .size = size}, allocator);
}
FORKUNION_GOMP_EXPORT void *omp_calloc(std::size_t count, std::size_t size, std::uintptr_t allocator) {
    return allocate({.count = count, .size = size, .zero = true}, allocator);
}
FORKUNION_GOMP_EXPORT void *omp_aligned_calloc(std::size_t alignment, std::size_t count, std::size_t size,
                                               std::uintptr_t allocator) {
    return allocate({.alignment = alignment, .count = count, .size = size, .zero = true}, allocator);
}
FORKUNION_GOMP_EXPORT void omp_free(void *pointer, std::uintptr_t allocator) {
    (void)allocator; // the block knows its allocator
    release(pointer);
}
FORKUNION_GOMP_EXPORT void *omp_realloc(void *pointer, std::size_t size, std::uintptr_t allocator,
                                        std::uintptr_t free_allocator) {
    (void)free_allocator;
    if (!pointer) return allocate({.size = size}, allocator);
    if (size == 0) return release(pointer), nullptr;
    auto *const header = static_cast<block_header_t *>(pointer) - 1;
    std::uintptr_t const target = allocator ? resolve(allocator) : header->allocator;
    // Within one pool the old block's bytes are the new one's to use: the pool counts only the growth, in one step,
    // so no other thread's request ever sees the old block's bytes free while the block lives.
    bool const same_pool = target == header->allocator && owner_of(pointer);
    std::size_t const old_size = header->size;
    bool took_counted = false;
    void *moved = allocate({.size = size, .counted = same_pool ? old_size : 0, .took_counted = &took_counted}, target);
    if (!moved) return nullptr; // the block is still the caller's, and still counted
    std::memcpy(moved, pointer, old_size < size ? old_size : size);
    if (took_counted)
        std::free(header->base); // its bytes now count for the new block
    else
        release(pointer);
    return moved;
}

FORKUNION_GOMP_EXPORT void *GOMP_alloc(std::size_t alignment, std::size_t size, std::uintptr_t allocator) {
    // The `allocate` clause: GCC's code uses the block without a check, so a request no allocator (and no fallback)
    // serves stops the program here, naming itself, with libgomp's exit status.
    void *block = allocate({.alignment = alignment, .size = size}, allocator);
    if (!block && size) {
        std::fprintf(stderr,
                     "forkunion gomp: GOMP_alloc (an allocate clause): no memory for %zu bytes aligned to %zu from "
                     "allocator %#llx (or its fallback); exiting\n",
                     size, alignment, static_cast<unsigned long long>(allocator));
        std::exit(EXIT_FAILURE);
    }
    return block;
}
FORKUNION_GOMP_EXPORT void GOMP_free(void *pointer, std::uintptr_t allocator) {
    (void)allocator;
    release(pointer);
}
