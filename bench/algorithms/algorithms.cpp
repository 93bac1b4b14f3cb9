/**
 *  @file   algorithms.cpp
 *  @brief  `forkunion/algorithms/algorithms.hpp` against `std::execution::par` (libstdc++'s PSTL on oneTBB), oneTBB's
 *          `parallel_reduce` / `parallel_scan` / `parallel_sort`, and OpenMP's `reduction` / `parallel for`, every
 *          algorithm at 10^3 … 10^8 elements, as medians and ratios measured side by side in one run.
 *
 *  Rows (each a table; each contender's median over interleaved rounds, and forkunion's time ÷ the contender's,
 *  so a ratio ≤ 1 means forkunion is as fast or faster):
 *  - `reduce` (a `double` sum) and `sum_and_max` (a struct of the sum and the max: one `transform_reduce`), each
 *    with two hand-written forkunion loops for comparison: `fu:t-split`, the same lanes over one static slice
 *    per thread combined in thread order (fast, but its result depends on the thread count: what reproducibility
 *    costs is ours ÷ it), and, for `sum_and_max`, `fu:by-hand`, the loop a new user writes (padded per-thread
 *    slots updated from a per-element `for_n` callback), and `fu:fn-pointers`, `fu` given the functions' names
 *    instead of function objects (every other contender gets function objects: see `combine_k`);
 *  - `count_if`, `min_element`, `find_if` (the match at 3/4 of the range), `transform`, `inclusive_scan`, `sort`,
 *    `stable_sort` (uniform random doubles; sorts restore their input, untimed, before each call);
 *  - the goal line: sum-and-max over 5·10^7 doubles, forkunion's median ÷ `std::transform_reduce(par)`'s;
 *  - the early-exit report: predicate calls of `find_if` and `any_of` against the bound (first + 1) + (T − 1) × g.
 *
 *  Settings (each strict: a bad value exits 1 with one line): the harness's FORKUNION_THREADS and FORKUNION_SEED,
 *  and FORKUNION_ALGORITHMS_MAX_EXPONENT (3 … 9, default 8: sizes 10^3 … 10^max), FORKUNION_ALGORITHMS_ROUNDS
 *  (1 … 1000, default 7), FORKUNION_ALGORITHMS_ONLY (a row name: run only that row and the reports; `goal`: only
 *  the reports, so the goal line alone takes ~15 s), FORKUNION_ALGORITHMS_CSV (a folder for the CSV files, see
 *  `csv_start`).
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <execution>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <forkunion.hpp>

#include "harness.hpp"

#if FORKUNION_BENCH_TBB
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_scan.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/version.h>
#endif
#if FORKUNION_BENCH_OPENMP
#include <omp.h>
#endif

namespace fu = forkunion;
namespace fb = forkunion::bench;

namespace {

using clock_t_ = std::chrono::steady_clock;

/**  The hand-written contenders dispatch on an idle pool from the controlling thread: a refusal is a bug here. */
void must_run(fu::status_t status) noexcept {
    if (!status) fb::fail(2, "a dispatch on the idle benchmark pool was refused: %s", status.name());
}

struct sum_and_max_t {
    double sum;
    double max;
};
inline sum_and_max_t combine(sum_and_max_t a, sum_and_max_t b) noexcept {
    return {a.sum + b.sum, a.max < b.max ? b.max : a.max};
}
inline sum_and_max_t spread(double v) noexcept {
    return {v, v};
}
constexpr sum_and_max_t sum_and_max_identity_k{0.0, -std::numeric_limits<double>::infinity()};
/**
 *  The callables every library gets: function objects, whose calls inline into each library's loop. A function's
 *  name passed as is decays to a pointer that every library calls indirectly, twice per element, which hides the
 *  loops being compared (the `fu:fn-pointers` contender of the `sum_and_max` row shows what it costs).
 */
constexpr auto combine_k = [](sum_and_max_t a, sum_and_max_t b) noexcept { return combine(a, b); };
constexpr auto spread_k = [](double v) noexcept { return spread(v); };

/**  One contender of a row: `run()` is timed; `prepare()`, if set, runs untimed before every call. */
struct contender_t {
    std::string name;
    std::function<void()> run;
    std::function<void()> prepare;
};

/**  The whole run's knobs. */
struct knobs_t {
    std::size_t threads = 1;
    std::size_t max_exponent = 8;
    std::size_t rounds = 7;
    std::string only;
};

/**  `name`'s value as an integer in [min, max], or `fallback` when unset; exits 1 with one line otherwise. */
std::size_t read_knob(char const *name, std::size_t min, std::size_t max, std::size_t fallback) {
    char const *text = std::getenv(name);
    if (!text || !*text) return fallback;
    char *end = nullptr;
    unsigned long long const value = std::strtoull(text, &end, 10);
    if (*end || text[0] == '-' || value < min || value > max)
        fb::fail(fb::exit_bad_setting_k, "%s: expected an integer from %zu to %zu, got \"%s\"", name, min, max, text);
    return static_cast<std::size_t>(value);
}

/**  Seconds per call of `contender`: `reps` calls timed as one block (or one by one around `prepare`). */
double sample(contender_t const &contender, std::size_t reps) {
    if (!contender.prepare) {
        auto const start = clock_t_::now();
        for (std::size_t r = 0; r != reps; ++r) contender.run();
        return std::chrono::duration<double>(clock_t_::now() - start).count() / static_cast<double>(reps);
    }
    double total = 0;
    for (std::size_t r = 0; r != reps; ++r) {
        contender.prepare();
        auto const start = clock_t_::now();
        contender.run();
        total += std::chrono::duration<double>(clock_t_::now() - start).count();
    }
    return total / static_cast<double>(reps);
}

/**
 *  Runs every contender `rounds` times, interleaved, and returns each one's median seconds per call. Each round
 *  runs the contenders in a new order (a fixed-seed shuffle): libgomp's and oneTBB's threads keep spinning for
 *  milliseconds after their call returns, so in a fixed order the contender that always follows OpenMP ran every
 *  sample on one core (forkunion's rows at 10^4-10^5 elements measured 25-100x slower than the next contender on the
 *  same pool); shuffled, such samples are a minority that the median drops.
 */
std::vector<double> measure(std::vector<contender_t> const &contenders, std::size_t rounds) {
    // Repetitions per sample: enough calls for ~2 ms, measured on a warm-up call of each contender.
    std::vector<std::size_t> reps(contenders.size(), 1);
    for (std::size_t c = 0; c != contenders.size(); ++c) {
        double const once = sample(contenders[c], 1);
        reps[c] = once > 2e-3 ? 1 : static_cast<std::size_t>(std::min(1e5, 2e-3 / std::max(once, 1e-8)));
    }
    std::vector<std::vector<double>> samples(contenders.size());
    std::vector<std::size_t> order(contenders.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::mt19937_64 shuffler(rounds * 7919 + contenders.size());
    for (std::size_t round = 0; round != rounds; ++round) {
        std::shuffle(order.begin(), order.end(), shuffler);
        for (std::size_t c : order) samples[c].push_back(sample(contenders[c], reps[c]));
    }
    std::vector<double> medians;
    for (auto const &values : samples) medians.push_back(fb::median(values));
    return medians;
}

/**  FORKUNION_ALGORITHMS_CSV, when set: the folder that receives every cell as CSV (`algorithms.csv`: row, n,
 *   contender, median ms, forkunion's median ÷ the contender's) and, per size 10^k, the ratios as a chart's data in
 *   bench/plot.sh's format (`algorithms_1e<k>.csv`); bench/plot.sh draws them. Unset: tables
 *   only. The files are created afresh by `csv_start`; a folder that cannot be written exits 1 with one line. */
std::string csv_folder;

std::string csv_size_file(std::size_t n) {
    std::size_t exponent = 0;
    for (; n >= 10; n /= 10) ++exponent;
    return "algorithms_1e" + std::to_string(exponent) + ".csv";
}

void csv_write(std::string const &file, char const *mode, std::string const &text) {
    std::string const path = csv_folder + "/" + file;
    std::FILE *stream = std::fopen(path.c_str(), mode);
    bool const written = stream && std::fputs(text.c_str(), stream) >= 0;
    if (!stream || std::fclose(stream) != 0 || !written)
        fb::fail(fb::exit_bad_setting_k, "FORKUNION_ALGORITHMS_CSV: cannot write %s", path.c_str());
}

void csv_start(std::size_t threads, std::size_t max_exponent) {
    if (char const *folder = std::getenv("FORKUNION_ALGORITHMS_CSV"); folder && *folder) csv_folder = folder;
    if (csv_folder.empty()) return;
    csv_write("algorithms.csv", "w", "row,n,contender,median_ms,forkunion_over_contender\n");
    std::size_t n = 1000;
    for (std::size_t exponent = 3; exponent <= max_exponent; ++exponent, n *= 10)
        csv_write(csv_size_file(n), "w",
                  "# title: Parallel algorithms, " + std::to_string(n) + " elements, " + std::to_string(threads) +
                      " threads: forkunion's median time over each contender's\n"
                      "# ylabel: forkunion / contender (at most 1: forkunion as fast or faster)\n"
                      "label,median,min,max\n");
}

/**  Prints one row's table line and its RESULT rows, and appends its CSV lines; the first contender is forkunion's. */
void report(char const *row, std::size_t n, std::vector<contender_t> const &contenders, std::size_t rounds) {
    std::vector<double> const medians = measure(contenders, rounds);
    for (std::size_t c = 0; c != contenders.size() && !csv_folder.empty(); ++c) {
        std::string const ratio = std::to_string(medians[0] / medians[c]);
        csv_write("algorithms.csv", "a",
                  std::string(row) + "," + std::to_string(n) + "," + contenders[c].name + "," +
                      std::to_string(medians[c] * 1e3) + "," + ratio + "\n");
        if (c != 0)
            csv_write(csv_size_file(n), "a",
                      std::string(row) + ": " + contenders[c].name + "," + ratio + "," + ratio + "," + ratio + "\n");
    }
    std::printf("| %-14s | %10zu |", row, n);
    for (std::size_t c = 0; c != contenders.size(); ++c) {
        if (c == 0)
            std::printf(" %s %.4g ms |", contenders[c].name.c_str(), medians[c] * 1e3);
        else
            std::printf(" %s %.4g ms (%.2fx) |", contenders[c].name.c_str(), medians[c] * 1e3, medians[0] / medians[c]);
    }
    std::printf("\n");
    for (std::size_t c = 0; c != contenders.size(); ++c)
        fb::result_row_t("algorithms")
            .add("row", std::string(row))
            .add("n", static_cast<std::uint64_t>(n))
            .add("contender", contenders[c].name)
            .add("median_ms", medians[c] * 1e3)
            .add("forkunion_over_contender", medians[0] / medians[c])
            .print();
}

// ---- Hand-written forkunion loops (the comparisons, not the library) ----

/**  One padded accumulator per thread. */
template <typename value_type_>
struct alignas(fu::default_alignment_k) slot_t {
    value_type_ value;
};

/**  The library's lanes (`reduction_lanes_for_k`), over one static slice per thread, combined in thread order. */
double t_split_sum(fu::flat_pool_t &pool, std::vector<slot_t<double>> &slots, double const *x, std::size_t n) {
    must_run(pool.for_slices(n,
                             [&](fu::flat_pool_t::prong_t first, std::size_t count) noexcept {
                                 double lane[16] = {};
                                 std::size_t i = 0;
                                 for (; i + 16 <= count; i += 16)
                                     for (std::size_t j = 0; j != 16; ++j) lane[j] += x[first.task + i + j];
                                 for (std::size_t j = 0; i + j < count; ++j) lane[j] += x[first.task + i + j];
                                 double total = 0;
                                 for (double v : lane) total += v;
                                 slots[first.thread].value = total;
                             })
                 .join());
    double total = 0;
    for (std::size_t t = 0; t != pool.threads_count(); ++t) total += slots[t].value;
    return total;
}

sum_and_max_t t_split_sum_and_max(fu::flat_pool_t &pool, std::vector<slot_t<sum_and_max_t>> &slots, double const *x,
                                  std::size_t n) {
    for (auto &slot : slots) slot.value = sum_and_max_identity_k;
    must_run(pool.for_slices(n,
                             [&](fu::flat_pool_t::prong_t first, std::size_t count) noexcept {
                                 constexpr std::size_t lanes = fu::reduction_lanes_for_k<sum_and_max_t>;
                                 sum_and_max_t lane[lanes];
                                 for (auto &l : lane) l = sum_and_max_identity_k;
                                 std::size_t i = 0;
                                 for (; i + lanes <= count; i += lanes)
                                     for (std::size_t j = 0; j != lanes; ++j)
                                         lane[j] = combine(lane[j], spread(x[first.task + i + j]));
                                 for (std::size_t j = 0; i + j < count; ++j)
                                     lane[j] = combine(lane[j], spread(x[first.task + i + j]));
                                 sum_and_max_t total = sum_and_max_identity_k;
                                 for (auto const &l : lane) total = combine(total, l);
                                 slots[first.thread].value = total;
                             })
                 .join());
    sum_and_max_t total = sum_and_max_identity_k;
    for (std::size_t t = 0; t != pool.threads_count(); ++t) total = combine(total, slots[t].value);
    return total;
}

/**  What a new user writes: per-thread padded slots, the prong's thread, one callback per element. */
sum_and_max_t by_hand_sum_and_max(fu::flat_pool_t &pool, std::vector<slot_t<sum_and_max_t>> &slots, double const *x,
                                  std::size_t n) {
    for (auto &slot : slots) slot.value = sum_and_max_identity_k;
    must_run(pool.for_n(n,
                        [&](fu::flat_pool_t::prong_t prong) noexcept {
                            sum_and_max_t &mine = slots[prong.thread].value;
                            mine.sum += x[prong.task];
                            mine.max = mine.max < x[prong.task] ? x[prong.task] : mine.max;
                        })
                 .join());
    sum_and_max_t total = sum_and_max_identity_k;
    for (std::size_t t = 0; t != pool.threads_count(); ++t) total = combine(total, slots[t].value);
    return total;
}

// ---- Peers: oneTBB and OpenMP, each behind one function per row shape ----

#if FORKUNION_BENCH_TBB
constexpr bool have_tbb_k = true;
double tbb_sum(double const *x, std::size_t n) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n), 0.0,
        [x](tbb::blocked_range<std::size_t> const &r, double s) { return std::reduce(x + r.begin(), x + r.end(), s); },
        std::plus<>{});
}
sum_and_max_t tbb_sum_and_max(double const *x, std::size_t n) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n), sum_and_max_identity_k,
        [x](tbb::blocked_range<std::size_t> const &r, sum_and_max_t s) {
            return std::transform_reduce(x + r.begin(), x + r.end(), s, combine_k, spread_k);
        },
        combine_k);
}
std::size_t tbb_count(double const *x, std::size_t n) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n), std::size_t(0),
        [x](tbb::blocked_range<std::size_t> const &r, std::size_t c) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) c += x[i] < 0.5;
            return c;
        },
        std::plus<>{});
}
std::size_t tbb_min_index(double const *x, std::size_t n) {
    auto pick = [x](std::size_t a, std::size_t b) { return x[b] < x[a] || (!(x[a] < x[b]) && b < a) ? b : a; };
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n), std::size_t(0),
        [x, pick](tbb::blocked_range<std::size_t> const &r, std::size_t best) {
            std::size_t local = r.begin();
            for (std::size_t i = r.begin() + 1; i < r.end(); ++i) local = x[i] < x[local] ? i : local;
            return pick(best, local);
        },
        pick);
}
void tbb_transform(double const *x, double *y, std::size_t n) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [x, y](tbb::blocked_range<std::size_t> const &r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) y[i] = 2 * x[i] + 1;
    });
}
void tbb_scan(double const *x, double *y, std::size_t n) {
    tbb::parallel_scan(
        tbb::blocked_range<std::size_t>(0, n), 0.0,
        [x, y](tbb::blocked_range<std::size_t> const &r, double sum, bool final) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) {
                sum += x[i];
                if (final) y[i] = sum;
            }
            return sum;
        },
        std::plus<>{});
}
void tbb_sort(double *x, std::size_t n) {
    tbb::parallel_sort(x, x + n);
}
#else
constexpr bool have_tbb_k = false;
double tbb_sum(double const *, std::size_t) {
    return 0;
}
sum_and_max_t tbb_sum_and_max(double const *, std::size_t) {
    return {};
}
std::size_t tbb_count(double const *, std::size_t) {
    return 0;
}
std::size_t tbb_min_index(double const *, std::size_t) {
    return 0;
}
void tbb_transform(double const *, double *, std::size_t) {}
void tbb_scan(double const *, double *, std::size_t) {}
void tbb_sort(double *, std::size_t) {}
#endif

#if FORKUNION_BENCH_OPENMP
constexpr bool have_openmp_k = true;
double omp_sum(double const *x, std::size_t n) {
    double s = 0;
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += x[i];
    return s;
}
sum_and_max_t omp_sum_and_max(double const *x, std::size_t n) {
    double s = 0, m = -std::numeric_limits<double>::infinity();
#pragma omp parallel for simd reduction(+ : s) reduction(max : m) schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        s += x[i];
        m = m < x[i] ? x[i] : m;
    }
    return {s, m};
}
std::size_t omp_count(double const *x, std::size_t n) {
    std::size_t c = 0;
#pragma omp parallel for simd reduction(+ : c) schedule(static)
    for (std::size_t i = 0; i < n; ++i) c += x[i] < 0.5;
    return c;
}
std::size_t omp_find(double const *x, std::size_t n, double needle) {
    std::atomic<std::size_t> best{n};
#pragma omp parallel for schedule(dynamic, 4096)
    for (std::size_t i = 0; i < n; ++i)
        if (i < best.load(std::memory_order_relaxed) && x[i] == needle) {
            std::size_t seen = best.load(std::memory_order_relaxed);
            while (i < seen && !best.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {}
        }
    return best.load();
}
void omp_transform(double const *x, double *y, std::size_t n) {
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) y[i] = 2 * x[i] + 1;
}
#else
constexpr bool have_openmp_k = false;
double omp_sum(double const *, std::size_t) {
    return 0;
}
sum_and_max_t omp_sum_and_max(double const *, std::size_t) {
    return {};
}
std::size_t omp_count(double const *, std::size_t) {
    return 0;
}
std::size_t omp_find(double const *, std::size_t n, double) {
    return n;
}
void omp_transform(double const *, double *, std::size_t) {}
#endif

volatile double sink_double = 0;
volatile std::size_t sink_index = 0;

/**  Every row at size n. */
void run_rows(knobs_t const &knobs, fu::flat_pool_t &pool, std::size_t n, std::uint32_t seed) {
    auto const &par = std::execution::par;
    fb::draws_t const draws(seed);
    std::vector<double> x(n), y(n), work(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(draws(i) >> 11) * 0x1p-53;
    double const *data = x.data();
    std::vector<slot_t<double>> sums(pool.threads_count());
    std::vector<slot_t<sum_and_max_t>> pairs(pool.threads_count());
    std::size_t const rounds = n >= 10000000 ? std::min<std::size_t>(knobs.rounds, 5) : knobs.rounds;
    auto wanted = [&](char const *row) { return knobs.only.empty() || knobs.only == row; };
    auto with_peers = [&](std::vector<contender_t> row, std::function<void()> tbb, std::function<void()> omp) {
        if (have_tbb_k && tbb) row.push_back({"tbb", std::move(tbb), {}});
        if (have_openmp_k && omp) row.push_back({"openmp", std::move(omp), {}});
        return row;
    };

    if (wanted("reduce"))
        report("reduce", n,
               with_peers(
                   {{"fu", [&] { sink_double = fu::reduce(pool, x.begin(), x.end(), 0.0); }, {}},
                    {"fu:t-split", [&] { sink_double = t_split_sum(pool, sums, data, n); }, {}},
                    {"std:par", [&] { sink_double = std::reduce(par, x.begin(), x.end(), 0.0); }, {}},
                    {"std:par_unseq",
                     [&] { sink_double = std::reduce(std::execution::par_unseq, x.begin(), x.end(), 0.0); },
                     {}}},
                   [&] { sink_double = tbb_sum(data, n); }, [&] { sink_double = omp_sum(data, n); }),
               rounds);
    if (wanted("sum_and_max"))
        report(
            "sum_and_max", n,
            with_peers(
                {{"fu",
                  [&] {
                      sink_double =
                          fu::transform_reduce(pool, x.begin(), x.end(), sum_and_max_identity_k, combine_k, spread_k)
                              .max;
                  },
                  {}},
                 {"fu:fn-pointers",
                  [&] {
                      sink_double =
                          fu::transform_reduce(pool, x.begin(), x.end(), sum_and_max_identity_k, combine, spread).max;
                  },
                  {}},
                 {"fu:t-split", [&] { sink_double = t_split_sum_and_max(pool, pairs, data, n).max; }, {}},
                 {"fu:by-hand", [&] { sink_double = by_hand_sum_and_max(pool, pairs, data, n).max; }, {}},
                 {"std:par",
                  [&] {
                      sink_double =
                          std::transform_reduce(par, x.begin(), x.end(), sum_and_max_identity_k, combine_k, spread_k)
                              .max;
                  },
                  {}}},
                [&] { sink_double = tbb_sum_and_max(data, n).max; },
                [&] { sink_double = omp_sum_and_max(data, n).max; }),
            rounds);
    auto below_half = [](double v) noexcept { return v < 0.5; };
    if (wanted("count_if"))
        report("count_if", n,
               with_peers(
                   {{"fu",
                     [&] { sink_index = static_cast<std::size_t>(fu::count_if(pool, x.begin(), x.end(), below_half)); },
                     {}},
                    {"std:par",
                     [&] { sink_index = static_cast<std::size_t>(std::count_if(par, x.begin(), x.end(), below_half)); },
                     {}}},
                   [&] { sink_index = tbb_count(data, n); }, [&] { sink_index = omp_count(data, n); }),
               rounds);
    if (wanted("min_element"))
        report(
            "min_element", n,
            with_peers(
                {{"fu",
                  [&] { sink_index = static_cast<std::size_t>(fu::min_element(pool, x.begin(), x.end()) - x.begin()); },
                  {}},
                 {"std:par",
                  [&] { sink_index = static_cast<std::size_t>(std::min_element(par, x.begin(), x.end()) - x.begin()); },
                  {}}},
                [&] { sink_index = tbb_min_index(data, n); }, {}),
            rounds);
    double const needle = x[n - n / 4 - 1];
    auto is_needle = [needle](double v) noexcept { return v == needle; };
    if (wanted("find_if"))
        report("find_if", n,
               with_peers({{"fu",
                            [&] {
                                sink_index = static_cast<std::size_t>(fu::find_if(pool, x.begin(), x.end(), is_needle) -
                                                                      x.begin());
                            },
                            {}},
                           {"std:par",
                            [&] {
                                sink_index = static_cast<std::size_t>(std::find_if(par, x.begin(), x.end(), is_needle) -
                                                                      x.begin());
                            },
                            {}}},
                          {}, [&] { sink_index = omp_find(data, n, needle); }),
               rounds);
    auto affine = [](double v) noexcept { return 2 * v + 1; };
    if (wanted("transform"))
        report("transform", n,
               with_peers(
                   {{"fu", [&] { fu::transform(pool, x.begin(), x.end(), y.begin(), affine); }, {}},
                    {"std:par", [&] { std::transform(par, x.begin(), x.end(), y.begin(), affine); }, {}}},
                   [&] { tbb_transform(data, y.data(), n); }, [&] { omp_transform(data, y.data(), n); }),
               rounds);
    if (wanted("inclusive_scan"))
        report("inclusive_scan", n,
               with_peers({{"fu", [&] { fu::inclusive_scan(pool, x.begin(), x.end(), y.begin()); }, {}},
                           {"std:par", [&] { std::inclusive_scan(par, x.begin(), x.end(), y.begin()); }, {}}},
                          [&] { tbb_scan(data, y.data(), n); }, {}),
               rounds);
    auto restore = [&] { std::copy(x.begin(), x.end(), work.begin()); };
    std::size_t const sort_rounds = n >= 10000000 ? std::min<std::size_t>(rounds, 3) : rounds;
    if (wanted("sort"))
        report("sort", n,
               with_peers({{"fu", [&] { fu::sort(pool, work.begin(), work.end()); }, restore},
                           {"std:par", [&] { std::sort(par, work.begin(), work.end()); }, restore}},
                          {}, {}),
               sort_rounds);
    if (wanted("sort") && have_tbb_k) // oneTBB's sort needs the untimed restore too
        report("sort (tbb)", n,
               {{"fu", [&] { fu::sort(pool, work.begin(), work.end()); }, restore},
                {"tbb", [&] { tbb_sort(work.data(), n); }, restore}},
               sort_rounds);
    if (wanted("stable_sort"))
        report("stable_sort", n,
               {{"fu", [&] { fu::stable_sort(pool, work.begin(), work.end()); }, restore},
                {"std:par", [&] { std::stable_sort(par, work.begin(), work.end()); }, restore}},
               sort_rounds);
}

/**  Sum-and-max over 5·10^7 doubles: ours, the user's by-hand loop and the T-split, against std's par. */
void report_goal(knobs_t const &knobs, fu::flat_pool_t &pool, std::uint32_t seed) {
    std::size_t const n =
        knobs.max_exponent >= 8
            ? 50000000
            : std::size_t(5) * static_cast<std::size_t>(std::pow(10.0, double(knobs.max_exponent - 1)));
    fb::draws_t const draws(seed);
    std::vector<double> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<double>(draws(i) >> 11) * 0x1p-53;
    std::vector<slot_t<sum_and_max_t>> pairs(pool.threads_count());
    std::vector<contender_t> const row{
        {"fu",
         [&] {
             sink_double =
                 fu::transform_reduce(pool, x.begin(), x.end(), sum_and_max_identity_k, combine_k, spread_k).sum;
         },
         {}},
        {"std:par",
         [&] {
             sink_double = std::transform_reduce(std::execution::par, x.begin(), x.end(), sum_and_max_identity_k,
                                                 combine_k, spread_k)
                               .sum;
         },
         {}},
        {"fu:by-hand", [&] { sink_double = by_hand_sum_and_max(pool, pairs, x.data(), n).sum; }, {}},
        {"fu:t-split", [&] { sink_double = t_split_sum_and_max(pool, pairs, x.data(), n).sum; }, {}},
    };
    std::vector<double> const medians = measure(row, std::max<std::size_t>(knobs.rounds, 11));
    std::printf("# goal: sum-and-max over %zu doubles at %zu threads: fu %.3f ms, std::transform_reduce(par) %.3f ms, "
                "ratio %.3fx (goal <= 1.0x); the by-hand loop %.3f ms (%.2fx std), the T-dependent split %.3f ms\n",
                n, knobs.threads, medians[0] * 1e3, medians[1] * 1e3, medians[0] / medians[1], medians[2] * 1e3,
                medians[2] / medians[1], medians[3] * 1e3);
    fb::result_row_t("algorithms")
        .add("row", std::string("goal_sum_and_max"))
        .add("n", static_cast<std::uint64_t>(n))
        .add("fu_ms", medians[0] * 1e3)
        .add("std_par_ms", medians[1] * 1e3)
        .add("by_hand_ms", medians[2] * 1e3)
        .add("t_split_ms", medians[3] * 1e3)
        .add("fu_over_std_par", medians[0] / medians[1])
        .print();
}

/**  Predicate calls of `find_if` and `any_of` against the bound, with a counting predicate, 20 runs each. */
void report_calls(fu::flat_pool_t &pool) {
    std::size_t const threads = pool.threads_count();
    std::size_t const n = 1 << 22;
    std::vector<std::size_t> values(n);
    std::iota(values.begin(), values.end(), std::size_t(0));
    for (std::size_t grain : {std::size_t(256), fu::default_grain_k})
        for (std::size_t match : {std::size_t(0), grain * 10 + 7, n / 2, n - 1}) {
            std::size_t worst_find = 0, worst_any = 0;
            for (int run = 0; run != 20; ++run) {
                std::atomic<std::size_t> calls{0};
                auto counted = [&](std::size_t v) noexcept {
                    calls.fetch_add(1, std::memory_order_relaxed);
                    return v == match;
                };
                sink_index = static_cast<std::size_t>(
                    fu::find_if(fu::with_grain(pool, grain), values.begin(), values.end(), counted) - values.begin());
                worst_find = std::max(worst_find, calls.exchange(0));
                sink_index = fu::any_of(fu::with_grain(pool, grain), values.begin(), values.end(), counted);
                worst_any = std::max(worst_any, calls.load());
            }
            std::size_t const bound = match + 1 + (threads - 1) * grain;
            std::printf("# early exit: grain %zu, first match at %zu: find_if at most %zu calls, any_of at most %zu "
                        "(over 20 runs); bound %zu; past the match: %zu and %zu of the %zu allowed\n",
                        grain, match, worst_find, worst_any, bound, worst_find - (match + 1),
                        worst_any > match + 1 ? worst_any - (match + 1) : 0, (threads - 1) * grain);
            fb::result_row_t("algorithms")
                .add("row", std::string("early_exit"))
                .add("grain", static_cast<std::uint64_t>(grain))
                .add("match", static_cast<std::uint64_t>(match))
                .add("find_if_calls", static_cast<std::uint64_t>(worst_find))
                .add("any_of_calls", static_cast<std::uint64_t>(worst_any))
                .add("bound", static_cast<std::uint64_t>(bound))
                .print();
            if (worst_find > bound || worst_any > bound)
                fb::fail(fb::exit_check_failed_k, "early exit: %zu or %zu calls exceed the bound %zu", worst_find,
                         worst_any, bound);
        }
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "--list", 0,
                    "[--list]\nThe parallel algorithms against std::execution::par, oneTBB and OpenMP, 10^3 to 10^8 "
                    "elements.\n"
                    "  --list  prints the backends (the values of FORKUNION_BACKEND) and exits\n"
                    "  FORKUNION_ALGORITHMS_MAX_EXPONENT  8; 3 to 9, sizes 10^3 to 10^max\n"
                    "  FORKUNION_ALGORITHMS_ROUNDS        7; 1 to 1000 interleaved rounds\n"
                    "  FORKUNION_ALGORITHMS_ONLY          a row name (reduce, sum_and_max, count_if, min_element, "
                    "find_if,\n"
                    "                                     transform, inclusive_scan, sort, stable_sort) or "
                    "goal\n" FORKUNION_BENCH_SETTINGS_USAGE);
    std::vector<std::string> const backends{"forkunion"};
    if (fb::list_requested(argc, argv, backends)) return 0;
    fb::machine_t const machine = fb::machine_t::harvest();
    fb::settings_t const settings = fb::read_settings(backends, machine.cpus.size());
    knobs_t knobs;
    knobs.threads = settings.threads;
    knobs.max_exponent = read_knob("FORKUNION_ALGORITHMS_MAX_EXPONENT", 3, 9, 8);
    knobs.rounds = read_knob("FORKUNION_ALGORITHMS_ROUNDS", 1, 1000, 7);
    if (char const *only = std::getenv("FORKUNION_ALGORITHMS_ONLY")) knobs.only = only;
    char const *rows[] = {"",          "reduce",         "sum_and_max", "count_if",    "min_element", "find_if",
                          "transform", "inclusive_scan", "sort",        "stable_sort", "goal"};
    if (std::find_if(std::begin(rows), std::end(rows), [&](char const *r) { return knobs.only == r; }) ==
        std::end(rows))
        fb::fail(fb::exit_bad_setting_k,
                 "FORKUNION_ALGORITHMS_ONLY: expected one of reduce, sum_and_max, count_if, min_element, find_if, "
                 "transform, inclusive_scan, sort, stable_sort, goal, got \"%s\"",
                 knobs.only.c_str());

    fb::print_banner("algorithms", settings, machine);
#if FORKUNION_BENCH_TBB
    tbb::global_control const control(tbb::global_control::max_allowed_parallelism, knobs.threads);
    std::printf("# peers: oneTBB %d.%d (parallel_reduce, parallel_scan, parallel_sort, and the PSTL backend of "
                "std::execution::par%s), capped at %zu threads\n",
                TBB_VERSION_MAJOR, TBB_VERSION_MINOR,
#if defined(_PSTL_PAR_BACKEND_TBB)
                "",
#else
                ": NOT in use, std::execution::par is serial here",
#endif
                knobs.threads);
#else
    std::printf("# peers: oneTBB not found (apt-get install libtbb-dev): std::execution::par runs serially\n");
#endif
#if FORKUNION_BENCH_OPENMP
    ::omp_set_dynamic(0);
    ::omp_set_num_threads(static_cast<int>(knobs.threads));
    std::printf("# peers: OpenMP %d, %zu threads\n", _OPENMP, knobs.threads);
#endif
    std::printf("# each cell: median ms per call over %zu interleaved rounds (5 from 10^7, 3 for sorts), and in "
                "parentheses forkunion's median / the contender's (<= 1: forkunion as fast or faster)\n",
                knobs.rounds);
    std::printf("# fu:t-split is a hand-written non-reproducible split (one static slice per thread); fu:by-hand is "
                "a per-element for_n into padded per-thread slots\n");

    csv_start(knobs.threads, knobs.max_exponent);
    fu::flat_pool_t pool;
    if (!pool.spawn(knobs.threads)) fb::fail(fb::exit_unavailable_k, "forkunion: spawn(%zu) refused", knobs.threads);
    for (std::size_t exponent = 3; exponent <= knobs.max_exponent && knobs.only != "goal"; ++exponent)
        run_rows(knobs, pool, static_cast<std::size_t>(std::pow(10.0, static_cast<double>(exponent))), settings.seed);
    report_goal(knobs, pool, settings.seed);
    report_calls(pool);
    return 0;
}
