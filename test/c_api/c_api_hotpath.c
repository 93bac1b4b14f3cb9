/**
 *  @file   test/c_api_hotpath.c
 *  @brief  The C API adds nothing to the dispatch hot path: 10^5 dispatches of every form through `fu_pool_*`,
 *          in spin mode, between two `getppid` markers. `strace_check.cmake` proves there is no futex, yield,
 *          sleep or memory-mapping system call inside; this program itself counts heap calls (`malloc`, `calloc`,
 *          `realloc`, `free`, `aligned_alloc`, `posix_memalign`), interposed over glibc's, inside the window.
 *
 *  Usage: forkunion_c_api_hotpath [inclusive|exclusive]. Not for sanitizer builds (they interpose malloc too).
 *  Uses at most as many spinning threads as allowed cores: an oversubscribed pool yields by design.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>  /* `fprintf` */
#include <string.h> /* `strcmp` */
#include <unistd.h> /* `getppid` */

#include <forkunion.h>

/* ---- Heap calls, counted while `counting` is set (glibc exports its allocator as `__libc_*`) --------------- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static int counting = 0;
static unsigned long heap_calls = 0;

static void count_heap_call(void) {
    if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_fetch_add(&heap_calls, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t bytes) {
    return count_heap_call(), __libc_malloc(bytes);
}
void *calloc(size_t count, size_t bytes) {
    return count_heap_call(), __libc_calloc(count, bytes);
}
void *realloc(void *pointer, size_t bytes) {
    return count_heap_call(), __libc_realloc(pointer, bytes);
}
void free(void *pointer) {
    if (pointer) count_heap_call();
    __libc_free(pointer);
}
void *aligned_alloc(size_t alignment, size_t bytes) {
    return count_heap_call(), __libc_memalign(alignment, bytes);
}
int posix_memalign(void **out, size_t alignment, size_t bytes) {
    count_heap_call();
    *out = __libc_memalign(alignment, bytes);
    return *out ? 0 : 12; /* ENOMEM */
}

/* ---- The workload -------------------------------------------------------------------------------------------- */

static void add_task(void *context, size_t task, size_t thread, size_t compute_domain) {
    (void)thread, (void)compute_domain;
    __atomic_fetch_add((size_t *)context, task, __ATOMIC_RELAXED);
}
static void add_slice(void *context, size_t first, size_t count, size_t thread, size_t compute_domain) {
    (void)thread, (void)compute_domain;
    __atomic_fetch_add((size_t *)context, first + count, __ATOMIC_RELAXED);
}
static void add_thread(void *context, size_t thread, size_t compute_domain) {
    (void)compute_domain;
    __atomic_fetch_add((size_t *)context, thread, __ATOMIC_RELAXED);
}

int main(int argc, char **argv) {
    int const exclusive = argc > 1 && strcmp(argv[1], "exclusive") == 0;
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("hotpath", fu_capabilities_all_k);
    size_t cores, threads, sink = 0, generation = 0;
    int i, failed = 0;
    if (!topology || !pool) return 2;
    cores = fu_allowed_cores_count(topology);
    /* An exclusive caller spins too, so it takes one core of the budget. */
    threads = exclusive ? (cores > 1 ? cores - 1 : 1) : (cores < 2 ? cores : 2);
    /* The spin policy, set explicitly: the proof is about dispatches, not about waking parked workers. */
    if (fu_pool_set_idle_policy(pool, fu_idle_spin_k, 0) != fu_success_k) return 2;
    if (fu_pool_spawn(topology, pool, threads, exclusive ? fu_caller_exclusive_k : fu_caller_inclusive_k) != 0)
        return 2;
    for (i = 0; i != 1000; ++i) failed |= fu_pool_for_n(pool, 64, add_task, &sink); /* warm up */

    __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
    (void)getppid(); /* begin marker */
    for (i = 0; i != 20000; ++i) {
        failed |= fu_pool_for_n(pool, 64, add_task, &sink);
        failed |= fu_pool_for_n_dynamic(pool, 64, add_task, &sink);
        failed |= fu_pool_for_slices(pool, 64, add_slice, &sink);
        failed |= fu_pool_for_threads(pool, add_thread, &sink);
        failed |= fu_pool_unsafe_for_threads(pool, add_thread, &sink, &generation);
        failed |= fu_pool_unsafe_join(pool, generation);
    }
    (void)getppid(); /* end marker */
    __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);

    fu_pool_delete(pool);
    fu_topology_delete(topology);
    printf("%d threads, 10^5 dispatches through the C API, %lu heap calls inside the window\n", (int)threads,
           heap_calls);
    if (failed) fprintf(stderr, "a dispatch was refused\n");
    return failed || heap_calls ? 1 : 0;
}
