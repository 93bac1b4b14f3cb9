/*  Prints the ICVs that the environment sets, the place list included, for `run.cmake` to compare between runtimes
 *  under each variable (see test/gomp/CMakeLists.txt for the cases). With `GOMP_TEST_DEEP_STACK` set (next to a large
 *  `OMP_STACKSIZE`), every team thread but the master (whose stack is the process's) uses 20 MiB of its stack, which
 *  the platform's default thread stack (8 MiB) could not hold. */
#include "gomp_test.h"

#include <stdint.h>

static int deep_stack(void) {
    volatile char buffer[20 << 20];
    buffer[0] = 1;
    buffer[sizeof(buffer) - 1] = 2;
    return buffer[0] + buffer[sizeof(buffer) - 1];
}

int main(void) {
    report_server();
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    printf("max threads %d, schedule %#x,%d, dynamic %d, thread limit %d\n", omp_get_max_threads(), (unsigned)kind,
           chunk, omp_get_dynamic(), omp_get_thread_limit());
    printf("proc_bind %d, places %d:", (int)omp_get_proc_bind(), omp_get_num_places());
    for (int place = 0; place < omp_get_num_places(); ++place) {
        int const count = omp_get_place_num_procs(place);
        int *ids = malloc(sizeof(int) * (size_t)count);
        CHECK(count > 0 && ids);
        omp_get_place_proc_ids(place, ids);
        for (int cpu = 0; cpu < count; ++cpu) printf("%s%d", cpu ? "," : " {", ids[cpu]);
        printf("}");
        free(ids);
    }
    printf("\nmax active levels %d, nested %d, supported active levels %d", omp_get_max_active_levels(),
           omp_get_nested(), omp_get_supported_active_levels());
    printf("\ncancellation %d, default device %d, max task priority %d, max teams %d, teams thread limit %d\n",
           omp_get_cancellation(), omp_get_default_device(), omp_get_max_task_priority(), omp_get_max_teams(),
           omp_get_teams_thread_limit());
    int team = 0, inner_max = 0, bound = 1;
#pragma omp parallel
    {
#pragma omp master
        team = omp_get_num_threads(), inner_max = omp_get_max_threads();
        // With a binding, every team thread sits on a place of the list.
        if (omp_get_proc_bind() != omp_proc_bind_false && omp_get_num_places() > 0 && omp_get_place_num() < 0) {
#pragma omp atomic write
            bound = 0;
        }
    }
    // Dynamic adjustment may shrink the team by load (libgomp) or to the cores (here): not comparable.
    if (!omp_get_dynamic()) printf("team %d, max threads inside %d\n", team, inner_max);
    printf("bound threads: %s\n", bound ? "all" : "not all");
    if (getenv("GOMP_TEST_DEEP_STACK")) {
        int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
        sum += omp_get_thread_num() == 0 ? 3 : deep_stack();
        printf("20 MiB of stack on every thread: %d\n", sum);
    }
    return 0;
}
