/**
 *  @file   instructions.cpp
 *  @brief  Runs exactly N empty dispatches of one backend and exits: the workload whose instructions
 *          `bench/pools/instructions.sh` counts under `valgrind --tool=callgrind` (or `perf stat` where the CPU's
 *          counters are exposed), as the difference between two values of N divided by their difference.
 *
 *  Usage: `FORKUNION_BACKEND=<name> FORKUNION_THREADS=<t> forkunion_bench_instructions <dispatches>`.
 *  Each dispatch is `for_n<schedule>(T, empty)`, the `for_n/empty` row of `forkunion_bench_dispatch`. No floor and
 *  no timing: under an instruction counter only the instruction path matters.
 */
#include <cstdio>  // `std::printf`
#include <cstdlib> // `std::strtoull`

#include "harness.hpp"
#include "runtimes.hpp"

namespace fub = forkunion::bench;

int main(int argc, char **argv) {
    forkunion_usage(
        argc, argv, "--list", 1,
        "[--list] <dispatches>\nRuns exactly <dispatches> empty for_n dispatches of FORKUNION_BACKEND "
        "and exits (what bench/pools/instructions.sh counts).\n"
        "  --list  prints the backends (the values of FORKUNION_BACKEND) and exits\n" FORKUNION_BENCH_SETTINGS_USAGE);
    std::vector<fub::backend_t> const backends = fub::available_backends();
    if (fub::list_requested(argc, argv, fub::backend_names(backends))) return 0;
    fub::machine_t const machine = fub::harvest_machine();
    fub::settings_t const settings = fub::read_settings(fub::backend_names(backends), machine.cpus.size());
    std::uint64_t dispatches = 0;
    if (argc != 2 || !fub::detail::parse_unsigned(argv[1], 1ull << 40, dispatches))
        fub::fail(fub::exit_bad_setting_k, "usage: FORKUNION_BACKEND=<name> %s <dispatches (an integer)>", argv[0]);
    fub::backend_t const &backend = fub::find_backend(backends, settings.backend);
    fub::pin_plan_t plan(machine, settings.threads);
    fub::with_runtime(backend.runtime, plan, [&](auto &runtime) {
        runtime.enter([&] {
            fub::with_schedule(backend.schedule, [&](auto schedule) {
                constexpr fub::schedule_t schedule_k = decltype(schedule)::value;
                std::size_t const threads = runtime.threads_count();
                auto empty = [](std::size_t, std::size_t) noexcept {};
                for (std::uint64_t i = 0; i != dispatches; ++i) runtime.template for_n<schedule_k>(threads, empty);
            });
        });
    });
    std::printf("%s: %llu dispatches of %zu tasks\n", backend.name.c_str(), (unsigned long long)dispatches,
                settings.threads);
    return 0;
}
