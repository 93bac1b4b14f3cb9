/*  Cancellation with OMP_CANCELLATION=true: `cancel for` stops a search loop at its first hit (every thread leaves
 *  at its next cancellation point or chunk), `cancel sections` skips the sections not yet started, a `cancel for`
 *  whose `if` is false changes nothing, and the construct after a cancelled one runs whole (also the
 *  `schedule(static)` loops GCC runs itself, whose start the runtime never sees). `cancel taskgroup` discards the
 *  group's tasks not yet started (tasks, a `taskloop`'s tasks, a `nogroup` taskloop's in the enclosing group) and
 *  ends the cancelling task; the next taskgroup, and one nested in the cancelled one, run whole; a deferred task
 *  cancels the taskgroup it belongs to, on whichever thread it runs; a `target` region inside a cancelled taskgroup
 *  runs its tasks, one 150 taskgroups deep cancels, and tasks deferred in a `nogroup` taskloop's tasks run after it.
 *  Counts of iterations or tasks run depend on timing, so only verdicts are printed. Run with and without cancel-var.
 */
#include "gomp_test.h"

enum { span_k = 200000, hit_k = 777 };

/**  A `schedule(static)` loop with a `cancel for if (i == cancel_at)`, which GCC runs itself (no loop start reaches
 *   the runtime): the iterations run on a team of `threads`. */
static int static_count(int threads, int cancel_at) {
    int count = 0;
#pragma omp parallel num_threads(threads) reduction(+ : count)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < 100; ++i) {
#pragma omp cancel for if (i == cancel_at)
            count += 1;
        }
    }
    return count;
}

/**  Such loops whose cancellation never comes run every iteration: as the first construct of the process's first
 *   region, in regions after one that cancelled, and in one region after a cancelled static loop and a cancelled
 *   dynamic one; on a team of one and of three. */
static void static_loops(void) {
    volatile int never_volatile = -1;
    int const never = never_volatile;
    for (int threads = 3; threads >= 1; threads -= 2) {
        int const first = static_count(threads, never);
        int const cancelled = static_count(threads, 0);
        int const second = static_count(threads, never), third = static_count(threads, never);
        int before = 0, between = 0, after = 0;
#pragma omp parallel num_threads(threads) reduction(+ : before, between, after)
        {
#pragma omp for schedule(static)
            for (int i = 0; i < 100; ++i) {
#pragma omp cancel for if (i == 0)
                before += 1;
            }
#pragma omp for schedule(static)
            for (int i = 0; i < 100; ++i) {
#pragma omp cancel for if (i == never)
                between += 1;
            }
#pragma omp for schedule(dynamic)
            for (int i = 0; i < 100; ++i) {
                if (i == 0) {
#pragma omp cancel for
                }
#pragma omp cancellation point for
                between += 0;
            }
#pragma omp for schedule(static)
            for (int i = 0; i < 100; ++i) {
#pragma omp cancel for if (i == never)
                after += 1;
            }
        }
        printf("static loops that could be cancelled, team of %d: first %d, after a cancelled region %d and %d, "
               "in a region after cancelled loops %d and %d; the cancelled ones ran %s\n",
               threads, first, second, third, between, after, cancelled <= 100 && before <= 100 ? "some" : "more");
        CHECK(first == 100 && second == 100 && third == 100 && between == 100 && after == 100);
    }
}

static void search(int schedule_dynamic) {
    long ran = 0, after = 0;
    int found = -1;
#pragma omp parallel num_threads(3) reduction(+ : ran)
    {
        if (schedule_dynamic) {
#pragma omp for schedule(dynamic, 16)
            for (int i = 0; i < span_k; ++i) {
                ran += 1;
                if (i == hit_k) {
#pragma omp atomic write
                    found = i;
#pragma omp cancel for
                }
#pragma omp cancellation point for
            }
        } else {
#pragma omp for schedule(static)
            for (int i = 0; i < span_k; ++i) {
                ran += 1;
                if (i == hit_k) {
#pragma omp atomic write
                    found = i;
#pragma omp cancel for
                }
#pragma omp cancellation point for
            }
        }
        // The next construct runs every iteration, cancelled or not.
#pragma omp for schedule(dynamic, 7) reduction(+ : after)
        for (int i = 0; i < 1000; ++i) after += 1;
    }
    int const cancelling = omp_get_cancellation();
    printf("%s search: found %d, stopped early: %s, next loop ran %ld of 1000\n",
           schedule_dynamic ? "dynamic" : "static", found,
           ran < span_k ? "yes" : (cancelling ? "NO" : "no (cancellation off)"), after);
    CHECK(found == hit_k && after == 1000);
    CHECK(cancelling ? ran < span_k : ran == span_k);
}

static void sections(void) {
    int ran[4] = {0};
#pragma omp parallel num_threads(2)
#pragma omp sections
    {
#pragma omp section
        {
            ran[0] = 1;
#pragma omp cancel sections
        }
#pragma omp section
        ran[1] = 1;
#pragma omp section
        ran[2] = 1;
#pragma omp section
        ran[3] = 1;
    }
    // Whether the others started before the cancel depends on timing: only checked without cancellation.
    int const total = ran[0] + ran[1] + ran[2] + ran[3];
    printf("sections: the cancelling one ran: %d\n", ran[0]);
    CHECK(ran[0] == 1 && (omp_get_cancellation() || total == 4));
}

static void cancel_if_false(void) {
    long ran = 0;
#pragma omp parallel num_threads(2) reduction(+ : ran)
#pragma omp for schedule(dynamic, 5)
    for (int i = 0; i < 1000; ++i) {
        ran += 1;
#pragma omp cancel for if (i < 0)
    }
    printf("cancel for if(false): %ld iterations\n", ran);
    CHECK(ran == 1000);
}

enum { tasks_k = 100, cancelling_k = 10 };

/* The task numbered `cancelling_k` cancels its taskgroup before it counts itself: with cancellation, at most
 * tasks_k - 1 tasks count (libgomp runs some of the others before the cancel, the drop-in none after it). */
static void taskgroup_cancel(void) {
    int ran = 0, later = 0, point = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp taskgroup
        for (int i = 0; i < tasks_k; ++i) {
#pragma omp task firstprivate(i) shared(ran)
            {
                if (i == cancelling_k) {
#pragma omp cancel taskgroup
                }
#pragma omp atomic
                ran += 1;
            }
        }
#pragma omp taskgroup
        for (int i = 0; i < tasks_k; ++i) {
#pragma omp task shared(later, point)
            {
#pragma omp cancellation point taskgroup
#pragma omp atomic
                later += 1;
            }
        }
    }
    int const cancelling = omp_get_cancellation();
    printf("cancel taskgroup: stopped early: %s, next taskgroup ran %d of %d\n",
           ran < tasks_k ? "yes" : (cancelling ? "NO" : "no (cancellation off)"), later, tasks_k);
    CHECK(later == tasks_k && (cancelling ? ran < tasks_k : ran == tasks_k));
    (void)point;
}

/* `cancel taskgroup` in a taskloop's task cancels the taskloop's own taskgroup; with `nogroup`, the enclosing one. */
static void taskloop_cancel(int nogroup) {
    int ran = 0, after = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        if (nogroup) {
#pragma omp taskgroup
            {
#pragma omp taskloop grainsize(1) nogroup shared(ran)
                for (int i = 0; i < tasks_k; ++i) {
                    if (i == cancelling_k) {
#pragma omp cancel taskgroup
                    }
#pragma omp atomic
                    ran += 1;
                }
            }
        } else {
#pragma omp taskloop grainsize(1) shared(ran)
            for (int i = 0; i < tasks_k; ++i) {
                if (i == cancelling_k) {
#pragma omp cancel taskgroup
                }
#pragma omp atomic
                ran += 1;
            }
        }
#pragma omp taskloop grainsize(1) shared(after)
        for (int i = 0; i < tasks_k; ++i) {
#pragma omp atomic
            after += 1;
        }
    }
    int const cancelling = omp_get_cancellation();
    printf("cancel taskgroup in a %staskloop: stopped early: %s, next taskloop ran %d of %d\n",
           nogroup ? "nogroup " : "", ran < tasks_k ? "yes" : (cancelling ? "NO" : "no (cancellation off)"), after,
           tasks_k);
    CHECK(after == tasks_k && (cancelling ? ran < tasks_k : ran == tasks_k));
}

/* A region nested in a cancelled taskgroup's encountering task starts tasks that are not the group's: they run. */
static void taskgroup_nested_region(void) {
    int discarded = 0, nested = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
        }
#pragma omp task shared(discarded)
        {
#pragma omp atomic
            discarded += 1;
        }
#pragma omp parallel num_threads(2) shared(nested)
        for (int i = 0; i < 10; ++i) {
#pragma omp task shared(nested)
            {
#pragma omp atomic
                nested += 1;
            }
        }
    }
    printf("cancelled taskgroup, nested region's tasks: %d\n", nested);
    CHECK(nested >= 10 && (!omp_get_cancellation() || discarded <= 1));
}

/* A taskgroup nested in a cancelled one starts uncancelled: its tasks run and their cancellation points pass, as in
 * libgomp (which checks a task's innermost taskgroup only); a task created in the cancelled one afterwards is
 * discarded. */
static void taskgroup_nested_in_cancelled(void) {
    int inner_ran = 0, inner_passed = 0, outer_after = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
        }
#pragma omp taskwait
#pragma omp taskgroup
        {
#pragma omp task shared(inner_ran, inner_passed)
            {
                inner_ran = 1;
#pragma omp cancellation point taskgroup
                inner_passed = 1;
            }
        }
#pragma omp task shared(outer_after)
        outer_after = 1;
    }
    int const cancelling = omp_get_cancellation();
    printf("taskgroup nested in a cancelled one: its task ran %d, passed its cancellation point %d; a task of the "
           "cancelled one after it ran %d\n",
           inner_ran, inner_passed, outer_after);
    CHECK(inner_ran == 1 && inner_passed == 1 && outer_after == !cancelling);
}

/* A task deferred behind a detached one (its event fulfilled at once) cancels the taskgroup it belongs to, wherever
 * it runs: on another thread at a barrier, or on the creating thread at a `taskwait` inside a nested taskgroup. The
 * code after its `cancel` does not run, the nested taskgroup's task runs, and a task of the cancelled group created
 * after it is discarded. */
static void deferred_task_cancels_its_group(void) {
    static int x;
    int d_ran = 0, after_cancel = 0, inner_ran = 0, outer_after = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup
    {
        omp_event_handle_t event;
#pragma omp task detach(event) depend(out : x)
        x = 1;
#pragma omp task depend(in : x) shared(d_ran, after_cancel)
        {
            d_ran = 1;
#pragma omp cancel taskgroup
            after_cancel = 1;
        }
        omp_fulfill_event(event);
#pragma omp taskgroup
        {
#pragma omp taskwait
#pragma omp task shared(inner_ran)
            inner_ran = 1;
        }
#pragma omp task shared(outer_after)
        outer_after = 1;
    }
    int const cancelling = omp_get_cancellation();
    printf("a deferred task cancels its taskgroup: it ran %d, past its cancel %d; nested taskgroup's task %d; a task "
           "of its group after it %d\n",
           d_ran, after_cancel, inner_ran, outer_after);
    CHECK(d_ran == 1 && inner_ran == 1 && after_cancel == !cancelling && outer_after == !cancelling);
}

/* A `target` region run inside a cancelled taskgroup is the device's initial task, which no taskgroup encloses: the
 * tasks created in it, directly and in a region inside it, all run. */
static void target_in_cancelled_taskgroup(void) {
    int created = 0, ran = 0;
#pragma omp parallel num_threads(2) shared(created, ran)
#pragma omp single
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
        }
#pragma omp taskwait
#pragma omp target map(tofrom : created, ran)
        {
#pragma omp task shared(ran)
            {
#pragma omp atomic
                ran += 1;
            }
#pragma omp atomic
            created += 1;
#pragma omp parallel num_threads(2) shared(created, ran)
            {
#pragma omp task shared(ran)
                {
#pragma omp atomic
                    ran += 1;
                }
#pragma omp atomic
                created += 1;
            }
        }
    }
    printf("tasks of a target region inside a cancelled taskgroup: %d of %d ran\n", ran, created);
    CHECK(created == 3 && ran == 3);
}

/* `cancel taskgroup` 150 taskgroups deep (one per level of a recursion of tasks): the innermost group's later task
 * is discarded; every enclosing level's task, created after the inner levels returned, runs. */
static int deep_discarded, deep_enclosing;
static void deep_level(int depth) {
#pragma omp taskgroup
    {
        if (depth > 0) {
#pragma omp task
            deep_level(depth - 1);
#pragma omp taskwait
#pragma omp task
            {
#pragma omp atomic
                deep_enclosing += 1;
            }
        } else {
#pragma omp task
            {
#pragma omp cancel taskgroup
            }
#pragma omp taskwait
#pragma omp task
            {
#pragma omp atomic
                deep_discarded += 1;
            }
        }
    }
}
static void deep_taskgroup_cancel(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
    deep_level(150);
    int const cancelling = omp_get_cancellation();
    printf("cancel taskgroup 150 taskgroups deep: its later task ran %d; enclosing levels' tasks ran %d of 150\n",
           deep_discarded, deep_enclosing);
    CHECK(deep_discarded == !cancelling && deep_enclosing == 150);
}

/* A `nogroup` taskloop outside any taskgroup whose tasks each create 8 tasks under a frame of 300 KiB, so that the
 * drop-in defers those (its stack budget is 256 KiB): they belong to no taskgroup and run after the loop has
 * returned, at the region's end, after the stack the loop used has been written over. All of them run. */
static int nogroup_children;
__attribute__((noinline)) static void overwrite_stack(void) {
    volatile long junk[4096];
    for (int k = 0; k < 4096; ++k) junk[k] = -1;
    (void)junk[4095];
}
__attribute__((noinline)) static void nogroup_loop(void) {
#pragma omp taskloop nogroup num_tasks(4)
    for (int i = 0; i < 4; ++i) {
        volatile char frame[300 * 1024];
        memset((char *)frame, 1, sizeof(frame));
        for (int j = 0; j < 8; ++j) {
#pragma omp task
            {
#pragma omp atomic
                nogroup_children += 1;
            }
        }
        (void)frame[i];
    }
}
static void deferred_tasks_of_a_nogroup_loop(void) {
#pragma omp parallel num_threads(2)
    {
        nogroup_loop();
        overwrite_stack();
    }
    printf("tasks deferred in a nogroup taskloop's tasks: %d of 64 ran\n", nogroup_children);
    CHECK(nogroup_children == 64);
}

int main(void) {
    report_server();
    static_loops(); // first: the process's first construct is among them
    taskgroup_nested_region();
    taskgroup_cancel();
    taskgroup_nested_in_cancelled();
    deferred_task_cancels_its_group();
    target_in_cancelled_taskgroup();
    deep_taskgroup_cancel();
    deferred_tasks_of_a_nogroup_loop();
    taskloop_cancel(0);
    taskloop_cancel(1);
    search(1);
    search(0);
    sections();
    cancel_if_false();
    return 0;
}
