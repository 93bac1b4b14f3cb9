# Cross-compiles for 64-bit Windows with Debian's MinGW-w64 (GCC 12, the `posix` thread model: `std::thread` over
# winpthreads) and runs the results under wine (`wine64` only, through `wine_run.sh`).
#
# The MinGW runtime (libstdc++, libgcc, winpthreads) is linked statically into every executable and into the C API
# DLL, so a test needs no DLL beyond the system ones and `forkunion_shared.dll` ships alone.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR AMD64)
set(FORKUNION_CROSS_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${FORKUNION_CROSS_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${FORKUNION_CROSS_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${FORKUNION_CROSS_TRIPLE}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${FORKUNION_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER) # build tools (wine, objdump) come from the host
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH) # header-only Catch2's config lives on the host
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_CURRENT_LIST_DIR}/wine_run.sh")
# Wine reports the host's CPU through CPUID unchanged: the capability test compares against /proc/cpuinfo's flags.
set(FORKUNION_CROSS_HOST_CPU ON)
# The MinGW binutils, for the export check of the C API DLL.
set(FORKUNION_CROSS_OBJDUMP ${FORKUNION_CROSS_TRIPLE}-objdump)
# Each GoogleTest program is one ctest test: a process start under the emulator costs more than most cases.
set(FORKUNION_CROSS_WHOLE_PROGRAM_TESTS ON)
