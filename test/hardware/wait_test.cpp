/**
 *  @file   wait_test.cpp
 *  @brief  Tests of `include/forkunion/wait*.hpp`: the micro-waits, the address waits and the nap backend,
 *          `spin_mutex_t`, the kernel waits, and the pool's nap mode (10^5 nap -> dispatch cycles).
 */
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include <forkunion/pools/flat.hpp>
#include <forkunion/hardware/wait.hpp>
#include <forkunion/hardware/wait_kernel.hpp>

#include "test_support.hpp"

namespace fu = forkunion;
using namespace forkunion::testing;

TEST(wait, micro_waits_return) {
    fu::default_micro_yield_t{}();
    fu::standard_yield_t{}();
#if FORKUNION_ARCH_X86
    fu::x86_pause_t{}();
#endif
    struct counting_wait {
        std::size_t *calls;
        void operator()(std::size_t thread) const noexcept { *calls += thread; }
    };
    std::size_t calls = 0;
    counting_wait with_thread{&calls};
    fu::micro_yield_with(with_thread, std::size_t(3));
    EXPECT_EQ(calls, 3u) << "wrappers that take the thread index receive it";
}

TEST(wait, spin_mutex_excludes) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    std::size_t const threads = std::min<std::size_t>(4, fu::allowed_cores_count() + 1);
    constexpr std::size_t increments = 20000;
    // The yielding wrapper keeps an oversubscribed holder from stalling the spinners for whole time slices.
    fu::basic_spin_mutex_t<fu::standard_yield_t> mutex;
    std::size_t counter = 0; // deliberately not atomic: the lock must protect it
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t != threads; ++t)
        workers.emplace_back([&] {
            for (std::size_t i = 0; i != increments; ++i) {
                std::lock_guard<decltype(mutex)> lock(mutex);
                ++counter;
            }
        });
    for (auto &worker : workers) worker.join();
    EXPECT_EQ(counter, threads * increments);
}

TEST(wait, spin_mutex_try_lock) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    fu::spin_mutex_t mutex;
    EXPECT_TRUE(mutex.try_lock());
    EXPECT_FALSE(mutex.try_lock());
    std::atomic<bool> taken_elsewhere{true};
    std::thread other([&] { taken_elsewhere = mutex.try_lock(); });
    other.join();
    EXPECT_FALSE(taken_elsewhere.load());
    mutex.unlock();
    EXPECT_TRUE(mutex.try_lock());
    mutex.unlock();
}

TEST(wait, kernel_wait_returns_on_a_changed_word_and_on_timeout) {
    std::atomic<std::uint32_t> word{7};
    auto const start = std::chrono::steady_clock::now();
    fu::kernel_wait(word, 8, 0);      // the word is not 8: returns at once, even without a timeout
    fu::kernel_wait(word, 7, 20'000); // times out after ~20 ms
    double const waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GE(waited, 0.015) << "a 20 ms timed wait returned after " << waited << " s";
}

TEST(wait, kernel_wake_releases_waiters) {
    FORKUNION_SKIP_UNLESS_THREADS(4); // three sleepers and the waker
    std::atomic<std::uint32_t> word{0};
    std::atomic<std::size_t> woken{0};
    std::vector<std::thread> sleepers;
    for (int i = 0; i != 3; ++i)
        sleepers.emplace_back([&] {
            while (word.load(std::memory_order_acquire) == 0) fu::kernel_wait(word, 0, 0);
            woken.fetch_add(1);
        });
    word.store(1, std::memory_order_release);
    fu::kernel_wake_all(word);
    EXPECT_TRUE(eventually([&] { return woken.load() == 3; }));
    for (auto &sleeper : sleepers) sleeper.join();
}

// ---- Address waits and the nap backend ----

namespace {

/**  An address wait the CPU can run here, type-erased over the word width. */
struct address_wait_t {
    std::string name;
    bool bounded_alone; ///< ends without a write within its bound on this machine (so it may wait alone)
    std::function<void(std::atomic<std::uint8_t> const &, std::uint8_t)> wait8;
    std::function<void(std::atomic<std::uint16_t> const &, std::uint16_t)> wait16;
    std::function<void(std::atomic<std::uint32_t> const &, std::uint32_t)> wait32;
    std::function<void(std::atomic<std::uint64_t> const &, std::uint64_t)> wait64;
};

template <typename wrapper_t>
address_wait_t erase(char const *name, wrapper_t wrapper, bool bounded_alone) {
    return {name,
            bounded_alone,
            [=](auto const &word, auto seen) { wrapper(word, seen); },
            [=](auto const &word, auto seen) { wrapper(word, seen); },
            [=](auto const &word, auto seen) { wrapper(word, seen); },
            [=](auto const &word, auto seen) { wrapper(word, seen); }};
}

/**  Every address wait this CPU supports: the wrapper's `required_k` is usable (plain `WFE` runs on every
 *   AArch64 core; its bound, the event stream, decides only whether it may wait with no writer). */
std::vector<address_wait_t> supported_address_waits() {
    std::vector<address_wait_t> waits;
#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
    if (fu::capabilities_usable(fu::x86_umwait_t::required_k))
        waits.push_back(erase("x86_umwait_t", fu::x86_umwait_t{}, true));
#endif
#if FORKUNION_ARCH_ARM64 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
    waits.push_back(erase("arm64_wfe_t", fu::arm64_wfe_t{}, fu::capabilities_usable(fu::arm64_wfe_t::required_k)));
    if (fu::capabilities_usable(fu::arm64_wfet_t::required_k))
        waits.push_back(erase("arm64_wfet_t", fu::arm64_wfet_t{}, true));
#endif
#if FORKUNION_ARCH_RISCV && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
    if (fu::capabilities_usable(fu::riscv_wrs_t::required_k))
        waits.push_back(erase("riscv_wrs_t", fu::riscv_wrs_t{}, true));
#endif
    return waits;
}

/**  Two threads hand a token back and forth through `word`, each waiting for its turn with `wait`: every
 *   write must end the other's wait (or its bound must), so `rounds` handoffs complete with the exact count. */
template <typename value_t, typename wait_t>
bool ping_pong(wait_t const &wait, std::size_t rounds) {
    // A neighbour on the same 4-byte word and line: sub-word waits must watch only their own bytes.
    struct alignas(64) line_t {
        std::atomic<value_t> word{0};
        std::atomic<value_t> neighbour{0};
    } line;
    auto play = [&](value_t parity) {
        for (std::size_t round = parity; round < 2 * rounds; round += 2) {
            value_t const turn = static_cast<value_t>(round);
            // Acquire pairs with the other player's release: its turn happened-before ours.
            for (value_t seen; (seen = line.word.load(std::memory_order_acquire)) != turn;) wait(line.word, seen);
            line.neighbour.store(static_cast<value_t>(~turn), std::memory_order_relaxed);
            line.word.store(static_cast<value_t>(turn + 1), std::memory_order_release);
        }
    };
    std::thread other(play, value_t(1));
    play(value_t(0));
    other.join();
    return line.word.load() == static_cast<value_t>(2 * rounds);
}

} // namespace

TEST(wait, nap_backend_is_the_best_usable_address_wait) {
    char const *const instruction = fu::nap_backend_t::instruction();
    char const *expected = nullptr;
    if (fu::arch_x86_k && !fu::portable_k && fu::with_waitpkg_k &&
        fu::capabilities_usable(fu::capability_x86_waitpkg_k))
        expected = "UMONITOR+UMWAIT";
    if (fu::arch_arm64_k && !fu::portable_k) {
        if (fu::with_wfxt_k && fu::capabilities_usable(fu::capability_arm64_wfxt_k))
            expected = "LDXR+WFET";
        else if (fu::capabilities_usable(fu::capability_arm64_evtstrm_k))
            expected = "LDXR+WFE";
    }
    if (fu::arch_riscv_k && !fu::portable_k && fu::with_zawrs_k &&
        fu::capabilities_usable(fu::capability_riscv_zawrs_k))
        expected = "LR+WRS.STO";
    EXPECT_EQ(std::string(instruction ? instruction : "micro-wait"), std::string(expected ? expected : "micro-wait"));

    // `nap_on` falls back to exactly one micro-wait where there is no address wait, and to none where there is.
    struct counting_wait {
        std::size_t calls = 0;
        void operator()() noexcept { ++calls; }
    } micro;
    std::atomic<std::uint32_t> word{5};
    fu::nap_on(word, std::uint32_t(5), micro);
    EXPECT_EQ(micro.calls, instruction ? 0u : 1u);
    fu::nap_on(word, std::uint32_t(6), micro); // already changed: returns after the backend's re-check
    EXPECT_EQ(micro.calls, instruction ? 0u : 2u);
}

TEST(wait, micro_waits_the_cpu_supports_return) {
    std::vector<std::pair<char const *, std::function<void()>>> waits{
        {"standard_yield_t", fu::standard_yield_t{}}, {"default_micro_yield_t", fu::default_micro_yield_t{}}};
#if FORKUNION_ARCH_ARM64
    waits.push_back({"arm64_yield_t", fu::arm64_yield_t{}});
#endif
#if FORKUNION_ARCH_RISCV
    waits.push_back({"riscv_pause_t", fu::riscv_pause_t{}});
#endif
#if FORKUNION_ARCH_X86 && FORKUNION_INLINE_ASM && !FORKUNION_PORTABLE
    if (fu::capabilities_usable(fu::x86_tpause_t::required_k)) waits.push_back({"x86_tpause_t", fu::x86_tpause_t{}});
#endif
    for (auto &[name, wait] : waits) {
        for (int i = 0; i != 1000; ++i) wait();
        SUCCEED() << name << " returned 1000 times";
    }
}

TEST(wait, address_waits_return_at_once_when_the_word_already_changed) {
    for (address_wait_t const &wait : supported_address_waits()) {
        std::atomic<std::uint8_t> w8{1};
        std::atomic<std::uint16_t> w16{1};
        std::atomic<std::uint32_t> w32{1};
        std::atomic<std::uint64_t> w64{1};
        // The re-check after arming sees that the word is not `seen`; with no writer, nothing else would end
        // an untimed wait, so returning proves the re-check.
        for (int i = 0; i != 1000; ++i)
            wait.wait8(w8, 2), wait.wait16(w16, 2), wait.wait32(w32, 2), wait.wait64(w64, 2);
        SUCCEED() << wait.name;
    }
}

TEST(wait, address_waits_end_within_their_bound_without_a_writer) {
    for (address_wait_t const &wait : supported_address_waits()) {
        if (!wait.bounded_alone) continue; // plain WFE without the event stream: only writes end it (next test)
        std::atomic<std::uint32_t> w32{1};
        std::atomic<std::uint64_t> w64{1};
        // Each call sleeps at most its bound (tens of microseconds): 1000 of them return, or ctest's timeout fails.
        for (int i = 0; i != 1000; ++i) wait.wait32(w32, 1), wait.wait64(w64, 1);
        SUCCEED() << wait.name;
    }
}

TEST(wait, address_waits_wake_on_every_write_at_every_width) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    for (address_wait_t const &wait : supported_address_waits()) {
        EXPECT_TRUE(ping_pong<std::uint8_t>(wait.wait8, 2000)) << wait.name;
        EXPECT_TRUE(ping_pong<std::uint16_t>(wait.wait16, 2000)) << wait.name;
        EXPECT_TRUE(ping_pong<std::uint32_t>(wait.wait32, 2000)) << wait.name;
        EXPECT_TRUE(ping_pong<std::uint64_t>(wait.wait64, 2000)) << wait.name;
    }
    // The nap step itself, whatever backend or fallback it takes.
    auto nap = [](auto const &word, auto seen) {
        fu::default_micro_yield_t micro;
        fu::nap_on(word, seen, micro);
    };
    EXPECT_TRUE(ping_pong<std::uint8_t>(nap, 2000));
    EXPECT_TRUE(ping_pong<std::uint64_t>(nap, 2000));
}

// ---- The pool's nap mode ----

namespace {

/**  Counts each thread's calls; asserted on the main thread. */
struct per_thread_counts {
    explicit per_thread_counts(std::size_t threads) : counts(threads) {}
    std::vector<std::atomic<std::size_t>> counts;
    void operator()(std::size_t thread) noexcept { counts[thread].fetch_add(1, std::memory_order_relaxed); }
};

} // namespace

TEST(wait, no_dispatch_is_lost_across_nap_dispatch_cycles) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    constexpr std::size_t cycles = 100'000;
    fu::flat_pool_t pool;
    ASSERT_TRUE(pool.spawn(2));
    per_thread_counts counts(pool.threads_count());
    std::size_t wrong_idle_mode = 0;
    fu::default_micro_yield_t micro;
    for (std::size_t cycle = 0; cycle != cycles; ++cycle) {
        // Set before every dispatch (a store and a look at the parked count: no wake-up, nobody is parked).
        ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
        // A varying pause before the dispatch, so the worker is caught at every point of its nap: before the
        // idle mode read, arming, re-checking, and inside the wait.
        for (std::size_t pause = 0; pause != cycle % 64; ++pause) micro();
        forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept { counts(thread); }).join());
        wrong_idle_mode += pool.idle_policy().mode != fu::idle_mode_t::nap_k;
    }
    for (std::size_t thread = 0; thread != pool.threads_count(); ++thread)
        EXPECT_EQ(counts.counts[thread].load(), cycles) << "thread " << thread << " missed a dispatch";
    EXPECT_EQ(wrong_idle_mode, 0u) << "the nap policy outlives the dispatches";
}

TEST(wait, idle_policy_changes_compose_with_dispatches) {
    FORKUNION_SKIP_UNLESS_THREADS(3);
    for (fu::caller_exclusivity_t exclusivity : {fu::caller_inclusive_k, fu::caller_exclusive_k}) {
        fu::flat_pool_t pool;
        ASSERT_TRUE(pool.spawn(3, exclusivity));
        per_thread_counts counts(pool.threads_count());
        constexpr std::size_t cycles = 2000;
        for (std::size_t cycle = 0; cycle != cycles; ++cycle) {
            switch (cycle % 5) {
            case 0:
                ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
                break;
            case 1:
                ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(0)));
                break;
            case 2: // nap, then sleep before the workers notice
                ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
                ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(1'000'000)));
                break;
            case 3: // and back
                ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::sleep(0)));
                ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
                break;
            default: // spin, or adaptive with a window the loop's gaps sometimes exceed
                ASSERT_TRUE(
                    pool.set_idle_policy(cycle % 2 ? fu::idle_policy_t::spin() : fu::idle_policy_t::adaptive(2)));
                break;
            }
            forkunion::testing::require_ran(
                pool.for_threads([&](std::size_t thread) noexcept { counts(thread); }).join());
        }
        for (std::size_t thread = 0; thread != pool.threads_count(); ++thread)
            EXPECT_EQ(counts.counts[thread].load(), cycles) << "thread " << thread;
        // Terminating a napping pool wakes and joins every worker.
        ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
        pool.terminate();
        EXPECT_EQ(pool.threads_count(), 0u);
        EXPECT_TRUE(pool.spawn(2, exclusivity));
    }
}

namespace {
/**  A micro-wait that takes the waiting thread's index, the shape `micro_yield(thread)` documents. */
struct thread_aware_yield_t {
    static inline std::atomic<std::size_t> calls{0};
    void operator()(std::size_t) const noexcept { calls.fetch_add(1, std::memory_order_relaxed); }
};
} // namespace

TEST(wait, napping_pools_accept_a_thread_aware_micro_wait) {
    FORKUNION_SKIP_UNLESS_THREADS(2);
    // `nap()` falls back to the pool's micro-wait where the CPU has no address monitor; a wrapper that takes the
    // thread index must work there as it does while spinning.
    fu::basic_pool_t<std::allocator<std::thread>, thread_aware_yield_t> pool;
    ASSERT_TRUE(pool.spawn(2));
    per_thread_counts counts(pool.threads_count());
    ASSERT_TRUE(pool.set_idle_policy(fu::idle_policy_t::nap()));
    for (std::size_t cycle = 0; cycle != 1000; ++cycle) {
        forkunion::testing::require_ran(pool.for_threads([&](std::size_t thread) noexcept { counts(thread); }).join());
    }
    for (std::size_t thread = 0; thread != pool.threads_count(); ++thread)
        EXPECT_EQ(counts.counts[thread].load(), 1000u) << "thread " << thread;
}
