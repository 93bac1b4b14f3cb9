/*  Cancelling a parallel region (`cancel parallel`, `cancellation point parallel`), run with OMP_CANCELLATION=true
 *  at 2, 3 and 5 threads (more threads than the machine's cores: spinning members must still finish), and without
 *  it (every region then runs to its end). With cancellation:
 *  - a member that cancels while the others wait in a barrier releases them, and no member runs the code after it;
 *  - `cancel for` and `cancel sections` in a region that also contains `cancel parallel` (whose loops and sections
 *    end in GOMP_loop_end_cancel and GOMP_sections_end_cancel) end the construct only: every member runs the rest
 *    of the region;
 *  - a member cancels at the region's start while the others run worksharing constructs it never reaches (more
 *    `nowait` loops and `single`s than the team has slots; with the argument `drop_in_only`, also a `single
 *    copyprivate` and an `ordered` loop, 50 times): nothing hangs and no member passes the barrier after them;
 *  - with `drop_in_only`, a member cancels while the others run a loop with a `reduction(task, ...)`, within the
 *    team's slots and past them: the copies, which the canceller never combines, are freed (ASan's leak check);
 *  - every member cancels at once;
 *  - 300 regions in a row, each cancelled by a different member at a cancellation point in the middle of the work,
 *    each followed by a region of loops, `single`s, `sections`, a `taskloop` and barriers whose results are checked;
 *  - a nested region cancels itself without cancelling the enclosing one, and an enclosing region cancelled while a
 *    member runs a nested region lets that region finish.
 *  Which iterations run before a cancellation takes effect depends on timing: only verdicts are printed. */
#include "gomp_test.h"

static int cancelling(void) {
    return omp_get_cancellation();
}

/* Spins until `*counter` reaches `target` (an atomic read per turn): the members it waits for are running. */
static void await_count(int *counter, int target) {
    for (;;) {
        int seen;
#pragma omp atomic read
        seen = *counter;
        if (seen >= target) return;
    }
}

/* The last thread cancels once every other member is about to wait in the barrier (or already does). */
static void barrier_release(void) {
    int before = 0, after = 0, team = 0;
#pragma omp parallel shared(before, after, team)
    {
        int const me = omp_get_thread_num(), size = omp_get_num_threads();
#pragma omp single nowait
        team = size;
        if (me == size - 1) {
            await_count(&before, size - 1);
#pragma omp cancel parallel
        } else {
#pragma omp atomic
            before += 1;
        }
#pragma omp barrier
#pragma omp atomic
        after += 1;
    }
    printf("cancel while %d members wait in a barrier: %s\n", team - 1,
           after == 0 ? "none passed it" : (after == team ? "all passed it" : "SOME passed it"));
    CHECK(cancelling() ? after == 0 : after == team);
}

enum { span_k = 100000, hit_k = 4321 };

/* `cancel for` ends the loop and `cancel sections` the sections; the region, which could be cancelled, goes on. */
static void cancel_for_in_cancellable_region(void) {
    long ran = 0, rest = 0;
    int found = -1, team = 0, first_section = 0;
#pragma omp parallel reduction(+ : ran, rest) shared(found, team, first_section)
    {
#pragma omp sections
        {
#pragma omp section
            {
                first_section = 1;
#pragma omp cancel sections
            }
#pragma omp section
            rest += 0;
        }
#pragma omp single
        team = omp_get_num_threads();
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < span_k; ++i) {
            ran += 1;
            if (i == hit_k) {
#pragma omp atomic write
                found = i;
#pragma omp cancel for
            }
#pragma omp cancellation point for
        }
        rest += 1;
#pragma omp cancel parallel if (found < 0)
        rest += 1;
    }
    printf("cancel for, sections in a cancellable region: found %d, rest of the region ran on %ld of %d members\n",
           found, rest / 2, team);
    CHECK(found == hit_k && rest == 2L * team && first_section == 1);
    CHECK(cancelling() ? ran < span_k : ran == span_k);
}

/* The master cancels once the others have started (so they run constructs it never reaches, and wait in them for
 * slots it never frees), then they meet at a barrier. With `waits`, also constructs in which a member waits for
 * another's part: an `ordered` loop and a doacross loop first (for the master's chunks), a `single copyprivate`
 * last. libgomp 12.2 hangs in the first and last (measured: 3 threads, 20 s timeout), so these run only under the
 * drop-in (`drop_in_only`). */
static void skipped_constructs(int waits) {
    long loops = 0;
    int singles = 0, passed = 0, copied = 0, started = 0;
#pragma omp parallel shared(loops, singles, passed, copied, started)
    {
        int const me = omp_get_thread_num();
        if (me == 0) {
            await_count(&started, omp_get_num_threads() - 1);
#pragma omp cancel parallel
        } else {
#pragma omp atomic
            started += 1;
        }
        if (waits) {
#pragma omp for ordered schedule(static, 1) nowait
            for (int i = 0; i < 20; ++i) {
#pragma omp ordered
                {
#pragma omp atomic
                    loops += 1;
                }
            }
#pragma omp for ordered(1) schedule(static, 1) nowait
            for (int i = 0; i < 20; ++i) {
#pragma omp ordered depend(sink : i - 1)
#pragma omp atomic
                loops += 1;
#pragma omp ordered depend(source)
            }
        }
        for (int round = 0; round < 12; ++round) {
#pragma omp for schedule(monotonic : dynamic, 3) nowait reduction(+ : loops)
            for (int i = 0; i < 30; ++i) loops += 1;
#pragma omp single nowait
            {
#pragma omp atomic
                singles += 1;
            }
        }
        if (waits) {
            int value = me;
#pragma omp single copyprivate(value)
            value = 100;
#pragma omp atomic
            copied += value == 100;
        }
#pragma omp barrier
#pragma omp atomic
        passed += 1;
    }
    printf("members skipping constructs%s: %s passed the barrier\n", waits ? " that wait for it" : "",
           passed == 0 ? "none" : "some");
    CHECK(cancelling() ? passed == 0 : passed == omp_get_max_threads());
    (void)loops, (void)singles, (void)copied;
}

/* The master (or with `last_cancels`, the last member) cancels once the others have started; they run `skipped`
 * `nowait` loops it never reaches, then a loop with a `reduction(task, ...)` whose tasks add to the copies. Its
 * copies are made for the team while a slot is free (`skipped` 0: the master, which combines and frees them, never
 * comes, or comes once the region is cancelled), and are a member's own past the slots the canceller holds
 * (`skipped` 20, more than the team has slots). ASan's leak check sees that someone frees each. */
static void cancelled_task_reductions(int skipped, int last_cancels) {
    long tasked = 0, ran = 0;
    int started = 0, finished = 0;
#pragma omp parallel shared(tasked, ran, started, finished)
    {
        if (omp_get_thread_num() == (last_cancels ? omp_get_num_threads() - 1 : 0)) {
            await_count(&started, omp_get_num_threads() - 1);
#pragma omp cancel parallel
        } else {
#pragma omp atomic
            started += 1;
        }
        for (int loop = 0; loop < skipped; ++loop) {
#pragma omp for schedule(monotonic : dynamic, 3) nowait
            for (int i = 0; i < 6; ++i) {
#pragma omp atomic
                ran += 1;
            }
        }
#pragma omp for schedule(static) reduction(task, + : tasked)
        for (int i = 0; i < 10; ++i) {
#pragma omp task in_reduction(+ : tasked)
            tasked += 1;
        }
#pragma omp atomic
        finished += 1;
    }
    printf("task reductions after %d skipped loops in a region the %s member cancelled: %s finished\n", skipped,
           last_cancels ? "last" : "first", finished == 0 ? "none" : "some");
    CHECK(cancelling() ? finished == 0 : finished == omp_get_max_threads() && tasked == 10);
    (void)ran;
}

/* Every member cancels. */
static void all_cancel(void) {
    int after = 0;
#pragma omp parallel shared(after)
    {
#pragma omp cancel parallel
#pragma omp atomic
        after += 1;
    }
    printf("every member cancels: %s ran on\n", after == 0 ? "none" : "all");
    CHECK(cancelling() ? after == 0 : after == omp_get_max_threads());
}

enum { regions_k = 300, items_k = 400 };

/* A region whose results are all known: a dynamic and a guided loop, a static one, `single`s, `sections`,
 * `single copyprivate`, barriers, a `taskloop` (after which the drop-in ends the team's regions, the cancelled ones
 * too, in a barrier). */
static void checked_region(int round) {
    long dynamic_sum = 0, guided_sum = 0, static_sum = 0, task_sum = 0;
    int singles = 0, sections = 0, barriers = 0, copied = 0, size = 0;
#pragma omp parallel reduction(+ : dynamic_sum, guided_sum, static_sum, copied) shared(singles, sections, barriers, size)
    {
#pragma omp for schedule(dynamic, 3) nowait
        for (int i = 0; i < items_k; ++i) dynamic_sum += i;
#pragma omp for schedule(guided) nowait
        for (int i = 0; i < items_k; ++i) guided_sum += i + round;
#pragma omp for schedule(static)
        for (int i = 0; i < items_k; ++i) static_sum += 2 * i;
        for (int k = 0; k < 10; ++k) {
#pragma omp single
            {
                singles += 1;
                size = omp_get_num_threads();
            }
        }
#pragma omp sections
        {
#pragma omp section
            {
#pragma omp atomic
                sections += 1;
            }
#pragma omp section
            {
#pragma omp atomic
                sections += 10;
            }
        }
#pragma omp single
#pragma omp taskloop grainsize(16) shared(task_sum)
        for (int i = 0; i < items_k; ++i) {
#pragma omp atomic
            task_sum += i;
        }
#pragma omp atomic
        barriers += 1;
#pragma omp barrier
        int value = 0;
#pragma omp single copyprivate(value)
        value = barriers;
        copied += value == size;
    }
    long const sum = (long)items_k * (items_k - 1) / 2;
    CHECK(dynamic_sum == sum && guided_sum == sum + (long)items_k * round && static_sum == 2 * sum && task_sum == sum);
    CHECK(singles == 10 && sections == 11 && barriers == size && copied == size);
}

/* Each region is cancelled by member `round % size` once the team has taken `items_k / 4` items; the others
 * notice at a cancellation point per item. Then a region whose results are checked. */
static void many_regions(void) {
    int cancelled_early = 0;
    for (int round = 0; round < regions_k; ++round) {
        int taken = 0;
#pragma omp parallel shared(taken)
        {
            int const me = omp_get_thread_num(), canceller = round % omp_get_num_threads();
            for (;;) {
                int item;
#pragma omp atomic capture
                item = taken++;
                if (item >= items_k) break;
#pragma omp cancel parallel if (me == canceller && item >= items_k / 4)
            }
        }
        cancelled_early += taken < items_k + omp_get_max_threads();
        checked_region(round);
    }
    printf("%d regions: some stopped early: %s; every region after them computed its results\n", regions_k,
           cancelled_early > 0 ? "yes" : "no");
    /* Without cancellation every member takes items until they run out: the count passes items_k once per member. */
    CHECK(cancelling() ? cancelled_early > 0 : cancelled_early == 0);
}

/* A nested region cancels itself; the enclosing region goes on. Then the enclosing region is cancelled while
 * member 1 runs a nested region, which finishes. */
static void nested(void) {
    int const saved = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    int inner_after = 0, outer_after = 0, inner_ran = 0, nested_ran = 0;
#pragma omp parallel num_threads(2) shared(inner_after, outer_after)
    {
#pragma omp parallel num_threads(2) shared(inner_after)
        {
#pragma omp cancel parallel if (omp_get_thread_num() == 0)
#pragma omp barrier
#pragma omp atomic
            inner_after += 1;
        }
#pragma omp barrier
#pragma omp atomic
        outer_after += 1;
    }
    int started = 0, outer_passed = 0;
#pragma omp parallel num_threads(2) shared(inner_ran, nested_ran, started, outer_passed)
    {
        if (omp_get_thread_num() == 1) {
#pragma omp parallel num_threads(2) shared(inner_ran, nested_ran, started)
            {
#pragma omp atomic
                started += 1;
                await_count(&started, 2);
#pragma omp for schedule(dynamic, 1)
                for (int i = 0; i < 100; ++i) {
#pragma omp atomic
                    inner_ran += 1;
                }
#pragma omp atomic
                nested_ran += 1;
            }
        } else {
            await_count(&started, 1);
#pragma omp cancel parallel
        }
#pragma omp barrier
#pragma omp atomic
        outer_passed += 1;
    }
    omp_set_max_active_levels(saved);
    printf("nested: inner region after its cancel: %d, outer after the inner's cancel: %d; outer cancelled during a "
           "nested region: nested ran %d of 100 items on %d members, %d passed the outer barrier\n",
           inner_after, outer_after, inner_ran, nested_ran, outer_passed);
    CHECK(outer_after == 2 && inner_ran == 100 && nested_ran == 2);
    CHECK(cancelling() ? inner_after == 0 && outer_passed == 0 : inner_after == 4 && outer_passed == 2);
}

int main(int argc, char **argv) {
    report_server();
    if (argc > 1 && strcmp(argv[1], "drop_in_only") == 0) {
        for (int round = 0; round < 50; ++round) skipped_constructs(1);
        for (int round = 0; round < 20; ++round) cancelled_task_reductions(round % 2 ? 20 : 0, round % 4 >= 2);
        many_regions();
        return 0;
    }
    barrier_release();
    cancel_for_in_cancellable_region();
    skipped_constructs(0);
    all_cancel();
    many_regions();
    nested();
    return 0;
}
