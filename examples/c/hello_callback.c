/**
 *  @file   examples/c/hello_callback.c
 *  @brief  The smallest C program: one pool over every allowed core, one callback per thread.
 */
#include <stdio.h> /* `printf` */

#include <forkunion.h> /* `fu_pool_t`, `fu_pool_new`, `fu_pool_spawn`, `fu_pool_for_threads` */
#include "usage.h"     /* `forkunion_usage`: `--help`, unknown arguments refused */

static void hello_callback(void *context, size_t thread, size_t compute_domain) {
    (void)context;
    printf("Hello from thread %zu (compute domain %zu)\n", thread, compute_domain);
}

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0, "\nOne line from every thread of a pool. Reads no environment variable.\n");
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("hello", fu_capabilities_all_k);
    fu_status_t status = fu_bad_alloc_k;
    if (topology && pool)
        status = fu_pool_spawn(topology, pool, fu_logical_cores_count(topology), fu_caller_inclusive_k);
    if (status == fu_success_k) status = fu_pool_for_threads(pool, hello_callback, NULL);
    if (status != fu_success_k) printf("forkunion: %s\n", fu_status_to_string(status));
    fu_pool_delete(pool); /* terminates the workers; NULL is fine too */
    fu_topology_delete(topology);
    return status == fu_success_k ? 0 : 1;
}
