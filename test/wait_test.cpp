/**
 *  @file   wait_test.cpp
 *  @brief  Tests of `include/forkunion/wait*.hpp`: the micro-waits, `spin_mutex_t`, and the kernel waits.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <forkunion/wait.hpp>
#include <forkunion/wait_kernel.hpp>

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
    counting_wait with_thread {&calls};
    fu::micro_yield_with(with_thread, std::size_t(3));
    EXPECT_EQ(calls, 3u) << "wrappers that take the thread index receive it";
}

TEST(wait, spin_mutex_excludes) {
    std::size_t const threads = std::min<std::size_t>(4, fu::allowed_cores_count() + 1);
    constexpr std::size_t increments = 20000;
    // The yielding wrapper keeps an oversubscribed holder from stalling the spinners for whole time slices.
    fu::basic_spin_mutex<fu::standard_yield_t> mutex;
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
    fu::spin_mutex_t mutex;
    EXPECT_TRUE(mutex.try_lock());
    EXPECT_FALSE(mutex.try_lock());
    std::atomic<bool> taken_elsewhere {true};
    std::thread other([&] { taken_elsewhere = mutex.try_lock(); });
    other.join();
    EXPECT_FALSE(taken_elsewhere.load());
    mutex.unlock();
    EXPECT_TRUE(mutex.try_lock());
    mutex.unlock();
}

TEST(wait, kernel_wait_returns_on_a_changed_word_and_on_timeout) {
    std::atomic<std::uint32_t> word {7};
    auto const start = std::chrono::steady_clock::now();
    fu::kernel_wait(word, 8, 0); // the word is not 8: returns at once, even without a timeout
    fu::kernel_wait(word, 7, 20'000); // times out after ~20 ms
    double const waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GE(waited, 0.015) << "a 20 ms timed wait returned after " << waited << " s";
}

TEST(wait, kernel_wake_releases_waiters) {
    std::atomic<std::uint32_t> word {0};
    std::atomic<std::size_t> woken {0};
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
