/**
 *  @file   examples/c/split_dispatch.c
 *  @brief  The split dispatch: broadcast without waiting, join later; what other dispatches get meanwhile; and an
 *          exclusive pool whose caller polls while the workers run.
 */
#include <stdio.h> /* `printf` */

#include <forkunion.h>
#include "usage.h" /* `forkunion_usage`: `--help`, unknown arguments refused */

static void fill(void *context, size_t thread, size_t compute_domain) {
    (void)compute_domain;
    ((size_t *)context)[thread] += thread + 1;
}

static void never_runs(void *context, size_t task, size_t thread, size_t compute_domain) {
    (void)context, (void)task, (void)thread, (void)compute_domain;
}

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nA dispatch that does not block, polled and joined. Reads no environment variable.\n");
    size_t filled[4] = {0}, generation = 0, polls = 0, thread;
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("split", fu_capabilities_all_k);
    if (!topology || !pool || fu_pool_spawn(topology, pool, 4, fu_caller_inclusive_k) != fu_success_k) return 1;

    /* Inclusive pool: threads 1-3 start now; the caller's own slice (thread 0) runs inside the join. */
    if (fu_pool_unsafe_for_threads(pool, fill, filled, &generation) != fu_success_k) return 1;
    printf("generation %zu, complete before the join: %d\n", generation, fu_pool_is_complete(pool, generation));
    /* One dispatch at a time: any other is refused at once and runs nothing. */
    printf("another dispatch meanwhile: %s\n", fu_status_to_string(fu_pool_for_n(pool, 10, never_runs, NULL)));
    if (fu_pool_unsafe_join(pool, generation) != fu_success_k) return 1;
    printf("joining again: %s\n", fu_status_to_string(fu_pool_unsafe_join(pool, generation))); /* stale */

    /* Exclusive pool: all 4 threads are workers, so the caller polls (or works) until they are done. */
    if (fu_pool_terminate(pool) != fu_success_k) return 1;
    if (fu_pool_spawn(topology, pool, 4, fu_caller_exclusive_k) != fu_success_k) return 1;
    if (fu_pool_unsafe_for_threads(pool, fill, filled, &generation) != fu_success_k) return 1;
    while (fu_pool_is_complete(pool, generation) == 0) ++polls; /* the caller's own work would go here */
    if (fu_pool_unsafe_join(pool, generation) != fu_success_k) return 1;

    for (thread = 0; thread != 4; ++thread)
        if (filled[thread] != 2 * (thread + 1)) return 1;
    fu_pool_delete(pool);
    fu_topology_delete(topology);
    return 0;
}
