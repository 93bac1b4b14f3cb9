/*  `parallel`: team sizes (`num_threads`, `if`, `omp_set_num_threads`, teams larger than the first one), the team
 *  and level queries, nested regions (a team of one), many regions in a row, and the GOMP_1.0 entry points that
 *  older GCCs emitted (`GOMP_parallel_start`/`_end` and the combined `_start` forms), called directly. With the
 *  argument `exit_in_region`: the master calls `exit(0)` inside a region while its team waits in a barrier; with
 *  `exit_in_target`, inside a `target` region there. */
#include "gomp_test.h"

#include <stdbool.h>

void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_dynamic_start(void (*fn)(void *), void *data, unsigned nthreads, long start, long end,
                                      long incr, long chunk);
void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nthreads, unsigned count);
bool GOMP_loop_dynamic_next(long *istart, long *iend);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);

enum { max_team = 64 };

/**  Runs a region of `requested` threads (0 = no clause) and checks the team it got. Returns its size. */
static int team_of(int requested) {
    int seen[max_team] = {0};
    int size = -1, level = -1, active = -1, in_parallel = -1;
    if (requested) {
#pragma omp parallel num_threads(requested)
        {
#pragma omp atomic
            seen[omp_get_thread_num()]++;
#pragma omp master
            size = omp_get_num_threads(), level = omp_get_level(), active = omp_get_active_level(),
            in_parallel = omp_in_parallel();
        }
    } else {
#pragma omp parallel
        {
#pragma omp atomic
            seen[omp_get_thread_num()]++;
#pragma omp master
            size = omp_get_num_threads(), level = omp_get_level(), active = omp_get_active_level(),
            in_parallel = omp_in_parallel();
        }
    }
    CHECK(size >= 1 && size <= max_team);
    for (int thread = 0; thread < max_team; ++thread) CHECK(seen[thread] == (thread < size));
    CHECK(level == 1);
    CHECK(active == (size > 1));
    CHECK(in_parallel == (size > 1));
    return size;
}

static void legacy_body(void *data) {
    int *seen = (int *)data;
#pragma omp atomic
    seen[omp_get_thread_num()]++;
}

static void legacy_loop_body(void *data) {
    int *hits = (int *)data;
    long first, last;
    while (GOMP_loop_dynamic_next(&first, &last))
        for (long i = first; i < last; i += 2) {
#pragma omp atomic
            hits[i]++;
        }
    GOMP_loop_end_nowait();
}

static void legacy_sections_body(void *data) {
    int *hits = (int *)data;
    for (unsigned section; (section = GOMP_sections_next()) != 0;) {
#pragma omp atomic
        hits[section]++;
    }
    GOMP_sections_end_nowait();
}

int main(int argc, char **argv) {
    report_server();
    if (argc == 2 && (!strcmp(argv[1], "exit_in_region") || !strcmp(argv[1], "exit_in_target"))) {
        // `exit` from a region's body (or from a `target` region there), its team still inside: the process ends
        // with that status, and promptly.
        int const in_target = !strcmp(argv[1], "exit_in_target");
#pragma omp parallel num_threads(3)
        {
#pragma omp barrier
            if (omp_get_thread_num() == 0) {
                printf("exit from the master inside a region of %d\n", omp_get_num_threads());
                fflush(stdout);
                if (in_target) {
#pragma omp target
                    exit(0);
                }
                exit(0);
            }
#pragma omp barrier
        }
        return 1;
    }
    int const max = omp_get_max_threads();
    printf("max threads %d, first team %d\n", max, team_of(0));

    // Every size from 1 to 9, larger than the first team included, and back down.
    for (int requested = 1; requested <= 9; ++requested) printf("num_threads(%d): %d\n", requested, team_of(requested));
    for (int requested = 9; requested >= 1; requested -= 4)
        printf("num_threads(%d): %d\n", requested, team_of(requested));

    // A team grown one thread at a time, more times than a root has segments, then asked for 40: every size is
    // the one asked for, and `threadprivate`-free code sees nothing of how the threads were added.
    int grown_ok = 1;
    for (int requested = 10; requested <= 30; ++requested) grown_ok &= team_of(requested) == requested;
    printf("grown one thread at a time to 30: %s; then num_threads(40): %d, num_threads(3): %d\n",
           grown_ok ? "every size" : "not every size", team_of(40), team_of(3));

    // `if(false)` serializes: one thread, one more level, no more active levels.
    for (int on = 0; on <= 1; ++on) {
        int size = -1, level = -1, active = -1;
#pragma omp parallel if (on) num_threads(3)
#pragma omp master
        size = omp_get_num_threads(), level = omp_get_level(), active = omp_get_active_level();
        printf("if(%d): team %d level %d active %d\n", on, size, level, active);
    }

    // `omp_set_num_threads` is the next region's default, and `omp_get_max_threads` reports it.
    omp_set_num_threads(5);
    CHECK(omp_get_max_threads() == 5);
    printf("after omp_set_num_threads(5): %d\n", team_of(0));
    omp_set_num_threads(max);

    // A region inside an active region runs with a team of one, one level deeper; the ancestors are the outer team.
    int nested_ok = 0;
#pragma omp parallel num_threads(3) reduction(+ : nested_ok)
    {
        int const outer = omp_get_thread_num();
        int count = 0;
#pragma omp parallel num_threads(4)
        {
            nested_ok += omp_get_num_threads() == 1 && omp_get_thread_num() == 0 && omp_get_level() == 2 &&
                         omp_get_active_level() == 1 && omp_get_ancestor_thread_num(1) == outer &&
                         omp_get_ancestor_thread_num(0) == 0 && omp_get_team_size(1) == 3 &&
                         omp_get_team_size(2) == 1 && omp_get_ancestor_thread_num(3) == -1 &&
                         omp_get_team_size(-1) == -1;
            // Worksharing in the team of one: the loop is all this thread's.
#pragma omp for schedule(dynamic, 2) reduction(+ : count)
            for (int i = 0; i < 17; ++i) count++;
            nested_ok += count == 17;
        }
    }
    printf("nested regions checked: %d\n", nested_ok);

    // A region inside an inactive one may be active.
    int inner_size = 0;
#pragma omp parallel if (0)
    {
#pragma omp parallel num_threads(3)
#pragma omp master
        inner_size = omp_get_num_threads() * 10 + omp_get_active_level();
    }
    printf("active region inside an inactive one: %d\n", inner_size);

    // Many regions in a row, of changing sizes, each one adding its team's size.
    long total = 0, expected = 0;
    for (int round = 0; round < 400; ++round) {
        int const requested = 1 + round % 4;
        expected += requested;
#pragma omp parallel num_threads(requested) reduction(+ : total)
        total += 1;
    }
    CHECK(total == expected);
    printf("400 regions: %ld contributions\n", total);

    // The GOMP_1.0 entry points: the caller runs its own share between start and end.
    int seen[max_team] = {0};
    GOMP_parallel_start(legacy_body, seen, 3);
    legacy_body(seen);
    GOMP_parallel_end();
    printf("GOMP_parallel_start(3): %d %d %d %d\n", seen[0], seen[1], seen[2], seen[3]);

    int hits[64] = {0};
    GOMP_parallel_loop_dynamic_start(legacy_loop_body, hits, 2, 0, 64, 2, 3);
    legacy_loop_body(hits);
    GOMP_parallel_end();
    for (int i = 0; i < 64; ++i) CHECK(hits[i] == (i % 2 == 0));
    printf("GOMP_parallel_loop_dynamic_start: every even index once\n");

    int sections[8] = {0};
    GOMP_parallel_sections_start(legacy_sections_body, sections, 3, 6);
    legacy_sections_body(sections);
    GOMP_parallel_end();
    for (int s = 0; s < 8; ++s) CHECK(sections[s] == (s >= 1 && s <= 6));
    printf("GOMP_parallel_sections_start: six sections once each\n");
    return 0;
}
