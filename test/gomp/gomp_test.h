/**
 *  @file   test/gomp/gomp_test.h
 *  @brief  What every OpenMP test program shares: checks that fail loudly, and the line that says which runtime
 *          served the program's GOMP calls.
 *
 *  Each program runs under libgomp, under `LD_PRELOAD` of the drop-in, and linked against the drop-in alone; the
 *  runner (`run.cmake`) compares their standard outputs. So a program prints to stdout only what must be identical
 *  across runtimes (integer results, static schedules, tolerance verdicts), and everything else to stderr.
 */
#ifndef FORKUNION_GOMP_TEST_H
#define FORKUNION_GOMP_TEST_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 // `dladdr`
#endif
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
void GOMP_parallel(void (*fn)(void *), void *data, unsigned nthreads, unsigned flags);
#ifdef __cplusplus
}
#endif

#define CHECK(condition)                                                                                               \
    do {                                                                                                               \
        if (!(condition)) {                                                                                            \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);                              \
            fflush(stderr);                                                                                            \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

/**  Whether the drop-in served this program: the library that defines the `GOMP_parallel` it calls. */
static int served_by_forkunion(void) {
    Dl_info info;
    memset(&info, 0, sizeof(info));
    if (!dladdr((void *)&GOMP_parallel, &info) || !info.dli_fname) return 0;
    return strstr(info.dli_fname, "forkunion") != NULL;
}

/**  Prints `served-by: forkunion` or `served-by: libgomp` to stderr, where the runner looks for it. */
static void report_server(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); // whole lines reach the runner even when a check aborts
    Dl_info info;
    memset(&info, 0, sizeof(info));
    dladdr((void *)&GOMP_parallel, &info);
    fprintf(stderr, "served-by: %s (%s)\n", served_by_forkunion() ? "forkunion" : "libgomp",
            info.dli_fname ? info.dli_fname : "?");
}

#endif
