/**
 *  @file   forkunion/wait_arm64.hpp
 *  @brief  AArch64 micro-waits: `arm64_yield_t` (the `YIELD` hint).
 *
 *  Defined only when compiling for AArch64; elsewhere this header declares nothing. `YIELD` is an EL0 hint that
 *  every ARMv8 core decodes (as a NOP where the core has nothing better to do with it).
 */
#pragma once
#include <forkunion/types.hpp> // `FORKUNION_ARCH_ARM64`

#if FORKUNION_ARCH_ARM64
namespace forkunion {

/**  @brief  The spin-loop hint of AArch64. No system call, EL0. */
struct arm64_yield_t {
    void operator()() const noexcept { __asm__ __volatile__("yield" ::: "memory"); }
};

} // namespace forkunion
#endif
