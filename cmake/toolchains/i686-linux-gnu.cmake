# Cross-compiles for 32-bit x86 Linux with Debian's g++-i686-linux-gnu and runs the results under qemu-user
# (`-cpu max`). 32-bit: pointers, `std::size_t` and the pools' default index are 4 bytes, 8-byte atomics are
# `CMPXCHG8B`, and CMPccXADD/RAO-INT do not exist (64-bit mode only). QEMU 7.2 reports no WAITPKG.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(FORKUNION_CROSS_TRIPLE i686-linux-gnu)
# Floating point on SSE2, as every 64-bit target has it: the i686 default, x87, keeps `double` temporaries in 80-bit
# registers (FLT_EVAL_METHOD 2), so where a sum rounds depends on register allocation and no reduction is
# reproducible bit for bit (algorithms.hpp states this); `-mfpmath=sse` rounds every operation to its type.
set(CMAKE_C_FLAGS_INIT "-msse2 -mfpmath=sse")
set(CMAKE_CXX_FLAGS_INIT "-msse2 -mfpmath=sse")
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_cross.cmake")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-i386 ${FORKUNION_CROSS_QEMU_ARGS} -cpu max)
# What the emulated CPU offers, asserted by the capability test.
set(FORKUNION_CROSS_EXPECTED_CAPABILITIES "none")
