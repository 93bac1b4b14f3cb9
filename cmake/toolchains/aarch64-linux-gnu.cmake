# Cross-compiles for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu and runs the results under qemu-user.
# `-cpu max` is QEMU 7.2's newest Arm core: it has FEAT_LSE (so the LSE atomics run), but not FEAT_WFxT, and
# qemu-user reports no event stream (HWCAP_EVTSTRM), so the nap falls back to YIELD there.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(FORKUNION_CROSS_TRIPLE aarch64-linux-gnu)
include("${CMAKE_CURRENT_LIST_DIR}/forkunion_cross.cmake")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 ${FORKUNION_CROSS_QEMU_ARGS} -cpu max)
# What the emulated CPU offers (asserted by the capability test), and a second run on a core without LSE
# (Cortex-A72, Armv8.0), so the atomics' run-time fallback runs too.
set(FORKUNION_CROSS_EXPECTED_CAPABILITIES "arm64_lse")
set(FORKUNION_CROSS_BASELINE_EMULATOR qemu-aarch64 ${FORKUNION_CROSS_QEMU_ARGS} -cpu cortex-a72)
set(FORKUNION_CROSS_BASELINE_CAPABILITIES "none")
