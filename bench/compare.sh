#!/usr/bin/env bash
# The side-by-side table, the README's main demonstration. From a clean clone:
#
#   bash bench/compare.sh [window] [repetitions]        # defaults: 1s 3; e.g. `bash bench/compare.sh 10s 5`
#
# 1. configures Release (`cmake --preset release`, in build_release/) with only the benchmarks enabled, so it needs
#    CMake, a C++20 compiler and Google Benchmark and nothing else (a directory configured before keeps its own
#    choices, tests included), and builds only the benchmark targets (`forkunion_bench`);
# 2. runs every backend of bench/nbody and bench/propagation, and every runtime of bench/pools, `repetitions`
#    times interleaved (A B C ... A B C ...), one process per run, so every run measures its own floor right before
#    its runtime starts;
# 3. prints markdown tables: medians over the runs, min-max, the ratio to forkunion_static_shared (ForkUnion's
#    `for_n` for dispatch rows) and the ratio to the in-process ping-pong floor, then the peers that were skipped.
# 4. writes the tables' figures as CSV into build_release/bench/charts/ (dispatch.csv, dispatch_all.csv, nbody.csv,
#    propagation.csv) and draws each as an SVG chart next to it with bench/plot.sh (gnuplot, or python3-matplotlib);
#    without either it says so once and the tables are all.
#
# `window` is FORKUNION_TIME_LIMIT of each N-body and propagation run (integer + ms or s); each dispatch row gets a
# tenth of it. A 1 s window is shorter than a propagation pass at the defaults here, so one extra CHECK run of
# forkunion_static_shared converges a whole pass (next to a serial one) for the rounds the table reports.
# Other FORKUNION_* variables pass through (FORKUNION_THREADS, FORKUNION_NBODY_COUNT, FORKUNION_PROPAGATION_SCALE,
# ...). The propagation graph is generated once and kept in build_release/bench (FORKUNION_PROPAGATION_CACHE).
# The OpenMP backends run three times: on libgomp, on libomp (`*_libomp` binaries) and on ForkUnion's OpenMP drop-in
# (`*_gomp` binaries, backends `forkunion_gomp_*`, the same object code linked against libforkunion_gomp.so).
# OpenMP gets OMP_PLACES = one place per allowed CPU, OMP_PROC_BIND=close and OMP_WAIT_POLICY=active unless already
# set, so its threads are pinned and spin like everyone else's. Raw RESULT rows go to
# build_release/bench/compare_results.txt. Exit status: 0, 1 for bad arguments or a failed configure or build (the
# missing package and its apt-get command are named), 2 if a run failed, 3 if backends disagree on a result.
#
#   bash bench/compare.sh --configure-only [-D...]     # step 1's configure only, with extra cache settings
#
# configures and stops; FORKUNION_BENCH_BUILD_DIR (default build_release) picks the directory. CI uses it to prove
# that the benchmarks configure without the test frameworks and peers (`.ci/bare.sh`).
#
#   bash bench/compare.sh --help                        # this text
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FORKUNION_BENCH_BUILD_DIR:-build_release}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo pipefail/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 0
fi
if (($# > 2)) && [[ $1 != --configure-only ]]; then
    echo "compare.sh: expected at most a window and a repetition count, got $# arguments (bash bench/compare.sh --help)" >&2
    exit 1
fi

# The configure of step 1: the release preset's settings, with tests and examples off unless this directory was
# configured with them before (then its cache decides, so a later `ctest` still finds every test).
configure() {
    local keep=()
    if [[ -f $build/CMakeCache.txt ]]; then
        local option value
        for option in FORKUNION_BUILD_TEST FORKUNION_BUILD_EXAMPLES; do
            value=$(sed -n "s/^${option}:BOOL=//p" "$build/CMakeCache.txt")
            keep+=(-D "${option}=${value:-OFF}")
        done
    else
        keep=(-D FORKUNION_BUILD_TEST=OFF -D FORKUNION_BUILD_EXAMPLES=OFF)
    fi
    local log
    log=$(mktemp)
    if ! cmake --preset release -B "$build" "${keep[@]}" -D FORKUNION_BUILD_BENCH=ON "$@" >"$log" 2>&1; then
        # The reason, without CMake's boilerplate: `forkunion: <package> not found: apt-get install <package>`.
        grep -E '^ *forkunion: |^CMake Error' "$log" | sed 's/^ *//' | grep -v '^CMake Error' >&2 ||
            cat "$log" >&2
        rm -f "$log"
        echo "compare.sh: configure failed (full output: cmake --preset release -B $build)" >&2
        return 1
    fi
    rm -f "$log"
}

if [[ ${1:-} == --configure-only ]]; then
    shift
    configure "$@"
    exit
fi

window=${1:-1s}
repetitions=${2:-3}
if [[ ! $window =~ ^([0-9]+)(ms|s)$ ]]; then
    echo "compare.sh: window: expected an integer followed by ms or s (like 500ms or 10s), got '$window'" \
        "(bash bench/compare.sh --help)" >&2
    exit 1
fi
window_ms=${BASH_REMATCH[1]}
[[ ${BASH_REMATCH[2]} == s ]] && window_ms=$((window_ms * 1000))
if [[ ! $repetitions =~ ^[1-9][0-9]*$ ]]; then
    echo "compare.sh: repetitions: expected a positive integer, got '$repetitions'" >&2
    exit 1
fi
dispatch_min_time=$(awk -v ms="$window_ms" 'BEGIN { printf "%.3f", ms / 10000 }')

start=$SECONDS
echo "compare.sh: configuring and building Release benchmarks (cmake --preset release)..." >&2
configure || exit 1
if ! cmake --build "$build" --target forkunion_bench -j "$(nproc)" >/dev/null; then
    echo "compare.sh: the build failed (cmake --build $build --target forkunion_bench shows why)" >&2
    exit 1
fi
bin=$build/bench
results=$bin/compare_results.txt
export FORKUNION_PROPAGATION_CACHE=${FORKUNION_PROPAGATION_CACHE:-$bin}
: >"$results"

source bench/common/common.sh
forkunion_openmp_environment
allowed=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)

run() { # binary, then arguments; appends RESULT rows, stops on failure with the run's output
    local log
    log=$(mktemp)
    if ! "$@" >"$log" 2>&1; then
        echo "compare.sh: failed: $*" >&2
        cat "$log" >&2
        rm -f "$log"
        exit 2
    fi
    grep '^RESULT ' "$log" >>"$results" || true
    rm -f "$log"
}

mapfile -t nbody_runs < <(forkunion_backends_of "$bin" nbody)
mapfile -t propagation_runs < <(forkunion_backends_of "$bin" propagation)
# Dispatch: one process per runtime, named by its static backend (forkunion_static_shared stands for ForkUnion).
mapfile -t dispatch_runs < <(forkunion_backends_of "$bin" dispatch | awk '$2 ~ /_static(_shared)?$/')

for ((rep = 1; rep <= repetitions; ++rep)); do
    for entry in "${nbody_runs[@]}"; do
        read -r binary backend <<<"$entry"
        echo "compare.sh: [$((SECONDS - start)) s] nbody $rep/$repetitions $backend" >&2
        run env FORKUNION_BACKEND="$backend" FORKUNION_WARMUP=200ms FORKUNION_TIME_LIMIT="$window" "$binary"
    done
done
for ((rep = 1; rep <= repetitions; ++rep)); do
    for entry in "${propagation_runs[@]}"; do
        read -r binary backend <<<"$entry"
        echo "compare.sh: [$((SECONDS - start)) s] propagation $rep/$repetitions $backend" >&2
        run env FORKUNION_BACKEND="$backend" FORKUNION_WARMUP=0s FORKUNION_TIME_LIMIT="$window" "$binary"
    done
done
for ((rep = 1; rep <= repetitions; ++rep)); do
    for entry in "${dispatch_runs[@]}"; do
        read -r binary backend <<<"$entry"
        echo "compare.sh: [$((SECONDS - start)) s] dispatch $rep/$repetitions ${backend%%_static*}" >&2
        run env FORKUNION_BACKEND="$backend" "$binary" --benchmark_min_time="$dispatch_min_time"
    done
done

# One CHECK run: a whole pass of forkunion_static_shared next to a serial one, for the rounds the table reports.
echo "compare.sh: [$((SECONDS - start)) s] propagation CHECK run, forkunion_static_shared" >&2
check_row=$(FORKUNION_BACKEND=forkunion_static_shared FORKUNION_WARMUP=0s FORKUNION_TIME_LIMIT=0s \
    FORKUNION_PROPAGATION_CHECK=1 "$bin/forkunion_bench_propagation" | grep '^RESULT ') || {
    echo "compare.sh: the propagation CHECK run failed" >&2
    exit 3
}

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "unknown")
echo
echo "## forkunion benchmarks, side by side"
echo
echo "$cpu_model, allowed CPUs $allowed, OMP_PLACES=$OMP_PLACES; commit $commit; window $window, $repetitions interleaved runs per row."
echo "Medians over runs (each run's own figure is itself a median over ~1 ms checkpoints or 64-dispatch batches);"
echo "min-max over runs; ratios are taken per run against that run's own floor, then the median."
echo

check=$(grep -o 'edges=[0-9]* rounds=[0-9]* components=[0-9]* checksum=[0-9]*' <<<"$check_row")
charts=$bin/charts
rm -rf "$charts"
mkdir -p "$charts"
awk -v check="$check, check=passed" -v csv="$charts" -f bench/common/compare_summary.awk "$results" || status=$?

skipped=$(cat "$bin/skipped_peers.txt" 2>/dev/null || true)
echo
echo "Skipped peers: ${skipped:-none}."
if bash bench/plot.sh --check 2>/dev/null; then
    bash bench/plot.sh "$charts"/*.csv >/dev/null && echo "compare.sh: charts in $charts/*.svg" >&2 ||
        echo "compare.sh: bench/plot.sh failed: the tables and $charts/*.csv are all" >&2
else
    echo "compare.sh: no gnuplot or python3-matplotlib (apt-get install gnuplot-nox): tables only, CSV in $charts" >&2
fi
echo "compare.sh: done in $((SECONDS - start)) s; raw rows in $results" >&2
exit "${status:-0}"
