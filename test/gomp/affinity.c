/*  Thread affinity: where `proc_bind(primary | close | spread)` puts a team's threads and what place partition each
 *  implicit task gets, relative to the master's place and partition (OpenMP 5.1, section 2.6.2): teams of fewer and
 *  more threads than places, nested teams inside `spread` and `close` members, and regions whose bindings alternate,
 *  where a thread must move between regions. Every member reports its place, its partition, whether its CPU mask is
 *  its place's and its bind-var (a team's `proc_bind` clause becomes its members', so a nested team with no clause
 *  binds as the clause said); the runner compares the lines with libgomp's. Run with `OMP_PLACES` of 2 and 5 places
 *  (places may repeat CPUs, so 5 fit on 2), and without places (nothing is bound). */
#include "gomp_test.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

enum { max_threads_k = 8, max_places_k = 64 };

typedef struct {
    int place;
    int partition[max_places_k];
    int partition_size;
    int mask_ok; // the thread's CPU mask is its place's (or, unbound, any)
    int bind;    // bind-var of the implicit task: the region's clause while bind-var was not false
} report_t;

static report_t reports[max_threads_k][max_threads_k]; // [outer thread][inner thread]; inner 0 for flat teams

static int mask_matches_place(int place) {
    if (place < 0) return 1;
    cpu_set_t mask, wanted;
    CPU_ZERO(&mask);
    CPU_ZERO(&wanted);
    if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return 0;
    int ids[max_places_k];
    int const count = omp_get_place_num_procs(place);
    if (count <= 0 || count > max_places_k) return 0;
    omp_get_place_proc_ids(place, ids);
    for (int i = 0; i < count; ++i) CPU_SET(ids[i], &wanted);
    return CPU_EQUAL(&mask, &wanted);
}

static void report(report_t *out) {
    out->place = omp_get_place_num();
    out->partition_size = omp_get_partition_num_places();
    CHECK(out->partition_size >= 0 && out->partition_size <= max_places_k);
    omp_get_partition_place_nums(out->partition);
    out->mask_ok = mask_matches_place(out->place);
    out->bind = (int)omp_get_proc_bind();
}

static void print_report(char const *name, int outer, int inner, report_t const *r) {
    printf("%s %d.%d: place %d, partition", name, outer, inner, r->place);
    for (int i = 0; i < r->partition_size; ++i) printf(" %d", r->partition[i]);
    printf(", mask %s, bind %d\n", r->mask_ok ? "ok" : "WRONG", r->bind);
}

static void print_flat(char const *name, int threads) {
    for (int t = 0; t < threads; ++t) print_report(name, t, 0, &reports[t][0]);
}

typedef enum { primary_k, close_k, spread_k, inherit_k } binding_t;

/**  Runs `body(argument)` in a region of `threads` threads bound by `binding` (`inherit_k`: no clause). */
static void region(binding_t binding, int threads, void (*body)(void *), void *argument) {
    switch (binding) {
    case inherit_k:
#pragma omp parallel num_threads(threads)
        body(argument);
        break;
    case primary_k:
#pragma omp parallel num_threads(threads) proc_bind(primary)
        body(argument);
        break;
    case close_k:
#pragma omp parallel num_threads(threads) proc_bind(close)
        body(argument);
        break;
    case spread_k:
#pragma omp parallel num_threads(threads) proc_bind(spread)
        body(argument);
        break;
    }
}

static int team_sizes[max_threads_k]; // [outer thread]: its inner team's size; [0] also the flat team's

static void flat_body(void *argument) {
    (void)argument;
    report(&reports[omp_get_thread_num()][0]);
#pragma omp single
    team_sizes[0] = omp_get_num_threads();
}

static void flat(char const *name, int threads, binding_t binding) {
    memset(reports, 0, sizeof(reports));
    region(binding, threads, flat_body, NULL);
    print_flat(name, team_sizes[0]);
}

typedef struct {
    int inner_threads;
    binding_t inner_binding;
} nest_t;

static void inner_body(void *argument) {
    int const outer = *(int const *)argument;
    report(&reports[outer][omp_get_thread_num()]);
#pragma omp single
    team_sizes[outer] = omp_get_num_threads();
}

static int outer_size;
static void outer_body(void *argument) {
    nest_t const *nest = (nest_t const *)argument;
    int outer = omp_get_thread_num();
#pragma omp single
    outer_size = omp_get_num_threads();
    region(nest->inner_binding, nest->inner_threads, inner_body, &outer);
}

static void nested(char const *name, int outer_threads, binding_t outer_binding, int inner_threads,
                   binding_t inner_binding) {
    memset(reports, 0, sizeof(reports));
    memset(team_sizes, 0, sizeof(team_sizes));
    nest_t nest = {inner_threads, inner_binding};
    region(outer_binding, outer_threads, outer_body, &nest);
    for (int o = 0; o < outer_size; ++o)
        for (int i = 0; i < team_sizes[o]; ++i) print_report(name, o, i, &reports[o][i]);
}

static void spread6(void) {
    flat("spread6", 6, spread_k);
}
static void spread3(void) {
    flat("spread3", 3, spread_k);
}
static void close3(void) {
    flat("close3", 3, close_k);
}
static void close5(void) {
    flat("close5", 5, close_k);
}
static void primary3(void) {
    flat("primary3", 3, primary_k);
}
/**  The same threads move between regions whose bindings differ. */
static void alternating(void) {
    for (int round = 0; round < 3; ++round) {
        flat("alternating close2", 2, close_k);
        flat("alternating primary2", 2, primary_k);
        flat("alternating spread3", 3, spread_k);
    }
}
static void spread3_close2(void) {
    nested("spread3/close2", 3, spread_k, 2, close_k);
}
static void spread2_spread2(void) {
    nested("spread2/spread2", 2, spread_k, 2, spread_k);
}
static void close2_primary3(void) {
    nested("close2/primary3", 2, close_k, 3, primary_k);
}
static void close2_close2(void) {
    nested("close2/close2", 2, close_k, 2, close_k);
}
/**  A team with no clause inside a `primary` one binds as `primary` too: the clause became its parent's bind-var. */
static void primary2_inherit2(void) {
    nested("primary2/inherit2", 2, primary_k, 2, inherit_k);
}
/**  Explicit tasks and serialized regions see their encountering task's partition. The task is undeferred: libgomp
 *   12 answers for a deferred one with the partition of whichever thread runs it. */
static void inherited(void) {
    int task_partition = -1, serial_partition = -1, member_partition = -1;
#pragma omp parallel num_threads(3) proc_bind(spread)
    if (omp_get_thread_num() == 1) {
        member_partition = omp_get_partition_num_places();
#pragma omp task shared(task_partition) if (0)
        task_partition = omp_get_partition_num_places();
#pragma omp taskwait
#pragma omp parallel num_threads(1)
        serial_partition = omp_get_partition_num_places();
    }
    printf("partition sizes: member %d, its task %d, its serialized region %d\n", member_partition, task_partition,
           serial_partition);
    CHECK(task_partition == member_partition && serial_partition == member_partition);
}

/**  Runs `scenario` in a child forked before this process ran any region, so each starts with no thread placed yet:
 *   libgomp 12 reuses pooled threads without moving them when a team follows others of another shape (a `close`
 *   team of 5 on 2 places after a `spread` team of 3 left thread 3 on place 0), which the specification does not
 *   allow, so its answers are comparable only there. */
static void isolated(void (*scenario)(void)) {
    fflush(stdout);
    pid_t const child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        scenario();
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
    report_server();
    omp_set_max_active_levels(2);
    report_t initial;
    report(&initial);
    printf("places %d, bind %d\n", omp_get_num_places(), (int)omp_get_proc_bind());
    print_report("initial", 0, 0, &initial);
    void (*const scenarios[])(void) = {
        spread6,        spread3,         close3,          close5,        primary3,          alternating,
        spread3_close2, spread2_spread2, close2_primary3, close2_close2, primary2_inherit2, inherited};
    for (unsigned i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); ++i) isolated(scenarios[i]);
    return 0;
}
