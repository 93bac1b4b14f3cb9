/*  Nested parallelism: with max-active-levels above 1 (`omp_set_nested(1)`, `omp_set_max_active_levels`), a region
 *  inside an active region gets the team it asks for, within the thread limit, as under libgomp. A parallel
 *  quicksort that splits with `num_threads(2)` and gives each half to one thread number (so a team of one would
 *  leave half the array unsorted); nested team sizes, thread numbers, levels and ancestors three levels deep; the
 *  ICVs the setters leave (clamped to the supported levels, which the API reports) and the task they belong to; and
 *  the thread limit shared by the nested teams of one contention group (`OMP_THREAD_LIMIT`, or a `teams` region's
 *  `thread_limit`). */
#include "gomp_test.h"

#include <sched.h>
#include <stdint.h>

enum { sort_size_k = 40000, sort_cutoff_k = 1500 };

static void insertion_sort(int *a, long n) {
    for (long i = 1; i < n; ++i) {
        int const value = a[i];
        long j = i;
        for (; j > 0 && a[j - 1] > value; --j) a[j] = a[j - 1];
        a[j] = value;
    }
}

/**  Sorts `a[0, n)`: partitions, then thread 0 of a nested team of two sorts the lower part and thread 1 the upper
 *   one. Relies on getting both threads, as programs written against libgomp do. */
static void parallel_quicksort(int *a, long n) {
    if (n <= sort_cutoff_k) return insertion_sort(a, n);
    int const pivot = a[n / 2];
    long i = 0, j = n - 1;
    while (i <= j) {
        while (a[i] < pivot) ++i;
        while (a[j] > pivot) --j;
        if (i <= j) {
            int const t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
    }
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) parallel_quicksort(a, j + 1);
        if (omp_get_thread_num() == 1) parallel_quicksort(a + i, n - i);
    }
}

static void check_quicksort(void) {
    static int a[sort_size_k];
    uint64_t state = 88172645463325252ull, sum = 0;
    for (long k = 0; k < sort_size_k; ++k) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        a[k] = (int)(state % 1000003);
        sum += (uint64_t)a[k];
    }
    omp_set_nested(1);
    parallel_quicksort(a, sort_size_k);
    omp_set_nested(0);
    long unsorted = 0;
    uint64_t after = 0;
    for (long k = 0; k < sort_size_k; ++k) {
        after += (uint64_t)a[k];
        unsorted += k > 0 && a[k - 1] > a[k];
    }
    CHECK(after == sum);
    printf("quicksort of %d with nested num_threads(2): %s\n", sort_size_k, unsorted ? "incorrectly sorted" : "sorted");
    CHECK(unsorted == 0);
}

/**  Three active levels of 2, 3 and 2 threads: every (outer, middle, inner) thread number once, each seeing its
 *   ancestors, team sizes and levels. */
static void check_three_levels(void) {
    int cells[2][3][2] = {{{0}}}, wrong = 0;
    omp_set_max_active_levels(3);
#pragma omp parallel num_threads(2)
    {
        int const outer = omp_get_thread_num();
#pragma omp parallel num_threads(3)
        {
            int const middle = omp_get_thread_num();
            int const middle_size = omp_get_num_threads();
            int sum = 0; // shared by the innermost team
#pragma omp parallel num_threads(2)
            {
                int const inner = omp_get_thread_num();
                int ok = omp_get_level() == 3 && omp_get_active_level() == 3 && omp_get_num_threads() == 2 &&
                         middle_size == 3 && omp_get_ancestor_thread_num(0) == 0 &&
                         omp_get_ancestor_thread_num(1) == outer && omp_get_ancestor_thread_num(2) == middle &&
                         omp_get_ancestor_thread_num(3) == inner && omp_get_ancestor_thread_num(4) == -1 &&
                         omp_get_team_size(0) == 1 && omp_get_team_size(1) == 2 && omp_get_team_size(2) == 3 &&
                         omp_get_team_size(3) == 2 && omp_in_parallel();
                // A fourth level is past max-active-levels: a team of one, one level deeper, no more active.
#pragma omp parallel num_threads(2)
                ok = ok && omp_get_num_threads() == 1 && omp_get_level() == 4 && omp_get_active_level() == 3;
                // Worksharing and barriers within the innermost team.
#pragma omp for schedule(dynamic, 3) reduction(+ : sum)
                for (int i = 0; i < 100; ++i) sum += i;
                ok = ok && sum == 4950;
                if (outer < 2 && middle < 3 && inner < 2) {
#pragma omp atomic
                    cells[outer][middle][inner]++;
                }
                if (!ok) {
#pragma omp atomic
                    wrong++;
                }
            }
        }
    }
    printf("three levels (2, 3, 2): cells");
    for (int o = 0; o < 2; ++o)
        for (int m = 0; m < 3; ++m)
            for (int i = 0; i < 2; ++i) printf(" %d", cells[o][m][i]);
    printf(", wrong %d\n", wrong);
    CHECK(wrong == 0);
    omp_set_max_active_levels(1);
}

/**  The ICVs the setters leave: clamped to the supported levels, which the queries report. */
static void check_icvs(void) {
    printf("supported active levels %d, default max %d nested %d\n", omp_get_supported_active_levels(),
           omp_get_max_active_levels(), omp_get_nested());
    omp_set_nested(1);
    printf("omp_set_nested(1): max %d nested %d\n", omp_get_max_active_levels(), omp_get_nested());
    omp_set_max_active_levels(1000);
    printf("omp_set_max_active_levels(1000): max %d\n", omp_get_max_active_levels());
    omp_set_max_active_levels(-1);
    printf("omp_set_max_active_levels(-1): max %d\n", omp_get_max_active_levels());
    omp_set_max_active_levels(0);
    int size = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
    size = omp_get_num_threads();
    printf("omp_set_max_active_levels(0): max %d nested %d, team %d\n", omp_get_max_active_levels(), omp_get_nested(),
           size);
    omp_set_nested(0);
    printf("omp_set_nested(0): max %d nested %d\n", omp_get_max_active_levels(), omp_get_nested());
}

/**  max-active-levels-var belongs to a task's data environment (OpenMP 5; libgomp 12 keeps it per task): a member
 *   that raises it nests alone while its team mate and the region's encountering task keep theirs, and an explicit
 *   task's setting ends with the task. */
static void check_icv_scope(void) {
    omp_set_max_active_levels(1);
    int seen[2] = {0}, nested_size[2] = {0};
#pragma omp parallel num_threads(2)
    {
        int const me = omp_get_thread_num();
        if (me == 1) omp_set_max_active_levels(2);
#pragma omp barrier
        seen[me] = omp_get_max_active_levels();
#pragma omp parallel num_threads(2)
#pragma omp master
        nested_size[me] = omp_get_num_threads();
    }
    int const after_region = omp_get_max_active_levels();
    int in_task = 0;
#pragma omp task shared(in_task)
    {
        omp_set_max_active_levels(3);
        in_task = omp_get_max_active_levels();
    }
#pragma omp taskwait
    int const after_task = omp_get_max_active_levels();
    printf("max-active-levels per task: members see %d and %d, nested teams %d and %d; after the region %d; "
           "in a task %d, after it %d\n",
           seen[0], seen[1], nested_size[0], nested_size[1], after_region, in_task, after_task);
    CHECK(seen[0] == 1 && seen[1] == 2 && nested_size[0] == 1 && nested_size[1] == 2);
    CHECK(after_region == 1 && in_task == 3 && after_task == 1);
}

/**  With `limit` threads in the contention group, an outer team of 3 whose members each open a nested region of 4
 *   at the same time: the nested teams share what the limit leaves (libgomp hands it out first come, first
 *   served), so the threads of all of them at once are exactly the limit. Each nested master waits until all three
 *   have started. */
static void check_limit(int limit) {
    int total = 0, started = 0, widest = 0;
    omp_set_nested(1);
    omp_set_dynamic(0);
#pragma omp parallel num_threads(3)
    {
#pragma omp parallel num_threads(4)
        {
#pragma omp master
            {
                int const size = omp_get_num_threads();
#pragma omp atomic
                total += size;
#pragma omp critical
                widest = widest > size ? widest : size;
#pragma omp atomic
                started++;
                for (;;) {
                    int now;
#pragma omp atomic read
                    now = started;
                    if (now == 3) break;
                    sched_yield(); // the other masters need a core; their arrival is the only exit
                }
            }
        }
    }
    omp_set_nested(0);
    // Each nested team's master is one of the outer team's threads: the group holds `total` threads.
    printf("thread limit %d: 3 nested teams of up to 4 at once hold %d threads, the widest %d\n", limit, total, widest);
    CHECK(total == (limit < 12 ? limit : 12));
}

static void limited(void) {
    printf("thread limit %d\n", omp_get_thread_limit());
    check_limit(omp_get_thread_limit());
}

int main(int argc, char **argv) {
    report_server();
    if (argc > 1 && !strcmp(argv[1], "limit")) { // run with OMP_THREAD_LIMIT set
        limited();
        return 0;
    }
    check_icvs();
    check_icv_scope();
    check_quicksort();
    check_three_levels();
    return 0;
}
