#!/usr/bin/env bash
# CI stage: every benchmark binary and backend, briefly, on the Release build the release workflow made. What the
# release workflow's `bench.*` tests already prove is not repeated here: every backend of the main binaries in
# CHECK mode with one result across them (`bench.*.check_every_backend`) and every refused setting
# (`bench.settings.refuses.*`).
#   1. N-body and propagation, the LLVM libomp binaries' backends (which those tests do not run), CHECK mode;
#   2. propagation at the default scale once (forkunion_static_shared, CHECK mode): prints rounds and edges;
#   3. dispatch, every runtime, short rows;
#   4. instructions per dispatch (valgrind), and `bench/compare.sh` end to end with short windows.
# Budget: about 2 minutes on 2 idle cores; each step prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common/common.sh

build=build_release
bin=$build/bench
cmake --build "$build" --target forkunion_bench -j2 >/dev/null
forkunion_openmp_environment
export FORKUNION_WARMUP=0s FORKUNION_TIME_LIMIT=1s

step_start=$SECONDS
step() {
    echo "---- $* (previous step: $((SECONDS - step_start)) s)"
    step_start=$SECONDS
}

# Runs one benchmark process and prints its banner's backend line and its RESULT row; stops on failure.
run() {
    local output
    if ! output=$("$@" 2>&1); then
        echo "FAILED: $*"
        echo "$output"
        exit 1
    fi
    grep -E '^# (backend|split|check)|^RESULT ' <<<"$output"
}

same_everywhere() { # description, then the values that must all be equal
    local description=$1
    shift
    if (($(printf '%s\n' "$@" | sort -u | wc -l) != 1)); then
        echo "FAILED: $description differ: $(printf '%s\n' "$@" | sort | uniq -c | tr '\n' ' ')"
        exit 1
    fi
    echo "$description: identical across $# runs ($1)"
}

# The libomp binaries' rows, next to forkunion_static_shared of the main binary, which ctest compared with all others.
libomp_rows() { forkunion_backends_of "$bin" "$1" | awk '$1 ~ /_libomp$/ || $2 == "forkunion_static_shared"'; }

step "N-body: the libomp rows, 1 s, FORKUNION_NBODY_CHECK=1 (64 bodies)"
states=()
while read -r binary backend; do
    rows=$(run env FORKUNION_BACKEND="$backend" FORKUNION_NBODY_CHECK=1 FORKUNION_NBODY_COUNT=64 "$binary")
    echo "$rows"
    states+=("$(grep -o 'state_after_8_steps=[0-9a-fx]*' <<<"$rows")")
done < <(libomp_rows nbody)
same_everywhere "N-body states after 8 steps" "${states[@]}"

step "propagation: the libomp rows, 1 s, CHECK mode, 16 communities x 2^10 vertices"
outcomes=()
while read -r binary backend; do
    rows=$(run env FORKUNION_BACKEND="$backend" FORKUNION_PROPAGATION_CHECK=1 FORKUNION_PROPAGATION_SCALE=10 \
        FORKUNION_PROPAGATION_COMMUNITIES=16 "$binary")
    echo "$rows"
    outcomes+=("$(grep -o 'edges=[0-9]* rounds=[0-9]* components=[0-9]* checksum=[0-9]*' <<<"$rows")")
done < <(libomp_rows propagation)
same_everywhere "propagation results" "${outcomes[@]}"

step "propagation: default scale (64 x 2^14 vertices, edge factor 16), forkunion_static_shared, CHECK mode"
FORKUNION_PROPAGATION_CHECK=1 "$bin/forkunion_bench_propagation" | grep -E '^# (graph|serial|check)|^RESULT '

step "dispatch: every runtime, 20 ms per row"
while read -r binary backend; do
    [[ $backend =~ _static(_shared)?$ ]] || continue
    run env -u FORKUNION_TIME_LIMIT FORKUNION_BACKEND="$backend" "$binary" --benchmark_min_time=0.02 |
        grep '^RESULT ' | grep -v 'row=floor' | awk '{ print $3, $4, $7 }'
done < <(forkunion_backends_of "$bin" dispatch)

step "instructions per dispatch (bench/pools/instructions.sh)"
if command -v valgrind >/dev/null; then bash bench/pools/instructions.sh "$build"; else echo "skipped: valgrind not installed"; fi

step "bench/compare.sh end to end: 200 ms windows, one run each, a small graph"
unset FORKUNION_WARMUP FORKUNION_TIME_LIMIT
# Its progress lines (stderr) are kept aside and printed only when it fails: they name the run that failed.
progress=$(mktemp)
if ! FORKUNION_PROPAGATION_SCALE=10 FORKUNION_PROPAGATION_COMMUNITIES=16 bash bench/compare.sh 200ms 1 2>"$progress" \
    >"$progress.out"; then
    cat "$progress.out" "$progress"
    echo "FAILED: bench/compare.sh (its output and progress above)"
    exit 1
fi
grep -E '^(#|\| `forkunion_static_shared`|\| `forkunion/for_n/empty`|Ping|Final|Converged|Skipped|OpenMP drop-in|Like for)' \
    "$progress.out"
rm -f "$progress" "$progress.out"
step "done"
