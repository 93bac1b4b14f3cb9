/**
 *  @file   examples/c/numa_memory.c
 *  @brief  Memory on a domain and striped over every domain, with the sizes really granted, filled by a pool.
 */
#include <stdio.h> /* `printf` */

#include <forkunion.h>
#include "usage.h" /* `forkunion_usage`: `--help`, unknown arguments refused */

struct shards {
    double *first;      /* slice 0; slice d starts `slice_bytes` further */
    size_t per_slice;   /* doubles per slice */
    size_t slice_bytes; /* bytes per slice */
};

static void fill_slice(void *context, size_t slice, size_t thread, size_t compute_domain) {
    struct shards *shards = (struct shards *)context;
    double *values = (double *)((char *)shards->first + slice * shards->slice_bytes);
    size_t i;
    (void)thread, (void)compute_domain;
    for (i = 0; i != shards->per_slice; ++i) values[i] = (double)slice;
}

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0, "\nNUMA allocations through the C API. Reads no environment variable.\n");
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("memory", fu_capabilities_all_k);
    fu_allocation_t local, striped;
    struct shards shards;
    fu_status_t status;
    if (!topology || !pool || fu_pool_spawn(topology, pool, 2, fu_caller_inclusive_k) != fu_success_k) return 1;

    /* 1000 bytes near compute domain 0: the allocation reports the rounded size and the page really used. */
    status = fu_allocate_on(topology, fu_local_memory_of(topology, 0), 1000, 0, fu_capabilities_all_k, &local);
    if (status != fu_success_k) return printf("refused: %s\n", fu_status_to_string(status)), 1;
    printf("asked for 1000 bytes, got %zu on %zu-byte pages, placed: %d\n", local.bytes, local.page_bytes,
           local.placed);
    fu_deallocate(&local);

    /* One slice of at least 1 MiB per memory domain, on 2 MiB huge pages where the kernel has them. */
    status = fu_allocate_symmetric(topology, 1u << 20, 2u << 20, fu_capabilities_all_k, &striped);
    if (status != fu_success_k) return printf("refused: %s\n", fu_status_to_string(status)), 1;
    shards.first = (double *)striped.address;
    shards.slice_bytes = striped.slice_bytes;
    shards.per_slice = striped.slice_bytes / sizeof(double);
    if (fu_pool_for_n(pool, striped.slices_count, fill_slice, &shards) != fu_success_k) return 1;
    printf("%zu slices of %zu bytes on %zu-byte pages\n", striped.slices_count, striped.slice_bytes,
           striped.page_bytes);
    fu_deallocate(&striped);

    fu_pool_delete(pool);
    fu_topology_delete(topology);
    return 0;
}
