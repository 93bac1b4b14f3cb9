/*  fork(): a child of a process that ran parallel regions gets a fresh runtime and runs full teams (libgomp's
 *  child hangs there: its team threads are gone but it waits for them); a child forked inside a region returns
 *  from that region and runs new ones. Each child has 30 s before an alarm fails it. Runs under the drop-in only. */
#include "gomp_test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int child_regions(void) {
    alarm(30);
    int team = 0, sum = 0;
#pragma omp parallel num_threads(3) reduction(+ : sum)
    {
#pragma omp single
        team = omp_get_num_threads();
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 100; ++i) sum += i;
    }
    return team == 3 && sum == 4950 ? 0 : 1;
}

static void expect_child(pid_t child, char const *what) {
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: child %s\n", what, WIFSIGNALED(status) ? "killed (hung?)" : "failed");
        abort();
    }
    printf("%s: child ran full teams\n", what);
}

int main(void) {
    report_server();
    CHECK(served_by_forkunion());
    int warm = 0;
#pragma omp parallel reduction(+ : warm)
    warm += 1;
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) _exit(child_regions());
    expect_child(child, "fork between regions");

    // Forked by the master inside a region: the child leaves the region without its team, then starts anew.
    pid_t inner = -1;
#pragma omp parallel num_threads(2)
    {
#pragma omp master
        {
            fflush(stdout);
            inner = fork();
            if (inner == 0) {
                alarm(30);
            }
        }
    }
    if (inner == 0) _exit(child_regions());
    expect_child(inner, "fork inside a region");
    // The parent's runtime still works.
    int after = 0;
#pragma omp parallel num_threads(2) reduction(+ : after)
    after += 1;
    CHECK(after == 2);
    return 0;
}
