/*  `target` constructs on a host without offload devices: every region runs on the host, as libgomp runs them
 *  without offload plugins. `map` clauses share the host's data, `firstprivate` gives the region a copy, `target
 *  data`, `enter data`, `exit data` and `update` have nothing to move, `nowait` regions finish by `taskwait`, and
 *  `teams distribute parallel for` inside `target` splits its loop over the host's teams and threads. The device
 *  memory routines (`omp_target_alloc`, `_memcpy`, `_memcpy_rect`, ...) serve device 0, the host. */
#include "gomp_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

/**  The device memory routines with the host as the only device: device 0 allocates, copies (with offsets, and as
 *   2-D and 3-D rectangles) and reports any pointer present; every other device number is refused (NULL, EINVAL,
 *   absent), and no pointer can be associated. Each copy lands only where it should: the rest keeps its marker. */
static void device_memory(void) {
    int const host = omp_get_initial_device(), bad[3] = {-1, 1, omp_get_num_devices() + 1};
    int *const block = omp_target_alloc(8 * sizeof(int), host);
    CHECK(block != NULL);
    for (int i = 0; i < 8; ++i) block[i] = -1;
    int const source[6] = {10, 11, 12, 13, 14, 15};
    int const copied = omp_target_memcpy(block, source, 3 * sizeof(int), 2 * sizeof(int), sizeof(int), host, host);
    printf("device memory: memcpy %d:", copied);
    for (int i = 0; i < 8; ++i) printf(" %d", block[i]);
    printf("; present %d %d\n", omp_target_is_present(block, host), omp_target_is_present(NULL, host));
    CHECK(copied == 0 && block[1] == -1 && block[2] == 11 && block[4] == 13 && block[5] == -1);
    int refusals = 0;
    for (int k = 0; k < 3; ++k) {
        void *const none = omp_target_alloc(16, bad[k]);
        refusals += none == NULL;
        refusals += omp_target_memcpy(block, source, sizeof(int), 0, 0, bad[k], host) != 0;
        refusals += omp_target_memcpy(block, source, sizeof(int), 0, 0, host, bad[k]) != 0;
        refusals += omp_target_is_present(block, bad[k]) == 0;
        omp_target_free(none, bad[k]);
    }
    refusals += omp_target_associate_ptr(source, block, sizeof(int), 0, host) != 0;
    refusals += omp_target_disassociate_ptr(source, host) != 0;
    printf("device memory: %d of 14 refusals, block[0] still %d\n", refusals, block[0]);
    CHECK(refusals == 14 && block[0] == -1);
    omp_target_free(block, host);

    // A 2 x 3 rectangle from (2, 0) of a 4 x 5 array into (1, 1) of another; then 1 x 1 x 2 of a 2 x 2 x 3 one.
    int from[4][5], to[4][5];
    for (int i = 0; i < 20; ++i) from[i / 5][i % 5] = i, to[i / 5][i % 5] = -1;
    size_t const volume[2] = {2, 3}, to_offsets[2] = {1, 1}, from_offsets[2] = {2, 0}, dimensions[2] = {4, 5};
    int const flat = omp_target_memcpy_rect(to, from, sizeof(int), 2, volume, to_offsets, from_offsets, dimensions,
                                            dimensions, host, host);
    int wrong = 0;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) {
            int const inside = i >= 1 && i < 3 && j >= 1 && j < 4;
            wrong += to[i][j] != (inside ? from[i + 1][j - 1] : -1);
        }
    int deep_from[2][2][3], deep_to[2][2][3];
    for (int i = 0; i < 12; ++i) ((int *)deep_from)[i] = i, ((int *)deep_to)[i] = -1;
    size_t const deep_volume[3] = {1, 1, 2}, deep_offsets[3] = {1, 0, 1}, deep_dimensions[3] = {2, 2, 3};
    int const deep = omp_target_memcpy_rect(deep_to, deep_from, sizeof(int), 3, deep_volume, deep_offsets, deep_offsets,
                                            deep_dimensions, deep_dimensions, host, host);
    for (int i = 0; i < 12; ++i) wrong += ((int *)deep_to)[i] != (i == 7 || i == 8 ? i : -1);
    int const dimensions_supported = omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, host, host);
    int const refused = omp_target_memcpy_rect(to, from, sizeof(int), 2, volume, to_offsets, from_offsets, dimensions,
                                               dimensions, bad[1], host);
    printf("device memory: memcpy_rect %d %d, %d wrong elements; dimensions supported %d, other device %s\n", flat,
           deep, wrong, dimensions_supported, refused ? "refused" : "accepted");
    CHECK(flat == 0 && deep == 0 && wrong == 0 && dimensions_supported > 3 && refused != 0);
}

/**
 *  A target region is the device's initial task, on the host as on a device: level 0, no team, the device's initial
 *  ICVs (the environment's nthreads-var and max-active-levels-var, not what the encountering task set; what it sets
 *  there ends with it), its `thread_limit` clause as the
 *  thread limit. So a worksharing loop inside it, in a thread of a parallel region, runs every iteration on that
 *  thread (it binds to the target region), a `parallel` inside it gets a full team even under max-active-levels 1,
 *  and a monotonic loop around such a region hands out its iterations as if the region were not there.
 */
static void target_is_an_initial_task(void) {
    int const environment_threads = omp_get_max_threads();
    omp_set_num_threads(environment_threads + 1);
    int const levels = omp_get_max_active_levels(); // the environment's: nothing set it yet
    omp_set_max_active_levels(levels + 2);
    int wrong = 0, loop_hits[2][10] = {{0}}, inner_teams[2] = {0};
#pragma omp parallel num_threads(2) reduction(+ : wrong)
    {
        int const me = omp_get_thread_num();
#pragma omp target map(tofrom : wrong, loop_hits, inner_teams) firstprivate(me)
        {
            wrong += omp_get_level() != 0 || omp_get_active_level() != 0 || omp_in_parallel() ||
                     omp_get_num_threads() != 1 || omp_get_thread_num() != 0 || omp_get_team_size(0) != 1 ||
                     omp_get_max_threads() != environment_threads || omp_get_max_active_levels() != levels;
            omp_set_max_active_levels(levels + 5); // the target region's own, gone with it
#pragma omp for schedule(static)
            for (int j = 0; j < 10; ++j) loop_hits[me][j]++;
#pragma omp parallel num_threads(2)
#pragma omp single
            inner_teams[me] = omp_get_num_threads() * 10 + omp_get_level();
        }
    }
    int limited = 0, limit_seen = 0;
#pragma omp target thread_limit(1) map(tofrom : limited, limit_seen)
    {
        limit_seen = omp_get_thread_limit();
#pragma omp parallel num_threads(2)
#pragma omp single
        limited = omp_get_num_threads();
    }
    wrong += omp_get_max_active_levels() != levels + 2;
    omp_set_max_active_levels(levels);
    omp_set_num_threads(environment_threads);
    int misplaced = 0;
    for (int t = 0; t < 2; ++t)
        for (int j = 0; j < 10; ++j) misplaced += loop_hits[t][j] != 1;
    // Around it, a monotonic loop whose iterations each run a target region with a worksharing loop inside.
    int outer_hits[24] = {0}, inner_hits[24] = {0};
#pragma omp parallel for schedule(monotonic : dynamic, 1) num_threads(2)
    for (int i = 0; i < 24; ++i) {
        outer_hits[i]++;
#pragma omp target map(tofrom : inner_hits) firstprivate(i)
        {
#pragma omp for schedule(monotonic : dynamic, 1) nowait
            for (int j = 0; j < 3; ++j) {
#pragma omp atomic
                inner_hits[i]++;
            }
        }
    }
    int loop_wrong = 0;
    for (int i = 0; i < 24; ++i) loop_wrong += outer_hits[i] != 1 || inner_hits[i] != 3;
    printf("target as an initial task: %d wrong queries, %d misplaced iterations, parallel inside: %d and %d "
           "(threads * 10 + level); thread_limit(1): limit %d, parallel %d; loop around targets: %d wrong\n",
           wrong, misplaced, inner_teams[0], inner_teams[1], limit_seen, limited, loop_wrong);
    CHECK(wrong == 0 && misplaced == 0 && limit_seen == 1 && limited == 1 && loop_wrong == 0);
    CHECK(inner_teams[0] == 21 && inner_teams[1] == 21);
}

/**  A user thread that leaves through `pthread_exit` inside a `target` region: the thread's task and roots are as
 *   they were around the construct when it exits, and the joiner gets its value. */
static void *exit_inside_target(void *argument) {
    (void)argument;
#pragma omp target
    pthread_exit((void *)42);
    return NULL;
}

static int thread_limit_here(void) { // GCC refuses the call lexically inside `teams`
    return omp_get_thread_limit();
}

/**
 *  `target nowait depend(in: x)` behind a detached task that writes x: the region is a task that starts only once
 *  the event is fulfilled, after the code that follows the construct ran; and `target teams` takes the thread limit
 *  of the target region (none here), not the host's teams-thread-limit-var.
 */
static void target_tasks_and_limits(void) {
    int x = 0, seen = -1, flag = 0;
    omp_event_handle_t event;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task detach(event) depend(out : x) shared(x)
        x = 1;
#pragma omp target nowait depend(in : x) map(from : seen) map(to : flag)
        seen = flag;
        flag = 42; // the region may only start after the fulfilment below
#pragma omp flush
        omp_fulfill_event(event);
#pragma omp taskwait
    }
    int const teams_limit = omp_get_teams_thread_limit();
    omp_set_teams_thread_limit(2);
    int limit_in_teams = 0, team_threads = 0;
#pragma omp target teams num_teams(1) map(tofrom : limit_in_teams, team_threads)
    {
        limit_in_teams = thread_limit_here();
#pragma omp parallel num_threads(3)
#pragma omp single
        team_threads = omp_get_num_threads();
    }
    omp_set_teams_thread_limit(teams_limit);
    printf("target nowait behind a detached task: saw %d; target teams after the host's teams limit 2: limit %d, "
           "parallel %d\n",
           seen, limit_in_teams, team_threads);
    CHECK(seen == 42 && limit_in_teams == omp_get_thread_limit() && team_threads == 3);
}

/**
 *  Drop-in modes only (libgomp 12 deadlocks now and then in this program's later sections on a loaded host, both
 *  threads asleep in its futexes; what they check is checked here against fixed answers, and said on stderr): a
 *  pause inside a target region inside a region leaves the region's threads alone (libgomp answers 0 there, pausing
 *  nothing of that region; the drop-in answers -1, as anywhere inside a region) and both go on, and a user thread
 *  leaves through `pthread_exit` inside a target region.
 */
static void target_exits_and_pauses(void) {
    int paused = 1, members = 0;
#pragma omp parallel num_threads(2) reduction(+ : members)
    {
        if (omp_get_thread_num() == 0) {
#pragma omp target map(from : paused)
            paused = omp_pause_resource_all(omp_pause_soft);
        }
#pragma omp barrier
        members += 1;
    }
    int again = 0;
#pragma omp parallel num_threads(2) reduction(+ : again)
    again += 1;
    pthread_t exiting;
    void *value = NULL;
    CHECK(pthread_create(&exiting, NULL, exit_inside_target, NULL) == 0);
    CHECK(pthread_join(exiting, &value) == 0);
    int after_exit = 0;
#pragma omp parallel num_threads(2) reduction(+ : after_exit)
    after_exit += 1;
    fprintf(stderr,
            "pause inside a target inside a region: members %d, next region %d; pthread_exit in a target: %ld, then "
            "a region of %d\n",
            members, again, (long)(intptr_t)value, after_exit);
    CHECK((paused == 0 || paused == -1) && members == 2 && again == 2 && value == (void *)42 && after_exit == 2);
}

/**
 *  Drop-in modes only (libgomp 12.2 lets them through behind a detached task, though its code means to wait): a
 *  `target`, `target update` or `target enter data` with `depend(in: x)` and no `nowait` waits for the detached task
 *  that writes x. A team thread fulfils its event once the construct is about to start, after setting the flag read
 *  after the construct (inside the region, for `target`). Returns the rounds, of 10 per kind, that saw the flag.
 */
static int target_waits_for_dependences(int kind) {
    int rounds = 0;
    for (int round = 0; round < 10; ++round) {
        atomic_int announced = 0;
        int flag = 0, x = 0, seen = -1; // `flag` is mapped: a target region takes no `_Atomic` variables
        omp_event_handle_t event;
#pragma omp parallel num_threads(2) shared(announced, flag, x, seen, event)
        {
            if (omp_get_thread_num() == 0) {
#pragma omp task detach(event) depend(out : x) shared(x)
                x = 1;
                atomic_store(&announced, 1);
                if (kind == 0) {
#pragma omp target depend(in : x) map(from : seen) map(to : flag)
                    seen = __atomic_load_n(&flag, __ATOMIC_ACQUIRE);
                } else if (kind == 1) {
#pragma omp target update to(x) depend(in : x)
                    seen = __atomic_load_n(&flag, __ATOMIC_ACQUIRE);
                } else {
#pragma omp target enter data map(to : x) depend(in : x)
                    seen = __atomic_load_n(&flag, __ATOMIC_ACQUIRE);
                }
            } else {
                while (!atomic_load(&announced)) sched_yield();
                __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
                omp_fulfill_event(event);
            }
        }
        rounds += seen == 1 && x == 1;
    }
    return rounds;
}

/**
 *  Drop-in modes only, like `target_exits_and_pauses` (libgomp 12 deadlocks in host `teams` with nested regions
 *  here now and then). Team numbers and counts against libgomp's documented answers.
 */
static void teams_around_targets(void) {
    // Team numbers inside host `teams`: also on the threads of a region nested in a team, whose iterations of a
    // `distribute parallel for` each record the team they ran in; a `target teams` inside a team leaves that team's
    // number and count as they were. Team counts where no clause gives one are libgomp's: 3 for host `teams`, 1 for
    // `target teams` (whose `num_teams(lower:upper)` gets its lower bound).
    enum { teams_k = 4, per_team_k = 10 };
    int ran_in[teams_k * per_team_k], wrong_count = 0, after_target[teams_k];
#pragma omp teams num_teams(teams_k) reduction(+ : wrong_count)
    {
#pragma omp distribute parallel for dist_schedule(static, per_team_k) num_threads(2) reduction(+ : wrong_count)
        for (int i = 0; i < teams_k * per_team_k; ++i) {
            ran_in[i] = omp_get_team_num();
            wrong_count += omp_get_num_teams() != teams_k;
        }
#pragma omp parallel num_threads(1)
        {
#pragma omp target teams num_teams(2)
            (void)0;
            after_target[omp_get_team_num()] = omp_get_team_num() * 10 + omp_get_num_teams();
        }
    }
    int misplaced = 0;
    for (int i = 0; i < teams_k * per_team_k; ++i) misplaced += ran_in[i] != i / per_team_k;
    int default_host = -1, default_target = -1, bounded_target = -1;
#pragma omp teams
    if (omp_get_team_num() == 0) default_host = omp_get_num_teams();
#pragma omp target teams map(from : default_target)
    if (omp_get_team_num() == 0) default_target = omp_get_num_teams();
#pragma omp target teams num_teams(3 : 6) map(from : bounded_target)
    if (omp_get_team_num() == 0) bounded_target = omp_get_num_teams();
    fprintf(stderr,
            "teams: %d iterations in the wrong team, %d wrong counts; after a target teams in each team: %d %d %d %d; "
            "teams without a clause: host %d, target %d, num_teams(3:6) %d\n",
            misplaced, wrong_count, after_target[0], after_target[1], after_target[2], after_target[3], default_host,
            default_target, bounded_target);
    CHECK(misplaced == 0 && wrong_count == 0);
    CHECK(after_target[0] == 4 && after_target[1] == 14 && after_target[2] == 24 && after_target[3] == 34);
    CHECK(default_host == 3 && default_target == 1 && bounded_target == 3);

    // A `target` region on one thread of a region nested in a team: inside it there are no teams (team 0 of 1),
    // while the other thread, outside any target at that moment, still reads its team.
    int nested_wrong = 0;
#pragma omp teams num_teams(3) reduction(+ : nested_wrong)
    {
        int const outer = omp_get_team_num();
        int in_target = 0, checked = 0; // set and read with atomic built-ins (a target region maps them)
#pragma omp parallel num_threads(2) shared(in_target, checked) reduction(+ : nested_wrong)
        {
            // libgomp may give this region one thread (it runs teams on threads of their own): then no partner.
            int const paired = omp_get_num_threads() == 2;
            if (omp_get_thread_num() == 0) {
#pragma omp target map(tofrom : nested_wrong, in_target, checked)
                {
                    nested_wrong += omp_get_team_num() != 0 || omp_get_num_teams() != 1;
                    __atomic_store_n(&in_target, 1, __ATOMIC_SEQ_CST);
                    while (paired && !__atomic_load_n(&checked, __ATOMIC_SEQ_CST)) continue;
                }
            } else {
                while (!__atomic_load_n(&in_target, __ATOMIC_SEQ_CST)) continue;
                nested_wrong += omp_get_team_num() != outer || omp_get_num_teams() != 3;
                __atomic_store_n(&checked, 1, __ATOMIC_SEQ_CST);
#pragma omp target map(tofrom : nested_wrong)
                nested_wrong += omp_get_team_num() != 0 || omp_get_num_teams() != 1;
            }
        }
    }
    fprintf(stderr, "teams seen inside and beside target regions in nested regions: %d wrong\n", nested_wrong);
    CHECK(nested_wrong == 0);
}

int main(void) {
    report_server();
    device_memory();
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
    target_is_an_initial_task();
    target_tasks_and_limits();

    if (served_by_forkunion()) {
        target_exits_and_pauses();
        teams_around_targets();
        int waited[3];
        for (int kind = 0; kind < 3; ++kind) waited[kind] = target_waits_for_dependences(kind);
        fprintf(stderr,
                "target, target update, target enter data with depend, no nowait, behind a detached task: "
                "%d, %d, %d of 10 waited\n",
                waited[0], waited[1], waited[2]);
        CHECK(waited[0] == 10 && waited[1] == 10 && waited[2] == 10);
    }
    return 0;
}
