/**
 *  @file   test/c_api_test.c
 *  @brief  The C99 API (`include/forkunion.h`), tested from C: every function and every status path, each group
 *          repeated under four capability masks a pool can be created with.
 *
 *  Usage: `forkunion_c_api_test [group]`: runs one group (`status`, `capabilities`, `topology`, `lifecycle`,
 *  `dispatch`, `split`, `contention`, `idle`, `memory`, `fabric`), or all of them. Exit status 0 when every check
 *  passed; each failure prints its file, line, expression and mask.
 *
 *  Build: C99, `-pedantic -Wall -Wextra -Werror`, POSIX threads and clocks. The recorded machine
 *  (`FORKUNION_TEST_SYSFS`) is hwloc's `32intel64-2p8co2t+8ve`: its facts below come from the fixture's
 *  `expected.json`, not from the library.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h> /* `pthread_create` */
#include <sched.h>   /* `sched_yield` */
#include <stdint.h>  /* `SIZE_MAX` */
#include <stdio.h>   /* `fprintf` */
#include <stdlib.h>  /* `calloc` */
#include <string.h>  /* `strcmp` */
#include <time.h>    /* `clock_gettime` */
#if defined(_WIN32)
#include <windows.h> /* `GetActiveProcessorCount`, `GetSystemInfo` */
#else
#include <sys/stat.h> /* `mkdir` */
#include <unistd.h>   /* `sysconf`, `rmdir`, `unlink` */
#endif

#include <forkunion.h>

#if !defined(FORKUNION_TEST_SYSFS)
#error "FORKUNION_TEST_SYSFS: the extracted 32intel64-2p8co2t+8ve tree"
#endif
#if !defined(FORKUNION_TEST_VERSION_MAJOR) || !defined(FORKUNION_TEST_VERSION_MINOR) ||                                \
    !defined(FORKUNION_TEST_VERSION_PATCH)
#error "FORKUNION_TEST_VERSION_*: the project version CMake configured"
#endif

#if !defined(FORKUNION_TEST_RECORDED_SYSFS)
#error "FORKUNION_TEST_RECORDED_SYSFS: 1 where the library reads recorded sysfs trees (Linux), else 0"
#endif

/* WebAssembly built without -pthread starts no thread: only inclusive pools of one spawn there, and the parts that
 * need more threads skip, saying so. */
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define FORKUNION_TEST_THREADS 0
#else
#define FORKUNION_TEST_THREADS 1
#endif

/* ---- A tiny harness ---------------------------------------------------------------------------------------- */

static unsigned long checks_count = 0, failures_count = 0, skips_count = 0;
static char const *mask_label = "-";

/** Notes a part of a group this build cannot run, with the reason; a group that only skips exits with 77. */
static void skip(char const *what, char const *why) {
    ++skips_count;
    printf("skipped [mask: %s]: %s: %s\n", mask_label, what, why);
}

#define CHECK(condition)                                                                                               \
    do {                                                                                                               \
        ++checks_count;                                                                                                \
        if (!(condition)) {                                                                                            \
            ++failures_count;                                                                                          \
            fprintf(stderr, "%s:%d: CHECK(%s) failed [mask: %s]\n", __FILE__, __LINE__, #condition, mask_label);       \
        }                                                                                                              \
    } while (0)

#define CHECK_STATUS(expression, expected)                                                                             \
    do {                                                                                                               \
        int const check_status_ = (int)(expression);                                                                   \
        ++checks_count;                                                                                                \
        if (check_status_ != (int)(expected)) {                                                                        \
            ++failures_count;                                                                                          \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %s [mask: %s]\n", __FILE__, __LINE__, #expression,   \
                    check_status_, fu_status_to_string((fu_status_t)check_status_), #expected, mask_label);            \
        }                                                                                                              \
    } while (0)

#if defined(_WIN32)
/** Online logical processors, asked of the OS directly: every processor group. */
static long online_processors(void) {
    return (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
}

/** The OS page size. */
static size_t page_size(void) {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return (size_t)info.dwPageSize;
}
#else
/** Online logical processors, asked of the OS directly. */
static long online_processors(void) {
    return sysconf(_SC_NPROCESSORS_ONLN);
}

/** The OS page size. WebAssembly has none: the portable allocators' documented 4 KiB granule stands in (sysconf
 *  there answers 64 KiB, the unit linear memory grows by). */
static size_t page_size(void) {
#if defined(__EMSCRIPTEN__)
    return 4096;
#else
    return (size_t)sysconf(_SC_PAGESIZE);
#endif
}
#endif

/** The recorded two-socket Xeon, or NULL (and a skip of `what`) where the library reads no sysfs trees. */
static fu_topology_t recorded_machine(char const *what) {
    fu_topology_t recorded = NULL;
    if (!FORKUNION_TEST_RECORDED_SYSFS) {
        skip(what, "recorded sysfs trees are read by the Linux back end only");
        return NULL;
    }
    recorded = fu_topology_new_from_sysfs(FORKUNION_TEST_SYSFS);
    CHECK(recorded != NULL);
    return recorded;
}

/** Seconds on the monotonic clock. */
static double now_seconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec + (double)time.tv_nsec * 1e-9;
}

/** A bounded wait: polls `fu_pool_is_complete` for at most 10 s (a hung pool fails instead of hanging CI). */
static int eventually_complete(fu_pool_t pool, size_t generation) {
    double const deadline = now_seconds() + 10.0;
    while (now_seconds() < deadline) {
        if (fu_pool_is_complete(pool, generation) == 1) return 1;
        sched_yield();
    }
    return 0;
}

/** The static split of the C API's contract: thread t of T starts at q*t + min(t, r) and runs q + (t < r). */
static void expected_block(size_t n, size_t threads, size_t thread, size_t *first, size_t *count) {
    size_t const q = n / threads, r = n % threads;
    *first = q * thread + (thread < r ? thread : r);
    *count = q + (thread < r ? 1 : 0);
}

/** The thread that the static split gives `task`. */
static size_t expected_owner(size_t n, size_t threads, size_t task) {
    size_t thread = 0;
    for (; thread != threads; ++thread) {
        size_t first, count;
        expected_block(n, threads, thread, &first, &count);
        if (task >= first && task < first + count) break;
    }
    return thread;
}

/* ---- Capability masks every group runs under --------------------------------------------------------------- */

typedef struct mask_t {
    char const *label;
    fu_capabilities_t allowed;
} mask_t;

static mask_t const masks[] = {
    {"everything", fu_capabilities_all_k},
    {"no waits beyond pause", fu_capabilities_all_k & ~fu_capabilities_waits_k},
    {"no pinning", fu_capabilities_all_k & ~fu_capability_thread_pinning_k},
    {"no placement", fu_capabilities_all_k & ~fu_capability_memory_placement_k},
};

/* Thread counts of the dispatch grids: one thread, the machine, and more threads than cores. Emulated (cross)
 * builds define FORKUNION_TEST_QUICK: the first mask and a thinner grid, as the C++ suites thin theirs. */
#if defined(FORKUNION_TEST_QUICK)
static size_t const thread_counts[] = {1, 3};
enum { masks_run = 1 };
#else
static size_t const thread_counts[] = {1, 2, 3, 5};
enum { masks_run = sizeof(masks) / sizeof(masks[0]) };
#endif
enum { thread_counts_count = sizeof(thread_counts) / sizeof(thread_counts[0]) };

static fu_topology_t live_topology = NULL; /* harvested once for every group */

/* Polls until `workers` workers are parked in the kernel (60 s at most, yielding between polls): 1 if they are. */
static int wait_until_parked(fu_pool_t pool, size_t workers) {
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        if (fu_pool_parked_threads_count(pool) == workers) return 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 60) return fu_pool_parked_threads_count(pool) == workers;
        sched_yield();
    }
}

static fu_pool_t spawned_pool(fu_capabilities_t allowed, size_t threads, fu_caller_exclusivity_t exclusivity) {
    fu_pool_t pool = fu_pool_new("c_api", allowed);
    CHECK(pool != NULL);
    if (pool) CHECK_STATUS(fu_pool_spawn(live_topology, pool, threads, exclusivity), fu_success_k);
    return pool;
}

/* ---- status ------------------------------------------------------------------------------------------------ */

static void test_status(fu_capabilities_t allowed) {
    (void)allowed;
    /* The names are the contract (the same as the C++ `status_code_t` names): one per code, "unknown" otherwise. */
    CHECK(strcmp(fu_status_to_string(fu_success_k), "success") == 0);
    CHECK(strcmp(fu_status_to_string(fu_bad_alloc_k), "bad_alloc") == 0);
    CHECK(strcmp(fu_status_to_string(fu_invalid_argument_k), "invalid_argument") == 0);
    CHECK(strcmp(fu_status_to_string(fu_already_spawned_k), "already_spawned") == 0);
    CHECK(strcmp(fu_status_to_string(fu_not_spawned_k), "not_spawned") == 0);
    CHECK(strcmp(fu_status_to_string(fu_forked_k), "forked") == 0);
    CHECK(strcmp(fu_status_to_string(fu_thread_refused_k), "thread_refused") == 0);
    CHECK(strcmp(fu_status_to_string(fu_contended_k), "contended") == 0);
    CHECK(strcmp(fu_status_to_string(fu_unsupported_k), "unsupported") == 0);
    CHECK(strcmp(fu_status_to_string(fu_placement_refused_k), "placement_refused") == 0);
    CHECK(strcmp(fu_status_to_string(fu_stale_generation_k), "stale_generation") == 0);
    CHECK(strcmp(fu_status_to_string((fu_status_t)-100), "unknown") == 0);
    CHECK(strcmp(fu_status_to_string((fu_status_t)1), "unknown") == 0);
    /* Every failure is negative, so `< 0` tests for any of them. */
    CHECK(fu_bad_alloc_k < 0 && fu_invalid_argument_k < 0 && fu_already_spawned_k < 0 && fu_not_spawned_k < 0);
    CHECK(fu_thread_refused_k < 0 && fu_contended_k < 0 && fu_unsupported_k < 0 && fu_placement_refused_k < 0);
    CHECK(fu_stale_generation_k < 0);

    CHECK(fu_version_major() == FORKUNION_TEST_VERSION_MAJOR);
    CHECK(fu_version_minor() == FORKUNION_TEST_VERSION_MINOR);
    CHECK(fu_version_patch() == FORKUNION_TEST_VERSION_PATCH);
}

/* ---- capabilities ------------------------------------------------------------------------------------------ */

static void test_capabilities(fu_capabilities_t allowed) {
    fu_capabilities_t const comptime = fu_comptime_capabilities();
    fu_capabilities_t const runtime = fu_runtime_capabilities();
    char text[512];
    size_t length;
    CHECK((comptime & fu_capability_os_threads_k) != 0);
    CHECK((runtime & fu_capability_os_threads_k) != 0);
    CHECK(fu_runtime_capabilities() == runtime); /* cached: stable */
#if defined(__linux__) || defined(_WIN32)
    /* Linux and Windows: the OS facilities are compiled in, and the topology and affinity calls are reachable. */
    CHECK((comptime & fu_capability_topology_k) && (comptime & fu_capability_thread_pinning_k));
    CHECK((comptime & fu_capability_memory_placement_k) && (comptime & fu_capability_huge_pages_k));
    CHECK((runtime & fu_capability_topology_k) && (runtime & fu_capability_thread_pinning_k));
#else
    /* Elsewhere (WebAssembly): the portable back ends claim no OS facility beyond threads. */
    CHECK((comptime & (fu_capability_topology_k | fu_capability_thread_pinning_k | fu_capability_memory_placement_k |
                       fu_capability_huge_pages_k)) == 0);
    CHECK((runtime & (fu_capability_topology_k | fu_capability_thread_pinning_k)) == 0);
#endif

    /* `snprintf` semantics: the whole length whatever the capacity, a terminated prefix, nothing for NULL. */
    CHECK(fu_name_capabilities(fu_capabilities_none_k, text, sizeof(text)) == 4 && strcmp(text, "none") == 0);
    CHECK(fu_name_capabilities(fu_capability_os_threads_k, text, sizeof(text)) == strlen("os_threads"));
    CHECK(strcmp(text, "os_threads") == 0);
    length = fu_name_capabilities(fu_capability_os_threads_k | fu_capability_topology_k, NULL, 0);
    CHECK(length == strlen("os_threads,topology"));
    CHECK(fu_name_capabilities(fu_capability_os_threads_k | fu_capability_topology_k, text, 5) == length);
    CHECK(strcmp(text, "os_t") == 0);
    text[0] = 'x';
    CHECK(fu_name_capabilities(fu_capability_os_threads_k, text, 0) == strlen("os_threads") && text[0] == 'x');
    CHECK(fu_name_capabilities(fu_capabilities_all_k, text, sizeof(text)) < sizeof(text));
    CHECK(strstr(text, "x86_waitpkg,") == text && strstr(text, "huge_pages") != NULL);

    /* Parsing reads back what naming writes; a bad token changes nothing. */
    {
        fu_capabilities_t parsed = fu_capability_x86_raoint_k;
        CHECK(fu_name_capabilities(allowed, text, sizeof(text)) < sizeof(text));
        CHECK_STATUS(fu_parse_capabilities(text, &parsed), fu_success_k);
        CHECK(parsed == allowed);
        CHECK_STATUS(fu_parse_capabilities(" os_threads , topology", &parsed), fu_success_k);
        CHECK(parsed == (fu_capability_os_threads_k | fu_capability_topology_k));
        CHECK_STATUS(fu_parse_capabilities("", &parsed), fu_success_k);
        CHECK(parsed == fu_capabilities_none_k);
        parsed = fu_capability_os_threads_k;
        CHECK_STATUS(fu_parse_capabilities("os_threads,warp_drive", &parsed), fu_invalid_argument_k);
        CHECK_STATUS(fu_parse_capabilities("os_threads,", &parsed), fu_invalid_argument_k);
        CHECK_STATUS(fu_parse_capabilities(NULL, &parsed), fu_invalid_argument_k);
        CHECK_STATUS(fu_parse_capabilities("none", NULL), fu_invalid_argument_k);
        CHECK(parsed == fu_capability_os_threads_k);
    }

    /* A pool's effective set: what it was allowed, narrowed to this build and this machine. */
    {
        fu_pool_t pool = fu_pool_new("caps", allowed);
        CHECK(pool != NULL);
        CHECK(fu_pool_capabilities(pool) == (allowed & comptime & runtime));
        if (!(allowed & fu_capabilities_waits_k)) CHECK((fu_pool_capabilities(pool) & fu_capabilities_waits_k) == 0);
        if (!(allowed & fu_capability_thread_pinning_k))
            CHECK((fu_pool_capabilities(pool) & fu_capability_thread_pinning_k) == 0);
        fu_pool_delete(pool);
    }
    CHECK(fu_pool_capabilities(NULL) == fu_capabilities_none_k);
}

/* ---- topology ---------------------------------------------------------------------------------------------- */

static void test_topology(fu_capabilities_t allowed) {
    fu_topology_t const live = live_topology;
    size_t const domains = fu_compute_domains_count(live);
    size_t cores_total = 0, domain;
    (void)allowed;
    CHECK(domains >= 1 && fu_memory_domains_count(live) >= 1 && fu_compute_levels_count(live) >= 1);
    CHECK(fu_topology_harvested(live) == 1);
    CHECK(fu_allowed_cores_count(live) == fu_logical_cores_count(live));
    CHECK(fu_online_cores_count(live) >= fu_logical_cores_count(live));
    CHECK((long)fu_online_cores_count(live) == online_processors());
    for (domain = 0; domain != domains; ++domain) {
        size_t const cores = fu_logical_cores_count_in(live, domain);
        unsigned ids[1024];
        size_t i;
        CHECK(cores >= 1 && cores <= 1024);
        CHECK(fu_cores_in(live, domain, NULL, 0) == cores);
        CHECK(fu_cores_in(live, domain, ids, 1024) == cores);
        for (i = 1; i < cores; ++i) CHECK(ids[i - 1] < ids[i]);
        CHECK(fu_local_memory_of(live, domain) < fu_memory_domains_count(live));
        CHECK(fu_compute_level_in(live, domain) < fu_compute_levels_count(live));
        cores_total += cores;
    }
    CHECK(cores_total == fu_logical_cores_count(live));
    CHECK(fu_declared_distance(live, 0, 0) == 10);
    CHECK(fu_volume_ram(live) >= fu_volume_ram_in(live, 0));
#if defined(__linux__) || defined(_WIN32)
    CHECK(fu_volume_ram_in(live, 0) > 0); /* WebAssembly's one memory domain has no known size */
#endif
    /* Out of range reads 0; so does a NULL topology, whose loops run zero times. */
    CHECK(fu_logical_cores_count_in(live, domains) == 0 && fu_cores_in(live, domains, NULL, 0) == 0);
    CHECK(fu_compute_level_in(live, domains) == 0 && fu_compute_capacity_in(live, domains) == 0);
    CHECK(fu_compute_cache_bytes_in(live, domains) == 0 && fu_local_memory_of(live, domains) == 0);
    CHECK(fu_volume_ram_in(live, fu_memory_domains_count(live)) == 0);
    CHECK(fu_declared_distance(live, 0, fu_memory_domains_count(live)) == 0);
    CHECK(fu_huge_page_size_in(live, 0, 1000) == 0);
    CHECK(fu_compute_domains_count(NULL) == 0 && fu_memory_domains_count(NULL) == 0);
    CHECK(fu_logical_cores_count(NULL) == 0 && fu_compute_levels_count(NULL) == 0 && fu_volume_ram(NULL) == 0);
    CHECK(fu_topology_harvested(NULL) == 0 && fu_cores_in(NULL, 0, NULL, 0) == 0);
    CHECK(fu_huge_pages_count(NULL) == 0 && fu_volume_huge_pages(NULL) == 0 && fu_online_cores_count(NULL) == 0);
    CHECK(fu_huge_pages_count_in(NULL, 0) == 0 && fu_volume_huge_pages_in(NULL, 0) == 0);
    CHECK(fu_huge_page_sizes_count_in(NULL, 0) == 0 && fu_memory_node_id(NULL, 0) == 0);
    fu_topology_delete(NULL);

    /* A recorded two-socket Xeon: its facts are hwloc's, from the fixture's expected.json. */
    {
        fu_topology_t recorded = recorded_machine("the recorded two-socket Xeon's facts");
        unsigned ids[16];
        if (recorded) {
            CHECK(fu_topology_harvested(recorded) == 1);
            CHECK(fu_compute_domains_count(recorded) == 2 && fu_memory_domains_count(recorded) == 2);
            CHECK(fu_logical_cores_count(recorded) == 32 && fu_logical_cores_count_in(recorded, 1) == 16);
            CHECK(fu_cores_in(recorded, 0, ids, 16) == 16);
            CHECK(ids[0] == 0 && ids[7] == 7 && ids[8] == 16 && ids[15] == 23); /* node0 = 0-7,16-23 */
            CHECK(fu_local_memory_of(recorded, 1) == 1 && fu_memory_node_id(recorded, 1) == 1);
            CHECK(fu_declared_distance(recorded, 0, 1) == 21 && fu_declared_distance(recorded, 1, 1) == 10);
            CHECK(fu_volume_ram_in(recorded, 0) == 49075843072ull);
            CHECK(fu_volume_ram(recorded) == 49075843072ull + 50708443136ull);
            CHECK(fu_compute_cache_bytes_in(recorded, 0) == 11534336ull); /* the package's L3 */
            CHECK(fu_compute_capacity_in(recorded, 0) == 0);              /* no cpu_capacity on x86 */
            CHECK(fu_huge_pages_count_in(recorded, 1) == 2048);           /* 2048 free 2 MiB pages */
            CHECK(fu_volume_huge_pages_in(recorded, 1) == 2048ull << 21);
            CHECK(fu_huge_page_sizes_count_in(recorded, 0) == 2 && fu_huge_page_size_in(recorded, 0, 0) == 2u << 20);
            CHECK(fu_huge_page_size_in(recorded, 0, 1) == 1u << 30);
            CHECK(fu_compute_level_in(recorded, 1) == 0 && fu_compute_levels_count(recorded) == 1);
        }
        fu_topology_delete(recorded);
    }
    CHECK(fu_topology_new_from_sysfs(NULL) == NULL);
    CHECK(fu_topology_new_from_sysfs("/nonexistent/forkunion") == NULL);
    if (!FORKUNION_TEST_RECORDED_SYSFS) /* a tree that exists is refused too: no sysfs reader here */
        CHECK(fu_topology_new_from_sysfs(FORKUNION_TEST_SYSFS) == NULL);
}

/* ---- lifecycle --------------------------------------------------------------------------------------------- */

static void count_thread(void *context, size_t thread, size_t compute_domain) {
    size_t *seen = (size_t *)context;
    (void)compute_domain;
    ++seen[thread]; /* one slot per thread: no two callbacks share one */
}

static void never_called(void *context, size_t task, size_t thread, size_t compute_domain) {
    (void)task, (void)thread, (void)compute_domain;
    ++*(size_t *)context;
}

static void never_called_slice(void *context, size_t first, size_t count, size_t thread, size_t compute_domain) {
    (void)first, (void)count, (void)thread, (void)compute_domain;
    ++*(size_t *)context;
}

static void never_called_thread(void *context, size_t thread, size_t compute_domain) {
    (void)thread, (void)compute_domain;
    ++*(size_t *)context;
}

/** Every dispatch form, refused with `expected` and running nothing. */
static void check_refused(fu_pool_t pool, fu_status_t expected) {
    size_t calls = 0, generation = 7;
    CHECK_STATUS(fu_pool_for_threads(pool, never_called_thread, &calls), expected);
    CHECK_STATUS(fu_pool_for_n(pool, 10, never_called, &calls), expected);
    CHECK_STATUS(fu_pool_for_n_dynamic(pool, 10, never_called, &calls), expected);
    CHECK_STATUS(fu_pool_for_slices(pool, 10, never_called_slice, &calls), expected);
    CHECK_STATUS(fu_pool_unsafe_for_threads(pool, never_called_thread, &calls, &generation), expected);
    CHECK(generation == 0);
    CHECK(calls == 0);
}

static void test_lifecycle(fu_capabilities_t allowed) {
    fu_pool_t pool = fu_pool_new("lifecycle", allowed);
    size_t seen[8] = {0}, calls = 0, generation = 1, round;
    CHECK(pool != NULL);
    if (!pool) return;

    /* NULL handles and callbacks. */
    CHECK_STATUS(fu_pool_spawn(NULL, pool, 2, fu_caller_inclusive_k), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_spawn(live_topology, NULL, 2, fu_caller_inclusive_k), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_spawn_on(NULL, pool, 0, 2, fu_caller_inclusive_k), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_spawn_on(live_topology, NULL, 0, 2, fu_caller_inclusive_k), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_terminate(NULL), fu_invalid_argument_k);
    check_refused(NULL, fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_nap(NULL), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_sleep(NULL, 0), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_is_complete(NULL, 1), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_unsafe_join(NULL, 1), fu_invalid_argument_k);
    CHECK(fu_pool_threads_count(NULL) == 0 && fu_pool_compute_domains_count(NULL) == 0);
    CHECK(fu_pool_memory_usage(NULL) == 0 && fu_pool_caller_exclusivity(NULL) == fu_caller_inclusive_k);
    CHECK(fu_pool_threads_count_in(NULL, 0) == 0 && fu_pool_unpinned_threads_count(NULL) == 0);
    CHECK(fu_pool_memory_placed(NULL) == 0);
    fu_pool_delete(NULL);

    /* Before spawn: every dispatch, nap and sleep is refused with `not_spawned`; bad spawns change nothing. */
    check_refused(pool, fu_not_spawned_k);
    CHECK_STATUS(fu_pool_nap(pool), fu_not_spawned_k);
    CHECK_STATUS(fu_pool_sleep(pool, 0), fu_not_spawned_k);
    CHECK_STATUS(fu_pool_terminate(pool), fu_not_spawned_k);
    CHECK_STATUS(fu_pool_spawn(live_topology, pool, 0, fu_caller_inclusive_k), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_spawn(live_topology, pool, 2, (fu_caller_exclusivity_t)7), fu_invalid_argument_k);
    CHECK_STATUS(
        fu_pool_spawn_on(live_topology, pool, fu_compute_domains_count(live_topology), 2, fu_caller_inclusive_k),
        fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_spawn_on(live_topology, pool, (size_t)-1, 2, fu_caller_inclusive_k), fu_invalid_argument_k);
    /* A thread table too large to allocate: refused before any thread starts. */
    CHECK_STATUS(fu_pool_spawn(live_topology, pool, SIZE_MAX / 2, fu_caller_inclusive_k), fu_bad_alloc_k);
    CHECK(fu_pool_threads_count(pool) == 0 && fu_pool_compute_domains_count(pool) == 0);
    CHECK(fu_pool_threads_count_in(pool, 0) == 0 && fu_pool_unpinned_threads_count(pool) == 0);
    CHECK(fu_pool_memory_placed(pool) == 0);

    /* Spawn, a repeated spawn, terminate, a repeated terminate, and a respawn of another shape, twice over. */
    if (!FORKUNION_TEST_THREADS)
        skip("spawns of 3 and 2 threads and a deleted spawned pool", "this build has no threads");
    for (round = 0; round != 2 * FORKUNION_TEST_THREADS; ++round) {
        size_t const threads = round ? 2 : 3;
        fu_caller_exclusivity_t const exclusivity = round ? fu_caller_exclusive_k : fu_caller_inclusive_k;
        size_t t, usage;
        memset(seen, 0, sizeof(seen));
        CHECK_STATUS(fu_pool_spawn(live_topology, pool, threads, exclusivity), fu_success_k);
        CHECK(fu_pool_threads_count(pool) == threads && fu_pool_caller_exclusivity(pool) == exclusivity);
        CHECK(fu_pool_compute_domains_count(pool) == 1);
        CHECK(fu_pool_threads_count_in(pool, 0) == threads && fu_pool_threads_count_in(pool, 1) == 0);
        if (!(fu_pool_capabilities(pool) & fu_capability_thread_pinning_k))
            CHECK(fu_pool_unpinned_threads_count(pool) == threads);
        else
            CHECK(fu_pool_unpinned_threads_count(pool) == 0); /* this machine's own cores: every pin holds */
        CHECK(fu_pool_memory_placed(pool) == ((fu_pool_capabilities(pool) & fu_capability_memory_placement_k) != 0));
        usage = fu_pool_memory_usage(pool);
        CHECK(usage > threads * 64);
        CHECK_STATUS(fu_pool_spawn(live_topology, pool, threads + 1, exclusivity), fu_already_spawned_k);
        CHECK_STATUS(fu_pool_spawn_on(live_topology, pool, 0, 1, exclusivity), fu_already_spawned_k);
        CHECK(fu_pool_threads_count(pool) == threads && fu_pool_memory_usage(pool) == usage);
        CHECK_STATUS(fu_pool_for_threads(pool, count_thread, seen), fu_success_k);
        for (t = 0; t != threads; ++t) CHECK(seen[t] == 1);
        CHECK(seen[threads] == 0);
        CHECK_STATUS(fu_pool_for_threads(pool, NULL, seen), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_for_n(pool, 4, NULL, seen), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_for_n_dynamic(pool, 4, NULL, seen), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_for_slices(pool, 4, NULL, seen), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, NULL, seen, &generation), fu_invalid_argument_k);
        CHECK(generation == 0);
        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, never_called_thread, &calls, NULL), fu_invalid_argument_k);
        CHECK(calls == 0);
        CHECK_STATUS(fu_pool_terminate(pool), fu_success_k);
        CHECK(fu_pool_threads_count(pool) == 0);
        CHECK_STATUS(fu_pool_terminate(pool), fu_not_spawned_k);
        check_refused(pool, fu_not_spawned_k); /* dispatch after terminate */
        CHECK_STATUS(fu_pool_nap(pool), fu_not_spawned_k);
    }

    /* Deleting a spawned pool terminates it (ASan's leak checker and the thread count prove nothing stays). */
    if (FORKUNION_TEST_THREADS)
        CHECK_STATUS(fu_pool_spawn(live_topology, pool, 2, fu_caller_exclusive_k), fu_success_k);
    fu_pool_delete(pool);

    /* Without `os_threads` only a 1-thread inclusive pool, the caller alone, can run. */
    pool = fu_pool_new(NULL, allowed & ~fu_capability_os_threads_k);
    CHECK(pool != NULL);
    if (!pool) return;
    CHECK((fu_pool_capabilities(pool) & fu_capability_os_threads_k) == 0);
    CHECK_STATUS(fu_pool_spawn(live_topology, pool, 2, fu_caller_inclusive_k), fu_unsupported_k);
    CHECK_STATUS(fu_pool_spawn(live_topology, pool, 1, fu_caller_exclusive_k), fu_unsupported_k);
    CHECK_STATUS(fu_pool_spawn(live_topology, pool, 1, fu_caller_inclusive_k), fu_success_k);
    memset(seen, 0, sizeof(seen));
    CHECK_STATUS(fu_pool_for_threads(pool, count_thread, seen), fu_success_k);
    CHECK(seen[0] == 1 && seen[1] == 0);
    fu_pool_delete(pool);
}

/* ---- dispatch ---------------------------------------------------------------------------------------------- */

/** What the task callbacks record: per task, how often it ran, on which thread, in which domain. */
typedef struct tasks_t {
    size_t *hits;
    size_t *thread;
    size_t *domain;
    size_t threads; /* the pool's: every thread index must stay below it */
} tasks_t;

static void record_task(void *context, size_t task, size_t thread, size_t compute_domain) {
    tasks_t *tasks = (tasks_t *)context;
    ++tasks->hits[task];
    tasks->thread[task] = thread;
    tasks->domain[task] = compute_domain;
}

/** One slot per thread, written by that thread only. */
typedef struct slices_t {
    size_t first[8];
    size_t count[8];
    size_t calls[8];
    size_t domain[8];
} slices_t;

static void record_slice(void *context, size_t first, size_t count, size_t thread, size_t compute_domain) {
    slices_t *slices = (slices_t *)context;
    if (thread >= 8) return;
    slices->first[thread] = first;
    slices->count[thread] = count;
    slices->domain[thread] = compute_domain;
    ++slices->calls[thread];
}

static void record_thread_domain(void *context, size_t thread, size_t compute_domain) {
    size_t *domains = (size_t *)context;
    if (thread < 8) domains[thread] = compute_domain + 1; /* 0 = not called */
}

static void check_tasks(fu_pool_t pool, size_t n, size_t threads, int dynamic, size_t expected_domain) {
    tasks_t tasks;
    size_t task;
    tasks.hits = (size_t *)calloc(n + 1, sizeof(size_t));
    tasks.thread = (size_t *)calloc(n + 1, sizeof(size_t));
    tasks.domain = (size_t *)calloc(n + 1, sizeof(size_t));
    tasks.threads = threads;
    CHECK(tasks.hits && tasks.thread && tasks.domain);
    if (tasks.hits && tasks.thread && tasks.domain) {
        if (dynamic)
            CHECK_STATUS(fu_pool_for_n_dynamic(pool, n, record_task, &tasks), fu_success_k);
        else
            CHECK_STATUS(fu_pool_for_n(pool, n, record_task, &tasks), fu_success_k);
        for (task = 0; task != n; ++task) {
            CHECK(tasks.hits[task] == 1);
            CHECK(tasks.thread[task] < threads);
            /* 0xFFFF: a pool of two equal domains, whose domain is the thread's half */
            CHECK(tasks.domain[task] ==
                  (expected_domain == 0xFFFF ? tasks.thread[task] / (threads / 2) : expected_domain));
            if (!dynamic) CHECK(tasks.thread[task] == expected_owner(n, threads, task));
        }
    }
    free(tasks.hits), free(tasks.thread), free(tasks.domain);
}

static void check_slices(fu_pool_t pool, size_t n, size_t threads, size_t expected_domain) {
    slices_t slices;
    size_t t;
    memset(&slices, 0, sizeof(slices));
    CHECK_STATUS(fu_pool_for_slices(pool, n, record_slice, &slices), fu_success_k);
    for (t = 0; t != threads; ++t) {
        size_t first, count;
        expected_block(n, threads, t, &first, &count);
        /* A thread with an empty block is not called; every other is called once with its block. */
        CHECK(slices.calls[t] == (count ? 1u : 0u));
        if (count) CHECK(slices.first[t] == first && slices.count[t] == count && slices.domain[t] == expected_domain);
    }
}

static void test_dispatch(fu_capabilities_t allowed) {
    size_t const sizes[] = {0, 1, 7, 64, 1000};
    size_t shape, s;
    for (shape = 0; shape != 2 * thread_counts_count; ++shape) {
        size_t const threads = thread_counts[shape / 2];
        fu_caller_exclusivity_t const exclusivity = shape % 2 ? fu_caller_exclusive_k : fu_caller_inclusive_k;
        fu_pool_t pool;
        size_t seen[8] = {0}, t;
        if (!FORKUNION_TEST_THREADS && (threads > 1 || exclusivity == fu_caller_exclusive_k)) {
            skip("dispatches on a pool of more than the caller", "this build has no threads");
            continue;
        }
        pool = spawned_pool(allowed, threads, exclusivity);
        if (!pool) continue;
        CHECK_STATUS(fu_pool_for_threads(pool, count_thread, seen), fu_success_k);
        for (t = 0; t != 8; ++t) CHECK(seen[t] == (t < threads ? 1u : 0u));
        for (s = 0; s != sizeof(sizes) / sizeof(sizes[0]); ++s) {
            check_tasks(pool, sizes[s], threads, 0, 0);
            check_tasks(pool, sizes[s], threads, 1, 0);
            check_slices(pool, sizes[s], threads, 0);
        }
        fu_pool_delete(pool);
    }

    /* `fu_pool_spawn_on`: callbacks receive the domain the pool was spawned on, here on a recorded machine whose
     * second domain's cores (8-15, 24-31) this one may lack: pinning may be refused, the loop still runs. */
    {
        fu_topology_t recorded = recorded_machine("fu_pool_spawn_on on the recorded machine's second domain");
        fu_pool_t pool = fu_pool_new("spawn_on", allowed);
        size_t domains[8] = {0};
        CHECK(pool != NULL);
        if (recorded && !FORKUNION_TEST_THREADS) skip("fu_pool_spawn_on with 2 threads", "this build has no threads");
        if (recorded && pool && FORKUNION_TEST_THREADS) {
            CHECK_STATUS(fu_pool_spawn_on(recorded, pool, 2, 2, fu_caller_inclusive_k), fu_invalid_argument_k);
            CHECK_STATUS(fu_pool_spawn_on(recorded, pool, 1, 2, fu_caller_inclusive_k), fu_success_k);
            CHECK(fu_pool_threads_count(pool) == 2 && fu_pool_compute_domains_count(pool) == 1);
            CHECK(fu_pool_threads_count_in(pool, 1) == 2 && fu_pool_threads_count_in(pool, 0) == 0);
            if (fu_online_cores_count(live_topology) <= 8) CHECK(fu_pool_unpinned_threads_count(pool) == 2);
            check_tasks(pool, 100, 2, 0, 1);
            check_tasks(pool, 100, 2, 1, 1);
            check_slices(pool, 5, 2, 1);
            CHECK_STATUS(fu_pool_for_threads(pool, record_thread_domain, domains), fu_success_k);
            CHECK(domains[0] == 2 && domains[1] == 2 && domains[2] == 0);
            CHECK_STATUS(fu_pool_terminate(pool), fu_success_k);
            /* The live machine's first domain, exclusive. */
            CHECK_STATUS(fu_pool_spawn_on(live_topology, pool, 0, 2, fu_caller_exclusive_k), fu_success_k);
            check_tasks(pool, 33, 2, 1, 0);
        }
        fu_pool_delete(pool);
        fu_topology_delete(recorded);
    }
}

/* ---- split ------------------------------------------------------------------------------------------------- */

typedef struct join_attempt_t {
    fu_pool_t pool;
    size_t generation;
    int status;
} join_attempt_t;

static void *join_from_another_thread(void *argument) {
    join_attempt_t *attempt = (join_attempt_t *)argument;
    attempt->status = fu_pool_unsafe_join(attempt->pool, attempt->generation);
    return NULL;
}

static void test_split(fu_capabilities_t allowed) {
    size_t shape;
    for (shape = 0; shape != 2 * thread_counts_count; ++shape) {
        size_t const threads = thread_counts[shape / 2];
        int const exclusive = shape % 2;
        fu_pool_t pool;
        size_t seen[8] = {0}, other[8] = {0}, first = 0, second = 0, refused = 5, t;
        if (!FORKUNION_TEST_THREADS && (threads > 1 || exclusive)) {
            skip("splits on a pool of more than the caller", "this build has no threads");
            continue;
        }
        pool = spawned_pool(allowed, threads, exclusive ? fu_caller_exclusive_k : fu_caller_inclusive_k);
        if (!pool) continue;

        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, count_thread, seen, &first), fu_success_k);
        CHECK(first % 2 == 1);
        /* While it is in flight, every other dispatch and idle change is refused, and nothing else runs. */
        if (!exclusive) {
            CHECK_STATUS(fu_pool_is_complete(pool, first), 0); /* slice 0 runs inside the join */
            check_refused(pool, fu_contended_k);
            /* The idle policy is not a dispatch: changing it is never refused, and changes no dispatch. */
            CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_sleep_k, 0), fu_success_k);
            CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_adaptive_k, FU_DEFAULT_IDLE_WINDOW_US), fu_success_k);
            CHECK_STATUS(fu_pool_unsafe_for_threads(pool, count_thread, other, &refused), fu_contended_k);
            CHECK(refused == 0);
            if (FORKUNION_TEST_THREADS) {
                /* Only the dispatching thread may join an inclusive split (it owes slice 0): another thread's join
                   is misuse, reported as such (not as `contended`), and runs, completes and changes nothing. */
                join_attempt_t attempt;
                pthread_t joiner;
                attempt.pool = pool, attempt.generation = first, attempt.status = 1;
                CHECK(pthread_create(&joiner, NULL, join_from_another_thread, &attempt) == 0);
                CHECK(pthread_join(joiner, NULL) == 0);
                CHECK_STATUS(attempt.status, fu_invalid_argument_k);
                CHECK_STATUS(fu_pool_is_complete(pool, first), 0);
            }
        } else {
            CHECK(eventually_complete(pool, first));
        }
        CHECK_STATUS(fu_pool_unsafe_join(pool, first), fu_success_k);
        CHECK_STATUS(fu_pool_is_complete(pool, first), 1);
        for (t = 0; t != 8; ++t) CHECK(seen[t] == (t < threads ? 1u : 0u));
        for (t = 0; t != 8; ++t) CHECK(other[t] == 0);
        /* Joining twice is harmless and says the generation is stale. */
        CHECK_STATUS(fu_pool_unsafe_join(pool, first), fu_stale_generation_k);
        /* Tokens no dispatch can have. */
        CHECK_STATUS(fu_pool_unsafe_join(pool, 0), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_unsafe_join(pool, 2), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_is_complete(pool, 0), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_is_complete(pool, 4), fu_invalid_argument_k);

        /* A blocking dispatch between two splits; the first generation stays stale, the second one is joinable. */
        check_tasks(pool, 50, threads, 1, 0);
        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, count_thread, seen, &second), fu_success_k);
        CHECK(second % 2 == 1 && second != first);
        CHECK_STATUS(fu_pool_unsafe_join(pool, first), fu_stale_generation_k);
        if (exclusive) {
            /* An exclusive split that completed without a join does not block the next one. */
            size_t third = 0;
            CHECK(eventually_complete(pool, second));
            CHECK_STATUS(fu_pool_unsafe_for_threads(pool, count_thread, seen, &third), fu_success_k);
            CHECK_STATUS(fu_pool_unsafe_join(pool, second), fu_stale_generation_k);
            second = third;
        }
        CHECK_STATUS(fu_pool_unsafe_join(pool, second), fu_success_k);
        for (t = 0; t != threads; ++t) CHECK(seen[t] == (exclusive ? 3u : 2u));

        /* A split left unjoined: terminate runs the owed slice, and the generation is stale afterwards. */
        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, count_thread, other, &first), fu_success_k);
        CHECK_STATUS(fu_pool_terminate(pool), fu_success_k);
        for (t = 0; t != threads; ++t) CHECK(other[t] == 1);
        CHECK_STATUS(fu_pool_unsafe_join(pool, first), fu_stale_generation_k);
        CHECK_STATUS(fu_pool_is_complete(pool, first), 1);
        fu_pool_delete(pool);
    }
}

/* ---- contention -------------------------------------------------------------------------------------------- */

typedef struct nested_t {
    fu_pool_t pool;
    int status[8];
    size_t inner_hits[64];
} nested_t;

static void count_inner(void *context, size_t task, size_t thread, size_t compute_domain) {
    (void)thread, (void)compute_domain;
    ++((nested_t *)context)->inner_hits[task];
}

static void dispatch_from_callback(void *context, size_t thread, size_t compute_domain) {
    nested_t *nested = (nested_t *)context;
    (void)compute_domain;
    if (thread < 8) nested->status[thread] = fu_pool_for_n(nested->pool, 64, count_inner, nested);
}

/** Hammers one pool from two threads: each dispatch runs whole or is refused with `contended`, nothing else. */
typedef struct hammer_t {
    fu_pool_t pool;
    size_t rounds, successes, refusals, others, broken;
} hammer_t;

static void *hammer(void *argument) {
    hammer_t *h = (hammer_t *)argument;
    size_t round, task;
    size_t hits[96], threads[96], domains[96];
    tasks_t tasks;
    tasks.hits = hits, tasks.thread = threads, tasks.domain = domains, tasks.threads = 0;
    for (round = 0; round != h->rounds; ++round) {
        int status;
        memset(hits, 0, sizeof(hits));
        status = round % 2 ? fu_pool_for_n_dynamic(h->pool, 96, record_task, &tasks)
                           : fu_pool_for_n(h->pool, 96, record_task, &tasks);
        if (status == fu_success_k) {
            ++h->successes;
            for (task = 0; task != 96; ++task) h->broken += hits[task] != 1;
        } else if (status == fu_contended_k) {
            ++h->refusals;
            for (task = 0; task != 96; ++task) h->broken += hits[task] != 0;
        } else
            ++h->others;
    }
    return NULL;
}

/* A split token is never reused while its pool lives: respawning, also onto the other C++ pool kind (`fu_pool_spawn`
   and `fu_pool_spawn_on` may run different ones, whose counts are independent), gives new tokens, and a token
   from before answers `stale_generation` and `is_complete` without touching the live dispatch. */
static void test_split_tokens(fu_capabilities_t allowed) {
    size_t tokens[6] = {0}, seen[8] = {0}, round, earlier;
    /* Two domains: `fu_pool_spawn` runs a distributed pool there, `fu_pool_spawn_on` a colocated one. */
    fu_topology_t const recorded = recorded_machine("split tokens across the two pool kinds");
    fu_pool_t pool = recorded ? fu_pool_new("c_api", allowed) : NULL;
    if (!pool) {
        if (recorded) fu_topology_delete(recorded);
        return;
    }
    for (round = 0; round != 6; ++round) {
        fu_status_t const spawned = round % 2 ? fu_pool_spawn_on(recorded, pool, 0, 1, fu_caller_inclusive_k)
                                              : fu_pool_spawn(recorded, pool, 2, fu_caller_inclusive_k);
        CHECK_STATUS(spawned, fu_success_k);
        if (spawned != fu_success_k) break;
        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, count_thread, seen, &tokens[round]), fu_success_k);
        for (earlier = 0; earlier != round; ++earlier) {
            CHECK(tokens[earlier] != tokens[round]);
            CHECK_STATUS(fu_pool_unsafe_join(pool, tokens[earlier]), fu_stale_generation_k);
            CHECK_STATUS(fu_pool_is_complete(pool, tokens[earlier]), 1);
        }
        CHECK_STATUS(fu_pool_is_complete(pool, tokens[round]), 0); /* slice 0 runs inside the join */
        CHECK_STATUS(fu_pool_unsafe_join(pool, tokens[round]), fu_success_k);
        CHECK(seen[0] == round + 1);
        CHECK_STATUS(fu_pool_terminate(pool), fu_success_k);
    }
    fu_pool_delete(pool);
    fu_topology_delete(recorded);
}

static void test_contention(fu_capabilities_t allowed) {
    size_t shape;
    if (!FORKUNION_TEST_THREADS) {
        skip("nested and concurrent dispatches on pools of 3 threads", "this build has no threads");
        return;
    }
    for (shape = 0; shape != 2; ++shape) {
        fu_caller_exclusivity_t const exclusivity = shape ? fu_caller_exclusive_k : fu_caller_inclusive_k;
        fu_pool_t pool = spawned_pool(allowed, 3, exclusivity);
        nested_t nested;
        size_t t, task;
        if (!pool) continue;
        memset(&nested, 0, sizeof(nested));
        nested.pool = pool;
        /* A dispatch from inside a callback is refused, except on thread 0 of an exclusive pool, which forks. */
        CHECK_STATUS(fu_pool_for_threads(pool, dispatch_from_callback, &nested), fu_success_k);
        for (t = 0; t != 3; ++t)
            CHECK_STATUS(nested.status[t],
                         exclusivity == fu_caller_exclusive_k && t == 0 ? fu_success_k : fu_contended_k);
        for (task = 0; task != 64; ++task) CHECK(nested.inner_hits[task] == (exclusivity == fu_caller_exclusive_k));

        /* Two dispatchers at once. */
        {
            hammer_t a, b;
            pthread_t first, second;
            memset(&a, 0, sizeof(a)), memset(&b, 0, sizeof(b));
            a.pool = b.pool = pool;
            a.rounds = b.rounds = 300;
            CHECK(pthread_create(&first, NULL, hammer, &a) == 0);
            CHECK(pthread_create(&second, NULL, hammer, &b) == 0);
            CHECK(pthread_join(first, NULL) == 0 && pthread_join(second, NULL) == 0);
            CHECK(a.others == 0 && b.others == 0 && a.broken == 0 && b.broken == 0);
            CHECK(a.successes + a.refusals == 300 && b.successes + b.refusals == 300);
            CHECK(a.successes + b.successes >= 1); /* a refusal means the other one was running a dispatch */
        }
        fu_pool_delete(pool);
    }
}

/* ---- domains: the distributed pool on a recorded two-domain machine --------------------------------------- */

static void test_domains(fu_capabilities_t allowed) {
    fu_topology_t recorded = recorded_machine("the distributed pool on the recorded two-domain machine");
    fu_pool_t pool = fu_pool_new("domains", allowed);
    int const pinning = (allowed & fu_runtime_capabilities() & fu_capability_thread_pinning_k) != 0;
    size_t shape;
    if (!recorded) {
        fu_pool_delete(pool);
        return;
    }
    CHECK(pool != NULL);
    if (!pool) {
        fu_pool_delete(pool), fu_topology_delete(recorded);
        return;
    }
    /* Every compute domain needs a thread. */
    CHECK_STATUS(fu_pool_spawn(recorded, pool, 1, fu_caller_inclusive_k), fu_invalid_argument_k);
    for (shape = 0; shape != 2; ++shape) {
        fu_caller_exclusivity_t const exclusivity = shape ? fu_caller_exclusive_k : fu_caller_inclusive_k;
        size_t domains[8] = {0}, t, task, generation = 0;
        slices_t slices;
        nested_t nested;
        CHECK_STATUS(fu_pool_spawn(recorded, pool, 4, exclusivity), fu_success_k);
        /* Two domains of 16 cores each: 2 threads each, domain 0 first, callbacks told their domain. */
        CHECK(fu_pool_threads_count(pool) == 4 && fu_pool_compute_domains_count(pool) == 2);
        CHECK(fu_pool_threads_count_in(pool, 0) == 2 && fu_pool_threads_count_in(pool, 1) == 2);
        CHECK(fu_pool_threads_count_in(pool, 2) == 0);
        CHECK_STATUS(fu_pool_for_threads(pool, record_thread_domain, domains), fu_success_k);
        CHECK(domains[0] == 1 && domains[1] == 1 && domains[2] == 2 && domains[3] == 2 && domains[4] == 0);
        memset(domains, 0, sizeof(domains));
        CHECK_STATUS(fu_pool_unsafe_for_threads(pool, record_thread_domain, domains, &generation), fu_success_k);
        CHECK_STATUS(fu_pool_unsafe_join(pool, generation), fu_success_k);
        CHECK(domains[0] == 1 && domains[1] == 1 && domains[2] == 2 && domains[3] == 2);
        {
            /* Tasks: each once, on the static split, in the domain of the thread that ran it. */
            size_t hits[101] = {0}, threads[101] = {0}, where[101] = {0};
            tasks_t tasks;
            tasks.hits = hits, tasks.thread = threads, tasks.domain = where, tasks.threads = 4;
            CHECK_STATUS(fu_pool_for_n(pool, 101, record_task, &tasks), fu_success_k);
            for (task = 0; task != 101; ++task) {
                CHECK(hits[task] == 1 && threads[task] == expected_owner(101, 4, task));
                CHECK(where[task] == threads[task] / 2);
            }
            memset(hits, 0, sizeof(hits));
            CHECK_STATUS(fu_pool_for_n_dynamic(pool, 101, record_task, &tasks), fu_success_k);
            for (task = 0; task != 101; ++task) CHECK(hits[task] == 1 && where[task] == threads[task] / 2);
        }
        memset(&slices, 0, sizeof(slices));
        CHECK_STATUS(fu_pool_for_slices(pool, 9, record_slice, &slices), fu_success_k);
        for (t = 0; t != 4; ++t) {
            size_t first, count;
            expected_block(9, 4, t, &first, &count);
            CHECK(slices.calls[t] == 1 && slices.first[t] == first && slices.count[t] == count);
            CHECK(slices.domain[t] == t / 2);
        }
        /* A distributed pool refuses every nested dispatch, thread 0 of an exclusive pool's included. */
        memset(&nested, 0, sizeof(nested));
        nested.pool = pool;
        CHECK_STATUS(fu_pool_for_threads(pool, dispatch_from_callback, &nested), fu_success_k);
        for (t = 0; t != 4; ++t) CHECK_STATUS(nested.status[t], fu_contended_k);
        /* This machine lacks the second domain's cores (8-15, 24-31) and node 1: those pins and that table's
         * binding are refused, counted, and the pool runs anyway. */
        if (fu_online_cores_count(live_topology) <= 8)
            CHECK(fu_pool_unpinned_threads_count(pool) == (pinning ? 2u : 4u));
        if (fu_memory_domains_count(live_topology) == 1) CHECK(fu_pool_memory_placed(pool) == 0);
        CHECK_STATUS(fu_pool_nap(pool), fu_success_k);
        check_tasks(pool, 40, 4, 1, 0xFFFF);
        CHECK_STATUS(fu_pool_terminate(pool), fu_success_k);
    }
    fu_pool_delete(pool);

    /* Without the `topology` capability a pool sees one domain of every allowed core, whatever it is given. */
    pool = fu_pool_new("flat", allowed & ~fu_capability_topology_k);
    CHECK(pool != NULL);
    if (pool) {
        CHECK_STATUS(fu_pool_spawn(recorded, pool, 3, fu_caller_inclusive_k), fu_success_k);
        CHECK(fu_pool_compute_domains_count(pool) == 1 && fu_pool_threads_count_in(pool, 0) == 3);
        check_tasks(pool, 30, 3, 1, 0);
        fu_pool_delete(pool);
    }
    fu_topology_delete(recorded);
}

/* ---- idle -------------------------------------------------------------------------------------------------- */

static void test_idle(fu_capabilities_t allowed) {
    size_t shape;
    fu_idle_mode_t mode = fu_idle_spin_k;
    uint64_t microseconds = 1;
    CHECK_STATUS(fu_pool_set_idle_policy(NULL, fu_idle_spin_k, 0), fu_invalid_argument_k);
    CHECK_STATUS(fu_pool_idle_policy(NULL, &mode, &microseconds), fu_invalid_argument_k);
    CHECK(fu_pool_parked_threads_count(NULL) == 0);
    if (!FORKUNION_TEST_THREADS) skip("idle policies of pools of 3 threads", "this build has no threads");
    for (shape = 0; shape != 2 * FORKUNION_TEST_THREADS; ++shape) {
        size_t const workers = shape ? 3 : 2;
        fu_pool_t pool = spawned_pool(allowed, 3, shape ? fu_caller_exclusive_k : fu_caller_inclusive_k);
        if (!pool) continue;
        /* The default: adaptive with the documented window. */
        CHECK_STATUS(fu_pool_idle_policy(pool, &mode, &microseconds), fu_success_k);
        CHECK(mode == fu_idle_adaptive_k && microseconds == FU_DEFAULT_IDLE_WINDOW_US);
        CHECK_STATUS(fu_pool_set_idle_policy(pool, (fu_idle_mode_t)9, 0), fu_invalid_argument_k);
        /* Each policy lasts until changed; every dispatch under it runs whole. */
        CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_nap_k, 0), fu_success_k);
        check_tasks(pool, 100, 3, 0, 0);
        check_tasks(pool, 100, 3, 1, 0);
        CHECK_STATUS(fu_pool_idle_policy(pool, &mode, &microseconds), fu_success_k);
        CHECK(mode == ((fu_pool_capabilities(pool) & fu_capabilities_waits_k) ? fu_idle_nap_k : fu_idle_spin_k));
        CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_sleep_k, 0), fu_success_k);
        check_tasks(pool, 100, 3, 1, 0);
        /* Parked with no timer: only the dispatch's wake-up can bring the workers back (a lost one hangs). */
        CHECK(wait_until_parked(pool, workers));
        check_tasks(pool, 100, 3, 0, 0);
        CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_sleep_k, 1000000), fu_success_k); /* 1 s re-checks */
        check_tasks(pool, 100, 3, 0, 0);
        CHECK_STATUS(fu_pool_sleep(pool, 50), fu_success_k); /* the deprecated spelling, now persistent too */
        check_slices(pool, 10, 3, 0);
        CHECK_STATUS(fu_pool_idle_policy(pool, &mode, &microseconds), fu_success_k);
        CHECK(mode == fu_idle_sleep_k && microseconds == 50);
        CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_adaptive_k, 0), fu_success_k);
        check_tasks(pool, 100, 3, 0, 0);
        CHECK(wait_until_parked(pool, workers));
        check_tasks(pool, 100, 3, 1, 0);
        CHECK_STATUS(fu_pool_nap(pool), fu_success_k);
        CHECK_STATUS(fu_pool_terminate(pool), fu_success_k); /* terminate wakes napping workers */
        CHECK_STATUS(fu_pool_nap(pool), fu_not_spawned_k);
        CHECK_STATUS(fu_pool_sleep(pool, 0), fu_not_spawned_k);
        /* The policy belongs to the pool, not to its threads: set unspawned, kept by the next spawn. */
        CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_spin_k, 0), fu_success_k);
        CHECK_STATUS(fu_pool_spawn(live_topology, pool, 2, fu_caller_inclusive_k), fu_success_k);
        CHECK_STATUS(fu_pool_idle_policy(pool, &mode, &microseconds), fu_success_k);
        CHECK(mode == fu_idle_spin_k);
        check_tasks(pool, 10, 2, 0, 0);
        /* Stack sizes: the platform default, a size below the minimum, a fine one. */
        CHECK(fu_pool_stack_size(pool) == 0);
        CHECK_STATUS(fu_pool_set_stack_size(pool, 16), fu_invalid_argument_k);
        CHECK_STATUS(fu_pool_set_stack_size(pool, 1u << 20), fu_success_k);
        CHECK(fu_pool_stack_size(pool) == 1u << 20);
        CHECK_STATUS(fu_pool_terminate(pool), fu_success_k);
        CHECK_STATUS(fu_pool_spawn(live_topology, pool, 3, fu_caller_exclusive_k), fu_success_k);
        check_tasks(pool, 30, 3, 1, 0);
        fu_pool_delete(pool);
    }
}

/* ---- refusals ---------------------------------------------------------------------------------------------- */

typedef struct fallback_t {
    fu_pool_t pool;
    size_t refused, ran_on_caller, fallback_failures;
    pthread_mutex_t mutex;
} fallback_t;

static void count_fallback_task(void *context, size_t task, size_t thread, size_t domain) {
    fallback_t *fallback = (fallback_t *)context;
    (void)task, (void)domain;
    pthread_mutex_lock(&fallback->mutex);
    fallback->ran_on_caller += thread == 0;
    pthread_mutex_unlock(&fallback->mutex);
}

static void nested_dispatches(void *context, size_t thread, size_t domain) {
    fallback_t *fallback = (fallback_t *)context;
    fu_status_t const status = fu_pool_for_n(fallback->pool, 5, count_fallback_task, fallback);
    (void)thread, (void)domain;
    pthread_mutex_lock(&fallback->mutex);
    fallback->refused += status == fu_contended_k;
    pthread_mutex_unlock(&fallback->mutex);
    /* The library-code form: always runs, here on the caller when the pool is busy. Counted under the mutex and
     * checked by the dispatcher: the CHECK counters are not for several threads at once. */
    fu_status_t const plain = fu_pool_for_n_or_run_on_caller(fallback->pool, 5, count_fallback_task, fallback);
    fu_status_t const dynamic =
        fu_pool_for_n_dynamic_or_run_on_caller(fallback->pool, 5, count_fallback_task, fallback);
    pthread_mutex_lock(&fallback->mutex);
    fallback->fallback_failures += (plain != fu_success_k) + (dynamic != fu_success_k);
    pthread_mutex_unlock(&fallback->mutex);
}

static void test_refusals(fu_capabilities_t allowed) {
    size_t const threads = FORKUNION_TEST_THREADS ? 3 : 1; /* a pool of one is busy inside its callback too */
    fu_pool_t pool = spawned_pool(allowed, threads, fu_caller_inclusive_k);
    fallback_t fallback;
    if (!pool) return;
    memset(&fallback, 0, sizeof(fallback));
    pthread_mutex_init(&fallback.mutex, NULL);
    fallback.pool = pool;
    CHECK_STATUS(fu_pool_for_threads(pool, nested_dispatches, &fallback), fu_success_k);
    CHECK(fallback.refused == threads);               /* every nested plain dispatch said why it ran nothing */
    CHECK(fallback.fallback_failures == 0);           /* every fallback returned fu_success_k */
    CHECK(fallback.ran_on_caller == threads * 2 * 5); /* the fallbacks ran every task, as thread 0 of a team of one */
    /* On an idle pool the fallbacks are plain dispatches. */
    check_tasks(pool, 10, threads, 0, 0);
    fu_pool_delete(pool);
    pthread_mutex_destroy(&fallback.mutex);
    /* On a pool that has no threads at all, they run on the caller too. */
    pool = fu_pool_new(NULL, allowed);
    CHECK(pool != NULL);
    if (!pool) return;
    memset(&fallback, 0, sizeof(fallback));
    pthread_mutex_init(&fallback.mutex, NULL);
    CHECK_STATUS(fu_pool_for_n(pool, 7, count_fallback_task, &fallback), fu_not_spawned_k);
    CHECK_STATUS(fu_pool_for_n_or_run_on_caller(pool, 7, count_fallback_task, &fallback), fu_success_k);
    CHECK(fallback.ran_on_caller == 7);
    CHECK_STATUS(fu_pool_for_n_or_run_on_caller(NULL, 7, count_fallback_task, &fallback), fu_invalid_argument_k);
    fu_pool_delete(pool);
    pthread_mutex_destroy(&fallback.mutex);
}

/* ---- reasons ----------------------------------------------------------------------------------------------- */

static void ignore_thread(void *context, size_t thread, size_t compute_domain) {
    (void)context, (void)thread, (void)compute_domain;
}

/* `call` refuses with fu_invalid_argument_k and fu_last_refusal_reason() then contains `fragment`. A different
 * refusal comes first, so a path that refuses without setting its own reason reads that one's and fails. */
#define CHECK_REASON(call, fragment)                                                                                   \
    do {                                                                                                               \
        char const *reason_;                                                                                           \
        CHECK_STATUS(fu_pool_terminate(NULL), fu_invalid_argument_k);                                                  \
        CHECK(strstr(fu_last_refusal_reason(), "fu_pool_terminate: pool is NULL") != NULL);                            \
        CHECK_STATUS(call, fu_invalid_argument_k);                                                                     \
        reason_ = fu_last_refusal_reason();                                                                            \
        CHECK(reason_ != NULL && strstr(reason_, fragment) != NULL);                                                   \
        if (reason_ && !strstr(reason_, fragment))                                                                     \
            fprintf(stderr, "%s:%d: %s gave the reason \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #call, reason_, \
                    fragment);                                                                                         \
    } while (0)

static void *refuse_on_another_thread(void *unused) {
    (void)unused;
    (void)fu_pool_spawn(NULL, NULL, 1, fu_caller_inclusive_k);
    return NULL;
}

static void test_reasons(fu_capabilities_t allowed) {
    fu_pool_t pool = fu_pool_new("reasons", allowed);
    fu_topology_t recorded = recorded_machine("the distributed pool's reason on a recorded two-socket machine");
    fu_allocation_t allocation;
    fu_capabilities_t mask = 0;
    fu_idle_mode_t mode;
    uint64_t microseconds = 0;
    size_t generation = 0;
    pthread_t other;
    CHECK(pool != NULL);
    if (!pool) return;
    /* Spawn: each argument in turn. */
    CHECK_REASON(fu_pool_spawn(NULL, pool, 1, fu_caller_inclusive_k), "topology is NULL");
    CHECK_REASON(fu_pool_spawn(live_topology, NULL, 1, fu_caller_inclusive_k), "pool is NULL");
    CHECK_REASON(fu_pool_spawn(live_topology, pool, 0, fu_caller_inclusive_k), "threads is 0");
    CHECK_REASON(fu_pool_spawn(live_topology, pool, 1, (fu_caller_exclusivity_t)7), "exclusivity");
    CHECK_REASON(
        fu_pool_spawn_on(live_topology, pool, fu_compute_domains_count(live_topology), 1, fu_caller_inclusive_k),
        "domain is not below");
    /* The distributed pool over fewer threads than compute domains (a mask without topology sees one domain). */
    if (recorded && (allowed & fu_capability_topology_k) && fu_compute_domains_count(recorded) > 1)
        CHECK_REASON(fu_pool_spawn(recorded, pool, 1, fu_caller_inclusive_k),
                     "threads is below the topology's compute domains");
    /* Dispatch and the split dispatch. */
    CHECK_REASON(fu_pool_for_threads(NULL, ignore_thread, NULL), "pool is NULL");
    CHECK_REASON(fu_pool_for_threads(pool, NULL, NULL), "callback is NULL");
    CHECK_REASON(fu_pool_unsafe_for_threads(pool, ignore_thread, NULL, NULL), "generation is NULL");
    CHECK_REASON(fu_pool_unsafe_for_threads(pool, NULL, NULL, &generation), "callback is NULL");
    CHECK_REASON(fu_pool_is_complete(NULL, 1), "pool is NULL");
    CHECK_REASON(fu_pool_is_complete(pool, 2), "generation is 0 or even");
    CHECK_REASON(fu_pool_unsafe_join(NULL, 1), "pool is NULL");
    CHECK_REASON(fu_pool_unsafe_join(pool, 0), "generation is 0 or even");
    /* Settings. */
    CHECK_REASON(fu_pool_set_idle_policy(NULL, fu_idle_spin_k, 0), "pool is NULL");
    CHECK_REASON(fu_pool_set_idle_policy(pool, (fu_idle_mode_t)9, 0), "mode is not a value of fu_idle_mode_t");
    CHECK_REASON(fu_pool_set_idle_policy(pool, fu_idle_sleep_k, (uint64_t)1 << 61), "policy.microseconds");
    CHECK_REASON(fu_pool_idle_policy(pool, NULL, &microseconds), "NULL");
    CHECK_REASON(fu_pool_idle_policy(pool, &mode, NULL), "NULL");
    CHECK_REASON(fu_pool_set_stack_size(NULL, 0), "pool is NULL");
#if defined(__linux__)
    CHECK_REASON(fu_pool_set_stack_size(pool, 1), "bytes is below");
#endif
    CHECK_REASON(fu_parse_capabilities("spin", NULL), "mask is NULL");
    CHECK_REASON(fu_parse_capabilities(NULL, &mask), "text is null");
    CHECK_REASON(fu_parse_capabilities("no-such-capability", &mask), "no capability name");
    CHECK_REASON(fu_parse_capabilities("none,", &mask), "ends in a comma");
    /* Memory and the fabric. */
    CHECK_REASON(fu_allocate_on(live_topology, 0, 64, 0, allowed, NULL), "allocation is NULL");
    CHECK_REASON(fu_allocate_on(NULL, 0, 64, 0, allowed, &allocation), "topology is NULL");
    CHECK_REASON(fu_allocate_on(live_topology, 0, 64, 3, allowed, &allocation), "huge_page_bytes");
    CHECK_REASON(fu_allocate_on(live_topology, fu_memory_domains_count(live_topology), 64, 0, allowed, &allocation),
                 "memory_domain is not below");
    CHECK_REASON(fu_deallocate(NULL), "allocation is NULL");
    CHECK_REASON(fu_fabric_harvest(NULL, live_topology, pool, 0), "NULL");
    /* Thread-local: another thread's refusal leaves this thread's reason as it was. */
    CHECK_REASON(fu_pool_set_idle_policy(pool, (fu_idle_mode_t)9, 0), "mode is not a value of fu_idle_mode_t");
    if (FORKUNION_TEST_THREADS) {
        CHECK(pthread_create(&other, NULL, refuse_on_another_thread, NULL) == 0);
        CHECK(pthread_join(other, NULL) == 0);
        CHECK(strstr(fu_last_refusal_reason(), "mode is not a value of fu_idle_mode_t") != NULL);
    } else {
        skip("a refusal on another thread", "this build has no threads");
    }
    /* And a success writes nothing. */
    CHECK_STATUS(fu_pool_set_idle_policy(pool, fu_idle_spin_k, 0), fu_success_k);
    CHECK(strstr(fu_last_refusal_reason(), "mode is not a value of fu_idle_mode_t") != NULL);
    fu_pool_delete(pool);
    fu_topology_delete(recorded);
}

/* ---- memory ------------------------------------------------------------------------------------------------ */

static void test_memory(fu_capabilities_t allowed) {
    fu_topology_t const live = live_topology;
    size_t const page = page_size();
    int const placing = (allowed & fu_runtime_capabilities() & fu_capability_memory_placement_k) != 0;
    fu_allocation_t allocation;
    size_t m, i;

    /* One domain: the real rounded size, the real page size, zeroed and writable. */
    CHECK_STATUS(fu_allocate_on(live, 0, 1, 0, allowed, &allocation), fu_success_k);
    CHECK(allocation.address != NULL && allocation.bytes == page && allocation.slice_bytes == page);
    CHECK(allocation.slices_count == 1 && allocation.page_bytes == page && allocation.placed == placing);
    if (allocation.address) {
        unsigned char *bytes = (unsigned char *)allocation.address;
        size_t nonzero = 0;
        for (i = 0; i != allocation.bytes; ++i) nonzero += bytes[i] != 0, bytes[i] = (unsigned char)i;
        CHECK(nonzero == 0);
    }
    CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);
    CHECK(allocation.address == NULL && allocation.bytes == 0);
    CHECK_STATUS(fu_deallocate(&allocation), fu_success_k); /* a NULL address is a no-op */

    CHECK_STATUS(fu_allocate_on(live, 0, 3 * page + 1, 0, allowed, &allocation), fu_success_k);
    CHECK(allocation.bytes == 4 * page);
    CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);
    CHECK_STATUS(fu_allocate_on(live, 0, 0, 0, allowed, &allocation), fu_success_k);
    CHECK(allocation.address == NULL && allocation.bytes == 0);

    /* Huge pages: granted, or the base page after the documented fallback; the granule is the huge page. */
    CHECK_STATUS(fu_allocate_on(live, 0, 1, 2u << 20, allowed, &allocation), fu_success_k);
    CHECK(allocation.bytes == ((allowed & fu_runtime_capabilities() & fu_capability_huge_pages_k) ? 2u << 20 : page));
    CHECK(allocation.page_bytes == page || allocation.page_bytes == 2u << 20);
    if (allocation.address) ((unsigned char *)allocation.address)[allocation.bytes - 1] = 1;
    CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);
    CHECK_STATUS(fu_allocate_on(live, 0, 1, 2u << 20, allowed & ~fu_capability_huge_pages_k, &allocation),
                 fu_success_k);
    CHECK(allocation.bytes == page && allocation.page_bytes == page);
    CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);

    /* Bad arguments and impossible sizes: a status, a zeroed result, nothing mapped. */
    allocation.address = &allocation;
    CHECK_STATUS(fu_allocate_on(live, fu_memory_domains_count(live), 64, 0, allowed, &allocation),
                 fu_invalid_argument_k);
    CHECK(allocation.address == NULL);
    CHECK_STATUS(fu_allocate_on(NULL, 0, 64, 0, allowed, &allocation), fu_invalid_argument_k);
    CHECK_STATUS(fu_allocate_on(live, 0, 64, 0, allowed, NULL), fu_invalid_argument_k);
    CHECK_STATUS(fu_allocate_on(live, 0, 64, 3 << 20, allowed, &allocation), fu_invalid_argument_k);
    CHECK_STATUS(fu_allocate_on(live, 0, SIZE_MAX, 0, allowed, &allocation), fu_bad_alloc_k);
    if (sizeof(size_t) >= 8) /* 2^62 bytes: beyond any address space; on 32-bit hosts 1 GiB may well map */
        CHECK_STATUS(fu_allocate_on(live, 0, SIZE_MAX / 4, 0, allowed, &allocation), fu_bad_alloc_k);
    CHECK(allocation.address == NULL && allocation.bytes == 0);
    CHECK_STATUS(fu_allocate_symmetric(NULL, 64, 0, allowed, &allocation), fu_invalid_argument_k);
    CHECK_STATUS(fu_allocate_symmetric(live, 64, 0, allowed, NULL), fu_invalid_argument_k);
    CHECK_STATUS(fu_allocate_symmetric(live, 64, 5, allowed, &allocation), fu_invalid_argument_k);
    CHECK_STATUS(fu_allocate_symmetric(live, SIZE_MAX / 2, 0, allowed, &allocation), fu_bad_alloc_k);
    CHECK_STATUS(fu_deallocate(NULL), fu_invalid_argument_k);

    /* Symmetric: one slice per memory domain, each writable at its own offset. */
    CHECK_STATUS(fu_allocate_symmetric(live, 100, 0, allowed, &allocation), fu_success_k);
    CHECK(allocation.slices_count == fu_memory_domains_count(live) && allocation.slice_bytes == page);
    CHECK(allocation.bytes == allocation.slices_count * allocation.slice_bytes && allocation.placed == placing);
    for (m = 0; allocation.address && m != allocation.slices_count; ++m)
        ((unsigned char *)allocation.address)[m * allocation.slice_bytes + 99] = (unsigned char)(m + 1);
    CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);

    /* The recorded machine's node 1 does not exist here: a bind is refused, an unbound mapping is not. */
    {
        fu_topology_t recorded = recorded_machine("placement on the recorded machine's node 1");
        int const has_node_1 = fu_memory_domains_count(live) > 1;
        if (recorded && !has_node_1) {
            CHECK_STATUS(fu_allocate_on(recorded, 1, 64, 0, allowed, &allocation),
                         placing ? fu_placement_refused_k : fu_success_k);
            CHECK(allocation.placed == 0);
            CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);
            CHECK_STATUS(fu_allocate_symmetric(recorded, 64, 0, allowed, &allocation),
                         placing ? fu_placement_refused_k : fu_success_k);
            CHECK(allocation.slices_count == (placing ? 0u : 2u));
            CHECK_STATUS(fu_deallocate(&allocation), fu_success_k);
        }
        fu_topology_delete(recorded);
    }
}

/* ---- fabric ------------------------------------------------------------------------------------------------ */

static void test_fabric(fu_capabilities_t allowed) {
    size_t const threads = FORKUNION_TEST_THREADS ? 2 : 1;
    fu_fabric_t fabric = fu_fabric_new();
    fu_pool_t pool = fu_pool_new("fabric", allowed);
    size_t const memory_domains = fu_memory_domains_count(live_topology);
    fu_status_t status;
    CHECK(fabric != NULL && pool != NULL);
    if (!fabric || !pool) return;
    /* Before a harvest every query reads 0. */
    CHECK(fu_fabric_harvested(fabric) == 0 && fu_fabric_memory_levels_count(fabric) == 0);
    CHECK(fu_fabric_memory_level_in(fabric, 0) == 0 && fu_fabric_memory_distance(fabric, 0, 0) == 0);
    CHECK(fu_fabric_memory_latency_ns(fabric, 0, 0) == 0 && fu_fabric_memory_bandwidth(fabric, 0, 0) == 0);
    CHECK(fu_fabric_harvested(NULL) == 0 && fu_fabric_memory_levels_count(NULL) == 0);
    CHECK(fu_fabric_memory_level_in(NULL, 0) == 0 && fu_fabric_memory_distance(NULL, 0, 0) == 0);
    CHECK(fu_fabric_memory_latency_ns(NULL, 0, 0) == 0 && fu_fabric_memory_bandwidth(NULL, 0, 0) == 0);
    CHECK_STATUS(fu_fabric_harvest(NULL, live_topology, pool, 0), fu_invalid_argument_k);
    CHECK_STATUS(fu_fabric_harvest(fabric, NULL, pool, 0), fu_invalid_argument_k);
    CHECK_STATUS(fu_fabric_harvest(fabric, live_topology, NULL, 0), fu_invalid_argument_k);
    {
        fu_capabilities_t const needs = fu_capability_thread_pinning_k | fu_capability_memory_placement_k;
        int const measurable = (fu_pool_capabilities(pool) & needs) == needs;
        CHECK_STATUS(fu_fabric_harvest(fabric, live_topology, pool, 1u << 20),
                     measurable ? fu_not_spawned_k : fu_unsupported_k);
    }
    CHECK(fu_fabric_harvested(fabric) == 0);

    CHECK_STATUS(fu_pool_spawn(live_topology, pool, threads, fu_caller_inclusive_k), fu_success_k);
    status = fu_fabric_harvest(fabric, live_topology, pool, 1u << 20); /* 1 MiB buffers keep it quick */
    if ((fu_pool_capabilities(pool) & (fu_capability_thread_pinning_k | fu_capability_memory_placement_k)) !=
        (fu_capability_thread_pinning_k | fu_capability_memory_placement_k)) {
        CHECK_STATUS(status, fu_unsupported_k);
        CHECK(fu_fabric_harvested(fabric) == 0 && fu_fabric_memory_levels_count(fabric) == 0);
    } else {
        size_t m;
        CHECK_STATUS(status, fu_success_k);
        CHECK(fu_fabric_harvested(fabric) == 1);
        CHECK(fu_fabric_memory_levels_count(fabric) >= 1 && fu_fabric_memory_levels_count(fabric) <= memory_domains);
        for (m = 0; m != memory_domains; ++m) {
            CHECK(fu_fabric_memory_latency_ns(fabric, 0, m) > 0 && fu_fabric_memory_bandwidth(fabric, 0, m) > 0);
            CHECK(fu_fabric_memory_distance(fabric, 0, m) >= 10);
            CHECK(fu_fabric_memory_level_in(fabric, m) < fu_fabric_memory_levels_count(fabric));
        }
        CHECK(fu_fabric_memory_distance(fabric, 0, fu_local_memory_of(live_topology, 0)) == 10);
        CHECK(fu_fabric_memory_latency_ns(fabric, 0, memory_domains) == 0);
        CHECK(fu_fabric_memory_level_in(fabric, memory_domains) == fu_fabric_memory_levels_count(fabric));
    }
    /* The pool still dispatches afterwards. */
    check_tasks(pool, 20, threads, 0, 0);
    fu_pool_delete(pool);
    fu_fabric_delete(fabric);
    fu_fabric_delete(NULL);
}

/* ---- main -------------------------------------------------------------------------------------------------- */

typedef struct group_t {
    char const *name;
    void (*run)(fu_capabilities_t allowed);
} group_t;

/* ---- Warnings -------------------------------------------------------------------------------------------- */

typedef struct caught_warnings {
    unsigned long calls;
    char last[1024];
} caught_warnings_t;

static void catch_warning(void *context, char const *line) {
    caught_warnings_t *caught = (caught_warnings_t *)context;
    ++caught->calls;
    snprintf(caught->last, sizeof caught->last, "%s", line);
}

#if FORKUNION_TEST_RECORDED_SYSFS && !defined(_WIN32)
/* Harvests `root` (whose `cpu/online` is garbage: one warning naming it, and no topology) and frees the result. */
static void harvest_garbage(char const *root) {
    fu_topology_t const topology = fu_topology_new_from_sysfs(root);
    CHECK(topology == NULL); /* no online CPU can be found in that tree */
    fu_topology_delete(topology);
}
#endif

static void test_warnings(fu_capabilities_t allowed) {
    (void)allowed;
    CHECK(fu_set_warning_handler(NULL, NULL) == fu_success_k); /* stderr, as at start */
#if FORKUNION_TEST_RECORDED_SYSFS && !defined(_WIN32)
    {
        char const *const tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char root[512], dirs[4][600], online[640];
        caught_warnings_t first, second;
        size_t d;
        FILE *file;
        memset(&first, 0, sizeof first);
        memset(&second, 0, sizeof second);
        snprintf(root, sizeof root, "%s/fu_c_warnings_XXXXXX", tmp);
        if (!mkdtemp(root)) {
            skip("warnings", "mkdtemp failed");
            return;
        }
        snprintf(dirs[0], sizeof dirs[0], "%s/sys", root);
        snprintf(dirs[1], sizeof dirs[1], "%s/sys/devices", root);
        snprintf(dirs[2], sizeof dirs[2], "%s/sys/devices/system", root);
        snprintf(dirs[3], sizeof dirs[3], "%s/sys/devices/system/cpu", root);
        for (d = 0; d != 4; ++d) CHECK(mkdir(dirs[d], 0700) == 0);
        snprintf(online, sizeof online, "%s/online", dirs[3]);
        file = fopen(online, "w");
        CHECK(file != NULL);
        if (file) fputs("garbage\n", file), fclose(file);

        CHECK(fu_set_warning_handler(catch_warning, &first) == fu_success_k);
        CHECK(fu_set_warning_handler(catch_warning, &first) == fu_success_k); /* the installed pair again */
        harvest_garbage(root);
        CHECK(first.calls == 1 && strstr(first.last, online) != NULL);
        CHECK(fu_set_warning_handler(catch_warning, &second) == fu_success_k); /* replaces the first */
        harvest_garbage(root);
        CHECK(first.calls == 1 && second.calls == 1 && strstr(second.last, online) != NULL);
        CHECK(fu_set_warning_handler(NULL, NULL) == fu_success_k); /* stderr again: neither handler hears it */
        harvest_garbage(root);
        CHECK(first.calls == 1 && second.calls == 1);

        CHECK(unlink(online) == 0);
        for (d = 4; d-- != 0;) CHECK(rmdir(dirs[d]) == 0);
        CHECK(rmdir(root) == 0);
    }
#else
    {
        caught_warnings_t caught;
        memset(&caught, 0, sizeof caught);
        CHECK(fu_set_warning_handler(catch_warning, &caught) == fu_success_k); /* installs, and nothing warns */
        CHECK(fu_set_warning_handler(NULL, NULL) == fu_success_k);
        CHECK(caught.calls == 0);
        skip("warnings", "no sysfs reader in this build: no harvest warns");
    }
#endif
}

static group_t const groups[] = {
    {"status", test_status},       {"capabilities", test_capabilities}, {"topology", test_topology},
    {"lifecycle", test_lifecycle}, {"dispatch", test_dispatch},         {"domains", test_domains},
    {"split", test_split},         {"split_tokens", test_split_tokens}, {"contention", test_contention},
    {"idle", test_idle},           {"refusals", test_refusals},         {"memory", test_memory},
    {"fabric", test_fabric},       {"reasons", test_reasons},           {"warnings", test_warnings},
};

int main(int argc, char **argv) {
    size_t g, m, ran = 0;
    live_topology = fu_topology_new();
    if (!live_topology) {
        fprintf(stderr, "fu_topology_new returned NULL\n");
        return 1;
    }
    for (g = 0; g != sizeof(groups) / sizeof(groups[0]); ++g) {
        if (argc > 1 && strcmp(argv[1], groups[g].name) != 0) continue;
        ++ran;
        for (m = 0; m != (size_t)masks_run; ++m) {
            mask_label = masks[m].label;
            groups[g].run(masks[m].allowed);
        }
    }
    fu_topology_delete(live_topology);
    if (!ran) {
        fprintf(stderr, "no test group named %s\n", argv[1]);
        return 1;
    }
    printf("c_api %s: %lu checks, %lu failures, %lu skipped, %d masks\n", argc > 1 ? argv[1] : "all", checks_count,
           failures_count, skips_count, (int)masks_run);
    if (failures_count) return 1;
    return skips_count && !checks_count ? 77 : 0; /* 77: ctest's SKIP_RETURN_CODE, when nothing could run */
}
