# Cross-compiles for 64-bit RISC-V Linux against Debian's riscv64-linux-gnu toolchain (sysroot, libstdc++,
# binutils from g++-riscv64-linux-gnu) and runs the results under qemu-user.
#
# The compiler is Clang 14, not GCC 12: GCC 12's RISC-V backend cannot inline 1- and 2-byte atomics (it calls
# libatomic and reports `is_always_lock_free == false`; `-minline-atomics` arrived in GCC 13), which the pools'
# `static_assert` on lock-free index types rejects for the uint8/uint16 pools the suites sweep.
# QEMU 7.2 has no `max` RISC-V CPU and none of Zawrs, Zacas or Zicbom: `rv64` (RV64GC, Zihintpause) it is.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(FORKUNION_CROSS_TRIPLE riscv64-linux-gnu)
set(FORKUNION_CROSS_CLANG ON)
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_cross.cmake")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64 ${FORKUNION_CROSS_QEMU_ARGS} -cpu rv64,Zihintpause=true)
# What the emulated CPU offers, asserted by the capability test: the A extension's AMOs (AT_HWCAP), nothing else.
set(FORKUNION_CROSS_EXPECTED_CAPABILITIES "riscv_amo")
