/**
 *  @file   examples/c/clang_blocks.c
 *  @brief  Clang's blocks (`-fblocks`, libBlocksRuntime) as callbacks: a block rides in the context and a
 *          plain function calls it.
 */
#include <Block.h> /* `Block_copy`, `Block_release` */
#include <stdio.h> /* `printf` */

#include <forkunion.h>
#include "usage.h" /* `forkunion_usage`: `--help`, unknown arguments refused */

typedef void (^task_block_t)(size_t task, size_t thread, size_t compute_domain);

static void call_block(void *context, size_t task, size_t thread, size_t compute_domain) {
    task_block_t block = (task_block_t)context;
    block(task, thread, compute_domain);
}

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0, "\nClang blocks as callbacks. Reads no environment variable.\n");
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("clang_blocks", fu_capabilities_all_k);
    size_t doubled[100] = {0}, total = 0, task;
    size_t *const out = doubled;
    task_block_t block;
    if (!topology || !pool || fu_pool_spawn(topology, pool, 4, fu_caller_inclusive_k) != fu_success_k) return 1;

    /* The block captures `out` by value; each task writes its own element. */
    block = Block_copy(^(size_t task, size_t thread, size_t compute_domain) {
      (void)thread, (void)compute_domain;
      out[task] = 2 * task;
    });
    if (fu_pool_for_n_dynamic(pool, 100, call_block, (void *)block) != fu_success_k) return 1;
    Block_release(block);

    for (task = 0; task != 100; ++task) total += doubled[task];
    printf("sum of 2 * task below 100: %zu\n", total); /* 9900 */
    fu_pool_delete(pool);
    fu_topology_delete(topology);
    return total == 9900 ? 0 : 1;
}
