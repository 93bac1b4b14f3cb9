#!/usr/bin/env bash
# The hardware stage: the unit suites on other CPUs, cross-compiled with Debian's toolchains and run under
# qemu-user (aarch64 with LSE, riscv64, big-endian s390x, 32-bit i686), then the FORKUNION_PORTABLE build.
# Each workflow prints its wall time; see README "Other CPUs" for what each emulator exercises.
set -euo pipefail
cd "$(dirname "$0")/.."
for preset in cross-aarch64 cross-riscv64 cross-s390x cross-i686 portable; do
    start=$SECONDS
    cmake --workflow --preset "$preset"
    echo "---- ${preset}: passed in $((SECONDS - start)) s"
done
