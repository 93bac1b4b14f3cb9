/*  `target` constructs on a host without offload devices: every region runs on the host, as libgomp runs them
 *  without offload plugins. `map` clauses share the host's data, `firstprivate` gives the region a copy, `target
 *  data`, `enter data`, `exit data` and `update` have nothing to move, `nowait` regions finish by `taskwait`, and
 *  `teams distribute parallel for` inside `target` splits its loop over the host's teams and threads. */
#include "gomp_test.h"

int main(void) {
    report_server();
    int value = 1;
#pragma omp target map(tofrom : value)
    value += 1;
    printf("target map(tofrom): %d\n", value);
    CHECK(value == 2);

    int copied = 10, seen_inside = 0;
#pragma omp target firstprivate(copied) map(from : seen_inside)
    {
        copied += 5;
        seen_inside = copied;
    }
    printf("target firstprivate: inside %d, outside still %d\n", seen_inside, copied);
    CHECK(seen_inside == 15 && copied == 10);

    enum { n_k = 1000 };
    static double x[n_k], y[n_k];
    for (int i = 0; i < n_k; ++i) x[i] = i, y[i] = 1;
    double sum = 0;
#pragma omp target data map(to : x) map(tofrom : y)
    {
#pragma omp target teams distribute parallel for map(to : x) map(tofrom : y)
        for (int i = 0; i < n_k; ++i) y[i] += 2 * x[i];
#pragma omp target update from(y)
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : y) map(tofrom : sum)
        for (int i = 0; i < n_k; ++i) sum += y[i];
    }
    printf("target data, teams distribute parallel for, update: sum %.0f\n", sum);
    CHECK(sum == n_k + 2.0 * (n_k - 1) * n_k / 2);

    int entered = 3;
#pragma omp target enter data map(to : entered)
#pragma omp target map(tofrom : entered)
    entered *= 7;
#pragma omp target exit data map(from : entered)
    printf("target enter/exit data: %d\n", entered);
    CHECK(entered == 21);

    int later = 0;
#pragma omp target map(tofrom : later) nowait
    later = 42;
#pragma omp taskwait
    printf("target nowait, then taskwait: %d\n", later);
    CHECK(later == 42);

    // Inside a parallel region, each thread's target region runs on that thread.
    int per_thread[4] = {0};
#pragma omp parallel num_threads(2)
    {
        int const me = omp_get_thread_num();
        int mine = 0;
#pragma omp target map(tofrom : mine)
        mine = 100 + me;
        per_thread[me] = mine;
    }
    printf("target in a region: %d %d\n", per_thread[0], per_thread[1]);
    CHECK(per_thread[0] == 100 && per_thread[1] == 101);
    printf("devices %d, initial device %d, is initial device %d\n", omp_get_num_devices(), omp_get_initial_device(),
           omp_is_initial_device());
    return 0;
}
