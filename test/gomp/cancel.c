/*  Cancellation of worksharing constructs with OMP_CANCELLATION=true: `cancel for` stops a search loop at its first
 *  hit (every thread leaves at its next cancellation point or chunk), `cancel sections` skips the sections not yet
 *  started, a `cancel for` whose `if` is false changes nothing, and the construct after a cancelled one runs whole.
 *  Counts of iterations run depend on timing, so only verdicts are printed. Run with and without cancel-var. */
#include "gomp_test.h"

enum { span_k = 200000, hit_k = 777 };

static void search(int schedule_dynamic) {
    long ran = 0, after = 0;
    int found = -1;
#pragma omp parallel num_threads(3) reduction(+ : ran)
    {
        if (schedule_dynamic) {
#pragma omp for schedule(dynamic, 16)
            for (int i = 0; i < span_k; ++i) {
                ran += 1;
                if (i == hit_k) {
#pragma omp atomic write
                    found = i;
#pragma omp cancel for
                }
#pragma omp cancellation point for
            }
        } else {
#pragma omp for schedule(static)
            for (int i = 0; i < span_k; ++i) {
                ran += 1;
                if (i == hit_k) {
#pragma omp atomic write
                    found = i;
#pragma omp cancel for
                }
#pragma omp cancellation point for
            }
        }
        // The next construct runs every iteration, cancelled or not.
#pragma omp for schedule(dynamic, 7) reduction(+ : after)
        for (int i = 0; i < 1000; ++i) after += 1;
    }
    int const cancelling = omp_get_cancellation();
    printf("%s search: found %d, stopped early: %s, next loop ran %ld of 1000\n",
           schedule_dynamic ? "dynamic" : "static", found,
           ran < span_k ? "yes" : (cancelling ? "NO" : "no (cancellation off)"), after);
    CHECK(found == hit_k && after == 1000);
    CHECK(cancelling ? ran < span_k : ran == span_k);
}

static void sections(void) {
    int ran[4] = {0};
#pragma omp parallel num_threads(2)
#pragma omp sections
    {
#pragma omp section
        {
            ran[0] = 1;
#pragma omp cancel sections
        }
#pragma omp section
        ran[1] = 1;
#pragma omp section
        ran[2] = 1;
#pragma omp section
        ran[3] = 1;
    }
    // Whether the others started before the cancel depends on timing: only checked without cancellation.
    int const total = ran[0] + ran[1] + ran[2] + ran[3];
    printf("sections: the cancelling one ran: %d\n", ran[0]);
    CHECK(ran[0] == 1 && (omp_get_cancellation() || total == 4));
}

static void cancel_if_false(void) {
    long ran = 0;
#pragma omp parallel num_threads(2) reduction(+ : ran)
#pragma omp for schedule(dynamic, 5)
    for (int i = 0; i < 1000; ++i) {
        ran += 1;
#pragma omp cancel for if (i < 0)
    }
    printf("cancel for if(false): %ld iterations\n", ran);
    CHECK(ran == 1000);
}

int main(void) {
    report_server();
    search(1);
    search(0);
    sections();
    cancel_if_false();
    return 0;
}
