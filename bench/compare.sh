#!/usr/bin/env bash
# Builds Release and prints the side-by-side dispatch table.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target forkunion_bench_dispatch
OMP_WAIT_POLICY=active build_release/bench/forkunion_bench_dispatch --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
