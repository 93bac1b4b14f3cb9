#!/usr/bin/env bash
# Checks that the Zig benchmarks end where the C++ and Rust ones do, bit for bit, with every CHECK on:
# - N-body: `state_after_8_steps` of each Zig backend against bench/nbody/nbody.cpp's binary and, when built,
#   rust/bench's `nbody`, for a few seeds and body counts;
# - propagation: edges, rounds, components and checksum of each Zig backend against
#   bench/propagation/propagation.cpp's binary, for a few graph shapes.
# Every Zig run has its own serial CHECK on (status 3 on any difference), so without a C++ binary the Zig runs are
# still checked against their serial reference and the comparison with the other ports is skipped with a reason.
#
#   bash zig/bench/check_ports.sh ZIG_BIN_DIR [CXX_BENCH_DIR] [RUST_NBODY]
#
# ZIG_BIN_DIR holds forkunion_zig_nbody and forkunion_zig_propagation (`zig build bench` puts them in
# zig/zig-out/bin). Without CXX_BENCH_DIR it looks for the binaries in the repository's build_* folders; without
# RUST_NBODY, for rust/bench/target/release/nbody. Exit 1 on any difference.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
zig_bin="${1:?usage: check_ports.sh ZIG_BIN_DIR [CXX_BENCH_DIR] [RUST_NBODY]}"
cxx_dir="${2:-}"
rust="${3:-$root/rust/bench/target/release/nbody}"

find_cxx() { find "$root"/build_* -type f -name "$1" -perm -u+x 2>/dev/null | head -n 1 || true; }
if [[ -n "$cxx_dir" ]]; then
    cxx_nbody="$cxx_dir/forkunion_bench_nbody" cxx_propagation="$cxx_dir/forkunion_bench_propagation"
else
    cxx_nbody="$(find_cxx forkunion_bench_nbody)" cxx_propagation="$(find_cxx forkunion_bench_propagation)"
fi
[[ -x "${cxx_nbody:-}" ]] || { echo "note: no C++ N-body binary: Zig checked against its serial run only"; cxx_nbody=; }
[[ -x "${cxx_propagation:-}" ]] ||
    { echo "note: no C++ propagation binary: Zig checked against its serial run only"; cxx_propagation=; }
[[ -x "$rust" ]] || { echo "note: no Rust N-body binary ($rust): not compared with Rust"; rust=; }

zig_backends="$("$zig_bin/forkunion_zig_nbody" --list | paste -sd, -)"
quick=(FORKUNION_WARMUP=10ms FORKUNION_TIME_LIMIT=20ms FORKUNION_THREADS=2)
failures=0

hash_of() { grep -o 'state_after_8_steps=0x[0-9a-f]*' | cut -d= -f2 | sort -u; }
for case in "42 2" "42 7" "7 64" "123456 33" "4294967295 5"; do
    read -r seed count <<<"$case"
    settings=("${quick[@]}" FORKUNION_SEED="$seed" FORKUNION_NBODY_COUNT="$count" FORKUNION_NBODY_CHECK=1)
    zig="$(env "${settings[@]}" FORKUNION_BACKEND="$zig_backends" FORKUNION_ROUNDS=1 "$zig_bin/forkunion_zig_nbody" |
        hash_of)"
    expected="$zig" line="seed $seed, $count bodies: Zig $zig"
    if [[ -n "$cxx_nbody" ]]; then
        expected="$(env "${settings[@]}" "$cxx_nbody" | hash_of)"
        line+=", C++ $expected"
    fi
    if [[ -n "$rust" ]]; then
        got="$(env "${settings[@]}" FORKUNION_ROUNDS=1 "$rust" | hash_of)"
        line+=", Rust $got"
        [[ "$got" == "$expected" ]] || failures=$((failures + 1))
    fi
    if [[ -n "$zig" && $(wc -l <<<"$zig") == 1 && "$zig" == "$expected" ]]; then
        echo "nbody $line: equal"
    else
        echo "nbody $line: DIFFERENT" >&2
        failures=$((failures + 1))
    fi
done

outcome_of() {
    grep '^RESULT' | grep -o ' \(edges\|rounds\|components\|checksum\)=[0-9]*' | sed 's/^ //' | paste -sd' ' -
}
for case in "42 6 3 16" "7 8 8 16" "99 0 5 4" "42 10 1 8"; do
    read -r seed scale communities factor <<<"$case"
    settings=("${quick[@]}" FORKUNION_SEED="$seed" FORKUNION_PROPAGATION_SCALE="$scale"
              FORKUNION_PROPAGATION_COMMUNITIES="$communities" FORKUNION_PROPAGATION_EDGE_FACTOR="$factor"
              FORKUNION_PROPAGATION_CHECK=1)
    for backend in ${zig_backends//,/ }; do
        zig="$(env "${settings[@]}" FORKUNION_BACKEND="$backend" "$zig_bin/forkunion_zig_propagation" | outcome_of)"
        expected="$zig"
        [[ -z "$cxx_propagation" ]] || expected="$(env "${settings[@]}" "$cxx_propagation" | outcome_of)"
        if [[ -n "$zig" && "$zig" == "$expected" ]]; then
            echo "propagation seed $seed, 2^$scale x $communities, factor $factor, $backend: $zig: equal"
        else
            echo "propagation seed $seed, 2^$scale x $communities, factor $factor, $backend:" \
                "Zig [$zig], C++ [$expected]" >&2
            failures=$((failures + 1))
        fi
    done
done
((failures == 0))
