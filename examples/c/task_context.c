/**
 *  @file   examples/c/task_context.c
 *  @brief  Loops with a context: static and dynamic scheduling of 100 tasks, then slices of an array sum.
 */
#include <stdio.h> /* `printf` */

#include <forkunion.h>
#include "usage.h" /* `forkunion_usage`: `--help`, unknown arguments refused */

struct task_context {
    int *data;
    size_t size;
};

static void process_task(void *context, size_t task, size_t thread, size_t compute_domain) {
    struct task_context *tasks = (struct task_context *)context;
    (void)thread, (void)compute_domain;
    tasks->data[task] += (int)task * 2; /* each task runs exactly once per loop */
}

struct partial_sums {
    int const *data;
    long sums[64]; /* one per thread: no two threads write the same element */
};

static void sum_slice(void *context, size_t first, size_t count, size_t thread, size_t compute_domain) {
    struct partial_sums *partial = (struct partial_sums *)context;
    size_t i;
    (void)compute_domain;
    for (i = first; i != first + count; ++i) partial->sums[thread] += partial->data[i];
}

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nCallbacks that receive a context and their task index. Reads no environment variable.\n");
    int data[100] = {0};
    struct task_context tasks;
    struct partial_sums partial = {NULL, {0}};
    long total = 0;
    size_t thread;
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("tasks", fu_capabilities_all_k);
    if (!topology || !pool || fu_pool_spawn(topology, pool, 4, fu_caller_inclusive_k) != fu_success_k) return 1;

    tasks.data = data, tasks.size = 100;
    if (fu_pool_for_n(pool, 100, process_task, &tasks) != fu_success_k) return 1;         /* static */
    if (fu_pool_for_n_dynamic(pool, 100, process_task, &tasks) != fu_success_k) return 1; /* dynamic */

    partial.data = data;
    if (fu_pool_for_slices(pool, 100, sum_slice, &partial) != fu_success_k) return 1;
    for (thread = 0; thread != fu_pool_threads_count(pool); ++thread) total += partial.sums[thread];
    printf("sum of 4 * task over 100 tasks: %ld\n", total); /* 4 * (0 + 1 + ... + 99) = 19800 */

    fu_pool_delete(pool);
    fu_topology_delete(topology);
    return total == 19800 ? 0 : 1;
}
