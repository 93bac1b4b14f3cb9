/*  Synchronization: `barrier`, `critical` (unnamed and named), `atomic` (lock-free and the types that go through
 *  the runtime's lock), `single` (with `nowait`, also 20 of them run ahead of a member that waits for a lock, and
 *  `copyprivate`), `master`, `masked`, `sections`, and the lock API (simple and nested). */
#include "gomp_test.h"

enum { max_threads_k = 64, rounds_k = 200 };

typedef struct {
    int values[5];
    double weight;
} payload_t;

static int phase[max_threads_k]; // each thread's barrier round

/**  A member may run any number of `single nowait`s ahead of one that lags: thread 0 holds a lock across 20 of them
 *   while thread 1 waits for it before its own (a runtime that makes thread 0 wait for thread 1 stops here, naming
 *   the wait). Returns how many of the 20 bodies ran. */
static int singles_ahead(void) {
    omp_lock_t lock;
    omp_init_lock(&lock);
    int won = 0, held = 0;
#pragma omp parallel num_threads(2) shared(lock, won, held)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_lock(&lock);
#pragma omp atomic write
            held = 1;
        } else {
            double const deadline = omp_get_wtime() + 120.0;
            for (int seen = 0; !seen;) {
#pragma omp atomic read
                seen = held;
            }
            while (!omp_test_lock(&lock)) {
                if (omp_get_wtime() > deadline) {
                    fprintf(stderr, "singles_ahead: thread 0 did not get through 20 single nowait in 120 s\n");
                    abort();
                }
            }
            omp_unset_lock(&lock);
        }
        for (int i = 0; i < 20; ++i) {
#pragma omp single nowait
            {
#pragma omp atomic
                won += 1;
            }
        }
        if (omp_get_thread_num() == 0) omp_unset_lock(&lock);
    }
    omp_destroy_lock(&lock);
    return won;
}

int main(void) {
    report_server();
    // Barrier: no thread sees the next phase before every thread finished the previous one.
    int barrier_errors = 0, team = 0;
#pragma omp parallel reduction(+ : barrier_errors)
    {
        int const self = omp_get_thread_num(), size = omp_get_num_threads();
#pragma omp single
        team = size;
        for (int round = 1; round <= rounds_k; ++round) {
#pragma omp atomic write
            phase[self] = round;
#pragma omp barrier
            for (int other = 0; other < size; ++other) {
                int seen;
#pragma omp atomic read
                seen = phase[other];
                barrier_errors += seen != round;
            }
#pragma omp barrier
        }
    }
    printf("barrier: team %d, %d rounds, %d errors\n", team, rounds_k, barrier_errors);

    // critical: plain increments, so a missing exclusion shows as a lost update.
    long unnamed = 0, named_a = 0, named_b = 0;
#pragma omp parallel for schedule(dynamic, 16)
    for (int i = 0; i < 20000; ++i) {
#pragma omp critical
        unnamed += 1;
#pragma omp critical(a)
        named_a += 2;
#pragma omp critical(b)
        named_b += 3;
    }
    printf("critical: %ld %ld %ld\n", unnamed, named_a, named_b);

    // atomic: lock-free types, and long double / __int128, which GCC sends through GOMP_atomic_start.
    long counter = 0, captured_max = 0;
    double real = 0;
    long double wide = 0;
    __int128 huge = 0;
#pragma omp parallel for schedule(static, 7) reduction(max : captured_max)
    for (int i = 0; i < 20000; ++i) {
        long old;
#pragma omp atomic capture
        old = counter++;
        captured_max = old > captured_max ? old : captured_max;
#pragma omp atomic
        real += 0.5;
#pragma omp atomic
        wide += 0.25L;
#pragma omp atomic
        huge += (__int128)1 << 70;
    }
    printf("atomic: counter %ld max capture %ld real %.1f wide %.2Lf huge>>70 %ld\n", counter, captured_max, real, wide,
           (long)(huge >> 70));

    // single: once per construct, whichever thread; copyprivate broadcasts the winner's values.
    int singles = 0, nowait_singles = 0, copy_errors = 0;
#pragma omp parallel reduction(+ : copy_errors)
    {
        for (int round = 0; round < rounds_k; ++round) {
#pragma omp single
            singles++;
#pragma omp single nowait
            {
#pragma omp atomic
                nowait_singles++;
            }
            payload_t payload;
            int scalar;
#pragma omp single copyprivate(payload, scalar)
            {
                for (int v = 0; v < 5; ++v) payload.values[v] = round * 10 + v;
                payload.weight = round * 0.5;
                scalar = -round;
            }
            for (int v = 0; v < 5; ++v) copy_errors += payload.values[v] != round * 10 + v;
            copy_errors += payload.weight != round * 0.5 || scalar != -round;
        }
    }
    printf("single: %d, nowait %d, copyprivate errors %d\n", singles, nowait_singles, copy_errors);

    // master and masked: only the filtered thread runs the block.
    int master_thread = -1, masked_runs = 0, masked_thread = -1, masked_filter = 1;
#pragma omp parallel num_threads(3)
    {
#pragma omp master
        master_thread = omp_get_thread_num();
#pragma omp masked filter(masked_filter)
        {
            masked_runs++;
            masked_thread = omp_get_thread_num();
        }
    }
    printf("master ran on %d, masked ran %d time(s) on %d\n", master_thread, masked_runs, masked_thread);

    // sections: each once, more sections than threads, and the combined form.
    int section_hits[6] = {0};
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            section_hits[0]++;
#pragma omp section
    section_hits[1]++;
#pragma omp section
    section_hits[2]++;
#pragma omp section
    section_hits[3]++;
}
}
#pragma omp parallel sections num_threads(2)
{
#pragma omp section
    section_hits[4]++;
#pragma omp section
    section_hits[5]++;
}
printf("sections: %d %d %d %d %d %d\n", section_hits[0], section_hits[1], section_hits[2], section_hits[3],
       section_hits[4], section_hits[5]);

// Locks: a simple lock guards plain increments; a nested lock is re-entered by its owner.
omp_lock_t lock;
omp_nest_lock_t nest;
omp_init_lock(&lock);
omp_init_nest_lock(&nest);
long guarded = 0, nested_depth_sum = 0, tests_won = 0;
#pragma omp parallel for schedule(dynamic, 8) reduction(+ : tests_won)
for (int i = 0; i < 10000; ++i) {
    omp_set_lock(&lock);
    guarded += 1;
    omp_unset_lock(&lock);
    omp_set_nest_lock(&nest);
    int const depth = omp_test_nest_lock(&nest); // the owner re-enters: depth 2
    nested_depth_sum += depth;
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
    if (omp_test_lock(&lock)) {
        tests_won += 1;
        omp_unset_lock(&lock);
    }
}
CHECK(tests_won >= 1);
CHECK(omp_test_lock(&lock) == 1);
CHECK(omp_test_lock(&lock) == 0); // a simple lock is not re-entrant
omp_unset_lock(&lock);
CHECK(omp_test_nest_lock(&nest) == 1 && omp_test_nest_lock(&nest) == 2 && omp_test_nest_lock(&nest) == 3);
omp_unset_nest_lock(&nest), omp_unset_nest_lock(&nest), omp_unset_nest_lock(&nest);
int held_elsewhere = -1;
omp_set_nest_lock(&nest);
#pragma omp parallel num_threads(2)
{
    if (omp_get_thread_num() == 1) held_elsewhere = omp_test_nest_lock(&nest); // another task owns it
}
omp_unset_nest_lock(&nest);
// Handoffs to waiters: thread 0 holds the lock until every other thread is about to ask for it, then works a
// while before it lets go, so the others are asleep in the lock (at once with OMP_WAIT_POLICY=passive) when an
// unlock must wake them. A lost wake-up hangs here.
long handoffs = 0;
#pragma omp parallel num_threads(3) reduction(+ : handoffs)
for (int round = 0; round < 10; ++round) {
    static int asking = 0;
    if (omp_get_thread_num() == 0) omp_set_lock(&lock);
#pragma omp barrier
    if (omp_get_thread_num() != 0) {
#pragma omp atomic
        asking++;
        omp_set_lock(&lock);
        handoffs += 1;
        omp_unset_lock(&lock);
    } else {
        for (int now = 0; now != omp_get_num_threads() - 1;) {
#pragma omp atomic read
            now = asking;
        }
        for (volatile long work = 0; work < 100000; ++work) {}
        omp_unset_lock(&lock);
    }
#pragma omp barrier
#pragma omp single
    asking = 0;
}
printf("lock handoffs to waiting threads: %ld\n", handoffs);
omp_destroy_lock(&lock);
omp_destroy_nest_lock(&nest);
printf("locks: guarded %ld, nested depths %ld, test from another task %d\n", guarded, nested_depth_sum, held_elsewhere);

int const singles_run_ahead = singles_ahead();
printf("single nowait, one member 20 ahead of the other: %d of 20 bodies ran\n", singles_run_ahead);
CHECK(singles_run_ahead == 20);

// Timers: monotonic, with a positive tick.
double const before = omp_get_wtime(), tick = omp_get_wtick();
double after = before;
while (after == before) after = omp_get_wtime();
CHECK(after > before && tick > 0 && tick < 1);
printf("wtime advances, wtick positive\n");
return 0;
}
