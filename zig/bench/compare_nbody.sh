#!/usr/bin/env bash
# N-body side by side: the C++, Rust and Zig binaries' `forkunion_static_shared` backend, in interleaved rounds
# (C++ Rust Zig C++ Rust Zig ...) in one run, each round a process of its own with the same settings; prints each
# round's us_per_step and each port's median over the rounds with its ratio to C++. Only such same-run ratios are
# quoted: on a shared machine the absolute figures drift from minute to minute.
#
#   bash zig/bench/compare_nbody.sh ZIG_NBODY CXX_NBODY RUST_NBODY [ROUNDS=5] [SECONDS=1] [BODIES=threads]
set -euo pipefail
zig="${1:?usage: compare_nbody.sh ZIG_NBODY CXX_NBODY RUST_NBODY [ROUNDS] [SECONDS] [BODIES]}"
cxx="${2:?C++ N-body binary}" rust="${3:?Rust N-body binary}"
rounds="${4:-5}" seconds="${5:-1}" bodies="${6:-}"
settings=(FORKUNION_BACKEND=forkunion_static_shared FORKUNION_WARMUP=200ms FORKUNION_TIME_LIMIT="${seconds}s"
          FORKUNION_ROUNDS=1 FORKUNION_THREADS="${FORKUNION_THREADS:-0}" FORKUNION_NBODY_CHECK=1)
[[ -z "$bodies" ]] || settings+=(FORKUNION_NBODY_COUNT="$bodies")

declare -A all
field() { grep '^RESULT' | grep -o " $1=[^ ]*" | cut -d= -f2; }
for ((round = 1; round <= rounds; ++round)); do
    line="round $round:"
    for port in C++ Rust Zig; do
        case $port in C++) binary=$cxx ;; Rust) binary=$rust ;; Zig) binary=$zig ;; esac
        output="$(env "${settings[@]}" "$binary")"
        us="$(field us_per_step <<<"$output")"
        all[$port]+="$us "
        line+=" $port $us us (floor $(field floor_ns <<<"$output") ns, $(field bodies <<<"$output") bodies,"
        line+=" $(field threads <<<"$output") threads)"
    done
    echo "$line"
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int(NR / 2) + 1] }'; }
reference="$(median <<<"${all[C++]}")"
for port in C++ Rust Zig; do
    value="$(median <<<"${all[$port]}")"
    awk -v p="$port" -v v="$value" -v r="$reference" -v n="$rounds" \
        'BEGIN { printf "median %-4s %10.3f us per step over %d rounds, %.3fx C++\n", p, v, n, v / r }'
done
