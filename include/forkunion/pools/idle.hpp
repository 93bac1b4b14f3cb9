/**
 *  @file   forkunion/pools/idle.hpp
 *  @brief  What a pool's idle workers share: the idle policy packed into one word, and the adaptive policy's
 *          window of spinning time.
 *
 *  A pool stores its `idle_policy_t` as one 64-bit word (`pack_idle_policy`), so that a reader sees a mode and its
 *  parameter together with one load. An adaptive worker spins for the policy's window, counted in time spent
 *  spinning, then parks: `adaptive_window_t` keeps that count for one idle stretch of one thread.
 */
#pragma once
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/base/types.hpp>
#include <forkunion/hardware/threads.hpp>

namespace forkunion::detail {

/**  The word a pool keeps its idle policy in: the parameter above two bits of mode. */
constexpr std::uint64_t pack_idle_policy(idle_policy_t policy) noexcept {
    return (policy.microseconds << 2) | static_cast<std::uint64_t>(policy.mode);
}
/**  The policy `pack_idle_policy` packed. */
constexpr idle_policy_t unpack_idle_policy(std::uint64_t word) noexcept {
    return {static_cast<idle_mode_t>(word & 3u), word >> 2};
}

/**
 *  @brief  The adaptive policy's window, for one thread: call `spun_out(window_us)` once per spinning iteration;
 *          it reads the clock every `clock_spins_k` calls and answers true once the thread spun `window_us`. Call
 *          `restart()` after parking. Owned by one thread; no shared state.
 */
class adaptive_window_t {
public:
    /**  Micro-waits between two reads of the clock while an adaptive worker spins out its window (~1-3 µs). */
    static constexpr std::size_t clock_spins_k = 64;

    /**
     *  The most one gap between two clock readings adds to the adaptive window: 64 `PAUSE`s take 1-3 µs on AMD Zen 5
     *  and recent Intel cores (`forkunion_bench_wake`), so a longer gap is the thread having been descheduled.
     */
    static constexpr std::uint64_t clock_jump_us_k = 10;

    bool spun_out(std::uint64_t window_us) noexcept {
        if (++clock_spins_ < clock_spins_k) return false;
        clock_spins_ = 0;
        // The window counts time spent spinning: a gap between readings longer than a few of them is time this
        // thread was descheduled, which burned no CPU, so at most `clock_jump_us_k` of it counts. A worker
        // preempted on a busy machine does not park for having been preempted.
        std::uint64_t const now = monotonic_microseconds();
        if (!timing_) {
            last_us_ = now, spun_us_ = 0, timing_ = true;
            return false;
        }
        std::uint64_t const step = now - last_us_;
        spun_us_ += step < clock_jump_us_k ? step : clock_jump_us_k;
        last_us_ = now;
        return spun_us_ >= window_us;
    }

    /**  Woken: the next window starts from nothing. */
    void restart() noexcept { timing_ = false; }

private:
    std::size_t clock_spins_ = 0;
    std::uint64_t spun_us_ = 0, last_us_ = 0; // the window's progress, and the previous clock reading
    bool timing_ = false;
};

} // namespace forkunion::detail
