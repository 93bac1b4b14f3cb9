/*  Tasks: `task` (shared, firstprivate and large data, `if`, `final`, `untied`, `mergeable`, `priority`),
 *  `taskwait`, `taskgroup`, `taskyield`, `depend` chains, recursive tasks, and `taskloop` (grainsize, num_tasks,
 *  strict, nogroup, counting down, unsigned long long), including a check that its tasks really run on more than
 *  one thread of the team; chains of tasks that each create the next (60,000 long, and with 12 KiB data blocks);
 *  user threads that leave through `pthread_exit` inside a task. */
#include "gomp_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

static long fib(int n) {
    if (n < 2) return n;
    long a, b;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

enum { n_k = 10000 };
static int hits[n_k];

static void expect_each_once(char const *name, int count) {
    for (int i = 0; i < count; ++i)
        if (hits[i] != 1) {
            fprintf(stderr, "%s: iteration %d ran %d times\n", name, i, hits[i]);
            abort();
        }
    memset(hits, 0, sizeof(hits));
}

/**  Tasks of a taskloop each wait (bounded) until two distinct threads have run tasks of it. The encountering task
 *   changes its nthreads-var first, for itself alone: `*icv_violations` counts the tasks that did not inherit it. */
static atomic_int runners_mask;
static int shared_taskloop(int tasks, int *icv_violations) {
    atomic_store(&runners_mask, 0);
    int timed_out = 0, violations = 0;
#pragma omp parallel
#pragma omp single
    {
        int const nthreads = omp_get_max_threads() + 3;
        omp_set_num_threads(nthreads);
#pragma omp taskloop num_tasks(tasks)
        for (int t = 0; t < tasks; ++t) {
            if (omp_get_max_threads() != nthreads) {
#pragma omp atomic
                violations++;
            }
            int const mine = 1 << (omp_get_thread_num() % 30);
            atomic_fetch_or(&runners_mask, mine);
            double const deadline = omp_get_wtime() + 30.0;
            // Bounded: a runtime that ran every task on one thread fails here instead of hanging.
            while (__builtin_popcount(atomic_load(&runners_mask)) < 2)
                if (omp_get_wtime() > deadline) {
#pragma omp atomic write
                    timed_out = 1;
                    break;
                }
        }
    }
    *icv_violations = violations;
    return timed_out ? 0 : __builtin_popcount(atomic_load(&runners_mask));
}

/**  A `taskloop` inside a shared `taskloop`'s task that a helping member runs after the encountering thread has
 *   finished its own task (and withdrawn the loop): that inner loop must not wait for the helpers, itself among them.
 *   The helper's task waits for the other task's end, then lingers 2 ms so that the encountering thread gets there
 *   (a window, not a synchronization: either order must complete). Returns the inner loops' sum. */
static long taskloop_in_helped_task(int rounds, int *helped) {
    atomic_long sum = 0;
    atomic_int helpers = 0;
    for (int round = 0; round < rounds; ++round) {
        atomic_int encountering_done = 0;
#pragma omp parallel num_threads(2) shared(sum, helpers, encountering_done)
#pragma omp single
        {
            int const encountering = omp_get_thread_num();
#pragma omp taskloop num_tasks(2) firstprivate(encountering)
            for (int i = 0; i < 2; ++i) {
                int const mine = omp_get_thread_num() == encountering;
                if (!mine) {
                    while (!atomic_load(&encountering_done)) {}
                    double const until = omp_get_wtime() + 0.002;
                    while (omp_get_wtime() < until) {}
                    atomic_fetch_add(&helpers, 1);
                }
#pragma omp taskloop num_tasks(4)
                for (int j = 0; j < 8; ++j) atomic_fetch_add(&sum, j);
                if (mine) atomic_store(&encountering_done, 1);
            }
        }
    }
    *helped = atomic_load(&helpers);
    return atomic_load(&sum);
}

/**  The same, but the helper's task first opens a nested region whose barrier helps with that region's own shared
 *   `taskloop` (the helper waits there while the other member shares one): the helper must still run its later
 *   `taskloop` alone. Returns that loop's sum over `rounds` rounds. */
static long taskloop_after_nested_help(int rounds) {
    atomic_long sum = 0;
    int const levels = omp_get_max_active_levels();
    omp_set_max_active_levels(2);
    for (int round = 0; round < rounds; ++round) {
        atomic_int encountering_done = 0;
#pragma omp parallel num_threads(2) shared(sum, encountering_done)
#pragma omp single
        {
            int const encountering = omp_get_thread_num();
#pragma omp taskloop num_tasks(2) firstprivate(encountering)
            for (int i = 0; i < 2; ++i) {
                int const mine = omp_get_thread_num() == encountering;
                atomic_int waiting = 0;
#pragma omp parallel num_threads(2) shared(waiting)
                {
                    if (omp_get_thread_num() == 1) {
                        while (!atomic_load(&waiting)) continue;
#pragma omp taskloop num_tasks(4)
                        for (int j = 0; j < 4; ++j) {
                            double const until = omp_get_wtime() + 0.001;
                            while (omp_get_wtime() < until) continue;
                        }
                    } else {
                        atomic_store(&waiting, 1);
                    }
#pragma omp barrier
                }
                if (!mine) {
                    while (!atomic_load(&encountering_done)) continue;
                    double const until = omp_get_wtime() + 0.002;
                    while (omp_get_wtime() < until) continue;
                }
#pragma omp taskloop num_tasks(4)
                for (int k = 0; k < 4; ++k) atomic_fetch_add(&sum, 1);
                if (mine) atomic_store(&encountering_done, 1);
            }
        }
    }
    omp_set_max_active_levels(levels);
    return atomic_load(&sum);
}

/**  Tasks that each create the next and never wait, inside a region: as deep as the chain is long if every task ran
 *   at its construct on one stack. Each link checks it runs in the region with the ICVs its creator set. */
enum { chain_k = 60000, big_chain_k = 3000 };
static long chain_links, chain_wrong;
static void chain_link(long i, int threads) {
    if (i == chain_k) return;
#pragma omp atomic
    chain_links += 1;
    if (!omp_in_parallel() || omp_get_max_threads() != threads || omp_in_final()) {
#pragma omp atomic
        chain_wrong += 1;
    }
    omp_set_num_threads(threads + 1); // what the next link inherits
#pragma omp task firstprivate(i, threads)
    chain_link(i + 1, threads + 1);
}

typedef struct {
    long index;
    char bytes[12 * 1024]; // a data block past what a task keeps on the stack of its creator's frame
} big_link_t;
static long big_links;
static void big_chain_link(big_link_t link) {
    if (link.index == big_chain_k) return;
    if (link.bytes[link.index % sizeof(link.bytes)] == (char)(link.index & 0x7f)) {
#pragma omp atomic
        big_links += 1;
    }
    link.index += 1;
    link.bytes[link.index % sizeof(link.bytes)] = (char)(link.index & 0x7f);
#pragma omp task firstprivate(link)
    big_chain_link(link);
}

static void check_chains(void) {
#pragma omp parallel
#pragma omp single
    {
        omp_set_num_threads(1000);
        chain_link(0, 1000);
    }
    static big_link_t first; // zeroed: index 0 expects byte 0 to be 0
    int threads = 0;
#pragma omp parallel shared(threads)
    {
#pragma omp single
        threads = omp_get_num_threads();
        big_link_t mine = first; // on every thread's stack: the workers' too (`OMP_STACKSIZE` may be small)
        big_chain_link(mine);
    }
    printf("chains of tasks that create the next: %ld of %d links, %ld wrong; with 12 KiB blocks, one per thread: "
           "%s\n",
           chain_links, chain_k, chain_wrong, big_links == (long)threads * big_chain_k ? "every link" : "LINKS LOST");
    CHECK(chain_links == chain_k && chain_wrong == 0 && big_links == (long)threads * big_chain_k);
}

/**  Chains started with only `deep_keep_k` bytes of each thread's stack left, the program's own recursion having
 *   taken the rest: a runtime that runs the links nested until they hold some budget of stack overflows it. Not
 *   under the sanitizers, whose own calls need more stack than that. */
enum { deep_keep_k = 12 << 10, deep_links_k = 500 };
static long deep_links;
static void deep_link(int left) {
    volatile char pad[256];
    pad[0] = (char)left;
    if (left == 0) return;
#pragma omp atomic
    deep_links += 1;
#pragma omp task
    deep_link(left - 1);
    (void)pad[0];
}
static void descend(uintptr_t low) {
    volatile char frame[1024];
    frame[0] = 1;
    if ((uintptr_t)__builtin_frame_address(0) - low > deep_keep_k) {
        descend(low);
        (void)frame[0];
        return;
    }
    deep_link(deep_links_k);
#pragma omp taskwait
}
static void check_deep_chains(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    fprintf(stderr, "chains started deep in the stack: skipped under a sanitizer\n");
#else
    int threads = 0;
#pragma omp parallel shared(threads)
    {
#pragma omp single
        threads = omp_get_num_threads();
        pthread_attr_t attributes;
        void *low = NULL;
        size_t size = 0;
        CHECK(pthread_getattr_np(pthread_self(), &attributes) == 0);
        CHECK(pthread_attr_getstack(&attributes, &low, &size) == 0);
        pthread_attr_destroy(&attributes);
        descend((uintptr_t)low);
    }
    CHECK(deep_links == (long)threads * deep_links_k);
    fprintf(stderr, "chains started with %d KiB of the stack left: %ld links on %d threads\n", deep_keep_k >> 10,
            deep_links, threads);
#endif
}

/**  A user thread that leaves through `pthread_exit` inside a task, outside any region (libgomp unwinds there): a
 *   plain task, a detached one that fulfilled its event first, and one whose `firstprivate` copy is on the heap. */
static void *exit_in_task(void *argument) {
    intptr_t const kind = (intptr_t)argument;
    if (kind == 0) {
#pragma omp task
        pthread_exit((void *)40);
    } else if (kind == 1) {
        omp_event_handle_t event;
#pragma omp task detach(event)
        {
            omp_fulfill_event(event);
            pthread_exit((void *)41);
        }
    } else {
        static int big[8192]; // copied into the task's data block: past what stays on the stack
        big[8191] = 42;
#pragma omp task firstprivate(big)
        pthread_exit((void *)(intptr_t)big[8191]);
    }
    return NULL;
}

/**  Each kind of `exit_in_task` twice: the joiner gets the thread's value, and the tasks and regions after it (the
 *   rest of this program) run as before. */
static void check_exit_in_task(void) {
    long values[6] = {0};
    for (int i = 0; i < 6; ++i) {
        pthread_t thread;
        void *value = NULL;
        CHECK(pthread_create(&thread, NULL, exit_in_task, (void *)(intptr_t)(i % 3)) == 0);
        CHECK(pthread_join(thread, &value) == 0);
        values[i] = (long)(intptr_t)value;
    }
    printf("pthread_exit in a task: %ld %ld %ld %ld %ld %ld\n", values[0], values[1], values[2], values[3], values[4],
           values[5]);
    for (int i = 0; i < 6; ++i) CHECK(values[i] == 40 + i % 3);
}

int main(void) {
    report_server();
    check_exit_in_task();
    check_chains();
    check_deep_chains();
    long f = 0;
#pragma omp parallel
#pragma omp single
    f = fib(22);
    printf("fib(22) = %ld\n", f);

    // Data environments: shared, firstprivate (copied at creation), a big firstprivate array.
    int shared_sum = 0, errors = 0;
    int big[4096];
    for (int i = 0; i < 4096; ++i) big[i] = i;
#pragma omp parallel reduction(+ : errors)
#pragma omp single
    {
        for (int i = 0; i < 100; ++i) {
#pragma omp task firstprivate(i) shared(shared_sum)
            {
#pragma omp atomic
                shared_sum += i;
            }
        }
        int value = 7;
#pragma omp task firstprivate(value, big)
        {
            errors += value != 7;
            for (int i = 0; i < 4096; ++i) errors += big[i] != i;
            big[0] = -1; // the task's own copy
        }
        value = 8;
#pragma omp taskwait
        errors += big[0] != 0;
    }
    printf("tasks: shared sum %d, data errors %d\n", shared_sum, errors);

    // if(0), final (descendants are final too), untied, mergeable, priority; taskyield; taskgroup.
    int in_final_outer = -1, in_final_inner = -1, not_final = -1, group_count = 0, clauses = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task final(1)
        {
            in_final_outer = omp_in_final();
#pragma omp task
            in_final_inner = omp_in_final();
        }
#pragma omp task if (0)
        not_final = omp_in_final();
#pragma omp task untied mergeable priority(5)
        {
#pragma omp taskyield
#pragma omp atomic
            clauses++;
        }
#pragma omp taskgroup
        {
            for (int i = 0; i < 10; ++i) {
#pragma omp task
                {
#pragma omp task
                    {
#pragma omp atomic
                        group_count++;
                    }
                }
            }
        }
        // Every descendant of the taskgroup has finished here.
        CHECK(group_count == 10);
    }
    printf("final %d %d, if(0) %d, taskgroup %d, clauses %d\n", in_final_outer, in_final_inner, not_final, group_count,
           clauses);

    // depend: a chain of writers and readers of one variable keeps its order.
    int value = 0, trace[8] = {0}, at = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : value) shared(value, trace, at)
        value = 1, trace[at++] = 1;
#pragma omp task depend(in : value) shared(value, trace, at)
        trace[at++] = value * 10;
#pragma omp task depend(inout : value) shared(value, trace, at)
        value = 3, trace[at++] = 3;
#pragma omp task depend(in : value) shared(value, trace, at)
        trace[at++] = value * 100;
#pragma omp taskwait depend(inout : value)
        trace[at++] = 99;
#pragma omp taskwait
    }
    printf("depend chain: %d %d %d %d %d, value %d\n", trace[0], trace[1], trace[2], trace[3], trace[4], value);

    // taskloop: every iteration once, whatever the clauses.
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(37)
        for (int i = 0; i < n_k; ++i) hits[i]++;
        expect_each_once("taskloop grainsize", n_k);
        // One iteration per task: the tasks are claimed in batches, each still with its own iteration.
        int last = -1;
#pragma omp taskloop grainsize(1) lastprivate(last)
        for (int i = 0; i < n_k; ++i) hits[i]++, last = i;
        expect_each_once("taskloop grainsize(1)", n_k);
        CHECK(last == n_k - 1);
        // Each task of a batch starts afresh: its own copy of the firstprivate data, and the ICVs of the task that
        // encountered the loop (changed here, for it alone), whatever the task before it on the same thread changed
        // (`shared_taskloop` checks the ICVs of tasks that another thread runs).
        int seed = 7, fresh_violations = 0;
        int const region_nthreads = omp_get_max_threads();
        omp_set_num_threads(region_nthreads + 5);
        int const encountered_nthreads = omp_get_max_threads();
#pragma omp taskloop grainsize(1) firstprivate(seed) shared(fresh_violations)
        for (int i = 0; i < 500; ++i) {
            if (seed != 7 || omp_get_max_threads() != encountered_nthreads) {
#pragma omp atomic
                fresh_violations++;
            }
            seed = -i;
            omp_set_num_threads(encountered_nthreads + 1 + i % 3);
        }
        CHECK(fresh_violations == 0);
        CHECK(omp_get_max_threads() == encountered_nthreads);
        omp_set_num_threads(region_nthreads);
#pragma omp taskloop num_tasks(13)
        for (int i = n_k - 1; i >= 0; i -= 2) hits[i]++;
        for (int i = 0; i < n_k; ++i) hits[i] += i % 2 == 0;
        expect_each_once("taskloop num_tasks, down", n_k);
#pragma omp taskloop grainsize(strict : 100) nogroup
        for (long i = 0; i < 4321; ++i) {
#pragma omp atomic
            hits[i]++;
        }
#pragma omp taskwait
        expect_each_once("taskloop strict nogroup", 4321);
#pragma omp taskloop collapse(2)
        for (int i = 0; i < 50; ++i)
            for (int j = 0; j < 40; ++j) hits[i * 40 + j]++;
        expect_each_once("taskloop collapse(2)", 2000);
        unsigned long long const base = 18000000000000000000ull;
#pragma omp taskloop
        for (unsigned long long i = base; i < base + 999; ++i) hits[i - base]++;
        expect_each_once("taskloop unsigned long long", 999);
#pragma omp taskloop if (0)
        for (int i = 0; i < 100; ++i) hits[i]++;
        expect_each_once("taskloop if(0)", 100);
    }
    // `master taskloop` in a region, and a taskloop outside any region.
    long total = 0;
#pragma omp parallel
#pragma omp master taskloop num_tasks(8)
    for (int i = 0; i < 1000; ++i) {
#pragma omp atomic
        total += i;
    }
    printf("taskloops: every iteration once; master taskloop total %ld\n", total);

    if (omp_get_max_threads() >= 2) {
        int icv_violations = -1;
        int const runners = shared_taskloop(16, &icv_violations);
        CHECK(runners >= 2);
        CHECK(icv_violations == 0);
        printf("taskloop tasks ran on more than one thread, with the encountering task's ICVs\n");
    }
    alarm(120); // a hang fails the test instead of holding it for ctest's timeout
    int helped = 0;
    long const nested = taskloop_in_helped_task(20, &helped);
    long const after_nested_help = taskloop_after_nested_help(10);
    alarm(0);
    printf("taskloops inside 20 shared taskloops' tasks: sum %ld\n", nested);
    fprintf(stderr, "tasks of those taskloops run by a helping member: %d\n", helped); // timing, not compared
    CHECK(nested == 20 * 2 * 28);
    printf("taskloops after helping in a nested region, 10 rounds: sum %ld\n", after_nested_help);
    CHECK(after_nested_help == 10 * 2 * 4);
    // `final` on a taskloop makes its tasks final, as it would a task's; a taskloop in a final task is final too.
    int final_tasks = 0, final_zero = 0, inside_final = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop final(1) num_tasks(4) reduction(+ : final_tasks)
        for (int i = 0; i < 16; ++i) final_tasks += omp_in_final();
#pragma omp taskloop final(0) num_tasks(4) reduction(+ : final_zero)
        for (int i = 0; i < 16; ++i) final_zero += omp_in_final();
#pragma omp task final(1)
        {
#pragma omp taskloop num_tasks(4) reduction(+ : inside_final)
            for (int i = 0; i < 16; ++i) inside_final += omp_in_final();
        }
    }
    printf("taskloop final(1): %d of 16 iterations final, final(0): %d, inside a final task: %d\n", final_tasks,
           final_zero, inside_final);
    CHECK(final_tasks == 16 && final_zero == 0 && inside_final == 16);
    return 0;
}
