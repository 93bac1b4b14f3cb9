/**
 *  @file   harness.hpp
 *  @brief  What every benchmark binary shares: strict settings, machine facts, pinning, the ping-pong floor, the
 *          task census, the timed window, the banner and the result row.
 *
 *  @section settings Settings (the `FORKUNION_*` environment variables every benchmark shares)
 *  Every binary reads the whole table once, at start, so a bad value is caught by whichever binary meets it.
 *  Unset or empty keeps the default. A value that does not parse prints one line naming the variable and the
 *  expected form to stderr and exits with status 1 (`exit_bad_setting_k`).
 *
 *  | variable                            | default                   | form                                  |
 *  | ----------------------------------- | ------------------------- | ------------------------------------- |
 *  | FORKUNION_SEED                      | 42                        | u32, or `random`                      |
 *  | FORKUNION_WARMUP                    | 1s                        | integer + `ms` or `s`                 |
 *  | FORKUNION_TIME_LIMIT                | 10s                       | integer + `ms` or `s`                 |
 *  | FORKUNION_THREADS                   | all allowed cores         | count; 0 = all                        |
 *  | FORKUNION_BACKEND                   | forkunion_static_shared   | a name from the binary's backend list |
 *  | FORKUNION_NBODY_COUNT               | thread count              | count                                 |
 *  | FORKUNION_NBODY_CHECK               | false                     | 1/0/true/false (our extension)        |
 *  | FORKUNION_PROPAGATION_SCALE         | 14                        | 0..31                                 |
 *  | FORKUNION_PROPAGATION_COMMUNITIES   | 64                        | count                                 |
 *  | FORKUNION_PROPAGATION_EDGE_FACTOR   | 16                        | count                                 |
 *  | FORKUNION_PROPAGATION_CHECK         | false                     | 1/0/true/false                        |
 *  | FORKUNION_PROPAGATION_CACHE         | none                      | an existing directory (our extension) |
 *
 *  @section exits Exit statuses
 *  0 success; 1 a bad setting (`exit_bad_setting_k`); 2 the runtime could not start or misbehaved
 *  (`exit_unavailable_k`); 3 a CHECK found a difference (`exit_check_failed_k`).
 *
 *  @section pinning Pinning
 *  Thread `t` of every runtime is pinned to allowed CPU `t mod cores` (the process's affinity mask, sorted), by
 *  `pin_plan_t::pin_current_thread(t)`, called once on each of the runtime's threads through the runtime's own
 *  broadcast (see `runtimes.hpp`). Each pinned thread reads its mask back, so the banner reports what the OS
 *  granted, not what was asked. The pin also stores `t` in the thread-local `current_slot`, which runtimes that
 *  do not name their threads (pthreadpool, the task-queue pool) pass to kernels as the thread index.
 *
 *  @section floor The physical floor
 *  Two threads pinned to the first two allowed CPUs bounce a counter over two cache lines, one writer each: the
 *  smallest round trip any fork-join can make (publish, then learn that the worker finished). It is measured in
 *  the same process, right before the runtime under test exists, because on a virtual machine the host moves the
 *  vCPUs and the round trip drifts (between ~150 and ~600 ns from minute to minute on a 2-vCPU KVM guest of a Xeon,
 *  `forkunion_bench_dispatch`'s floor rows): only ratios to it are stable.
 */
#pragma once
#include <algorithm> // `std::sort`, `std::nth_element`
#include <atomic>    // `std::atomic`
#include <chrono>    // `std::chrono::steady_clock`
#include <cinttypes> // `PRIu64`
#include <cstdarg>   // `va_list`
#include <cstddef>   // `std::size_t`
#include <cstdint>   // `std::uint64_t`
#include <cstdio>    // `std::fprintf`
#include <cstdlib>   // `std::getenv`, `std::exit`
#include <cstring>   // `std::strcmp`
#include <random>    // `std::random_device`
#include <string>    // `std::string`
#include <thread>    // `std::thread`
#include <vector>    // `std::vector`

#include <dirent.h>  // `opendir`, to list NUMA nodes
#include <fcntl.h>   // `open`
#include <link.h>    // `dl_iterate_phdr`
#include <pthread.h> // `pthread_setaffinity_np`
#include <sched.h>   // `sched_getaffinity`, `cpu_set_t`
#include <unistd.h>  // `read`, `close`

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h> // `__get_cpuid_count`
#endif

#include <forkunion.hpp>

#include "usage.h" // `forkunion_usage`: `--help`, and unknown or extra arguments refused

/**  The settings table above as `--help` prints it: every binary that calls `read_settings` reads all of it. */
#define FORKUNION_BENCH_SETTINGS_USAGE                                                                                 \
    "environment (unset or empty keeps the default; a value that does not parse exits with status 1):\n"               \
    "  FORKUNION_SEED                     42; a u32, or random\n"                                                      \
    "  FORKUNION_WARMUP                   1s; an integer followed by ms or s\n"                                        \
    "  FORKUNION_TIME_LIMIT               10s; an integer followed by ms or s\n"                                       \
    "  FORKUNION_THREADS                  all allowed cores; a count, 0 = all\n"                                       \
    "  FORKUNION_BACKEND                  forkunion_static_shared; a name that --list prints\n"                        \
    "  FORKUNION_NBODY_COUNT              the thread count; bodies of the N-body benchmark\n"                          \
    "  FORKUNION_NBODY_CHECK              false; 1, 0, true or false\n"                                                \
    "  FORKUNION_PROPAGATION_SCALE        14; 0 to 31, log2 of the vertices per community\n"                           \
    "  FORKUNION_PROPAGATION_COMMUNITIES  64; a count\n"                                                               \
    "  FORKUNION_PROPAGATION_EDGE_FACTOR  16; a count\n"                                                               \
    "  FORKUNION_PROPAGATION_CHECK        false; 1, 0, true or false\n"                                                \
    "  FORKUNION_PROPAGATION_CACHE        none; an existing directory to keep generated graphs in\n"                   \
    "  OMP_PLACES, OMP_PROC_BIND, OMP_WAIT_POLICY, KMP_BLOCKTIME, GOMP_SPINCOUNT: printed in the banner, read by\n"    \
    "  the OpenMP runtime\n"

namespace forkunion::bench {

inline constexpr int exit_bad_setting_k = 1;
inline constexpr int exit_unavailable_k = 2;
inline constexpr int exit_check_failed_k = 3;

/**  Thread slots a runtime never showed to `pin_plan_t` read this; kernels treat it as fatal. */
inline constexpr std::size_t unknown_slot_k = ~std::size_t(0);

/**  The pinned index of the calling thread, set by `pin_plan_t::pin_current_thread`. */
inline thread_local std::size_t current_slot = unknown_slot_k;

/**  Prints one line to stderr and exits with `status` (stdout is flushed first, so the banner is not lost). */
[[noreturn, gnu::format(printf, 2, 3)]] inline void fail(int status, char const *format, ...) noexcept {
    std::va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
    std::fflush(stdout);
    std::exit(status);
}

// ---- Counter-based SplitMix64: inputs are bit-identical across backends, runs and languages ----

/**  SplitMix64's output for state `(counter + 1) * golden`; all arithmetic mod 2^64. */
constexpr std::uint64_t mix(std::uint64_t counter) noexcept {
    std::uint64_t x = (counter + 1) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// `mix(c)` is the (c+1)-th output of the published SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c)
// started from state 0; these are its first three outputs, so a typo in a constant fails to compile.
static_assert(mix(0) == 0xE220A8397B1DCDAFull && mix(1) == 0x6E789E6AA1B965F4ull && mix(2) == 0x06C45D188009454Full,
              "mix() must reproduce the published SplitMix64 sequence");

/**  `draw(c) = mix(key + c)` with `key = mix(seed)`. */
class draws_t {
public:
    explicit constexpr draws_t(std::uint32_t seed) noexcept : key_(mix(seed)) {}
    constexpr std::uint64_t operator()(std::uint64_t counter) const noexcept { return mix(key_ + counter); }
    /**  A uniform float in [0, 1): the top 24 bits of the draw, times 2^-24 (exact in binary32). */
    constexpr float uniform(std::uint64_t counter) const noexcept {
        return static_cast<float>((*this)(counter) >> 40) * 0x1p-24f;
    }

private:
    std::uint64_t key_;
};

// ---- Settings ----

/**  Every setting of the table above, parsed and resolved (`threads` and `nbody_count` are never 0 here). */
struct settings_t {
    std::uint32_t seed = 42;
    bool seed_is_random = false;
    std::chrono::nanoseconds warmup = std::chrono::seconds(1);
    std::chrono::nanoseconds time_limit = std::chrono::seconds(10);
    bool time_limit_is_set = false;
    std::size_t threads = 0;
    std::string backend = "forkunion_static_shared";
    bool backend_is_set = false;
    std::size_t nbody_count = 0;
    bool nbody_check = false;
    std::size_t propagation_scale = 14;
    std::size_t propagation_communities = 64;
    std::size_t propagation_edge_factor = 16;
    bool propagation_check = false;
    std::string propagation_cache; ///< a directory to keep generated graphs in, or empty
};

namespace detail {

/**  The variable's value, or null when unset or empty (both keep the default). */
inline char const *setting_text(char const *name) noexcept {
    char const *text = std::getenv(name);
    return text && *text ? text : nullptr;
}

/**  Parses all of `text` as decimal digits into `value` ≤ `max`; false on anything else or overflow. */
inline bool parse_unsigned(char const *text, std::uint64_t max, std::uint64_t &value) noexcept {
    if (!*text) return false;
    std::uint64_t result = 0;
    for (char const *c = text; *c; ++c) {
        if (*c < '0' || *c > '9') return false;
        std::uint64_t const digit = static_cast<std::uint64_t>(*c - '0');
        if (result > (max - digit) / 10) return false;
        result = result * 10 + digit;
    }
    value = result;
    return true;
}

inline void read_count(char const *name, std::uint64_t min, std::uint64_t max, std::size_t &value) noexcept {
    char const *text = setting_text(name);
    if (!text) return;
    std::uint64_t parsed = 0;
    if (!parse_unsigned(text, max, parsed) || parsed < min)
        fail(exit_bad_setting_k, "%s: expected an integer from %" PRIu64 " to %" PRIu64 ", got \"%s\"", name, min, max,
             text);
    value = static_cast<std::size_t>(parsed);
}

inline bool read_duration(char const *name, std::chrono::nanoseconds &value) noexcept {
    char const *text = setting_text(name);
    if (!text) return false;
    std::size_t length = std::strlen(text);
    std::uint64_t unit_ns = 0;
    std::size_t suffix = 0;
    if (length > 2 && std::strcmp(text + length - 2, "ms") == 0) {
        unit_ns = 1'000'000;
        suffix = 2;
    } else if (length > 1 && text[length - 1] == 's') {
        unit_ns = 1'000'000'000;
        suffix = 1;
    }
    std::string digits(text, length - suffix);
    std::uint64_t count = 0;
    // A week in either unit is far beyond any benchmark window and keeps nanoseconds far from overflow.
    std::uint64_t const max = unit_ns == 1'000'000 ? 604'800'000ull : 604'800ull;
    if (!unit_ns || !parse_unsigned(digits.c_str(), max, count))
        fail(exit_bad_setting_k,
             "%s: expected an integer followed by \"ms\" or \"s\" (like 500ms or 10s, at most a week), got \"%s\"",
             name, text);
    value = std::chrono::nanoseconds(static_cast<std::int64_t>(count * unit_ns));
    return true;
}

inline void read_flag(char const *name, bool &value) noexcept {
    char const *text = setting_text(name);
    if (!text) return;
    if (!std::strcmp(text, "1") || !std::strcmp(text, "true"))
        value = true;
    else if (!std::strcmp(text, "0") || !std::strcmp(text, "false"))
        value = false;
    else
        fail(exit_bad_setting_k, "%s: expected 1, 0, true or false, got \"%s\"", name, text);
}

} // namespace detail

/**  Largest thread count accepted: far above any machine, small enough that a typo fails in parsing. */
inline constexpr std::uint64_t max_threads_k = 1u << 16;

/**
 *  @brief  Reads every variable of the table once. `backends` is this binary's list: FORKUNION_BACKEND must name
 *          one of them; FORKUNION_THREADS=0 (or unset) means `allowed_cpus`. Exits with status 1 and one line on
 *          any bad value.
 */
inline settings_t read_settings(std::vector<std::string> const &backends, std::size_t allowed_cpus) noexcept {
    settings_t settings;
    if (char const *text = detail::setting_text("FORKUNION_SEED")) {
        std::uint64_t seed = 0;
        if (!std::strcmp(text, "random")) {
            std::random_device device;
            settings.seed = static_cast<std::uint32_t>(device());
            settings.seed_is_random = true;
        } else if (detail::parse_unsigned(text, 0xFFFFFFFFu, seed))
            settings.seed = static_cast<std::uint32_t>(seed);
        else
            fail(exit_bad_setting_k,
                 "FORKUNION_SEED: expected an integer from 0 to 4294967295 or \"random\", got \"%s\"", text);
    }
    detail::read_duration("FORKUNION_WARMUP", settings.warmup);
    settings.time_limit_is_set = detail::read_duration("FORKUNION_TIME_LIMIT", settings.time_limit);
    detail::read_count("FORKUNION_THREADS", 0, max_threads_k, settings.threads);
    if (settings.threads == 0) settings.threads = allowed_cpus;

    if (char const *text = detail::setting_text("FORKUNION_BACKEND")) {
        if (std::find(backends.begin(), backends.end(), text) == backends.end()) {
            std::string names;
            for (auto const &name : backends) names += (names.empty() ? "" : ", ") + name;
            fail(exit_bad_setting_k, "FORKUNION_BACKEND: expected one of %s, got \"%s\"", names.c_str(), text);
        }
        settings.backend = text;
        settings.backend_is_set = true;
    }
    // 2^30 bodies already take ~10^18 interactions per step: anything larger is a typo.
    detail::read_count("FORKUNION_NBODY_COUNT", 1, 1u << 30, settings.nbody_count);
    if (settings.nbody_count == 0) settings.nbody_count = settings.threads;
    detail::read_flag("FORKUNION_NBODY_CHECK", settings.nbody_check);
    detail::read_count("FORKUNION_PROPAGATION_SCALE", 0, 31, settings.propagation_scale);
    detail::read_count("FORKUNION_PROPAGATION_COMMUNITIES", 1, 0xFFFFFFFFu, settings.propagation_communities);
    // 2^20 raw edges per vertex bounds the raw edge count at 2^52, far from overflowing the 64·R draw counters.
    detail::read_count("FORKUNION_PROPAGATION_EDGE_FACTOR", 1, 1u << 20, settings.propagation_edge_factor);
    detail::read_flag("FORKUNION_PROPAGATION_CHECK", settings.propagation_check);
    if (char const *text = detail::setting_text("FORKUNION_PROPAGATION_CACHE")) {
        DIR *directory = ::opendir(text);
        if (!directory)
            fail(exit_bad_setting_k, "FORKUNION_PROPAGATION_CACHE: expected an existing directory, got \"%s\"", text);
        ::closedir(directory);
        settings.propagation_cache = text;
    }

    std::uint64_t const vertices = std::uint64_t(settings.propagation_communities) << settings.propagation_scale;
    if (vertices > 0xFFFFFFFFu)
        fail(exit_bad_setting_k,
             "FORKUNION_PROPAGATION_SCALE, FORKUNION_PROPAGATION_COMMUNITIES: 2^%zu x %zu = %" PRIu64
             " vertices overflow u32 (at most 4294967295)",
             settings.propagation_scale, settings.propagation_communities, vertices);
    return settings;
}

/**  Prints one backend name per line for `--list` and returns true if `argv` asked for it. */
inline bool list_requested(int argc, char **argv, std::vector<std::string> const &backends) noexcept {
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--list")) {
            for (auto const &name : backends) std::printf("%s\n", name.c_str());
            return true;
        }
    return false;
}

// ---- Machine facts: allowed CPUs and memory domains, read from the OS with POSIX calls ----

namespace detail {

/**  Reads a small sysfs file into `buffer`; false if it cannot. */
inline bool read_small_file(char const *path, char *buffer, std::size_t capacity) noexcept {
    int const fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t const length = ::read(fd, buffer, capacity - 1);
    ::close(fd);
    if (length <= 0) return false;
    buffer[length] = '\0';
    return true;
}

/**  Parses a sysfs CPU list ("0-3,8,10-11\n"); malformed input yields what parsed before it. */
inline std::vector<int> parse_cpu_list(char const *text) {
    std::vector<int> cpus;
    char const *c = text;
    // CPU numbers past 2^16 are not trusted; the cap also keeps the accumulation from overflowing.
    constexpr long limit = 1 << 16;
    auto number = [&c]() {
        long value = 0;
        while (*c >= '0' && *c <= '9') value = value < limit ? value * 10 + (*c++ - '0') : (++c, limit);
        return value;
    };
    while (*c >= '0' && *c <= '9') {
        long const first = number();
        long last = first;
        if (*c == '-') {
            ++c;
            if (*c < '0' || *c > '9') break;
            last = number();
        }
        if (last < first || last >= limit) break;
        for (long cpu = first; cpu <= last; ++cpu) cpus.push_back(static_cast<int>(cpu));
        if (*c != ',') break;
        ++c;
    }
    return cpus;
}

} // namespace detail

/**
 *  @brief  The CPUs this process may run on (sorted) and the memory domain (NUMA node) of each.
 *
 *  Memory domains are the `/sys/devices/system/node/node*` directories (CPU-less ones included); a machine
 *  without that directory is one domain. This is the harness's own small reader: the topology layer's
 *  `machine_topology_t` replaces it when pools span domains (see `runtimes.hpp`).
 */
struct machine_t {
    std::vector<int> cpus;          ///< allowed CPUs, ascending
    std::vector<int> node_of_cpu;   ///< NUMA node of `cpus[i]`, -1 when unknown
    std::size_t memory_domains = 1; ///< node directories, at least 1

    /**  The calling thread's affinity mask, or `cpus` when given (see `harvest_machine` in `runtimes.hpp`). */
    static machine_t harvest(std::vector<int> cpus = {}) {
        machine_t machine;
        machine.cpus = std::move(cpus);
        cpu_set_t mask;
        CPU_ZERO(&mask);
        if (machine.cpus.empty() && ::sched_getaffinity(0, sizeof(mask), &mask) == 0)
            for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
                if (CPU_ISSET(cpu, &mask)) machine.cpus.push_back(cpu);
        if (machine.cpus.empty()) machine.cpus.push_back(0);
        machine.node_of_cpu.assign(machine.cpus.size(), -1);

        std::size_t nodes = 0;
        if (DIR *directory = ::opendir("/sys/devices/system/node")) {
            while (dirent *entry = ::readdir(directory)) {
                char const *name = entry->d_name;
                if (std::strncmp(name, "node", 4) != 0 || name[4] < '0' || name[4] > '9') continue;
                ++nodes;
                char path[320], text[4096];
                std::snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpulist", name);
                if (!detail::read_small_file(path, text, sizeof(text))) continue;
                int const node = std::atoi(name + 4);
                for (int cpu : detail::parse_cpu_list(text))
                    for (std::size_t i = 0; i != machine.cpus.size(); ++i)
                        if (machine.cpus[i] == cpu) machine.node_of_cpu[i] = node;
            }
            ::closedir(directory);
        }
        machine.memory_domains = nodes ? nodes : 1;
        return machine;
    }

    /**  Lets the calling thread run on every CPU of the machine again; false if the OS refused. */
    bool widen_calling_thread() const noexcept {
        cpu_set_t mask;
        CPU_ZERO(&mask);
        for (int cpu : cpus) CPU_SET(cpu, &mask);
        return ::pthread_setaffinity_np(::pthread_self(), sizeof(mask), &mask) == 0;
    }
};

// ---- Pinning ----

/**  Pins the calling thread to one CPU; true if the OS accepted. */
inline bool pin_to_cpu(int cpu) noexcept {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    CPU_SET(cpu, &mask);
    return ::pthread_setaffinity_np(::pthread_self(), sizeof(mask), &mask) == 0;
}

/**  The single CPU the calling thread is bound to, or -1 if its mask holds several (or cannot be read). */
inline int bound_cpu() noexcept {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (::pthread_getaffinity_np(::pthread_self(), sizeof(mask), &mask) != 0 || CPU_COUNT(&mask) != 1) return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &mask)) return cpu;
    return -1;
}

/**  Saves the calling thread's affinity mask and restores it on destruction. */
class affinity_scope_t {
public:
    affinity_scope_t() noexcept { saved_ = ::pthread_getaffinity_np(::pthread_self(), sizeof(mask_), &mask_) == 0; }
    ~affinity_scope_t() noexcept {
        if (saved_) ::pthread_setaffinity_np(::pthread_self(), sizeof(mask_), &mask_);
    }
    affinity_scope_t(affinity_scope_t const &) = delete;
    affinity_scope_t &operator=(affinity_scope_t const &) = delete;

private:
    cpu_set_t mask_{};
    bool saved_ = false;
};

/**  One contended word per cache-line pair: the padding every per-thread slot of the harness uses. */
struct alignas(default_alignment_k) padded_count_t {
    std::size_t value = 0;
};
static_assert(sizeof(padded_count_t) == default_alignment_k, "one slot per cache-line pair");

/**
 *  @brief  Where each of a runtime's `threads` runs: thread t on allowed CPU `t mod cores`, and which replica
 *          (memory domain, densely ranked in thread order) serves it. Records what each thread reported.
 */
class pin_plan_t {
public:
    pin_plan_t(machine_t const &machine, std::size_t threads) : observed_(threads) {
        for (std::size_t thread = 0; thread != threads; ++thread) {
            std::size_t const index = thread % machine.cpus.size();
            cpu_of_thread_.push_back(machine.cpus[index]);
            int const node = machine.node_of_cpu[index];
            auto known = std::find(domains_.begin(), domains_.end(), node);
            replica_of_thread_.push_back(static_cast<std::size_t>(known - domains_.begin()));
            if (known == domains_.end()) domains_.push_back(node);
        }
    }

    std::size_t threads_count() const noexcept { return cpu_of_thread_.size(); }
    /**  Memory domains the threads span: the replica count of `*_replicated` backends. */
    std::size_t domains_count() const noexcept { return domains_.size(); }
    std::size_t replica_of(std::size_t thread) const noexcept { return replica_of_thread_[thread]; }

    /**  Pins the caller as thread `thread`, sets `current_slot`, and records the CPU the OS reports. */
    void pin_current_thread(std::size_t thread) noexcept {
        if (thread >= observed_.size()) return;
        current_slot = thread;
        pin_to_cpu(cpu_of_thread_[thread]);
        // Each thread writes only its own padded slot; the reader runs after the runtime's join.
        observed_[thread].value = static_cast<std::size_t>(bound_cpu() + 1);
    }

    /**
     *  Adopts where a runtime that places its own threads (the distributed pool) put the caller, thread `thread`:
     *  sets `current_slot`, and records the CPU the OS reports as both planned and observed. A thread bound to no
     *  single CPU keeps its planned CPU and reads as unpinned.
     */
    void adopt_current_thread(std::size_t thread) noexcept {
        if (thread >= observed_.size()) return;
        current_slot = thread;
        int const cpu = bound_cpu();
        if (cpu >= 0) cpu_of_thread_[thread] = cpu; // each thread writes only its own entry; read after the join
        observed_[thread].value = static_cast<std::size_t>(cpu + 1);
    }

    /**  "0->cpu0 1->cpu1" (thread->CPU the OS reported), and whether every thread got its planned CPU. */
    std::string describe(bool &complete) const {
        std::string text;
        complete = true;
        for (std::size_t thread = 0; thread != observed_.size(); ++thread) {
            long const seen = static_cast<long>(observed_[thread].value) - 1;
            if (seen != cpu_of_thread_[thread]) complete = false;
            char item[96];
            if (seen >= 0)
                std::snprintf(item, sizeof(item), "%s%zu->cpu%ld", text.empty() ? "" : " ", thread, seen);
            else
                std::snprintf(item, sizeof(item), "%s%zu->unpinned", text.empty() ? "" : " ", thread);
            text += item;
        }
        return text;
    }

private:
    std::vector<int> cpu_of_thread_;
    std::vector<std::size_t> replica_of_thread_;
    std::vector<int> domains_;
    std::vector<padded_count_t> observed_; // cpu + 1, 0 = never pinned
};

/**
 *  @brief  Waits until `expected` threads arrived, or a deadline passes. Runtimes without a per-thread broadcast
 *          run `expected` one-task-grain tasks that each wait here, which forces them onto distinct threads.
 */
class rendezvous_t {
public:
    explicit rendezvous_t(std::size_t expected) noexcept : expected_(expected) {}

    /**  Arrives and waits for the others (at most `deadline_k`); returns this arrival's order. */
    std::size_t arrive_and_wait() noexcept {
        // Relaxed: the order is a ticket only; nothing is published through it.
        std::size_t const order = arrived_.fetch_add(1, std::memory_order_relaxed);
        auto const deadline = std::chrono::steady_clock::now() + deadline_k;
        while (arrived_.load(std::memory_order_relaxed) < expected_) {
            // Set-up only, never timed: yield, so an oversubscribed run lets the missing threads arrive.
            std::this_thread::yield();
            if (std::chrono::steady_clock::now() <= deadline) continue;
            timed_out_.store(true, std::memory_order_relaxed);
            break;
        }
        return order;
    }
    bool timed_out() const noexcept { return timed_out_.load(std::memory_order_relaxed); }

    /**  A runtime that cannot gather all its threads within 5 s will not do it: report, never hang. */
    static constexpr std::chrono::seconds deadline_k{5};

private:
    std::size_t expected_;
    std::atomic<std::size_t> arrived_{0};
    std::atomic<bool> timed_out_{false};
};

// ---- The floor: a two-thread ping-pong over two cache lines, one writer each ----

/**
 *  @brief  Two threads bouncing a counter over two cache lines, one writer each: the physical floor of a fork-join.
 *
 *  The constructing thread pins itself to `cpu_a` (its mask is restored on destruction) and starts a helper pinned
 *  to `cpu_b`. Each thread writes only its own 128-byte line, so every store is one line transfer and nothing else
 *  contends; a single shared line would measure contention instead. Waits are plain loads without a pause hint:
 *  this is the hardware's floor, not a scheduler's. Only the constructing thread calls `round_trip`.
 */
class ping_pong_t {
public:
    ping_pong_t(int cpu_a, int cpu_b) {
        pin_to_cpu(cpu_a);
        helper_ = std::thread([this, cpu_b]() noexcept {
            pin_to_cpu(cpu_b);
            for (std::uint64_t k = 1;; ++k) {
                // Acquire pairs with `round_trip`'s release store of `ping`.
                while (ping_.value.load(std::memory_order_acquire) < k) {}
                if (stop_.load(std::memory_order_relaxed)) return; // stored before the final ping
                pong_.value.store(k, std::memory_order_release);   // pairs with `round_trip`'s acquire load
            }
        });
    }
    ~ping_pong_t() noexcept {
        stop_.store(true, std::memory_order_relaxed);
        ping_.value.store(sent_ + 1, std::memory_order_release); // the helper wakes, then reads `stop_`
        helper_.join();
    }
    ping_pong_t(ping_pong_t const &) = delete;
    ping_pong_t &operator=(ping_pong_t const &) = delete;

    /**  One round trip: publish, then wait for the answer. */
    void round_trip() noexcept {
        ++sent_;
        ping_.value.store(sent_, std::memory_order_release);            // pairs with the helper's acquire load
        while (pong_.value.load(std::memory_order_acquire) != sent_) {} // pairs with the helper's release store
    }

private:
    struct alignas(default_alignment_k) line_t {
        std::atomic<std::uint64_t> value{0};
    };
    affinity_scope_t restore_;
    line_t ping_, pong_;
    std::atomic<bool> stop_{false};
    std::uint64_t sent_ = 0;
    std::thread helper_;
};

/**  The result of `measure_floor`: median round trip and the spread of the batches. */
struct floor_t {
    double round_trip_ns = 0; ///< median batch; 0 when fewer than 2 CPUs are allowed
    double min_ns = 0, max_ns = 0;
    int cpu_a = -1, cpu_b = -1;
};

/**
 *  @brief  Measures the cache-line round trip between the first two allowed CPUs, in this process, now.
 *
 *  Batches: 63 of 256 round trips (~40-150 µs each here, ~5 ms in all), reported as the median: another tenant of
 *  this shared VM that takes a CPU for a scheduler slice (~3 ms) spoils a few batches, which moves the spread, not
 *  the figure. The same statistic as the benchmarks' own (medians of short batches), so their ratio is fair.
 */
inline floor_t measure_floor(machine_t const &machine) {
    constexpr std::size_t batches_k = 63, round_trips_k = 256;
    floor_t result;
    if (machine.cpus.size() < 2) return result;
    result.cpu_a = machine.cpus[0];
    result.cpu_b = machine.cpus[1];
    std::vector<double> batches;
    {
        ping_pong_t ping_pong(result.cpu_a, result.cpu_b);
        for (std::size_t batch = 0; batch != batches_k; ++batch) {
            auto const start = std::chrono::steady_clock::now();
            for (std::size_t trip = 0; trip != round_trips_k; ++trip) ping_pong.round_trip();
            std::chrono::duration<double, std::nano> const elapsed = std::chrono::steady_clock::now() - start;
            batches.push_back(elapsed.count() / round_trips_k);
        }
    }
    std::sort(batches.begin(), batches.end());
    result.round_trip_ns = batches[batches.size() / 2];
    result.min_ns = batches.front();
    result.max_ns = batches.back();
    return result;
}

// ---- The census: how a runtime split the tasks over its threads ----

/**
 *  @brief  Per-thread task counters, one padded slot per thread plus an overflow count for indices a runtime
 *          should never pass. Each thread increments only its own slot; read after the runtime's join.
 */
class census_t {
public:
    explicit census_t(std::size_t threads) : counts_(threads) {}

    void count(std::size_t thread) noexcept {
        if (thread < counts_.size())
            ++counts_[thread].value;
        else
            stray_.fetch_add(1, std::memory_order_relaxed); // relaxed: a tally read after the join
    }
    std::size_t total() const noexcept {
        std::size_t sum = 0;
        for (auto const &slot : counts_) sum += slot.value;
        return sum;
    }
    std::size_t stray() const noexcept { return stray_.load(std::memory_order_relaxed); }
    /**  Share of tasks that ran off the calling thread (thread 0): 0 means no fork really happened. */
    double off_caller_share() const noexcept {
        std::size_t const all = total();
        return all ? 1.0 - double(counts_[0].value) / double(all) : 0.0;
    }
    /**  "t0 50.0% t1 50.0%" */
    std::string describe() const {
        std::string text;
        std::size_t const all = total();
        for (std::size_t thread = 0; thread != counts_.size(); ++thread) {
            char item[64];
            std::snprintf(item, sizeof(item), "%st%zu %.1f%%", text.empty() ? "" : " ", thread,
                          all ? 100.0 * double(counts_[thread].value) / double(all) : 0.0);
            text += item;
        }
        return text;
    }

private:
    std::vector<padded_count_t> counts_;
    std::atomic<std::size_t> stray_{0};
};

/**
 *  Below this share of tasks off the calling thread, a dispatch mostly did not fork: the caller ran the tasks
 *  before any worker woke. 5% is well under what any real split gives (1/T of the tasks per thread).
 */
inline constexpr double caller_ran_almost_all_k = 0.05;

/**  Prints the census line: each thread's share of the warm-up's tasks, and a warning when no fork happened. */
inline void print_census(census_t const &census, std::size_t threads) {
    double const off = census.off_caller_share();
    std::printf("# split (warm-up, %zu tasks): %s%s\n", census.total(), census.describe().c_str(),
                threads < 2                     ? ""
                : off == 0                      ? " -- the caller ran every task: no fork happened"
                : off < caller_ran_almost_all_k ? " -- the caller ran almost every task"
                                                : "");
}

// ---- Timing ----

using steady_clock_t = std::chrono::steady_clock;

/**  Seconds since `start`. */
inline double seconds_since(steady_clock_t::time_point start) noexcept {
    return std::chrono::duration<double>(steady_clock_t::now() - start).count();
}

/**
 *  Iterations between clock reads in a timed window, so that a read happens about every 1 ms: a `steady_clock`
 *  read costs ~20-25 ns here (vDSO), 1-2% of a 1 µs N-body step if taken every step, and <0.01% this way; the
 *  window overshoots its limit by at most ~1 ms.
 */
inline std::size_t checkpoint_stride(double seconds_per_iteration) noexcept {
    constexpr double checkpoint_period_k = 1e-3;
    if (!(seconds_per_iteration > 0)) return 1;
    double const stride = checkpoint_period_k / seconds_per_iteration;
    return stride < 1 ? 1 : stride > 1e6 ? 1'000'000 : static_cast<std::size_t>(stride);
}

/**  The median of `values` (the upper one of an even count); 0 when empty. */
inline double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
    return values[values.size() / 2];
}

/**
 *  What a timed window ran. `seconds / iterations` is the mean; `median_seconds` is the median over the window's
 *  checkpoints (each ~1 ms of iterations), which a preemption by another tenant of this shared VM moves by one
 *  sample instead of dragging the mean. Reports give both.
 */
struct window_t {
    std::size_t iterations = 0;
    double seconds = 0;
    double median_seconds = 0; ///< per iteration, median over checkpoints
};

/**
 *  @brief  Runs `step()` at least `min_iterations` times and until `limit` passes, reading the clock every
 *          iteration (warm-ups are untimed, so the read costs nothing that is reported).
 */
template <typename step_type_>
window_t warm_up(std::chrono::nanoseconds limit, std::size_t min_iterations, step_type_ &&step) {
    window_t window;
    auto const start = steady_clock_t::now();
    while (window.iterations < min_iterations || steady_clock_t::now() - start < limit) step(), ++window.iterations;
    window.seconds = seconds_since(start);
    return window;
}

/**
 *  @brief  The timed window: runs `step()` in strides of `stride`, reading the clock between strides, until
 *          `limit` passed and `must_continue()` is false (propagation uses it to finish its first pass).
 */
template <typename step_type_, typename continue_type_>
window_t timed_window(std::chrono::nanoseconds limit, std::size_t stride, step_type_ &&step,
                      continue_type_ &&must_continue) {
    window_t window;
    std::vector<double> checkpoints;
    checkpoints.reserve(1 << 16);
    auto const start = steady_clock_t::now();
    for (auto last = start;;) {
        for (std::size_t i = 0; i != stride; ++i) step();
        window.iterations += stride;
        auto const now = steady_clock_t::now();
        checkpoints.push_back(std::chrono::duration<double>(now - last).count() / double(stride));
        last = now;
        if (now - start >= limit && !must_continue()) break;
    }
    window.seconds = seconds_since(start);
    window.median_seconds = median(std::move(checkpoints));
    return window;
}

// ---- Banner and result rows ----

/**  The path of the first loaded shared object whose name contains `needle`, or "" if none. */
inline std::string loaded_library(char const *needle) {
    struct search_t {
        char const *needle;
        std::string found;
    } search{needle, {}};
    ::dl_iterate_phdr(
        [](dl_phdr_info *info, std::size_t, void *context) -> int {
            auto &search = *static_cast<search_t *>(context);
            if (!info->dlpi_name || !std::strstr(info->dlpi_name, search.needle)) return 0;
            search.found = info->dlpi_name;
            return 1; // stop iterating
        },
        &search);
    return search.found;
}

/**  CPU features the library's idle and atomic paths care about, read at run time (cpuid on x86). */
inline std::string cpu_capabilities() {
    std::string text;
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    bool waitpkg = false, cldemote = false, cmpccxadd = false, raoint = false;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) waitpkg = ecx & (1u << 5), cldemote = ecx & (1u << 25);
    if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) cmpccxadd = eax & (1u << 7), raoint = eax & (1u << 3);
    text = "x86 pause";
    text += waitpkg ? " waitpkg" : " (no waitpkg)";
    text += cldemote ? " cldemote" : " (no cldemote)";
    text += cmpccxadd ? " cmpccxadd" : " (no cmpccxadd)";
    text += raoint ? " rao-int" : " (no rao-int)";
#elif defined(__aarch64__)
    text = "arm64 yield";
#else
    text = "portable";
#endif
    return text;
}

/**
 *  @brief  Prints the banner: version, compiler, machine and capabilities, then the settings this binary uses.
 *          Every line starts with "# " so that result parsers skip it.
 */
inline void print_banner(char const *benchmark, settings_t const &settings, machine_t const &machine) {
    std::printf("# forkunion %d.%d.%d, bench/%s, built by %s%s\n", version_major_k, version_minor_k, version_patch_k,
                benchmark,
#if defined(__clang__)
                "clang ",
#else
                "g++ ",
#endif
                __VERSION__);
    std::printf("# machine: %zu allowed cpus (", machine.cpus.size());
    for (std::size_t i = 0; i != machine.cpus.size() && i < 16; ++i) std::printf("%s%d", i ? "," : "", machine.cpus[i]);
    std::printf("%s), %zu memory domain%s; capabilities: %s\n", machine.cpus.size() > 16 ? ",..." : "",
                machine.memory_domains, machine.memory_domains == 1 ? "" : "s", cpu_capabilities().c_str());
    std::printf("# settings: FORKUNION_SEED=%u%s FORKUNION_WARMUP=%.3fs FORKUNION_TIME_LIMIT=%.3fs "
                "FORKUNION_THREADS=%zu FORKUNION_BACKEND=%s\n",
                settings.seed, settings.seed_is_random ? " (random)" : "",
                std::chrono::duration<double>(settings.warmup).count(),
                std::chrono::duration<double>(settings.time_limit).count(), settings.threads, settings.backend.c_str());
    char const *openmp[] = {"OMP_PLACES", "OMP_PROC_BIND", "OMP_WAIT_POLICY", "KMP_BLOCKTIME", "GOMP_SPINCOUNT"};
    std::string environment;
    for (char const *name : openmp)
        if (char const *value = std::getenv(name)) environment += std::string(" ") + name + "=" + value;
    if (!environment.empty()) std::printf("# environment:%s\n", environment.c_str());
}

/**  Prints the floor line of the banner. */
inline void print_floor(floor_t const &floor) {
    if (floor.round_trip_ns > 0)
        std::printf("# floor: ping-pong over two cache lines, cpu%d <-> cpu%d: %.1f ns per round trip "
                    "(median of 63 batches, %.1f-%.1f)\n",
                    floor.cpu_a, floor.cpu_b, floor.round_trip_ns, floor.min_ns, floor.max_ns);
    else
        std::printf("# floor: n/a (fewer than 2 allowed cpus)\n");
}

/**
 *  @brief  One machine-readable result row: `RESULT key=value key=value ...`, one per run, printed last.
 *          `bench/compare.sh` and `.ci/bench.sh` read these rows; values never contain spaces.
 */
class result_row_t {
public:
    explicit result_row_t(char const *benchmark) { text_ = std::string("RESULT benchmark=") + benchmark; }
    result_row_t &add(char const *key, std::string const &value) {
        text_ += std::string(" ") + key + "=" + value;
        return *this;
    }
    result_row_t &add(char const *key, double value) {
        char buffer[64];
        std::snprintf(buffer, sizeof(buffer), "%.6g", value);
        return add(key, std::string(buffer));
    }
    result_row_t &add(char const *key, std::uint64_t value) { return add(key, std::to_string(value)); }
    result_row_t &add_hex(char const *key, std::uint64_t value) {
        char buffer[32];
        std::snprintf(buffer, sizeof(buffer), "0x%016" PRIx64, value);
        return add(key, std::string(buffer));
    }
    void print() const {
        std::printf("%s\n", text_.c_str());
        std::fflush(stdout);
    }

private:
    std::string text_;
};

} // namespace forkunion::bench
