/**
 *  @file   wake.cpp
 *  @brief  What each idle policy costs: wake-up latency after an idle gap, the CPU time idle workers burn per idle
 *          wall second, and back-to-back dispatch time against the spin policy, printed as a markdown table.
 *
 *  For each policy (spin, the adaptive default, nap, sleep), a caller-inclusive `flat_pool_t` of T threads (the
 *  caller and T - 1 workers):
 *  - **wake-up latency**: the pool is put in the mode and left idle for a gap long enough for the workers to reach
 *    their idle wait (a futex for `sleep(0)`), then the caller reads the clock and dispatches; each worker reads
 *    the clock first thing in its callback. A sample is the difference, one per worker per dispatch; the table
 *    gives the median and the 99th percentile.
 *  - **idle CPU**: the pool is put in the mode, the caller sleeps, and the process's CPU time over the sleep,
 *    divided by its wall time, is what the idle workers burned (the sleeping caller adds ~0);
 *  - **back to back**: ns per empty `for_n(T)` dispatched in a tight loop (gaps far below the adaptive window), and
 *    its ratio to the spin policy's, measured in the same run.
 *  The gap before each wake-up sample is 1 ms, ten times the adaptive window, so the adaptive rows show the wake-up
 *  a dispatch after a long idle pays.
 *
 *  Environment (unset or empty keeps the default; a malformed value names itself and exits 1):
 *  - `FORKUNION_THREADS` (count, 0 = all allowed cores; default all, at least 2): pool threads.
 *  - `FORKUNION_TIME_LIMIT` (integer + `ms` or `s`, default 10s): per mode, split between the two measurements.
 *  - `FORKUNION_WARMUP` (same form, default 1s): spin-mode dispatches before the first mode.
 *  The other variables of the protocol (seed, backend, workload sizes) do not apply to this binary.
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <time.h> // `clock_gettime`

#include <forkunion.hpp>

#include "usage.h"

namespace fu = forkunion;
using clock_type = std::chrono::steady_clock;

namespace {

/**  Parses `FORKUNION_<name>` as a count; exits with a message naming the variable if malformed. */
std::size_t count_from_environment(char const *variable, std::size_t fallback) {
    char const *text = std::getenv(variable);
    if (!text || !*text) return fallback;
    char *end = nullptr;
    unsigned long long const value = std::strtoull(text, &end, 10);
    if (*end || text[0] == '-' || text[0] == '+') {
        std::fprintf(stderr, "%s='%s': expected a count (a non-negative integer)\n", variable, text);
        std::exit(1);
    }
    return static_cast<std::size_t>(value);
}

/**  Parses `FORKUNION_<name>` as an integer with `ms` or `s`; exits with a message naming the variable if not. */
clock_type::duration duration_from_environment(char const *variable, clock_type::duration fallback) {
    char const *text = std::getenv(variable);
    if (!text || !*text) return fallback;
    char *end = nullptr;
    unsigned long long const value = std::strtoull(text, &end, 10);
    bool const digits = end != text && text[0] >= '0' && text[0] <= '9';
    if (digits && std::strcmp(end, "ms") == 0) return std::chrono::milliseconds(value);
    if (digits && std::strcmp(end, "s") == 0) return std::chrono::seconds(value);
    std::fprintf(stderr, "%s='%s': expected an integer followed by ms or s, like 500ms or 10s\n", variable, text);
    std::exit(1);
}

double process_cpu_seconds() {
    timespec now{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count();
}

void enter(fu::flat_pool_t &pool, fu::idle_policy_t policy) {
    if (!pool.set_idle_policy(policy)) std::abort(); // a valid policy is never refused
}

struct row_t {
    std::string mode;
    double median_us = 0, p99_us = 0;
    std::size_t samples = 0;
    double cpu_per_idle_second = 0;
    double back_to_back_ns = 0;
};

/**  ns per empty `for_n(threads)` in a tight loop of `dispatches`. */
double back_to_back_ns(fu::flat_pool_t &pool, std::size_t dispatches) {
    std::size_t const threads = pool.threads_count();
    auto const start = clock_type::now();
    for (std::size_t i = 0; i != dispatches; ++i)
        if (!pool.for_n(threads, [](std::size_t) noexcept {}).join()) std::abort();
    return std::chrono::duration<double, std::nano>(clock_type::now() - start).count() / double(dispatches);
}

row_t measure(fu::flat_pool_t &pool, fu::idle_policy_t mode, std::string name, clock_type::duration budget) {
    std::size_t const workers = pool.threads_count() - 1;
    // Idle long enough for a worker to reach its wait: a futex sleep begins within microseconds of the idle mode
    // change, and a time slice here is ~1-4 ms, so 1 ms also lets a preempted worker get back to its loop.
    constexpr auto gap = std::chrono::milliseconds(1);
    std::vector<std::atomic<std::int64_t>> woke(pool.threads_count());
    std::vector<double> samples;
    auto const latency_end = clock_type::now() + budget / 2;
    while (clock_type::now() < latency_end || samples.size() < 20 * workers) {
        enter(pool, mode);
        std::this_thread::sleep_for(gap);
        std::int64_t const start = now_ns();
        if (!pool.for_threads(
                     [&](std::size_t thread) noexcept { woke[thread].store(now_ns(), std::memory_order_relaxed); })
                 .join())
            std::abort();
        for (std::size_t thread = 1; thread <= workers; ++thread)
            samples.push_back(static_cast<double>(woke[thread].load(std::memory_order_relaxed) - start) * 1e-3);
    }
    std::sort(samples.begin(), samples.end());
    row_t row;
    row.mode = std::move(name);
    row.samples = samples.size();
    row.median_us = samples[samples.size() / 2];
    row.p99_us = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];

    enter(pool, mode);
    std::this_thread::sleep_for(gap); // let the workers settle into the mode before the window opens
    auto const wall_start = clock_type::now();
    double const cpu_start = process_cpu_seconds();
    std::this_thread::sleep_for(budget / 2);
    double const cpu = process_cpu_seconds() - cpu_start;
    double const wall = std::chrono::duration<double>(clock_type::now() - wall_start).count();
    row.cpu_per_idle_second = cpu / wall;
    (void)back_to_back_ns(pool, 1000); // warm: the workers are awake and spinning out their window again
    row.back_to_back_ns = back_to_back_ns(pool, 20'000);
    return row;
}

std::string cpu_model() {
    char line[512];
    std::string model = "unknown CPU";
    if (std::FILE *file = std::fopen("/proc/cpuinfo", "r")) {
        while (std::fgets(line, sizeof line, file))
            if (std::strncmp(line, "model name", 10) == 0 || std::strncmp(line, "uarch", 5) == 0) {
                char const *colon = std::strchr(line, ':');
                model = colon ? colon + 2 : line;
                if (!model.empty() && model.back() == '\n') model.pop_back();
                break;
            }
        std::fclose(file);
    }
    return model;
}

} // namespace

int main(int argc, char **argv) {
    forkunion_usage(argc, argv, "", 0,
                    "\nWake-up latency and idle CPU time of the spin, nap and sleep(0) idle policies.\n"
                    "environment (unset or empty keeps the default; a malformed value exits with status 1):\n"
                    "  FORKUNION_THREADS     all allowed cores, at least 2; a count, 0 = all\n"
                    "  FORKUNION_TIME_LIMIT  10s per mode; an integer followed by ms or s\n"
                    "  FORKUNION_WARMUP      1s of spin-mode dispatches before the first mode\n");
    std::size_t threads = count_from_environment("FORKUNION_THREADS", 0);
    auto const budget = duration_from_environment("FORKUNION_TIME_LIMIT", std::chrono::seconds(10));
    auto const warmup = duration_from_environment("FORKUNION_WARMUP", std::chrono::seconds(1));
    if (threads == 0) threads = fu::allowed_cores_count();
    threads = std::max<std::size_t>(threads, 2); // one worker at least: the caller never waits idle

    fu::flat_pool_t pool;
    if (fu::status_t status = pool.spawn(threads); !status) {
        std::fprintf(stderr, "spawn(%zu) failed: %s\n", threads, status.name());
        return 1;
    }
    for (auto const end = clock_type::now() + warmup; clock_type::now() < end;)
        if (!pool.for_threads([](std::size_t) noexcept {}).join()) return 1;

    char capabilities[512];
    fu::name_capabilities(fu::runtime_capabilities(), capabilities, sizeof capabilities);
    char const *nap_instruction = fu::nap_backend_t::instruction();
    std::string const nap_name =
        std::string("nap (") + (nap_instruction ? nap_instruction : "micro-wait fallback") + ")";

    std::vector<row_t> rows;
    rows.push_back(measure(pool, fu::idle_policy_t::spin(), "spin (micro-wait)", budget));
    rows.push_back(measure(pool, fu::idle_policy_t::adaptive(),
                           "adaptive " + std::to_string(fu::default_idle_window_us_k) + " µs (the default)", budget));
    rows.push_back(measure(pool, fu::idle_policy_t::nap(), nap_name, budget));
    rows.push_back(measure(pool, fu::idle_policy_t::sleep(0), "sleep(0) (futex)", budget));

    std::printf("%s, %zu threads (%zu workers%s), capabilities: %s\n\n", cpu_model().c_str(), threads, threads - 1,
                pool.oversubscribed() ? ", oversubscribed" : "", capabilities);
    std::printf("| idle policy | wake-up median | wake-up p99 | samples | CPU s per idle s (all workers) | per worker "
                "| back to back | × spin |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (row_t const &row : rows)
        std::printf("| %s | %.2f µs | %.2f µs | %zu | %.3f | %.3f | %.0f ns | %.2f |\n", row.mode.c_str(),
                    row.median_us, row.p99_us, row.samples, row.cpu_per_idle_second,
                    row.cpu_per_idle_second / double(threads - 1), row.back_to_back_ns,
                    row.back_to_back_ns / rows.front().back_to_back_ns);
    return 0;
}
