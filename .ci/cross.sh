#!/usr/bin/env bash
# The hardware stage: the unit suites on other CPUs, cross-compiled with Debian's toolchains and run under
# qemu-user (aarch64 with LSE, riscv64, big-endian s390x, 32-bit i686), then the FORKUNION_PORTABLE build.
# Each workflow prints its wall time; docs/testing.md ("Other CPUs") says what each emulator exercises.
# FORKUNION_CROSS_PRESETS (default: all five) runs some of them, e.g. FORKUNION_CROSS_PRESETS=cross-s390x.
set -euo pipefail
cd "$(dirname "$0")/.."
read -r -a presets <<<"${FORKUNION_CROSS_PRESETS:-cross-aarch64 cross-riscv64 cross-s390x cross-i686 portable}"
for preset in "${presets[@]}"; do
    start=$SECONDS
    cmake --workflow --preset "$preset"
    echo "---- ${preset}: passed in $((SECONDS - start)) s"
done
