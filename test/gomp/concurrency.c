/*  Regions started at the same time from several user threads: each gets a full team of the size it asked for
 *  (the drop-in gives each its own root of pools), every worksharing construct stays within its team, and
 *  nothing deadlocks. Threads that exit hand their root on: more of them in turn than there are roots all get
 *  full teams, also when each opens one more region from a key destructor as it exits (which must not leave a team
 *  of threads behind per thread); `omp_pause_resource_all` stops workers that open a region as they exit. Also a
 *  region started by a user thread created inside a region. */
#include "gomp_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

enum { users_k = 3, rounds_k = 60 };

static pthread_barrier_t start_line;

static void *user(void *argument) {
    long const id = (long)argument;
    long errors = 0;
    pthread_barrier_wait(&start_line);
    for (int round = 0; round < rounds_k; ++round) {
        int const size = 2 + (int)((id + round) % 2);
        int team = 0, hits[300] = {0};
#pragma omp parallel num_threads(size) reduction(+ : errors)
        {
#pragma omp single
            team = omp_get_num_threads();
#pragma omp for schedule(dynamic, 7)
            for (int i = 0; i < 300; ++i) hits[i]++;
#pragma omp barrier
            errors += omp_get_num_threads() != size;
        }
        for (int i = 0; i < 300; ++i) errors += hits[i] != 1;
        errors += team != size;
    }
    return (void *)errors;
}

/* One region of two threads from a short-lived thread: its team size. */
static void *one_region(void *argument) {
    int *team = (int *)argument;
#pragma omp parallel num_threads(2)
#pragma omp single
    *team = omp_get_num_threads();
    return NULL;
}

static void *inner_user(void *argument) {
    int *team = (int *)argument;
#pragma omp parallel num_threads(2)
#pragma omp single
    *team = omp_get_num_threads() * 10 + omp_get_level();
    return NULL;
}

/**  The process's live threads, from /proc/self/status; -1 if unreadable. */
static int live_threads(void) {
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return -1;
    char line[256];
    int threads = -1;
    while (fgets(line, sizeof(line), status))
        if (!strncmp(line, "Threads:", 8)) threads = atoi(line + 8);
    fclose(status);
    return threads;
}

/**  A per-thread cache whose key destructor flushes it with a region when its thread exits: after every other
 *   thread-exit handler of the runtime, on user threads and on the runtime's own workers alike. */
static pthread_key_t flushed_at_exit;
static atomic_int flushes, flush_errors;
static void flush_at_exit(void *value) {
    (void)value;
    int team = 0;
#pragma omp parallel num_threads(2) reduction(+ : team)
    team += 1;
    atomic_fetch_add(&flushes, 1);
    if (team != 2) atomic_fetch_add(&flush_errors, 1);
}
static void *region_then_exit(void *argument) {
    (void)argument;
    int team = 0;
#pragma omp parallel num_threads(2) reduction(+ : team)
    team += 1;
    if (team != 2) atomic_fetch_add(&flush_errors, 1);
    pthread_setspecific(flushed_at_exit, &flushes);
    return NULL;
}

/**  40 user threads in turn, each of which flushes at exit: what the runtime holds for a thread's regions (its root
 *   of pools under the drop-in) is handed back after that last region too, so the threads left over stay few. Then
 *   `omp_pause_resource_all` stops workers whose exit flushes with a region of their own: it must not wait for
 *   them while they wait for it. */
static void regions_at_thread_exit(void) {
    CHECK(pthread_key_create(&flushed_at_exit, flush_at_exit) == 0);
    int const before = live_threads();
    enum { exiting_k = 40 };
    for (int passing = 0; passing < exiting_k; ++passing) {
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, region_then_exit, NULL) == 0);
        pthread_join(thread, NULL);
    }
    int const after = live_threads();
    printf("%d threads in turn that flush with a region at exit: %d flushes, %d errors, threads left over %s\n",
           exiting_k, atomic_load(&flushes), atomic_load(&flush_errors),
           after - before <= omp_get_max_threads() + 2 ? "few" : "many");
    CHECK(atomic_load(&flushes) == exiting_k && atomic_load(&flush_errors) == 0);
    CHECK(after - before <= omp_get_max_threads() + 2);
#pragma omp parallel num_threads(2)
    pthread_setspecific(flushed_at_exit, &flushes);
    alarm(60); // a deadlock fails instead of hanging (the team a worker's flush gets there is the runtime's choice)
    int const paused = omp_pause_resource_all(omp_pause_hard);
    alarm(0);
    printf("paused while workers flush with a region at exit: %d\n", paused);
    CHECK(paused == 0);
}

int main(void) {
    report_server();
    pthread_t threads[users_k];
    pthread_barrier_init(&start_line, NULL, users_k);
    for (long id = 0; id < users_k; ++id) CHECK(pthread_create(&threads[id], NULL, user, (void *)id) == 0);
    long errors = 0;
    for (int id = 0; id < users_k; ++id) {
        void *result = NULL;
        pthread_join(threads[id], &result);
        errors += (long)result;
    }
    pthread_barrier_destroy(&start_line);
    printf("%d user threads x %d regions at once: %ld errors\n", users_k, rounds_k, errors);

    // Threads that come and go, one after another, more of them than the drop-in has roots: each still gets the
    // team it asked for (a thread's runtime state, its root under the drop-in, is freed when it exits).
    enum { passing_k = 300 };
    int full_teams = 0;
    for (int passing = 0; passing < passing_k; ++passing) {
        int team = 0;
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, one_region, &team) == 0);
        pthread_join(thread, NULL);
        full_teams += team == 2;
    }
    printf("%d threads in turn, one region each: %d full teams\n", passing_k, full_teams);

    // A thread created inside a region is an initial thread of its own: its region is active, at level 1.
    int inner_team = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
    {
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, inner_user, &inner_team) == 0);
        pthread_join(thread, NULL);
    }
    printf("region from a thread created inside a region: team %d at level %d\n", inner_team / 10, inner_team % 10);
    regions_at_thread_exit();
    return 0;
}
