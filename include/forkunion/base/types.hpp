/**
 *  @file   forkunion/base/types.hpp
 *  @brief  Vocabulary shared by every layer: versions, target macros, statuses, prongs and the static split.
 *
 *  This is the bottom layer: it includes only standard headers and holds no platform code. Everything
 *  here is a plain value type or a pure `constexpr` function, so the scheduling arithmetic can be swept
 *  exhaustively at `std::uint8_t` without a single thread (see `test/pools/sweep_test.cpp`).
 *
 *  - `status_t`: what every fallible call returns; `[[nodiscard]]`, names its code, explicit `bool` (true = ok).
 *  - `caller_exclusivity_t`: whether the dispatching thread is thread 0 (`caller_inclusive_k`) or only submits
 *    and joins (`caller_exclusive_k`).
 *  - `prong_t<index_t>`: the (task, thread, compute domain) triple handed to callbacks; converts implicitly
 *    to its task index, so `[](auto task)` works whichever shape a pool passes.
 *  - `static_slice(n, threads, thread)`: the contiguous block of `for_n` and `for_slices`.
 *  - `coprime_stride(count, seed)` and `next_in_coprime_order(...)`: the order in which `for_n_dynamic` thieves
 *    visit other threads' cursors.
 */
#pragma once
#include <cstddef>     // `std::size_t`
#include <cstdint>     // `std::uint8_t`
#include <type_traits> // `std::is_unsigned_v`

#include <forkunion/base/deprecated.hpp>

/*  Versions. CMake reads these three lines to stamp the package, so they are the single source of truth. */
#define FORKUNION_VERSION_MAJOR 0
#define FORKUNION_VERSION_MINOR 1
#define FORKUNION_VERSION_PATCH 0

/*  Target architecture, as 0/1 macros (tested with `#if`, never `#ifdef`), mirrored below as `constexpr bool`. These
 * describe what the compiler emits for; what the CPU offers at run time is the business of
 * `forkunion/hardware/capabilities.hpp`. */
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__) || defined(_M_IX86)
#define FORKUNION_ARCH_X86 1
#else
#define FORKUNION_ARCH_X86 0
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
#define FORKUNION_ARCH_ARM64 1
#else
#define FORKUNION_ARCH_ARM64 0
#endif
#if defined(__arm__) || defined(_M_ARM)
#define FORKUNION_ARCH_ARM32 1
#else
#define FORKUNION_ARCH_ARM32 0
#endif
#if defined(__riscv)
#define FORKUNION_ARCH_RISCV 1
#else
#define FORKUNION_ARCH_RISCV 0
#endif
#if defined(__s390x__) || defined(__s390__)
#define FORKUNION_ARCH_S390X 1
#else
#define FORKUNION_ARCH_S390X 0
#endif
#if defined(__linux__)
#define FORKUNION_OS_LINUX 1
#else
#define FORKUNION_OS_LINUX 0
#endif
#if defined(_WIN32)
#define FORKUNION_OS_WINDOWS 1
#else
#define FORKUNION_OS_WINDOWS 0
#endif
#if defined(__EMSCRIPTEN__)
#define FORKUNION_OS_WASM 1
#else
#define FORKUNION_OS_WASM 0
#endif
/*  POSIX threads (`pthread_create` with attributes, `pthread_atfork`): Linux, the BSDs and macOS, MinGW-w64's
 *  winpthreads, and emscripten (whose pthreads exist with `-pthread` and refuse to start a thread without it). */
#if defined(__unix__) || defined(__unix) || defined(__APPLE__) || defined(__MINGW32__) || defined(__EMSCRIPTEN__)
#define FORKUNION_OS_POSIX_THREADS 1
#else
#define FORKUNION_OS_POSIX_THREADS 0
#endif

/*  Whether this translation unit may throw: 1 unless exceptions are off (`-fno-exceptions`, `/EHs-`). Taken from
 *  the compiler, not a setting: callbacks must be nothrow-invocable wherever it is 1.
 *
 *  The library's own exception sites are written with the three macros below, so that every header compiles
 *  either way (Clang refuses `try` even in a template that is never instantiated):
 *  - `FORKUNION_TRY { ... } FORKUNION_CATCH(type) { ... } FORKUNION_CATCH_ALL { ... }`: with exceptions, the
 *    `try` / `catch` it reads as; without, the `try` block runs and the handlers compile but never run, since
 *    nothing can throw there (a refused `std::thread` or allocation ends the program inside the standard
 *    library). `FORKUNION_CATCH` takes a type without a name: a handler cannot use the exception object.
 *  - `FORKUNION_THROW(exception)`: throws it; without exceptions, calls `std::abort()`. Used only where the
 *    interface has no status to return (an STL allocator's `allocate`): each such site documents it. */
#if defined(__cpp_exceptions) || defined(_CPPUNWIND)
#define FORKUNION_EXCEPTIONS 1
#define FORKUNION_TRY try
#define FORKUNION_CATCH(type) catch (type)
#define FORKUNION_CATCH_ALL catch (...)
#define FORKUNION_THROW(exception) throw exception
#else
#include <cstdlib> // `std::abort`
#define FORKUNION_EXCEPTIONS 0
#define FORKUNION_TRY if (true)
#define FORKUNION_CATCH(type) else if (false)
#define FORKUNION_CATCH_ALL else
#define FORKUNION_THROW(exception) std::abort()
#endif

namespace forkunion {

inline constexpr int version_major_k = FORKUNION_VERSION_MAJOR;
inline constexpr int version_minor_k = FORKUNION_VERSION_MINOR;
inline constexpr int version_patch_k = FORKUNION_VERSION_PATCH;

inline constexpr bool arch_x86_k = FORKUNION_ARCH_X86;
inline constexpr bool arch_arm64_k = FORKUNION_ARCH_ARM64;
inline constexpr bool arch_arm32_k = FORKUNION_ARCH_ARM32;
inline constexpr bool arch_riscv_k = FORKUNION_ARCH_RISCV;
inline constexpr bool arch_s390x_k = FORKUNION_ARCH_S390X;
inline constexpr bool os_linux_k = FORKUNION_OS_LINUX;
inline constexpr bool os_windows_k = FORKUNION_OS_WINDOWS;
inline constexpr bool os_wasm_k = FORKUNION_OS_WASM;
inline constexpr bool os_posix_threads_k = FORKUNION_OS_POSIX_THREADS;

/**
 *  @brief  Padding for every contended word of a pool.
 *
 *  128 bytes, not the 64 of `std::hardware_destructive_interference_size`: Intel parts since Sandy Bridge and
 *  many Arm server cores fetch cache lines in adjacent pairs (the "spatial prefetcher"), so two hot words 64 bytes
 *  apart still ping-pong. Folly's `cacheline_align` and Java's `@Contended` pick 128 for the same reason. IBM Z has
 *  256-byte lines, so there the pair would be 512; one whole line of 256 is what we take, as the pair prefetcher
 *  is an x86/Arm effect.
 */
inline constexpr std::size_t default_alignment_k = arch_s390x_k ? 256 : 128;

/**
 *  @brief  One past the largest NUMA node id the topology and the allocators accept: ids `0 .. 1023`.
 *
 *  Linux's `MAX_NUMNODES` is `1 << CONFIG_NODES_SHIFT`, and `NODES_SHIFT` is at most 10 on every architecture, so
 *  a node mask of this many bits (128 bytes) holds any node the kernel can name.
 */
inline constexpr std::size_t max_numa_nodes_k = 1024;

/**
 *  @brief  Whether the thread that dispatches also works.
 *
 *  - `caller_inclusive_k`: the dispatching thread is thread 0 and runs its share inside `join()` (or the guard's
 *    destructor); `spawn(n)` starts `n - 1` workers.
 *  - `caller_exclusive_k`: `spawn(n)` starts `n` workers; the caller only submits, may overlap its own work,
 *    polls `is_complete()` and joins.
 */
enum class caller_exclusivity_t : std::uint8_t {
    caller_inclusive_k = 0,
    caller_exclusive_k = 1,
};
inline constexpr caller_exclusivity_t caller_inclusive_k = caller_exclusivity_t::caller_inclusive_k;
inline constexpr caller_exclusivity_t caller_exclusive_k = caller_exclusivity_t::caller_exclusive_k;

/**
 *  @brief  How a pool's idle workers wait for the next dispatch: a persistent property of the pool
 *          (`set_idle_policy`), kept across dispatches and respawns.
 *
 *  | mode          | an idle worker ...                                              | wake-up cost          |
 *  | ------------- | --------------------------------------------------------------- | --------------------- |
 *  | `spin_k`      | runs the micro-wait (`PAUSE`, `YIELD`) in a loop                 | a cache-line transfer |
 *  | `adaptive_k`  | spins for `microseconds`, then parks in the kernel               | spin, or one wake-up  |
 *  | `nap_k`       | light-sleeps on the generation line (UMWAIT, WFET, WFE, WRS.STO) | a few microseconds    |
 *  | `sleep_k`     | parks in the kernel at once; with `microseconds > 0` it also     | one kernel wake-up    |
 *  |               | wakes that often to look                                         |                       |
 *
 *  A parked worker costs no CPU; the dispatch that finds workers parked wakes them with one system call
 *  (`futex` on Linux). Back-to-back dispatches never park, so they never make that call.
 */
enum class idle_mode_t : std::uint8_t {
    spin_k = 0,     ///< Never leave the core: the lowest latency, a full core per idle worker.
    adaptive_k = 1, ///< Spin for a window after each dispatch, then park: the default.
    nap_k = 2,      ///< Light sleep on the CPU's address monitor where it has one, the micro-wait elsewhere.
    sleep_k = 3,    ///< Park in the kernel as soon as idle.
};

/**
 *  @brief  The default window of `idle_mode_t::adaptive_k`: 100 µs of spinning before a worker parks.
 *
 *  A kernel wake-up (futex wake to the worker running) costs 12-90 µs on a 2-vCPU KVM guest on AMD Zen 5
 *  (`forkunion_bench_wake`, median and p99), so spinning about as long as one wake-up costs keeps an idle worker
 *  within twice the optimum whatever the next gap turns out to be, while a pool idle for longer than 100 µs stops
 *  taking a core from the rest of the process (an OpenMP region, the serial code between dispatches).
 */
inline constexpr std::uint64_t default_idle_window_us_k = 100;

/**  @brief  An idle mode and its one parameter: the spin window of `adaptive_k`, the re-check period of `sleep_k`. */
struct idle_policy_t {
    idle_mode_t mode = idle_mode_t::adaptive_k;
    std::uint64_t microseconds = default_idle_window_us_k; ///< `adaptive_k`: the window; `sleep_k`: 0 or a period.

    constexpr bool operator==(idle_policy_t const &) const noexcept = default;
    /**  @brief  A mode of `idle_mode_t` and fewer than 2^61 microseconds (what a pool's packed word holds). */
    constexpr bool valid() const noexcept {
        return static_cast<std::uint8_t>(mode) <= static_cast<std::uint8_t>(idle_mode_t::sleep_k) &&
               microseconds < (std::uint64_t(1) << 61);
    }

    static constexpr idle_policy_t spin() noexcept { return {idle_mode_t::spin_k, 0}; }
    static constexpr idle_policy_t adaptive(std::uint64_t window_us = default_idle_window_us_k) noexcept {
        return {idle_mode_t::adaptive_k, window_us};
    }
    static constexpr idle_policy_t nap() noexcept { return {idle_mode_t::nap_k, 0}; }
    static constexpr idle_policy_t sleep(std::uint64_t period_us = 0) noexcept {
        return {idle_mode_t::sleep_k, period_us};
    }
};

/**  @brief  The canonical name of an idle mode (`"adaptive"`), `"unknown"` for a value outside the enum. */
constexpr char const *idle_mode_name(idle_mode_t mode) noexcept {
    switch (mode) {
    case idle_mode_t::spin_k:
        return "spin";
    case idle_mode_t::adaptive_k:
        return "adaptive";
    case idle_mode_t::nap_k:
        return "nap";
    case idle_mode_t::sleep_k:
        return "sleep";
    }
    return "unknown";
}

/**
 *  @brief  Every outcome a fallible call can report. Values match `fu_status_t` of the C API one to one:
 *          zero is success and failures are negative, so `< 0` tests for any failure in C.
 */
enum class status_code_t : int {
    success_k = 0,
    bad_alloc_k = -1,         ///< An allocation failed (thread table, memory on a domain, a mapping).
    invalid_argument_k = -2,  ///< Zero threads, a null callback, an out-of-range domain, a malformed value.
    already_spawned_k = -3,   ///< `spawn` on a pool that has threads; `terminate` first.
    not_spawned_k = -4,       ///< A dispatch on a pool with no threads (never spawned or terminated).
    thread_refused_k = -5,    ///< The OS refused to start a thread; the ones that did start were joined.
    contended_k = -6,         ///< The pool runs another dispatch: a concurrent or nested dispatch is refused.
    unsupported_k = -7,       ///< The platform or the build lacks the feature asked for.
    placement_refused_k = -8, ///< The OS refused to bind memory or threads where asked.
    stale_generation_k = -9,  ///< A generation that does not name the current or a finished dispatch.
    forked_k = -10,           ///< The pool was spawned by the parent of this `fork()`ed process: its threads are gone.
};

/**  @brief  The canonical name of a status code, e.g. `"contended"`; never null. */
constexpr char const *status_name(status_code_t code) noexcept {
    switch (code) {
    case status_code_t::success_k:
        return "success";
    case status_code_t::bad_alloc_k:
        return "bad_alloc";
    case status_code_t::invalid_argument_k:
        return "invalid_argument";
    case status_code_t::already_spawned_k:
        return "already_spawned";
    case status_code_t::not_spawned_k:
        return "not_spawned";
    case status_code_t::thread_refused_k:
        return "thread_refused";
    case status_code_t::contended_k:
        return "contended";
    case status_code_t::unsupported_k:
        return "unsupported";
    case status_code_t::placement_refused_k:
        return "placement_refused";
    case status_code_t::stale_generation_k:
        return "stale_generation";
    case status_code_t::forked_k:
        return "forked";
    }
    return "unknown";
}

/**
 *  @brief  The result of a fallible call: `[[nodiscard]]`, explicitly convertible to `bool` (true on success),
 *          so `if (!pool.spawn(n))` reads naturally and a dropped result warns.
 */
class [[nodiscard]] status_t {
    status_code_t code_ = status_code_t::success_k;

public:
    constexpr status_t() noexcept = default;
    constexpr status_t(status_code_t code) noexcept : code_(code) {} // NOLINT(google-explicit-constructor)
    constexpr explicit operator bool() const noexcept { return code_ == status_code_t::success_k; }
    constexpr status_code_t code() const noexcept { return code_; }
    constexpr char const *name() const noexcept { return status_name(code_); }
    constexpr bool operator==(status_t const &) const noexcept = default;
    constexpr bool operator==(status_code_t other) const noexcept { return code_ == other; }
};

/**  @brief  The canonical name of a status, e.g. `"contended"`; never null. */
constexpr char const *to_string(status_t status) noexcept {
    return status.name();
}

namespace detail {
/**  This thread's latest refusal reason: a string literal, written only on `invalid_argument` paths. */
inline thread_local char const *refusal_reason = "";
} // namespace detail

/**
 *  @brief  Why the latest call on this thread that returned `invalid_argument` refused: which argument and why,
 *          e.g. `"distributed spawn: threads is below the topology's compute domains; each domain needs at
 *          least one thread (use a colocated pool for fewer)"`. Never null; `""` before any refusal on this thread.
 *
 *  The contract of `errno`: each call that returns `invalid_argument` sets it before returning, and nothing else
 *  writes it (no success path, no dispatch that runs, no other status), so it is meaningful right after such a
 *  refusal and stale after anything else. Thread-local: a refusal on one thread never changes another's. The
 *  reasons are string literals: reading or keeping the pointer allocates nothing and stays valid for the life of
 *  the program. Every `invalid_argument` of the pools (`spawn`, `spawn_on`, the idle policy and stack size setters,
 *  a dispatch whose count the index type cannot hold, a `join` from another thread), of `try_parse_capabilities`,
 *  of the symmetric allocator, of the fabric's `try_harvest` and of the argument checks of `affinity.hpp` sets it
 *  (an `invalid_argument` the OS itself answers, such as a thread that exited, has no reason here).
 */
inline char const *last_refusal_reason() noexcept {
    return detail::refusal_reason;
}

namespace detail {
/**  Records `reason` (a string literal) for `last_refusal_reason` and returns `invalid_argument`. */
[[gnu::cold, gnu::noinline]] inline status_code_t refuse(char const *reason) noexcept {
    refusal_reason = reason;
    return status_code_t::invalid_argument_k;
}
/**  `refuse` with the reason `policy` is not `valid()`. */
inline status_code_t refuse_idle_policy(idle_policy_t policy) noexcept {
    return refuse(static_cast<std::uint8_t>(policy.mode) > static_cast<std::uint8_t>(idle_mode_t::sleep_k)
                      ? "set_idle_policy: policy.mode is not a value of idle_mode_t"
                      : "set_idle_policy: policy.microseconds is 2^61 or more, more than a pool's policy word holds");
}
} // namespace detail

/**
 *  @brief  What a callback learns about the task it runs: the task (or, for `for_threads`, the thread) index,
 *          the thread running it, and the compute domain that thread lives in (0 for a flat pool).
 *
 *  Converts implicitly to `task`, so a callback written for an index also accepts a prong. 3 words, passed in
 *  registers on every mainstream ABI.
 */
template <typename index_type_ = std::size_t>
struct prong_t {
    using index_t = index_type_;
    index_t task = 0;
    index_t thread = 0;
    index_t compute_domain = 0;

    constexpr operator index_t() const noexcept { return task; } // NOLINT(google-explicit-constructor)
};

/**  @brief  A contiguous run of tasks: `[first, first + count)`. */
template <typename index_type_ = std::size_t>
struct slice_t {
    using index_t = index_type_;
    index_t first = 0;
    index_t count = 0;
    constexpr bool operator==(slice_t const &) const noexcept = default;
};

/**
 *  @brief  The static split of `for_n` and `for_slices`: thread `thread` of `threads` gets the block starting at
 *          `q * thread + min(thread, r)` of length `q + (thread < r)`, where `q = n / threads`, `r = n % threads`.
 *
 *  No intermediate exceeds `n`, so it is exact for any `n` representable in `index_t`.
 *  @pre    `threads > 0` and `thread < threads`.
 */
template <typename index_t>
constexpr slice_t<index_t> static_slice(index_t n, index_t threads, index_t thread) noexcept {
    static_assert(std::is_unsigned_v<index_t>, "indices are unsigned");
    index_t const quotient = static_cast<index_t>(n / threads);
    index_t const remainder = static_cast<index_t>(n % threads);
    index_t const extra = thread < remainder ? thread : remainder;
    // `quotient * thread + extra` is the sum of the lengths of the blocks before this one, hence `<= n`.
    index_t const first = static_cast<index_t>(quotient * thread + extra);
    index_t const count = static_cast<index_t>(quotient + (thread < remainder ? 1 : 0));
    return {first, count};
}

/**  @brief  Greatest common divisor by Euclid; `gcd(0, b) == b`. */
template <typename index_t>
constexpr index_t greatest_common_divisor(index_t a, index_t b) noexcept {
    while (b != 0) {
        index_t const next = static_cast<index_t>(a % b);
        a = b;
        b = next;
    }
    return a;
}

/**
 *  @brief  A stride in `[1, count)` coprime with `count`, seeded by `seed` (a thread index), so thieves that start
 *          from different threads also walk in different orders and do not queue behind one victim.
 *
 *  Starts from `1 + seed % (count - 1)` and walks up to the next coprime value, wrapping to 1 (always coprime).
 *  For `count <= 2` the answer is 1.
 */
template <typename index_t>
constexpr index_t coprime_stride(index_t count, index_t seed) noexcept {
    static_assert(std::is_unsigned_v<index_t>, "indices are unsigned");
    if (count <= 2) return 1;
    index_t const span = static_cast<index_t>(count - 1); // strides live in [1, count - 1]
    index_t stride = static_cast<index_t>(1 + seed % span);
    while (greatest_common_divisor<index_t>(stride, count) != 1)
        stride = stride == span ? index_t(1) : static_cast<index_t>(stride + 1);
    return stride;
}

/**
 *  @brief  The position after `position` in the cyclic walk `position + k * stride (mod count)`, computed
 *          without ever exceeding `count - 1`, so it cannot wrap even at `count == max(index_t)`.
 *
 *  With `stride` coprime to `count`, `count - 1` steps from any start visit every other position exactly once.
 *  @pre    `position < count` and `stride < count`.
 */
template <typename index_t>
constexpr index_t next_in_coprime_order(index_t position, index_t stride, index_t count) noexcept {
    index_t const room = static_cast<index_t>(count - stride); // steps left before `position + stride` wraps
    return position >= room ? static_cast<index_t>(position - room) : static_cast<index_t>(position + stride);
}

} // namespace forkunion
