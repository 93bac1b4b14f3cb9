/*  fork(): a child of a process that ran parallel regions gets a fresh runtime and runs full teams (libgomp's
 *  child hangs there: its team threads are gone but it waits for them); a child forked inside a region returns
 *  from that region and runs new ones (also from a region of `GOMP_parallel_start`, whose end is a call of its
 *  own, and after running 20 `nowait` loops of the region alone); children forked at random points while other threads run regions, grow teams, nest them and release every
 *  thread with `omp_pause_resource_all` (whatever lock of the runtime those hold at the fork) run full teams too.
 *  Each child has 30 s before an alarm fails it. Runs under the drop-in only. */
#include "gomp_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
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

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads);
void GOMP_parallel_end(void);

/**  The body of a region opened by the GOMP_1.0 entry points (as GCC before 4.9 emitted): the master forks. */
static void legacy_body(void *argument) {
    if (omp_get_thread_num() != 0) return;
    fflush(stdout);
    pid_t const child = fork();
    if (child == 0) alarm(30);
    *(pid_t *)argument = child;
}

static atomic_int stop_busy;

/**  Regions of growing sizes (each new size grows the thread's root by a segment), with nested teams. */
static void *regions_loop(void *argument) {
    (void)argument;
    omp_set_max_active_levels(2);
    for (unsigned round = 0; !atomic_load(&stop_busy); ++round) {
        int sum = 0;
#pragma omp parallel num_threads(2 + round % 5) reduction(+ : sum)
        {
#pragma omp parallel num_threads(2) reduction(+ : sum)
            sum += 1;
        }
        CHECK(sum >= 2);
    }
    return NULL;
}

/**  Releases every idle thread again and again: the pause joins them while holding the runtime's locks. */
static void *pause_loop(void *argument) {
    (void)argument;
    while (!atomic_load(&stop_busy)) {
        CHECK(omp_pause_resource_all(omp_pause_soft) == 0);
        int team = 0;
#pragma omp parallel num_threads(3)
#pragma omp single
        team = omp_get_num_threads();
        CHECK(team == 3);
    }
    return NULL;
}

/**  Forks `forks` children at pseudo-random moments while two threads run regions and pauses; each child must run
 *   full teams. */
static __attribute__((unused)) void fork_while_busy(int forks) {
    pthread_t threads[2];
    atomic_store(&stop_busy, 0);
    CHECK(pthread_create(&threads[0], NULL, regions_loop, NULL) == 0);
    CHECK(pthread_create(&threads[1], NULL, pause_loop, NULL) == 0);
    unsigned state = 12345;
    int hung = 0;
    for (int fork_index = 0; fork_index < forks; ++fork_index) {
        state = state * 1103515245u + 12345u;
        for (volatile unsigned spin = 0; spin < (state >> 8) % 200000u; ++spin) {}
        fflush(stdout);
        pid_t const child = fork();
        CHECK(child >= 0);
        if (child == 0) _exit(child_regions());
        int status = 0;
        CHECK(waitpid(child, &status, 0) == child);
        hung += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    atomic_store(&stop_busy, 1);
    CHECK(pthread_join(threads[0], NULL) == 0 && pthread_join(threads[1], NULL) == 0);
    printf("%d forks while other threads ran regions and pauses: %d children failed\n", forks, hung);
    CHECK(hung == 0);
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
    // Forked inside a region, the child goes on with the region's `nowait` loops alone: its team mate stayed in the
    // parent and never leaves one, so past the team's slot ring each loop must take a slot of its own.
    pid_t ahead = -1;
    int ahead_sum = 0;
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == 0) {
        fflush(stdout);
        ahead = fork();
        if (ahead == 0) {
            alarm(30);
            for (int loop = 0; loop < 20; ++loop) {
#pragma omp for schedule(monotonic : dynamic) nowait
                for (int i = 0; i < 10; ++i) ahead_sum += i;
            }
        }
    }
    if (ahead == 0) _exit(ahead_sum == 20 * 45 ? child_regions() : 1);
    expect_child(ahead, "fork inside a region, then 20 nowait loops alone");
    // The same in a region of the GOMP_1.0 entry points, whose end is a call of its own; with more threads than
    // cores, after a `taskloop` (both make a region end in a wait for the team's other threads).
    // The team is grown first: no thread of it is still starting (and allocating) when the master forks.
    unsigned const oversubscribed = (unsigned)omp_get_num_procs() + 2;
#pragma omp parallel num_threads(oversubscribed)
#pragma omp single
#pragma omp taskloop grainsize(1)
    for (int i = 0; i < 4; ++i) (void)i;
    pid_t legacy = -1;
    GOMP_parallel_start(legacy_body, &legacy, oversubscribed);
    legacy_body(&legacy);
    GOMP_parallel_end();
    if (legacy == 0) _exit(child_regions());
    expect_child(legacy, "fork inside a GOMP_parallel_start region");

    // The parent's runtime still works.
    int after = 0;
#pragma omp parallel num_threads(2) reduction(+ : after)
    after += 1;
    CHECK(after == 2);

#ifdef __SANITIZE_ADDRESS__
    // GCC 12's ASan runtime does not make its allocator fork-safe: a child forked while another thread allocates
    // blocks its new threads on an allocator mutex that thread held (gdb: `SizeClassAllocator64::GetFromAllocator`).
    fprintf(stderr, "forks while busy: skipped under ASan, whose allocator a fork child may find locked\n");
#else
    fork_while_busy(getenv("GOMP_TEST_FORKS") ? atoi(getenv("GOMP_TEST_FORKS")) : 60);
#endif
    return 0;
}
