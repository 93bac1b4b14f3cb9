# Cross-compiles for big-endian IBM Z Linux with Debian's g++-s390x-linux-gnu and runs the results under
# qemu-user (`-cpu max`: every z/Architecture facility QEMU 7.2 emulates). No optional instruction family exists
# there: the suite proves the portable paths and the byte order.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(FORKUNION_CROSS_TRIPLE s390x-linux-gnu)
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_cross.cmake")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x ${FORKUNION_CROSS_QEMU_ARGS} -cpu max)
# What the emulated CPU offers, asserted by the capability test.
set(FORKUNION_CROSS_EXPECTED_CAPABILITIES "none")
