/*  Worksharing loops: every schedule (static, static with a chunk, dynamic, guided, runtime, auto, and the
 *  monotonic and nonmonotonic forms), signed, unsigned and `unsigned long long` iteration spaces counting up and
 *  down, `collapse`, `nowait`, `ordered`, doacross (`ordered(n)` with `depend(sink)`; with team-shared memory, through
 *  the entry point), and conditional `lastprivate`. Each loop checks that every iteration ran exactly once; static
 *  schedules print which thread ran what, and `ordered` regions check their order. */
#include "gomp_test.h"

#include <stdbool.h>
#include <stdint.h>

// The OpenMP 5.0 doacross start, called directly: GCC 12 never passes it `mem` (team-shared scratch memory).
bool GOMP_loop_doacross_start(unsigned ncounts, long *counts, long sched, long chunk, long *istart, long *iend,
                              uintptr_t *reductions, void **mem);
bool GOMP_loop_dynamic_next(long *istart, long *iend);
void GOMP_doacross_post(long *counts);
void GOMP_doacross_wait(long first, ...);
void GOMP_loop_end(void);

enum { n_k = 1000, max_threads_k = 64 };

static int hits[n_k];
static int owner[n_k];
static int team;

static void clear(void) {
    memset(hits, 0, sizeof(hits));
    for (int i = 0; i < n_k; ++i) owner[i] = -1;
}

static void expect_each_once(char const *name, int count) {
    for (int i = 0; i < count; ++i)
        if (hits[i] != 1) {
            fprintf(stderr, "%s: iteration %d ran %d times\n", name, i, hits[i]);
            abort();
        }
    for (int i = count; i < n_k; ++i) CHECK(hits[i] == 0);
}

/**  Prints who ran which iteration, compressed: `thread x count` runs. */
static void print_owners(char const *name, int count) {
    printf("%s:", name);
    for (int i = 0; i < count;) {
        int j = i;
        while (j < count && owner[j] == owner[i]) ++j;
        printf(" %dx%d", owner[i], j - i);
        i = j;
    }
    printf("\n");
}

#define RECORD(index)                                                                                                  \
    do {                                                                                                               \
        _Pragma("omp atomic") hits[index]++;                                                                           \
        owner[index] = omp_get_thread_num();                                                                           \
    } while (0)

/**  For monotonic schedules: each thread sees its iterations in increasing order. */
static int last_seen[max_threads_k];
static int monotonic_ok;
static void note_monotonic(int i) {
    int const thread = omp_get_thread_num();
    if (i < last_seen[thread]) monotonic_ok = 0;
    last_seen[thread] = i;
}
static void reset_monotonic(void) {
    for (int t = 0; t < max_threads_k; ++t) last_seen[t] = -1;
    monotonic_ok = 1;
}

static void static_schedules(void) {
    clear();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < 997; ++i) RECORD(i);
    expect_each_once("static", 997), print_owners("static", 997);
    clear();
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < 23; ++i) RECORD(i);
    expect_each_once("static,1", 23), print_owners("static,1", 23);
    clear();
#pragma omp parallel for schedule(static, 7)
    for (int i = 0; i < 100; ++i) RECORD(i);
    expect_each_once("static,7", 100), print_owners("static,7", 100);
    clear();
    // Through the runtime: `schedule(runtime)` with a static run-sched-var.
    omp_set_schedule(omp_sched_static, 0);
#pragma omp parallel for schedule(runtime)
    for (int i = 0; i < 101; ++i) RECORD(i);
    expect_each_once("runtime static", 101), print_owners("runtime static", 101);
    clear();
    omp_set_schedule(omp_sched_static, 4);
#pragma omp parallel for schedule(runtime)
    for (int i = 0; i < 101; ++i) RECORD(i);
    expect_each_once("runtime static,4", 101), print_owners("runtime static,4", 101);
    clear();
    // An inner `for` with the static schedule in a region, then `nowait` and a barrier.
#pragma omp parallel
    {
#pragma omp for schedule(static) nowait
        for (int i = 0; i < 50; ++i) RECORD(i);
#pragma omp for schedule(static, 3)
        for (int i = 50; i < 150; ++i) RECORD(i);
    }
    expect_each_once("static nowait", 150), print_owners("static nowait", 150);
}

static void dynamic_schedules(void) {
    omp_sched_t const kinds[] = {omp_sched_dynamic, omp_sched_guided, omp_sched_auto,
                                 (omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic),
                                 (omp_sched_t)(omp_sched_guided | omp_sched_monotonic)};
    int const chunks[] = {1, 3, 0, 2, 5};
    for (int k = 0; k < 5; ++k) {
        clear();
        omp_set_schedule(kinds[k], chunks[k]);
#pragma omp parallel for schedule(runtime)
        for (int i = 0; i < n_k; ++i) RECORD(i);
        expect_each_once("runtime", n_k);
    }
    clear();
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < n_k; ++i) RECORD(i);
    expect_each_once("dynamic", n_k);
    clear();
#pragma omp parallel for schedule(dynamic, 7)
    for (int i = 0; i < n_k; ++i) RECORD(i);
    expect_each_once("dynamic,7", n_k);
    clear();
#pragma omp parallel for schedule(nonmonotonic : dynamic, 3)
    for (int i = 0; i < n_k; ++i) RECORD(i);
    expect_each_once("nonmonotonic:dynamic,3", n_k);
    clear();
#pragma omp parallel for schedule(guided)
    for (int i = 0; i < n_k; ++i) RECORD(i);
    expect_each_once("guided", n_k);
    clear();
#pragma omp parallel for schedule(guided, 9)
    for (int i = 0; i < n_k; ++i) RECORD(i);
    expect_each_once("guided,9", n_k);
    clear();
#pragma omp parallel for schedule(auto)
    for (int i = 0; i < n_k; ++i) RECORD(i);
    expect_each_once("auto", n_k);

    // Monotonic schedules hand each thread its chunks in increasing order.
    clear(), reset_monotonic();
#pragma omp parallel for schedule(monotonic : dynamic, 2)
    for (int i = 0; i < n_k; ++i) {
        RECORD(i);
        note_monotonic(i);
    }
    expect_each_once("monotonic:dynamic,2", n_k);
    CHECK(monotonic_ok);
    clear(), reset_monotonic();
#pragma omp parallel for schedule(monotonic : guided)
    for (int i = 0; i < n_k; ++i) {
        RECORD(i);
        note_monotonic(i);
    }
    expect_each_once("monotonic:guided", n_k);
    CHECK(monotonic_ok);
    clear(), reset_monotonic();
    omp_set_schedule((omp_sched_t)(omp_sched_dynamic | omp_sched_monotonic), 4);
#pragma omp parallel for schedule(monotonic : runtime)
    for (int i = 0; i < n_k; ++i) {
        RECORD(i);
        note_monotonic(i);
    }
    expect_each_once("monotonic:runtime", n_k);
    CHECK(monotonic_ok);

    // Several loops in one region, some `nowait`: more constructs in flight than the slot ring has.
    clear();
#pragma omp parallel
    {
        for (int round = 0; round < 20; ++round) {
#pragma omp for schedule(dynamic, 1) nowait
            for (int i = round * 50; i < round * 50 + 50; ++i) RECORD(i);
        }
#pragma omp barrier
    }
    expect_each_once("20 nowait loops", n_k);
    printf("dynamic, guided, auto and runtime schedules: every iteration once\n");
}

/**
 *  Back-to-back `nowait` stealing loops in one region, far more than the slot ring has, at team sizes 1, 2, 3 and 8,
 *  with spaces from empty to several chunks per thread. A straggler (a different thread every few loops) holds its
 *  first chunk for a while, so the others run many loops ahead of it and steal from its block: whatever the
 *  interleaving, every loop runs each of its iterations exactly once, so no late thread ever takes a chunk of a later
 *  loop (or of an earlier one).
 */
enum { steal_loops_k = 96, steal_max_k = 40 };
static int steal_hits[steal_loops_k][steal_max_k];
static int steal_size(int loop) {
    return (loop * 7) % (steal_max_k + 1); // 0, 7, 14, ..., 40, 6, ...: empty spaces and uneven blocks
}
static void straggle(int loop, int i) {
    volatile long sink = 0;
    if (i == 0 && loop % 5 == 0)
        for (long spin = 0; spin < 200000; ++spin) sink += spin;
}
static void stealing_nowait_loops(void) {
    int const teams[] = {1, 2, 3, 8};
    for (int t = 0; t < 4; ++t) {
        memset(steal_hits, 0, sizeof(steal_hits));
#pragma omp parallel num_threads(teams[t])
        {
            for (int loop = 0; loop < steal_loops_k; loop += 2) {
                int const n = steal_size(loop), m = steal_size(loop + 1);
#pragma omp for schedule(nonmonotonic : dynamic, 1) nowait
                for (int i = 0; i < n; ++i) {
                    straggle(loop, i);
#pragma omp atomic
                    steal_hits[loop][i]++;
                }
#pragma omp for schedule(nonmonotonic : dynamic, 3) nowait
                for (int i = 0; i < m; ++i) {
                    straggle(loop + 1, i);
#pragma omp atomic
                    steal_hits[loop + 1][i]++;
                }
            }
        }
        for (int loop = 0; loop < steal_loops_k; ++loop)
            for (int i = 0; i < steal_max_k; ++i)
                if (steal_hits[loop][i] != (i < steal_size(loop))) {
                    fprintf(stderr, "team %d, nowait loop %d: iteration %d ran %d times\n", teams[t], loop, i,
                            steal_hits[loop][i]);
                    abort();
                }
    }
    printf("%d back-to-back nowait stealing loops at 1, 2, 3 and 8 threads: every iteration once\n", steal_loops_k);
}

/**
 *  A member far behind never holds the others up in stealing loops: thread 1 waits inside the first loop until
 *  thread 0 has finished 24 more `nowait` loops (three times the slot ring), so thread 0 must get through them
 *  without waiting for thread 1, and thread 1 still runs every chunk of its own blocks afterwards. (Should thread
 *  0 take all of the first loop, nobody waits and the check still holds.)
 */
enum { ahead_loops_k = 25, ahead_n_k = 64 };
static int ahead_hits[ahead_loops_k][ahead_n_k];
static int ahead_done;
static void stealing_loops_never_wait(void) {
    memset(ahead_hits, 0, sizeof(ahead_hits));
    ahead_done = 0;
#pragma omp parallel num_threads(2)
    {
        int const thread = omp_get_thread_num();
        for (int loop = 0; loop < ahead_loops_k; ++loop) {
#pragma omp for schedule(nonmonotonic : dynamic, 1) nowait
            for (int i = 0; i < ahead_n_k; ++i) {
                if (loop == 0 && thread == 1)
                    for (int done = 0; !done;) {
#pragma omp atomic read
                        done = ahead_done;
                    }
#pragma omp atomic
                ahead_hits[loop][i]++;
            }
        }
        if (thread == 0) {
#pragma omp atomic write
            ahead_done = 1;
        }
    }
    for (int loop = 0; loop < ahead_loops_k; ++loop)
        for (int i = 0; i < ahead_n_k; ++i)
            if (ahead_hits[loop][i] != 1) {
                fprintf(stderr, "loop %d behind a waiting member: iteration %d ran %d times\n", loop, i,
                        ahead_hits[loop][i]);
                abort();
            }
    printf("%d nowait stealing loops run ahead of a member that waits in the first\n", ahead_loops_k - 1);
}

/**
 *  Nor in the constructs that share one cursor or turn (monotonic `dynamic`, `guided`, `sections`, `ordered` and
 *  doacross loops): thread 1 waits before the first construct until thread 0 has run all 27 `nowait` ones (over
 *  three times a team's slot ring), then runs them itself and finds nothing left. A runtime that makes thread 0
 *  wait for thread 1 to leave an earlier construct stops after 120 s, naming the wait.
 */
enum { queue_loops_k = 27, queue_n_k = 48 };
static int queue_hits[queue_loops_k][queue_n_k];
static int queue_last[queue_loops_k]; // the last iteration whose `ordered` region ran, per construct
static int queue_order_wrong;
static int queue_done;
static void clear_queue(void) {
    memset(queue_hits, 0, sizeof(queue_hits));
    for (int loop = 0; loop < queue_loops_k; ++loop) queue_last[loop] = -1;
    queue_order_wrong = 0;
}
static void run_queue_construct(int loop) {
    switch (loop % 6) {
    case 0:
#pragma omp for schedule(monotonic : dynamic, 1) nowait
        for (int i = 0; i < queue_n_k; ++i) {
#pragma omp atomic
            queue_hits[loop][i]++;
        }
        break;
    case 1:
#pragma omp for schedule(guided, 2) nowait
        for (int i = 0; i < queue_n_k; ++i) {
#pragma omp atomic
            queue_hits[loop][i]++;
        }
        break;
    case 2:
#pragma omp sections nowait
    {
#pragma omp section
        for (int i = 0; i < queue_n_k / 2; ++i) {
#pragma omp atomic
            queue_hits[loop][i]++;
        }
#pragma omp section
        for (int i = queue_n_k / 2; i < queue_n_k; ++i) {
#pragma omp atomic
            queue_hits[loop][i]++;
        }
    } break;
    case 3:
#pragma omp for ordered schedule(dynamic, 3) nowait
        for (int i = 0; i < queue_n_k; ++i) {
#pragma omp atomic
            queue_hits[loop][i]++;
#pragma omp ordered
            {
                if (i != queue_last[loop] + 1) queue_order_wrong++;
                queue_last[loop] = i;
            }
        }
        break;
    case 4:
#pragma omp for ordered(1) schedule(dynamic, 2) nowait
        for (int i = 0; i < queue_n_k; ++i) {
#pragma omp ordered depend(sink : i - 1)
            {
                int before = 1;
                if (i > 0) {
#pragma omp atomic read
                    before = queue_hits[loop][i - 1];
                }
                if (before != 1) {
#pragma omp atomic
                    queue_order_wrong++;
                }
            }
#pragma omp atomic
            queue_hits[loop][i]++;
#pragma omp ordered depend(source)
        }
        break;
    default:
#pragma omp for schedule(runtime) nowait
        for (int i = 0; i < queue_n_k; ++i) {
#pragma omp atomic
            queue_hits[loop][i]++;
        }
        break;
    }
}
static void check_queue_hits(char const *what) {
    for (int loop = 0; loop < queue_loops_k; ++loop)
        for (int i = 0; i < queue_n_k; ++i)
            if (queue_hits[loop][i] != 1) {
                fprintf(stderr, "%s, construct %d: iteration %d ran %d times\n", what, loop, i, queue_hits[loop][i]);
                abort();
            }
    CHECK(queue_order_wrong == 0);
}
static void shared_constructs_never_wait(void) {
    clear_queue();
    queue_done = 0;
#pragma omp parallel num_threads(2)
    {
        int const thread = omp_get_thread_num();
        if (thread == 1) {
            double const deadline = omp_get_wtime() + 120.0;
            for (int done = 0; !done;) {
#pragma omp atomic read
                done = queue_done;
                if (!done && omp_get_wtime() > deadline) {
                    fprintf(stderr,
                            "shared_constructs_never_wait: thread 0 did not get through %d nowait constructs "
                            "in 120 s\n",
                            queue_loops_k);
                    abort();
                }
            }
        }
        for (int loop = 0; loop < queue_loops_k; ++loop) run_queue_construct(loop);
        if (thread == 0) {
#pragma omp atomic write
            queue_done = 1;
        }
    }
    check_queue_hits("ahead of a waiting member");
    printf("%d nowait shared-cursor constructs run ahead of a member that waits before the first\n", queue_loops_k);
}

/**  The same constructs, 20 rounds of them back to back at 3 and 5 threads, with a different straggler every few:
 *   members drift in and out of running a ring's length ahead, and every construct still runs each iteration once
 *   and keeps its order. */
static void shared_constructs_drift(void) {
    int const teams[] = {3, 5};
    for (int t = 0; t < 2; ++t)
        for (int round = 0; round < 20; ++round) {
            clear_queue();
#pragma omp parallel num_threads(teams[t])
            {
                int const thread = omp_get_thread_num();
                for (int loop = 0; loop < queue_loops_k; ++loop) {
                    if ((loop + round) % 7 == 0 && thread == (loop + round) % teams[t]) {
                        volatile long sink = 0;
                        for (long spin = 0; spin < 100000; ++spin) sink += spin;
                    }
                    run_queue_construct(loop);
                }
            }
            check_queue_hits("drifting team");
        }
    printf("20 rounds of %d nowait shared-cursor constructs at 3 and 5 threads: every iteration once, in order\n",
           queue_loops_k);
}

static void iteration_spaces(void) {
    // Down-counting signed loop with a step of -3.
    clear();
#pragma omp parallel for schedule(dynamic, 4)
    for (long i = 998; i >= 0; i -= 3) RECORD(i);
    for (int i = 0; i < n_k; ++i) CHECK(hits[i] == (i <= 998 && (998 - i) % 3 == 0));
    // Unsigned, from a large base (GCC 12 hands down-counting `unsigned` loops to the runtime with a step it
    // zero-extends, so no runtime runs them: they are left out).
    clear();
#pragma omp parallel for schedule(guided, 2)
    for (unsigned i = 4000000001u; i < 4000001000u; ++i) RECORD(i - 4000000000u);
    for (int i = 0; i < n_k; ++i) CHECK(hits[i] == (i >= 1 && i <= 999));
    // `unsigned long long` near 2^64, up and down, with the combined and the inner forms.
    unsigned long long const top = UINT64_MAX - 5;
    clear();
#pragma omp parallel for schedule(dynamic, 5)
    for (unsigned long long i = top - 600; i < top; i += 2) RECORD((int)(i - (top - 600)));
    for (int i = 0; i < n_k; ++i) CHECK(hits[i] == (i < 600 && i % 2 == 0));
    clear();
#pragma omp parallel
    {
#pragma omp for schedule(nonmonotonic : dynamic, 3)
        for (unsigned long long i = top; i > top - 700; i -= 7) RECORD((int)(top - i));
#pragma omp for schedule(static, 2)
        for (unsigned long long i = 800; i < 900; ++i) RECORD((int)i);
    }
    for (int i = 0; i < n_k; ++i) CHECK(hits[i] == ((i < 700 && i % 7 == 0) || (i >= 800 && i < 900)));
    // Signed loops that end near the type's limits.
    long long count = 0;
#pragma omp parallel for schedule(dynamic, 1000) reduction(+ : count)
    for (long i = INT64_MAX - 100000; i < INT64_MAX; ++i) count++;
    CHECK(count == 100000);
    count = 0;
#pragma omp parallel for schedule(guided) reduction(+ : count)
    for (long i = INT64_MIN + 99999; i > INT64_MIN; --i) count++;
    CHECK(count == 99999);
    // Empty loops, and loops with fewer iterations than threads.
    count = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : count)
    for (int i = 0; i < 0; ++i) count++;
#pragma omp parallel for schedule(guided) reduction(+ : count)
    for (int i = 5; i < 6; ++i) count++;
#pragma omp parallel for schedule(static, 3) reduction(+ : count)
    for (int i = 5; i < 6; ++i) count++;
    CHECK(count == 2);
    // collapse(2) and collapse(3).
    clear();
#pragma omp parallel for collapse(2) schedule(dynamic, 3)
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 25; ++j) RECORD(i * 25 + j);
    expect_each_once("collapse(2)", 500);
    clear();
#pragma omp parallel for collapse(3) schedule(static)
    for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 10; ++j)
            for (int k = 0; k < 10; ++k) RECORD(i * 100 + j * 10 + k);
    expect_each_once("collapse(3)", 1000), print_owners("collapse(3) static", 1000);
    printf("signed, unsigned, unsigned long long, empty and collapsed spaces: every iteration once\n");
}

/**
 *  Shared-cursor schedules at their edges. On a team of 300 with chunks of 2^64 / 260 (rounded up, under 2^56), the
 *  first claim takes the whole loop and every other member adds a chunk to the cursor once more before it sees the
 *  loop dry: the 260th add carries it just past 2^64, where an unguarded cursor wraps into the loop's iterations and
 *  hands them out again. Then monotonic dynamic loops on steps other than 1, down-counting and near 2^64 (the
 *  claim's general mapping back to the loop variable), and one whose body runs a nested team with its own monotonic
 *  loop before it claims again.
 */
static void shared_cursor_edges(void) {
    long const wrapping_chunk = (long)(UINT64_MAX / 260 + 1);
    CHECK(wrapping_chunk < (1L << 56));
    long long count = 0;
    int size = 0;
#pragma omp parallel num_threads(300) reduction(+ : count)
    {
#pragma omp single
        size = omp_get_num_threads();
#pragma omp for schedule(monotonic : dynamic, wrapping_chunk)
        for (int i = 0; i < 1000; ++i) count++;
#pragma omp for schedule(guided, wrapping_chunk)
        for (int i = 0; i < 1000; ++i) count++;
#pragma omp for schedule(monotonic : dynamic, wrapping_chunk)
        for (unsigned long long i = 0; i < 1000; ++i) count++;
    }
    CHECK(size == 300);
    CHECK(count == 3000);

    clear(), reset_monotonic();
#pragma omp parallel for schedule(monotonic : dynamic, 4)
    for (long i = 998; i >= 0; i -= 3) {
        RECORD(i);
        note_monotonic((int)(998 - i));
    }
    for (int i = 0; i < n_k; ++i) CHECK(hits[i] == (i <= 998 && (998 - i) % 3 == 0));
    CHECK(monotonic_ok);
    unsigned long long const top = UINT64_MAX - 5;
    clear(), reset_monotonic();
#pragma omp parallel for schedule(monotonic : dynamic, 1)
    for (unsigned long long i = top - 600; i < top; i += 2) {
        RECORD((int)(i - (top - 600)));
        note_monotonic((int)(i - (top - 600)));
    }
    for (int i = 0; i < n_k; ++i) CHECK(hits[i] == (i < 600 && i % 2 == 0));
    CHECK(monotonic_ok);

    int const levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    clear();
    int inner_hits[40] = {0};
#pragma omp parallel for schedule(monotonic : dynamic, 1) num_threads(2)
    for (int i = 0; i < 40; ++i) {
        RECORD(i);
#pragma omp parallel num_threads(2)
        {
#pragma omp for schedule(monotonic : dynamic, 1)
            for (int j = 0; j < 10; ++j) {
#pragma omp atomic
                inner_hits[i]++;
            }
        }
    }
    omp_set_max_active_levels(levels);
    expect_each_once("monotonic:dynamic,1 around nested loops", 40);
    for (int i = 0; i < 40; ++i) CHECK(inner_hits[i] == 10);
    printf("shared cursors: chunks of 2^64 / 260 on 300 threads, general steps, nested loops: every iteration once\n");
}

static void ordered_loops(void) {
    int sequence[n_k], length = 0;
#define ORDERED_CASE(name, clause, count)                                                                              \
    do {                                                                                                               \
        clear(), length = 0;                                                                                           \
        _Pragma(clause) for (int i = 0; i < count; ++i) {                                                              \
            RECORD(i);                                                                                                 \
            if (i % 3 != 1) {                                                                                          \
                _Pragma("omp ordered") sequence[length++] = i;                                                         \
            }                                                                                                          \
        }                                                                                                              \
        expect_each_once(name, count);                                                                                 \
        int expected = 0;                                                                                              \
        for (int at = 0; at < length; ++at, ++expected) {                                                              \
            if (expected % 3 == 1) ++expected;                                                                         \
            CHECK(sequence[at] == expected);                                                                           \
        }                                                                                                              \
        if (expected < count && expected % 3 == 1) ++expected;                                                         \
        CHECK(expected == count);                                                                                      \
    } while (0)
    ORDERED_CASE("ordered static", "omp parallel for ordered schedule(static)", 300);
    ORDERED_CASE("ordered static,2", "omp parallel for ordered schedule(static, 2)", 301);
    ORDERED_CASE("ordered dynamic", "omp parallel for ordered schedule(dynamic)", 302);
    ORDERED_CASE("ordered dynamic,5", "omp parallel for ordered schedule(dynamic, 5)", 303);
    ORDERED_CASE("ordered guided", "omp parallel for ordered schedule(guided)", 304);
    ORDERED_CASE("ordered runtime", "omp parallel for ordered schedule(runtime)", 305);
    ORDERED_CASE("ordered monotonic", "omp parallel for ordered schedule(monotonic : dynamic, 2)", 306);
    printf("ordered regions ran in iteration order\n");

    // Doacross: each iteration depends on the previous one (1D) or on its two neighbours (2D wavefront).
    long chain[n_k];
    chain[0] = 1;
#pragma omp parallel for ordered(1) schedule(dynamic, 3)
    for (int i = 1; i < n_k; ++i) {
#pragma omp ordered depend(sink : i - 1)
        chain[i] = chain[i - 1] + i;
#pragma omp ordered depend(source)
    }
    for (int i = 1; i < n_k; ++i) CHECK(chain[i] == chain[i - 1] + i);
    static long grid[40][40];
    for (int i = 0; i < 40; ++i) grid[i][0] = grid[0][i] = 1;
#pragma omp parallel for ordered(2) schedule(static)
    for (int i = 1; i < 40; ++i)
        for (int j = 1; j < 40; ++j) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
            grid[i][j] = (grid[i - 1][j] + grid[i][j - 1]) % 1000003;
#pragma omp ordered depend(source)
        }
    printf("doacross chain %ld, wavefront %ld\n", chain[n_k - 1], grid[39][39]);

    // Doacross over ten ordered dimensions (more than the eight an inline array holds): each cell adds one to the
    // cell before it in the outermost dimension and in the innermost one, so cell (i0, ..., i9) ends as i0 + i9 + 1.
    static long deep[3][2][2][2][2][2][2][2][2][4];
    long deep_wrong = 0;
#pragma omp parallel for ordered(10) schedule(dynamic, 1) reduction(+ : deep_wrong)
    for (int i0 = 0; i0 < 3; ++i0)
        for (int i1 = 0; i1 < 2; ++i1)
            for (int i2 = 0; i2 < 2; ++i2)
                for (int i3 = 0; i3 < 2; ++i3)
                    for (int i4 = 0; i4 < 2; ++i4)
                        for (int i5 = 0; i5 < 2; ++i5)
                            for (int i6 = 0; i6 < 2; ++i6)
                                for (int i7 = 0; i7 < 2; ++i7)
                                    for (int i8 = 0; i8 < 2; ++i8)
                                        for (int i9 = 0; i9 < 4; ++i9) {
#pragma omp ordered depend(sink                                                                                        \
                           : i0 - 1, i1, i2, i3, i4, i5, i6, i7, i8, i9)                                               \
    depend(sink                                                                                                        \
           : i0, i1, i2, i3, i4, i5, i6, i7, i8, i9 - 1)
                                            {
                                                int const u0 = i0 > 0 ? i0 - 1 : 0, l9 = i9 > 0 ? i9 - 1 : 0;
                                                long const up = i0 ? deep[u0][i1][i2][i3][i4][i5][i6][i7][i8][i9] : 0;
                                                long const left = i9 ? deep[i0][i1][i2][i3][i4][i5][i6][i7][i8][l9] : 0;
                                                deep[i0][i1][i2][i3][i4][i5][i6][i7][i8][i9] =
                                                    (up > left ? up : left) + 1;
                                                deep_wrong +=
                                                    deep[i0][i1][i2][i3][i4][i5][i6][i7][i8][i9] != i0 + i9 + 1;
                                            }
#pragma omp ordered depend(source)
                                        }
    printf("doacross over 10 dimensions: %ld wrong cells, last %ld\n", deep_wrong, deep[2][1][1][1][1][1][1][1][1][3]);
    CHECK(deep_wrong == 0);
}

/**  A doacross loop given team-shared memory (`mem`), as GCC's code would ask for it: every member must get the same
 *   zeroed block, and the loop's own bookkeeping must live elsewhere. Iteration i (in dependence order, waiting for
 *   i - 1) adds i to its byte of the block, so that writes to the memory also break the order if they overlap it;
 *   the last one copies the block out. */
static void doacross_shared_memory(void) {
    enum { count_k = 777, bytes_k = 300 };
    static long order[count_k];
    static unsigned char *blocks[max_threads_k];
    static unsigned char copy[bytes_k];
    long next = 0, wrong = 0, zeroed = 1;
#pragma omp parallel shared(next) reduction(+ : wrong) reduction(&& : zeroed)
    {
        long counts[1] = {count_k}, first = 0, last = 0;
        void *memory = (void *)(uintptr_t)bytes_k;
        int const me = omp_get_thread_num();
        bool more =
            GOMP_loop_doacross_start(1, counts, 0x80000002L /* monotonic: dynamic */, 1, &first, &last, NULL, &memory);
        if (me < max_threads_k) blocks[me] = memory;
        unsigned char *const block = memory;
        for (; more; more = GOMP_loop_dynamic_next(&first, &last))
            for (long i = first; i < last; ++i) {
                if (i > 0) GOMP_doacross_wait(i - 1);
                if (i < bytes_k) zeroed = zeroed && block[i] == 0;
                block[i % bytes_k] = (unsigned char)(block[i % bytes_k] + i);
                order[i] = next++;
                if (i == count_k - 1) memcpy(copy, block, bytes_k); // every iteration before it is done
                long post[1] = {i};
                GOMP_doacross_post(post);
            }
        GOMP_loop_end(); // the memory lives until the loop's end only
        for (int other = 0; other < omp_get_num_threads() && other < max_threads_k; ++other)
            wrong += blocks[other] != block;
    }
    for (long i = 0; i < count_k; ++i) wrong += order[i] != i;
    unsigned char expected[bytes_k] = {0};
    for (long i = 0; i < count_k; ++i) expected[i % bytes_k] = (unsigned char)(expected[i % bytes_k] + i);
    wrong += memcmp(copy, expected, bytes_k) != 0;
    printf("doacross with team-shared memory: %ld wrong, zeroed %ld\n", wrong, zeroed);
    CHECK(wrong == 0 && zeroed);
}

// GCC 12 warns that its own private copy of `last_section` may be read uninitialized: it is read only when assigned.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
static void conditional_lastprivate(void) {
    int last = -1, last_section = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3) lastprivate(conditional : last)
        for (int i = 0; i < n_k; ++i)
            if (i % 7 == 3) last = i;
#pragma omp sections lastprivate(conditional : last_section)
        {
#pragma omp section
            last_section = 1;
#pragma omp section
            last_section = 2;
#pragma omp section
            (void)0;
        }
    }
    printf("conditional lastprivate: %d %d\n", last, last_section);
}
#pragma GCC diagnostic pop

/**  `lastprivate`: the value of the sequentially last iteration, whichever thread ran it and in whatever order its
 *   chunks came (GCC copies out on the thread whose last chunk ends the loop), for every schedule, many times. */
static void slow_if_early(int i, int n) {
    // The first iterations are slow, so the threads owning the late ones finish first and go stealing.
    volatile long sink = 0;
    if (i < n / 3)
        for (int spin = 0; spin < 2000; ++spin) sink += spin;
}
static void lastprivate_loops(void) {
    int wrong = 0;
    for (int round = 0; round < 200; ++round) {
        int const n = 50 + round;
        long a = -1, b = -1, c = -1, d = -1, e = -1;
#pragma omp parallel for lastprivate(a) schedule(nonmonotonic : dynamic, 1)
        for (int i = 0; i < n; ++i) {
            slow_if_early(i, n);
            a = i;
        }
#pragma omp parallel for lastprivate(b) schedule(dynamic, 3)
        for (int i = 0; i < n; ++i) {
            slow_if_early(i, n);
            b = 2L * i;
        }
#pragma omp parallel for lastprivate(c) schedule(guided)
        for (int i = 0; i < n; ++i) c = 3L * i;
#pragma omp parallel for lastprivate(d) schedule(static, 2)
        for (int i = 0; i < n; ++i) d = 4L * i;
#pragma omp parallel for lastprivate(e) schedule(runtime)
        for (int i = n - 1; i >= 0; --i) e = 5L * i;
        wrong += a != n - 1 || b != 2L * (n - 1) || c != 3L * (n - 1) || d != 4L * (n - 1) || e != 0;
    }
    CHECK(wrong == 0);
    printf("lastprivate: the last iteration's value under every schedule\n");
}

int main(void) {
    report_server();
    team = omp_get_max_threads();
    printf("team %d\n", team);
    static_schedules();
    dynamic_schedules();
    stealing_nowait_loops();
    stealing_loops_never_wait();
    shared_constructs_never_wait();
    shared_constructs_drift();
    iteration_spaces();
    shared_cursor_edges();
    ordered_loops();
    doacross_shared_memory();
    conditional_lastprivate();
    lastprivate_loops();
    return 0;
}
