/**
 *  @file   dispatch.cpp
 *  @brief  Dispatch latency (Google Benchmark): nanoseconds per fork-join of T tasks on T threads, for ForkUnion
 *          and every peer, next to the physical floor measured in the same process.
 *
 *  Rows are `<runtime>/<loop>/<body>`:
 *  - loops: `for_threads` (a runtime's native broadcast: ForkUnion's `for_threads`, OpenMP's bare
 *    `#pragma omp parallel`), `for_n` (static blocks) and `for_n_dynamic` (one-task grain) over n = T tasks;
 *  - bodies: `empty` (the task index goes to `DoNotOptimize`) and `line` (each task increments its own 128-byte
 *    line, one cache line of real work per thread);
 *  - `forkunion/for_n/stack`: every task reads a word the caller wrote on its stack right before the dispatch.
 *    That is what every OpenMP row does, whatever its body: GCC passes a region its shared variables in a struct
 *    (`.omp_data_o`) that the caller rewrites on its stack before every `GOMP_parallel`, and every member reads it
 *    first, one more cache line from the caller's core. ForkUnion's own rows carry their callable in the dispatch
 *    line instead, so this row is the like-for-like reference of the OpenMP drop-in's `for_n/empty`;
 *  - `forkunion_distributed/...`: the same rows on `distributed_pool_t` (the `*_replicated` backends' pool), run
 *    with ForkUnion's own rows whenever those run, so the two pools are compared in one process;
 *  - `floor/ping_pong/two_lines`: two pinned threads bouncing a counter over two cache lines, one writer each;
 *  - `forkunion/for_n/empty/after_{spin,nap,sleep0}`: one dispatch after a 200 µs idle gap in each idle mode, timed
 *    alone (manual time), so the difference between rows is the wake-up cost of `nap()` and `sleep(0)`.
 *
 *  Every row measures the floor itself right before its runtime exists (on a shared 2-vCPU guest the round trip
 *  moves between ~150 and ~600 ns from minute to minute) and reports `floor_ns` and `x_floor` = ns per dispatch /
 *  floor. OpenMP's team outlives its rows (it is the process's, not the row's), and under OMP_WAIT_POLICY=active
 *  it spins on every core between them: a floor measured then is 3-4x too high and flatters the row. So OpenMP rows
 *  all use one floor, measured before the first of them starts the team. Before timing, 1000 counted dispatches
 *  say who ran the tasks: `off_caller` is the share of tasks that did not run on the calling thread; 0 means no
 *  fork really happened. At exit a markdown table repeats every row with its ratio to the floor and to ForkUnion's
 *  `for_n` with the same body, then one `RESULT` row per row.
 *
 *  Settings: FORKUNION_THREADS (default: all allowed cores), FORKUNION_BACKEND (if set: only that backend's
 *  runtime, plus the floor), FORKUNION_TIME_LIMIT (if set: the minimum time per row, overriding Google
 *  Benchmark's `--benchmark_min_time`; the idle rows spend about that long in their gaps instead). OpenMP rows run
 *  last: with OMP_WAIT_POLICY=active its idle threads never stop spinning, which would tax every row after them.
 */
#include <algorithm> // `std::sort`
#include <cstdio>    // `std::printf`
#include <map>       // `std::map`
#include <string>    // `std::string`
#include <vector>    // `std::vector`

#include <benchmark/benchmark.h>

#include "harness.hpp"
#include "runtimes.hpp"

namespace fu = forkunion;
namespace fub = forkunion::bench;

namespace {

enum class loop_t { for_threads_k, for_n_k, for_n_dynamic_k };
enum class body_t { empty_k, line_k, stack_k };

char const *body_name(body_t body) {
    return body == body_t::line_k ? "line" : body == body_t::stack_k ? "stack" : "empty";
}
enum class idle_t { spin_k, nap_k, sleep_k };

char const *loop_name(loop_t loop) {
    return loop == loop_t::for_threads_k ? "for_threads" : loop == loop_t::for_n_k ? "for_n" : "for_n_dynamic";
}

/**  Counted dispatches before timing: enough to see a split, cheap next to any timed window. */
constexpr std::size_t census_dispatches_k = 1000;
/**  Idle gap before a timed wake-up: ~200x the futex entry cost, so sleepers are really in the kernel. */
constexpr std::chrono::microseconds idle_gap_k{200};

fub::machine_t const &machine() {
    static fub::machine_t const harvested = fub::harvest_machine();
    return harvested;
}

/**
 *  The floor for a row of `runtime`, measured with no runtime's thread alive: right now for runtimes that each row
 *  creates and destroys, once per process (before the team's first start) for OpenMP, whose team persists.
 */
fub::floor_t floor_before(fub::runtime_id_t runtime) {
    if (runtime != fub::runtime_id_t::openmp_k) return fub::measure_floor(machine());
    static fub::floor_t const before_the_team = fub::measure_floor(machine());
    return before_the_team;
}

/**
 *  Dispatches per timed batch: two clock reads (~50 ns) per 64 dispatches cost <0.3% of the fastest row, and a
 *  batch is short enough (~20 µs-4 ms) that a preemption spoils one sample, not the median.
 */
constexpr benchmark::IterationCount batch_k = 64;

/**
 *  Reports a row's counters: `median_ns` (median over batches, what the summary uses), the floor, `x_floor`, and
 *  the census unless `off_caller` is negative (not measured).
 */
void report(benchmark::State &state, double floor_ns, std::vector<double> samples, double off_caller = -1) {
    double const ns = fub::median(std::move(samples));
    state.counters["median_ns"] = ns;
    state.counters["floor_ns"] = floor_ns;
    state.counters["x_floor"] = floor_ns > 0 ? ns / floor_ns : 0;
    if (off_caller >= 0) state.counters["off_caller"] = off_caller;
}

/**  Times `batch()` (which runs `batch_k` iterations) until Google Benchmark is satisfied; ns per iteration. */
template <typename batch_type_>
std::vector<double> run_batches(benchmark::State &state, batch_type_ &&batch) {
    std::vector<double> samples;
    while (state.KeepRunningBatch(batch_k)) {
        auto const start = fub::steady_clock_t::now();
        batch();
        samples.push_back(fub::seconds_since(start) * 1e9 / double(batch_k));
    }
    return samples;
}

/**  One dispatch of `loop` with `fn(task, thread)` on `runtime`. */
template <loop_t loop_k, typename runtime_type_, typename fn_type_>
inline void dispatch(runtime_type_ &runtime, fn_type_ const &fn) noexcept {
    std::size_t const threads = runtime.threads_count();
    if constexpr (loop_k == loop_t::for_threads_k)
        runtime.for_threads([&fn](std::size_t thread) noexcept { fn(thread, thread); });
    else if constexpr (loop_k == loop_t::for_n_k)
        runtime.template for_n<fub::schedule_t::static_k>(threads, fn);
    else
        runtime.template for_n<fub::schedule_t::dynamic_k>(threads, fn);
}

template <loop_t loop_k, body_t body_k>
void dispatch_row(benchmark::State &state, fub::runtime_id_t runtime_id, std::size_t threads) {
    // The previous row's runtime pinned this thread: every row starts from the whole machine, like a process.
    machine().widen_calling_thread();
    fub::floor_t const floor = floor_before(runtime_id); // right before the runtime exists (file comment)
    fub::pin_plan_t plan(machine(), threads);
    fub::with_runtime(runtime_id, plan, [&](auto &runtime) {
        using runtime_t = std::decay_t<decltype(runtime)>;
        if constexpr (loop_k == loop_t::for_threads_k &&
                      !requires(runtime_t & r) { r.for_threads([](std::size_t) noexcept {}); }) {
            state.SkipWithError("no native broadcast");
        } else {
            runtime.enter([&] {
                std::vector<fub::padded_count_t> lines(threads);
                // `stack`: the caller writes this word right before every dispatch, and every task reads it.
                std::size_t volatile token = 0;
                auto body = [&](std::size_t task, std::size_t) noexcept {
                    if constexpr (body_k == body_t::line_k)
                        ++lines[task].value;
                    else if constexpr (body_k == body_t::stack_k)
                        benchmark::DoNotOptimize(token + task);
                    else
                        benchmark::DoNotOptimize(task);
                };
                fub::census_t census(threads);
                auto counted = [&](std::size_t task, std::size_t thread) noexcept {
                    census.count(thread);
                    body(task, thread);
                };
                for (std::size_t i = 0; i != census_dispatches_k; ++i) dispatch<loop_k>(runtime, counted);
                std::vector<double> samples = run_batches(state, [&] {
                    for (benchmark::IterationCount i = 0; i != batch_k; ++i) {
                        if constexpr (body_k == body_t::stack_k) token = static_cast<std::size_t>(i);
                        dispatch<loop_k>(runtime, body);
                    }
                });
                benchmark::DoNotOptimize(lines.data());
                report(state, floor.round_trip_ns, std::move(samples), census.off_caller_share());
            });
        }
    });
}

/**  ForkUnion's wake-up rows: a dispatch after an idle gap in `idle_k` mode, timed alone. */
template <idle_t idle_k>
void idle_row(benchmark::State &state, std::size_t threads) {
    machine().widen_calling_thread();
    fub::floor_t const floor = fub::measure_floor(machine());
    fub::pin_plan_t plan(machine(), threads);
    fub::forkunion_runtime_t<false> runtime(plan);
    if (!runtime.error().empty()) return state.SkipWithError(runtime.error().c_str());
    {
        auto body = [](std::size_t task, std::size_t) noexcept { benchmark::DoNotOptimize(task); };
        std::vector<double> samples;
        for (auto _ : state) {
            fu::status_t idle;
            if constexpr (idle_k == idle_t::spin_k) idle = runtime.pool().set_idle_policy(fu::idle_policy_t::spin());
            if constexpr (idle_k == idle_t::nap_k) idle = runtime.pool().set_idle_policy(fu::idle_policy_t::nap());
            if constexpr (idle_k == idle_t::sleep_k) idle = runtime.pool().set_idle_policy(fu::idle_policy_t::sleep(0));
            if (!idle) return state.SkipWithError(idle.name());
            auto const gap_end = fub::steady_clock_t::now() + idle_gap_k;
            while (fub::steady_clock_t::now() < gap_end) {}
            auto const start = fub::steady_clock_t::now();
            runtime.template for_n<fub::schedule_t::static_k>(threads, body);
            double const seconds = fub::seconds_since(start);
            state.SetIterationTime(seconds);
            samples.push_back(seconds * 1e9);
        }
        report(state, floor.round_trip_ns, std::move(samples));
    }
}

/**  The floor as a row of its own: ns per round trip, timed by Google Benchmark like every other row. */
void floor_row(benchmark::State &state) {
    fub::machine_t const &m = machine();
    if (m.cpus.size() < 2) return state.SkipWithError("fewer than 2 allowed cpus");
    fub::ping_pong_t ping_pong(m.cpus[0], m.cpus[1]);
    std::vector<double> samples = run_batches(state, [&] {
        for (benchmark::IterationCount i = 0; i != batch_k; ++i) ping_pong.round_trip();
    });
    double const floor_ns = fub::median(samples);
    report(state, floor_ns, std::move(samples));
}

/**  Collects every row while printing the usual console output, then the markdown table and `RESULT` rows. */
class summary_reporter_t : public benchmark::ConsoleReporter {
public:
    void ReportRuns(std::vector<Run> const &runs) override {
        for (Run const &run : runs) {
            if (run.run_type != Run::RT_Iteration || run.error_occurred) continue;
            std::string const &name = run.run_name.function_name;
            row_t &row = rows_[name];
            if (row.samples.empty()) order_.push_back(name);
            auto counter = [&](char const *key) {
                auto const found = run.counters.find(key);
                return found == run.counters.end() ? -1.0 : double(found->second.value);
            };
            row.samples.push_back(counter("median_ns"));
            row.means.push_back(run.GetAdjustedRealTime());
            row.floor.push_back(counter("floor_ns"));
            row.off_caller = counter("off_caller");
        }
        ConsoleReporter::ReportRuns(runs);
    }

    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf(
            "\n| row | ns per dispatch (median) | mean | floor ns | x floor | x forkunion for_n | off caller |\n");
        std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (std::string const &name : order_) {
            row_t const &row = rows_[name];
            double const ns = median(row.samples), floor = median(row.floor);
            std::string const reference = reference_of(name);
            auto const found = rows_.find(reference);
            double const base = found == rows_.end() ? 0 : median(found->second.samples);
            std::printf("| `%s` | %.1f | %.1f | %.1f | %s | %s | %s |\n", name.c_str(), ns, median(row.means), floor,
                        floor > 0 ? format("%.2f", ns / floor).c_str() : "-",
                        base > 0 ? format("%.2f", ns / base).c_str() : "-",
                        row.off_caller >= 0 ? format("%.2f", row.off_caller).c_str() : "-");
        }
        std::printf("\n");
        for (std::string const &name : order_) {
            row_t const &row = rows_[name];
            for (std::size_t i = 0; i != row.samples.size(); ++i) {
                fub::result_row_t result("dispatch");
                result.add("row", name).add("ns", row.samples[i]).add("mean_ns", row.means[i]);
                result.add("floor_ns", row.floor[i]);
                if (row.floor[i] > 0) result.add("x_floor", row.samples[i] / row.floor[i]);
                if (row.off_caller >= 0) result.add("off_caller", row.off_caller);
                result.print();
            }
        }
    }

private:
    struct row_t {
        std::vector<double> samples, means, floor;
        double off_caller = -1;
    };

    static double median(std::vector<double> values) { return fub::median(std::move(values)); }
    static std::string format(char const *pattern, double value) {
        char buffer[32];
        std::snprintf(buffer, sizeof(buffer), pattern, value);
        return buffer;
    }
    /**  "libgomp/for_n_dynamic/line" -> "forkunion/for_n/line": the same body on ForkUnion's `for_n`. */
    static std::string reference_of(std::string const &name) {
        std::size_t const body = name.rfind('/');
        std::string const tail = name.substr(body + 1);
        return "forkunion/for_n/" + (tail == "line" ? tail : std::string("empty"));
    }

    std::map<std::string, row_t> rows_;
    std::vector<std::string> order_;
};

template <loop_t loop_k, body_t body_k>
void register_row(fub::backend_t const &backend, std::size_t threads, double min_time) {
    std::string const name = backend.family + "/" + loop_name(loop_k) + "/" + body_name(body_k);
    auto *row =
        benchmark::RegisterBenchmark(name.c_str(), [runtime = backend.runtime, threads](benchmark::State &state) {
            dispatch_row<loop_k, body_k>(state, runtime, threads);
        });
    row->UseRealTime()->Unit(benchmark::kNanosecond);
    if (min_time > 0) row->MinTime(min_time);
}

/**
 *  Idle rows run a fixed count of dispatches: their manual time counts only the dispatches, so a minimum time
 *  would wait through ~200x as much idle gap. The count spends about the row's time budget (0.5 s by default) in
 *  gaps of ~250 µs, within [50, 20000].
 */
template <idle_t idle_k>
void register_idle_row(char const *name, std::size_t threads, double min_time) {
    auto *row =
        benchmark::RegisterBenchmark(name, [threads](benchmark::State &state) { idle_row<idle_k>(state, threads); });
    double const budget = min_time > 0 ? min_time : 0.5;
    double const count = std::clamp(budget / 250e-6, 50.0, 20000.0);
    row->UseManualTime()->Unit(benchmark::kNanosecond)->Iterations(static_cast<benchmark::IterationCount>(count));
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "--list --benchmark_*", 0,
                    "[--list] [--benchmark_...]\nDispatch latency of every runtime, next to a ping-pong floor.\n"
                    "  --list  prints the backends (the values of FORKUNION_BACKEND) and exits\n"
                    "  --benchmark_...  Google Benchmark's flags (--benchmark_min_time=0.01, --benchmark_filter=...)\n"
                    "  FORKUNION_TIME_LIMIT, when set, is each row's minimum time\n" FORKUNION_BENCH_SETTINGS_USAGE);
    std::vector<fub::backend_t> const backends = fub::available_backends();
    if (fub::list_requested(argc, argv, fub::backend_names(backends))) return 0;
    fub::settings_t const settings = fub::read_settings(fub::backend_names(backends), machine().cpus.size());
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return fub::exit_bad_setting_k;
    fub::print_banner("dispatch", settings, machine());
    double const min_time = settings.time_limit_is_set ? std::chrono::duration<double>(settings.time_limit).count() : 0;
    std::size_t const threads = settings.threads;

    // One runtime per family: the static backend stands for it. OpenMP's family goes last (file comment).
    std::vector<fub::backend_t> families;
    // ForkUnion's family is both its pools: `forkunion` rows are the flat pool, `forkunion_distributed` rows the
    // distributed pool of the `*_replicated` backends, measured in the same process so they compare side by side.
    auto is_forkunion = [](fub::runtime_id_t runtime) {
        return runtime == fub::runtime_id_t::forkunion_shared_k || runtime == fub::runtime_id_t::forkunion_replicated_k;
    };
    for (auto backend : backends) {
        if (backend.schedule != fub::schedule_t::static_k) continue;
        if (settings.backend_is_set) {
            fub::runtime_id_t const wanted = fub::find_backend(backends, settings.backend).runtime;
            if (wanted != backend.runtime && !(is_forkunion(wanted) && is_forkunion(backend.runtime))) continue;
        }
        if (backend.runtime == fub::runtime_id_t::forkunion_replicated_k) backend.family = "forkunion_distributed";
        families.push_back(backend);
    }
    std::stable_partition(families.begin(), families.end(),
                          [](fub::backend_t const &b) { return b.runtime != fub::runtime_id_t::openmp_k; });

    auto *floor = benchmark::RegisterBenchmark("floor/ping_pong/two_lines", floor_row);
    floor->UseRealTime()->Unit(benchmark::kNanosecond);
    if (min_time > 0) floor->MinTime(min_time);
    for (auto const &family : families) {
        // Native broadcasts only: ForkUnion's `for_threads` and OpenMP's bare `parallel`.
        if (is_forkunion(family.runtime) || family.runtime == fub::runtime_id_t::openmp_k) {
            register_row<loop_t::for_threads_k, body_t::empty_k>(family, threads, min_time);
            register_row<loop_t::for_threads_k, body_t::line_k>(family, threads, min_time);
        }
        register_row<loop_t::for_n_k, body_t::empty_k>(family, threads, min_time);
        register_row<loop_t::for_n_k, body_t::line_k>(family, threads, min_time);
        // What every OpenMP row pays by the ABI (file comment), on ForkUnion's flat pool.
        if (family.runtime == fub::runtime_id_t::forkunion_shared_k)
            register_row<loop_t::for_n_k, body_t::stack_k>(family, threads, min_time);
        register_row<loop_t::for_n_dynamic_k, body_t::empty_k>(family, threads, min_time);
        register_row<loop_t::for_n_dynamic_k, body_t::line_k>(family, threads, min_time);
        if (family.runtime == fub::runtime_id_t::forkunion_shared_k) {
            register_idle_row<idle_t::spin_k>("forkunion/for_n/empty/after_spin", threads, min_time);
            register_idle_row<idle_t::nap_k>("forkunion/for_n/empty/after_nap", threads, min_time);
            register_idle_row<idle_t::sleep_k>("forkunion/for_n/empty/after_sleep0", threads, min_time);
        }
    }

    summary_reporter_t reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
