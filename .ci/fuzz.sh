#!/usr/bin/env bash
# Fuzzes each sysfs parser of include/forkunion/topology/parse.hpp with libFuzzer (clang, ASan + UBSan) for a bounded
# time, two at a time, seeded from test/fuzz/corpus/<parser>/, and prints the executions per parser. Any crash, sanitizer
# report or violated property (see test/fuzz/fuzz_support.hpp) fails the stage and leaves the input in
# build_fuzz/crash-*.
#   FORKUNION_FUZZ_SECONDS  seconds per parser (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FORKUNION_FUZZ_SECONDS:-30}
compiler=$(command -v clang++-14 || command -v clang++)
parsers=(cpulist cpumask meminfo distance cache_size)

cmake -S test/fuzz -B build_fuzz -D CMAKE_CXX_COMPILER="$compiler" -D CMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build_fuzz -j 2 >/dev/null

# Two parsers at a time, one per core: the same executions per parser in half the wall time.
fuzz_one() {
    local parser=$1 corpus="build_fuzz/corpus_$1" log="build_fuzz/fuzz_$1.log"
    mkdir -p "$corpus"
    # The first folder receives new inputs; the checked-in seeds are only read.
    if ! (cd build_fuzz && "./fuzz_${parser}" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
              -rss_limit_mb=2048 -print_final_stats=1 "corpus_${parser}" "../test/fuzz/corpus/${parser}") \
            >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "fuzz_${parser}: FAILED (log: $log)"
        return 1
    fi
}
export -f fuzz_one
export seconds
printf '%s\n' "${parsers[@]}" | xargs -P 2 -I{} bash -c 'fuzz_one {}'

for parser in "${parsers[@]}"; do
    log="build_fuzz/fuzz_${parser}.log"
    runs=$(grep -Eo '^Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || echo "?")
    coverage=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+' || echo "?")
    printf '%-12s %12s executions in %ss, coverage %s edges, corpus %s inputs\n' \
        "$parser" "$runs" "$seconds" "$coverage" "$(ls "build_fuzz/corpus_${parser}" | wc -l)"
done
