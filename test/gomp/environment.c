/*  Prints the ICVs that the environment sets, the place list included, for `run.cmake` to compare between runtimes
 *  under each variable (see test/gomp/CMakeLists.txt for the cases). With `GOMP_TEST_DEEP_STACK` set (next to a large
 *  `OMP_STACKSIZE`), every team thread but the master (whose stack is the process's) uses 20 MiB of its stack, which
 *  the platform's default thread stack (8 MiB) could not hold. With `GOMP_TEST_TARGET="what device"` it then uses
 *  device number `device` through one construct or device routine (`use_device`): under
 *  `OMP_TARGET_OFFLOAD=mandatory`, every runtime stops the program with exit status 1 at a device other than the
 *  host. */
#include "gomp_test.h"

#include <stdint.h>

static int deep_stack(void) {
    volatile char buffer[20 << 20];
    buffer[0] = 1;
    buffer[sizeof(buffer) - 1] = 2;
    return buffer[0] + buffer[sizeof(buffer) - 1];
}

/*  `what`: `region`, `default` (a `target` region without a `device` clause: default-device-var), `data`,
 *  `update`, `enter` (`target` constructs), `alloc`, `memcpy` (device routines) on `device`; or `host`, what must not
 *  stop a program under `OMP_TARGET_OFFLOAD=mandatory`: the host's number, `if(0)`, negative numbers and null
 *  pointers given to the routines, the routines' queries. */
static void use_device(const char *what, int device) {
    int ran = 0, copy = 0;
    if (!strcmp(what, "region")) {
#pragma omp target device(device) map(tofrom : ran)
        ran = 1;
    } else if (!strcmp(what, "default")) {
#pragma omp target map(tofrom : ran)
        ran = 1;
    } else if (!strcmp(what, "data")) {
#pragma omp target data device(device) map(tofrom : ran)
        ran = 1;
    } else if (!strcmp(what, "update")) {
#pragma omp target update device(device) to(ran)
        ran = 1;
    } else if (!strcmp(what, "enter")) {
#pragma omp target enter data device(device) map(to : ran)
        ran = 1;
    } else if (!strcmp(what, "alloc")) {
        void *block = omp_target_alloc(8, device);
        ran = block != NULL;
        omp_target_free(block, device);
    } else if (!strcmp(what, "memcpy")) {
        ran = omp_target_memcpy(&copy, &ran, sizeof(ran), 0, 0, device, omp_get_initial_device()) == 0;
    } else if (!strcmp(what, "host")) {
        int on_fallback = 0;
#pragma omp target device(omp_get_initial_device()) map(tofrom : ran)
        ran = 1;
#pragma omp target device(1) if (0) map(tofrom : on_fallback)
        on_fallback = 1;
        omp_target_free(NULL, 1);
        printf("if(0) %d, alloc on -1 %d, null present on 1 %d, copy to -1 from 1 %d, rectangle query on 1 %d, pause "
               "1 %d\n",
               on_fallback, omp_target_alloc(8, -1) != NULL, omp_target_is_present(NULL, 1),
               omp_target_memcpy(&copy, &ran, sizeof(ran), 0, 0, -1, 1),
               omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, 1, 0),
               omp_pause_resource(omp_pause_soft, 1));
    }
    printf("%s on device %d: %d\n", what, device, ran);
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
    if (getenv("GOMP_TEST_TARGET")) {
        char what[32];
        int device = 0;
        CHECK(sscanf(getenv("GOMP_TEST_TARGET"), "%31s %d", what, &device) == 2);
        use_device(what, device);
    }
    return 0;
}
