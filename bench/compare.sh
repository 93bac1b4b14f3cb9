#!/usr/bin/env bash
# The side-by-side table, the README's main demonstration. From a clean clone:
#
#   bash bench/compare.sh [window] [repetitions]        # defaults: 1s 3; e.g. `bash bench/compare.sh 10s 5`
#
# 1. configures Release (`cmake --preset release`, in build_release/) with only the benchmarks enabled, so it needs
#    CMake, a C++20 compiler and Google Benchmark and nothing else (a directory configured before keeps its own
#    choices, tests included), and builds only the benchmark targets (`forkunion_bench`);
# 2. runs every backend of bench/nbody and bench/propagation, and every runtime of bench/dispatch, `repetitions`
#    times interleaved (A B C ... A B C ...), one process per run, so every run measures its own floor right before
#    its runtime starts;
# 3. prints markdown tables: medians over the runs, min-max, the ratio to forkunion_static_shared (ForkUnion's
#    `for_n` for dispatch rows) and the ratio to the in-process ping-pong floor, then the peers that were skipped.
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
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FORKUNION_BENCH_BUILD_DIR:-build_release}

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
    echo "compare.sh: window: expected an integer followed by ms or s (like 500ms or 10s), got '$window'" >&2
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
awk -v repetitions="$repetitions" -v check="$check, check=passed" '
function field(name,   i, pair) {
    for (i = 2; i <= NF; ++i) { split($i, pair, "="); if (pair[1] == name) return pair[2] }
    return ""
}
function add(key, value) { count[key]++; values[key, count[key]] = value + 0 }
function sorted_copy(key,   i, j, t, n) {
    n = count[key]
    for (i = 1; i <= n; ++i) tmp[i] = values[key, i]
    for (i = 2; i <= n; ++i) { t = tmp[i]; for (j = i - 1; j >= 1 && tmp[j] > t; --j) tmp[j + 1] = tmp[j]; tmp[j + 1] = t }
    return n
}
function median(key,   n) { n = sorted_copy(key); return n ? tmp[int((n + 1) / 2)] : 0 }
function low(key,   n) { n = sorted_copy(key); return n ? tmp[1] : 0 }
function high(key,   n) { n = sorted_copy(key); return n ? tmp[n] : 0 }
function remember(list, name) { if (!((list, name) in seen)) { seen[list, name] = 1; order[list, ++length_of[list]] = name } }
function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }

$1 == "RESULT" {
    benchmark = field("benchmark")
    if (benchmark == "nbody") {
        b = field("backend"); remember("nbody", b)
        add("nbody_us|" b, field("us_per_step")); add("nbody_floor|" b, field("dispatch_over_floor"))
        add("nbody_off|" b, field("off_caller")); add("floor", field("floor_ns"))
        state = field("state_after_8_steps"); if (!(state in states)) { states[state] = 1; state_count++ }
    } else if (benchmark == "propagation") {
        b = field("backend"); remember("propagation", b)
        add("prop_gteps|" b, field("gteps")); add("prop_ms|" b, field("ms_per_round")); add("floor", field("floor_ns"))
        edges = field("edges"); vertices = field("vertices")
        if (field("passes") + 0 > 0) {
            result = field("rounds") " rounds, " field("components") " components, checksum " field("checksum")
            outcome[b] = result
            if (!(result in outcomes)) { outcomes[result] = 1; outcome_count++ }
        } else if (!(b in outcome)) outcome[b] = "no pass finished in the window"
    } else if (benchmark == "dispatch") {
        r = field("row"); remember("dispatch", r)
        add("dispatch_ns|" r, field("ns")); add("dispatch_floor|" r, field("x_floor")); add("floor", field("floor_ns"))
        if (field("off_caller") != "") add("dispatch_off|" r, field("off_caller"))
    }
}
END {
    printf "Ping-pong floor (two pinned threads, two cache lines, one writer each), over every run: median %.0f ns, %.0f-%.0f ns.\n\n", median("floor"), low("floor"), high("floor")

    reference = median("dispatch_ns|forkunion/for_n/empty"); reference_line = median("dispatch_ns|forkunion/for_n/line")
    print "### Dispatch latency: ns per fork-join of T tasks on T threads (bench/dispatch/dispatch.cpp)"
    print ""
    print "| row | ns (median) | min-max | x forkunion `for_n` | x floor | share of tasks off the caller |"
    print "| --- | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= length_of["dispatch"]; ++i) {
        r = order["dispatch", i]; ns = median("dispatch_ns|" r)
        base = (r ~ /\/line$/) ? reference_line : reference
        off = count["dispatch_off|" r] ? sprintf("%.2f", median("dispatch_off|" r)) : "-"
        if (count["dispatch_off|" r] && median("dispatch_off|" r) < 0.05) off = off " (caller ran >95%)"
        printf "| `%s` | %.0f | %.0f-%.0f | %s | %.2f | %s |\n", r, ns, low("dispatch_ns|" r), high("dispatch_ns|" r), ratio(ns, base), median("dispatch_floor|" r), off
    }

    # The goals, from the medians in ns and, steadier on a shared machine, from the ratio of each run to its floor.
    gomp = median("dispatch_ns|forkunion_gomp/for_n/empty"); libgomp = median("dispatch_ns|libgomp/for_n/empty")
    gomp_floor = median("dispatch_floor|forkunion_gomp/for_n/empty"); libgomp_floor = median("dispatch_floor|libgomp/for_n/empty")
    own_floor = median("dispatch_floor|forkunion/for_n/empty")
    if (gomp > 0 && reference > 0 && libgomp > 0)
        printf "\nOpenMP drop-in: `parallel for` at %.2fx the `for_n` of ForkUnion (%.2fx by floor ratios; goal: at most 1.25x), %.2fx faster than libgomp (%.2fx by floor ratios; goal: at least 2x).\n", gomp / reference, gomp_floor / own_floor, libgomp / gomp, libgomp_floor / gomp_floor
    # The members of every GCC region first read `.omp_data_o`, on the stack of the caller; so do the stack row's.
    stack = median("dispatch_ns|forkunion/for_n/stack")
    if (gomp > 0 && stack > 0)
        printf "Like for like: the `parallel for` of the drop-in at %.2fx the `for_n` of ForkUnion whose tasks read one word the caller wrote for the dispatch (`forkunion/for_n/stack`), as the members of every GCC-compiled region read its `.omp_data_o`.\n", gomp / stack

    reference = median("nbody_us|forkunion_static_shared")
    print ""
    print "### N-body: microseconds per step, two dispatches per step (bench/nbody/nbody.cpp)"
    print ""
    print "| backend | us/step (median) | min-max | x forkunion_static_shared | one dispatch / floor | share of tasks off the caller |"
    print "| --- | ---: | ---: | ---: | ---: | ---: |"
    for (i = 1; i <= length_of["nbody"]; ++i) {
        b = order["nbody", i]; us = median("nbody_us|" b); off = median("nbody_off|" b)
        printf "| `%s` | %.2f | %.2f-%.2f | %s | %.2f | %.2f%s |\n", b, us, low("nbody_us|" b), high("nbody_us|" b), ratio(us, reference), median("nbody_floor|" b), off, off < 0.05 ? " (caller ran >95%)" : ""
    }
    printf "\nFinal states after 8 steps: %s.\n", state_count == 1 ? "bit-identical across every backend and run" : "DIFFER between backends (" state_count " distinct hashes)"

    reference = median("prop_gteps|forkunion_static_shared")
    print ""
    printf "### Label propagation: GTEPS, %s vertices, %s edges (bench/propagation/propagation.cpp)\n", vertices, edges
    print ""
    print "| backend | GTEPS (median) | min-max | x forkunion_static_shared | ms per round | result |"
    print "| --- | ---: | ---: | ---: | ---: | --- |"
    for (i = 1; i <= length_of["propagation"]; ++i) {
        b = order["propagation", i]; g = median("prop_gteps|" b)
        printf "| `%s` | %.3f | %.3f-%.3f | %s | %.1f | %s |\n", b, g, low("prop_gteps|" b), high("prop_gteps|" b), ratio(g, reference), median("prop_ms|" b), outcome[b]
    }
    printf "\nCHECK run (forkunion_static_shared, whole pass, serial run alongside): %s.\n", check
    printf "Converged results of the timed runs: %s.\n", outcome_count == 0 ? "no run finished a pass within its window (try a longer window)" : outcome_count == 1 ? "identical across every run that finished a pass" : "DIFFER between backends"
    if (outcome_count > 1 || state_count > 1) exit 3
}' "$results" || status=$?

skipped=$(cat "$bin/skipped_peers.txt" 2>/dev/null || true)
echo
echo "Skipped peers: ${skipped:-none}."
echo "compare.sh: done in $((SECONDS - start)) s; raw rows in $results" >&2
exit "${status:-0}"
