/**
 *  @file   test/c_api_fork_test.c
 *  @brief  A `fork()`ed child of a process with spawned pools neither deadlocks nor corrupts: in the child, the
 *          inherited pools refuse every dispatch with `fu_forked_k` at once (their workers do not exist
 *          there), and once respawned (or a new pool) they run loops on fresh threads. The parent's pools keep
 *          working. Repeated for both exclusivities, under every capability mask of `c_api_test.c`, with the fork
 *          taken while an inclusive split dispatch is pending in the parent, and with the caller of an inclusive
 *          pool forking inside its own slice (whose dispatch must return `fu_forked_k` in the child, at once).
 *
 *  Every wait is bounded: the parent gives each child 20 s, then kills it and fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>   /* `kill` */
#include <stdio.h>    /* `fprintf` */
#include <string.h>   /* `memset` */
#include <sys/wait.h> /* `waitpid` */
#include <time.h>     /* `nanosleep` */
#include <unistd.h>   /* `fork`, `_exit` */

#include <forkunion.h>

static unsigned long failures_count = 0;

#define CHECK(condition)                                                                                               \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            ++failures_count;                                                                                          \
            fprintf(stderr, "[pid %ld] %s:%d: CHECK(%s) failed\n", (long)getpid(), __FILE__, __LINE__, #condition);    \
        }                                                                                                              \
    } while (0)

enum { tasks_count = 200 };

static void count_task(void *context, size_t task, size_t thread, size_t compute_domain) {
    (void)thread, (void)compute_domain;
    ++((unsigned *)context)[task];
}

static void count_thread(void *context, size_t thread, size_t compute_domain) {
    (void)compute_domain;
    ++((unsigned *)context)[thread];
}

/** Runs one `fu_pool_for_n_dynamic` and checks every task ran exactly once. */
static int runs_every_task_once(fu_pool_t pool) {
    unsigned hits[tasks_count];
    size_t task;
    memset(hits, 0, sizeof(hits));
    if (fu_pool_for_n_dynamic(pool, tasks_count, count_task, hits) != fu_success_k) return 0;
    for (task = 0; task != tasks_count; ++task)
        if (hits[task] != 1) return 0;
    return 1;
}

static void count_slice(void *context, size_t first, size_t count, size_t thread, size_t compute_domain) {
    (void)thread, (void)compute_domain;
    while (count--) ++((unsigned *)context)[first++];
}

/**
 *  The child's side: what an inherited pool does, then a respawn and a new pool. Exits with `_exit`. Each check
 *  is a statement of `forkunion.h`'s "Processes that fork": every dispatch (blocking or split), `fu_pool_nap` and
 *  `fu_pool_sleep` refused with `fu_forked_k`, 0 threads, the `_or_run_on_caller` forms run on the caller, a join
 *  of a dispatch from before the fork (`pending`, 0 if none) returns `fu_forked_k`, and terminate frees the thread
 *  table (the pool's footprint falls back to a never-spawned one's).
 */
static void child(fu_topology_t topology, fu_pool_t inherited, fu_capabilities_t allowed, size_t pending) {
    unsigned hits[tasks_count];
    size_t generation = 9, task, spawned_bytes, unspawned_bytes;
    fu_pool_t fresh;
    memset(hits, 0, sizeof(hits));
    CHECK(fu_pool_threads_count(inherited) == 0);
    CHECK(fu_pool_for_n(inherited, tasks_count, count_task, hits) == fu_forked_k);
    CHECK(fu_pool_for_n_dynamic(inherited, tasks_count, count_task, hits) == fu_forked_k);
    CHECK(fu_pool_for_slices(inherited, tasks_count, count_slice, hits) == fu_forked_k);
    CHECK(fu_pool_for_threads(inherited, count_thread, hits) == fu_forked_k);
    CHECK(fu_pool_unsafe_for_threads(inherited, count_thread, hits, &generation) == fu_forked_k);
    CHECK(generation == 0);
    if (pending) CHECK(fu_pool_unsafe_join(inherited, pending) == fu_forked_k);
    CHECK(fu_pool_nap(inherited) == fu_forked_k);
    CHECK(fu_pool_sleep(inherited, 0) == fu_forked_k);
    CHECK(hits[0] == 0);
    /* The fallbacks run every task here, once. */
    CHECK(fu_pool_for_n_or_run_on_caller(inherited, tasks_count, count_task, hits) == fu_success_k);
    CHECK(fu_pool_for_slices_or_run_on_caller(inherited, tasks_count, count_slice, hits) == fu_success_k);
    for (task = 0; task != tasks_count; ++task) CHECK(hits[task] == 2);
    memset(hits, 0, sizeof(hits));
    /* Terminate forgets the parent's workers and frees their table. */
    fresh = fu_pool_new("unspawned", allowed);
    CHECK(fresh != NULL);
    unspawned_bytes = fresh ? fu_pool_memory_usage(fresh) : 0;
    fu_pool_delete(fresh);
    spawned_bytes = fu_pool_memory_usage(inherited);
    CHECK(fu_pool_terminate(inherited) == fu_not_spawned_k); /* nothing of its own to stop in this process */
    CHECK(fu_pool_memory_usage(inherited) == unspawned_bytes && unspawned_bytes < spawned_bytes);
    /* Respawning forgets the parent's workers and starts the child's own. */
    CHECK(fu_pool_spawn(topology, inherited, 3, fu_caller_exclusive_k) == fu_success_k);
    CHECK(fu_pool_threads_count(inherited) == 3);
    CHECK(runs_every_task_once(inherited));
    CHECK(fu_pool_terminate(inherited) == fu_success_k);
    fresh = fu_pool_new("child", allowed);
    CHECK(fresh != NULL && fu_pool_spawn(topology, fresh, 2, fu_caller_inclusive_k) == fu_success_k);
    CHECK(runs_every_task_once(fresh));
    fu_pool_delete(fresh);
    fu_pool_delete(inherited);
    fu_topology_delete(topology);
    _exit(failures_count ? 1 : 0); /* no atexit handlers: the parent's state is not ours to tear down */
}

/** Waits at most 20 s for `pid`; kills it and reports failure after that. */
static int child_passed(pid_t pid) {
    struct timespec const pause = {0, 10 * 1000 * 1000};
    int status = 0, waited;
    for (waited = 0; waited != 2000; ++waited) {
        pid_t const done = waitpid(pid, &status, WNOHANG);
        if (done == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (done < 0) return 0;
        nanosleep(&pause, NULL);
    }
    fprintf(stderr, "child %ld did not finish in 20 s: killed\n", (long)pid);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return 0;
}

/** The forking callbacks' context: thread 0 forks on its first call; `pid` then tells the child from the parent. */
typedef struct {
    pid_t pid;
    unsigned hits[tasks_count];
} forking_t;

static void fork_in_task(void *context, size_t task, size_t thread, size_t compute_domain) {
    forking_t *const forking = (forking_t *)context;
    (void)compute_domain;
    if (thread == 0 && forking->pid == -1) {
        fflush(NULL);
        forking->pid = fork();
    }
    ++forking->hits[task];
}

static void fork_in_thread(void *context, size_t thread, size_t compute_domain) {
    forking_t *const forking = (forking_t *)context;
    (void)compute_domain;
    if (thread == 0 && forking->pid == -1) {
        fflush(NULL);
        forking->pid = fork();
    }
    ++forking->hits[thread];
}

/**
 *  The caller of a caller-inclusive pool forks inside its own slice (thread 0's callback runs on the calling thread)
 *  through `fu_pool_for_n` (form 0), `fu_pool_for_n_or_run_on_caller` (1) and a split dispatch's
 *  `fu_pool_unsafe_join` (2). In the child that dispatch returns `fu_forked_k` at once (the other slices' threads
 *  are not there), then the inherited pool behaves as any; in the parent it completes every task.
 */
static void fork_inside_the_callers_slice(fu_capabilities_t allowed, int form) {
    fu_topology_t topology = fu_topology_new();
    fu_pool_t pool = fu_pool_new("slice", allowed);
    forking_t forking;
    fu_status_t status = fu_success_k;
    size_t generation = 0, i;
    CHECK(topology && pool);
    if (!topology || !pool) return;
    CHECK(fu_pool_spawn(topology, pool, 3, fu_caller_inclusive_k) == fu_success_k);
    memset(&forking, 0, sizeof(forking));
    forking.pid = -1;
    if (form == 0) status = fu_pool_for_n(pool, tasks_count, fork_in_task, &forking);
    if (form == 1) status = fu_pool_for_n_or_run_on_caller(pool, tasks_count, fork_in_task, &forking);
    if (form == 2) {
        CHECK(fu_pool_unsafe_for_threads(pool, fork_in_thread, &forking, &generation) == fu_success_k);
        status = fu_pool_unsafe_join(pool, generation);
    }
    if (forking.pid == 0) {
        CHECK(status == fu_forked_k);
        child(topology, pool, allowed, 0);
    }
    CHECK(forking.pid > 0);
    CHECK(status == fu_success_k);
    if (form == 2)
        CHECK(forking.hits[0] == 1 && forking.hits[1] == 1 && forking.hits[2] == 1);
    else
        for (i = 0; i != tasks_count; ++i) CHECK(forking.hits[i] == 1);
    if (forking.pid > 0) CHECK(child_passed(forking.pid));
    CHECK(runs_every_task_once(pool));
    fu_pool_delete(pool);
    fu_topology_delete(topology);
}

int main(void) {
    fu_capabilities_t const masks[] = {
        fu_capabilities_all_k,
        fu_capabilities_all_k & ~fu_capabilities_waits_k,
        fu_capabilities_all_k & ~fu_capability_thread_pinning_k,
        fu_capabilities_all_k & ~fu_capability_memory_placement_k,
    };
    size_t m, shape, forks = 0;
    for (m = 0; m != sizeof(masks) / sizeof(masks[0]); ++m)
        for (shape = 0; shape != 3; ++shape) {
            /* 0: inclusive, 1: exclusive, 2: inclusive with an unjoined split dispatch across the fork. */
            fu_caller_exclusivity_t const exclusivity = shape == 1 ? fu_caller_exclusive_k : fu_caller_inclusive_k;
            fu_topology_t topology = fu_topology_new();
            fu_pool_t pool = fu_pool_new("parent", masks[m]);
            unsigned seen[8];
            size_t generation = 0;
            pid_t pid;
            CHECK(topology && pool);
            if (!topology || !pool) return 1;
            CHECK(fu_pool_spawn(topology, pool, 3, exclusivity) == fu_success_k);
            CHECK(runs_every_task_once(pool));
            memset(seen, 0, sizeof(seen));
            if (shape == 2) CHECK(fu_pool_unsafe_for_threads(pool, count_thread, seen, &generation) == fu_success_k);
            fflush(NULL);
            pid = fork();
            CHECK(pid >= 0);
            if (pid == 0) child(topology, pool, masks[m], generation);
            ++forks;
            CHECK(child_passed(pid));
            /* The parent's pool is untouched by the fork. */
            if (shape == 2) {
                CHECK(fu_pool_unsafe_join(pool, generation) == fu_success_k);
                CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
            }
            CHECK(fu_pool_threads_count(pool) == 3);
            CHECK(runs_every_task_once(pool));
            fu_pool_delete(pool);
            fu_topology_delete(topology);
        }
    for (m = 0; m != sizeof(masks) / sizeof(masks[0]); ++m)
        for (shape = 0; shape != 3; ++shape, ++forks) fork_inside_the_callers_slice(masks[m], (int)shape);
    printf("c_api fork: %zu children, %lu failures\n", forks, failures_count);
    return failures_count ? 1 : 0;
}
