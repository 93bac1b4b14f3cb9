# Shared part of the cross toolchain files: set FORKUNION_CROSS_TRIPLE (and FORKUNION_CROSS_CLANG) first.
# Debian's cross packages install `<triple>-g++` and a sysroot in /usr/<triple>.
if(FORKUNION_CROSS_CLANG)
    find_program(_forkunion_clang NAMES clang++ clang++-14 clang++-15 clang++-16 REQUIRED)
    set(CMAKE_CXX_COMPILER "${_forkunion_clang}")
    set(CMAKE_CXX_COMPILER_TARGET ${FORKUNION_CROSS_TRIPLE})
    find_program(_forkunion_clang_c NAMES clang clang-14 clang-15 clang-16 REQUIRED) # the C API's tests
    set(CMAKE_C_COMPILER "${_forkunion_clang_c}")
    set(CMAKE_C_COMPILER_TARGET ${FORKUNION_CROSS_TRIPLE})
else()
    set(CMAKE_CXX_COMPILER ${FORKUNION_CROSS_TRIPLE}-g++)
    set(CMAKE_C_COMPILER ${FORKUNION_CROSS_TRIPLE}-gcc) # the C API's tests
endif()
set(CMAKE_FIND_ROOT_PATH /usr/${FORKUNION_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER) # build tools (strace, qemu) come from the host
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH) # header-only Catch2's config lives on the host
# qemu-user arguments of every run: the sysroot, and the loader's search path pinned inside it. Without the
# latter, the guest loader reads the host's /etc/ld.so.cache and may load the host's multilib libraries
# (/lib32/libc.so.6 for i686): a mixed libc whose threads hang at start-up.
set(FORKUNION_CROSS_QEMU_ARGS -L /usr/${FORKUNION_CROSS_TRIPLE} -E LD_LIBRARY_PATH=/lib)
