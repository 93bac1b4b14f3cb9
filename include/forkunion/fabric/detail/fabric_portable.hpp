/**
 *  @file   forkunion/fabric/detail/fabric_portable.hpp
 *  @brief  `portable_fabric_platform_t`: the fabric harvest where forkunion can neither pin threads nor place
 *          memory.
 *
 *  The fallback behind the interface described in `fabric_linux.hpp`: `portable_affinity_t` (every pin answers
 *  `unsupported`), `portable_memory_backend_t` (aligned `operator new`, node 0 only), `std::chrono::steady_clock`
 *  for both clocks (the standard has no per-thread CPU clock, so a descheduled walker inflates its latency), and
 *  no page advice. With it a harvest measures a one-compute-domain machine where its threads happen to run
 *  (see `basic_fabric_t`), and refuses every edge of a larger one. It compiles on every OS and the Linux tests run
 *  it, but `forkunion/fabric/fabric.hpp` includes it only where no other platform exists, because `<chrono>` costs
 *  ~50 ms per translation unit (g++ 12 -O2).
 */
#pragma once
// Compile cost: libstdc++'s `<chrono>` brings `<sstream>` for its formatting; the clocks are in a smaller header.
#if defined(__GLIBCXX__) && __has_include(<bits/chrono.h>)
#include <bits/chrono.h> // `std::chrono::steady_clock`
#else
#include <chrono> // `std::chrono::steady_clock`
#endif
#include <cstddef> // `std::size_t`
#include <cstdint> // `std::uint64_t`

#include <forkunion/topology/detail/affinity_portable.hpp>
#include <forkunion/memory/detail/allocators_portable.hpp>

namespace forkunion::detail {

/**  @brief  Pinning, placement, clock and page advice where the OS offers no pinning or placement. */
struct portable_fabric_platform_t {
    using affinity_t = portable_affinity_t;
    using memory_t = portable_memory_backend_t;

    static std::uint64_t now_ns() noexcept {
        auto const since_epoch = std::chrono::steady_clock::now().time_since_epoch();
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count());
    }

    static std::uint64_t thread_cpu_ns() noexcept { return now_ns(); }

    static void advise_huge_pages(void *, std::size_t) noexcept {}
};

} // namespace forkunion::detail
