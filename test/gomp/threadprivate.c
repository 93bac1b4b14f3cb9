/*  `threadprivate` and `copyin`: a thread number keeps its values from region to region. Under the drop-in the
 *  values also survive a team that grows and shrinks (the threads of a root are never replaced); libgomp keeps
 *  them only across teams of the same size, which is all OpenMP guarantees, so the stronger checks run only when
 *  the drop-in serves the program, and stdout shows the guaranteed part. */
#include "gomp_test.h"

enum { max_threads_k = 16 };

static int counter;
static double scale = 1.5;
static int table[4] = {1, 2, 3, 4};
#pragma omp threadprivate(counter, scale, table)

int main(void) {
    report_server();
    int const forkunion = served_by_forkunion();
    int errors = 0;
    // Each thread number sets its values; the next region of the same size sees them.
#pragma omp parallel num_threads(3)
    {
        int const self = omp_get_thread_num();
        counter = 100 + self;
        scale = self * 0.25;
        table[self % 4] += 10;
    }
#pragma omp parallel num_threads(3) reduction(+ : errors)
    {
        int const self = omp_get_thread_num();
        errors += counter != 100 + self || scale != self * 0.25 || table[self % 4] != (self % 4 + 1) + 10;
    }
    printf("same-size team: %d errors\n", errors);

    // A larger team: old thread numbers keep their values, new ones start from the initial values.
    int grown_errors = 0;
#pragma omp parallel num_threads(7) reduction(+ : grown_errors)
    {
        int const self = omp_get_thread_num();
        if (forkunion) grown_errors += self < 3 ? counter != 100 + self : counter != 0 || scale != 1.5;
        counter = 200 + self;
    }
    CHECK(grown_errors == 0);
    // Smaller, then larger again: under the drop-in, threads 3..6 still hold what they set.
    int shrunk_errors = 0, regrown_errors = 0;
#pragma omp parallel num_threads(2) reduction(+ : shrunk_errors)
    shrunk_errors += forkunion && counter != 200 + omp_get_thread_num();
#pragma omp parallel num_threads(7) reduction(+ : regrown_errors)
    regrown_errors += forkunion && counter != 200 + omp_get_thread_num();
    CHECK(shrunk_errors == 0 && regrown_errors == 0);

    // copyin: every member starts the region with the master's values.
    counter = 42, scale = 2.5, table[2] = -7;
    int copyin_errors = 0, team = 0;
#pragma omp parallel copyin(counter, scale, table) num_threads(4) reduction(+ : copyin_errors) reduction(+ : team)
    {
        copyin_errors += counter != 42 || scale != 2.5 || table[2] != -7;
        team += 1;
    }
    printf("copyin to a team of %d: %d errors\n", team, copyin_errors);

    // Values set in a worksharing loop stay with the thread that ran the iteration.
    long sum = 0;
#pragma omp parallel num_threads(4)
    {
        counter = 0;
#pragma omp for schedule(static)
        for (int i = 0; i < 1000; ++i) counter += i;
#pragma omp atomic
        sum += counter;
    }
    printf("threadprivate partial sums: %ld\n", sum);
    return 0;
}
