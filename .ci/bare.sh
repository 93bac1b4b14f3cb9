#!/usr/bin/env bash
# The quick start on a bare machine, proved on a machine that has everything: CI installs every package up front,
# so this stage hides the packages a command must not need and checks what a new user would see.
#   1. `bash bench/compare.sh` configures with GoogleTest, Catch2, oneTBB, OpenMP, pthreadpool and the task-queue
#      pool all hidden (-D CMAKE_DISABLE_FIND_PACKAGE_<P>=ON): it needs CMake, a C++20 compiler and Google Benchmark.
#   2. With Google Benchmark hidden too, downloads allowed and the network unreachable (every proxy variable points
#      at a closed loopback port), configure fails within 10 s, printing one line that names the package and its
#      apt-get command, and no download log.
#   3. The same for the README's test command without GoogleTest, and without Catch2, with downloads left off (the
#      default).
# Steps 2 and 3 reconfigure step 1's directory, so the compiler checks and feature probes are cached and the
# seconds measured are the dependency check's own, not the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FORKUNION_BENCH_BUILD_DIR=$work/build

hidden=(-D CMAKE_DISABLE_FIND_PACKAGE_GTest=ON -D CMAKE_DISABLE_FIND_PACKAGE_Catch2=ON
    -D CMAKE_DISABLE_FIND_PACKAGE_TBB=ON -D CMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON
    -D CMAKE_DISABLE_FIND_PACKAGE_thread_pool=ON
    -D CMAKE_DISABLE_FIND_PACKAGE_pthreadpool=ON)

echo "---- 1. bench/compare.sh's configure with only CMake, a compiler and Google Benchmark"
bash bench/compare.sh --configure-only "${hidden[@]}"
grep -q '^FORKUNION_BUILD_TEST:BOOL=OFF' "$work/build/CMakeCache.txt" || {
    echo "bare.sh: the benchmark configure enabled the tests"
    exit 1
}
grep -q '^benchmark_DIR:PATH=/' "$work/build/CMakeCache.txt" || {
    echo "bare.sh: Google Benchmark was not found"
    exit 1
}
for peer in OpenMP oneTBB pthreadpool thread_pool; do
    grep -q "$peer" "$work/build/bench/skipped_peers.txt" || {
        echo "bare.sh: the hidden peer $peer was used"
        exit 1
    }
done
echo "configured: tests off, Google Benchmark found, peers skipped: $(cat "$work/build/bench/skipped_peers.txt")"

# expect_refusal <description> <the line it must print> <configure arguments...>
expect_refusal() {
    local description=$1 expected=$2
    shift 2
    echo "---- $description"
    local start status=0 seconds lines
    start=$(date +%s.%N)
    env http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 \
        HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9 no_proxy= NO_PROXY= \
        bash bench/compare.sh --configure-only "$@" >"$work/out.txt" 2>&1 || status=$?
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    cat "$work/out.txt"
    lines=$(grep -c -F -x "$expected" "$work/out.txt" || true)
    if ((status == 0)); then
        echo "bare.sh: configure succeeded; it must fail"
        exit 1
    elif ((lines != 1)); then
        echo "bare.sh: expected exactly one line '$expected', found $lines"
        exit 1
    elif grep -q -i -E 'curl|retry|retrying' "$work/out.txt"; then
        echo "bare.sh: a download log or a retry was printed"
        exit 1
    elif awk -v s="$seconds" 'BEGIN { exit !(s > 10) }'; then
        echo "bare.sh: configure took ${seconds} s to fail; the limit is 10 s"
        exit 1
    fi
    echo "refused in ${seconds} s with status ${status}"
}

expect_refusal "2. no Google Benchmark, downloads on, network unreachable" \
    "forkunion: Google Benchmark not found: apt-get install libbenchmark-dev" \
    "${hidden[@]}" -D CMAKE_DISABLE_FIND_PACKAGE_benchmark=ON -D FORKUNION_FETCH_DEPENDENCIES=ON
expect_refusal "3a. the test configure without GoogleTest (downloads off)" \
    "forkunion: GoogleTest not found: apt-get install libgtest-dev" \
    "${hidden[@]}" -D FORKUNION_BUILD_TEST=ON -D FORKUNION_FETCH_DEPENDENCIES=OFF
expect_refusal "3b. the test configure without Catch2 (downloads on, network unreachable)" \
    "forkunion: Catch2 not found: apt-get install catch2" \
    -D CMAKE_DISABLE_FIND_PACKAGE_GTest=OFF -D CMAKE_DISABLE_FIND_PACKAGE_Catch2=ON -D FORKUNION_BUILD_TEST=ON \
    -D FORKUNION_FETCH_DEPENDENCIES=ON
