#!/usr/bin/env bash
# Retirement at scale on a many-core machine, one command from the repository root:
#   bash bench/pools/retire_device.sh [output directory]        (default: $OUT, else build_retire)
# Builds `forkunion_bench_handoff` and `forkunion_bench_retire` straight from the sources with the host's C++20
# compiler (no configure step, no CMake and no Google Benchmark), then runs the hand-off model (it exits 1 unless every count equals the protocol's) and the timing at
# T = 2, 4, 8, 16 and every allowed core, 5 interleaved rounds of 200 ms windows per variant (~20 s at 16 cores).
# Writes machine.txt, handoff.txt and retire.txt into the output directory.
# Needs: Linux, a C++20 compiler (g++ >= 10 or clang++ >= 13; $CXX picks one).
# FORKUNION_TIME_LIMIT, FORKUNION_WARMUP and FORKUNION_THREADS pass through to the timing (see retire.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/common/common.sh
forkunion_usage 1 "[output directory]
Builds forkunion_bench_handoff and forkunion_bench_retire from the sources and runs the hand-off model and the
retirement timing at T = 2, 4, 8, 16 and every allowed core; writes machine.txt, handoff.txt and retire.txt.
  output directory  \$OUT, else build_retire
environment: CXX (the compiler), OUT, and FORKUNION_TIME_LIMIT, FORKUNION_WARMUP and FORKUNION_THREADS, which pass
through to the timing." "$@"
out=${1:-${OUT:-build_retire}}
mkdir -p "$out"

cxx=${CXX:-}
if [[ -z $cxx ]]; then
    for candidate in g++ clang++ c++; do
        if command -v "$candidate" >/dev/null; then
            cxx=$candidate
            break
        fi
    done
fi
if [[ -z $cxx ]]; then
    echo "retire_device.sh: no C++ compiler found (set CXX)" >&2
    exit 2
fi

flags=(-std=c++20 -O3 -DNDEBUG -pthread)
# build <binary> <variant source> <main source> [flags of the variant objects...]: as bench/pools/CMakeLists.txt
# does, one object per variant plus the main, compiled in parallel.
build() {
    local binary=$1 source=$2 main=$3
    shift 3
    local objects=() pids=() variant
    for variant in tree last_child_first flat_fan_in; do
        "$cxx" "${flags[@]}" "$@" -Iinclude -DFORKUNION_BENCH_VARIANT="$variant" -c "$source" \
            -o "$out/${binary}_$variant.o" &
        pids+=($!)
        objects+=("$out/${binary}_$variant.o")
    done
    "$cxx" "${flags[@]}" -Iinclude -Ibench/common -c "$main" -o "$out/${binary}_main.o" &
    pids+=($!)
    local pid
    for pid in "${pids[@]}"; do wait "$pid"; done
    "$cxx" -pthread "$out/${binary}_main.o" "${objects[@]}" -o "$out/forkunion_bench_$binary" -ldl
}
start=$SECONDS
build handoff bench/pools/handoff_model.cpp bench/pools/handoff.cpp -DFORKUNION_TEST_HOOKS=1
build retire bench/pools/retire_pool.cpp bench/pools/retire.cpp
echo "retire_device.sh: built with $("$cxx" --version | head -1) in $((SECONDS - start)) s"

{
    uname -a
    echo "nproc: $(nproc)"
    command -v lscpu >/dev/null && lscpu
    true
} >"$out/machine.txt"
"$out/forkunion_bench_handoff" | tee "$out/handoff.txt"
"$out/forkunion_bench_retire" | tee "$out/retire.txt"
