/*  The `omp_*` API: setters and queries of the ICVs (with the values libgomp picks where the specification leaves
 *  them open), devices and host `teams`, places, the affinity format, memory allocators, `omp_pause_resource`,
 *  and the Fortran spellings (`omp_*_`, `omp_*_8_`) called the way gfortran calls them. Nested teams themselves are
 *  test/gomp/nested.c's. With an argument, one case that ends the program instead, or whose stderr the runner reads
 *  (`run_case`). */
#include "gomp_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

// The Fortran entry points, as gfortran's `omp_lib` calls them: every argument by reference.
int omp_get_thread_num_(void);
int omp_get_num_threads_(void);
int omp_get_max_threads_(void);
void omp_set_num_threads_(int const *);
void omp_set_num_threads_8_(int64_t const *);
int omp_in_parallel_(void);
void omp_set_schedule_(int const *, int const *);
void omp_get_schedule_8_(int *, int64_t *);
int omp_get_team_size_8_(int64_t const *);
int omp_get_ancestor_thread_num_(int const *);
void omp_init_lock_(int32_t *);
void omp_set_lock_(int32_t *);
void omp_unset_lock_(int32_t *);
int omp_test_lock_(int32_t *);
void omp_destroy_lock_(int32_t *);
void omp_init_nest_lock_(int64_t *);
void omp_set_nest_lock_(int64_t *);
int omp_test_nest_lock_(int64_t *);
void omp_unset_nest_lock_(int64_t *);
void omp_destroy_nest_lock_(int64_t *);
int omp_get_affinity_format_(char *, size_t);
void omp_set_max_active_levels_8_(int64_t const *);
void omp_set_schedule_8_(int const *, int64_t const *);
void omp_set_dynamic_8_(int64_t const *);
void omp_set_affinity_format_(char const *, size_t);
int omp_capture_affinity_(char *, char const *, size_t, size_t);
void omp_display_affinity_(char const *, size_t);
double omp_get_wtime_(void);
int omp_get_dynamic_(void);
void omp_set_dynamic_(int const *);

/**  Under ASan, an allocation too large for any memory returns null, as the C library's does, instead of stopping
 *   the program: libgomp passes such requests on to `malloc` (the drop-in refuses them before). */
char const *__asan_default_options(void);
char const *__asan_default_options(void) {
    return "allocator_may_return_null=1";
}

/**  Contention on one pool: a pool of `pool_size` bytes (null fallback), a block of `held_bytes` from it, and a
 *   thread running `body` against it until `end_contention`, already running when this returns: `body` counts its
 *   requests in `contender_attempts`. Returns the held block. */
static omp_allocator_handle_t contended_pool;
static atomic_int contention_done;
static atomic_long contender_attempts;
static void *start_contention(omp_uintptr_t pool_size, size_t held_bytes, void *(*body)(void *), pthread_t *thread) {
    omp_alloctrait_t traits[] = {{omp_atk_pool_size, pool_size}, {omp_atk_fallback, omp_atv_null_fb}};
    contended_pool = omp_init_allocator(omp_default_mem_space, 2, traits);
    CHECK(contended_pool != omp_null_allocator);
    void *held = omp_alloc(held_bytes, contended_pool);
    CHECK(held != NULL);
    atomic_store(&contention_done, 0);
    atomic_store(&contender_attempts, 0);
    CHECK(pthread_create(thread, NULL, body, NULL) == 0);
    while (atomic_load(&contender_attempts) == 0) { // the two overlap from the first request on
    }
    return held;
}
/**  At least 50,000 requests on each side, overlapping (at most 2,000,000 here if the other side is starved). */
static int contention_goes_on(long requests) {
    return requests < 2000000 && (requests < 50000 || atomic_load(&contender_attempts) < 50000);
}
static void end_contention(pthread_t thread, void *held) {
    atomic_store(&contention_done, 1);
    pthread_join(thread, NULL);
    omp_free(held, contended_pool);
    omp_destroy_allocator(contended_pool);
}

/**  A pool of 1000 bytes, 500 of them held: one thread keeps asking for 600 (never fits) while another allocates
 *   and frees 400 (always fits). Returns how many of the 400-byte requests failed. */
static void *ask_too_much(void *argument) {
    (void)argument;
    while (!atomic_load(&contention_done)) {
        void *never = omp_alloc(600, contended_pool);
        if (never) omp_free(never, contended_pool);
        atomic_fetch_add(&contender_attempts, 1);
    }
    return NULL;
}
static long pool_refusals_of_fitting_requests(void) {
    pthread_t greedy;
    void *held = start_contention(1000, 500, ask_too_much, &greedy);
    long refused = 0;
    for (long i = 0; contention_goes_on(i); ++i) {
        void *fits = omp_alloc(400, contended_pool);
        refused += fits == NULL;
        omp_free(fits, contended_pool);
    }
    end_contention(greedy, held);
    return refused;
}

/**  A pool of 100 bytes whose one 60-byte block one thread keeps moving (`omp_realloc` to 61 bytes and back, which
 *   always fits) while another keeps asking for 50 (which never fits beside it). Sets how many moves failed and
 *   returns how many 50-byte requests were granted: both 0 when the pool counts a moving block without a gap. */
static atomic_long intruders_granted;
static void *intrude(void *argument) {
    (void)argument;
    while (!atomic_load(&contention_done)) {
        void *intruder = omp_alloc(50, contended_pool);
        if (intruder) atomic_fetch_add(&intruders_granted, 1), omp_free(intruder, contended_pool);
        atomic_fetch_add(&contender_attempts, 1);
    }
    return NULL;
}
static long pool_overdrafts_beside_a_moving_block(long *failed_moves) {
    pthread_t intruder;
    void *block = start_contention(100, 60, intrude, &intruder);
    *failed_moves = 0;
    for (long i = 0; contention_goes_on(i); ++i) {
        void *moved = omp_realloc(block, (size_t)(60 + (i & 1)), contended_pool, contended_pool);
        if (moved)
            block = moved;
        else
            ++*failed_moves;
    }
    end_contention(intruder, block);
    return atomic_load(&intruders_granted);
}

/**  Allocation requests at the edges: sizes of 0 and near SIZE_MAX, reallocation inside a pool (the old block's bytes
 *   are the new one's), trait values at their defaults and out of range, the null default allocator. */
static void allocation_edges(void) {
    int zero_sized = 0;
    void *blocks[5] = {omp_alloc(0, omp_default_mem_alloc), omp_aligned_alloc(64, 0, omp_default_mem_alloc),
                       omp_calloc(0, 8, omp_default_mem_alloc), omp_calloc(8, 0, omp_default_mem_alloc),
                       omp_realloc(NULL, 0, omp_default_mem_alloc, omp_default_mem_alloc)};
    for (int i = 0; i < 5; ++i) zero_sized += blocks[i] == NULL, omp_free(blocks[i], omp_default_mem_alloc);
    omp_alloctrait_t null_traits[] = {{omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t nulling = omp_init_allocator(omp_default_mem_space, 1, null_traits);
    CHECK(nulling != omp_null_allocator);
    size_t volatile const most_volatile = SIZE_MAX; // hidden from the compiler, which rejects such constants
    size_t const most = most_volatile;
    int huge_refused = (omp_alloc(most - 40, omp_default_mem_alloc) == NULL) +
                       (omp_aligned_alloc(4096, most - 4000, nulling) == NULL) +
                       (omp_calloc(most / 2, 3, omp_default_mem_alloc) == NULL);
    void *kept = omp_alloc(64, nulling);
    huge_refused += omp_realloc(kept, most - 8, nulling, nulling) == NULL;
    CHECK(kept != NULL);
    ((volatile char *)kept)[63] = 1; // still the caller's after the refused move
    omp_free(kept, nulling);
    omp_destroy_allocator(nulling);
    printf("allocations of 0 bytes: %d of 5 null; of nearly SIZE_MAX bytes: %d of 4 refused\n", zero_sized,
           huge_refused);
    CHECK(zero_sized == 5 && huge_refused == 4);

    omp_alloctrait_t pool_traits[] = {{omp_atk_pool_size, 1000}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t pool = omp_init_allocator(omp_default_mem_space, 2, pool_traits);
    CHECK(pool != omp_null_allocator);
    char *grown = (char *)omp_alloc(600, pool);
    CHECK(grown != NULL);
    memset(grown, 7, 600);
    grown = (char *)omp_realloc(grown, 700, pool, pool);
    int const grew = grown != NULL && grown[599] == 7;
    char *shrunk = grown ? (char *)omp_realloc(grown, 950, pool, pool) : NULL;
    shrunk = shrunk ? (char *)omp_realloc(shrunk, 100, pool, pool) : NULL;
    int const moved = shrunk != NULL && shrunk[99] == 7;
    void *rest = omp_alloc(700, pool); // room again: the shrunk block holds 100 bytes
    printf("pool of 1000: 600 grown to 700 %s, 950 shrunk to 100 %s, then 700 more %s\n", grew ? "ok" : "refused",
           moved ? "ok" : "refused", rest ? "granted" : "refused");
    CHECK(grew && moved && rest != NULL);
    omp_free(rest, pool);
    omp_free(shrunk, pool);
    omp_destroy_allocator(pool);
    long const refused = pool_refusals_of_fitting_requests();
    printf("pool under contention: %ld fitting requests refused\n", refused);
    CHECK(refused == 0);
    long failed_moves = 0;
    long const overdrafts = pool_overdrafts_beside_a_moving_block(&failed_moves);
    printf("pool beside a moving block: %ld requests granted past its size, %ld moves refused\n", overdrafts,
           failed_moves);
    CHECK(overdrafts == 0 && failed_moves == 0);

    struct {
        omp_alloctrait_key_t key;
        omp_uintptr_t value;
        char const *what;
    } const cases[] = {
        {omp_atk_alignment, omp_atv_default, "alignment default"},
        {omp_atk_fallback, omp_atv_default, "fallback default"},
        {omp_atk_pool_size, omp_atv_default, "pool size default"},
        {omp_atk_sync_hint, omp_atv_private, "private"},
        {omp_atk_alignment, 1, "alignment 1"},
        {omp_atk_sync_hint, 77, "sync hint 77"},
        {omp_atk_access, 77, "access 77"},
        {omp_atk_pinned, 5, "pinned 5"},
        {omp_atk_partition, 77, "partition 77"},
        {omp_atk_alignment, 48, "alignment 48"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        omp_alloctrait_t trait[] = {{cases[i].key, cases[i].value}};
        omp_allocator_handle_t made = omp_init_allocator(omp_default_mem_space, 1, trait);
        printf("allocator trait %s: %s\n", cases[i].what, made == omp_null_allocator ? "refused" : "accepted");
        if (made != omp_null_allocator) omp_destroy_allocator(made);
    }
    omp_set_default_allocator(omp_null_allocator);
    printf("default allocator after setting the null one: %d\n", (int)omp_get_default_allocator());
    omp_set_default_allocator(omp_default_mem_alloc);
}

/**  `allocator_fb` without `fb_data` falls back to the calling task's default allocator (def-allocator-var), and a
 *   chain of fallbacks is followed to its end, however long. */
static void allocator_fallbacks(void) {
    omp_alloctrait_t pool_traits[] = {{omp_atk_pool_size, 1000}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t pool = omp_init_allocator(omp_default_mem_space, 2, pool_traits);
    omp_alloctrait_t empty_traits[] = {{omp_atk_pool_size, 0}, {omp_atk_fallback, omp_atv_allocator_fb}};
    omp_allocator_handle_t empty = omp_init_allocator(omp_default_mem_space, 2, empty_traits);
    CHECK(pool != omp_null_allocator && empty != omp_null_allocator);
    omp_set_default_allocator(pool);
    void *blocks[3];
    int granted = 0;
    for (int i = 0; i < 3; ++i) granted += (blocks[i] = omp_alloc(400, empty)) != NULL;
    omp_set_default_allocator(omp_default_mem_alloc);
    void *from_memory = omp_alloc(400, empty);
    printf("allocator_fb without fb_data, the default allocator a pool of 1000 bytes: %d of 3 blocks of 400; the "
           "default memory's: %s\n",
           granted, from_memory ? "granted" : "refused");
    CHECK(granted == 2 && from_memory != NULL);
    for (int i = 0; i < 3; ++i) omp_free(blocks[i], omp_null_allocator);
    omp_free(from_memory, omp_null_allocator);
    omp_destroy_allocator(empty);
    omp_destroy_allocator(pool);

    // Allocators with empty pools, each falling back to the one made before it, the first to the default memory.
    enum { links = 40 };
    omp_allocator_handle_t chain[links];
    for (int i = 0; i < links; ++i) {
        omp_alloctrait_t traits[] = {{omp_atk_pool_size, 0},
                                     {omp_atk_fallback, omp_atv_allocator_fb},
                                     {omp_atk_fb_data, i ? chain[i - 1] : omp_default_mem_alloc}};
        chain[i] = omp_init_allocator(omp_default_mem_space, 3, traits);
        CHECK(chain[i] != omp_null_allocator);
    }
    void *after_9 = omp_alloc(64, chain[8]), *after_40 = omp_alloc(64, chain[links - 1]);
    printf("fallback chains of 9 and %d allocators: %s, %s\n", links, after_9 ? "granted" : "refused",
           after_40 ? "granted" : "refused");
    CHECK(after_9 != NULL && after_40 != NULL);
    omp_free(after_9, omp_null_allocator), omp_free(after_40, omp_null_allocator);
    for (int i = 0; i < links; ++i) omp_destroy_allocator(chain[i]);
}

/**  The `0` flag pads a number with zeros after its sign or `0x` and a string field (`%H`, `%A`) with blanks; `.`
 *   right-justifies, no flag left-justifies. Fields whose values vary from run to run are checked against their
 *   bare values, and only the verdict is printed. */
static void affinity_padding(void) {
    char line[512];
    omp_capture_affinity(line, sizeof(line), "%0.6a|%0.4{ancestor_tnum}|%0.3a|%0.1a|%0.3L|%.4a|%4a|%0.3N");
    printf("zero-padded fields outside regions: '%s'\n", line);
    CHECK(strcmp(line, "-00001|-001|-01|-1|000|  -1|-1  |001") == 0);
    char const *const fields[] = {"i", "{native_thread_id}", "P", "{process_id}", "H", "{host}",
                                  "A", "{thread_affinity}"};
    int const count = (int)(sizeof(fields) / sizeof(fields[0]));
    int padded = 0;
    for (int i = 0; i < count; ++i) {
        char format[64], bare[256], expected[300];
        snprintf(format, sizeof(format), "%%%s", fields[i]);
        omp_capture_affinity(bare, sizeof(bare), format);
        int const width = (int)strlen(bare) + 3;
        int const number = i < 4, hex = i < 2;
        // `%0.W`: zeros after `0x` for a number, blanks first for a string.
        snprintf(format, sizeof(format), "%%0.%d%s", width, fields[i]);
        omp_capture_affinity(line, sizeof(line), format);
        if (number)
            snprintf(expected, sizeof(expected), "%.*s000%s", hex ? 2 : 0, bare, bare + (hex ? 2 : 0));
        else
            snprintf(expected, sizeof(expected), "   %s", bare);
        padded += strcmp(line, expected) == 0;
        // `%.W`: blanks first; `%W`: blanks last; `%0.1`: narrower than the value, which is unchanged.
        snprintf(format, sizeof(format), "%%.%d%s", width, fields[i]);
        omp_capture_affinity(line, sizeof(line), format);
        snprintf(expected, sizeof(expected), "   %s", bare);
        padded += strcmp(line, expected) == 0;
        snprintf(format, sizeof(format), "%%%d%s", width, fields[i]);
        omp_capture_affinity(line, sizeof(line), format);
        snprintf(expected, sizeof(expected), "%s   ", bare);
        padded += strcmp(line, expected) == 0;
        snprintf(format, sizeof(format), "%%0.1%s", fields[i]);
        omp_capture_affinity(line, sizeof(line), format);
        padded += strcmp(line, bare) == 0;
    }
    printf("run-dependent fields (%%i %%P %%H %%A, short and long names) padded as libgomp pads them: %d of %d\n",
           padded, 4 * count);
    CHECK(padded == 4 * count);
}

/**  What `call` writes to stderr, at most `size - 1` bytes of it, in `text`; returns how many bytes it wrote. */
static size_t stderr_of(void (*call)(void), char *text, size_t size) {
    fflush(stderr);
    FILE *file = tmpfile();
    CHECK(file != NULL);
    int const saved = dup(2);
    CHECK(saved >= 0 && dup2(fileno(file), 2) == 2);
    call();
    fflush(stderr);
    CHECK(dup2(saved, 2) == 2);
    close(saved);
    long const written = ftell(file) >= 0 ? (fseek(file, 0, SEEK_END), ftell(file)) : -1;
    CHECK(written >= 0);
    rewind(file);
    size_t const read = fread(text, 1, size - 1, file);
    text[read] = '\0';
    fclose(file);
    return (size_t)written;
}

/**  A Fortran format of 2000 characters: 1990 letters, then the thread number, team size and level. */
static char long_fortran_format[2000];
static void display_long_fortran_format(void) {
    omp_display_affinity_(long_fortran_format, sizeof(long_fortran_format));
}
static void set_long_fortran_format(void) {
    omp_set_affinity_format_(long_fortran_format, sizeof(long_fortran_format));
}

/**  Fortran character arguments of any length: captured, displayed and set whole. */
static void long_fortran_formats(void) {
    memset(long_fortran_format, 'a', sizeof(long_fortran_format));
    memcpy(long_fortran_format + 1990, "%n|%N|%L|", 9);
    static char captured[4000];
    int const length =
        omp_capture_affinity_(captured, long_fortran_format, sizeof(captured), sizeof(long_fortran_format));
    int const whole = length == 1997 && memcmp(captured + 1986, "aaaa0|1|0|a ", 12) == 0;
    // libgomp 12's Fortran `omp_display_affinity` writes a line of 512 characters or more from a block it never
    // filled (its length is right): the drop-in's line is checked, not libgomp's.
    static char displayed[4000];
    size_t const display_length = stderr_of(display_long_fortran_format, displayed, sizeof(displayed));
    printf("Fortran format of 2000 characters: captured %d characters%s, displayed %zu\n", length,
           whole ? " whole" : " cut", display_length);
    CHECK(whole && display_length == 1998);
    if (served_by_forkunion()) CHECK(memcmp(displayed + 1986, "aaaa0|1|0|a\n", 12) == 0);
    // The drop-in keeps 255 characters of a format (docs/gomp.md) and says so, counting the whole argument.
    char warning[512];
    stderr_of(set_long_fortran_format, warning, sizeof(warning));
    if (served_by_forkunion()) CHECK(strstr(warning, "a format of 2000 characters is cut") != NULL);
}

/**  A format cut to the drop-in's 255 characters keeps whole directives: it never becomes a malformed one. */
static void cut_format_keeps_whole_directives(void) {
    char format[300];
    memset(format, 'b', 250);
    strcpy(format + 250, "%{thread_num}");
    omp_set_affinity_format(format);
    char line[300];
    size_t const length = omp_capture_affinity(line, sizeof(line), NULL);
    CHECK(length == (served_by_forkunion() ? 250u : 251u));
}

/**  Formats libgomp stops at (exit status 1, a message on stderr), each run alone: `bad_format_<i>`. */
static char const *const bad_formats[] = {"%05n", "%z", "%{foo}", "%{foo", "level %", "%.n"};

/**  One case that ends the program with a status other than 0, as in libgomp: a request that overflows `size_t`
 *   from an allocator whose fallback is `abort_fb`, a malformed affinity format; or, drop-in modes only (libgomp
 *   retries for ever), fallback chains that come back to themselves, which fail as with `null_fb`. */
static int run_case(char const *name) {
    size_t volatile const half_volatile = SIZE_MAX / 2 + 1; // hidden from the compiler, which rejects the product
    size_t const half = half_volatile;
    if (strcmp(name, "calloc_overflow_abort_fb") == 0 || strcmp(name, "aligned_calloc_overflow_abort_fb") == 0) {
        omp_alloctrait_t traits[] = {{omp_atk_fallback, omp_atv_abort_fb}};
        omp_allocator_handle_t aborting = omp_init_allocator(omp_default_mem_space, 1, traits);
        CHECK(aborting != omp_null_allocator);
        printf("%s: (2^63) x 4 bytes, whose product a size_t cannot count\n", name);
        void *block = name[0] == 'a' ? omp_aligned_calloc(64, half, 4, aborting) : omp_calloc(half, 4, aborting);
        printf("returned %s instead of stopping the program\n", block ? "a block" : "null");
        return 0;
    }
    for (size_t i = 0; i < sizeof(bad_formats) / sizeof(bad_formats[0]); ++i) {
        char case_name[32];
        snprintf(case_name, sizeof(case_name), "bad_format_%zu", i);
        if (strcmp(name, case_name) != 0) continue;
        printf("capturing '%s'\n", bad_formats[i]);
        char line[64];
        size_t const length = omp_capture_affinity(line, sizeof(line), bad_formats[i]);
        printf("captured %zu characters instead of stopping the program\n", length);
        return 0;
    }
    if (strcmp(name, "display_changes") == 0) {
        // Under OMP_DISPLAY_AFFINITY, a thread shows its line again when what it shows changed: the team size (2,
        // 3, 2), then the level (a nested team); a region like the one before shows nothing new.
        omp_set_max_active_levels(2);
        int const sizes[] = {2, 3, 2, 2};
        atomic_int members = 0;
        for (int i = 0; i < 4; ++i) {
#pragma omp parallel num_threads(sizes[i])
            atomic_fetch_add(&members, 1);
        }
#pragma omp parallel num_threads(2)
        if (omp_get_thread_num() == 0) {
#pragma omp parallel num_threads(2)
            atomic_fetch_add(&members, 1);
        }
        printf("regions of 2, 3, 2 and 2 threads, then a nested one: %d members\n", atomic_load(&members));
        return 0;
    }
    if (strcmp(name, "fallback_cycles") == 0) {
        // An allocator whose fallback is the default allocator, which is itself.
        omp_alloctrait_t to_default[] = {{omp_atk_pool_size, 0}, {omp_atk_fallback, omp_atv_allocator_fb}};
        omp_allocator_handle_t self = omp_init_allocator(omp_default_mem_space, 2, to_default);
        omp_set_default_allocator(self);
        void *from_self = omp_alloc(64, self), *from_null = omp_alloc(64, omp_null_allocator);
        omp_set_default_allocator(omp_default_mem_alloc);
        // A line of 12 allocators into a ring of 5, closed through the default allocator: `fb_data` names an allocator
        // made before, so only the null one's step to def-allocator-var can come back. Each has an empty pool.
        omp_allocator_handle_t closing = omp_init_allocator(omp_default_mem_space, 2, to_default);
        omp_allocator_handle_t ring[4], line[12];
        for (int i = 3; i >= 0; --i) {
            omp_alloctrait_t traits[] = {{omp_atk_pool_size, 0},
                                         {omp_atk_fallback, omp_atv_allocator_fb},
                                         {omp_atk_fb_data, i == 3 ? closing : ring[i + 1]}};
            ring[i] = omp_init_allocator(omp_default_mem_space, 3, traits);
        }
        for (int i = 11; i >= 0; --i) {
            omp_alloctrait_t traits[] = {{omp_atk_pool_size, 0},
                                         {omp_atk_fallback, omp_atv_allocator_fb},
                                         {omp_atk_fb_data, i == 11 ? closing : line[i + 1]}};
            line[i] = omp_init_allocator(omp_default_mem_space, 3, traits);
        }
        omp_set_default_allocator(ring[0]);
        void *from_line = omp_alloc(64, line[0]);
        void *from_calloc = omp_calloc(8, 8, line[0]);
        omp_set_default_allocator(omp_default_mem_alloc);
        printf("fallback cycles: through the default allocator itself %s, %s; a line of 12 into a ring of 5 %s, %s\n",
               from_self ? "granted" : "failed", from_null ? "granted" : "failed", from_line ? "granted" : "failed",
               from_calloc ? "granted" : "failed");
        CHECK(from_self == NULL && from_null == NULL && from_line == NULL && from_calloc == NULL);
        for (int i = 0; i < 12; ++i) omp_destroy_allocator(line[i]);
        for (int i = 0; i < 4; ++i) omp_destroy_allocator(ring[i]);
        omp_destroy_allocator(closing);
        omp_destroy_allocator(self);
        return 0;
    }
    fprintf(stderr, "api: unknown case '%s'\n", name);
    return 2;
}

static void print_schedule(char const *label) {
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    printf("%s: kind %#x chunk %d\n", label, (unsigned)kind, chunk);
}

/**  `omp_get_thread_limit` from a function, since GCC refuses the call written directly in a `teams` body. */
__attribute__((noinline)) static int thread_limit_here(void) {
    return omp_get_thread_limit();
}

int main(int argc, char **argv) {
    report_server();
    if (argc > 1) return run_case(argv[1]);
    // Values the specification leaves to the implementation: what libgomp does, the drop-in does.
    omp_set_schedule(omp_sched_static, 0), print_schedule("static,0");
    omp_set_schedule(omp_sched_static, 5), print_schedule("static,5");
    omp_set_schedule(omp_sched_dynamic, 0), print_schedule("dynamic,0");
    omp_set_schedule(omp_sched_dynamic, -3), print_schedule("dynamic,-3");
    omp_set_schedule((omp_sched_t)(omp_sched_guided | omp_sched_monotonic), 4), print_schedule("monotonic guided,4");
    omp_set_schedule(omp_sched_auto, 7), print_schedule("auto,7 (chunk kept)");
    omp_set_schedule((omp_sched_t)9, 7), print_schedule("unknown kind (ignored)");
    int const max = omp_get_max_threads();
    omp_set_num_threads(0), printf("omp_set_num_threads(0): %d\n", omp_get_max_threads());
    omp_set_num_threads(-1), printf("omp_set_num_threads(-1): %d\n", omp_get_max_threads());
    omp_set_num_threads(max);
    omp_set_dynamic(1), printf("dynamic on: %d\n", omp_get_dynamic());
    omp_set_dynamic(0), printf("dynamic off: %d\n", omp_get_dynamic());
    printf("thread limit %d, cancellation %d, proc_bind %d, max task priority %d\n", omp_get_thread_limit(),
           omp_get_cancellation(), (int)omp_get_proc_bind(), omp_get_max_task_priority());
    printf("devices %d, initial %d, device num %d, is initial %d, default %d\n", omp_get_num_devices(),
           omp_get_initial_device(), omp_get_device_num(), omp_is_initial_device(), omp_get_default_device());
    omp_set_default_device(3), printf("default device set to %d\n", omp_get_default_device());
    omp_set_default_device(-5), printf("default device set to -5: %d\n", omp_get_default_device());
    omp_set_default_device(0);
    int const teams_before = omp_get_max_teams(), teams_limit_before = omp_get_teams_thread_limit();
    omp_set_num_teams(0), omp_set_teams_thread_limit(0);
    printf("teams set to 0: max teams %d, teams thread limit %d\n", omp_get_max_teams(), omp_get_teams_thread_limit());
    omp_set_num_teams(-2), omp_set_teams_thread_limit(-2);
    printf("teams set to -2: max teams %d, teams thread limit %d\n", omp_get_max_teams(), omp_get_teams_thread_limit());
    omp_set_num_teams(teams_before), omp_set_teams_thread_limit(teams_limit_before);
    printf("outside regions: level %d, active %d, ancestor(0) %d, ancestor(1) %d, team size(0) %d, size(1) %d\n",
           omp_get_level(), omp_get_active_level(), omp_get_ancestor_thread_num(0), omp_get_ancestor_thread_num(1),
           omp_get_team_size(0), omp_get_team_size(1));
    printf("teams outside: %d of %d, max teams %d, teams thread limit %d\n", omp_get_team_num(), omp_get_num_teams(),
           omp_get_max_teams(), omp_get_teams_thread_limit());
    printf("places %d, place %d, partition %d\n", omp_get_num_places(), omp_get_place_num(),
           omp_get_partition_num_places());

    // Nesting: the levels asked for, up to the supported 255 (test/gomp/nested.c runs nested teams).
    omp_set_max_active_levels(5);
    printf("max active levels after setting 5: %d of %d supported\n", omp_get_max_active_levels(),
           omp_get_supported_active_levels());
    omp_set_max_active_levels(1);

    // ICVs are per task: a setter inside a region changes only its own implicit task.
    int inner_max[8] = {0};
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) omp_set_num_threads(7);
#pragma omp barrier
        inner_max[omp_get_thread_num()] = omp_get_max_threads();
    }
    printf("per-task nthreads: %d %d, outer still %d\n", inner_max[0], inner_max[1], omp_get_max_threads());

    // Host teams: each team once, in a region of its own.
    int team_seen[4] = {0}, teams_count = 0;
#pragma omp teams num_teams(3)
    {
        team_seen[omp_get_team_num()]++;
        teams_count = omp_get_num_teams();
    }
    printf("teams: %d teams, each once: %d %d %d %d\n", teams_count, team_seen[0], team_seen[1], team_seen[2],
           team_seen[3]);

    // thread-limit-var in a `teams` region: its `thread_limit` clause, else teams-thread-limit-var once set; the same
    // in a region inside it, whose team it also bounds.
    int limit_in_teams = 0, limit_in_region = 0, region_size = 0, limit_after_set = 0;
#pragma omp teams num_teams(1) thread_limit(13)
    {
        limit_in_teams = thread_limit_here();
#pragma omp parallel num_threads(20)
#pragma omp master
        limit_in_region = omp_get_thread_limit(), region_size = omp_get_num_threads();
    }
    omp_set_teams_thread_limit(15);
#pragma omp teams num_teams(1)
    limit_after_set = thread_limit_here();
    printf("thread limit in teams thread_limit(13): %d, in a region there: %d (team of %d asked 20); after "
           "omp_set_teams_thread_limit(15): %d, outside: %d\n",
           limit_in_teams, limit_in_region, region_size, limit_after_set, omp_get_thread_limit());

    // The affinity format: fields with widths, short and long names; `%i` and `%A` vary by run, so not printed.
    char buffer[256];
    size_t const length =
        omp_capture_affinity(buffer, sizeof(buffer), "%L|%n|%N|%a|%t|%T|%0.4n|%.3L|%5n|%{thread_num}|%{nesting_level}");
    printf("capture outside: %zu '%s'\n", length, buffer);
    char const *format_string = "level=%L thread=%0.3n of %N";
    omp_set_affinity_format(format_string);
    CHECK(omp_get_affinity_format(buffer, sizeof(buffer)) == strlen(format_string) &&
          strcmp(buffer, format_string) == 0);
    char captured[2][64] = {{0}};
#pragma omp parallel num_threads(2)
    omp_capture_affinity(captured[omp_get_thread_num()], sizeof(captured[0]), NULL);
    printf("capture inside: '%s' '%s'\n", captured[0], captured[1]);
    CHECK(omp_get_affinity_format(buffer, 4) == strlen(format_string) && strcmp(buffer, "lev") == 0);

    // Allocators: alignment, zeroing, reallocation, and a pool that refuses once full (null fallback).
    void *plain = omp_alloc(100, omp_default_mem_alloc);
    CHECK(plain && ((uintptr_t)plain % sizeof(void *)) == 0);
    omp_free(plain, omp_default_mem_alloc);
    omp_alloctrait_t aligned_traits[] = {{omp_atk_alignment, 256}};
    omp_allocator_handle_t aligned = omp_init_allocator(omp_default_mem_space, 1, aligned_traits);
    CHECK(aligned != omp_null_allocator);
    int *zeroes = (int *)omp_calloc(50, sizeof(int), aligned);
    CHECK(zeroes && ((uintptr_t)zeroes % 256) == 0);
    for (int i = 0; i < 50; ++i) {
        CHECK(zeroes[i] == 0);
        zeroes[i] = i;
    }
    zeroes = (int *)omp_realloc(zeroes, 200 * sizeof(int), aligned, aligned);
    CHECK(zeroes != NULL);
    for (int i = 0; i < 50; ++i) CHECK(zeroes[i] == i);
    omp_free(zeroes, aligned);
    void *wide = omp_aligned_alloc(4096, 10, omp_default_mem_alloc);
    CHECK(wide && ((uintptr_t)wide % 4096) == 0);
    omp_free(wide, omp_null_allocator);
    omp_destroy_allocator(aligned);
    omp_alloctrait_t pool_traits[] = {{omp_atk_pool_size, 1024}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t small_pool = omp_init_allocator(omp_default_mem_space, 2, pool_traits);
    CHECK(small_pool != omp_null_allocator);
    void *first = omp_alloc(800, small_pool);
    void *second = omp_alloc(800, small_pool);
    printf("pool of 1024 bytes: first %s, second %s\n", first ? "granted" : "refused", second ? "granted" : "refused");
    omp_free(first, small_pool);
    void *third = omp_alloc(800, small_pool);
    printf("after a free: %s\n", third ? "granted" : "refused");
    omp_free(third, small_pool);
    omp_destroy_allocator(small_pool);
    omp_set_default_allocator(omp_low_lat_mem_alloc);
    printf("default allocator %d\n", (int)omp_get_default_allocator());
    omp_set_default_allocator(omp_default_mem_alloc);
    allocation_edges();
    allocator_fallbacks();

    // The Fortran spellings, called as gfortran calls them.
    int four = 4, schedule_kind = omp_sched_guided, schedule_chunk = 6;
    int64_t three = 3;
    omp_set_num_threads_(&four);
    printf("Fortran: max threads after set(4): %d\n", omp_get_max_threads_());
    omp_set_num_threads_8_(&three);
    printf("Fortran: max threads after set_8(3): %d\n", omp_get_max_threads_());
    omp_set_num_threads(max);
    omp_set_schedule_(&schedule_kind, &schedule_chunk);
    int kind_out = 0;
    int64_t chunk_out = 0;
    omp_get_schedule_8_(&kind_out, &chunk_out);
    printf("Fortran: schedule %d,%ld\n", kind_out, (long)chunk_out);
    int one_flag = 1;
    omp_set_dynamic_(&one_flag);
    printf("Fortran: dynamic %d\n", omp_get_dynamic_());
    omp_set_dynamic(0);
    // 8-byte arguments beyond a C `int` are clamped, never wrapped (2^32 is not 0): logicals are any nonzero value.
    int64_t const wide_level = INT64_C(1) << 32, wide_chunk = (INT64_C(1) << 32) + 3, wide_flag = INT64_C(1) << 32;
    int const levels_before = omp_get_max_active_levels();
    omp_set_max_active_levels_8_(&wide_level);
    int const wide_levels = omp_get_max_active_levels();
    omp_set_max_active_levels(levels_before);
    omp_set_schedule_8_(&schedule_kind, &wide_chunk);
    omp_sched_t wide_kind;
    int wide_chunk_out = 0;
    omp_get_schedule(&wide_kind, &wide_chunk_out);
    omp_set_dynamic_8_(&wide_flag);
    int const wide_dynamic = omp_get_dynamic();
    omp_set_dynamic(0);
    printf("Fortran 8-byte 2^32: max active levels %d, schedule chunk %d (+3), dynamic %d, team size at level "
           "2^32 %d\n",
           wide_levels, wide_chunk_out, wide_dynamic, omp_get_team_size_8_(&wide_level));
    CHECK(wide_levels == omp_get_supported_active_levels() && wide_chunk_out == INT32_MAX && wide_dynamic == 1);
    int fortran_team = 0, fortran_in_parallel = 0, fortran_ancestor = -2, fortran_size = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
    {
        int const one = 1;
        int64_t const level = 1;
        fortran_team = omp_get_num_threads_() * 10 + omp_get_thread_num_();
        fortran_in_parallel = omp_in_parallel_();
        fortran_ancestor = omp_get_ancestor_thread_num_(&one);
        fortran_size = omp_get_team_size_8_(&level);
    }
    printf("Fortran in a region: team %d, in parallel %d, ancestor %d, size %d\n", fortran_team, fortran_in_parallel,
           fortran_ancestor, fortran_size);
    int32_t fortran_lock;
    int64_t fortran_nest;
    omp_init_lock_(&fortran_lock), omp_init_nest_lock_(&fortran_nest);
    long guarded = 0, nest_guarded = 0;
#pragma omp parallel for num_threads(2)
    for (int i = 0; i < 2000; ++i) {
        omp_set_lock_(&fortran_lock);
        guarded++;
        omp_unset_lock_(&fortran_lock);
        omp_set_nest_lock_(&fortran_nest);
        omp_set_nest_lock_(&fortran_nest);
        nest_guarded++;
        omp_unset_nest_lock_(&fortran_nest);
        omp_unset_nest_lock_(&fortran_nest);
    }
    int const test_free = omp_test_lock_(&fortran_lock), test_held = omp_test_lock_(&fortran_lock);
    omp_unset_lock_(&fortran_lock);
    int const depth1 = omp_test_nest_lock_(&fortran_nest), depth2 = omp_test_nest_lock_(&fortran_nest);
    omp_unset_nest_lock_(&fortran_nest), omp_unset_nest_lock_(&fortran_nest);
    omp_destroy_lock_(&fortran_lock), omp_destroy_nest_lock_(&fortran_nest);
    printf("Fortran locks: guarded %ld and %ld, test %d then %d, nest depths %d %d\n", guarded, nest_guarded, test_free,
           test_held, depth1, depth2);
    char fortran_format[40];
    char const blank_padded[] = "thread %n   ";
    omp_set_affinity_format_(blank_padded, sizeof(blank_padded) - 1);
    int const needed = omp_get_affinity_format_(fortran_format, sizeof(fortran_format));
    printf("Fortran format: %d '%.*s'\n", needed, needed, fortran_format);
    char fortran_captured[20];
    int const captured_length = omp_capture_affinity_(fortran_captured, "%N/%n", sizeof(fortran_captured), 5);
    printf("Fortran capture: %d '%.*s' then blanks: %d\n", captured_length, captured_length, fortran_captured,
           fortran_captured[captured_length] == ' ' && fortran_captured[19] == ' ');
    // A line longer than any fixed buffer: 2000 blanks of padding, then the thread number and a marker.
    static char long_captured[3000];
    char const long_format[] = "%.2000n|end";
    int const long_length =
        omp_capture_affinity_(long_captured, long_format, sizeof(long_captured), sizeof(long_format) - 1);
    printf("Fortran capture of a 2004-character line: %d, ends in '%.5s'\n", long_length, long_captured + 1999);
    CHECK(long_length == 2004 && memcmp(long_captured + 1999, "0|end", 5) == 0);
    long_fortran_formats();
    omp_set_affinity_format_(blank_padded, sizeof(blank_padded) - 1);
    CHECK(omp_get_wtime_() > 0);

    // Pausing the runtime's threads between regions, then using it again.
    int const paused = omp_pause_resource_all(omp_pause_soft);
    int after = 0;
#pragma omp parallel num_threads(2) reduction(+ : after)
    after += 1;
    printf("pause resource all: %d, then a team of %d\n", paused, after);
    int inside = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
    inside = omp_pause_resource_all(omp_pause_soft);
    printf("pause inside a region: %d\n", inside);
    int inactive = 0;
#pragma omp parallel if (0)
    inactive = omp_pause_resource_all(omp_pause_soft);
    printf("pause inside an inactive region: %d\n", inactive);

    // omp_get_nested: whether a region started here could be active, at each active level (max-active-levels 2).
    omp_set_max_active_levels(2);
    int nested_at[3] = {-1, -1, -1};
    nested_at[0] = omp_get_nested();
#pragma omp parallel num_threads(2)
#pragma omp master
    {
        nested_at[1] = omp_get_nested();
#pragma omp parallel num_threads(2)
#pragma omp master
        nested_at[2] = omp_get_nested();
    }
    printf("omp_get_nested at active levels 0, 1, 2 under max-active-levels 2: %d %d %d\n", nested_at[0], nested_at[1],
           nested_at[2]);
    CHECK(nested_at[0] == 1 && nested_at[1] == 1 && nested_at[2] == 0);
    omp_set_max_active_levels(1);

    // A field width beyond any line: bounded padding (and no overflow of the width's arithmetic).
    char widest[64];
    size_t const wide_length = omp_capture_affinity(widest, sizeof(widest), "%99999999999L");
    if (served_by_forkunion()) CHECK(wide_length >= 64 && wide_length <= 4096);
    printf("a field 99999999999 wide: %s\n", wide_length >= 64 ? "padded" : "not padded");
    affinity_padding();
    cut_format_keeps_whole_directives();
    return 0;
}
