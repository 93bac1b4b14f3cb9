/*  Constructs the drop-in refuses, compiled as GCC compiles them: each must stop the program at the construct
 *  with a message naming it (run.cmake's `refuse` mode expects the abort), where libgomp would run it (target
 *  regions on the host, cancellation with OMP_CANCELLATION=true, detachable tasks). Without
 *  OMP_CANCELLATION, `cancel` is the no-op OpenMP prescribes, so `cancel_unset` completes under every runtime. */
#include "gomp_test.h"

int main(int argc, char **argv) {
    report_server();
    CHECK(argc == 2);
    char const *construct = argv[1];
    long sum = 0;
    if (strcmp(construct, "target") == 0) {
        int value = 1;
#pragma omp target map(tofrom : value)
        value += 1;
        sum = value;
    } else if (strcmp(construct, "cancel") == 0 || strcmp(construct, "cancel_unset") == 0) {
#pragma omp parallel
#pragma omp for reduction(+ : sum)
        for (int i = 0; i < 1000; ++i) {
            sum += i;
#pragma omp cancel for if (i == 10)
        }
        if (omp_get_cancellation() == 0) CHECK(sum == 499500); // cancel-var false: nothing is cancelled
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
