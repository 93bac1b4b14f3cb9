/*  Detachable tasks: `task detach(event)` and `omp_fulfill_event` (C and Fortran spellings). A detached task completes
 *  once its body has returned and its event is fulfilled, whichever comes last. The event is fulfilled inside the
 *  body, by a later sibling task, by another thread of the team, and by a thread outside OpenMP once the waiting
 *  thread announced its wait; `taskwait`, `taskgroup`, `taskloop`, barriers and the end of a region wait for it; tasks
 *  that depend on a detached task (`depend(in:x)` after its `depend(out:x)`, and a chain after them) start only once
 *  it completed, in dependence order; 40 events in a loop are fulfilled in reverse, alone and with a dependent task
 *  each; a member waiting in a barrier runs a dependent task that became ready after it arrived. Every check reads a flag written just before the fulfilment, so a runtime that let a wait or a dependent task
 *  through early fails it. Event variables start at 0 only for the compiler, which copies them into the task's data
 *  before the runtime writes the handle.
 *
 *  With the argument `drop_in_only` (where libgomp 12.2 fails): barriers, also of a team of one, and a region's end
 *  waiting for a fulfilment from outside OpenMP (libgomp may never wake); `taskwait depend` (libgomp returns before
 *  the detached writer completes); 1000 events, alone and with dependent tasks (past its queue limit libgomp makes
 *  the encountering thread wait for queued tasks, which hangs when a later sibling fulfils their events, and starts a
 *  dependent task before its detached predecessor completes).
 *
 *  With the argument `cancelled` (OMP_CANCELLATION=true; drop-in only: libgomp 12.2's plain barrier does not see a
 *  cancellation): members waiting in an orphaned barrier for the region's detached task are released by `cancel
 *  parallel`, while the task's event waits for one of them to be released; the region's end still waits for that
 *  task, whose body ran; detached tasks created once the region is cancelled are discarded (their bodies never run,
 *  and their events, never fulfilled, hold nothing up); a thread's end of a `cancel`led loop with `reduction(task,
 *  ...)` waits for its incomplete `in_reduction` tasks, which still use the reduction's copies. */
#include "gomp_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

void omp_fulfill_event_(omp_event_handle_t event); // the Fortran spelling (`omp_lib` passes it by value)

/**  Counts the bodies of detached tasks that do nothing else: GCC 12 at -O1 and above drops a task whose body is
 *   empty, detach clause and all, and its event variable is never written. */
static atomic_int bodies;

/**  Spins (yielding) until `*flag` is at least `value`; a runtime that never gets there fails instead of hanging. */
static void spin_until(atomic_int *flag, int value) {
    double const deadline = omp_get_wtime() + 120.0;
    while (atomic_load(flag) < value) {
        if (omp_get_wtime() > deadline) {
            fprintf(stderr, "spin_until: still %d after 120 s, expected %d\n", atomic_load(flag), value);
            abort();
        }
        sched_yield();
    }
}

/**  A thread outside OpenMP that fulfils `event` once `*announced` is set, and says so in `*fulfilled` first. */
typedef struct {
    omp_event_handle_t const *event;
    atomic_int *announced;
    atomic_int *fulfilled;
} late_fulfiller_t;
static void *fulfil_late(void *argument) {
    late_fulfiller_t const *late = (late_fulfiller_t const *)argument;
    spin_until(late->announced, 1);
    atomic_store(late->fulfilled, 1);
    omp_fulfill_event(*late->event);
    return NULL;
}
static pthread_t start_late_fulfiller(late_fulfiller_t *late) {
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, fulfil_late, late) == 0);
    return thread;
}

/**  Fulfilled inside its own body: `taskwait` returns, the body's write visible. */
static int fulfilled_in_body(void) {
    int value = 0;
#pragma omp parallel
#pragma omp single
    {
        omp_event_handle_t event = 0;
#pragma omp task detach(event) shared(value)
        {
            value = 1;
            omp_fulfill_event(event);
        }
#pragma omp taskwait
        CHECK(value == 1);
    }
    return value;
}

/**  Fulfilled by a later sibling; a task depending on the detached one starts only after the fulfilment. */
static int fulfilled_by_sibling(void) {
    atomic_int fulfilled = 0;
    int x = 0, seen = -1;
#pragma omp parallel
#pragma omp single
    {
        omp_event_handle_t event = 0;
#pragma omp task detach(event) depend(out : x) shared(x)
        x = 41;
#pragma omp task depend(in : x) shared(x, seen, fulfilled)
        {
            CHECK(atomic_load(&fulfilled) == 1); // not before its dependence completed
            seen = x + 1;
        }
#pragma omp task firstprivate(event) shared(fulfilled)
        {
            atomic_store(&fulfilled, 1);
            omp_fulfill_event(event);
        }
#pragma omp taskwait
        CHECK(seen == 42);
    }
    return seen;
}

/**  Fulfilled by another thread of the team, which waits until the task exists; the barrier waits for the task and
 *   for the task depending on it. */
static int fulfilled_by_team_thread(void) {
    atomic_int created = 0, fulfilled = 0;
    omp_event_handle_t event = 0;
    int x = 0, y = 0, threads = 0;
#pragma omp parallel shared(event, x, y, created, fulfilled, threads)
    {
        int const me = omp_get_thread_num(), team = omp_get_num_threads();
        if (me == 0) {
            threads = team;
#pragma omp task detach(event) depend(out : x) shared(x)
            x = 5;
#pragma omp task depend(in : x) shared(x, y, fulfilled)
            {
                CHECK(atomic_load(&fulfilled) == 1);
                y = x * 2;
            }
            atomic_store(&created, 1);
        }
        if (me == team - 1) { // thread 0 itself in a team of one
            spin_until(&created, 1);
            atomic_store(&fulfilled, 1);
            omp_fulfill_event(event);
        }
#pragma omp barrier
        CHECK(y == 10);
    }
    return y + (threads > 0);
}

/**  A thread outside OpenMP fulfils the event once the waiting thread announced its wait: `taskwait`. */
static int late_taskwait(void) {
    atomic_int announced = 0, fulfilled = 0;
    omp_event_handle_t event = 0;
    late_fulfiller_t late = {&event, &announced, &fulfilled};
    int ok = 0;
#pragma omp parallel shared(event, announced, fulfilled, ok)
#pragma omp single
    {
#pragma omp task detach(event)
        atomic_fetch_add(&bodies, 1);
        pthread_t const thread = start_late_fulfiller(&late);
        atomic_store(&announced, 1);
#pragma omp taskwait
        ok = atomic_load(&fulfilled);
        CHECK(pthread_join(thread, NULL) == 0);
    }
    return ok;
}

/**  The same for the end of a `taskgroup`, with the detached task created by a child task inside it. */
static int late_taskgroup(void) {
    atomic_int announced = 0, fulfilled = 0;
    omp_event_handle_t event = 0;
    late_fulfiller_t late = {&event, &announced, &fulfilled};
    int ok = 0;
#pragma omp parallel shared(event, announced, fulfilled, ok)
#pragma omp single
    {
        pthread_t thread;
#pragma omp taskgroup
        {
#pragma omp task shared(event)
            {
#pragma omp task detach(event)
                atomic_fetch_add(&bodies, 1);
            }
#pragma omp taskwait
            thread = start_late_fulfiller(&late);
            atomic_store(&announced, 1);
        }
        ok = atomic_load(&fulfilled);
        CHECK(pthread_join(thread, NULL) == 0);
    }
    return ok;
}

/**  The same for an explicit barrier (`explicit_barrier`) or the end of a region: the last thread of the team fulfils
 *   the event once thread 0 announced its arrival (thread 0 itself in a team of one). */
static int late_barrier(int explicit_barrier) {
    atomic_int announced = 0, fulfilled = 0;
    omp_event_handle_t event = 0;
    int after_barrier = -1;
#pragma omp parallel shared(event, announced, fulfilled, after_barrier)
    {
        int const me = omp_get_thread_num(), team = omp_get_num_threads();
        if (me == 0) {
#pragma omp task detach(event)
            atomic_fetch_add(&bodies, 1);
            if (team == 1) atomic_store(&fulfilled, 1), omp_fulfill_event(event);
            atomic_store(&announced, 1);
        }
        if (me == team - 1 && team > 1) {
            spin_until(&announced, 1);
            atomic_store(&fulfilled, 1);
            omp_fulfill_event(event);
        }
        if (explicit_barrier) {
#pragma omp barrier
#pragma omp masked
            after_barrier = atomic_load(&fulfilled);
        }
    }
    if (!explicit_barrier) after_barrier = atomic_load(&fulfilled);
    CHECK(after_barrier == 1);
    return after_barrier;
}

/**  Barriers (in the default team and in a team of one) and the end of a region wait for an event that a thread
 *   outside OpenMP fulfils once the team announced its arrival. Drop-in only: libgomp 12.2 does not reliably wake a
 *   barrier for such a fulfilment, and hangs. */
static int foreign_barriers(void) {
    int ok = 0;
    for (int round = 0; round != 3; ++round) {
        atomic_int announced = 0, fulfilled = 0;
        omp_event_handle_t event = 0;
        late_fulfiller_t late = {&event, &announced, &fulfilled};
        pthread_t thread;
        int after_barrier = -1;
#pragma omp parallel num_threads(round == 1 ? 1 : omp_get_max_threads()) shared(event, thread, after_barrier)
        {
#pragma omp masked
            {
#pragma omp task detach(event)
                atomic_fetch_add(&bodies, 1);
                thread = start_late_fulfiller(&late);
                atomic_store(&announced, 1);
            }
            if (round != 2) {
#pragma omp barrier
#pragma omp masked
                after_barrier = atomic_load(&fulfilled);
            }
        }
        if (round == 2) after_barrier = atomic_load(&fulfilled);
        CHECK(pthread_join(thread, NULL) == 0);
        CHECK(after_barrier == 1);
        ok += after_barrier;
    }
    return ok;
}

/**  A chain after a detached task: `in`, `inout`, `in` on x start in dependence order, after the fulfilment, while
 *   an unrelated task (`in` on another item) runs at once; with `taskwait_depend`, `taskwait depend(in : x)` waits
 *   for the writers of x (drop-in only: libgomp 12.2 returns from it before the detached writer completes, having run
 *   the `inout` task before the fulfilment). */
static int chain(int taskwait_depend) {
    atomic_int announced = 0, fulfilled = 0, order = 0;
    omp_event_handle_t event = 0;
    late_fulfiller_t late = {&event, &announced, &fulfilled};
    int x = 0, other = 0, first = -1, second = -1, third = -1, unrelated = -1;
#pragma omp parallel shared(event, x, other, first, second, third, unrelated)
#pragma omp single
    {
#pragma omp task detach(event) depend(out : x) shared(x)
        x = 1;
#pragma omp task depend(in : x) shared(first, order)
        first = atomic_fetch_add(&order, 1);
#pragma omp task depend(inout : x) shared(x, second, order)
        {
            second = atomic_fetch_add(&order, 1);
            x = 2;
        }
#pragma omp task depend(in : x) shared(x, third, order)
        third = atomic_fetch_add(&order, 1) + 10 * x;
#pragma omp task depend(in : other) shared(unrelated, fulfilled)
        unrelated = atomic_load(&fulfilled);
        pthread_t const thread = start_late_fulfiller(&late);
        atomic_store(&announced, 1);
        if (taskwait_depend) {
            // Waits for the detached task and the `inout` one, which writes x after the fulfilment.
#pragma omp taskwait depend(in : x)
            CHECK(atomic_load(&fulfilled) == 1 && second == 1 && x == 2);
        }
#pragma omp taskwait
        CHECK(pthread_join(thread, NULL) == 0);
    }
    (void)unrelated, (void)other; // `unrelated`: 0 or 1, as the runtime schedules it
    CHECK(first == 0 && second == 1 && third == 22);
    return first + second + third;
}

/**  `count` detached tasks, each (with `dependents`) with a task depending on it; a sibling fulfils the events in
 *   reverse, half of them through the Fortran spelling; every dependent task runs once, after its own event. */
enum { events_k = 1000 };
static int many_events(int count, int dependents) {
    static omp_event_handle_t events[events_k];
    static atomic_int fulfilled[events_k];
    static int slots[events_k], ran[events_k];
    CHECK(count <= events_k);
    int total = 0;
    for (int i = 0; i != count; ++i) atomic_store(&fulfilled[i], 0), slots[i] = 0, ran[i] = 0;
#pragma omp parallel shared(events, fulfilled, slots, ran, total)
#pragma omp single
    {
        for (int i = 0; i != count; ++i) {
            omp_event_handle_t event = 0;
#pragma omp task detach(event) depend(out : slots[i]) firstprivate(i)
            slots[i] = i;
            events[i] = event;
            if (!dependents) continue;
#pragma omp task depend(in : slots[i]) firstprivate(i)
            {
                CHECK(atomic_load(&fulfilled[i]) == 1);
                ran[i] += 1 + slots[i];
            }
        }
#pragma omp task
        for (int i = count - 1; i >= 0; --i) {
            atomic_store(&fulfilled[i], 1);
            if (i % 2)
                omp_fulfill_event(events[i]);
            else
                omp_fulfill_event_(events[i]);
        }
#pragma omp taskwait
        for (int i = 0; i != count; ++i) {
            CHECK(slots[i] == i && ran[i] == (dependents ? 1 + i : 0));
            total += slots[i] + ran[i];
        }
    }
    return total;
}

/**  The tasks of a `taskloop` each detach a task; a thread outside OpenMP fulfils them all once every one exists:
 *   the `taskloop` (its implicit taskgroup) returns only then. */
enum { loop_tasks_k = 4 };
static omp_event_handle_t loop_events[loop_tasks_k];
static atomic_int loop_created, loop_fulfilled;
static void *fulfil_loop(void *argument) {
    (void)argument;
    spin_until(&loop_created, loop_tasks_k);
    atomic_store(&loop_fulfilled, 1);
    for (int i = 0; i != loop_tasks_k; ++i) omp_fulfill_event(loop_events[i]);
    return NULL;
}
static int taskloop_events(void) {
    atomic_store(&loop_created, 0);
    atomic_store(&loop_fulfilled, 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, fulfil_loop, NULL) == 0);
    int ok = 0;
#pragma omp parallel shared(ok)
#pragma omp single
    {
#pragma omp taskloop num_tasks(loop_tasks_k)
        for (int i = 0; i < loop_tasks_k; ++i) {
            omp_event_handle_t event = 0;
#pragma omp task detach(event)
            atomic_fetch_add(&bodies, 1);
            loop_events[i] = event;
            atomic_fetch_add(&loop_created, 1);
        }
        ok = atomic_load(&loop_fulfilled);
    }
    CHECK(pthread_join(thread, NULL) == 0);
    return ok;
}

/**  A task that became ready while the team waits at the end of its region runs as a task of that region, whichever
 *   thread takes it. After a shared `taskloop` (`taskloop_events`), regions on the same team end in a barrier, where
 *   the other threads may take it; thread 0 fulfils the event once they have all reached the end. */
static int region_end_context(void) {
    atomic_int wrong = 0;
    for (int round = 0; round != 50; ++round) {
        atomic_int arrived = 0;
        omp_event_handle_t event = 0;
        int x = 0;
#pragma omp parallel shared(event, x, wrong, arrived)
        {
            int const team = omp_get_num_threads();
            if (omp_get_thread_num() == 0) {
#pragma omp task detach(event) depend(out : x) shared(x)
                x = 1;
#pragma omp task depend(in : x) shared(wrong) firstprivate(team)
                if (!omp_in_parallel() || omp_get_num_threads() != team) atomic_fetch_add(&wrong, 1);
                spin_until(&arrived, team - 1);
                omp_fulfill_event(event);
            } else {
                atomic_fetch_add(&arrived, 1);
            }
        }
    }
    return atomic_load(&wrong);
}

/**  The same for the tasks of a `master taskloop` that the other threads help with at the region's end. */
static int taskloop_end_context(void) {
    atomic_int wrong = 0;
    for (int round = 0; round != 20; ++round) {
#pragma omp parallel shared(wrong)
        {
            int const team = omp_get_num_threads();
#pragma omp master
#pragma omp taskloop num_tasks(64) firstprivate(team)
            for (int i = 0; i < 64; ++i)
                if (!omp_in_parallel() || omp_get_num_threads() != team) atomic_fetch_add(&wrong, 1);
        }
    }
    return atomic_load(&wrong);
}

/**  A barrier outside the region's lexical extent: GCC calls the plain `GOMP_barrier`, whose caller goes on after a
 *   cancellation (inside the region GCC would call `GOMP_barrier_cancel` and jump to the region's end). */
__attribute__((noinline)) static void orphaned_barrier(void) {
#pragma omp barrier
}

/**  `cancel parallel` while the other members wait in a barrier for the region's detached task, whose event a thread
 *   outside OpenMP fulfils only once thread 1 left that barrier; then each released member creates a detached task.
 *   Returns the number of members released, or 0 when a check fails: the region ended before the fulfilment, or a
 *   task created after the cancellation ran. */
static int cancelled_region(void) {
    atomic_int created = 0, released = 0, fulfilled = 0, members = 0, late_bodies[3] = {0, 0, 0};
    omp_event_handle_t event = 0;
    late_fulfiller_t late = {&event, &released, &fulfilled};
    pthread_t const thread = start_late_fulfiller(&late);
#pragma omp parallel num_threads(3) shared(event, created, released, members, late_bodies)
    {
        int const me = omp_get_thread_num();
        if (me == 0) {
            spin_until(&created, 1);
#pragma omp cancel parallel
        } else {
            if (me == 1) {
#pragma omp task detach(event)
                atomic_fetch_add(&bodies, 1);
                atomic_store(&created, 1);
            }
            orphaned_barrier(); // the region's task is incomplete until thread 1 is past it: only the cancel releases
            atomic_fetch_add(&members, 1);
            if (me == 1) atomic_store(&released, 1);
            omp_event_handle_t discarded = 0;
#pragma omp task detach(discarded) shared(late_bodies)
            atomic_fetch_add(&late_bodies[me], 1);
            if (atomic_load(&late_bodies[me])) omp_fulfill_event(discarded); // it ran: a runtime that does not discard
        }
    }
    int const ok = atomic_load(&fulfilled) == 1;
    CHECK(pthread_join(thread, NULL) == 0);
    int const late_ran = atomic_load(&late_bodies[1]) + atomic_load(&late_bodies[2]);
    fprintf(stderr, "cancelled region: %d members released, %d late tasks ran, end waited for the event: %d\n",
            atomic_load(&members), late_ran, ok);
    return ok && late_ran == 0 ? atomic_load(&members) : 0;
}

/**  `cancel parallel` while thread 1's tasks in a loop with `reduction(task, + : sum)` are incomplete: a detached task
 *   and one that depends on it, both `in_reduction`, whose event a thread outside OpenMP fulfils once thread 0 is
 *   about to cancel. Released by the cancellation, the loop's end barrier waits for no task, so thread 1's end of the
 *   loop must: the dependent task still uses the reduction's registration (on thread 1's stack) and copies. Returns
 *   the thread that ran the dependent task, or -1 if it never ran. */
static int cancelled_loop_reductions(void) {
    atomic_int created = 0, cancelling = 0, fulfilled = 0, runner = -1;
    omp_event_handle_t event = 0;
    late_fulfiller_t late = {&event, &cancelling, &fulfilled};
    pthread_t const thread = start_late_fulfiller(&late);
    long sum = 0;
    int token = 0;
    (void)token; // named only by the depend clauses
#pragma omp parallel num_threads(3) shared(event, created, cancelling, runner, sum, token)
    {
        if (omp_get_thread_num() == 0) {
            spin_until(&created, 1);
            atomic_store(&cancelling, 1);
#pragma omp cancel parallel
        }
#pragma omp for schedule(static, 1) reduction(task, + : sum)
        for (int i = 0; i < 3; ++i)
            if (i == 1) {
#pragma omp task detach(event) in_reduction(+ : sum) depend(out : token)
                sum += 1;
#pragma omp task in_reduction(+ : sum) depend(in : token) shared(runner)
                {
                    sum += 1;
                    atomic_store(&runner, omp_get_thread_num());
                }
                atomic_store(&created, 1);
            }
    }
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(atomic_load(&fulfilled) == 1);
    return atomic_load(&runner);
}

/**  A member that arrived at a barrier before a deferred task became ready runs it while it waits: the other member
 *   spins, with no scheduling point, until the task has run (libgomp's barrier runs queued tasks too). The member
 *   announces itself just before the barrier, so it has usually arrived by the time the task becomes ready; a
 *   runtime whose waiting members never look fails in `spin_until`. Returns the rounds whose task ran, of 20. */
static int ready_after_arrival(void) {
    int rounds = 0;
    for (int round = 0; round < 20; ++round) {
        atomic_int arriving = 0, ran = 0;
        int x = 0;
#pragma omp parallel num_threads(2) shared(arriving, ran, x)
        {
            if (omp_get_thread_num() == 1) {
                atomic_store(&arriving, 1);
            } else {
                spin_until(&arriving, 1);
                omp_event_handle_t event;
#pragma omp task detach(event) depend(out : x) shared(x)
                x = 1;
#pragma omp task depend(in : x) shared(ran, x)
                atomic_store(&ran, x);
                omp_fulfill_event(event);
                spin_until(&ran, 1);
            }
#pragma omp barrier
        }
        rounds += atomic_load(&ran);
    }
    return rounds;
}

int main(int argc, char **argv) {
    report_server();
    if (argc == 2 && strcmp(argv[1], "drop_in_only") == 0) {
        printf("late, barriers fulfilled outside OpenMP: %d\n", foreign_barriers());
        printf("dependence chain, taskwait depend: %d\n", chain(1));
        printf("1000 events: %d\n", many_events(events_k, 0));
        printf("1000 events with dependent tasks: %d\n", many_events(events_k, 1));
        printf("empty bodies run: %d\n", atomic_load(&bodies));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "cancelled") == 0) {
        CHECK(omp_get_cancellation());
        for (int round = 0; round < 20; ++round) CHECK(cancelled_region() == 2);
        printf("cancelled regions, members released from a barrier waiting for a detached task: 20 of 20\n");
        for (int round = 0; round < 20; ++round) CHECK(cancelled_loop_reductions() >= 0);
        printf("cancelled loops, task reductions outliving their incomplete tasks: 20 of 20\n");
        return 0;
    }
    printf("fulfilled in body: %d\n", fulfilled_in_body());
    printf("fulfilled by a sibling: %d\n", fulfilled_by_sibling());
    printf("fulfilled by a team thread: %d\n", fulfilled_by_team_thread());
    printf("late, taskwait: %d\n", late_taskwait());
    printf("late, taskgroup: %d\n", late_taskgroup());
    printf("late, barrier: %d\n", late_barrier(1));
    printf("late, end of a region: %d\n", late_barrier(0));
    printf("dependence chain: %d\n", chain(0));
    printf("40 events: %d\n", many_events(40, 0));
    printf("40 events with dependent tasks: %d\n", many_events(40, 1));
    printf("taskloop events: %d\n", taskloop_events());
    int const after_arrival = ready_after_arrival();
    printf("a task ready after a member arrived at the barrier, run there: %d of 20\n", after_arrival);
    CHECK(after_arrival == 20);
    printf("tasks run at a region's end, outside it: %d\n", region_end_context());
    printf("taskloop tasks run at a region's end, outside it: %d\n", taskloop_end_context());
    printf("empty bodies run: %d\n", atomic_load(&bodies));
    return 0;
}
