/**
 *  @file   test_support.hpp
 *  @brief  Helpers shared by the test suites: thread-count grids, bounded waits, process probes.
 *
 *  Rules the suites follow: no gtest assertion runs on a pool's worker thread (workers record into atomics and
 *  the main thread asserts); no sleep stands in for synchronization (waits poll a condition with a deadline and
 *  fail when it passes); thread counts go up to 3x the allowed cores, so spinning workers must yield.
 *
 *  Platforms: threads are counted from `/proc/self/task` on Linux and from a Toolhelp snapshot on Windows; a
 *  WebAssembly module cannot see its threads, so there `thread_count_observable_k` is false and the leak checks
 *  built on `threads_settle_to` hold by definition (they are proven on the other targets). A WebAssembly build
 *  without threads can start none: `spawnable_threads()` is 1 there, and `FORKUNION_SKIP_UNLESS_THREADS(n)` skips
 *  a GoogleTest test that needs `n` threads, saying why.
 */
#pragma once
#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include <time.h> // `clock_gettime`

#include <cstdio>  // `std::fprintf`
#include <cstdlib> // `std::abort`

#include <forkunion/hardware/cores.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WINDOWS
#include <forkunion/hardware/detail/system_windows.hpp>
#include <tlhelp32.h> // `CreateToolhelp32Snapshot`, to count this process's threads
#else
#include <dirent.h> // `opendir`, to count this process's threads
#endif
#if FORKUNION_OS_WASM
#include <forkunion/hardware/detail/system_wasm.hpp>
#endif

namespace forkunion::testing {

#if FORKUNION_OS_WASM && !FORKUNION_WASM_THREADS
/**  Threads a pool can have in this build: a WebAssembly build without threads starts none beyond the caller. */
inline std::size_t spawnable_threads() {
    return 1;
}
#else
inline std::size_t spawnable_threads() {
    return std::numeric_limits<std::size_t>::max();
}
#endif

/**  `wanted` threads, or as many as this build can have in one pool (1 without threads). */
inline std::size_t spawnable_up_to(std::size_t wanted) {
    return std::min(wanted, spawnable_threads());
}

/**  Whether this build can spawn a pool of `threads` with `exclusivity`: an inclusive pool starts all but the
 *   caller, an exclusive one all of them (so a build without threads has inclusive pools of one only). */
inline bool can_spawn(std::size_t threads, caller_exclusivity_t exclusivity) {
    std::size_t const started = exclusivity == caller_exclusive_k ? threads : threads - 1;
    return started < spawnable_threads();
}

/**  The exclusivity a test that prefers `preferred` gets: `preferred`, or inclusive where the build cannot start
 *   the thread an exclusive pool of `threads` needs. */
inline caller_exclusivity_t spawnable_exclusivity(std::size_t threads, caller_exclusivity_t preferred) {
    return can_spawn(threads, preferred) ? preferred : caller_inclusive_k;
}

/**  In a GoogleTest test: skips it, with the reason, when this build cannot run `threads` threads at once. */
#define FORKUNION_SKIP_UNLESS_THREADS(threads)                                                                         \
    if (static_cast<std::size_t>(threads) > ::forkunion::testing::spawnable_threads())                                 \
    GTEST_SKIP() << "needs " << (threads) << " threads; this WebAssembly build has no threads (no -pthread)"

/**
 *  A dispatch the test expects the pool to accept: a refusal (`contended`, `not_spawned`, `forked`) would mean the
 *  loop never ran, so it stops the test with the status and the place instead of letting it check stale results.
 */
inline void require_ran(status_t status, char const *file = __builtin_FILE(), int line = __builtin_LINE()) {
    if (status) return;
    std::fprintf(stderr, "%s:%d: a dispatch the test needs was refused: %s\n", file, line, status.name());
    std::abort();
}

/**
 *  The `candidates` that are at most `limit`, sorted, each once. Built by insertion rather than `erase`, on which
 *  GCC 12's -Warray-bounds misfires in the i686 cross build.
 */
inline std::vector<std::size_t> sorted_unique_up_to(std::initializer_list<std::size_t> candidates, std::size_t limit) {
    std::vector<std::size_t> kept;
    for (std::size_t candidate : candidates)
        if (candidate <= limit && std::find(kept.begin(), kept.end(), candidate) == kept.end())
            kept.push_back(candidate);
    std::sort(kept.begin(), kept.end());
    return kept;
}

/**  Thread counts every property runs at: 1, 2, the allowed cores, one more, and 3x (oversubscribed). */
template <typename index_t>
std::vector<std::size_t> thread_counts() {
    std::size_t const cores = allowed_cores_count();
    std::size_t const limit = std::min<std::size_t>(std::numeric_limits<index_t>::max(), spawnable_threads());
    return sorted_unique_up_to({1, 2, cores, cores + 1, 3 * cores}, limit);
}

/**  Task counts of the exactly-once properties for T threads: {0, 1, T-1, T, T+1, 2T+3, 3T, 10^4}. */
template <typename index_t>
std::vector<std::size_t> task_counts(std::size_t threads) {
    return sorted_unique_up_to({0, 1, threads - 1, threads, threads + 1, 2 * threads + 3, 3 * threads, 10000},
                               std::numeric_limits<index_t>::max());
}

/**
 *  Whether a real-thread `std::uint8_t` sweep runs a pool of `threads` threads. At `stride` 1 it runs all of 1..255.
 *  A thinner sweep runs every `stride`-th count and still every count where a pool changes shape, so it proves the
 *  same properties: 1..10 (one retirement level: the dispatcher plus up to 8 children, then the second level
 *  starts at 10), 72..75 (the second level fills at 73 = 1 + 8 + 64, the third starts at 74), 127..129 (where
 *  `t + 1` and `2t` leave a signed byte) and 254, 255 (the largest counts, 255 = the index type's maximum). The
 *  task count of each pool stays exhaustive (0..255), and the split arithmetic is proven for every input by
 *  `sweep.arithmetic`. Emulated builds (stride 64 and more) keep only 1..10 and 255 of those edges.
 */
inline bool sweep_runs_thread_count(unsigned threads, unsigned stride) noexcept {
    if (stride <= 1 || (threads - 1) % stride == 0 || threads <= 10 || threads == 255) return true;
    if (stride >= 64) return false;
    return (threads >= 72 && threads <= 75) || (threads >= 127 && threads <= 129) || threads == 254;
}

/**  Generous deadline of every bounded wait: a failure, never a hang, even on a loaded 2-core VM. */
inline constexpr std::chrono::seconds deadline_k{60};

/**  Polls `predicate` (yielding between polls) until it holds or `limit` passes; returns whether it held. */
template <typename predicate_t>
bool eventually(predicate_t &&predicate, std::chrono::steady_clock::duration limit = deadline_k) {
    auto const deadline = std::chrono::steady_clock::now() + limit;
    while (!predicate()) {
        if (std::chrono::steady_clock::now() > deadline) return predicate();
        std::this_thread::yield();
    }
    return true;
}

#if FORKUNION_OS_WINDOWS
inline constexpr bool thread_count_observable_k = true;
/**  Threads of this process, from a Toolhelp snapshot (Windows). */
inline std::size_t live_threads() {
    std::size_t count = 0;
    HANDLE const snapshot = ::CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snapshot == INVALID_HANDLE_VALUE) return 0;
    THREADENTRY32 entry{};
    entry.dwSize = sizeof(entry);
    DWORD const self = ::GetCurrentProcessId();
    for (BOOL more = ::Thread32First(snapshot, &entry); more; more = ::Thread32Next(snapshot, &entry))
        if (entry.th32OwnerProcessID == self) ++count;
    ::CloseHandle(snapshot);
    return count;
}
#elif FORKUNION_OS_WASM
inline constexpr bool thread_count_observable_k = false;
/**  A WebAssembly module cannot list its threads (Web Workers): 0, and `threads_settle_to` always holds. */
inline std::size_t live_threads() {
    return 0;
}
#else
inline constexpr bool thread_count_observable_k = true;
/**  Threads of this process, from `/proc/self/task` (Linux). */
inline std::size_t live_threads() {
    std::size_t count = 0;
    if (DIR *dir = ::opendir("/proc/self/task")) {
        while (dirent *entry = ::readdir(dir))
            if (entry->d_name[0] != '.') ++count;
        ::closedir(dir);
    }
    return count;
}
#endif

/**
 *  Threads of this process once the runtime's own helpers exist: sanitizer runtimes (TSan) start a background
 *  thread with the first `pthread_create`, so a baseline taken before any thread ran would be one short.
 */
inline std::size_t settled_live_threads() {
    if (spawnable_threads() > 1) std::thread([] {}).join();
    // A thread joined just before (this helper, or the previous test's workers) may still be listed for a moment
    // (see `threads_settle_to`): the fewest of a few reads, so the baseline does not count a thread on its way out.
    std::size_t fewest = live_threads();
    for (int read = 0; read != 64; ++read) {
        std::this_thread::yield();
        std::size_t const now = live_threads();
        fewest = now < fewest ? now : fewest;
    }
    return fewest;
}

/**
 *  Whether this process is back to `expected` threads within the deadline. `pthread_join` returns once a thread
 *  has cleared its thread id, a moment before the kernel drops it from `/proc/self/task`; on a loaded machine that
 *  moment is visible, so a count right after a join must be polled, not read once.
 */
inline bool threads_settle_to(std::size_t expected) {
    // At most `expected`: a baseline read while an earlier thread was still on its way out is one too high, and
    // waiting for that count again would wait for the deadline. A leaked worker still keeps the count above it.
    return eventually([&] { return live_threads() <= expected; });
}

/**  CPU seconds consumed by every thread of this process. */
inline double process_cpu_seconds() {
    timespec now{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

/**  Per-task execution counters; `record` is safe from any thread. */
class task_ledger {
public:
    explicit task_ledger(std::size_t tasks) : counts_(tasks) {}
    void record(std::size_t task) noexcept {
        if (task < counts_.size())
            counts_[task].fetch_add(1, std::memory_order_relaxed);
        else
            out_of_bounds_.fetch_add(1, std::memory_order_relaxed);
    }
    /**  Number of tasks that did not run exactly once, plus calls out of bounds: 0 is a pass. */
    std::size_t mistakes() const noexcept {
        std::size_t wrong = out_of_bounds_.load(std::memory_order_relaxed);
        for (auto const &count : counts_) wrong += count.load(std::memory_order_relaxed) != 1;
        return wrong;
    }
    std::size_t size() const noexcept { return counts_.size(); }

private:
    std::vector<std::atomic<std::uint32_t>> counts_;
    std::atomic<std::size_t> out_of_bounds_{0};
};

} // namespace forkunion::testing
