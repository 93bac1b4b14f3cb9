/*  Reductions: every operator (`+ * - min max & | ^ && ||`) on integers and floating point, array sections, a
 *  user-declared reduction, on `parallel`, `for`, `sections` and combined constructs. Integer results are exact
 *  (printed, so the runtimes must agree); floating-point sums are checked against a serial sum within
 *  n * DBL_EPSILON * sum(|x|), the classic bound for summation in any order, and only the verdict is printed. */
#include "gomp_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

typedef struct {
    long min, max, count;
} stats_t;

static stats_t stats_combine(stats_t a, stats_t b) {
    stats_t r = {a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max, a.count + b.count};
    return r;
}
#pragma omp declare reduction(stats:stats_t                                                                            \
                              : omp_out = stats_combine(omp_out, omp_in))                                              \
    initializer(omp_priv = (stats_t){INT64_MAX, INT64_MIN, 0})

enum { n_k = 100000 };
static double values[n_k];

int main(void) {
    report_server();
    long sum = 0, difference = 0, product = 1, low = INT64_MAX, high = INT64_MIN;
    unsigned long bits_and = ~0ul, bits_or = 0, bits_xor = 0;
    int all = 1, any = 0;
#pragma omp parallel for reduction(+ : sum) reduction(- : difference) reduction(* : product) reduction(min : low)     \
    reduction(max : high) reduction(& : bits_and) reduction(| : bits_or) reduction(^ : bits_xor)                       \
    reduction(&& : all) reduction(|| : any) schedule(dynamic, 97)
    for (long i = 1; i <= n_k; ++i) {
        sum += i * i;
        difference -= i;
        if (i % 10000 == 0) product *= 3;
        long const v = (i * 7919) % 100003;
        low = v < low ? v : low;
        high = v > high ? v : high;
        bits_and &= ~(1ul << (i % 61)) | (i % 5 == 0 ? 0ul : ~0ul);
        bits_or |= 1ul << (i % 37);
        bits_xor ^= (unsigned long)i * 2654435761u;
        all = all && (i > 0);
        any = any || (i == 77777);
    }
    printf("integers: sum %ld difference %ld product %ld min %ld max %ld and %#lx or %#lx xor %#lx all %d any %d\n",
           sum, difference, product, low, high, bits_and, bits_or, bits_xor, all, any);

    // Array sections: the whole array and a slice, on `parallel` (each thread adds) and on a loop.
    long histogram[16] = {0}, slice[10] = {0};
    int team = 0;
#pragma omp parallel reduction(+ : histogram [0:16]) reduction(+ : team)
    {
        team += 1;
        histogram[omp_get_thread_num() % 16] += 1;
    }
    long histogram_total = 0;
    for (int b = 0; b < 16; ++b) histogram_total += histogram[b];
    CHECK(histogram_total == team);
#pragma omp parallel for reduction(+ : slice [2:5]) schedule(guided)
    for (int i = 0; i < n_k; ++i) slice[2 + i % 5] += i % 3;
    printf("array sections: team %d, slice %ld %ld %ld %ld %ld, untouched %ld %ld\n", team, slice[2], slice[3],
           slice[4], slice[5], slice[6], slice[0], slice[9]);

    // A user-declared reduction over a struct.
    stats_t stats = {INT64_MAX, INT64_MIN, 0};
#pragma omp parallel for reduction(stats : stats) schedule(static, 13)
    for (long i = 0; i < n_k; ++i) {
        long const v = (i * 104729) % 99991 - 5000;
        stats.min = v < stats.min ? v : stats.min;
        stats.max = v > stats.max ? v : stats.max;
        stats.count += 1;
    }
    printf("declared reduction: min %ld max %ld count %ld\n", stats.min, stats.max, stats.count);

    // Reductions on `sections`, and on a `for` inside a region, with `nowait`.
    long section_sum = 0, loop_sum = 0;
#pragma omp parallel
    {
#pragma omp sections reduction(+ : section_sum)
        {
#pragma omp section
            section_sum += 1;
#pragma omp section
            section_sum += 10;
#pragma omp section
            section_sum += 100;
        }
#pragma omp for reduction(+ : loop_sum) nowait
        for (int i = 0; i < 1000; ++i) loop_sum += i;
    }
    printf("sections %ld, inner loop %ld\n", section_sum, loop_sum);

    // Floating point: the order of the partial sums differs between runtimes, so only the verdict is printed.
    double serial = 0, magnitude = 0;
    for (int i = 0; i < n_k; ++i) {
        values[i] = sin(i * 0.001) * 1e3 + 1.0 / (i + 1);
        serial += values[i];
        magnitude += fabs(values[i]);
    }
    double parallel_sum = 0, parallel_max = -INFINITY;
    float float_sum = 0;
#pragma omp parallel for reduction(+ : parallel_sum, float_sum) reduction(max : parallel_max) schedule(dynamic, 1000)
    for (int i = 0; i < n_k; ++i) {
        parallel_sum += values[i];
        float_sum += (float)(i % 7);
        parallel_max = values[i] > parallel_max ? values[i] : parallel_max;
    }
    double const bound = n_k * DBL_EPSILON * magnitude;
    CHECK(fabs(parallel_sum - serial) <= bound);
    double serial_max = -INFINITY;
    for (int i = 0; i < n_k; ++i) serial_max = values[i] > serial_max ? values[i] : serial_max;
    CHECK(parallel_max == serial_max); // max is exact in any order
    long small_total = 0;
    for (int i = 0; i < n_k; ++i) small_total += i % 7;
    CHECK(float_sum == (float)small_total); // partial sums of small integers stay exact in float
    printf("double sum within n*eps*sum|x| of the serial sum, max exact, float sum exact\n");
    return 0;
}
