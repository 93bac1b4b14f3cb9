/*  The README's example: an ordinary OpenMP program, nothing forkunion-specific in it. usage.sh builds it and runs
 *  it the three ways the README shows; the outputs must agree. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int const n = 1 << 18;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) x[i] = (float)(i % 100), y[i] = 1.0f;

    for (int repeat = 0; repeat < 100; ++repeat) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < n; ++i) y[i] = 0.5f * x[i] + y[i];
    }

    long checksum = 0;
#pragma omp parallel for reduction(+ : checksum)
    for (int i = 0; i < n; ++i) checksum += (long)y[i];
    printf("checksum %ld on %d threads\n", checksum, omp_get_max_threads());
    free(x), free(y);
    return 0;
}
