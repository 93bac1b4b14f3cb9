/*  fork(): a child of a process that ran parallel regions gets a fresh runtime and runs full teams (libgomp's
 *  child hangs there: its team threads are gone but it waits for them); a child forked inside a region returns
 *  from that region and runs new ones (also from a region of `GOMP_parallel_start`, whose end is a call of its
 *  own, and after running 20 `nowait` loops of the region alone). Children forked at random points while other
 *  threads run regions, grow teams, nest them and release every thread with `omp_pause_resource_all` (whatever lock
 *  of the runtime those hold at the fork) run full teams too, as do children forked while a team mate runs `nowait`
 *  loops past the slot ring, which first run those loops alone without running any iteration twice. Each child has
 *  30 s before an alarm fails it. Runs under the drop-in only. */
#include "gomp_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <string.h>
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

enum { ahead_loops_k = 40000, ahead_iterations_k = 4 };
static unsigned char ahead_marks[ahead_loops_k][ahead_iterations_k];
static atomic_int ahead_stop, ahead_done, ahead_progress;

/**  One `nowait` loop that takes a worksharing slot, marking each iteration it runs. */
static void ahead_loop(int loop) {
#pragma omp for schedule(monotonic : dynamic) nowait
    for (int i = 0; i < ahead_iterations_k; ++i) ++ahead_marks[loop][i];
}

/**  A child forked while its team mate ran ahead: it runs every loop alone, as far as the mate could have gone, and
 *   no iteration may run twice (a lost or doubled overflow slot would run some again). 0 when none did. */
static int ahead_child_loops(void) {
    alarm(30);
    for (int loop = 0; loop < ahead_loops_k; ++loop) ahead_loop(loop);
    for (int loop = 0; loop < ahead_loops_k; ++loop)
        for (int i = 0; i < ahead_iterations_k; ++i)
            if (ahead_marks[loop][i] > 1) return 2;
    return 0;
}

/**  Waits for `count` children; returns how many failed, naming each. */
static int reap_children(pid_t const *children, int count) {
    int failed = 0;
    for (int index = 0; index < count; ++index) {
        int status = 0;
        CHECK(waitpid(children[index], &status, 0) == children[index]);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        ++failed;
        fprintf(stderr, "child %d: %s %d\n", index, WIFSIGNALED(status) ? "signal" : "exit",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    return failed;
}

/**  Thread 1 of a team runs `nowait` loops far ahead of thread 0, which enters none of them yet: past the 8 ring
 *   slots each loop diverts to an overflow slot, made, found and freed under the team's overflow lock, so forks at
 *   pseudo-random moments find that lock held or its table in the middle of a change. Returns the failed children. */
static int fork_while_ahead(int forks) {
    enum { most_forks_k = 64 };
    int const count = forks < most_forks_k ? forks : most_forks_k;
    int failed = 0, child_status = -1;
    memset(ahead_marks, 0, sizeof ahead_marks);
    atomic_store(&ahead_stop, 0);
    atomic_store(&ahead_done, -1);
    atomic_store(&ahead_progress, 0);
#pragma omp parallel num_threads(2) reduction(+ : failed)
    if (omp_get_thread_num() == 1) {
        int loop = 0;
        while (loop < ahead_loops_k && !atomic_load(&ahead_stop)) {
            ahead_loop(loop++);
            atomic_store_explicit(&ahead_progress, loop, memory_order_relaxed);
        }
        atomic_store(&ahead_done, loop);
    } else {
        pid_t children[most_forks_k];
        unsigned state = 777;
        while (atomic_load(&ahead_progress) < 4 * 8) {} // the mate is past the ring: diverting
        for (int made = 0; made < count && child_status < 0; ++made) {
            state = state * 1103515245u + 12345u;
            for (volatile unsigned spin = 0; spin < (state >> 8) % 20000u; ++spin) {}
            fflush(stdout);
            children[made] = fork();
            CHECK(children[made] >= 0);
            if (children[made] == 0) child_status = ahead_child_loops(); // then leaves the region, its only thread
        }
        if (child_status < 0) {
            atomic_store(&ahead_stop, 1);
            failed = reap_children(children, count);
            // Thread 0 catches up: the same loops as its mate, in the slots the mate made.
            while (atomic_load(&ahead_done) < 0) {}
            for (int loop = 0; loop < atomic_load(&ahead_done); ++loop) ahead_loop(loop);
        }
    }
    if (child_status >= 0) _exit(child_status == 0 ? child_regions() : child_status);
    // In the parent both threads ran every loop: each iteration exactly once.
    for (int loop = 0; loop < atomic_load(&ahead_done); ++loop)
        for (int i = 0; i < ahead_iterations_k; ++i) CHECK(ahead_marks[loop][i] == 1);
    printf("%d forks while a team mate ran nowait loops ahead: %d children failed\n", count, failed);
    fprintf(stderr, "(the mate ran %d loops)\n", atomic_load(&ahead_done)); // varies from run to run
    return failed;
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
    CHECK(fork_while_ahead(getenv("GOMP_TEST_FORKS") ? atoi(getenv("GOMP_TEST_FORKS")) : 60) == 0);
#endif
    return 0;
}
