/*  Constructs the drop-in refuses, compiled as GCC compiles them: each must stop the program at the construct
 *  with a message naming it (run.cmake's `refuse` mode expects the abort), where libgomp would run it (detachable
 *  tasks). `cancel parallel` is served: with OMP_CANCELLATION (`cancel`) the master's cancellation ends the region,
 *  without it (`cancel_unset`) it is the no-op OpenMP prescribes; both complete under every runtime. */
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
    } else if (strcmp(construct, "detach") == 0) {
        omp_event_handle_t event;
#pragma omp parallel
#pragma omp single
        {
#pragma omp task detach(event)
            sum = 1;
            omp_fulfill_event(event);
        }
    } else {
        fprintf(stderr, "unknown construct %s\n", construct);
        return 2;
    }
    printf("%s: %ld\n", construct, sum);
    return 0;
}
