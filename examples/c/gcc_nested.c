/**
 *  @file   examples/c/gcc_nested.c
 *  @brief  GCC's nested functions capture the enclosing scope, so a callback needs no context struct.
 *          GNU C only (`-std=gnu99` or later); the nested function's trampoline needs an executable stack.
 */
#include <stdio.h> /* `printf` */

#include <forkunion.h>
#include "usage.h" /* `forkunion_usage`: `--help`, unknown arguments refused */

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0, "\nGNU C nested functions as callbacks. Reads no environment variable.\n");
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("gcc_nested", fu_capabilities_all_k);
    size_t squares[100] = {0}, total = 0, task;
    if (!topology || !pool || fu_pool_spawn(topology, pool, 4, fu_caller_inclusive_k) != fu_success_k) return 1;

    /* A nested function: it reads and writes `squares` of `main` directly; each task writes its own element. */
    void square(void *context, size_t task, size_t thread, size_t compute_domain) {
        (void)context, (void)thread, (void)compute_domain;
        squares[task] = task * task;
    }
    if (fu_pool_for_n(pool, 100, square, NULL) != fu_success_k) return 1;

    for (task = 0; task != 100; ++task) total += squares[task];
    printf("sum of squares below 100: %zu\n", total); /* 328350 */
    fu_pool_delete(pool);
    fu_topology_delete(topology);
    return total == 328350 ? 0 : 1;
}
