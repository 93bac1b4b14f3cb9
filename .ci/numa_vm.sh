#!/usr/bin/env bash
# The NUMA guests: every shape of test/numa_vm/shapes booted under qemu-system-x86_64 (TCG, unless a timed probe
# shows a KVM guest really boots) with the guest suite inside, and, in the two-node guest, the MPI example with
# one rank per node. Needs the release workflow's build (build_release holds the static guest suite, the shape
# tool and the MPI payload) and the packages qemu-system-x86, busybox-static, openmpi-bin and libopenmpi-dev; each
# guest skips, saying why, where a tool or the kernel package is missing. Debian's kernel is kept in
# ~/.cache/forkunion/numa_vm between runs. Prints each guest's boot and run times.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -d build_release ]] || { echo "numa_vm.sh: run the release workflow first (cmake --workflow --preset release)" && exit 1; }
ctest --test-dir build_release -L numa-vm --output-on-failure --no-tests=error
