/*  Misuse the drop-in stops at instead of guessing, compiled as GCC compiles it: an event fulfilled twice, which
 *  OpenMP leaves undefined, an `allocate` clause no allocator can serve, and a doacross loop with more chunks than
 *  any memory could track must stop the program with a message naming the call (run.cmake's `refuse` mode expects
 *  the abort). `cancel parallel` is served: with OMP_CANCELLATION (`cancel`) the master's cancellation ends the
 *  region, without it (`cancel_unset`) it is the no-op OpenMP prescribes; both complete under every runtime. The
 *  `error` directive at execution warns (`error_warning`) or stops the program (`error_fatal`), as libgomp's does. */
#include "gomp_test.h"

int main(int argc, char **argv) {
    report_server();
    CHECK(argc == 2);
    char const *construct = argv[1];
    long sum = 0;
    if (strcmp(construct, "cancel") == 0 || strcmp(construct, "cancel_unset") == 0) {
#pragma omp parallel reduction(+ : sum)
        {
            sum += 1;
#pragma omp cancel parallel if (omp_get_thread_num() == 0)
        }
        if (omp_get_cancellation() == 0) {
            CHECK(sum == omp_get_max_threads()); // cancel-var false: nothing cancelled
        } else {
            // A member that sees the cancellation leaves without adding its share (GCC's code skips the reduction),
            // the master first: how many did depends on timing.
            CHECK(sum < omp_get_max_threads());
            sum = 0;
        }
    } else if (strcmp(construct, "fulfill_twice") == 0) {
        omp_event_handle_t event = 0;
#pragma omp parallel
#pragma omp single
        {
#pragma omp task detach(event)
            sum = 1;
            omp_fulfill_event(event);
#pragma omp taskwait
            omp_fulfill_event(event); // the drop-in aborts here
        }
    } else if (strcmp(construct, "allocate_exhausted") == 0) {
        // An `allocate` clause whose allocator (64 bytes, null fallback) cannot hold the private copy: GCC's code
        // would use a null block.
        omp_alloctrait_t traits[] = {{omp_atk_pool_size, 64}, {omp_atk_fallback, omp_atv_null_fb}};
        omp_allocator_handle_t small = omp_init_allocator(omp_default_mem_space, 2, traits);
        CHECK(small != omp_null_allocator);
        long big[16] = {1};
#pragma omp parallel firstprivate(big) allocate(small : big) reduction(+ : sum)
        sum += big[0]; // the drop-in aborts before this
    } else if (strcmp(construct, "doacross_huge") == 0) {
        // A doacross loop of 2^61 chunks: one progress word each would wrap the block's size; no memory holds it.
        long const count = (1L << 61) + 1;
#pragma omp parallel for ordered(1) schedule(dynamic, 1) reduction(+ : sum)
        for (long i = 0; i < count; ++i) {
#pragma omp ordered depend(sink : i - 1)
            sum += 1; // the drop-in aborts at the loop's start
#pragma omp ordered depend(source)
        }
    } else if (strcmp(construct, "error_warning") == 0) {
        // The `error` directive at execution: a warning is said on stderr by every thread and the program goes on.
#pragma omp parallel reduction(+ : sum)
        {
#pragma omp error at(execution) severity(warning) message("refusals.c warns here")
            sum += 1;
        }
        CHECK(sum == omp_get_max_threads());
        sum = 1;
    } else if (strcmp(construct, "error_fatal") == 0) {
#pragma omp error at(execution) severity(fatal) message("refusals.c stops here")
        sum += 1; // every runtime exits before this
    } else {
        fprintf(stderr, "unknown construct %s\n", construct);
        return 2;
    }
    printf("%s: %ld\n", construct, sum);
    return 0;
}
