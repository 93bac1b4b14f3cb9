/**
 *  @file   retire.cpp
 *  @brief  Retirement at scale: dispatch latency of the shipped retirement tree next to a flat fan-in and the
 *          last-child-first tree (`retire_variants.hpp`), at T = 2, 4, 8, 16 and every allowed core, as ratios
 *          measured side by side in one process.
 *
 *  Each row is one T. For each of FORKUNION_RETIRE_ROUNDS rounds (default 5), every variant gets a fresh
 *  caller-inclusive pool of T threads (spin policy), a warm-up, then a timed window of `for_n(T)` dispatches of an
 *  empty body in batches of 64; the variants take turns leading the rounds, so drift over the run falls on all of
 *  them alike. A row reports each variant's median over all its batches, each ratio to the tree as the ratio of
 *  those medians, and in brackets the smallest and largest ratio of the two variants' medians within one round
 *  (a round whose threads were preempted has few batches, so it moves its own ratio, not the pooled medians). The
 *  critical path of each fan-in in line transfers (the
 *  tree's shape, checked by `forkunion_bench_handoff`) is printed beside it: the ratios test whether it shows.
 *
 *  Pools of up to `retire_fan_in_k` + 1 threads are flat in every variant, so T = 2, 4 and 8 run the same code
 *  three times: those ratios show the run's noise. A row with more threads than allowed cores measures the
 *  scheduler, not the fan-in, and says so; `retire_device.sh` runs this on a machine with 16 cores or more.
 *
 *  Settings: FORKUNION_THREADS (the largest T, also a row of its own; default 16 or all allowed cores, whichever
 *  is more; below 2, only the T = 2 row), FORKUNION_TIME_LIMIT (the window of one variant in one round; default
 *  200ms), FORKUNION_WARMUP (per pool; default 50ms), and this binary's own FORKUNION_RETIRE_ROUNDS (1 to 1000;
 *  default 5). The rest of the table in `harness.hpp` is read, checked and unused.
 */
#include <algorithm> // `std::sort`, `std::unique`
#include <chrono>    // `std::chrono::milliseconds`
#include <cstdio>    // `std::printf`
#include <iterator>  // `std::size`
#include <string>    // `std::string`
#include <vector>    // `std::vector`

#include "harness.hpp"
#include "retire_variants.hpp"

namespace fub = forkunion::bench;

namespace {

constexpr std::size_t default_rounds_k = 5;
constexpr std::chrono::milliseconds default_window_k{200}, default_warmup_k{50};

struct variant_t {
    char const *name;
    forkunion::child_order_t order;
    fub::retire_variant_t const &timing;
};

variant_t const variants_k[] = {
    {"tree", forkunion::child_order_t::first_to_last_k, fub::tree::retire_variant},
    {"last_child_first", forkunion::child_order_t::last_to_first_k, fub::last_child_first::retire_variant},
    {"flat_fan_in", forkunion::child_order_t::first_to_last_k, fub::flat_fan_in::retire_variant},
};
constexpr std::size_t variants_count_k = std::size(variants_k);

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nRetirement at scale: the shipped retirement tree against two variants of its fan-in.\n"
                    "  FORKUNION_THREADS       the largest T (default: 16 or every allowed core, whichever is more)\n"
                    "  FORKUNION_TIME_LIMIT    200ms; the window of one variant in one round\n"
                    "  FORKUNION_WARMUP        50ms; per pool\n"
                    "  FORKUNION_RETIRE_ROUNDS 5; 1 to 1000\n" FORKUNION_BENCH_SETTINGS_USAGE);
    fub::machine_t const machine = fub::machine_t::harvest();
    fub::settings_t const settings = fub::read_settings({"forkunion_static_shared"}, machine.cpus.size());
    std::size_t rounds = default_rounds_k;
    fub::detail::read_count("FORKUNION_RETIRE_ROUNDS", 1, 1000, rounds);
    std::chrono::nanoseconds const window = settings.time_limit_is_set ? settings.time_limit : default_window_k;
    std::chrono::nanoseconds const warmup =
        fub::detail::setting_text("FORKUNION_WARMUP") ? settings.warmup : std::chrono::nanoseconds(default_warmup_k);
    // Rows: 2, 4, 8, 16, the allowed cores and FORKUNION_THREADS, up to FORKUNION_THREADS when it is set.
    std::size_t const largest = fub::detail::setting_text("FORKUNION_THREADS")
                                    ? settings.threads
                                    : std::max<std::size_t>(16, machine.cpus.size());
    std::vector<std::size_t> thread_counts;
    for (std::size_t const threads :
         {std::size_t(2), std::size_t(4), std::size_t(8), std::size_t(16), machine.cpus.size(), largest})
        if (threads >= 2 && threads <= largest) thread_counts.push_back(threads);
    if (thread_counts.empty()) thread_counts.push_back(2);
    std::sort(thread_counts.begin(), thread_counts.end());
    thread_counts.erase(std::unique(thread_counts.begin(), thread_counts.end()), thread_counts.end());

    fub::print_banner("dispatch/retire", settings, machine);
    std::printf("# retire: %zu rounds per row, each variant's window %.3fs after a %.3fs warm-up, spin policy, "
                "caller-inclusive, for_n(T) of an empty body\n",
                rounds, std::chrono::duration<double>(window).count(), std::chrono::duration<double>(warmup).count());
    fub::floor_t const floor = fub::measure_floor(machine);
    fub::print_floor(floor);

    std::printf(
        "\n| T | allowed cores | tree ns | last_child_first ns | flat_fan_in ns | last_child_first / tree "
        "(rounds) | flat_fan_in / tree (rounds) | tree x floor | critical path: tree, last_child_first, flat |\n"
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    std::vector<fub::result_row_t> results;
    bool complete = true;
    for (std::size_t const threads : thread_counts) {
        std::vector<double> all[variants_count_k];
        std::vector<double> ratios[variants_count_k];
        for (std::size_t round = 0; round != rounds; ++round) {
            double medians[variants_count_k] = {};
            for (std::size_t turn = 0; turn != variants_count_k; ++turn) {
                std::size_t const index = (round + turn) % variants_count_k;
                std::vector<double> samples = variants_k[index].timing.time_for_n(threads, warmup, window);
                if (samples.empty()) complete = false;
                medians[index] = fub::median(samples);
                all[index].insert(all[index].end(), samples.begin(), samples.end());
            }
            for (std::size_t index = 0; index != variants_count_k; ++index)
                if (medians[0] > 0) ratios[index].push_back(medians[index] / medians[0]);
        }
        double ns[variants_count_k], ratio[variants_count_k], lowest[variants_count_k], highest[variants_count_k];
        std::string paths;
        for (std::size_t index = 0; index != variants_count_k; ++index) ns[index] = fub::median(all[index]);
        for (std::size_t index = 0; index != variants_count_k; ++index) {
            ratio[index] = ns[0] > 0 ? ns[index] / ns[0] : 0;
            std::sort(ratios[index].begin(), ratios[index].end());
            lowest[index] = ratios[index].empty() ? 0 : ratios[index].front();
            highest[index] = ratios[index].empty() ? 0 : ratios[index].back();
            paths += (index ? ", " : "") +
                     std::to_string(fub::retirement_critical_path(threads, variants_k[index].timing.fan_in,
                                                                  variants_k[index].order, false));
        }
        bool const oversubscribed = threads > machine.cpus.size();
        std::printf("| %zu | %zu%s | %.0f | %.0f | %.0f | %.3f (%.2f-%.2f) | %.3f (%.2f-%.2f) | %.2f | %s |\n", threads,
                    machine.cpus.size(), oversubscribed ? " (oversubscribed: the scheduler's, not the fan-in's)" : "",
                    ns[0], ns[1], ns[2], ratio[1], lowest[1], highest[1], ratio[2], lowest[2], highest[2],
                    floor.round_trip_ns > 0 ? ns[0] / floor.round_trip_ns : 0.0, paths.c_str());
        fub::result_row_t row("retire");
        row.add("threads", std::uint64_t(threads)).add("oversubscribed", std::uint64_t(oversubscribed));
        for (std::size_t index = 0; index != variants_count_k; ++index)
            row.add((std::string(variants_k[index].name) + "_ns").c_str(), ns[index])
                .add((std::string(variants_k[index].name) + "_over_tree").c_str(), ratio[index])
                .add((std::string(variants_k[index].name) + "_over_tree_lowest").c_str(), lowest[index])
                .add((std::string(variants_k[index].name) + "_over_tree_highest").c_str(), highest[index]);
        row.add("floor_ns", floor.round_trip_ns);
        results.push_back(row);
    }
    std::printf("\n");
    for (fub::result_row_t const &row : results) row.print();
    if (!complete) fub::fail(fub::exit_unavailable_k, "a pool did not spawn or refused a dispatch: timings are void");
    return 0;
}
