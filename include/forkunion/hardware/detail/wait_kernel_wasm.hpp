/**
 *  @file   forkunion/hardware/detail/wait_kernel_wasm.hpp
 *  @brief  WebAssembly backend of `kernel_wait`/`kernel_wake_all` in `-pthread` builds: `memory.atomic.wait32`
 *          and `memory.atomic.notify`, through `emscripten_futex_wait`/`emscripten_futex_wake`.
 *
 *  A Web Worker may block in `memory.atomic.wait32`; the main browser thread may not (the browser throws), so
 *  there `emscripten_futex_wait` spins on the word until it changes or the timeout passes instead of blocking.
 *  A pool's workers are Web Workers and block for real; under `-sPROXY_TO_PTHREAD` the program's `main` runs in
 *  a worker too. The timeout is a `double` of milliseconds, so microseconds pass through exactly. A wait returns
 *  on a wake, on the timeout or spuriously; callers re-check. Declared only in emscripten `-pthread` builds
 *  (without threads nothing could ever wake a waiter, and the portable backend stands in).
 */
#pragma once
#include <atomic>  // `std::atomic`
#include <climits> // `INT_MAX`
#include <cstdint> // `std::uint32_t`

#include <forkunion/hardware/detail/system_wasm.hpp>
#include <forkunion/base/types.hpp>

#if FORKUNION_OS_WASM && FORKUNION_WASM_THREADS
#include <emscripten/threading.h> // `emscripten_futex_wait`, `emscripten_futex_wake`

namespace forkunion::detail {

struct wasm_kernel_wait_t {
    static void wait(std::atomic<std::uint32_t> &word, std::uint32_t expected, std::uint64_t timeout_us) noexcept {
        double const milliseconds = timeout_us == 0 ? __builtin_inf() : static_cast<double>(timeout_us) / 1000.0;
        // `-ETIMEDOUT`, `-EWOULDBLOCK` (the word already moved) and a wake all mean "re-check": the caller loops.
        (void)::emscripten_futex_wait(&word, expected, milliseconds);
    }

    static void wake_all(std::atomic<std::uint32_t> &word) noexcept { (void)::emscripten_futex_wake(&word, INT_MAX); }
};

} // namespace forkunion::detail
#endif
