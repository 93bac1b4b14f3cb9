/**
 *  @file   test/pools/api_fuzz_test.cpp
 *  @brief  A seeded random-operation fuzzer over the whole pool API: every pool kind (flat with `std::size_t`,
 *          `std::uint16_t` and `std::uint8_t` indices, colocated, distributed) and the C API, driven at once by
 *          several threads.
 *
 *  Each fuzz thread owns some pools (it alone spawns and terminates them, as the contract asks of the controlling
 *  thread) and dispatches on all of them: every verb (`for_threads`, `for_n`, `for_n_dynamic`, `for_slices`), every
 *  way to finish a guard (`join`, `join_or_run_on_caller`, polling `is_complete`, reading the status and letting the
 *  guard join on destruction, a join attempted from a thread that did not create the guard), the split API
 *  (`unsafe_for_threads`, `is_complete`, `unsafe_join`), dispatches nested in callbacks of the same and of other
 *  pools, idle-policy changes (valid and invalid), counts around the index type's limits, and `fork()`: a child
 *  forked from a fuzz thread, and a child forked by the caller inside its own slice of an inclusive pool, each
 *  checking that the inherited pools refuse with `forked` and that its run-on-caller fallbacks run every task.
 *
 *  The oracle: an accepted dispatch ran every task exactly once (per-task counters, checked after the join; for
 *  a pool the thread owns, also the static split's shape); a refused one ran nothing and answered a status of the
 *  verb's documented list (`invalid_argument` exactly when the count does not fit the index type); a child always
 *  exits, reaped within a deadline; no thread goes without progress for the watchdog's period (60 s by default),
 *  else the run stops with the seed and every thread's last operations printed.
 *
 *  Environment: `FORKUNION_API_FUZZ_SEED` (else a random seed, printed first), `FORKUNION_API_FUZZ_OPS` (operations
 *  of all threads together) or `FORKUNION_API_FUZZ_SECONDS` (2 s when neither is set), `FORKUNION_API_FUZZ_THREADS`
 *  (4), `FORKUNION_API_FUZZ_WATCHDOG_SECONDS` (60), `FORKUNION_API_FUZZ_FORK` (1; 0 leaves `fork()` out, as a TSan
 *  build always does: its runtime cannot start threads in the child of a multi-threaded process),
 *  `FORKUNION_API_FUZZ_CONCURRENT_FORKS` (1; 0 serializes the threads' forks) and `FORKUNION_API_FUZZ_STRICT_C_TOKENS`
 *  (1; 0 lets a C split join answer `stale_generation` or `invalid_argument` where a later dispatch may have taken
 *  its slot).
 *  Each thread draws from its own generator, seeded from the seed and its index: a replay repeats every thread's
 *  choices, and the interleaving as far as the scheduler allows.
 */
#include <algorithm>   // `std::min`
#include <array>       // `std::array`
#include <atomic>      // `std::atomic`
#include <chrono>      // `std::chrono::steady_clock`
#include <cinttypes>   // `PRIu64`
#include <cstdarg>     // `va_list`
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint64_t`
#include <cstdio>      // `std::fprintf`
#include <cstdlib>     // `std::getenv`, `std::_Exit`
#include <cstring>     // `std::strlen`
#include <memory>      // `std::unique_ptr`
#include <mutex>       // `std::mutex`
#include <random>      // `std::random_device`
#include <string>      // `std::string`
#include <thread>      // `std::thread`
#include <type_traits> // `std::is_same_v`
#include <utility>     // `std::in_range`
#include <vector>      // `std::vector`

#include <forkunion.h>
#include <forkunion/pools/colocated.hpp>
#include <forkunion/pools/distributed.hpp>
#include <forkunion/pools/flat.hpp>
#include <forkunion/topology/topology.hpp>

#if FORKUNION_OS_LINUX
#include <signal.h>   // `kill`
#include <sys/wait.h> // `waitpid`
#include <unistd.h>   // `fork`, `_exit`, `write`
#endif

#if defined(__SANITIZE_ADDRESS__)
#define FORKUNION_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FORKUNION_FUZZ_ASAN 1
#endif
#endif
#if !defined(FORKUNION_FUZZ_ASAN)
#define FORKUNION_FUZZ_ASAN 0
#endif

namespace fu = forkunion;

namespace {

// ---- Configuration, statistics, failure reports -----------------------------------------------------------------

struct config_t {
    std::uint64_t seed = 0;
    std::uint64_t ops = 0; ///< All threads together; 0: no limit.
    double seconds = 0;    ///< 0: no limit.
    unsigned threads = 4;  ///< Fuzz threads.
    unsigned watchdog_s = 60;
    bool fork = true;
    bool concurrent_forks = true; ///< `FORKUNION_API_FUZZ_CONCURRENT_FORKS=0` serializes them: see `fork_mutex`.
    /**  A C split join must answer for its own dispatch only: C tokens are never reused while their pool lives
     *   (`c_api.split_tokens`), and a terminate never hands a split slot in use to another dispatcher
     *   (`c_api_race.*`). `FORKUNION_API_FUZZ_STRICT_C_TOKENS=0` lets those joins answer either. */
    bool strict_c_tokens = true;
};
config_t config;

/**  The operations, for the op log and the final counts. */
enum op_t : unsigned {
    op_spawn_k,
    op_spawn_refused_k,
    op_terminate_k,
    op_for_threads_k,
    op_for_n_k,
    op_for_n_dynamic_k,
    op_for_slices_k,
    op_split_k,
    op_nested_k,
    op_idle_k,
    op_query_k,
    op_foreign_join_k,
    op_fork_k,
    op_fork_in_slice_k,
    op_count_k,
};
constexpr char const *op_names_k[op_count_k] = {
    "spawn", "spawn (refused)", "terminate",   "for_threads", "for_n",        "for_n_dynamic", "for_slices",
    "split", "nested",          "idle_policy", "query",       "foreign_join", "fork",          "fork_in_slice",
};

/**  How a guard is finished. */
enum finish_t : unsigned { join_k, run_on_caller_k, poll_then_join_k, destroy_k, finish_count_k };
constexpr char const *finish_names_k[finish_count_k] = {"join", "or_run_on_caller", "poll+join", "destroy"};

/**  One fuzz thread's log of its latest operations, readable by the watchdog while the thread runs. */
struct op_log_t {
    static constexpr std::size_t capacity_k = 16;
    std::array<std::atomic<std::uint64_t>, capacity_k> entries{};
    std::atomic<std::uint64_t> started{0}, completed{0};
    std::atomic<bool> finished{false};

    /**  Records the start of an operation: kind, pool, finish and count (clipped to 32 bits). */
    void begin(unsigned op, unsigned pool, unsigned finish, std::int64_t count) noexcept {
        std::uint64_t const clipped = static_cast<std::uint64_t>(count) & 0xFFFFFFFFu;
        std::uint64_t const entry = (std::uint64_t(op) << 56) | (std::uint64_t(pool) << 48) |
                                    (std::uint64_t(finish) << 40) | clipped | (std::uint64_t(count < 0) << 32);
        std::uint64_t const index = started.fetch_add(1, std::memory_order_relaxed);
        entries[index % capacity_k].store(entry, std::memory_order_relaxed);
    }
    void end() noexcept { completed.fetch_add(1, std::memory_order_relaxed); }
};
std::vector<std::unique_ptr<op_log_t>> logs;
std::vector<std::string> pool_names; // by pool index, for the log

std::mutex report_mutex;

/**
 *  Serializes the fuzz threads' `fork()` calls when `FORKUNION_API_FUZZ_CONCURRENT_FORKS=0`, to tell a failure
 *  that needs overlapping forks from one that does not. By default they overlap: each is counted in its child
 *  (`fork.concurrent_forks_are_each_counted_in_their_child`).
 */
std::mutex fork_mutex;

/**  Holds `fork_mutex` for its lifetime, unless concurrent forks are asked for. */
struct fork_lock_t {
    bool held;
    fork_lock_t() noexcept : held(!config.concurrent_forks) {
        if (held) fork_mutex.lock();
    }
    ~fork_lock_t() noexcept {
        if (held) fork_mutex.unlock();
    }
    fork_lock_t(fork_lock_t const &) = delete;
    fork_lock_t &operator=(fork_lock_t const &) = delete;
};
std::atomic<bool> is_child{false}; // this process is a fork()ed child: report with `write`, exit with `_exit`

void print_logs() noexcept {
    for (std::size_t t = 0; t != logs.size(); ++t) {
        op_log_t const &log = *logs[t];
        std::uint64_t const started = log.started.load(std::memory_order_relaxed);
        std::uint64_t const completed = log.completed.load(std::memory_order_relaxed);
        std::fprintf(stderr, "  thread %zu: %" PRIu64 " ops started, %" PRIu64 " completed%s; latest first:\n", t,
                     started, completed, log.finished.load() ? " (finished)" : "");
        for (std::uint64_t i = 0; i != std::min<std::uint64_t>(started, op_log_t::capacity_k); ++i) {
            std::uint64_t const number = started - 1 - i;
            std::uint64_t const entry = log.entries[number % op_log_t::capacity_k].load(std::memory_order_relaxed);
            unsigned const op = static_cast<unsigned>(entry >> 56) % op_count_k;
            unsigned const pool = static_cast<unsigned>(entry >> 48) & 0xFF;
            unsigned const finish = static_cast<unsigned>(entry >> 40) & 0xFF;
            long long const count =
                (entry >> 32 & 1) ? -1 : static_cast<long long>(entry & 0xFFFFFFFFu); // negatives print as -1
            bool const guard = op >= op_for_threads_k && op <= op_for_slices_k;
            std::fprintf(stderr, "    #%" PRIu64 " %s on %s%s%s, count %lld%s\n", number, op_names_k[op],
                         pool < pool_names.size() ? pool_names[pool].c_str() : "?", guard ? ", finish " : "",
                         guard && finish < finish_count_k ? finish_names_k[finish] : "", count,
                         number >= completed && i == 0 ? " [in progress]" : "");
        }
    }
}

/**  Stops the run: the seed, the reason, every thread's latest operations. Callable from any thread. */
[[noreturn]] __attribute__((format(printf, 1, 2))) void fail(char const *format, ...) noexcept {
    char message[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof(message), format, args);
    va_end(args);
#if FORKUNION_OS_LINUX
    if (is_child.load(std::memory_order_relaxed)) { // a child: no stdio locks, no heap
        char const prefix[] = "api_fuzz: FAILED in a fork()ed child: ";
        (void)!::write(2, prefix, sizeof(prefix) - 1);
        (void)!::write(2, message, std::strlen(message));
        (void)!::write(2, "\n", 1);
        ::_exit(41);
    }
#endif
    report_mutex.lock(); // the first failure reports; any other thread failing meanwhile waits for the exit
    std::fprintf(stderr, "api_fuzz: FAILED: %s\napi_fuzz: replay with FORKUNION_API_FUZZ_SEED=%" PRIu64 "\n", message,
                 config.seed);
    print_logs();
    std::fflush(stderr);
    std::_Exit(1);
}

#define FUZZ_CHECK(condition, ...)                                                                                     \
    do {                                                                                                               \
        if (!(condition)) fail(__VA_ARGS__);                                                                           \
    } while (0)

/**  splitmix64: seeds every generator, and draws the choices made inside callbacks (any thread, no state). */
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// ---- Ledgers: what ran, per task and per thread ------------------------------------------------------------------

constexpr std::size_t max_tasks_k = 65536; // the largest count any fitting dispatch here gets: 65535
constexpr std::size_t max_threads_k = 64;  // above every pool's thread count here
constexpr std::size_t probe_tasks_k = 16;  // the largest count of a dispatch nested in a callback

/**  One dispatch's record, filled by its callbacks on any thread. */
struct ledger_t {
    std::atomic<std::uint32_t> *tasks = nullptr; // at least the dispatch's count of counters
    std::array<std::atomic<std::uint32_t>, max_threads_k> threads{};
    std::atomic<std::uint64_t> misplaced{0}; // a prong outside the static split (task + 1)

    void reset(std::size_t n) noexcept {
        for (std::size_t i = 0; i != n; ++i) tasks[i].store(0, std::memory_order_relaxed);
        for (auto &thread : threads) thread.store(0, std::memory_order_relaxed);
        misplaced.store(0, std::memory_order_relaxed);
    }
};

/**  The ledger of a dispatch made inside a callback: on that callback's stack, no heap. */
struct probe_ledger_t : ledger_t {
    std::array<std::atomic<std::uint32_t>, probe_tasks_k> storage{};
    probe_ledger_t() noexcept { tasks = storage.data(); }
};

/**  What the callbacks of one dispatch know: the ledger, the split they must follow (0 threads: unknown). */
struct expectation_t {
    std::size_t n = 0;
    std::size_t threads = 0; // the pool's thread count where the dispatcher knows it (it owns the pool), else 0
};

// ---- Nested dispatches: which pools' callbacks the current thread runs inside ----------------------------------

class driver_t;
struct frame_t {
    driver_t const *pool = nullptr;
    std::size_t thread = 0;
};
constexpr std::size_t max_depth_k = 4;
thread_local std::array<frame_t, max_depth_k> callback_stack;
thread_local std::size_t callback_depth = 0;

/**  Marks the current thread as running a callback of `pool` as its thread `thread` for its lifetime. */
struct in_callback_t {
    in_callback_t(driver_t const *pool, std::size_t thread) noexcept {
        FUZZ_CHECK(callback_depth < max_depth_k, "nesting deeper than %zu", max_depth_k);
        callback_stack[callback_depth++] = {pool, thread};
    }
    ~in_callback_t() noexcept { --callback_depth; }
    in_callback_t(in_callback_t const &) = delete;
    in_callback_t &operator=(in_callback_t const &) = delete;
};

/**  The frame of the innermost callback of `pool` the current thread runs, or null. */
frame_t const *frame_of(driver_t const *pool) noexcept {
    for (std::size_t depth = callback_depth; depth != 0; --depth)
        if (callback_stack[depth - 1].pool == pool) return &callback_stack[depth - 1];
    return nullptr;
}

// ---- Per fuzz thread --------------------------------------------------------------------------------------------

struct thread_state_t {
    unsigned index = 0;
    std::mt19937_64 rng;
    std::unique_ptr<std::atomic<std::uint32_t>[]> task_storage { new std::atomic<std::uint32_t>[ max_tasks_k ] };
    ledger_t ledger;
    op_log_t *log = nullptr;
    std::array<std::uint64_t, op_count_k> counts{}, accepted{};
    std::array<std::uint64_t, finish_count_k> finishes{};

    std::uint64_t draw() noexcept { return rng(); }
    bool chance(unsigned percent) noexcept { return rng() % 100 < percent; }
    thread_state_t() noexcept { ledger.tasks = task_storage.get(); }
};

/**  A drawn task count: any integer a caller might pass (negative, beyond the index type, on its edges). */
struct count_t {
    std::int64_t value = 0;
};

template <typename index_type_>
count_t draw_count(thread_state_t &state) noexcept {
    std::uint64_t const r = state.draw() % 100;
    constexpr std::uint64_t max = static_cast<std::uint64_t>(static_cast<index_type_>(~index_type_(0)));
    if (r < 35) return {static_cast<std::int64_t>(state.draw() % 9)};
    if (r < 60) return {static_cast<std::int64_t>(9 + state.draw() % 40)};
    if (r < 75) return {static_cast<std::int64_t>(49 + state.draw() % 300)}; // around 255
    if (r < 85) return {static_cast<std::int64_t>(state.draw() % 2000)};
    if (r < 92) return {-1 - static_cast<std::int64_t>(state.draw() % 3)};
    if (max <= 65535) {
        // The index type's edge: max - 1 and max fit, max + 1 and far beyond do not. A 65535-task loop is rare.
        if (max > 255 && state.draw() % 8 != 0) return {static_cast<std::int64_t>(max + 1)};
        if (r < 96) return {static_cast<std::int64_t>(max - 1 + state.draw() % 3)};
        return {static_cast<std::int64_t>(max) * 1000 + 7};
    }
    return {static_cast<std::int64_t>(state.draw() % 5000)};
}

/**  Checks the record of a dispatch that ran (`ran`) or must have run nothing. */
void check_tasks(ledger_t &ledger, std::size_t n, bool ran, char const *what, char const *pool) noexcept {
    std::uint32_t const expected = ran ? 1 : 0;
    for (std::size_t i = 0; i != n; ++i) {
        std::uint32_t const count = ledger.tasks[i].load(std::memory_order_relaxed);
        FUZZ_CHECK(count == expected, "%s on %s (n = %zu, %s): task %zu ran %u times", what, pool, n,
                   ran ? "accepted" : "refused", i, count);
    }
    std::uint64_t const misplaced = ledger.misplaced.load(std::memory_order_relaxed);
    FUZZ_CHECK(misplaced == 0, "%s on %s (n = %zu): task %" PRIu64 " ran outside its static block", what, pool, n,
               misplaced - 1);
}

/**  `for_threads`: each thread of the team once (a prefix of [0, threads) when the count is unknown). */
void check_threads(ledger_t &ledger, std::size_t threads, bool ran, char const *pool) noexcept {
    if (!ran) {
        for (std::size_t t = 0; t != max_threads_k; ++t)
            FUZZ_CHECK(ledger.threads[t].load() == 0, "refused for_threads on %s ran thread %zu", pool, t);
        return;
    }
    std::size_t team = 0;
    while (team != max_threads_k && ledger.threads[team].load() != 0) ++team;
    FUZZ_CHECK(team != 0, "accepted for_threads on %s ran no thread", pool);
    if (threads) FUZZ_CHECK(team == threads, "for_threads on %s ran %zu threads of %zu", pool, team, threads);
    for (std::size_t t = 0; t != max_threads_k; ++t) {
        std::uint32_t const count = ledger.threads[t].load();
        FUZZ_CHECK(count == (t < team ? 1u : 0u), "for_threads on %s: thread %zu ran %u times (team of %zu)", pool, t,
                   count, team);
    }
}

// ---- Topologies -------------------------------------------------------------------------------------------------

fu::machine_topology_t live_topology;
fu::machine_topology_t recorded_topology; // two compute domains, on Linux; else the live machine again
bool have_recorded = false;
fu_topology_t live_c = nullptr, recorded_c = nullptr;

// ---- The drivers: one per pool ----------------------------------------------------------------------------------

enum class verb_t : unsigned { threads_k, n_k, n_dynamic_k, slices_k };
constexpr op_t op_of(verb_t verb) noexcept {
    return static_cast<op_t>(op_for_threads_k + static_cast<unsigned>(verb));
}

/**  A draw for a dispatch made inside a callback: its verb, count, finish and whether its own callbacks go deeper. */
struct probe_t {
    std::uint64_t draw = 0;
    std::size_t depth = 1;
};

class driver_t {
public:
    std::string name;
    unsigned index = 0;
    unsigned owner = 0;
    bool spawned = false; // written and read by the owner only

    virtual ~driver_t() = default;
    virtual void spawn(thread_state_t &state) noexcept = 0;
    virtual void terminate(thread_state_t &state) noexcept = 0;
    virtual void dispatch(thread_state_t &state, bool nested) noexcept = 0;
    virtual void split(thread_state_t &state) noexcept = 0;
    virtual void idle(thread_state_t &state) noexcept = 0;
    virtual void query(thread_state_t &state) noexcept = 0;
    virtual void foreign_join(thread_state_t &state) noexcept = 0;
    /**  From inside a callback (of this pool or another): one dispatch, its status checked against the stack. */
    virtual void probe(probe_t probe) noexcept = 0;
    /**  In a `fork()`ed child: the inherited pool refuses with `forked`, its fallbacks run on the caller. */
    virtual void in_child(thread_state_t &state, bool spawned_at_fork) noexcept = 0;
    /**  In a child, pools its forking thread owns: terminate (abandon) and spawn afresh, then dispatch. */
    virtual void respawn_in_child(thread_state_t &state) noexcept = 0;
    /**  The owner dispatches with a callback that forks on the caller inside its own slice. */
    virtual void fork_in_slice(thread_state_t &state) noexcept = 0;
};
std::vector<std::unique_ptr<driver_t>> drivers;

/**  Dispatches made inside callbacks: all of them, the accepted ones, and those accepted inside a callback of the
 *   same pool (thread 0 of an exclusive flat or colocated pool). Relaxed: statistics, read after the run. */
std::atomic<std::uint64_t> probes_made{0}, probes_accepted{0}, probes_nested_here{0};

/**  Probes from inside a callback: with `probe.depth` at most 2, to a random pool (a third of them to `self`). */
void maybe_probe(driver_t const *self, std::uint64_t draw, std::size_t depth) noexcept {
    if (depth > 2 || draw % 3 == 0) return;
    std::uint64_t const pick = mix(draw);
    driver_t *target = pick % 3 == 0 ? const_cast<driver_t *>(self) : drivers[(pick >> 8) % drivers.size()].get();
    target->probe({mix(pick), depth});
}

#if FORKUNION_OS_LINUX
/**  Waits for `child` within the deadline; a hung child is killed and fails the run. */
void reap(pid_t child, char const *what) noexcept {
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(config.watchdog_s / 2 + 1);
    int status = 0;
    for (;;) {
        pid_t const reaped = ::waitpid(child, &status, WNOHANG);
        if (reaped == child) break;
        FUZZ_CHECK(reaped == 0, "%s: waitpid failed", what);
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(child, SIGKILL), ::waitpid(child, &status, 0);
            fail("%s: the child hung (killed after %u s)", what, config.watchdog_s / 2 + 1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1)); // polling a child's exit: no event to wait on
    }
    FUZZ_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child %s %d", what,
               WIFEXITED(status) ? "exited with" : "died of signal",
               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}
#endif

void child_main(thread_state_t &state) noexcept;

// ---- C++ pools ----------------------------------------------------------------------------------------------------

enum class kind_t { flat_k, colocated_k, distributed_k };
enum class known_t { inclusive_k, exclusive_k, unknown_k };

template <typename index_type_>
using flat_pool_of_t = fu::basic_pool_t<std::allocator<std::thread>, fu::default_micro_yield_t, index_type_>;

template <kind_t kind_, typename pool_type_>
class cpp_driver_t final : public driver_t {
    using pool_t = pool_type_;
    using index_t = typename pool_t::index_t;
    using prong_t = fu::prong_t<index_t>;
    pool_t pool_;

    static constexpr bool nests_on_thread_zero_k = kind_ != kind_t::distributed_k; // T2n: flat and colocated

    /**  The callbacks of one dispatch; `probes` lets them dispatch again (depth below 3). */
    struct body_t {
        cpp_driver_t *self;
        ledger_t *ledger;
        expectation_t expect;
        verb_t verb;
        std::uint64_t draw = 0;
        std::size_t depth = 0; // 0: no probes from these callbacks

        void task(prong_t prong) const noexcept {
            std::size_t const task = static_cast<std::size_t>(prong.task),
                              thread = static_cast<std::size_t>(prong.thread);
            FUZZ_CHECK(task < expect.n, "task %zu of %zu on %s", task, expect.n, self->name.c_str());
            ledger->tasks[task].fetch_add(1, std::memory_order_relaxed);
            if (expect.threads && verb == verb_t::n_k) {
                fu::slice_t<std::size_t> const block = fu::static_slice(expect.n, expect.threads, thread);
                if (task < block.first || task >= block.first + block.count)
                    ledger->misplaced.store(task + 1, std::memory_order_relaxed);
            }
            probe_from(thread, task);
        }
        void thread(prong_t prong) const noexcept {
            std::size_t const thread = static_cast<std::size_t>(prong.thread);
            FUZZ_CHECK(thread < max_threads_k, "thread %zu on %s", thread, self->name.c_str());
            ledger->threads[thread].fetch_add(1, std::memory_order_relaxed);
            probe_from(thread, thread);
        }
        void slice(prong_t first, index_t count) const noexcept {
            std::size_t const begin = static_cast<std::size_t>(first.task), length = static_cast<std::size_t>(count);
            FUZZ_CHECK(length != 0 && begin + length <= expect.n, "slice [%zu, +%zu) of %zu on %s", begin, length,
                       expect.n, self->name.c_str());
            for (std::size_t i = 0; i != length; ++i) ledger->tasks[begin + i].fetch_add(1, std::memory_order_relaxed);
            if (expect.threads) {
                fu::slice_t<std::size_t> const block =
                    fu::static_slice(expect.n, expect.threads, static_cast<std::size_t>(first.thread));
                if (block.first != begin || block.count != length)
                    ledger->misplaced.store(begin + 1, std::memory_order_relaxed);
            }
            probe_from(static_cast<std::size_t>(first.thread), begin);
        }
        void probe_from(std::size_t thread, std::size_t salt) const noexcept {
            if (!depth) return;
            in_callback_t const frame(self, thread);
            maybe_probe(self, mix(draw ^ (salt * 0x100000001B3ull)), depth);
        }
    };

    /**  Runs one verb over `body` with `fn(guard)`: the guard lives in this frame, as every caller's does. */
    template <typename finish_fn_>
    void with_guard(verb_t verb, std::int64_t n, body_t const &body, finish_fn_ &&finish) noexcept {
        switch (verb) {
        case verb_t::threads_k: {
            auto guard = pool_.for_threads([body](prong_t prong) noexcept { body.thread(prong); });
            finish(guard);
            break;
        }
        case verb_t::n_k: {
            auto guard = pool_.for_n(n, [body](prong_t prong) noexcept { body.task(prong); });
            finish(guard);
            break;
        }
        case verb_t::n_dynamic_k: {
            auto guard = pool_.for_n_dynamic(n, [body](prong_t prong) noexcept { body.task(prong); });
            finish(guard);
            break;
        }
        case verb_t::slices_k: {
            auto guard =
                pool_.for_slices(n, [body](prong_t first, index_t count) noexcept { body.slice(first, count); });
            finish(guard);
            break;
        }
        }
    }

    /**  The exclusivity of the pool that accepted this thread's dispatch, read before its join: `exclusive` is
     *   sure (an inclusive pool stays held until this thread joins, so nobody can respawn it meanwhile);
     *   `inclusive` only on a pool this thread owns (an exclusive dispatch completes by itself, and the pool's
     *   owner may then respawn it inclusive). */
    known_t exclusivity(bool own) const noexcept {
        if (pool_.caller_exclusivity() == fu::caller_exclusive_k) return known_t::exclusive_k;
        return own ? known_t::inclusive_k : known_t::unknown_k;
    }

    /**  Whether a refusal's status is one `state`'s view of the pool allows. */
    bool refusal_allowed(fu::status_t status, bool own) const noexcept {
        fu::status_code_t const code = status.code();
        if (own) return spawned ? code == fu::status_code_t::contended_k : code == fu::status_code_t::not_spawned_k;
        return code == fu::status_code_t::contended_k || code == fu::status_code_t::not_spawned_k;
    }

    fu::status_t spawn_with(thread_state_t &state, std::size_t threads, fu::caller_exclusivity_t exclusivity,
                            bool &expect_invalid) noexcept {
        fu::thread_placement_t placement;
        placement.name = "fuzz";
        std::uint64_t const r = state.draw();
        placement.pinning = r % 4 == 0   ? fu::pinning_t::domain_k
                            : r % 8 == 1 ? fu::pinning_t::core_k
                                         : fu::pinning_t::none_k;
        fu::machine_topology_t const &topology = have_recorded && (r >> 8) % 2 ? recorded_topology : live_topology;
        std::size_t const domains = topology.compute_domains_count();
        if constexpr (kind_ == kind_t::flat_k) {
            expect_invalid = threads == 0;
            return pool_.spawn(static_cast<index_t>(threads), exclusivity);
        } else if constexpr (kind_ == kind_t::colocated_k) {
            std::size_t const domain = (r >> 16) % (domains + 1); // one past the last: refused
            expect_invalid = threads == 0 || domain >= domains;
            return pool_.spawn_on(topology, domain, static_cast<index_t>(threads), exclusivity, placement);
        } else {
            expect_invalid = threads == 0 || threads < domains;
            return pool_.spawn(topology, static_cast<index_t>(threads), exclusivity, placement);
        }
    }

public:
    void spawn(thread_state_t &state) noexcept override {
        if (spawned) { // a second spawn changes nothing
            state.log->begin(op_spawn_refused_k, index, 0, 0);
            bool expect_invalid = false;
            fu::status_t const status = spawn_with(state, 2, fu::caller_inclusive_k, expect_invalid);
            // Both refusals apply to an invalid spawn of a spawned pool: either may come first.
            FUZZ_CHECK(status.code() == fu::status_code_t::already_spawned_k ||
                           (expect_invalid && status.code() == fu::status_code_t::invalid_argument_k),
                       "spawn on spawned %s: %s", name.c_str(), status.name());
            FUZZ_CHECK(static_cast<std::size_t>(pool_.threads_count()) != 0, "a refused spawn emptied %s",
                       name.c_str());
            ++state.counts[op_spawn_refused_k];
            return;
        }
        std::size_t threads = 1 + state.draw() % 4;
        if (state.chance(8)) threads = 1 + state.draw() % 12;
        if (state.chance(5)) threads = 0;
        fu::caller_exclusivity_t const exclusivity = state.chance(50) ? fu::caller_exclusive_k : fu::caller_inclusive_k;
        state.log->begin(op_spawn_k, index, exclusivity == fu::caller_exclusive_k, static_cast<std::int64_t>(threads));
        bool expect_invalid = false;
        fu::status_t const status = spawn_with(state, threads, exclusivity, expect_invalid);
        if (expect_invalid) {
            FUZZ_CHECK(status.code() == fu::status_code_t::invalid_argument_k, "spawn(%zu) of %s: %s", threads,
                       name.c_str(), status.name());
            FUZZ_CHECK(pool_.threads_count() == 0, "a refused spawn of %s left threads", name.c_str());
            ++state.counts[op_spawn_refused_k];
            return;
        }
        FUZZ_CHECK(static_cast<bool>(status), "spawn(%zu, %s) of %s: %s", threads,
                   exclusivity == fu::caller_exclusive_k ? "exclusive" : "inclusive", name.c_str(), status.name());
        FUZZ_CHECK(static_cast<std::size_t>(pool_.threads_count()) == threads, "%s spawned %zu threads, has %zu",
                   name.c_str(), threads, static_cast<std::size_t>(pool_.threads_count()));
        spawned = true;
        ++state.counts[op_spawn_k];
    }

    void terminate(thread_state_t &state) noexcept override {
        state.log->begin(op_terminate_k, index, 0, 0);
        pool_.terminate();
        FUZZ_CHECK(pool_.threads_count() == 0, "%s has threads after terminate", name.c_str());
        spawned = false;
        ++state.counts[op_terminate_k];
    }

    void dispatch(thread_state_t &state, bool nested) noexcept override {
        bool const own = state.index == owner;
        verb_t const verb = static_cast<verb_t>(state.draw() % 4);
        count_t count = draw_count<index_t>(state);
        finish_t finish = nested ? join_k : static_cast<finish_t>(state.draw() % finish_count_k);
        if (nested) count.value = static_cast<std::int64_t>(state.draw() % probe_tasks_k);
        op_t const op = nested ? op_nested_k : op_of(verb);
        state.log->begin(op, index, finish, count.value);
        bool const fits = verb == verb_t::threads_k || std::in_range<index_t>(count.value);
        std::size_t const n = verb == verb_t::threads_k || !fits ? 0 : static_cast<std::size_t>(count.value);
        ledger_t &ledger = state.ledger;
        ledger.reset(n);
        std::size_t const threads = own && spawned ? static_cast<std::size_t>(pool_.threads_count()) : 0;
        // A refused run-on-caller runs as a team of one, with no split to follow.
        body_t const body{this, &ledger,      {n, finish == run_on_caller_k ? 0 : threads},
                          verb, state.draw(), nested ? 1u : 0u};

        bool ran = false;       // every task ran once (on the pool or on the caller)
        bool on_caller = false; // ... as a team of one on this thread
        fu::status_t status;
        with_guard(verb, count.value, body, [&](auto &guard) noexcept {
            switch (finish) {
            case join_k:
                status = guard.join();
                ran = static_cast<bool>(status);
                break;
            case run_on_caller_k:
                ran = guard.join_or_run_on_caller();
                status = guard.status();
                on_caller = ran && !status;
                FUZZ_CHECK(ran == fits, "join_or_run_on_caller on %s returned %d for a count that %s", name.c_str(),
                           ran, fits ? "fits" : "does not fit");
                break;
            case poll_then_join_k:
                status = guard.status();
                if (status) {
                    known_t const shape = exclusivity(own);
                    if (shape == known_t::inclusive_k)
                        FUZZ_CHECK(!guard.is_complete(), "an inclusive dispatch on %s completed before its join",
                                   name.c_str());
                    else if (shape == known_t::exclusive_k)
                        while (!guard.is_complete()) std::this_thread::yield(); // the watchdog bounds it
                }
                FUZZ_CHECK(guard.join().code() == status.code(), "join changed the status of %s", name.c_str());
                ran = static_cast<bool>(status);
                break;
            default: // read the status, let the destructor join
                status = guard.status();
                ran = static_cast<bool>(status);
                break;
            }
        });
        if (!fits)
            FUZZ_CHECK(status.code() == fu::status_code_t::invalid_argument_k,
                       "a count of %lld on %s (%zu-byte indices) answered %s", static_cast<long long>(count.value),
                       name.c_str(), sizeof(index_t), status.name());
        else if (!status)
            FUZZ_CHECK(refusal_allowed(status, own), "%s on %s refused with %s (%s, %s)", op_names_k[op_of(verb)],
                       name.c_str(), status.name(), own ? "own" : "foreign", spawned ? "spawned" : "unspawned");
        if (on_caller) {
            // The serial loop, as a team of one: every prong's thread is 0; for_slices is one call.
            if (verb == verb_t::threads_k) {
                FUZZ_CHECK(ledger.threads[0].load() == 1, "for_threads on the caller ran thread 0 %u times",
                           ledger.threads[0].load());
            }
        }
        if (verb == verb_t::threads_k)
            check_threads(ledger, on_caller ? 1 : ran ? threads : 0, ran, name.c_str());
        else
            check_tasks(ledger, n, ran, op_names_k[op_of(verb)], name.c_str());
        ++state.counts[op];
        state.accepted[op] += status ? 1 : 0;
        ++state.finishes[finish];
    }

    void split(thread_state_t &state) noexcept override {
        bool const own = state.index == owner;
        state.log->begin(op_split_k, index, 0, 0);
        ledger_t &ledger = state.ledger;
        ledger.reset(0);
        auto fn = [&ledger](index_t thread) noexcept {
            ledger.threads[static_cast<std::size_t>(thread) % max_threads_k].fetch_add(1, std::memory_order_relaxed);
        };
        auto const publication = pool_.unsafe_for_threads(fn);
        fu::status_t const status = publication.status;
        std::size_t threads = 0;
        if (status) {
            FUZZ_CHECK(publication.generation % 2 == 1, "split dispatch on %s: even generation", name.c_str());
            known_t const shape = exclusivity(own);
            bool const inclusive = shape == known_t::inclusive_k;
            if (own) threads = static_cast<std::size_t>(pool_.threads_count());
            if (inclusive)
                FUZZ_CHECK(!pool_.is_complete(publication.generation),
                           "an inclusive split dispatch on %s completed before its join", name.c_str());
            if (state.chance(40)) { // the pool is held by this thread: a blocking dispatch is refused
                auto guard = pool_.for_n(3, [](index_t) noexcept {});
                fu::status_t const second = guard.join();
                if (inclusive)
                    FUZZ_CHECK(second.code() == fu::status_code_t::contended_k,
                               "a dispatch on %s beside this thread's split dispatch: %s", name.c_str(), second.name());
            }
            if (shape == known_t::exclusive_k)
                while (!pool_.is_complete(publication.generation)) std::this_thread::yield();
            pool_.unsafe_join(publication.generation);
            // Generations are `index_t` wide and wrap: with 1-byte indices, 127 dispatches from the other fuzz
            // threads while this one is descheduled make the token name a later dispatch, which may be in flight
            // (the documented limit of `is_complete`); wider indices would need 2^15 or more.
            if (sizeof(index_t) > 1)
                FUZZ_CHECK(pool_.is_complete(publication.generation), "split dispatch on %s incomplete after its join",
                           name.c_str());
        } else {
            FUZZ_CHECK(publication.generation == 0, "a refused split dispatch on %s has a generation", name.c_str());
            FUZZ_CHECK(refusal_allowed(status, own), "split dispatch on %s refused with %s", name.c_str(),
                       status.name());
        }
        check_threads(ledger, threads, static_cast<bool>(status), name.c_str());
        ++state.counts[op_split_k];
        state.accepted[op_split_k] += status ? 1 : 0;
    }

    void idle(thread_state_t &state) noexcept override {
        std::uint64_t const r = state.draw();
        state.log->begin(op_idle_k, index, 0, static_cast<std::int64_t>(r % 6));
        fu::idle_policy_t policy;
        bool valid = true;
        switch (r % 7) {
        case 0:
            policy = fu::idle_policy_t::spin();
            break;
        case 1:
            policy = fu::idle_policy_t::adaptive((r >> 8) % 200);
            break;
        case 2:
            policy = fu::idle_policy_t::nap();
            break;
        case 3:
            policy = fu::idle_policy_t::sleep(0);
            break;
        case 4:
            policy = fu::idle_policy_t::sleep(1 + (r >> 8) % 50);
            break;
        case 5:
            policy = {static_cast<fu::idle_mode_t>(4 + (r >> 8) % 200), 0}, valid = false;
            break;
        default:
            policy = {fu::idle_mode_t::sleep_k, (std::uint64_t(1) << 61) + (r >> 8) % 5}, valid = false;
            break;
        }
        fu::status_t const status = pool_.set_idle_policy(policy);
        FUZZ_CHECK(static_cast<bool>(status) == valid, "set_idle_policy(%s, %" PRIu64 ") on %s: %s",
                   fu::idle_mode_name(policy.mode), policy.microseconds, name.c_str(), status.name());
        FUZZ_CHECK(pool_.idle_policy().valid(), "%s holds an invalid idle policy", name.c_str());
        ++state.counts[op_idle_k];
    }

    void query(thread_state_t &state) noexcept override {
        state.log->begin(op_query_k, index, 0, 0);
        std::size_t const threads = static_cast<std::size_t>(pool_.threads_count());
        FUZZ_CHECK(threads <= 12, "%s reports %zu threads", name.c_str(), threads);
        if (state.index == owner) FUZZ_CHECK((threads != 0) == spawned, "%s: threads_count %zu", name.c_str(), threads);
        (void)pool_.parked_threads_count();
        (void)pool_.idle_policy();
        (void)pool_.caller_exclusivity();
        FUZZ_CHECK(pool_.is_complete(0), "generation 0 of %s is not complete", name.c_str());
        ++state.counts[op_query_k];
    }

    void foreign_join(thread_state_t &state) noexcept override {
        verb_t const verb = static_cast<verb_t>(state.draw() % 4);
        std::size_t const n = state.draw() % 40;
        state.log->begin(op_foreign_join_k, index, 0, static_cast<std::int64_t>(n));
        ledger_t &ledger = state.ledger;
        ledger.reset(n);
        bool const own = state.index == owner;
        std::size_t const threads = own && spawned ? static_cast<std::size_t>(pool_.threads_count()) : 0;
        body_t const body{this, &ledger, {n, threads}, verb, 0, 0};
        fu::status_t status;
        with_guard(verb, static_cast<std::int64_t>(n), body, [&](auto &guard) noexcept {
            // Only the creator may join: from another thread both joins are refused and change nothing.
            fu::status_code_t foreign = fu::status_code_t::success_k;
            bool foreign_ran = true;
            std::thread helper([&]() noexcept {
                foreign = guard.join().code();
                foreign_ran = guard.join_or_run_on_caller();
            });
            helper.join();
            FUZZ_CHECK(foreign == fu::status_code_t::invalid_argument_k && !foreign_ran,
                       "a join of a guard of %s from another thread answered %s, %d", name.c_str(),
                       fu::status_t(foreign).name(), foreign_ran);
            status = guard.join();
        });
        if (!status) FUZZ_CHECK(refusal_allowed(status, own), "%s refused with %s", name.c_str(), status.name());
        if (verb == verb_t::threads_k)
            check_threads(ledger, status ? threads : 0, static_cast<bool>(status), name.c_str());
        else
            check_tasks(ledger, n, static_cast<bool>(status), "foreign join", name.c_str());
        ++state.counts[op_foreign_join_k];
        state.accepted[op_foreign_join_k] += status ? 1 : 0;
    }

    void probe(probe_t probe) noexcept override {
        std::uint64_t const draw = probe.draw;
        verb_t const verb = static_cast<verb_t>(draw % 4);
        bool const run_on_caller = (draw >> 4) % 4 == 0;
        std::int64_t count = static_cast<std::int64_t>((draw >> 8) % probe_tasks_k);
        if ((draw >> 16) % 16 == 0) count = -1; // never fits
        bool const fits = verb == verb_t::threads_k || std::in_range<index_t>(count);
        std::size_t const n = verb == verb_t::threads_k || !fits ? 0 : static_cast<std::size_t>(count);
        // A dispatch of a callback's own: its ledger lives in this frame, on whichever thread runs the callback.
        probe_ledger_t ledger;
        // Deeper probes only from callbacks that surely run on the pool: a refused run-on-caller runs its loop
        // here, where the pool is not held, and the stack would claim otherwise.
        body_t const body{this, &ledger, {n, 0}, verb, mix(draw), run_on_caller ? 0 : probe.depth + 1};

        // Inside a callback of this very pool the pool is held: only thread 0 of an exclusive flat or colocated
        // pool may dispatch there (T2n), everyone else is refused with `contended`.
        frame_t const *const frame = frame_of(this);
        bool const nested_here = frame != nullptr;
        bool const may_nest = nested_here && nests_on_thread_zero_k && frame->thread == 0 &&
                              pool_.caller_exclusivity() == fu::caller_exclusive_k;
        fu::status_t status;
        bool ran = false;
        with_guard(verb, count, body, [&](auto &guard) noexcept {
            if (run_on_caller) {
                ran = guard.join_or_run_on_caller();
                status = guard.status();
            } else {
                status = guard.join();
                ran = static_cast<bool>(status);
            }
        });
        if (!fits)
            FUZZ_CHECK(status.code() == fu::status_code_t::invalid_argument_k && !ran,
                       "nested: a count of %lld on %s answered %s", static_cast<long long>(count), name.c_str(),
                       status.name());
        else if (nested_here)
            FUZZ_CHECK(may_nest ? static_cast<bool>(status) : status.code() == fu::status_code_t::contended_k,
                       "nested in a callback of %s (thread %zu, %s): a dispatch on it answered %s", name.c_str(),
                       frame->thread, pool_.caller_exclusivity() == fu::caller_exclusive_k ? "exclusive" : "inclusive",
                       status.name());
        else if (!status)
            FUZZ_CHECK(refusal_allowed(status, false), "nested: %s refused with %s", name.c_str(), status.name());
        if (fits && run_on_caller) FUZZ_CHECK(ran, "nested: join_or_run_on_caller on %s ran nothing", name.c_str());
        probes_made.fetch_add(1, std::memory_order_relaxed);
        probes_accepted.fetch_add(status ? 1 : 0, std::memory_order_relaxed);
        probes_nested_here.fetch_add(status && nested_here ? 1 : 0, std::memory_order_relaxed);
        if (verb == verb_t::threads_k)
            check_threads(ledger, 0, ran, name.c_str());
        else
            check_tasks(ledger, n, ran, "a nested dispatch", name.c_str());
    }

    void in_child(thread_state_t &state, bool spawned_at_fork) noexcept override {
        ledger_t &ledger = state.ledger;
        ledger.reset(8);
        body_t const body{this, &ledger, {8, 0}, verb_t::n_k, 0, 0};
        auto is_refusal = [&](fu::status_t status) noexcept {
            return status.code() == fu::status_code_t::forked_k ||
                   (!spawned_at_fork && status.code() == fu::status_code_t::not_spawned_k);
        };
        {
            auto guard = pool_.for_n(8, [body](prong_t prong) noexcept { body.task(prong); });
            fu::status_t const status = guard.join();
            FUZZ_CHECK(is_refusal(status), "child: for_n on inherited %s answered %s", name.c_str(), status.name());
        }
        check_tasks(ledger, 8, false, "child for_n", name.c_str());
        {
            auto guard = pool_.for_n_dynamic(8, [body](prong_t prong) noexcept { body.task(prong); });
            FUZZ_CHECK(guard.join_or_run_on_caller(), "child: run-on-caller on %s ran nothing", name.c_str());
            FUZZ_CHECK(is_refusal(guard.status()), "child: %s answered %s", name.c_str(), guard.status().name());
        }
        check_tasks(ledger, 8, true, "child run-on-caller", name.c_str());
        auto fn = [](index_t) noexcept {};
        auto const publication = pool_.unsafe_for_threads(fn);
        FUZZ_CHECK(publication.generation == 0 && is_refusal(publication.status),
                   "child: split dispatch on inherited %s answered %s", name.c_str(), publication.status.name());
        if (spawned_at_fork) FUZZ_CHECK(pool_.forked(), "child: %s does not know it is inherited", name.c_str());
        FUZZ_CHECK(static_cast<bool>(pool_.set_idle_policy(fu::idle_policy_t::sleep(0))),
                   "child: set_idle_policy on %s refused", name.c_str());
    }

    void respawn_in_child(thread_state_t &state) noexcept override {
        pool_.terminate(); // abandons the inherited table
        FUZZ_CHECK(pool_.threads_count() == 0, "child: %s has threads after terminate", name.c_str());
        bool expect_invalid = false;
        std::size_t const threads = have_recorded ? 2 : 1 + state.draw() % 3;
        fu::status_t const status = spawn_with(state, threads, fu::caller_inclusive_k, expect_invalid);
        if (expect_invalid) return; // a domain out of range was drawn
        FUZZ_CHECK(static_cast<bool>(status), "child: respawn of %s: %s", name.c_str(), status.name());
        ledger_t &ledger = state.ledger;
        ledger.reset(20);
        body_t const body{this, &ledger, {20, threads}, verb_t::n_k, 0, 0};
        {
            auto guard = pool_.for_n(20, [body](prong_t prong) noexcept { body.task(prong); });
            fu::status_t const joined = guard.join();
            FUZZ_CHECK(static_cast<bool>(joined), "child: dispatch on respawned %s: %s", name.c_str(), joined.name());
        }
        check_tasks(ledger, 20, true, "child for_n after respawn", name.c_str());
        pool_.terminate();
    }

    void fork_in_slice(thread_state_t &state) noexcept override {
#if FORKUNION_OS_LINUX
        // Only the caller of an inclusive pool may fork inside its slice (a worker's child would lack its caller).
        state.log->begin(op_fork_in_slice_k, index, 0, 0);
        if (!spawned || pool_.caller_exclusivity() != fu::caller_inclusive_k) return;
        std::size_t const n = 1 + state.draw() % 20, threads = static_cast<std::size_t>(pool_.threads_count());
        ledger_t &ledger = state.ledger;
        ledger.reset(n);
        std::atomic<pid_t> child{-1};
        std::thread::id const caller = std::this_thread::get_id();
        fork_lock_t const serialized;
        auto guard = pool_.for_n(n, [&](prong_t prong) noexcept {
            ledger.tasks[static_cast<std::size_t>(prong.task)].fetch_add(1, std::memory_order_relaxed);
            if (prong.thread == 0 && std::this_thread::get_id() == caller && child.load() == -1) {
                pid_t const pid = ::fork();
                if (pid == 0) is_child.store(true, std::memory_order_relaxed);
                child.store(pid);
            }
        });
        fu::status_t const status = guard.join();
        if (is_child.load(std::memory_order_relaxed)) { // the child: the other slices do not run here
            FUZZ_CHECK(status.code() == fu::status_code_t::forked_k,
                       "child forked in its slice of %s: join answered %s", name.c_str(), status.name());
            child_main(state); // exits
        }
        if (status.code() == fu::status_code_t::contended_k) return; // a foreign dispatch held it: nothing ran
        FUZZ_CHECK(static_cast<bool>(status), "fork in slice of %s: join answered %s", name.c_str(), status.name());
        FUZZ_CHECK(child.load() > 0, "fork in slice of %s: no fork (%d, %zu threads)", name.c_str(),
                   static_cast<int>(child.load()), threads);
        check_tasks(ledger, n, true, "fork in slice", name.c_str());
        reap(child.load(), "a child forked inside its slice");
        ++state.counts[op_fork_in_slice_k];
#else
        (void)state;
#endif
    }

    explicit cpp_driver_t(std::string pool_name) {
        name = std::move(pool_name);
    }
    ~cpp_driver_t() override = default;
};

// ---- The C API ----------------------------------------------------------------------------------------------------

class c_driver_t final : public driver_t {
    fu_pool_t pool_ = nullptr;

    struct body_t {
        c_driver_t *self;
        ledger_t *ledger;
        expectation_t expect;
        verb_t verb;
        std::uint64_t draw;
        std::size_t depth;
    };

    static void on_thread(void *context, size_t thread, size_t) noexcept {
        body_t const &body = *static_cast<body_t const *>(context);
        FUZZ_CHECK(thread < max_threads_k, "thread %zu on %s", thread, body.self->name.c_str());
        body.ledger->threads[thread].fetch_add(1, std::memory_order_relaxed);
        probe_from(body, thread, thread);
    }
    static void on_task(void *context, size_t task, size_t thread, size_t) noexcept {
        body_t const &body = *static_cast<body_t const *>(context);
        FUZZ_CHECK(task < body.expect.n, "task %zu of %zu on %s", task, body.expect.n, body.self->name.c_str());
        body.ledger->tasks[task].fetch_add(1, std::memory_order_relaxed);
        if (body.expect.threads && body.verb == verb_t::n_k) {
            fu::slice_t<std::size_t> const block = fu::static_slice(body.expect.n, body.expect.threads, thread);
            if (task < block.first || task >= block.first + block.count)
                body.ledger->misplaced.store(task + 1, std::memory_order_relaxed);
        }
        probe_from(body, thread, task);
    }
    static void on_slice(void *context, size_t first, size_t count, size_t thread, size_t) noexcept {
        body_t const &body = *static_cast<body_t const *>(context);
        FUZZ_CHECK(count != 0 && first + count <= body.expect.n, "slice [%zu, +%zu) of %zu on %s", first, count,
                   body.expect.n, body.self->name.c_str());
        for (std::size_t i = 0; i != count; ++i) body.ledger->tasks[first + i].fetch_add(1, std::memory_order_relaxed);
        if (body.expect.threads) {
            fu::slice_t<std::size_t> const block = fu::static_slice(body.expect.n, body.expect.threads, thread);
            if (block.first != first || block.count != count)
                body.ledger->misplaced.store(first + 1, std::memory_order_relaxed);
        }
        probe_from(body, thread, first);
    }
    static void probe_from(body_t const &body, std::size_t thread, std::size_t salt) noexcept {
        if (!body.depth) return;
        in_callback_t const frame(body.self, thread);
        maybe_probe(body.self, mix(body.draw ^ (salt * 0x100000001B3ull)), body.depth);
    }

    /**  One blocking verb; `run_on_caller` picks the `_or_run_on_caller` form. */
    fu_status_t call(verb_t verb, std::size_t n, body_t &body, bool run_on_caller) noexcept {
        switch (verb) {
        case verb_t::threads_k:
            return run_on_caller ? fu_pool_for_threads_or_run_on_caller(pool_, on_thread, &body)
                                 : fu_pool_for_threads(pool_, on_thread, &body);
        case verb_t::n_k:
            return run_on_caller ? fu_pool_for_n_or_run_on_caller(pool_, n, on_task, &body)
                                 : fu_pool_for_n(pool_, n, on_task, &body);
        case verb_t::n_dynamic_k:
            return run_on_caller ? fu_pool_for_n_dynamic_or_run_on_caller(pool_, n, on_task, &body)
                                 : fu_pool_for_n_dynamic(pool_, n, on_task, &body);
        default:
            return run_on_caller ? fu_pool_for_slices_or_run_on_caller(pool_, n, on_slice, &body)
                                 : fu_pool_for_slices(pool_, n, on_slice, &body);
        }
    }

    bool refusal_allowed(fu_status_t status, bool own) const noexcept {
        if (own) return spawned ? status == fu_contended_k : status == fu_not_spawned_k;
        return status == fu_contended_k || status == fu_not_spawned_k;
    }

    /**  Whether a dispatch on this pool from inside its own callback on `thread` is allowed (T2n). */
    bool may_nest(std::size_t thread) const noexcept {
        return thread == 0 && fu_pool_caller_exclusivity(pool_) == fu_caller_exclusive_k &&
               fu_pool_compute_domains_count(pool_) == 1;
    }

public:
    c_driver_t(std::string pool_name, fu_capabilities_t allowed) {
        name = std::move(pool_name);
        pool_ = fu_pool_new("cfuzz", allowed);
        FUZZ_CHECK(pool_ != nullptr, "fu_pool_new failed");
    }
    ~c_driver_t() override { fu_pool_delete(pool_); }

    void spawn(thread_state_t &state) noexcept override {
        std::uint64_t const r = state.draw();
        fu_topology_t const topology = have_recorded && r % 2 ? recorded_c : live_c;
        std::size_t const domains = fu_compute_domains_count(topology);
        bool const on_domain = (r >> 4) % 3 == 0;
        std::size_t const domain = (r >> 8) % (domains + 1);
        std::size_t threads = 1 + (r >> 16) % 4;
        if ((r >> 24) % 20 == 0) threads = 0;
        fu_caller_exclusivity_t const exclusivity = (r >> 32) % 2 ? fu_caller_exclusive_k : fu_caller_inclusive_k;
        state.log->begin(spawned ? op_spawn_refused_k : op_spawn_k, index, exclusivity,
                         static_cast<std::int64_t>(threads));
        fu_status_t const status = on_domain ? fu_pool_spawn_on(topology, pool_, domain, threads, exclusivity)
                                             : fu_pool_spawn(topology, pool_, threads, exclusivity);
        bool const invalid = threads == 0 || (on_domain ? domain >= domains : threads < domains);
        if (invalid && spawned) { // both refusals apply: either may come first
            FUZZ_CHECK(status == fu_invalid_argument_k || status == fu_already_spawned_k,
                       "fu_pool_spawn%s(%zu) of spawned %s: %s", on_domain ? "_on" : "", threads, name.c_str(),
                       fu_status_to_string(status));
            ++state.counts[op_spawn_refused_k];
            return;
        }
        if (invalid) {
            FUZZ_CHECK(status == fu_invalid_argument_k, "fu_pool_spawn%s(%zu) of %s: %s", on_domain ? "_on" : "",
                       threads, name.c_str(), fu_status_to_string(status));
            ++state.counts[op_spawn_refused_k];
            return;
        }
        if (spawned) {
            FUZZ_CHECK(status == fu_already_spawned_k, "fu_pool_spawn on spawned %s: %s", name.c_str(),
                       fu_status_to_string(status));
            ++state.counts[op_spawn_refused_k];
            return;
        }
        FUZZ_CHECK(status == fu_success_k, "fu_pool_spawn%s(%zu, %s) of %s: %s", on_domain ? "_on" : "", threads,
                   exclusivity == fu_caller_exclusive_k ? "exclusive" : "inclusive", name.c_str(),
                   fu_status_to_string(status));
        FUZZ_CHECK(fu_pool_threads_count(pool_) == threads, "%s spawned %zu threads, has %zu", name.c_str(), threads,
                   fu_pool_threads_count(pool_));
        spawned = true;
        ++state.counts[op_spawn_k];
    }

    void terminate(thread_state_t &state) noexcept override {
        state.log->begin(op_terminate_k, index, 0, 0);
        fu_status_t const status = fu_pool_terminate(pool_);
        FUZZ_CHECK(status == (spawned ? fu_success_k : fu_not_spawned_k), "fu_pool_terminate of %s (%s): %s",
                   name.c_str(), spawned ? "spawned" : "unspawned", fu_status_to_string(status));
        FUZZ_CHECK(fu_pool_threads_count(pool_) == 0, "%s has threads after terminate", name.c_str());
        spawned = false;
        ++state.counts[op_terminate_k];
    }

    void dispatch(thread_state_t &state, bool nested) noexcept override {
        bool const own = state.index == owner;
        verb_t const verb = static_cast<verb_t>(state.draw() % 4);
        bool const run_on_caller = !nested && state.chance(30);
        std::size_t n = state.draw() % 3 == 0 ? state.draw() % 9 : state.draw() % 700;
        if (nested) n = state.draw() % probe_tasks_k;
        if (verb == verb_t::threads_k) n = 0;
        op_t const op = nested ? op_nested_k : op_of(verb);
        state.log->begin(op, index, run_on_caller ? run_on_caller_k : join_k, static_cast<std::int64_t>(n));
        ledger_t &ledger = state.ledger;
        ledger.reset(n);
        std::size_t const threads = own && spawned ? fu_pool_threads_count(pool_) : 0;
        body_t body{this, &ledger, {n, run_on_caller ? 0 : threads}, verb, state.draw(), nested ? 1u : 0u};
        if (state.chance(3)) { // a NULL callback is refused before anything runs
            fu_status_t const null_status = verb == verb_t::threads_k ? fu_pool_for_threads(pool_, nullptr, &body)
                                                                      : fu_pool_for_n(pool_, n, nullptr, &body);
            FUZZ_CHECK(null_status == fu_invalid_argument_k, "a NULL callback on %s: %s", name.c_str(),
                       fu_status_to_string(null_status));
        }
        fu_status_t const status = call(verb, n, body, run_on_caller);
        bool ran = status == fu_success_k;
        if (run_on_caller)
            FUZZ_CHECK(ran, "%s_or_run_on_caller on %s answered %s", op_names_k[op_of(verb)], name.c_str(),
                       fu_status_to_string(status));
        else if (!ran)
            FUZZ_CHECK(refusal_allowed(status, own), "%s on %s refused with %s", op_names_k[op_of(verb)], name.c_str(),
                       fu_status_to_string(status));
        if (verb == verb_t::threads_k) {
            // Run on the caller, the team is one thread: a prefix check still holds, the exact count does not.
            check_threads(ledger, run_on_caller ? 0 : threads, ran, name.c_str());
        } else {
            check_tasks(ledger, n, ran, op_names_k[op_of(verb)], name.c_str());
        }
        ++state.counts[op];
        state.accepted[op] += ran ? 1 : 0;
        ++state.finishes[run_on_caller ? run_on_caller_k : join_k];
    }

    void split(thread_state_t &state) noexcept override {
        bool const own = state.index == owner;
        state.log->begin(op_split_k, index, 0, 0);
        ledger_t &ledger = state.ledger;
        ledger.reset(0);
        body_t body{this, &ledger, {0, 0}, verb_t::threads_k, 0, 0};
        std::size_t generation = 1;
        fu_status_t const status = fu_pool_unsafe_for_threads(pool_, on_thread, &body, &generation);
        FUZZ_CHECK(fu_pool_is_complete(pool_, 2) == fu_invalid_argument_k, "an even token on %s", name.c_str());
        FUZZ_CHECK(fu_pool_unsafe_join(pool_, 0) == fu_invalid_argument_k, "token 0 on %s", name.c_str());
        std::size_t threads = 0;
        if (status == fu_success_k) {
            FUZZ_CHECK(generation % 2 == 1, "split dispatch on %s: generation %zu", name.c_str(), generation);
            // Read after the dispatch was accepted: `exclusive` is sure (an inclusive pool stays held until this
            // thread joins, so nobody can respawn it meanwhile); `inclusive` is sure only on a pool this thread
            // owns (an exclusive dispatch completes by itself, and its owner may respawn it inclusive).
            bool const read_inclusive = fu_pool_caller_exclusivity(pool_) == fu_caller_inclusive_k;
            bool const inclusive = read_inclusive && own;
            if (own) threads = fu_pool_threads_count(pool_);
            if (inclusive)
                FUZZ_CHECK(fu_pool_is_complete(pool_, generation) == 0,
                           "an inclusive split dispatch on %s completed before its join", name.c_str());
            if (state.chance(15)) { // a join from another thread: misuse on an inclusive pool, a wait otherwise
                state.log->begin(op_foreign_join_k, index, 0, 0);
                fu_status_t foreign = fu_success_k;
                std::thread helper([&]() noexcept { foreign = fu_pool_unsafe_join(pool_, generation); });
                helper.join();
                if (inclusive)
                    FUZZ_CHECK(foreign == fu_invalid_argument_k, "a foreign join on inclusive %s: %s", name.c_str(),
                               fu_status_to_string(foreign));
                else
                    FUZZ_CHECK(foreign == fu_success_k || foreign == fu_stale_generation_k ||
                                   ((read_inclusive || !config.strict_c_tokens) && foreign == fu_invalid_argument_k),
                               "a foreign join on %s: %s", name.c_str(), fu_status_to_string(foreign));
                ++state.counts[op_foreign_join_k], ++state.accepted[op_foreign_join_k];
            }
            fu_status_t const joined = fu_pool_unsafe_join(pool_, generation);
            // An exclusive pool's dispatch completes by itself: another split dispatch (or a terminate) may have
            // superseded its token meanwhile, and the helper may have joined it.
            if (inclusive && config.strict_c_tokens)
                FUZZ_CHECK(joined == fu_success_k, "fu_pool_unsafe_join on %s: %s", name.c_str(),
                           fu_status_to_string(joined));
            else
                FUZZ_CHECK(joined == fu_success_k || joined == fu_stale_generation_k ||
                               (!config.strict_c_tokens && !own && joined == fu_invalid_argument_k),
                           "fu_pool_unsafe_join on %s: %s", name.c_str(), fu_status_to_string(joined));
            if (joined == fu_success_k && (own || config.strict_c_tokens)) // else it may have joined an alias
                FUZZ_CHECK(fu_pool_is_complete(pool_, generation) == 1, "joined split dispatch on %s incomplete",
                           name.c_str());
            else // superseded once complete; the acquire of a completed answer orders the slices' writes
                while (fu_pool_is_complete(pool_, generation) != 1) std::this_thread::yield();
        } else {
            FUZZ_CHECK(generation == 0, "a refused split dispatch on %s wrote generation %zu", name.c_str(),
                       generation);
            FUZZ_CHECK(refusal_allowed(status, own), "fu_pool_unsafe_for_threads on %s: %s", name.c_str(),
                       fu_status_to_string(status));
        }
        check_threads(ledger, threads, status == fu_success_k, name.c_str());
        ++state.counts[op_split_k];
        state.accepted[op_split_k] += status == fu_success_k ? 1 : 0;
    }

    void idle(thread_state_t &state) noexcept override {
        std::uint64_t const r = state.draw();
        int mode = static_cast<int>(r % 6);
        std::uint64_t microseconds = (r >> 8) % 100;
        bool valid = mode <= 3;
        if (mode == 5) mode = 1, microseconds = std::uint64_t(1) << 61, valid = false;
        state.log->begin(op_idle_k, index, 0, mode);
        fu_status_t const status = fu_pool_set_idle_policy(pool_, static_cast<fu_idle_mode_t>(mode), microseconds);
        FUZZ_CHECK((status == fu_success_k) == valid, "fu_pool_set_idle_policy(%d, %" PRIu64 ") on %s: %s", mode,
                   microseconds, name.c_str(), fu_status_to_string(status));
        fu_idle_mode_t current;
        std::uint64_t window = 0;
        FUZZ_CHECK(fu_pool_idle_policy(pool_, &current, &window) == fu_success_k, "fu_pool_idle_policy failed");
        FUZZ_CHECK(fu_pool_set_idle_policy(nullptr, fu_idle_spin_k, 0) == fu_invalid_argument_k, "NULL pool");
        ++state.counts[op_idle_k];
    }

    void query(thread_state_t &state) noexcept override {
        state.log->begin(op_query_k, index, 0, 0);
        std::size_t const threads = fu_pool_threads_count(pool_);
        FUZZ_CHECK(threads <= 12, "%s reports %zu threads", name.c_str(), threads);
        if (state.index == owner) FUZZ_CHECK((threads != 0) == spawned, "%s: threads_count %zu", name.c_str(), threads);
        (void)fu_pool_parked_threads_count(pool_);
        (void)fu_pool_compute_domains_count(pool_);
        (void)fu_pool_memory_usage(pool_);
        ++state.counts[op_query_k];
    }

    void foreign_join(thread_state_t &state) noexcept override { split(state); }

    void probe(probe_t probe) noexcept override {
        std::uint64_t const draw = probe.draw;
        verb_t const verb = static_cast<verb_t>(draw % 4);
        bool const run_on_caller = (draw >> 4) % 4 == 0;
        std::size_t const n = verb == verb_t::threads_k ? 0 : static_cast<std::size_t>((draw >> 8) % probe_tasks_k);
        probe_ledger_t ledger;
        body_t body{this, &ledger, {n, 0}, verb, mix(draw), run_on_caller ? 0 : probe.depth + 1};
        frame_t const *const frame = frame_of(this);
        bool const allowed = frame && may_nest(frame->thread);
        fu_status_t const status = call(verb, n, body, run_on_caller);
        bool const ran = status == fu_success_k;
        if (run_on_caller)
            FUZZ_CHECK(ran, "nested: run-on-caller on %s answered %s", name.c_str(), fu_status_to_string(status));
        else if (frame)
            FUZZ_CHECK(allowed ? ran : status == fu_contended_k,
                       "nested in a callback of %s (thread %zu): a dispatch on it answered %s", name.c_str(),
                       frame->thread, fu_status_to_string(status));
        else if (!ran)
            FUZZ_CHECK(refusal_allowed(status, false), "nested: %s refused with %s", name.c_str(),
                       fu_status_to_string(status));
        probes_made.fetch_add(1, std::memory_order_relaxed);
        probes_accepted.fetch_add(ran && !run_on_caller ? 1 : 0, std::memory_order_relaxed);
        probes_nested_here.fetch_add(ran && frame && !run_on_caller ? 1 : 0, std::memory_order_relaxed);
        if (verb == verb_t::threads_k)
            check_threads(ledger, 0, ran, name.c_str());
        else
            check_tasks(ledger, n, ran, "a nested C dispatch", name.c_str());
    }

    void in_child(thread_state_t &state, bool spawned_at_fork) noexcept override {
        ledger_t &ledger = state.ledger;
        ledger.reset(8);
        body_t body{this, &ledger, {8, 0}, verb_t::n_k, 0, 0};
        fu_status_t const status = fu_pool_for_n(pool_, 8, on_task, &body);
        FUZZ_CHECK(status == fu_forked_k || (!spawned_at_fork && status == fu_not_spawned_k),
                   "child: fu_pool_for_n on inherited %s answered %s", name.c_str(), fu_status_to_string(status));
        check_tasks(ledger, 8, false, "child fu_pool_for_n", name.c_str());
        fu_status_t const fallback = fu_pool_for_n_or_run_on_caller(pool_, 8, on_task, &body);
        FUZZ_CHECK(fallback == fu_success_k, "child: run-on-caller on %s answered %s", name.c_str(),
                   fu_status_to_string(fallback));
        check_tasks(ledger, 8, true, "child run-on-caller", name.c_str());
        std::size_t generation = 1;
        fu_status_t const split = fu_pool_unsafe_for_threads(pool_, on_thread, &body, &generation);
        FUZZ_CHECK(generation == 0 && (split == fu_forked_k || (!spawned_at_fork && split == fu_not_spawned_k)),
                   "child: split dispatch on %s answered %s", name.c_str(), fu_status_to_string(split));
        if (spawned_at_fork)
            FUZZ_CHECK(fu_pool_threads_count(pool_) == 0, "child: inherited %s reports threads", name.c_str());
    }

    void respawn_in_child(thread_state_t &state) noexcept override {
        fu_status_t const terminated = fu_pool_terminate(pool_);
        FUZZ_CHECK(terminated == fu_success_k || terminated == fu_not_spawned_k, "child: terminate of %s: %s",
                   name.c_str(), fu_status_to_string(terminated));
        fu_status_t const status = fu_pool_spawn(live_c, pool_, 2, fu_caller_inclusive_k);
        FUZZ_CHECK(status == fu_success_k, "child: respawn of %s: %s", name.c_str(), fu_status_to_string(status));
        ledger_t &ledger = state.ledger;
        ledger.reset(20);
        body_t body{this, &ledger, {20, 2}, verb_t::n_k, 0, 0};
        fu_status_t const ran = fu_pool_for_n(pool_, 20, on_task, &body);
        FUZZ_CHECK(ran == fu_success_k, "child: dispatch on respawned %s: %s", name.c_str(), fu_status_to_string(ran));
        check_tasks(ledger, 20, true, "child fu_pool_for_n after respawn", name.c_str());
        (void)fu_pool_terminate(pool_);
    }

#if FORKUNION_OS_LINUX
    /**  What the forking callback shares with its dispatcher. */
    struct fork_context_t {
        ledger_t *ledger;
        std::thread::id caller;
        std::atomic<pid_t> child{-1};
    };
    static void forking_task(void *context, size_t task, size_t thread, size_t) noexcept {
        fork_context_t &fork = *static_cast<fork_context_t *>(context);
        fork.ledger->tasks[task].fetch_add(1, std::memory_order_relaxed);
        if (thread == 0 && std::this_thread::get_id() == fork.caller && fork.child.load() == -1) {
            pid_t const pid = ::fork();
            if (pid == 0) is_child.store(true, std::memory_order_relaxed);
            fork.child.store(pid);
        }
    }
#endif

    void fork_in_slice(thread_state_t &state) noexcept override {
        state.log->begin(op_fork_in_slice_k, index, 0, 0);
#if FORKUNION_OS_LINUX
        // The caller of an inclusive pool forks inside its own slice: in the child the dispatch answers `forked`.
        if (!spawned || fu_pool_caller_exclusivity(pool_) != fu_caller_inclusive_k) return;
        std::size_t const n = 1 + state.draw() % 20;
        ledger_t &ledger = state.ledger;
        ledger.reset(n);
        fork_context_t fork{&ledger, std::this_thread::get_id()};
        fu_status_t status;
        {
            fork_lock_t const serialized;
            status = fu_pool_for_n(pool_, n, forking_task, &fork);
        }
        if (is_child.load(std::memory_order_relaxed)) {
            FUZZ_CHECK(status == fu_forked_k, "child forked in its slice of %s: fu_pool_for_n answered %s",
                       name.c_str(), fu_status_to_string(status));
            child_main(state); // exits
        }
        if (status == fu_contended_k) return; // a foreign dispatch held it: nothing ran
        FUZZ_CHECK(status == fu_success_k, "fork in slice of %s: fu_pool_for_n answered %s", name.c_str(),
                   fu_status_to_string(status));
        FUZZ_CHECK(fork.child.load() > 0, "fork in slice of %s: no fork", name.c_str());
        check_tasks(ledger, n, true, "fork in slice", name.c_str());
        reap(fork.child.load(), "a child forked inside its slice of a C pool");
        ++state.counts[op_fork_in_slice_k];
#endif
    }
};

// ---- fork() from a fuzz thread --------------------------------------------------------------------------------

/**  The child's checks: every inherited pool refuses, its fallbacks run here; then it exits (0: all held). */
void child_main(thread_state_t &state) noexcept {
#if FORKUNION_OS_LINUX
    is_child.store(true, std::memory_order_relaxed);
    for (auto &driver : drivers) driver->in_child(state, driver->owner == state.index && driver->spawned);
    // Starting threads allocates: under ASan the allocator's locks may be held by a parent's thread that does not
    // exist here, so the sanitized child stops at the refusals.
    if (!FORKUNION_FUZZ_ASAN)
        for (auto &driver : drivers)
            if (driver->owner == state.index && state.chance(50)) driver->respawn_in_child(state);
    ::_exit(0);
#else
    (void)state;
#endif
}

void fork_op(thread_state_t &state) noexcept {
#if FORKUNION_OS_LINUX
    state.log->begin(op_fork_k, 0, 0, 0);
    pid_t child;
    {
        fork_lock_t const serialized;
        child = ::fork();
    }
    FUZZ_CHECK(child >= 0, "fork failed");
    if (child == 0) child_main(state);
    reap(child, "a child forked from a fuzz thread");
    ++state.counts[op_fork_k];
#else
    (void)state;
#endif
}

// ---- The run ----------------------------------------------------------------------------------------------------

std::atomic<std::uint64_t> ops_left{0};
std::atomic<bool> stop{false};

void fuzz_thread(thread_state_t &state, std::chrono::steady_clock::time_point deadline) noexcept {
    std::size_t const pools = drivers.size();
    for (std::uint64_t turn = 0;; ++turn) {
        if (stop.load(std::memory_order_relaxed)) break;
        if (config.ops) {
            std::uint64_t left = ops_left.load(std::memory_order_relaxed);
            do {
                if (left == 0) break;
            } while (!ops_left.compare_exchange_weak(left, left - 1, std::memory_order_relaxed));
            if (left == 0) break;
        } else if (turn % 16 == 0 && std::chrono::steady_clock::now() >= deadline) {
            break;
        }
        driver_t &driver = *drivers[state.draw() % pools];
        bool const own = driver.owner == state.index;
        std::uint64_t const r = state.draw() % 1000;
        // Per mille: an owner mostly respawns what it terminated; only owners spawn, terminate and fork in a slice.
        if (own && !driver.spawned && r < 400)
            driver.spawn(state);
        else if (r < 25)
            own ? driver.terminate(state) : driver.dispatch(state, false);
        else if (r < 35)
            own ? driver.spawn(state) : driver.dispatch(state, false); // mostly refused: already spawned
        else if (r < 45)
            own &&config.fork ? driver.fork_in_slice(state) : driver.dispatch(state, false);
        else if (r < 49)
            config.fork ? fork_op(state) : driver.dispatch(state, false);
        else if (r < 80)
            driver.foreign_join(state);
        else if (r < 180)
            driver.split(state);
        else if (r < 260)
            driver.dispatch(state, true);
        else if (r < 330)
            driver.idle(state);
        else if (r < 370)
            driver.query(state);
        else
            driver.dispatch(state, false);
        state.log->end();
    }
    // The owner ends what it started.
    for (auto &driver : drivers)
        if (driver->owner == state.index && driver->spawned) driver->terminate(state), state.log->end();
    state.log->finished.store(true);
}

std::uint64_t env_number(char const *name, std::uint64_t fallback) {
    char const *text = std::getenv(name);
    if (!text || !*text) return fallback;
    return std::strtoull(text, nullptr, 0);
}

} // namespace

int main() {
    // The seed first, so that a run that dies in any way can be replayed.
    std::uint64_t const random_seed =
        (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}() ^
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    config.seed = env_number("FORKUNION_API_FUZZ_SEED", random_seed);
    std::printf("api_fuzz: seed %" PRIu64 " (replay: FORKUNION_API_FUZZ_SEED=%" PRIu64 ")\n", config.seed, config.seed);
    std::fflush(stdout);
    config.ops = env_number("FORKUNION_API_FUZZ_OPS", 0);
    char const *seconds = std::getenv("FORKUNION_API_FUZZ_SECONDS");
    config.seconds = seconds && *seconds ? std::strtod(seconds, nullptr) : (config.ops ? 0 : 2);
    config.threads =
        static_cast<unsigned>(std::clamp<std::uint64_t>(env_number("FORKUNION_API_FUZZ_THREADS", 4), 1, 16));
    config.watchdog_s =
        static_cast<unsigned>(std::max<std::uint64_t>(env_number("FORKUNION_API_FUZZ_WATCHDOG_SECONDS", 60), 2));
    config.fork = FORKUNION_OS_LINUX && !fu::sanitize_thread_k && env_number("FORKUNION_API_FUZZ_FORK", 1) != 0;
    config.concurrent_forks = env_number("FORKUNION_API_FUZZ_CONCURRENT_FORKS", 1) != 0;
    config.strict_c_tokens = env_number("FORKUNION_API_FUZZ_STRICT_C_TOKENS", 1) != 0;

    (void)live_topology.try_harvest();
    live_c = fu_topology_new();
    FUZZ_CHECK(live_c != nullptr, "fu_topology_new failed");
#if FORKUNION_OS_LINUX && defined(FORKUNION_SYSFS_FIXTURES_ROOT)
    std::string const root = std::string(FORKUNION_SYSFS_FIXTURES_ROOT) + "/32intel64-2p8co2t+8ve";
    have_recorded =
        recorded_topology.try_harvest_from_sysfs(root.c_str()) && recorded_topology.compute_domains_count() == 2;
    recorded_c = have_recorded ? fu_topology_new_from_sysfs(root.c_str()) : nullptr;
    have_recorded = have_recorded && recorded_c != nullptr;
    // The path is relative to the test's build folder, where ctest runs it: elsewhere the draws differ.
    if (!have_recorded)
        std::printf("api_fuzz: no recorded machine at %s (run it from its build folder, or through ctest, to "
                    "replay a seed of such a run)\n",
                    root.c_str());
#endif

    drivers.emplace_back(new cpp_driver_t<kind_t::flat_k, fu::flat_pool_t>("flat<size_t>"));
    drivers.emplace_back(new cpp_driver_t<kind_t::flat_k, flat_pool_of_t<std::uint8_t>>("flat<uint8_t>"));
    drivers.emplace_back(new cpp_driver_t<kind_t::flat_k, flat_pool_of_t<std::uint16_t>>("flat<uint16_t>"));
    drivers.emplace_back(new cpp_driver_t<kind_t::colocated_k, fu::colocated_pool_t>("colocated<size_t>"));
    drivers.emplace_back(
        new cpp_driver_t<kind_t::colocated_k, fu::basic_colocated_pool_t<fu::default_micro_yield_t, std::uint8_t>>(
            "colocated<uint8_t>"));
    drivers.emplace_back(new cpp_driver_t<kind_t::distributed_k, fu::distributed_pool_t>("distributed<size_t>"));
    drivers.emplace_back(
        new cpp_driver_t<kind_t::distributed_k, fu::basic_distributed_pool_t<fu::default_micro_yield_t, std::uint8_t>>(
            "distributed<uint8_t>"));
    drivers.emplace_back(new c_driver_t("C fu_pool (all)", fu_capabilities_all_k));
    drivers.emplace_back(
        new c_driver_t("C fu_pool (no pinning)", fu_capabilities_all_k & ~fu_capability_thread_pinning_k));
    for (std::size_t i = 0; i != drivers.size(); ++i) {
        drivers[i]->index = static_cast<unsigned>(i);
        drivers[i]->owner = static_cast<unsigned>(i % config.threads);
        pool_names.push_back(drivers[i]->name);
    }

    std::vector<std::unique_ptr<thread_state_t>> states;
    for (unsigned t = 0; t != config.threads; ++t) {
        logs.emplace_back(new op_log_t);
        states.emplace_back(new thread_state_t);
        states.back()->index = t;
        states.back()->rng.seed(mix(config.seed + t));
        states.back()->log = logs.back().get();
    }
    ops_left.store(config.ops);
    auto const start = std::chrono::steady_clock::now();
    auto const deadline = start + std::chrono::microseconds(static_cast<std::int64_t>(config.seconds * 1e6));
    std::vector<std::thread> threads;
    for (unsigned t = 0; t != config.threads; ++t)
        threads.emplace_back([&, t]() noexcept { fuzz_thread(*states[t], deadline); });

    // The watchdog: every fuzz thread must complete an operation within the period.
    std::vector<std::uint64_t> seen(config.threads, ~std::uint64_t(0));
    std::vector<std::chrono::steady_clock::time_point> since(config.threads, start);
    for (;;) {
        bool all_finished = true;
        auto const now = std::chrono::steady_clock::now();
        for (unsigned t = 0; t != config.threads; ++t) {
            op_log_t const &log = *logs[t];
            if (log.finished.load()) continue;
            all_finished = false;
            std::uint64_t const completed = log.completed.load(std::memory_order_relaxed);
            if (completed != seen[t]) seen[t] = completed, since[t] = now;
            if (now - since[t] > std::chrono::seconds(config.watchdog_s)) {
                stop.store(true);
                fail("thread %u made no progress for %u s (a hang)", t, config.watchdog_s);
            }
        }
        if (all_finished) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50)); // a watchdog's period, not a synchronization
    }
    for (auto &thread : threads) thread.join();
    double const elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::array<std::uint64_t, op_count_k> counts{}, accepted{};
    std::array<std::uint64_t, finish_count_k> finishes{};
    std::uint64_t total = 0;
    for (auto const &state : states)
        for (unsigned op = 0; op != op_count_k; ++op) {
            counts[op] += state->counts[op], accepted[op] += state->accepted[op], total += state->counts[op];
            if (op < finish_count_k) finishes[op] += state->finishes[op];
        }
    std::printf("api_fuzz: %" PRIu64 " operations in %.2f s on %u threads over %zu pools (fork %s%s%s, seed %" PRIu64
                ")\n",
                total, elapsed, config.threads, drivers.size(),
                !config.fork              ? "off"
                : config.concurrent_forks ? "on, overlapping"
                                          : "on, serialized",
                config.strict_c_tokens ? "; strict C tokens" : "", have_recorded ? "; recorded two-domain machine" : "",
                config.seed);
    for (unsigned op = 0; op != op_count_k; ++op) {
        bool const dispatches = (op >= op_for_threads_k && op <= op_nested_k) || op == op_foreign_join_k;
        if (dispatches)
            std::printf("  %-16s %10" PRIu64 "  (accepted %" PRIu64 ", refused %" PRIu64 ")\n", op_names_k[op],
                        counts[op], accepted[op], counts[op] - accepted[op]);
        else
            std::printf("  %-16s %10" PRIu64 "\n", op_names_k[op], counts[op]);
    }
    std::printf("  dispatches inside callbacks: %" PRIu64 " (accepted %" PRIu64 ", %" PRIu64
                " of them inside a callback of the same pool)\n",
                probes_made.load(), probes_accepted.load(), probes_nested_here.load());
    std::printf("  guards finished by: join %" PRIu64 ", or_run_on_caller %" PRIu64 ", poll+join %" PRIu64
                ", destroy %" PRIu64 "\n",
                finishes[join_k], finishes[run_on_caller_k], finishes[poll_then_join_k], finishes[destroy_k]);
    drivers.clear();
    fu_topology_delete(live_c);
    fu_topology_delete(recorded_c);
    return 0;
}
