/**
 *  @file   forkunion/wait_risc5.hpp
 *  @brief  RISC-V micro-waits: `risc5_pause_t` (the Zihintpause `PAUSE` hint).
 *
 *  Defined only when compiling for RISC-V; elsewhere this header declares nothing. `PAUSE` is emitted as its raw
 *  encoding `0x0100000F`, which is `FENCE W, 0` (a harmless no-op fence) on harts without Zihintpause, so the hint
 *  needs neither an assembler that knows the mnemonic nor a run-time check.
 */
#pragma once
#include <forkunion/types.hpp> // `FORKUNION_ARCH_RISCV`

#if FORKUNION_ARCH_RISCV
namespace forkunion {

/**  @brief  The Zihintpause spin-loop hint. No system call, U-mode; a no-op fence on harts without it. */
struct risc5_pause_t {
    void operator()() const noexcept { __asm__ __volatile__(".4byte 0x0100000F" ::: "memory"); }
};

} // namespace forkunion
#endif
