/* The overhead of each OpenMP construct, in the style of the classic OpenMP micro-benchmarks: a construct is run
 * `inner` times around a fixed delay, the same delays are timed without the construct, and the difference divided
 * by `inner` is the construct's overhead. Of `outer` such pairs of measurements (test and reference alternating),
 * the medians' difference is what this program prints, one row per construct (and the minima's):
 *
 *     ROW <construct> <median µs> <min µs> <inner>
 *
 * It names the runtime that serves it (`# runtime: ...`, from the library that defines `GOMP_parallel`); the runtime
 * and `OMP_WAIT_POLICY` are chosen by the caller (bench/gomp/overhead.sh runs it under libgomp, LLVM's libomp and
 * the drop-in, interleaved, and prints the table). Built by `gcc -fopenmp`, as a user's program is.
 *
 * Constructs: PARALLEL, FOR, PARALLEL_FOR, BARRIER, SINGLE, CRITICAL, LOCK, ORDERED, ATOMIC, REDUCTION measure one
 * construct each (per construct, as the thread that runs them all sees it); the schedule rows measure one loop of
 * `schedule_iterations` iterations inside a region (per loop). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { schedule_iterations = 1024 };

static int delay_length = 10; /* iterations of `delay`'s loop; about 20-40 ns */
static int outer_reps = 11;
static double target_us = 500.0; /* the calibrated length of one measurement */

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* A fixed amount of work the compiler cannot remove. */
static void delay(int length) {
    volatile double a = 0.0;
    for (int i = 0; i < length; ++i) a += (double)i;
}

typedef void (*test_fn)(long inner);

/* ---- One construct per test, run `inner` times by the team (or per thread where it is serial). ---- */

static void reference_serial(long inner) {
    for (long r = 0; r < inner; ++r) delay(delay_length);
}

static void test_parallel(long inner) {
    for (long r = 0; r < inner; ++r) {
#pragma omp parallel
        delay(delay_length);
    }
}

static void test_for(long inner) {
#pragma omp parallel
    {
        int const threads = omp_get_num_threads();
        for (long r = 0; r < inner; ++r) {
#pragma omp for
            for (int i = 0; i < threads; ++i) delay(delay_length);
        }
    }
}

static void test_parallel_for(long inner) {
    int const threads = omp_get_max_threads();
    for (long r = 0; r < inner; ++r) {
#pragma omp parallel for
        for (int i = 0; i < threads; ++i) delay(delay_length);
    }
}

static void test_barrier(long inner) {
#pragma omp parallel
    for (long r = 0; r < inner; ++r) {
        delay(delay_length);
#pragma omp barrier
    }
}

static void test_single(long inner) {
#pragma omp parallel
    for (long r = 0; r < inner; ++r) {
#pragma omp single
        delay(delay_length);
    }
}

/* CRITICAL and LOCK: `inner` sections in all, each thread its share; they run one at a time, so the reference is
 * `inner` delays on one thread. */
static void test_critical(long inner) {
#pragma omp parallel
    {
        long const share = inner / omp_get_num_threads();
        for (long r = 0; r < share; ++r) {
#pragma omp critical
            delay(delay_length);
        }
    }
}

static omp_lock_t lock;

static void test_lock(long inner) {
#pragma omp parallel
    {
        long const share = inner / omp_get_num_threads();
        for (long r = 0; r < share; ++r) {
            omp_set_lock(&lock);
            delay(delay_length);
            omp_unset_lock(&lock);
        }
    }
}

/* ORDERED: `inner` ordered sections in a loop with chunk 1, so the turn passes between threads at every one. */
static void test_ordered(long inner) {
#pragma omp parallel
    {
#pragma omp for ordered schedule(static, 1)
        for (long r = 0; r < inner; ++r) {
#pragma omp ordered
            delay(delay_length);
        }
    }
}

static double atomic_sum;

static void test_atomic(long inner) {
#pragma omp parallel
    {
        long const share = inner / omp_get_num_threads();
        for (long r = 0; r < share; ++r) {
#pragma omp atomic
            atomic_sum += 1.0;
        }
    }
}

static double reduction_sink;

static void test_reduction(long inner) {
    for (long r = 0; r < inner; ++r) {
        double sum = 0.0;
#pragma omp parallel reduction(+ : sum)
        {
            delay(delay_length);
            sum += 1.0;
        }
        reduction_sink += sum;
    }
}

/* ---- Schedules: `inner` loops of `schedule_iterations` iterations inside one region. ---- */

static void reference_schedule(long inner) {
    int const threads = omp_get_max_threads();
    for (long r = 0; r < inner; ++r)
        for (int i = 0; i < (schedule_iterations + threads - 1) / threads; ++i) delay(delay_length);
}

#define FORKUNION_SCHEDULE_TEST(name, clause)                                                                          \
    static void name(long inner) {                                                                                     \
        _Pragma("omp parallel") for (long r = 0; r < inner; ++r) {                                                     \
            _Pragma(clause) for (int i = 0; i < schedule_iterations; ++i) delay(delay_length);                         \
        }                                                                                                              \
    }

FORKUNION_SCHEDULE_TEST(test_static, "omp for schedule(static)")
FORKUNION_SCHEDULE_TEST(test_static_1, "omp for schedule(static, 1)")
FORKUNION_SCHEDULE_TEST(test_dynamic_1, "omp for schedule(dynamic, 1)")
FORKUNION_SCHEDULE_TEST(test_dynamic_16, "omp for schedule(dynamic, 16)")
FORKUNION_SCHEDULE_TEST(test_monotonic_1, "omp for schedule(monotonic : dynamic, 1)")
FORKUNION_SCHEDULE_TEST(test_monotonic_16, "omp for schedule(monotonic : dynamic, 16)")
FORKUNION_SCHEDULE_TEST(test_guided_1, "omp for schedule(guided, 1)")
FORKUNION_SCHEDULE_TEST(test_guided_16, "omp for schedule(guided, 16)")

static void test_taskloop_1(long inner) {
#pragma omp parallel
#pragma omp single
    for (long r = 0; r < inner; ++r) {
#pragma omp taskloop grainsize(1)
        for (int i = 0; i < schedule_iterations; ++i) delay(delay_length);
    }
}

/* ---- Measurement ---- */

static int compare_doubles(void const *a, void const *b) {
    double const x = *(double const *)a, y = *(double const *)b;
    return (x > y) - (x < y);
}

/* The smallest power of two of repetitions whose run takes `target_us`, with at least one repetition. */
static long calibrate(test_fn test) {
    long inner = 1;
    for (;;) {
        double const start = now_us();
        test(inner);
        if (now_us() - start >= target_us || inner >= (1L << 24)) return inner;
        inner *= 2;
    }
}

static double time_us(test_fn test, long inner) {
    double const start = now_us();
    test(inner);
    return now_us() - start;
}

static void measure(char const *name, test_fn test, test_fn reference) {
    long inner = calibrate(test);
    /* A slow moment ends a calibration early, with too few repetitions for the region start to fade out of the
       per-construct figure (ATOMIC's region start divided by 1 reads as a 4 us atomic): keep the larger count. */
    long const again = calibrate(test);
    if (again > inner) inner = again;
    double with[101], without[101];
    for (int o = 0; o < outer_reps; ++o) {
        /* Test and reference alternate, so a slow moment of the machine tends to fall on both. */
        with[o] = time_us(test, inner) / (double)inner;
        without[o] = time_us(reference, inner) / (double)inner;
    }
    qsort(with, (size_t)outer_reps, sizeof with[0], compare_doubles);
    qsort(without, (size_t)outer_reps, sizeof without[0], compare_doubles);
    printf("ROW %-16s %10.3f %10.3f %ld\n", name, with[outer_reps / 2] - without[outer_reps / 2], with[0] - without[0],
           inner);
    fflush(stdout);
}

static void empty(long inner) {
    (void)inner;
}

struct construct {
    char const *name;
    test_fn test;
    test_fn reference;
};

static struct construct const constructs[] = {
    {"PARALLEL", test_parallel, reference_serial},
    {"FOR", test_for, reference_serial},
    {"PARALLEL_FOR", test_parallel_for, reference_serial},
    {"BARRIER", test_barrier, reference_serial},
    {"SINGLE", test_single, reference_serial},
    {"CRITICAL", test_critical, reference_serial},
    {"LOCK", test_lock, reference_serial},
    {"ORDERED", test_ordered, reference_serial},
    {"ATOMIC", test_atomic, empty},
    {"REDUCTION", test_reduction, reference_serial},
    {"STATIC", test_static, reference_schedule},
    {"STATIC_1", test_static_1, reference_schedule},
    {"DYNAMIC_1", test_dynamic_1, reference_schedule},
    {"DYNAMIC_16", test_dynamic_16, reference_schedule},
    {"MONOTONIC_1", test_monotonic_1, reference_schedule},
    {"MONOTONIC_16", test_monotonic_16, reference_schedule},
    {"GUIDED_1", test_guided_1, reference_schedule},
    {"GUIDED_16", test_guided_16, reference_schedule},
    {"TASKLOOP_1", test_taskloop_1, reference_schedule},
};

static void usage(FILE *to) {
    fprintf(to,
            "usage: forkunion_bench_omp_overhead [--outer N] [--target-us T] [--delay N] [--list]\n"
            "  prints 'ROW <construct> <median us> <min us> <inner>' per construct: the median over N (odd, 1..101;\n"
            "  default 11) measurements of the construct's overhead, each calibrated to take about T us\n"
            "  (default 500). The runtime and OMP_WAIT_POLICY are the caller's; bench/gomp/overhead.sh runs\n"
            "  it under each runtime and prints the table. --list prints the construct names only.\n");
}

static int parse_count(char const *text, long low, long high, long *out) {
    char *end = NULL;
    long const value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < low || value > high) return 0;
    *out = value;
    return 1;
}

int main(int argc, char **argv) {
    size_t const count = sizeof constructs / sizeof constructs[0];
    for (int a = 1; a < argc; ++a) {
        long value = 0;
        if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[a], "--list") == 0) {
            for (size_t c = 0; c < count; ++c) printf("%s\n", constructs[c].name);
            return 0;
        }
        if (a + 1 < argc && strcmp(argv[a], "--outer") == 0 && parse_count(argv[a + 1], 1, 101, &value) &&
            value % 2 == 1) {
            outer_reps = (int)value;
        } else if (a + 1 < argc && strcmp(argv[a], "--target-us") == 0 &&
                   parse_count(argv[a + 1], 1, 10000000, &value)) {
            target_us = (double)value;
        } else if (a + 1 < argc && strcmp(argv[a], "--delay") == 0 && parse_count(argv[a + 1], 0, 1000000, &value)) {
            delay_length = (int)value;
        } else {
            fprintf(stderr,
                    "forkunion_bench_omp_overhead: bad argument '%s' (--outer takes an odd count from 1 to 101, "
                    "--target-us and --delay a non-negative integer); --help for usage\n",
                    argv[a]);
            return 2;
        }
        ++a;
    }

    Dl_info info;
    char const *server = "unknown";
    void *const parallel = dlsym(RTLD_DEFAULT, "GOMP_parallel");
    if (parallel && dladdr(parallel, &info) && info.dli_fname) server = info.dli_fname;
    char const *policy = getenv("OMP_WAIT_POLICY");
    printf("# runtime: %s\n# threads: %d, OMP_WAIT_POLICY=%s, outer %d, target %.0f us, delay %d\n", server,
           omp_get_max_threads(), policy ? policy : "(unset)", outer_reps, target_us, delay_length);

    omp_init_lock(&lock);
    test_parallel(16); /* the team exists before the first measurement */
    for (size_t c = 0; c < count; ++c) measure(constructs[c].name, constructs[c].test, constructs[c].reference);
    omp_destroy_lock(&lock);
    return reduction_sink < 0.0 || atomic_sum < 0.0;
}
