/**
 *  @file   test/pools/fork_first_spawn_test.cpp
 *  @brief  Property `a_fork_during_the_first_spawn_never_leaves_the_child_blocked`: a process whose threads make
 *          its first `spawn` (the first `watch_forks`, which registers the `fork()` child handler) while another
 *          thread forks back to back. Every child, whatever point of that registration its fork copied, must
 *          spawn a pool of its own and run a loop on it, and must tell itself a forked child whenever a spawn in
 *          the parent had returned before the fork (the handler was registered then).
 *
 *  "First" is per process, so each attempt runs in a fresh process: the program re-executes itself with
 *  `attempt` as its argument. Every wait is bounded (a watchdog): children still running 10 s after the last fork,
 *  and an attempt still running after 30 s, are killed and counted as hung, so the hang this property excludes reads as a failure, not as a stuck run.
 *  Exit status 0 when every attempt passed; the summary line says how many forks were checked.
 */
#include <atomic>  // `std::atomic`
#include <chrono>  // `std::chrono::steady_clock`
#include <cstdio>  // `std::printf`
#include <cstdlib> // `std::strtoul`
#include <cstring> // `std::strcmp`
#include <thread>  // `std::thread`
#include <vector>  // `std::vector`

#include <forkunion/pools/flat.hpp>

#if FORKUNION_OS_LINUX
#include <signal.h>   // `kill`
#include <sys/wait.h> // `waitpid`
#include <time.h>     // `nanosleep`
#include <unistd.h>   // `fork`, `execv`, `_exit`
#endif

/*  AddressSanitizer's runtime (GCC 12's) keeps no lock of its allocator across `fork()`: a child forked while a
    racer starts its threads may block inside that runtime, which is what this test would then report. */
#if defined(__SANITIZE_ADDRESS__)
#define FORKUNION_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORKUNION_TEST_ASAN 1
#endif
#endif
#if !defined(FORKUNION_TEST_ASAN)
#define FORKUNION_TEST_ASAN 0
#endif

#if !defined(FORKUNION_TEST_EMULATED)
#define FORKUNION_TEST_EMULATED 0 // 1 under qemu-user (cross builds)
#endif

namespace fu = forkunion;

#if FORKUNION_OS_LINUX
namespace {

constexpr int racers_k = 3; // threads making their first spawn at once
constexpr int forks_per_attempt_k = 48;
constexpr int hung_k = 100; // the exit code of a child the watchdog killed

/**  Waits up to `milliseconds` for `pid` and returns its exit code; a process still running then is killed:
 *   `hung_k`. */
int reap(pid_t pid, int milliseconds) {
    struct timespec const pause = {0, 1000 * 1000};
    int status = 0;
    for (int waited = 0; waited <= milliseconds; ++waited) {
        pid_t const done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (done < 0) return 99;
        ::nanosleep(&pause, nullptr);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return hung_k;
}

/**  The child's side. `generation`: the parent's fork counter just before the fork; `registered`: how many of
 *   the parent's spawns had returned by then. Exit codes name the failed check. */
int child_checks(std::uint32_t generation, int registered) {
    std::uint32_t const now = fu::fork_generation();
    if (now != generation && now != generation + 1) return 10; // one fork, counted at most once
    if (registered != 0 && now != generation + 1) return 11;   // a returned `watch_forks` must see this fork
    fu::watch_forks();                                         // the call that blocked for good
    fu::flat_pool_t pool;
    if (!pool.spawn(2)) return 12;
    std::atomic<int> ran{0};
    if (!pool.for_n(100, [&](std::size_t) noexcept { ran.fetch_add(1, std::memory_order_relaxed); }).join()) return 13;
    if (ran.load() != 100) return 14;
    pool.terminate();
    return 0;
}

/**  One fresh process: `racers_k` threads make the process's first spawns while this thread forks. */
int attempt() {
    std::atomic<bool> go{false}, stop{false};
    std::atomic<int> registered{0};
    std::vector<std::thread> racers;
    for (int racer = 0; racer != racers_k; ++racer)
        racers.emplace_back([&] {
            while (!go.load(std::memory_order_acquire)) {}
            fu::flat_pool_t pool;
            if (!pool.spawn(2)) std::_Exit(30);
            registered.fetch_add(1, std::memory_order_seq_cst);
            while (!stop.load(std::memory_order_acquire)) std::this_thread::yield();
        });
    std::vector<pid_t> children;
    children.reserve(forks_per_attempt_k);
    go.store(true, std::memory_order_release);
    for (int i = 0; i != forks_per_attempt_k; ++i) {
        std::uint32_t const generation = fu::fork_generation();
        int const seen = registered.load(std::memory_order_seq_cst);
        pid_t const pid = ::fork();
        if (pid < 0) break;
        if (pid == 0) ::_exit(child_checks(generation, seen));
        children.push_back(pid);
    }
    stop.store(true, std::memory_order_release);
    for (auto &racer : racers) racer.join();
    // 10 s for all of them together (each has long finished by then), then the stragglers get no time at all.
    int failed = 0, budget_ms = 10000;
    for (pid_t pid : children) {
        auto const started = std::chrono::steady_clock::now();
        int const code = reap(pid, budget_ms);
        budget_ms -= int(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
        if (budget_ms < 0) budget_ms = 0;
        if (code != 0) {
            std::printf("  child %ld: %s (exit %d)\n", long(pid), code == hung_k ? "hung, killed" : "failed", code);
            ++failed;
        }
    }
    std::printf("  %zu forks, %d failed\n", children.size(), failed);
    return failed ? 1 : 0;
}

} // namespace
#endif

int main(int argc, char **argv) {
#if FORKUNION_OS_LINUX
    if (FORKUNION_TEST_EMULATED) {
        std::printf("SKIPPED: qemu-user aborts in a forked child of a multi-threaded process\n");
        return 0;
    }
    if (FORKUNION_TEST_ASAN) {
        std::printf("SKIPPED: ASan's allocator lock is not held across fork(): children may block inside ASan\n");
        return 0;
    }
    if (fu::sanitize_thread_k) {
        std::printf("SKIPPED: TSan's runtime cannot start threads after a multi-threaded fork\n");
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "attempt") == 0) return attempt();
    unsigned long const attempts = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 10;
    unsigned long failed = 0;
    for (unsigned long i = 0; i != attempts; ++i) {
        std::fflush(nullptr);
        pid_t const pid = ::fork();
        if (pid == 0) {
            char self[] = "/proc/self/exe", mode[] = "attempt";
            char *args[] = {self, mode, nullptr};
            ::execv(self, args);
            ::_exit(98);
        }
        int const code = pid < 0 ? 97 : reap(pid, 30000);
        std::printf("attempt %lu: %s\n", i, code == 0 ? "passed" : code == hung_k ? "hung, killed" : "failed");
        std::fflush(nullptr);
        failed += code != 0;
    }
    std::printf("a_fork_during_the_first_spawn_never_leaves_the_child_blocked: %lu of %lu attempts failed\n", failed,
                attempts);
    return failed ? 1 : 0;
#else
    (void)argc, (void)argv;
    std::printf("SKIPPED: needs fork(), which this OS does not have\n");
    return 0;
#endif
}
