/*  C++: class types in `firstprivate` and `lastprivate` (constructed, copied and destroyed by GCC's code, through
 *  the task copy function for tasks), declared reductions over `std::vector` and `std::complex`, loops over
 *  iterators and range-based `for`, `taskloop` over a vector, exceptions thrown and caught inside a region, and a
 *  `threadprivate` object with a constructor; a copy constructor that fulfils an event, run by the copy function of a
 *  task deferred behind a detached one. With the argument `cancelled_copyprivate`: a `single copyprivate` in
 *  a cancelled region never copies from a winner that left (`cancelled_copyprivate`). */
#include "gomp_test.h"

#include <algorithm>
#include <atomic>
#include <complex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::atomic<long> constructions{0}, destructions{0};

struct tracked_t {
    std::vector<int> values;
    explicit tracked_t(int n = 0) : values(static_cast<std::size_t>(n), 1) { constructions++; }
    tracked_t(tracked_t const &other) : values(other.values) { constructions++; }
    tracked_t &operator=(tracked_t const &) = default;
    ~tracked_t() { destructions++; }
    long sum() const { return std::accumulate(values.begin(), values.end(), 0L); }
};

struct counter_t {
    long hits = 0;
    counter_t() : hits(1000) {}
};

/**  Fulfils the event it points to (if any) when copied: a copy constructor that calls the runtime, run by a task's
 *   copy function. */
struct fulfilling_t {
    omp_event_handle_t *event = nullptr;
    int value = 0;
    fulfilling_t() = default;
    fulfilling_t(fulfilling_t const &other) : value(other.value) {
        if (other.event) omp_fulfill_event(*other.event);
    }
    fulfilling_t &operator=(fulfilling_t const &) = delete;
};

/**  Counts its live objects: a firstprivate that needs a copy function and a destructor. */
struct counted_t {
    static inline std::atomic<int> alive{0};
    int value = 0;
    explicit counted_t(int v) : value(v) { alive++; }
    counted_t(counted_t const &other) : value(other.value) { alive++; }
    counted_t &operator=(counted_t const &) = delete;
    ~counted_t() { alive--; }
};

/**  A `copyprivate` variable that knows when it is copied from after its destruction: its destructor clears the
 *   canary (through a volatile store, which the compiler must keep), and the winner's says it is gone. */
struct guarded_t {
    static constexpr unsigned long long alive_k = 0x5eedc0dea11fe000ull;
    static inline std::atomic<int> winners_gone{0}, dead_reads{0}, bodies{0};
    unsigned long long canary = alive_k;
    int value = 0;
    bool won = false;
    guarded_t() = default;
    guarded_t(guarded_t const &) = delete;
    guarded_t &operator=(guarded_t const &other) {
        if (other.canary != alive_k) dead_reads++;
        value = other.value;
        return *this;
    }
    ~guarded_t() {
        *static_cast<unsigned long long volatile *>(&canary) = 0;
        if (won) winners_gone++;
    }
};

/* `single copyprivate` in a cancelled region (run with OMP_CANCELLATION=true; the drop-in only, since libgomp waits
 * there for ever): member 0 cancels, member 1 wins the `single` and leaves for the region's end (its barrier after
 * the construct releases at once), and member 2 reaches the construct only once member 1's variable is destroyed.
 * Copying from it would read a dead object; member 2 must run the body itself instead. */
void cancelled_copyprivate() {
    CHECK(omp_get_cancellation());
    for (int round = 0; round < 20; ++round) {
        guarded_t::winners_gone = 0;
#pragma omp parallel num_threads(3)
        {
            guarded_t local;
            int const me = omp_get_thread_num();
            if (me == 0) {
#pragma omp cancel parallel
            }
            if (me == 2)
                while (guarded_t::winners_gone.load() == 0) {}
#pragma omp single copyprivate(local)
            {
                local.value = 100, local.won = true;
                guarded_t::bodies++;
            }
        }
    }
    printf("copyprivate after the winner left a cancelled region: %d dead reads, body ran %d times in 20 regions\n",
           guarded_t::dead_reads.load(), guarded_t::bodies.load());
    CHECK(guarded_t::dead_reads == 0 && guarded_t::bodies == 40);
}

std::vector<int> merge(std::vector<int> a, std::vector<int> const &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace

extern counter_t per_thread;
#pragma omp threadprivate(per_thread)
counter_t per_thread;

#pragma omp declare reduction(concat : std::vector <int> : omp_out = merge(omp_out, omp_in))
#pragma omp declare reduction(csum : std::complex <double> : omp_out += omp_in) initializer(omp_priv = 0.0)

int main(int argc, char **argv) {
    report_server();
    if (argc > 1 && std::string(argv[1]) == "cancelled_copyprivate") {
        cancelled_copyprivate();
        return 0;
    }
    {
        // firstprivate copies per thread and per task; everything constructed is destroyed.
        tracked_t shared_value(10);
        long region_errors = 0, task_errors = 0;
#pragma omp parallel firstprivate(shared_value) reduction(+ : region_errors)
        {
            region_errors += shared_value.sum() != 10;
            shared_value.values.push_back(5); // a private copy
#pragma omp single
            for (int i = 0; i < 50; ++i) {
#pragma omp task firstprivate(shared_value) shared(task_errors)
                {
                    if (shared_value.sum() != 15) {
#pragma omp atomic
                        task_errors++;
                    }
                }
            }
        }
        CHECK(shared_value.sum() == 10);
        printf("firstprivate copies: %ld region errors, %ld task errors\n", region_errors, task_errors);
    }
    CHECK(constructions.load() == destructions.load());
    printf("every copy destroyed: %s\n", constructions.load() == destructions.load() ? "yes" : "no");

    // lastprivate of a class type: the sequentially last iteration's value.
    std::string last;
#pragma omp parallel for lastprivate(last) schedule(dynamic, 3)
    for (int i = 0; i < 100; ++i) last = "iteration " + std::to_string(i);
    printf("lastprivate: %s\n", last.c_str());

    // Declared reductions over library types.
    std::vector<int> gathered;
    std::complex<double> total(0, 0);
#pragma omp parallel for reduction(concat : gathered) reduction(csum : total) schedule(static, 5)
    for (int i = 0; i < 200; ++i) {
        gathered.push_back(i);
        total += std::complex<double>(i, -i);
    }
    std::sort(gathered.begin(), gathered.end());
    bool all = gathered.size() == 200;
    for (int i = 0; all && i < 200; ++i) all = gathered[static_cast<std::size_t>(i)] == i;
    printf("concat reduction: %s; complex sum (%.0f, %.0f)\n", all ? "every value once" : "WRONG", total.real(),
           total.imag());

    // Iterator loops and range-based for.
    std::vector<long> data(1000);
    std::iota(data.begin(), data.end(), 0L);
    long iterator_sum = 0, range_sum = 0;
#pragma omp parallel for reduction(+ : iterator_sum) schedule(guided)
    for (auto it = data.begin(); it < data.end(); ++it) iterator_sum += *it;
#pragma omp parallel for reduction(+ : range_sum)
    for (long value : data) range_sum += value;
    printf("iterator loop %ld, range loop %ld\n", iterator_sum, range_sum);

    // taskloop over a vector.
    std::vector<int> marks(500, 0);
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(16)
    for (std::size_t i = 0; i < marks.size(); ++i) marks[i] += 1;
    printf("taskloop over a vector: %s\n",
           std::all_of(marks.begin(), marks.end(), [](int m) { return m == 1; }) ? "each once" : "WRONG");

    // A firstprivate object with a copy constructor and a destructor: each task of a grainsize(1) taskloop gets a
    // copy of the original (never of another task's changed copy), and every copy is destroyed.
    {
        counted_t original(5);
        std::atomic<int> stale{0};
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(1) firstprivate(original)
        for (int i = 0; i < 300; ++i) {
            if (original.value != 5) stale.fetch_add(1);
            original.value = -i - 1;
        }
        printf("taskloop firstprivate copies: %d stale, %s\n", stale.load(),
               counted_t::alive.load() == 1 ? "every copy destroyed" : "COPIES LEAKED");
    }

    // Exceptions stay inside the structured block that throws them.
    int caught = 0;
#pragma omp parallel reduction(+ : caught)
    {
        try {
            if (omp_get_thread_num() >= 0) throw std::runtime_error("inside a region");
        } catch (std::exception const &) {
            caught += 1;
        }
    }
    int team = 0;
#pragma omp parallel reduction(+ : team)
    team += 1;
    printf("exceptions caught in a region: %d of %d threads\n", caught, team);

    {
        // A task deferred behind a detached one is copied at its construct: its copy constructor fulfils another
        // task's event, calling into the runtime from the copy function.
        int x = 0, copied = 0;
#pragma omp parallel shared(x, copied)
#pragma omp single
        {
            omp_event_handle_t first = omp_event_handle_t(), second = omp_event_handle_t();
#pragma omp task detach(first) depend(out : x) shared(x)
            x = 1;
#pragma omp task detach(second) shared(copied)
            copied -= 1;
            fulfilling_t source;
            source.event = &second, source.value = 7;
#pragma omp task depend(in : x) firstprivate(source) shared(x, copied)
            copied += source.value * x;
            omp_fulfill_event(first);
#pragma omp taskwait
        }
        printf("a copy constructor that fulfils an event: %d\n", copied);
    }

    // A threadprivate object with a constructor keeps its state per thread number.
#pragma omp parallel num_threads(2)
    per_thread.hits += omp_get_thread_num() + 1;
    long hits[2] = {0, 0};
#pragma omp parallel num_threads(2)
    hits[omp_get_thread_num()] = per_thread.hits;
    printf("threadprivate object: %ld %ld\n", hits[0], hits[1]);
    return 0;
}
