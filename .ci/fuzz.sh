#!/usr/bin/env bash
# Fuzzes each sysfs parser of include/forkunion/parse.hpp with libFuzzer (clang, ASan + UBSan) for a bounded
# time, seeded from test/fuzz/corpus/<parser>/, and prints the executions per parser. Any crash, sanitizer
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

summary=()
for parser in "${parsers[@]}"; do
    corpus="build_fuzz/corpus_${parser}"
    mkdir -p "$corpus"
    log="build_fuzz/fuzz_${parser}.log"
    # The first folder receives new inputs; the checked-in seeds are only read.
    if ! (cd build_fuzz && "./fuzz_${parser}" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
              -rss_limit_mb=2048 -print_final_stats=1 "corpus_${parser}" "../test/fuzz/corpus/${parser}") \
            >"$log" 2>&1; then
        tail -n 40 "$log"
        echo "fuzz_${parser}: FAILED (log: $log)"
        exit 1
    fi
    runs=$(grep -Eo '^Done [0-9]+ runs' "$log" | grep -Eo '[0-9]+' || echo "?")
    coverage=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1 | grep -Eo '[0-9]+' || echo "?")
    summary+=("$(printf '%-12s %12s executions in %ss, coverage %s edges, corpus %s inputs' \
        "$parser" "$runs" "$seconds" "$coverage" "$(ls "$corpus" | wc -l)")")
done
printf '%s\n' "${summary[@]}"
