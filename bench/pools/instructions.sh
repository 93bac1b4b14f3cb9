#!/usr/bin/env bash
# Instructions per dispatch: a figure without timing noise, comparable across machines of one ISA.
#
#   bash bench/pools/instructions.sh [build_dir]          # default: build_release (configured and built if missing)
#
# Counts the instructions of `forkunion_bench_instructions N` (N empty `for_n` dispatches of one backend) at two
# values of N and prints (I(N2) - I(N1)) / (N2 - N1): start-up, thread creation and pinning cancel out. Counter:
# `perf stat -e instructions:u` where the CPU exposes it (most virtual machines do not), else
# `valgrind --tool=callgrind`.
#
# One thread (FORKUNION_THREADS=1): the whole dispatch path on the calling thread (claim, publish, run the slice,
# retire, check completion) with no waiting. With two threads every wait is a spin loop, and valgrind runs threads
# one at a time, so a spinner burns its whole time slice and the count measures the scheduler, not the runtime.
# pthreadpool, the task-queue pool and std::thread run one-thread calls inline without any protocol, so only the
# runtimes that keep their protocol at T = 1 are listed: ForkUnion, libgomp and libomp.
set -euo pipefail
cd "$(dirname "$0")/../.." # the repository root
source bench/common/common.sh
forkunion_usage 1 "[build_dir]
Instructions per empty dispatch of ForkUnion, libgomp and libomp, counted by perf or callgrind.
  build_dir  build_release by default (configured and built if missing)
environment: FORKUNION_BACKEND and the rest of bench/common/harness.hpp's table pass through; the OpenMP rows
get OMP_PLACES, OMP_PROC_BIND and OMP_WAIT_POLICY unless already set." "$@"
forkunion_openmp_environment # the same OpenMP settings as the tables of bench/compare.sh
build=${1:-build_release}
low=1000
high=11000

if [[ $build == build_release && ! -x $build/bench/forkunion_bench_instructions ]]; then
    cmake --preset release >/dev/null
    cmake --build --preset release --target forkunion_bench >/dev/null
fi
binary=$build/bench/forkunion_bench_instructions
[[ -x $binary ]] || { echo "instructions.sh: $binary not found; build the forkunion_bench target" >&2; exit 1; }

if perf stat -x, -e instructions:u true 2>&1 >/dev/null | grep -q '^[0-9]'; then
    tool="perf stat -e instructions:u"
    count() { perf stat -x, -e instructions:u "$@" 2>&1 >/dev/null | awk -F, '/instructions/ { print $1 }'; }
elif command -v valgrind >/dev/null; then
    tool="valgrind --tool=callgrind"
    count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | awk '/Collected :/ { print $4 }'; }
else
    echo "instructions.sh: neither perf counters nor valgrind are available (apt-get install valgrind)" >&2
    exit 1
fi

echo "Instructions per dispatch, one thread, empty for_n over 1 task; counted with $tool as (I($high) - I($low)) / $((high - low))."
echo
echo "| backend | runtime | instructions per dispatch |"
echo "| --- | --- | ---: |"
for binary_backend in "$binary forkunion_static_shared" "$binary forkunion_dynamic_shared" \
    "$binary libgomp_static" "$binary libgomp_dynamic" \
    "${binary}_libomp libomp_static" "${binary}_libomp libomp_dynamic"; do
    read -r program backend <<<"$binary_backend"
    [[ -x $program ]] && "$program" --list | grep -qx "$backend" || continue
    runtime="header-only"
    [[ $backend == forkunion_* ]] || runtime=$(ldd "$program" | awk '/libgomp|libomp/ { print $3; exit }')
    a=$(FORKUNION_THREADS=1 FORKUNION_BACKEND=$backend count "$program" $low)
    b=$(FORKUNION_THREADS=1 FORKUNION_BACKEND=$backend count "$program" $high)
    [[ $a =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] || { echo "instructions.sh: no count for $backend" >&2; exit 2; }
    awk -v a="$a" -v b="$b" -v n=$((high - low)) -v backend="$backend" -v runtime="$runtime" \
        'BEGIN { printf "| `%s` | %s | %.1f |\n", backend, runtime, (b - a) / n }'
done
