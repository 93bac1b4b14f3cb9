# Cross-compiles for 32-bit x86 Linux with Debian's g++-i686-linux-gnu. 32-bit: pointers, `std::size_t` and the
# pools' default index are 4 bytes, 8-byte atomics are `CMPXCHG8B`, and CMPccXADD/RAO-INT do not exist (64-bit mode
# only).
#
# Where it runs: an x86-64 Linux kernel runs 32-bit programs itself (IA32 emulation, on in Debian's kernels), so the
# programs are linked against the cross sysroot's loader and libraries (`--dynamic-linker`, rpath) and run natively,
# on the host CPU and its memory system, at native speed; death tests re-execute them and `fork()` works. Whether the
# kernel can is settled here by running that loader. Where it cannot (or with FORKUNION_I686_EMULATE=ON), the
# programs run under qemu-user (`-cpu max`; QEMU 7.2 reports no WAITPKG) as the other cross builds do.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(FORKUNION_CROSS_TRIPLE i686-linux-gnu)
# Floating point on SSE2, as every 64-bit target has it: the i686 default, x87, keeps `double` temporaries in 80-bit
# registers (FLT_EVAL_METHOD 2), so where a sum rounds depends on register allocation and no reduction is
# reproducible bit for bit (algorithms.hpp states this); `-mfpmath=sse` rounds every operation to its type.
set(CMAKE_C_FLAGS_INIT "-msse2 -mfpmath=sse")
set(CMAKE_CXX_FLAGS_INIT "-msse2 -mfpmath=sse")
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_cross.cmake")

set(_forkunion_i686_loader /usr/${FORKUNION_CROSS_TRIPLE}/lib/ld-linux.so.2)
set(_forkunion_i686_native OFF)
if(NOT FORKUNION_I686_EMULATE AND EXISTS ${_forkunion_i686_loader})
    execute_process(COMMAND ${_forkunion_i686_loader} --version RESULT_VARIABLE _forkunion_i686_status
                    OUTPUT_QUIET ERROR_QUIET)
    if(_forkunion_i686_status EQUAL 0)
        set(_forkunion_i686_native ON)
    endif()
endif()
if(_forkunion_i686_native)
    set(_forkunion_i686_link "-Wl,-rpath,/usr/${FORKUNION_CROSS_TRIPLE}/lib")
    set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--dynamic-linker=${_forkunion_i686_loader} ${_forkunion_i686_link}")
    set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_forkunion_i686_link}")
    set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_forkunion_i686_link}")
    # The host CPU answers CPUID: the capability test compares it with /proc/cpuinfo, as on x86-64.
    set(FORKUNION_CROSS_HOST_CPU ON)
else()
    set(CMAKE_CROSSCOMPILING_EMULATOR qemu-i386 ${FORKUNION_CROSS_QEMU_ARGS} -cpu max)
    # What the emulated CPU offers, asserted by the capability test.
    set(FORKUNION_CROSS_EXPECTED_CAPABILITIES "none")
endif()
