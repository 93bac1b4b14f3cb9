#!/usr/bin/env bash
# Compile cost of the headers: the instructions g++ -O2's compiler proper (cc1plus) executes, counted by valgrind's
# cachegrind, against a hello world with only <thread>, <atomic> and <vector>. A count, not a time: CPU time on a
# shared VM moves by +-25% from one compile to the next, and a ratio of times flipped this gate both ways; the count
# is the same on every run of the same compiler over the same source (~25 s per program under cachegrind).
#   - include: the same hello world plus `#include <forkunion.hpp>` (every layer parsed, nothing used). This is what
#     grows as layers are added, and the gate: at most 1.25x the baseline;
#   - use: a program that spawns a flat pool and runs one for_n through the umbrella. Using the pool instantiates
#     spawn (with the OS-limit checks), the worker loop and the join, -O2 code generation that every translation unit
#     that spawns a pool pays once whatever it includes. Gated at 1.80x as a regression guard.
set -euo pipefail
cd "$(dirname "$0")/.."
compiler=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/baseline.cpp" <<'CPP'
#include <atomic>
#include <thread>
#include <vector>
int main() {
    std::atomic<int> sum {0};
    std::vector<std::thread> threads;
    for (int t = 0; t != 2; ++t) threads.emplace_back([&] { sum.fetch_add(1); });
    for (auto &thread : threads) thread.join();
    return sum.load() == 2 ? 0 : 1;
}
CPP
cat >"$work/forkunion.cpp" <<'CPP'
#include <atomic>
#include <forkunion.hpp>
int main() {
    forkunion::flat_pool_t pool;
    if (!pool.spawn(2)) return 1;
    std::atomic<int> sum {0};
    pool.for_n(2, [&](std::size_t) noexcept { sum.fetch_add(1); }).join_or_run_on_caller();
    return sum.load() == 2 ? 0 : 1;
}
CPP

command -v valgrind >/dev/null || { echo "compile_cost: valgrind not found (apt-get install valgrind)" >&2; exit 1; }
compiler_proper=$("$compiler" -print-prog-name=cc1plus)
instructions() { # instructions cc1plus executes compiling $1 at -O2 (preprocessed first, outside the count)
    "$compiler" -std=c++20 -O2 -Iinclude -E "$1" -o "$work/unit.ii" || { echo "compile_cost: $1 does not preprocess" >&2; exit 1; }
    local count
    count=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$compiler_proper" -fpreprocessed \
        -quiet -std=c++20 -O2 "$work/unit.ii" -o "$work/unit.s" 2>&1 | awk '/I +refs:/ { gsub(",", "", $4); print $4 }')
    [[ $count =~ ^[1-9][0-9]*$ ]] || { echo "compile_cost: cachegrind gave no instruction count for $1" >&2; exit 1; }
    echo "$count"
}

{ echo '#include <forkunion.hpp>'; cat "$work/baseline.cpp"; } >"$work/include.cpp"
baseline=$(instructions "$work/baseline.cpp")
status=0
check() { # name, program, limit
    local count ratio
    count=$(instructions "$work/$2.cpp")
    ratio=$(awk -v a="$count" -v b="$baseline" 'BEGIN { printf "%.2f", a / b }')
    echo "compile cost ($compiler -O2, cc1plus instructions): $1: $count against $baseline, ${ratio}x (limit $3x)"
    if ! awk -v r="$ratio" -v l="$3" 'BEGIN { exit !(r <= l) }'; then
        echo "compile_cost: $1 costs more than $3x the baseline" >&2
        status=1
    fi
}
check "#include <forkunion.hpp>" include 1.25
check "<forkunion.hpp>, spawn + for_n" forkunion 1.80
exit "$status"
