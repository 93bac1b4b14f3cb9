#!/usr/bin/env bash
# Checks that every Rust N-body backend ends in the C++ N-body's state, bit for bit: `state_after_8_steps` of
# rust/bench's `nbody` (each backend, forkunion's and Rayon's) against bench/nbody/nbody.cpp's binary, for a few seeds and
# body counts, with the serial CHECK on in both.
#
#   bash rust/bench/check_nbody.sh [path/to/forkunion_bench_nbody]
#
# Without an argument it looks for the binary in the repository's build_* folders (the release workflow builds it);
# when there is none it says so and exits 0 (skipped). Exit 1 on any difference.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

cxx="${1:-}"
if [[ -z "$cxx" ]]; then
    cxx="$(find "$root"/build_* -type f -name forkunion_bench_nbody -perm -u+x 2>/dev/null | head -n 1 || true)"
fi
if [[ -z "$cxx" || ! -x "$cxx" ]]; then
    echo "skipped: no C++ N-body binary (forkunion_bench_nbody) to compare with; build the release preset first"
    exit 0
fi

(cd "$here" && cargo build --release --offline --quiet --bin nbody)
rust="$here/target/release/nbody"
backends="$("$rust" --list | paste -sd, -)"

hash_of() { grep -o 'state_after_8_steps=0x[0-9a-f]*' | cut -d= -f2; }
failures=0
for case in "42 2" "42 7" "7 64" "123456 33" "4294967295 5"; do
    read -r seed count <<<"$case"
    settings=(FORKUNION_SEED="$seed" FORKUNION_NBODY_COUNT="$count" FORKUNION_NBODY_CHECK=1
              FORKUNION_WARMUP=10ms FORKUNION_TIME_LIMIT=20ms FORKUNION_THREADS=2)
    expected="$(env "${settings[@]}" "$cxx" | hash_of)"
    got="$(env "${settings[@]}" FORKUNION_BACKEND="$backends" FORKUNION_ROUNDS=1 "$rust" | hash_of | sort -u)"
    if [[ -n "$expected" && "$got" == "$expected" ]]; then
        echo "seed $seed, $count bodies: every Rust backend and C++ end in $expected"
    else
        echo "seed $seed, $count bodies: C++ $expected, Rust: $(echo $got)" >&2
        failures=$((failures + 1))
    fi
done
((failures == 0))
